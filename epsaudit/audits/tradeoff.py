"""Trade-off certificate: a simultaneous confidence band on the whole trade-off curve of a pair.

The reserved test of *Picture the Epsilon* (Section IV-C; Tables 3 and 7) certifies one (epsilon, delta) point from one
threshold; this route certifies an upper envelope of the pair's trade-off curve (f-DP; Dong, Roth & Su 2022, "Gaussian
differential privacy", J. R. Stat. Soc. B 84(1)), hence lower bounds on epsilon at every delta and on the Gaussian-DP
mu. A *certificate*: for a score fixed on development rows and test rows iid within each identity, independent of the
development rows, with probability at least ``confidence`` ``FPR(t) <= FPR_hi(t)`` and ``FNR(t) <= FNR_hi(t)`` at
every threshold of the family at once (test "A when score > t"), so every certified point lies on or above the curve:

    eps_LB(delta) = max_t max(0, log((1 - delta - FNR_hi) / FPR_hi), log((1 - delta - FPR_hi) / FNR_hi)),
    mu_LB         = max_t max(0, Phi^-1(1 - FPR_hi) - Phi^-1(FNR_hi)).

``method="bonferroni"`` (default): ``k`` thresholds fixed on development scores (:func:`development_thresholds`),
one-sided Clopper-Pearson upper limits each at ``(1 - confidence) / (2 k m)`` for ``m`` certificates; with
``n_thresholds=1`` exactly the paper's split reserved-test certificate. ``method="dkw"``: every threshold at once, the
Dvoretzky-Kiefer-Wolfowitz band with Massart's constant (Massart 1990, Ann. Probab. 18(3)), margin
``sqrt(log(2 / a) / (2 n))`` per identity at ``a = (1 - confidence) / (2 m)``, far weaker in the tails. Derivation
and numbers: the book's methods chapter, section 'Trade-off certificate (f-DP, Gaussian DP) — a certificate'.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Callable, Hashable, Mapping, Sequence

import numpy as np
from scipy.stats import rankdata
from sklearn.metrics import roc_auc_score

from ..bounds import (bonferroni_alpha, certified_epsilon, clopper_pearson_upper, dkw_margin, joint_epsilon,
                      tradeoff_delta, tradeoff_epsilon, tradeoff_mu)
from ..results import EpsilonResult, RouteStatistics
from .scorers import check_classifier, classifier_name
from ..validation import as_dev_test, as_groups, as_pairs, check_fresh, check_probability
from .roc_oof import pair_design
from .roc_reserved import FRESHNESS, ScoreFunction, choose_threshold, fixed_score
from .runner import PairFailure, family_size, map_certificates, not_computed, pair_parts, split_test_sizes

if TYPE_CHECKING:  # pragma: no cover - typing only
    import pandas as pd

__all__ = ["DEFAULT_DELTAS", "DEFAULT_THRESHOLDS", "DEVELOPMENT_FIELDS", "METHODS", "ROUTE", "SUMMARY_FRAME_COLUMNS",
           "TradeoffCertificate", "TradeoffStatistics", "curve_columns", "curves_frame",
           "development_thresholds", "epsilon_curve", "mu_lower_bound", "summary_frame", "tradeoff_band",
           "tradeoff_certificate", "tradeoff_certificate_pairs"]

ROUTE = "tradeoff_reserved"
METHODS: tuple[str, ...] = ("bonferroni", "dkw")
#: Thresholds of the default Bonferroni band (the single-threshold choice plus 3 quantiles).
DEFAULT_THRESHOLDS = 4
#: Deltas at which the epsilon curve is reported by default.
DEFAULT_DELTAS: tuple[float, ...] = (0.0, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1)
#: Development statistics a certificate records in ``details`` (and its result in ``statistics``).
DEVELOPMENT_FIELDS: tuple[str, ...] = ("test_auc", "n_dev_a", "n_dev_b", "convergence_warnings")


def development_thresholds(dev_scores_a, dev_scores_b, n_thresholds: int = DEFAULT_THRESHOLDS, *,
                           alpha: float = 0.025, delta: float = 1e-5) -> np.ndarray:
    """The Bonferroni band's thresholds, chosen on development scores only.

    The reserved test's threshold (:func:`epsaudit.audits.choose_threshold`) and the pooled development-score quantiles
    ``j / k`` (``k = n_thresholds``, ``j = 1 .. k - 1``), each snapped to the nearest midpoint between distinct scores;
    duplicates are dropped, and the correction uses the number returned (a function of development data only).

    Parameters
    ----------
    dev_scores_a, dev_scores_b : array_like, shapes (n_A,), (n_B,)
        Development scores, higher meaning "more A".
    n_thresholds : int, >= 1, default=4
    alpha : float in (0, 1), default=0.025
        Level of the single-threshold reserved test whose threshold is included.
    delta : float in [0, 1), default=1e-5

    Returns
    -------
    numpy.ndarray, shape (k,), k <= n_thresholds
        Sorted thresholds (rule: "identity A" when score > t).

    Raises
    ------
    ValueError
        If ``n_thresholds < 1``, the scores are not non-empty 1-D arrays or hold NaN (``+/-inf`` allowed), or
        ``alpha``/``delta`` are out of range.

    See Also
    --------
    tradeoff_band, tradeoff_certificate : the band at these thresholds; the certificate that chooses them.
    epsaudit.audits.choose_threshold : the single threshold of a reserved test.

    Examples
    --------
    >>> development_thresholds([2.0, 3.0, 4.0], [0.0, 1.0, 0.5], n_thresholds=3)
    array([0.75, 1.5 , 2.5 ])
    """
    k = _check_count(n_thresholds, "n_thresholds")
    sa = _check_scores(dev_scores_a, "dev_scores_a")
    sb = _check_scores(dev_scores_b, "dev_scores_b")
    check_probability(alpha, "alpha")
    check_probability(delta, "delta", open_interval=False)
    chosen = [choose_threshold(sa, sb, alpha, delta)]
    values = np.unique(np.concatenate([sa, sb]))
    if len(values) > 1 and k > 1:
        lower, upper = values[:-1], values[1:]
        with np.errstate(invalid="ignore"):
            candidates = (lower + upper) / 2.0
        big = np.finfo(np.float64).max  # as choose_threshold: a threshold next to an infinite score
        candidates = np.where(upper == np.inf, big, np.where(lower == -np.inf, -big, candidates))
        pooled = np.sort(np.concatenate([sa, sb]))
        below = np.searchsorted(pooled, candidates, side="right") / len(pooled)  # pooled fraction <= t
        for q in np.arange(1, k) / k:
            chosen.append(float(candidates[np.argmin(np.abs(below - q))]))
    return np.unique(np.asarray(chosen, dtype=np.float64))


def tradeoff_band(test_scores_a, test_scores_b, *, alpha: float, method: str = "bonferroni",
                  thresholds=None) -> dict[str, np.ndarray]:
    """Simultaneous upper confidence limits on FPR and FNR at a family of thresholds (vectorised over leading axes).

    Parameters
    ----------
    test_scores_a, test_scores_b : array_like, shapes (..., n_A), (..., n_B)
        Scores of the test rows of each identity (same leading shape); ``+inf``/``-inf`` allowed.
    alpha : float in (0, 1), or array_like of the leading shape (one level per band)
        ``"bonferroni"``: level of *each* one-sided Clopper-Pearson bound (the caller divides by ``2 k m``).
        ``"dkw"``: failure probability of *each* identity's two-sided band.
    method : {"bonferroni", "dkw"}, default="bonferroni"
    thresholds : array_like, shape (k,) or (..., k), default=None
        Thresholds fixed before the test rows were seen (no NaN). Required for ``"bonferroni"``; for ``"dkw"``
        added to the thresholds at every distinct test score.

    Returns
    -------
    dict of numpy.ndarray, each of shape (..., K)
        ``thresholds``; counts ``fp`` (B rows scored > t) and ``fn`` (A rows scored <= t); ``fpr_upper``,
        ``fnr_upper``; ``valid`` (False inside a run of tied test scores, not a threshold of any test: limits 1).
        For ``"dkw"``, ``K = n_A + n_B + 1 + k``: ``-inf``, every pooled test score ascending, the given thresholds.

    Raises
    ------
    ValueError
        Unknown ``method``, missing thresholds for ``"bonferroni"``, NaN scores or thresholds, mismatched leading
        shapes, or ``alpha`` out of range.

    See Also
    --------
    development_thresholds, epsilon_curve, mu_lower_bound : its thresholds; what it certifies.
    epsaudit.bounds.clopper_pearson_upper, epsaudit.bounds.dkw_margin : the limits of the two methods.

    Examples
    --------
    >>> band = tradeoff_band([3.0, 4.0, 5.0], [0.0, 1.0, 2.0], alpha=0.025, thresholds=[2.5])
    >>> band["fp"].tolist(), band["fn"].tolist(), round(float(band["fpr_upper"][0]), 4)
    ([0], [0], 0.7076)
    """
    sa, sb, alpha = _band_inputs(test_scores_a, test_scores_b, alpha, method)
    na, nb = sa.shape[-1], sb.shape[-1]
    lead = sa.shape[:-1]
    parts = []
    if method == "dkw":
        parts.append(_pooled_counts(sa, sb))
    if thresholds is not None:
        thr = np.asarray(thresholds, dtype=np.float64)
        if thr.ndim < 1 or thr.shape[-1] < 1 or np.any(np.isnan(thr)):
            raise ValueError("thresholds must be a non-empty array of numbers without NaN")
        thr = np.broadcast_to(thr, lead + thr.shape[-1:])
        fn = np.sum(sa[..., :, None] <= thr[..., None, :], axis=-2)
        fp = np.sum(sb[..., :, None] > thr[..., None, :], axis=-2)
        parts.append((thr, fp, fn, np.ones(thr.shape, dtype=bool)))
    elif method == "bonferroni":
        raise ValueError("the Bonferroni band needs thresholds fixed on development data")
    thr, fp, fn, valid = (np.concatenate(arrays, axis=-1) for arrays in zip(*parts))
    fp = np.where(valid, fp, nb)
    fn = np.where(valid, fn, na)
    if method == "bonferroni":
        fpr_upper = clopper_pearson_upper(fp, nb, alpha)
        fnr_upper = clopper_pearson_upper(fn, na, alpha)
    else:
        fpr_upper = np.minimum(fp / nb + dkw_margin(nb, alpha), 1.0)
        fnr_upper = np.minimum(fn / na + dkw_margin(na, alpha), 1.0)
    fpr_upper = np.where(valid, fpr_upper, 1.0)
    fnr_upper = np.where(valid, fnr_upper, 1.0)
    return {"thresholds": thr, "fp": fp.astype(np.int64), "fn": fn.astype(np.int64),
            "fpr_upper": np.asarray(fpr_upper, dtype=np.float64), "fnr_upper": np.asarray(fnr_upper, dtype=np.float64),
            "valid": valid}


def _band_inputs(test_scores_a, test_scores_b, alpha, method: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The checked inputs of :func:`tradeoff_band`: scores as float arrays, ``alpha`` broadcast per band."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    alpha = np.asarray(alpha, dtype=np.float64)
    if np.any(~((alpha > 0) & (alpha < 1))):
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    sa = np.asarray(test_scores_a, dtype=np.float64)
    sb = np.asarray(test_scores_b, dtype=np.float64)
    if sa.ndim < 1 or sb.ndim < 1 or sa.shape[-1] < 1 or sb.shape[-1] < 1:
        raise ValueError("test scores must have shape (..., n) with n >= 1 per identity")
    if sa.shape[:-1] != sb.shape[:-1]:
        raise ValueError(f"test scores of A and B have different leading shapes: {sa.shape[:-1]} vs {sb.shape[:-1]}")
    if np.any(np.isnan(sa)) or np.any(np.isnan(sb)):
        raise ValueError("test scores must not be NaN")
    lead = sa.shape[:-1]
    if alpha.ndim:
        try:
            alpha = np.broadcast_to(alpha, lead)[..., None]
        except ValueError:
            raise ValueError(f"alpha must be a number or an array of the leading shape {lead}, got shape "
                             f"{alpha.shape}") from None
    return sa, sb, alpha


def _pooled_counts(sa: np.ndarray, sb: np.ndarray):
    """Counts at ``t = -inf`` and at every pooled test score (rule: A when score > t), vectorised."""
    na, nb = sa.shape[-1], sb.shape[-1]
    lead = sa.shape[:-1]
    pooled = np.concatenate([sa, sb], axis=-1)
    is_a = np.concatenate([np.ones(lead + (na,), dtype=bool), np.zeros(lead + (nb,), dtype=bool)], axis=-1)
    order = np.argsort(pooled, axis=-1, kind="stable")
    values = np.take_along_axis(pooled, order, axis=-1)
    labels = np.take_along_axis(is_a, order, axis=-1)
    fn = np.cumsum(labels, axis=-1)  # A scores <= value
    fp = nb - np.cumsum(~labels, axis=-1)  # B scores > value
    last = np.ones(values.shape, dtype=bool)
    last[..., :-1] = values[..., 1:] != values[..., :-1]  # only the end of a run of ties is a threshold
    start = np.full(lead + (1,), -np.inf)
    fn0 = np.sum(sa == -np.inf, axis=-1, keepdims=True)  # rows scored -inf are never "A"
    fp0 = np.sum(sb > -np.inf, axis=-1, keepdims=True)
    return (np.concatenate([start, values], axis=-1), np.concatenate([fp0, fp], axis=-1),
            np.concatenate([fn0, fn], axis=-1), np.concatenate([np.ones(lead + (1,), dtype=bool), last], axis=-1))


def epsilon_curve(fpr_upper, fnr_upper, deltas) -> np.ndarray:
    """Certified lower bound on epsilon at each delta: the best point of a band.

    Parameters
    ----------
    fpr_upper, fnr_upper : array_like, shape (..., K)
        Simultaneous upper limits (e.g. from :func:`tradeoff_band`).
    deltas : array_like, shape (J,), values in [0, 1)

    Returns
    -------
    numpy.ndarray, shape (..., J)
        ``max`` over the ``K`` points of :func:`epsaudit.bounds.tradeoff_epsilon`; >= 0, non-increasing in delta.

    Raises
    ------
    ValueError
        From :func:`epsaudit.bounds.tradeoff_epsilon`.

    See Also
    --------
    mu_lower_bound, tradeoff_band, curve_columns : mu from the same band; the band; the curve as table columns.
    epsaudit.bounds.tradeoff_epsilon : the epsilon of each point.

    Examples
    --------
    >>> epsilon_curve([0.1, 0.5], [0.2, 0.01], [0.0, 0.1]).round(4)
    array([3.912 , 3.6889])
    """
    fpr = np.asarray(fpr_upper, dtype=np.float64)[..., :, None]
    fnr = np.asarray(fnr_upper, dtype=np.float64)[..., :, None]
    d = np.atleast_1d(np.asarray(deltas, dtype=np.float64))
    return np.max(tradeoff_epsilon(fpr, fnr, d), axis=-2)


def mu_lower_bound(fpr_upper, fnr_upper) -> np.ndarray:
    """Certified lower bound on the Gaussian-DP parameter mu: the best point of a band.

    Parameters
    ----------
    fpr_upper, fnr_upper : array_like, shape (..., K)

    Returns
    -------
    numpy.ndarray or float, shape (...)
        ``max`` over the points of :func:`epsaudit.bounds.tradeoff_mu` (>= 0).

    See Also
    --------
    epsilon_curve, tradeoff_band : epsilon at each delta from the same band; the band.
    epsaudit.bounds.tradeoff_mu : the mu of each point.

    Examples
    --------
    >>> round(float(mu_lower_bound([0.05, 0.5], [0.25, 0.2])), 4)
    2.3193
    """
    out = np.max(tradeoff_mu(fpr_upper, fnr_upper), axis=-1)
    return out[()] if np.ndim(out) == 0 else out


def _lower_hull(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lower convex hull of points (monotone chain), as sorted vertex arrays."""
    order = np.lexsort((y, x))
    hull: list[tuple[float, float]] = []
    for px, py in zip(x[order], y[order]):
        if hull and hull[-1][0] == px:
            continue  # same x: the first (lowest) point is kept
        while len(hull) >= 2:
            (ax, ay), (bx, by) = hull[-2], hull[-1]
            if (bx - ax) * (py - ay) - (by - ay) * (px - ax) <= 0:  # not a left turn: drop b
                hull.pop()
            else:
                break
        hull.append((float(px), float(py)))
    hx, hy = np.array(hull).T
    return hx, hy


