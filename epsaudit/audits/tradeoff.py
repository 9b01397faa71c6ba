"""Trade-off certificate: a simultaneous confidence band on the whole trade-off curve of a pair.

The reserved-test certificate of *Picture the Epsilon* (Section IV-C; Tables 3 and 7) certifies one
(epsilon, delta) point from one threshold. This route certifies the privacy *profile*: an upper
envelope of the pair's trade-off curve (f-DP; Dong, Roth & Su 2022, "Gaussian differential
privacy", J. R. Stat. Soc. B 84(1)), and from it a lower bound on epsilon at every delta, a lower
bound on the Gaussian-DP parameter mu and the best single-point epsilon. A *certificate*.

Sampling model. A score function is fixed on development rows (a classifier fitted on them, or a
given score such as a mechanism's exact likelihood ratio). The test rows are independent of the
development rows, and within each identity iid draws of that identity's output distribution
(``n_A`` of A, ``n_B`` of B). The test "identity A when score > t" has the false-positive rate
``FPR(t) = P_B(score > t)`` and the false-negative rate ``FNR(t) = P_A(score <= t)``.

Certified statement. With probability at least ``confidence`` (over the test rows, for the fixed
score), for every threshold ``t`` of the family at once, ``FPR(t) <= FPR_hi(t)`` and
``FNR(t) <= FNR_hi(t)``. Because the trade-off function ``T(a) = inf {FNR : FPR <= a}`` is
non-increasing, every certified point ``(FPR_hi, FNR_hi)`` then lies on or above ``T``, and so does
their lower convex hull (randomised tests mix thresholds): the identities are *at least* this
distinguishable. Any (epsilon, delta)-DP pair has ``T(a) >= max(0, 1 - delta - e^eps a,
e^-eps (1 - delta - a))`` and any mu-GDP pair ``T(a) >= Phi(Phi^-1(1 - a) - mu)``; a certified
point below either curve rules that guarantee out, giving

    eps_LB(delta) = max_t max(0, log((1 - delta - FNR_hi) / FPR_hi), log((1 - delta - FPR_hi) / FNR_hi)),
    mu_LB         = max_t max(0, Phi^-1(1 - FPR_hi) - Phi^-1(FNR_hi)).

Both curves are convex and the envelope is piecewise linear, so the maxima over the hull are
attained at certified points (checking the points suffices). Only *upper* confidence limits of the
two error rates enter, and both bounds decrease in each of them.

Two simultaneous constructions (``method``):

``"bonferroni"`` (default)
    ``k`` thresholds fixed on development scores (:func:`development_thresholds`: the threshold
    the single-threshold reserved test would choose, plus pooled development-score quantiles);
    one-sided Clopper-Pearson upper limits on ``FPR`` and ``FNR`` at each, every one at
    ``(1 - confidence) / (2 k m)`` for ``m`` certificates reported together.
``"dkw"``
    Every threshold at once: the Dvoretzky-Kiefer-Wolfowitz band with Massart's constant per
    identity, ``FPR_hi(t) = FPR_n(t) + e_B``, ``FNR_hi(t) = FNR_n(t) + e_A`` with
    ``e = sqrt(log(2 / a) / (2 n))`` and ``a = (1 - confidence) / (2 m)`` per identity. The band
    holds over all real ``t``, so its points are read off at every distinct test score. Its margin
    is the same at every error rate, so it is far weaker in the tails, where epsilon lives: at
    ``n = 30`` per identity and 95% the margin is 0.27, so no point can certify more than
    ``log(0.73 / 0.27) = 0.99`` at delta = 1e-5, against 1.69 for four Clopper-Pearson thresholds
    and 2.03 for the single threshold (zero test errors; 1.75, 2.96 and 3.28 at ``n = 100``).

Relation to the single-threshold certificate. With ``n_thresholds=1`` the Bonferroni band is the
paper's split reserved-test certificate of :func:`epsaudit.audits.roc_reserved.reserved_test_certificate`
(same classifier, threshold and level; ``bound="clopper-pearson"``); ``single_threshold_epsilon``
is that reserved test with the library's default bound, the exact joint test. With ``k`` thresholds the family always contains that
threshold, so ``best_epsilon >= single_threshold_epsilon - correction_cost``, where the cost is the
loss from evaluating the same counts at level ``a / k`` instead of ``a`` (and, against the joint
single-threshold certificate, from the split bounds); both numbers are reported.

Joint regions. The band needs upper limits of both rates at every threshold, so it keeps its split
one-sided bounds; its best *point* does not: ``joint_best_epsilon`` spends the same per-threshold
level on one exact joint test per threshold (:func:`epsaudit.bounds.joint_epsilon`) and is at least
``best_epsilon`` at every outcome (the split point bound is the joint test's ordering statistic).
"""

