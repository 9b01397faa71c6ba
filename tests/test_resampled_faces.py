"""Chapter 5's study: certificates on the two photograph designs, their same-person controls, the
comparison with Table 7 and the planner."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from epsaudit import resampled as fmt
from epsaudit.studies import resampled_faces as study
from epsaudit.studies.resampled_faces import levels

ROOT = Path(__file__).resolve().parents[1]
POOL = ROOT / "data" / fmt.corpus_dir("pool")
DISJOINT = ROOT / "data" / fmt.corpus_dir("disjoint")
both_corpora = pytest.mark.skipif(not ((POOL / fmt.MANIFEST).is_file() and (DISJOINT / fmt.MANIFEST).is_file()),
                                  reason="data/resampled/ or data/resampled_disjoint/ not built")


def _gaussian_groups(seed: int, shifts: dict[str, float], n: int = 60, d: int = 4):
    rng = np.random.default_rng(seed)
    return {k: rng.normal(c, 1.0, size=(n, d)) for k, c in shifts.items()}


def test_planner_reproduces_the_papers_cap_and_the_test_sizes():
    table = study.planner_table(photograph_rows=15).set_index(["family", "bound"])
    paper_cp = table.loc[("Picture the Epsilon, Table 7", levels.BOUND_LABEL[levels.CP])]
    # Table 7 of Picture the Epsilon: 100 test rows per side, 250 certificates -> cap 2.338
    assert paper_cp["level"] == pytest.approx(2e-4) and paper_cp["cap_100"] == pytest.approx(2.338, abs=5e-4)
    # an LFW identity's test half (15 photographs) caps at 0.165 with the paper's family
    assert paper_cp["cap_photographs"] == pytest.approx(0.165, abs=5e-4)
    # the smallest test size that certifies the paper's pass-1 median (2.29) at the paper's level
    assert paper_cp["n_for_2.29"] == 96
    assert levels.cap(96, 96, 250, bound=levels.CP) >= 2.29 > levels.cap(95, 95, 250, bound=levels.CP)
    # the default certificate can certify at least as much from the same counts
    default = table.loc[("Picture the Epsilon, Table 7", levels.BOUND_LABEL.get(levels.DEFAULT_BOUND,
                                                                                  levels.DEFAULT_BOUND))]
    assert default["cap_100"] >= paper_cp["cap_100"] - 1e-12


def test_certify_condition_family_and_worst_pair():
    shifts = {"A": 0.0, "B": 3.0, "C": 0.0, "D": 0.2}
    dev, test = _gaussian_groups(0, shifts), _gaussian_groups(1, shifts)
    per_pair, worst = study.certify_condition(dev, test, pairs=3, worst_k=2, family=6)
    assert len(per_pair) == 3
    assert (per_pair["bound"] <= per_pair["cap"] + 1e-9).all()
    # the paper's bound on the same counts is never above the default certificate, and below its own cap
    assert (per_pair["bound_cp"] <= per_pair["bound"] + 1e-9).all()
    assert (per_pair["bound_cp"] <= per_pair["cap_cp"] + 1e-9).all()
    assert per_pair["cap_cp"].iloc[0] == pytest.approx(levels.cap(60, 60, 6, bound=levels.CP))
    # the ranking puts the far identity B in the selected pairs; A/C (same law) is not chosen
    assert all("B" in (a, b) for a, b in zip(per_pair["identity_a"], per_pair["identity_b"]))
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


def test_summary_and_design_tables_read_certificates_with_their_controls():
    per_pair = pd.DataFrame({"design": "disjoint", "encoder": "dlib", "variant": "hull", "pass": [1, 1, 1, 5],
                             "bound": [2.0, 0.5, 0.0, 1.5], "bound_cp": [1.9, 0.4, 0.0, 1.4],
                             "cap": [2.0, 2.0, 2.0, 2.0], "cap_cp": 1.9,
                             "n_test_a": 100, "n_test_b": [100, 99, 100, 100],
                             "not_computed": [None, None, None, None]})
    table = study.summary_table(per_pair)
    one = table.set_index("pass")
    assert one.loc[1, ["certificates", "positive", "above_1", "at_cap", "n_test"]].tolist() == [3, 2, 1, 1, 99]
    assert one.loc[1, "median_bound"] == 0.5 and one.loc[5, "median_bound"] == 1.5
    assert one.loc[1, "median_cp"] == pytest.approx(0.4) and one.loc[1, "positive_cp"] == 2
    control = pd.DataFrame({"design": "disjoint", "encoder": "dlib", "variant": "hull", "pass": [1, 5],
                            "pairs": 24, "positive": [0, 3], "max_bound": [0.0, 1.6], "cap": 1.2})
    design = study.design_summary(table, control).set_index("pass")
    assert design.loc[1, "reading"] == "identity" and design.loc[5, "reading"] == "photographs"


@both_corpora
def test_smoke_profile_on_both_designs():
    settings = study.choose_profile("smoke")
    corpora = study.load_designs(ROOT / "data", settings["encoders"], settings["variants"])
    assert sorted(corpora) == [("disjoint", "dlib", "hull"), ("pool", "dlib", "hull")]
    per_pair, worst = study.certify_passes(corpora, settings, progress=False)
    summary = study.summary_table(per_pair)
    assert summary["certificates"].tolist() == [settings["pairs"]] * 2 * len(study.PASSES)
    assert (summary["n_test"] == 100).all()  # 100 independent test draws per identity, both designs
    assert len(worst) == 2 * len(study.PASSES) and worst["worst_bound"].notna().all()
    again, _ = study.certify_passes(corpora, settings, progress=False)   # seeded throughout
    pd.testing.assert_frame_equal(per_pair, again)


@both_corpora
def test_same_person_control_uses_the_designs_own_halves():
    settings = study.choose_profile("smoke")
    corpora = study.load_designs(ROOT / "data", settings["encoders"], settings["variants"])
    control, pairs = study.same_person_control(corpora, settings)
    ids = settings["identities"]
    assert (control["pairs"] == ids).all() and len(control) == 2 * len(study.PASSES)
    # each half keeps about half of an identity's 100 test draws
    assert 25 <= control["n_test"].min() <= 50
    # in the disjoint design the halves are the corpus's parts: no photograph in two halves, and no
    # test photograph of a half among its development photographs
    corpus = corpora[("disjoint", "dlib", "hull")]
    groups, _ = study.control_groups(corpus, 1, ids)
    photo = corpus.draws.set_index("draw")["photograph"]
    for name in groups["dev"]:
        dev = set(photo.loc[groups["dev_ids"][name]])
        test = set(photo.loc[groups["test_ids"][name]])
        other = name[:-1] + ("2" if name.endswith("1") else "1")
        assert not dev & test and not (dev | test) & (set(photo.loc[groups["dev_ids"][other]])
                                                      | set(photo.loc[groups["test_ids"][other]]))
