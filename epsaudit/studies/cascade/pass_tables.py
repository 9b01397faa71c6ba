"""Chapter 4's tables of the cascade: predictions, the measured cascade (Table III analog), verdicts,
per-pass audits (Tables 7 and 8 analogs), the operational reading, and the exercises' numbers.

Each function takes what the experiment computed (:mod:`~epsaudit.studies.cascade`) and returns the
tables the chapter shows, ready to display (:func:`~.display.styled`; the papers' rows last, labelled
``FaceFusion (paper)``, each caption naming the paper's table), and a dict of the values its prose
quotes, formatted by the same rule as the table they come from, with the sentences whose wording
depends on the numbers.
"""

from __future__ import annotations

import html
import math
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ...bounds import bonferroni_alpha, certifiable_cap, required_test_size
from .display import fit_label, num, span, strings, styled
from .tables import (CASCADE, CASCADE_TABLE_7, CASCADE_TABLE_7_CAP, CASCADE_TABLE_8, CASCADE_TABLE_III_FACEFUSION,
                     CASCADE_THREE_PASS, ENCODER_KEY, ENCODER_LABEL, ENCODERS, OPERATOR_TABLE_II, PAPER_LABELS,
                     PAPER_READINGS)
from .verdicts import (FLOOR_TOL_CONFIRMED, passes_to_excess, prediction_verdicts,
                       verdict_first_pass_dominance, verdict_floor, verdict_persistent_directions,
                       verdict_sensitivity, verdict_tool_ordering, verdict_two_rate_decay)

__all__ = ["prediction_table", "expectation_table", "table_iii", "paper_verdicts", "verdict_tables",
           "verdict_overview", "per_pass_tables", "operational_table", "exercise_values", "paper_joint_cap"]

#: A cell that has no value by construction (e.g. the excess ratio of pass 0).
NONE = "–"


def _by_pass(frames: Mapping[tuple[str, str], pd.DataFrame], columns: Sequence[str]) -> pd.DataFrame:
    """Per-pass rows of every fit: ``fit``, ``pass`` and ``columns``, fits in the chapter's order."""
    parts = []
    for (v, e), f in frames.items():
        enc = ENCODER_LABEL.get(e, e)
        part = f.sort_values("pass", kind="stable")[["pass", *columns]].copy()
        part.insert(0, "fit", fit_label(v, enc))
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


def _paper(frame: pd.DataFrame, label: str) -> pd.DataFrame:
    """A paper's per-pass table as rows of ours: ``fit`` = ``label``, ``pass``."""
    out = frame.reset_index()
    out.insert(0, "fit", label)
    return out


# -------------------------------------------------------------------------------------------------
# predictions


_PRED = {"noiseless_leakage": "leakage", "noiseless_excess_ratio": "excess ratio",
         "monte_carlo_leakage": "leakage", "monte_carlo_nonmember": "non-member",
         "monte_carlo_excess_ratio": "excess ratio", "monte_carlo_auc": "MIA AUC",
         "carrier": "carrier cos(B<sup>k</sup>t<sub>0</sub>, t<sub>0</sub>)"}


def prediction_table(predicted: Mapping[tuple[str, str], pd.DataFrame]) -> list[Any]:
    """The predicted cascades per pass, for display: the noiseless rollout with the carrier, and the
    Monte Carlo rollout; the Lyapunov floor, one number per fit, is in :func:`expectation_table`."""
    ours = _by_pass(predicted, list(_PRED))
    pred = strings(ours, {"pass": "{:.0f}"}, missing=NONE)
    paper = _paper(CASCADE_TABLE_III_FACEFUSION[["predicted_monte_carlo"]], PAPER_LABELS["cascade"]).rename(
        columns={"predicted_monte_carlo": "monte_carlo_leakage"})
    mc_cols = ["fit", "pass", "monte_carlo_leakage", "monte_carlo_nonmember", "monte_carlo_excess_ratio",
               "monte_carlo_auc"]
    mc = strings(pd.concat([ours, paper], ignore_index=True)[mc_cols], {"pass": "{:.0f}"}, missing=NONE)
    mc.loc[len(ours):, ["monte_carlo_nonmember", "monte_carlo_excess_ratio", "monte_carlo_auc"]] = "n/a"
    mc.loc[mc.index[len(ours)], "monte_carlo_leakage"] = "n/a"  # the paper's pass 0 is the measured photograph
    return [styled(pred[["fit", "pass", "noiseless_leakage", "noiseless_excess_ratio", "carrier"]], group="fit",
                   headers=_PRED, caption="The cascade predicted from each fit alone: the noiseless rollout (donor at "
                                          "its mean, no noise) and the pure target channel (median centred cosines; "
                                          "the paper draws these for FaceFusion in its Figure 5 without a table)"),
            styled(mc, group="fit", headers=_PRED,
                   caption="The Monte Carlo rollout (median over replicates); last: the paper's FaceFusion rollout "
                           "(Table III, leakage only; n/a: not reported). They differ as the fits do: another "
                           "swapper, encoder and corpus (the fitted operators above)")]


