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
# per-term allowance for terms of a scaled sum lost to underflow (at most ~1e-323 each): a normal number, since
# arithmetic on subnormal ones is slow
UNDERFLOW = 2.0 ** -1000


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
        work[y - y_lo] = cs * (1 + 1e-12) + (y - y_lo + 1) * UNDERFLOW + extra
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
    search : the branch-and-bound that bounds the supremum or decides it against a level.

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
    search : the proven check of the root's candidate.

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
def search(kind, theta, delta, grid, hint, log_alpha, decide, budget_small, budget_large, rtol, split, max_rounds,
           c, n_neg, n_pos, lcx, lcy, window_sd):
    """The branch-and-bound on the tail's supremum along the boundary: a decision or a proven limit.

    On a cell of positions the tail is at most its value at (FPR of the left end, FNR of the right end).
    A cell is closed when its limit is within the tolerance ``rtol`` of the best value found (refining
    it cannot raise the supremum's limit by more), and when deciding also when its limit is at most
    ``log_alpha`` (refining it cannot change the answer).

    ``decide`` False: ``joint._Boundary.sup_upper``, the proven limit (every open cell cut into ``split``,
    stopping at ``budget_large`` open cells with the cells' limits). ``decide`` True: whether the
    supremum is proven at most ``log_alpha`` for either cell budget (small first), each open cell cut
    into as many sub-cells as its excess over its ends' values asks for (2 to 16); no as soon as the
    best value plus the tolerance exceeds ``log_alpha`` (every limit is at least that), yes when no
    cell is open or the open cells' limits are below it. ``grid`` holds the first cells' ends; the
    tail's arguments as :func:`cells`. ``grid``: an even grid of positions, to which cells that shrink
    geometrically towards ``hint`` (the expected maximum; NaN: none) are added.

    Returns
    -------
    proven : bool
        The decision (``decide``), else whether the limit is at most ``log_alpha``.
    limit : float
        The proven limit (``decide`` False), else the largest limit of the last cells or the tolerance
        above the best value.
    s_best, v_best : float
        The position of the largest value found and that value.

    See Also
    --------
    cells : the cell limits it refines.

    Examples
    --------
    >>> import numpy as np
    >>> c, lc = np.array([0]), np.zeros(1)
    >>> root = float(np.log(0.05 ** (1 / 20) / (1 - 0.05 ** (1 / 20))))
    >>> [search(0, root + d, 0.0, np.linspace(-1, 1, 17), 0.0, np.log(0.05), True, 512, 4096, 1e-4, 8, 60,
    ...         c, 10, 10, lc, lc, 9.0)[0] for d in (-1e-3, 1e-3)]
    [True, False]
    """
    slack = math.log1p(rtol)
    work = np.empty(c[0] + 2)
    if hint == hint:  # cells that shrink geometrically towards the expected maximum
        steps = (2.0 / (grid.size - 1)) * 8.0 ** -np.arange(1.0, 9.0)
        grid = np.unique(np.minimum(np.maximum(np.concatenate((grid, hint - steps, hint + steps, np.array([hint]))),
                                               -1.0), 1.0))
    m = grid.size
    coords = np.empty((m, 4))
    for i in range(m):
        coords[i, 0], coords[i, 1], coords[i, 2], coords[i, 3] = _point(kind, theta, delta, grid[i])
    best, s_best = -np.inf, grid[0]
    vals = np.empty(m)
    for i in range(m):
        vals[i] = _at(coords[i, 0], coords[i, 1], coords[i, 2], coords[i, 3], c, n_neg, n_pos, lcx, lcy, window_sd,
                      work)
        if vals[i] > best:
            best, s_best = vals[i], grid[i]
    left, right = grid[:-1].copy(), grid[1:].copy()
    v_left, v_right = vals[:-1].copy(), vals[1:].copy()
    ub = np.empty(m - 1)
    for i in range(m - 1):
        ub[i] = _at(coords[i, 0], coords[i, 1], coords[i + 1, 2], coords[i + 1, 3], c, n_neg, n_pos, lcx, lcy,
                    window_sd, work)
    budgets = np.array([budget_small, budget_large])
    first = 0
    pc = np.empty((17, 4))
    pv = np.empty(17)
    for _ in range(max_rounds):
        if decide and best + slack > log_alpha:
            return False, best + slack, s_best, best
        open_ = ub > best + slack
        if decide:
            open_ &= ub + 1e-9 > log_alpha
        n_open = open_.sum()
        top = ub.max()
        if n_open == 0:
            limit = best + slack if not decide else max(best + slack, top)
            return limit <= log_alpha or decide, limit, s_best, best
        if decide:
            while first < 2 and n_open > budgets[first]:  # that run stops here with the cells' limits
                if top <= log_alpha:
                    return True, top, s_best, best
                first += 1
            if first == 2:
                return False, top, s_best, best
        elif n_open > budget_large:  # a flat top: stop refining and take the (valid) cell limits
            limit = max(best + slack, top)
            return limit <= log_alpha, limit, s_best, best
        idx = np.flatnonzero(open_)
        parts = np.empty(n_open, np.int64)
        for i in range(n_open):
            k = idx[i]
            if decide:  # the limit's excess shrinks about in proportion to the cell: cut to fit the room
                end = max(v_left[k], v_right[k])
                room = log_alpha - 1e-9 - end
                parts[i] = min(max(int(math.ceil(1.25 * (ub[k] - end) / room)), 2), 16) if room > 0 else 16
            else:
                parts[i] = split
        total = parts.sum()
        new_l, new_r, new_ub = np.empty(total), np.empty(total), np.empty(total)
        new_vl, new_vr = np.empty(total), np.empty(total)
        out = 0
        for i in range(n_open):
            k, cuts = idx[i], parts[i]
            lo, w = left[k], right[k] - left[k]
            for j in range(cuts + 1):  # each point's coordinates once
                s = lo + w * (j / cuts)
                pc[j, 0], pc[j, 1], pc[j, 2], pc[j, 3] = _point(kind, theta, delta, s)
            pv[0], pv[cuts] = v_left[k], v_right[k]
            for j in range(1, cuts):
                pv[j] = _at(pc[j, 0], pc[j, 1], pc[j, 2], pc[j, 3], c, n_neg, n_pos, lcx, lcy, window_sd, work)
                if pv[j] > best:
                    best, s_best = pv[j], lo + w * (j / cuts)
            for j in range(cuts):
                new_l[out], new_r[out] = lo + w * (j / cuts), lo + w * ((j + 1) / cuts)
                new_vl[out], new_vr[out] = pv[j], pv[j + 1]
                new_ub[out] = _at(pc[j, 0], pc[j, 1], pc[j + 1, 2], pc[j + 1, 3], c, n_neg, n_pos, lcx, lcy,
                                  window_sd, work)
                out += 1
        left, right, ub, v_left, v_right = new_l, new_r, new_ub, new_vl, new_vr
    limit = max(best + slack, ub.max())  # not converged: the cells' limits (valid)
    return limit <= log_alpha, limit, s_best, best


