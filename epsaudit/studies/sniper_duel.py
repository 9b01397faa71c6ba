"""Chapter 2, DP-Sniper against the reserved test on mechanisms with known epsilon.

*Picture the Epsilon* compares its audits with DP-Sniper (Bichsel et al. 2021; Appendix, Table 5): product Laplace noise
over dispersed identity prototypes (d = 512, 20 identities) and 16-ary randomized response, three fixed pairs, three
repetitions, a matched budget of ``2 n`` calls per input. This module holds the profiles and parameters, the mechanisms
and pairs, and the parallel runners of seeded rows and duels; the algorithm is :func:`epsaudit.sniper.dp_sniper`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd
from joblib import Parallel, delayed

from ..audits.roc_reserved import reserved_test_certificate
from ..mechanisms import Mechanism, RandomizedResponse, benchmark_pairs, calibrate, prototype_set
from ..parallel import progress_bar
from ..results import EpsilonResult, results_frame
from ..audits.scorers import paper_logistic_regression
from ..protocol import seed_key
from ..sniper import DEFAULT_C, dp_sniper
from . import choose_profile
from .parameters import N_JOBS, PROFILE, SEED, Parameter
import math
import matplotlib.pyplot as plt
from matplotlib.lines import Line2D
from .figures import MECHANISM_LABELS, PALETTE

__all__ = ["PROFILES", "PARAMETERS", "settings", "MECHANISMS", "TABLE5_EPSILONS", "EPSILONS", "ALPHA", "RR_CATEGORIES",
           "paper_logistic_regression", "comparison_mechanism", "comparison_pairs", "SniperTask", "comparison_tasks", "run_tasks", "sniper_frame",
           "run_rows", "matched_duel", "run_duels", "bounds_against_budget"]

#: Requested global epsilons of *Picture the Epsilon*, Table 5.
TABLE5_EPSILONS: tuple[float, ...] = (0.5, 2.0, 8.0, 32.0)
#: The chapter's requested epsilons: the exact null, then Table 5's columns.
EPSILONS: tuple[float, ...] = (0.0,) + TABLE5_EPSILONS
#: The two mechanisms: product Laplace on dispersed prototypes (d = 512) and 16-ary randomized response.
MECHANISMS: tuple[str, ...] = ("laplace", "randomized_response")
#: Categories of the randomized-response mechanism (= identities).
RR_CATEGORIES = 16
#: Level of each of DP-Sniper's four one-sided bounds (two directions x two bounds at 95%).
ALPHA = (1 - 0.95) / 4
_SCORES = ("learned", "exact")
_BUDGETS = tuple(int(b) for b in np.geomspace(1e2, 1e6, 9).round())

#: Run profiles. calls: budget per Table 5 row (per pair); pairs x reps rows per cell; exact_reps: of the
#: exact-score reference; budgets: the budget figure's x values; sizes: the matched budget's n; duel_pairs x
#: duel_reps duels per cell. "paper": the paper's 6.5e6 calls per row; "full" 5e5.
PROFILES: dict[str, dict[str, Any]] = {
    "smoke": dict(calls=20_000, pairs=1, reps=1, exact_reps=1, budgets=(100, 1_000, 20_000), sizes=(30, 100, 300),
                  duel_pairs=1, duel_reps=1),
    "full": dict(calls=500_000, pairs=3, reps=3, exact_reps=1, budgets=_BUDGETS[:-1] + (500_000,),
                 sizes=(30, 100, 300), duel_pairs=3, duel_reps=3),
    "paper": dict(calls=6_500_000, pairs=3, reps=3, exact_reps=3, budgets=_BUDGETS + (6_500_000,),
                  sizes=(30, 100, 300), duel_pairs=3, duel_reps=3),
}

#: The chapter's papermill parameters (:func:`epsaudit.studies.parameters.check`).
PARAMETERS = (
    PROFILE,
    Parameter("calls", int, "DP-Sniper budget per Table 5 row, mechanism calls per pair (None: the profile's)",
              low=2_000, high=20_000_000, optional=True),
    SEED,
    N_JOBS,
)


def settings(profile: str, calls: int | None = None) -> dict[str, Any]:
    """The profile's settings with the chapter's ``calls`` parameter applied (``None`` keeps the profile's);
    the budget figure's grid keeps the profile's budgets below ``calls`` and ends at ``calls``.

    Raises
    ------
    ValueError
        If ``profile`` is not ``"smoke"``, ``"full"`` or ``"paper"``.

    Examples
    --------
    >>> s = settings("smoke", 50_000)
    >>> s["calls"], s["budgets"]
    (50000, (100, 1000, 20000, 50000))
    """
    out = choose_profile(PROFILES, profile, "chapter 2 (DP-Sniper)")
    if calls is not None:
        out["calls"] = int(calls)
        out["budgets"] = tuple(b for b in out["budgets"] if b < calls) + (int(calls),)
    return out


def comparison_mechanism(kind: str, epsilon: float, *, seed: int = 0, dim: int = 512, n_identities: int = 20) -> Mechanism:
    """A mechanism of the DP-Sniper comparison with requested global ``epsilon`` (0: the exact null):
    ``"laplace"``, product Laplace calibrated on the seeded ``"dispersed"`` prototypes (worst pair exactly
    ``epsilon``); ``"randomized_response"``, ``K = 16`` (every pair exactly ``epsilon``).

    Raises
    ------
    ValueError
        If ``kind`` is not one of :data:`MECHANISMS`.

    Examples
    --------
    >>> comparison_mechanism("randomized_response", 2.0).exact_epsilon(0, 1)
    2.0
    """
    if kind == "laplace":
        return calibrate("laplace", prototype_set("dispersed", n_identities, dim, seed=seed), float(epsilon), seed=seed)
    if kind == "randomized_response":
        return RandomizedResponse(RR_CATEGORIES, float(epsilon))
    raise ValueError(f"unknown mechanism kind {kind!r}; expected one of {MECHANISMS}")


def comparison_pairs(mechanism: Mechanism, n_pairs: int = 3, seed: int = 0) -> list[tuple[int, int]]:
    """The fixed pairs: the first ``n_pairs`` of the benchmark's shuffled pair list
    (:func:`epsaudit.mechanisms.benchmark_pairs`, seeded by ``seed``)."""
    return benchmark_pairs(mechanism.n_identities, seed=seed)[:n_pairs]


@dataclass(frozen=True)
class SniperTask:
    """One DP-Sniper row: a mechanism, an input pair ``a, b``, a budget (calls per pair), a seed,
    keyword ``options`` of :func:`~epsaudit.sniper.dp_sniper`, and ``meta`` copied into its table rows."""

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


def _one_core(function, *args, **kwargs):
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):  # one core per row: rows are the unit of parallelism
        return function(*args, **kwargs)


def run_tasks(tasks: Sequence[SniperTask], *, n_jobs: int | None = None, progress: bool = False,
              desc: str = "DP-Sniper rows") -> list[tuple[EpsilonResult, EpsilonResult]]:
    """Run DP-Sniper rows in parallel with joblib, one core (one BLAS thread) per row, each seeded by its own ``seed``.

    Returns
    -------
    list of (EpsilonResult, EpsilonResult)
        One pair of direction certificates per task, in task order.

    Raises
    ------
    ValueError
        If an element of ``tasks`` is not a :class:`SniperTask`.
    """
    tasks = list(tasks)
    for i, task in enumerate(tasks):
        if not isinstance(task, SniperTask):
            raise ValueError(f"tasks[{i}] is a {type(task).__name__}, not a SniperTask")
    out = Parallel(n_jobs=n_jobs, return_as="generator")(delayed(_one_core)(SniperTask.run, t) for t in tasks)
    return list(progress_bar(out, progress, desc, total=len(tasks)))


def _with_meta(results, meta: Mapping[str, Any], exact: float) -> pd.DataFrame:
    frame = results_frame(results)
    frame.insert(3, "exact_epsilon", exact)
    for key, value in reversed(list(meta.items())):
        frame.insert(0, key, value)
    return frame


def sniper_frame(tasks: Sequence[SniperTask], results: Sequence[tuple[EpsilonResult, EpsilonResult]]) -> pd.DataFrame:
    """One table row per certificate (two per task, consecutive): each task's ``meta``, the
    :func:`epsaudit.results.results_frame` columns, ``exact_epsilon`` (NaN when unknown) and ``above_exact``.

    Raises
    ------
    ValueError
        If there are not as many results as tasks.
    """
    if len(tasks) != len(results):
        raise ValueError(f"{len(tasks)} tasks but {len(results)} results")
    frames = [_with_meta(pair, dict(task.meta), task.mechanism.exact_epsilon(task.a, task.b)
                         if isinstance(task.mechanism, Mechanism) else np.nan) for task, pair in zip(tasks, results)]
    table = pd.concat(frames, ignore_index=True)
    table["above_exact"] = table["value"] > table["exact_epsilon"] + 1e-9
    return table


def comparison_tasks(kinds: Sequence[str], epsilons: Sequence[float], calls: int, *, n_pairs: int = 3, reps: int = 3,
                     score: str = "learned", seed: int = 0, dim: int = 512, **options) -> list[SniperTask]:
    """DP-Sniper rows of the Table 5 protocol: every mechanism x epsilon x fixed pair x repetition, each
    seeded by ``("dp-sniper-row", seed, kind, epsilon, pair, rep, calls, score)``.

    Parameters
    ----------
    kinds : sequence of {"laplace", "randomized_response"}
    epsilons : sequence of float
        Requested global epsilons (0 = the exact null).
    calls, n_pairs, reps : int
        Mechanism calls per row (pair, both directions); fixed pairs and repetitions (paper: 3 and 3).
    score : {"learned", "exact"}, default="learned"
        A learned classifier (``options["classifier"]``) or the mechanism's exact likelihood ratio.
    seed, dim : int
        Base seed (prototypes, pair order and every draw); dimension of the Laplace mechanism.
    **options
        Further keyword arguments of :func:`~epsaudit.sniper.dp_sniper`.

    Returns
    -------
    list of SniperTask
        ``meta``: ``mechanism``, ``requested_epsilon``, ``pair_index``, ``rep``, ``score``.

    Raises
    ------
    ValueError
        If ``score`` is not ``"learned"`` or ``"exact"``.
    """
    if score not in _SCORES:
        raise ValueError(f"score must be one of {_SCORES}, got {score!r}")
    tasks = []
    for kind in kinds:
        for eps in epsilons:
            mech = comparison_mechanism(kind, eps, seed=seed, dim=dim)
            for p, (a, b) in enumerate(comparison_pairs(mech, n_pairs, seed)):
                opts = dict(options) | ({"score_function": mech.exact_score(a, b)} if score == "exact" else {})
                for rep in range(reps):
                    key = ("dp-sniper-row", seed, kind, float(eps), p, rep, int(calls), score)
                    meta = {"mechanism": kind, "requested_epsilon": float(eps), "pair_index": p, "rep": rep,
                            "score": score}
                    tasks.append(SniperTask(mech, a, b, int(calls), seed=key, options=opts, meta=meta))
    return tasks


def run_rows(tasks: Sequence[SniperTask], n_jobs: int | None = None) -> pd.DataFrame:
    """:func:`sniper_frame` of :func:`run_tasks`: two rows (directions) per task, in task order."""
    return sniper_frame(tasks, run_tasks(tasks, n_jobs=n_jobs))


def matched_duel(mechanism: Mechanism, a: int, b: int, n: int, *, seed=0, c: float = DEFAULT_C,
                 classifier: Any = None, confidence: float = 0.95) -> tuple[EpsilonResult, EpsilonResult, EpsilonResult]:
    """DP-Sniper and the reserved ROC test on the same budget: ``2 n`` calls of each input.

    The reserved test (:func:`epsaudit.audits.reserved_test_certificate`, joint certificate, pure DP)
    draws ``n`` development and ``n`` test outputs per input; DP-Sniper gets the same ``4 n`` calls. Both
    use ``classifier`` and hold at ``confidence`` for the pair. The reuse check is off only for
    mechanisms whose outputs repeat by design (one-hot rows).

    Returns
    -------
    (EpsilonResult, EpsilonResult, EpsilonResult)
        DP-Sniper ``a -> b``, ``b -> a`` and the reserved-test certificate.
    """
    s_sniper, s_dev, s_test = (seed_key(seed, "duel") + (part,) for part in ("dp-sniper", "dev", "test"))
    ab, ba = dp_sniper(mechanism, a, b, 4 * int(n), seed=s_sniper, c=c, classifier=classifier, confidence=confidence)
    dev = mechanism.sample_groups(int(n), seed=s_dev, identities=[a, b])
    test = mechanism.sample_groups(int(n), seed=s_test, identities=[a, b])
    reserved = reserved_test_certificate(dev[a], dev[b], test[a], test[b], classifier=classifier,
                                         n_certificates=1, confidence=confidence, delta=0.0, pair=(a, b),
                                         check_reuse=not mechanism.repeated_outputs)
    return ab, ba, reserved


def run_duels(kinds: Sequence[str], epsilons: Sequence[float], sizes: Sequence[int], *, n_pairs: int = 3, reps: int = 3,
              seed: int = 0, dim: int = 512, n_jobs: int | None = None, progress: bool = False, **options) -> pd.DataFrame:
    """The matched-budget duels over mechanisms x epsilons x sizes x fixed pairs x repetitions, in parallel,
    seeded by ``("duel", seed, kind, epsilon, pair, rep, n)``; ``options`` go to :func:`matched_duel`.

    Returns
    -------
    pandas.DataFrame
        Three certificate rows per duel: ``mechanism``, ``requested_epsilon``, ``n``, ``pair_index``,
        ``rep``, the :func:`epsaudit.results.results_frame` columns, ``exact_epsilon``,
        ``above_exact`` and ``direction`` (``"both"`` for the reserved test).
    """
    specs = []
    for kind in kinds:
        for eps in epsilons:
            mech = comparison_mechanism(kind, eps, seed=seed, dim=dim)
            for n in sizes:
                for p, (a, b) in enumerate(comparison_pairs(mech, n_pairs, seed)):
                    for rep in range(reps):
                        meta = {"mechanism": kind, "requested_epsilon": float(eps), "n": int(n), "pair_index": p,
                                "rep": rep}
                        specs.append((mech, a, b, int(n), ("duel", seed, kind, float(eps), p, rep, int(n)), meta))
    jobs = (delayed(_one_core)(matched_duel, m, a, b, n, seed=s, **options) for m, a, b, n, s, _ in specs)
    outs = progress_bar(Parallel(n_jobs=n_jobs, return_as="generator")(jobs), progress, "duels", total=len(specs))
    table = pd.concat([_with_meta(results, meta, mech.exact_epsilon(a, b))
                       for (mech, a, b, _, _, meta), results in zip(specs, outs)], ignore_index=True)
    table["direction"] = table["direction"].fillna("both")
    table["above_exact"] = table["value"] > table["exact_epsilon"] + 1e-9
    return table


# --- Figures --------------------------------------------------------------------------------------


#: Colour and marker per requested epsilon of the budget figure (Okabe-Ito blue and vermillion).
_COLOURS = {8.0: PALETTE[0], 32.0: PALETTE[5]}

_MARKERS = {8.0: "o", 32.0: "s"}

#: Text sizes (pt) of the chapter's figures: a 7.6-inch figure shown across the page's ~7 inches keeps >= 12 pt.
_TEXT = {"font.size": 14, "axes.titlesize": 15, "axes.labelsize": 14, "xtick.labelsize": 13, "ytick.labelsize": 13,
         "legend.fontsize": 13}

#: Panel order of the budget figure: the mechanism the attack breaks first, then the one it does not.
_PANELS = ("randomized_response", "laplace")

#: Panel titles of the chapter's two mechanisms.
_NAMES = {"laplace": "product Laplace (d = 512)", "randomized_response": "16-ary randomized response"}


def bounds_against_budget(rows: pd.DataFrame, caps: pd.DataFrame, *, c: float, labels: Mapping[str, str] | None = None):
    """How the budget and ``c`` cap what DP-Sniper can certify: raw bounds against calls per pair, one
    panel per mechanism with the two caps, ``log(1/c)`` and the runs at requested epsilon 8 and 32.

    Parameters
    ----------
    rows : DataFrame
        DP-Sniper rows (one per direction): ``mechanism``, ``requested_epsilon``, ``calls`` (per pair),
        ``raw`` (the unclamped bound, nats); lines are their median per budget.
    caps : DataFrame
        ``calls``, ``cap`` (closed-form cap) and ``design_cap`` (an attack firing with probability ``c``
        under the reference input), in nats.
    c : float
        The attack's target firing probability; ``log(1/c)`` is drawn dotted.
    labels : mapping, optional
        Display name per mechanism (default: "product Laplace (d = 512)", "16-ary randomized response").

    Returns
    -------
    matplotlib.figure.Figure
    """
    with plt.rc_context(_TEXT):
        return _bounds_against_budget(rows, caps, c, dict(MECHANISM_LABELS) | _NAMES | dict(labels or {}))


def _bounds_against_budget(rows: pd.DataFrame, caps: pd.DataFrame, c: float, labels: Mapping[str, str]):
    kinds = [k for k in _PANELS if k in set(rows["mechanism"])] + sorted(set(rows["mechanism"]) - set(_PANELS))
    fig, axes = plt.subplots(len(kinds), 1, figsize=(7.6, 3.9 * len(kinds) + 1.4), sharex=True, layout="constrained",
                             squeeze=False)
    top = math.log(1 / c)
    for ax, kind in zip(axes[:, 0], kinds):
        ax.plot(caps["calls"], caps["cap"], color="black", lw=1.8)
        ax.plot(caps["calls"], caps["design_cap"], color="black", lw=1.2, ls="--")
        ax.axhline(top, color="grey", lw=1.2, ls=":")
        ax.axhline(0, color="grey", lw=0.8)
        part = rows[rows.mechanism == kind]
        for eps, sub in part.groupby("requested_epsilon"):
            med = sub.groupby("calls")["raw"].median()
            colour, marker = _COLOURS.get(eps, PALETTE[2]), _MARKERS.get(eps, "^")
            ax.plot(med.index, med.values, color=colour, marker=marker, ms=7, lw=1.6)
            ax.scatter(sub["calls"], sub["raw"], color=colour, marker=marker, s=18, alpha=0.4, lw=0)
        low = min(0.0, float(part["raw"].min()) if len(part) else 0.0)
        ax.set_ylim(low - 0.4, top + 0.5)
        ax.set_title(labels.get(kind, kind), loc="left")
        ax.set_ylabel("raw bound on ε (nats)")
    axes[-1, 0].set_xscale("log")
    axes[-1, 0].set_xlabel("mechanism calls per pair (both inputs, both directions)")
    handles = [Line2D([], [], color="black", lw=1.8), Line2D([], [], color="black", lw=1.2, ls="--"),
               Line2D([], [], color="grey", lw=1.2, ls=":")]
    names = ["closed-form cap", "attack firing w.p. $c$ under $a'$", f"$\\log(1/c)$ = {top:.2f}"]
    for eps in sorted(set(rows["requested_epsilon"])):
        handles.append(Line2D([], [], color=_COLOURS.get(eps, PALETTE[2]), marker=_MARKERS.get(eps, "^"), ms=7, lw=1.6))
        names.append(f"requested $\\varepsilon$ = {eps:g}")
    fig.legend(handles, names, loc="outside lower center", ncol=2, frameon=False)
    return fig
