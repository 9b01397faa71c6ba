"""An anytime-valid lower confidence bound on epsilon from a fixed test's errors (an e-process).

A test (a rejection region "say A") is fixed on development rows; test rows then arrive one at a
time, each a row of identity B (a negative: a false positive when the test says A) or of A (a
positive: a false negative when it says B), the side chosen from the past alone. After ``x`` false
positives among ``n`` negatives and ``y`` false negatives among ``m`` positives,

    E(eps) = M(x; n) M(y; m) / sup_{(p, q) in N(eps, delta)} p^x (1-p)^(n-x) q^y (1-q)^(m-y)

with ``N(eps, delta) = {1 - q <= e^eps p + delta, 1 - p <= e^eps q + delta}`` the error rates an
(eps, delta)-DP pair allows and ``M(k; n)`` one side's prior-predictive probability of its error
sequence (a prior on the error rate fixed before the first row). For every ``(p0, q0)`` in the null,
``E <= M M / L(p0, q0)``, a nonnegative martingale starting at 1 whatever the side allocation, so by
Ville's inequality ``P(exists t: E_t(eps) >= 1 / alpha) <= alpha`` (sequential universal inference).
``N`` grows with ``eps``, so ``E`` is non-increasing in ``eps``, and the running bound

    LB_t = max over looks s <= t of sup {eps >= 0 : E_s(eps) >= 1 / alpha}

exceeds the truth with probability at most ``alpha`` at any stopping time (stop at a target, when a
claim is refuted, at a budget, or resume later).

The supremum. If the maximum-likelihood rates ``(x/n, y/m)`` lie in ``N`` it is there and ``E <= 1``.
Otherwise it lies on the lower boundary: ``S1 = {q = 1 - delta - e^eps p, 0 <= p <= c}`` and its
mirror ``S2``, meeting at the corner ``c = (1 - delta) / (1 + e^eps)``; the log-likelihood is concave
along each. At ``delta = 0`` its stationary point on ``S1`` is the smaller root of
``k (A+B+C) p^2 - (A (1+k) + B + C k) p + A``, ``k = e^eps``, ``A = x + m - y``, ``B = n - x``,
``C = y``, clipped to ``[0, c]`` (``S2`` by symmetry); with ``delta > 0`` a safeguarded Newton
iteration on the concave function finds it. Either way the value used is the tangent-line upper
limit ``l(p) + max(l'(p) (c - p), -l'(p) p)``, never below the supremum, so rounding can only lower
``E``. The corner alone is least favourable only for balanced counts: dividing by the corner's
likelihood alone is invalid (under the null point ``(p, q) = (0, 1)``, a test that always says B,
it grows without bound).

Priors (power only, never validity): ``"J"`` Beta(1/2, 1/2); ``"B"`` Beta(0.1, 1), small error
rates (the default without a plan); ``"Z"`` 0.9 point mass at 0 + 0.1 J (perfect separation);
``"P:r"`` Beta(0.5 + 50 r, 0.5 + 50 (1 - r)) for a planned error rate ``r``; ``"H:r"`` half B, half
P (at most log 2 behind the better; the default with a plan). A pair ``(prior of the negatives'
errors, prior of the positives' errors)`` gives each side its own.

References: Ville (1939), *Etude critique de la notion de collectif*; Wasserman, Ramdas &
Balakrishnan (2020), "Universal inference", PNAS; Waudby-Smith & Ramdas (2024), "Estimating means
of bounded random variables by betting", JRSS-B. Definitions: the book's methods chapter.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass

import numpy as np
from scipy import special

__all__ = ["SEQUENTIAL_BOUND", "PRIORS", "SequentialPrior", "sequential_prior", "sequential_log_evalue",
           "sequential_evalue", "sequential_epsilon", "worst_pair_sequential", "zero_error_sequential_epsilon"]

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

    Examples
    --------
    >>> sequential_prior("Z").components
    ((0.9, None, None), (0.1, 0.5, 0.5))
    >>> round(float(sequential_prior("B").log_predictive(0, 10)), 4)  # log B(0.1, 11) / B(0.1, 1)
    -0.2855
    """

    name: str
    components: tuple

    def log_predictive(self, k, n):
        """log M(k; n): the prior-predictive log-probability of one sequence with ``k`` errors in ``n`` rows.

        Parameters
        ----------
        k, n : array_like of int
            Errors and rows of one side (broadcast).

        Returns
        -------
        numpy.ndarray or float
            ``log sum_j w_j B(a_j + k, b_j + n - k) / B(a_j, b_j)`` (a point mass at 0: ``log w_j``
            when ``k = 0``); ``0`` at ``n = 0``.

        Examples
        --------
        >>> round(float(sequential_prior("J").log_predictive(1, 2)), 4)  # B(1.5, 1.5) / B(0.5, 0.5) = 1/8
        -2.0794
        """
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
        """:meth:`log_predictive` of one count with :mod:`math` only (the certificate's per-row path).

        Examples
        --------
        >>> p = sequential_prior("H:0.02")
        >>> abs(p.scalar(3, 40) - float(p.log_predictive(3, 40))) < 1e-12
        True
        """
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
        """SHA-256 of the prior's components (what a certificate records before its first row).

        Examples
        --------
        >>> len(sequential_prior("B").digest())
        64
        """
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