def _check_count(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer, float)) or int(value) != value or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def _check_scores(scores, name: str) -> np.ndarray:
    arr = np.asarray(scores, dtype=np.float64)
    if arr.ndim != 1 or arr.size < 1 or np.any(np.isnan(arr)):
        raise ValueError(f"{name} must be a non-empty 1-D array of scores without NaN; got shape {arr.shape}")
    return arr


def curve_columns(deltas: Sequence[float], epsilons: Sequence[float]) -> dict[str, float]:
    """An epsilon curve as table columns ``epsilon_at_delta_<delta>`` (``<delta>`` written with ``%g``).

    Parameters
    ----------
    deltas, epsilons : sequence of float, same length

    Returns
    -------
    dict

    See Also
    --------
    epsilon_curve, curves_frame : the curve it writes as columns; many certificates' points as rows.

    Examples
    --------
    >>> curve_columns([0.0, 1e-5], [2.0, 1.5])
    {'epsilon_at_delta_0': 2.0, 'epsilon_at_delta_1e-05': 1.5}
    """
    return {f"epsilon_at_delta_{d:g}": float(e) for d, e in zip(deltas, epsilons)}


@dataclass(frozen=True)
class TradeoffStatistics(RouteStatistics):
    """What one trade-off certificate's headline epsilon comes with (columns of a results table).

    Attributes
    ----------
    mu_lower : float
        Certified lower bound on the Gaussian-DP parameter mu.
    best_threshold, fpr_upper, fnr_upper : float
        The point that attains the headline epsilon: its threshold and upper limits.
    n_points : int
        Certified points of the band.
    single_threshold, single_threshold_epsilon, same_threshold_epsilon, correction_cost : float
        The single-threshold reserved test on the same scores: its threshold and certificate, this band's bound at
        that threshold, and the difference.
    deltas, epsilon_at_delta : tuple of float
        The certified epsilon curve; :meth:`record` writes it as ``epsilon_at_delta_<delta>``.
    test_auc, n_dev_a, n_dev_b, convergence_warnings : float or int, optional
        Development statistics (:data:`DEVELOPMENT_FIELDS`); left out of the record when None.

    See Also
    --------
    TradeoffCertificate, tradeoff_certificate, tradeoff_certificate_pairs : its certificate; they compute it.
    epsaudit.results.RouteStatistics : the base class: frozen fields that flatten to table columns.

    Examples
    --------
    >>> s = TradeoffStatistics(mu_lower=1.5, best_threshold=0.5, fpr_upper=0.1, fnr_upper=0.1, n_points=4,
    ...                        single_threshold=0.5, single_threshold_epsilon=2.0, same_threshold_epsilon=1.9,
    ...                        correction_cost=0.1, deltas=(0.0, 1e-5), epsilon_at_delta=(2.0, 1.9))
    >>> list(s.record())[-3:]
    ['correction_cost', 'epsilon_at_delta_0', 'epsilon_at_delta_1e-05']
    """

    mu_lower: float
    best_threshold: float
    fpr_upper: float
    fnr_upper: float
    n_points: int
    single_threshold: float
    single_threshold_epsilon: float
    same_threshold_epsilon: float
    correction_cost: float
    deltas: tuple[float, ...] = ()
    epsilon_at_delta: tuple[float, ...] = ()
    test_auc: float | None = None
    n_dev_a: int | None = None
    n_dev_b: int | None = None
    convergence_warnings: int | None = None

    def record(self) -> dict[str, Any]:
        """The statistics as columns: the point and comparison, the curve, then the development statistics."""
        out = {k: v for k, v in super().record().items() if k not in ("deltas", "epsilon_at_delta")
               and k not in DEVELOPMENT_FIELDS}
        out.update(curve_columns(self.deltas, self.epsilon_at_delta))
        out.update({k: getattr(self, k) for k in DEVELOPMENT_FIELDS if getattr(self, k) is not None})
        return out


