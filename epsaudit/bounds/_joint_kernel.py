"""Private accelerator of :mod:`epsaudit.bounds.joint`: the tail's log-probability upper limit, compiled.

One function evaluates, for each cell (or point), the joint test's tail probability
``sum_x Bin(x; n_neg, p) BinCDF(c(x); n_pos, q)`` as the proven upper limit that ``joint._Tail``
defines: the counts within a window of each binomial's bulk summed (a scaled cumulative sum in log
space), those beyond it bounded by a geometric series from the window's edge, underflow bounded by
the smallest doubles, and a relative ``1e-12`` (plus ``1e-10`` in log) added against rounding. The
boundary points of the (epsilon, delta)-DP null region are computed here too, each coordinate from its
own closed form. Compiled with numba on first use and cached on disk.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

NEG = -1e290  # log 0 in the binomial terms (so that 0 * log 0 = 0)
SMALL = 300  # tails with fewer counts than this sum every term
PAD = 8  # counts added to each side of a window


@njit(cache=True, nogil=True)
def _log(x):
    return math.log(x) if x > 0 else NEG


@njit(cache=True, nogil=True)
def _logaddexp(a, b):
    if a == -np.inf:
        return b
    if b == -np.inf:
        return a
    m = max(a, b)
    return m + math.log1p(math.exp(-abs(a - b)))


@njit(cache=True, nogil=True)
def _left(k, n, lp, l1p, lc):
    """log of an upper limit on P(Bin(n, p) < k) from Bin(k - 1) and the ratio bound of a step down."""
    j = k - 1
    log_pmf = lc[j] + j * lp + (n - j) * l1p
    log_r = math.log(j / (n - j + 1.0)) + l1p - lp if j > 0 else -np.inf
    if not log_r < -1e-9:
        return 0.0
    bound = log_pmf - math.log1p(-math.exp(min(log_r, -1e-12)))
    return min(bound, 0.0)


@njit(cache=True, nogil=True)
def _right(b, n, lp, l1p, lc):
    """log of an upper limit on P(Bin(n, p) > b) from Bin(b + 1) and the ratio bound of a step up."""
    j = b + 1
    log_pmf = lc[j] + j * lp + (n - j) * l1p
    log_r = math.log((n - j) / (j + 1.0)) + lp - l1p if j < n else -np.inf
    if not log_r < -1e-9:
        return 0.0
    bound = log_pmf - math.log1p(-math.exp(min(log_r, -1e-12)))
    return min(bound, 0.0)


@njit(cache=True, nogil=True)
def _outside(total, a, b, c, top, y_lo, below, work, linear, l0, n_neg, lp, l1p, lcx):
    """``total`` plus the bounds on the FP counts outside the window ``a .. b`` (CDF factors at most 1 below
    it, at most the one at ``b + 1`` above it; ``work`` holds the window's CDFs, scaled by ``e^l0`` when
    ``linear``, else their logs), plus the allowance for rounding."""
    if a > 0:
        total = _logaddexp(total, _left(a, n_neg, lp, l1p, lcx))
    if b < c.size - 1:
        c_next = c[b + 1]
        if c_next > top:
            cdf_next = 0.0
        elif c_next >= y_lo:
            cdf_next = min(math.log(work[c_next - y_lo]) + l0, 0.0) if linear else work[c_next - y_lo]
        else:
            cdf_next = below
        total = _logaddexp(total, _right(b, n_neg, lp, l1p, lcx) + cdf_next)
    return min(total + 1e-10, 0.0)


@njit(cache=True, nogil=True)
def _window(lp, l1p, lq, l1q, c, n_neg, n_pos, window_sd):
    """FP counts ``a .. b`` and FN counts ``y_lo .. top`` summed at one point (the rest bounded)."""
    K = c.size
    C = c[0]
    if K + C <= SMALL:
        a, b, y_lo, y_hi = 0, K - 1, 0, C
    else:
        p, q = math.exp(lp), math.exp(lq)
        mx, sx = n_neg * p, math.sqrt(n_neg * p * math.exp(l1p))
        my, sy = n_pos * q, math.sqrt(n_pos * q * math.exp(l1q))
        a = int(max(math.floor(mx - window_sd * sx) - PAD, 0))
        b = int(min(math.ceil(mx + window_sd * sx) + PAD, K - 1))
        y_lo = int(max(math.floor(my - window_sd * sy) - PAD, 0))
        y_hi = int(math.ceil(my + window_sd * sy) + PAD)
        if a > b:  # the window lies beyond the tail's last count
            a = b = K - 1
    y_lo = min(y_lo, c[b])
    return a, b, y_lo, min(c[a], max(y_hi, y_lo))


@njit(cache=True, nogil=True)
def _one_fast(lp, l1p, lq, l1q, c, n_neg, n_pos, lcx, lcy, window_sd, work):
    """``_one`` with the binomial terms by recurrence from their largest, in linear arithmetic scaled by it.

    Each step's rounding (a few ulps, over at most some thousands of steps) stays far inside the
    ``1e-10`` added to the log at the end. Returns NaN where the scaled sums could lose relative
    accuracy to underflow (tails below about 1e-200 of their scale); the caller then uses ``_one``.
    """
    K = c.size
    if K == 1 and c[0] == 0:
        return n_neg * l1p + n_pos * l1q
    a, b, y_lo, top = _window(lp, l1p, lq, l1q, c, n_neg, n_pos, window_sd)
    # FN probabilities y_lo .. top relative to the one at y0 (the mode, clipped), then their CDF
    q = math.exp(lq)
    odds_q = math.exp(lq - l1q)
    y0 = min(max(int(math.floor((n_pos + 1) * q)), y_lo), top)
    l0 = lcy[y0] + y0 * lq + (n_pos - y0) * l1q
    v = 1.0
    work[y0 - y_lo] = 1.0
    for y in range(y0 + 1, top + 1):
        v *= (n_pos - y + 1) / y * odds_q
        work[y - y_lo] = v
    v = 1.0
    for y in range(y0 - 1, y_lo - 1, -1):
        v *= (y + 1) / ((n_pos - y) * odds_q)
        work[y - y_lo] = v
    below = _left(y_lo, n_pos, lq, l1q, lcy) if y_lo > 0 else -np.inf
    e_below = below - l0
    if e_below > 600.0:
        return np.nan
    extra = math.exp(e_below)
    cs = 0.0
    for y in range(y_lo, top + 1):  # G(y) = CDF / e^l0, with the rounding and underflow allowances
        cs += work[y - y_lo]
        work[y - y_lo] = cs * (1 + 1e-12) + (y - y_lo + 1) * 1e-322 + extra
    z = work[top - y_lo]
    log_f = math.log(z) + l0  # log CDF at top, the largest factor below 1
    inv_z = 1.0 / z
    beyond = math.exp(-log_f) if log_f < 0.0 else 1.0  # the factor 1 of counts beyond the window, scaled
    # FP probabilities a .. b relative to the one at x0, times their CDF factors relative to log_f
    p = math.exp(lp)
    odds_p = math.exp(lp - l1p)
    x0 = min(max(int(math.floor((n_neg + 1) * p)), a), b)
    lx0 = lcx[x0] + x0 * lp + (n_neg - x0) * l1p
    cx = c[x0]
    s = 1.0 * (beyond if cx > top else work[cx - y_lo] * inv_z)
    v = 1.0
    for x in range(x0 + 1, b + 1):
        v *= (n_neg - x + 1) / x * odds_p
        cx = c[x]
        s += v * (beyond if cx > top else work[cx - y_lo] * inv_z)
    v = 1.0
    for x in range(x0 - 1, a - 1, -1):
        v *= (x + 1) / ((n_neg - x) * odds_p)
        cx = c[x]
        s += v * (beyond if cx > top else work[cx - y_lo] * inv_z)
    if s < 1e-200:
        return np.nan
    total = math.log(s * (1 + 1e-12) + (b + 1 - a) * 1e-322) + lx0 + log_f
    return _outside(total, a, b, c, top, y_lo, below, work, True, l0, n_neg, lp, l1p, lcx)


@njit(cache=True, nogil=True)
def _at(lp, l1p, lq, l1q, c, n_neg, n_pos, lcx, lcy, window_sd, work):
    v = _one_fast(lp, l1p, lq, l1q, c, n_neg, n_pos, lcx, lcy, window_sd, work)
    if np.isnan(v):
        v = _one(lp, l1p, lq, l1q, c, n_neg, n_pos, lcx, lcy, window_sd, work)
    return v


@njit(cache=True, nogil=True)
def _one(lp, l1p, lq, l1q, c, n_neg, n_pos, lcx, lcy, window_sd, work):
    """Upper limit on log P at one point: ``(log p, log(1 - p))`` of the FPR, ``(log q, log(1 - q))`` of the
    FNR; every term in log space (any level down to 1e-300)."""
    K = c.size
    if K == 1 and c[0] == 0:  # the zero-error outcome alone
        return n_neg * l1p + n_pos * l1q
    a, b, y_lo, top = _window(lp, l1p, lq, l1q, c, n_neg, n_pos, window_sd)
    # log BinCDF(y; n_pos, q) for y_lo <= y <= top, by a scaled cumulative sum
    m_y = -np.inf
    for y in range(y_lo, top + 1):
        v = lcy[y] + y * lq + (n_pos - y) * l1q
        work[y - y_lo] = v
        if v > m_y:
            m_y = v
    below = _left(y_lo, n_pos, lq, l1q, lcy) if y_lo > 0 else -np.inf
    cs = 0.0
    for y in range(y_lo, top + 1):
        cs += math.exp(work[y - y_lo] - m_y)
        v = math.log(cs * (1 + 1e-12) + (y - y_lo + 1) * 1e-322) + m_y
        if y_lo > 0:
            v = _logaddexp(v, below)
        work[y - y_lo] = min(v, 0.0)
    # the FP terms times their CDF factors
    m_t = -np.inf
    for x in range(a, b + 1):
        cdf = 0.0 if c[x] > top else work[c[x] - y_lo]
        t = lcx[x] + x * lp + (n_neg - x) * l1p + cdf
        if t > m_t:
            m_t = t
    s = 0.0
    for x in range(a, b + 1):
        cdf = 0.0 if c[x] > top else work[c[x] - y_lo]
        s += math.exp(lcx[x] + x * lp + (n_neg - x) * l1p + cdf - m_t)
    total = math.log(s * (1 + 1e-12) + (b + 1 - a) * 1e-322) + m_t
    return _outside(total, a, b, c, top, y_lo, below, work, False, 0.0, n_neg, lp, l1p, lcx)


_LOG_SQRT_2PI = 0.9189385332046728


@njit(cache=True, nogil=True)
def _log_ndtr(x):
    """``log Phi(x)``, accurate at both ends (as :func:`scipy.special.log_ndtr`)."""
    if x > 6.0:
        return math.log1p(-0.5 * math.erfc(x / math.sqrt(2.0)))
    if x > -30.0:
        return math.log(0.5 * math.erfc(-x / math.sqrt(2.0)))
    if x == -np.inf:
        return -np.inf
    # Phi(x) = phi(x) / |x| * (1 - 1/x^2 + 3/x^4 - ...), ten terms (the eleventh below 1e-17 here)
    z = 1.0 / (x * x)
    term, series = 1.0, 1.0
    for k in range(1, 10):
        term *= -(2 * k - 1) * z
        series += term
    return -0.5 * x * x - math.log(-x) - _LOG_SQRT_2PI + math.log(series)


@njit(cache=True, nogil=True)
def _point(kind, theta, delta, s):
    """``log p, log(1 - p), log q, log(1 - q)`` at position ``s`` of the null region's lower boundary.

    ``kind`` 0: (epsilon, delta)-DP with ``theta`` = epsilon; 1: mu-GDP with ``theta`` = mu. ``s = -1``:
    FPR 0; ``s = 0``: the corner; ``s = 1``: FNR 0 (the halves are mirror images).
    """
    r = abs(s)
    if kind == 0:
        e = math.exp(theta)
        pc = (1.0 - delta) / (1.0 + e)
        near = pc * (1.0 - r)  # the coordinate that falls to 0
        l_near, l_near_c = _log(near), math.log1p(-near)
        l_far, l_far_c = math.log(pc * (1.0 + r * e)), _log(delta + e * near)  # far = 1 - delta - e * near
    else:
        w = 3.0 * r / max(1.0 - r, 1e-300) if r < 1.0 else np.inf
        h = theta / 2
        l_near, l_near_c = max(_log_ndtr(-(h + w)), NEG), _log_ndtr(h + w)
        l_far, l_far_c = _log_ndtr(w - h), max(_log_ndtr(h - w), NEG)
    if s <= 0:
        return l_near, l_near_c, l_far, l_far_c
    return l_far, l_far_c, l_near, l_near_c


@njit(cache=True, nogil=True)
def cells(kind, theta, delta, left, right, c, n_neg, n_pos, lcx, lcy, window_sd):
    """Upper limits on the tail's log-probability on boundary cells, for one null parameter.

    Parameters
    ----------
    kind : int
        0: (epsilon, delta)-DP, ``theta`` = epsilon; 1: mu-GDP, ``theta`` = mu.
    theta, delta : float
        The null region's parameters.
    left, right : numpy.ndarray of float, shape (m,)
        The cells' ends as boundary positions in [-1, 1] (-1: FPR 0; 0: the corner; 1: FNR 0). On a cell
        the tail is at most its value at (the FPR at ``left``, the FNR at ``right``); ``left = right``
        gives the value at a point.
    c, n_neg, n_pos, lcx, lcy, window_sd
        The tail (``joint._Tail.args``): the largest FN count per FP count, the sizes, the log binomial
        coefficients of both sides and the window's width in standard deviations.

    Returns
    -------
    numpy.ndarray of float, shape (m,)
        Natural logs of probabilities, at most 0.

    See Also
    --------
    at_thetas : values at points, each with its own parameter.
    proves : the branch-and-bound that decides the p-value against a level.

    Examples
    --------
    The zero-error outcome of 10 + 10 rows at the corner of epsilon 1: ``20 log sigmoid(1)``.

    >>> import numpy as np
    >>> c, lc = np.array([0]), np.zeros(1)
    >>> corner = np.array([0.0])
    >>> round(float(cells(0, 1.0, 0.0, corner, corner, c, 10, 10, lc, lc, 9.0)[0]), 6)
    -6.265234
    >>> round(20 * float(np.log(1 / (1 + np.exp(-1.0)))), 6)
    -6.265234
    """
    out = np.empty(left.size)
    work = np.empty(c[0] + 2)
    for i in range(left.size):
        lp, l1p, _, _ = _point(kind, theta, delta, left[i])
        _, _, lq, l1q = _point(kind, theta, delta, right[i])
        out[i] = _at(lp, l1p, lq, l1q, c, n_neg, n_pos, lcx, lcy, window_sd, work)
    return out


@njit(cache=True, nogil=True)
def at_thetas(kind, thetas, delta, s, c, n_neg, n_pos, lcx, lcy, window_sd):
    """The tail's log-probability (an upper limit within rounding) at boundary positions ``s[i]`` of the
    null regions with parameters ``thetas[i]``; the other arguments as :func:`cells`.

    See Also
    --------
    cells : limits on cells of one null region.

    Examples
    --------
    >>> import numpy as np
    >>> c, lc = np.array([0]), np.zeros(1)
    >>> at_thetas(0, np.array([1.0, 2.0]), 0.0, np.zeros(2), c, 10, 10, lc, lc, 9.0).round(4)
    array([-6.2652, -2.5386])
    """
    out = np.empty(s.size)
    work = np.empty(c[0] + 2)
    for i in range(s.size):
        lp, l1p, lq, l1q = _point(kind, thetas[i], delta, s[i])
        out[i] = _at(lp, l1p, lq, l1q, c, n_neg, n_pos, lcx, lcy, window_sd, work)
    return out


@njit(cache=True, nogil=True)
def estimated_root(kind, log_alpha, theta, lo, hi, s, grid, newton, delta, c, n_neg, n_pos, lcx, lcy, window_sd):
    """Newton steps in the null parameter on the tail's estimated maximum along the boundary.

    Each step evaluates a stencil ``s + d * newton`` of positions (a parabola gives the maximum and its
    value; the corner, a kink, by comparison) and a step in theta at the maximum (the envelope theorem).
    ``s`` NaN starts from the best point of ``grid``; ``[lo, hi]`` brackets the root. The tail's
    arguments as :func:`cells`.

    Returns
    -------
    settled : bool
        False when 60 steps did not settle.
    theta, s : float
        The root and the maximum's position there.

    See Also
    --------
    proves : the proven check of the root's candidate.

    Examples
    --------
    Zero errors in 10 + 10 rows: the corner's ``20 log sigmoid(theta) = log 0.05``, so ``theta =
    logit(0.05 ** (1 / 20))``.

    >>> import numpy as np
    >>> c, lc = np.array([0]), np.zeros(1)
    >>> grid, newton = np.linspace(-1, 1, 17), np.array([-2.0, -1.0, 0.0, 1.0, 2.0, 0.0, 0.0])
    >>> settled, theta, s = estimated_root(0, np.log(0.05), 1.0, 0.0, 10.0, np.nan, grid, newton, 0.0,
    ...                                    c, 10, 10, lc, lc, 9.0)
    >>> settled, round(theta, 6), s, round(float(np.log(0.05 ** (1 / 20) / (1 - 0.05 ** (1 / 20)))), 6)
    (True, 1.822716, 0.0, 1.822716)
    """
    d = 1.0 / (grid.size - 1)
    if np.isnan(s):
        v = cells(kind, theta, delta, grid, grid, c, n_neg, n_pos, lcx, lcy, window_sd)
        s = grid[np.argmax(v)]
    pts = np.empty(newton.size)
    thetas = np.empty(newton.size)
    for _ in range(60):
        h_theta = 1e-6 * max(1.0, theta)
        for i in range(newton.size):
            pts[i] = min(max(s + d * newton[i], -1.0), 1.0)
            thetas[i] = theta + h_theta if i == 5 else theta
        near_corner = abs(s) <= 2 * d
        if near_corner:
            pts[6] = 0.0
        vals = at_thetas(kind, thetas, delta, pts, c, n_neg, n_pos, lcx, lcy, window_sd)
        far_l, left, mid, right, far_r, ahead, corner = vals[0], vals[1], vals[2], vals[3], vals[4], vals[5], vals[6]
        grow = False
        if s == 0.0 and mid >= max(max(left, right), max(far_l, far_r)):  # a kink at the corner: the maximum
            s_new, value, shift = 0.0, mid, 0.0
        else:
            curv = left + right - 2 * mid
            if curv < 0 and mid >= max(left, right):
                shift = d * (left - right) / (2 * curv)
                s_new, value = s + shift, mid - curv * (shift / d) ** 2 / 4  # the parabola's vertex
            else:  # not bracketed: the best point of the stencil, and a wider look next time
                k = np.argmax(vals[:5])
                s_new, value = pts[k], vals[k]
                shift = s_new - s
                grow = True
            if corner > value and near_corner:
                s_new, value, shift = 0.0, corner, -s
        s_new = min(max(s_new, -1.0), 1.0)
        slope = (ahead - mid) / h_theta
        g = value - log_alpha
        if g <= 0:
            lo = max(lo, theta)
        else:
            hi = min(hi, theta)
        new = theta - g / slope if slope > 0 else 0.5 * (lo + hi)
        if not lo <= new <= hi:
            new = 0.5 * (lo + hi)
        done = abs(new - theta) <= 1e-11 * max(1.0, theta) and abs(shift) <= 1e-4 * d + 1e-9
        theta, s = new, s_new
        if grow:
            d = min(4 * d, 1.0 / (grid.size - 1))
        else:
            d = min(max(4 * abs(shift), 1e-6), d / 2 if shift == 0.0 else d)
        if done or hi - lo <= 1e-12 * max(1.0, lo):
            return True, theta, s
    return False, theta, s


@njit(cache=True, nogil=True)
def proves(kind, theta, delta, grid, log_alpha, budget_small, budget_large, rtol, split, max_rounds,
           c, n_neg, n_pos, lcx, lcy, window_sd):
    """Whether the tail's supremum along the boundary is proven at most ``log_alpha`` within ``rtol``
    (``joint._Boundary.proves``), for two cell budgets (small first); ``grid`` the first cells' ends, the
    tail's arguments as :func:`cells`.

    A branch-and-bound over cells of positions: on a cell the tail is at most its value at (FPR of the
    left end, FNR of the right end). A cell is closed when its limit is within the tolerance of the
    best value found (refining it cannot raise the supremum's limit by more) or when its limit plus
    the tolerance is at most ``log_alpha`` (refining it cannot change the answer). The answer is no as
    soon as the best value plus the tolerance exceeds ``log_alpha``, yes when no cell is open.

    See Also
    --------
    cells : the cell limits it refines.

    Examples
    --------
    >>> import numpy as np
    >>> c, lc = np.array([0]), np.zeros(1)
    >>> root = float(np.log(0.05 ** (1 / 20) / (1 - 0.05 ** (1 / 20))))
    >>> [proves(0, root + d, 0.0, np.linspace(-1, 1, 17), np.log(0.05), 512, 4096, 1e-4, 8, 60, c, 10, 10, lc, lc, 9.0)
    ...  for d in (-1e-3, 1e-3)]
    [True, False]
    """
    slack = math.log1p(rtol)
    work = np.empty(c[0] + 2)
    m = grid.size
    coords = np.empty((m, 4))
    for i in range(m):
        coords[i, 0], coords[i, 1], coords[i, 2], coords[i, 3] = _point(kind, theta, delta, grid[i])
    best = -np.inf
    for i in range(m):
        best = max(best, _at(coords[i, 0], coords[i, 1], coords[i, 2], coords[i, 3], c, n_neg, n_pos, lcx, lcy,
                             window_sd, work))
    left, right = grid[:-1].copy(), grid[1:].copy()
    ub = np.empty(m - 1)
    for i in range(m - 1):
        ub[i] = _at(coords[i, 0], coords[i, 1], coords[i + 1, 2], coords[i + 1, 3], c, n_neg, n_pos, lcx, lcy,
                    window_sd, work)
    budgets = np.array([budget_small, budget_large])
    first = 0
    frac = np.linspace(0.0, 1.0, split + 1)
    pc = np.empty((split + 1, 4))
    for _ in range(max_rounds):
        if best + slack > log_alpha:
            return False
        open_ = (ub > best + slack) & (ub + slack + 1e-9 > log_alpha)
        n_open = open_.sum()
        if n_open == 0:
            return True
        top = ub.max()
        while first < 2 and n_open > budgets[first]:  # that run stops here with the cells' limits
            if top <= log_alpha:
                return True
            first += 1
        if first == 2:
            return False
        lo_c, hi_c = left[open_], right[open_]
        left, right, ub = np.empty(n_open * split), np.empty(n_open * split), np.empty(n_open * split)
        for i in range(n_open):
            w = hi_c[i] - lo_c[i]
            for j in range(split + 1):  # each point's coordinates once
                pc[j, 0], pc[j, 1], pc[j, 2], pc[j, 3] = _point(kind, theta, delta, lo_c[i] + w * frac[j])
            for j in range(1, split):
                best = max(best, _at(pc[j, 0], pc[j, 1], pc[j, 2], pc[j, 3], c, n_neg, n_pos, lcx, lcy, window_sd,
                                     work))
            for j in range(split):
                k = i * split + j
                left[k], right[k] = lo_c[i] + w * frac[j], lo_c[i] + w * frac[j + 1]
                ub[k] = _at(pc[j, 0], pc[j, 1], pc[j + 1, 2], pc[j + 1, 3], c, n_neg, n_pos, lcx, lcy, window_sd,
                            work)
    return max(best + slack, ub.max()) <= log_alpha
