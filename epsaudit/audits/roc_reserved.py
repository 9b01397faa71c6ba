"""ROC-HT reserved test: a finite-sample lower confidence bound on epsilon (*Picture the Epsilon*,
Section IV-C; Tables 3 and 7).

A classifier (or a fixed score) and its threshold are chosen on development rows only; the test's counts on untouched
test rows (``n1`` of A, ``n0`` of B) become a lower confidence bound: the exact joint test of both error rates
(``bound="joint"``, default, :func:`epsaudit.bounds.joint_epsilon`) or the paper's split bound (``"clopper-pearson"``:
``eps_LB = max(0, log((TPR_lo - delta) / FPR_hi), log((TNR_lo - delta) / FNR_hi))``, one-sided bounds at ``a / 2``).
With ``m`` certificates reported together ``a = (1 - confidence) / m`` (Bonferroni): all hold together with
probability at least ``confidence`` under the iid row model. Derivation: the book's methods chapter, section
'ROC-HT on reserved test data — a certificate'. :func:`certificate_with_bound` re-bounds a certificate's counts.

Threshold (ours; the paper leaves it open): the midpoint between consecutive distinct in-sample development scores
maximising the same bound on development counts (the middle one among ties; if none certifies anything, the one
maximising ``|TPR - FPR|``): it can cost power, never validity. The default logistic regression is fitted for many
pairs at once (:mod:`epsaudit.audits._batched_logistic`; ``solver="sklearn"`` fits pair by pair, the reference).

Freshness: the bound needs test rows never used to fit, choose the threshold or choose the pair. Every entry point
refuses test rows that copy the pair's development rows, bit for bit or after L2-normalisation
(:func:`epsaudit.validation.check_fresh`; copies would certify the cap for identical distributions). Where values
repeat by design or rows differing only in scale are different outputs, draw ids (``dev_ids``, ``test_ids``) are
compared instead (:func:`epsaudit.validation.check_fresh_ids`), or ``check_reuse=False`` vouches for fresh draws;
``settings["freshness"]`` records which (:data:`FRESHNESS`).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from scipy.stats import rankdata
from sklearn.base import clone
from sklearn.metrics import roc_auc_score

from ._batched_logistic import Design, LogisticSpec, batched_scores, resolve_solver
from ..bounds import (DEFAULT_BOUND, bonferroni_alpha, bound_level, certifiable_cap, certified_epsilon, check_bound,
                      clopper_pearson_epsilon, clopper_pearson_lower, clopper_pearson_upper, correction_label)
from ..results import EpsilonResult, RouteStatistics
from .scorers import check_classifier, check_scores, classifier_name, count_convergence_warnings, positive_scores
from ..validation import as_dev_test, as_draw_ids, as_groups, as_pairs, check_fresh, check_fresh_ids, check_probability
from .roc_oof import certificate_design, pair_design
from .runner import (PAIR_ERRORS, PairFailure, family_size, map_certificates, not_computed, pair_id_parts,
                     pair_parts, split_test_sizes)

ROUTE = "roc_reserved"
ScoreFunction = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class CertificateStatistics(RouteStatistics):
    """The test behind one reserved-test certificate: its threshold, test counts and bounds.

    Attributes
    ----------
    threshold : float
        Fixed on development scores (rule: "identity A" when score > threshold).
    tp, fp : int
        Test rows of A and of B scored above the threshold.
    tpr_lower, fpr_upper : float
        One-sided Clopper-Pearson bounds at half the certificate's level (the split bound's parts).
    test_auc : float
        AUC of the fixed score on the test rows (a description, not part of the bound).
    censored : bool
        Zero test errors: the certificate is its ``cap``, the most this test size can certify
        (:func:`epsaudit.bounds.certifiable_cap`).
    cap : float
    n_dev_a, n_dev_b, convergence_warnings : int
        Development rows that fitted the classifier and chose the threshold; fits that stopped at ``max_iter``.

    See Also
    --------
    reserved_test_certificate, reserved_test_pairs, certificate_with_bound : the certificates they come with.
    epsaudit.results.RouteStatistics : the base class: frozen fields that flatten to table columns.

    Examples
    --------
    >>> s = CertificateStatistics(threshold=0.5, tp=30, fp=0, tpr_lower=0.9, fpr_upper=0.1, test_auc=1.0,
    ...                           censored=True, cap=1.28, n_dev_a=70, n_dev_b=70, convergence_warnings=0)
    >>> s.censored, s.record()["cap"]
    (True, 1.28)
    """

    threshold: float
    tp: int
    fp: int
    tpr_lower: float
    fpr_upper: float
    test_auc: float
    censored: bool
    cap: float
    n_dev_a: int
    n_dev_b: int
    convergence_warnings: int


#: ``settings["freshness"]`` of a certificate, by the check that ran.
FRESHNESS = {
    "values": "test rows checked against development rows",
    "draw ids": "test draw ids checked against development draw ids (values not compared)",
    "none": "not checked (check_reuse=False): the caller vouches for fresh test draws",
}


def _check_freshness(dev_a, dev_b, test_a, test_b, names: tuple = ("A", "B"), check_reuse: bool = True,
                     ids: tuple | None = None) -> None:
    """One pair's freshness check: by the draw ids ``ids`` (of ``dev_a, dev_b, test_a, test_b``) when given, else by
    values unless ``check_reuse`` is False; raises :class:`epsaudit.validation.ReusedRowsError`."""
    context = f"reserved test of pair ({names[0]!r}, {names[1]!r})"
    if ids is not None:
        check_fresh_ids({names[0]: ids[0], names[1]: ids[1]}, {names[0]: ids[2], names[1]: ids[3]}, context=context)
    elif check_reuse:
        check_fresh({names[0]: dev_a, names[1]: dev_b}, {names[0]: test_a, names[1]: test_b}, context=context)


def choose_threshold(scores_a: np.ndarray, scores_b: np.ndarray, alpha: float, delta: float) -> float:
    """Threshold (rule: "identity A" when score > t) maximising the certified bound on development scores.

    Parameters
    ----------
    scores_a, scores_b : ndarray, shapes (n_A,), (n_B,)
        Development scores of the two identities.
    alpha, delta : float
        Level of the certificate and delta of the paper's split bound, evaluated on development counts (fast, close in
        ordering to the joint bound; the choice affects power only, never validity).

    Returns
    -------
    float
        A midpoint between consecutive distinct development scores (the score itself when all coincide); next to
        ``+inf`` (``-inf``) the largest float (its negative), so "score > t" means "score is +inf".

    See Also
    --------
    fixed_score, reserved_test_certificate : the score it thresholds; the certificate.
    epsaudit.audits.development_thresholds : a trade-off band's thresholds.

    Examples
    --------
    >>> choose_threshold(np.array([2.0, 3.0, 4.0]), np.array([0.0, 1.0, 1.5]), alpha=0.05, delta=0.0)
    1.75
    >>> choose_threshold(np.array([np.inf, np.inf, 0.2]), np.array([0.0, 1.0, 0.5]), alpha=0.2, delta=0.0)
    1.7976931348623157e+308
    """
    values = np.unique(np.concatenate([scores_a, scores_b]))
    if len(values) == 1:
        return float(values[0])  # nothing separates: every row scores the same
    lower, upper = values[:-1], values[1:]
    with np.errstate(invalid="ignore"):  # inf + inf and -inf + inf are replaced below
        candidates = (lower + upper) / 2.0
    big = np.finfo(np.float64).max
    candidates = np.where(upper == np.inf, big, np.where(lower == -np.inf, -big, candidates))
    sa, sb = np.sort(scores_a), np.sort(scores_b)
    tp = len(sa) - np.searchsorted(sa, candidates, side="right")
    fp = len(sb) - np.searchsorted(sb, candidates, side="right")
    bound = clopper_pearson_epsilon(fp, len(sb), len(sa) - tp, len(sa), alpha, delta)
    criterion = bound if np.max(bound) > 0 else np.abs(tp / len(sa) - fp / len(sb))
    best = np.flatnonzero(criterion == np.max(criterion))
    return float(candidates[best[len(best) // 2]])


def fixed_score(dev_a: np.ndarray, dev_b: np.ndarray, classifier: Any = None,
                score_function: ScoreFunction | None = None) -> tuple[Callable[[np.ndarray, str], np.ndarray], int]:
    """The score a reserved test fixes on development rows: a fitted classifier, or a given score.

    Parameters
    ----------
    dev_a, dev_b : numpy.ndarray, shapes (n_A, d), (n_B, d)
        Development rows (the classifier is fitted on them; unused with ``score_function``).
    classifier : scikit-learn estimator, default=None
        Default :func:`epsaudit.audits.scorers.logistic_regression`.
    score_function : callable ``(n, d) -> (n,)``, default=None
        A fixed score; its output is checked (one number per row, no NaN; ``+/-inf`` allowed).

    Returns
    -------
    score : callable ``(rows, part) -> numpy.ndarray``
        Scores of ``rows``, higher meaning "more A"; ``part`` names the rows in error messages.
    convergence_warnings : int
        Fits that stopped at ``max_iter`` (0 for a fixed score).

    Raises
    ------
    ValueError
        A classifier without ``predict_proba``/``decision_function``; from ``score``: output of the wrong shape or NaN.

    See Also
    --------
    choose_threshold, reserved_test_certificate, epsaudit.audits.fit_sequential_test : its users.

    Examples
    --------
    >>> score, warned = fixed_score(np.ones((3, 2)), np.zeros((3, 2)), score_function=lambda x: x[:, 0])
    >>> score(np.array([[2.0, 0.0]]), "test rows"), warned
    (array([2.]), 0)
    """
    if score_function is not None:
        def score(rows, part):
            return check_scores(score_function(rows), len(rows), f"score_function on the {part}", allow_infinite=True)
        return score, 0
    x, y = pair_design(dev_a, dev_b)
    fitted, warned = count_convergence_warnings(lambda: clone(check_classifier(classifier)).fit(x, y))
    return (lambda rows, part: positive_scores(fitted, rows)), warned


def _certify(dev_a, dev_b, test_a, test_b, classifier, score_function, alpha, delta,
             names=("A", "B"), check_reuse=True, ids=None, bound=DEFAULT_BOUND) -> dict:
    _check_freshness(dev_a, dev_b, test_a, test_b, names, check_reuse, ids)
    score, warned = fixed_score(dev_a, dev_b, classifier, score_function)
    dev_sa = score(dev_a, f"development rows of {names[0]!r}")
    dev_sb = score(dev_b, f"development rows of {names[1]!r}")
    test_sa, test_sb = score(test_a, f"test rows of {names[0]!r}"), score(test_b, f"test rows of {names[1]!r}")
    return _record(dev_sa, dev_sb, test_sa, test_sb, alpha, delta, warned, bound)


def _certify_batched(items: Sequence[tuple], spec: LogisticSpec, name: str, alpha: float, delta: float,
                     check_reuse: bool, n_jobs: int | None = None, progress: bool = False,
                     contain: bool = True, bound: str = DEFAULT_BOUND) -> list[dict | PairFailure]:
    """:func:`_certify` of many pairs, their classifiers fitted in batches; ``items``: per pair ``(parts, names,
    ids)``, ``parts`` the four row arrays or a :class:`PairFailure`. With ``contain`` errors become failures."""
    errors = PAIR_ERRORS if contain else ()
    out: list[Any] = [None] * len(items)
    designs: list[tuple[int, Design]] = []
    for i, (parts, names, ids) in enumerate(items):
        if isinstance(parts, PairFailure):
            out[i] = parts
            continue
        try:
            _check_freshness(*parts, names, check_reuse, ids)
            designs.append((i, certificate_design(*parts)))
        except errors as exc:
            out[i] = PairFailure(reason=str(exc), error=type(exc).__name__)
    fitted = batched_scores([d for _, d in designs], spec, n_jobs=n_jobs, progress=progress, desc=ROUTE)
    for (i, _), (scores, warned, _) in zip(designs, fitted):
        try:
            out[i] = _record(*(check_scores(v, len(v), f"classifier {name}") for v in scores[0]), alpha, delta, warned,
                             bound)
        except errors as exc:
            out[i] = PairFailure(reason=str(exc), error=type(exc).__name__)
    return out


def _record(dev_sa, dev_sb, test_sa, test_sb, alpha, delta, warned, bound=DEFAULT_BOUND) -> dict:
    """The certificate of the scores of one pair's development and test rows (threshold on development)."""
    threshold = choose_threshold(dev_sa, dev_sb, alpha, delta)
    tp, fp = int(np.sum(test_sa > threshold)), int(np.sum(test_sb > threshold))
    n1, n0 = len(test_sa), len(test_sb)
    y_test = np.r_[np.ones(n1, dtype=int), np.zeros(n0, dtype=int)]
    return {
        "epsilon": float(certified_epsilon(fp, n0, n1 - tp, n1, alpha, delta, bound=bound)),
        "threshold": threshold, "tp": tp, "fp": fp,
        "tpr_lower": float(clopper_pearson_lower(tp, n1, alpha / 2)),
        "fpr_upper": float(clopper_pearson_upper(fp, n0, alpha / 2)),
        "test_auc": float(roc_auc_score(y_test, rankdata(np.r_[test_sa, test_sb]))),  # ranks: +/-inf allowed
        "censored": bool(tp == n1 and fp == 0),
        "cap": certifiable_cap(n1, n0, alpha, delta, bound=bound),
        "n_dev_a": len(dev_sa), "n_dev_b": len(dev_sb), "convergence_warnings": warned,
    }


