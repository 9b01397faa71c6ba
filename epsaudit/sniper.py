"""DP-Sniper for one fixed input pair: a classifier-based threshold attack and its certificate.

DP-Sniper (Bichsel, Steffen, Bogunovic & Vechev, IEEE S&P 2021; *Picture the Epsilon*, Appendix Table 5)
audits a mechanism ``M`` on inputs ``(a, b)``, direction ``a -> b``: (1) **train** a probabilistic
classifier on outputs of ``M(a)`` (label 1) and ``M(b)`` (label 0); (2) **threshold**: on fresh outputs of
``M(b)`` choose ``t`` and a tie probability ``q`` so that the attack ``S`` (fire above ``t``, with probability
``q`` at ``t``) fires with probability exactly ``c``; (3) **final estimate**: on fresh outputs report
``log(CP_lower(P[S(M(a))]) / CP_upper(P[S(M(b))]))`` with one-sided Clopper-Pearson bounds joined by a union
bound: with the stated confidence ``M`` is not ``eps``-DP (pure DP) for any smaller ``eps``.

Where this implementation departs from the original code (the book's DP-Sniper chapter):

* **Both directions** per call, sharing the classifier (``b -> a`` scores with the negated score) and the
  final samples, each with its own threshold sample; all ``2 x 2`` one-sided bounds form one Bonferroni
  family of ``n_certificates`` (default 2) certificates at ``confidence``.
* **Ties are drawn**: ``Binomial(n_tied, q)`` tied outputs fire (seeded), so counts are exactly binomial and
  Clopper-Pearson is exact. ``ties="expected"`` keeps the original's fraction ``n_above + q * n_tied``,
  rounded conservatively (down for the lower bound, *up* for the upper; the original truncates both).
* **Scores without artificial ties**: a linear classifier is scored by its decision function (log-odds, the
  same attack family) instead of probabilities rounded to 3 decimals; the default
  :func:`epsaudit.audits.scorers.logistic_regression` pipeline is folded into one linear map.
  :func:`epsaudit.audits.scorers.paper_logistic_regression` is the plain learner of *Picture the Epsilon*.
* **Checked scores**: one real score per row (NaN or a wrong shape refused; ``+/-inf`` valid).
* **Fresh samples**: a callable mechanism's threshold and final rows are checked against earlier stages'
  rows (``check_reuse``); the library's mechanisms draw each stage on an independent stream.
* **c is enforced**: the denominator is ``max(CP_upper, c)`` (raising an upper bound keeps it valid), so no
  certificate exceeds ``log(1 / c)``; ``raw`` keeps the unclamped log ratio, the certificate is
  ``max(0, raw)``; ``enforce_c=False`` gives the unenforced bound.
* **Streamed batches** of about ``2**18`` values (the threshold stage keeps only the top ``floor(c n) + 1``
  scores plus ties); training uses at most ``max_train`` outputs per input.
* **Seeded**: seven independent streams per call, ``stream("dp-sniper", seed, stage)`` (:data:`_STAGES`).
* **Fast paths** for :class:`~epsaudit.mechanisms.ProductLaplace` (float-safe grid draws, float32 features) and
  :class:`~epsaudit.mechanisms.RandomizedResponse` (one-hot rows, counts scored once per category).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from .audits.scorers import check_classifier, check_scores, classifier_name, count_convergence_warnings, positive_scores
from .bounds import bonferroni_alpha, clopper_pearson_lower, clopper_pearson_upper
from .mechanisms import Mechanism, ProductLaplace, RandomizedResponse
from .protocol import generators
from .results import EpsilonResult
from .validation import ReusedRowsError, row_keys

__all__ = ["DEFAULT_C", "ROUTE", "SniperBudget", "attack_cap", "design_cap", "dp_sniper", "sniper_bound",
           "split_budget"]


ROUTE = "dp_sniper"
#: Target firing probability of the attack under the reference input (Bichsel et al. default).
DEFAULT_C = 0.01
#: Fractions of the call budget for training, threshold and final stages (each split between the inputs).
_DEFAULT_SPLIT: tuple[float, float, float] = (0.1, 0.05, 0.85)
#: Most training outputs per input (at d = 512: 2 * 1e5 * 512 float32 values, 410 MB); the rest goes to the final stage.
_DEFAULT_MAX_TRAIN = 100_000
#: Values (calls x output dimension) per streamed batch: 2**18 float32 values = 1 MiB (larger batches were slower).
_BATCH_VALUES = 2**18
_TIES = ("draw", "expected")
_DIRECTIONS = ("a->b", "b->a")


@dataclass(frozen=True)
class SniperBudget:
    """Mechanism calls per input and stage; ``calls`` is the total over both inputs.

    Attributes
    ----------
    train, threshold, final : int
        Calls of *each* input in the training, threshold and final stages.
    calls : int
        ``2 * (train + threshold + final)`` (one call unused for an odd budget).

    Examples
    --------
    >>> SniperBudget(train=50, threshold=25, final=425).calls
    1000
    """

    train: int
    threshold: int
    final: int

    @property
    def calls(self) -> int:
        return 2 * (self.train + self.threshold + self.final)


def split_budget(calls: int, split: Sequence[float] = _DEFAULT_SPLIT, max_train: int = _DEFAULT_MAX_TRAIN,
                 *, train: bool = True) -> SniperBudget:
    """Split a budget of mechanism calls into training, threshold and final stages.

    Each input gets ``calls // 2`` calls: ``floor(split[0] * calls/2)`` for training (at most ``max_train``,
    the surplus goes to the final stage), ``floor(split[1] * calls/2)`` for the threshold, the rest final.

    Parameters
    ----------
    calls : int
        Total mechanism calls for the pair, both inputs and both directions together.
    split : (float, float, float)
        Positive fractions for training, threshold and final stages, summing to 1.
    max_train : int, >= 2
        Most training calls per input.
    train : bool, keyword-only
        False for a fixed score function: no training calls (their fraction goes to the final stage).

    Returns
    -------
    SniperBudget

    Raises
    ------
    ValueError
        If ``calls`` is not a positive integer, ``split`` is not three positive fractions summing to 1,
        ``max_train < 2``, or the budget gives fewer than 2 training, 1 threshold or 1 final call per input.

    Examples
    --------
    >>> split_budget(1_000_000), split_budget(1_000, train=False)  # 10% / 5% / 85% per input; a fixed score
    (SniperBudget(train=50000, threshold=25000, final=425000), SniperBudget(train=0, threshold=25, final=475))
    """
    if isinstance(calls, bool) or not isinstance(calls, numbers.Integral) or calls < 1:
        raise ValueError(f"calls must be a positive integer (mechanism calls for the pair), got {calls!r}")
    fractions = _check_split(split)
    if isinstance(max_train, bool) or not isinstance(max_train, numbers.Integral) or max_train < 2:
        raise ValueError(f"max_train must be an integer >= 2, got {max_train!r}")
    per_input = int(calls) // 2
    n_train = int(math.floor(fractions[0] * per_input)) if train else 0
    n_threshold = int(math.floor(fractions[1] * per_input))
    n_final = per_input - n_train - n_threshold
    if (train and n_train < 2) or n_threshold < 1 or n_final < 1:
        need = "2 training, " if train else ""
        raise ValueError(
            f"calls = {calls} is too small to split with split = {tuple(fractions)}: each input gets "
            f"{per_input} calls -> {n_train} training, {n_threshold} threshold and {n_final} final "
            f"calls; need at least {need}1 threshold and 1 final call per input"
        )
    if n_train > max_train:
        n_final += n_train - int(max_train)
        n_train = int(max_train)
    return SniperBudget(n_train, n_threshold, n_final)


def _check_split(split) -> tuple[float, float, float]:
    try:
        fractions = tuple(float(s) for s in split)
    except (TypeError, ValueError):
        raise ValueError(f"split must be three fractions (train, threshold, final), got {split!r}") from None
    if len(fractions) != 3 or any(not (0.0 < s < 1.0) for s in fractions) or abs(sum(fractions) - 1.0) > 1e-9:
        raise ValueError(
            f"split must be three fractions in (0, 1) for (train, threshold, final) summing to 1, got {split!r}"
        )
    return fractions  # type: ignore[return-value]


class _TopTail:
    """The largest ``m`` values of a stream as exact (value, count) pairs, every value >= the running cutoff with its
    full count (memory ``O(m + distinct tied values)``)."""

    def __init__(self, m: int) -> None:
        self.m = int(m)
        self.values = np.empty(0)  # descending
        self.counts = np.empty(0, dtype=np.int64)
        self.n = 0

    def update(self, values: np.ndarray, counts: np.ndarray | None = None) -> None:
        values = np.asarray(values, dtype=np.float64).ravel()
        counts = np.ones(values.shape, dtype=np.int64) if counts is None else np.asarray(counts, dtype=np.int64).ravel()
        if np.isnan(values).any():
            raise ValueError("the classifier returned NaN scores; cannot set a threshold")
        self.n += int(counts.sum())
        if self.counts.sum() >= self.m:  # full: only values at or above the cutoff can matter
            keep = values >= self.values[-1]
            values, counts = values[keep], counts[keep]
        if values.size == 0:
            return
        merged = np.concatenate([self.values, values])
        weights = np.concatenate([self.counts, counts])
        uniq, inverse = np.unique(merged, return_inverse=True)
        totals = np.bincount(inverse, weights=weights).astype(np.int64)
        uniq, totals = uniq[::-1], totals[::-1]
        cum = np.cumsum(totals)
        stop = int(np.searchsorted(cum, self.m)) + 1  # first index with cum >= m, inclusive
        self.values, self.counts = uniq[:stop], totals[:stop]

    def threshold(self, c: float) -> tuple[float, float, int, int]:
        """``(t, q, n_above, n_equal)`` with ``n_above + q * n_equal = c * n`` exactly."""
        target = c * self.n
        cum = np.cumsum(self.counts)
        idx = int(np.searchsorted(cum, math.floor(target) + 1))  # (floor(target)+1)-th largest
        n_above = int(cum[idx - 1]) if idx > 0 else 0
        n_equal = int(self.counts[idx])
        q = (target - n_above) / n_equal
        return float(self.values[idx]), float(q), n_above, n_equal


def _sniper_threshold(scores, c: float = DEFAULT_C, counts=None) -> tuple[float, float]:
    """``(t, q)``: fire above ``t`` (the ``(floor(c n) + 1)``-th largest score, Bichsel et al., Algorithm 1)
    and with probability ``q`` at ``t``, so the firing fraction is exactly ``c``; ``counts`` are multiplicities."""
    c = _check_c(c)
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim != 1 or s.size == 0:
        raise ValueError(f"scores must be a non-empty one-dimensional array, got shape {s.shape}")
    if counts is not None:
        counts = np.asarray(counts)
        if counts.shape != s.shape or np.any(counts < 0) or not np.issubdtype(counts.dtype, np.integer):
            raise ValueError("counts must be non-negative integers, one per score")
        if counts.sum() == 0:
            raise ValueError("counts sum to zero: no scores to set a threshold on")
    m = int(math.floor(c * (s.size if counts is None else int(np.sum(counts))))) + 1
    tail = _TopTail(m)
    tail.update(s, counts)
    t, q, _, _ = tail.threshold(c)
    return t, q


def sniper_bound(k_num, n_num, k_den, n_den, alpha: float, c: float | None = None) -> dict[str, float]:
    """DP-Sniper's lower bound from final-stage counts (conservative rounding, optional c floor).

    ``raw = log(CP_lower(k_num; n_num)) - log(max(CP_upper(k_den; n_den), c))``, one-sided Clopper-Pearson
    bounds at level ``alpha`` each (Clopper & Pearson 1934). Fractional counts (``ties="expected"``) are
    rounded conservatively, ``k_num`` **down** and ``k_den`` **up**. With ``c`` given, ``raw <= log(1 / c)``.

    Parameters
    ----------
    k_num, n_num, k_den, n_den : float, int
        Attack firings and calls under the numerator input (to detect) and the reference input (fires ~c).
    alpha : float in (0, 1)
        Level of each one-sided bound.
    c : float in (0, 1), optional
        Floor of the denominator; ``None`` for the unenforced bound.

    Returns
    -------
    dict
        ``raw`` (may be negative, ``-inf`` when ``k_num`` rounds to 0), ``certificate`` (``max(0, raw)``),
        ``num_lower``, ``den_upper`` (the Clopper-Pearson bounds, before the floor), ``denominator`` (after).

    Raises
    ------
    ValueError
        Counts outside ``[0, n]``, ``alpha`` or ``c`` outside (0, 1).

    Examples
    --------
    >>> b = sniper_bound(900, 1000, 10, 1000, alpha=0.0125, c=0.01)
    >>> round(b["raw"], 4), round(b["num_lower"], 4), round(b["den_upper"], 4)
    (3.799, 0.8767, 0.0196)
    """
    lower = float(clopper_pearson_lower(k_num, n_num, alpha))
    upper = float(clopper_pearson_upper(k_den, n_den, alpha))
    denominator = upper if c is None else max(upper, _check_c(c))
    raw = math.log(lower) - math.log(denominator) if lower > 0 else -math.inf
    return {"raw": raw, "certificate": max(0.0, raw), "num_lower": lower, "den_upper": upper,
            "denominator": denominator}


def attack_cap(n_final, alpha, c: float | None = DEFAULT_C):
    """Largest bound ``n_final`` final calls per input can certify (closed form).

    Firing on every numerator call and no reference call: ``cap(n) = log(alpha^(1/n) / max(1 - alpha^(1/n), c))``,
    rising with ``n`` to ``log(1/c)`` (to ``+inf`` without the c floor).

    Parameters
    ----------
    n_final : int or array_like of int, >= 1
    alpha : float in (0, 1)
        Level of each one-sided bound.
    c : float in (0, 1) or None

    Returns
    -------
    float or numpy.ndarray

    Examples
    --------
    >>> attack_cap([10, 100, 1000], alpha=0.0125).round(3)  # rises to log(1 / 0.01) = 4.605
    array([0.598, 3.106, 4.601])
    """
    n = np.asarray(n_final, dtype=np.float64)
    if np.any(n < 1):
        raise ValueError("n_final must be >= 1")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    lower = np.exp(np.log(alpha) / n)
    upper = -np.expm1(np.log(alpha) / n)
    den = upper if c is None else np.maximum(upper, _check_c(c))
    out = np.log(lower) - np.log(den)
    return out[()] if out.ndim == 0 else out


def design_cap(n_final, alpha, c: float = DEFAULT_C):
    """Bound of an attack firing always under the numerator and with probability ``c`` under the reference
    input, at the expected counts: ``log(CP_lower(n; n) / max(CP_upper(ceil(c n); n), c))``.

    What DP-Sniper certifies against a mechanism it breaks completely; it approaches ``log(1/c)`` more
    slowly than :func:`attack_cap`.

    Examples
    --------
    >>> design_cap([1_000, 100_000], alpha=0.0125).round(3)
    array([3.926, 4.535])
    """
    n = np.atleast_1d(np.asarray(n_final, dtype=np.float64))
    out = np.array([sniper_bound(k, k, c * k, k, alpha, c)["raw"] for k in n])
    return out[0] if np.ndim(n_final) == 0 else out


def _check_c(c) -> float:
    if isinstance(c, bool) or not isinstance(c, numbers.Real) or not (0.0 < float(c) < 1.0):
        raise ValueError(f"c (the attack's target firing probability) must be in (0, 1), got {c!r}")
    return float(c)


# The mechanism adapters (:func:`_source` picks one)


class _Source:
    """Draws outputs of the two inputs (0 = a, 1 = b)."""

    discrete = False
    dim: int | None = None
    n_outputs = 0
    stage = "training"  # set by dp_sniper: "training", "threshold" or "final"

    def draw(self, which: int, n: int, rng: np.random.Generator) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def features(self, batch: np.ndarray) -> np.ndarray:
        return batch


class _LaplaceSource(_Source):
    """Float-safe product Laplace outputs ``g * rint((mu + noise) / g)`` in float64, float32 features.

    Noise ``sign(S) b (-log V)`` with ``S = U - 1/2``, ``V = 1 - 2 |S| + 2**-53`` (exact, never 0) from numpy's
    float64 uniform ``U``: ``Generator.laplace``'s formula up to that half-step, vectorised; the same float-safe
    mechanism as :meth:`ProductLaplace.sample` (same grid and lattice), different draws. Classifiers see float32
    features (post-processing), a ``score_function`` the float64 outputs.
    """

    def __init__(self, mech: ProductLaplace, a: int, b: int) -> None:
        self.grid = np.asarray(mech.grid, dtype=np.float64)
        self.mu_in_cells = (mech.prototypes[a] / self.grid, mech.prototypes[b] / self.grid)  # exact
        self.scale_in_cells = float(mech.scale) / self.grid  # exact
        self.dim = mech.dim
        self._work = np.empty(0)

    def draw(self, which, n, rng):
        x = rng.random((n, self.dim))  # U = k 2**-53
        x -= 0.5  # S, exact
        if self._work.size < x.size:
            self._work = np.empty(x.size)
        v = np.abs(x, out=self._work[: x.size].reshape(x.shape))
        v *= -2.0
        v += 1.0  # 1 - 2|S| in [0, 1], exact
        v += 2.0**-53  # V: midpoints, exact (1 + 2**-53 rounds to 1), never 0
        np.log(v, out=v)  # -E
        v *= -self.scale_in_cells  # b E / g >= 0
        np.copysign(v, x, out=x)  # noise / g, with the sign of S
        x += self.mu_in_cells[which]
        np.rint(x, out=x)
        x *= self.grid
        return x

    def features(self, batch):
        return batch.astype(np.float32)


class _CodeSource(_Source):
    """Randomized response: integer category codes; the classifier sees one-hot rows."""

    discrete = True

    def __init__(self, mech: RandomizedResponse, a: int, b: int) -> None:
        self.mech, self.inputs = mech, (a, b)
        self.n_outputs = mech.n_categories
        self.dim = mech.n_categories

    def draw(self, which, n, rng):
        return self.mech.sample_codes(self.inputs[which], n, rng)

    def features(self, batch):
        return self.mech.encode(batch)


class _MechanismSource(_Source):
    """Any :class:`Mechanism`: ``mechanism.sample(identity, n, rng)``."""

    def __init__(self, mech: Mechanism, a: int, b: int) -> None:
        self.mech, self.inputs = mech, (a, b)
        self.dim = mech.dim

    def draw(self, which, n, rng):
        return self.mech.sample(self.inputs[which], n, rng)


class _CallableSource(_Source):
    """A callable ``mechanism(input, n, rng) -> (n, d)`` (or ``(n,)``); every batch is checked: real, finite,
    one dimension ``d`` for both inputs and, with ``check_reuse``, no reuse across stages (:class:`_ReuseCheck`)."""

    def __init__(self, fn: Callable, a: Any, b: Any, check_reuse: bool = True) -> None:
        self.fn, self.inputs = fn, (a, b)
        self.shapes: dict[int, tuple[int, ...]] = {}
        self.reuse = _ReuseCheck() if check_reuse else None
        self.stage = "training"

    def draw(self, which, n, rng):
        name = f"mechanism(input {'ab'[which]}, n={n}, rng)"
        try:
            raw = self.fn(self.inputs[which], n, rng)
        except TypeError as exc:
            raise ValueError(f"{name} failed with TypeError ({exc}); DP-Sniper calls the mechanism as "
                             "mechanism(input, n, rng) with a numpy Generator rng") from exc
        try:
            arr = np.asarray(raw)
            if arr.dtype.kind == "c":
                raise TypeError(f"complex values ({arr.dtype})")
            x = np.asarray(arr, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name} returned {type(raw).__name__} that is not an array of real numbers ({exc}); "
                             "expected a float array of shape (n,) or (n, d)") from None
        if x.ndim == 1:
            x = x[:, None]
        if x.ndim != 2 or x.shape[0] != n:
            raise ValueError(
                f"mechanism(input {'ab'[which]}, n={n}, rng) must return an array of shape (n,) or (n, d); "
                f"got shape {x.shape}"
            )
        bad = ~np.isfinite(x)
        if bad.any():
            row = int(np.argwhere(bad)[0][0])
            raise ValueError(f"mechanism output for input {'ab'[which]} holds NaN or infinite values "
                             f"({int(bad.sum())} in the {self.stage} stage; first in row {row}: {x[row].tolist()[:4]})")
        if self.dim is None:
            self.dim = x.shape[1]
            self.shapes[which] = x.shape[1:]
        elif x.shape[1] != self.dim:
            first = "a" if 0 in self.shapes else "b"
            raise ValueError(
                f"mechanism outputs have mismatched shapes: input {first} gave rows of length {self.dim}, "
                f"input {'ab'[which]} gave {x.shape[1]} (shape {x.shape})"
            )
        else:
            self.shapes.setdefault(which, x.shape[1:])
        if self.reuse is not None:
            self.reuse.observe(x, self.stage, "ab"[which])
        return x


class _ReuseCheck:
    """Refuses a callable mechanism whose rows repeat rows of an earlier stage, or of the first stage within it, by
    hashed :func:`epsaudit.validation.row_keys` (exact bytes; for ``d >= 4`` also L2-normalised)."""

    NORMALISED_MIN_DIM = 4

    def __init__(self) -> None:
        self.exact: dict[int, str] = {}
        self.normalised: dict[int, str] = {}
        self.batches: dict[tuple[str, str], int] = {}
        self.first_stage: str | None = None

    def observe(self, x: np.ndarray, stage: str, label: str) -> None:
        batch = self.batches.get((stage, label), 0)
        self.batches[(stage, label)] = batch + 1
        if self.first_stage is None:
            self.first_stage = stage
        exact = [hash(k) for k in row_keys(x, normalised=False)]
        normalised = ([hash(k) for k in row_keys(x)] if x.shape[1] >= self.NORMALISED_MIN_DIM
                      else [None] * len(exact))
        if stage == self.first_stage and len(set(exact)) < len(exact):
            repeats = len(exact) - len(set(exact))
            raise ReusedRowsError(
                f"DP-Sniper: {repeats} of {len(exact)} rows of batch {batch} of the {stage} stage of input {label!r} "
                "repeat other rows of the same batch: the mechanism's outputs repeat (a discrete or low-resolution "
                "mechanism, or a callable that returns stored rows). A value check cannot tell a reused draw from a "
                "repeated value; if every call draws fresh outputs from its rng and values repeat by design, pass "
                "check_reuse=False.")
        hits_exact, hits_normalised, origins, first = 0, 0, set(), None
        for i, (ke, kn) in enumerate(zip(exact, normalised)):
            origin = self.exact.get(ke)
            if origin is not None:
                hits_exact += 1
            elif kn is not None and kn in self.normalised:
                origin = self.normalised[kn]
                hits_normalised += 1
            if origin is not None:
                origins.add(origin)
                first = i if first is None else first
        if hits_exact or hits_normalised:
            where = f"batch {batch} of the {stage} stage of input {label!r}"
            counts = (f"({hits_exact} exact copies, {hits_normalised} equal after L2-normalisation; "
                      f"first: row {first})")
            if stage == self.first_stage:
                raise ReusedRowsError(
                    f"DP-Sniper: {hits_exact + hits_normalised} of {len(exact)} rows of {where} repeat rows drawn "
                    f"earlier in the same stage, for {', '.join(sorted(origins))} {counts}: the mechanism's outputs "
                    "repeat (a discrete or low-resolution mechanism, or a callable that ignores its rng or returns "
                    "stored rows). A value check cannot tell a reused draw from a repeated value; if every call "
                    "draws fresh outputs from its rng and values repeat by design, pass check_reuse=False.")
            raise ReusedRowsError(
                f"DP-Sniper: {hits_exact + hits_normalised} of {len(exact)} rows of {where} repeat rows drawn "
                f"for {', '.join(sorted(origins))} {counts}. The threshold and final samples must be fresh draws: "
                "does the mechanism ignore its rng argument or return stored rows? (If outputs repeat by design, "
                "pass check_reuse=False.)")
        if stage != "final":
            tag = f"{stage} of input {label!r}"
            for ke, kn in zip(exact, normalised):
                self.exact.setdefault(ke, tag)
                if kn is not None:
                    self.normalised.setdefault(kn, tag)


def _source(mechanism, a, b, check_reuse: bool = True) -> _Source:
    if isinstance(mechanism, Mechanism):
        for name, value in (("a", a), ("b", b)):
            mechanism._check_identity(value, name)
        if int(a) == int(b):
            raise ValueError(f"a and b are the same input ({a}); DP-Sniper audits two different inputs")
        if type(mechanism) is ProductLaplace:
            return _LaplaceSource(mechanism, int(a), int(b))
        if isinstance(mechanism, RandomizedResponse):
            return _CodeSource(mechanism, int(a), int(b))
        return _MechanismSource(mechanism, int(a), int(b))
    if callable(mechanism):
        return _CallableSource(mechanism, a, b, check_reuse)
    raise ValueError(
        f"mechanism must be an epsaudit Mechanism or a callable (input, n, rng) -> (n, d) array, "
        f"got {type(mechanism).__name__}"
    )


def _freshness(source: _Source) -> str:
    """How the freshness of the threshold and final samples was established (``settings["freshness"]``)."""
    if isinstance(source, _CallableSource):
        if source.reuse is None:
            return "not checked (check_reuse=False): the caller declares that outputs repeat by design"
        normalised = " and after L2-normalisation" if (source.dim or 0) >= _ReuseCheck.NORMALISED_MIN_DIM else ""
        return f"checked: no threshold or final row repeats a training or threshold row (exactly{normalised})"
    return ("not checked: the library's own mechanism draws each stage on an independent child stream of the seed "
            "(outputs may repeat by design)")


# The attack: train a classifier, set the thresholds, count the final firings, certify
#: The independent random streams of one call (training, threshold and final draws of each input; ties).
_STAGES = ("train-a", "train-b", "threshold-a", "threshold-b", "final-a", "final-b", "ties")


def _linear_parts(fitted) -> tuple[np.ndarray, float] | None:
    """``(w, b)`` with ``x @ w + b`` the log-odds of a fitted binary linear classifier, ``StandardScaler`` pipeline
    steps folded in (``None`` for anything else; ``ValueError`` for non-finite weights)."""
    from sklearn.linear_model._base import LinearClassifierMixin  # sklearn is imported when first needed
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    steps = [step for _, step in fitted.steps] if isinstance(fitted, Pipeline) else [fitted]
    *transforms, last = steps
    if not isinstance(last, LinearClassifierMixin):
        return None
    coef = np.asarray(getattr(last, "coef_", None))
    classes = list(getattr(last, "classes_", []))
    if coef.ndim != 2 or coef.shape[0] != 1 or classes != [0, 1]:
        return None
    intercept = np.ravel(getattr(last, "intercept_", [0.0]))
    w = np.asarray(coef[0], dtype=np.float64)
    b0 = float(intercept[0]) if intercept.size else 0.0
    for step in reversed(transforms):
        if step is None or (isinstance(step, str) and step == "passthrough"):
            continue
        if not isinstance(step, StandardScaler):
            return None
        if step.with_std and step.scale_ is not None:
            w = w / step.scale_
        if step.with_mean and step.mean_ is not None:
            b0 = b0 - float(step.mean_ @ w)
    if not (np.all(np.isfinite(w)) and np.isfinite(b0)):
        raise ValueError(f"the fitted classifier {classifier_name(fitted)} has non-finite weights; cannot score")
    return w, b0


def _batch_size(source: _Source, batch: int | None) -> int:
    if batch is not None:
        return batch
    if source.dim is not None:
        return max(1, _BATCH_VALUES // source.dim)
    return 1024  # a callable whose output dimension is not known yet


def _fit(source: _Source, classifier, n: int, rngs, batch: int | None):
    """Draw ``n`` training calls per input (in batches, into one ``(2 n, d)`` matrix) and fit ``classifier`` on
    ``a`` (label 1) against ``b`` (0); returns ``(fitted, convergence warnings)``."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.utils.validation import has_fit_parameter

    estimator = check_classifier(classifier)
    if source.discrete:
        codes = [np.concatenate([source.draw(i, size, rngs[i]) for size in _sizes(source, n, batch)]) for i in (0, 1)]
        if isinstance(estimator, LogisticRegression) and has_fit_parameter(estimator, "sample_weight"):
            # A finite output space: the weighted distinct rows give logistic regression the same
            # loss as the duplicated rows, at cost O(K) instead of O(n).
            k = source.n_outputs
            counts = np.r_[np.bincount(codes[0], minlength=k), np.bincount(codes[1], minlength=k)]
            rows = np.arange(2 * k) % k
            y = np.r_[np.ones(k), np.zeros(k)]
            keep = counts > 0
            x = source.features(rows[keep])
            return count_convergence_warnings(lambda: estimator.fit(x, y[keep], sample_weight=counts[keep]))
        x = source.features(np.concatenate(codes))
    else:
        x = None
        row = 0
        for i in (0, 1):
            for size in _sizes(source, n, batch):
                out = source.features(source.draw(i, size, rngs[i]))
                if x is None:
                    x = np.empty((2 * n, out.shape[1]), dtype=out.dtype)
                x[row:row + size] = out
                row += size
    y = np.r_[np.ones(n), np.zeros(n)]
    return count_convergence_warnings(lambda: estimator.fit(x, y))


