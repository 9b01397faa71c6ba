"""Chapter 4's page (*Toward Interpretable Privacy Guarantees in Face-Swapping Anonymization*,
Sections VI-VIII; *Picture the Epsilon*, Tables 7 and 8): the formatting rule of every number, the
tables with the papers' values beside ours, the paper's own numbers judged by the chapter's rules,
and the prose values glued from them. Inputs are small hand-made series whose answers are worked
out in the comments."""

from __future__ import annotations

import re
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from epsaudit.studies import cascade as cs

# -------------------------------------------------------------------------------------------------
# hand-made inputs


def series(leakage, floor: float = 0.01, chains: int = 12) -> pd.DataFrame:
    """A measured series (:func:`epsaudit.studies.cascade.cascade_series` columns) from its leakage."""
    leak = np.asarray(leakage, float)
    ex = leak - floor
    k = np.arange(len(leak))
    return pd.DataFrame({"pass": k, "chains": chains, "leakage": leak, "floor": floor, "excess": ex,
                         "excess_ratio": np.r_[np.nan, ex[1:] / ex[:-1]], "auc": np.linspace(1.0, 0.8, len(k)),
                         "tpr_at_fpr_1pct": 0.5, "tpr_at_fpr_0.1pct": 0.25, "cmc_rank1": 0.75, "norm_median": 1.4,
                         "floor_pooled": floor})


# hull: excess 0.6 halves at every pass (ratios 0.5); inner: excess 0.6, 0.4, then ratio 0.8
MEASURED = {("hull", "dlib"): series([0.61, 0.31, 0.16, 0.085, 0.0475, 0.02875]),
            ("inner", "dlib"): series([0.61, 0.41, 0.33, 0.266, 0.2148, 0.17384])}


def determination(b_u: float, rho: float, width: float = 0.0) -> pd.DataFrame:
    return pd.DataFrame({"low": [b_u - width, rho - width], "high": [b_u + width, rho + width]},
                        index=["b_u", "rho_B"])


@pytest.fixture()
def studies():
    return {("hull", "dlib"): SimpleNamespace(spectra={"rho_B": 0.5, "b_u": 0.45}, determination=determination(0.45, 0.5)),
            ("inner", "dlib"): SimpleNamespace(spectra={"rho_B": 0.8, "b_u": 0.6},
                                               determination=determination(0.6, 0.8, 0.1))}


def predicted_frame(leak: float = 0.5) -> pd.DataFrame:
    k = np.arange(6)
    return pd.DataFrame({"pass": k, "noiseless_leakage": leak * 0.5 ** k, "noiseless_excess_ratio": [np.nan] + [0.5] * 5,
                         "carrier": 0.9 ** k, "monte_carlo_leakage": leak * 0.6 ** k, "monte_carlo_nonmember": -0.0001,
                         "monte_carlo_excess_ratio": [np.nan] + [0.6] * 5, "monte_carlo_auc": 0.9,
                         "lyapunov_floor": 0.012})


def rows_of(styler) -> list[list[str]]:
    """The cells of a displayed table as text, row by row (the header row first)."""
    html = styler.to_html()
    return [[re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", c)).strip().replace("&nbsp;", " ")
             for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)]
            for row in re.findall(r"<tr>(.*?)</tr>", html, re.S)]


def caption_of(styler) -> str:
    found = re.search(r"<caption>(.*?)</caption>", styler.to_html(), re.S)
    return re.sub(r"<[^>]+>", "", found.group(1)) if found else ""


# -------------------------------------------------------------------------------------------------
# one formatting rule per number


def test_numbers_print_without_negative_zero_and_counts_as_integers():
    assert cs.num(-0.0004) == "0.000" and cs.num(-0.0006) == "-0.001"
    assert cs.num(-0.00001, "{:.1%}") == "0.0%" and cs.num(-1e-9, "{:.1e}") == "-1.0e-09"
    assert cs.num(float("nan")) == "n/a" and cs.num(None, missing="–") == "–" and cs.num(pd.NA) == "n/a"
    assert cs.span(0.8145, 0.8539) == "0.815–0.854" and cs.span(0.3001, 0.2999) == "0.300"
    shown = cs.strings(pd.DataFrame({"fit": ["a", "b"], "x": [-0.0001, np.nan], "n": [500.0, 62.0]}), {"n": "{:,.0f}"})
    assert shown.to_dict("list") == {"fit": ["a", "b"], "x": ["0.000", "n/a"], "n": ["500", "62"]}


