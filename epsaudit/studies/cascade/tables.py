"""Chapter 4's tables of the corpora and the operator fit, with the papers' reported values beside ours.

The papers' values the chapter compares with are here (:data:`OPERATOR_TABLE_II`,
:data:`CASCADE_TABLE_III_FACEFUSION`, :data:`CASCADE`, :data:`CASCADE_TABLE_7`,
:data:`CASCADE_TABLE_8`), copied from the papers' tables. Each function takes what the experiment
computed (:mod:`~epsaudit.studies.cascade`: the corpora's manifest, the operator studies, the fold
designs) and returns the tables the chapter shows, ready to display (:func:`~.display.styled`), and
a dict of the values its prose quotes (``{glue key: value}``), formatted by the same rule as the
table they come from. The cascade's own tables are in :mod:`~epsaudit.studies.cascade.pass_tables`.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ...operator import DETERMINED_REL_TOL  # noqa: F401  (quoted by the chapter)
from .display import LABEL, MATH, fit_label, num, span, strings, styled

__all__ = ["ENCODERS", "ENCODER_LABEL", "ENCODER_KEY", "CASCADE_TABLE_III_FACEFUSION", "OPERATOR_TABLE_II", "CASCADE",
           "CASCADE_TABLE_7", "CASCADE_TABLE_7_CAP", "CASCADE_TABLE_8", "CASCADE_THREE_PASS", "PAPER_READINGS",
           "PAPER_LABELS", "DETERMINED_REL_TOL",
           "PENALTY", "corpora_overview", "operator_fit_tables", "size_curve_table", "search_table",
           "search_styler", "design_table", "determination_table", "penalty_values", "residual_table"]

ENCODERS = ("dlib", "sface")
ENCODER_LABEL = {"dlib": "dlib", "sface": "SFace"}
ENCODER_KEY = {label: e for e, label in ENCODER_LABEL.items()}
#: How a ridge penalty is printed, in tables and prose.
PENALTY = "{:.1e}"
#: How sigma_max(B) is printed (it spans 1 to 1e5).
SIGMA = "{:#.3g}"

# -------------------------------------------------------------------------------------------------
# the papers' reported values (copied from the papers' tables)

#: *Toward Interpretable Privacy Guarantees*, Table III: the five-pass FaceFusion cascade (478
#: chains, median over chains; buffalo_l ArcFace, raw cosines), measured against the Monte Carlo
#: rollout; pass 0 is the original image.
CASCADE_TABLE_III_FACEFUSION = pd.DataFrame(
    {"measured": [0.616, 0.091, 0.064, 0.056, 0.052, 0.047],
     "predicted_monte_carlo": [np.nan, 0.168, 0.053, 0.032, 0.024, 0.018],
     "non_member": [np.nan, 0.006, 0.003, 0.008, 0.004, 0.011],
     "excess_ratio": [np.nan, 0.139, 0.677, 0.873, 0.915, 0.893],
     "mia_auc": [np.nan, 0.874, 0.804, 0.761, 0.762, 0.709]},
    index=pd.Index(range(6), name="pass"),
)
#: *Toward Interpretable Privacy Guarantees*, Table II (fitted operators, raw ArcFace space) and
#: Sections VII-VIII (predictions).
OPERATOR_TABLE_II = pd.DataFrame(
    {"train": [57048, 56848, 16849], "test": [10667, 10397, 7239],
     "fit_cosine": [0.769, 0.647, 0.599], "r2": [0.585, 0.399, 0.338], "residual_fraction": [0.414, 0.600, 0.662],
     "b_u": [0.183, 0.219, 0.198], "rho_B": [0.894, 0.920, 0.854], "sigma_max_B": [10.1, 15.1, 7.81],
     "late_cascade_ratio": [0.893, 0.88, 0.79]},
    index=pd.Index(["FaceFusion", "BlendFace", "CanonSwap"], name="tool"),
)
#: *Toward Interpretable Privacy Guarantees*, Sections VI-VIII: other numbers quoted beside ours.
CASCADE = {
    "chains": 478, "target_identities": 500, "passes": 5,
    "chains_started": 500, "donor_photographs": 2_500,  # Section VIII-A: one chain per target, 2,500 donors
    "rho_A_facefusion": 1.12,
    "copy_donor_cosine": 0.654, "knn_cosine": 0.442,  # held-out cosine of the baselines (FaceFusion)
    "residual_target_abs_corr_max": 0.023,  # mean |corr(residual, target)| <= 0.023
    "floor_measured": 0.006, "floor_lyapunov": 0.0055,
    "first_pass_removed": 0.525, "later_passes_removed": 0.044,  # absolute similarity, a 12:1 asymmetry
    "spearman_pass1": 0.21, "spearman_survival": 0.11,  # persistent directions (weak support)
    "passes_to_excess_001": (18, 20),
    "auc_pass5": 0.709,
    "spectra_corpus_size": (1_000, 10_000),  # Figure 14: reliable spectra need 1e3-1e4 swaps
}
#: *Picture the Epsilon*, Table 7 (FaceFusion cascade, 50 difficult pairs, alpha = 0.05/500, cap
#: 2.338) and Table 8 (development-data descriptives per pass; GaussMech/MMD-TV 500 pairs, KDE-LR
#: 100, ROC 200).
CASCADE_TABLE_7 = pd.DataFrame(
    {"median_lb": [2.290, 2.076, 1.890, 1.784, 1.701], "min_lb": [1.683, 1.367, 1.085, 1.025, 0.671],
     "max_lb": [2.338, 2.338, 2.338, 2.338, 2.312], "positive": [50] * 5, "above_1": [50, 50, 50, 50, 46],
     "censored": [9, 4, 2, 2, 0]},
    index=pd.Index(range(1, 6), name="pass"),
)
CASCADE_TABLE_7_CAP = 2.338
CASCADE_TABLE_8 = pd.DataFrame(
    {"gaussmech": [39.5, 34.3, 32.1, 30.5, 29.3], "kde_alpha_0": [5408, 5211, 5166, 5080, 5034],
     "kde_alpha_0.01": [1083, 1051, 1039, 1028, 1025], "mmd_tv": [0.181, 0.153, 0.141, 0.131, 0.124],
     "oof_auc": [1.000, 0.999, 0.997, 0.994, 0.991], "exact_corner": [79, 43, 25, 6, 4],
     "raw_inf": [200] * 5, "mmd_reject": [100] * 5},
    index=pd.Index(range(1, 6), name="pass"),
)
#: *Toward Interpretable Privacy Guarantees*, Section VIII-C: the three-pass BlendFace and CanonSwap
#: cascades (about 1,000 chains per tool; median target-gallery cosine at passes 1-3), the third
#: test of prediction 5 besides FaceFusion.
CASCADE_THREE_PASS = pd.DataFrame({"BlendFace": [0.137, 0.104, 0.091], "CanonSwap": [0.124, 0.078, 0.062]},
                                  index=pd.Index([1, 2, 3], name="pass"))
#: *Toward Interpretable Privacy Guarantees*, Sections VIII-B and VIII-C: how the paper itself reads
#: each of its five predictions (numbered as in its Section VII-C) on its own cascades.
PAPER_READINGS = {1: "confirmed in rate", 2: "consistent, floor not yet reached", 3: "confirmed",
                  4: "weak support only", 5: "ordering confirmed"}
#: How the papers' rows are labelled beside ours (each table's caption names the paper and its table).
PAPER_LABELS = {"operator": "{tool} (paper)", "cascade": "FaceFusion (paper)", "audits": "FaceFusion (paper)"}


def _fits(studies: Mapping[tuple[str, str], Any]) -> list[tuple[str, str, str]]:
    """(variant, encoder, fit label) of every study, in the chapter's order."""
    return [(v, e, fit_label(v, ENCODER_LABEL[e])) for v, e in studies]


