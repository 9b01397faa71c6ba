"""The anytime-valid (sequential) certificate: a lower confidence bound on epsilon from a fixed test's
errors, valid at any stopping time (an e-process).

Contents: the e-value and its bound at given counts, the priors, the running certificate
(:class:`SequentialCertificate`), a family of them (:class:`SequentialFamily`) and planning. After ``x``
false positives among ``n`` negatives and ``y`` false negatives among ``m`` positives,

    E(eps) = M(x; n) M(y; m) / sup_{(p, q) in N(eps, delta)} p^x (1-p)^(n-x) q^y (1-q)^(m-y)

with ``N(eps, delta) = {1 - q <= e^eps p + delta, 1 - p <= e^eps q + delta}`` and ``M`` one side's
prior-predictive probability; by Ville's inequality ``P(exists t: E_t(eps) >= 1 / alpha) <= alpha``, and the
running bound ``LB_t = max over looks of sup {eps : E_s(eps) >= 1 / alpha}`` holds at any stopping time.
Definitions and derivation (the supremum on the segments S1, S2, the priors, families, planning): the
book's methods chapter, section "The anytime-valid certificate: test rows as they arrive".

References: Ville (1939), *Etude critique de la notion de collectif*; Wasserman, Ramdas &
Balakrishnan (2020), "Universal inference", PNAS; Waudby-Smith & Ramdas (2024), "Estimating means
of bounded random variables by betting", JRSS-B.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from ..protocol import generator
from ..results import EpsilonResult, RouteStatistics
from ..validation import check_fresh_ids
from ._kernels import load as _load_kernels
from .joint import joint_epsilon

__all__ = ["SEQUENTIAL_BOUND", "PRIORS", "SequentialPrior", "sequential_prior", "sequential_log_evalue",
           "sequential_evalue", "sequential_epsilon", "worst_pair_sequential", "zero_error_sequential_epsilon",
           "STOP_REASONS", "SequentialCertificate", "SequentialStatistics", "SequentialFamily",
           "fixed_size_power", "planned_prior", "sequential_stopping_rows", "zero_error_stopping_row"]

#: ``EpsilonResult.bound`` of a sequential certificate (:mod:`epsaudit.results` accepts it).
SEQUENTIAL_BOUND = "anytime-valid"
#: The named priors: ``(weight, a, b)`` per component, ``a = None`` a point mass at error rate 0.
PRIORS = {"J": ((1.0, 0.5, 0.5),), "B": ((1.0, 0.1, 1.0),), "Z": ((0.9, None, None), (0.1, 0.5, 0.5))}
_EPS_MAX = 700.0  # e^eps stays finite
_BISECT = 48  # bisection steps of the vectorised bound (width 50 / 2^48)
_NEWTON = 60
_TOL = 1e-10


@dataclass(frozen=True)
class SequentialPrior:
    """A mixture prior on one side's error rate: components ``(weight, a, b)``, ``a = None`` a point mass at 0.

    Attributes
    ----------
    name : str
        The spec it was made from (``"B"``, ``"H:0.02"``, ``"beta:1,2"``).
    components : tuple of (float, float or None, float or None)
        Weights summing to 1 and Beta parameters.

    See Also
    --------
    sequential_prior, planned_prior : the prior a spec names; the default spec at planned error rates.

    Examples
    --------
    >>> round(float(sequential_prior("B").log_predictive(0, 10)), 4)  # log B(0.1, 11) / B(0.1, 1)
    -0.2855
    """

    name: str
    components: tuple

    def log_predictive(self, k, n):
        """log M(k; n) (broadcast): ``log sum_j w_j B(a_j + k, b_j + n - k) / B(a_j, b_j)``, k errors in n rows."""
        k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
        terms = []
        for w, a, b in self.components:
            if a is None:
                terms.append(np.where(k == 0, math.log(w), -np.inf) + 0 * n)
            else:
                terms.append(math.log(w) + special.betaln(a + k, b + n - k) - special.betaln(a, b))
        out = special.logsumexp(np.stack(np.broadcast_arrays(*terms)), axis=0)
        return out[()] if np.ndim(out) == 0 else out

    def scalar(self, k: int, n: int) -> float:
        """:meth:`log_predictive` of one count with :mod:`math` only (the certificate's per-row path)."""
        fast = _FAST.get(self.components)
        if fast is None:
            fast = _FAST[self.components] = tuple((math.log(w), a, b, _lbeta(a, b) if a is not None else 0.0)
                                                  for w, a, b in self.components)
        if len(fast) == 1 and fast[0][1] is not None:
            lw, a, b, lb = fast[0]
            return lw + math.lgamma(a + k) + math.lgamma(b + n - k) - math.lgamma(a + b + n) - lb
        terms = [lw if a is None else lw + _lbeta(a + k, b + n - k) - lb for lw, a, b, lb in fast if a is not None or k == 0]
        top = max(terms)
        return top + math.log(sum(math.exp(t - top) for t in terms))

    def digest(self) -> str:
        """SHA-256 of the prior's components (what a certificate records before its first row)."""
        return hashlib.sha256(json.dumps([self.name, self.components]).encode()).hexdigest()


_FAST: dict = {}  # components -> (log weight, a, b, log B(a, b)) per component


def _lbeta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def _planned(rate: float) -> tuple:
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"a planned error rate must be in [0, 1], got {rate}")
    return (1.0, 0.5 + 50 * rate, 0.5 + 50 * (1 - rate))