def expectation_table(studies: Mapping[tuple[str, str], Any], predicted: Mapping[tuple[str, str], pd.DataFrame],
                      variants: Sequence[str]) -> tuple[Any, dict[str, Any]]:
    """What each fit predicts in words (first ratio, late ratio, floor) and the order of the variants
    by ``rho(B)`` per encoder (``order_<encoder>``)."""
    rows = [{"fit": fit_label(v, ENCODER_LABEL[e]), "b_u": studies[(v, e)].spectra["b_u"],
             "rho_B": studies[(v, e)].spectra["rho_B"], "floor": float(predicted[(v, e)]["lyapunov_floor"].iloc[0])}
            for v in variants for e in ENCODERS if (v, e) in studies]
    ff = OPERATOR_TABLE_II.loc["FaceFusion"]
    rows.append({"fit": PAPER_LABELS["operator"].format(tool="FaceFusion"), "b_u": ff["b_u"], "rho_B": ff["rho_B"],
                 "floor": CASCADE["floor_lyapunov"]})
    shown = styled(strings(pd.DataFrame(rows), {"floor": "{:.4f}"}),
                   headers={"b_u": "first excess ratio ≈ b<sub>u</sub>", "rho_B": "late excess ratio → ρ(B)",
                            "floor": "non-member score → Lyapunov floor"},
                   caption="What each fit predicts for the cascade; last: the paper's FaceFusion fit (Table II and "
                           "Section VII); ours differ by swapper (a landmark swap keeps the target's head, hair and "
                           "background), encoder and corpus")
    values = {f"order_{e}": " > ".join(sorted(variants, key=lambda v: -studies[(v, e)].spectra["rho_B"]))
              for e in ENCODERS if all((v, e) in studies for v in variants)}
    return shown, values


# -------------------------------------------------------------------------------------------------
# the measured cascade


def _cascade_phrases(measured: Mapping[tuple[str, str], pd.DataFrame]) -> dict[str, str]:
    """The sentences of "Reading the cascade" whose wording depends on the numbers."""
    ff_first = float(CASCADE_TABLE_III_FACEFUSION["excess_ratio"].iloc[1])
    firsts, shape_ok, keeps, aucs, floors = [], True, [], [], []
    for (v, e), m in measured.items():
        ratios = m.sort_values("pass")["excess_ratio"].dropna().astype(float).to_numpy()
        firsts.append(ratios[0])
        shape_ok &= bool(len(ratios) > 1 and ratios[0] < ratios[1:].min())
        aucs.append(float(m["auc"].iloc[-1]))
        floors.append(float(m["floor_pooled"].iloc[0]))
    for e in ENCODERS:
        if ("hull", e) in measured and ("inner", e) in measured:
            keeps.append(float(measured[("inner", e)]["leakage"].iloc[-1]) > float(measured[("hull", e)]["leakage"].iloc[-1]))
    return {
        "inner_keeps_phrase": ("`inner` keeps more" if keeps and all(keeps) else
                               "`inner` does not keep more everywhere"),
        "shape_sentence": ("The shape is the paper's: one large drop, then excess ratios that climb towards 1, so "
                           "every later pass removes far less than the first." if shape_ok else
                           "The shape is only partly the paper's: the first excess ratio is not below every later "
                           "one in every fit."),
        "first_ratio_phrase": ("far above" if min(firsts) > 2 * ff_first else
                               "above" if min(firsts) > ff_first else "not above"),
        "adversary_phrase": ("stays strong" if min(aucs) > 0.7 else "weakens" if min(aucs) > 0.6 else
                             "is close to chance"),
        "floor_phrase": ("centred cosines put strangers near zero" if max(map(abs, floors)) < 0.05 else
                         "the centring leaves strangers off zero"),
    }


def table_iii(measured: Mapping[tuple[str, str], pd.DataFrame], predicted: Mapping[tuple[str, str], pd.DataFrame]
              ) -> tuple[list[Any], dict[str, Any]]:
    """The measured cascade per pass beside the Monte Carlo prediction and the paper's FaceFusion
    cascade (Table III analog), as two tables (leakage; membership inference), and its prose values."""
    series = _by_pass(measured, ["chains", "leakage", "floor", "excess", "excess_ratio", "auc", "tpr_at_fpr_1pct",
                                 "tpr_at_fpr_0.1pct", "cmc_rank1", "norm_median"])
    series["predicted"] = _by_pass(predicted, ["monte_carlo_leakage"])["monte_carlo_leakage"].to_numpy()
    paper = _paper(CASCADE_TABLE_III_FACEFUSION, PAPER_LABELS["cascade"]).rename(
        columns={"measured": "leakage", "non_member": "floor", "mia_auc": "auc", "predicted_monte_carlo": "predicted"})
    paper["chains"] = CASCADE["chains"]
    paper["excess"] = paper["leakage"] - CASCADE["floor_measured"]  # Table III: excess above the floor 0.006
    both = pd.concat([series, paper], ignore_index=True)
    formats = {"pass": "{:.0f}", "chains": "{:,.0f}"}
    leak = strings(both[["fit", "pass", "chains", "leakage", "predicted", "floor", "excess", "excess_ratio"]], formats)
    leak.loc[both["pass"].eq(0), ["excess_ratio"]] = NONE
    mia = strings(both[["fit", "pass", "auc", "tpr_at_fpr_1pct", "tpr_at_fpr_0.1pct", "cmc_rank1", "norm_median"]],
                  formats)
    mia.loc[both["pass"].eq(0) & both["fit"].eq(PAPER_LABELS["cascade"]), "auc"] = NONE
    tables = [styled(leak, group="fit", headers={"predicted": "predicted (Monte Carlo)", "floor": "non-member",
                                                 "excess_ratio": "excess ratio"},
                     caption="The measured cascade: leakage per pass (last: Table III of Toward Interpretable "
                             "Privacy Guarantees, 478 FaceFusion chains; its excess is taken above its floor "
                             f"{CASCADE['floor_measured']}). They differ because a landmark swap leaves the target's "
                             "head shape, hair and background, and ours are centred 128-D dlib and SFace cosines, "
                             "the paper's raw 512-D ArcFace ones"),
              styled(mia, group="fit", headers={"auc": "MIA AUC", "tpr_at_fpr_1pct": "TPR at FPR ≤ 1%",
                                                "tpr_at_fpr_0.1pct": "TPR at FPR ≤ 0.1%", "cmc_rank1": "CMC rank-1",
                                                "norm_median": "median norm"},
                     caption="The measured cascade: the membership adversary per pass (last: the paper's Table III, "
                             "which reports the AUC only)")]
    values: dict[str, Any] = {}
    for (v, e), m in measured.items():
        m = m.set_index("pass")
        for k in m.index:
            for col, key in (("leakage", "leak"), ("excess_ratio", "ratio"), ("auc", "auc"), ("tpr_at_fpr_1pct", "tpr1"),
                             ("cmc_rank1", "rank1")):
                value = m.loc[k, col]
                if pd.notna(value):
                    values[f"{key}{k}_{v}_{e}"] = float(value)
        values[f"floor_{v}_{e}"] = float(m["floor_pooled"].iloc[0])
        values[f"chains_{v}_{e}"] = int(m["chains"].iloc[0])
    first_ratios = [float(m["excess_ratio"].iloc[1]) for m in measured.values()]
    values["first_ratio_span"] = span(min(first_ratios), max(first_ratios))
    values.update(_cascade_phrases(measured))
    return tables, values