# -------------------------------------------------------------------------------------------------
# the corpora and the operator fit


def corpora_overview(manifest: Mapping[str, Any], variants: Sequence[str]) -> tuple[Any, dict[str, Any]]:
    """The corpora's design counts and their prose values.

    Parameters
    ----------
    manifest : mapping
        ``corpora_manifest.json`` (it describes the whole committed corpus, also in a smoke run).
    variants : sequence of str

    Returns
    -------
    design : pandas.io.formats.style.Styler
        ``corpus``, ``quantity``, ``value``: identities, chains, donors, lost and complete chains per
        variant, operator triplets and identities, photographs stored, ``make corpora`` wall time.
    values : dict
        ``n_chains``, ``n_targets``, ``n_donors``, ``n_train``, ``n_test`` (counts with thousands
        separators, as in the table), ``corpora_mb`` (MB), ``corpora_minutes``, ``n_disjoint_pairs``,
        ``lost_<variant>``, ``complete_<variant>``.
    """
    cas, opd = manifest["design"]["cascade"], manifest["design"]["operator"]
    wall = f"{manifest['run']['wall_seconds'] / 60:.1f}"
    rows = [("cascade", "target identities", cas["target_identities"]), ("cascade", "chains", cas["chains"]),
            ("cascade", "chains per identity (at most)", cas["chains_per_identity"]),
            ("cascade", "passes", cas["passes"]),
            ("cascade", "donor photographs (all distinct)", cas["donor_photographs"]),
            ("cascade", "donor slots", cas["donor_slots"]),
            ("cascade", "non-member identities", cas["nonmember_identities"]),
            *[("cascade", f"chains lost ({v})", cas["lost_chains"][v]) for v in variants],
            *[("cascade", f"complete chains ({v})", cas["complete_chains"][v]) for v in variants],
            ("operator", "train triplets per variant", opd["train_triplets"]),
            ("operator", "test triplets per variant", opd["test_triplets"]),
            ("operator", "train identities", opd["train_identities"]),
            ("operator", "test identities", opd["test_identities"]),
            ("both", "original photographs stored", manifest["design"]["originals"]["encoded_and_stored"]),
            ("both", "make corpora wall time (minutes, 2 cores)", wall)]
    design = pd.DataFrame(rows, columns=["corpus", "quantity", "value"])
    design["value"] = [x if isinstance(x, str) else f"{int(x):,}" for x in design["value"]]
    ff = OPERATOR_TABLE_II.loc["FaceFusion"]
    lost = CASCADE["chains_started"] - CASCADE["chains"]
    paper = {"target identities": CASCADE["target_identities"], "chains": CASCADE["chains_started"],
             "chains per identity (at most)": 1, "passes": CASCADE["passes"],
             "donor photographs (all distinct)": CASCADE["donor_photographs"],
             "donor slots": CASCADE["donor_photographs"], "train triplets per variant": int(ff["train"]),
             "test triplets per variant": int(ff["test"]),
             **{f"chains lost ({v})": f"{lost:,} (FaceFusion)" for v in variants},
             **{f"complete chains ({v})": f"{CASCADE['chains']:,} (FaceFusion)" for v in variants}}
    design["paper"] = [num(paper[q], "{:,.0f}") if q in paper else "n/a" for q in design["quantity"]]
    sizes_mb = sum(f["bytes"] for f in manifest["files"].values()) / 1e6
    values = {"n_chains": f"{cas['chains']:,}", "n_targets": f"{cas['target_identities']:,}",
              "n_donors": f"{cas['donor_photographs']:,}", "n_train": f"{opd['train_triplets']:,}",
              "n_test": f"{opd['test_triplets']:,}", "corpora_mb": f"{sizes_mb:.1f}", "corpora_minutes": wall,
              "n_disjoint_pairs": f"{cas['target_identities'] // 2:,}"}
    for v in variants:
        values[f"lost_{v}"] = f"{cas['lost_chains'][v]:,}"
        values[f"complete_{v}"] = f"{cas['complete_chains'][v]:,}"
    caption = ("The committed corpora (data/corpora/corpora_manifest.json) beside the paper's FaceFusion corpora "
               "(Section VIII-A and Table II; n/a: not reported). They differ by design: the paper swaps one photograph "
               f"of each of {CASCADE['target_identities']} identities, LFW has {cas['target_identities']} identities "
               f"with enough photographs for up to {cas['chains_per_identity']} chains each")
    return styled(design, group="corpus", headers={"value": "ours"}, nowrap=("paper",), caption=caption), values