def sequential_prior(spec) -> SequentialPrior:
    """The prior named by ``spec``: ``"J"``, ``"B"``, ``"Z"``, ``"P:r"``, ``"H:r"``, ``"beta:a,b"`` or a prior.

    Parameters
    ----------
    spec : str or SequentialPrior
        ``"P:r"`` is Beta(0.5 + 50 r, 0.5 + 50 (1 - r)) for a planned error rate ``r`` in [0, 1];
        ``"H:r"`` half Beta(0.1, 1), half ``"P:r"``.

    Returns
    -------
    SequentialPrior

    Raises
    ------
    ValueError
        An unknown name, a rate outside [0, 1] or Beta parameters that are not positive.

    See Also
    --------
    SequentialPrior, planned_prior : the prior it returns; the default spec at planned error rates.

    Examples
    --------
    >>> sequential_prior("H:0.02").components
    ((0.5, 0.1, 1.0), (0.5, 1.5, 49.5))
    """
    if isinstance(spec, SequentialPrior):
        return spec
    text = str(spec).strip()
    head, _, arg = text.partition(":")
    head = head.upper() if head.upper() in ("J", "B", "Z", "P", "H") else head.lower()
    try:
        if head in PRIORS and not arg:
            return SequentialPrior(head, PRIORS[head])
        if head == "P":
            return SequentialPrior(f"P:{float(arg):g}", (_planned(float(arg)),))
        if head == "H":
            _, a, b = _planned(float(arg))
            return SequentialPrior(f"H:{float(arg):g}", ((0.5, 0.1, 1.0), (0.5, a, b)))
        if head == "beta":
            a, b = (float(v) for v in arg.split(","))
            if a > 0 and b > 0:
                return SequentialPrior(f"beta:{a:g},{b:g}", ((1.0, a, b),))
    except ValueError as exc:
        if "planned" in str(exc):
            raise
    raise ValueError(f"prior must be 'J', 'B', 'Z', 'P:<rate>', 'H:<rate>' or 'beta:<a>,<b>' (a, b > 0), got {spec!r}")


def _priors(prior) -> tuple[SequentialPrior, SequentialPrior]:
    """(prior of the negatives' errors, prior of the positives' errors)."""
    if isinstance(prior, (tuple, list)) and len(prior) == 2:
        return sequential_prior(prior[0]), sequential_prior(prior[1])
    p = sequential_prior(prior)
    return p, p


# -- The supremum of the likelihood over the null region (vectorised) --


def _xlogy(a, b):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(a == 0, 0.0, a * np.log(np.where(a == 0, 1.0, b)))


def _segment(x, n, y, m, k, ik, delta):
    """Upper limit on the max of the log-likelihood along S1 = {q = 1 - delta - k p, 0 <= p <= c} (arrays)."""
    c = (1 - delta) / (1 + k)
    A, B, C = x + m - y, n - x, y
    a2, b2, c2 = A + B + C, A * (1 + ik) + B * ik + C, A * ik  # the quadratic divided by k
    with np.errstate(divide="ignore", invalid="ignore"):
        root = np.where(c2 > 0, 2 * c2 / (b2 + np.sqrt(np.maximum(b2 * b2 - 4 * a2 * c2, 0.0))), 0.0)
    p = np.minimum(root, c)
    if np.any(delta > 0):
        p = np.where(delta > 0, _newton(x, n, y, m, k, delta, c, p), p)

    def deriv(p):
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = [np.where(x > 0, x / p, 0.0), -np.where(n - x > 0, (n - x) / (1 - p), 0.0),
                     -np.where(y > 0, y * k / (1 - delta - k * p), 0.0),
                     np.where(m - y > 0, (m - y) * k / (delta + k * p), 0.0)]
        return np.nan_to_num(sum(terms), nan=0.0, posinf=np.inf, neginf=-np.inf)

    value = _xlogy(x, p) + _xlogy(n - x, 1 - p) + _xlogy(y, 1 - delta - k * p) + _xlogy(m - y, delta + k * p)
    d = deriv(p)
    with np.errstate(invalid="ignore"):
        slack = np.maximum(np.where(d > 0, d * (c - p), 0.0), np.where(d < 0, -d * p, 0.0))
    return value + np.nan_to_num(slack, nan=0.0)


def _newton(x, n, y, m, k, delta, c, p0):
    """The maximiser on S1 with delta > 0: Newton's method on the derivative, kept inside a bracket."""
    lo, hi = np.zeros_like(p0), np.broadcast_to(c, p0.shape).copy()
    p = np.clip(p0, 0.5 * c * 1e-3, c * (1 - 1e-12)) + 0 * lo
    for _ in range(_NEWTON):
        with np.errstate(divide="ignore", invalid="ignore"):
            u, v = 1 - delta - k * p, delta + k * p
            d = x / p - (n - x) / (1 - p) - y * k / u + (m - y) * k / v
            dd = -x / p ** 2 - (n - x) / (1 - p) ** 2 - y * k * k / u ** 2 - (m - y) * k * k / v ** 2
        lo, hi = np.where(d > 0, p, lo), np.where(d <= 0, p, hi)
        done = (hi - lo <= _TOL * c) | (np.abs(d) * c < 1e-12)
        if np.all(done):
            break
        with np.errstate(divide="ignore", invalid="ignore"):
            step = p - d / dd
        p = np.where(done, p, np.where((step > lo) & (step < hi) & np.isfinite(step), step, 0.5 * (lo + hi)))
    with np.errstate(divide="ignore", invalid="ignore"):  # the ends: derivative's sign decides
        d_c = x / c - (n - x) / (1 - c) - y * k / (1 - delta - k * c) + (m - y) * k / (delta + k * c)
        d_0 = np.where(x > 0, np.inf, -(n - x) - y * k / (1 - delta) + (m - y) * k / delta)
    return np.where(d_c >= 0, c, np.where(d_0 <= 0, 0.0, p))


def _log_sup(x, n, y, m, eps, delta):
    """Upper limit on log sup over N(eps, delta) of the likelihood of the counts (arrays, broadcast)."""
    k, ik = np.exp(eps), np.exp(-eps)
    with np.errstate(divide="ignore", invalid="ignore"):
        ph, qh = np.where(n > 0, x / np.maximum(n, 1), 0.5), np.where(m > 0, y / np.maximum(m, 1), 0.5)
    mle = _xlogy(x, ph) + _xlogy(n - x, 1 - ph) + _xlogy(y, qh) + _xlogy(m - y, 1 - qh)
    inside = ((1 - qh <= k * ph + delta) & (1 - ph <= k * qh + delta)) | (n == 0) | (m == 0)
    s1 = _segment(x, n, y, m, k, ik, delta)
    s2 = _segment(y, m, x, n, k, ik, delta)
    return np.where(inside, mle, np.maximum(s1, s2))