def test_styled_blanks_repeated_group_labels_and_escapes_text():
    frame = pd.DataFrame({"fit": ["hull, dlib", "hull, dlib", "inner, dlib"], "pass": ["0", "1", "0"],
                          "note": ["a < b", "x", "y"]})
    table = rows_of(cs.styled(frame, group="fit", caption="a & b", headers={"note": "the note"}))
    assert table[0] == ["fit", "pass", "the note"]
    assert [r[0] for r in table[1:]] == ["hull, dlib", "", "inner, dlib"]  # no index column, label once per group
    assert table[1][2] == "a &lt; b"
    assert "a &amp; b" in cs.styled(frame, caption="a & b").to_html()


def test_profile_summary_and_stopwatch():
    smoke = cs.profile_summary("smoke", cs.choose_profile("smoke"))
    assert smoke.startswith("a slice of the corpora (8 target identities, up to 6 chains each; 1,500 train")
    assert smoke.endswith("per-pass audits of dlib with 10 pairs")
    assert cs.profile_summary("full", cs.choose_profile("full")).startswith("the whole corpora, 20 Monte Carlo")
    assert cs.minutes(95.0) == "1.6"
    clock = cs.Stopwatch()
    with clock("a"):
        pass
    with clock("a"):
        pass
    table = clock.table()
    assert list(table["stage"]) == ["a", "total"] and float(table["seconds"].iloc[0]) <= float(table["seconds"].iloc[1])


# -------------------------------------------------------------------------------------------------
# the paper's own numbers, judged by the chapter's rules


def test_paper_verdicts_apply_our_rules_to_the_papers_numbers():
    pv = cs.paper_verdicts().set_index("prediction")
    assert list(pv["verdict"]) == ["confirmed", "confirmed", "confirmed", "not confirmed", "confirmed"]
    # prediction 1: late ratio = mean(0.915, 0.893) = 0.904, within 0.05 of rho(B) = 0.894
    assert "first 0.139, late 0.904" in pv.loc["1 two-rate decay", "measured"]
    # prediction 2: excess at pass 0 is 0.616 - 0.006 = 0.610; |0.006 - 0.0055| = 0.0005 = 0.1% of it
    assert "gap 0.0005 = 0.1% of pass-0 excess 0.610" in pv.loc["2 floor", "measured"]
    # prediction 3: the first pass removes 0.616 - 0.091 = 0.525, the later four 0.091 - 0.047 = 0.044
    assert "removes 0.525 (86% of the pass-0 excess), passes 2..5 remove 0.044 (ratio 11.9)" in \
        pv.loc["3 first-pass dominance", "measured"]
    # prediction 4: no p-value reported, so not significant under the rule (the paper: weak support only)
    assert "(p not reported)" in pv.loc["4 persistent directions", "measured"]
    assert pv.loc["4 persistent directions", "paper_reading"] == "weak support only"
    # prediction 5: BlendFace leakage ratios 0.104/0.137 and 0.091/0.104 average to 0.817
    measured5 = pv.loc["5 tool ordering", "measured"]
    assert "BlendFace 0.817, FaceFusion 0.775, CanonSwap 0.712" in measured5
    assert "BlendFace 0.664, FaceFusion 0.588, CanonSwap 0.500" in measured5


def test_verdict_tables_end_with_the_papers_row_and_split_the_checks(studies):
    predicted = {k: predicted_frame() for k in MEASURED}
    persistent = {k: {"rho_pass1": 0.4, "p_pass1": 0.001, "rho_survival": 0.35, "p_survival": 0.01, "n": 12}
                  for k in MEASURED}
    tables, checks, values = cs.verdict_tables(MEASURED, predicted, studies, persistent, ("hull", "inner"))
    assert len(tables) == 5 and len(checks) == 2
    first = rows_of(tables[0])
    assert [r[0] for r in first[1:]] == ["hull, dlib", "inner, dlib", "FaceFusion (paper)"]
    # hull: r1 = 0.5 within 0.1 of b_u 0.45, late 0.5 = rho(B), but r1 < late fails: 2 of 3 checks
    assert first[1][3] == "partly" and first[3][3] == "confirmed paper: confirmed in rate"
    assert rows_of(tables[4])[-1][0] == "3 tools (paper)"
    assert (values["n_verdicts"], values["n_confirmed"], values["n_partly"], values["n_not_confirmed"]) == (9, 6, 2, 1)
    # inner's b_u and rho(B) move by 0.1 over the one-SE penalties: both its checks depend on the penalty
    assert values["n_open_checks"] == 2 and values["n_checks"] == 4
    late = rows_of(checks[1])
    assert late[0] == ["fit", "measured ratio", "fitted over the one-SE penalties", "distance", "outcome"]
    assert late[1][1:] == ["0.500", "0.500", "0.000", "holds throughout"]
    assert late[2][1:] == ["0.800", "0.700–0.900", "0.000–0.100", "depends on the penalty"]
    assert "(tolerance 0.05)" in caption_of(checks[1]) and "(tolerance 0.10)" in caption_of(checks[0])