from __future__ import annotations

from typing import Any, Callable, Hashable, Mapping, Sequence

import numpy as np
from scipy.stats import rankdata
from sklearn.metrics import roc_auc_score

from ..bounds import bonferroni_alpha, certified_epsilon, tradeoff_epsilon
from ..scorers import check_classifier, classifier_name
from ..validation import as_dev_test, as_groups, as_pairs, check_fresh, check_probability
from .roc_oof import pair_design
from .roc_reserved import choose_threshold, fixed_score
from .runner import PairFailure, family_size, map_certificates, pair_parts, split_test_sizes
from .tradeoff_curve import (DEFAULT_DELTAS, DEFAULT_THRESHOLDS, METHODS, _check_count, development_thresholds,
                             epsilon_curve, mu_lower_bound, tradeoff_band)
from .tradeoff_result import ROUTE, TradeoffCertificate, TradeoffStatistics, curves_frame

__all__ = ["DEFAULT_DELTAS", "DEFAULT_THRESHOLDS", "METHODS", "ROUTE", "TradeoffCertificate", "TradeoffStatistics",
           "correction_label", "curves_frame", "development_thresholds", "epsilon_curve", "mu_lower_bound",
           "tradeoff_band", "tradeoff_certificate", "tradeoff_certificate_pairs"]
ScoreFunction = Callable[[np.ndarray], np.ndarray]


def correction_label(method: str, n_thresholds: int, n_certificates: int) -> str:
    """Text of the multiplicity correction recorded on each certificate.

    Parameters
    ----------
    method : {"bonferroni", "dkw"}
    n_thresholds : int
        Thresholds of the Bonferroni band (ignored for ``"dkw"``).
    n_certificates : int
        Certificates reported together.

    Returns
    -------
    str

    Examples
    --------
    >>> correction_label("dkw", 0, 40)
    'DKW band (Massart constant) per identity: 2 bands x 40 certificate(s)'
    """
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


def _freshness(check_reuse: bool) -> str:
    return ("test rows checked against development rows" if check_reuse else
            "not checked (check_reuse=False): the caller vouches for fresh test draws")


