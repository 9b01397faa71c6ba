"""Clopper-Pearson bounds, the reserved-test certificate from test counts, its cap and the sample-size planner.

``bound=`` chooses ``"joint"`` (default, :func:`epsaudit.bounds.joint_epsilon`) or the paper's split
``"clopper-pearson"`` (*Picture the Epsilon*, Section IV-C, Tables 3 and 7; Kairouz, Oh & Viswanath 2015). ``alpha`` is
one certificate's error level (a family of ``K`` at 95%: ``0.05 / K``). Definitions: the book's methods chapter,
sections 'ROC-HT on reserved test data' and 'Sample sizes'.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

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
    bound : {"joint", "clopper-pearson"}, default="joint"

    Returns
    -------
    str

    Raises
    ------
    ValueError
        If ``bound`` is unknown.

    See Also
    --------
    bonferroni_alpha, bound_level : the levels of the family's certificates and of their tests.

    Examples
    --------
    >>> correction_label(40, "clopper-pearson")
    'bonferroni: 2 one-sided Clopper-Pearson bounds x 40 certificate(s)'
    """
    if check_bound(bound) == "joint":
        return f"bonferroni: 1 joint test x {n_certificates} certificate(s)"
    return f"bonferroni: 2 one-sided Clopper-Pearson bounds x {n_certificates} certificate(s)"


def bound_level(alpha, bound: str = DEFAULT_BOUND):
    """Level of each test a certificate is made of: ``alpha`` (one joint test) or ``alpha / 2`` (split bound).

    Parameters
    ----------
    alpha : float
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
    bonferroni_alpha : the certificate's level ``alpha`` in a family.

    Examples
    --------
    >>> bound_level(0.05), bound_level(0.05, "clopper-pearson")
    (0.05, 0.025)
    """
    return alpha if check_bound(bound) == "joint" else alpha / 2


def clopper_pearson_lower(k, n, alpha):
    """One-sided Clopper-Pearson lower confidence bound on a binomial proportion: ``P(p >= bound) >= 1 - alpha``.

    Parameters
    ----------
    k, n : array_like of int
        Successes ``0 <= k <= n`` (non-integer counts rounded *down*, conservative) and trials ``n >= 1``.
    alpha : float or array_like in (0, 1)

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

    Examples
    --------
    >>> round(float(clopper_pearson_lower(30, 30, 0.05)), 6)  # 0.05 ** (1 / 30)
    0.904966
    """
    k, n, alpha = _check_counts(k, n, alpha, round_down=True)
    safe_k = np.where(k > 0, k, 1.0)
    # the beta quantile at alpha itself (not at 1 - alpha): tiny levels keep their relative accuracy
    out = np.where(k > 0, special.betaincinv(safe_k, n - k + 1, alpha), 0.0)
    return float(out) if out.ndim == 0 else out