def _frozen(values, dtype) -> np.ndarray:
    arr = np.array(values, dtype=dtype)
    arr.setflags(write=False)
    return arr


_ARRAYS = (("thresholds", np.float64), ("fp", np.int64), ("fn", np.int64), ("fpr_upper", np.float64),
           ("fnr_upper", np.float64), ("deltas", np.float64), ("epsilon_at_delta", np.float64))
_NUMBERS = ("mu_lower", "delta", "best_epsilon", "best_threshold", "single_threshold", "single_threshold_epsilon",
            "same_threshold_epsilon", "confidence", "alpha_per_bound")


@dataclass(frozen=True, eq=False)
class TradeoffCertificate:
    """A certified upper envelope of one pair's trade-off curve and what it implies.

    Attributes
    ----------
    pair, n : tuple
        Identities ``(A, B)`` (A the positive class) or None; test sizes ``(n_A, n_B)``.
    method : {"bonferroni", "dkw"}
    confidence, alpha_per_bound : float
        Family-wise confidence of every certificate reported together; level of each one-sided Clopper-Pearson bound
        (Bonferroni) or failure probability of each identity's DKW band.
    correction : str
        The multiplicity correction in words.
    thresholds : numpy.ndarray, shape (K,)
        Thresholds of the certified points (rule: "identity A" when score > t).
    fp, fn : numpy.ndarray of int, shape (K,)
        Test counts: B rows scored > t, A rows scored <= t.
    fpr_upper, fnr_upper : numpy.ndarray, shape (K,)
        Simultaneous upper confidence limits of the false-positive and false-negative rates.
    deltas, epsilon_at_delta : numpy.ndarray, shape (J,)
        Certified lower bound on epsilon at each delta (natural-log units, >= 0).
    mu_lower, delta, best_epsilon, best_threshold : float
        Certified lower bounds on the Gaussian-DP mu and on epsilon at ``delta`` (the best point), and its threshold.
    single_threshold, single_threshold_epsilon : float
        The single-threshold reserved test's threshold on the same development scores and its certificate on the same
        test rows at its own level (a comparison number, *not* part of this family).
    same_threshold_epsilon : float
        This band's epsilon bound at ``single_threshold``.
    joint_best_epsilon : float
        The best point by exact joint tests (:func:`epsaudit.bounds.joint_epsilon`) over the band's development-fixed
        thresholds, each at ``(1 - confidence) / (k m)`` (``"dkw"``: the single threshold at
        ``(1 - confidence) / m``): an alternative to ``best_epsilon`` from the same error budget, not a second
        statement beside it. NaN only when not computed.
    settings, details : dict
        Hyperparameters; development statistics (:data:`DEVELOPMENT_FIELDS`; ``error`` when not computed).
    kind, route : str
        ``"certificate"``; ``"tradeoff_reserved"``.
    not_computed : str or None
        Why the pair could not be certified (many-pairs runs only); then the arrays are empty and the numbers NaN,
        and the pair still counts in the family.

    Raises
    ------
    ValueError
        If the curve arrays differ in length, a rate lies outside [0, 1], ``kind`` is not ``"certificate"``,
        ``confidence`` is outside (0, 1) or ``method`` is unknown.

    See Also
    --------
    tradeoff_certificate, tradeoff_certificate_pairs, TradeoffStatistics : build it; its result's statistics.
    epsaudit.audits.MMDCertificate, epsaudit.audits.WorstPairCertificate : the other certificates.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> rows = [rng.normal(c, 1.0, size=(200, 3)) for c in (3.0, 0.0, 3.0, 0.0)]
    >>> cert = tradeoff_certificate(*rows, pair=("A", "B"))
    >>> cert.n, cert.n_points, list(cert.frame().columns[:4])
    ((200, 200), 4, ['identity_a', 'identity_b', 'method', 'threshold'])
    >>> bool(cert.envelope(0.1) <= 1.0), cert.to_result().kind
    (True, 'certificate')
    >>> bool(cert.epsilon(0.0) >= cert.epsilon(0.1)), bool(cert.delta_lower(1.0) > 0)
    (True, True)
    """

    pair: tuple[Any, Any] | None
    n: tuple[int, int]
    method: str
    confidence: float
    alpha_per_bound: float
    correction: str
    thresholds: np.ndarray
    fp: np.ndarray
    fn: np.ndarray
    fpr_upper: np.ndarray
    fnr_upper: np.ndarray
    deltas: np.ndarray
    epsilon_at_delta: np.ndarray
    mu_lower: float
    delta: float
    best_epsilon: float
    best_threshold: float
    single_threshold: float
    single_threshold_epsilon: float
    same_threshold_epsilon: float
    settings: Mapping[str, Any] = field(default_factory=dict)
    details: Mapping[str, Any] = field(default_factory=dict)
    kind: str = "certificate"
    route: str = ROUTE
    not_computed: str | None = None

    def __post_init__(self) -> None:
        if self.kind != "certificate":
            raise ValueError(f"a TradeoffCertificate is a certificate, got kind {self.kind!r}")
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {self.method!r}")
        check_probability(self.confidence, "confidence")
        check_probability(self.alpha_per_bound, "alpha_per_bound")
        for name, dtype in _ARRAYS:
            object.__setattr__(self, name, _frozen(getattr(self, name), dtype))
        object.__setattr__(self, "n", tuple(int(v) for v in self.n))
        for name in _NUMBERS:
            object.__setattr__(self, name, float(getattr(self, name)))
        k = len(self.thresholds)
        if not (len(self.fp) == len(self.fn) == len(self.fpr_upper) == len(self.fnr_upper) == k):
            raise ValueError("thresholds, fp, fn, fpr_upper and fnr_upper must have one entry per certified point")
        if len(self.deltas) != len(self.epsilon_at_delta):
            raise ValueError("deltas and epsilon_at_delta must have the same length")
        if self.not_computed is not None:
            if not str(self.not_computed).strip():
                raise ValueError("not_computed must give the reason, got an empty string")
            return
        if k < 1:
            raise ValueError("a computed certificate needs at least one certified point")
        for name in ("fpr_upper", "fnr_upper"):
            values = getattr(self, name)
            if np.any(~((values >= 0) & (values <= 1))):
                raise ValueError(f"{name} must lie in [0, 1]")

    @classmethod
    def failed(cls, reason: str, *, pair, n, method, confidence, alpha_per_bound, correction, delta, deltas,
               settings=None, details=None) -> "TradeoffCertificate":
        """A certificate that could not be computed for ``pair`` (empty curve, NaN numbers, the reason)."""
        nan = float("nan")
        return cls(pair=pair, n=n, method=method, confidence=confidence, alpha_per_bound=alpha_per_bound,
                   correction=correction, thresholds=[], fp=[], fn=[], fpr_upper=[], fnr_upper=[],
                   deltas=deltas, epsilon_at_delta=np.full(len(deltas), nan), mu_lower=nan, delta=delta,
                   best_epsilon=nan, best_threshold=nan, single_threshold=nan, single_threshold_epsilon=nan,
                   same_threshold_epsilon=nan, settings=dict(settings or {}), details=dict(details or {}),
                   not_computed=reason)

    @cached_property
    def joint_best_epsilon(self) -> float:
        """The best point by joint tests: Bonferroni, ``max`` over the points of :func:`epsaudit.bounds.joint_epsilon`
        at ``2 * alpha_per_bound`` (one joint test for two one-sided bounds); DKW, ``single_threshold_epsilon``."""
        if not self.computed:
            return float("nan")
        if self.method != "bonferroni":
            return self.single_threshold_epsilon
        return float(np.max(joint_epsilon(self.fp, self.n[1], self.fn, self.n[0], 2 * self.alpha_per_bound,
                                          self.delta)))

    @property
    def computed(self) -> bool:
        """True unless the pair could not be certified (see ``not_computed``)."""
        return self.not_computed is None

    @property
    def n_points(self) -> int:
        """Number of certified points ``K``."""
        return len(self.thresholds)

    @property
    def correction_cost(self) -> float:
        """``single_threshold_epsilon - same_threshold_epsilon`` (>= 0 for Bonferroni)."""
        return self.single_threshold_epsilon - self.same_threshold_epsilon

    def epsilon(self, delta) -> np.ndarray | float:
        """Certified lower bound on epsilon at any ``delta`` in [0, 1) (scalar or array)."""
        self._require_computed()
        out = epsilon_curve(self.fpr_upper, self.fnr_upper, np.atleast_1d(delta))
        return float(out[0]) if np.ndim(delta) == 0 else out

    def delta_lower(self, epsilon) -> np.ndarray | float:
        """Certified lower bound on the privacy profile ``delta(epsilon)`` (:func:`epsaudit.bounds.tradeoff_delta`)."""
        self._require_computed()
        eps = np.atleast_1d(np.asarray(epsilon, dtype=np.float64))
        out = np.max(tradeoff_delta(self.fpr_upper[:, None], self.fnr_upper[:, None], eps[None, :]), axis=0)
        return float(out[0]) if np.ndim(epsilon) == 0 else out

    def envelope(self, fpr) -> np.ndarray | float:
        """Certified upper envelope of the trade-off curve ``T(P_B, P_A)`` at false-positive rate ``fpr``.

        The lower convex hull of the certified points and the trivial tests ``(0, 1)``, ``(1, 0)``; the true curve lies
        on or below it with the certificate's confidence. Raises ValueError if ``fpr`` is outside [0, 1] or the
        certificate was not computed."""
        self._require_computed()
        f = np.asarray(fpr, dtype=np.float64)
        if np.any(~((f >= 0) & (f <= 1))):
            raise ValueError("fpr must lie in [0, 1]")
        hx, hy = _lower_hull(np.r_[0.0, self.fpr_upper, 1.0], np.r_[1.0, self.fnr_upper, 0.0])
        out = np.interp(f, hx, hy)
        return out[()] if out.ndim == 0 else out

    def _require_computed(self) -> None:
        if not self.computed:
            raise ValueError(f"the certificate of pair {self.pair!r} was not computed: {self.not_computed}")

    def frame(self) -> "pd.DataFrame":
        """The certified points, one row per threshold: ``identity_a, identity_b, method, threshold, fp, fn, n_a, n_b,
        fpr_hat, fnr_hat, fpr_upper, fnr_upper, epsilon`` (the point's bound at ``delta``) and ``mu``."""
        import pandas as pd

        a, b = self.pair if self.pair is not None else (None, None)
        return pd.DataFrame({
            "identity_a": a, "identity_b": b, "method": self.method,
            "threshold": self.thresholds, "fp": self.fp, "fn": self.fn,
            "n_a": self.n[0], "n_b": self.n[1],
            "fpr_hat": self.fp / self.n[1], "fnr_hat": self.fn / self.n[0],
            "fpr_upper": self.fpr_upper, "fnr_upper": self.fnr_upper,
            "epsilon": tradeoff_epsilon(self.fpr_upper, self.fnr_upper, self.delta),
            "mu": tradeoff_mu(self.fpr_upper, self.fnr_upper),
        })

    def epsilon_frame(self) -> "pd.DataFrame":
        """The certified epsilon curve: columns ``identity_a, identity_b, delta, epsilon``."""
        import pandas as pd

        a, b = self.pair if self.pair is not None else (None, None)
        return pd.DataFrame({"identity_a": a, "identity_b": b, "delta": self.deltas, "epsilon": self.epsilon_at_delta})

    def to_result(self) -> EpsilonResult:
        """The best single-point epsilon as an :class:`EpsilonResult` (``kind="certificate"``) with a
        :class:`TradeoffStatistics`; a certificate not computed becomes a *not computed* result with the reason.
        """
        fields = dict(kind="certificate", route=self.route, n=self.n, pair=self.pair, delta=self.delta,
                      confidence=self.confidence, alpha_per_bound=self.alpha_per_bound, correction=self.correction,
                      settings=dict(self.settings))
        if not self.computed:
            return not_computed(PairFailure(reason=self.not_computed, error=str(self.details.get("error", "ValueError"))),
                                **fields)
        best = int(np.flatnonzero(self.thresholds == self.best_threshold)[0])
        development = {k: self.details[k] for k in DEVELOPMENT_FIELDS if k in self.details}
        stats = TradeoffStatistics(
            mu_lower=self.mu_lower, best_threshold=self.best_threshold,
            fpr_upper=float(self.fpr_upper[best]), fnr_upper=float(self.fnr_upper[best]), n_points=self.n_points,
            single_threshold=self.single_threshold, single_threshold_epsilon=self.single_threshold_epsilon,
            same_threshold_epsilon=self.same_threshold_epsilon, correction_cost=self.correction_cost,
            deltas=tuple(float(d) for d in self.deltas), epsilon_at_delta=tuple(float(e) for e in self.epsilon_at_delta),
            **development)
        extra = {k: v for k, v in self.details.items() if k not in development}
        return EpsilonResult(value=self.best_epsilon, statistics=stats, details=extra, **fields)

    def __str__(self) -> str:
        if not self.computed:
            return f"{self.route}: not computed ({self.not_computed})"
        return (f"{self.route} ({self.method}): epsilon >= {self.best_epsilon:.4g} at delta = {self.delta:g}, "
                f"mu >= {self.mu_lower:.4g} ({self.confidence:.0%} family-wise, n = {self.n}, "
                f"{self.n_points} points, {self.correction})")


