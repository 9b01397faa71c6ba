"""Chapter 1's study functions beyond the benchmark runner: the trade-off-curve section, the
display tables and the number-dependent wording (and the first page's, which work the same way)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from epsaudit.bounds import gaussian_epsilon, gaussian_tradeoff
from epsaudit.studies import quickstart as qs
from epsaudit.studies import synthetic as study
from epsaudit.studies.synthetic import views, wording

SMALL = {"gdp_mus": (1.0, 2.0), "gdp_sizes": (100, 300), "gdp_reps": 3, "gdp_figure_mu": 2.0}


# ---------------------------------------------------------------------------------------------
# The trade-off-curve section
# ---------------------------------------------------------------------------------------------


def test_gaussian_pair_is_exactly_mu_gdp():
    for mu in (0.5, 2.0):
        pair = study.gaussian_pair(mu)
        assert pair.separation(0, 1) == pytest.approx(mu)
        assert pair.exact_epsilon(0, 1) == pytest.approx(gaussian_epsilon(mu, study.GDP_DELTA))


def test_one_threshold_band_is_the_reserved_test_certificate():
    """The exercise's claim: a band of one threshold certifies what the single-threshold test does."""
    numbers = study.gdp_one_threshold(SMALL, seed=3)
    assert numbers["gdp_ex_same"] == "the same"
    assert numbers["gdp_ex_one"] == pytest.approx(numbers["gdp_ex_single"], abs=1e-12)
    assert numbers["gdp_ex_n"] == 300 and numbers["gdp_ex_mu"] == 2.0


def test_certificates_are_reproducible_and_fresh_per_repetition():
    a, b = study.gdp_certificate(1.0, 100, seed=0, rep=0), study.gdp_certificate(1.0, 100, seed=0, rep=0)
    c = study.gdp_certificate(1.0, 100, seed=0, rep=1)
    assert a.mu_lower == b.mu_lower and a.best_epsilon == b.best_epsilon
    assert not np.array_equal(a.fp, c.fp) or not np.array_equal(a.fn, c.fn) or a.mu_lower != c.mu_lower


def test_runs_table_and_its_summaries():
    runs = study.gdp_runs(SMALL, seed=0, progress=False)
    # every certificate is seeded by its own mu, size and repetition: workers do not change the table
    pd.testing.assert_frame_equal(runs, study.gdp_runs(SMALL, seed=0, n_jobs=2, progress=False))
    assert len(runs) == 2 * 2 * 3
    assert set(runs.columns) >= {"mu", "n", "rep", "mu_lower", "best_epsilon", "single_threshold_epsilon",
                                 "same_threshold_epsilon", "correction_cost", "exact_epsilon", "points"}
    assert np.allclose(runs["correction_cost"], runs["single_threshold_epsilon"] - runs["same_threshold_epsilon"])
    assert (runs["correction_cost"] >= -1e-12).all()  # the band's bound at that threshold is at a smaller level
    table, numbers = study.gdp_mu_table(runs)
    assert list(table.index) == [1.0, 2.0] and list(table.columns) == [100, 300]
    assert numbers["gdp_certs"] == 12 and numbers["gdp_reps"] == 3
    assert numbers["gdp_tolerance"] == int(stats.binom.ppf(0.999, 12, 0.05))
    single, more = study.gdp_single_point_table(runs, 2.0)
    assert list(single.index) == [100, 300]
    assert more["gdp_sp_n"] == 300 and more["gdp_sp_exact"] == pytest.approx(gaussian_epsilon(2.0, 1e-5))
    best, one = round(more["gdp_sp_best"], 2), round(more["gdp_sp_single"], 2)
    assert ("do not win" in more["gdp_sp_phrase"]) == (best < one)


def test_certified_mu_is_valid_and_has_power():
    """Each certificate holds at 95% on its own: certified mu above the truth at most 5% of the time."""
    runs = study.gdp_runs({"gdp_mus": (1.0, 2.0), "gdp_sizes": (300,), "gdp_reps": 60}, seed=11)
    above = int((runs["mu_lower"] > runs["mu"] + 1e-9).sum())
    eps_above = int((runs["best_epsilon"] > runs["exact_epsilon"] + 1e-9).sum())
    tolerance = int(stats.binom.ppf(0.999, len(runs), 0.05))
    assert above <= tolerance and eps_above <= tolerance
    assert runs.loc[runs["mu"] == 2.0, "mu_lower"].median() > 1.0