_PREDICTOR = {"affine": "affine operator", "copy-donor": "copy the donor", "kNN": "kNN (k = 10)"}


def copy_baseline_sentence(copy_r2: pd.Series, dlib: bool) -> str:
    """The sentence on the copy-the-donor baseline: why it looks good under dlib (when dlib is fitted), and its R^2.

    Parameters
    ----------
    copy_r2 : pandas.Series
        Held-out R^2 of copying the donor, one per fit.
    dlib : bool
        Whether dlib is among the fitted encoders (its raw vectors share a large common offset).

    Examples
    --------
    >>> copy_baseline_sentence(pd.Series([-0.2, -0.1]), dlib=False)
    '$R^2$, which is measured around the mean, is negative for copying the donor in every fit.'
    """
    r2 = ("is negative for copying the donor in every fit" if (copy_r2 < 0).all()
          else f"is {span(copy_r2.min(), copy_r2.max())} for copying the donor")
    offset = ("Copying the donor does well under dlib only because raw dlib vectors share a large common offset, "
              "which any prediction gets right; $R^2$" if dlib else "$R^2$")
    return f"{offset}, which is measured around the mean, {r2}."


def operator_fit_tables(studies: Mapping[tuple[str, str], Any]) -> tuple[Any, Any, dict[str, Any]]:
    """Held-out quality against the baselines, and the fitted spectra beside the paper's Table II.

    Returns
    -------
    quality : pandas.io.formats.style.Styler
        ``fit``, ``predictor``, held-out mean cosine, R^2 and residual fraction; the paper's tools last.
    spectra : pandas.io.formats.style.Styler
        ``fit``, train triplets, ridge penalty, ``b_u``, ``rho(B)``, ``sigma_max(B)``, ``rho(A)``;
        the paper's Table II rows last.
    values : dict
    """
    rows = [{"fit": label, "predictor": _PREDICTOR.get(p, p), **q.to_dict()}
            for v, e, label in _fits(studies) for p, q in studies[(v, e)].quality.iterrows()]
    for tool, r in OPERATOR_TABLE_II.iterrows():
        name = PAPER_LABELS["operator"].format(tool=tool)
        rows.append({"fit": name, "predictor": _PREDICTOR["affine"], "mean_cosine": r["fit_cosine"], "r2": r["r2"],
                     "residual_fraction": r["residual_fraction"]})
        if tool == "FaceFusion":
            rows += [{"fit": name, "predictor": _PREDICTOR["copy-donor"], "mean_cosine": CASCADE["copy_donor_cosine"]},
                     {"fit": name, "predictor": _PREDICTOR["kNN"], "mean_cosine": CASCADE["knn_cosine"]}]
    quality = pd.DataFrame(rows, columns=["fit", "predictor", "mean_cosine", "r2", "residual_fraction"])
    spectra = pd.DataFrame([{"fit": label, "train": s.op.n_train, "alpha": s.op.alpha,
                             **{k: s.spectra[k] for k in ("b_u", "rho_B", "sigma_max_B", "rho_A")}}
                            for (v, e, label), s in zip(_fits(studies), studies.values())]
                           + [{"fit": PAPER_LABELS["operator"].format(tool=tool), "train": r["train"], "alpha": np.nan,
                               "b_u": r["b_u"], "rho_B": r["rho_B"], "sigma_max_B": r["sigma_max_B"],
                               "rho_A": CASCADE["rho_A_facefusion"] if tool == "FaceFusion" else np.nan}
                              for tool, r in OPERATOR_TABLE_II.iterrows()])
    aff = pd.concat({k: s.quality.loc["affine"] for k, s in studies.items()}, axis=1).T
    base = [pd.concat({k: s.quality.loc[b] for k, s in studies.items()}, axis=1).T for b in ("copy-donor", "kNN")]
    wins = all(((aff[c] > b[c]) if c != "residual_fraction" else (aff[c] < b[c])).all()
               for b in base for c in ("mean_cosine", "r2", "residual_fraction"))
    copy_r2 = base[0]["r2"].astype(float)
    values: dict[str, Any] = {
        "beats_phrase": "beats both baselines for every variant and encoder" if wins
        else "does not beat both baselines everywhere (see the table)",
        "r2_span": span(aff["r2"].min(), aff["r2"].max()),
        "copy_baseline_sentence": copy_baseline_sentence(
            copy_r2, dlib="dlib" in {e for _, e in studies})}
    for (v, e), s in studies.items():
        for k in ("rho_B", "b_u", "rho_A"):
            values[f"{k}_{v}_{e}"] = num(s.spectra[k])
        values[f"sigma_max_B_{v}_{e}"] = num(s.spectra["sigma_max_B"], SIGMA)
        for k in ("r2", "mean_cosine", "residual_fraction"):
            values[f"{k}_{v}_{e}"] = num(s.quality.loc["affine", k])
            values[f"{k}_copy_{v}_{e}"] = num(s.quality.loc["copy-donor", k])
            values[f"{k}_knn_{v}_{e}"] = num(s.quality.loc["kNN", k])
    headers = {"mean_cosine": "held-out mean cosine", "r2": "held-out R²", "residual_fraction": "residual fraction",
               "train": "train triplets", "alpha": "ridge penalty", **{k: LABEL[k] for k in LABEL}}
    quality_shown = styled(strings(quality), group="fit", headers=headers, nowrap=("predictor",),
                           caption="Held-out quality of the fit and two baselines; last: the paper's Table II "
                                   "and Section VI. They differ because the paper fits neural swappers in 512-D "
                                   "ArcFace on 17,000-57,000 swaps, ours a landmark swap in 128-D dlib and SFace")
    spectra_shown = styled(strings(spectra, {"train": "{:,.0f}", "alpha": PENALTY, "sigma_max_B": SIGMA}),
                           headers=headers, caption="The fitted operators beside the paper's Table II (which "
                                                    "reports no penalty). Ours differ by swapper, encoder and "
                                                    "corpus size; which of ours the data determine is tested below")
    return quality_shown, spectra_shown, values