def curves_frame(certificates: Sequence[TradeoffCertificate]) -> "pd.DataFrame":
    """Concatenate :meth:`TradeoffCertificate.frame` of many certificates (one row per point).

    Raises
    ------
    TypeError
        If an element is not a :class:`TradeoffCertificate`.

    See Also
    --------
    summary_frame, curve_columns : one row per certificate; a curve as columns of one row.

    Examples
    --------
    >>> curves_frame([]).empty
    True
    """
    import pandas as pd

    frames = []
    for i, cert in enumerate(certificates):
        if not isinstance(cert, TradeoffCertificate):
            raise TypeError(f"element {i} is a {type(cert).__name__}, not a TradeoffCertificate")
        frames.append(cert.frame())
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


#: Columns of :func:`summary_frame`.
SUMMARY_FRAME_COLUMNS = ("identity_a", "identity_b", "n_test_a", "n_test_b", "points", "mu_lower", "best_epsilon",
                         "single_threshold_epsilon", "correction_cost", "gain", "joint_best_epsilon", "joint_gain",
                         "delta", "confidence", "alpha_per_bound", "not_computed")


def summary_frame(certificates: Sequence[TradeoffCertificate]) -> "pd.DataFrame":
    """One row per trade-off certificate: what it certifies beside the single-threshold reserved test.

    Parameters
    ----------
    certificates : sequence of TradeoffCertificate

    Returns
    -------
    pandas.DataFrame
        Columns :data:`SUMMARY_FRAME_COLUMNS`: the pair, its test sizes, the :class:`TradeoffCertificate` numbers of
        those names (``points``: ``n_points``; NaN when not computed, ``not_computed`` the reason),
        ``gain = best_epsilon - single_threshold_epsilon`` (negative when the other thresholds do not make up the
        ``correction_cost``) and ``joint_gain = joint_best_epsilon - single_threshold_epsilon``.

    Raises
    ------
    TypeError
        If an element is not a :class:`TradeoffCertificate`.

    See Also
    --------
    curves_frame, epsaudit.results.results_frame : one row per point; the results of any route as a table.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> rows = [rng.normal(c, 1.0, size=(200, 1)) for c in (3.0, 0.0, 3.0, 0.0)]
    >>> row = summary_frame([tradeoff_certificate(*rows, score_function=lambda x: x[:, 0])]).iloc[0]
    >>> int(row["points"]), bool(row["correction_cost"] >= 0), bool(row["gain"] >= -row["correction_cost"])
    (4, True, True)
    """
    import pandas as pd

    rows = []
    for i, cert in enumerate(certificates):
        if not isinstance(cert, TradeoffCertificate):
            raise TypeError(f"element {i} is a {type(cert).__name__}, not a TradeoffCertificate")
        a, b = cert.pair if cert.pair is not None else (None, None)
        rows.append({"identity_a": a, "identity_b": b, "n_test_a": cert.n[0], "n_test_b": cert.n[1],
                     "points": cert.n_points, "mu_lower": cert.mu_lower, "best_epsilon": cert.best_epsilon,
                     "single_threshold_epsilon": cert.single_threshold_epsilon,
                     "correction_cost": cert.correction_cost,
                     "gain": cert.best_epsilon - cert.single_threshold_epsilon,
                     "joint_best_epsilon": cert.joint_best_epsilon,
                     "joint_gain": cert.joint_best_epsilon - cert.single_threshold_epsilon, "delta": cert.delta,
                     "confidence": cert.confidence, "alpha_per_bound": cert.alpha_per_bound,
                     "not_computed": cert.not_computed})
    return pd.DataFrame(rows, columns=list(SUMMARY_FRAME_COLUMNS))