def clopper_pearson_upper(k, n, alpha):
    """One-sided Clopper-Pearson upper confidence bound on a binomial proportion: ``P(p <= bound) >= 1 - alpha``.

    Parameters
    ----------
    k, n : array_like of int
        Successes ``0 <= k <= n`` (non-integer counts rounded *up*, conservative) and trials ``n >= 1``.
    alpha : float or array_like in (0, 1)

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

    Examples
    --------
    >>> round(float(clopper_pearson_upper(0, 30, 0.05)), 6)  # 1 - 0.05 ** (1 / 30)
    0.095034
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

    ``max(log((TPR - delta) / FPR), log((1 - FPR - delta) / (1 - TPR)))`` per point; a term is ``-inf`` when its
    numerator is <= 0 and ``+inf`` when the numerator is positive and the denominator zero.

    Parameters
    ----------
    tpr, fpr : array_like, same shape, in [0, 1]
    delta : float, default=0.0

    Returns
    -------
    numpy.ndarray
        Epsilon per operating point (may be ``+inf``; ``-inf`` where neither term has evidence).

    See Also
    --------
    clopper_pearson_epsilon : the same formula at confidence limits of the rates, a certificate.

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

    ``eps_LB = max(0, log((TPR_lo - delta) / FPR_hi), log((TNR_lo - delta) / FNR_hi))`` with one-sided bounds at
    ``alpha / 2`` (*Picture the Epsilon*, Section IV-C, Tables 3 and 7); ``TNR_lo = 1 - FPR_hi`` and
    ``FNR_hi = 1 - TPR_lo``, so it holds with probability at least ``1 - alpha``.

    Parameters
    ----------
    fp, n_neg : array_like of int
        False positives (identity B's test rows the test says are A) of ``n_neg`` rows; fractional counts round up.
    fn, n_pos : array_like of int
        False negatives (identity A's test rows the test says are B) of ``n_pos`` rows; fractional counts round up.
    alpha : float
        Error level of the certificate (each one-sided bound at ``alpha / 2``).
    delta : float, default=1e-5

    Returns
    -------
    numpy.ndarray or float
        Certified epsilon >= 0, always finite (zero errors give the cap); a float for scalar inputs.

    Raises
    ------
    ValueError
        If ``delta`` is outside [0, 1), a count is not finite or outside ``[0, n]``, or ``alpha`` outside (0, 1).

    See Also
    --------
    epsaudit.bounds.joint_epsilon : the exact joint bound on the same counts, never below this one.

    Examples
    --------
    >>> round(float(clopper_pearson_epsilon(0, 30, 0, 30, 0.05 / 40)), 3)  # zero errors: Table 3's cap
    1.277
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
    # In log space, each bound and its complement from its own tail's beta quantile: u = FPR_hi,
    # v = FNR_hi = 1 - TPR_lo, so the terms are log((1 - v - delta) / u) and log((1 - u - delta) / v).
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

    ``bound="joint"`` (default): :func:`epsaudit.bounds.joint_epsilon`, never below the paper's split bound
    ``"clopper-pearson"`` (:func:`clopper_pearson_epsilon`; *Picture the Epsilon*, Section IV-C).

    Parameters
    ----------
    fp, n_neg : array_like of int
        False positives (identity B's test rows the test says are A) of ``n_neg`` rows.
    fn, n_pos : array_like of int
        False negatives (identity A's test rows the test says are B) of ``n_pos`` rows.
    alpha : float
        Error level of this certificate (after the family's correction, :func:`bonferroni_alpha`).
    delta : float, default=1e-5
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
    certifiable_cap : its value at zero errors.
    epsaudit.bounds.sequential_epsilon : the anytime-valid bound for rows that arrive one at a time.

    Examples
    --------
    >>> round(float(certified_epsilon(0, 100, 0, 100, 0.05, 0.0)), 3)  # zero errors, 100 + 100 rows, 95%
    4.194
    >>> round(float(certified_epsilon(0, 100, 0, 100, 0.05, 0.0, bound="clopper-pearson")), 3)
    3.281
    """
    if check_bound(bound) == "clopper-pearson":
        return clopper_pearson_epsilon(fp, n_neg, fn, n_pos, alpha, delta)
    return joint_epsilon(fp, n_neg, fn, n_pos, alpha, delta)


def certifiable_cap(n_neg: int, n_pos: int, alpha: float, delta: float = 1e-5, *, bound: str = DEFAULT_BOUND) -> float:
    """Largest epsilon a reserved test of this size can certify (zero errors in both classes).

    Split bound: 1.277 at ``n = 30`` per class and a family of 40 at 95%, 2.338 at ``n = 100`` and a family of 250
    (``alpha = 2e-4``, ``delta = 1e-5``; *Picture the Epsilon*, Tables 3 and 7); the joint caps are larger.

    Parameters
    ----------
    n_neg, n_pos : int
        Test rows of identity B and of identity A (the cap is symmetric).
    alpha : float
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
    required_test_size : the planner, which inverts the cap.

    Examples
    --------
    >>> round(certifiable_cap(100, 100, 2e-4, bound="clopper-pearson"), 3), round(certifiable_cap(100, 100, 2e-4), 3)
    (2.338, 3.135)
    """
    return float(certified_epsilon(0, n_neg, 0, n_pos, alpha, delta, bound=bound))