def _sizes(source: _Source, n: int, batch: int | None):
    done = 0
    while done < n:
        size = min(_batch_size(source, batch), n - done)
        done += size
        yield size


def _scorer(source: _Source, fitted=None, score_function=None) -> Callable[[np.ndarray], np.ndarray]:
    """Score function on *drawn batches* (higher: "more like input a"), checked per batch unless on the linear fast
    path; ``score_function`` sees the outputs (one-hot rows for randomized response), a classifier the features."""
    if score_function is not None:
        def on_outputs(x):
            return check_scores(score_function(x), len(x), "score_function", allow_infinite=True)
    else:
        parts = _linear_parts(fitted)
        if parts is not None:
            w, b0 = parts
            if isinstance(source, _LaplaceSource):
                w, b0 = w.astype(np.float32), np.float32(b0)

            def on_features(f):
                return f @ w + b0
        else:
            def on_features(f):
                return check_scores(positive_scores(fitted, f), len(f), f"classifier {classifier_name(fitted)}",
                                    allow_infinite=True)

        def on_outputs(x):
            return on_features(source.features(x))

    if source.discrete:
        table = np.asarray(on_outputs(np.arange(source.n_outputs)) if score_function is None
                           else on_outputs(source.features(np.arange(source.n_outputs))), dtype=np.float64)
        return lambda codes: table[codes]
    return on_outputs


