"""The DP-Sniper comparison protocol of chapter 2: many DP-Sniper rows, Table 5's rows, matched-budget duels.

*Picture the Epsilon* (Appendix, Table 5) runs DP-Sniper (:func:`epsaudit.sniper.dp_sniper`) on
product Laplace noise over dispersed identity prototypes (d = 512, 20 identities) and on 16-ary
randomized response: every mechanism x requested epsilon x fixed pair x repetition is one *row*
(:func:`comparison_tasks`), each seeded by its own stream key, run in parallel
(:class:`SniperTask`, :func:`run_tasks`) and tabulated with its exact epsilon
(:func:`sniper_frame`). The matched-budget duel gives DP-Sniper and the reserved ROC test the same
``2 n`` calls per input (:func:`matched_duel`, :func:`run_duels`).
:mod:`epsaudit.studies.sniper_duel` re-exports every public name.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd
from joblib import Parallel, delayed

from ...audits.roc_reserved import reserved_test_certificate
from ...mechanisms import Mechanism, RandomizedResponse, benchmark_pairs, calibrate, prototype_set
from ...progress import progress_bar
from ...results import EpsilonResult, results_frame
from ...seeds import seed_key
from ...sniper import DEFAULT_C, dp_sniper

__all__ = ["COMPARISON_MECHANISMS", "RR_CATEGORIES", "SCORES", "SniperTask", "TABLE5_CALLS", "TABLE5_EPSILONS",
           "comparison_mechanism", "comparison_pairs", "comparison_tasks", "matched_duel", "run_duels", "run_rows",
           "run_tasks", "sniper_frame"]

#: Requested global epsilons of *Picture the Epsilon*, Table 5.
TABLE5_EPSILONS: tuple[float, ...] = (0.5, 2.0, 8.0, 32.0)
#: Mechanism calls per row in *Picture the Epsilon*, Table 5.
TABLE5_CALLS = 6_500_000
#: Categories of the randomized-response mechanism (= identities; the original's 16-ary RR).
RR_CATEGORIES = 16
#: Mechanisms of the comparison: product Laplace on dispersed identity prototypes (d = 512,
#: 20 identities, as in the known-epsilon benchmark) and 16-ary randomized response.
COMPARISON_MECHANISMS: tuple[str, ...] = ("laplace", "randomized_response")
#: Scores of the attack: a learned classifier (DP-Sniper proper) or the exact likelihood ratio.
SCORES: tuple[str, ...] = ("learned", "exact")


# ---------------------------------------------------------------------------------------------
# Many DP-Sniper rows in parallel
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SniperTask:
    """One DP-Sniper row: a mechanism, an input pair, a budget, a seed and options.

    Attributes
    ----------
    mechanism : Mechanism or callable
        As :func:`~epsaudit.sniper.dp_sniper`.
    a, b : input
        The pair.
    calls : int
        Mechanism calls for the pair.
    seed : int or stream key (tuple)
        The row's seed.
    options : mapping
        Keyword arguments of :func:`~epsaudit.sniper.dp_sniper`.
    meta : mapping
        Copied into the table :func:`sniper_frame` makes (e.g. requested epsilon, repetition).
    """

    mechanism: Any
    a: Any
    b: Any
    calls: int
    seed: Any = 0
    options: Mapping[str, Any] = field(default_factory=dict)
    meta: Mapping[str, Any] = field(default_factory=dict)

    def run(self) -> tuple[EpsilonResult, EpsilonResult]:
        """The row's two direction certificates (:func:`~epsaudit.sniper.dp_sniper`)."""
        return dp_sniper(self.mechanism, self.a, self.b, self.calls, seed=self.seed, **dict(self.options))


def _run_task(task: SniperTask):
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):  # one core per row: rows are the unit of parallelism
        return task.run()