def bonferroni_alpha(n_certificates: int, confidence: float = 0.95) -> float:
    """Error level ``(1 - confidence) / n_certificates`` of each certificate of a family (the union bound).

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
    bound_level : the level of each test a certificate at this level is made of.

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


_MAX_TEST_SIZE = 10**9


def planned_epsilon(n: int, alpha: float, delta: float = 1e-5, tpr: float = 1.0, fpr: float = 0.0, *,
                    bound: str = DEFAULT_BOUND) -> float:
    """What a reserved test with ``n`` test rows per identity certifies at the expected counts.

    The counts are rounded against the certificate: ``fp = ceil(fpr * n)`` of B's ``n`` rows and
    ``fn = n - floor(tpr * n)`` of A's. At ``tpr = 1, fpr = 0`` this is :func:`certifiable_cap`.

    Parameters
    ----------
    n : int, >= 0
        Test rows per identity (both sides); 0 rows certify nothing (0.0).
    alpha : float
    delta : float, default=1e-5
    tpr : float in [0, 1], default=1.0
        The test's true-positive rate on the population (rows of A).
    fpr : float in [0, 1], default=0.0
        Its false-positive rate (rows of B).
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
    required_test_size : the planner that inverts it.

    Examples
    --------
    >>> round(planned_epsilon(100, 2e-4, bound="clopper-pearson"), 3)
    2.338
    """
    if int(n) != n or n < 0:
        raise ValueError(f"test rows per identity n must be an integer >= 0, got {n}")
    if n == 0:
        check_bound(bound)
        return 0.0
    tp = np.floor(tpr * n + 1e-9)
    fp = np.ceil(fpr * n - 1e-9)
    return float(certified_epsilon(fp, n, n - tp, n, alpha, delta, bound=bound))


def required_test_size(epsilon: float, alpha: float, delta: float = 1e-5, tpr: float = 1.0, fpr: float = 0.0, *,
                       bound: str = DEFAULT_BOUND) -> int:
    """Test rows per identity from which a reserved test certifies ``epsilon`` at the expected counts.

    The promise: every size from the returned ``n`` to ``2 n`` certifies at least ``epsilon`` (more than 0 when
    ``epsilon = 0``) at its expected counts (:func:`planned_epsilon`; checked at :func:`promise_sizes`), and
    ``n - 1`` rows do not.

    Parameters
    ----------
    epsilon : float, >= 0
        Target lower bound.
    alpha : float
    delta : float, default=1e-5
    tpr : float, default=1.0
        The test's true-positive rate on the population (the defaults: perfect separation).
    fpr : float, default=0.0
        Its false-positive rate.
    bound : {"joint", "clopper-pearson"}, default="joint"

    Returns
    -------
    int

    Raises
    ------
    ValueError
        If ``epsilon`` is negative, the rates are outside [0, 1], or the target is out of reach at any size: the
        limit ``max(log((tpr - delta) / fpr), log((1 - fpr - delta) / (1 - tpr)))`` is at most ``epsilon`` (the
        message gives the limit).

    See Also
    --------
    planned_epsilon : what a given size certifies at the expected counts (the function it inverts).
    epsaudit.bounds.sequential_stopping_rows : the anytime-valid certificate's rows at given error rates.

    Examples
    --------
    >>> required_test_size(3.0, 0.05, 0.0), required_test_size(3.0, 0.05, 0.0, bound="clopper-pearson")
    (31, 76)
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
        # The joint bound is at least the split one at delta = 0 and (checked) while delta * n is small against
        # |log(alpha / 2)|: there, where the split bound reaches, so does the joint one.
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
        sizes = [int(m) for m in promise_sizes(n)]
        with ThreadPoolExecutor(2) as pool:  # the beta quantiles of new sizes release the GIL: two at a time
            reached = list(pool.map(reaches, sizes))
        short = next((m for m, ok in zip(sizes, reached) if not ok), None)
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
        Sorted, from ``n`` to ``2 n``: every size when there are at most :data:`PROMISE_CHECKS`, else that many
        evenly spaced sizes.

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
