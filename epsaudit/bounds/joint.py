"""The exact joint certificate: one test of both error rates against the DP null region.

A reserved test fixes, on development rows, a rejection region ("say A"). On test rows it makes
``FP`` false positives among ``n_neg`` rows of identity B and ``FN`` false negatives among ``n_pos``
rows of A, with ``FP ~ Bin(n_neg, p)`` and ``FN ~ Bin(n_pos, q)`` independent (``p`` = FPR,
``q`` = FNR of the fixed test). If the pair is (epsilon, delta)-DP, ``(p, q)`` lies in the null region

    N(eps) = {(p, q) : 1 - q <= e^eps p + delta  and  1 - p <= e^eps q + delta}

(Kairouz, Oh & Viswanath 2015). The paper's certificate (*Picture the Epsilon*, Section IV-C) bounds
``p`` and ``q`` separately, each with a one-sided Clopper-Pearson bound at ``alpha / 2``. The joint
certificate instead tests ``N(eps)`` as a whole, as Barnard's and Boschloo's exact tests treat a
nuisance parameter:

* outcomes are ordered by a statistic fixed in advance, ``T(FP, FN)`` = the split Clopper-Pearson
  certificate at level ``alpha`` and **delta = 0**, before its clamp at 0,
  ``max(log((1 - v) / u), log((1 - u) / v))`` with ``u`` and ``v`` the one-sided upper bounds at
  ``alpha / 2`` on the FPR and the FNR (non-increasing in both counts, symmetric under relabelling
  the identities); ties count as at least as extreme;
* the p-value of ``N(eps, delta)`` is ``sup over (p, q) in N(eps, delta) of P_{p,q}(T >= t_obs)``;
* the certificate is ``sup {eps : p-value(eps) <= alpha}``, a lower confidence bound at level
  ``1 - alpha`` (``N(eps, delta)`` grows with eps, so the p-value is non-decreasing in eps).

**Validity.** For a fixed ordering, ``P(p-value(eps*) <= alpha) <= alpha`` at every point of the true
pair's null region (the p-value of a fixed tail event is a supremum over the null), and the
certificate exceeds the true ``eps*`` only if the p-value of ``N(eps*, delta)`` is at most alpha.
The ordering depends on the counts' sizes and ``alpha`` only -- not on eps (so the inversion is
valid) and not on delta.

**Order of claims.** The tail set ``{T >= t_obs}`` does not change with delta while
``N(eps, delta)`` grows with delta, so this test's p-value is non-decreasing and its certificate
``L_0(delta)`` non-increasing in delta. (Ordering by the split certificate *at delta*, as before,
changed the tail with delta and the certificate could rise with it: 1.5090, 1.5028, 1.5138 at
delta = 0.01, 0.015, 0.02 for 2 + 3 errors in 30 + 30 rows.) More errors enlarge the tail (``T``
falls in both counts), so it is non-increasing in each count; ``T`` and ``N`` are symmetric under
swapping (FP, n_neg) with (FN, n_pos), and the computation runs in one canonical orientation, so
the certificate is exactly symmetric.

**Against the split bound.** At delta = 0 the tail is ``{S_0 >= S_0(obs)}`` with ``S_0`` the split
certificate itself; for eps below the split value every tail outcome lies in the split test's
rejection region of ``N(eps, 0)``, whose size is at most alpha (each one-sided bound fails with
probability at most alpha / 2), so ``L_0`` is at least the split bound. For delta > 0 the same
argument needs the ordering *at delta* (``S_delta``, giving the certificate ``L_delta``; an outcome where
``1 - u - delta`` or ``1 - v - delta`` is negative ranks lowest in it, so that ``L_delta = 0`` there),
and no single delta-free ordering lies inside every ``S_delta``'s level sets. ``L_0`` stays above the split bound
while ``delta * n`` is small against ``|log(alpha / 2)| e^t``, but with a larger delta the null region
holds a test that errs on nearly all ``1 - delta`` of one side and never on the other, outcomes of
that kind rank high at delta = 0, and ``L_0`` can fall to 0 where the split bound is positive
(0 against 1.55 at 185 + 161 errors in 1000 + 1000 rows, alpha = 0.5, delta = 0.01). So for delta > 0
the certificate is

    min(L_delta, max(L_0, split))

* valid: it is at most ``L_delta``, the certificate of one fixed exact test (ordered at delta);
* at least the split bound: both ``L_delta`` and ``max(L_0, split)`` are;
* where the two orderings give the same tail (as at delta = 1e-5 on every test we timed) it is
  ``L_0``; otherwise it is ``max(L_0, split)`` -- non-increasing in delta, both terms are -- whenever
  the test ordered at delta rejects ``N(max(L_0, split), delta)`` (checked with the proven limit),
  and ``L_delta`` only where that test certifies less.

Checked: non-increasing in delta up to 0.01 and never below the split bound on the grids of
``tests/test_bound_invariants.py`` and the hypothesis suite. Not guaranteed: monotone in alpha, even at
delta = 0, because ``L_0``'s ordering depends on alpha (0.857 at alpha = 0.04 against 0.806 at 0.05 for
2 + 0 errors in 4 + 35 rows; at large delta it meets the pathology above: 2.64 at alpha = 0.375 against
1.70 at 0.37875 for 1 + 1 errors in 62 + 12 rows, delta = 0.5); each value is valid at its own level.
Nor monotone in delta beyond about 0.01, where ``L_delta`` decides and its ordering moves with delta (0 at delta = 0.01
against 0.0397 at 0.02 for 8 + 3 errors in 20 + 16 rows, alpha = 0.05; 0.3468 at delta = 0.11 against
0.3721 at 0.115 for 13 + 2 errors, alpha = 0.5). A certificate at delta stays valid at any smaller
value, so where a report needs values monotone in delta, the running minimum over its deltas in increasing
order is valid at each.

``{T >= t_obs}`` is a lower set of counts, so its probability falls as ``p`` or ``q`` grows: the
supremum lies on the lower boundary of ``N(eps, delta)``, ``q(p) = max(1 - delta - e^eps p,
(1 - delta - p) e^-eps)``, two segments meeting at the randomized-response corner
``p = q = (1 - delta) / (1 + e^eps)``. Along it the tail is ``sum_x Bin(x; n_neg, p) *
BinCDF(c(x); n_pos, q(p))`` with ``c(x)`` the largest ``FN`` such that ``T(x, FN) >= t_obs``. Both
coordinates of the boundary fall as ``p`` rises, so on a cell ``[p_i, p_j]`` the tail is at most its
value at ``(p_i, q(p_j))``: a branch-and-bound over cells gives the supremum with a *proven* upper
limit, and the certificate uses that limit (it is valid, never optimistic, and within a relative
``1e-4`` of the exact p-value).

**Computation.** The tail's probability at a point of the boundary sums the binomial terms within a
window of each binomial's bulk, bounds those beyond it by a geometric series from the window's edge
and underflow by the smallest doubles, and adds a relative ``1e-10`` against rounding: a proven upper
limit. It is compiled (:mod:`epsaudit.bounds._joint_kernel`; by numba, or ahead of time by
:mod:`epsaudit.bounds._build_kernel`): the terms by recurrence from the
largest, scaled, or in log space where a scaled sum could underflow, so levels down to
``alpha = 1e-300`` keep their relative accuracy (smaller levels are refused). Each Clopper-Pearson
bound ``u`` comes from the beta quantile of its own tail, and ``1 - u`` too where ``u > 1/2``. The root
in eps is found on an *estimate* of the supremum (Newton steps: a three-point parabola along the
boundary, the envelope theorem for the derivative in eps; restarted where a look around the maximum
found -- for small tests and mu-GDP also along the whole boundary -- or the proven check finds a higher
value, or where the steps stopped short of alpha), moved down by the proven limit's tolerance and then
*verified* with the proven limit (if the check fails, a bisection on the proven limit decides), so the
speed never costs validity. The check is one branch-and-bound for both of its cell budgets that stops
as soon as its answer is known, closing a cell once its limit is within the tolerance of the best
value or at most the level, and cutting each open cell into as many parts (2 to 16) as its limit's
excess over the level asks for. The tail's structure depends on the counts and alpha only and is cached, as are
every count's Clopper-Pearson bounds per size and level (tests of up to 20,000 rows).

With zero errors and ``n`` rows per side the tail is the zero-error outcome alone, its probability
``(1 - p)^n (1 - q)^n`` is largest at the corner, and the certificate is the closed form
``log((s - delta) / (1 - s))``, ``s = alpha^(1 / 2n)`` (``logit(alpha^(1 / 2n))`` at delta = 0):
the corner mechanism (randomized response) makes zero errors with exactly that probability, so no
valid level-alpha procedure certifies more from these counts.

The same construction for mu-Gaussian DP (Dong, Roth & Su 2022) uses the null region
``q >= Phi(Phi^-1(1 - p) - mu)`` (the Gaussian trade-off curve is symmetric, so its mirror is the
same set), the split statistic ``Phi^-1(TPR_lo) - Phi^-1(FPR_hi)`` and the corner ``Phi(-mu / 2)``.

Definitions: the book's methods chapter, "The exact joint certificate".
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import special

from ._kernels import load as _load

__all__ = ["joint_epsilon", "joint_mu", "joint_pvalue", "joint_rejection_region"]


def _kernel():
    """The compiled tail (:func:`epsaudit.bounds._kernels.load`: built ahead of time, else numba's)."""
    return _load()


# Relative slack on the observed statistic so that floating-point ties count as at least as extreme.
_TIE = 1e-9
# Relative tolerance of the branch-and-bound on the supremum (the certificate uses the upper limit).
_SUP_RTOL = 1e-4
# The root search in epsilon stops when its bracket is this narrow.
_EPS_TOL = 1e-10
_GRID = 17  # initial points along the boundary (odd: the corner is one of them)
_SPLIT = 8  # sub-cells per refined cell
_MAX_ROUNDS = 60
_MAX_CELLS = 512  # open cells at which refinement stops (the limit is still proven, a little looser)
_FULL = 20000  # tests up to this size keep every count's Clopper-Pearson bound (cached per size and level)
#: The smallest alpha accepted: every tail and p-value is computed in log space down to it.
_MIN_ALPHA = 1e-300
_GRID_POINTS = np.linspace(-1.0, 1.0, _GRID)
_STENCIL = np.linspace(-1.0, 1.0, 9)
_NEAR = np.concatenate([-np.geomspace(1e-4, 0.1, 12), np.geomspace(1e-4, 0.1, 12), [0.0]])
# a look along the whole boundary after the root's estimate, for tails whose sums are cheap (small tests, where
# the tail can have several local maxima) and for mu-GDP; for large (epsilon, delta)-DP tails a maximum the
# estimate missed fails the proven check instead, which restarts the search from it
_LOOK, _LOOK_COUNTS = np.linspace(-1.0, 1.0, 129), 600
_NEWTON = np.array([-2.0, -1.0, 0.0, 1.0, 2.0, 0.0, 0.0])  # stencil, step in theta, corner
_LOG_HALF = -0.6931471805599453
_NUMBERS = (int, float, np.integer, np.floating)


# ---------------------------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------------------------


def _check(fp, n_neg, fn, n_pos, alpha, delta):
    arrays = [np.asarray(v, dtype=np.float64) for v in (fp, n_neg, fn, n_pos, alpha, delta)]
    names = ("fp", "n_neg", "fn", "n_pos", "alpha", "delta")
    for name, v in zip(names, arrays):
        if np.any(~np.isfinite(v)):
            raise ValueError(f"{name} must be finite, got {v}")
    fp, n_neg, fn, n_pos, alpha, delta = np.broadcast_arrays(*arrays)
    if np.any(n_neg < 1) or np.any(n_pos < 1):
        raise ValueError(f"negatives and positives tested must be >= 1, got n_neg={n_neg.min():g}, n_pos={n_pos.min():g}")
    if np.any(n_neg != np.floor(n_neg)) or np.any(n_pos != np.floor(n_pos)):
        raise ValueError("numbers of rows tested n_neg and n_pos must be integers")
    if np.any((fp < 0) | (fp > n_neg)):
        raise ValueError("false positives must satisfy 0 <= fp <= n_neg")
    if np.any((fn < 0) | (fn > n_pos)):
        raise ValueError("false negatives must satisfy 0 <= fn <= n_pos")
    if np.any(~((alpha > 0) & (alpha < 1))):
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if np.any(alpha < _MIN_ALPHA):
        raise ValueError(f"alpha must be at least {_MIN_ALPHA:g} (the smallest level computed in log space), "
                         f"got alpha={alpha.min():g}")
    if np.any(~((delta >= 0) & (delta < 1))):
        raise ValueError(f"delta must be in [0, 1), got {delta}")
    # Fractional counts (DP-Sniper's tie-breaking) are rounded against the certificate: errors up.
    return np.ceil(fp - 1e-9), n_neg, np.ceil(fn - 1e-9), n_pos, alpha, delta


def _apply(scalar, fp, n_neg, fn, n_pos, alpha, delta):
    """Evaluate a cached scalar certificate once per distinct input row; a Python float for scalar input."""
    if all(isinstance(v, _NUMBERS) for v in (fp, n_neg, fn, n_pos, alpha, delta)):  # one outcome: no arrays
        fp, n_neg, fn, n_pos, alpha, delta = (float(v) for v in (fp, n_neg, fn, n_pos, alpha, delta))
        if (all(math.isfinite(v) for v in (fp, n_neg, fn, n_pos, alpha, delta)) and n_neg >= 1 and n_pos >= 1
                and n_neg.is_integer() and n_pos.is_integer() and 0 <= fp <= n_neg and 0 <= fn <= n_pos
                and _MIN_ALPHA <= alpha < 1 and 0 <= delta < 1):
            return float(scalar(math.ceil(fp - 1e-9), int(n_neg), math.ceil(fn - 1e-9), int(n_pos), alpha, delta))
    fp, n_neg, fn, n_pos, alpha, delta = _check(fp, n_neg, fn, n_pos, alpha, delta)
    if fp.ndim == 0:
        return float(scalar(int(fp), int(n_neg), int(fn), int(n_pos), float(alpha), float(delta)))
    shape = fp.shape
    rows = np.stack([a.ravel() for a in (fp, n_neg, fn, n_pos, alpha, delta)], axis=1)
    unique, inverse = np.unique(rows, axis=0, return_inverse=True)
    values = np.array([scalar(int(r[0]), int(r[1]), int(r[2]), int(r[3]), float(r[4]), float(r[5])) for r in unique])
    return values[np.asarray(inverse).ravel()].reshape(shape)


# ---------------------------------------------------------------------------------------------
# Clopper-Pearson upper bounds on one side's error rate, in log space
# ---------------------------------------------------------------------------------------------


def log_clopper_pearson_upper(k, n: int, half: float):
    """``log u`` and ``log(1 - u)``, ``u`` the one-sided Clopper-Pearson upper bound on an error rate.

    ``u`` is the bound at level ``half`` from ``k`` errors among ``n`` (``u = 1`` at ``k = n``). The
    smaller of ``u`` and ``1 - u`` comes from the beta quantile of its own tail and the other from it, so
    that tiny levels keep their relative accuracy.

    Parameters
    ----------
    k : array_like of int
        Errors, ``0 <= k <= n`` (neither checked nor rounded here).
    n : int or array_like of int
        Rows tested (broadcast with ``k`` and ``half``).
    half : float or array_like
        One-sided level in (0, 1) (``alpha / 2`` for a split certificate at ``alpha``).

    Returns
    -------
    log_u, log_1mu : numpy.ndarray
        ``log u`` (0 at ``k = n``) and ``log(1 - u)`` (``-inf`` at ``k = n``).

    See Also
    --------
    epsaudit.bounds.clopper_pearson_upper : the bound itself, with its inputs checked.
    epsaudit.bounds.clopper_pearson_epsilon : the split certificate, computed from it.
    joint_epsilon : the joint certificate, whose ordering statistic is computed from it.

    Examples
    --------
    >>> import numpy as np
    >>> log_u, log_1mu = log_clopper_pearson_upper(0, 30, 0.05)
    >>> round(float(np.exp(log_u)), 6), round(float(np.exp(log_1mu)), 6)  # 1 - 0.05 ** (1 / 30), 0.05 ** (1 / 30)
    (0.095034, 0.904966)
    """
    k, n, half = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (k, n, half)))
    shape, k, n, half = k.shape, k.ravel(), n.ravel(), half.ravel()
    inside = k < n
    a, b = k + 1, np.where(inside, n - k, 1.0)
    log_u, log_1mu = np.zeros(k.size), np.full(k.size, -np.inf)
    with np.errstate(divide="ignore"):
        low = inside & (2 * k < n)  # u may be at most 1/2 (the bound exceeds k / n)
        u = special.betainccinv(a[low], b[low], half[low])
        log_u[low], log_1mu[low] = np.log(u), np.log1p(-u)  # accurate while u <= 1/2
        high = inside & ~low
        high[low] = u > 0.5
        if high.any():  # 1 - u from its own tail, and log u from it
            w = special.betaincinv(b[high], a[high], half[high])
            log_1mu[high], log_u[high] = np.log(w), np.log1p(-w)
    return log_u.reshape(shape), log_1mu.reshape(shape)