def _stream_scores(source: _Source, which: int, n: int, rng, score, batch: int | None, per_batch: Callable) -> None:
    """Draw ``n`` calls of one input in batches and pass each batch's ``(scores, None)`` to ``per_batch``
    (for a finite output space: the distinct outputs' scores and their counts)."""
    for size in _sizes(source, n, batch):
        out = source.draw(which, size, rng)
        if source.discrete:
            counts = np.bincount(out, minlength=source.n_outputs)
            per_batch(score(np.arange(source.n_outputs)), counts)
        else:
            per_batch(score(out), None)


class _Counter:
    """Final-stage firing counts of one attack ``score > t`` (ties at ``t`` counted apart)."""

    def __init__(self, t: float) -> None:
        self.t, self.above, self.equal = t, 0, 0

    def add(self, s: np.ndarray, counts: np.ndarray | None) -> None:
        above, equal = s > self.t, s == self.t
        if counts is None:
            self.above += int(np.count_nonzero(above))
            self.equal += int(np.count_nonzero(equal))
        else:
            self.above += int(counts[above].sum())
            self.equal += int(counts[equal].sum())

    def fired(self, q: float, ties: str, rng: np.random.Generator) -> float:
        if ties == "draw":
            return float(self.above + rng.binomial(self.equal, q))
        return self.above + q * self.equal