# -------------------------------------------------------------------------------------------------
# verdicts


def _html(text: str) -> str:
    """A verdict's text with symbols for the page (HTML)."""
    out = html.escape(str(text), quote=False)
    for old, new in (("rho(B)", "ρ(B)"), ("b_u", "b<sub>u</sub>"), (" ~ ", " ≈ "), ("-&gt;", "→"), ("&lt;=", "≤"),
                     ("&gt;=", "≥"), ("E_K/E_1", "E<sub>K</sub>/E<sub>1</sub>"), ("r1", "r<sub>1</sub>")):
        out = out.replace(old, new)
    return out


def _floor_sentence(measured: Mapping[tuple[str, str], pd.DataFrame],
                    predicted: Mapping[tuple[str, str], pd.DataFrame]) -> str:
    """How weak the floor check is here, in words."""
    e0 = float(np.median([float(m.sort_values("pass")["excess"].iloc[0]) for m in measured.values()]))
    floors = [abs(float(m["floor_pooled"].iloc[0])) for m in measured.values()]
    floors += [abs(float(p["lyapunov_floor"].iloc[0])) for p in predicted.values()]
    near = ("within a few thousandths of zero" if max(floors) < 0.01 else f"within {max(floors):.2f} of zero")
    return (f"its tolerance is {FLOOR_TOL_CONFIRMED:.0%} of the pass-0 excess (about {FLOOR_TOL_CONFIRMED * e0:.2f} "
            f"here), so any floor near zero passes, and both the predicted and the measured floors are {near}")


def _paper_cascade() -> pd.DataFrame:
    """The paper's FaceFusion cascade (Table III) as a measured series of ours: ``pass``, ``leakage``,
    ``excess`` (above the paper's floor 0.006), ``excess_ratio``, ``floor_pooled``, ``auc``."""
    t3 = CASCADE_TABLE_III_FACEFUSION
    floor = CASCADE["floor_measured"]
    return pd.DataFrame({"pass": t3.index.to_numpy(), "leakage": t3["measured"].to_numpy(),
                         "excess": (t3["measured"] - floor).to_numpy(), "excess_ratio": t3["excess_ratio"].to_numpy(),
                         "floor_pooled": floor, "auc": t3["mia_auc"].to_numpy()})


def paper_verdicts() -> pd.DataFrame:
    """The five predictions judged by the chapter's rules on the paper's own numbers.

    *Toward Interpretable Privacy Guarantees* tests its predictions on a five-pass FaceFusion cascade
    (Table III; fitted ``b_u``, ``rho(B)`` from Table II; floors and Spearman correlations from
    Section VIII-B) and on three-pass BlendFace and CanonSwap cascades (prediction 5, Section VIII-C). The same
    functions that judge our cascade (:mod:`~epsaudit.studies.cascade.verdicts`) are applied to
    those numbers: the excess is the leakage above the paper's floor 0.006, the BlendFace and
    CanonSwap tails are their leakage ratios (the paper reports no floor for them), and the
    persistent-direction correlations have no reported p-value, so they count as not significant.

    Returns
    -------
    pandas.DataFrame
        One row per prediction: ``prediction``, ``variant``, ``expected``, ``measured``, ``verdict``,
        ``rule`` (:data:`~epsaudit.studies.cascade.verdicts.VERDICT_COLUMNS`) and ``paper_reading``
        (:data:`~epsaudit.studies.cascade.tables.PAPER_READINGS`).

    References
    ----------
    *Toward Interpretable Privacy Guarantees in Face-Swapping Anonymization*, Sections VII-C,
    VIII-B and VIII-C, Tables II and III.

    Examples
    --------
    >>> paper_verdicts()[["prediction", "verdict"]].to_dict("list")["verdict"]
    ['confirmed', 'confirmed', 'confirmed', 'not confirmed', 'confirmed']
    """
    ff = _paper_cascade()
    spectra = {tool: {"rho_B": r["rho_B"], "b_u": r["b_u"]} for tool, r in OPERATOR_TABLE_II.iterrows()}
    persistent = {"rho_pass1": CASCADE["spearman_pass1"], "p_pass1": None,
                  "rho_survival": CASCADE["spearman_survival"], "p_survival": None, "n": CASCADE["chains"]}
    three = {"FaceFusion": ff[ff["pass"] <= 3]}
    for tool, leak in CASCADE_THREE_PASS.items():
        lk = leak.to_numpy(float)
        three[tool] = pd.DataFrame({"pass": [0, *leak.index], "excess": [np.nan, *lk],
                                    "excess_ratio": [np.nan, np.nan, *(lk[1:] / lk[:-1])]})
    rows = [verdict_two_rate_decay(ff, spectra["FaceFusion"], "FaceFusion"),
            verdict_floor(ff, CASCADE["floor_lyapunov"], "FaceFusion"),
            verdict_first_pass_dominance(ff, "FaceFusion"),
            verdict_persistent_directions(persistent, "FaceFusion"),
            verdict_tool_ordering(three, spectra)]
    out = pd.DataFrame(rows)
    out["measured"] = out["measured"].str.replace("(p NA)", "(p not reported)", regex=False)
    out["paper_reading"] = [PAPER_READINGS[int(p.split()[0])] for p in out["prediction"]]
    return out


