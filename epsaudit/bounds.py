"""Closed-form bounds: Clopper-Pearson, ROC operating point -> epsilon, TV/MMD -> epsilon, and the
analytic Gaussian mechanism.

Pure functions over counts and scores, vectorised with numpy (SPEC sections 2 and 3).
"""

from __future__ import annotations

import numpy as np
from scipy import optimize, special, stats

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
    """
    k, n, alpha = _check_counts(k, n, alpha, round_down=True)
    safe_k = np.where(k > 0, k, 1.0)
    out = np.where(k > 0, stats.beta.ppf(alpha, safe_k, n - k + 1), 0.0)
    return out[()] if out.ndim == 0 else out


def clopper_pearson_upper(k, n, alpha):
    """One-sided Clopper-Pearson upper confidence bound on a binomial proportion.

    ``P(p <= bound) >= 1 - alpha``. Non-integer counts are rounded *up* (conservative).
    Parameters, returns and errors as in :func:`clopper_pearson_lower`; the bound is 1 where
    ``k == n``.
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
    """Epsilon implied by ROC operating points (paper 000, Eq. 15; SPEC section 2).

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
    """
    tpr = np.asarray(tpr, dtype=np.float64)
    fpr = np.asarray(fpr, dtype=np.float64)
    return np.maximum(_log_ratio(tpr - delta, fpr), _log_ratio(1.0 - fpr - delta, 1.0 - tpr))


def certified_epsilon(tp, n_pos, fp, n_neg, alpha, delta: float = 1e-5):
    """Reserved-test lower confidence bound on epsilon from test counts at a fixed threshold.

    ``eps_LB = max(0, log((TPR_lo - delta) / FPR_hi), log((TNR_lo - delta) / FNR_hi))`` with
    one-sided Clopper-Pearson bounds at level ``alpha`` each (SPEC section 2; paper 001 Tables 3
    and 7). Since ``TNR_lo = 1 - FPR_hi`` and ``FNR_hi = 1 - TPR_lo``, only two one-sided bounds
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
    ``alpha = 1e-4`` with ``delta = 1e-5`` (paper 001, Tables 3 and 7).
    """
    return float(certified_epsilon(n_pos, n_pos, 0, n_neg, alpha, delta))


