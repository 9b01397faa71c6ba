"""The analytic Gaussian mechanism (Balle & Wang 2018, Theorem 8): exact epsilon(delta) of a Gaussian pair.

``delta(eps) = Phi(mu/2 - eps/mu) - exp(eps) Phi(-mu/2 - eps/mu)`` at standardised separation ``mu = D / sigma``
(``||mu_A - mu_B||_2 / sigma``, or the Mahalanobis distance for anisotropic noise).
"""

from __future__ import annotations

import numpy as np
from scipy import special


def _brentq(*args, **kwargs):
    from scipy.optimize import brentq  # loaded on first use: the command line stays quick to start

    return brentq(*args, **kwargs)


def _gaussian_delta(epsilon, mu):
    """Tight delta(eps) of the Gaussian mechanism at separation ``mu`` (the module's formula, in log space; 0 at
    ``mu = 0``)."""
    eps = np.asarray(epsilon, dtype=np.float64)
    mu = np.asarray(mu, dtype=np.float64)
    safe = np.where(mu > 0, mu, 1.0)
    first = special.ndtr(safe / 2 - eps / safe)
    second = np.exp(eps + special.log_ndtr(-safe / 2 - eps / safe))
    out = np.where(mu > 0, np.maximum(first - second, 0.0), 0.0)
    return out[()] if out.ndim == 0 else out


def gaussian_epsilon(mu, delta: float = 1e-5):
    """Exact epsilon(delta) of the Gaussian mechanism with standardised separation ``mu``.

    The smallest ``eps >= 0`` with ``delta(eps) <= delta`` (Brent root finding; Balle & Wang 2018, Theorem 8);
    0 when ``delta(0) <= delta``.

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
        if _gaussian_delta(0.0, m) <= delta:
            out[idx] = 0.0
            continue
        hi = 1.0
        while _gaussian_delta(hi, m) > delta:
            hi *= 2.0
        out[idx] = _brentq(lambda e: _gaussian_delta(e, m) - delta, 0.0, hi, xtol=1e-12, rtol=1e-12)
    return out[()] if out.ndim == 0 else out


def gaussian_mu_for_epsilon(epsilon: float, delta: float = 1e-5) -> float:
    """Standardised separation ``mu`` at which the Gaussian mechanism has exactly ``epsilon(delta)``.

    Calibrates the noise: ``sigma = D_max / mu``.

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
    while _gaussian_delta(epsilon, hi) < delta:
        hi *= 2.0
    return float(_brentq(lambda m: _gaussian_delta(epsilon, m) - delta, 1e-12, hi, xtol=1e-13, rtol=1e-13))