def run_tasks(tasks: Sequence[SniperTask], *, n_jobs: int | None = None, progress: bool = False,
              desc: str = "DP-Sniper rows") -> list[tuple[EpsilonResult, EpsilonResult]]:
    """Run DP-Sniper rows in parallel with joblib (one core per row).

    Each row is seeded by its own ``seed``, so results do not depend on ``n_jobs`` or on the
    order of execution. BLAS is pinned to one thread inside each row.

    Parameters
    ----------
    tasks : sequence of SniperTask
    n_jobs : int, optional
        joblib workers (``None``: one, sequential).
    progress : bool
        tqdm bar over rows.

    Returns
    -------
    list of (EpsilonResult, EpsilonResult)
        One pair of direction certificates per task, in task order.
    """
    tasks = list(tasks)
    for i, task in enumerate(tasks):
        if not isinstance(task, SniperTask):
            raise ValueError(f"tasks[{i}] is a {type(task).__name__}, not a SniperTask")
    if not tasks:
        return []
    jobs = (delayed(_run_task)(t) for t in tasks)
    out = Parallel(n_jobs=n_jobs, return_as="generator")(jobs)
    return list(progress_bar(out, progress, desc, total=len(tasks)))


def sniper_frame(tasks: Sequence[SniperTask], results: Sequence[tuple[EpsilonResult, EpsilonResult]]):
    """One table row per certificate (two per task), with each task's ``meta`` and exact epsilon.

    Parameters
    ----------
    tasks : sequence of SniperTask
    results : sequence of (EpsilonResult, EpsilonResult)
        :func:`run_tasks` of ``tasks``, in the same order.

    Returns
    -------
    pandas.DataFrame
        :func:`epsaudit.results.results_frame` columns plus the task's ``meta`` fields,
        ``exact_epsilon`` (when the mechanism knows it, else NaN) and ``above_exact``
        (certificate above the exact value beyond 1e-9).
    """
    if len(tasks) != len(results):
        raise ValueError(f"{len(tasks)} tasks but {len(results)} results")
    frames = []
    for task, pair in zip(tasks, results):
        frame = results_frame(pair)
        exact = np.nan
        if isinstance(task.mechanism, Mechanism):
            exact = task.mechanism.exact_epsilon(task.a, task.b)
        frame.insert(3, "exact_epsilon", exact)
        for key, value in reversed(list(dict(task.meta).items())):
            frame.insert(0, key, value)
        frames.append(frame)
    table = pd.concat(frames, ignore_index=True)
    table["above_exact"] = table["value"] > table["exact_epsilon"] + 1e-9
    return table




def run_rows(tasks: Sequence[SniperTask], n_jobs: int | None, desc: str) -> tuple[pd.DataFrame, float]:
    """Run DP-Sniper rows and time them.

    Parameters
    ----------
    tasks : sequence of SniperTask
    n_jobs : int or None
    desc : str
        Label of the rows (for a progress bar).

    Returns
    -------
    (DataFrame, float)
        :func:`sniper_frame` of :func:`run_tasks`, and the wall time (s).
    """
    t0 = time.perf_counter()
    results = run_tasks(tasks, n_jobs=n_jobs, desc=desc)
    return sniper_frame(tasks, results), time.perf_counter() - t0



# ---------------------------------------------------------------------------------------------
# The comparison protocol of Table 5, and the matched-budget duel
# ---------------------------------------------------------------------------------------------


def comparison_mechanism(kind: str, epsilon: float, *, seed: int = 0, dim: int = 512, n_identities: int = 20) -> Mechanism:
    """A mechanism of the DP-Sniper comparison with requested global ``epsilon``.

    ``"laplace"``: :func:`~epsaudit.mechanisms.calibrate` of the product Laplace mechanism on the
    ``"dispersed"`` prototype set (``n_identities`` x ``dim``, seeded by ``seed``), so its worst
    pair has exactly ``epsilon`` and every pair is close to it. ``"randomized_response"``:
    :class:`~epsaudit.mechanisms.RandomizedResponse` with ``K = 16`` (every pair exactly
    ``epsilon``). ``epsilon = 0`` is the exact null.

    Parameters
    ----------
    kind : {"laplace", "randomized_response"}
    epsilon : float, >= 0
        Requested global epsilon (nats).
    seed, dim, n_identities : int
        Prototype seed, dimension and identities of the Laplace mechanism.

    Returns
    -------
    Mechanism

    Raises
    ------
    ValueError
        If ``kind`` is unknown or ``epsilon`` is negative.
    """
    if kind == "laplace":
        return calibrate("laplace", prototype_set("dispersed", n_identities, dim, seed=seed), float(epsilon), seed=seed)
    if kind == "randomized_response":
        return RandomizedResponse(RR_CATEGORIES, float(epsilon))
    raise ValueError(f"unknown mechanism kind {kind!r}; expected one of {COMPARISON_MECHANISMS}")