def sequential_log_evalue(fp, n_neg, fn, n_pos, epsilon, delta=0.0, prior="B"):
    """log E(epsilon) of the sequential certificate at given counts (vectorised; see :func:`sequential_evalue`).

    Parameters
    ----------
    fp, n_neg, fn, n_pos : array_like of int
        False positives among negatives, false negatives among positives (broadcast).
    epsilon : array_like, in [0, 700]
    delta : array_like, in [0, 1), default=0.0
    prior : str, SequentialPrior or pair of them, default="B"

    Returns
    -------
    numpy.ndarray or float

    Raises
    ------
    ValueError
        Counts outside ``[0, n]``, ``epsilon`` or ``delta`` out of range, an unknown prior.

    See Also
    --------
    sequential_evalue, sequential_epsilon : the e-value itself; the bound found on it.

    Examples
    --------
    >>> round(float(sequential_log_evalue(0, 10, 0, 10, 1.0)), 4)
    5.6942
    """
    fp, n_neg, fn, n_pos, eps, delta = _check(fp, n_neg, fn, n_pos, epsilon, delta)
    neg, pos = _priors(prior)
    out = neg.log_predictive(fp, n_neg) + pos.log_predictive(fn, n_pos) - _log_sup(fp, n_neg, fn, n_pos, eps, delta)
    out = out - 1e-12 * (1 + np.abs(out))  # rounding against the certificate
    return float(out) if np.ndim(out) == 0 else out


def _check(fp, n_neg, fn, n_pos, epsilon, delta):
    arrays = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (fp, n_neg, fn, n_pos, epsilon, delta)))
    fp, n_neg, fn, n_pos, eps, delta = arrays
    if not all(np.all(np.isfinite(a)) for a in arrays):
        raise ValueError("counts, epsilon and delta must be finite")
    if np.any(n_neg < 0) or np.any(n_pos < 0) or np.any((fp < 0) | (fp > n_neg)) or np.any((fn < 0) | (fn > n_pos)):
        raise ValueError("counts must satisfy 0 <= fp <= n_neg and 0 <= fn <= n_pos")
    if np.any((eps < 0) | (eps > _EPS_MAX)):
        raise ValueError(f"epsilon must be in [0, {_EPS_MAX:g}], got {epsilon}")
    if np.any((delta < 0) | (delta >= 1)):
        raise ValueError(f"delta must be in [0, 1), got {delta}")
    return fp, n_neg, fn, n_pos, eps, delta


def sequential_evalue(fp, n_neg, fn, n_pos, epsilon, delta=0.0, prior="B"):
    """E(epsilon): the e-value of the null ``N(epsilon, delta)`` at given counts, ``M M / sup_N L(p, q)``.

    The supremum is an upper limit (rounding lowers ``E``); under the null ``P(exists t: E_t >= 1 / alpha) <= alpha``.

    Parameters
    ----------
    fp, n_neg, fn, n_pos : array_like of int
        False positives (rows of B the test calls A) among the negatives tested so far, false negatives
        (rows of A it calls B) among the positives (broadcast).
    epsilon : array_like, in [0, 700]
    delta : array_like, in [0, 1), default=0.0
    prior : str, SequentialPrior or pair of them, default="B"
        Fixed before the first row (:func:`sequential_prior`).

    Returns
    -------
    numpy.ndarray or float
        The e-value, >= 0, non-increasing in ``epsilon``.

    Raises
    ------
    ValueError
        As :func:`sequential_log_evalue`.

    See Also
    --------
    sequential_epsilon, sequential_log_evalue : the bound it gives; its natural log.
    epsaudit.bounds.joint_epsilon, epsaudit.bounds.clopper_pearson_epsilon : the fixed-size certificates.

    References
    ----------
    Ville (1939); Wasserman, Ramdas & Balakrishnan (2020), "Universal inference", PNAS 117(29).

    Examples
    --------
    >>> round(float(sequential_evalue(0, 10, 0, 10, 1.0)), 2)  # M(0; 10)^2 / sigmoid(1)^20, prior B
    297.14
    >>> float(sequential_evalue(0, 50, 50, 50, 3.0)) <= 1  # the null point (0, 1): no evidence
    True
    """
    return np.exp(sequential_log_evalue(fp, n_neg, fn, n_pos, epsilon, delta, prior))


def sequential_epsilon(fp, n_neg, fn, n_pos, alpha, delta=0.0, prior="B"):
    """The anytime-valid bound of a path that looks only at these counts: ``sup {eps : E(eps) >= 1 / alpha}``.

    Valid at any stopping time (the running certificate reports its maximum over the looks); by bisection.

    Parameters
    ----------
    fp, n_neg, fn, n_pos : array_like of int
        Test counts (see :func:`sequential_evalue`).
    alpha : float in (0, 1)
        Error level (a family of K pairs: ``alpha / K`` each).
    delta : float in [0, 1), default=0.0
    prior : str, SequentialPrior or pair of them, default="B"

    Returns
    -------
    numpy.ndarray or float
        Epsilon >= 0 (natural-log units), within ``1e-12`` below the exact value.

    Raises
    ------
    ValueError
        As :func:`sequential_log_evalue`, or ``alpha`` outside (0, 1).

    See Also
    --------
    epsaudit.bounds.joint_epsilon : the fixed-size bound (larger, valid only at a size fixed in advance).
    epsaudit.bounds.clopper_pearson_epsilon, epsaudit.bounds.certified_epsilon : fixed-size bounds.
    sequential_evalue, SequentialCertificate : the e-value it inverts; the running certificate.
    worst_pair_sequential, zero_error_sequential_epsilon : a family's worst pair; the closed form at zero errors.


    Examples
    --------
    >>> round(float(sequential_epsilon(0, 100, 0, 100, 0.05)), 3)
    3.898
    >>> sequential_epsilon([0, 2, 50], 100, [0, 2, 50], 100, 0.05).round(3)
    array([3.898, 2.411, 0.   ])
    """
    if not 0.0 < float(alpha) < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    fp, n_neg, fn, n_pos, _, delta = _check(fp, n_neg, fn, n_pos, 0.0, delta)
    out = _solve(lambda e, idx: sequential_log_evalue(fp[idx], n_neg[idx], fn[idx], n_pos[idx], e, delta[idx], prior),
                 fp.shape, -math.log(alpha))
    return float(out) if out.ndim == 0 else out


