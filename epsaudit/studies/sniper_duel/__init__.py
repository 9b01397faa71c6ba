"""Chapter 2, DP-Sniper against the reserved test on mechanisms with known epsilon.

*Picture the Epsilon* compares its audits with DP-Sniper (Bichsel et al. 2021; Appendix, Table 5):
6.5e6 mechanism calls per row on product Laplace noise (d = 512) and 16-ary randomized response,
three fixed pairs and three repetitions, and a matched budget of ``2 n`` calls per input. This
module is the chapter: its run profiles (:data:`PROFILES`), the paper's Table 5 values
(:data:`TABLE5`, :data:`TABLE5_PROTOCOL`), and the runs and table-shaping of each section
(Table 5, the budget figure, the matched budget, validity); how the page shows them (tables with readable
labels, number formats, the sentences whose wording depends on a number) is
:mod:`epsaudit.studies.sniper_duel.page`. The protocol it runs
(:func:`comparison_tasks`, :func:`run_tasks`, :func:`run_duels`, ...) lives in
:mod:`epsaudit.studies.sniper_duel.protocol` and is re-exported here; the algorithm is the core's
:func:`epsaudit.sniper.dp_sniper`.

Section functions return a table and the named numbers the chapter's prose cites (glue keys).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from ...bounds import bonferroni_alpha, certifiable_cap
from ...scorers import paper_logistic_regression
from ...sniper import DEFAULT_C, ROUTE, attack_cap, design_cap, split_budget
from .. import choose_profile
from ..parameters import N_JOBS, PROFILE, SEED, Parameter
from .page import (MECHANISM_NAMES, NUMBER, budget_phrases, caps_view, count_words, duel_phrases, duel_views,
                   exercise_numbers, fmt, page_numbers, table5_phrases, table5_view, validity_phrases, validity_view)
from .protocol import (COMPARISON_MECHANISMS, RR_CATEGORIES, SCORES, TABLE5_CALLS, TABLE5_EPSILONS, SniperTask,
                              comparison_mechanism, comparison_pairs, comparison_tasks, matched_duel, run_duels,
                              run_rows, run_tasks, sniper_frame)

__all__ = [
    "PARAMETERS", "settings", "paper_logistic_regression", "ALPHA", "COMPARISON_MECHANISMS", "DEFAULT_C", "EPSILONS", "LABELS", "MECHANISM_NAMES", "NUMBER", "PROFILES",
    "ROUTE", "RR_CATEGORIES", "SCORES", "SniperTask", "TABLE5", "TABLE5_CALLS", "TABLE5_EPSILONS", "TABLE5_PROTOCOL",
    "budget_caps", "budget_numbers", "budget_phrases", "budget_rows", "caps_view", "chapter_numbers",
    "comparison_mechanism", "comparison_pairs", "comparison_tasks", "count_words", "duel_phrases", "duel_rows",
    "duel_tables", "duel_views", "exercise_numbers", "fmt", "matched_duel", "page_numbers", "profile_settings",
    "run_duels", "run_rows", "run_tasks", "sniper_frame", "table5", "table5_phrases", "table5_rows", "table5_view",
    "throughput", "validity_phrases", "validity_table", "validity_view",
]

#: The requested epsilons of the chapter: the exact null, then Table 5's columns.
EPSILONS: tuple[float, ...] = (0.0,) + TABLE5_EPSILONS
#: Row labels of the two mechanisms, as in Table 5.
LABELS = {"laplace": "product Laplace", "randomized_response": "K-ary RR"}
#: Level of each of DP-Sniper's one-sided bounds: two directions x two bounds at 95%.
ALPHA = (1 - 0.95) / 4

_GEOMETRIC_BUDGETS = tuple(np.geomspace(1e2, 1e6, 9).round().astype(int))
#: Run profiles. calls: budget per Table 5 row; pairs x reps rows per cell; exact_reps:
#: repetitions of the exact-score reference; budgets: the budget figure's x values; sizes:
#: matched-budget n; duel_pairs x duel_reps duels per cell. "paper" is the paper's protocol
#: (6.5e6 calls per row, three repetitions of the exact-score reference); "full" uses 5e5 calls, its
#: budget figure up to them (the book's time budget: drawing 512-dimensional outputs is most of the
#: chapter's run time).
PROFILES: dict[str, dict[str, Any]] = {
    "smoke": dict(calls=20_000, pairs=1, reps=1, exact_reps=1, budgets=(100, 1_000, 20_000), sizes=(30, 100, 300),
                  duel_pairs=1, duel_reps=1),
    "full": dict(calls=500_000, pairs=3, reps=3, exact_reps=1, budgets=_GEOMETRIC_BUDGETS[:-1] + (500_000,),
                 sizes=(30, 100, 300),
                 duel_pairs=3, duel_reps=3),
    "paper": dict(calls=TABLE5_CALLS, pairs=3, reps=3, exact_reps=3, budgets=_GEOMETRIC_BUDGETS + (TABLE5_CALLS,),
                  sizes=(30, 100, 300), duel_pairs=3, duel_reps=3),
}

#: *Picture the Epsilon*, Table 5: DP-Sniper with 6.5e6 mechanism calls per row; median 95% lower
#: bounds over three fixed pairs and three repetitions (one direction each), and their ratio to the
#: exact pairwise value (unrounded numbers; "realized reference" for randomized response). Columns
#: are the requested global epsilon.
TABLE5 = pd.DataFrame(
    [[-0.03, 0.12, 0.75, 2.63],
     [-0.05, 0.06, 0.09, 0.08],
     [0.12, 0.93, 4.47, 4.60],
     [0.23, 0.46, 0.56, 0.14]],
    index=pd.MultiIndex.from_tuples([("product Laplace", "bound"), ("product Laplace", "ratio"),
                                     ("K-ary RR", "bound"), ("K-ary RR", "ratio")], names=["mechanism", "statistic"]),
    columns=pd.Index([0.5, 2.0, 8.0, 32.0], name="requested epsilon"),
)
#: *Picture the Epsilon*, Table 5 caption: calls per row, rows at that budget and at the matched
#: budget, total calls, bounds above their exact value (none of 324).
TABLE5_PROTOCOL = {"calls_per_row": 6_500_000, "rows_full_budget": 81, "rows_matched_budget": 243,
                   "total_calls": 526_569_660, "bounds_above_exact": 0, "bounds": 324}


#: The chapter's papermill parameters (:func:`epsaudit.studies.parameters.check`).
PARAMETERS = (
    PROFILE,
    Parameter("calls", int, "DP-Sniper budget per Table 5 row, mechanism calls per pair (None: the profile's)",
              low=2_000, high=20_000_000, optional=True),
    SEED,
    N_JOBS,
)


def settings(profile: str, calls: int | None = None) -> dict[str, Any]:
    """The profile's settings with the chapter's ``calls`` parameter applied (``None`` keeps the profile's).

    The budget figure's grid keeps the profile's budgets below ``calls`` and ends at ``calls``.

    Examples
    --------
    >>> s = settings("smoke", 50_000)
    >>> s["calls"], s["budgets"]
    (50000, (100, 1000, 20000, 50000))
    """
    out = profile_settings(profile)
    if calls is not None:
        out["calls"] = int(calls)
        out["budgets"] = tuple(b for b in out["budgets"] if b < calls) + (int(calls),)
    return out


def profile_settings(name: str) -> dict[str, Any]:
    """The settings of one run profile of this chapter (:data:`PROFILES`).

    Parameters
    ----------
    name : {"smoke", "full", "paper"}

    Returns
    -------
    dict
        A copy of the profile's settings.

    Raises
    ------
    ValueError
        If ``name`` is not ``"smoke"``, ``"full"`` or ``"paper"``.
    """
    return choose_profile(PROFILES, name, "chapter 2 (DP-Sniper)")


# ---------------------------------------------------------------------------------------------
# The chapter's sections: Table 5, the budget figure, the matched budget, validity
# ---------------------------------------------------------------------------------------------


def chapter_numbers(profile: dict) -> dict[str, float]:
    """The constants the chapter's introduction cites.

    Parameters
    ----------
    profile : dict
        One of :data:`PROFILES`.

    Returns
    -------
    dict
        ``calls_k`` (the profile's calls per Table 5 row, thousands), ``paper_calls_m`` (the
        paper's, millions) and ``log_inv_c`` (``log(1/c)``, the cap of any DP-Sniper bound, nats).
    """
    return {"calls_k": profile["calls"] / 1e3, "paper_calls_m": TABLE5_CALLS / 1e6, "log_inv_c": math.log(1 / DEFAULT_C)}


def table5_rows(profile: dict, seed: int, n_jobs: int | None) -> tuple[pd.DataFrame, pd.DataFrame, float]:
    """Table 5's rows: the paper's learner at every epsilon (null included) and the exact-LR score.

    Parameters
    ----------
    profile : dict
        One of :data:`PROFILES` (``calls``, ``pairs``, ``reps``, ``exact_reps``).
    seed : int
        Base seed (prototypes, pair order and every row's stream key).
    n_jobs : int or None
        joblib workers over rows.

    Returns
    -------
    (DataFrame, DataFrame, float)
        All rows with ``ratio`` (raw bound / exact epsilon, NaN at the null), the learned rows
        alone, and the wall time of both runs (s).
    """
    learned_tasks = comparison_tasks(COMPARISON_MECHANISMS, EPSILONS, profile["calls"], n_pairs=profile["pairs"],
                                     reps=profile["reps"], seed=seed, classifier=paper_logistic_regression())
    exact_tasks = comparison_tasks(COMPARISON_MECHANISMS, TABLE5_EPSILONS, profile["calls"], n_pairs=profile["pairs"],
                                   reps=profile["exact_reps"], score="exact", seed=seed)
    learned, t_learned = run_rows(learned_tasks, n_jobs, "Table 5 (learned)")
    exact_rows, t_exact = run_rows(exact_tasks, n_jobs, "Table 5 (exact score)")
    rows = pd.concat([learned, exact_rows], ignore_index=True)
    rows["ratio"] = rows["raw"] / rows["exact_epsilon"].where(rows["exact_epsilon"] > 0)
    return rows, learned, t_learned + t_exact


def table5(rows: pd.DataFrame, learned: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Table 5 beside the paper's (medians over pairs, repetitions and directions), and the text's numbers.

    Parameters
    ----------
    rows, learned : DataFrame
        The first two results of :func:`table5_rows`.

    Returns
    -------
    (DataFrame, dict)
        Rows (mechanism, statistic), columns the requested epsilon, NaN where there is no value
        (the paper's null, ratios at the null; :func:`table5_view` shows it); the ``t5_*`` numbers
        and the phrases of :func:`table5_phrases`.
    """
    g = rows.groupby(["score", "mechanism", "requested_epsilon"])
    summary = pd.DataFrame({"bound": g["raw"].median(), "ratio": g["ratio"].median(),
                            "exact": g["exact_epsilon"].median(), "rows": g.size()})
    side = []
    for kind in COMPARISON_MECHANISMS:
        ours, ref = summary.loc[("learned", kind)], summary.loc[("exact", kind)]
        theirs = TABLE5.xs(LABELS[kind], level="mechanism")
        side.append(pd.DataFrame({
            (LABELS[kind], "exact epsilon (median)"): ours["exact"],
            (LABELS[kind], "bound, ours"): ours["bound"],
            (LABELS[kind], "bound, paper"): theirs.loc["bound"],
            (LABELS[kind], "ratio, ours"): ours["ratio"],
            (LABELS[kind], "ratio, paper"): theirs.loc["ratio"],
            (LABELS[kind], "bound, exact-LR score"): ref["bound"],
        }).T)
    table = pd.concat(side)
    table.columns.name = "requested epsilon"
    numbers: dict[str, Any] = {}
    for kind in COMPARISON_MECHANISMS:
        short = "lap" if kind == "laplace" else "rr"
        for eps in TABLE5_EPSILONS:
            key = f"t5_{short}_{eps:g}".replace(".", "p")
            numbers[key] = float(summary.loc[("learned", kind, eps), "bound"])
            numbers[f"{key}_ratio"] = float(summary.loc[("learned", kind, eps), "ratio"])
            numbers[f"{key}_exact"] = float(summary.loc[("learned", kind, eps), "exact"])
            numbers[f"{key}_lr"] = float(summary.loc[("exact", kind, eps), "bound"])
        null = learned[(learned.mechanism == kind) & (learned.requested_epsilon == 0)]
        numbers[f"t5_{short}_null_max"] = float(null["value"].max())
    rr_high = learned[(learned.mechanism == "randomized_response") & (learned.requested_epsilon >= 8)]
    numbers["t5_cap_rows"] = int(len(rr_high))
    numbers["t5_cap_hits"] = int((rr_high["raw"] > math.log(1 / DEFAULT_C) - 0.1).sum())
    numbers["t5_n_train"] = int(learned[learned.mechanism == "laplace"]["n_train"].iloc[0])
    numbers.update(table5_phrases(numbers, TABLE5))
    return table.astype(float), numbers


def budget_rows(profile: dict, learned: pd.DataFrame, seed: int,
                n_jobs: int | None) -> tuple[pd.DataFrame, pd.DataFrame, float]:
    """The budget figure's rows: pair 0 of each mechanism at requested 8 and 32 over the profile's budgets.

    Parameters
    ----------
    profile : dict
        One of :data:`PROFILES` (``budgets``, ``calls``).
    learned : DataFrame
        The learned Table 5 rows (:func:`table5_rows`), reused at the row budget.
    seed : int
    n_jobs : int or None

    Returns
    -------
    (DataFrame, DataFrame, float)
        The new rows; the new rows with the matching Table 5 rows (pair 0, repetition 0) at the
        row budget; the wall time of the new rows (s).
    """
    budgets = [b for b in profile["budgets"] if b != profile["calls"]]
    tasks = [t for b in budgets for t in comparison_tasks(COMPARISON_MECHANISMS, (8.0, 32.0), int(b), n_pairs=1, reps=1,
                                                          seed=seed, classifier=paper_logistic_regression())]
    rows, seconds = run_rows(tasks, n_jobs, "budget figure")
    top = learned[(learned.pair_index == 0) & (learned.rep == 0) & learned.requested_epsilon.isin([8.0, 32.0])]
    return rows, pd.concat([rows, top], ignore_index=True), seconds


def budget_caps(profile: dict, points: int = 200) -> pd.DataFrame:
    """The closed-form cap (:func:`~epsaudit.sniper.attack_cap`) and the design cap on a geometric grid of budgets.

    Parameters
    ----------
    profile : dict
        One of :data:`PROFILES`; the grid runs from its smallest budget to its largest (or the
        row budget).
    points : int
        Grid points.

    Returns
    -------
    pandas.DataFrame
        ``calls`` (per pair), ``n_final`` (final calls per input), ``cap`` and ``design_cap``
        (nats), with each bound at :data:`ALPHA` and ``c`` = :data:`DEFAULT_C`.
    """
    top = max(max(profile["budgets"]), profile["calls"])
    calls = np.geomspace(min(profile["budgets"]), top, points).round().astype(int)
    n_final = np.array([split_budget(int(b)).final for b in calls])
    return pd.DataFrame({"calls": calls, "n_final": n_final, "cap": attack_cap(n_final, ALPHA, DEFAULT_C),
                         "design_cap": design_cap(n_final, ALPHA, DEFAULT_C)})


def budget_numbers(profile: dict, rows: pd.DataFrame) -> dict[str, Any]:
    """The budget section's numbers.

    Parameters
    ----------
    profile : dict
    rows : DataFrame
        The second result of :func:`budget_rows`.

    Returns
    -------
    dict
        ``cap_<calls>`` at 1e2, 1e3, 1e4 calls, ``design_<calls>`` at 1e4 and 1e6 (nats), the
        median randomized-response bound at requested 32 at the smallest and the row budget, and
        :func:`budget_phrases`.
    """
    numbers: dict[str, Any] = {f"cap_{b}": float(attack_cap(split_budget(int(b)).final, ALPHA, DEFAULT_C))
                               for b in (100, 1_000, 10_000)}
    for b in (10_000, 1_000_000):
        numbers[f"design_{b}"] = float(design_cap(split_budget(b).final, ALPHA, DEFAULT_C))
    rr32 = rows[(rows.mechanism == "randomized_response") & (rows.requested_epsilon == 32.0)]
    numbers["rr32_small"] = float(rr32[rr32.calls == min(profile["budgets"])]["raw"].median())
    numbers["small_budget"] = int(min(profile["budgets"]))
    numbers["rr32_top"] = float(rr32[rr32.calls == profile["calls"]]["raw"].median())
    numbers.update(budget_phrases(profile, rows))
    return numbers


_DUEL_KEYS = ["mechanism", "requested_epsilon", "n", "pair_index", "rep"]


def duel_rows(profile: dict, seed: int, n_jobs: int | None) -> pd.DataFrame:
    """The matched-budget duels of the profile (:func:`run_duels` with the paper's learner).

    Parameters
    ----------
    profile : dict
        One of :data:`PROFILES` (``sizes``, ``duel_pairs``, ``duel_reps``).
    seed : int
    n_jobs : int or None

    Returns
    -------
    pandas.DataFrame
        Three certificate rows per duel (DP-Sniper's two directions, the reserved test).
    """
    return run_duels(COMPARISON_MECHANISMS, EPSILONS, profile["sizes"], n_pairs=profile["duel_pairs"],
                     reps=profile["duel_reps"], seed=seed, n_jobs=n_jobs, classifier=paper_logistic_regression())


def duel_tables(duels: pd.DataFrame, profile: dict) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """The caps of both methods per n, the duel summary per setting, and the text's numbers.

    DP-Sniper's pair value is the larger of its two directions; the reserved test has one.

    Parameters
    ----------
    duels : DataFrame
        :func:`duel_rows`.
    profile : dict

    Returns
    -------
    (DataFrame, DataFrame, dict)
        Caps per n (nats); per (mechanism, requested epsilon, n) the median exact epsilon, both
        methods' median pair values and fractions above zero; the glue numbers (with
        :func:`duel_phrases`).
    """
    sizes = profile["sizes"]
    sniper_pair = duels[duels.route == ROUTE].groupby(_DUEL_KEYS)["value"].max().rename("DP-Sniper")
    reserved = duels[duels.route == "roc_reserved"].set_index(_DUEL_KEYS)["value"].rename("reserved test")
    exact_pair = duels.groupby(_DUEL_KEYS)["exact_epsilon"].first()
    duel = pd.concat([sniper_pair, reserved, exact_pair], axis=1).reset_index()
    summary = duel.groupby(["mechanism", "requested_epsilon", "n"]).agg(
        exact=("exact_epsilon", "median"),
        sniper_median=("DP-Sniper", "median"), reserved_median=("reserved test", "median"),
        sniper_positive=("DP-Sniper", lambda v: float(np.mean(v > 0))),
        reserved_positive=("reserved test", lambda v: float(np.mean(v > 0))),
    )
    caps = pd.DataFrame({"n": sizes,
                         "DP-Sniper cap": [float(attack_cap(split_budget(4 * n).final, ALPHA, DEFAULT_C)) for n in sizes],
                         "reserved-test cap": [certifiable_cap(n, n, bonferroni_alpha(1), 0.0) for n in sizes],
                         "reserved-test cap (Clopper-Pearson)": [certifiable_cap(n, n, bonferroni_alpha(1), 0.0,
                                                                                 bound="clopper-pearson") for n in sizes],
                         }).set_index("n")
    numbers: dict[str, Any] = {
        "duels": int(len(duel)),
        "sniper_wins": int((duel["DP-Sniper"] > duel["reserved test"] + 1e-12).sum()),
        "reserved_wins": int((duel["reserved test"] > duel["DP-Sniper"] + 1e-12).sum()),
        "both_zero": int(((duel["DP-Sniper"] == 0) & (duel["reserved test"] == 0)).sum()),
    }
    for n in sizes:
        numbers[f"duel_nfinal_{n}"] = int(split_budget(4 * n).final)
        numbers[f"cap_sniper_{n}"] = float(caps.loc[n, "DP-Sniper cap"])
        numbers[f"cap_reserved_{n}"] = float(caps.loc[n, "reserved-test cap"])
        numbers[f"cap_reserved_cp_{n}"] = float(caps.loc[n, "reserved-test cap (Clopper-Pearson)"])
    rr_big, lap_big = summary.loc[("randomized_response", 8.0)], summary.loc[("laplace", 32.0)]
    for n in sizes:
        numbers[f"duel_rr8_sniper_{n}"] = float(rr_big.loc[n, "sniper_median"])
        numbers[f"duel_rr8_reserved_{n}"] = float(rr_big.loc[n, "reserved_median"])
    ahead = all(rr_big.loc[n, "reserved_median"] > rr_big.loc[n, "sniper_median"] for n in sizes if n > min(sizes))
    numbers["duel_rr8_phrase"] = ("the reserved test certifies more" if ahead
                                  else "the reserved test does not certify more at every size")
    numbers["duel_lap32_sniper_pos"] = float(lap_big["sniper_positive"].max())
    numbers["duel_lap32_reserved_pos"] = float(lap_big["reserved_positive"].max())
    numbers["duel_lap_sniper_max"] = float(duel[duel.mechanism == "laplace"]["DP-Sniper"].max())
    numbers["duel_lap_reserved_max"] = float(duel[duel.mechanism == "laplace"]["reserved test"].max())
    numbers.update(duel_phrases(duel, numbers, sizes))
    return caps, summary, numbers


def validity_table(rows: pd.DataFrame, figure_rows: pd.DataFrame, duels: pd.DataFrame) -> tuple[pd.Series, dict[str, Any]]:
    """Every DP-Sniper bound of the chapter against the exact epsilon, by bound and by family.

    A family is one pair-run's two directions (95% together); the tolerance is the 99.9% quantile of
    Binomial(families, 0.05). The matched budget's reserved-test certificates are counted too.

    Parameters
    ----------
    rows, figure_rows, duels : DataFrame
        Table 5 rows, the budget figure's new rows and the duels.

    Returns
    -------
    (Series, dict)
        The counts; the ``v_*`` numbers and ``v_phrase`` (:func:`validity_phrases`).
    """
    duel_sniper = duels[duels.route == ROUTE].assign(family=lambda f: f.groupby(_DUEL_KEYS).ngroup())
    every = pd.concat([rows.assign(part="Table 5"), figure_rows.assign(part="budget figure"),
                       duel_sniper.assign(part="matched budget")], ignore_index=True)
    n_families = len(rows) // 2 + len(figure_rows) // 2 + len(duel_sniper) // 2
    families_above = int(
        rows.assign(f=np.arange(len(rows)) // 2).groupby("f")["above_exact"].any().sum()
        + figure_rows.assign(f=np.arange(len(figure_rows)) // 2).groupby("f")["above_exact"].any().sum()
        + duel_sniper.groupby("family")["above_exact"].any().sum()
    )
    reserved = duels[duels.route == "roc_reserved"]
    counts = pd.Series({
        "DP-Sniper bounds": len(every),
        "bounds above exact epsilon": int(every["above_exact"].sum()),
        "families (pair-runs, both directions at 95%)": n_families,
        "families with a bound above exact": families_above,
        "binomial tolerance (families, 99.9%)": int(stats.binom.ppf(0.999, n_families, 0.05)),
        "reserved-test certificates (matched budget)": int(len(reserved)),
        "reserved-test certificates above exact": int(reserved["above_exact"].sum()),
    })
    keys = ("v_bounds", "v_above", "v_families", "v_fam_above", "v_tol", "v_reserved", "v_reserved_above")
    numbers: dict[str, Any] = {k: int(v) for k, v in zip(keys, counts)}
    return counts, numbers | validity_phrases(numbers)


def throughput(rows: pd.DataFrame, figure_rows: pd.DataFrame, seconds: float) -> dict[str, float]:
    """Mechanism calls of the Table 5 and budget-figure rows, and calls per second (training included).

    Parameters
    ----------
    rows, figure_rows : DataFrame
        Table 5 rows and the budget figure's new rows (two per call of DP-Sniper).
    seconds : float
        Their wall time.

    Returns
    -------
    dict
        ``calls_per_s`` and ``total_calls_m`` (millions).
    """
    calls = int(rows["calls"].sum() // 2 + figure_rows["calls"].sum() // 2)
    return {"calls_per_s": calls / seconds, "total_calls_m": calls / 1e6}
