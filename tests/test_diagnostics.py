"""Chapter 3 diagnostics: Shapiro-Wilk counts, bandwidth sweep, witness gap, classifier sensitivity, split-half
controls."""

import numpy as np
import pandas as pd
import pytest

from epsaudit.audits import audit_pairs
from epsaudit.studies.face_study import (
    bandwidth_sweep,
    classifier_sensitivity,
    pooled_residuals,
    shapiro_wilk,
    split_half_controls,
    split_half_groups,
    witness_gap,
)
from epsaudit.protocol import identity_pairs
from epsaudit.results import results_frame


def make_groups(noise="normal", k=6, n=40, d=12, shift=0.5, seed=0):
    rng = np.random.default_rng(seed)
    return {i: getattr(rng, noise)(size=(n, d)) + shift * rng.normal(size=d) for i in range(k)}


def test_pooled_residuals_are_centred_per_identity():
    groups = make_groups()
    res = pooled_residuals(groups)
    assert res.shape == (240, 12)
    assert np.allclose(res[:40].mean(axis=0), 0) and np.allclose(res[40:80].mean(axis=0), 0)


def test_shapiro_wilk_separates_gaussian_from_uniform_coordinates():
    rng = np.random.default_rng(1)
    groups = {i: np.c_[rng.normal(size=(300, 3)), rng.uniform(size=(300, 3))] for i in range(4)}
    table = shapiro_wilk(groups)
    assert set(table["coordinate"].iloc[:3]) == {3, 4, 5}  # the uniform coordinates are least Gaussian
    assert (table.set_index("coordinate").loc[[3, 4, 5], "p_value"] < 1e-3).all()
    assert (table.set_index("coordinate").loc[[0, 1, 2], "p_value"] > 1e-3).all()


def test_bandwidth_sweep_and_witness_gap():
    groups = make_groups(shift=1.0)
    pairs = identity_pairs(groups)[:6]
    sweep = bandwidth_sweep(groups, pairs)
    assert list(sweep["bandwidth_scale"]) == [0.5, 0.75, 1.0, 1.5, 2.0]
    assert (sweep["max"] >= sweep["median"]).all() and (sweep["median"] > 0).all()
    frame = results_frame(audit_pairs(groups, pairs, routes=["mmd_tv", "roc_oof"]))
    gap = witness_gap(frame)
    assert gap["pairs"] == 6
    assert gap["mean_ratio"] > 1  # a classifier threshold witnesses more TV than MMD/2 here
    assert gap["mean_tv_witness"] <= 1


def test_classifier_sensitivity_uses_the_same_pairs():
    groups = make_groups(shift=1.5, n=30)
    pairs = identity_pairs(groups)[:3]
    table = classifier_sensitivity(groups, pairs)
    assert list(zip(table.identity_a, table.identity_b)) == pairs
    assert np.allclose(table["difference"], table["auc_logistic"] - table["auc_alternative"])
    assert (table["auc_alternative"] > 0.8).all()


def test_split_half_controls_find_no_signal():
    groups = make_groups(k=20, n=30, shift=2.0, seed=3)
    halves, pairs = split_half_groups(groups, seed=1)
    assert len(pairs) == 20 and halves[(0, 0)].shape == (15, 12)
    controls = split_half_controls(groups, permutations=199, seed=2)
    assert controls["controls"] == 20
    assert controls["mmd_rejections"] <= 4  # P(Bin(20, 0.05) >= 5) < 0.016
    assert 0.35 < controls["mean_auc"] < 0.65
    assert controls["exact_corners"] == 0
    with pytest.raises(ValueError, match="split-half"):
        split_half_groups({0: np.ones((4, 2)) + np.arange(4)[:, None]})


# -------------------------------------------------------------------------------------------------
# grid-search records