def _solve(log_e, shape, threshold: float) -> np.ndarray:
    """Largest eps in [0, 700] with log_e(eps, idx) >= threshold, per element (0 where none), by bisection."""
    size = int(np.prod(shape))
    flat = np.arange(size)
    idx = tuple(np.unravel_index(flat, shape)) if shape else ()
    out = np.zeros(size)
    ok = np.asarray(log_e(np.zeros(size) if shape else 0.0, idx) >= threshold).reshape(size)
    live = flat[ok]
    if live.size == 0:
        return out.reshape(shape)
    sub = (lambda rows: tuple(a[rows] for a in idx)) if shape else (lambda rows: ())
    lo, hi = np.zeros(live.size), np.full(live.size, 50.0)
    for _ in range(5):  # widen the bracket where the bound is above 50
        up = np.asarray(log_e(hi if shape else float(hi[0]), sub(live)) >= threshold).reshape(live.size)
        if not up.any():
            break
        lo, hi = np.where(up, hi, lo), np.where(up, np.minimum(2 * hi, _EPS_MAX), hi)
    for _ in range(_BISECT + 6):
        mid = 0.5 * (lo + hi)
        good = np.asarray(log_e(mid if shape else float(mid[0]), sub(live)) >= threshold).reshape(live.size)
        lo, hi = np.where(good, mid, lo), np.where(good, hi, mid)
    out[live] = lo
    return out.reshape(shape)


def zero_error_sequential_epsilon(n: int, alpha: float, prior="B"):
    """The closed form at zero errors in ``n + n`` rows, delta 0: ``logit((alpha M(0; n)^2)^(1 / 2n))``.

    Parameters
    ----------
    n : int or array_like, >= 1
        Rows per side.
    alpha : float in (0, 1)
    prior : str or SequentialPrior, default="B"

    Returns
    -------
    float or numpy.ndarray
        0 where it would be negative.

    See Also
    --------
    sequential_epsilon, zero_error_stopping_row : the bound at any counts; the row at which this reaches a target.
    epsaudit.bounds.certifiable_cap : the fixed-size joint certificate at zero errors, ``logit(alpha^(1 / 2n))``.

    Examples
    --------
    >>> round(float(zero_error_sequential_epsilon(30, 0.05, "Z")), 3)
    2.91
    """
    pr = sequential_prior(prior)
    n = np.asarray(n, dtype=float)
    s = np.exp((math.log(alpha) + 2 * pr.log_predictive(0, n)) / (2 * n))
    return np.maximum(np.log(s) - np.log1p(-s), 0.0)


def worst_pair_sequential(fp, n_neg, fn, n_pos, alpha, delta=0.0, prior="B") -> float:
    """The worst pair of a family: ``sup {eps : (1/K) sum_k E_k(eps) >= 1 / alpha}`` over K pairs' counts.

    The pairs' mean e-process bounds the largest pairwise epsilon at level ``alpha`` (no division by K) under
    any adaptive allocation of rows; it is at least the largest per-pair bound at ``alpha / K``.

    Parameters
    ----------
    fp, n_neg, fn, n_pos : array_like of int, shape (K,)
        Each pair's counts.
    alpha : float in (0, 1)
        Family-wise error level.
    delta : float, default=0.0
    prior : str, SequentialPrior or pair of them, default="B"

    Returns
    -------
    float

    Raises
    ------
    ValueError
        As :func:`sequential_epsilon`.

    See Also
    --------
    sequential_epsilon, SequentialFamily : one pair; the running worst-pair bound.
    SequentialCertificate : ``SequentialCertificate.worst_pair`` gives this for running certificates.

    Examples
    --------
    >>> worst = worst_pair_sequential([0, 5], [100, 100], [0, 5], [100, 100], 0.05)
    >>> single = float(sequential_epsilon(0, 100, 0, 100, 0.025))
    >>> round(worst, 3), worst >= single
    (3.737, True)
    """
    if not 0.0 < float(alpha) < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    fp, n_neg, fn, n_pos, _, delta = _check(fp, n_neg, fn, n_pos, 0.0, delta)
    size = fp.size

    def log_mean(eps, _idx):
        e = np.asarray(eps, dtype=float).reshape(-1)[:, None]
        vals = sequential_log_evalue(fp.reshape(1, -1), n_neg.reshape(1, -1), fn.reshape(1, -1), n_pos.reshape(1, -1),
                                     e, delta.reshape(1, -1), prior)
        return special.logsumexp(vals, axis=1) - math.log(size)

    return float(_solve(log_mean, (1,), -math.log(alpha))[0])


# -- The e-value in plain math: the certificate's per-row path (equal to the vectorised one to ~1e-13) --


def _seg_scalar(x, n, y, m, k, ik, delta):
    """Scalar twin of :func:`_segment`: upper limit on the log-likelihood's max along S1."""
    c = (1 - delta) / (1 + k)
    A, B, C = x + m - y, n - x, y
    a2, b2, c2 = A + B + C, A * (1 + ik) + B * ik + C, A * ik
    p = 2 * c2 / (b2 + math.sqrt(max(b2 * b2 - 4 * a2 * c2, 0.0))) if c2 > 0 else 0.0
    p = min(p, c)
    if delta > 0:
        p = _newton_scalar(x, n, y, m, k, delta, c, p)
    u, v = 1 - delta - k * p, delta + k * p
    value = ((x * math.log(p) if x else 0.0) + ((n - x) * math.log1p(-p) if n - x else 0.0)
             + (y * math.log(u) if y else 0.0) + ((m - y) * math.log(v) if m - y else 0.0))
    d = ((x / p if x else 0.0) - ((n - x) / (1 - p) if n - x else 0.0) - (y * k / u if y else 0.0)
         + ((m - y) * k / v if m - y else 0.0))
    return value + (d * (c - p) if d > 0 else -d * p)


def _newton_scalar(x, n, y, m, k, delta, c, p):
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


