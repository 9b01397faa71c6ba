"""Chapter 1's sentences that depend on numbers: the wording is computed from the numbers it states.

Each function takes what a section function of :mod:`epsaudit.studies.synthetic` returned and
gives the phrases (glue keys) whose claim would otherwise be fixed in the text: "agrees to within
2%", "which is what we see", "none above ...". Numbers are written with
:func:`epsaudit.studies.synthetic.views.number` and the digits of
:data:`~epsaudit.studies.synthetic.views.DIGITS`, as in the tables.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pandas as pd

from .views import DIGITS, number

__all__ = ["figure2_wording", "figure3_wording", "floating_point_wording", "join_numbers", "table4_wording",
           "table6_wording", "validity_wording"]


def join_numbers(values, digits: int) -> str:
    """Numbers written with :func:`number` and joined by ``" / "``.

    Examples
    --------
    >>> join_numbers([31.5, 31.0, 30.75], 1)
    '31.5 / 31.0 / 30.8'
    """
    return " / ".join(number(v, digits) for v in values)


def _percent_range(values) -> str:
    lo, hi = (round(float(v)) for v in (min(values), max(values)))
    return f"{lo}%" if lo == hi else f"{lo}-{hi}%"


def table4_wording(side: pd.DataFrame, profile: dict) -> dict[str, str]:
    """Phrases of the Table 4 text: agreement with the paper and the null's expectations.

    Parameters
    ----------
    side : DataFrame
        :func:`~epsaudit.studies.synthetic.table4`'s table (columns ``(statistic, "ours" | "paper")``).
    profile : dict
        ``pairs``, ``reps_null`` (two noise mechanisms per size).

    Returns
    -------
    dict
        ``t4_sizes``, ``t4_div_ours``, ``t4_div_paper``, ``t4_mmd_ours``, ``t4_mmd_paper``,
        ``t4_gm_phrase``, ``t4_kde_phrase``, ``t4_div_phrase`` and ``t4_auc_phrase``.
    """
    sizes = list(side.index)
    ours, paper = side.xs("ours", axis=1, level=1), side.xs("paper", axis=1, level=1)
    settings, pairs = 2 * profile["reps_null"], profile["pairs"]
    shared = paper["GaussMech"].notna()  # sizes the paper reports (30, 100, 300)
    gm = 100 * np.abs(ours["GaussMech"][shared] / paper["GaussMech"][shared] - 1)
    below = 100 * (1 - ours["KDE-LR a=.01"][shared] / paper["KDE-LR a=.01"][shared])
    if not shared.any():
        gm_phrase = "cannot be set beside the paper's here (it reports n = 30, 100 and 300 only), but follows the formula"
        kde_phrase = "not comparable at these sizes with the paper's"
    else:
        gm_phrase = (f"agrees with the paper's to within {math.ceil(gm.max())}%" if gm.max() <= 10 else
                     f"differs from the paper's by up to {gm.max():.0f}%")
        kde_phrase = (f"{_percent_range(below)} below the paper's" if (below > 0).all() else
                      f"{_percent_range(below.abs())} away from the paper's")
    # +inf count at the null: each pair Bernoulli(3/4) (module text), mean of `settings` settings, scaled to 40
    se = 40 / pairs * math.sqrt(pairs * 3 / 16 / settings)
    off = [n for n in sizes if abs(ours.loc[n, "Div."] - 30) > 2 * se]
    div_phrase = ("and ours stay within two binomial standard errors of 30" if not off else
                  "but ours differ from 30 by more than two binomial standard errors at n = "
                  + ", ".join(str(n) for n in off))
    # null AUC of one pair: sd sqrt((2n + 1) / (12 n^2)); a median of `pairs` pairs ~1.25 x that / sqrt(pairs)
    n0 = sizes[0]
    se_auc = 1.2533 * math.sqrt((2 * n0 + 1) / (12 * n0 ** 2)) / math.sqrt(pairs * settings)
    auc = float(ours.loc[n0, "AUC"])
    auc_phrase = ("i.e. chance" if abs(auc - 0.5) <= 2 * se_auc else
                  f"against 0.5 at chance (a noisy median of {pairs} pairs per setting in this profile)")
    return {"t4_sizes": " / ".join(str(n) for n in sizes),
            "t4_div_ours": join_numbers(ours["Div."], DIGITS["infinite"]),
            "t4_div_paper": join_numbers(paper["Div."], DIGITS["infinite"]),
            "t4_mmd_ours": join_numbers(ours["MMD-TV"], DIGITS["mmd"]),
            "t4_mmd_paper": join_numbers(paper["MMD-TV"], DIGITS["mmd"]),
            "t4_gm_phrase": gm_phrase, "t4_kde_phrase": kde_phrase, "t4_div_phrase": div_phrase,
            "t4_auc_phrase": auc_phrase}


def figure2_wording(table: pd.DataFrame, auc_reference: pd.DataFrame) -> dict[str, Any]:
    """Numbers and phrases of the Figure 2 text.

    Parameters
    ----------
    table : DataFrame
        :func:`~epsaudit.studies.synthetic.figure2_table`'s table (rows (mechanism, epsilon)).
    auc_reference : DataFrame
        :func:`~epsaudit.studies.synthetic.optimal_auc_reference` rows.

    Returns
    -------
    dict
        ``f2_gm_top`` (largest GaussMech median at the largest setting), ``f2_gm_top_phrase``
        (GaussMech beside the exact median per noise at the largest setting), ``f2_mmd_phrase``,
        ``f2_auc_phrase``, ``f2_lap_opt`` and ``f2_lap_auc`` (optimal and out-of-fold AUC of
        Laplace noise at the largest setting).
    """
    top = max(table.index.get_level_values("epsilon"))
    mechanisms = [m for m in ("gaussian", "laplace") if m in table.index.get_level_values(0)]
    gm_top = float(max(table.loc[(m, top), "gaussmech"] for m in mechanisms))
    names = {"gaussian": "Gaussian", "laplace": "Laplace"}
    gm_top_phrase = "; ".join(
        f"{number(table.loc[(m, top), 'gaussmech'], DIGITS['gaussmech'])} for {names[m]} noise, whose exact median "
        f"is {number(table.loc[(m, top), 'reference epsilon'], DIGITS['epsilon'])}" for m in mechanisms)
    lap = table.loc["laplace"]
    mmd_phrase = "rises with" if lap.loc[top, "mmd_tv"] > lap.loc[0.0, "mmd_tv"] else "does not rise with"
    optimal = auc_reference.groupby(["mechanism", "epsilon"])["optimal_auc"].mean()
    gauss = table.loc["gaussian"]
    eps = [e for e in gauss.index if e > 0 and ("gaussian", e) in optimal.index]
    above = [e for e in eps if gauss.loc[e, "roc_oof AUC"] > optimal.loc[("gaussian", e)] + 0.01]
    auc_phrase = ("stays at or below the population-optimal AUC" if not above else
                  "exceeds the population-optimal AUC by more than 0.01 at requested ε = "
                  + ", ".join(f"{e:g}" for e in above))
    return {"f2_gm_top": gm_top, "f2_gm_top_phrase": gm_top_phrase, "f2_mmd_phrase": mmd_phrase, "f2_auc_phrase": auc_phrase,
            "f2_lap_opt": float(optimal.loc[("laplace", top)]), "f2_lap_auc": float(lap.loc[top, "roc_oof AUC"])}


def figure3_wording(summary: pd.DataFrame) -> dict[str, Any]:
    """Phrases and numbers of the Figure 3 text.

    Parameters
    ----------
    summary : DataFrame
        :func:`~epsaudit.studies.synthetic.certification_summary` of the Figure 3 certificates.

    Returns
    -------
    dict
        ``f3_n_phrase`` (what more samples do, or that this profile runs one size),
        ``f3_lap_best`` (largest median certificate on Laplace noise, nats), ``f3_lap_ref`` (the
        exact median epsilon of that setting; both NaN without Laplace rows) and ``f3_lap_sentence``
        (the sentence about Laplace noise, Markdown).
    """
    sizes = sorted(summary["n"].unique())
    if len(sizes) < 2:
        n_phrase = (f"This profile runs one sample size (n = {sizes[0]}), so it does not show what more samples "
                    "do; the cap above rises with n.")
    else:
        frac = summary.groupby(["mechanism", "test", "epsilon", "n"])["fraction_positive"].mean().unstack("n")
        steps = [(frac[b] >= frac[a] - 1e-12) for a, b in itertools.pairwise(sizes)]
        up = int(sum(s.sum() for s in steps))
        total = int(sum(len(s) for s in steps))
        n_phrase = ("More samples never lower the fraction of positive bounds and raise its ceiling, the cap, "
                    "as in the paper." if up == total else
                    f"More samples raise or keep the fraction of positive bounds in {up} of {total} steps to the "
                    "next size and raise its ceiling, the cap, as in the paper.")
    lap = summary[summary["mechanism"] == "laplace"]
    if lap.empty:
        return {"f3_n_phrase": n_phrase, "f3_lap_best": float("nan"), "f3_lap_ref": float("nan"),
                "f3_lap_sentence": "This run leaves out product Laplace noise (parameter `mechanisms`), the hard "
                                   "case for both tests: its exact epsilon is an $L_1$ quantity that no single "
                                   "threshold test at these sample sizes comes near."}
    best = lap.loc[lap["median_certified"].idxmax()]
    sentence = (f"Product Laplace noise in 512 dimensions is hard for both tests: the largest median certificate "
                f"is {number(best['median_certified'], DIGITS['epsilon'])} nats, against an exact median of "
                f"{number(best['reference_epsilon'], DIGITS['epsilon'])}; its exact epsilon is an $L_1$ quantity "
                "that no single threshold test at these sample sizes comes near.")
    return {"f3_n_phrase": n_phrase, "f3_lap_best": float(best["median_certified"]),
            "f3_lap_ref": float(best["reference_epsilon"]), "f3_lap_sentence": sentence}


def table6_wording(numbers: dict[str, Any]) -> dict[str, str]:
    """Phrases of the Table 6 text from :func:`~epsaudit.studies.synthetic.table6_by_geometry`'s numbers.

    Returns
    -------
    dict
        ``t6_gap_phrase`` (how much of the exact-vs-logistic gap shrinkage LDA closes) and
        ``t6_stopped_phrase`` (the logistic fits that stopped at ``max_iter``).

    Examples
    --------
    >>> table6_wording({"t6_gap_closed": float("nan"), "t6_stopped": 0, "t6_learned": 60})["t6_gap_phrase"]
    'there is no gap between the exact and the logistic test to close'
    """
    gap = numbers["t6_gap_closed"]
    if math.isnan(gap):
        gap_phrase = "there is no gap between the exact and the logistic test to close"
    else:
        gap_phrase = f"it closes {max(gap, 0.0):.0f}% of the gap between the exact and the logistic test"
    stopped, learned = numbers["t6_stopped"], numbers["t6_learned"]
    stopped_phrase = (f"none of the {learned} learned fits stopped there, so the weakness is where the scorer "
                      "looks, not an unfinished fit" if stopped == 0 else
                      f"{stopped} of {learned} learned fits stopped there (counted in each certificate's "
                      "`convergence_warnings`), which is part of why the learned test is weak")
    return {"t6_gap_phrase": gap_phrase, "t6_stopped_phrase": stopped_phrase}


def floating_point_wording(numbers: dict[str, Any], nominal: float = 0.3) -> dict[str, str]:
    """Phrases of the floating-point text from :func:`~epsaudit.studies.synthetic.floating_point_table`'s numbers.

    Returns
    -------
    dict
        ``fp_refute_phrase``, ``fp_sniper_phrase`` and ``fp_lr_phrase``.
    """
    refuted = numbers["fp_tb_reach_reserved"] > nominal or numbers["fp_tb_reach_sniper"] > nominal
    refute = (f"with 95% confidence the float64 mechanism as sampled is not {nominal:g}-DP" if refuted else
              f"neither certificate refutes the nominal {nominal:g} here")
    near = numbers["fp_tb_reach_sniper"] >= 0.85 * numbers["fp_cap"]
    sniper = "DP-Sniper stops near its cap" if near else "DP-Sniper stays below its cap"
    lr = ("The naive log-ratio score leaks too" if numbers["fp_tb_lr_reserved"] > nominal else
          f"The naive log-ratio score does not refute the nominal {nominal:g}")
    return {"fp_refute_phrase": refute, "fp_sniper_phrase": sniper, "fp_lr_phrase": lr}


def validity_wording(counts: pd.Series) -> dict[str, str]:
    """The validity sentence's comparison with the paper, from :func:`~epsaudit.studies.synthetic.validity_table`.

    Parameters
    ----------
    counts : Series
        The counts of :func:`~epsaudit.studies.synthetic.validity_table`, in its order.

    Examples
    --------
    >>> validity_wording(pd.Series([10, 0, 2, 0, 1]))["v_phrase"]
    'the same holds here for the reserved test'
    """
    certs, above, _, families_hit, tolerance = (int(v) for v in counts.iloc[:5])
    if above == 0:
        return {"v_phrase": "the same holds here for the reserved test"}
    verdict = ("within the binomial tolerance of the families' 5%" if families_hit <= tolerance else
               "more families than the 5% error rate allows")
    return {"v_phrase": f"here {above} of {certs} reserved-test certificates are ({verdict})"}