def bonferroni_alpha(n_certificates: int, confidence: float = 0.95, bounds_per_certificate: int = 2) -> float:
    """Per-bound level so that ``n_certificates`` certificates hold together at ``confidence``.

    ``(1 - confidence) / (bounds_per_certificate * n_certificates)`` (SPEC section 2).

    Raises
    ------
    ValueError
        If ``n_certificates < 1`` or ``confidence`` is outside (0, 1).
    """
    if int(n_certificates) != n_certificates or int(n_certificates) < 1:
        raise ValueError(f"n_certificates must be an integer >= 1, got {n_certificates}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    return (1.0 - confidence) / (bounds_per_certificate * int(n_certificates))


# ---------------------------------------------------------------------------------------------
# Total variation / MMD -> epsilon
# ---------------------------------------------------------------------------------------------


def epsilon_from_tv(tv):
    """Pure-DP epsilon implied by a total-variation distance: ``TV <= tanh(eps/2)`` inverted.

    Returns ``2 artanh(tv)``; ``+inf`` at ``tv = 1``.

    Raises
    ------
    ValueError
        If ``tv`` is outside [0, 1] or NaN.
    """
    tv = np.asarray(tv, dtype=np.float64)
    if np.any(~((tv >= 0) & (tv <= 1))):  # also refuses NaN
        raise ValueError(f"a total-variation distance lies in [0, 1]; got {tv}")
    with np.errstate(divide="ignore"):
        out = 2.0 * np.arctanh(tv)
    return out[()] if out.ndim == 0 else out


def epsilon_from_mmd_tv_chain(mmd):
    """MMD-TV route: ``TV >= MMD/2`` for a kernel with ``k(x, x) <= 1``, so ``eps >= 2 artanh(MMD/2)``.

    Paper 000, Eq. 14 (Lemma 1 and Theorem 1).
    """
    return epsilon_from_tv(np.clip(np.asarray(mmd, dtype=np.float64), 0.0, None) / 2.0)


def epsilon_from_mmd_hockey_stick(mmd):
    """Hockey-stick form (Gonzalez et al.; paper 000): ``eps >= 2 artanh(MMD / sqrt(2))`` at delta 0.

    Valid for kernels with ``0 <= k <= 1``; ``+inf`` when ``MMD >= sqrt(2)``.
    """
    # MMD <= sqrt(2) for a kernel in [0, 1]; clip rounding excess
    return epsilon_from_tv(np.clip(np.asarray(mmd, dtype=np.float64) / np.sqrt(2.0), 0.0, 1.0))


# ---------------------------------------------------------------------------------------------
# Analytic Gaussian mechanism (Balle & Wang 2018)
# ---------------------------------------------------------------------------------------------


def gaussian_delta(epsilon, mu):
    """Tight delta of the Gaussian mechanism with standardised separation ``mu = D / sigma``.

    ``delta(eps) = Phi(mu/2 - eps/mu) - exp(eps) Phi(-mu/2 - eps/mu)`` (Balle & Wang 2018,
    Theorem 8), evaluated in log space for stability. ``mu = 0`` gives 0.

    Parameters
    ----------
    epsilon : array_like, >= 0
    mu : array_like, >= 0
        ``||mu_A - mu_B||_2 / sigma`` (or the Mahalanobis distance for anisotropic noise).
    """
    eps = np.asarray(epsilon, dtype=np.float64)
    mu = np.asarray(mu, dtype=np.float64)
    safe = np.where(mu > 0, mu, 1.0)
    first = special.ndtr(safe / 2 - eps / safe)
    second = np.exp(eps + special.log_ndtr(-safe / 2 - eps / safe))
    out = np.where(mu > 0, np.maximum(first - second, 0.0), 0.0)
    return out[()] if out.ndim == 0 else out


def gaussian_epsilon(mu, delta: float = 1e-5):
    """Exact epsilon(delta) of the Gaussian mechanism with standardised separation ``mu``.

    The smallest ``eps >= 0`` with ``gaussian_delta(eps, mu) <= delta``, by Brent root finding
    (SPEC section 3). Returns 0 when ``gaussian_delta(0, mu) <= delta``.

    Parameters
    ----------
    mu : float or array_like, >= 0
    delta : float in (0, 1)

    Returns
    -------
    float or numpy.ndarray

    Raises
    ------
    ValueError
        If ``delta`` is outside (0, 1) or ``mu`` is negative or not finite.
    """
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be in (0, 1), got {delta}")
    mu_arr = np.asarray(mu, dtype=np.float64)
    if np.any(~np.isfinite(mu_arr)) or np.any(mu_arr < 0):
        raise ValueError("mu must be finite and >= 0")
    out = np.empty(mu_arr.shape)
    for idx, m in np.ndenumerate(mu_arr):
        if gaussian_delta(0.0, m) <= delta:
            out[idx] = 0.0
            continue
        hi = 1.0
        while gaussian_delta(hi, m) > delta:
            hi *= 2.0
        out[idx] = optimize.brentq(lambda e: gaussian_delta(e, m) - delta, 0.0, hi, xtol=1e-12, rtol=1e-12)
    return out[()] if out.ndim == 0 else out


def gaussian_mu_for_epsilon(epsilon: float, delta: float = 1e-5) -> float:
    """Standardised separation ``mu`` at which the Gaussian mechanism has exactly ``epsilon(delta)``.

    Used to calibrate the noise: ``sigma = D_max / mu``. Inverse of :func:`gaussian_epsilon`.

    Raises
    ------
    ValueError
        If ``epsilon <= 0`` or ``delta`` outside (0, 1).
    """
    if not (np.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"epsilon must be finite and > 0 to calibrate, got {epsilon}")
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be in (0, 1), got {delta}")
    hi = 1.0
    while gaussian_delta(epsilon, hi) < delta:
        hi *= 2.0
    return float(optimize.brentq(lambda m: gaussian_delta(epsilon, m) - delta, 1e-12, hi, xtol=1e-13, rtol=1e-13))
