"""Clopper-Pearson bounds, the reserved-test certificate from test counts, its cap and the sample-size planner.

A reserved-test certificate turns the counts of one fixed test on untouched test rows into a lower
confidence bound on epsilon, through the hypothesis-testing view of differential privacy (Kairouz,
Oh & Viswanath 2015). Two bounds are offered, chosen by ``bound=``:

* ``"joint"`` (the default): the exact joint test of both error rates against the DP null region
  (:func:`epsaudit.bounds.joint_epsilon`), at least as large at every outcome;
* ``"clopper-pearson"``: the paper's split bound (*Picture the Epsilon*, Section IV-C; Tables 3 and 7),
  two one-sided Clopper-Pearson bounds at ``alpha / 2`` each.

Everywhere here ``alpha`` is the error level of *one certificate*; a family of ``K`` certificates
reported together at 95% uses ``alpha = 0.05 / K`` (:func:`bonferroni_alpha`).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from .joint import log_clopper_pearson_upper, joint_epsilon

from ..results import BOUNDS, DEFAULT_BOUND


def check_bound(bound: str) -> str:
    """The bound's name, checked.

    Parameters
    ----------
    bound : {"joint", "clopper-pearson"}

    Returns
    -------
    str

    Raises
    ------
    ValueError
        If ``bound`` is not one of :data:`BOUNDS`.

    See Also
    --------
    certified_epsilon : the certificate whose ``bound=`` it checks.
    correction_label, bound_level : what a certificate of each bound records.

    Examples
    --------
    >>> check_bound("joint")
    'joint'
    """
    if bound not in BOUNDS:
        raise ValueError(f"bound must be one of {', '.join(map(repr, BOUNDS))}, got {bound!r}")
    return bound


def correction_label(n_certificates: int, bound: str = DEFAULT_BOUND) -> str:
    """Text of the multiplicity correction a family of reserved-test certificates records.

    Parameters
    ----------
    n_certificates : int
        Certificates reported together (the Bonferroni family size).
    bound : {"joint", "clopper-pearson"}, default="joint"
        One joint test per certificate, or the paper's two one-sided bounds per certificate.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        If ``bound`` is unknown.

    See Also
    --------
    bonferroni_alpha : the error level of each certificate of the family.
    bound_level : the level of each test a certificate is made of.
    epsaudit.audits.reserved_test_pairs : a family of certificates that records it.

    Examples
    --------
    >>> correction_label(40)
    'bonferroni: 1 joint test x 40 certificate(s)'
    >>> correction_label(40, "clopper-pearson")
    'bonferroni: 2 one-sided Clopper-Pearson bounds x 40 certificate(s)'
    """
    if check_bound(bound) == "joint":
        return f"bonferroni: 1 joint test x {n_certificates} certificate(s)"
    return f"bonferroni: 2 one-sided Clopper-Pearson bounds x {n_certificates} certificate(s)"


def bound_level(alpha, bound: str = DEFAULT_BOUND):
    """Level of each test a certificate at error level ``alpha`` is made of.

    The joint certificate is one test at ``alpha``; the split Clopper-Pearson certificate is two
    one-sided bounds at ``alpha / 2`` each (what results record as ``alpha_per_bound``).

    Parameters
    ----------
    alpha : float
        Error level of the certificate.
    bound : {"joint", "clopper-pearson"}, default="joint"

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``bound`` is unknown.

    See Also
    --------
    bonferroni_alpha : the certificate's level ``alpha`` of a family.
    correction_label : the family's correction as results record it.
    clopper_pearson_epsilon : the split certificate, two one-sided bounds at ``alpha / 2``.

    Examples
    --------
    >>> bound_level(0.05), bound_level(0.05, "clopper-pearson")
    (0.05, 0.025)
    """
    return alpha if check_bound(bound) == "joint" else alpha / 2

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

    See Also
    --------
    clopper_pearson_upper : the upper bound (non-integer counts rounded up).
    clopper_pearson_epsilon : the paper's split certificate, made of a lower and an upper bound.
    epsaudit.sniper.sniper_bound : DP-Sniper's certificate, from a lower and an upper bound.

    Examples
    --------
    >>> round(float(clopper_pearson_lower(30, 30, 0.05)), 6)  # 0.05 ** (1 / 30)
    0.904966
    >>> float(clopper_pearson_lower(0, 30, 0.05))
    0.0

    Accurate at tiny levels (``alpha ** (1 / 30)``):

    >>> f"{clopper_pearson_lower(30, 30, 1e-200):.6e}"
    '2.154435e-07'
    """
    k, n, alpha = _check_counts(k, n, alpha, round_down=True)
    safe_k = np.where(k > 0, k, 1.0)
    # the beta quantile at alpha itself (not at 1 - alpha): tiny levels keep their relative accuracy
    out = np.where(k > 0, special.betaincinv(safe_k, n - k + 1, alpha), 0.0)
    return float(out) if out.ndim == 0 else out


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

    See Also
    --------
    clopper_pearson_lower : the lower bound (non-integer counts rounded down).
    clopper_pearson_epsilon : the paper's split certificate, the upper bounds on both error rates.
    epsaudit.audits.tradeoff_band : upper limits on both error rates at every threshold (``method="bonferroni"``).

    Examples
    --------
    >>> round(float(clopper_pearson_upper(0, 30, 0.05)), 6)  # 1 - 0.05 ** (1 / 30)
    0.095034
    >>> f"{1 - clopper_pearson_upper(0, 30, 1e-20):.6e}"  # 1e-20 ** (1 / 30), not 0
    '2.154435e-01'
    """
    k, n, alpha = _check_counts(k, n, alpha, round_down=False)
    safe_nk = np.where(k < n, n - k, 1.0)
    # the upper-tail beta quantile at alpha (not the lower one at 1 - alpha, which rounds to 1)
    out = np.where(k < n, special.betainccinv(k + 1, safe_nk, alpha), 1.0)
    return float(out) if out.ndim == 0 else out


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
    delta : float, default=0.0
        The delta of (epsilon, delta)-DP; 0 for pure DP.

    Returns
    -------
    numpy.ndarray
        Epsilon per operating point (may be ``+inf``; ``-inf`` where neither term has evidence).

    See Also
    --------
    clopper_pearson_epsilon : the same formula at confidence limits of the rates, a certificate.
    epsaudit.bounds.tradeoff_epsilon : the same inequality at upper limits of both error rates, clipped at 0.
    required_test_size : refuses targets at or above it (the certificate's limit as the test grows).
    epsaudit.audits.roc_oof_epsilon : the out-of-fold ROC estimate, the largest value over a curve's points.

    Examples
    --------
    >>> roc_point_epsilon([0.8, 0.5, 0.5], [0.1, 0.0, 0.5]).round(4)
    array([2.0794,    inf, 0.    ])
    """
    tpr = np.asarray(tpr, dtype=np.float64)
    fpr = np.asarray(fpr, dtype=np.float64)
    return np.maximum(_log_ratio(tpr - delta, fpr), _log_ratio(1.0 - fpr - delta, 1.0 - tpr))