def test_grid_record_flags_edges_ties_and_one_se_set():
    from epsaudit.operator import _grid_record as grid_record

    grid = [0.1, 1.0, 10.0, 100.0]
    peaked = grid_record("p", grid, [0.2, 0.5, 0.4, 0.1], criterion="score", score_se=[0.05, 0.05, 0.15, 0.05])
    assert (peaked.chosen, peaked.edge, peaked.determined, peaked.stopped) == (1.0, "interior", True, "interior")
    # within one SE (0.05) of 0.5: only 1.0; the SE of the best score counts, not the others'
    assert list(peaked.within_one_se()) == [False, True, False, False]
    assert peaked.one_se_range == (1.0, 1.0) and peaked.one_se_edge == "interior"
    rising = grid_record("p", grid, [0.1, 0.2, 0.3, 0.4], criterion="score")
    assert (rising.chosen, rising.edge, rising.determined, rising.stopped) == (100.0, "upper", False, "not widened")
    assert rising.one_se_range is None and rising.one_se_edge is None
    falling = grid_record("p", grid, [0.4, 0.3, 0.2, 0.1], criterion="score", score_se=[0.15] * 4)
    assert (falling.chosen, falling.edge) == (0.1, "lower")
    assert falling.one_se_range == (0.1, 1.0) and falling.one_se_edge == "lower"
    flat = grid_record("p", grid, [0.3, 0.3, 0.3, 0.3], criterion="score", score_se=[0.0] * 4)
    assert (flat.chosen, flat.edge, flat.one_se_edge) == (0.1, "lower", "both")  # ties: the first, as GridSearchCV
    minimised = grid_record("p", grid, [0.4, 0.3, 0.2, 0.1], criterion="loss", maximise=False)
    assert (minimised.chosen, minimised.edge) == (100.0, "upper")
    assert grid_record("p", [5.0], [1.0], criterion="score").edge == "fixed"
    row = falling.as_row()
    assert row["edge"] == "lower" and row["determined"] is False and row["one_se_high"] == 1.0
    assert "lower edge" in falling.describe() and "not determined" in falling.describe()
    with pytest.raises(ValueError, match="NaN/inf at \\[10.0\\]"):
        grid_record("p", grid, [0.1, 0.2, np.nan, 0.1], criterion="score")
    with pytest.raises(ValueError, match="strictly increasing"):
        grid_record("p", [1.0, 1.0], [0.1, 0.2], criterion="score")


def test_widen_log_grid_keeps_the_spacing():
    from epsaudit.operator import _widen_log_grid as widen_log_grid

    grid = np.logspace(-3, 4, 15)  # half-decade steps
    np.testing.assert_allclose(widen_log_grid(grid, "lower", 2), [1e-5, 10**-4.5, 1e-4, 10**-3.5])
    np.testing.assert_allclose(widen_log_grid(grid, "upper", 1), [10**4.5, 1e5])
    with pytest.raises(ValueError, match="side"):
        widen_log_grid(grid, "left", 1)


def test_bandwidth_sweep_edge_and_widening():
    rng = np.random.default_rng(0)
    groups = {i: rng.normal(size=(30, 12)) + rng.normal(size=12) for i in range(4)}
    pairs = identity_pairs(groups)[:4]
    paper = bandwidth_sweep(groups, pairs, widen=0)
    assert paper.loc[paper["max"].idxmax(), "bandwidth_scale"] == 0.75  # the paper's peak, inside its grid
    assert paper["max"].iloc[1] == pytest.approx(0.6091, abs=1e-4)
    assert (paper["pairs"] == 4).all() and not paper["added"].any()
    # the default widening adds nothing when the peak is inside
    pd.testing.assert_frame_equal(bandwidth_sweep(groups, pairs), paper)
    # scales far above the peak: the maximum sits at the smallest scale, i.e. at the grid's edge
    wide = bandwidth_sweep(groups, pairs, scales=(4.0, 8.0, 16.0), widen=0)
    assert list(wide["max"].round(4)) == [0.1784, 0.0903, 0.0453]
    # widening halves the smallest scale until the peak is inside: 2, 1, 0.5 are added
    widened = bandwidth_sweep(groups, pairs, scales=(4.0, 8.0, 16.0), widen=4)
    assert list(widened["bandwidth_scale"]) == [0.5, 1.0, 2.0, 4.0, 8.0, 16.0]
    assert list(widened["added"]) == [True, True, True, False, False, False]
    assert widened.loc[widened["max"].idxmax(), "bandwidth_scale"] == 1.0
    # a budget too small to bracket the peak stops at the edge
    short = bandwidth_sweep(groups, pairs, scales=(4.0, 8.0, 16.0), widen=1)
    assert short.loc[short["max"].idxmax(), "bandwidth_scale"] == short["bandwidth_scale"].min() == 2.0