def comparison_pairs(mechanism: Mechanism, n_pairs: int = 3, seed: int = 0) -> list[tuple[int, int]]:
    """The fixed pairs: the first ``n_pairs`` of the benchmark's shuffled pair list.

    Parameters
    ----------
    mechanism : Mechanism
    n_pairs : int
    seed : int
        Seed of the pair order (:func:`epsaudit.mechanisms.benchmark_pairs`).

    Returns
    -------
    list of (int, int)
    """
    return benchmark_pairs(mechanism.n_identities, seed=seed)[:n_pairs]


def comparison_tasks(kinds: Sequence[str], epsilons: Sequence[float], calls: int, *, n_pairs: int = 3, reps: int = 3,
                     score: str = "learned", seed: int = 0, dim: int = 512, **options) -> list[SniperTask]:
    """DP-Sniper rows of the Table 5 protocol: every mechanism x epsilon x fixed pair x repetition.

    Each row's seed is the stream key ``("dp-sniper-row", seed, kind, epsilon, pair, rep, calls,
    score)`` (:mod:`epsaudit.seeds`), so any row can be re-run on its own and rows are independent.

    Parameters
    ----------
    kinds : sequence of {"laplace", "randomized_response"}
    epsilons : sequence of float
        Requested global epsilons (0 = the exact null).
    calls : int
        Mechanism calls per row (pair, both directions).
    n_pairs, reps : int
        Fixed pairs per mechanism and repetitions per pair (paper: 3 and 3).
    score : {"learned", "exact"}
        Learned classifier (``options["classifier"]``, default
        :func:`epsaudit.scorers.logistic_regression`, standardised; the book passes
        :func:`epsaudit.scorers.paper_logistic_regression` for Table 5) or the
        mechanism's exact likelihood ratio as a fixed score (the best any classifier can do).
    seed : int
        Base seed (prototypes, pair order and every draw).
    dim : int
        Output dimension of the product Laplace mechanism.
    **options
        Further keyword arguments of :func:`~epsaudit.sniper.dp_sniper`.

    Returns
    -------
    list of SniperTask
        ``meta``: ``mechanism``, ``requested_epsilon``, ``pair_index``, ``rep``, ``score`` (the budget
        is the ``calls`` detail of each result).
    """
    if score not in SCORES:
        raise ValueError(f"score must be one of {SCORES}, got {score!r}")
    tasks = []
    for kind in kinds:
        for eps in epsilons:
            mech = comparison_mechanism(kind, eps, seed=seed, dim=dim)
            for p, (a, b) in enumerate(comparison_pairs(mech, n_pairs, seed)):
                opts = dict(options)
                if score == "exact":
                    opts["score_function"] = mech.exact_score(a, b)
                for rep in range(reps):
                    key = ("dp-sniper-row", seed, kind, float(eps), p, rep, int(calls), score)
                    tasks.append(SniperTask(
                        mech, a, b, int(calls), seed=key, options=opts,
                        meta={"mechanism": kind, "requested_epsilon": float(eps), "pair_index": p, "rep": rep,
                              "score": score},
                    ))
    return tasks