def dp_sniper(mechanism, a, b, calls: int, *, c: float = DEFAULT_C, classifier: Any = None,
              score_function: Callable[[np.ndarray], np.ndarray] | None = None, confidence: float = 0.95,
              n_certificates: int = 2, split: Sequence[float] = _DEFAULT_SPLIT, max_train: int = _DEFAULT_MAX_TRAIN,
              ties: str = "draw", enforce_c: bool = True, batch_size: int | None = None, check_reuse: bool = True,
              seed=0) -> tuple[EpsilonResult, EpsilonResult]:
    """DP-Sniper certificates for the fixed input pair ``(a, b)`` in both directions.

    Parameters
    ----------
    mechanism : Mechanism or callable
        An :class:`epsaudit.mechanisms.Mechanism` (``a``, ``b`` identity indices), or ``mechanism(input, n, rng)
        -> (n, d) or (n,) array`` with any inputs, using the :class:`numpy.random.Generator` ``rng`` for all draws.
    a, b : input
        The two inputs (must differ).
    calls : int
        Mechanism calls for the pair in total (:func:`split_budget`); *Picture the Epsilon*, Appendix Table 5: 6.5e6.
    c : float in (0, 1), default 0.01
        Target firing probability of the attack under the reference input.
    classifier : scikit-learn estimator, optional
        With ``predict_proba`` or ``decision_function``; default :func:`epsaudit.audits.scorers.logistic_regression`.
        Linear classifiers (and ``StandardScaler`` pipelines ending in one) are scored by their decision function.
    score_function : callable, optional
        A fixed score ``(n, d) -> (n,)`` (higher = more like ``a``), e.g. ``exact_score(a, b)`` or
        :func:`epsaudit.mechanisms.reachability_score`: nothing is trained, the training budget goes to the
        final estimate. Randomized response passes one-hot rows. Checked per batch: shape ``(n,)``, real, no
        NaN (``+/-inf`` allowed).
    confidence : float in (0, 1), default 0.95
        Family-wise confidence of the ``n_certificates`` certificates reported together.
    n_certificates : int, default 2
        Bonferroni family size (default: this call's two directions); each bound at ``(1 - confidence) / (2 n)``.
    split : (float, float, float)
        Budget fractions for training, threshold and final stages (:func:`split_budget`).
    max_train : int
        Most training calls per input.
    ties : {"draw", "expected"}
        ``"draw"``: tied outputs fire with probability ``q``, drawn (exactly binomial counts).
        ``"expected"``: the original's fractional count ``n_above + q n_tied``, rounded conservatively; not
        binomial, so the Clopper-Pearson level is not exact for it (conservative in our simulations).
    enforce_c : bool, default True
        Floor the denominator's upper bound at ``c`` (caps the certificate at ``log(1/c)``).
    batch_size : int, optional
        Mechanism calls per streamed batch; default ``max(1, 2**18 // d)``.
    check_reuse : bool, default True
        For a callable mechanism: refuse threshold or final rows that repeat earlier stages' rows (exactly or, for
        ``d >= 4``, after L2-normalisation) and repeats within the first stage: reused rows void a certificate.
        False declares that outputs repeat by design while every call draws fresh from its ``rng``; the library's
        mechanisms are never checked (independent child streams of ``seed``).
    seed : int, stream key (tuple) or numpy.random.Generator
        Seed of every draw (seven independent child streams).

    Returns
    -------
    (EpsilonResult, EpsilonResult)
        Certificates for ``a -> b`` and ``b -> a`` (route ``"dp_sniper"``, ``kind="certificate"``, ``delta=0``:
        pure DP; ``n`` = final calls per input), ``value = max(0, raw)``. Details: ``direction``, ``raw``
        (c floor applied when enforced), ``raw_without_c``, ``k_num``/``k_den`` (firings under the detected /
        reference input), ``n_num``/``n_den``, ``p_num_hat``/``p_den_hat``, ``num_lower``/``den_upper``,
        ``threshold``, ``q``, ``threshold_tied``, ``calls``, ``n_train``/``n_threshold``/``n_final`` (per
        input), ``cap`` (:func:`attack_cap`), ``convergence_warnings``.

    Raises
    ------
    ValueError
        If ``c`` or ``confidence`` is outside (0, 1), the budget is too small to split, ``ties`` is unknown,
        ``a == b`` or an identity is invalid, the outputs are bad (mismatched shapes, wrong row counts, complex,
        non-numeric, NaN or inf), a callable mechanism does not take ``(input, n, rng)``, the scores are not one
        real number per row, the classifier is unusable, ``batch_size < 1``, ``check_reuse`` or ``seed`` invalid.
    epsaudit.validation.ReusedRowsError
        (a ``ValueError``) With ``check_reuse``: a callable mechanism's rows repeat (the message says where).

    References
    ----------
    Bichsel, Steffen, Bogunovic & Vechev (2021), "DP-Sniper", IEEE S&P. *Picture the Epsilon*, Appendix Table 5.

    Examples
    --------
    >>> from epsaudit.mechanisms import RandomizedResponse
    >>> ab, ba = dp_sniper(RandomizedResponse(16, 2.0), 0, 1, 100_000, seed=0)  # exact epsilon 2
    >>> ab.details["direction"], ab.details["n_final"], round(ab.value, 3), round(ba.value, 3)
    ('a->b', 42500, 1.861, 1.948)
    """
    c = _check_c(c)
    _check_options(confidence, n_certificates, ties, batch_size, check_reuse, score_function, classifier)
    budget = split_budget(calls, split, max_train, train=score_function is None)
    alpha = bonferroni_alpha(int(n_certificates), float(confidence)) / 2  # each of a certificate's two one-sided bounds
    source = _source(mechanism, a, b, bool(check_reuse))
    streams = generators(seed, "dp-sniper", _STAGES)
    batch = int(batch_size) if batch_size is not None else None

    # 1. training (materialised: at most max_train calls per input)
    fitted, warned = None, 0
    if score_function is None:
        fitted, warned = _fit(source, classifier, budget.train, streams[0:2], batch)
    score = _scorer(source, fitted, score_function)
    # 2. thresholds, 3. final counts on fresh calls of both inputs
    thresholds = _thresholds(source, score, c, budget.threshold, streams[2:4], batch)
    counters = _final_counts(source, score, thresholds, budget.final, streams[4:6], batch)

    test_name = "fixed score function" if score_function is not None else classifier_name(check_classifier(classifier))
    settings = {"test": test_name, "c": c, "ties": ties, "enforce_c": bool(enforce_c), "split": tuple(_check_split(split)),
                "max_train": int(max_train), "calls": int(calls),
                "batch_size": _batch_size(source, batch),
                "seed": seed if isinstance(seed, numbers.Integral) else repr(seed), "n_certificates": int(n_certificates),
                "freshness": _freshness(source)}
    floor = c if enforce_c else None
    return _certificates(a, b, thresholds, counters, budget, ties=ties, tie_rng=streams[6], alpha=alpha, floor=floor,
                         confidence=float(confidence), n_certificates=int(n_certificates), settings=settings,
                         warned=warned)