# -------------------------------------------------------------------------------------------------
# the cascade's tables


def test_operational_table_extrapolates_ours_and_the_papers_cascade(studies):
    shown, values = cs.operational_table(MEASURED, studies)
    # hull: pass-5 excess 0.01875 halves once more to 0.0094 < 0.01 at pass 6; inner: 0.164 * 0.8^13 < 0.01
    assert (values["passes_late_hull_dlib"], values["passes_late_inner_dlib"]) == ("6", "18")
    # the paper's FaceFusion cascade: pass-5 excess 0.041 at 0.904 and at rho(B) 0.894 (the paper: 18-20)
    assert (values["passes_late_paper"], values["passes_rho_paper"]) == ("19", "18")
    assert rows_of(shown)[-1] == ["FaceFusion (paper)", "0.041", "0.904", "0.894", "19", "18"]
    assert values["operational_na_sentence"].startswith("Every rate is below 1")


def test_table_iii_puts_the_papers_cascade_beside_ours():
    predicted = {k: predicted_frame() for k in MEASURED}
    tables, values = cs.table_iii(MEASURED, predicted)
    leak = rows_of(tables[0])
    assert leak[0] == ["fit", "pass", "chains", "leakage", "predicted (Monte Carlo)", "non-member", "excess",
                       "excess ratio"]
    assert leak[1] == ["hull, dlib", "0", "12", "0.610", "0.500", "0.010", "0.600", "–"]
    # the paper's excess is its leakage above its floor 0.006: 0.616 - 0.006 = 0.610 at pass 0
    paper0 = next(r for r in leak if r[0] == "FaceFusion (paper)")
    assert paper0[1:4] == ["0", "478", "0.616"] and paper0[6] == "0.610"
    assert values["leak1_hull_dlib"] == pytest.approx(0.31) and values["ratio2_inner_dlib"] == pytest.approx(0.8)
    assert values["first_ratio_span"] == "0.500–0.667"
    assert values["inner_keeps_phrase"] == "`inner` keeps more"
    assert values["first_ratio_phrase"] == "far above"  # 0.5 > 2 x FaceFusion's 0.139


def test_prediction_and_expectation_tables_show_the_papers_rollout(studies):
    predicted = {k: predicted_frame() for k in MEASURED}
    noiseless, mc = cs.prediction_table(predicted)
    mc_rows = rows_of(mc)
    paper = mc_rows[-6:]  # passes 0-5 of the paper's rollout (Table III), after our two fits' 12 rows
    assert len(mc_rows) == 1 + 12 + 6 and paper[0][0] == "FaceFusion (paper)"
    assert [r[2] for r in paper] == ["n/a", "0.168", "0.053", "0.032", "0.024", "0.018"]
    assert paper[1][3:] == ["n/a", "n/a", "n/a"]  # the paper reports the rollout's leakage only
    assert "-0.000" not in mc.to_html() and rows_of(mc)[1][3] == "0.000"  # -0.0001 prints without a sign
    assert rows_of(noiseless)[1][:3] == ["hull, dlib", "0", "0.500"]
    shown, values = cs.expectation_table(studies, predicted, ("hull", "inner"))
    assert rows_of(shown)[-1] == ["FaceFusion (paper)", "0.183", "0.894", "0.0055"]
    assert values["order_dlib"] == "inner > hull"


def _audits():
    t8 = pd.DataFrame({"pass": [0, 1, 5], "identities": 8, "rows": 48, "gaussmech": [106.4, 47.8, 43.0],
                       "mmd_tv": [0.7, 0.3, 0.25], "kde_lr_0": [2521.0, 1834.0, 1818.0], "kde_lr_0.01": [547.0, 431.0, 431.0],
                       "oof_auc": [1.0, 0.97, 0.92], "exact_corners": [3, 1, 0], "raw_infinite": [3, 3, 3], "roc_pairs": 3,
                       "mmd_rejections": [28, 23, 20], "mmd_tested": 28, "seconds": 1.0})
    # two passes x two bounds, family 10 (2 pairs x 5 passes): each certificate at 0.05 / 10, the paper's
    # split bound spends half of it on each one-sided Clopper-Pearson bound
    t7 = pd.DataFrame({"pass": [1, 1, 5, 5], "bound": ["joint", "clopper-pearson"] * 2, "certificates": 2,
                       "positive": [2, 2, 1, 1], "above_1": [0, 0, 0, 0], "median_bound": [0.55, 0.4, 0.3, 0.2],
                       "min_bound": [0.45, 0.3, 0.1, -0.0], "max_bound": [0.66, 0.5, 0.5, 0.4],
                       "censored": [1, 1, 0, 0], "cap_min": [0.66, 0.5] * 2, "cap_max": [0.8, 0.62] * 2,
                       "n_test_min": 9, "n_test_max": 15, "alpha": 0.05 / 10,
                       "alpha_per_bound": [0.05 / 10, 0.05 / 20] * 2, "family_size": 10})
    return {("hull", "dlib"): t8}, {("hull", "dlib"): t7}


