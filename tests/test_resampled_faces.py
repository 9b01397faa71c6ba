"""Chapter 5's study: certificates on the resampled corpus, the photograph design and the planner."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from epsaudit.bounds import certifiable_cap
from epsaudit.studies import resampled_faces as study

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "data" / "resampled"


def _gaussian_groups(seed: int, shifts: dict[str, float], n: int = 60, d: int = 4):
    rng = np.random.default_rng(seed)
    return {k: rng.normal(c, 1.0, size=(n, d)) for k, c in shifts.items()}


def test_planner_reproduces_the_papers_cap_and_the_test_sizes():
    table = study.planner_table(photograph_test_rows=15)
    paper, ours = table.iloc[0], table.iloc[1]
    assert paper["alpha_per_bound"] == pytest.approx(1e-4) and ours["alpha_per_bound"] == pytest.approx(0.05 / 300)
    # Table 7 of Picture the Epsilon: 100 test rows per side, 250 bounds -> cap 2.338
    assert paper["cap_100"] == pytest.approx(2.338, abs=5e-4)
    # an LFW identity's test half (15 photographs) caps at 0.165 with the paper's family
    assert paper["cap_15"] == pytest.approx(0.165, abs=5e-4)
    # the smallest test size that certifies the paper's pass-1 median (2.29) at the paper's level
    assert paper["n_for_2.29"] == 96
    assert certifiable_cap(96, 96, 1e-4, 1e-5) >= 2.29 > certifiable_cap(95, 95, 1e-4, 1e-5)
    assert ours["cap_100"] == pytest.approx(certifiable_cap(100, 100, 0.05 / 300, 1e-5))


def test_certify_condition_family_and_worst_pair():
    shifts = {"A": 0.0, "B": 3.0, "C": 0.0, "D": 0.2}
    dev, test = _gaussian_groups(0, shifts), _gaussian_groups(1, shifts)
    per_pair, worst = study.certify_condition(dev, test, pairs=3, worst_k=2, family=6)
    assert len(per_pair) == 3
    # every certificate is at the family's level (1 - 0.95) / (2 * 6)
    assert per_pair["alpha_per_bound"].tolist() == pytest.approx([0.05 / 12] * 3)
    assert (per_pair["bound"] <= per_pair["cap"] + 1e-12).all()
    # the ranking puts the far identity B in the selected pairs; A/C (same law) is not chosen
    assert all("B" in (a, b) for a, b in zip(per_pair["identity_a"], per_pair["identity_b"]))
    assert worst.result.alpha_per_bound == pytest.approx(0.05 / 4)
    assert worst.value == max(c.value for c in worst.certificates)
    assert "B" in worst.pair


def test_certify_condition_refuses_a_reused_draw():
    shifts = {"A": 0.0, "B": 3.0, "C": 0.5}
    dev, test = _gaussian_groups(0, shifts), _gaussian_groups(1, shifts)
    dev_ids = {k: np.arange(60) + 1000 * i for i, k in enumerate(shifts)}
    test_ids = {k: np.arange(60, 120) + 1000 * i for i, k in enumerate(shifts)}
    test_ids["B"] = test_ids["B"].copy()
    test_ids["B"][0] = dev_ids["B"][5]  # one test draw of B is a development draw
    per_pair, _ = study.certify_condition(dev, test, dev_ids, test_ids, pairs=2, worst_k=1)
    with_b = per_pair[(per_pair["identity_a"] == "B") | (per_pair["identity_b"] == "B")]
    assert len(with_b) > 0 and with_b["not_computed"].str.contains("draw").all()


def test_summary_table_counts():
    per_pair = pd.DataFrame({"encoder": "dlib", "variant": "hull", "pass": [1, 1, 1, 5],
                             "bound": [2.0, 0.5, 0.0, 1.5], "cap": [2.0, 2.0, 2.0, 2.0],
                             "n_test_a": 100, "n_test_b": [100, 99, 100, 100],
                             "not_computed": [None, None, None, None]})
    table = study.summary_table(per_pair).set_index("pass")
    assert table.loc[1, ["certificates", "positive", "above_1", "at_cap", "n_test"]].tolist() == [3, 2, 1, 1, 99]
    assert table.loc[1, "median_bound"] == 0.5 and table.loc[5, "median_bound"] == 1.5


@pytest.mark.skipif(not (CORPUS / "resampled_manifest.json").is_file(), reason="data/resampled/ not built")
def test_smoke_profile_on_the_committed_corpus():
    settings = study.choose_profile("smoke")
    corpora = study.load_chapter_corpus(CORPUS, settings["encoders"], settings["variants"])
    per_pair, worst = study.certify_passes(corpora, settings, progress=False)
    summary = study.summary_table(per_pair)
    assert summary["certificates"].tolist() == [settings["pairs"]] * len(study.PASSES)
    assert (summary["n_test"] == 100).all()  # 100 independent test draws per identity
    assert len(worst) == len(study.PASSES) and worst["worst_bound"].notna().all()
    # the same call gives the same numbers (seeded throughout)
    again, _ = study.certify_passes(corpora, settings, progress=False)
    pd.testing.assert_frame_equal(per_pair, again)


@pytest.mark.skipif(not (CORPUS / "resampled_manifest.json").is_file(), reason="data/resampled/ not built")
def test_same_person_control_splits_each_identity_by_photograph():
    settings = study.choose_profile("smoke")
    corpora = study.load_chapter_corpus(CORPUS, settings["encoders"], settings["variants"])
    control = study.same_person_control(corpora, settings).set_index("pass")
    ids = settings["identities"]
    assert control["pairs"].tolist() == [ids] * len(study.PASSES)
    # one family of identities x passes pairs, two one-sided bounds each
    assert control["alpha_per_bound"].tolist() == pytest.approx([0.05 / (2 * ids * len(study.PASSES))] * 3)
    # each half keeps about half of an identity's 100 test draws
    assert 30 <= control["n_test"].min() <= 50
    # without a swap the halves' photographs are told apart: the control is positive at pass 0
    assert control.loc[0, "positive"] > control.loc[5, "positive"]
