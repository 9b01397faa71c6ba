"""ROC-HT out-of-fold: the empirical hypothesis-testing route (*Picture the Epsilon*, Section III, Eq. 15).

``max(log((TPR - delta) / FPR), log((1 - FPR - delta) / (1 - TPR)))`` over the ROC of 5-fold out-of-fold
scores: an *estimate*, ``+inf`` whenever FPR = 0 < TPR (also at the exact null). Definitions: the book's methods
chapter, section "ROC-HT out-of-fold — an estimate".

The default logistic regression (and the paper's) is fitted for many pairs at once
(:mod:`epsaudit.audits._batched_logistic`: scikit-learn's objective and L-BFGS-B iterations vectorised over folds
and pairs, the same scores to rounding); ``solver="sklearn"`` runs the per-pair scikit-learn reference fits, and
any other classifier is fitted pair by pair.
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
    """The empirical ROC behind one ROC-HT out-of-fold value.

    Attributes
    ----------
    auc : float
        Area under the out-of-fold ROC.
    infinite, exact_corner : bool
        The value is ``+inf`` (a point with FPR = 0 < TPR or TPR = 1 > FPR); a point at (FPR, TPR) = (0, 1).
    tv_witness : float
        ``max(TPR - FPR)``, a lower bound on total variation for the fixed score.
    operating_points : int
        Points of the ROC (distinct thresholds plus the end point).
    convergence_warnings : int
        Fits that stopped at ``max_iter`` (one per fold at most).

    See Also
    --------
    roc_oof_epsilon, roc_oof_pairs : the values they come with.

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
    certificate_design : a reserved test's fit as a batched design.

    Examples
    --------
    >>> x, y = pair_design(np.zeros((2, 3)), np.ones((1, 3)))
    >>> x.shape, y.tolist()
    ((3, 3), [1, 1, 0])
    """
    return np.vstack([a, b]), np.r_[np.ones(len(a), dtype=int), np.zeros(len(b), dtype=int)]


def _out_of_fold_scores(x_a, x_b, *, classifier: Any = None, folds: int = DEFAULT_FOLDS, seed: int = 0) -> np.ndarray:
    """Out-of-fold scores for "identity A" (rows of ``vstack([x_a, x_b])``) under seeded ``StratifiedKFold``
    (``random_state = sklearn_seed("roc-folds", seed)``: the same folds for every pair and classifier)."""
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


def _oof_design(a: np.ndarray, b: np.ndarray, folds: int = DEFAULT_FOLDS, seed: int = 0) -> Design:
    """The out-of-fold fits of :func:`_out_of_fold_scores` as a batched design (fit ``k`` trains on every fold but
    the ``k``-th and scores it; *Picture the Epsilon*, Section III, Eq. 15)."""
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
        One fit on ``vstack([dev_a, dev_b])`` (label 1 for A), scoring the four parts in four groups as
        :func:`epsaudit.audits.roc_reserved.fixed_score` does.

    See Also
    --------
    pair_design : the labelled design of one pair.
    epsaudit.audits.reserved_test_certificate : the certificate whose fit this is.

    References
    ----------
    *Picture the Epsilon*, Section IV-C: the reserved test, its classifier fitted on development rows only.

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
    """:func:`_roc_summary` of every pair's out-of-fold scores, all fitted in batches (``contain``: errors become
    :class:`PairFailure`)."""
    errors = PAIR_ERRORS if contain else ()
    out: list[dict | PairFailure | None] = [None] * len(samples)
    designs: list[tuple[int, Design]] = []
    for i, (a, b) in enumerate(samples):
        try:
            designs.append((i, _oof_design(a, b, folds, seed)))
        except errors as exc:
            out[i] = PairFailure(reason=str(exc), error=type(exc).__name__)
    fitted = batched_scores([d for _, d in designs], spec, n_jobs=n_jobs, progress=progress, desc=ROUTE)
    for (i, design), (scores, warned, _) in zip(designs, fitted):
        oof = np.empty(len(design.y))
        for k, (test,) in enumerate(design.score_rows):
            oof[test] = scores[k][0]
        try:
            check_scores(oof, len(oof), f"the out-of-fold predict_proba of {name}")
            out[i] = {**_roc_summary(design.y, oof, delta), "convergence_warnings": warned}
        except errors as exc:
            out[i] = PairFailure(reason=str(exc), error=type(exc).__name__)
    return out  # type: ignore[return-value]


def _roc(y: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """scikit-learn's ``roc_curve(y, scores, drop_intermediate=False)`` and ``roc_auc_score(y, scores)``: the same
    arithmetic from one sort, without their input checks."""
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


def _roc_summary(y: np.ndarray, scores: np.ndarray, delta: float = 0.0) -> dict[str, Any]:
    """``epsilon`` (max over operating points, >= 0, may be +inf) and the fields of :class:`RocStatistics` but
    ``convergence_warnings``, of one empirical ROC."""
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
        lambda: _out_of_fold_scores(a, b, classifier=classifier, folds=folds, seed=seed))
    _, y = pair_design(a, b)
    return {**_roc_summary(y, scores, delta), "convergence_warnings": warned}


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
        With ``predict_proba`` or ``decision_function`` (default logistic regression).
    folds : int, default=5
        Stratified folds (the paper uses 5); needs ``folds <= min(n_A, n_B)``.
    seed : int, default=0
        Base seed of the shuffled folds: the same folds for every pair and classifier.
    delta : float, default=0.0
        0 for the paper's pure-DP conversion.
    pair : tuple, default=None
    solver : {"auto", "batched", "sklearn"}, default=None
        How the logistic regressions are fitted (:func:`epsaudit.audits._batched_logistic.resolve_solver`;
        None: :func:`epsaudit.audits._batched_logistic.current_solver`); the numbers are the same.

    Returns
    -------
    EpsilonResult
        ``kind="estimate"``; ``value`` may be ``+inf`` (the paper reports the count); ``statistics`` a
        :class:`RocStatistics`.

    Raises
    ------
    ValueError
        Bad samples, a bad classifier, or fewer rows per class than folds.

    See Also
    --------
    roc_oof_pairs : the same estimate for many pairs.
    epsaudit.audits.reserved_test_certificate : a certificate from untouched test rows.

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


def roc_oof_pairs(groups: Mapping[Hashable, np.ndarray], pairs: Sequence[tuple[Hashable, Hashable]], *,
                  classifier: Any = None, folds: int = DEFAULT_FOLDS, seed: int = 0, delta: float = 0.0,
                  n_jobs: int | None = None, progress: bool = False, solver: str | None = None) -> list[EpsilonResult]:
    """ROC-HT out-of-fold for many pairs (fold seed ``seed``; the default classifier fitted for all pairs at once).

    Parameters
    ----------
    groups : mapping identity -> array_like, shape (n_i, d)
    pairs : sequence of (identity, identity)
    classifier, folds, seed, delta, solver
        As in :func:`roc_oof_epsilon`.
    n_jobs : int, default=None
        joblib workers (``None`` = 1, ``-1`` = all cores).
    progress : bool, default=False
        Show a tqdm bar.

    Returns
    -------
    list of EpsilonResult
        One per pair, identical for any ``n_jobs``; a pair that cannot be computed (fewer rows than folds, a
        failing classifier or non-finite scores) is *not computed*, with the reason.

    Raises
    ------
    ValueError
        Invalid ``groups``/``pairs`` or a classifier without ``predict_proba``/``decision_function``.

    See Also
    --------
    roc_oof_epsilon : the same estimate for one pair.
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
