"""ROC-HT out-of-fold: the empirical hypothesis-testing route (*Picture the Epsilon*, Section III, Eq. 15).

A classifier (logistic regression, C = 1, lbfgs, max_iter = 1000 by default) is trained under
5-fold ``StratifiedKFold`` with a fixed seed; the ROC of the concatenated out-of-fold scores is
converted point by point with the Kairouz-Oh-Viswanath inequality
``max(log((TPR - delta) / FPR), log((1 - FPR - delta) / (1 - TPR)))`` and maximised. An
*estimate*: the classifier and the maximising threshold are chosen on the same scores, so the
value is descriptive, and it is ``+inf`` whenever an operating point has FPR = 0 and TPR > 0 (or
TPR = 1 and FPR < 1) -- which happens at the exact null too. The AUC, the ``+inf`` flag and the
stricter exact corner (FPR, TPR) = (0, 1) are reported separately.

The default logistic regression (and the paper's, without standardisation) is fitted for many
pairs at once (:mod:`epsaudit.audits._batched_logistic`): the same objective and the same L-BFGS-B
iterations as scikit-learn, vectorised over folds and pairs, so the scores agree with the
per-pair scikit-learn fits to rounding and the AUCs and values are the same. ``solver="sklearn"``
(or :func:`epsaudit.audits._batched_logistic.use_solver`) runs the per-pair scikit-learn fits instead, the
reference; any other classifier is always fitted pair by pair.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from sklearn.model_selection import StratifiedKFold, cross_val_predict

from ._batched_logistic import Design, LogisticSpec, batched_scores, resolve_solver
from ..bounds import roc_point_epsilon
from ..results import EpsilonResult, RouteStatistics
from .scorers import check_classifier, check_scores, classifier_name, count_convergence_warnings
from ..protocol import check_seed, sklearn_seed
from ..validation import as_groups, as_pair, as_pairs
from .runner import PAIR_ERRORS, PairFailure, map_pairs, not_computed

ROUTE = "roc_oof"
DEFAULT_FOLDS = 5


@dataclass(frozen=True)
class RocStatistics(RouteStatistics):
    """The empirical ROC behind one ROC-HT out-of-fold value (see :func:`roc_summary`).

    Attributes
    ----------
    auc : float
        Area under the out-of-fold ROC.
    infinite : bool
        The value is ``+inf`` (an operating point with FPR = 0 and TPR > 0, or TPR = 1 and FPR < 1).
    exact_corner : bool
        An operating point at (FPR, TPR) = (0, 1): the scores separate the identities.
    tv_witness : float
        ``max(TPR - FPR)``, a lower bound on total variation for the fixed score.
    operating_points : int
        Points of the ROC (distinct thresholds plus the end point).
    convergence_warnings : int
        Fits that stopped at ``max_iter`` (one per fold at most).

    See Also
    --------
    roc_summary : computes them.
    roc_oof_epsilon, roc_oof_pairs : the values they come with.
    epsaudit.results.RouteStatistics : the base class: frozen fields that flatten to table columns.

    Examples
    --------
    >>> RocStatistics(auc=1.0, infinite=True, exact_corner=True, tv_witness=1.0, operating_points=3).record()["auc"]
    1.0
    """

    auc: float
    infinite: bool
    exact_corner: bool
    tv_witness: float
    operating_points: int
    convergence_warnings: int = 0


def pair_design(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Stack two samples into ``(X, y)`` with label 1 for identity A and 0 for identity B.

    Parameters
    ----------
    a, b : numpy.ndarray, shapes (n_A, d), (n_B, d)

    Returns
    -------
    X : numpy.ndarray, shape (n_A + n_B, d)
    y : numpy.ndarray of int, shape (n_A + n_B,)

    See Also
    --------
    out_of_fold_scores : the out-of-fold fits on this design.
    oof_design : the same fits as one batched design.

    Examples
    --------
    >>> x, y = pair_design(np.zeros((2, 3)), np.ones((1, 3)))
    >>> x.shape, y.tolist()
    ((3, 3), [1, 1, 0])
    """
    return np.vstack([a, b]), np.r_[np.ones(len(a), dtype=int), np.zeros(len(b), dtype=int)]


