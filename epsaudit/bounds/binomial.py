"""Clopper-Pearson bounds, the reserved-test certificate from test counts, its cap and the sample-size planner.

The certificate is the reserved-test bound of *Picture the Epsilon* (Section IV-C; Tables 3 and 7),
built on the hypothesis-testing view of differential privacy (Kairouz, Oh & Viswanath 2015).
"""

from __future__ import annotations

import numpy as np
from scipy import stats

# ---------------------------------------------------------------------------------------------
# Clopper-Pearson
# ---------------------------------------------------------------------------------------------


def clopper_pearson_lower(k, n, alpha):
    """One-sided Clopper-Pearson lower confidence bound on a binomial proportion.

    ``P(p >= bound) >= 1 - alpha`` for ``k ~ Binomial(n, p)``. Equal to the lower end of
    ``scipy.stats.binomtest(k, n, alternative="greater").proportion_ci(1 - alpha)``.

    Parameters
    ----------
    k : array_like of int
        Successes, ``0 <= k <= n``. Non-integer counts are rounded *down* (conservative).
    n : array_like of int
        Trials, ``n >= 1``.
    alpha : float or array_like
        One-sided error level in (0, 1).

    Returns
    -------
    numpy.ndarray or float
        Bound in [0, 1]; 0 where ``k == 0``.

    Raises
    ------
    ValueError
        If ``n < 1``, ``k`` outside ``[0, n]`` or ``alpha`` outside (0, 1).

    Examples
    --------
    >>> round(float(clopper_pearson_lower(30, 30, 0.05)), 6)  # 0.05 ** (1 / 30)
    0.904966
    >>> float(clopper_pearson_lower(0, 30, 0.05))
    0.0
    """
    k, n, alpha = _check_counts(k, n, alpha, round_down=True)
    safe_k = np.where(k > 0, k, 1.0)
    out = np.where(k > 0, stats.beta.ppf(alpha, safe_k, n - k + 1), 0.0)
    return out[()] if out.ndim == 0 else out


def clopper_pearson_upper(k, n, alpha):
    """One-sided Clopper-Pearson upper confidence bound on a binomial proportion.

    ``P(p <= bound) >= 1 - alpha``. Non-integer counts are rounded *up* (conservative).

    Parameters
    ----------
    k : array_like of int
        Successes, ``0 <= k <= n``.
    n : array_like of int
        Trials, ``n >= 1``.
    alpha : float or array_like
        One-sided error level in (0, 1).

    Returns
    -------
    numpy.ndarray or float
        Bound in [0, 1]; 1 where ``k == n``.

    Raises
    ------
    ValueError
        If ``n < 1``, ``k`` outside ``[0, n]`` or ``alpha`` outside (0, 1).

    Examples
    --------
    >>> round(float(clopper_pearson_upper(0, 30, 0.05)), 6)  # 1 - 0.05 ** (1 / 30)
    0.095034
    """
    k, n, alpha = _check_counts(k, n, alpha, round_down=False)
    safe_nk = np.where(k < n, n - k, 1.0)
    out = np.where(k < n, stats.beta.isf(alpha, k + 1, safe_nk), 1.0)
    return out[()] if out.ndim == 0 else out