def _check_tables(robust: pd.DataFrame) -> list[Any]:
    """Prediction 1's checks over the one-SE penalties, one table per check (its tolerance in the caption)."""
    tables = []
    for check, g in robust.groupby("check", sort=True):
        tol = float(g["tolerance"].iloc[0])
        frame = pd.DataFrame({
            "fit": [fit_label(v, enc) for v, enc in zip(g["variant"], g["encoder"])],
            "measured": [num(x) for x in g["measured"]],
            "fitted": [span(a, b) for a, b in zip(g["low"], g["high"])],
            "distance": [span(a, b) for a, b in zip(g["distance_min"], g["distance_max"])],
            "outcome": g["outcome"].to_numpy()})
        tables.append(styled(frame, nowrap=("measured", "fitted", "distance", "outcome"), caption_html=True,
                             headers={"measured": "measured ratio", "fitted": "fitted over the one-SE penalties",
                                      "distance": "distance"},
                             caption=f"<b>Prediction 1, check {_html(check)}</b> at every penalty the "
                                     f"cross-validation cannot tell apart (tolerance {tol:.2f})"))
    return tables


def verdict_tables(measured: Mapping[tuple[str, str], pd.DataFrame], predicted: Mapping[tuple[str, str], pd.DataFrame],
                   studies: Mapping[tuple[str, str], Any], persistent: Mapping[tuple[str, str], dict],
                   variants: Sequence[str]) -> tuple[list[Any], list[Any], dict[str, Any]]:
    """One verdict per prediction, variant and encoder, the rules, the paper's own numbers judged by
    the same rules (:func:`paper_verdicts`), and prediction 1's checks over the one-SE penalties
    (:func:`~epsaudit.studies.cascade.verdicts.verdict_sensitivity`), for display.

    Returns
    -------
    tables : list of pandas.io.formats.style.Styler
        One table per prediction (``fit``, ``expected``, ``measured``, ``verdict``; the rule in its
        caption; last row the paper's).
    checks : list of pandas.io.formats.style.Styler
        Prediction 1's checks (a) and (b) over the one-SE range, one table each.
    values : dict
        Counts of verdicts (``n_confirmed``, ``n_partly``, ``n_not_confirmed``, ``n_verdicts``), one
        ``verdict<k>_<variant>_<encoder>`` per verdict, ``n_open_checks``, ``n_checks`` and the sentences
        ``open_checks_phrase``, ``floor_sentence``.

    References
    ----------
    *Toward Interpretable Privacy Guarantees in Face-Swapping Anonymization*, Sections VII-C and VIII-B.
    """
    encoders = [e for e in ENCODERS if all((v, e) in studies for v in variants)]

    def per(mapping: Mapping, e: str) -> dict:
        return {v: mapping[(v, e)] for v in variants}

    verdicts = pd.concat({ENCODER_LABEL[e]: prediction_verdicts(
        per(measured, e), per(predicted, e), {v: studies[(v, e)].spectra for v in variants}, per(persistent, e))
        for e in encoders}, names=["encoder"]).droplevel(1).reset_index()
    counts = verdicts["verdict"].value_counts()
    values: dict[str, Any] = {f"n_{key.replace(' ', '_')}": int(counts.get(key, 0))
                              for key in ("confirmed", "partly", "not confirmed")}
    values["n_verdicts"] = len(verdicts)
    for _, r in verdicts.iterrows():
        values[f"verdict{r['prediction'].split()[0]}_{r['variant'].replace(', ', '_')}_{r['encoder']}"] = r["verdict"]
    robust = pd.concat({ENCODER_LABEL[e]: verdict_sensitivity(per(measured, e),
                                                              {v: studies[(v, e)].determination for v in variants})
                        for e in encoders}, names=["encoder"]).droplevel(1).reset_index()
    open_checks = robust[robust["outcome"] == "depends on the penalty"]
    values["n_open_checks"] = len(open_checks)
    values["n_checks"] = len(robust)
    values["open_checks_phrase"] = (
        "every check comes out the same at every penalty the cross-validation cannot tell apart, so the data "
        "decide these verdicts" if open_checks.empty else
        f"{len(open_checks)} of the {len(robust)} checks come out differently at penalties the cross-validation "
        "cannot tell apart (" + "; ".join(f"{r['encoder']} {r['variant']} {r['check'].split()[0]}"
                                          for _, r in open_checks.iterrows())
        + "); for those the data do not decide the verdict, the penalty does")
    values["floor_sentence"] = _floor_sentence(measured, predicted)
    order = {v: k for k, v in enumerate(verdicts["variant"].drop_duplicates())}
    shown = verdicts.assign(fit=[f"{v.replace(', ', ' vs ')}, {enc}" for v, enc in zip(verdicts["variant"],
                                                                                      verdicts["encoder"])],
                            _e=[encoders.index(ENCODER_KEY[enc]) for enc in verdicts["encoder"]],
                            _v=verdicts["variant"].map(order)).sort_values(["_v", "_e"], kind="stable")
    paper = paper_verdicts().set_index("prediction")
    tables = []
    for prediction, g in sorted(shown.groupby("prediction", sort=False), key=lambda kv: int(kv[0].split()[0])):
        number, name = prediction.split(" ", 1)
        ref = paper.loc[prediction]
        label = "3 tools (paper)" if int(number) == 5 else PAPER_LABELS["cascade"]
        frame = pd.DataFrame({
            "fit": [*g["fit"], label],
            "expected": [_html(x) for x in [*g["expected"], ref["expected"]]],
            "measured": [_html(x) for x in [*g["measured"], ref["measured"]]],
            "verdict": [html.escape(v).replace(" ", "&nbsp;") for v in [*g["verdict"], ref["verdict"]]]})
        frame.loc[len(frame) - 1, "verdict"] += f"<br><i>paper: {html.escape(ref['paper_reading'])}</i>"
        tables.append(styled(frame, raw=("expected", "measured", "verdict"), caption_html=True,
                             caption=f"<b>Prediction {number}, {html.escape(name)}.</b> Rule: {_html(g['rule'].iloc[0])}. "
                                     "Last row: the paper's own numbers judged by the same rule, and in italics "
                                     "the paper's reading (Sections VIII-B and VIII-C)"))
    robust = robust.assign(_v=robust["variant"].map(order), _e=[encoders.index(ENCODER_KEY[enc]) for enc in robust["encoder"]])
    robust = robust.sort_values(["check", "_v", "_e"], kind="stable")
    return tables, _check_tables(robust), values