def matched_duel(mechanism: Mechanism, a: int, b: int, n: int, *, seed=0, c: float = DEFAULT_C,
                 classifier: Any = None, confidence: float = 0.95) -> tuple[EpsilonResult, EpsilonResult, EpsilonResult]:
    """DP-Sniper and the reserved ROC test on the same budget: ``2 n`` calls of each input.

    The reserved test (:func:`epsaudit.audits.reserved_test_certificate`, as in the benchmark)
    draws ``n`` development and ``n`` test outputs per input; DP-Sniper gets the same ``4 n``
    calls for the pair (:func:`~epsaudit.sniper.dp_sniper` with ``calls = 4 n``). Both use ``classifier`` (default
    :func:`epsaudit.scorers.logistic_regression`), pure DP (``delta = 0``) and hold at ``confidence`` for the pair: the
    reserved certificate alone (two one-sided bounds), DP-Sniper's two directions together (four).
    Development and test outputs are fresh draws on separate streams; the reserved test still
    checks test rows against development rows, except for mechanisms whose outputs repeat by
    design (:attr:`epsaudit.mechanisms.Mechanism.repeated_outputs`, e.g. one-hot rows), where a
    value check cannot tell a reused draw from a repeated value.

    Parameters
    ----------
    mechanism : Mechanism
    a, b : int
        The pair.
    n : int
        Development (and test) outputs per input of the reserved test.
    seed : int, stream key (tuple) or numpy.random.Generator
    c, classifier, confidence
        As :func:`~epsaudit.sniper.dp_sniper`.

    Returns
    -------
    (EpsilonResult, EpsilonResult, EpsilonResult)
        DP-Sniper ``a -> b``, ``b -> a`` and the reserved-test certificate.
    """
    s_sniper, s_dev, s_test = (seed_key(seed, "duel") + (part,) for part in ("dp-sniper", "dev", "test"))
    ab, ba = dp_sniper(mechanism, a, b, 4 * int(n), seed=s_sniper, c=c, classifier=classifier, confidence=confidence)
    dev = mechanism.sample_groups(int(n), seed=s_dev, identities=[a, b])
    test = mechanism.sample_groups(int(n), seed=s_test, identities=[a, b])
    # one-hot rows repeat by design: there a value check cannot tell reuse from repetition, and
    # the test rows are fresh draws on their own stream (s_test)
    reserved = reserved_test_certificate(dev[a], dev[b], test[a], test[b], classifier=classifier,
                                         n_certificates=1, confidence=confidence, delta=0.0, pair=(a, b),
                                         check_reuse=not mechanism.repeated_outputs)
    return ab, ba, reserved



def _duel_job(mechanism, a, b, n, seed, options):
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        return matched_duel(mechanism, a, b, n, seed=seed, **options)


def run_duels(kinds: Sequence[str], epsilons: Sequence[float], sizes: Sequence[int], *, n_pairs: int = 3, reps: int = 3,
              seed: int = 0, dim: int = 512, n_jobs: int | None = None, progress: bool = False, **options):
    """The matched-budget comparison over mechanisms x epsilons x sizes x fixed pairs x repetitions.

    Each duel's seed is the stream key ``("duel", seed, kind, epsilon, pair, rep, n)``.

    Parameters
    ----------
    kinds : sequence of {"laplace", "randomized_response"}
    epsilons : sequence of float
        Requested global epsilons (nats).
    sizes : sequence of int
        ``n`` per duel (:func:`matched_duel`).
    n_pairs, reps : int
        Fixed pairs per mechanism and repetitions per pair.
    seed, dim : int
        Base seed; output dimension of the Laplace mechanism.
    n_jobs : int, optional
        joblib workers over duels.
    progress : bool
    **options
        Keyword arguments of :func:`matched_duel` (e.g. ``classifier``).

    Returns
    -------
    pandas.DataFrame
        One row per certificate (three per duel): ``mechanism``, ``requested_epsilon``, ``n``,
        ``pair_index``, ``rep`` and :func:`epsaudit.results.results_frame` columns, plus
        ``exact_epsilon``, ``above_exact`` and ``direction`` (``"both"`` for the reserved test).
    """
    specs = []
    for kind in kinds:
        for eps in epsilons:
            mech = comparison_mechanism(kind, eps, seed=seed, dim=dim)
            for n in sizes:
                for p, (a, b) in enumerate(comparison_pairs(mech, n_pairs, seed)):
                    for rep in range(reps):
                        key = ("duel", seed, kind, float(eps), p, rep, int(n))
                        meta = {"mechanism": kind, "requested_epsilon": float(eps), "n": int(n), "pair_index": p, "rep": rep}
                        specs.append((mech, a, b, int(n), key, meta))
    jobs = (delayed(_duel_job)(m, a, b, n, s, options) for m, a, b, n, s, _ in specs)
    outs = list(progress_bar(Parallel(n_jobs=n_jobs, return_as="generator")(jobs), progress, "duels", total=len(specs)))
    frames = []
    for (mech, a, b, n, _, meta), results in zip(specs, outs):
        frame = results_frame(results)
        frame.insert(3, "exact_epsilon", mech.exact_epsilon(a, b))
        for key, value in reversed(list(meta.items())):
            frame.insert(0, key, value)
        frames.append(frame)
    table = pd.concat(frames, ignore_index=True)
    table["direction"] = table["direction"].fillna("both")
    table["above_exact"] = table["value"] > table["exact_epsilon"] + 1e-9
    return table