def _certificate(out: dict | PairFailure, pair, n_test, classifier, score_function, confidence, alpha, m, delta,
                 seed, check_reuse, ids_given=False, bound=DEFAULT_BOUND) -> EpsilonResult:
    test_name = "fixed score function" if score_function is not None else classifier_name(check_classifier(classifier))
    fields = {"route": ROUTE, "kind": "certificate", "pair": pair, "n": n_test, "delta": delta, "confidence": confidence,
              "alpha_per_bound": bound_level(alpha, bound), "correction": correction_label(m, bound), "bound": bound,
              "settings": {"test": test_name, "threshold_rule": "max bound on development scores", "seed": seed,
                           "n_certificates": m,
                           "freshness": FRESHNESS["draw ids" if ids_given else "values" if check_reuse else "none"]}}
    if isinstance(out, PairFailure):
        return not_computed(out, **fields)
    stats = dict(out)
    return EpsilonResult(value=stats.pop("epsilon"), statistics=CertificateStatistics(**stats), **fields)


def _check_options(n_certificates: int, confidence: float, delta: float, bound: str = DEFAULT_BOUND) -> float:
    check_bound(bound)
    check_probability(confidence, "confidence")
    check_probability(delta, "delta", open_interval=False)
    return bonferroni_alpha(n_certificates, confidence)


