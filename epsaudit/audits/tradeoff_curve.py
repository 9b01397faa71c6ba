"""The trade-off band: thresholds fixed on development scores, simultaneous upper limits on the two
error rates of a fixed score, and what a band certifies (epsilon at every delta, Gaussian-DP mu).

Pure functions over scores and rates, vectorised over leading axes so that one call computes many
simulated bands; the certificate built from them is :func:`epsaudit.audits.tradeoff.tradeoff_certificate`
(construction and sampling model in :mod:`epsaudit.audits.tradeoff`). Trade-off functions and the
conversions: Dong, Roth & Su 2022, "Gaussian differential privacy", J. R. Stat. Soc. B 84(1),
Section 2; the DKW band with Massart's constant: Massart 1990, Ann. Probab. 18(3).
"""

from __future__ import annotations

import numpy as np

from ..bounds import clopper_pearson_upper, dkw_margin, tradeoff_epsilon, tradeoff_mu
from ..validation import check_probability
from .roc_reserved import choose_threshold

METHODS: tuple[str, ...] = ("bonferroni", "dkw")
#: Thresholds of the default Bonferroni band (the single-threshold choice plus 3 quantiles).
DEFAULT_THRESHOLDS = 4
#: Deltas at which the epsilon curve is reported by default.
DEFAULT_DELTAS: tuple[float, ...] = (0.0, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1)


# ---------------------------------------------------------------------------------------------
# Thresholds and the band (vectorised over leading axes)
# ---------------------------------------------------------------------------------------------


def development_thresholds(dev_scores_a, dev_scores_b, n_thresholds: int = DEFAULT_THRESHOLDS, *,
                           alpha: float = 0.025, delta: float = 1e-5) -> np.ndarray:
    """The Bonferroni band's thresholds, chosen on development scores only.

    The threshold of the single-threshold reserved test (:func:`choose_threshold` at level
    ``alpha`` and ``delta``: the best epsilon bound on the development counts) plus
    ``k - 1`` thresholds (``k = n_thresholds``) at the pooled development-score quantiles ``j / k``,
    ``j = 1 .. k - 1``, each snapped to the nearest midpoint between consecutive distinct
    development scores. Duplicates are dropped, so fewer than ``n_thresholds`` may come back
    (e.g. for scores with three distinct values); the multiplicity correction then uses the
    number returned, which depends on development data only.

    Parameters
    ----------
    dev_scores_a, dev_scores_b : array_like, shapes (n_A,), (n_B,)
        Development scores, higher meaning "more A".
    n_thresholds : int, >= 1
    alpha : float in (0, 1)
        Level of the single-threshold reserved test whose threshold is included (its
        ``(1 - confidence) / (2 m)``).
    delta : float in [0, 1)

    Returns
    -------
    numpy.ndarray, shape (k,), k <= n_thresholds
        Sorted thresholds (rule: "identity A" when score > t).

    Raises
    ------
    ValueError
        If ``n_thresholds < 1``, the scores are not 1-D arrays with >= 1 entry each or hold NaN
        (``+inf``/``-inf`` are allowed, as for the reserved test), or ``alpha``/``delta`` are out
        of range.

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
    """Simultaneous upper confidence limits on FPR and FNR at a family of thresholds.

    Vectorised over leading axes, so one call computes many simulated bands.

    Parameters
    ----------
    test_scores_a, test_scores_b : array_like, shapes (..., n_A), (..., n_B)
        Scores of the test rows of each identity (same leading shape); ``+inf``/``-inf`` allowed.
    alpha : float in (0, 1), or array_like of the leading shape (one level per band)
        ``"bonferroni"``: level of *each* one-sided Clopper-Pearson bound (the caller divides by
        ``2 k m``). ``"dkw"``: failure probability of *each* identity's two-sided band.
    method : {"bonferroni", "dkw"}
    thresholds : array_like, shape (k,) or (..., k)
        Thresholds fixed before the test rows were seen (no NaN). Required for ``"bonferroni"``;
        for ``"dkw"`` they are added to the thresholds at every distinct test score.

    Returns
    -------
    dict of numpy.ndarray, each of shape (..., K)
        ``thresholds``; ``fp`` (B rows scored > t) and ``fn`` (A rows scored <= t) as counts;
        ``fpr_upper`` and ``fnr_upper``; ``valid`` (False for positions inside a run of tied
        test scores, which are not thresholds of any test: their limits are set to 1). For
        ``"dkw"``, ``K = n_A + n_B + 1 + k``: ``-inf`` (every finite score is "A"), then every
        pooled test score in increasing order, then the given thresholds.

    Raises
    ------
    ValueError
        Unknown ``method``, missing thresholds for ``"bonferroni"``, NaN scores or thresholds,
        mismatched leading shapes, or ``alpha`` out of range.

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
        ``max`` over the ``K`` points of :func:`epsaudit.bounds.tradeoff_epsilon`; >= 0,
        non-increasing in delta.

    Raises
    ------
    ValueError
        From :func:`epsaudit.bounds.tradeoff_epsilon`.

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