def _check_options(confidence, n_certificates, ties, batch_size, check_reuse, score_function, classifier) -> None:
    """Refuse invalid options of :func:`dp_sniper` (in the order of its signature)."""
    if isinstance(confidence, bool) or not isinstance(confidence, numbers.Real) or not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if isinstance(n_certificates, bool) or not isinstance(n_certificates, numbers.Integral) or n_certificates < 1:
        raise ValueError(f"n_certificates must be an integer >= 1, got {n_certificates!r}")
    if ties not in _TIES:
        raise ValueError(f"ties must be one of {_TIES}, got {ties!r}")
    if batch_size is not None and (isinstance(batch_size, bool) or not isinstance(batch_size, numbers.Integral) or batch_size < 1):
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    if not isinstance(check_reuse, (bool, np.bool_)):
        raise ValueError(f"check_reuse must be True or False, got {check_reuse!r}")
    if score_function is not None and not callable(score_function):
        raise ValueError("score_function must be callable: (n, d) array -> (n,) scores")
    if score_function is None:
        check_classifier(classifier)


def _thresholds(source: _Source, score, c: float, n: int, rngs, batch: int | None) -> list[tuple[float, float, int, int]]:
    """Stage 2: ``(t, q, n_above, n_equal)`` per direction from ``n`` fresh calls of the reference input
    (``a -> b`` on ``M(b)`` with the score, ``b -> a`` on ``M(a)`` with the negated score)."""
    m = int(math.floor(c * n)) + 1
    tails = (_TopTail(m), _TopTail(m))  # index = direction
    source.stage = "threshold"
    _stream_scores(source, 1, n, rngs[1], score, batch, lambda s, k: tails[0].update(s, k))
    _stream_scores(source, 0, n, rngs[0], score, batch, lambda s, k: tails[1].update(-s, k))
    return [tail.threshold(c) for tail in tails]