def test_curves_are_the_exact_curve_and_a_valid_envelope():
    curves, points = study.gdp_curves(SMALL, seed=0, n_grid=51)
    assert sorted(curves["n"].unique()) == [100, 300] and len(curves) == 2 * 51
    part = curves[curves["n"] == 100]
    assert np.allclose(part["exact"], gaussian_tradeoff(part["fpr"], 2.0))
    assert np.allclose(part["gdp_of_certified_mu"], gaussian_tradeoff(part["fpr"], part["mu_lower"].iloc[0]))
    env = part["envelope"].to_numpy()
    assert env[0] == pytest.approx(1.0) and env[-1] == pytest.approx(0.0)
    assert np.all(np.diff(env) <= 1e-12) and np.all((env >= 0) & (env <= 1))
    assert set(points.columns) == {"n", "fpr_upper", "fnr_upper"} and len(points) >= 2
    phrase = study.gdp_curve_wording(curves, study.gdp_mu_table(study.gdp_runs(SMALL))[0])["gdp_curve_phrase"]
    assert phrase.endswith(".") and "envelope" in phrase


def test_curve_wording_follows_the_numbers():
    curves = pd.DataFrame({"exact": [1.0, 0.5, 0.0], "envelope": [1.0, 0.4, 0.0]})  # below the truth: a failure
    table = pd.DataFrame({100: [1.2], 300: [0.9]}, index=pd.Index([1.0], name="mu"))
    phrase = study.gdp_curve_wording(curves, table)["gdp_curve_phrase"]
    assert phrase.startswith("Not every") and "neither stays below" in phrase


# ---------------------------------------------------------------------------------------------
# Display tables: readable labels, one number format, no integer index
# ---------------------------------------------------------------------------------------------


def test_number_format():
    assert views.number(-0.0004, 2) == "0.00" and views.number(-0.0, 3) == "0.000"
    assert views.number(float("inf"), 2) == "+∞" and views.number(float("nan"), 2) == "n/a"
    assert views.number(1264.6, 0) == "1265"
    assert qs.number(-0.0001, 2) == "0.00" and qs.number(float("inf"), 3) == "+∞"


def test_flat_labels_blank_repeats_of_higher_levels_only():
    index = pd.MultiIndex.from_tuples([("a", "x", 1), ("a", "x", 2), ("a", "y", 1), ("b", "y", 1)],
                                      names=["k", "t", "n"])
    flat = views.flat_labels(pd.DataFrame({"v": [1, 2, 3, 4]}, index=index))
    assert flat["k"].tolist() == ["a", "", "", "b"]
    assert flat["t"].tolist() == ["x", "", "y", "y"]
    assert flat["n"].tolist() == ["1", "2", "1", "1"]


def _html(style) -> str:
    return style.to_html()


def test_reproduced_tables_show_ours_beside_the_paper_without_raw_identifiers():
    side = pd.concat({(c, src): frame[c] for c in study.TABLE4 for src, frame in
                      (("ours", study.TABLE4 * 1.01), ("paper", study.TABLE4))}, axis=1)
    view = study.table4_view(side)
    html = _html(view)
    assert ">28.89<" in html and ">28.60<" in html and "Div." not in html and "a=.01" not in html
    assert "row_heading" not in html  # no index column: the row labels are ordinary bold cells
    assert view.data["source"].tolist() == ["ours", "paper"] * 3
    ours = pd.concat([study.TABLE6.loc[["exact"]],
                      pd.DataFrame([[0.1] * 6], columns=study.TABLE6.columns,
                                   index=pd.MultiIndex.from_tuples([("shrinkage_lda", 30)], names=["test", "n"]))])
    view6 = study.table6_view(ours, study.TABLE6)
    assert view6.data["source"].tolist() == ["ours", "paper"] * 3 + ["ours"]  # no paper row for shrinkage LDA
    html6 = _html(view6)
    assert ">exact<" in html6 and "shrinkage LDA" in html6 and "shrinkage_lda" not in html6


def test_figure_tables_use_readable_labels():
    table = pd.DataFrame({"reference epsilon": [0.0, 4.0], "gaussmech": [15.6, 16.3], "kde_lr": [847.7, 849.6],
                          "mmd_tv": [-0.00001, 0.022], "roc_oof AUC": [0.504, 0.567]},
                         index=pd.MultiIndex.from_tuples([("gaussian", 0.0), ("gaussian", 8.0)],
                                                         names=["mechanism", "epsilon"]))
    html = _html(study.figure2_view(table, 100))
    for raw in ("roc_oof", "kde_lr", "mmd_tv", "gaussmech", "-0.000"):
        assert raw not in html
    assert "Gaussian" in html and "ROC AUC" in html


