"""Worst-pair certificate: a lower confidence bound on the mechanism's worst-case pairwise epsilon.

A DP claim is about the *worst* pair of inputs (here, identities). This route ranks candidate pairs on development rows
only by out-of-fold AUC (:func:`select_pairs`), certifies the top ``k`` on untouched test rows by reserved tests
(:mod:`epsaudit.audits.roc_reserved`) with a Bonferroni correction over the ``k`` (each joint test at
``(1 - confidence) / k``; split bound: each one-sided bound at ``(1 - confidence) / (2 k)``) and reports the largest.
Why it holds: ranking and thresholds depend on development rows alone, so with probability at least ``confidence``
all ``k`` certificates hold, each at most its pair's epsilon, at most the worst pair's: ``max_j eps_LB(j) <=
eps_worst`` whichever pair attains it (the maximum is taken after the test, hence the correction over all ``k``). A
poor ranking costs power, never validity (simulation on mechanisms of known worst case: ``tests/test_validity.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..bounds import DEFAULT_BOUND, bonferroni_alpha, bound_level, check_bound, correction_label
from ..results import EpsilonResult, RouteStatistics, results_frame
from ..protocol import split_identities
from ..validation import as_draw_ids, as_groups, as_pairs, check_probability
from .roc_oof import DEFAULT_FOLDS, roc_oof_pairs
from .roc_reserved import ScoreFunction, reserved_test_pairs
from .runner import PairFailure, not_computed

if TYPE_CHECKING:  # pragma: no cover - typing only
    import pandas as pd

ROUTE = "worst_pair"
#: What the value of a worst-pair certificate bounds (``settings["claim"]``).
CLAIM = "lower bound on the worst-case pairwise epsilon (the largest over all identity pairs)"
#: The ranking rule of :func:`select_pairs` without the size-aware tie-break.
SELECTION_RULE = "development-only out-of-fold AUC (ties: dev max(TPR-FPR), then shuffled order)"


def select_pairs(
    dev_groups: Mapping[Hashable, np.ndarray],
    candidates: Sequence[tuple[Hashable, Hashable]],
    k: int,
    *,
    seed: int = 0,
    folds: int = DEFAULT_FOLDS,
    test_caps: Mapping[tuple[Hashable, Hashable], float] | None = None,
    classifier: Any = None,
    n_jobs: int | None = None,
    progress: bool = False,
    solver: str | None = None,
) -> tuple[list[tuple[Hashable, Hashable]], "pd.DataFrame"]:
    """Rank candidate pairs by development-only out-of-fold AUC and take the top ``k``.

    Parameters
    ----------
    dev_groups : mapping identity -> ndarray, shape (n_j, d)
        Development rows only.
    candidates : sequence of (identity, identity)
        In the shuffled order; pairs with an identity missing or with fewer than ``folds`` development rows get no rank.
    k : int
        How many pairs to select (fewer if fewer candidates qualify).
    seed, folds, n_jobs, progress
        As in :func:`epsaudit.audits.roc_oof_pairs`.
    test_caps : mapping (identity, identity) -> float, default=None
        The largest bound each pair's test *size* can certify: ties in development AUC then go to the larger cap
        before the witness and the shuffled order, and the ranking gets a ``test_cap`` column.
    classifier : estimator, default=None
        The ROC-HT classifier (default :func:`epsaudit.audits.scorers.logistic_regression`).
    solver : {"auto", "batched", "sklearn"}, default=None
        How its folds are fitted (:func:`epsaudit.audits.roc_oof_pairs`).

    Returns
    -------
    selected : list of (identity, identity)
        Best first.
    ranking : pandas.DataFrame
        One row per candidate: ``rank`` (1 = best), ``identity_a``, ``identity_b``, ``order`` (position in
        ``candidates``), ``dev_auc``, ``dev_tv_witness``, (``test_cap``,) ``selected``, ``not_computed``; candidates
        whose development ROC failed come last, unselected, ``rank`` and ``dev_auc`` ``<NA>``, with the reason.

    Raises
    ------
    ValueError
        Invalid development groups.

    See Also
    --------
    ranked_pairs, certify_top_pairs, worst_pair_certificate : its candidates; their certificates; both in one call.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> dev = {k: rng.normal(c, 1.0, size=(10, 2)) for k, c in (("A", 0.0), ("B", 4.0), ("C", 0.5))}
    >>> selected, ranking = select_pairs(dev, [("A", "C"), ("A", "B")], k=1)
    >>> selected, ranking["dev_auc"].round(2).tolist()
    ([('A', 'B')], [1.0, 0.7])
    """
    import pandas as pd

    usable = [(i, p) for i, p in enumerate(candidates)
              if all(lab in dev_groups and len(dev_groups[lab]) >= folds for lab in p)]
    columns = ["rank", "identity_a", "identity_b", "order", "dev_auc", "dev_tv_witness", "selected"]
    if test_caps is not None:
        columns = columns[:-1] + ["test_cap", "selected"]
    if not usable or k < 1:
        return [], pd.DataFrame(columns=columns + ["not_computed"])
    res = roc_oof_pairs(dev_groups, [p for _, p in usable], classifier=classifier, folds=folds, seed=seed,
                        n_jobs=n_jobs, progress=progress, solver=solver)
    ranking = pd.DataFrame({
        "identity_a": [p[0] for _, p in usable], "identity_b": [p[1] for _, p in usable],
        "order": [i for i, _ in usable],
        "dev_auc": [r.statistics.auc if r.computed else np.nan for r in res],
        "dev_tv_witness": [r.statistics.tv_witness if r.computed else np.nan for r in res],
        "not_computed": [r.not_computed for r in res],
    })
    if test_caps is not None:
        ranking["test_cap"] = [float(test_caps[p]) for _, p in usable]
    failed = ranking[ranking["not_computed"].notna()]
    ranking = ranking[ranking["not_computed"].isna()]
    keys, ascending = ["dev_auc", "dev_tv_witness", "order"], [False, False, True]
    if test_caps is not None:
        keys.insert(1, "test_cap")
        ascending.insert(1, False)
    ranking = ranking.sort_values(keys, ascending=ascending, kind="stable").reset_index(drop=True)
    ranking.insert(0, "rank", pd.array(np.arange(1, len(ranking) + 1), dtype="Int64"))
    ranking["selected"] = ranking["rank"] <= k
    chosen = ranking[ranking["selected"]]
    # candidates whose development ROC could not be computed: no rank, listed last with the reason
    failed = failed.assign(rank=pd.array([pd.NA] * len(failed), dtype="Int64"), selected=False)
    ranking = pd.concat([ranking, failed[ranking.columns]], ignore_index=True) if len(failed) else ranking
    return list(zip(chosen["identity_a"], chosen["identity_b"])), ranking[columns + ["not_computed"]]


def ranked_pairs(ranking: "pd.DataFrame") -> list[tuple[Hashable, Hashable]]:
    """The ranked candidates of a :func:`select_pairs` ranking, best first (unranked ones left out).

    Parameters
    ----------
    ranking : pandas.DataFrame
        With columns ``rank``, ``identity_a``, ``identity_b``.

    Returns
    -------
    list of (identity, identity)

    See Also
    --------
    select_pairs : the ranking it reads.

    Examples
    --------
    >>> import pandas as pd
    >>> ranked_pairs(pd.DataFrame({"rank": pd.array([2, 1, None], dtype="Int64"), "identity_a": ["A", "C", "D"],
    ...                            "identity_b": ["B", "A", "A"]}))
    [('C', 'A'), ('A', 'B')]
    """
    done = ranking[ranking["rank"].notna()].sort_values("rank", kind="stable")
    return list(zip(done["identity_a"], done["identity_b"]))


@dataclass(frozen=True)
class WorstPairStatistics(RouteStatistics):
    """What a worst-pair certificate comes with: the family, and the test of the pair attaining it.

    Attributes
    ----------
    k, pairs_certified, pairs_not_computed, candidates : int
        Pairs asked for; certified (``min(k, candidates)``, the Bonferroni family); of those not computed (still in
        the family); candidates ranked on development rows.
    rank : int
        Development rank (1 = best) of the pair attaining the maximum (ties: the best-ranked).
    threshold, tp, fp, tpr_lower, fpr_upper, test_auc, censored, cap, n_dev_a, n_dev_b
        That pair's reserved test (:class:`epsaudit.audits.CertificateStatistics`).
    max_cap : float
        The largest cap among the family's certificates: the most this family could certify.

    See Also
    --------
    WorstPairCertificate, epsaudit.results.RouteStatistics : the certificate whose result carries them; the base class.

    Examples
    --------
    >>> s = WorstPairStatistics(k=5, pairs_certified=5, pairs_not_computed=0, candidates=15, rank=2, threshold=0.1,
    ...                         tp=90, fp=3, tpr_lower=0.8, fpr_upper=0.1, test_auc=0.97, censored=False, cap=3.0,
    ...                         max_cap=3.1, n_dev_a=100, n_dev_b=100)
    >>> s.record()["rank"], s.record()["max_cap"]
    (2, 3.1)
    """

    k: int
    pairs_certified: int
    pairs_not_computed: int
    candidates: int
    rank: int
    threshold: float
    tp: int
    fp: int
    tpr_lower: float
    fpr_upper: float
    test_auc: float
    censored: bool
    cap: float
    max_cap: float
    n_dev_a: int
    n_dev_b: int


@dataclass(frozen=True, eq=False)
class WorstPairCertificate:
    """A worst-pair certificate with the certificates it is the maximum of.

    Attributes
    ----------
    result : EpsilonResult
        Kind ``"certificate"``, route ``"worst_pair"``: ``value`` the lower bound on the worst-case pairwise epsilon,
        ``pair`` the pair attaining it, ``n`` its test sizes, ``alpha_per_bound`` the level of each bound,
        ``statistics`` a :class:`WorstPairStatistics`. Not computed (NaN, with the reason) when no pair could be.
    certificates : tuple of EpsilonResult
        The ``k`` reserved-test certificates of the top-ranked pairs, best-ranked first.
    ranking : pandas.DataFrame or None
        The development-only ranking (:func:`select_pairs`) when this call computed it.

    See Also
    --------
    worst_pair_certificate, certify_top_pairs : build it.
    epsaudit.audits.TradeoffCertificate, epsaudit.audits.MMDCertificate : the other certificate types.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> groups = {k: rng.normal(c, 1.0, size=(60, 2)) for k, c in (("A", 0.0), ("B", 3.0), ("C", 0.3), ("D", 0.0))}
    >>> worst = worst_pair_certificate(groups, [("A", "C"), ("A", "B"), ("C", "D"), ("B", "D")], k=2)
    >>> worst.kind, worst.pair in {("A", "B"), ("B", "D")}, worst.value > 0
    ('certificate', True, True)
    """

    result: EpsilonResult
    certificates: tuple[EpsilonResult, ...]
    ranking: "pd.DataFrame | None" = None

    @property
    def value(self) -> float:
        """The lower bound (NaN when not computed)."""
        return self.result.value

    @property
    def kind(self) -> str:
        """``"certificate"``."""
        return self.result.kind

    @property
    def pair(self) -> tuple[Hashable, Hashable] | None:
        """The pair attaining the bound."""
        return self.result.pair

    def frame(self) -> "pd.DataFrame":
        """:func:`epsaudit.results.results_frame` of :attr:`certificates` with ``rank`` (development, 1 = best) and
        ``attains`` (True for the certificate whose value is the bound) first."""
        frame = results_frame(self.certificates)
        rank = self.result.statistics.rank if self.result.statistics is not None else 0
        frame.insert(0, "attains", [i + 1 == rank for i in range(len(frame))])
        frame.insert(0, "rank", range(1, len(frame) + 1))
        return frame

    def __str__(self) -> str:
        return str(self.result)


def _worst_result(certs: Sequence[EpsilonResult], k: int, candidates: int, *, confidence: float, delta: float,
                  seed: int, selection_rule: str, bound: str = DEFAULT_BOUND) -> EpsilonResult:
    m = max(len(certs), 1)
    alpha = bound_level(bonferroni_alpha(m, confidence), bound)  # that of every test of the family
    done = [i for i, c in enumerate(certs) if c.computed]
    base = certs[0].settings if certs else {}
    fields = {"route": ROUTE, "kind": "certificate", "delta": delta, "confidence": confidence,
              "alpha_per_bound": alpha, "correction": correction_label(m, bound) + f"; the largest of the {m}",
              "bound": bound,
              "settings": {"claim": CLAIM, "selection_rule": selection_rule, "test": base.get("test"),
                           "threshold_rule": base.get("threshold_rule"), "freshness": base.get("freshness"),
                           "seed": seed}}
    if not done:
        reason = (f"none of the {len(certs)} top-ranked pair(s) could be certified: {certs[0].not_computed}" if certs
                  else "no candidate pair could be ranked on development rows")
        return not_computed(PairFailure(reason, "ValueError"), pair=None, n=(0, 0), **fields)
    values = np.array([certs[i].value for i in done])
    best = done[int(np.argmax(values))]  # ties: the best-ranked pair
    stats = certs[best].statistics
    return EpsilonResult(
        value=float(values.max()), pair=certs[best].pair, n=certs[best].n,
        statistics=WorstPairStatistics(
            k=int(k), pairs_certified=len(certs), pairs_not_computed=len(certs) - len(done), candidates=int(candidates),
            rank=best + 1, threshold=stats.threshold, tp=stats.tp, fp=stats.fp, tpr_lower=stats.tpr_lower,
            fpr_upper=stats.fpr_upper, test_auc=stats.test_auc, censored=stats.censored, cap=stats.cap,
            max_cap=float(max(certs[i].statistics.cap for i in done)), n_dev_a=stats.n_dev_a, n_dev_b=stats.n_dev_b),
        **fields)


def certify_top_pairs(
    dev_groups: Mapping[Hashable, np.ndarray],
    test_groups: Mapping[Hashable, np.ndarray],
    ranked: Sequence[tuple[Hashable, Hashable]],
    k: int,
    *,
    classifier: Any = None,
    score_functions: Callable[[Hashable, Hashable], ScoreFunction] | None = None,
    confidence: float = 0.95,
    delta: float = 1e-5,
    seed: int = 0,
    dev_ids: Mapping[Hashable, Any] | None = None,
    test_ids: Mapping[Hashable, Any] | None = None,
    check_reuse: bool = True,
    selection_rule: str = SELECTION_RULE,
    n_jobs: int | None = None,
    progress: bool = False,
    solver: str | None = None,
    bound: str = DEFAULT_BOUND,
) -> WorstPairCertificate:
    """Certify the top ``k`` of a development-only ranking and report the largest as the worst-case bound.

    The second step of :func:`worst_pair_certificate`, for pairs ranked already (as
    :func:`epsaudit.condition.audit_condition` does). Valid only if ``ranked`` comes from development rows alone.

    Parameters
    ----------
    dev_groups, test_groups : mapping identity -> array_like, shape (n_i, d)
        Development rows (fit each classifier, choose each threshold) and untouched test rows.
    ranked : sequence of (identity, identity)
        Candidate pairs, best first, ranked on development rows only.
    k : int, >= 1
        Pairs to certify: the first ``min(k, len(ranked))``, the Bonferroni family.
    classifier, score_functions, confidence, delta, seed, dev_ids, test_ids, check_reuse, n_jobs, progress, solver, bound
        As in :func:`epsaudit.audits.reserved_test_pairs` (ids: draw ids of the rows of ``dev_groups``/``test_groups``).
    selection_rule : str, default=SELECTION_RULE
        How ``ranked`` was ranked (recorded in the settings).

    Returns
    -------
    WorstPairCertificate
        ``ranking`` None.

    Raises
    ------
    ValueError
        ``k < 1``, ``confidence``/``delta`` out of range, or the errors of :func:`epsaudit.audits.reserved_test_pairs`.

    See Also
    --------
    select_pairs, worst_pair_certificate : the ranking it certifies; both steps in one call.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> dev = {k: rng.normal(c, 1.0, size=(50, 2)) for k, c in (("A", 0.0), ("B", 3.0), ("C", 0.0))}
    >>> test = {k: rng.normal(c, 1.0, size=(50, 2)) for k, c in (("A", 0.0), ("B", 3.0), ("C", 0.0))}
    >>> worst = certify_top_pairs(dev, test, [("B", "C"), ("A", "B"), ("A", "C")], k=2)
    >>> worst.pair, round(worst.value, 3), worst.result.statistics.rank, round(worst.result.alpha_per_bound, 6)
    (('B', 'C'), 2.854, 1, 0.025)
    """
    if isinstance(k, bool) or int(k) != k or int(k) < 1:
        raise ValueError(f"k must be an integer >= 1, got {k!r}")
    check_probability(confidence, "confidence")
    check_probability(delta, "delta", open_interval=False)
    check_bound(bound)
    top = list(ranked)[: int(k)]
    certs: list[EpsilonResult] = []
    if top:
        certs = reserved_test_pairs(dev_groups, top, test_groups=test_groups, classifier=classifier,
                                    score_functions=score_functions, n_certificates=len(top), confidence=confidence,
                                    delta=delta, seed=seed, n_jobs=n_jobs, progress=progress, check_reuse=check_reuse,
                                    dev_ids=dev_ids, test_ids=test_ids, solver=solver, bound=bound)
    result = _worst_result(certs, int(k), len(ranked), confidence=confidence, delta=delta, seed=seed,
                           selection_rule=selection_rule, bound=bound)
    return WorstPairCertificate(result=result, certificates=tuple(certs))


def worst_pair_certificate(
    groups: Mapping[Hashable, np.ndarray],
    candidates: Sequence[tuple[Hashable, Hashable]],
    k: int,
    *,
    test_groups: Mapping[Hashable, np.ndarray] | None = None,
    test_size: float = 0.3,
    classifier: Any = None,
    score_functions: Callable[[Hashable, Hashable], ScoreFunction] | None = None,
    confidence: float = 0.95,
    delta: float = 1e-5,
    seed: int = 0,
    folds: int = DEFAULT_FOLDS,
    dev_ids: Mapping[Hashable, Any] | None = None,
    test_ids: Mapping[Hashable, Any] | None = None,
    check_reuse: bool = True,
    n_jobs: int | None = None,
    progress: bool = False,
    solver: str | None = None,
    bound: str = DEFAULT_BOUND,
) -> WorstPairCertificate:
    """A ``confidence`` lower bound on the worst-case pairwise epsilon: rank on development rows, certify the top ``k``.

    Parameters
    ----------
    groups : mapping identity -> array_like, shape (n_i, d)
        Development rows, or all rows (split once per identity with ``test_size`` and ``seed``,
        :func:`epsaudit.protocol.split_identities`) when ``test_groups`` is None.
    candidates : sequence of (identity, identity)
        The pairs the worst case is looked for among (e.g. :func:`epsaudit.protocol.identity_pairs`); the claim
        itself is about all pairs.
    k : int, >= 1
        Pairs certified (fewer if fewer candidates can be ranked).
    test_groups : mapping, default=None
        Separate untouched test rows per identity (fresh draws).
    test_size : float, default=0.3
        Fraction of each identity's rows reserved for testing when ``test_groups`` is None.
    classifier : estimator, default=None
        Ranks the pairs and, without ``score_functions``, is the test of every certificate.
    score_functions : callable ``(A, B) -> score function``, default=None
        Fixed tests of the certificates (e.g. ``mechanism.exact_score``); the ranking still uses the classifier.
    confidence : float, default=0.95
        Probability that the bound holds; each of the ``k`` certificates is at error level ``(1 - confidence) / k``.
    delta : float, default=1e-5
        The delta of (epsilon, delta)-DP.
    seed : int, default=0
        Seed of the split and of the ranking's folds.
    folds : int, default=5
        Out-of-fold folds of the ranking (an identity needs that many development rows).
    dev_ids, test_ids, check_reuse, n_jobs, progress, solver, bound
        As in :func:`epsaudit.audits.reserved_test_pairs` (without ``test_groups``, ``dev_ids`` are split with the rows
        of ``groups``); results do not depend on ``n_jobs``.

    Returns
    -------
    WorstPairCertificate
        ``result`` (kind ``"certificate"``, route ``"worst_pair"``), the ``k`` ``certificates`` and the ``ranking``.

    Raises
    ------
    ValueError
        Invalid groups or candidates, ``k < 1``, ``confidence``/``delta``/``test_size`` out of range, bad draw ids.

    See Also
    --------
    select_pairs, certify_top_pairs : its two steps.
    epsaudit.audits.tradeoff_certificate, epsaudit.audits.mmd_certificate : one pair's certificates by other routes.
    epsaudit.audits.certify_sampler, epsaudit.bounds.worst_pair_sequential : anytime-valid bounds as test rows arrive.

    Examples
    --------
    >>> from epsaudit.mechanisms import ProductLaplace
    >>> mech = ProductLaplace([[0.0, 0.0], [0.5, 0.0], [3.0, 0.0], [0.2, 0.3]], scale=1.0)  # worst pair (0, 2): 3.0
    >>> pairs = [(a, b) for a in range(4) for b in range(a + 1, 4)]
    >>> dev, test = mech.sample_groups(150, seed=("dev", 0)), mech.sample_groups(150, seed=("test", 0))
    >>> worst = worst_pair_certificate(dev, pairs, k=3, test_groups=test, score_functions=mech.exact_score, delta=0.0)
    >>> worst.pair, round(worst.value, 3), worst.result.n, worst.result.statistics.k
    ((0, 2), 1.849, (150, 150), 3)
    >>> worst.value <= max(mech.exact_epsilon(a, b) for a, b in pairs)
    True
    """
    if isinstance(k, bool) or int(k) != k or int(k) < 1:
        raise ValueError(f"k must be an integer >= 1, got {k!r}")
    groups = as_groups(groups)
    candidates = as_pairs(candidates, groups)
    if test_groups is None:
        check_probability(test_size, "test_size")
        dev, test, _ = split_identities(groups, test_size=test_size, seed=seed)
        if dev_ids is not None:
            if test_ids is not None:
                raise ValueError("test_ids given without test_groups: without test groups the rows of groups are "
                                 "split and dev_ids (one id per row of groups) is split with them")
            ids = {lab: as_draw_ids(dev_ids[lab], len(groups[lab]), f"dev_ids[{lab!r}]") if lab in dev_ids else None
                   for lab in groups}
            dev_ids, test_ids, _ = split_identities({lab: v for lab, v in ids.items() if v is not None},
                                                    test_size=test_size, seed=seed)
    else:
        dev, test = groups, as_groups(test_groups)
    _, ranking = select_pairs(dev, candidates, int(k), seed=seed, folds=folds, classifier=classifier,
                              n_jobs=n_jobs, progress=progress, solver=solver)
    worst = certify_top_pairs(dev, test, ranked_pairs(ranking), k, classifier=classifier,
                              score_functions=score_functions, confidence=confidence, delta=delta, seed=seed,
                              dev_ids=dev_ids, test_ids=test_ids, check_reuse=check_reuse, n_jobs=n_jobs,
                              progress=progress, solver=solver, bound=bound)
    return WorstPairCertificate(result=worst.result, certificates=worst.certificates, ranking=ranking)
