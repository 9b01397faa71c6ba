"""A family of sequential certificates: K pairs, rows allocated across them adaptively, and the worst pair.

Each pair's :class:`~epsaudit.bounds.SequentialCertificate` runs at ``alpha / K``, so all K running
bounds hold together with probability ``1 - alpha`` under any adaptive allocation of rows across
pairs (Bonferroni over e-processes). The average of the K e-processes is an e-process for the
intersection null (every pair (eps, delta)-DP), so the *worst-pair* bound

    W_t = max over looks of sup {eps : (1/K) sum_k E_k(eps) >= 1 / alpha}

is a lower confidence bound on the largest pairwise epsilon at level ``alpha`` (no division by K),
valid at any stopping time, and at least the largest per-pair bound.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping
from typing import Any

from .sequential_certificate import SequentialCertificate

__all__ = ["SequentialFamily"]


class SequentialFamily:
    """K sequential certificates at ``alpha / K`` each, and the running worst-pair bound at ``alpha``.

    Parameters
    ----------
    pairs : iterable of hashable
        The pairs' labels (K of them).
    alpha : float in (0, 1)
        Family-wise error level.
    delta : float in [0, 1)
    prior : str, SequentialPrior or pair of them
        Every pair's prior (fixed before the first row).
    dev_ids : mapping pair -> draw ids, optional
        Each pair's development draw ids (see :class:`SequentialCertificate`).
    test_hashes : mapping pair -> str, optional
    **stops
        ``target``, ``budget``, ``claim``, ``futility`` of each pair's certificate.

    Attributes
    ----------
    certificates : dict
        Pair -> :class:`SequentialCertificate` (each at ``alpha / K``).
    worst_bound : float
        The running worst-pair bound.
    worst_path : list of float
        The worst-pair bound after each row (of any pair).

    Raises
    ------
    ValueError
        No pairs, repeated labels; from :meth:`update`: an unknown pair, as
        :meth:`SequentialCertificate.update`.

    See Also
    --------
    epsaudit.bounds.worst_pair_sequential : the worst-pair bound at given counts.

    Examples
    --------
    >>> fam = SequentialFamily(["p0", "p1"])
    >>> for i in range(120):
    ...     _ = fam.update(f"p{i % 2}", "AB"[(i // 2) % 2], False)
    >>> round(fam.worst_bound, 3), round(max(c.bound for c in fam.certificates.values()), 3)
    (2.733, 2.559)
    """

    def __init__(self, pairs: Iterable[Hashable], alpha: float = 0.05, delta: float = 0.0, prior: Any = "B",
                 dev_ids: Mapping[Hashable, Any] | None = None, test_hashes: Mapping[Hashable, str] | None = None,
                 **stops: Any) -> None:
        labels = list(pairs)
        if not labels or len(set(labels)) != len(labels):
            raise ValueError(f"pairs must be distinct labels, at least one; got {labels!r}")
        self.alpha, self.k = float(alpha), len(labels)
        self.certificates = {p: SequentialCertificate(alpha, delta, prior, family=self.k, dev_ids=(dev_ids or {}).get(p),
                                                      test_hash=(test_hashes or {}).get(p), **stops) for p in labels}
        self._threshold = -math.log(self.alpha)
        self.worst_bound = 0.0
        self.worst_path: list[float] = []
        self._log_e = {p: 0.0 for p in labels}  # log E_k(worst_bound) per pair, kept current

    def _log_evalue(self, pair: Hashable, eps: float) -> float:
        c = self.certificates[pair]
        return c._eval(c.fp, c.n_neg, c.fn, c.n_pos, eps)

    def _excess(self, eps: float) -> float:
        """log mean_k E_k(eps) - log(1 / alpha)."""
        logs = [self._log_evalue(p, eps) for p in self.certificates]
        top = max(logs)
        return top + math.log(sum(math.exp(v - top) for v in logs) / self.k) - self._threshold

    def update(self, pair: Hashable, side: str, erred: bool, draw_id: Hashable | None = None) -> float:
        """One test row of one pair; returns the running worst-pair bound.

        Parameters
        ----------
        pair : hashable
            One of the family's labels.
        side, erred, draw_id
            As :meth:`SequentialCertificate.update`.

        Returns
        -------
        float

        Examples
        --------
        >>> fam = SequentialFamily(["a", "b"])
        >>> fam.update("a", "A", False, "r0")
        0.0
        """
        if pair not in self.certificates:
            raise ValueError(f"unknown pair {pair!r}; the family's pairs are {list(self.certificates)}")
        self.certificates[pair].update(side, erred, draw_id)
        self._log_e[pair] = self._log_evalue(pair, self.worst_bound)
        logs = list(self._log_e.values())
        top = max(logs)
        if top + math.log(sum(math.exp(v - top) for v in logs) / self.k) >= self._threshold:
            self._raise()
        self.worst_path.append(self.worst_bound)
        return self.worst_bound

    def _raise(self) -> None:
        """Move the worst-pair bound up to the new sup (bracket, then bisection to 1e-10)."""
        lo, step = self.worst_bound, 0.05
        while True:
            hi = min(lo + step, 700.0)
            if self._excess(hi) < 0 or hi >= 700.0:
                break
            lo, step = hi, 2 * step
        while hi - lo > 1e-10 * max(1.0, lo):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if self._excess(mid) >= 0 else (lo, mid)
        self.worst_bound = lo
        self._log_e = {p: self._log_evalue(p, lo) for p in self.certificates}

    @property
    def bounds(self) -> dict:
        """Each pair's running bound (at ``alpha / K``).

        Examples
        --------
        >>> SequentialFamily(["a", "b"]).bounds
        {'a': 0.0, 'b': 0.0}
        """
        return {p: c.bound for p, c in self.certificates.items()}

    def record(self) -> dict[str, Any]:
        """Every pair's record, the worst-pair bound and its path.

        Examples
        --------
        >>> rec = SequentialFamily(["a"]).record(); rec["family"], rec["worst_bound"]
        (1, 0.0)
        """
        return {"alpha": self.alpha, "family": self.k, "worst_bound": self.worst_bound,
                "worst_path": list(self.worst_path),
                "pairs": {str(p): c.record() for p, c in self.certificates.items()}}