def _check_counts(k, n, alpha, *, round_down: bool):
    k = np.asarray(k, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    alpha = np.asarray(alpha, dtype=np.float64)
    k = np.floor(k + 1e-9) if round_down else np.ceil(k - 1e-9)
    if np.any(n < 1):
        raise ValueError(f"trials n must be >= 1, got {n.min():g}")
    if np.any((k < 0) | (k > n)):
        raise ValueError("counts k must satisfy 0 <= k <= n")
    if np.any(~((alpha > 0) & (alpha < 1))):  # also refuses NaN
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if np.any(~np.isfinite(k)) or np.any(~np.isfinite(n)):
        raise ValueError("counts k and n must be finite")
    return np.broadcast_arrays(k, n, alpha)


# ---------------------------------------------------------------------------------------------
# Hypothesis-testing view of DP (Kairouz, Oh & Viswanath 2015)
# ---------------------------------------------------------------------------------------------


def _log_ratio(num, den):
    """log(num / den) with the DP conventions: -inf if num <= 0, +inf if num > 0 and den == 0."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(num) - np.log(den)
    out = np.where(num <= 0, -np.inf, out)
    return out


def roc_point_epsilon(tpr, fpr, delta: float = 0.0):
    """Epsilon implied by ROC operating points (*Picture the Epsilon*, Eq. 15).

    ``max(log((TPR - delta) / FPR), log((1 - FPR - delta) / (1 - TPR)))`` per point, with the
    conventions that a term is ``-inf`` when its numerator is <= 0 and ``+inf`` when the numerator
    is positive and the denominator zero. So a point with FPR = 0 and TPR > delta, or TPR = 1 and
    FPR < 1 - delta, gives ``+inf``.

    Parameters
    ----------
    tpr, fpr : array_like, same shape
        True- and false-positive rates in [0, 1].
    delta : float
        The delta of (epsilon, delta)-DP; 0 for pure DP.

    Returns
    -------
    numpy.ndarray
        Epsilon per operating point (may be ``+inf``; ``-inf`` where neither term has evidence).

    Examples
    --------
    >>> roc_point_epsilon([0.8, 0.5, 0.5], [0.1, 0.0, 0.5]).round(4)
    array([2.0794,    inf, 0.    ])
    """
    tpr = np.asarray(tpr, dtype=np.float64)
    fpr = np.asarray(fpr, dtype=np.float64)
    return np.maximum(_log_ratio(tpr - delta, fpr), _log_ratio(1.0 - fpr - delta, 1.0 - tpr))


def certified_epsilon(tp, n_pos, fp, n_neg, alpha, delta: float = 1e-5):
    """Reserved-test lower confidence bound on epsilon from test counts at a fixed threshold.

    ``eps_LB = max(0, log((TPR_lo - delta) / FPR_hi), log((TNR_lo - delta) / FNR_hi))`` with
    one-sided Clopper-Pearson bounds at level ``alpha`` each (*Picture the Epsilon*, Section IV-C,
    Tables 3 and 7). Since ``TNR_lo = 1 - FPR_hi`` and ``FNR_hi = 1 - TPR_lo``, only two one-sided bounds
    are involved, so a set of ``m`` certificates reported together uses ``alpha = 0.05 / (2 m)``.

    Parameters
    ----------
    tp : array_like of int
        Positives (class A test rows) scored above the threshold.
    n_pos : array_like of int
        Number of positive test rows.
    fp : array_like of int
        Negatives (class B test rows) scored above the threshold.
    n_neg : array_like of int
        Number of negative test rows.
    alpha : float
        Level of each one-sided bound.
    delta : float
        The delta of (epsilon, delta)-DP.

    Returns
    -------
    numpy.ndarray or float
        Certified epsilon >= 0, always finite (zero errors give the finite cap).

    Raises
    ------
    ValueError
        If ``delta`` is outside [0, 1), a count is not finite or outside ``[0, n]``, or ``alpha``
        is outside (0, 1).

    Examples
    --------
    >>> round(float(certified_epsilon(30, 30, 0, 30, 0.05 / 80)), 3)  # zero errors: the cap
    1.277
    >>> float(certified_epsilon(15, 30, 15, 30, 0.025))
    0.0
    """
    if not 0.0 <= delta < 1.0:
        raise ValueError(f"delta must be in [0, 1), got {delta}")
    if np.any(~np.isfinite(np.asarray(tp, dtype=float))) or np.any(~np.isfinite(np.asarray(fp, dtype=float))):
        raise ValueError("counts tp and fp must be finite")
    tpr_lo = clopper_pearson_lower(tp, n_pos, alpha)
    fpr_hi = clopper_pearson_upper(fp, n_neg, alpha)
    # Mirrored pair: TNR_lo = 1 - FPR_hi and FNR_hi = 1 - TPR_lo (exactly, by symmetry of CP).
    eps = np.maximum(_log_ratio(tpr_lo - delta, fpr_hi), _log_ratio(1.0 - fpr_hi - delta, 1.0 - tpr_lo))
    out = np.maximum(eps, 0.0)
    return out[()] if np.ndim(out) == 0 else out


def certifiable_cap(n_pos: int, n_neg: int, alpha: float, delta: float = 1e-5) -> float:
    """Largest epsilon a reserved test of this size can certify (zero errors in both classes).

    E.g. 1.277 at ``n = 30`` per class and ``alpha = 0.05/80``; 2.338 at ``n = 100`` and
    ``alpha = 1e-4`` with ``delta = 1e-5`` (*Picture the Epsilon*, Tables 3 and 7).

    Parameters
    ----------
    n_pos, n_neg : int
        Test rows of the two identities.
    alpha : float
        Level of each one-sided bound.
    delta : float

    Returns
    -------
    float

    Examples
    --------
    >>> round(certifiable_cap(100, 100, 1e-4), 3)
    2.338
    """
    return float(certified_epsilon(n_pos, n_pos, 0, n_neg, alpha, delta))


def bonferroni_alpha(n_certificates: int, confidence: float = 0.95, bounds_per_certificate: int = 2) -> float:
    """Per-bound level so that ``n_certificates`` certificates hold together at ``confidence``.

    ``(1 - confidence) / (bounds_per_certificate * n_certificates)``: the union bound over the
    two one-sided bounds of each reserved-test certificate.

    Parameters
    ----------
    n_certificates : int, >= 1
    confidence : float in (0, 1)
    bounds_per_certificate : int

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``n_certificates < 1`` or ``confidence`` is outside (0, 1).

    Examples
    --------
    >>> round(bonferroni_alpha(40), 12)
    0.000625
    """
    if int(n_certificates) != n_certificates or int(n_certificates) < 1:
        raise ValueError(f"n_certificates must be an integer >= 1, got {n_certificates}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    return (1.0 - confidence) / (bounds_per_certificate * int(n_certificates))


# ---------------------------------------------------------------------------------------------
# Sample-size planner: the inverse of the cap
# ---------------------------------------------------------------------------------------------

_MAX_TEST_SIZE = 10**9


def planned_epsilon(n: int, alpha: float, delta: float = 1e-5, tpr: float = 1.0, fpr: float = 0.0) -> float:
    """What a reserved test with ``n`` test rows per identity certifies when it sees the expected counts.

    The counts are the expected ones, rounded against the certificate: ``tp = floor(tpr * n)``
    true positives and ``fp = ceil(fpr * n)`` false positives. With ``tpr = 1, fpr = 0`` (perfect
    separation) this is :func:`certifiable_cap`.

    Parameters
    ----------
    n : int
        Test rows per identity (both sides).
    alpha : float
        Level of each one-sided bound (after the multiplicity correction).
    delta : float
    tpr, fpr : float in [0, 1]
        The test's true- and false-positive rates on the population.

    Returns
    -------
    float
        Certified epsilon, >= 0.

    Examples
    --------
    >>> round(planned_epsilon(100, 1e-4), 3)
    2.338
    >>> planned_epsilon(100, 1e-4) == certifiable_cap(100, 100, 1e-4)
    True
    """
    tp = np.floor(tpr * n + 1e-9)
    fp = np.ceil(fpr * n - 1e-9)
    return float(certified_epsilon(tp, n, fp, n, alpha, delta))


def required_test_size(epsilon: float, alpha: float, delta: float = 1e-5, tpr: float = 1.0, fpr: float = 0.0) -> int:
    """Smallest test size per identity at which a reserved test can certify ``epsilon``.

    The inverse of :func:`planned_epsilon` in ``n``: the smallest ``n`` with
    ``planned_epsilon(n, ...) >= epsilon`` (and, for ``tpr < 1`` or ``fpr > 0``, at every larger
    ``n`` up to twice it, so a lucky rounding does not count). ``epsilon = 0`` asks for the
    smallest test that can certify anything at all (a bound above 0).

    Parameters
    ----------
    epsilon : float, >= 0
        Target lower bound.
    alpha : float
        Level of each one-sided bound (e.g. :func:`bonferroni_alpha` of the family).
    delta : float
    tpr, fpr : float
        The test's population rates (default: perfect separation).

    Returns
    -------
    int
        Test rows per identity.

    Raises
    ------
    ValueError
        If ``epsilon`` is negative, the rates are outside [0, 1], or the target is out of reach
        at any size: the limit ``max(log((tpr - delta) / fpr), log((1 - fpr - delta) / (1 - tpr)))``
        is at most ``epsilon`` (the message gives the limit).

    Examples
    --------
    >>> required_test_size(2.338, 1e-4)
    100
    >>> required_test_size(0.0, bonferroni_alpha(40))  # the smallest test that can certify anything
    11
    """
    if not (np.isfinite(epsilon) and epsilon >= 0):
        raise ValueError(f"epsilon must be a finite number >= 0, got {epsilon}")
    for name, rate in (("tpr", tpr), ("fpr", fpr)):
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"{name} must be in [0, 1], got {rate}")
    limit = float(np.max(roc_point_epsilon(np.array([tpr]), np.array([fpr]), delta)))
    if limit <= epsilon:
        most = f"at most {limit:.4g}" if limit > 0 else "nothing (TPR - delta does not exceed FPR)"
        raise ValueError(f"a test with TPR {tpr:g} and FPR {fpr:g} certifies {most} at delta {delta:g}, "
                         f"whatever its size; epsilon {epsilon:g} is out of reach")

    def reaches(n: int) -> bool:
        return planned_epsilon(n, alpha, delta, tpr, fpr) > epsilon if epsilon == 0 else \
            planned_epsilon(n, alpha, delta, tpr, fpr) >= epsilon

    high = 1
    while not reaches(high):
        high *= 2
        if high > _MAX_TEST_SIZE:
            raise ValueError(f"epsilon {epsilon:g} needs more than {_MAX_TEST_SIZE:,} test rows per identity")
    low = high // 2  # reaches(low) is False (or low = 0)
    while high - low > 1:  # the perfect-separation cap grows with n; rounding makes the general case near-monotone
        mid = (low + high) // 2
        low, high = (low, mid) if reaches(mid) else (mid, high)
    if tpr < 1.0 or fpr > 0.0:
        while not all(reaches(m) for m in range(high, 2 * high + 1, max(1, high // 50))):
            high += 1
    return high