def size_curve_table(studies: Mapping[tuple[str, str], Any]) -> tuple[Any, dict[str, Any], pd.DataFrame]:
    """The fitted spectra on nested subsets of the train triplets (the paper's Figure 14 analog).

    Returns
    -------
    table : pandas.io.formats.style.Styler
        Per fit and size: penalty and its position in the grid, ``rho(B)``, ``sigma_max(B)``, ``b_u``,
        held-out R^2.
    values : dict
        ``alpha_curve_*``, ``smax_curve_*``, ``rho_creep`` (the largest change of ``rho(B)`` between
        the two largest sizes) and ``creep_sentence`` (Markdown: settled or not, and in which direction).
    curve : pandas.DataFrame
        Tidy, the figure's data: ``fit``, ``train_triplets``, ``rho_B``, ``sigma_max_B``, ``b_u``,
        ``r2_test``, ``alpha``, ``alpha_edge``.
    """
    curve = pd.concat([s.size_curve.assign(fit=label) for (v, e, label), s in zip(_fits(studies), studies.values())],
                      ignore_index=True).rename(columns={"n_train": "train_triplets"})
    curve = curve[["fit", "train_triplets", "rho_B", "sigma_max_B", "b_u", "r2_test", "alpha", "alpha_edge"]]
    creep, values = [], {}
    for (v, e), st in studies.items():
        sc = st.size_curve.dropna(subset=["rho_B"])
        if len(sc) >= 2:
            creep.append(float(sc["rho_B"].iloc[-1] - sc["rho_B"].iloc[-2]))
        values[f"alpha_curve_{v}_{e}"] = ", ".join(num(a, PENALTY) for a in sc["alpha"])
        values[f"smax_curve_{v}_{e}"] = ", ".join(num(x, SIGMA) for x in sc["sigma_max_B"])
    largest = max((abs(c) for c in creep), default=float("nan"))
    values["rho_creep"] = num(largest)
    up = sum(c > 0 for c in creep)
    direction = (f"upwards in all {len(creep)} fits" if up == len(creep) else
                 f"upwards in {up} of {len(creep)} fits" if 2 * up > len(creep) else
                 f"upwards in only {up} of {len(creep)} fits")
    values["creep_sentence"] = (
        "No fit has two sizes to compare" if not creep else
        (f"Here they have not quite settled: $\\rho(B)$ still changes by up to {values['rho_creep']} between the two "
         if largest >= 0.01 else f"They have settled: $\\rho(B)$ changes by at most {values['rho_creep']} between the two ")
        + f"largest sizes ({direction}; at a given penalty, ridge shrinks $B$ less as data accumulate)")
    shown = strings(curve.drop(columns=["alpha_edge"]).assign(position=curve["alpha_edge"]),
                    {"train_triplets": "{:,.0f}", "alpha": PENALTY, "sigma_max_B": SIGMA})
    shown = shown[["fit", "train_triplets", "alpha", "position", "rho_B", "sigma_max_B", "b_u", "r2_test"]]
    table = styled(shown, group="fit", headers={"train_triplets": "train triplets", "alpha": "ridge penalty",
                                                "position": "penalty in its grid", "r2_test": "held-out R²",
                                                **LABEL},
                   caption="The fit on nested subsets of the train triplets (the paper's Figure 14 analog)")
    return table, values, curve