def clopper_pearson_epsilon(fp, n_neg, fn, n_pos, alpha, delta: float = 1e-5):
    """The paper's split certificate: two one-sided Clopper-Pearson bounds at ``alpha / 2`` each.

    ``eps_LB = max(0, log((TPR_lo - delta) / FPR_hi), log((TNR_lo - delta) / FNR_hi))`` with
    ``TPR_lo`` and ``FPR_hi`` one-sided Clopper-Pearson bounds at level ``alpha / 2`` (*Picture the
    Epsilon*, Section IV-C, Tables 3 and 7). Since ``TNR_lo = 1 - FPR_hi`` and
    ``FNR_hi = 1 - TPR_lo``, only two one-sided bounds are involved; the certificate holds with
    probability at least ``1 - alpha``.

    Counts come in the order every bound of :mod:`epsaudit.bounds` uses: the errors on identity B's
    test rows, then the errors on identity A's (``fp`` of ``n_neg``, ``fn`` of ``n_pos``).

    Parameters
    ----------
    fp : array_like of int
        False positives: negatives (identity B's test rows) the test says are A; fractional counts
        round up (against the certificate).
    n_neg : array_like of int
        Number of negative test rows.
    fn : array_like of int
        False negatives: positives (identity A's test rows) the test says are B; fractional counts
        round up.
    n_pos : array_like of int
        Number of positive test rows.
    alpha : float
        Error level of the certificate (each one-sided bound at ``alpha / 2``).
    delta : float, default=1e-5
        The delta of (epsilon, delta)-DP.

    Returns
    -------
    numpy.ndarray or float
        Certified epsilon >= 0, always finite (zero errors give the finite cap); a Python float for
        scalar inputs. Computed in log space, each bound and its complement from the beta quantile
        of its own tail, so tiny levels keep their relative accuracy.

    Raises
    ------
    ValueError
        If ``delta`` is outside [0, 1), a count is not finite or outside ``[0, n]``, or ``alpha``
        is outside (0, 1).

    See Also
    --------
    epsaudit.bounds.joint_epsilon : the exact joint bound on the same counts, never below this one.
    certified_epsilon : chooses between the two (``bound=``).
    epsaudit.bounds.sequential_epsilon : the anytime-valid bound for rows that arrive one at a time.
    clopper_pearson_lower, clopper_pearson_upper : the one-sided bounds it is made of.
    epsaudit.audits.reserved_test_certificate : the reserved-test route, which certifies with it at
        ``bound="clopper-pearson"``.

    Examples
    --------
    >>> round(float(clopper_pearson_epsilon(0, 30, 0, 30, 0.05 / 40)), 3)  # zero errors: Table 3's cap
    1.277
    >>> float(clopper_pearson_epsilon(15, 30, 15, 30, 0.05))
    0.0
    >>> round(clopper_pearson_epsilon(0, 100, 0, 100, 1e-16, 0.0), 4)  # logit((0.5e-16) ** (1 / 100))
    0.7864
    """
    if not 0.0 <= delta < 1.0:
        raise ValueError(f"delta must be in [0, 1), got {delta}")
    if np.any(~np.isfinite(np.asarray(fp, dtype=float))) or np.any(~np.isfinite(np.asarray(fn, dtype=float))):
        raise ValueError("counts fp and fn must be finite")
    half = np.asarray(alpha, dtype=np.float64) / 2
    fn, n_pos, _ = _check_counts(fn, n_pos, half, round_down=False)
    fp, n_neg, half = _check_counts(fp, n_neg, half, round_down=False)
    fp, n_neg, fn, n_pos, half = np.broadcast_arrays(fp, n_neg, fn, n_pos, half)
    # In log space, each bound and its complement from the beta quantile of its own tail:
    # u = FPR_hi, v = FNR_hi = 1 - TPR_lo (and TNR_lo = 1 - u), so the two terms are
    # log((1 - v - delta) / u) and log((1 - u - delta) / v).
    log_u, log_1mu = log_clopper_pearson_upper(fp, n_neg, half)
    log_v, log_1mv = log_clopper_pearson_upper(fn, n_pos, half)
    with np.errstate(divide="ignore", invalid="ignore"):
        if delta == 0:
            first, second = log_1mv - log_u, log_1mu - log_v
        else:
            first = np.log(np.exp(log_1mv) - delta) - log_u
            second = np.log(np.exp(log_1mu) - delta) - log_v
    eps = np.fmax(np.nan_to_num(first, nan=-np.inf), np.nan_to_num(second, nan=-np.inf))
    out = np.maximum(eps, 0.0)
    return float(out) if np.ndim(out) == 0 else out


