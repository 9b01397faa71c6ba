"""Diagnostics: Shapiro-Wilk counts, bandwidth sweep, witness gap, classifier sensitivity, split-half controls."""

import numpy as np
import pytest

from epsaudit.audits import audit_pairs
from epsaudit.diagnostics import (
    bandwidth_sweep,
    classifier_sensitivity,
    pooled_residuals,
    shapiro_wilk,
    split_half_controls,
    split_half_groups,
    witness_gap,
)
from epsaudit.pairs import identity_pairs
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