def _xlogy_scalar(a, b):
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
            sup = (_xlogy_scalar(x, ph) + _xlogy_scalar(n - x, 1 - ph)
                   + _xlogy_scalar(y, qh) + _xlogy_scalar(m - y, 1 - qh))
        else:
            sup = max(_seg_scalar(x, n, y, m, k, ik, d), _seg_scalar(y, m, x, n, k, ik, d))
        out = num - sup
        return out - 1e-12 * (1 + abs(out))


# -- The running certificate: one test row at a time, stop rules, records --


#: The stop reasons, in the order they are checked.
STOP_REASONS = ("claim refuted", "target reached", "budget spent", "futile")
ROUTE = "sequential"
SIDES = ("A", "B")


@dataclass(frozen=True)
class SequentialStatistics(RouteStatistics):
    """The test rows behind a sequential certificate.

    Attributes
    ----------
    fp, fn, rows : int
        False positives among the negatives (rows of B), false negatives among the positives (A), rows drawn.
    stop_reason, prior, test_hash : str or None, str, str or None
        One of :data:`STOP_REASONS` (None: no rule fired), each side's prior, the caller's hash of the test.

    See Also
    --------
    SequentialCertificate : the certificate whose result carries them (``result().statistics``).
    epsaudit.results.RouteStatistics : the base class: frozen fields that flatten to table columns.

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
    alpha : float in (0, 1), default=0.05
        Family-wise error level (confidence ``1 - alpha``).
    delta : float in [0, 1), default=0.0
    prior : str, SequentialPrior or pair of them, default="B"
        Fixed before the first row and recorded by hash (with a planned error rate ``r`` use ``"H:r"``).
    family : int, >= 1, default=1
        Pairs certified together: this one runs at ``alpha / family`` (Bonferroni; valid under any
        adaptive allocation of rows across pairs).
    target, budget, claim : float, int, float, optional
        Stop at the target ("target reached"), after ``budget`` test rows ("budget spent"), or when the
        bound exceeds a claimed epsilon ("claim refuted").
    futility : bool, default=True
        With a target and a budget, stop ("futile") when even zero errors in the rest of the budget could
        not reach the target.
    test_hash : str, optional
        The caller's hash of the fixed test, recorded with the prior's before the first row.
    dev_ids : iterable or mapping of identity -> iterable, optional
        Draw ids of the development rows: a test row whose draw id is one of them, or repeats an earlier
        test row's, is refused (:func:`epsaudit.validation.check_fresh_ids`).

    Attributes
    ----------
    bound, stop_reason, rows, fp, n_neg, fn, n_pos : float, str or None, int
        The running bound (max over looks, >= 0), the stop rule that holds, the rows and counts.

    Raises
    ------
    ValueError
        Parameters out of range; from :meth:`update`: a side other than ``"A"``/``"B"``, draw ids
        given for some rows only.
    epsaudit.validation.ReusedRowsError
        (a ``ValueError``) A draw id that is a development draw or was already used.

    See Also
    --------
    SequentialFamily : K certificates at ``alpha / K`` each and the running worst-pair bound.
    sequential_epsilon, worst_pair_sequential : the bound at given counts; the worst pair of several.
    epsaudit.bounds.joint_epsilon, epsaudit.bounds.clopper_pearson_epsilon : the fixed-size certificates.
    epsaudit.audits.certify_sampler : the sampler audit, which draws test rows into it until it stops.

    Examples
    --------
    >>> cert = SequentialCertificate(alpha=0.05, target=2.0, dev_ids=["d0", "d1"])
    >>> i = 0  # zero errors, A and B in turn, until the bound reaches 2
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
        """The (negatives', positives') priors; settable only before the first row."""
        return self._prior

    @prior.setter
    def prior(self, value) -> None:
        if self.rows:
            raise ValueError("the prior is fixed before the first test row; start a new certificate to change it")
        self._prior = _priors(value)
        self._eval = _Evaluator(*self._prior, self.delta)

    @property
    def test_hash(self) -> str | None:
        """The caller's hash of the fixed test; settable only before the first row."""
        return self._test_hash

    @test_hash.setter
    def test_hash(self, value) -> None:
        if getattr(self, "_sides", None):
            raise ValueError("the test is fixed before the first test row; start a new certificate to change it")
        self._test_hash = None if value is None else str(value)

    @property
    def rows(self) -> int:
        """Test rows taken (both sides)."""
        return len(self._sides)

    @property
    def prior_hash(self) -> str:
        """SHA-256 of both sides' priors (recorded before the first row)."""
        return hashlib.sha256("/".join(p.digest() for p in self._prior).encode()).hexdigest()

    # -- rows -------------------------------------------------------------------------------
    def update(self, side: str, erred: bool, draw_id: Hashable | None = None) -> float:
        """Take one test row: ``side`` "A" (a positive) or "B" (a negative); ``erred``: for A the test said B, for B
        it said A; ``draw_id`` (every row or none) is checked for freshness. Returns the bound; raises as the class.
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
        """Take a batch of rows in arrival order, as :meth:`update` (one vectorised check finds the rows that can
        move the bound); lengths that differ raise ValueError.
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
        """The running lower bound on epsilon (max over looks), valid at any stopping time."""
        return self._bound

    @property
    def bound_path(self) -> list[float]:
        """The running bound after each row (non-decreasing)."""
        return list(self._path)

    def evalue(self, epsilon: float) -> float:
        """E_t(epsilon) at the current counts (evidence against (epsilon, delta)-DP)."""
        return math.exp(self._eval(self.fp, self.n_neg, self.fn, self.n_pos, float(epsilon)))

    @property
    def stop_reason(self) -> str | None:
        """The first stop rule that holds (:data:`STOP_REASONS`), or None."""
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
        """The multiplicity correction, as results record it."""
        return f"bonferroni: 1 anytime-valid e-process x {self.family} certificate(s)"

    def freshness(self) -> str:
        """What the freshness check compared."""
        if self._ids and self._ids[0] is not None:
            return ("test draw ids checked: unique, none a development draw id" if self._dev else
                    "test draw ids checked: unique (no development draw ids given)")
        return "no draw ids: the caller vouches for fresh test draws"

    def result(self, pair: tuple | None = None) -> EpsilonResult:
        """The certificate as an :class:`~epsaudit.results.EpsilonResult` (kind "certificate", anytime-valid)."""
        names = "/".join(p.name for p in self._prior)
        stats = SequentialStatistics(self.fp, self.fn, self.rows, self.stop_reason, names, self.test_hash)
        return EpsilonResult(value=self._bound, kind="certificate", route=ROUTE, n=(self.n_pos, self.n_neg), pair=pair,
                             delta=self.delta, confidence=1 - self.alpha, alpha_per_bound=self.alpha_per_pair,
                             correction=self.correction(), bound=SEQUENTIAL_BOUND, statistics=stats,
                             settings={"prior": names, "prior_hash": self.prior_hash, "target": self.target,
                                       "budget": self.budget, "claim": self.claim, "freshness": self.freshness()})

    def record(self) -> dict[str, Any]:
        """Everything needed to check the certificate: levels, prior, test hash, counts, rows, bound path."""
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
        """:meth:`record` as JSON (draw ids that are not JSON types become their ``str``)."""
        return json.dumps(self.record(), default=str, **kwargs)

    @staticmethod
    def worst_pair(certificates: Iterable[SequentialCertificate], alpha: float | None = None) -> float:
        """The worst-pair bound of certificates (one per pair, sharing delta and prior) at their current counts,
        at ``alpha`` (default: the first one's): :func:`epsaudit.bounds.worst_pair_sequential`.
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


# -- A family: K certificates at alpha / K and the running worst-pair bound --


class SequentialFamily:
    """K sequential certificates at ``alpha / K`` each, and the running worst-pair bound at ``alpha``.

    Parameters
    ----------
    pairs : iterable of hashable
        The pairs' labels (K of them).
    alpha : float in (0, 1), default=0.05
        Family-wise error level.
    delta : float in [0, 1), default=0.0
    prior : str, SequentialPrior or pair of them, default="B"
    dev_ids, test_hashes : mapping pair -> draw ids, mapping pair -> str, optional
        Each pair's development draw ids and test hash (see :class:`SequentialCertificate`).
    **stops
        ``target``, ``budget``, ``claim``, ``futility`` of each pair's certificate.

    Attributes
    ----------
    certificates, worst_bound, worst_path : dict, float, list of float
        Pair -> :class:`SequentialCertificate` (at ``alpha / K``); the running worst-pair bound and its path.

    Raises
    ------
    ValueError
        No pairs, repeated labels; from :meth:`update`: an unknown pair, as :meth:`SequentialCertificate.update`.

    See Also
    --------
    SequentialCertificate, sequential_epsilon : each pair's certificate; one pair's bound at given counts.
    worst_pair_sequential : the worst-pair bound at given counts.

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
        """One test row of one pair (``side``, ``erred``, ``draw_id`` as :meth:`SequentialCertificate.update`);
        returns the running worst-pair bound.
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
        """Each pair's running bound (at ``alpha / K``)."""
        return {p: c.bound for p, c in self.certificates.items()}

    def record(self) -> dict[str, Any]:
        """Every pair's record, the worst-pair bound and its path."""
        return {"alpha": self.alpha, "family": self.k, "worst_bound": self.worst_bound,
                "worst_path": list(self.worst_path),
                "pairs": {str(p): c.record() for p, c in self.certificates.items()}}