def verdict_overview(values: Mapping[str, Any], variants: Sequence[str], encoders: Sequence[str]):
    """Every verdict at a glance: one row per prediction, one column per fit, and the paper's own.

    Parameters
    ----------
    values : mapping
        :func:`verdict_tables`'s values (keys ``verdict<k>_<variant>_<encoder label>``; prediction 5,
        the tool ordering, judges both variants of an encoder at once).
    variants, encoders : sequence of str
        The run's variants and encoders (``"dlib"``, ``"sface"``).

    Returns
    -------
    Styler

    Examples
    --------
    >>> v = {"verdict1_hull_dlib": "confirmed", "verdict5_hull_inner_dlib": "partly"}
    >>> "confirmed" in verdict_overview(v, ["hull"], ["dlib"]).to_html()
    True
    """
    paper = paper_verdicts()
    rows = []
    for _, ref in paper.iterrows():
        number, name = ref["prediction"].split(" ", 1)
        row = {"prediction": f"{number}. {name}"}
        for e in encoders:
            label = ENCODER_LABEL.get(e, e)
            joint = values.get(f"verdict{number}_{'_'.join(variants)}_{label}")
            for v in variants:
                row[fit_label(v, label)] = values.get(f"verdict{number}_{v}_{label}", joint) or NONE
        row[PAPER_LABELS["cascade"]] = ref["verdict"]
        rows.append(row)
    frame = pd.DataFrame(rows)
    return styled(frame, caption="Every prediction's verdict by fit (prediction 5 compares the two variants of an "
                                 "encoder, so it has one verdict per encoder), and the paper's own numbers judged by "
                                 "the same rules (last column); the rules and numbers are in the tables below")


# -------------------------------------------------------------------------------------------------
# per-pass audits


def _of(count: Any, total: Any) -> str:
    return "n/a" if pd.isna(count) or pd.isna(total) else f"{int(count):,} of {int(total):,}"


#: The paper's Table 7 family (50 pairs x 5 passes) and test rows per identity (100 chains).
PAPER_TABLE7_FAMILY, PAPER_TABLE7_ROWS = 250, 100


def paper_joint_cap(confidence: float = 0.95, delta: float = 1e-5) -> float:
    """The cap of the paper's Table 7 setting (100 test rows per identity, 250 certificates at 95%) under
    the joint bound; under its own Clopper-Pearson bound it is 2.338 (:data:`CASCADE_TABLE_7_CAP`).

    Examples
    --------
    >>> round(float(certifiable_cap(100, 100, 0.05 / 250, 1e-5, bound="clopper-pearson")), 3)
    2.338
    """
    alpha = bonferroni_alpha(PAPER_TABLE7_FAMILY, confidence)
    return float(certifiable_cap(PAPER_TABLE7_ROWS, PAPER_TABLE7_ROWS, alpha, delta, bound="joint"))