def _settings(classifier, score_function, method, n_thresholds, m, seed, check_reuse) -> dict:
    name = "fixed score function" if score_function is not None else classifier_name(check_classifier(classifier))
    return {"test": name, "method": method,
            "threshold_rule": ("single-threshold choice + pooled development quantiles" if method == "bonferroni"
                               else "every distinct test score (the band holds for all thresholds)"),
            "n_thresholds": n_thresholds if method == "bonferroni" else None,
            "n_certificates": m, "seed": seed, "freshness": _freshness(check_reuse)}


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
    single_epsilon = float(certified_epsilon(tp_single, na, fp_single, nb, alpha_single, delta))
    _, y_test = pair_design(test_a, test_b)
    return TradeoffCertificate(
        pair=pair, n=(na, nb), method=method, confidence=confidence, alpha_per_bound=alpha,
        correction=correction_label(method, k, m),
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

    The score is fixed on the development rows; the test rows only count errors (module
    docstring). All ``n_certificates`` certificates reported together hold at ``confidence``.

    Parameters
    ----------
    dev_a, dev_b : array_like, shapes (n_A_dev, d), (n_B_dev, d)
        Development rows: fit the classifier and fix the thresholds.
    test_a, test_b : array_like, shapes (n_A, d), (n_B, d)
        Untouched test rows, never used for fitting or choosing.
    classifier : scikit-learn estimator, optional
        Learned score (default :func:`epsaudit.scorers.logistic_regression`). Ignored when
        ``score_function`` is given.
    score_function : callable ``(n, d) -> (n,)``, optional
        A fixed score, higher meaning "more A" (e.g. a mechanism's ``exact_score(a, b)``); its
        output must be one number per row without NaN (``+inf``/``-inf`` allowed).
    method : {"bonferroni", "dkw"}
        Simultaneous construction (module docstring); Bonferroni is the more powerful default.
    n_thresholds : int
        Thresholds of the Bonferroni band (default 4); ``1`` reproduces the single-threshold
        reserved-test certificate exactly.
    n_certificates : int
        How many certificates are reported together (family size ``m``).
    confidence : float in (0, 1)
        Family-wise confidence (default 0.95).
    delta : float in [0, 1)
        Delta of ``best_epsilon`` (default 1e-5, as the reserved test).
    deltas : sequence of float in [0, 1)
        Deltas of the reported epsilon curve (``delta`` is added).
    pair : tuple, optional
    check_reuse : bool
        Compare every test row with every development row, bit for bit and after
        L2-normalisation, and refuse copies (default). Set False only when values repeat by
        design (a discrete mechanism, one-hot rows) or rows that differ only in scale are
        different outputs, and the test rows are fresh draws; the settings record it.

    Returns
    -------
    TradeoffCertificate

    Raises
    ------
    ValueError
        Bad samples (fewer than 2 rows per identity, NaN/inf, mismatched dimensions), a bad
        classifier or score function output, an unknown ``method``,
        ``n_thresholds``/``n_certificates`` < 1, ``confidence``/``delta``/``deltas`` out of range.
    epsaudit.validation.ReusedRowsError
        (a ``ValueError``) Test rows that repeat development rows.

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


# Over 80 lines only through its docstring (every option documented, an example); the body is short.
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

    Mirrors :func:`epsaudit.audits.roc_reserved.reserved_test_pairs` (same splits, same
    classifier, same per-pair failure handling), with the correction taken over the pairs as
    well as the thresholds.

    Parameters
    ----------
    groups : mapping identity -> array_like, shape (n_i, d)
        Development rows (or all rows, split with ``test_size`` when ``test_groups`` is None).
    pairs : sequence of (identity, identity)
    test_groups : mapping, optional
        Separate untouched test rows per identity.
    test_size : float
        Fraction of each identity's rows reserved for testing when ``test_groups`` is None; pair
        each identity is split once (:func:`epsaudit.splits.split_identities`), as for the reserved test.
    classifier, score_functions
        A learned score, or ``(A, B) -> score function`` (e.g. ``mechanism.exact_score``).
    method, n_thresholds, confidence, delta, deltas, check_reuse
        As in :func:`tradeoff_certificate`.
    n_certificates : int, optional
        Family size; defaults to ``len(pairs)``; must be at least that.
    seed : int
    n_jobs : int, optional
        joblib workers; results do not depend on it.
    progress : bool

    Returns
    -------
    list of TradeoffCertificate, one per pair. A pair that cannot be certified (its test rows
    repeat development rows, a split leaves a part too small, the score is NaN, ...) is *not
    computed*, with the reason; it stays in the family.

    Raises
    ------
    ValueError
        Invalid ``groups``/``pairs``, ``n_certificates`` below the number of pairs, or options
        out of range (as :func:`tradeoff_certificate`).

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
        correction=correction_label(method, k_bound, m) if method == "bonferroni" else correction_label(method, 0, m),
        delta=delta, deltas=deltas, settings=settings, details={"error": failure.error})