# ---------------------------------------------------------------------------------------------
# The supremum of the likelihood over the null region (vectorised)
# ---------------------------------------------------------------------------------------------


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
    epsilon, delta : array_like
        The null region ``N(epsilon, delta)``; ``epsilon`` in [0, 700], ``delta`` in [0, 1).
    prior : str, SequentialPrior or pair of them

    Returns
    -------
    numpy.ndarray or float
        Natural log of the e-value.

    Raises
    ------
    ValueError
        Counts outside ``[0, n]``, ``epsilon`` or ``delta`` out of range, an unknown prior.

    Examples
    --------
    >>> round(float(sequential_log_evalue(0, 10, 0, 10, 1.0)), 4)
    5.6942
    """
    fp, n_neg, fn, n_pos, eps, delta = _check(fp, n_neg, fn, n_pos, epsilon, delta)
    neg, pos = _priors(prior)
    out = neg.log_predictive(fp, n_neg) + pos.log_predictive(fn, n_pos) - _log_sup(fp, n_neg, fn, n_pos, eps, delta)
    out = out - 1e-12 * (1 + np.abs(out))  # rounding against the certificate
    return out[()] if np.ndim(out) == 0 else out


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
    """E(epsilon): the sequential certificate's e-value of the null ``N(epsilon, delta)`` at given counts.

    ``M(fp; n_neg) M(fn; n_pos) / sup_{N(epsilon, delta)} L(p, q)``, with the supremum in closed
    form (an upper limit, so rounding lowers ``E``). Large values are evidence that the pair is not
    (epsilon, delta)-DP: ``P(E_t >= 1 / alpha for some t) <= alpha`` under the null (Ville).

    Parameters
    ----------
    fp : array_like of int
        False positives: rows of identity B (negatives) the fixed test calls A.
    n_neg : array_like of int, >= 0
        Negatives tested so far.
    fn : array_like of int
        False negatives: rows of A (positives) the test calls B.
    n_pos : array_like of int, >= 0
        Positives tested so far.
    epsilon : array_like, in [0, 700]
    delta : array_like, in [0, 1)
    prior : str, SequentialPrior or pair of them
        Fixed before the first row (:func:`sequential_prior`); default ``"B"``.

    Returns
    -------
    numpy.ndarray or float
        The e-value, >= 0 (the broadcast shape). Non-increasing in ``epsilon``.

    Raises
    ------
    ValueError
        As :func:`sequential_log_evalue`.

    See Also
    --------
    sequential_epsilon : the bound it gives.
    epsaudit.bounds.joint_epsilon : the fixed-size exact joint certificate.
    epsaudit.bounds.clopper_pearson_epsilon : the paper's split bound.

    References
    ----------
    Ville (1939), *Etude critique de la notion de collectif* (the maximal inequality);
    Wasserman, Ramdas & Balakrishnan (2020), "Universal inference", PNAS 117(29) (the split
    likelihood ratio and its sequential form, with a prior-predictive numerator).

    Examples
    --------
    Zero errors in 10 + 10 rows, prior B: ``M(0; 10)^2 / sigmoid(1)^20``.

    >>> round(float(sequential_evalue(0, 10, 0, 10, 1.0)), 2)
    297.14
    >>> float(sequential_evalue(0, 50, 50, 50, 3.0)) <= 1  # the null point (0, 1): no evidence
    True
    """
    return np.exp(sequential_log_evalue(fp, n_neg, fn, n_pos, epsilon, delta, prior))


def sequential_epsilon(fp, n_neg, fn, n_pos, alpha, delta=0.0, prior="B"):
    """The anytime-valid bound of a path that looks only at these counts: ``sup {eps : E(eps) >= 1 / alpha}``.

    The running certificate (:class:`epsaudit.bounds.SequentialCertificate`) reports the maximum of
    this over its looks; each value alone is also valid at any stopping time.

    Parameters
    ----------
    fp, n_neg, fn, n_pos : array_like of int
        Test counts (see :func:`sequential_evalue`).
    alpha : float in (0, 1)
        Error level (a family of K pairs: ``alpha / K`` each).
    delta : float in [0, 1)
    prior : str, SequentialPrior or pair of them

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
    epsaudit.bounds.clopper_pearson_epsilon : the paper's split bound.

    Notes
    -----
    Zero errors in ``n + n`` rows at ``delta = 0``: ``logit((alpha M(0; n)^2)^(1 / 2n))``, the fixed-size
    formula with ``alpha`` shrunk by ``M(0; n)^2`` (:func:`zero_error_sequential_epsilon`). The bound
    is found by bisection on the e-value (non-increasing in epsilon), vectorised over the counts.

    References
    ----------
    Ville (1939), *Etude critique de la notion de collectif*; Wasserman, Ramdas & Balakrishnan
    (2020), "Universal inference", PNAS 117(29); Waudby-Smith & Ramdas (2024), "Estimating means of
    bounded random variables by betting", JRSS-B 86(1) (anytime-valid confidence sequences).

    Examples
    --------
    >>> round(float(sequential_epsilon(0, 100, 0, 100, 0.05)), 3)
    3.898
    >>> round(float(zero_error_sequential_epsilon(100, 0.05)), 3)
    3.898
    >>> sequential_epsilon([0, 2, 50], 100, [0, 2, 50], 100, 0.05).round(3)
    array([3.898, 2.411, 0.   ])
    """
    if not 0.0 < float(alpha) < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    fp, n_neg, fn, n_pos, _, delta = _check(fp, n_neg, fn, n_pos, 0.0, delta)
    out = _solve(lambda e, idx: sequential_log_evalue(fp[idx], n_neg[idx], fn[idx], n_pos[idx], e, delta[idx], prior),
                 fp.shape, -math.log(alpha))
    return out[()] if out.ndim == 0 else out


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
    prior : str or SequentialPrior

    Returns
    -------
    float or numpy.ndarray
        0 where it would be negative.

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

    The average of the pairs' e-processes is an e-process for the intersection null (every pair
    (eps, delta)-DP), so this lower-bounds the largest pairwise epsilon at level ``alpha`` (no
    division by K), under any adaptive allocation of rows across pairs; it is at least the largest
    per-pair bound at ``alpha / K``.

    Parameters
    ----------
    fp, n_neg, fn, n_pos : array_like of int, shape (K,)
        Each pair's counts.
    alpha : float in (0, 1)
        Family-wise error level.
    delta : float
    prior : str, SequentialPrior or pair of them

    Returns
    -------
    float

    Raises
    ------
    ValueError
        As :func:`sequential_epsilon`.

    See Also
    --------
    sequential_epsilon : one pair.

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