def _check_id_options(dev_ids, test_ids, check_reuse: bool, split: bool = False) -> bool:
    """Whether draw ids were given (both or neither, or ``dev_ids`` alone when the rows are ``split``;
    not together with ``check_reuse=False``)."""
    if dev_ids is None and test_ids is not None or (dev_ids is not None and test_ids is None and not split):
        given, missing = ("dev_ids", "test_ids") if test_ids is None else ("test_ids", "dev_ids")
        raise ValueError(f"{given} given without {missing}: the freshness check by draw ids needs the ids of the "
                         "development rows and of the test rows")
    if dev_ids is not None and not check_reuse:
        raise ValueError("check_reuse=False and draw ids given: with ids the test draws are checked against the "
                         "development draws (values are not compared); drop check_reuse=False")
    return dev_ids is not None


def _pair_ids(ids, rows, name: str, names) -> tuple[np.ndarray, np.ndarray]:
    if not isinstance(ids, (tuple, list)) or len(ids) != 2:
        raise ValueError(f"{name} must be a pair (ids of {names[0]!r}'s rows, ids of {names[1]!r}'s rows)")
    return (as_draw_ids(ids[0], len(rows[0]), f"{name}[0] ({names[0]!r})"),
            as_draw_ids(ids[1], len(rows[1]), f"{name}[1] ({names[1]!r})"))