def _bound_values(t7: pd.DataFrame, tag: str) -> dict[str, Any]:
    """Prose values of one bound's certificates: how many, positive, median, largest, cap, at the cap."""
    total = int(t7["certificates"].sum())
    if total == 0:
        return {f"t7{tag}_{k}": "n/a" for k in ("positive", "median", "max", "cap_max", "censored")} | {
            f"t7{tag}_total": "0"}
    # the median over all pair-pass bounds is not stored; the median of the per-pass medians stands in
    return {f"t7{tag}_positive": f"{int(t7['positive'].sum()):,}", f"t7{tag}_total": f"{total:,}",
            f"t7{tag}_median": num(t7["median_bound"].astype(float).median()),
            f"t7{tag}_max": num(t7["max_bound"].astype(float).max()),
            f"t7{tag}_cap_max": num(t7["cap_max"].astype(float).max()),
            f"t7{tag}_censored": f"{int(t7['censored'].sum()):,}"}


def _audit_values(t8: pd.DataFrame, t7: pd.DataFrame, audit: Mapping[str, Any], families: int) -> dict[str, Any]:
    """The per-pass section's prose values and the sentences that depend on them (``t7_*``: the paper's
    Clopper-Pearson bound, ``t7j_*``: the joint bound)."""
    values: dict[str, Any] = {name: f"{audit[key]:,}" for key, name in (
        ("pairs", "audit_pairs"), ("kde_pairs", "audit_kde"), ("roc_pairs", "audit_roc"),
        ("permutations", "audit_perm"), ("certificates", "audit_certs"))}
    gm1, gm5 = float(t8[t8["pass"] == 1]["gaussmech"].median()), float(t8[t8["pass"] == 5]["gaussmech"].median())
    cp, joint = t7[t7["bound"] == "clopper-pearson"], t7[t7["bound"] == "joint"]
    total, positive = int(cp["certificates"].sum()), int(cp["positive"].sum())
    alpha = float(t7["alpha"].iloc[0]) if len(t7) else float("nan")
    cap = cp["cap_max"].astype(float).max() if total else float("nan")
    values.update(_bound_values(cp, ""))
    values.update(_bound_values(joint, "j"))
    values.update({
        "t7_ntest": span(t7["n_test_min"].astype(float).min(), t7["n_test_max"].astype(float).max(), "{:.0f}")
        if total else "n/a", "t7_alpha": num(alpha, "{:.1e}"), "t7_alpha_side": num(alpha / 2, "{:.1e}"),
        "t7_families": f"{families}", "t7_family": f"{int(audit['certificates']) * 5:,}",
        "t7_paper_cap": num(CASCADE_TABLE_7_CAP), "t7_paper_joint_cap": num(paper_joint_cap()),
        "t8_gm_first": num(gm1, "{:.1f}"), "t8_gm_last": num(gm5, "{:.1f}"),
        "t8_auc_last": num(t8[t8["pass"] == 5]["oof_auc"].median()),
        "t8_inf_min": f"{int(t8['raw_infinite'].min())}", "t8_roc_pairs": f"{int(t8['roc_pairs'].max())}",
        "t8_mmd_tested": f"{int(t8['mmd_tested'].max()):,}",
        "t8_change_phrase": "change little" if gm5 >= 0.75 * gm1 else "keep falling"})
    if total == 0:
        values["t7_sentence"] = (
            "This run certified no pair: its profile's slice of the corpora leaves too few chains per identity to "
            "split them into development and test rows (the book's full profile certifies pairs at every pass).")
    else:
        limit = (" so these chains, however separable, cannot certify a large $\\varepsilon$: up to 30 photographs "
                 "per identity is what limits the certificate, not the privacy of the swap." if cap < 1 else ".")
        values["t7_sentence"] = (
            f"With the paper's bound, {positive:,} of the {total:,} pair-pass bounds are positive ({families} separate "
            f"families, one per variant and encoder, each of {values['t7_family']} bounds holding together at 95%; "
            f"the families are not jointly corrected). With {values['t7_ntest']} test rows per identity and "
            f"$\\alpha$ = {values['t7_alpha_side']} per one-sided bound, no bound can exceed {values['t7_cap_max']} "
            f"(the cap of a pair with zero test errors; *Picture the Epsilon*: {CASCADE_TABLE_7_CAP} with its larger "
            "test sets)," + limit)
    return values