# -------------------------------------------------------------------------------------------------
# which numbers the data determine


def search_table(studies: Mapping[tuple[str, str], Any]) -> pd.DataFrame:
    """Each penalty search's record (:class:`epsaudit.grids.GridSearchRecord`) and its folds, one row
    per (variant, encoder)."""
    return pd.DataFrame({(v, ENCODER_LABEL[e]): {**s.op.search.as_row(), "validated": s.op.cv.validated,
                                                 "train per fold": s.op.cv.table["train"].mean(),
                                                 "excluded per fold": s.op.cv.table["excluded"].mean(),
                                                 "weak input directions": s.spectra["weak_directions"]}
                         for (v, e), s in studies.items()}).T.rename_axis(["variant", "encoder"])


def search_styler(search: pd.DataFrame) -> list[Any]:
    """:func:`search_table` for the page, as two tables: the chosen penalty (its position, the
    widenings, why the search stopped) and the grid with the one-SE range (the fold counts are in
    :func:`design_table`)."""
    fits = [fit_label(v, enc) for v, enc in search.index]
    choice = pd.DataFrame({"fit": fits, "chosen": [num(x, PENALTY) for x in search["chosen"]],
                           "position": search["edge"].to_numpy(), "widenings": [f"{int(x)}" for x in search["widenings"]],
                           "stopped": search["stopped"].to_numpy()})
    grid = pd.DataFrame({"fit": fits, "grid": [span(a, b, PENALTY) for a, b in zip(search["grid_low"], search["grid_high"])],
                         "one_se": [span(a, b, PENALTY) for a, b in zip(search["one_se_low"], search["one_se_high"])],
                         "one_se_edge": search["one_se_edge"].to_numpy()})
    headers = {"chosen": "chosen penalty", "position": "position in the final grid", "widenings": "grid widenings",
               "stopped": "search stopped", "grid": "final grid", "one_se": "one-SE range",
               "one_se_edge": "one-SE range reaches"}
    return [styled(choice, headers=headers, caption="The penalty searches (folds disjoint in both roles, widened grid)"),
            styled(grid, headers=headers, nowrap=("grid", "one_se"), caption="Their final grids and one-SE ranges")]


_DESIGN_COUNTS = ["validated", "train_per_fold", "excluded_per_fold", "shared_identities"]


def design_table(design_tables: Mapping[tuple[str, str], pd.DataFrame]) -> tuple[pd.DataFrame, str, list[Any]]:
    """The fold designs side by side (:data:`~epsaudit.studies.cascade.operator_study.CV_DESIGNS`).

    Returns
    -------
    designs : pandas.DataFrame
        Index (variant, encoder, design).
    held_out : str
        Markdown: what each design holds out, one item per distinct rule.
    tables : list of pandas.io.formats.style.Styler
        The designs' counts (one row per design when every fit has the same counts), and per fit the
        penalty each design chooses with the operator's numbers at that penalty (one column per design).
    """
    designs = pd.concat(design_tables, names=["variant", "encoder", "design"])
    rules = designs.reset_index().groupby("held_out", sort=False)["design"].unique()
    held_out = "\n".join(f"- {' and '.join(f'*{d}*' for d in names)}: held out = {rule}."
                         for rule, names in rules.items())
    flat = designs.reset_index()
    flat.insert(0, "fit", [fit_label(v, enc) for v, enc in zip(flat["variant"], flat["encoder"])])
    count_formats = {c: "{:,.0f}" for c in _DESIGN_COUNTS}
    headers = {"train_per_fold": "train triplets per fold", "excluded_per_fold": "excluded per fold",
               "shared_identities": "identities shared by a validation fold and its training part",
               "validated": "triplets ever validated", "alpha": "chosen penalty", "edge": "position in the grid",
               "one_se": "one-SE range", "r2": "held-out R²", **LABEL}
    counts = flat[["fit", "design", *_DESIGN_COUNTS]]
    same = counts.groupby("design", sort=False)[_DESIGN_COUNTS].nunique().le(1).all().all()
    if same:
        counts_shown = styled(strings(counts.drop_duplicates("design").drop(columns=["fit"]), count_formats),
                              headers=headers, nowrap=("design",), caption="What each fold design validates and shares (the same for "
                                                       "every variant and encoder; mean over the 5 folds)")
    else:
        counts_shown = styled(strings(counts, count_formats), group="fit", headers=headers,
                              caption="What each fold design validates and shares (mean over the 5 folds)")
    quantities = {"penalty": lambda r: num(r["alpha"], PENALTY), "position": lambda r: r["edge"],
                  "widenings": lambda r: num(r["widenings"], "{:.0f}"),
                  "one-SE range": lambda r: span(r["one_se_low"], r["one_se_high"], PENALTY),
                  LABEL["rho_B"]: lambda r: num(r["rho_B"]), LABEL["sigma_max_B"]: lambda r: num(r["sigma_max_B"], SIGMA),
                  LABEL["b_u"]: lambda r: num(r["b_u"]), LABEL["r2"]: lambda r: num(r["r2"]),
                  LABEL["mean_cosine"]: lambda r: num(r["mean_cosine"])}
    names = list(dict.fromkeys(flat["design"]))
    rows = []
    for fit, g in flat.groupby("fit", sort=False):
        by_design = {r["design"]: r for _, r in g.iterrows()}
        rows += [{"fit": fit, "quantity": q, **{d: f(by_design[d]) for d in names}} for q, f in quantities.items()]
    choice_shown = styled(pd.DataFrame(rows), group="fit", raw=("quantity",), nowrap=("quantity", *names),
                          caption="What each design chooses (the penalty, its position in the grid, the grid's "
                                  "widenings, the one-SE range) and the operator's numbers at that penalty")
    return designs, held_out, [counts_shown, choice_shown]