def _final_counts(source: _Source, score, thresholds, n: int, rngs, batch: int | None) -> dict:
    """Stage 3: firing counts ``{(direction, input): _Counter}`` on ``n`` fresh calls of each input (shared)."""
    counters = {(d, i): _Counter(thresholds[d][0]) for d in (0, 1) for i in (0, 1)}

    def counter_for(i):
        def add(s, k):
            counters[(0, i)].add(s, k)
            counters[(1, i)].add(-s, k)
        return add

    source.stage = "final"
    for i in (0, 1):
        _stream_scores(source, i, n, rngs[i], score, batch, counter_for(i))
    return counters


def _certificates(a, b, thresholds, counters, budget: SniperBudget, *, ties: str, tie_rng, alpha: float,
                  floor: float | None, confidence: float, n_certificates: int, settings: dict,
                  warned: int) -> tuple[EpsilonResult, EpsilonResult]:
    """Stage 4: break the ties (``tie_rng``, in a fixed order), bound each direction (:func:`sniper_bound`,
    ``floor`` = ``c`` when enforced) and build the two results."""
    cap = float(attack_cap(budget.final, alpha, floor))
    n = budget.final
    results = []
    for d, (num, den) in enumerate(((0, 1), (1, 0))):
        t, q, n_above, n_equal = thresholds[d]
        k_num = counters[(d, num)].fired(q, ties, tie_rng)
        k_den = counters[(d, den)].fired(q, ties, tie_rng)
        bound = sniper_bound(k_num, n, k_den, n, alpha, floor)
        unenforced = sniper_bound(k_num, n, k_den, n, alpha, None)
        details = {
            "direction": _DIRECTIONS[d], "raw": bound["raw"], "raw_without_c": unenforced["raw"],
            "k_num": k_num, "k_den": k_den, "n_num": n, "n_den": n,
            "p_num_hat": k_num / n, "p_den_hat": k_den / n,
            "num_lower": bound["num_lower"], "den_upper": bound["den_upper"],
            "threshold": t, "q": q, "threshold_tied": n_equal, "calls": budget.calls,
            "n_train": budget.train, "n_threshold": budget.threshold, "n_final": n,
            "cap": cap, "convergence_warnings": warned,
        }
        results.append(EpsilonResult(
            value=bound["certificate"], kind="certificate", route=ROUTE, n=(n, n), pair=(a, b), delta=0.0,
            confidence=confidence, alpha_per_bound=alpha, bound="clopper-pearson",
            correction=f"bonferroni (union bound): 2 one-sided Clopper-Pearson bounds x {n_certificates} certificate(s)",
            settings=settings, details=details,
        ))
    return results[0], results[1]