def certified_epsilon(fp, n_neg, fn, n_pos, alpha, delta: float = 1e-5, *, bound: str = DEFAULT_BOUND):
    """Reserved-test lower confidence bound on epsilon from test counts at a fixed threshold.

    ``bound="joint"`` (default): :func:`epsaudit.bounds.joint_epsilon`, the exact joint test of
    both error rates; ``bound="clopper-pearson"``: :func:`clopper_pearson_epsilon`, the paper's
    split bound (*Picture the Epsilon*, Section IV-C). The joint bound is at least the split one on
    every outcome.

    Counts come in the order every bound of :mod:`epsaudit.bounds` uses: the errors on identity B's
    test rows, then the errors on identity A's (``fp`` of ``n_neg``, ``fn`` of ``n_pos``).

    Parameters
    ----------
    fp : array_like of int
        False positives: negatives (identity B's test rows) the test says are A.
    n_neg : array_like of int
        Number of negative test rows.
    fn : array_like of int
        False negatives: positives (identity A's test rows) the test says are B.
    n_pos : array_like of int
        Number of positive test rows.
    alpha : float
        Error level of this certificate (after the family's correction, :func:`bonferroni_alpha`).
    delta : float, default=1e-5
        The delta of (epsilon, delta)-DP.
    bound : {"joint", "clopper-pearson"}, default="joint"

    Returns
    -------
    numpy.ndarray or float
        Certified epsilon >= 0, finite.

    Raises
    ------
    ValueError
        If a count is outside ``[0, n]`` or not finite, ``alpha`` is outside (0, 1), ``delta``
        outside [0, 1), or ``bound`` unknown.

    See Also
    --------
    epsaudit.bounds.joint_epsilon : the default bound (``bound="joint"``), never below the split one.
    clopper_pearson_epsilon : the paper's split bound (``bound="clopper-pearson"``).
    epsaudit.bounds.sequential_epsilon : the anytime-valid bound for rows that arrive one at a time.
    certifiable_cap : its value at zero errors, the most a test of this size can certify.
    epsaudit.audits.reserved_test_certificate : the reserved-test route, which certifies with it.

    Examples
    --------
    Zero errors at 100 + 100 rows, 95%:

    >>> round(float(certified_epsilon(0, 100, 0, 100, 0.05, 0.0)), 3)
    4.194
    >>> round(float(certified_epsilon(0, 100, 0, 100, 0.05, 0.0, bound="clopper-pearson")), 3)
    3.281
    """
    if check_bound(bound) == "clopper-pearson":
        return clopper_pearson_epsilon(fp, n_neg, fn, n_pos, alpha, delta)
    return joint_epsilon(fp, n_neg, fn, n_pos, alpha, delta)