def out_of_fold_scores(x_a, x_b, *, classifier: Any = None, folds: int = DEFAULT_FOLDS, seed: int = 0) -> np.ndarray:
    """Out-of-fold scores for "identity A" under seeded ``StratifiedKFold``.

    Parameters
    ----------
    x_a, x_b : array_like, shapes (n_A, d), (n_B, d)
    classifier : scikit-learn estimator, default=None
        Any estimator with ``predict_proba`` or ``decision_function`` (default logistic regression).
    folds : int, default=5
        Number of stratified folds (the paper uses 5); needs ``folds <= min(n_A, n_B)``.
    seed : int, default=0
        Base seed of the shuffled folds (``random_state = sklearn_seed("roc-folds", seed)``); the
        same seed gives the same folds for every pair and every classifier (used by the
        random-forest sensitivity check).

    Returns
    -------
    ndarray, shape (n_A + n_B,)
        Scores in the row order of ``vstack([x_a, x_b])``.

    Raises
    ------
    ValueError
        Bad samples, a bad classifier, or fewer rows per class than folds.

    See Also
    --------
    roc_summary : the ROC and epsilon of these scores.
    roc_oof_epsilon : the value of one pair from these scores.
    oof_design : the same folds as one batched design.
    pair_design : the labelled design it splits.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> scores = out_of_fold_scores(rng.normal(2.0, 1.0, size=(10, 2)), rng.normal(size=(10, 2)))
    >>> scores.shape, bool(scores[:10].mean() > scores[10:].mean())
    ((20,), True)
    """
    a, b = as_pair(x_a, x_b)
    clf = check_classifier(classifier)
    _check_folds(folds, a, b)
    x, y = pair_design(a, b)
    cv = _folds(folds, seed)
    method = "predict_proba" if hasattr(clf, "predict_proba") else "decision_function"
    scores = cross_val_predict(clf, x, y, cv=cv, method=method)
    scores = scores[:, 1] if scores.ndim == 2 else scores
    return check_scores(scores, len(y), f"the out-of-fold {method} of {classifier_name(clf)}")


def _check_folds(folds: int, a: np.ndarray, b: np.ndarray) -> None:
    if folds < 2 or folds > min(len(a), len(b)):
        raise ValueError(
            f"folds = {folds} needs 2 <= folds <= rows of the smaller class ({min(len(a), len(b))})"
        )


def _folds(folds: int, seed: int) -> StratifiedKFold:
    return StratifiedKFold(n_splits=folds, shuffle=True, random_state=sklearn_seed("roc-folds", check_seed(seed)))


@lru_cache(maxsize=4096)
def _fold_tests(n_a: int, n_b: int, folds: int, seed: int) -> tuple[np.ndarray, ...]:
    """The test rows of each seeded ``StratifiedKFold`` fold of a pair design (they depend on the sizes only)."""
    y = np.r_[np.ones(n_a, dtype=int), np.zeros(n_b, dtype=int)]
    tests = tuple(test for _, test in _folds(folds, seed).split(np.zeros((len(y), 1)), y))
    for test in tests:
        test.setflags(write=False)
    return tests


def oof_design(a: np.ndarray, b: np.ndarray, folds: int = DEFAULT_FOLDS, seed: int = 0) -> Design:
    """The out-of-fold fits of one pair as a batched design: the folds of :func:`out_of_fold_scores`.

    Parameters
    ----------
    a, b : numpy.ndarray, shapes (n_A, d), (n_B, d)
        Validated samples.
    folds : int, default=5
        As in :func:`out_of_fold_scores`.
    seed : int, default=0
        As in :func:`out_of_fold_scores`.

    Returns
    -------
    epsaudit.audits._batched_logistic.Design
        Rows ``vstack([a, b])`` (kept as the two blocks); fit ``k`` trains on every fold but the ``k``-th
        and scores it.

    Raises
    ------
    ValueError
        Fewer rows per class than folds.

    See Also
    --------
    out_of_fold_scores : the same fits with scikit-learn, one fold at a time.
    certificate_design : a reserved test's fit as a batched design.
    pair_design : the labelled design of one pair.

    References
    ----------
    *Picture the Epsilon*, Section III (Eq. 15) and Section IV ("ROC-HT configuration"): 5-fold
    out-of-fold scores of the logistic regression.

    Examples
    --------
    >>> design = oof_design(np.zeros((6, 2)), np.ones((5, 2)))
    >>> design.train.shape, sorted(int(len(t)) for (t,) in design.score_rows)
    ((5, 11), [2, 2, 2, 2, 3])
    """
    _check_folds(folds, a, b)
    y = np.r_[np.ones(len(a), dtype=int), np.zeros(len(b), dtype=int)]  # as pair_design, rows kept in blocks
    tests = _fold_tests(len(a), len(b), folds, seed)
    train = np.ones((folds, len(y)), dtype=bool)
    for k, test in enumerate(tests):
        train[k, test] = False
    return Design(x=(a, b), y=y, train=train, score_rows=tuple((test,) for test in tests))