# -- Planning: stopping rows with zero errors and at given rates; the fixed size's power --


_CHUNK = 256  # rows of the first simulated chunk (each later one as many rows as done before it)
_LEAF = 4  # spans of at most this many rows are split to single rows without a bound


def planned_prior(fpr: float, fnr: float) -> str | tuple[str, str]:
    """The default prior with a plan: ``"H:r"`` per side at the planned error rates; ``"B"`` without errors.

    Parameters
    ----------
    fpr, fnr : float in [0, 1]

    Returns
    -------
    str or (str, str)
        One prior for both sides, or (negatives', positives').

    See Also
    --------
    sequential_prior : the prior a spec names.
    sequential_stopping_rows, fixed_size_power : the sequential and fixed-size plans at the same rates.

    Examples
    --------
    >>> planned_prior(0.0, 0.0), planned_prior(0.02, 0.02), planned_prior(0.01, 0.03)
    ('B', 'H:0.02', ('H:0.01', 'H:0.03'))
    """
    if fpr == 0 and fnr == 0:
        return "B"
    return f"H:{fpr:g}" if fpr == fnr else (f"H:{fpr:g}", f"H:{fnr:g}")


def _alternating(rows: np.ndarray):
    """Rows per side after each total row (A first): (negatives, positives)."""
    return rows // 2, rows - rows // 2


def zero_error_stopping_row(epsilon: float, alpha: float, delta: float = 0.0, prior="B", max_rows: int = 10**7) -> int:
    """The total row (A, B alternating) at which the running bound first reaches ``epsilon`` with zero errors.

    Parameters
    ----------
    epsilon, alpha : float
        The target (>= 0) and this certificate's error level in (0, 1).
    delta : float, default=0.0
    prior : str, SequentialPrior or pair of them, default="B"
    max_rows : int, default=10_000_000

    Returns
    -------
    int
        Total rows (``ceil(t / 2)`` of A and ``floor(t / 2)`` of B).

    Raises
    ------
    ValueError
        If it does not stop within ``max_rows``.

    See Also
    --------
    sequential_stopping_rows, zero_error_sequential_epsilon : the rows at error rates above zero; the bound reached.
    epsaudit.bounds.required_test_size : the fixed-size reserved test's rows per identity for the same target.
    epsaudit.bounds.certifiable_cap, epsaudit.bounds.planned_epsilon : what a fixed-size test certifies.

    Examples
    --------
    >>> t = zero_error_stopping_row(3.0, 0.05); t, (t + 1) // 2
    (79, 40)
    """
    thr, high = -math.log(alpha), 64
    while high <= 2 * max_rows:
        t = np.arange(1, min(high, max_rows) + 1)
        neg, pos = _alternating(t)
        hit = sequential_log_evalue(0, neg, 0, pos, epsilon, delta, prior) >= thr
        if hit.any():
            return int(t[np.argmax(hit)])
        high *= 4
    raise ValueError(f"zero errors do not certify {epsilon:g} within {max_rows:,} rows")