def reserved_test_certificate(
    dev_a, dev_b, test_a, test_b, *,
    classifier: Any = None,
    score_function: ScoreFunction | None = None,
    n_certificates: int = 1,
    confidence: float = 0.95,
    delta: float = 1e-5,
    pair=None,
    check_reuse: bool = True,
    dev_ids=None,
    test_ids=None,
    solver: str | None = None,
    bound: str = DEFAULT_BOUND,
) -> EpsilonResult:
    """Reserved-test certificate for one pair from separate development and test samples.

    Parameters
    ----------
    dev_a, dev_b : array_like, shapes (n_A_dev, d), (n_B_dev, d)
        Development rows: fit the classifier and choose the threshold.
    test_a, test_b : array_like, shapes (n1, d), (n0, d)
        Untouched test rows: only count errors at the fixed threshold.
    classifier : scikit-learn estimator, default=None
        Learned test (default logistic regression); ignored with ``score_function``.
    score_function : callable, default=None
        A fixed score ``(n, d) -> (n,)``, higher meaning "more A" (e.g. a mechanism's exact likelihood ratio): one
        number per row, no NaN, ``+/-inf`` allowed.
    n_certificates : int, default=1
        How many certificates are reported together (the Bonferroni family size ``m``).
    confidence : float, default=0.95
        Family-wise confidence; each certificate is at error level ``(1 - confidence) / m``.
    delta : float, default=1e-5
        The delta of (epsilon, delta)-DP.
    pair : tuple, default=None
    check_reuse : bool, default=True
        Refuse test rows that copy development rows (bit for bit or after L2-normalisation). False only for fresh
        draws whose values repeat by design (or differ only in scale) when no draw ids are at hand.
    dev_ids, test_ids : pair of array_like, default=None
        Draw ids, ``(ids of dev_a, ids of dev_b)`` and ``(ids of test_a, ids of test_b)``, one per row (both or neither;
        not with ``check_reuse=False``): a test draw id equal to a development one or used twice is refused
        (:func:`epsaudit.validation.check_fresh_ids`); equal values are allowed.
    solver : {"auto", "batched", "sklearn"}, default=None
        How a logistic regression is fitted (:func:`epsaudit.audits._batched_logistic.resolve_solver`; None:
        :func:`epsaudit.audits._batched_logistic.current_solver`); the numbers are the same.
    bound : {"joint", "clopper-pearson"}, default="joint"
        The exact joint test (:func:`epsaudit.bounds.joint_epsilon`) or the paper's two one-sided Clopper-Pearson
        bounds (*Picture the Epsilon*, Section IV-C). Recorded as ``result.bound``.

    Returns
    -------
    EpsilonResult
        ``kind="certificate"``, ``n = (n1, n0)``, ``settings["freshness"]`` (:data:`FRESHNESS`), ``statistics`` a
        :class:`CertificateStatistics`.

    Raises
    ------
    ValueError
        Bad samples (fewer than 2 rows per class, NaN/inf, mismatched dimensions), a bad classifier,
        ``confidence``/``delta`` out of range, ``n_certificates < 1``, a ``score_function`` output not one number per
        row or with NaN; draw ids not one per row, missing, given for one part only or with ``check_reuse=False``.
    epsaudit.validation.ReusedRowsError
        (a ``ValueError``) Test rows that repeat development rows, or with ids test draws that are development draws.

    See Also
    --------
    reserved_test_pairs, certificate_with_bound : many pairs in a Bonferroni family; the same test by another bound.
    epsaudit.audits.worst_pair_certificate, epsaudit.audits.tradeoff_certificate : the worst pair; a trade-off curve.
    epsaudit.audits.mmd_certificate, epsaudit.audits.certify_sampler : the MMD and anytime-valid certificates.
    epsaudit.audits.roc_oof_epsilon, epsaudit.bounds.joint_epsilon : the out-of-fold estimate; the default bound.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> a, b = rng.normal(4.0, 1.0, size=(60, 2)), rng.normal(size=(60, 2))
    >>> cert = reserved_test_certificate(a[:30], b[:30], a[30:], b[30:])
    >>> round(cert.value, 3), cert.statistics.censored, round(cert.statistics.cap, 3), cert.bound
    (2.972, True, 2.972, 'joint')
    >>> hot = lambda i, n: np.eye(3)[np.full(n, i)]  # one-hot outputs repeat by design: draw ids tell fresh ones
    >>> cert = reserved_test_certificate(hot(0, 20), hot(1, 20), hot(0, 20), hot(1, 20), delta=0.0,
    ...                                  dev_ids=(range(0, 20), range(20, 40)), test_ids=(range(40, 60), range(60, 80)))
    >>> round(cert.value, 3), cert.settings["freshness"]
    (2.554, 'test draw ids checked against development draw ids (values not compared)')
    """
    da, db, ta, tb = as_dev_test(dev_a, dev_b, test_a, test_b)
    alpha = _check_options(n_certificates, confidence, delta, bound)
    spec = None
    if score_function is None:
        name = classifier_name(check_classifier(classifier))
        spec = resolve_solver(solver, classifier)
    names = tuple(pair) if pair is not None else ("A", "B")
    ids = None
    if _check_id_options(dev_ids, test_ids, check_reuse):
        ids = (*_pair_ids(dev_ids, (da, db), "dev_ids", names), *_pair_ids(test_ids, (ta, tb), "test_ids", names))
    if spec is None:
        out = _certify(da, db, ta, tb, classifier, score_function, alpha, delta, names, check_reuse, ids, bound)
    else:
        out = _certify_batched([((da, db, ta, tb), names, ids)], spec, name, alpha, delta, check_reuse,
                               contain=False, bound=bound)[0]
    return _certificate(out, pair, (len(ta), len(tb)), classifier, score_function, confidence, alpha,
                        n_certificates, delta, None, check_reuse, ids is not None, bound)