def certificate_design(dev_a: np.ndarray, dev_b: np.ndarray, test_a: np.ndarray, test_b: np.ndarray) -> Design:
    """The fit of one reserved test as a batched design: trained on the development rows, scoring all four parts.

    Parameters
    ----------
    dev_a, dev_b, test_a, test_b : numpy.ndarray
        The pair's development and test rows (validated).

    Returns
    -------
    epsaudit.audits._batched_logistic.Design
        One fit on ``vstack([dev_a, dev_b])`` (label 1 for A); it scores ``dev_a``, ``dev_b``,
        ``test_a`` and ``test_b`` in four groups, as :func:`epsaudit.audits.roc_reserved.fixed_score`
        scores them.

    See Also
    --------
    oof_design : the out-of-fold fits as a batched design.
    epsaudit.audits.reserved_test_certificate : the certificate whose fit this is.

    References
    ----------
    *Picture the Epsilon*, Section IV-C: the reserved test, its classifier fitted on development
    rows only.

    Examples
    --------
    >>> design = certificate_design(np.zeros((3, 2)), np.ones((4, 2)), np.zeros((2, 2)), np.ones((2, 2)))
    >>> int(design.train.sum()), [len(g) for g in design.score_rows[0]]
    (7, [3, 4, 2, 2])
    """
    sizes = np.cumsum([0, len(dev_a), len(dev_b), len(test_a), len(test_b)])
    y = np.zeros(sizes[-1], dtype=int)
    y[: sizes[1]] = 1
    train = np.zeros((1, sizes[-1]), dtype=bool)
    train[0, : sizes[2]] = True
    groups = tuple(np.arange(sizes[i], sizes[i + 1]) for i in range(4))
    return Design(x=(dev_a, dev_b, test_a, test_b), y=y, train=train, score_rows=(groups,))


def _batched_summaries(samples: list[tuple[np.ndarray, np.ndarray]], spec: LogisticSpec, name: str, folds: int,
                       seed: int, delta: float, n_jobs: int | None = None, progress: bool = False,
                       contain: bool = True) -> list[dict | PairFailure]:
    """:func:`roc_summary` of every pair's out-of-fold scores, all folds of all pairs fitted in batches.

    With ``contain`` a pair's error becomes its :class:`PairFailure`; otherwise it is raised.
    """
    errors = PAIR_ERRORS if contain else ()
    out: list[dict | PairFailure | None] = [None] * len(samples)
    designs: list[tuple[int, Design]] = []
    for i, (a, b) in enumerate(samples):
        try:
            designs.append((i, oof_design(a, b, folds, seed)))
        except errors as exc:
            out[i] = PairFailure(reason=str(exc), error=type(exc).__name__)
    fitted = batched_scores([d for _, d in designs], spec, n_jobs=n_jobs, progress=progress, desc=ROUTE)
    for (i, design), (scores, warned, _) in zip(designs, fitted):
        oof = np.empty(len(design.y))
        for k, (test,) in enumerate(design.score_rows):
            oof[test] = scores[k][0]
        try:
            check_scores(oof, len(oof), f"the out-of-fold predict_proba of {name}")
            out[i] = {**roc_summary(design.y, oof, delta), "convergence_warnings": warned}
        except errors as exc:
            out[i] = PairFailure(reason=str(exc), error=type(exc).__name__)
    return out  # type: ignore[return-value]