def _quantity_spec(quantity: str) -> str:
    return SIGMA if quantity == "sigma_max_B" else "{:.3f}"


def determination_table(studies: Mapping[tuple[str, str], Any]) -> tuple[pd.DataFrame, Any, str]:
    """Which quantities the data determine (range over the one-SE penalties), beside the paper's
    FaceFusion values (Table II).

    Returns
    -------
    det : pandas.DataFrame
        Index (variant, encoder, quantity); ``paper (FaceFusion)``, ``value``, ``low``, ``high``,
        ``relative_range``, ``determined``, ``note``.
    table : pandas.io.formats.style.Styler
        ``fit``, ``quantity``, the paper's value, ours, the one-SE range, its relative width, determined.
    notes : str
        Markdown: the notes of each fit (where the one-SE penalties reach a grid edge), one item each.
    """
    ff = OPERATOR_TABLE_II.loc["FaceFusion"]
    paper_ff = {"rho_B": ff["rho_B"], "sigma_max_B": ff["sigma_max_B"], "b_u": ff["b_u"],
                "rho_A": CASCADE["rho_A_facefusion"], "r2": ff["r2"], "mean_cosine": ff["fit_cosine"]}
    det = pd.concat({(v, ENCODER_LABEL[e]): s.determination for (v, e), s in studies.items()},
                    names=["variant", "encoder"])
    det.insert(0, "paper (FaceFusion)", [paper_ff[q] for q in det.index.get_level_values("quantity")])
    rows, notes = [], []
    for (v, enc), g in det.groupby(level=["variant", "encoder"], sort=False):
        label = fit_label(v, enc)
        for (_, _, q), r in g.iterrows():
            spec = _quantity_spec(q)
            rows.append({"fit": label, "quantity": LABEL[q], "paper": num(r["paper (FaceFusion)"], "{:.3g}"),
                         "ours": num(r["value"], spec), "range": span(r["low"], r["high"], spec),
                         "relative": num(r["relative_range"], "{:.1%}"), "determined": "yes" if r["determined"] else "no"})
        for note, h in g.groupby("note", sort=False):
            if note:
                which = "" if len(h) == len(g) else " (" + ", ".join(MATH[q] for q in h.index.get_level_values(2)) + ")"
                notes.append(f"- **{label}**{which}: {note}.")
    shown = pd.DataFrame(rows)
    table = styled(shown, group="fit", raw=("quantity",), nowrap=("range",),
                   headers={"paper": "paper", "ours": "ours", "range": "range", "relative": "relative range"},
                   caption=f"Which numbers the data determine: each number's range over the one-SE penalties "
                           f"and its relative width (at most {DETERMINED_REL_TOL:.0%}: determined), beside the paper's FaceFusion values (Table II); the paper "
                           "reports no range, and its values differ from ours by swapper, encoder and corpus size")
    return det, table, "\n".join(notes)


def _range_sentence(s: Any, variant: str, encoder: str) -> str:
    """How the fit's numbers move over its one-SE penalties, in words (Markdown)."""
    low, high = s.op.search.one_se_range
    d_ = s.determination
    if num(low, PENALTY) == num(high, PENALTY):
        return (f"For {encoder} `{variant}` the one-SE range is the chosen penalty alone, so no number moves "
                f"within it")
    parts = []
    for q, what in (("sigma_max_B", MATH["sigma_max_B"]), ("rho_B", MATH["rho_B"]), ("b_u", MATH["b_u"]),
                    ("r2", "the held-out $R^2$")):
        verb = "stays within" if bool(d_.loc[q, "determined"]) else "runs over"
        parts.append(f"{what} {verb} {span(d_.loc[q, 'low'], d_.loc[q, 'high'], _quantity_spec(q))}")
    return (f"Over the one-SE range of {encoder} `{variant}` ({span(low, high, PENALTY)}) " + ", ".join(parts[:-1])
            + f" and {parts[-1]}")