@lru_cache(maxsize=512)
def _side(n: int, half: float) -> tuple[np.ndarray, np.ndarray]:
    """``log_clopper_pearson_upper`` for every count 0 .. n of one side (cached per size and level)."""
    out = log_clopper_pearson_upper(np.arange(n + 1), n, half)
    for a in out:
        a.flags.writeable = False
    return out


@lru_cache(maxsize=512)
def _side_less(n: int, half: float, delta: float) -> np.ndarray:
    """``log(1 - u - delta)`` for every count 0 .. n of one side (NaN where negative; ``log(1 - u)`` at delta
    = 0), cached per size, level and delta."""
    l1u = _side(n, half)[1]
    if delta == 0:
        return l1u
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(np.exp(l1u) - delta)
    out.flags.writeable = False
    return out


@lru_cache(maxsize=512)
def _log_binomial_coefficients(n: int) -> np.ndarray:
    """``log C(n, k)`` for k = 0 .. n (cached per size)."""
    k = np.arange(n + 1, dtype=float)
    out = special.gammaln(n + 1.0) - special.gammaln(k + 1) - special.gammaln(n - k + 1)
    out.flags.writeable = False
    return out


def _z(log_p):
    """``Phi^-1(p)`` from ``log p``, accurate at both ends (``-inf`` at p = 0, ``inf`` at p = 1)."""
    log_p = np.asarray(log_p, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        low = special.ndtri_exp(np.minimum(log_p, 0.0))
        high = -special.ndtri_exp(np.log(-np.expm1(np.minimum(log_p, -1e-300))))
    return np.where(log_p < _LOG_HALF, low, np.where(log_p >= 0, np.inf, high))


# ---------------------------------------------------------------------------------------------
# The ordering statistic (fixed in advance: it depends on the counts and alpha, not on delta)
# ---------------------------------------------------------------------------------------------


def _statistic(kind: str, log_u, log_1mu, log_v, log_1mv, delta: float = 0.0):
    """``T`` from the Clopper-Pearson upper bounds ``u`` (FPR) and ``v`` (FNR) at ``alpha / 2``.

    (epsilon, delta)-DP: the split certificate at delta = 0 before its clamp,
    ``max(log((1 - v) / u), log((1 - u) / v))``; mu-GDP: ``Phi^-1(1 - v) - Phi^-1(u)``. ``-inf`` where
    neither term has evidence.
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        if kind == "dp" and delta > 0:  # the split certificate at delta (the ordering of the check at delta)
            t = np.maximum(np.log(np.exp(log_1mv) - delta) - log_u, np.log(np.exp(log_1mu) - delta) - log_v)
        elif kind == "dp":
            t = np.maximum(np.asarray(log_1mv) - log_u, np.asarray(log_1mu) - log_v)
        else:
            t = _z(log_1mv) - _z(log_u)
    return np.where(np.isnan(t), -np.inf, t)


def _dp_statistic(log_u: float, log_1mu: float, log_v: float, log_1mv: float, delta: float) -> float:
    """:func:`_statistic` for (epsilon, delta)-DP at one outcome, in scalar arithmetic."""
    terms = []
    for log_num, log_den in ((log_1mv, log_u), (log_1mu, log_v)):
        if delta > 0:
            num = math.exp(log_num) - delta
            if num < 0:  # numpy's NaN, which its maximum propagates
                return -math.inf
            log_num = math.log(num) if num > 0 else -math.inf
        terms.append(log_num - log_den)
    return max(terms)


def _split_dp(obs, delta: float) -> float:
    """The split certificate at ``delta`` before its clamp, from the observed bounds in log space."""
    lu, l1u, lv, l1v = obs
    terms = []
    for log_num, log_den in ((l1v, lu), (l1u, lv)):  # log((1 - v - delta) / u), log((1 - u - delta) / v)
        num = np.exp(log_num) - delta if delta > 0 else None
        if delta == 0:
            terms.append(log_num - log_den)
        elif num > 0:
            terms.append(np.log(num) - log_den)
    t = max(terms, default=-np.inf)
    return float(t) if np.isfinite(t) else -np.inf


# ---------------------------------------------------------------------------------------------
# The tail set of an outcome and its probability, in log space
# ---------------------------------------------------------------------------------------------


def _last(f, n: int, t: float) -> int:
    """Largest k in [0, n] with f(k) >= t for a non-increasing f; -1 if none."""
    if f(0) < t:
        return -1
    lo, hi = 0, n  # f(lo) >= t
    if f(hi) >= t:
        return hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if f(mid) >= t else (lo, mid)
    return lo


class _Tail:
    """The outcomes at least as extreme as the observed one, ``{(x, y) : y <= c(x)}``, and
    ``log P_{p,q}(T >= t_obs) = log sum_x Bin(x; n_neg, p) BinCDF(c(x); n_pos, q)``.

    It depends on the counts and ``alpha`` only (not on delta or the null's parameter).
    """

    def __init__(self, kind: str, fp: int, n_neg: int, fn: int, n_pos: int, alpha: float, order_delta: float = 0.0):
        self.kind, self.n_neg, self.n_pos, self.order_delta = kind, n_neg, n_pos, order_delta
        half = alpha / 2
        full = n_neg + n_pos <= _FULL
        if full:  # every count's bound (cached per size and level)
            (lu_all, l1u_all), (lv_all, l1v_all) = _side(n_neg, half), _side(n_pos, half)
            lu_o, l1u_o, lv_o, l1v_o = (float(v) for v in (lu_all[fp], l1u_all[fp], lv_all[fn], l1v_all[fn]))
            neg0, pos0 = [float(lu_all[0]), float(l1u_all[0])], [float(lv_all[0]), float(l1v_all[0])]
        else:
            lu_o, l1u_o = (float(v) for v in log_clopper_pearson_upper(fp, n_neg, half))
            lv_o, l1v_o = (float(v) for v in log_clopper_pearson_upper(fn, n_pos, half))
            neg0 = [float(v) for v in log_clopper_pearson_upper(0, n_neg, half)]
            pos0 = [float(v) for v in log_clopper_pearson_upper(0, n_pos, half)]
        self.obs = (lu_o, l1u_o, lv_o, l1v_o)
        self.t_obs = _dp_statistic(lu_o, l1u_o, lv_o, l1v_o, order_delta) if kind == "dp" else float(
            _statistic(kind, lu_o, l1u_o, lv_o, l1v_o, order_delta))
        self.K = 0
        if not np.isfinite(self.t_obs):
            return
        t = self.t_obs - _TIE * max(1.0, abs(self.t_obs))

        def t_x(x):  # T(x, 0)
            lu, l1u = (float(v) for v in log_clopper_pearson_upper(x, n_neg, half))
            return float(_statistic(kind, lu, l1u, *pos0, order_delta))

        def t_y(y):  # T(0, y)
            lv, l1v = (float(v) for v in log_clopper_pearson_upper(y, n_pos, half))
            return float(_statistic(kind, *neg0, lv, l1v, order_delta))

        if full and kind == "dp":
            c = _kernel().dp_staircase(t, lu_all, lv_all, _side_less(n_neg, half, order_delta),
                                       _side_less(n_pos, half, order_delta), fp, fn)
        elif full:
            K = max(int(np.count_nonzero(_statistic(kind, lu_all, l1u_all, *pos0, order_delta) >= t)) - 1, fp) + 1
            C = max(int(np.count_nonzero(_statistic(kind, *neg0, lv_all, l1v_all, order_delta) >= t)) - 1, fn, 0)
            c = self._staircase(kind, t, lu_all[:K], l1u_all[:K], lv_all[:C + 1], l1v_all[:C + 1], order_delta)
        else:
            # large tests: the tail's staircase from bisections; it runs from c(0) down to c(1) at x = 1
            # (the first row and column can reach far along the axes), so only the counts up to the
            # second row and column need their bounds
            K = max(_last(t_x, n_neg, t), fp) + 1
            C = max(_last(t_y, n_pos, t), fn, 0)
            inner_x = max(_last(lambda x: self._T(x, 1, half), n_neg, t), fp) + 1 if n_pos >= 1 else 1
            inner_y = max(_last(lambda y: self._T(1, y, half), n_pos, t), fn, 0) if n_neg >= 1 else 0
            inner_x, inner_y = max(min(inner_x, K), 1), min(inner_y, C)
            lu, l1u = log_clopper_pearson_upper(np.arange(inner_x), n_neg, half)
            lv, l1v = log_clopper_pearson_upper(np.arange(inner_y + 1), n_pos, half)
            c = np.zeros(K, dtype=np.intp)
            c[:inner_x] = self._staircase(kind, t, lu, l1u, lv, l1v, order_delta)
            c[0] = C
        if not (full and kind == "dp"):
            c = np.minimum(c, C)
            if fp < K:
                c[fp] = max(c[fp], fn)  # the observed outcome always belongs to its own tail
            c = np.maximum.accumulate(c[::-1])[::-1]  # a lower set: c non-increasing (only ever enlarged)
            c = c[:int(np.count_nonzero(c >= 0))]
        self.K = int(c.size)
        if self.K == 0:
            return
        self.c = c.astype(np.int64)
        self.C = int(self.c[0])
        # log binomial coefficients of every count of each side (the kernel reads those of the tail's counts)
        self.lcx, self.lcy = _log_binomial_coefficients(n_neg), _log_binomial_coefficients(n_pos)
        self.zero = self.K == 1 and self.C == 0  # only the zero-error outcome
        # binomial terms beyond this many standard deviations are bounded, not summed (relative to alpha)
        self.window_sd = float(np.sqrt(2 * (abs(np.log(alpha)) + 40)))
        self.args = (self.c, n_neg, n_pos, self.lcx, self.lcy, self.window_sd)  # the compiled kernel's view

    def _T(self, x: int, y: int, half: float) -> float:
        lu, l1u = log_clopper_pearson_upper(x, self.n_neg, half)
        lv, l1v = log_clopper_pearson_upper(y, self.n_pos, half)
        return float(_statistic(self.kind, lu, l1u, lv, l1v, self.order_delta))

    @staticmethod
    def _staircase(kind, t, lu, l1u, lv, l1v, delta=0.0):
        """c(x) = the largest y (of those given) with T(x, y) >= t, per x given (-1: none)."""
        if kind == "dp" and delta > 0:
            # log(1 - v_y - delta) >= t + log u_x  or  log v_y <= log(1 - u_x - delta) - t
            with np.errstate(invalid="ignore", divide="ignore"):
                first = np.searchsorted(-l1v, -np.log(delta + np.exp(t + lu)), side="right") - 1
                second = np.searchsorted(lv, np.log(np.exp(l1u) - delta) - t, side="right") - 1
            return np.maximum(first, second)
        if kind == "dp":
            # T(x, y) >= t  iff  log(1 - v_y) >= t + log u_x  or  log v_y <= log(1 - u_x) - t
            with np.errstate(invalid="ignore"):
                first = np.searchsorted(-l1v, -(t + lu), side="right") - 1
                second = np.searchsorted(lv, l1u - t, side="right") - 1
            return np.maximum(first, second)
        zlo = _z(l1v)  # Phi^-1(1 - v_y), falling in y
        return np.searchsorted(-zlo, -(t + _z(lu)), side="right") - 1



@lru_cache(maxsize=1 << 14)
def _tail(kind: str, fp: int, n_neg: int, fn: int, n_pos: int, alpha: float, order_delta: float = 0.0) -> _Tail:
    return _Tail(kind, fp, n_neg, fn, n_pos, alpha, order_delta)


# ---------------------------------------------------------------------------------------------
# The supremum of the tail along the boundary
# ---------------------------------------------------------------------------------------------



class _Boundary:
    """The tail's log-probability along the lower boundary of one null family (``kind``, ``delta``)."""

    def __init__(self, tail: _Tail, kind: str, delta: float):
        self.tail, self.kind, self.delta = tail, kind, float(delta)
        self.code = 0 if kind == "dp" else 1  # the compiled kernel's name for the null family

    def values(self, theta, s):
        """Log-tail at boundary positions ``s`` (``theta`` a number or an array like ``s``)."""
        s = np.asarray(s, dtype=float)
        theta = np.broadcast_to(np.asarray(theta, dtype=float), s.shape)
        return _kernel().at_thetas(self.code, np.ascontiguousarray(theta), self.delta, s, *self.tail.args)

    def maximum(self, theta: float, start: float | None = None, width: float = 1.0 / 64) -> tuple[float, float, float]:
        """A point of the boundary near the tail's maximum, the log-tail there (a lower limit on the
        supremum) and the width of the last look around it.

        One evaluation of a grid (the corner included) and, with a warm ``start``, a stencil around it;
        then zooms (17 points, width / 8 each) and parabolic steps on the smooth part.
        """
        grid = _GRID_POINTS
        if start is not None:
            grid = np.concatenate([grid, np.clip(start + width * _STENCIL, -1.0, 1.0)])
        v = self.values(theta, grid)
        j = int(np.argmax(v))
        s_best, v_best = float(grid[j]), float(v[j])
        h = width if j >= _GRID else 2.0 / (_GRID - 1)
        while h > 1.0 / 1024:  # zoom until the look is narrow enough for parabolic steps
            pts = np.clip(s_best + (h / 4) * _STENCIL, -1.0, 1.0)
            v = self.values(theta, pts)
            j = int(np.argmax(v))
            moved = v[j] > v_best
            if moved:
                s_best, v_best = float(pts[j]), float(v[j])
            if not moved or j not in (0, _STENCIL.size - 1) or pts[j] in (-1.0, 1.0):
                h /= 4
        for _ in range(3):  # parabolic steps on the smooth part (the corner, a kink, stays a candidate)
            d = h / 8
            pts = np.clip(np.array([s_best - d, s_best + d]), -1.0, 1.0)
            lo, hi = self.values(theta, pts)
            curv = lo + hi - 2 * v_best
            if not (curv < 0 and np.isfinite(curv)):
                break
            cand = float(np.clip(s_best + d * (lo - hi) / (2 * curv), s_best - 2 * d, s_best + 2 * d))
            (vc,) = self.values(theta, np.array([min(max(cand, -1.0), 1.0)]))
            moved = abs(cand - s_best)
            for sv, vv in ((pts[0], lo), (pts[1], hi), (cand, vc)):
                if vv > v_best:
                    s_best, v_best = float(sv), float(vv)
            h = max(min(h / 8, 16 * moved), 1e-12)
            if moved < 1e-7:
                break
        return s_best, v_best, h

    def _search(self, theta: float, hint: float | None, log_alpha: float, decide: bool, budgets):
        return _kernel().search(self.code, float(theta), self.delta, _GRID_POINTS, np.nan if hint is None else float(hint),
                                float(log_alpha), decide,
                                min(budgets), max(budgets), _SUP_RTOL, _SPLIT, _MAX_ROUNDS, *self.tail.args)

    def sup_upper(self, theta: float, hint: float | None = None, max_cells: int = _MAX_CELLS) -> float:
        """A proven upper limit on log of the supremum of the tail along the boundary (within ``_SUP_RTOL``).

        Branch and bound: both coordinates fall along the boundary (FPR rises, FNR falls), so on a cell
        of positions the tail is at most its value at (FPR at its left end, FNR at its right end); every
        open cell is cut in ``_SPLIT``, until no cell's limit exceeds the best value by the tolerance or
        more than ``max_cells`` are open (then the cells' limits, valid and a little looser).
        """
        return float(self._search(theta, hint, 0.0, False, (max_cells,))[1])

    def decide(self, theta: float, hint: float | None, log_alpha: float,
               budgets=(_MAX_CELLS,)) -> tuple[bool, float, float]:
        """Whether the supremum of the tail is proven at most ``log_alpha``; the largest value found and
        its position.

        The branch-and-bound of :meth:`sup_upper` for every budget at once (a smaller budget's run is
        the larger one's until it stops), which also closes a cell whose limit is at most ``log_alpha``
        and cuts each open cell to fit its limit's excess: yes wherever ``sup_upper`` proves the level
        for a budget of ``budgets``, and no as soon as the best value found plus the tolerance exceeds
        ``log_alpha``.
        """
        proven, _, s_best, v_best = self._search(theta, hint, log_alpha, True, budgets)
        return bool(proven), float(s_best), float(v_best)

    def proves(self, theta: float, hint: float | None, log_alpha: float, budgets=(_MAX_CELLS,)) -> bool:
        """:meth:`decide`'s answer alone."""
        return self.decide(theta, hint, log_alpha, budgets)[0]


# ---------------------------------------------------------------------------------------------
# The certificate: the largest parameter whose null region the exact test rejects
# ---------------------------------------------------------------------------------------------


def _upper_bracket(kind: str, delta: float, n_total: int, log_alpha: float) -> float:
    """Parameter at which the zero-error outcome alone has probability alpha at the corner.

    Every tail contains the zero-error outcome, so no certificate exceeds it; with zero errors and
    equal sizes it is the certificate (the tail's supremum is at the corner).
    """
    log_s = log_alpha / n_total  # (1 - corner) ** n_total = alpha
    if kind == "dp":
        s, one_minus_s = np.exp(log_s), -np.expm1(log_s)
        ratio = (s - delta) / one_minus_s  # (1 - delta) / (1 - s) - 1
        return float(np.log(ratio)) if ratio > 1 else 0.0
    return float(max(2 * special.ndtri_exp(log_s), 0.0))


def _estimated_root(bnd: "_Boundary", log_alpha: float, theta: float, lo: float, hi: float, s=None):
    """Root in theta of the estimated log p-value ``max_s log P(theta, s) - log alpha``, by Newton steps.

    Each step is one evaluation: a stencil in the boundary position ``s`` around the current maximum
    (a parabola: the new maximum and its value; the corner, a kink, by comparison) and a step in
    theta at the maximum (the envelope theorem: the derivative of the maximum is the partial
    derivative there). Returns ``(settled, theta, s)``: not settled when the steps run out. Compiled
    (:mod:`epsaudit.bounds._joint_kernel`).
    """
    settled, theta, s = _kernel().estimated_root(bnd.code, float(log_alpha), float(theta), float(lo), float(hi),
                                                 np.nan if s is None else float(s), _GRID_POINTS, _NEWTON, bnd.delta,
                                                 *bnd.tail.args)
    return settled, theta, s


def _certify(kind: str, fp: int, n_neg: int, fn: int, n_pos: int, alpha: float, delta: float) -> float:
    """The certificate: ``min(L_delta, max(L_0, split))`` for (epsilon, delta)-DP with delta > 0 (see the
    module's notes), else the exact test's ``sup {theta : proven p-value(theta) <= alpha}``."""
    if (n_pos, fn) < (n_neg, fp):  # relabelling the identities changes nothing: one canonical order
        fp, n_neg, fn, n_pos = fn, n_pos, fp, n_neg
    value = _certify_tail(kind, fp, n_neg, fn, n_pos, alpha, delta, 0.0)
    if kind != "dp" or delta == 0.0:
        return value
    tail = _tail(kind, fp, n_neg, fn, n_pos, alpha, 0.0)
    check = _tail(kind, fp, n_neg, fn, n_pos, alpha, delta)
    if check.K == tail.K and (tail.K == 0 or np.array_equal(check.c, tail.c)):
        return value  # the same tail either way: L_delta is this value (and at least the split bound)
    target = max(value, _split_dp(tail.obs, delta), 0.0)
    if target == 0.0:
        return 0.0
    if (target == value and 0 < check.K <= tail.K  # (K = 0: no evidence at delta, so L_delta = 0)
            and bool(np.all(check.c <= tail.c[:check.K]))):
        # the tail ordered at delta lies inside this one: its p-value is at most this one's, which the
        # value's proven check put at most alpha, so that test rejects N(value, delta) too
        return value
    # the exact test ordered at delta: does it reject N(target, delta)? Then min(L_delta, target) = target
    if check.K > 0:
        bnd = _Boundary(check, kind, delta)
        if bnd.proves(target, bnd.maximum(target)[0], float(np.log(alpha))):
            return float(target)
    return float(min(target, _certify_tail(kind, fp, n_neg, fn, n_pos, alpha, delta, delta)))


def _certify_tail(kind: str, fp: int, n_neg: int, fn: int, n_pos: int, alpha: float, delta: float,
                  order_delta: float) -> float:
    """sup {theta : proven p-value(theta) <= alpha} of the exact test ordered at ``order_delta``."""
    tail = _tail(kind, fp, n_neg, fn, n_pos, alpha, order_delta)
    if tail.K == 0:  # every outcome is at least as extreme: no evidence
        return 0.0
    log_alpha = float(np.log(alpha))
    hi = _upper_bracket(kind, delta, n_neg + n_pos, log_alpha)
    if hi <= 0.0:
        return 0.0
    if tail.zero and n_neg == n_pos:
        # the tail (1 - p)^n (1 - q)^n is largest at the corner along both segments: closed form
        return hi
    bnd = _Boundary(tail, kind, delta)
    guess = _split_dp(tail.obs, delta) if kind == "dp" else tail.t_obs
    guess = min(max(guess, 0.0), hi)
    theta, lo, top, start, found, decided = guess, 0.0, hi * (1 + 1e-12) + 1e-12, None, None, None
    step = 2 * _SUP_RTOL / max(abs(log_alpha), 1.0)
    whole = _LOOK if kind == "gdp" or tail.K + tail.C <= _LOOK_COUNTS else _LOOK[:0]
    for _ in range(4):
        settled, theta_est, s_hint = _estimated_root(bnd, log_alpha, theta, lo, top, start)
        # a look around the maximum found (and along the whole boundary): a higher maximum?
        look = np.concatenate([whole, np.clip(s_hint + _NEAR, -1.0, 1.0)])
        v = bnd.values(theta_est, look)
        j = int(np.argmax(v))
        if v[j] - log_alpha > 1e-10:  # yes: the root lies below, start again from there
            found, theta, top, start = (theta_est, s_hint), theta_est, theta_est, float(look[j])
            continue
        if not settled or v[j] - log_alpha < -1e-3 * max(1.0, abs(log_alpha)):
            # the steps did not settle, or stopped well short (their bracket closed where a misfitted
            # parabola put the maximum above alpha): the root lies above, start again from there
            found, theta, lo, start = None, theta_est, theta_est, float(look[j])
            continue
        found = (theta_est, s_hint)
        # the estimate sits within rounding of the supremum, so its root is (to rounding) the exact
        # one: step down by the proven limit's tolerance (the log p-value rises at least |log alpha|
        # per unit here) and verify with the proven limit (a flat top: finer cells)
        candidate = max(0.0, theta_est - step - 1e-7 * max(1.0, theta_est))
        proven_, s_best, v_best = bnd.decide(candidate, s_hint, log_alpha, (_MAX_CELLS, 8 * _MAX_CELLS))
        decided = candidate
        if proven_:
            return float(candidate)
        if v_best - log_alpha <= 1e-10:  # no higher maximum: the proven limit is looser than the step
            break
        # a maximum elsewhere on the boundary, above alpha: the root lies below, start again from there
        theta, top, start = candidate, candidate, s_best
    # the estimate missed the maximum, or the proven limit is looser than its step: a root search on
    # the proven limit itself (regula falsi, Illinois-weighted, with bisection as its guard)
    def proven(theta: float) -> float:
        return bnd.sup_upper(theta, bnd.maximum(theta)[0], max_cells=4 * _MAX_CELLS) - log_alpha

    hi_t, g_hi = hi * (1 + 1e-12) + 1e-12, None
    lo_t = 0.0
    if found is not None:
        candidate = max(0.0, found[0] - step - 1e-7 * max(1.0, found[0]))
        if candidate != decided and bnd.decide(candidate, found[1], log_alpha, (_MAX_CELLS, 8 * _MAX_CELLS))[0]:
            return float(candidate)  # the estimates crept along the maximum's flank, but the last one holds
        hi_t, g_hi = candidate, proven(candidate)
        if g_hi <= 0:
            return float(candidate)
        lo_t = max(0.0, candidate - 0.05)
    g_lo = proven(lo_t)
    if g_lo > 0 and lo_t > 0:
        hi_t, g_hi, lo_t = lo_t, g_lo, 0.0
        g_lo = proven(0.0)
    if g_lo > 0:
        return 0.0
    if g_hi is None:
        g_hi = proven(hi_t)
        if g_hi <= 0:
            return float(hi_t)
    side = 0
    for step_ in range(100):
        if hi_t - lo_t <= 1e-8 * max(1.0, lo_t):
            break
        mid = (lo_t * g_hi - hi_t * g_lo) / (g_hi - g_lo)
        if step_ % 3 == 2 or not lo_t < mid < hi_t:
            mid = 0.5 * (lo_t + hi_t)
        g_mid = proven(mid)
        if g_mid <= 0:
            lo_t, g_lo = mid, g_mid
            if side == -1:
                g_hi *= 0.5
            side = -1
        else:
            hi_t, g_hi = mid, g_mid
            if side == 1:
                g_lo *= 0.5
            side = 1
    return float(lo_t)


@lru_cache(maxsize=1 << 16)
def _joint_dp(fp: int, n_neg: int, fn: int, n_pos: int, alpha: float, delta: float) -> float:
    return _certify("dp", fp, n_neg, fn, n_pos, alpha, delta)


@lru_cache(maxsize=1 << 16)
def _joint_gdp(fp: int, n_neg: int, fn: int, n_pos: int, alpha: float, _delta: float) -> float:
    return _certify("gdp", fp, n_neg, fn, n_pos, alpha, 0.0)


def _log_pvalue(kind, fp, n_neg, fn, n_pos, theta, alpha, delta) -> float:
    if (n_pos, fn) < (n_neg, fp):
        fp, n_neg, fn, n_pos = fn, n_pos, fp, n_neg
    tail = _tail(kind, fp, n_neg, fn, n_pos, alpha)
    if tail.K == 0:
        return 0.0
    bnd = _Boundary(tail, kind, delta)
    s = bnd.maximum(theta)[0]
    return min(0.0, bnd.sup_upper(theta, s))


# ---------------------------------------------------------------------------------------------
# Public functions
# ---------------------------------------------------------------------------------------------


def joint_epsilon(fp, n_neg, fn, n_pos, alpha, delta: float = 0.0):
    """Exact joint lower confidence bound on epsilon from the test counts of one fixed test.

    The largest epsilon whose (epsilon, delta)-DP null region has, at every point, probability at
    most ``alpha`` of an outcome at least as extreme as the observed one (ordered by the split
    Clopper-Pearson certificate at level ``alpha`` and delta = 0, whatever ``delta``; ties count as
    at least as extreme); for delta > 0 capped by the same test ordered at ``delta`` so that it is
    never below the split bound (the module's notes). The supremum over the region is taken on its
    lower boundary by a branch-and-bound with a proven upper limit, in log space. At least
    :func:`epsaudit.bounds.clopper_pearson_epsilon` on the same counts; non-increasing in each error
    count, and in ``delta`` up to about 0.01; not always in the confidence ``1 - alpha``, whose level
    shapes the ordering (the module's notes); symmetric under swapping ``(fp, n_neg)`` with ``(fn, n_pos)``.

    Parameters
    ----------
    fp : array_like of int
        False positives: rows of identity B (the negatives) that the test calls A.
    n_neg : array_like of int, >= 1
        Negatives tested (rows of B).
    fn : array_like of int
        False negatives: rows of A (the positives) that the test calls B.
    n_pos : array_like of int, >= 1
        Positives tested (rows of A). Unequal sizes are allowed.
    alpha : float or array_like in (0, 1)
        Error level of this certificate (a family of K certificates: ``(1 - confidence) / K``).
    delta : float or array_like in [0, 1), default=0.0
        The delta of (epsilon, delta)-DP.

    Returns
    -------
    numpy.ndarray or float
        Certified epsilon >= 0 (natural-log units), finite: a Python float for scalar inputs, else an
        array of the broadcast inputs' shape.

    Raises
    ------
    ValueError
        If a count is outside ``[0, n]``, a size is below 1 or not an integer, ``alpha`` is outside
        (0, 1) or below 1e-300 (the smallest level computed in log space), ``delta`` outside [0, 1),
        or an input is not finite. Fractional error counts are rounded up.

    See Also
    --------
    epsaudit.bounds.clopper_pearson_epsilon : the paper's split bound on the same counts, which this one is
        never below.
    epsaudit.bounds.certified_epsilon : chooses between the two (``bound=``).
    epsaudit.bounds.sequential_epsilon : the anytime-valid bound for rows that arrive one at a time.
    joint_mu : the same test against the mu-GDP null region.
    joint_pvalue : the p-value it inverts.
    joint_rejection_region : every outcome at which it certifies a given epsilon.
    epsaudit.audits.reserved_test_certificate : the reserved-test route, which certifies with it (the default
        ``bound="joint"``).
    epsaudit.audits.tradeoff_certificate : the trade-off route, which certifies a band's points with it.

    Notes
    -----
    Cost: a few Newton steps on an estimate of the p-value and one proven check, each a vectorised
    log-space sum over the counts that can still be at least as extreme (windowed around the
    binomials' bulk for large tests); zero errors with equal sizes are a closed form. Results and the
    tails' structure are cached per distinct input.

    Examples
    --------
    Zero errors at 100 + 100 rows, 95%: ``logit(0.05 ** (1 / 200))``, where the split
    Clopper-Pearson bound gives 3.281.

    >>> round(float(joint_epsilon(0, 100, 0, 100, 0.05)), 3)
    4.194
    >>> import numpy as np
    >>> round(float(np.log(0.05 ** (1 / 200) / (1 - 0.05 ** (1 / 200)))), 3)
    4.194
    >>> joint_epsilon([0, 1, 5], 100, [0, 1, 5], 100, 0.05).round(3)
    array([4.194, 3.242, 2.216])
    >>> float(joint_epsilon(50, 100, 50, 100, 0.05))  # no evidence
    0.0

    Never rising with delta, and computed in log space at tiny levels:

    >>> [round(joint_epsilon(2, 30, 3, 30, 0.05, d), 4) for d in (0.01, 0.015, 0.02)]
    [1.509, 1.5028, 1.4966]
    >>> round(joint_epsilon(0, 100, 0, 100, 1e-100), 4), round(joint_epsilon(5, 1000, 5, 1000, 1e-300), 4)
    (0.0, 0.7588)
    """
    return _apply(_joint_dp, fp, n_neg, fn, n_pos, alpha, delta)


def joint_mu(fp, n_neg, fn, n_pos, alpha):
    """Exact joint lower confidence bound on the mu of mu-Gaussian DP from one test's counts.

    As :func:`joint_epsilon` with the null region of mu-GDP, ``FNR >= Phi(Phi^-1(1 - FPR) - mu)``
    (Dong, Roth & Su 2022; its mirror is the same set), the split statistic
    ``max(0, Phi^-1(TPR_lo) - Phi^-1(FPR_hi))`` with Clopper-Pearson bounds at ``alpha / 2``, and
    the corner ``FPR = FNR = Phi(-mu / 2)``.

    Parameters
    ----------
    fp, n_neg, fn, n_pos : array_like of int
        False positives among ``n_neg`` negatives, false negatives among ``n_pos`` positives.
    alpha : float or array_like in (0, 1)
        Error level of this certificate.

    Returns
    -------
    numpy.ndarray or float
        Certified mu >= 0, finite.

    Raises
    ------
    ValueError
        As :func:`joint_epsilon`.

    See Also
    --------
    joint_epsilon : the same test against the (epsilon, delta)-DP null region.
    epsaudit.bounds.tradeoff_mu : the mu one point of the trade-off curve rules out (from confidence limits).
    epsaudit.bounds.gaussian_tradeoff : the mu-GDP trade-off curve that bounds the null region.

    Examples
    --------
    Zero errors at 100 + 100 rows, 95%: ``2 Phi^-1(0.05 ** (1 / 200))``.

    >>> round(float(joint_mu(0, 100, 0, 100, 0.05)), 3)
    4.347
    >>> from scipy.stats import norm
    >>> round(float(2 * norm.ppf(0.05 ** (1 / 200))), 3)
    4.347
    """
    return _apply(_joint_gdp, fp, n_neg, fn, n_pos, alpha, 0.0)


def joint_pvalue(fp, n_neg, fn, n_pos, epsilon: float, alpha: float, delta: float = 0.0) -> float:
    """Proven upper limit on the p-value of the (epsilon, delta)-DP null region for one outcome.

    ``sup over N(epsilon, delta) of P(T >= t_obs)`` with ``T`` the split Clopper-Pearson certificate
    at level ``alpha`` and delta = 0 (the ordering of :func:`joint_epsilon`, the same at every delta,
    so the p-value is non-decreasing in delta and in epsilon), computed in log space, within a
    relative ``1e-4`` above the
    exact value. :func:`joint_epsilon` is the largest epsilon at which this is at most ``alpha``.

    Parameters
    ----------
    fp, n_neg, fn, n_pos : int
        Test counts (false positives among negatives, false negatives among positives).
    epsilon : float, >= 0
        The null region's epsilon.
    alpha : float in (0, 1)
        The level that fixes the ordering statistic.
    delta : float in [0, 1), default=0.0

    Returns
    -------
    float
        In [0, 1].

    Raises
    ------
    ValueError
        As :func:`joint_epsilon`, or if ``epsilon`` is negative.

    See Also
    --------
    joint_epsilon : the largest epsilon at which it is at most ``alpha``.
    joint_rejection_region : the outcomes at which it is at most ``alpha``.

    Examples
    --------
    Zero errors at 10 + 10 rows: the corner probability ``sigmoid(1) ** 20``.

    >>> round(joint_pvalue(0, 10, 0, 10, 1.0, 0.05), 4)
    0.0019
    >>> round(float(1 / (1 + np.exp(-1.0))) ** 20, 4)
    0.0019
    """
    if not (np.isfinite(epsilon) and epsilon >= 0):
        raise ValueError(f"epsilon must be a finite number >= 0, got {epsilon}")
    fp, n_neg, fn, n_pos, alpha, delta = (v.item() for v in _check(fp, n_neg, fn, n_pos, alpha, delta))
    return float(np.exp(_log_pvalue("dp", int(fp), int(n_neg), int(fn), int(n_pos), float(epsilon), float(alpha),
                                    float(delta))))


def joint_rejection_region(n_neg: int, n_pos: int, epsilon: float, alpha: float) -> np.ndarray:
    """Every outcome at which the fixed-size joint test certifies ``epsilon`` (delta = 0), as one table.

    The test rejects ``N(epsilon, 0)`` at the outcomes at least as extreme as a cut in its ordering
    (the split Clopper-Pearson certificate at delta = 0, before its clamp); the cut is found by
    bisection on :func:`joint_pvalue`, which rises along the ordering. A simulation that re-computes
    the certificate after every row (the peeking of an auditor who renders until certified) reads the
    table instead of calling :func:`joint_epsilon` per row.

    Parameters
    ----------
    n_neg, n_pos : int
        Test rows of identity B (negatives) and of A (positives), >= 1.
    epsilon : float
        The epsilon to certify, nats, >= 0.
    alpha : float
        Error level of the certificate, in (0, 1).

    Returns
    -------
    numpy.ndarray of bool, shape (n_neg + 1, n_pos + 1)
        Entry ``[fp, fn]``: whether ``joint_epsilon(fp, n_neg, fn, n_pos, alpha) >= epsilon`` (up to the
        p-value's documented accuracy at the cut).

    Raises
    ------
    ValueError
        As :func:`joint_pvalue`.

    See Also
    --------
    joint_epsilon : the certificate at one outcome.
    joint_pvalue : the p-value the cut is found with.

    Examples
    --------
    >>> region = joint_rejection_region(10, 10, 1.0, 0.05)
    >>> region.shape, bool(region[0, 0]), bool(region[5, 5])
    ((11, 11), True, False)
    """
    from .binomial import clopper_pearson_lower, clopper_pearson_upper

    x, y = np.meshgrid(np.arange(n_neg + 1), np.arange(n_pos + 1), indexing="ij")
    lo, up = clopper_pearson_lower(n_pos - y, n_pos, alpha / 2), clopper_pearson_upper(x, n_neg, alpha / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(lo > 0, np.log(lo) - np.log(up), -np.inf)
        b = np.where(1 - up > 0, np.log1p(-up) - np.log1p(-lo), -np.inf)
    t = np.nan_to_num(np.maximum(a, b), nan=-np.inf)
    order = np.unique(t[np.isfinite(t)])[::-1]  # most extreme first; the p-value rises along it
    lo_cut, hi_cut = -1, len(order)  # order[: lo_cut + 1] rejected, order[hi_cut:] not
    while hi_cut - lo_cut > 1:
        mid = (lo_cut + hi_cut) // 2
        i, j = np.argwhere(t == order[mid])[0]
        if joint_pvalue(int(i), n_neg, int(j), n_pos, epsilon, alpha) <= alpha:
            lo_cut = mid
        else:
            hi_cut = mid
    return t >= order[lo_cut] if lo_cut >= 0 else np.zeros_like(t, dtype=bool)