def certifiable_cap(n_neg: int, n_pos: int, alpha: float, delta: float = 1e-5, *, bound: str = DEFAULT_BOUND) -> float:
    """Largest epsilon a reserved test of this size can certify (zero errors in both classes).

    E.g. with the paper's split bound 1.277 at ``n = 30`` per class and a family of 40 at 95%
    (``alpha = 0.05 / 40``), and 2.338 at ``n = 100`` with a family of 250 (``alpha = 2e-4``,
    ``delta = 1e-5``; *Picture the Epsilon*, Tables 3 and 7); the joint certificate's caps are
    larger (4.194 against 3.281 at 100 + 100 rows, 95%, pure DP).

    Parameters
    ----------
    n_neg, n_pos : int
        Test rows of identity B and of identity A (the order of every bound; the cap is symmetric).
    alpha : float
        Error level of the certificate.
    delta : float, default=1e-5
    bound : {"joint", "clopper-pearson"}, default="joint"

    Returns
    -------
    float

    Raises
    ------
    ValueError
        As :func:`certified_epsilon`.

    See Also
    --------
    required_test_size : the test size at which a target is reached (the planner inverts the cap).
    planned_epsilon : the certificate at expected counts; the cap at perfect separation.
    certified_epsilon : the certificate at any counts.
    epsaudit.bounds.zero_error_stopping_row : the anytime-valid certificate's rows until zero errors reach a target.
    epsaudit.audits.reserved_test_certificate : records each certificate's cap (``statistics.cap``).

    Examples
    --------
    >>> round(certifiable_cap(100, 100, 2e-4, bound="clopper-pearson"), 3)
    2.338
    >>> round(certifiable_cap(100, 100, 2e-4), 3)
    3.135
    """
    return float(certified_epsilon(0, n_neg, 0, n_pos, alpha, delta, bound=bound))