def _roc(y: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """scikit-learn's ``roc_curve(y, scores, drop_intermediate=False)`` and ``roc_auc_score(y, scores)``.

    The same arithmetic from one sort, without their input checks (the caller's inputs are checked):
    cumulative counts at each distinct score, descending; the AUC is the trapezoid area of the curve
    with collinear points dropped, as ``roc_auc_score`` computes it.
    """
    order = np.argsort(scores, kind="stable")[::-1]
    ranked, hits = scores[order], (y[order] == 1).astype(np.float64)
    thresholds = np.append(np.flatnonzero(np.diff(ranked)), len(ranked) - 1)
    tps = np.cumsum(hits)[thresholds]
    fps = 1 + thresholds.astype(np.float64) - tps
    zero = np.zeros(1)
    fpr, tpr = np.concatenate((zero, fps)) / fps[-1], np.concatenate((zero, tps)) / tps[-1]
    if len(fps) > 2:  # roc_auc_score's curve: drop_intermediate=True
        inner = np.logical_or(np.diff(fps, 2), np.diff(tps, 2))
        keep = np.flatnonzero(np.concatenate(([True], inner, [True])))
        fps, tps = fps[keep], tps[keep]
    x, h = np.concatenate((zero, fps)) / fps[-1], np.concatenate((zero, tps)) / tps[-1]
    return fpr, tpr, float((np.diff(x) * (h[1:] + h[:-1]) / 2.0).sum())


def roc_summary(y: np.ndarray, scores: np.ndarray, delta: float = 0.0) -> dict[str, Any]:
    """Epsilon, AUC, +inf flag, exact corner and witness TV of one empirical ROC.

    Parameters
    ----------
    y : ndarray of {0, 1}, shape (N,)
    scores : ndarray, shape (N,)
    delta : float, default=0.0

    Returns
    -------
    dict
        ``epsilon`` (max over all operating points, >= 0, may be +inf), ``auc``, ``infinite``
        (bool), ``exact_corner`` (an operating point at FPR = 0, TPR = 1), ``tv_witness``
        (``max(TPR - FPR)``, a lower bound on total variation for a fixed score) and
        ``operating_points``: the value and the fields of :class:`RocStatistics`.

    See Also
    --------
    out_of_fold_scores : the scores it summarises.
    roc_oof_epsilon : the value of one pair.
    epsaudit.bounds.roc_point_epsilon : the epsilon of one ROC point.

    Examples
    --------
    >>> out = roc_summary(np.array([1, 1, 0, 0]), np.array([0.9, 0.4, 0.6, 0.1]))
    >>> out["epsilon"], out["auc"], out["tv_witness"]
    (inf, 0.75, 0.5)
    """
    fpr, tpr, auc = _roc(np.asarray(y), np.asarray(scores, dtype=np.float64))
    eps = float(max(np.max(roc_point_epsilon(tpr, fpr, delta)), 0.0))
    return {
        "epsilon": eps,
        "auc": auc,
        "infinite": bool(np.isinf(eps)),
        "exact_corner": bool(np.any((fpr == 0) & (tpr == 1))),
        "tv_witness": float(np.max(tpr - fpr)),
        "operating_points": len(fpr),
    }


def _oof_job(a, b, classifier, folds, seed, delta) -> dict:
    scores, warned = count_convergence_warnings(
        lambda: out_of_fold_scores(a, b, classifier=classifier, folds=folds, seed=seed))
    _, y = pair_design(a, b)
    return {**roc_summary(y, scores, delta), "convergence_warnings": warned}


def _result(summary: dict | PairFailure, n_a, n_b, pair, classifier, folds, seed, delta, name=None) -> EpsilonResult:
    name = classifier_name(check_classifier(classifier)) if name is None else name
    settings = {"classifier": name, "folds": folds, "seed": seed}
    if isinstance(summary, PairFailure):
        return not_computed(summary, route=ROUTE, kind="estimate", pair=pair, n=(n_a, n_b), delta=delta,
                            settings=settings)
    stats = dict(summary)
    value = stats.pop("epsilon")
    return EpsilonResult(value=value, kind="estimate", route=ROUTE, n=(n_a, n_b), pair=pair, delta=delta,
                         settings=settings, statistics=RocStatistics(**stats))


def roc_oof_epsilon(x_a, x_b, *, classifier: Any = None, folds: int = DEFAULT_FOLDS, seed: int = 0,
                    delta: float = 0.0, pair=None, solver: str | None = None) -> EpsilonResult:
    """ROC-HT out-of-fold value for one identity pair (*Picture the Epsilon*, Eq. 15).

    Parameters
    ----------
    x_a, x_b : array_like, shapes (n_A, d), (n_B, d)
    classifier : scikit-learn estimator, default=None
        See :func:`out_of_fold_scores`.
    folds : int, default=5
        See :func:`out_of_fold_scores`.
    seed : int, default=0
        See :func:`out_of_fold_scores`.
    delta : float, default=0.0
        0 for the paper's pure-DP conversion.
    pair : tuple, default=None
    solver : {"auto", "batched", "sklearn"}, default=None
        How the logistic regressions are fitted (:func:`epsaudit.audits._batched_logistic.resolve_solver`;
        None: :func:`epsaudit.audits._batched_logistic.current_solver`, ``"auto"`` by default); the
        numbers are the same.

    Returns
    -------
    EpsilonResult
        ``kind="estimate"``; ``value`` may be ``+inf`` (documented: the paper reports the count);
        ``statistics`` a :class:`RocStatistics` (``auc``, ``infinite``, ``exact_corner``,
        ``tv_witness``, ``operating_points``, ``convergence_warnings``).

    Raises
    ------
    ValueError
        See :func:`out_of_fold_scores`.

    See Also
    --------
    roc_oof_pairs : the same estimate for many pairs.
    out_of_fold_scores, roc_summary : its two steps.
    epsaudit.audits.reserved_test_certificate : a certificate from untouched test rows.
    epsaudit.audits.mmd_tv_epsilon : the other estimate route.
    epsaudit.audits.gaussmech_epsilon, epsaudit.audits.kde_lr_epsilon : the diagnostic routes.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> r = roc_oof_epsilon(rng.normal(3.0, 1.0, size=(10, 2)), rng.normal(size=(10, 2)))
    >>> r.value, r.kind, r.statistics.exact_corner
    (inf, 'estimate', True)
    """
    a, b = as_pair(x_a, x_b)
    name = classifier_name(check_classifier(classifier))
    spec = resolve_solver(solver, classifier)
    if spec is None:
        summary = _oof_job(a, b, classifier, folds, seed, delta)
    else:
        summary = _batched_summaries([(a, b)], spec, name, folds, seed, delta, contain=False)[0]
    return _result(summary, len(a), len(b), pair, classifier, folds, seed, delta)


def roc_oof_pairs(
    groups: Mapping[Hashable, np.ndarray],
    pairs: Sequence[tuple[Hashable, Hashable]],
    *,
    classifier: Any = None,
    folds: int = DEFAULT_FOLDS,
    seed: int = 0,
    delta: float = 0.0,
    n_jobs: int | None = None,
    progress: bool = False,
    solver: str | None = None,
) -> list[EpsilonResult]:
    """ROC-HT out-of-fold for many pairs (every pair uses fold seed ``seed``).

    The default classifier's folds are fitted for all pairs at once (module docstring); other
    classifiers pair by pair, with joblib over pairs.

    Parameters
    ----------
    groups : mapping identity -> array_like, shape (n_i, d)
    pairs : sequence of (identity, identity)
    classifier, folds, seed, delta
        As in :func:`roc_oof_epsilon`.
    n_jobs : int, default=None
        joblib workers (``None`` = 1, ``-1`` = all cores).
    progress : bool, default=False
        Show a tqdm bar.
    solver : {"auto", "batched", "sklearn"}, default=None
        As in :func:`roc_oof_epsilon`.

    Returns
    -------
    list of EpsilonResult
        One per pair, as :func:`roc_oof_epsilon`; identical for any ``n_jobs``. A pair that cannot
        be computed (fewer rows than folds, a classifier that fails or returns non-finite scores)
        is *not computed*, with the reason; the other pairs go on.

    Raises
    ------
    ValueError
        Invalid ``groups``/``pairs`` or a classifier without ``predict_proba``/``decision_function``.

    See Also
    --------
    roc_oof_epsilon : the same estimate for one pair.
    epsaudit.audits.reserved_test_pairs : reserved-test certificates for many pairs.
    epsaudit.audits.mmd_tv_pairs : the other estimate route over many pairs.
    epsaudit.audits.gaussmech_pairs, epsaudit.audits.kde_lr_pairs : the diagnostic routes over many pairs.
    epsaudit.audits.select_pairs : ranks pairs by out-of-fold AUC on development rows.
    epsaudit.audits.audit_pairs : the four routes on one shuffled pair list.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> groups = {"A": rng.normal(3.0, 1.0, size=(10, 2)), "B": rng.normal(size=(10, 2)), "C": rng.normal(size=(3, 2))}
    >>> res = roc_oof_pairs(groups, [("A", "B"), ("A", "C")])
    >>> res[0].statistics.auc, res[1].not_computed
    (1.0, 'folds = 5 needs 2 <= folds <= rows of the smaller class (3)')
    """
    groups = as_groups(groups)
    pairs = as_pairs(pairs, groups)
    clf = check_classifier(classifier)
    spec = resolve_solver(solver, classifier)
    if spec is None:
        tasks = [(groups[a], groups[b], classifier, folds, seed, delta) for a, b in pairs]
        summaries = map_pairs(_oof_job, tasks, desc=ROUTE, n_jobs=n_jobs, progress=progress)
    else:
        summaries = _batched_summaries([(groups[a], groups[b]) for a, b in pairs], spec, classifier_name(clf), folds,
                                       seed, delta, n_jobs=n_jobs, progress=progress)
    name = classifier_name(clf)  # once: an estimator's repr is slow
    return [_result(s, len(groups[a]), len(groups[b]), (a, b), classifier, folds, seed, delta, name)
            for (a, b), s in zip(pairs, summaries)]
