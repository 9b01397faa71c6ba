"""Private accelerator of :mod:`epsaudit.bounds.sequential`: the box limit on log E that screens the
simulated runs of ``sequential_stopping_rows``, compiled (numba on first use, or ahead of time by
:mod:`epsaudit.bounds._build_kernel`). The arithmetic is ``sequential._box_bound``'s, one span at a time.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

_LOGE2 = 0.6931471805599453


@njit(cache=True, nogil=True)
def _logaddexp(x, y):
    """numpy's ``logaddexp``, term for term."""
    if x == y:
        return x + _LOGE2
    d = x - y
    if d > 0:
        return x + math.log1p(math.exp(-d))
    if d <= 0:
        return y + math.log1p(math.exp(d))
    return d


@njit(cache=True, nogil=True)
def _log_m(k, n, log_w, point, table):
    """log M(k; n) of a mixture prior: ``log_w`` per component (less log B(a, b)), ``point`` where it is a
    point mass at 0, ``table[c]`` = lgamma(a + j), lgamma(b + j), lgamma(a + b + j)."""
    out = 0.0
    for c in range(log_w.size):
        if point[c]:
            term = log_w[c] if k == 0 else -np.inf
        else:
            term = log_w[c] + table[c, 0, k] + table[c, 1, n - k] - table[c, 2, n]
        out = term if c == 0 else _logaddexp(out, term)
    return out


@njit(cache=True, nogil=True)
def box_bounds(x0, x1, n0, n1, y0, y1, m0, m1, k, delta, wx, px, tx, wy, py, ty):
    """Upper limits on log E on any path from counts ``(x0, n0, y0, m0)`` to ``(x1, n1, y1, m1)``, per span.

    As ``sequential._box_bound``: each side's part of ``log M(x; n) M(y; m) - log L_P`` is largest at a corner
    of the box, for ``P`` the closed-form points of the null region's two segments and the MLE when it lies
    inside the region; ``+inf`` where a corner leaves ``x <= n``.

    Parameters
    ----------
    x0, x1, n0, n1, y0, y1, m0, m1 : numpy.ndarray of int, shape (N,)
        Errors and rows of each side (B: x among n; A: y among m) at each span's ends.
    k, delta : float
        ``e^epsilon`` and delta.
    wx, px, tx, wy, py, ty : numpy.ndarray
        Each side's prior (:func:`_log_m`).

    Returns
    -------
    numpy.ndarray of float, shape (N,)

    Examples
    --------
    >>> import numpy as np
    >>> one = np.array([1]); zero = np.array([0]); w, pt, t = np.zeros(1), np.ones(1, np.bool_), np.zeros((1, 3, 4))
    >>> bool(box_bounds(zero, zero, one, one, zero, zero, one, one, 2.0, 0.0, w, pt, t, w, pt, t)[0] < 1.0)
    True
    """
    out = np.empty(x0.size)
    lp, l1p, lq, l1q, lm, l1m, mle = (np.empty(2), np.empty(2), np.empty(2), np.empty(2), np.empty(2), np.empty(2),
                                      np.empty(2))
    la, lb, best, total = np.empty(3), np.empty(3), np.empty(3), np.empty(3)
    for i in range(x0.size):
        for j in range(2):  # own side x (j = 0) or y (j = 1): S1's point's p, S2's q
            own, other = (x0[i], y0[i]) if j == 0 else (y0[i], x0[i])
            rows, rows_other = (n0[i], m0[i]) if j == 0 else (m0[i], n0[i])
            a = own + rows_other - other
            a2, b2, c2 = rows + rows_other, a * (1 + 1 / k) + (rows - own) / k + other, a / k
            root = 2 * c2 / (b2 + math.sqrt(max(b2 * b2 - 4 * a2 * c2, 0.0))) if c2 > 0 else 0.0
            p = min(max(root, 1e-300), (1 - delta) / (1 + k))
            mle[j] = own / max(rows, 1)
            lp[j], l1p[j] = math.log(p), math.log1p(-p)
            d = -delta - k * p
            lq[j] = math.log1p(d) if d > -1 else (-np.inf if d == -1 else np.nan)
            e = delta + k * p
            l1q[j] = math.log(e) if e > 0 else -np.inf
            lm[j] = math.log(mle[j]) if mle[j] > 0 else -np.inf
            l1m[j] = math.log1p(-mle[j]) if mle[j] < 1 else -np.inf
        inside = (n0[i] > 0 and m0[i] > 0 and 1 - mle[1] < k * mle[0] + delta and 1 - mle[0] < k * mle[1] + delta)
        total[:] = 0.0
        for s in range(2):
            if s == 0:
                v0, v1, r0, r1, w, pt, tab = x0[i], x1[i], n0[i], n1[i], wx, px, tx
                la[0], la[1], la[2], lb[0], lb[1], lb[2] = lp[0], lq[1], lm[0], l1p[0], l1q[1], l1m[0]
            else:
                v0, v1, r0, r1, w, pt, tab = y0[i], y1[i], m0[i], m1[i], wy, py, ty
                la[0], la[1], la[2], lb[0], lb[1], lb[2] = lq[0], lp[1], lm[1], l1q[0], l1p[1], l1m[1]
            best[:] = -np.inf
            for corner in range(4):
                v = v0 if corner % 2 == 0 else v1
                r = r0 if corner < 2 else r1
                num = _log_m(v, r, w, pt, tab) if v <= r else np.inf
                for t in range(3):
                    lin = (v * la[t] if v > 0 else 0.0) + ((r - v) * lb[t] if r > v else 0.0)
                    best[t] = max(best[t], num - lin)
            for t in range(3):
                total[t] += best[t]
        out[i] = min(min(total[0], total[1]), total[2] if inside else np.inf)
    return out