def _correction_label(method: str, n_thresholds: int, n_certificates: int) -> str:
    """The multiplicity correction in words (``n_thresholds`` ignored for ``"dkw"``)."""
    if method == "bonferroni":
        return (f"bonferroni: 2 one-sided Clopper-Pearson bounds x {n_thresholds} threshold(s) "
                f"x {n_certificates} certificate(s)")
    return f"DKW band (Massart constant) per identity: 2 bands x {n_certificates} certificate(s)"


def _check_options(method, n_thresholds, n_certificates, confidence, delta, deltas) -> np.ndarray:
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    _check_count(n_thresholds, "n_thresholds")
    _check_count(n_certificates, "n_certificates")
    check_probability(confidence, "confidence")
    check_probability(delta, "delta", open_interval=False)
    d = np.asarray(deltas, dtype=np.float64)
    if d.ndim != 1 or d.size < 1 or np.any(~((d >= 0) & (d < 1))):
        raise ValueError(f"deltas must be a non-empty 1-D sequence of values in [0, 1), got {deltas!r}")
    return np.unique(np.r_[d, delta])


def _settings(classifier, score_function, method, n_thresholds, m, seed, check_reuse) -> dict:
    name = "fixed score function" if score_function is not None else classifier_name(check_classifier(classifier))
    return {"test": name, "method": method,
            "threshold_rule": ("single-threshold choice + pooled development quantiles" if method == "bonferroni"
                               else "every distinct test score (the band holds for all thresholds)"),
            "n_thresholds": n_thresholds if method == "bonferroni" else None,
            "n_certificates": m, "seed": seed, "freshness": FRESHNESS["values" if check_reuse else "none"]}