def test_per_pass_tables_and_their_prose_values():
    table8, table7 = _audits()
    audit = {"pairs": 10, "kde_pairs": 3, "roc_pairs": 3, "permutations": 200, "certificates": 2}
    tables, values = cs.per_pass_tables(table8, table7, audit)
    assert len(tables) == 4
    certs = rows_of(tables[2])
    assert certs[0] == ["fit", "pass", "> 0", "> 1", "median", "range", "at cap", "joint median", "joint at cap"]
    # the paper's Clopper-Pearson columns first, the joint bound's median and count at the cap beside them
    assert certs[1] == ["hull, dlib", "1", "2", "0", "0.400", "0.300–0.500", "1", "0.550", "1"]
    assert certs[2][5] == "0.000–0.400"  # no negative zero in a range
    assert "(2 pairs each)" in caption_of(tables[2])
    assert certs[3][0] == "FaceFusion (paper)" and certs[3][-2:] == ["–", "–"]  # the paper has no joint bound
    limits = rows_of(tables[3])
    assert limits[0] == ["fit", "test rows per identity", "certificates in the family", "α per certificate",
                         "cap, Clopper–Pearson", "cap, joint"]
    assert limits[1] == ["hull, dlib", "9–15", "10", "5.0e-03", "0.500–0.620", "0.660–0.800"]
    # the paper's setting: 100 test rows, 250 certificates at 95%: 2.338 with its bound, about 3.1 joint
    paper = limits[2]
    assert paper[:5] == ["FaceFusion (paper)", "100", "250", "2.0e-04", "2.338"]
    assert 3.0 < float(paper[5]) < 3.2
    assert (values["t8_gm_first"], values["t8_gm_last"], values["t8_change_phrase"]) == ("47.8", "43.0", "change little")
    assert (values["t7_positive"], values["t7_total"], values["t7_cap_max"], values["t7_ntest"]) == ("3", "4", "0.620", "9–15")
    assert (values["t7j_positive"], values["t7j_median"], values["t7j_cap_max"], values["t7j_censored"]) == \
        ("3", "0.425", "0.800", "1")
    assert (values["t7_alpha"], values["t7_alpha_side"], values["t7_paper_cap"]) == ("5.0e-03", "2.5e-03", "2.338")
    assert "cannot certify a large $\\varepsilon$" in values["t7_sentence"]  # cap 0.62 < 1
    assert values["t7_sentence"].startswith("With the paper's bound, 3 of the 4 pair-pass bounds are positive")


def test_paper_joint_cap_is_the_exact_joint_tests_cap():
    from epsaudit.bounds import certifiable_cap
    # Picture the Epsilon, Table 7: 100 test rows per identity, 250 certificates together at 95%
    assert certifiable_cap(100, 100, 0.05 / 250, 1e-5, bound="clopper-pearson") == pytest.approx(2.338, abs=5e-4)
    assert cs.paper_joint_cap() == pytest.approx(certifiable_cap(100, 100, 0.05 / 250, 1e-5, bound="joint"))
    assert 3.0 < cs.paper_joint_cap() < 3.2  # issue 17: "from 2.338 to about 3.1"


def test_exercise_values_follow_from_the_series():
    _, table7 = _audits()
    values = cs.exercise_values(MEASURED, table7)
    # hull dlib: late ratio 0.5, pass-5 excess 0.01875: below 0.01 at pass 6, below 0.001 at pass 10
    assert (values["ex_late_hull"], values["ex_excess5_hull"], values["ex_encoder"]) == ("0.500", "0.019", "dlib")
    assert (values["ex_passes_001"], values["ex_passes_0001"]) == ("6", "10")
    assert values["ex_per_decade"] == f"{np.log(10) / np.log(2):.1f}"
    assert values["ex_alpha"] == "5.0e-03" and values["ex_alpha_single"] == "5.0e-02"
    rows = {k: int(values[k].replace(",", "")) for k in ("ex_rows_family", "ex_rows_single", "ex_rows_family_joint",
                                                           "ex_rows_single_joint")}
    assert rows["ex_rows_family"] > rows["ex_rows_single"] > 0
    # the joint bound needs fewer rows than the paper's bound at the same level
    assert rows["ex_rows_family_joint"] < rows["ex_rows_family"] and rows["ex_rows_single_joint"] < rows["ex_rows_single"]
    assert values["ex_cap_sentence"].startswith("This run's largest test set has 15 rows per identity")
    assert "with the paper's bound and" in values["ex_cap_sentence"]