def _fit_values(studies: Mapping[tuple[str, str], Any], design_tables: Mapping[tuple[str, str], pd.DataFrame]
                ) -> dict[str, Any]:
    """Per-fit prose values: penalties, edges, one-SE ranges, determination ranges, the old design."""
    values: dict[str, Any] = {}
    for e in ENCODERS:  # the weak input directions are the photographs' own: one count per encoder
        found = [s for (_, enc), s in studies.items() if enc == e]
        if found:
            values[f"weak_{e}"] = f"{int(found[0].spectra['weak_directions']):,}"
    for (v, e), s in studies.items():
        rec, d_ = s.op.search, s.determination
        values[f"alpha_{v}_{e}"] = num(rec.chosen, PENALTY)
        values[f"edge_{v}_{e}"] = rec.edge
        values[f"one_se_{v}_{e}"] = span(*rec.one_se_range, PENALTY)
        values[f"range_{v}_{e}_sentence"] = _range_sentence(s, v, ENCODER_LABEL[e])
        for q in ("rho_B", "sigma_max_B", "b_u", "r2", "mean_cosine"):
            values[f"range_{q}_{v}_{e}"] = span(d_.loc[q, "low"], d_.loc[q, "high"], _quantity_spec(q))
        first = design_tables[(v, ENCODER_LABEL[e])].iloc[0]
        values[f"old_alpha_{v}_{e}"] = num(first["alpha"], PENALTY)
        values[f"old_edge_{v}_{e}"] = first["edge"]
        values[f"old_smax_{v}_{e}"] = num(first["sigma_max_B"], SIGMA)
        values[f"old_rho_{v}_{e}"] = num(first["rho_B"])
        values[f"old_shared_{v}_{e}"] = num(first["shared_identities"], "{:,.0f}")
        values[f"validated_{v}_{e}"] = f"{s.op.cv.validated:,}"
        values[f"ntrain_{v}_{e}"] = f"{s.op.n_train:,}"
        values[f"validated_share_{v}_{e}"] = f"{s.op.cv.validated / s.op.n_train:.0%}"
        values[f"train_share_{v}_{e}"] = f"{s.op.cv.table['train'].mean() / s.op.n_train:.0%}"
    return values


def _old_phrase(old: pd.Series) -> str:
    """What the earlier fold design and grid picked for one fit, in words (Markdown)."""
    old_smax = f"{MATH['sigma_max_B']} = {num(old['sigma_max_B'], SIGMA)}"
    if old["edge"] == "interior":
        return f"picked the interior penalty {num(old['alpha'], PENALTY)} ({old_smax})"
    return (f"picked the grid's {'smallest' if old['edge'] == 'lower' else 'largest'} penalty "
            f"({num(old['alpha'], PENALTY)}, at its {old['edge']} edge; {old_smax})")


def penalty_values(studies: Mapping[tuple[str, str], Any], search: pd.DataFrame, det: pd.DataFrame,
                   design_tables: Mapping[tuple[str, str], pd.DataFrame], variants: Sequence[str]) -> dict[str, Any]:
    """The prose values of the penalty section: per-fit numbers, edge status, what is determined
    (phrases with symbols are Markdown, for ``{glue:md}``)."""
    values = _fit_values(studies, design_tables)
    first = next(e for v, e in design_tables if v == variants[0])  # the first encoder of the run (a label)
    values["old_first_encoder"] = first
    values["old_first_phrase"] = _old_phrase(design_tables[(variants[0], first)].iloc[0])
    edges = search["edge"].value_counts()
    values["n_interior"] = int(edges.get("interior", 0))
    values["n_searches"] = len(search)
    values["edge_phrase"] = ("every chosen penalty is interior to its final grid" if edges.get("interior", 0) == len(search)
                             else "penalties at an edge (not determined): " + "; ".join(
                                 f"{fit_label(v, enc)} ({r['edge']}, {num(r['chosen'], PENALTY)})"
                                 for (v, enc), r in search.iterrows() if r["edge"] != "interior"))
    undetermined = det[~det["determined"]].reset_index()
    values["undetermined_phrase"] = "none" if undetermined.empty else "; ".join(
        f"{MATH[q]} ({', '.join(f'{enc} {v}' for v, enc in zip(g['variant'], g['encoder']))})"
        for q, g in undetermined.groupby("quantity", sort=False))
    determined_everywhere = [q for q in det.index.get_level_values("quantity").unique()
                             if det.xs(q, level="quantity")["determined"].all()]
    values["determined_phrase"] = ", ".join(MATH[q] for q in determined_everywhere) if determined_everywhere else "none"
    smax_open = undetermined[undetermined["quantity"] == "sigma_max_B"]
    values["smax_reading"] = (
        f"every {MATH['sigma_max_B']} here is determined by the data" if smax_open.empty else
        f"read {MATH['sigma_max_B']} of " + ", ".join(f"{enc} {v}" for v, enc in zip(smax_open["variant"], smax_open["encoder"]))
        + " as set by the penalty, not as a measurement to compare with the paper's 10.1")
    straddle = det[det["note"].str.contains("straddles 1")]
    values["straddle_sentence"] = (
        f"In no fit does the one-SE range of {MATH['rho_B']} reach 1, so that the cascade forgets the "
        f"target ({MATH['rho_B']} < 1) is determined everywhere." if straddle.empty else
        "For " + ", ".join(f"{enc} {v}" for (v, enc, _) in straddle.index) + f" the one-SE range of {MATH['rho_B']} "
        "reaches 1: whether the cascade forgets the target at all is not determined there.")
    levels = [q for q in ("b_u", "rho_B", "r2") if q not in determined_everywhere]
    values["levels_sentence"] = (
        "differ from FaceFusion's for the reasons listed at the end of the chapter (swapper, encoder, data), not "
        "because of the penalty" if not levels else
        "differ from FaceFusion's mainly for the reasons listed at the end of the chapter (swapper, encoder, data); "
        f"where {', '.join(MATH[q] for q in levels)} {'is' if len(levels) == 1 else 'are'} not determined, the "
        "penalty adds the range in the table")
    return values