def _certify(dev_a, dev_b, test_a, test_b, classifier, score_function, method, n_thresholds, m, confidence, delta,
             deltas, pair, seed, check_reuse) -> TradeoffCertificate:
    """One pair (module-level, so that joblib can run it in worker processes)."""
    names = tuple(pair) if pair is not None else ("A", "B")
    if check_reuse:
        check_fresh({names[0]: dev_a, names[1]: dev_b}, {names[0]: test_a, names[1]: test_b},
                    context=f"trade-off certificate of pair ({names[0]!r}, {names[1]!r})")
    score, warned = fixed_score(dev_a, dev_b, classifier, score_function)
    dev_sa = score(dev_a, f"development rows of {names[0]!r}")
    dev_sb = score(dev_b, f"development rows of {names[1]!r}")
    alpha_single = bonferroni_alpha(m, confidence)  # the single-threshold reserved test's level
    single = choose_threshold(dev_sa, dev_sb, alpha_single, delta)
    test_sa = score(test_a, f"test rows of {names[0]!r}")
    test_sb = score(test_b, f"test rows of {names[1]!r}")
    na, nb = len(test_sa), len(test_sb)
    if method == "bonferroni":
        thresholds = development_thresholds(dev_sa, dev_sb, n_thresholds, alpha=alpha_single, delta=delta)
        k = len(thresholds)
        alpha = (1.0 - confidence) / (2.0 * k * m)
        band = tradeoff_band(test_sa, test_sb, alpha=alpha, method=method, thresholds=thresholds)
    else:
        alpha = (1.0 - confidence) / (2.0 * m)
        band = tradeoff_band(test_sa, test_sb, alpha=alpha, method=method, thresholds=[single])
        band = {key: value[band["valid"]] for key, value in band.items()}
        k = len(band["thresholds"])
    eps_points = tradeoff_epsilon(band["fpr_upper"], band["fnr_upper"], delta)
    best = int(np.argmax(eps_points))
    at_single = int(np.flatnonzero(band["thresholds"] == single)[-1])
    tp_single, fp_single = na - int(band["fn"][at_single]), int(band["fp"][at_single])
    single_epsilon = float(certified_epsilon(fp_single, nb, na - tp_single, na, alpha_single, delta))
    _, y_test = pair_design(test_a, test_b)
    return TradeoffCertificate(
        pair=pair, n=(na, nb), method=method, confidence=confidence, alpha_per_bound=alpha,
        correction=_correction_label(method, k, m),
        thresholds=band["thresholds"], fp=band["fp"], fn=band["fn"],
        fpr_upper=band["fpr_upper"], fnr_upper=band["fnr_upper"],
        deltas=deltas, epsilon_at_delta=epsilon_curve(band["fpr_upper"], band["fnr_upper"], deltas),
        mu_lower=float(mu_lower_bound(band["fpr_upper"], band["fnr_upper"])),
        delta=delta, best_epsilon=float(eps_points[best]), best_threshold=float(band["thresholds"][best]),
        single_threshold=single,
        single_threshold_epsilon=single_epsilon,
        same_threshold_epsilon=float(eps_points[at_single]),
        settings=_settings(classifier, score_function, method, n_thresholds, m, seed, check_reuse),
        details={"test_auc": float(roc_auc_score(y_test, rankdata(np.r_[test_sa, test_sb]))),  # ranks: inf allowed
                 "n_dev_a": len(dev_a), "n_dev_b": len(dev_b), "convergence_warnings": warned},
    )