def reserved_test_pairs(
    groups: Mapping[Hashable, np.ndarray],
    pairs: Sequence[tuple[Hashable, Hashable]],
    *,
    test_groups: Mapping[Hashable, np.ndarray] | None = None,
    test_size: float = 0.3,
    classifier: Any = None,
    score_functions: Callable[[Hashable, Hashable], ScoreFunction] | None = None,
    n_certificates: int | None = None,
    confidence: float = 0.95,
    delta: float = 1e-5,
    seed: int = 0,
    n_jobs: int | None = None,
    progress: bool = False,
    check_reuse: bool = True,
    dev_ids: Mapping[Hashable, Any] | None = None,
    test_ids: Mapping[Hashable, Any] | None = None,
    solver: str | None = None,
    bound: str = DEFAULT_BOUND,
) -> list[EpsilonResult]:
    """Reserved-test certificates for many pairs, all holding together at ``confidence``.

    Parameters
    ----------
    groups : mapping identity -> array_like, shape (n_i, d)
        Development rows, or all rows when ``test_groups`` is None (each identity split once,
        :func:`epsaudit.protocol.split_identities`).
    pairs : sequence of (identity, identity)
    test_groups : mapping, default=None
        Separate untouched test rows per identity (synthetic mechanisms draw fresh ones).
    test_size : float, default=0.3
        Fraction of each identity's rows reserved for testing when ``test_groups`` is None.
    classifier : estimator, default=None
    score_functions : callable ``(A, B) -> score function``, default=None
        Fixed tests, e.g. ``mechanism.exact_score`` (then nothing is learned).
    n_certificates : int, default=None
        Bonferroni family size ``m``; defaults to ``len(pairs)``.
    confidence, delta, check_reuse, solver, bound
        As in :func:`reserved_test_certificate`: one joint test per pair at ``(1 - confidence) / m`` (default), or
        two one-sided bounds at ``(1 - confidence) / (2 m)``.
    seed : int, default=0
        Seed of the development/test splits.
    n_jobs : int, default=None
        joblib workers; results do not depend on it.
    progress : bool, default=False
    dev_ids, test_ids : mapping identity -> array_like, default=None
        Draw ids of the rows of ``groups`` and ``test_groups``, one per row; without ``test_groups``, ``dev_ids``
        alone, split with the rows.

    Returns
    -------
    list of EpsilonResult
        One per pair; a pair that cannot be certified (reused rows or draws, a split part too small, a NaN score, ...)
        is *not computed*, with the reason, and stays in the Bonferroni family.

    Raises
    ------
    ValueError
        Invalid ``groups``/``pairs``/``test_groups``, ``n_certificates`` below the number of pairs,
        ``confidence``/``delta`` out of range, a bad classifier, or draw ids missing for an identity, not one per row,
        given without their counterpart (``test_ids`` without ``test_groups``, ...) or with ``check_reuse=False``.

    See Also
    --------
    reserved_test_certificate, epsaudit.audits.worst_pair_certificate : one pair; a bound on the worst pair.
    epsaudit.audits.tradeoff_certificate_pairs, epsaudit.audits.mmd_certificate_pairs : the other certificates.
    epsaudit.audits.roc_oof_pairs, epsaudit.condition.audit_condition : the estimate; the table audit that runs it.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> groups = {k: rng.normal(c, 1.0, size=(40, 2)) for k, c in (("A", 0.0), ("B", 4.0), ("C", 0.0))}
    >>> certs = reserved_test_pairs(groups, [("A", "B"), ("A", "C")], seed=0)
    >>> [round(c.value, 3) for c in certs], certs[0].n, certs[0].correction
    ([1.795, 0.0], (12, 12), 'bonferroni: 1 joint test x 2 certificate(s)')
    """
    groups = as_groups(groups)
    pairs = as_pairs(pairs, groups)
    if test_groups is not None:
        test_groups = as_groups(test_groups)
        as_pairs(pairs, test_groups)
    m = family_size(pairs, n_certificates)
    alpha = _check_options(m, confidence, delta, bound)
    spec = None
    if score_functions is None:
        name = classifier_name(check_classifier(classifier))
        spec = resolve_solver(solver, classifier)
    with_ids = _check_id_options(dev_ids, test_ids, check_reuse, split=test_groups is None)
    ids = pair_id_parts(groups, pairs, dev_ids=dev_ids, test_ids=test_ids, test_groups=test_groups,
                        test_size=test_size, seed=seed) if with_ids else {}
    parts = pair_parts(groups, pairs, test_groups=test_groups, test_size=test_size, seed=seed)
    if spec is not None:
        outs = _certify_batched([(parts[k], (a, b), ids.get((a, b))) for k, (a, b) in enumerate(pairs)], spec, name,
                                alpha, delta, check_reuse, n_jobs=n_jobs, progress=progress, bound=bound)
    else:
        outs = map_certificates(
            _certify, parts, pairs,
            lambda a, b: (classifier, score_functions(a, b) if score_functions is not None else None,
                          alpha, delta, (a, b), check_reuse, ids.get((a, b)), bound),
            desc=ROUTE, n_jobs=n_jobs, progress=progress)
    return [
        _certificate(out, (a, b), split_test_sizes(parts[k], groups, (a, b), test_size), classifier, score_functions,
                     confidence, alpha, m, delta, seed, check_reuse, with_ids, bound)
        for k, ((a, b), out) in enumerate(zip(pairs, outs))
    ]