# -------------------------------------------------------------------------------------------------
# the residual checks


def residual_table(studies: Mapping[tuple[str, str], Any]) -> tuple[list[Any], dict[str, Any]]:
    """The residual checks of every fit, for display (size, isotropy and Gaussianity; correlations
    with the inputs, beside the paper's bound), and their prose values and wording.

    Returns
    -------
    tables : list of pandas.io.formats.style.Styler
    values : dict
        ``resid_iso_min``, ``resid_corr_max``, ``resid_nongauss_max``, ``resid_same_span`` (formatted as
        in the tables), the phrases ``resid_*_phrase`` and the sentences ``resid_*_sentence`` (which say
        whether the paper found the same) whose wording depends on them.
    """
    resid = pd.concat({(v, ENCODER_LABEL[e]): pd.json_normalize(s.residuals, sep=" ").iloc[0]
                       for (v, e), s in studies.items()}, axis=1).T.rename_axis(["variant", "encoder"])
    resid.insert(0, "fit", [fit_label(v, enc) for v, enc in resid.index])
    top = int(resid["isotropy top"].iloc[0])
    shape = pd.DataFrame({
        "fit": resid["fit"], "n": [f"{int(x):,}" for x in resid["n"]],
        "bias": [num(x) for x in resid["bias"]], "same": [num(x) for x in resid["residual_to_same_person"]],
        "iso": [num(x, "{:.1f}") for x in resid["isotropy top_over_mean"]],
        "share": [num(x) for x in resid["isotropy top_share"]],
        "gauss": [f"{int(a)} of {int(b)}" for a, b in zip(resid["gaussianity non_gaussian"], resid["gaussianity tested"])]})
    corr = pd.DataFrame({"fit": resid["fit"], **{f"{who} {k}": [num(x) for x in resid[f"{who}_correlation {k}_abs"]]
                                                  for who in ("target", "donor") for k in ("mean", "max")}})
    corr.loc[len(corr)] = ["FaceFusion (paper)", f"≤ {CASCADE['residual_target_abs_corr_max']}", "n/a", "n/a", "n/a"]
    tables = [styled(shape, headers={"n": "test triplets", "bias": "bias", "same": "residual ÷ same-person distance",
                                     "iso": "top ÷ mean eigenvalue", "share": f"top-{top} variance share",
                                     "gauss": "non-Gaussian coordinates"},
                     caption="Size, isotropy and Gaussianity of the held-out residual (isotropic noise: top ÷ mean = 1)"),
              styled(corr, headers={"target mean": "|corr| with target: mean", "target max": "max",
                                    "donor mean": "|corr| with donor: mean", "donor max": "max"},
                     caption="Does the residual still carry the target (or the donor)? The paper reports only its "
                             "mean |corr| with the target, in 512-D ArcFace (n/a: not reported)")]
    iso = resid["isotropy top_over_mean"].astype(float).min()
    corr_max = resid["target_correlation mean_abs"].astype(float).max()
    nongauss = int(resid["gaussianity non_gaussian"].max())
    tested = int(resid["gaussianity tested"].iloc[0])
    same = resid["residual_to_same_person"].astype(float)
    values = {"resid_corr_max": num(corr_max), "resid_iso_min": num(iso, "{:.1f}"), "resid_nongauss_max": f"{nongauss}",
              "resid_tested": f"{tested}", "resid_same_span": span(same.min(), same.max()),
              "resid_iso_sentence": ("As in *Toward Interpretable Privacy Guarantees*, isotropy fails" if iso > 2 else
                                     "Unlike in *Toward Interpretable Privacy Guarantees*, where isotropy fails, it "
                                     "roughly holds here"),
              "resid_corr_phrase": ("the residual hardly correlates with the target" if corr_max < 0.1
                                    else "the residual still correlates with the target"),
              "resid_gauss_sentence": ("Unlike the paper's, our residual coordinates are close to Gaussian one at a "
                                       "time" if nongauss <= 0.05 * tested else
                                       "As in the paper, our residual coordinates are not Gaussian"),
              "resid_size_phrase": ("about as large as" if 0.7 <= same.min() and same.max() <= 1.3 else
                                    "smaller than" if same.max() < 0.7 else
                                    "larger than" if same.min() > 1.3 else "of the order of")}
    return tables, values
