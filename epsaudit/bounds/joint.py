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
  certificate at level ``alpha`` before its clamp at 0 (non-increasing in both counts); ties count
  as at least as extreme;
* the p-value of ``N(eps)`` is ``sup over (p, q) in N(eps) of P_{p,q}(T >= t_obs)``;
* the certificate is ``sup {eps : p-value(eps) <= alpha}``, a lower confidence bound at level
  ``1 - alpha`` (``N(eps)`` grows with eps, so the p-value is non-decreasing in eps).

``{T >= t_obs}`` is a lower set of counts, so its probability falls as ``p`` or ``q`` grows: the
supremum lies on the lower boundary of ``N(eps)``, ``q(p) = max(1 - delta - e^eps p,
(1 - delta - p) e^-eps)``, two segments meeting at the randomized-response corner
``p = q = (1 - delta) / (1 + e^eps)``. Along it the tail is ``sum_x Bin(x; n_neg, p) *
BinCDF(c(x); n_pos, q(p))`` with ``c(x)`` the largest ``FN`` such that ``T(x, FN) >= t_obs``. Both
coordinates of the boundary fall as ``p`` rises, so on a cell ``[p_i, p_j]`` the tail is at most its
value at ``(p_i, q(p_j))``: a branch-and-bound over cells gives the supremum with a *proven* upper
limit, and the certificate uses that limit (it is valid, never optimistic, and within a relative
``1e-4`` of the exact p-value).

Because the split bound rejects ``N(eps)`` only where its own size is at most ``alpha``, the joint
certificate is at least the split one at every outcome. With zero errors and ``n`` rows per side it
is ``logit(alpha^(1 / 2n))`` (delta = 0): the corner mechanism (randomized response) makes zero
errors with exactly that probability, so no valid level-alpha procedure certifies more from these
counts.

The same construction for mu-Gaussian DP (Dong, Roth & Su 2022) uses the null region
``q >= Phi(Phi^-1(1 - p) - mu)`` (the Gaussian trade-off curve is symmetric, so its mirror is the
same set), the split statistic ``Phi^-1(TPR_lo) - Phi^-1(FPR_hi)`` and the corner ``Phi(-mu / 2)``.

Definitions: the book's methods chapter, "The exact joint certificate".
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy import special, stats

__all__ = ["joint_epsilon", "joint_mu", "joint_pvalue"]

# Relative slack on the observed statistic so that floating-point ties count as at least as extreme.
_TIE = 1e-9
# Relative tolerance of the branch-and-bound on the supremum (the certificate uses the upper limit).
_SUP_RTOL = 1e-4
# Bisection over epsilon stops when the bracket is this narrow (the certificate is its lower end).
_EPS_TOL = 1e-7
_GRID = 9  # initial points per boundary segment
_SPLIT = 8  # sub-cells per refined cell
_MAX_ROUNDS = 60
_ZOOMS = 3  # local zooms of the supremum's estimate around its best grid point
_MAX_CELLS = 512  # open cells at which refinement stops (the limit is still proven, a little looser)
_WINDOW_SD = 8.0  # binomial terms beyond this many standard deviations are bounded, not summed
_WINDOW_PAD = 8
_SMALL = 512  # tests with fewer tail counts than this sum every term (no windows)
_CHUNK = 16  # boundary points evaluated together (sorted by p, sharing one window)


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
    if np.any(~((delta >= 0) & (delta < 1))):
        raise ValueError(f"delta must be in [0, 1), got {delta}")
    # Fractional counts (DP-Sniper's tie-breaking) are rounded against the certificate: errors up.
    return np.ceil(fp - 1e-9), n_neg, np.ceil(fn - 1e-9), n_pos, alpha, delta


def _apply(scalar, fp, n_neg, fn, n_pos, alpha, delta):
    """Evaluate a cached scalar certificate once per distinct input row."""
    fp, n_neg, fn, n_pos, alpha, delta = _check(fp, n_neg, fn, n_pos, alpha, delta)
    shape = fp.shape
    rows = np.stack([a.ravel() for a in (fp, n_neg, fn, n_pos, alpha, delta)], axis=1)
    unique, inverse = np.unique(rows, axis=0, return_inverse=True)
    values = np.array([scalar(int(r[0]), int(r[1]), int(r[2]), int(r[3]), float(r[4]), float(r[5])) for r in unique])
    out = values[np.asarray(inverse).ravel()].reshape(shape)
    return out[()] if out.ndim == 0 else out