def per_pass_tables(table8: Mapping[tuple[str, str], pd.DataFrame], table7: Mapping[tuple[str, str], pd.DataFrame],
                    audit: Mapping[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """The per-pass audits beside *Picture the Epsilon*'s FaceFusion cascade (Table 8 and Table 7
    analogs), as four tables (descriptive values; their counts; certificates per pass; what bounds
    them), and their prose values.

    Parameters
    ----------
    table8, table7 : mapping (variant, encoder label) -> DataFrame
        :func:`~epsaudit.studies.cascade.scores.per_pass_audits`.
    audit : mapping
        The profile's audit sizes (``pairs``, ``kde_pairs``, ``roc_pairs``, ``permutations``,
        ``certificates``).
    """
    t8 = _by_pass(table8, [c for c in next(iter(table8.values())).columns if c not in ("pass", "seconds")])
    t7 = _by_pass(table7, [c for c in next(iter(table7.values())).columns if c != "pass"])
    paper8 = _paper(CASCADE_TABLE_8, PAPER_LABELS["audits"]).rename(
        columns={"kde_alpha_0": "kde_lr_0", "kde_alpha_0.01": "kde_lr_0.01", "exact_corner": "exact_corners",
                 "raw_inf": "raw_infinite", "mmd_reject": "mmd_rejections"}).assign(roc_pairs=200, mmd_tested=100)
    both8 = pd.concat([t8, paper8], ignore_index=True)
    desc = strings(both8[["fit", "pass", "gaussmech", "mmd_tv", "kde_lr_0", "kde_lr_0.01", "oof_auc"]],
                   {"pass": "{:.0f}", "gaussmech": "{:.1f}", "kde_lr_0": "{:,.0f}", "kde_lr_0.01": "{:,.0f}"})
    counts = pd.DataFrame({"fit": both8["fit"], "pass": [f"{int(p)}" for p in both8["pass"]],
                           "identities": [num(x, "{:,.0f}") for x in both8["identities"]],
                           "rows": [num(x, "{:,.0f}") for x in both8["rows"]],
                           "corners": [_of(a, b) for a, b in zip(both8["exact_corners"], both8["roc_pairs"])],
                           "infinite": [_of(a, b) for a, b in zip(both8["raw_infinite"], both8["roc_pairs"])],
                           "mmd": [_of(a, b) for a, b in zip(both8["mmd_rejections"], both8["mmd_tested"])]})
    cp7, joint7 = t7[t7["bound"] == "clopper-pearson"], t7[t7["bound"] == "joint"]
    paper7 = _paper(CASCADE_TABLE_7, PAPER_LABELS["audits"]).rename(
        columns={"median_lb": "median_bound", "min_lb": "min_bound", "max_lb": "max_bound"}).assign(certificates=50)
    both7 = pd.concat([cp7.reset_index(drop=True), paper7], ignore_index=True)
    certs = strings(both7[["fit", "pass", "positive", "above_1", "median_bound", "censored"]],
                    {c: "{:,.0f}" for c in ("pass", "positive", "above_1", "censored")}, missing=NONE)
    certs.insert(5, "range", [span(a, b) if pd.notna(a) else NONE for a, b in zip(both7["min_bound"], both7["max_bound"])])
    j = joint7.reset_index(drop=True)
    joint_cols = pd.DataFrame({"joint median": [num(v) if pd.notna(v) else NONE for v in j["median_bound"]],
                               "joint at cap": [f"{int(v):,}" for v in j["censored"]]})
    joint_cols = pd.concat([joint_cols, pd.DataFrame({"joint median": [NONE] * len(paper7),
                                                      "joint at cap": [NONE] * len(paper7)})], ignore_index=True)
    certs = pd.concat([certs.reset_index(drop=True), joint_cols], axis=1)
    limits = pd.DataFrame([{"fit": fit, "tests": span(g["n_test_min"].astype(float).min(),
                                                      g["n_test_max"].astype(float).max(), "{:.0f}"),
                            "family": f"{int(g['family_size'].iloc[0]):,}",
                            "alpha": num(g["alpha"].iloc[0], "{:.1e}"),
                            "cap": span(g["cap_min"].astype(float).min(), g["cap_max"].astype(float).max()),
                            "cap_joint": span(*(lambda h: (h["cap_min"].astype(float).min(),
                                                           h["cap_max"].astype(float).max()))(
                                joint7[joint7["fit"] == fit]))}
                           for fit, g in cp7.groupby("fit", sort=False)]
                          + [{"fit": PAPER_LABELS["audits"], "tests": f"{PAPER_TABLE7_ROWS}",
                              "family": f"{PAPER_TABLE7_FAMILY}", "alpha": num(0.05 / PAPER_TABLE7_FAMILY, "{:.1e}"),
                              "cap": num(CASCADE_TABLE_7_CAP), "cap_joint": num(paper_joint_cap())}])
    limits = limits.replace({"tests": {"n/a–n/a": "n/a"}, "cap": {"n/a–n/a": "n/a"}, "cap_joint": {"n/a–n/a": "n/a"}})
    paper_note = ("last: Table 8 of Picture the Epsilon, FaceFusion chains in 512-D ArcFace on development rows "
                  "only; the values differ with swapper, encoder and rows")
    tables = [
        styled(desc, group="fit", headers={"gaussmech": "GaussMech", "mmd_tv": "MMD-TV", "kde_lr_0": "KDE-LR (α = 0)",
                                           "kde_lr_0.01": "KDE-LR (α = 0.01)", "oof_auc": "out-of-fold ROC AUC"},
               caption=f"Descriptive routes per pass, medians over pairs ({paper_note})"),
        styled(counts, group="fit", nowrap=("corners", "infinite", "mmd"),
               headers={"rows": "chains (rows)", "corners": "exact ROC corners",
                                             "infinite": "raw ROC +∞", "mmd": "MMD rejections at 0.05"},
               caption=f"What the descriptive routes counted ({paper_note})"),
        styled(certs, group="fit", nowrap=("range",),
               headers={"positive": "> 0", "above_1": "> 1", "median_bound": "median", "censored": "at cap",
                        "joint median": "joint median", "joint at cap": "joint at cap"},
               caption=f"Reserved-test certificates per pass ({int(cp7['certificates'].max()) if len(cp7) else 0} "
                       "pairs each) with the paper's Clopper–Pearson bound (bounds above 0 and 1, median, range, how "
                       "many sit at their cap) and, beside them, the joint bound's median and count at the cap "
                       "(last: Table 7 of Picture the Epsilon, 50 pairs per pass, whose 100 test rows per identity "
                       "allow larger bounds: the next table)"),
        styled(limits, headers={"tests": "test rows per identity", "family": "certificates in the family",
                                "alpha": "α per certificate", "cap": "cap, Clopper–Pearson",
                                "cap_joint": "cap, joint"},
               caption="What bounds the certificates: test size and family (one family per variant and encoder); "
                       "the paper's bound splits α over two one-sided bounds, the joint bound spends it on one test")]
    return tables, _audit_values(t8, t7, audit, len(table7))


# -------------------------------------------------------------------------------------------------
# the operational reading and the exercises


def _late_rate(m: pd.DataFrame) -> float:
    return float(m["excess_ratio"].dropna().astype(float).iloc[-2:].mean())


def operational_table(measured: Mapping[tuple[str, str], pd.DataFrame], studies: Mapping[tuple[str, str], Any]
                      ) -> tuple[Any, dict[str, Any]]:
    """Passes until the excess leakage falls below 0.01, extrapolating the measured pass-5 excess at
    the late measured ratio and at ``rho(B)`` (:func:`~epsaudit.studies.cascade.verdicts.passes_to_excess`),
    for display, and the prose values (``passes_late_*``, ``passes_rho_*``; "n/a" when no finite
    number of passes is predicted)."""
    rows, values = [], {}
    fits = [(fit_label(v, ENCODER_LABEL[e]), f"{v}_{e}", m, studies[(v, e)].spectra["rho_B"])
            for (v, e), m in measured.items()]
    fits.append((PAPER_LABELS["cascade"], "paper", _paper_cascade(), OPERATOR_TABLE_II.loc["FaceFusion", "rho_B"]))
    for label, suffix, m, rho in fits:
        ex5, late = float(m["excess"].iloc[-1]), _late_rate(m)
        row = {"fit": label, "excess": num(ex5), "late": num(late), "rho": num(rho)}
        for col, key, rate in (("at_late", "passes_late", late), ("at_rho", "passes_rho", rho)):
            try:
                row[col] = f"{passes_to_excess(ex5, int(m['pass'].iloc[-1]), rate)}"
            except ValueError:  # rate outside (0, 1) or no positive excess: no finite answer
                row[col] = "n/a"
            values[f"{key}_{suffix}"] = row[col]
        rows.append(row)
    values["operational_na_sentence"] = (
        "\"n/a\" means the rate is not below 1, so no finite number of passes is predicted."
        if any(r[c] == "n/a" for r in rows for c in ("at_late", "at_rho")) else
        "Every rate is below 1, so every extrapolation ends.")
    shown = styled(pd.DataFrame(rows), headers={"excess": "pass-5 excess", "late": "late measured ratio",
                                                "rho": "ρ(B)", "at_late": "passes to 0.01 at the late ratio",
                                                "at_rho": "passes to 0.01 at ρ(B)"},
                   caption="How many passes until the excess leakage is below 0.01; last: the paper's FaceFusion "
                           "cascade computed the same way (the paper: about 18-20 passes, Section VIII-B); the "
                           "pass-5 excess and the tail rate decide the difference")
    return shown, values


def exercise_values(measured: Mapping[tuple[str, str], pd.DataFrame], table7: Mapping[tuple[str, str], pd.DataFrame],
                    confidence: float = 0.95) -> dict[str, Any]:
    """The numbers of the chapter's exercises' solutions (computed, so they are executed and tested).

    ``ex_*`` keys: for ``hull`` under the run's first encoder (``ex_encoder``), the passes until the excess is below 0.001 at the late measured
    ratio and how many passes each factor of ten costs; for the certificates, under each bound (the
    paper's Clopper-Pearson, ``_joint``), the test rows per identity a bound of 1 needs at this run's
    per-certificate level and for a single certificate, and what this run's largest test set can
    certify (``ex_cap_sentence``).
    """
    encoder = next(e for v, e in measured if v == "hull")
    m = measured[("hull", encoder)]
    ex5, late = float(m["excess"].iloc[-1]), _late_rate(m)
    values: dict[str, Any] = {"ex_late_hull": num(late), "ex_excess5_hull": num(ex5),
                              "ex_encoder": ENCODER_LABEL.get(encoder, encoder)}
    if 0 < late < 1 and ex5 > 0:
        values["ex_passes_001"] = f"{passes_to_excess(ex5, int(m['pass'].iloc[-1]), late, threshold=0.01)}"
        values["ex_passes_0001"] = f"{passes_to_excess(ex5, int(m['pass'].iloc[-1]), late, threshold=0.001)}"
        values["ex_per_decade"] = f"{math.log(10) / -math.log(late):.1f}"
    else:
        values.update(ex_passes_001="n/a", ex_passes_0001="n/a", ex_per_decade="n/a")
    t7 = next(iter(table7.values()))
    alpha = float(t7["alpha"].iloc[0])
    single = 1 - confidence
    values.update({"ex_alpha": num(alpha, "{:.1e}"), "ex_alpha_single": num(single, "{:.1e}")})
    for bound, tag in (("clopper-pearson", ""), ("joint", "_joint")):
        values[f"ex_rows_family{tag}"] = f"{required_test_size(1.0, alpha, bound=bound):,}"
        values[f"ex_rows_single{tag}"] = f"{required_test_size(1.0, single, bound=bound):,}"
    n = pd.concat(table7.values())["n_test_max"].astype(float).max()
    values["ex_cap_sentence"] = (
        f"This run's largest test set has {int(n)} rows per identity, whose cap at the family's level is "
        f"{num(certifiable_cap(int(n), int(n), alpha, bound='clopper-pearson'))} with the paper's bound and "
        f"{num(certifiable_cap(int(n), int(n), alpha, bound='joint'))} with the joint bound." if pd.notna(n) else
        "This run certified no pair, so it has no test set to compare with.")
    return values
