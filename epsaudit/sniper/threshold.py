"""DP-Sniper's threshold and bound: pure functions of scores and counts.

The threshold ``(t, q)`` makes the randomised attack fire on exactly a fraction ``c`` of the
reference input's threshold sample (Bichsel et al. 2021, Algorithm 1); the bound turns final-stage
firing counts into a one-sided Clopper-Pearson certificate, with the ``c`` floor and conservative
rounding of :mod:`epsaudit.sniper`.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..bounds import clopper_pearson_lower, clopper_pearson_upper
from .budget import DEFAULT_C


class _TopTail:
    """The largest ``m`` values of a stream (with multiplicity), kept as exact (value, count) pairs.

    Every value >= the running cutoff is kept with its full count, so after the stream the
    ``m``-th largest value and the number of values above and equal to it are exact, in memory
    ``O(m + distinct tied values)``.
    """

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


def sniper_threshold(scores, c: float = DEFAULT_C, counts=None) -> tuple[float, float]:
    """Threshold ``t`` and tie probability ``q`` so the attack fires on exactly a fraction ``c``.

    The attack fires when a score exceeds ``t`` and with probability ``q`` when it equals ``t``.
    ``t`` is the ``(floor(c n) + 1)``-th largest score (Bichsel et al., Algorithm 1) and
    ``q = (c n - n_above) / n_equal`` in ``[0, 1)``, so ``n_above + q n_equal = c n``: the expected
    firing fraction on these scores is exactly ``c``, however heavily they tie.

    Parameters
    ----------
    scores : array_like, shape (n,)
        Scores of the reference input's outputs (higher = "more like the other input").
    c : float in (0, 1)
        Target firing probability.
    counts : array_like of int, shape (n,), optional
        Multiplicity of each score (for scores of a finite output space); default 1 each.

    Returns
    -------
    (float, float)
        ``(t, q)``.

    Raises
    ------
    ValueError
        If ``c`` is outside (0, 1), ``scores`` is empty, not one-dimensional or holds NaN, or
        ``counts`` does not match ``scores`` or is negative.

    Examples
    --------
    >>> sniper_threshold([5.0, 4.0, 4.0, 3.0, 1.0], c=0.3)  # fire above 4, and on a quarter of the two 4s
    (4.0, 0.25)
    """
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

    ``raw = log(CP_lower(k_num; n_num)) - log(max(CP_upper(k_den; n_den), c))`` with one-sided
    Clopper-Pearson bounds at level ``alpha`` each (Clopper & Pearson 1934). Fractional counts (the
    ``"expected"`` tie handling) are rounded conservatively: ``k_num`` **down** and ``k_den``
    **up** (:func:`epsaudit.bounds.clopper_pearson_lower` / ``_upper``). With ``c`` given the
    denominator is at least ``c`` (the attack is tuned to fire with probability ``c``; raising an
    upper bound keeps it valid), so ``raw <= log(1 / c)``.

    Parameters
    ----------
    k_num, n_num : float, int
        Attack firings and calls under the numerator input (the one the attack should detect).
    k_den, n_den : float, int
        Attack firings and calls under the reference input (where it fires with probability ~c).
    alpha : float in (0, 1)
        Level of each one-sided bound.
    c : float in (0, 1), optional
        Floor of the denominator; ``None`` for the unenforced bound.

    Returns
    -------
    dict
        ``raw`` (may be negative, ``-inf`` when ``k_num`` rounds to 0), ``certificate``
        (``max(0, raw)``), ``num_lower``, ``den_upper`` (the Clopper-Pearson bounds, before the
        floor) and ``denominator`` (after it).

    Raises
    ------
    ValueError
        From the Clopper-Pearson functions (counts outside ``[0, n]``, ``alpha`` outside (0, 1)),
        or if ``c`` is outside (0, 1).

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

    The best case fires on every call of the numerator input and on none of the reference input:
    ``CP_lower(n; n) = alpha^(1/n)`` and ``CP_upper(0; n) = 1 - alpha^(1/n)``, so

        cap(n) = log(alpha^(1/n) / max(1 - alpha^(1/n), c)),

    which rises with ``n`` to ``log(1/c)`` (to ``+inf`` without the c floor).

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
    """Bound of an attack that fires always under the numerator input and with probability ``c``
    under the reference input, when the counts equal their expectations (``n`` and ``c n``).

    ``log(CP_lower(n; n) / max(CP_upper(ceil(c n); n), c))``: what DP-Sniper certifies against a
    mechanism it breaks completely, given ``n_final`` final calls per input; it approaches
    ``log(1/c)`` as ``n`` grows, more slowly than :func:`attack_cap`.

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