def test_first_page_tables_hide_the_index():
    certs = qs.certificate_table((0.0, 2.0), n=30, seed=0)
    html = _html(qs.certificate_view(certs))
    assert "row_heading" not in html and "certificate, exact score" in html
    caps = _html(qs.cap_view(qs.cap_table((10, 30))))
    assert "1 certificate<" in caps and "certificate(s)" not in caps


# ---------------------------------------------------------------------------------------------
# Wording computed from the numbers
# ---------------------------------------------------------------------------------------------


def test_table4_wording_follows_the_numbers():
    side = pd.concat({(c, src): frame[c] for c in study.TABLE4 for src, frame in
                      (("ours", study.TABLE4.assign(**{"KDE-LR a=.01": study.TABLE4["KDE-LR a=.01"] * 0.8,
                                                       "Div.": [30.0, 31.0, 30.5]})),
                       ("paper", study.TABLE4))}, axis=1)
    words = wording.table4_wording(side, {"pairs": 40, "reps_null": 2})
    assert words["t4_gm_phrase"] == "agrees with the paper's to within 0%"
    assert words["t4_kde_phrase"] == "20% below the paper's"
    assert words["t4_div_phrase"].startswith("and ours stay within")
    assert words["t4_div_ours"] == "30.0 / 31.0 / 30.5" and words["t4_sizes"] == "30 / 100 / 300"
    far = side.copy()
    far[("Div.", "ours")] = [20.0, 30.0, 30.0]
    assert "n = 30" in wording.table4_wording(far, {"pairs": 40, "reps_null": 2})["t4_div_phrase"]


def test_figure3_wording_with_one_and_with_several_sizes():
    rows = []
    for n, frac in ((30, 0.2), (100, 0.6)):
        for mech in ("gaussian", "laplace"):
            rows.append({"mechanism": mech, "test": "exact", "epsilon": 8.0, "n": n, "fraction_positive": frac,
                         "median_certified": frac, "reference_epsilon": 7.0})
    summary = pd.DataFrame(rows)
    assert wording.figure3_wording(summary)["f3_n_phrase"].startswith("More samples never lower")
    one = wording.figure3_wording(summary[summary["n"] == 30])
    assert one["f3_n_phrase"].startswith("This profile runs one sample size (n = 30)")
    assert one["f3_lap_best"] == pytest.approx(0.2) and one["f3_lap_ref"] == pytest.approx(7.0)
    plan = study.plan_exercise(summary)
    assert plan["plan_ref"] == 7.0 and plan["plan_n"] > plan["plan_n_single"] > plan["plan_n_run"]


def test_section_phrases_follow_the_numbers():
    t6 = wording.table6_wording({"t6_gap_closed": 75.0, "t6_stopped": 3, "t6_learned": 60})
    assert t6["t6_gap_phrase"].startswith("it closes 75%") and t6["t6_stopped_phrase"].startswith("3 of 60")
    fp = {"fp_tb_reach_reserved": 10.0, "fp_tb_reach_sniper": 4.4, "fp_cap": 4.6, "fp_tb_lr_reserved": 0.2}
    words = wording.floating_point_wording(fp)
    assert "is not 0.3-DP" in words["fp_refute_phrase"] and words["fp_sniper_phrase"].endswith("near its cap")
    assert "does not refute" in words["fp_lr_phrase"]
    counts = pd.Series([100, 2, 10, 1, 3])
    assert "2 of 100" in wording.validity_wording(counts)["v_phrase"]


def test_first_page_phrases_follow_the_numbers():
    certs = pd.DataFrame({"exact epsilon": [0.0, 1.0, 2.0, 4.0], "certificate (exact score)": [0.0, 1.2, 0.3, 2.0],
                          "certificate (learned)": [0.0, 0.0, 0.1, 1.0], "cap": [3.3] * 4})
    numbers = qs.certificate_numbers(certs)
    assert numbers["qs_above"] == 1 and numbers["qs_above_phrase"].startswith("1 of the 8")
    assert "too small to refute" in numbers["qs_refute_phrase"]
    index = pd.MultiIndex.from_arrays([["g", "k", "m", "r"], ["d", "d", "e", "e"]])
    routes = pd.DataFrame({"0": [1.5, 4.0, 0.08, 3.0], "1": [1.1, 4.3, 0.14, 9.0]}, index=index)
    words = qs.route_numbers(routes, routes)
    assert words["qs_kde_phrase"].startswith("it orders") and "3.000 on this draw" in words["qs_roc_phrase"]