# ---------------------------------------------------------------------------------------------
# The two null families: (epsilon, delta)-DP and mu-GDP
# ---------------------------------------------------------------------------------------------


class _Family:
    """A null family: its split statistic, its boundary q(p) and a bracket for the certificate."""

    def __init__(self, kind: str, delta: float = 0.0):
        self.kind, self.delta = kind, delta

    def statistic(self, lower_tpr, upper_fpr):
        """Split certificate before its clamp at 0, from a TPR lower and an FPR upper bound (broadcast).

        Unclamped, it still orders the outcomes that the split bound certifies as 0 (small tests
        with few errors), so the joint test can certify where the split one cannot; ``-inf`` where
        neither term has evidence.
        """
        lo, up, d = np.asarray(lower_tpr, float), np.asarray(upper_fpr, float), self.delta
        with np.errstate(divide="ignore", invalid="ignore"):
            if self.kind == "dp":
                a = np.where(lo - d > 0, np.log(lo - d) - np.log(up), -np.inf)
                b = np.where(1 - up - d > 0, np.log(1 - up - d) - np.log1p(-lo), -np.inf)
                t = np.maximum(a, b)
            else:
                t = stats.norm.ppf(lo) - stats.norm.ppf(up)
        return np.where(np.isnan(t), -np.inf, t)

    def required_lower(self, t, upper_fpr):
        """Smallest TPR lower bound with statistic >= t, given the FPR upper bound (per FP count)."""
        up, d = np.asarray(upper_fpr, float), self.delta
        if not np.isfinite(t):
            return np.zeros_like(up)  # t = -inf: every outcome qualifies
        if self.kind == "dp":
            first = d + np.exp(t) * up
            second = np.where(1 - up - d > 0, 1 - (1 - up - d) * np.exp(-t), np.inf)
            return np.minimum(first, second)
        return stats.norm.cdf(t + stats.norm.ppf(up))

    def corner(self, theta):
        if self.kind == "dp":
            return (1 - self.delta) / (1 + np.exp(theta))
        return float(stats.norm.cdf(-theta / 2))

    def boundary(self, p, theta):
        """Lower boundary q(p) of the null region at parameter theta (epsilon or mu)."""
        if self.kind == "dp":
            d = self.delta
            q = np.maximum(1 - d - np.exp(theta) * p, (1 - d - p) * np.exp(-theta))
            return np.clip(q, 0.0, 1.0)
        return stats.norm.cdf(stats.norm.isf(p) - theta)

    def grid(self, theta):
        """Initial points on the boundary (FPR values, sorted): both segments, the corner included."""
        pc = self.corner(theta)
        if self.kind == "dp":
            return np.unique(np.concatenate([np.linspace(0.0, pc, _GRID), np.linspace(pc, 1.0 - self.delta, _GRID)]))
        # mu-GDP: the curve is steep near its ends, so space the points evenly in z = Phi^-1(1 - p)
        z = np.linspace(-9.0, 9.0 + theta, 2 * _GRID)
        return np.unique(np.concatenate([[0.0, pc, 1.0], stats.norm.sf(z)]))

    def upper_bracket(self, n_total, alpha):
        """Parameter at which the zero-error outcome alone has corner probability alpha.

        Every outcome's tail contains the zero-error outcome, so no certificate exceeds it.
        """
        s = alpha ** (1.0 / n_total)  # (1 - corner) ** n_total = alpha
        if self.kind == "dp":
            ratio = (1 - self.delta) / (1 - s) - 1
            return float(np.log(ratio)) if ratio > 1 else 0.0
        return float(2 * stats.norm.ppf(s))


# ---------------------------------------------------------------------------------------------
# The tail along the boundary and its supremum
# ---------------------------------------------------------------------------------------------


