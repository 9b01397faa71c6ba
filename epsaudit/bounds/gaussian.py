"""The analytic Gaussian mechanism (Balle & Wang 2018): exact epsilon(delta) of a Gaussian pair."""

from __future__ import annotations

import numpy as np
from scipy import optimize, special

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

    Returns
    -------
    numpy.ndarray or float
        Delta in [0, 1].

    See Also
    --------
    gaussian_epsilon : its inverse in epsilon.
    gaussian_mu_for_epsilon : its inverse in mu.
    epsaudit.bounds.gaussian_tradeoff : the mechanism's whole trade-off curve (mu-GDP).
    epsaudit.bounds.tradeoff_delta : the delta one test's error rates rule out.

    Examples
    --------
    >>> round(float(gaussian_delta(1.0, 1.0)), 6), float(gaussian_delta(1.0, 0.0))
    (0.126937, 0.0)
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
    (Balle & Wang 2018, Theorem 8). Returns 0 when ``gaussian_delta(0, mu) <= delta``.

    Parameters
    ----------
    mu : float or array_like, >= 0
    delta : float in (0, 1), default=1e-5

    Returns
    -------
    float or numpy.ndarray

    Raises
    ------
    ValueError
        If ``delta`` is outside (0, 1) or ``mu`` is negative or not finite.

    See Also
    --------
    gaussian_delta : the privacy profile it inverts.
    gaussian_mu_for_epsilon : the inverse: the separation at a given epsilon.
    epsaudit.bounds.gaussian_tradeoff : the same mechanism's trade-off curve (mu-GDP).
    epsaudit.audits.gaussmech_epsilon : the paper's GaussMech diagnostic (the classical calibration formula,
        not this exact value).

    Examples
    --------
    >>> round(float(gaussian_epsilon(1.0, 1e-5)), 4)
    4.3772
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

    Parameters
    ----------
    epsilon : float, > 0
    delta : float in (0, 1), default=1e-5

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``epsilon <= 0`` or ``delta`` outside (0, 1).

    See Also
    --------
    gaussian_epsilon : the epsilon it inverts.
    gaussian_delta : the privacy profile at a given separation.
    epsaudit.mechanisms.calibrate : calibrates a Gaussian benchmark mechanism's noise with it.

    Examples
    --------
    >>> mu = gaussian_mu_for_epsilon(1.0, 1e-5)
    >>> round(mu, 4), round(float(gaussian_epsilon(mu, 1e-5)), 6)
    (0.2681, 1.0)
    """
    if not (np.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"epsilon must be finite and > 0 to calibrate, got {epsilon}")
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be in (0, 1), got {delta}")
    hi = 1.0
    while gaussian_delta(epsilon, hi) < delta:
        hi *= 2.0
    return float(optimize.brentq(lambda m: gaussian_delta(epsilon, m) - delta, 1e-12, hi, xtol=1e-13, rtol=1e-13))
