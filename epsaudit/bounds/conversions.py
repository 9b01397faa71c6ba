"""From distinguishability to epsilon: total variation, MMD and trade-off curves (f-DP, Gaussian DP).

The MMD-TV chain is *Picture the Epsilon*, Eq. 14; trade-off curves follow Dong, Roth & Su 2022 (J. R. Stat.
Soc. B 84(1), Section 2). Definitions: the book's methods chapter, sections 'MMD-TV', 'Trade-off certificate' and
'MMD certificate'.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from .binomial import roc_point_epsilon


def _epsilon_from_tv(tv):
    """Pure-DP epsilon ``2 artanh(tv)`` implied by a total-variation distance (``TV <= tanh(eps/2)``)."""
    tv = np.asarray(tv, dtype=np.float64)
    if np.any(~((tv >= 0) & (tv <= 1))):  # also refuses NaN
        raise ValueError(f"a total-variation distance lies in [0, 1]; got {tv}")
    with np.errstate(divide="ignore"):
        out = 2.0 * np.arctanh(tv)
    return out[()] if out.ndim == 0 else out


def epsilon_from_mmd_tv_chain(mmd):
    """MMD-TV route: ``TV >= MMD/2`` for a kernel with ``k(x, x) <= 1``, so ``eps >= 2 artanh(MMD/2)``.

    *Picture the Epsilon*, Eq. 14 (Lemma 1 and Theorem 1).

    Parameters
    ----------
    mmd : array_like, >= 0 (negative values are clipped to 0)

    Returns
    -------
    numpy.ndarray or float

    Raises
    ------
    ValueError
        If ``mmd / 2`` exceeds 1 or is NaN.

    See Also
    --------
    epsilon_from_mmd_hockey_stick : the bound of Gonzalez et al., ``sqrt(2)`` instead of 2 (kernels in [0, 1]).

    Examples
    --------
    >>> round(float(epsilon_from_mmd_tv_chain(1.0)), 6)  # 2 artanh(0.5)
    1.098612
    """
    return _epsilon_from_tv(np.clip(np.asarray(mmd, dtype=np.float64), 0.0, None) / 2.0)


def epsilon_from_mmd_hockey_stick(mmd):
    """Hockey-stick form: ``eps >= 2 artanh(MMD / sqrt(2))`` at delta 0, for kernels with ``0 <= k <= 1``.

    The bound of Gonzalez et al. that *Picture the Epsilon* (Section III) compares with its MMD-TV route;
    ``+inf`` when ``MMD >= sqrt(2)``.

    Parameters
    ----------
    mmd : array_like, >= 0

    Returns
    -------
    numpy.ndarray or float

    Raises
    ------
    ValueError
        If ``mmd`` is NaN.

    See Also
    --------
    epsilon_from_mmd_tv_chain : the paper's MMD-TV route (``TV >= MMD / 2``).

    Examples
    --------
    >>> round(float(epsilon_from_mmd_hockey_stick(1.0)), 6), float(epsilon_from_mmd_hockey_stick(2.0))
    (1.762747, inf)
    """
    # MMD <= sqrt(2) for a kernel in [0, 1]; clip rounding excess
    return _epsilon_from_tv(np.clip(np.asarray(mmd, dtype=np.float64) / np.sqrt(2.0), 0.0, 1.0))


# Trade-off curves: both the (eps, delta)-DP and the mu-GDP curve are symmetric, so one formula per point
# covers both directions of the pair.


def _check_rates(fpr, fnr):
    fpr = np.asarray(fpr, dtype=np.float64)
    fnr = np.asarray(fnr, dtype=np.float64)
    if np.any(~((fpr >= 0) & (fpr <= 1))) or np.any(~((fnr >= 0) & (fnr <= 1))):  # also refuses NaN
        raise ValueError("error rates fpr and fnr must lie in [0, 1]")
    return fpr, fnr


def tradeoff_epsilon(fpr_upper, fnr_upper, delta=0.0):
    """Lower bound ``max(0, log((1 - delta - FNR) / FPR), log((1 - delta - FPR) / FNR))`` on epsilon at ``delta``.

    From a point on or above the trade-off curve, e.g. *upper* confidence limits of both error rates (Kairouz, Oh
    & Viswanath 2015; Dong, Roth & Su 2022, Section 2).

    Parameters
    ----------
    fpr_upper, fnr_upper : array_like, broadcastable, values in [0, 1]
        Error rates of one test (false-positive rate = type I, false-negative rate = type II).
    delta : float or array_like in [0, 1), broadcastable with the rates, default=0.0

    Returns
    -------
    numpy.ndarray or float
        Epsilon >= 0 in natural-log units; ``+inf`` when an error rate is 0 and the other below ``1 - delta``.

    Raises
    ------
    ValueError
        If a rate is outside [0, 1] or NaN, or ``delta`` outside [0, 1).

    See Also
    --------
    tradeoff_delta, tradeoff_mu : the same point's bound on delta and on the Gaussian-DP mu.

    Examples
    --------
    >>> round(float(tradeoff_epsilon(0.1, 0.2, 0.0)), 6)  # log(0.8 / 0.1)
    2.079442
    """
    fpr, fnr = _check_rates(fpr_upper, fnr_upper)
    delta = np.asarray(delta, dtype=np.float64)
    if np.any(~((delta >= 0) & (delta < 1))):
        raise ValueError(f"delta must be in [0, 1), got {delta}")
    out = np.maximum(roc_point_epsilon(1.0 - fnr, fpr, delta), 0.0)
    return out[()] if out.ndim == 0 else out


def tradeoff_delta(fpr_upper, fnr_upper, epsilon):
    """Lower bound ``max(0, 1 - FNR - e^eps FPR, 1 - FPR - e^eps FNR)`` on the privacy profile ``delta(eps)``.

    Parameters
    ----------
    fpr_upper, fnr_upper : array_like, broadcastable, values in [0, 1]
    epsilon : float or array_like, >= 0, broadcastable

    Returns
    -------
    numpy.ndarray or float
        Delta in [0, 1].

    Raises
    ------
    ValueError
        If a rate is outside [0, 1] or ``epsilon`` is negative or NaN.

    See Also
    --------
    epsaudit.audits.TradeoffCertificate.delta_lower : the largest value over a band's points.

    Examples
    --------
    >>> round(float(tradeoff_delta(0.1, 0.2, 1.0)), 6)  # 1 - 0.2 - e * 0.1
    0.528172
    """
    fpr, fnr = _check_rates(fpr_upper, fnr_upper)
    eps = np.asarray(epsilon, dtype=np.float64)
    if np.any(~(eps >= 0)):
        raise ValueError(f"epsilon must be >= 0, got {eps}")
    with np.errstate(over="ignore", invalid="ignore"):
        grow = np.exp(eps)
        first = np.where(fpr > 0, 1.0 - fnr - grow * fpr, 1.0 - fnr)
        second = np.where(fnr > 0, 1.0 - fpr - grow * fnr, 1.0 - fpr)
    out = np.maximum(np.maximum(first, second), 0.0)
    return out[()] if out.ndim == 0 else out


def gaussian_tradeoff(fpr, mu):
    """Trade-off function of mu-GDP: ``G_mu(a) = Phi(Phi^-1(1 - a) - mu)``.

    The smallest false-negative rate of any test at false-positive rate ``a`` between ``N(0, 1)`` and ``N(mu, 1)``
    (Dong, Roth & Su 2022, Section 2): the curve of the Gaussian mechanism with standardised separation ``mu``.

    Parameters
    ----------
    fpr : array_like, values in [0, 1]
    mu : float or array_like, >= 0 (``+inf`` allowed: the curve is then 0)

    Returns
    -------
    numpy.ndarray or float
        False-negative rate in [0, 1]; ``G_mu(0) = 1``, ``G_mu(1) = 0``, ``G_0(a) = 1 - a``.

    Raises
    ------
    ValueError
        If ``fpr`` is outside [0, 1] or ``mu`` is negative or NaN.

    See Also
    --------
    epsaudit.bounds.gaussian_epsilon : the (epsilon, delta) of the mechanism with this curve.

    Examples
    --------
    >>> round(float(gaussian_tradeoff(0.05, 1.0)), 6)  # Phi(1.644854 - 1)
    0.740489
    """
    fpr = np.asarray(fpr, dtype=np.float64)
    mu = np.asarray(mu, dtype=np.float64)
    if np.any(~((fpr >= 0) & (fpr <= 1))):
        raise ValueError("fpr must lie in [0, 1]")
    if np.any(~(mu >= 0)):
        raise ValueError(f"mu must be >= 0, got {mu}")
    with np.errstate(invalid="ignore"):
        out = special.ndtr(-special.ndtri(fpr) - mu)
    out = np.where(fpr >= 1, 0.0, np.where(fpr <= 0, np.where(np.isinf(mu), 0.0, 1.0), out))
    return out[()] if out.ndim == 0 else out


def tradeoff_mu(fpr_upper, fnr_upper):
    """Lower bound ``max(0, Phi^-1(1 - FPR) - Phi^-1(FNR))`` on the Gaussian-DP mu from a point on or above the curve.

    A mu-GDP pair has ``T >= G_mu``, and ``G_mu(FPR) <= FNR`` exactly when ``mu >= Phi^-1(1 - FPR) - Phi^-1(FNR)``
    (Dong, Roth & Su 2022, Section 2). Feed it *upper* confidence limits of both error rates.

    Parameters
    ----------
    fpr_upper, fnr_upper : array_like, broadcastable, values in [0, 1]

    Returns
    -------
    numpy.ndarray or float
        mu >= 0; 0 when ``FPR + FNR >= 1`` (no evidence); ``+inf`` when one rate is 0 and the sum is below 1.

    Raises
    ------
    ValueError
        If a rate is outside [0, 1] or NaN.

    See Also
    --------
    epsaudit.bounds.joint_mu : the exact joint certificate on mu from one test's counts.

    Examples
    --------
    >>> round(float(tradeoff_mu(0.05, 0.25)), 6)  # 1.644854 + 0.674490
    2.319343
    """
    fpr, fnr = _check_rates(fpr_upper, fnr_upper)
    with np.errstate(invalid="ignore"):
        mu = -special.ndtri(fpr) - special.ndtri(fnr)  # norm.isf(fpr) - norm.ppf(fnr)
    out = np.where(fpr + fnr >= 1.0, 0.0, np.maximum(mu, 0.0))
    return out[()] if out.ndim == 0 else out


def dkw_margin(n, alpha):
    """Margin ``sqrt(log(2 / alpha) / (2 n))`` of the Dvoretzky-Kiefer-Wolfowitz band with Massart's constant.

    ``P(sup_t |F_n(t) - F(t)| > e) <= alpha`` for the empirical distribution function of ``n`` iid draws of any
    distribution (Massart 1990, Ann. Probab. 18(3)); ties and atoms only make the band conservative.

    Parameters
    ----------
    n : array_like of int, >= 1
    alpha : float or array_like in (0, 1)
        Probability that the band fails somewhere.

    Returns
    -------
    numpy.ndarray or float
        Margin in (0, inf) (values >= 1 mean the band says nothing).

    Raises
    ------
    ValueError
        If ``n < 1`` or ``alpha`` outside (0, 1).

    See Also
    --------
    epsaudit.audits.tradeoff_band : the trade-off route's band, which uses it with ``method="dkw"``.

    Examples
    --------
    >>> round(float(dkw_margin(100, 0.025)), 6)  # sqrt(log(80) / 200)
    0.148021
    """
    n = np.asarray(n, dtype=np.float64)
    alpha = np.asarray(alpha, dtype=np.float64)
    if np.any(~(n >= 1)):
        raise ValueError(f"sample size n must be >= 1, got {n}")
    if np.any(~((alpha > 0) & (alpha < 1))):
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    out = np.sqrt(np.log(2.0 / alpha) / (2.0 * n))
    return out[()] if out.ndim == 0 else out


def mmd2_deviation(n_a, n_b, alpha, kernel_bound: float = 1.0):
    """One-sided deviation ``t = K sqrt(8 (1/m + 1/n) log(1/alpha))`` of the unbiased ``MMD_u^2`` (bounded kernel).

    ``P(MMD_u^2 - MMD^2 >= t) <= alpha`` for a fixed kernel valued in ``[0, K]`` (Gretton et al. 2012, JMLR 13,
    Eq. 3): McDiarmid with ``c_i = 4K/m`` (``4K/n`` for B). At ``m = n`` it equals their Theorem 10's Hoeffding
    bound at even ``m`` and is slightly smaller at odd ``m``.

    Parameters
    ----------
    n_a, n_b : array_like of int, >= 2
        Test rows of each identity.
    alpha : float or array_like in (0, 1)
    kernel_bound : float, > 0, default=1.0
        ``K``, the upper end of the kernel's range (1 for the RBF kernel).

    Returns
    -------
    numpy.ndarray or float
        The deviation ``t`` in units of ``MMD^2`` (``MMD^2 <= 2 K``).

    Raises
    ------
    ValueError
        If a sample size is below 2, ``alpha`` is outside (0, 1) or ``kernel_bound <= 0``.

    See Also
    --------
    tv_lower_from_mmd : the next link of the MMD certificate's chain.

    Examples
    --------
    >>> round(float(mmd2_deviation(100, 100, 0.05)), 6)  # sqrt(8 * 0.02 * log 20)
    0.692327
    """
    m = np.asarray(n_a, dtype=np.float64)
    n = np.asarray(n_b, dtype=np.float64)
    alpha = np.asarray(alpha, dtype=np.float64)
    if np.any(~(m >= 2)) or np.any(~(n >= 2)):
        raise ValueError("the unbiased MMD needs >= 2 rows per identity")
    if np.any(~((alpha > 0) & (alpha < 1))):
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if not (np.isfinite(kernel_bound) and kernel_bound > 0):
        raise ValueError(f"kernel_bound must be finite and > 0, got {kernel_bound}")
    out = kernel_bound * np.sqrt(8.0 * (1.0 / m + 1.0 / n) * np.log(1.0 / alpha))
    return out[()] if out.ndim == 0 else out


def tv_lower_from_mmd(mmd, link: str = "sqrt2"):
    """Lower bound on total variation from an MMD with a kernel valued in [0, 1].

    ``"sqrt2"``: ``TV >= MMD / sqrt(2)`` (Hahn decomposition ``P - Q = nu+ - nu-``, both of mass TV:
    ``MMD^2 = <nu+, k nu+> + <nu-, k nu-> - 2 <nu+, k nu-> <= 2 TV^2`` as ``0 <= k <= 1``), the hockey-stick bound
    of González et al.; ``"2"``: ``TV >= MMD / 2``, which needs only ``k(x, x) <= 1``, the MMD-TV route's chain.

    Parameters
    ----------
    mmd : array_like, >= 0
    link : {"sqrt2", "2"}, default="sqrt2"

    Returns
    -------
    numpy.ndarray or float
        TV lower bound, clipped to [0, 1].

    Raises
    ------
    ValueError
        If ``link`` is unknown or ``mmd`` is negative or NaN.

    See Also
    --------
    epsaudit.audits.mmd_certificate : the MMD certificate route, which uses it (``tv_link=``).

    Examples
    --------
    >>> round(float(tv_lower_from_mmd(0.5)), 6), float(tv_lower_from_mmd(0.5, link="2"))
    (0.353553, 0.25)
    """
    if link not in ("sqrt2", "2"):
        raise ValueError(f"link must be 'sqrt2' or '2', got {link!r}")
    mmd = np.asarray(mmd, dtype=np.float64)
    if np.any(~(mmd >= 0)):
        raise ValueError(f"an MMD is >= 0, got {mmd}")
    out = np.clip(mmd / (np.sqrt(2.0) if link == "sqrt2" else 2.0), 0.0, 1.0)
    return out[()] if out.ndim == 0 else out


def epsilon_from_tv_delta(tv, delta=0.0):
    """Lower bound ``max(0, log((1 + TV - 2 delta) / (1 - TV)))`` on epsilon at ``delta`` from one on total variation.

    An (epsilon, delta)-DP pair has ``TV <= (e^eps - 1 + 2 delta) / (e^eps + 1)`` (Kairouz, Oh & Viswanath 2015);
    at ``delta = 0`` this is ``2 artanh(TV)``.

    Parameters
    ----------
    tv : array_like in [0, 1]
    delta : float or array_like in [0, 1), broadcastable, default=0.0

    Returns
    -------
    numpy.ndarray or float
        Epsilon >= 0; ``+inf`` at ``tv = 1``.

    Raises
    ------
    ValueError
        If ``tv`` is outside [0, 1] or ``delta`` outside [0, 1).

    See Also
    --------
    epsaudit.audits.mmd_certificate : the MMD certificate route, which uses it for its epsilon curve.

    Examples
    --------
    >>> round(float(epsilon_from_tv_delta(0.5, 0.0)), 6)  # log 3 = 2 artanh(0.5)
    1.098612
    >>> round(float(epsilon_from_tv_delta(0.5, 0.1)), 6)  # log(1.3 / 0.5)
    0.955511
    """
    tv = np.asarray(tv, dtype=np.float64)
    delta = np.asarray(delta, dtype=np.float64)
    if np.any(~((tv >= 0) & (tv <= 1))):
        raise ValueError(f"a total-variation distance lies in [0, 1]; got {tv}")
    if np.any(~((delta >= 0) & (delta < 1))):
        raise ValueError(f"delta must be in [0, 1), got {delta}")
    with np.errstate(divide="ignore"):
        out = np.maximum(np.log(1.0 + tv - 2.0 * delta) - np.log1p(-tv), 0.0)
    out = np.where(tv >= 1.0, np.inf, out)
    return out[()] if out.ndim == 0 else out
