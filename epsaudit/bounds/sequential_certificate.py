"""The running anytime-valid certificate: test rows one at a time, the bound after every row.

:class:`SequentialCertificate` holds the counts of a fixed test on test rows as they arrive and the
running lower bound ``LB_t = max over looks of sup {eps : E_s(eps) >= 1 / alpha}``
(:mod:`epsaudit.bounds.sequential`), valid at any stopping time by Ville's inequality. The bound
is updated incrementally: a row can move it only when ``E_t(LB_{t-1}) >= 1 / alpha`` (one
closed-form evaluation in plain :mod:`math`), and only then is it re-solved from its previous
value (with zero errors by the corner's closed form); a batch
(:meth:`SequentialCertificate.update_many`) first finds, in one vectorised evaluation, the rows at
which the bound can move.

Stop rules (``stop_reason``): ``"claim refuted"`` (the bound exceeds a claimed epsilon),
``"target reached"`` (the bound is at least the target), ``"budget spent"`` (test rows drawn reach
the budget), ``"futile"`` (even zero errors in every remaining row of the budget could not reach
the target: the e-value of the target at the counts the budget allows, with no further error, is
below ``1 / alpha``). Stopping never affects validity; neither does resuming later.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..results import EpsilonResult, RouteStatistics
from ..validation import check_fresh_ids
from .sequential import SEQUENTIAL_BOUND, _priors, sequential_log_evalue, worst_pair_sequential
from .sequential_scalar import _Evaluator

__all__ = ["STOP_REASONS", "SequentialCertificate", "SequentialStatistics"]

#: The stop reasons, in the order they are checked.
STOP_REASONS = ("claim refuted", "target reached", "budget spent", "futile")
ROUTE = "sequential"
SIDES = ("A", "B")


@dataclass(frozen=True)
class SequentialStatistics(RouteStatistics):
    """The test rows behind a sequential certificate.

    Attributes
    ----------
    fp, fn : int
        False positives among the negatives (rows of B), false negatives among the positives (A).
    rows : int
        Test rows drawn (both sides).
    stop_reason : str or None
        One of :data:`STOP_REASONS`, or None (no rule fired).
    prior : str
        The prior of each side's error rate (negatives', positives').
    test_hash : str or None
        The caller's hash of the fixed test (e.g. of the fitted scorer's parameters and threshold).

    Examples
    --------
    >>> SequentialStatistics(0, 1, 40, "target reached", "B/B", None).record()["rows"]
    40
    """

    fp: int
    fn: int
    rows: int
    stop_reason: str | None
    prior: str
    test_hash: str | None


class SequentialCertificate:
    """An anytime-valid lower confidence bound on epsilon, updated one test row at a time.

    Parameters
    ----------
    alpha : float in (0, 1)
        Family-wise error level (confidence ``1 - alpha``).
    delta : float in [0, 1)
    prior : str, SequentialPrior or pair of them
        Fixed before the first row and recorded by hash (default ``"B"``; with a planned error
        rate ``r`` use ``"H:r"``). Changing it after the first row is refused.
    family : int, >= 1
        Pairs certified together: this one runs at ``alpha / family`` (Bonferroni; valid under any
        adaptive allocation of rows across pairs).
    target : float, optional
        Stop ("target reached") when the bound reaches it.
    budget : int, optional
        Stop ("budget spent") after this many test rows (both sides).
    claim : float, optional
        A claimed epsilon: stop ("claim refuted") when the bound exceeds it.
    futility : bool
        With a target and a budget, stop ("futile") when even zero errors in the rest of the
        budget could not reach the target (default True).
    test_hash : str, optional
        The caller's hash of the fixed test (e.g. of the fitted scorer's parameters and threshold),
        recorded with the prior's before the first row.
    dev_ids : iterable or mapping of identity -> iterable, optional
        Draw ids of the development rows: a test row whose draw id is one of them, or repeats an
        earlier test row's, is refused (:func:`epsaudit.validation.check_fresh_ids`).

    Attributes
    ----------
    bound : float
        The running bound (max over looks), >= 0.
    stop_reason : str or None
    rows, fp, n_neg, fn, n_pos : int

    Raises
    ------
    ValueError
        Parameters out of range; from :meth:`update`: a side other than ``"A"``/``"B"``, draw ids
        given for some rows only.
    epsaudit.validation.ReusedRowsError
        (a ``ValueError``) A draw id that is a development draw or was already used.

    References
    ----------
    Ville (1939), *Etude critique de la notion de collectif*; Wasserman, Ramdas & Balakrishnan
    (2020), "Universal inference", PNAS 117(29); Waudby-Smith & Ramdas (2024), "Estimating means of
    bounded random variables by betting", JRSS-B 86(1).

    See Also
    --------
    epsaudit.bounds.sequential_epsilon : the bound at given counts.
    epsaudit.bounds.joint_epsilon : the fixed-size certificate (valid only at a size fixed in advance).
    epsaudit.bounds.clopper_pearson_epsilon : the paper's split bound.

    Examples
    --------
    Zero errors, one row of each side at a time, until the bound reaches 2:

    >>> cert = SequentialCertificate(alpha=0.05, target=2.0, dev_ids=["d0", "d1"])
    >>> i = 0
    >>> while cert.stop_reason is None:
    ...     _ = cert.update("A" if i % 2 == 0 else "B", False, draw_id=f"t{i}"); i += 1
    >>> cert.stop_reason, cert.rows, round(cert.bound, 3)
    ('target reached', 29, 2.013)
    >>> print(cert.result())
    sequential: epsilon = 2.013 (certificate, n = (15, 14)), 95% family-wise, each bound at 0.05 (bonferroni: 1 anytime-valid e-process x 1 certificate(s)), anytime-valid bound
    """

    def __init__(self, alpha: float = 0.05, delta: float = 0.0, prior: Any = "B", family: int = 1,
                 target: float | None = None, budget: int | None = None, claim: float | None = None,
                 futility: bool = True, test_hash: str | None = None, dev_ids: Any = None) -> None:
        if not 0.0 < alpha < 1.0:
            raise ValueError(f"alpha must be in (0, 1), got {alpha}")
        if not 0.0 <= delta < 1.0:
            raise ValueError(f"delta must be in [0, 1), got {delta}")
        if int(family) != family or family < 1:
            raise ValueError(f"family must be an integer >= 1, got {family}")
        for name, value in (("target", target), ("claim", claim)):
            if value is not None and not (math.isfinite(value) and value >= 0):
                raise ValueError(f"{name} must be a finite number >= 0, got {value}")
        if budget is not None and (int(budget) != budget or budget < 1):
            raise ValueError(f"budget must be an integer >= 1, got {budget}")
        self.alpha, self.delta, self.family = float(alpha), float(delta), int(family)
        self.target, self.budget, self.claim, self.futility = target, budget, claim, bool(futility)
        self.alpha_per_pair = self.alpha / self.family
        self._threshold = -math.log(self.alpha_per_pair)
        self._dev = _owners(dev_ids)
        self.fp = self.n_neg = self.fn = self.n_pos = 0
        self._sides: list[str] = []
        self._erred: list[bool] = []
        self._ids: list[Any] = []
        self._seen: dict[Any, str] = {}
        self._path: list[float] = []
        self._bound = 0.0
        self._rise = 0.05  # the bound's last rise: the first step when it moves again
        self._futile_at = -1  # rows at which the futility check last ran, and its answer
        self._futile = False
        self.test_hash = test_hash
        self.prior = prior

    # -- the frozen test and prior ----------------------------------------------------------
    @property
    def prior(self):
        """The (negatives', positives') priors; settable only before the first row.

        Examples
        --------
        >>> SequentialCertificate(prior="Z").prior[0].name
        'Z'
        """
        return self._prior

    @prior.setter
    def prior(self, value) -> None:
        if self.rows:
            raise ValueError("the prior is fixed before the first test row; start a new certificate to change it")
        self._prior = _priors(value)
        self._eval = _Evaluator(*self._prior, self.delta)

    @property
    def test_hash(self) -> str | None:
        """The caller's hash of the fixed test; settable only before the first row.

        Examples
        --------
        >>> SequentialCertificate(test_hash="abc").test_hash
        'abc'
        """
        return self._test_hash

    @test_hash.setter
    def test_hash(self, value) -> None:
        if getattr(self, "_sides", None):
            raise ValueError("the test is fixed before the first test row; start a new certificate to change it")
        self._test_hash = None if value is None else str(value)

    @property
    def rows(self) -> int:
        """Test rows taken (both sides).

        Examples
        --------
        >>> SequentialCertificate().rows
        0
        """
        return len(self._sides)

    @property
    def prior_hash(self) -> str:
        """SHA-256 of both sides' priors (recorded before the first row).

        Examples
        --------
        >>> len(SequentialCertificate().prior_hash)
        64
        """
        return hashlib.sha256("/".join(p.digest() for p in self._prior).encode()).hexdigest()

    # -- rows -------------------------------------------------------------------------------
    def update(self, side: str, erred: bool, draw_id: Hashable | None = None) -> float:
        """Take one test row: ``side`` "A" (a positive) or "B" (a negative), ``erred`` whether the test got it wrong.

        Parameters
        ----------
        side : {"A", "B"}
        erred : bool
            For a row of A: the test said B (a false negative); of B: it said A (a false positive).
        draw_id : hashable, optional
            The row's draw id (checked for freshness); give one for every row or for none.

        Returns
        -------
        float
            The running bound after this row.

        Raises
        ------
        ValueError, epsaudit.validation.ReusedRowsError
            See the class.

        Examples
        --------
        >>> c = SequentialCertificate()
        >>> c.update("A", False, 1), c.update("B", False, 2)
        (0.0, 0.0)
        """
        self._take(side, erred, draw_id)
        return self._advance(self.fp, self.n_neg, self.fn, self.n_pos)

    def _advance(self, x: int, n: int, y: int, m: int) -> float:
        """The running bound after a row that left these counts (appended to the path)."""
        lb = self._bound
        num = self._eval.numerator(x, n, y, m)
        if x == 0 and y == 0 and n and m and lb >= abs(math.log(n / m)):  # zero errors: the corner's closed form
            eps = self._corner(n, m, num)
            if eps is not None and (eps <= lb or self._eval(x, n, y, m, eps, num) >= self._threshold):
                if eps > lb:
                    self._bound, self._rise = eps, eps - lb
                self._path.append(self._bound)
                return self._bound
        g_lb = self._eval(x, n, y, m, lb, num) - self._threshold
        if g_lb >= 0:
            self._bound = self._raise(x, n, y, m, lb, g_lb, num)
            self._rise = self._bound - lb
        self._path.append(self._bound)
        return self._bound

    def _take(self, side, erred, draw_id) -> None:
        if side not in SIDES:
            raise ValueError(f"side must be 'A' (a positive) or 'B' (a negative), got {side!r}")
        if draw_id is not None and hasattr(draw_id, "item"):
            draw_id = draw_id.item()
        if self._sides and (draw_id is None) != (self._ids[0] is None):
            raise ValueError("give a draw id for every test row or for none")
        if draw_id is None and self._dev:
            raise ValueError("development draw ids were given: every test row needs its draw id")
        if draw_id is not None:
            if draw_id in self._dev or draw_id in self._seen:
                test = {self._seen[draw_id]: [draw_id]} if draw_id in self._seen else {}
                test.setdefault(side, []).append(draw_id)
                dev = {self._dev[draw_id]: [draw_id]} if draw_id in self._dev else {}
                check_fresh_ids(dev, test, context=f"sequential certificate, test row {self.rows}")
            self._seen[draw_id] = side
        erred = bool(erred)
        if side == "A":
            self.n_pos += 1
            self.fn += erred
        else:
            self.n_neg += 1
            self.fp += erred
        self._sides.append(side)
        self._erred.append(erred)
        self._ids.append(draw_id)

    def _raise(self, x, n, y, m, lb, g_lb, num) -> float:
        """The new bound when E(lb) >= 1/alpha: bracket upward from lb (steps from the last rise), then Illinois."""
        thr = self._threshold

        def g(e):
            return self._eval(x, n, y, m, e, num) - thr

        if x == 0 and y == 0 and n and m:
            eps = self._corner(n, m, num)
            if eps is not None and eps > lb and g(eps) >= 0:
                return eps
        lo, g_lo, step = lb, g_lb, max(1.5 * self._rise, 1e-4)
        while True:
            hi = min(lo + step, 700.0)
            g_hi = g(hi)
            if g_hi < 0 or hi >= 700.0:
                break
            lo, g_lo, step = hi, g_hi, 2 * step
        if g_hi >= 0:
            return hi
        side = 0
        for _ in range(100):
            if hi - lo <= 1e-10 * max(1.0, lo):
                break
            mid = (lo * g_hi - hi * g_lo) / (g_hi - g_lo) if g_lo != g_hi else 0.5 * (lo + hi)
            if not lo < mid < hi:
                mid = 0.5 * (lo + hi)
            g_mid = g(mid)
            if g_mid >= 0:
                lo, g_lo = mid, g_mid
                g_hi, side = (g_hi * 0.5 if side == -1 else g_hi), -1
            else:
                hi, g_hi = mid, g_mid
                g_lo, side = (g_lo * 0.5 if side == 1 else g_lo), 1
        return lo

    def _corner(self, n: int, m: int, num: float) -> float | None:
        """The bound at zero errors where the corner is least favourable (e^eps >= n/m and m/n), else None.

        There ``sup L = ((e^eps + delta) / (1 + e^eps))^(n + m)``, so ``E(eps) >= 1 / alpha`` up to
        ``e^eps = (s - delta) / (1 - s)`` with ``s = (alpha M M)^(1 / (n + m))``.
        """
        s = math.exp((num - self._threshold) / (n + m))
        if not self.delta < s < 1:
            return None
        eps = (math.log(s - self.delta) - math.log1p(-s)) * (1 - 1e-12)
        return eps if eps >= abs(math.log(n / m)) else None

    def update_many(self, sides: Iterable[str], erred: Iterable[bool], draw_ids: Iterable[Hashable] | None = None) -> float:
        """Take a batch of test rows in arrival order (one vectorised check finds the rows that can move the bound).

        Parameters
        ----------
        sides : iterable of {"A", "B"}, length r
        erred : iterable of bool, length r
        draw_ids : iterable, length r, optional

        Returns
        -------
        float
            The running bound after the last row.

        Raises
        ------
        ValueError
            Lengths that differ; as :meth:`update`.

        Examples
        --------
        >>> c = SequentialCertificate()
        >>> round(c.update_many(["A", "B"] * 50, [False] * 100, range(100)), 3)
        3.23
        """
        sides, erred = list(sides), [bool(e) for e in erred]
        ids = [None] * len(sides) if draw_ids is None else list(draw_ids)
        if not len(sides) == len(erred) == len(ids):
            raise ValueError(f"sides, erred and draw_ids must have one entry per row, got {len(sides)}, {len(erred)}, "
                             f"{len(ids)}")
        lb = self._bound
        counts = []
        for s, e, i in zip(sides, erred, ids):
            self._take(s, e, i)
            counts.append((self.fp, self.n_neg, self.fn, self.n_pos))
        if not counts:
            return lb
        x, n, y, m = (np.array(c, dtype=float) for c in zip(*counts))
        # rows where the bound can move above its value before the batch (one vectorised evaluation);
        # only these are re-solved, in order, from the running bound
        moves = sequential_log_evalue(x, n, y, m, lb, self.delta, self._prior) >= self._threshold
        for c, move in zip(counts, moves.tolist()):
            if move:
                self._advance(*c)
            else:
                self._path.append(self._bound)
        return self._bound

    # -- the certificate --------------------------------------------------------------------
    @property
    def bound(self) -> float:
        """The running lower bound on epsilon (max over looks), valid at any stopping time.

        Examples
        --------
        >>> SequentialCertificate().bound
        0.0
        """
        return self._bound

    @property
    def bound_path(self) -> list[float]:
        """The running bound after each row (non-decreasing).

        Examples
        --------
        >>> SequentialCertificate().bound_path
        []
        """
        return list(self._path)

    def evalue(self, epsilon: float) -> float:
        """E_t(epsilon) at the current counts (evidence against (epsilon, delta)-DP).

        Examples
        --------
        >>> c = SequentialCertificate(); _ = c.update_many("AB" * 5, [False] * 10)
        >>> round(c.evalue(1.0), 1)
        14.7
        """
        return math.exp(self._eval(self.fp, self.n_neg, self.fn, self.n_pos, float(epsilon)))

    @property
    def stop_reason(self) -> str | None:
        """The first stop rule that holds (:data:`STOP_REASONS`), or None.

        Examples
        --------
        >>> c = SequentialCertificate(budget=2); _ = c.update("A", True); c.stop_reason
        >>> _ = c.update("B", False); c.stop_reason
        'budget spent'
        """
        if self.claim is not None and self._bound > self.claim:
            return "claim refuted"
        if self.target is not None and self._bound >= self.target:
            return "target reached"
        if self.budget is not None and self.rows >= self.budget:
            return "budget spent"
        if self.futility and self.target is not None and self.budget is not None and self._hopeless():
            return "futile"
        return None

    def _hopeless(self) -> bool:
        """Zero errors in every remaining row (alternating sides from here) cannot reach the target."""
        if self._futile_at != self.rows:
            rest = self.budget - self.rows
            first_a = not self._sides or self._sides[-1] == "B"
            ra = (rest + first_a) // 2
            e = self._eval(self.fp, self.n_neg + rest - ra, self.fn, self.n_pos + ra, float(self.target))
            self._futile_at, self._futile = self.rows, e < self._threshold
        return self._futile

    def correction(self) -> str:
        """The multiplicity correction, as results record it.

        Examples
        --------
        >>> SequentialCertificate(family=10).correction()
        'bonferroni: 1 anytime-valid e-process x 10 certificate(s)'
        """
        return f"bonferroni: 1 anytime-valid e-process x {self.family} certificate(s)"

    def freshness(self) -> str:
        """What the freshness check compared.

        Examples
        --------
        >>> SequentialCertificate().freshness()
        'no draw ids: the caller vouches for fresh test draws'
        """
        if self._ids and self._ids[0] is not None:
            return ("test draw ids checked: unique, none a development draw id" if self._dev else
                    "test draw ids checked: unique (no development draw ids given)")
        return "no draw ids: the caller vouches for fresh test draws"

    def result(self, pair: tuple | None = None) -> EpsilonResult:
        """The certificate as an :class:`~epsaudit.results.EpsilonResult` (kind "certificate", bound "anytime-valid").

        Examples
        --------
        >>> c = SequentialCertificate(); _ = c.update_many("AB" * 50, [False] * 100)
        >>> r = c.result(); r.bound, r.n, round(r.value, 3)
        ('anytime-valid', (50, 50), 3.23)
        """
        names = "/".join(p.name for p in self._prior)
        stats = SequentialStatistics(self.fp, self.fn, self.rows, self.stop_reason, names, self.test_hash)
        return EpsilonResult(value=self._bound, kind="certificate", route=ROUTE, n=(self.n_pos, self.n_neg), pair=pair,
                             delta=self.delta, confidence=1 - self.alpha, alpha_per_bound=self.alpha_per_pair,
                             correction=self.correction(), bound=SEQUENTIAL_BOUND, statistics=stats,
                             settings={"prior": names, "prior_hash": self.prior_hash, "target": self.target,
                                       "budget": self.budget, "claim": self.claim, "freshness": self.freshness()})

    def record(self) -> dict[str, Any]:
        """Everything needed to check the certificate: levels, prior, test hash, counts, rows, bound path.

        Examples
        --------
        >>> c = SequentialCertificate(test_hash="h"); _ = c.update("A", False, "r0")
        >>> rec = c.record(); rec["draw_ids"], rec["test_hash"], rec["counts"]
        (['r0'], 'h', {'fp': 0, 'n_neg': 0, 'fn': 0, 'n_pos': 1})
        """
        return {
            "bound": self._bound, "kind": "certificate", "bound_name": SEQUENTIAL_BOUND,
            "alpha": self.alpha, "family": self.family, "alpha_per_pair": self.alpha_per_pair, "delta": self.delta,
            "prior": [p.name for p in self._prior], "prior_components": [list(p.components) for p in self._prior],
            "prior_hash": self.prior_hash, "test_hash": self.test_hash,
            "target": self.target, "budget": self.budget, "claim": self.claim, "futility": self.futility,
            "stop_reason": self.stop_reason, "rows": self.rows,
            "counts": {"fp": self.fp, "n_neg": self.n_neg, "fn": self.fn, "n_pos": self.n_pos},
            "sides": "".join(self._sides), "erred": [int(e) for e in self._erred],
            "draw_ids": list(self._ids), "bound_path": list(self._path), "freshness": self.freshness(),
        }

    def to_json(self, **kwargs: Any) -> str:
        """:meth:`record` as JSON (draw ids that are not JSON types become their ``str``).

        Examples
        --------
        >>> import json
        >>> json.loads(SequentialCertificate().to_json())["alpha"]
        0.05
        """
        return json.dumps(self.record(), default=str, **kwargs)

    @staticmethod
    def worst_pair(certificates: Iterable[SequentialCertificate], alpha: float | None = None) -> float:
        """The worst-pair bound of a family at its current counts (:func:`epsaudit.bounds.worst_pair_sequential`).

        Parameters
        ----------
        certificates : iterable of SequentialCertificate
            One per pair, sharing delta and prior.
        alpha : float, optional
            Family-wise level (default: the first certificate's ``alpha``).

        Returns
        -------
        float

        Examples
        --------
        >>> cs = [SequentialCertificate(family=2) for _ in range(2)]
        >>> _ = [c.update_many("AB" * 50, [False] * 100) for c in cs]
        >>> SequentialCertificate.worst_pair(cs) >= max(c.bound for c in cs)
        True
        """
        cs = list(certificates)
        if not cs:
            raise ValueError("worst_pair needs at least one certificate")
        level = cs[0].alpha if alpha is None else alpha
        counts = np.array([(c.fp, c.n_neg, c.fn, c.n_pos) for c in cs], dtype=float).T
        return worst_pair_sequential(*counts, level, cs[0].delta, cs[0]._prior)


def _owners(dev_ids: Any) -> dict[Any, Hashable]:
    """Development draw id -> the identity it belongs to ("development" when not given by identity)."""
    if dev_ids is None:
        return {}
    groups = dev_ids.items() if isinstance(dev_ids, Mapping) else [("development", dev_ids)]
    owner: dict[Any, Hashable] = {}
    for label, ids in groups:
        for v in np.asarray(list(ids)).tolist():
            owner.setdefault(v, label)
    return owner
