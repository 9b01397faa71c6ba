"""The sequential certificate's e-value in plain :mod:`math`: the per-row path of
:class:`epsaudit.bounds.SequentialCertificate`.

Twins of the vectorised functions of :mod:`epsaudit.bounds.sequential` (equal to about 1e-13
relative), without numpy's per-call overhead: one evaluation costs a few microseconds.
"""

from __future__ import annotations

import math


def _seg(x, n, y, m, k, ik, delta):
    """Scalar twin of ``sequential._segment``: upper limit on the log-likelihood's max along S1."""
    c = (1 - delta) / (1 + k)
    A, B, C = x + m - y, n - x, y
    a2, b2, c2 = A + B + C, A * (1 + ik) + B * ik + C, A * ik
    p = 2 * c2 / (b2 + math.sqrt(max(b2 * b2 - 4 * a2 * c2, 0.0))) if c2 > 0 else 0.0
    p = min(p, c)
    if delta > 0:
        p = _newton(x, n, y, m, k, delta, c, p)
    u, v = 1 - delta - k * p, delta + k * p
    value = ((x * math.log(p) if x else 0.0) + ((n - x) * math.log1p(-p) if n - x else 0.0)
             + (y * math.log(u) if y else 0.0) + ((m - y) * math.log(v) if m - y else 0.0))
    d = ((x / p if x else 0.0) - ((n - x) / (1 - p) if n - x else 0.0) - (y * k / u if y else 0.0)
         + ((m - y) * k / v if m - y else 0.0))
    return value + (d * (c - p) if d > 0 else -d * p)


def _newton(x, n, y, m, k, delta, c, p):
    def deriv(p):
        u, v = 1 - delta - k * p, delta + k * p
        return (x / p - (n - x) / (1 - p) - y * k / u + (m - y) * k / v,
                -x / p ** 2 - (n - x) / (1 - p) ** 2 - y * k * k / u ** 2 - (m - y) * k * k / v ** 2)

    if deriv(c)[0] >= 0:
        return c
    if x == 0 and -(n - x) - y * k / (1 - delta) + (m - y) * k / delta <= 0:
        return 0.0
    lo, hi = 0.0, c
    p = min(max(p, 5e-4 * c), c * (1 - 1e-12))
    for _ in range(60):
        d, dd = deriv(p)
        if d > 0:
            lo = p
        else:
            hi = p
        if abs(d) * c < 1e-12 or hi - lo <= 1e-10 * c:
            break
        step = p - d / dd
        p = step if lo < step < hi else 0.5 * (lo + hi)
    return p


def _xlogy(a, b):
    return a * math.log(b) if a else 0.0


class _Evaluator:
    """log E(eps) at given counts with :mod:`math` only (the per-row path); equal to the vectorised one."""

    def __init__(self, neg, pos, delta: float):
        self.neg, self.pos, self.delta = neg, pos, delta

    def numerator(self, x: int, n: int, y: int, m: int) -> float:
        return self.neg.scalar(x, n) + self.pos.scalar(y, m)

    def __call__(self, x: int, n: int, y: int, m: int, eps: float, num: float | None = None) -> float:
        d = self.delta
        k, ik = math.exp(eps), math.exp(-eps)
        if num is None:
            num = self.neg.scalar(x, n) + self.pos.scalar(y, m)
        ph, qh = (x / n if n else 0.5), (y / m if m else 0.5)
        if n == 0 or m == 0 or (1 - qh <= k * ph + d and 1 - ph <= k * qh + d):
            sup = _xlogy(x, ph) + _xlogy(n - x, 1 - ph) + _xlogy(y, qh) + _xlogy(m - y, 1 - qh)
        else:
            sup = max(_seg(x, n, y, m, k, ik, d), _seg(y, m, x, n, k, ik, d))
        out = num - sup
        return out - 1e-12 * (1 + abs(out))