@njit(cache=True, nogil=True)
def _at_least(lu_x, a_x, lv_y, b_y, t):
    """Whether ``T(x, y) >= t``: ``max(b_y - log u_x, a_x - log v_y)`` with ``a = log(1 - u - delta)``,
    ``b = log(1 - v - delta)`` (NaN where negative, and then no: numpy's maximum propagates it)."""
    if a_x != a_x or b_y != b_y:
        return False
    return b_y - lu_x >= t or a_x - lv_y >= t


@njit(cache=True, nogil=True)
def _count_at_least(a, upto, v):
    """How many of the non-increasing ``a[0 .. upto]`` are at least ``v``."""
    lo, hi = 0, upto + 1
    while lo < hi:
        mid = (lo + hi) // 2
        if a[mid] >= v:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, nogil=True)
def _count_at_most(a, upto, v):
    """How many of the non-decreasing ``a[0 .. upto]`` are at most ``v`` (all of them for NaN ``v``)."""
    if v != v:
        return upto + 1
    lo, hi = 0, upto + 1
    while lo < hi:
        mid = (lo + hi) // 2
        if a[mid] <= v:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, nogil=True)
def dp_staircase(t, lu, lv, a, b, fp, fn):
    """The (epsilon, delta)-DP tail's staircase ``c`` from every count's Clopper-Pearson bounds.

    ``c[x]`` is the largest FN count with ``T(x, FN) >= t`` (the ordering at delta), the counts limited as
    ``joint._Tail`` describes, the observed outcome ``(fp, fn)`` put in, made non-increasing, and cut where
    it falls below 0.

    Parameters
    ----------
    t : float
        The observed statistic less its tie allowance.
    lu, lv : numpy.ndarray of float, shapes (n_neg + 1,) and (n_pos + 1,)
        ``log u`` for every FP count and ``log v`` for every FN count.
    a, b : numpy.ndarray of float, shapes (n_neg + 1,) and (n_pos + 1,)
        ``log(1 - u - delta)`` and ``log(1 - v - delta)`` (``log(1 - u)`` and ``log(1 - v)`` at delta = 0;
        NaN where negative).
    fp, fn : int
        The observed counts.

    Returns
    -------
    numpy.ndarray of int, shape (K,)

    Examples
    --------
    >>> import numpy as np
    >>> lu = np.log(np.array([0.1, 0.5, 0.9])); l1u = np.log1p(-np.exp(lu))
    >>> dp_staircase(1.0, lu, lu, l1u, l1u, 0, 0), dp_staircase(1.0, lu, lu, l1u, l1u, 1, 1)
    (array([1, 0]), array([1, 1]))
    """
    n_neg, n_pos = lu.size - 1, lv.size - 1
    # counted, not bisected: at tiny levels the bounds need not be monotone in the count
    count = 0
    for x in range(n_neg + 1):
        count += _at_least(lu[x], a[x], lv[0], b[0], t)
    K = max(count - 1, fp) + 1
    count = 0
    for y in range(n_pos + 1):
        count += _at_least(lu[0], a[0], lv[y], b[y], t)
    C = max(count - 1, fn, 0)
    c = np.empty(K, np.int64)
    for x in range(K):
        # T(x, y) >= t  iff  log(1 - v_y - delta) >= t + log u_x  or  log v_y <= log(1 - u_x - delta) - t
        first = _count_at_least(b, C, t + lu[x]) - 1
        second = _count_at_most(lv, C, a[x] - t) - 1
        c[x] = min(max(first, second), C)
    if fp < K:
        c[fp] = max(c[fp], fn)  # the observed outcome always belongs to its own tail
    for x in range(K - 2, -1, -1):  # a lower set: c non-increasing (only ever enlarged)
        c[x] = max(c[x], c[x + 1])
    k = 0
    while k < K and c[k] >= 0:
        k += 1
    return c[:k].copy()