def certificate_with_bound(result: EpsilonResult, bound: str) -> EpsilonResult:
    """The same reserved test's certificate by another bound: same threshold and test counts, no refit.

    The threshold is chosen the same way for both bounds, so one fit gives e.g. the joint certificate and the paper's
    split Clopper-Pearson bound (*Picture the Epsilon*, Section IV-C) side by side.

    Parameters
    ----------
    result : EpsilonResult
        A certificate of :func:`reserved_test_certificate` or :func:`reserved_test_pairs`, computed or not.
    bound : {"joint", "clopper-pearson"}

    Returns
    -------
    EpsilonResult
        ``value``, ``bound``, ``alpha_per_bound``, ``correction`` and the statistics' ``cap`` of ``bound``, at the
        same family size and confidence; a pair that was not computed stays so.

    Raises
    ------
    ValueError
        If ``result`` is not a reserved-test certificate, or ``bound`` is not one of :data:`epsaudit.bounds.BOUNDS`.

    See Also
    --------
    reserved_test_certificate, epsaudit.bounds.clopper_pearson_epsilon : the certificate it re-bounds; the split bound.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> a, b = rng.normal(3, 1, (60, 2)), rng.normal(-3, 1, (60, 2))
    >>> joint = reserved_test_certificate(a[:30], b[:30], a[30:], b[30:])
    >>> split = certificate_with_bound(joint, "clopper-pearson")  # zero errors in 30 + 30 test rows
    >>> round(joint.value, 3), round(split.value, 3), split.bound
    (2.972, 2.034, 'clopper-pearson')
    """
    check_bound(bound)
    if result.route != ROUTE or result.kind != "certificate":
        raise ValueError(f"certificate_with_bound needs a reserved-test certificate (route {ROUTE!r}), "
                         f"got route {result.route!r}, kind {result.kind!r}")
    m = int(result.settings["n_certificates"])
    alpha = bonferroni_alpha(m, result.confidence)
    fields = {"bound": bound, "alpha_per_bound": bound_level(alpha, bound), "correction": correction_label(m, bound)}
    stats = result.statistics
    if not result.computed or not isinstance(stats, CertificateStatistics):
        return replace(result, **fields)
    n1, n0 = result.n
    value = float(certified_epsilon(stats.fp, n0, n1 - stats.tp, n1, alpha, result.delta, bound=bound))
    stats = replace(stats, cap=certifiable_cap(n1, n0, alpha, result.delta, bound=bound))
    free = {k: v for k, v in result.details.items() if k not in stats.record()}  # the statistics' entries are rebuilt
    return replace(result, value=value, statistics=stats, details=free, **fields)