class _Tail:
    """P_{p,q}(T >= t_obs) = sum_x Bin(x; n_neg, p) BinCDF(c(x); n_pos, q) for the observed outcome."""

    def __init__(self, family: _Family, fp: int, n_neg: int, fn: int, n_pos: int, alpha: float):
        self.n_neg, self.n_pos = n_neg, n_pos
        x = np.arange(n_neg + 1, dtype=float)
        y = np.arange(n_pos + 1, dtype=float)
        half = alpha / 2
        upper_fpr = np.where(x < n_neg, special.betaincinv(x + 1, np.maximum(n_neg - x, 1), 1 - half), 1.0)
        lower_tpr = np.where(y < n_pos, special.betaincinv(np.maximum(n_pos - y, 1), y + 1, half), 0.0)
        self.t_obs = float(family.statistic(lower_tpr[fn], upper_fpr[fp]))
        t = self.t_obs - _TIE * max(1.0, abs(self.t_obs)) if np.isfinite(self.t_obs) else -np.inf
        need = family.required_lower(t, upper_fpr)
        # lower_tpr decreases in y: c(x) = (number of y with lower_tpr >= need(x)) - 1.
        c = np.searchsorted(-lower_tpr, -need, side="right") - 1
        c[fp] = max(c[fp], fn)  # the observed outcome always belongs to its own tail
        c = np.maximum.accumulate(c[::-1])[::-1]  # a lower set: c non-increasing (only ever enlarged)
        keep = c >= 0
        self.x = x[keep]
        self.c = np.minimum(c[keep], n_pos).astype(int)
        self.y = np.arange(int(self.c.max()) + 1, dtype=float) if keep.any() else np.zeros(0)
        # log binomial coefficients, fixed per outcome; only the log-probabilities change with (p, q)
        self.log_comb_x = special.gammaln(n_neg + 1) - special.gammaln(self.x + 1) - special.gammaln(n_neg - self.x + 1)
        self.log_comb_y = special.gammaln(n_pos + 1) - special.gammaln(self.y + 1) - special.gammaln(n_pos - self.y + 1)

    @staticmethod
    def _window(n: int, prob: np.ndarray, top: int) -> tuple[int, int]:
        """Counts [lo, hi] holding all but a negligible, separately bounded, part of Bin(n, prob)."""
        mean, sd = n * prob, np.sqrt(n * prob * (1 - prob))
        lo = int(np.floor(np.min(mean - _WINDOW_SD * sd))) - _WINDOW_PAD
        hi = int(np.ceil(np.max(mean + _WINDOW_SD * sd))) + _WINDOW_PAD
        return max(lo, 0), min(hi, top)

    @staticmethod
    def _pmf(log_comb, k, n, p):
        # log p and log(1 - p) per point (p: column); -1e300 stands for log 0, so that 0 * log 0 = 0
        with np.errstate(divide="ignore"):
            log_p = np.where(p > 0, np.log(p), -1e300)
            log_q = np.where(p < 1, np.log1p(-p), -1e300)
        return np.exp(log_comb[None, :] + k[None, :] * log_p + (n - k[None, :]) * log_q)

    def __call__(self, p, q):
        """Lower and upper limits of the tail probability at points (p, q) (1-D arrays).

        Terms outside a window of each binomial (``_WINDOW_SD`` standard deviations) are left out
        of the lower limit and bounded by their exact binomial mass in the upper one.
        """
        p, q = np.asarray(p, float), np.asarray(q, float)
        lower, upper = np.zeros(p.shape), np.zeros(p.shape)
        if self.x.size == 0:
            return lower, upper
        if self.x.size + self.y.size <= _SMALL:  # small tests: every term, all points at once
            lower[:], upper[:] = self._chunk(p, q)
            return np.clip(lower, 0.0, 1.0), np.clip(upper, 0.0, 1.0)
        order = np.argsort(p)
        for chunk in np.array_split(order, max(1, -(-order.size // _CHUNK))):
            lower[chunk], upper[chunk] = self._chunk(p[chunk], q[chunk])
        return np.clip(lower, 0.0, 1.0), np.clip(upper, 0.0, 1.0)

    def _chunk(self, p, q):
        x_max = int(self.x[-1])
        small = self.x.size + self.y.size <= _SMALL
        x_lo, x_hi = (0, x_max) if small else self._window(self.n_neg, p, x_max)
        in_tail = special.bdtr(x_max, self.n_neg, p) if x_max < self.n_neg else np.ones(p.shape)
        if x_lo > x_hi:  # the window lies beyond the tail's last count: bound the tail by its mass
            return np.zeros(p.shape), in_tail + 1e-15
        x = self.x[x_lo:x_hi + 1]
        c = self.c[x_lo:x_hi + 1]
        pc, qc = p[:, None], q[:, None]
        pmf_x = self._pmf(self.log_comb_x[x_lo:x_hi + 1], x, self.n_neg, pc)
        # mass of Bin(n_neg, p) on the tail's counts outside [x_lo, x_hi] (each term's CDF factor <= 1)
        out_x = (special.bdtr(x_lo - 1, self.n_neg, p) if x_lo > 0 else 0.0) + 1e-15
        if x_hi < x_max:
            out_x = out_x + np.maximum(in_tail - special.bdtr(x_hi, self.n_neg, p), 0.0)
        y_lo, y_hi = (0, int(self.y[-1])) if small else self._window(self.n_pos, q, int(self.y[-1]))
        y_lo, y_hi = min(max(y_lo, int(c.min())), int(c.max())), max(min(y_hi, int(c.max())), int(c.min()))
        below = special.bdtr(y_lo - 1, self.n_pos, q)[:, None] if y_lo > 0 else np.zeros((p.size, 1))
        cdf = below + np.cumsum(self._pmf(self.log_comb_y[y_lo:y_hi + 1], self.y[y_lo:y_hi + 1], self.n_pos, qc), axis=1)
        inside = np.clip(c - y_lo, 0, y_hi - y_lo)
        at = cdf[:, inside]
        cdf_lo = np.where(c[None, :] < y_lo, 0.0, at)
        cdf_hi = np.where(c[None, :] < y_lo, below, np.where(c[None, :] > y_hi, 1.0, at))
        return (pmf_x * cdf_lo).sum(axis=1), (pmf_x * cdf_hi).sum(axis=1) + out_x


def _sup_upper(tail: _Tail, family: _Family, theta: float) -> float:
    """A proven upper limit on the supremum of the tail over the boundary (within _SUP_RTOL of it)."""
    grid = family.grid(theta)
    left, right = grid[:-1], grid[1:]
    best = float(tail(grid, family.boundary(grid, theta))[0].max())
    for _ in range(_MAX_ROUNDS):
        # On [left, right]: p >= left and q >= q(right), and the tail falls in both.
        ub = tail(left, family.boundary(right, theta))[1]
        open_ = ub > best * (1 + _SUP_RTOL) + 1e-300
        if not open_.any():
            return float(best * (1 + _SUP_RTOL) + 1e-300)
        if open_.sum() > _MAX_CELLS:  # a flat top: stop refining and take the (valid) cell limits
            return float(max(best * (1 + _SUP_RTOL), ub.max()))
        left, right = left[open_], right[open_]
        pts = left[:, None] + (right - left)[:, None] * np.linspace(0.0, 1.0, _SPLIT + 1)[None, :]
        inner = pts[:, 1:-1].ravel()
        best = max(best, float(tail(inner, family.boundary(inner, theta))[0].max()))
        left, right = pts[:, :-1].ravel(), pts[:, 1:].ravel()
    # Not converged: the safe limit (pruned cells were all below best * (1 + _SUP_RTOL)).
    return float(max(best * (1 + _SUP_RTOL), tail(left, family.boundary(right, theta))[1].max()))


def _sup_estimate(tail: _Tail, family: _Family, theta: float) -> float:
    """A lower limit on the supremum of the tail over the boundary: a grid, then a local zoom."""
    grid = family.grid(theta)
    values = tail(grid, family.boundary(grid, theta))[0]
    i = int(np.argmax(values))
    best, lo, hi = float(values[i]), grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    for _ in range(_ZOOMS):
        pts = np.linspace(lo, hi, 2 * _SPLIT + 1)
        values = tail(pts, family.boundary(pts, theta))[0]
        j = int(np.argmax(values))
        best, lo, hi = max(best, float(values[j])), pts[max(j - 1, 0)], pts[min(j + 1, pts.size - 1)]
    return best


def _bracket(excess, lo: float, hi: float, g_lo: float, g_hi: float,
             tol: float = _EPS_TOL) -> tuple[float, float, float, float]:
    """A bracket ``[lo, hi]`` narrower than ``tol`` (relative) with excess(lo) <= 0 < excess(hi), by Illinois.

    Starts from excess(lo) = g_lo <= 0 < excess(hi) = g_hi; returns ``(lo, hi, g_lo, g_hi)``.
    """
    side, width = 0, hi - lo
    for step in range(200):
        if hi - lo <= tol * max(1.0, lo):
            break
        mid = (lo * g_hi - hi * g_lo) / (g_hi - g_lo)  # regula falsi, Illinois-weighted
        if step % 3 == 2 and hi - lo > 0.5 * width or not lo < mid < hi:
            mid = 0.5 * (lo + hi)  # guard: bisect when the bracket is not shrinking
        if step % 3 == 2:
            width = hi - lo
        g_mid = excess(mid)
        if g_mid <= 0:
            lo, g_lo = mid, g_mid
            if side == -1:
                g_hi *= 0.5
            side = -1
        else:
            hi, g_hi = mid, g_mid
            if side == 1:
                g_lo *= 0.5
            side = 1
    return lo, hi, g_lo, g_hi


def _root(excess, lo: float, hi: float, g_lo: float, g_hi: float) -> float:
    """Largest theta in [lo, hi] with excess(theta) <= 0 (excess(lo) <= 0 < excess(hi)), within _EPS_TOL."""
    return _bracket(excess, lo, hi, g_lo, g_hi)[0]


def _estimated_root(estimated, coarse, lo: float, hi: float, slope: float) -> float | None:
    """Root of the estimated excess in [lo, hi], bracketed first by the cheaper coarse excess (or None).

    The coarse excess (grid only) is at most the estimated one, so a bracket of its root gives a
    point ``h`` above the estimate's root; a step down of ``excess(h) / slope`` (grown until the
    estimate is <= 0) brackets the estimate's root closely, where the root search needs few of
    the costlier estimates.
    """
    c_lo, c_hi = coarse(lo), coarse(hi)
    if not c_lo <= 0 < c_hi:
        return None
    _, top, _, _ = _bracket(coarse, lo, hi, c_lo, c_hi, tol=1e-3)
    e_top = estimated(top)
    if e_top <= 0:  # the estimate is below zero at the top of the bracket: its root is above it
        e_hi = estimated(hi)
        return _root(estimated, top, hi, e_top, e_hi) if e_hi > 0 else None
    step = e_top / slope * 1.5
    for _ in range(4):
        bottom = max(lo, top - step)
        e_bottom = estimated(bottom)
        if e_bottom <= 0:
            return _root(estimated, bottom, top, e_bottom, e_top)
        if bottom == lo:
            return None
        top, e_top, step = bottom, e_bottom, 4 * step
    return None


def _certify(family: _Family, fp: int, n_neg: int, fn: int, n_pos: int, alpha: float) -> float:
    """sup {theta : proven p-value(theta) <= alpha}.

    Fast path: the root of the *estimated* supremum (cheap), moved down by the proven limit's
    tolerance and verified with the proven limit. Otherwise a root search on the proven limit.
    """
    tail = _Tail(family, fp, n_neg, fn, n_pos, alpha)
    if not np.isfinite(tail.t_obs):  # every outcome is at least as extreme: no evidence
        return 0.0
    lo = max(tail.t_obs, 0.0)  # proven: the split test at level alpha rejects every N(theta), theta < t_obs
    hi = family.upper_bracket(n_neg + n_pos, alpha) * (1 + 1e-12) + 1e-12
    if hi <= lo:
        return float(lo)
    log_alpha = np.log(alpha)

    def proven(theta: float) -> float:  # <= 0: N(theta) is rejected at level alpha
        return float(np.log(max(_sup_upper(tail, family, theta), 1e-300)) - log_alpha)

    def estimated(theta: float) -> float:
        return float(np.log(max(_sup_estimate(tail, family, theta), 1e-300)) - log_alpha)

    def coarse(theta: float) -> float:  # the grid alone: at most the estimate, so its root is at least the estimate's
        grid = family.grid(theta)
        return float(np.log(max(tail(grid, family.boundary(grid, theta))[0].max(), 1e-300)) - log_alpha)

    guess = _estimated_root(estimated, coarse, lo, hi, abs(log_alpha))
    if guess is not None:
        # the proven limit exceeds the supremum by at most _SUP_RTOL: step down by twice that in log-p
        # (d log p / d theta is at least |log alpha| near the root for these nulls), then verify
        candidate = max(lo, guess - 2 * _SUP_RTOL / max(abs(log_alpha), 1.0) - _EPS_TOL * max(1.0, guess))
        if candidate > lo and proven(candidate) <= 0 < proven(guess):
            return float(candidate)
    g_lo, g_hi = proven(lo), proven(hi)
    if g_lo > 0:  # the split bound stands (t_obs > 0: only the slack of the proven limit), or nothing
        return float(lo)
    if g_hi <= 0:
        return float(hi)
    return float(_root(proven, lo, hi, g_lo, g_hi))


@lru_cache(maxsize=1 << 16)
def _joint_dp(fp: int, n_neg: int, fn: int, n_pos: int, alpha: float, delta: float) -> float:
    return _certify(_Family("dp", delta), fp, n_neg, fn, n_pos, alpha)


@lru_cache(maxsize=1 << 16)
def _joint_gdp(fp: int, n_neg: int, fn: int, n_pos: int, alpha: float, _delta: float) -> float:
    return _certify(_Family("gdp"), fp, n_neg, fn, n_pos, alpha)


# ---------------------------------------------------------------------------------------------
# Public functions
# ---------------------------------------------------------------------------------------------


def joint_epsilon(fp, n_neg, fn, n_pos, alpha, delta: float = 0.0):
    """Exact joint lower confidence bound on epsilon from the test counts of one fixed test.

    The largest epsilon whose (epsilon, delta)-DP null region has, at every point, probability at
    most ``alpha`` of an outcome at least as extreme as the observed one (ordered by the split
    Clopper-Pearson certificate at level ``alpha``; ties count as at least as extreme). The
    supremum over the region is taken on its lower boundary by a branch-and-bound with a proven
    upper limit. Always at least :func:`epsaudit.bounds.clopper_pearson_epsilon` on the same counts.

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
    delta : float or array_like in [0, 1)
        The delta of (epsilon, delta)-DP.

    Returns
    -------
    numpy.ndarray or float
        Certified epsilon >= 0 (natural-log units), finite; the shape of the broadcast inputs.

    Raises
    ------
    ValueError
        If a count is outside ``[0, n]``, a size is below 1 or not an integer, ``alpha`` is outside
        (0, 1), ``delta`` outside [0, 1), or an input is not finite. Fractional error counts are
        rounded up.

    Notes
    -----
    Cost: one bisection over epsilon, each step a vectorised sum over the false-positive counts
    that can still be at least as extreme (one for zero errors), so zero-error bounds are fast at
    any size; results are cached per distinct input.

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

    ``sup over N(epsilon) of P(T >= t_obs)`` with ``T`` the split Clopper-Pearson certificate at
    level ``alpha`` (the ordering of :func:`joint_epsilon`), within a relative ``1e-4`` above the
    exact value. :func:`joint_epsilon` is the largest epsilon at which this is at most ``alpha``.

    Parameters
    ----------
    fp, n_neg, fn, n_pos : int
        Test counts (false positives among negatives, false negatives among positives).
    epsilon : float, >= 0
        The null region's epsilon.
    alpha : float in (0, 1)
        The level that fixes the ordering statistic.
    delta : float in [0, 1)

    Returns
    -------
    float
        In [0, 1].

    Raises
    ------
    ValueError
        As :func:`joint_epsilon`, or if ``epsilon`` is negative.

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
    family = _Family("dp", float(delta))
    tail = _Tail(family, int(fp), int(n_neg), int(fn), int(n_pos), float(alpha))
    return min(1.0, _sup_upper(tail, family, float(epsilon)))