def tradeoff_certificate(
    dev_a, dev_b, test_a, test_b, *,
    classifier: Any = None,
    score_function: ScoreFunction | None = None,
    method: str = "bonferroni",
    n_thresholds: int = DEFAULT_THRESHOLDS,
    n_certificates: int = 1,
    confidence: float = 0.95,
    delta: float = 1e-5,
    deltas: Sequence[float] = DEFAULT_DELTAS,
    pair=None,
    check_reuse: bool = True,
) -> TradeoffCertificate:
    """Trade-off certificate for one pair from separate development and test samples.

    Parameters
    ----------
    dev_a, dev_b : array_like, shapes (n_A_dev, d), (n_B_dev, d)
        Development rows: fit the classifier and fix the thresholds.
    test_a, test_b : array_like, shapes (n_A, d), (n_B, d)
        Untouched test rows, never used for fitting or choosing.
    classifier : scikit-learn estimator, default=None
        Learned score (default :func:`epsaudit.audits.scorers.logistic_regression`); ignored with ``score_function``.
    score_function : callable ``(n, d) -> (n,)``, default=None
        A fixed score, higher meaning "more A" (e.g. a mechanism's ``exact_score(a, b)``): one number per row, no NaN
        (``+inf``/``-inf`` allowed).
    method : {"bonferroni", "dkw"}, default="bonferroni"
        Simultaneous construction; Bonferroni is the more powerful.
    n_thresholds : int, default=4
        Thresholds of the Bonferroni band; ``1`` reproduces the split single-threshold reserved test exactly.
    n_certificates : int, default=1
        How many certificates are reported together (family size ``m``).
    confidence : float in (0, 1), default=0.95
        Family-wise confidence: all ``n_certificates`` certificates hold together.
    delta : float in [0, 1), default=1e-5
        Delta of ``best_epsilon``.
    deltas : sequence of float in [0, 1), default=DEFAULT_DELTAS
        Deltas of the reported epsilon curve (``delta`` is added).
    pair : tuple, default=None
    check_reuse : bool, default=True
        Refuse test rows that copy development rows; as in :func:`epsaudit.audits.reserved_test_certificate`.

    Returns
    -------
    TradeoffCertificate

    Raises
    ------
    ValueError
        Bad samples (fewer than 2 rows per identity, NaN/inf, mismatched dimensions), a bad classifier or score
        output, an unknown ``method``, ``n_thresholds``/``n_certificates`` < 1, ``confidence``/``delta``/``deltas``
        out of range.
    epsaudit.validation.ReusedRowsError
        (a ``ValueError``) Test rows that repeat development rows.

    See Also
    --------
    tradeoff_certificate_pairs, epsaudit.audits.reserved_test_certificate : many pairs; one threshold.
    epsaudit.audits.mmd_certificate, epsaudit.audits.worst_pair_certificate : the MMD and worst-pair certificates.

    Examples
    --------
    >>> rng = np.random.default_rng(1)  # N(2, 1) against N(0, 1): exactly mu-GDP with mu = 2
    >>> rows = [rng.normal(c, 1.0, size=(100, 1)) for c in (2.0, 0.0, 2.0, 0.0)]
    >>> cert = tradeoff_certificate(*rows, score_function=lambda x: x[:, 0])
    >>> bool(0 < cert.mu_lower <= 2.0), cert.n, cert.kind
    (True, (100, 100), 'certificate')
    """
    da, db, ta, tb = as_dev_test(dev_a, dev_b, test_a, test_b)
    deltas = _check_options(method, n_thresholds, n_certificates, confidence, delta, deltas)
    if score_function is None:
        check_classifier(classifier)
    return _certify(da, db, ta, tb, classifier, score_function, method, int(n_thresholds), int(n_certificates),
                    confidence, delta, deltas, pair, None, check_reuse)