def test_verdict_overview_lists_every_prediction_by_fit():
    values = {"verdict1_hull_dlib": "partly", "verdict1_inner_dlib": "confirmed", "verdict2_hull_dlib": "confirmed",
              "verdict5_hull_inner_dlib": "not confirmed"}
    table = rows_of(cs.verdict_overview(values, ("hull", "inner"), ("dlib",)))
    assert table[0] == ["prediction", "hull, dlib", "inner, dlib", "FaceFusion (paper)"]
    assert table[1] == ["1. two-rate decay", "partly", "confirmed", "confirmed"]
    assert table[2][:3] == ["2. floor", "confirmed", "–"]  # no verdict for inner: a dash
    assert table[5][1:3] == ["not confirmed", "not confirmed"]  # prediction 5 judges both variants at once
    assert len(table) == 6


def test_each_encoder_and_the_chains_sentence():
    assert cs.each({"a_dlib": "1", "a_sface": "2"}, "a_{e}", ["dlib", "sface"]) == "1 (dlib) and 2 (SFace)"
    assert cs.each({"a_sface": "2"}, "a_{e}", ["sface"]) == "2 (SFace)"
    assert cs.chains_text(False) == "The LFW photographs are not on this machine (`make lfw`), so no example chains are drawn."
    assert "{numref}`fig-ch4-chains`" in cs.chains_text(True)


def test_parameters_are_checked_in_the_first_cell():
    ns = {"profile": "smoke", "data": "data/corpora", "encoders": "sface,dlib", "seed": 0, "n_jobs": 2}
    values = cs.check_parameters(ns, "chapter 4")
    assert ns["encoders"] == ["dlib", "sface"] == values["encoders"]  # the chapter's order
    with pytest.raises(ValueError, match="parameter encoders = 'arcface' is not allowed; face encoders to include: "
                                         "a list .* 'dlib', 'sface'"):
        cs.check_parameters({**ns, "encoders": "arcface"}, "chapter 4")
    with pytest.raises(ValueError, match="unknown parameter 'variant'"):
        cs.check_parameters({**ns, "variant": "hull"}, "chapter 4")
    with pytest.raises(ValueError, match="data folder 'nowhere' does not exist"):
        cs.load_chapter_corpora("nowhere", cs.choose_profile("smoke"))


def test_corpora_overview_puts_the_papers_corpora_beside_ours():
    manifest = {"design": {"cascade": {"target_identities": 4, "chains": 10, "chains_per_identity": 3, "passes": 5,
                                       "donor_photographs": 50, "donor_slots": 50, "nonmember_identities": 2,
                                       "lost_chains": {"hull": 1, "inner": 0}, "complete_chains": {"hull": 9, "inner": 10}},
                           "operator": {"train_triplets": 1200, "test_triplets": 300, "train_identities": 40,
                                        "test_identities": 10},
                           "originals": {"encoded_and_stored": 99}},
                "run": {"wall_seconds": 90.0}, "files": {"a.csv": {"bytes": 2_500_000}, "b.parquet": {"bytes": 500_000}}}
    shown, values = cs.corpora_overview(manifest, ("hull", "inner"))
    table = {r[1]: r[2:] for r in rows_of(shown)[1:]}
    assert rows_of(shown)[0] == ["corpus", "quantity", "ours", "paper"]
    assert table["target identities"] == ["4", "500"] and table["chains"] == ["10", "500"]
    assert table["chains lost (hull)"] == ["1", "22 (FaceFusion)"]  # 500 chains started, 478 complete
    assert table["train triplets per variant"] == ["1,200", "57,048"] and table["train identities"] == ["40", "n/a"]
    assert table["make corpora wall time (minutes, 2 cores)"] == ["1.5", "n/a"]
    assert "LFW has 4 identities with enough photographs for up to 3 chains each" in caption_of(shown)
    assert (values["n_chains"], values["corpora_mb"], values["n_disjoint_pairs"], values["lost_hull"]) == ("10", "3.0", "2", "1")