def sequential_stopping_rows(epsilon: float, alpha: float, fpr: float, fnr: float, delta: float = 0.0, prior="B",
                             runs: int = 1000, max_rows: int = 100_000, seed: int = 0) -> dict:
    """Stopping rows of the sequential certificate at given error rates (target ``epsilon``), simulated.

    Each run's errors are drawn per chunk of rows (binomial), a chunk's middle rows only where the chunk
    may hold the run's first hit (hypergeometric given the ends, down to single rows): the same law as
    drawing every row, with log E evaluated exactly wherever a hit is possible (rows alternate A, B, A, ...).

    Parameters
    ----------
    epsilon, alpha, fpr, fnr : float
        The target, this certificate's error level and the test's error rates on rows of B and of A.
    delta : float, default=0.0
    prior : str, SequentialPrior or pair of them, default="B"
    runs : int, default=1000
    max_rows : int, default=100_000
        Runs not stopped by then are censored there.
    seed : int, default=0

    Returns
    -------
    dict
        ``mean``, ``median``, ``q90`` (total rows; censored runs count as ``max_rows``) and ``stopped``
        (the fraction of runs that reached the target within ``max_rows``).

    See Also
    --------
    zero_error_stopping_row, fixed_size_power : the stopping row at zero errors; a fixed size's power.
    planned_prior : the default prior at the planned rates.
    epsaudit.bounds.required_test_size, epsaudit.bounds.planned_epsilon : the fixed-size plan at expected counts.

    Examples
    --------
    >>> s = sequential_stopping_rows(2.0, 0.05, 0.02, 0.02, runs=200)
    >>> s["stopped"], s["median"] >= zero_error_stopping_row(2.0, 0.05)
    (1.0, True)
    """
    rng = generator(seed, "sequential-plan", round(epsilon, 12), fpr, fnr)
    thr, priors = -math.log(alpha), _priors(prior)
    log_m = [_log_m_table(p, max_rows // 2 + 2) for p in priors]
    stop = np.full(runs, -1)
    fp, fn = np.zeros(runs, dtype=np.int64), np.zeros(runs, dtype=np.int64)

    def split(_run, a, mid, b, xa, xb, ya, yb):  # the errors after row mid, drawn given those after rows a and b
        na, nm, nb = a // 2, mid // 2, b // 2
        xm = xa + rng.hypergeometric(xb - xa, nb - na - (xb - xa), nm - na)
        ym = ya + rng.hypergeometric(yb - ya, b - nb - a + na - (yb - ya), mid - nm - a + na)
        return xm, ym

    done, may = 0, lambda *counts: _may_hit(*counts, epsilon, delta, log_m, thr)
    exact = lambda t, x, y: _hits(t, x, y, may, epsilon, delta, priors, thr)  # noqa: E731
    while done < max_rows and (stop < 0).any():
        end = min(done + max(_CHUNK, done), max_rows)  # a chunk's errors are drawn first, its parts' only if needed
        live = np.flatnonzero(stop < 0)
        (n0, n1), (m0, m1) = _alternating(np.array([done, end]))
        xe, ye = fp[live] + rng.binomial(n1 - n0, fpr, live.size), fn[live] + rng.binomial(m1 - m0, fnr, live.size)
        stop[live] = _first_hits(done, end, fp[live], xe, fn[live], ye, split, may, exact)
        fp[live], fn[live], done = xe, ye, end
    rows = np.where(stop < 0, max_rows, stop)
    return {"mean": float(rows.mean()), "median": float(np.median(rows)), "q90": float(np.quantile(rows, 0.9)),
            "stopped": float(np.mean(stop >= 0))}


def _log_m_table(prior: SequentialPrior, size: int):
    """The prior's log M(k; n) for 0 <= k <= n < size as the compiled box limit reads it: per component the log
    weight less log B(a, b), whether it is a point mass at 0, and tables of lgamma(a + j), lgamma(b + j),
    lgamma(a + b + j) (equal to ``log_predictive`` to ~1e-10)."""
    j = np.arange(size)
    log_w = np.array([math.log(w) - (0.0 if a is None else _lbeta(a, b)) for w, a, b in prior.components])
    point = np.array([a is None for _, a, _ in prior.components])
    table = np.zeros((len(prior.components), 3, size))
    for c, (_, a, b) in enumerate(prior.components):
        if a is not None:
            table[c] = special.gammaln(a + j), special.gammaln(b + j), special.gammaln(a + b + j)
    return log_w, point, table


def _box_bound(x, n, y, m, k, delta, log_m):
    """Upper limit on log E on any path from counts (x[0], n[0], y[0], m[0]) to (x[1], n[1], y[1], m[1]).

    For P in N, log M(x; n) M(y; m) - log L_P >= log E, each side's part convex in (x, n) (a log of an integral of
    exponentials linear in them): its largest value is at a corner of the box (+inf where it leaves x <= n). P: on
    S1, S2 the maximiser's closed form at delta 0 at the start's counts (any point serves), and the MLE if inside N.
    Compiled (:mod:`epsaudit.bounds._sequential_kernel`).
    """
    ends = np.broadcast_arrays(x[0], x[1], n[0], n[1], y[0], y[1], m[0], m[1])
    shape = ends[0].shape
    ends = [np.ascontiguousarray(v, dtype=np.int64).ravel() for v in ends]
    return _load_kernels().box_bounds(*ends, float(k), float(delta), *log_m[0], *log_m[1]).reshape(shape)


def _may_hit(a, b, xa, xb, ya, yb, epsilon, delta, log_m, thr):
    """Whether a run's log E may reach ``thr`` in rows (a, b], from its errors after rows a and b (False: it cannot)."""
    n, m = _alternating(np.stack(np.broadcast_arrays(a, b, xa)[:2]))
    k = math.exp(epsilon)
    # the fewest errors per row on the path inside N: so is every count on it, and there E <= 1
    p, q = xa / np.maximum(n[1], 1), ya / np.maximum(m[1], 1)
    inside = (1 - q < (k * p + delta) * (1 - 1e-9)) & (1 - p < (k * q + delta) * (1 - 1e-9)) & (thr > 1e-6)
    bound = _box_bound((xa, xb), n, (ya, yb), m, k, delta, log_m)
    return ~inside & ~(bound < thr - 1e-6 - 1e-8 * (n[1] + m[1]))


def _hits(t, x, y, may, epsilon, delta, prior, thr):
    """Whether log E >= thr at rows t with errors x, y: :func:`sequential_log_evalue`, once per distinct count, where
    the limit at the point (``may``) does not rule it out."""
    hit = may(t, t, x, x, y, y)
    if not hit.any():
        return hit
    t, x, y = t[hit], x[hit], y[hit]
    key = (t * (x.max(initial=0) + 1) + x) * (y.max(initial=0) + 1) + y
    _, once, where = np.unique(key, return_index=True, return_inverse=True)
    neg, pos = _alternating(t[once])
    hit[hit] = (sequential_log_evalue(x[once], neg, y[once], pos, epsilon, delta, prior) >= thr)[where]
    return hit


def _first_hits(a, b, xa, xb, ya, yb, split, may, exact):
    """First row in (a, b] at which each run's log E reaches the threshold (-1 if none), from its errors after a, b.

    A span of rows is dropped when it starts at or after a hit found (``exact(t, x, y)``, asked at b and every middle
    row drawn) or cannot hold one (``may``, for spans wider than ``_LEAF``); others are halved, ``split`` giving the
    errors after the middle row, down to single rows.
    """
    none = np.iinfo(np.int64).max
    first = np.where(exact(np.full(xb.size, b), xb, yb), b, none)
    run = np.arange(xb.size)
    a, b = np.full(run.size, a), np.full(run.size, b)
    while run.size:
        keep = a < first[run]
        wide = keep & (b - a > _LEAF)
        keep[wide] = may(a[wide], b[wide], xa[wide], xb[wide], ya[wide], yb[wide])
        run, a, b, xa, xb, ya, yb = (v[keep] for v in (run, a, b, xa, xb, ya, yb))
        s = b - a > 1
        if not s.any():
            break
        mid = (a[s] + b[s]) // 2
        xm, ym = split(run[s], a[s], mid, b[s], xa[s], xb[s], ya[s], yb[s])
        hit = exact(mid, xm, ym)
        np.minimum.at(first, run[s][hit], mid[hit])
        run = np.concatenate([run[~s], run[s], run[s]])
        a, b = np.concatenate([a[~s], a[s], mid]), np.concatenate([b[~s], mid, b[s]])
        xa, xb = np.concatenate([xa[~s], xa[s], xm]), np.concatenate([xb[~s], xm, xb[s]])
        ya, yb = np.concatenate([ya[~s], ya[s], ym]), np.concatenate([yb[~s], ym, yb[s]])
    return np.where(first == none, -1, first)


def fixed_size_power(n: int, epsilon: float, alpha: float, fpr: float, fnr: float, delta: float = 0.0,
                     runs: int = 2000, seed: int = 0) -> float:
    """Probability that the fixed-size joint certificate at ``n + n`` rows certifies ``epsilon`` at these rates.

    ``FP ~ Bin(n, fpr)``, ``FN ~ Bin(n, fnr)`` drawn ``runs`` times (seeded); each draw is decided on
    :func:`epsaudit.bounds.joint_epsilon`, which falls in each count, so one answer decides many draws
    (about half as many bounds as drawn FP and FN counts).

    Parameters
    ----------
    n : int
        Rows per side.
    epsilon, alpha, fpr, fnr : float
        The target, the certificate's error level and the test's error rates on rows of B and of A.
    delta : float, default=0.0
    runs : int, default=2000
    seed : int, default=0

    Returns
    -------
    float
        In [0, 1] (exactly 1 or 0 when both rates are 0).

    Raises
    ------
    ValueError
        If ``runs`` is below 1.

    See Also
    --------
    epsaudit.bounds.required_test_size, epsaudit.bounds.planned_epsilon : the fixed size planned at expected rates.
    epsaudit.bounds.joint_epsilon, sequential_stopping_rows : the certificate; the anytime-valid one's cost.

    Examples
    --------
    >>> fixed_size_power(31, 3.0, 0.05, 0.0, 0.0)
    1.0
    >>> round(fixed_size_power(31, 3.0, 0.05, 0.02, 0.02, runs=500), 2)
    0.32
    """
    if runs < 1:
        raise ValueError(f"runs (simulated fixed-size tests) must be at least 1, got {runs}")
    rng = generator(seed, "fixed-plan-power", n, fpr, fnr)
    x, y = rng.binomial(n, fpr, runs), rng.binomial(n, fnr, runs)
    xs, at = np.unique(x, return_inverse=True)
    drawn = [np.unique(y[at == i]) for i in range(xs.size)]  # the FN counts drawn with each FP count
    top = np.full(xs.size, -1)  # per FP count: the largest drawn FN count that certifies (or -1)

    def certifies(fp, fn):
        return float(joint_epsilon(int(fp), n, int(fn), n, alpha, delta)) >= epsilon

    # the certified counts are a lower set (the certificate falls in each count): an FN count that certifies
    # at one FP count certifies at every smaller one, and one that does not fails at every larger one. So the
    # FP counts are taken middle first, each asked only about its drawn FN counts its neighbours leave open.
    if not certifies(xs[0], y.min()):  # the fewest errors drawn fail: so does every draw
        return 0.0
    if certifies(xs[-1], y.max()):  # the most errors drawn certify: so does every draw
        return 1.0
    spans = [(0, xs.size, -1, n + 1)]  # FP counts [i, j): FN counts <= low certify, >= high do not
    while spans:
        i, j, low, high = spans.pop()
        if i >= j:
            continue
        m = (i + j) // 2
        ys = drawn[m]
        open_ = ys[(ys > low) & (ys < high)]
        a, b = -1, open_.size  # open_[a] certifies (or a = -1), open_[b] does not (or b = size)
        while b - a > 1:
            mid = (a + b) // 2
            a, b = (mid, b) if certifies(xs[m], open_[mid]) else (a, mid)
        yes = max(low, int(open_[a]) if a >= 0 else -1)
        no = min(high, int(open_[b]) if b < open_.size else high)
        top[m] = ys[ys <= yes].max(initial=-1)
        spans += [(i, m, yes, high), (m + 1, j, low, no)]
    return float(np.mean(y <= top[at]))