def tradeoff_certificate_pairs(
    groups: Mapping[Hashable, np.ndarray],
    pairs: Sequence[tuple[Hashable, Hashable]],
    *,
    test_groups: Mapping[Hashable, np.ndarray] | None = None,
    test_size: float = 0.3,
    classifier: Any = None,
    score_functions: Callable[[Hashable, Hashable], ScoreFunction] | None = None,
    method: str = "bonferroni",
    n_thresholds: int = DEFAULT_THRESHOLDS,
    n_certificates: int | None = None,
    confidence: float = 0.95,
    delta: float = 1e-5,
    deltas: Sequence[float] = DEFAULT_DELTAS,
    seed: int = 0,
    n_jobs: int | None = None,
    progress: bool = False,
    check_reuse: bool = True,
) -> list[TradeoffCertificate]:
    """Trade-off certificates for many pairs, all holding together at ``confidence``.

    Bonferroni over pairs and thresholds; splits and per-pair failures as :func:`epsaudit.audits.reserved_test_pairs`.

    Parameters
    ----------
    groups : mapping identity -> array_like, shape (n_i, d)
        Development rows (or all rows, each identity split once with ``test_size`` when ``test_groups`` is None).
    pairs : sequence of (identity, identity)
    test_groups : mapping, default=None
        Separate untouched test rows per identity.
    test_size : float, default=0.3
        Fraction of each identity's rows reserved for testing when ``test_groups`` is None.
    classifier, score_functions
        A learned score, or ``(A, B) -> score function`` (e.g. ``mechanism.exact_score``).
    method, n_thresholds, confidence, delta, deltas, check_reuse
        As in :func:`tradeoff_certificate`.
    n_certificates : int, default=None
        Family size; defaults to ``len(pairs)``; must be at least that.
    seed : int, default=0
    n_jobs : int, default=None
        joblib workers; results do not depend on it.
    progress : bool, default=False

    Returns
    -------
    list of TradeoffCertificate, one per pair. A pair that cannot be certified (reused rows, a split part too small,
    a NaN score, ...) is *not computed*, with the reason; it stays in the family.

    Raises
    ------
    ValueError
        Invalid ``groups``/``pairs``, ``n_certificates`` below the number of pairs, or options out of range.

    See Also
    --------
    tradeoff_certificate, summary_frame, curves_frame : the same certificate for one pair; the certificates as tables.
    epsaudit.audits.reserved_test_pairs, epsaudit.audits.mmd_certificate_pairs : the other certificates.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> dev, test = ({k: rng.normal(c, 1.0, size=(60, 1)) for k, c in ((0, 2.0), (1, 0.0), (2, 1.0))} for _ in "dt")
    >>> certs = tradeoff_certificate_pairs(dev, [(0, 1), (0, 2)], test_groups=test,
    ...                                    score_functions=lambda a, b: (lambda x: x[:, 0]))
    >>> certs[0].correction
    'bonferroni: 2 one-sided Clopper-Pearson bounds x 4 threshold(s) x 2 certificate(s)'
    """
    groups = as_groups(groups)
    pairs = as_pairs(pairs, groups)
    if test_groups is not None:
        test_groups = as_groups(test_groups)
        as_pairs(pairs, test_groups)
    m = family_size(pairs, None if n_certificates is None else _check_count(n_certificates, "n_certificates"))
    deltas = _check_options(method, n_thresholds, m, confidence, delta, deltas)
    if score_functions is None:
        check_classifier(classifier)
    parts = pair_parts(groups, pairs, test_groups=test_groups, test_size=test_size, seed=seed)
    outs = map_certificates(
        _certify, parts, pairs,
        lambda a, b: (classifier, score_functions(a, b) if score_functions is not None else None, method,
                      int(n_thresholds), m, confidence, delta, deltas, (a, b), seed, check_reuse),
        desc=ROUTE, n_jobs=n_jobs, progress=progress)
    settings = _settings(classifier, score_functions, method, n_thresholds, m, seed, check_reuse)
    return [out if not isinstance(out, PairFailure) else
            _failed(out, (a, b), split_test_sizes(parts[k], groups, (a, b), test_size), method, int(n_thresholds), m,
                    confidence, delta, deltas, settings)
            for k, ((a, b), out) in enumerate(zip(pairs, outs))]


def _failed(failure: PairFailure, pair, sizes, method, n_thresholds, m, confidence, delta, deltas,
            settings) -> TradeoffCertificate:
    """The certificate recorded for a pair that could not be certified (it stays in the family)."""
    k_bound = n_thresholds if method == "bonferroni" else 1
    return TradeoffCertificate.failed(
        failure.reason, pair=pair, n=sizes, method=method, confidence=confidence,
        alpha_per_bound=(1.0 - confidence) / (2.0 * k_bound * m),
        correction=_correction_label(method, k_bound, m) if method == "bonferroni" else _correction_label(method, 0, m),
        delta=delta, deltas=deltas, settings=settings, details={"error": failure.error})
