"""Chapter 1's module (the known-epsilon benchmark's plumbing) and the paper's values it is compared with.

The chapter computes its tables in the notebook; what is tested here is what the notebook relies
on: the profiles and parameters, the settings (calibration, pairs, seeds), the parallel map, the
closed forms the prose quotes, and *Picture the Epsilon*'s Tables 1, 4 and 6 as committed data.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from epsaudit.audits import reserved_test_certificate, tradeoff_certificate
from epsaudit.bounds import bonferroni_alpha, certifiable_cap, gaussian_epsilon, required_test_size
from epsaudit.mechanisms import IsotropicGaussian
from epsaudit.studies import synthetic as study
from epsaudit.studies.book import reported

# ---------------------------------------------------------------------------------------------
# Profiles and parameters
# ---------------------------------------------------------------------------------------------


def test_profiles_differ_only_where_documented():
    full, paper = study.PROFILES["full"], study.PROFILES["paper"]
    assert {k for k in full if full[k] != paper[k]} == {"reps", "reps_null"}  # repetitions only
    assert paper["reps"] == paper["reps_null"] == 3  # as Tables 4 and 6
    assert full["pairs"] == paper["pairs"] == 40 and full["fig2_n"] == 100 and full["mc"] == 20_000
    smoke = study.PROFILES["smoke"]
    assert 8.0 in smoke["epsilons"] and 0.0 in smoke["epsilons"]  # Table 6's and Figure 2's columns


def test_settings_take_bare_values_and_lists():
    s = study.settings("smoke", sizes=300, epsilons=2, mechanisms="laplace")
    assert (s["sizes"], s["epsilons"], s["mechanisms"], s["fig2_n"]) == ((300,), (2.0,), ("laplace",), 300)
    s = study.settings("full", sizes=[300, 30])
    assert s["sizes"] == (30, 300) and s["fig2_n"] == 30  # the given size nearest the profile's 100
    assert study.settings("full")["mechanisms"] == ("gaussian", "laplace")


def test_settings_refuse_what_they_cannot_honour():
    with pytest.raises(ValueError, match=r"parameter epsilons = \[0.0, 16.0\] needs at least one value in \(0, 8\]"):
        study.settings("smoke", epsilons=[0, 16])
    with pytest.raises(ValueError, match="huge"):
        study.settings("huge")


# ---------------------------------------------------------------------------------------------
# Settings: calibration, pairs and seeds
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("noise", ["gaussian", "laplace", "anisotropic_gaussian"])
def test_the_worst_pair_has_the_requested_epsilon(noise):
    mechanism, pairs = study.Setting("dispersed", noise, 8.0, 30, 0).build()
    everything = [(i, j) for i in range(study.N_IDENTITIES) for j in range(i + 1, study.N_IDENTITIES)]
    assert len(pairs) == 40 and len(set(pairs)) == 40
    assert mechanism.exact_epsilons(everything).max() == pytest.approx(8.0, rel=1e-6)
    assert np.median(mechanism.exact_epsilons(pairs)) < 8.0


def test_draws_depend_on_the_setting_only():
    s = study.Setting("face_like", "gaussian", 2.0, 30, 1, seed=5)
    mechanism, _ = s.build()
    one = mechanism.sample_groups(30, seed=s.key("dev"))
    two = study.Setting("face_like", "gaussian", 2.0, 30, 1, seed=5).build()[0].sample_groups(30, seed=s.key("dev"))
    assert all(np.array_equal(one[k], two[k]) for k in one)
    other = mechanism.sample_groups(30, seed=study.Setting("face_like", "gaussian", 2.0, 30, 2, seed=5).key("dev"))
    assert not np.array_equal(one[0], other[0])
    assert s.fields() == {"geometry": "face_like", "mechanism": "gaussian", "epsilon": 2.0, "n": 30, "rep": 1}


def test_grid_order_and_size():
    grid = study.settings_grid(study.GEOMETRIES, study.MECHANISMS, [0.0, 8.0], [30, 100], 2, n_pairs=10)
    assert len(grid) == 2 * 2 * 2 * 2 * 2 and all(s.n_pairs == 10 for s in grid)
    assert [(s.n, s.rep) for s in grid[:4]] == [(30, 0), (30, 1), (100, 0), (100, 1)]


def _certify(setting):
    mechanism, pairs = setting.build()
    a, b = pairs[0]
    dev = mechanism.sample_groups(setting.n, seed=setting.key("dev"), identities=[a, b])
    test = mechanism.sample_groups(setting.n, seed=setting.key("test"), identities=[a, b])
    cert = reserved_test_certificate(dev[a], dev[b], test[a], test[b], score_function=mechanism.exact_score(a, b),
                                     delta=mechanism.delta)
    return {"epsilon": setting.epsilon, "value": cert.value, "exact": mechanism.exact_epsilon(a, b)}


def test_run_does_not_depend_on_workers():
    grid = study.settings_grid(["dispersed"], ["gaussian"], [2.0, 8.0, 16.0], [100], 1)
    serial = study.run(grid, _certify, n_jobs=1, progress=False)
    parallel = study.run(grid, _certify, n_jobs=2, progress=False)
    pd.testing.assert_frame_equal(serial, parallel)
    assert serial["epsilon"].tolist() == [2.0, 8.0, 16.0]
    assert (serial["value"] <= serial["exact"]).all() and serial["value"].iloc[-1] > 0
    assert study.run([], _certify, progress=False).empty


def test_classifiers():
    assert type(study.classifier("logistic")).__name__ == "LogisticRegression"
    assert study.classifier("logistic").max_iter == 1000  # the paper's setting
    with pytest.raises(ValueError, match="unknown test 'forest'"):
        study.classifier("forest")


# ---------------------------------------------------------------------------------------------
# Closed forms the chapter quotes
# ---------------------------------------------------------------------------------------------


def test_caps_and_planned_sizes():
    assert certifiable_cap(100, 100, bonferroni_alpha(1), 1e-5) == pytest.approx(4.194, abs=1e-3)
    caps = [certifiable_cap(n, n, bonferroni_alpha(40), 1e-5) for n in (30, 300)]
    assert caps[1] - caps[0] == pytest.approx(np.log(10), abs=0.25)  # a tenfold test: about log 10 more
    assert required_test_size(4.0, bonferroni_alpha(40), 1e-5) == 185
    assert required_test_size(4.0, bonferroni_alpha(40), 1e-5, bound="clopper-pearson") == 407


def test_gaussmech_at_the_null_is_a_function_of_n():
    """The chapter's closed form sqrt(2d/(n-1)) * 4.845 against the paper's Table 4 column (within 1%)."""
    paper = reported("picture_table4").set_index("n")["GaussMech"]
    formula = np.sqrt(2 * 512 / (paper.index - 1)) * 4.845
    assert np.allclose(paper, formula, rtol=0.01)


def test_one_threshold_band_is_the_reserved_test():
    pair = IsotropicGaussian(np.array([[2.0], [0.0]]), sigma=1.0, delta=1e-5)
    assert pair.exact_epsilon(0, 1) == pytest.approx(gaussian_epsilon(2.0, 1e-5))
    dev = pair.sample_groups(300, seed=("gdp", 3, 2.0, 300, 0, "dev"))
    test = pair.sample_groups(300, seed=("gdp", 3, 2.0, 300, 0, "test"))
    kw = dict(score_function=pair.exact_score(0, 1), delta=1e-5, pair=(0, 1), check_reuse=not pair.repeated_outputs)
    one = tradeoff_certificate(dev[0], dev[1], test[0], test[1], n_thresholds=1, **kw)
    four = tradeoff_certificate(dev[0], dev[1], test[0], test[1], **kw)
    assert one.joint_best_epsilon == pytest.approx(four.single_threshold_epsilon, abs=1e-12)
    assert 0 < one.mu_lower <= four.mu_lower <= 2.0


# ---------------------------------------------------------------------------------------------
# The paper's values as committed data
# ---------------------------------------------------------------------------------------------


def test_picture_table4_as_printed():
    t4 = reported("picture_table4").set_index("n")
    assert list(t4.index) == [30, 100, 300] and list(t4.columns) == ["AUC", "Div.", "MMD-TV", "GaussMech", "KDE-LR"]
    assert t4.loc[30].tolist() == [0.490, 29.3, 0.003, 28.60, 1526]
    assert t4.loc[300].tolist() == [0.502, 20.8, 0.001, 8.96, 962]


def test_picture_table6_as_printed():
    t6 = reported("picture_table6").set_index(["test", "n"])
    assert list(t6.columns) == ["0", "0.5", "2", "8", "16", "32"]
    assert t6.loc[("exact", 100)].tolist() == [0, 0, 0, 0.64, 0.88, 0.88]
    assert t6.loc[("exact", 300), "32"] == 0.98 and t6.loc[("learned", 100), "32"] == 0.02
    assert (t6.loc["learned"].to_numpy() <= 0.02).all()


def test_picture_table1_marks_only_the_reserved_test_as_a_confidence_bound():
    t1 = reported("picture_table1").set_index("method")
    assert t1.index[t1["confidence bound"] == "Yes"].tolist() == ["ROC-HT (reserved test)"]
    assert len(t1) == 5