def bonferroni_alpha(n_certificates: int, confidence: float = 0.95) -> float:
    """Error level of each certificate so that ``n_certificates`` of them hold together at ``confidence``.

    ``(1 - confidence) / n_certificates`` (the union bound over the family). The joint certificate
    is one test at this level; the split Clopper-Pearson certificate spends half of it on each of
    its two one-sided bounds (:func:`bound_level`).

    Parameters
    ----------
    n_certificates : int, >= 1
    confidence : float in (0, 1), default=0.95

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``n_certificates`` is not an integer >= 1 or ``confidence`` is outside (0, 1).

    See Also
    --------
    correction_label : the family's correction as results record it.
    bound_level : the level of each test a certificate at this level is made of.
    epsaudit.audits.reserved_test_pairs : a family of reserved-test certificates at this level.

    Examples
    --------
    >>> round(bonferroni_alpha(40), 12)
    0.00125
    """
    if int(n_certificates) != n_certificates or int(n_certificates) < 1:
        raise ValueError(f"n_certificates must be an integer >= 1, got {n_certificates}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    return (1.0 - confidence) / int(n_certificates)


# ---------------------------------------------------------------------------------------------
# Sample-size planner: the inverse of the cap
# ---------------------------------------------------------------------------------------------

_MAX_TEST_SIZE = 10**9


def planned_epsilon(n: int, alpha: float, delta: float = 1e-5, tpr: float = 1.0, fpr: float = 0.0, *,
                    bound: str = DEFAULT_BOUND) -> float:
    """What a reserved test with ``n`` test rows per identity certifies when it sees the expected counts.

    The counts are the expected ones, rounded against the certificate: ``fp = ceil(fpr * n)``
    false positives among the ``n`` rows of B and ``fn = n - floor(tpr * n)`` false negatives among
    the ``n`` rows of A, the counts :func:`certified_epsilon` takes in its order ``(fp, n, fn, n)``.
    With ``tpr = 1, fpr = 0`` (perfect separation) this is :func:`certifiable_cap`.

    Parameters
    ----------
    n : int, >= 0
        Test rows per identity (both sides); 0 rows certify nothing (0.0).
    alpha : float
        Error level of the certificate (after the multiplicity correction).
    delta : float, default=1e-5
    tpr : float in [0, 1], default=1.0
        The test's true-positive rate on the population (rows of A).
    fpr : float in [0, 1], default=0.0
        The test's false-positive rate on the population (rows of B).
    bound : {"joint", "clopper-pearson"}, default="joint"

    Returns
    -------
    float
        Certified epsilon, >= 0.

    Raises
    ------
    ValueError
        As :func:`certified_epsilon`.

    See Also
    --------
    certifiable_cap : its value at perfect separation (``tpr = 1, fpr = 0``).
    required_test_size : the planner that inverts it: the size at which it reaches a target.
    certified_epsilon : the certificate at observed counts.
    epsaudit.bounds.fixed_size_power : the probability that the joint certificate at this size reaches a target
        when the counts are drawn, not expected.
    epsaudit.bounds.zero_error_stopping_row : the anytime-valid certificate's rows until zero errors reach a target.
    epsaudit.bounds.sequential_stopping_rows : the anytime-valid certificate's rows at given error rates.

    Examples
    --------
    >>> round(planned_epsilon(100, 2e-4, bound="clopper-pearson"), 3)
    2.338
    >>> planned_epsilon(100, 2e-4) == certifiable_cap(100, 100, 2e-4)
    True
    >>> planned_epsilon(0, 0.5)  # no test rows: nothing to certify
    0.0
    """
    if int(n) != n or n < 0:
        raise ValueError(f"test rows per identity n must be an integer >= 0, got {n}")
    if n == 0:
        check_bound(bound)
        return 0.0
    tp = np.floor(tpr * n + 1e-9)
    fp = np.ceil(fpr * n - 1e-9)
    return float(certified_epsilon(fp, n, n - tp, n, alpha, delta, bound=bound))


# Over 80 lines only through its docstring (the promise, every option, two examples); the body is short.
def required_test_size(epsilon: float, alpha: float, delta: float = 1e-5, tpr: float = 1.0, fpr: float = 0.0, *,
                       bound: str = DEFAULT_BOUND) -> int:
    """Test rows per identity from which a reserved test certifies ``epsilon`` at the expected counts.

    The promise: every test size from the returned ``n`` to ``2 n`` certifies at least ``epsilon``
    (more than 0 when ``epsilon = 0``) at its expected counts (:func:`planned_epsilon`), and
    ``n - 1`` rows do not. The expected counts are rounded to integers, so the certificate is not
    monotone in the size when ``tpr < 1`` or ``fpr > 0``: up to :data:`PROMISE_CHECKS` sizes
    (``n <= 200``) every size of that range is checked; above, a grid of that many sizes from
    ``n`` to ``2 n`` (:func:`promise_sizes`), where the rounding moves the certificate by a
    fraction of a count. With perfect separation (the default) the certificate grows with the
    size, so every size from ``n`` on certifies ``epsilon``.

    Parameters
    ----------
    epsilon : float, >= 0
        Target lower bound.
    alpha : float
        Error level of the certificate (e.g. :func:`bonferroni_alpha` of the family).
    delta : float, default=1e-5
    tpr : float, default=1.0
        The test's true-positive rate on the population (default: perfect separation).
    fpr : float, default=0.0
        The test's false-positive rate on the population.
    bound : {"joint", "clopper-pearson"}, default="joint"

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

    See Also
    --------
    planned_epsilon : what a given size certifies at the expected counts (the function it inverts).
    certifiable_cap : the largest value a given size can certify.
    promise_sizes : the sizes of the promised range it checks.
    epsaudit.bounds.zero_error_stopping_row : the anytime-valid certificate's rows until zero errors reach a target.
    epsaudit.bounds.sequential_stopping_rows : the anytime-valid certificate's rows at given error rates.
    epsaudit.bounds.fixed_size_power : the power of the planned fixed-size test when the rates are off.

    Examples
    --------
    Certifying epsilon = 3 with one certificate at 95% and zero errors:

    >>> required_test_size(3.0, 0.05, 0.0), required_test_size(3.0, 0.05, 0.0, bound="clopper-pearson")
    (31, 76)
    >>> required_test_size(0.0, bonferroni_alpha(40), bound="clopper-pearson")  # the smallest test that can certify anything
    11
    """
    check_bound(bound)
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
        # The joint bound is at least the split one at delta = 0, and (checked) while delta * n is small
        # against |log(alpha / 2)| (the joint module's notes): there, where the split bound reaches, so
        # does the joint one. Elsewhere the joint bound itself decides.
        shortcut = bound == "clopper-pearson" or delta * n <= 0.1 * abs(np.log(alpha / 2))
        for b in dict.fromkeys(("clopper-pearson", bound) if shortcut else (bound,)):
            value = planned_epsilon(n, alpha, delta, tpr, fpr, bound=b)
            if (value > 0 if epsilon == 0 else value >= epsilon):
                return True
        return False

    high = 1
    while not reaches(high):
        high *= 2
        if high > _MAX_TEST_SIZE:
            raise ValueError(f"epsilon {epsilon:g} needs more than {_MAX_TEST_SIZE:,} test rows per identity")
    low = high // 2  # reaches(low) is False (or low = 0)
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if reaches(mid) else (mid, high)
    if tpr == 1.0 and fpr == 0.0:
        return int(high)  # the zero-error certificate grows with the size
    n = high  # reaches(n - 1) is False
    while True:
        short = next((int(m) for m in promise_sizes(n) if not reaches(int(m))), None)
        if short is None:
            return int(n)
        n = short + 1  # a size in the promised range falls short: the answer starts after it
        while not reaches(n):
            n += 1


#: Sizes :func:`required_test_size` checks in its promised range ``n .. 2 n`` (all of them up to n = 200).
PROMISE_CHECKS = 201


def promise_sizes(n: int) -> np.ndarray:
    """The test sizes in ``n .. 2 n`` that :func:`required_test_size` checks: all, or an even grid.

    Parameters
    ----------
    n : int, >= 1

    Returns
    -------
    numpy.ndarray of int
        Sorted, from ``n`` to ``2 n``: every size when there are at most :data:`PROMISE_CHECKS`,
        else that many evenly spaced sizes.

    See Also
    --------
    required_test_size : the planner whose promise these sizes check.

    Examples
    --------
    >>> promise_sizes(3)
    array([3, 4, 5, 6])
    >>> sizes = promise_sizes(10_000); len(sizes), int(sizes[0]), int(sizes[1]), int(sizes[-1])
    (201, 10000, 10050, 20000)
    """
    if n + 1 <= PROMISE_CHECKS:
        return np.arange(n, 2 * n + 1)
    return np.unique(np.round(np.linspace(n, 2 * n, PROMISE_CHECKS)).astype(int))
