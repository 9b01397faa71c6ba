"""Chapter 5's module: profiles, the two photograph designs' rows, the same-person control's halves,
chapter 4's photographs, the manifests' tables; and the values the chapter compares with Table 7."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from epsaudit.data import corpora as fmt
from epsaudit.audits import ranked_pairs, reserved_test_pairs, select_pairs
from epsaudit.bounds import bonferroni_alpha, certifiable_cap, required_test_size
from epsaudit.protocol import identity_pairs
from epsaudit.studies import resampled_faces as study
from epsaudit.studies.book import reported

ROOT = Path(__file__).resolve().parents[1]
POOL = ROOT / "data" / fmt.corpus_dir("pool")
DISJOINT = ROOT / "data" / fmt.corpus_dir("disjoint")
both_corpora = pytest.mark.skipif(not ((POOL / fmt.RESAMPLED_MANIFEST).is_file() and (DISJOINT / fmt.RESAMPLED_MANIFEST).is_file()),
                                  reason="data/resampled/ or data/resampled_disjoint/ not built")
CP = "clopper-pearson"


@pytest.mark.skipif(not (ROOT / "data" / "papers" / "picture_table7.csv").is_file(),
                    reason="data/papers/picture_table7.csv not committed")
def test_table7_cap_and_test_size_from_the_papers_values():
    table7 = reported("picture_table7").set_index("pass")
    family = int(table7["pairs"].sum())
    assert family == 250 and table7.loc[1, "median_lb"] == pytest.approx(2.29)
    alpha = bonferroni_alpha(family)
    # Table 7 of Picture the Epsilon: 100 test rows per side, 250 certificates -> the censored pairs' 2.338
    assert certifiable_cap(100, 100, alpha, bound=CP) == pytest.approx(table7["max_lb"].max(), abs=5e-4)
    # the smallest test size that certifies the paper's pass-1 median at the paper's level
    assert required_test_size(2.29, alpha, bound=CP) == 96
    assert certifiable_cap(96, 96, alpha, bound=CP) >= 2.29 > certifiable_cap(95, 95, alpha, bound=CP)
    # the chapter's family of 150 (50 pairs x 3 passes): the exercise's answers
    alpha_150 = bonferroni_alpha(150)
    assert [required_test_size(t, alpha_150) for t in (2.29, 1.0)] == [42, 13]
    assert [required_test_size(t, alpha_150, bound=CP) for t in (2.29, 1.0)] == [91, 28]
    assert certifiable_cap(100, 100, alpha_150) == pytest.approx(3.198, abs=5e-4)


def test_profiles_refuse_what_they_cannot_honour():
    smoke = study.choose_profile("smoke")
    assert (smoke["encoders"], smoke["variants"], smoke["identities"], smoke["pairs"]) == (("dlib",), ("hull",), 8, 6)
    assert study.choose_profile("full", encoders=["sface"], variants=["inner"])["encoders"] == ("sface",)
    with pytest.raises(ValueError, match="encoders .*smoke profile runs dlib only, not sface"):
        study.choose_profile("smoke", encoders=["sface"])
    with pytest.raises(ValueError, match="variants"):
        study.choose_profile("smoke", variants=["hull", "inner"])
    with pytest.raises(ValueError, match="profile must be one of"):
        study.choose_profile("tiny")
    with pytest.raises(ValueError, match="parameter encoders"):
        study.check_parameters({"profile": "full", "data": "data", "encoders": ["facenet"], "variants": None,
                                "seed": 0, "n_jobs": 1})


def test_a_missing_corpus_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="resampled_disjoint"):
        study.corpus_folder(tmp_path, "disjoint")


@both_corpora
def test_smoke_profile_certifies_both_designs_at_100_test_draws_reproducibly():
    settings = study.choose_profile("smoke")
    corpora = study.load_designs(ROOT / "data", settings["encoders"], settings["variants"])
    assert sorted(corpora) == [("disjoint", "dlib", "hull"), ("pool", "dlib", "hull")]

    def certify(corpus):
        dev, test, dev_ids, test_ids = study.pass_data(corpus, 1, settings["identities"])
        assert len(dev) == 8 and {len(v) for v in test.values()} == {100}
        _, ranking = select_pairs(dev, identity_pairs(sorted(dev)), settings["pairs"])
        return reserved_test_pairs(dev, ranked_pairs(ranking)[: settings["pairs"]], test_groups=test,
                                   n_certificates=settings["pairs"] * len(study.PASSES), dev_ids=dev_ids,
                                   test_ids=test_ids)

    for corpus in corpora.values():
        first, again = certify(corpus), certify(corpus)
        values = [c.value for c in first]
        assert values == [c.value for c in again]  # seeded throughout
        assert all(c.not_computed is None for c in first) and max(values) > 1.0


@both_corpora
def test_same_person_control_uses_the_designs_own_halves():
    settings = study.choose_profile("smoke")
    corpora = study.load_designs(ROOT / "data", settings["encoders"], settings["variants"])
    ids = settings["identities"]
    for corpus in corpora.values():
        groups, pairs = study.control_groups(corpus, 1, ids)
        assert len(pairs) == ids
        # each half keeps about half of an identity's 100 test draws, and every draw is in one half
        sizes = [len(groups["test"][h]) for pair in pairs for h in pair]
        assert 25 <= min(sizes) <= 50 and sum(sizes) == 100 * ids
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


@both_corpora
def test_manifest_tables_of_the_disjoint_corpus():
    corpus = study.load_designs(ROOT / "data", ["dlib"], ["hull"], designs=("disjoint",))[("disjoint", "dlib", "hull")]
    faces = study.face_choice_table(corpus).set_index(["variant", "pass", "encoder"])
    assert faces.loc[("hull", 1, "dlib"), "images"] == 4800 and faces.loc[("none", 0, "dlib"), "images"] == 986
    assert (faces["bystander"] <= faces["several_faces"]).all()
    timings = study.build_timings(corpus)
    assert (timings["images"] > 0).all() and (timings["images_per_cpu_second"] > 0).all()
    pool = study.load_designs(ROOT / "data", ["dlib"], ["hull"], designs=("pool",))[("pool", "dlib", "hull")]
    assert study.face_choice_table(pool).empty  # built before faces were matched to the swap


@pytest.mark.skipif(not (ROOT / "data" / "corpora").is_dir(), reason="data/corpora/ not built")
def test_chapter_4_photographs_split_in_halves():
    cascade = study.load_photographs(ROOT / "data", ["dlib"])["dlib"]
    dev, test = study.photograph_data(cascade, "hull", 1, identities=4, seed=0)
    assert len(dev) == 4 and sorted(dev) == sorted(test)
    for a in dev:
        n = len(dev[a]) + len(test[a])
        assert 20 <= n and abs(len(dev[a]) - len(test[a])) <= 1
        assert np.allclose(np.linalg.norm(test[a], axis=1), 1.0)
    start, _ = study.photograph_data(cascade, "hull", 0, identities=4, seed=0)
    assert not np.allclose(start[sorted(start)[0]], dev[sorted(dev)[0]])
    with pytest.raises(ValueError, match="variant"):
        study.photograph_data(cascade, "nope", 1)
