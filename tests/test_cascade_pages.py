"""Chapter 4's pages: the papers' reported values they compare with, the profiles that serve them,
their parameters, and prose that is written, not glued."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from epsaudit.bounds import bonferroni_alpha, certifiable_cap
from epsaudit.studies import cascade as c4
from epsaudit.studies import cascade_measured as cs
from epsaudit.studies.book import reported

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "notebooks" / "04_cascade.py", ROOT / "notebooks" / "04b_cascade_measured.py"]


def test_table_ii_and_the_text_as_printed():
    t2 = reported("faceswap_table2").set_index("tool")
    assert list(t2.index) == ["FaceFusion", "BlendFace", "CanonSwap"]
    ff = t2.loc["FaceFusion"]
    assert (ff["train"], ff["test"]) == (57048, 10667)
    assert (ff["fit_cosine"], ff["r2"], ff["b_u"], ff["rho_B"], ff["sigma_max_B"]) == (0.769, 0.585, 0.183, 0.894, 10.1)
    # the residual fraction is 1 - R^2 up to the paper's rounding
    np.testing.assert_allclose(t2["residual_fraction"] + t2["r2"], 1.0, atol=0.002)
    text = reported("faceswap_text").set_index("quantity")["value"]
    assert (text["copy_donor_cosine"], text["knn_cosine"], text["lyapunov_floor"]) == (0.654, 0.442, 0.0055)


def test_table_iii_ratios_follow_from_its_leakage():
    t3 = reported("faceswap_table3").set_index("pass")
    assert list(t3.index) == list(range(6)) and t3.loc[0, "measured"] == 0.616
    floor = t3.loc[1:, "non_member"].median()
    assert floor == 0.006  # Table III's floor
    excess = t3["measured"] - floor
    np.testing.assert_allclose((excess / excess.shift()).iloc[1:], t3["excess_ratio"].iloc[1:], atol=0.02)
    # Section VIII-B: about 18-20 passes until the excess is below 0.01, at the tail rate
    assert 18 <= cs.passes_to_excess(excess.iloc[-1], 5, 0.894) <= 20


def test_tables_7_and_8_and_the_papers_cap():
    t7 = reported("picture_table7").set_index("pass")
    assert list(t7.index) == [1, 2, 3, 4, 5] and (t7["pairs"] == 50).all()
    assert list(t7["median_lb"]) == [2.290, 2.076, 1.890, 1.784, 1.701]
    # 100 test rows per identity, 250 certificates at 95%: the Clopper-Pearson cap is the table's 2.338
    cap = certifiable_cap(100, 100, bonferroni_alpha(250), 1e-5, bound="clopper-pearson")
    assert float(cap) == pytest.approx(t7["max_lb"].max(), abs=5e-4)
    assert float(certifiable_cap(100, 100, bonferroni_alpha(250), 1e-5, bound="joint")) > cap
    t8 = reported("picture_table8").set_index("pass")
    assert list(t8["gaussmech"]) == [39.5, 34.3, 32.1, 30.5, 29.3]
    assert (t8["raw_inf"] == t8["roc_pairs"]).all() and (t8["mmd_reject"] == 100).all()


def test_profiles():
    smoke, full = c4.choose_profile("smoke"), c4.choose_profile("full")
    assert c4.choose_profile("paper") == full and cs.PROFILES is c4.PROFILES
    assert full["audit"] == dict(pairs=500, kde_pairs=100, roc_pairs=200, certificates=50, permutations=10_000,
                                 permutation_pairs=100)
    assert smoke["chains"] is None and smoke["audit"]["certificates"] == 2
    with pytest.raises(ValueError, match="profile"):
        c4.choose_profile("tiny")


@pytest.mark.skipif(not (ROOT / "data" / "corpora").is_dir(), reason="no committed corpora")
def test_the_smoke_profile_can_certify():
    """Smoke keeps every chain of its identities: 10-15 test rows per identity at test_size 0.5,
    whose cap at the smoke family (2 certificates x 5 passes) is positive under both bounds."""
    smoke = c4.choose_profile("smoke")
    corpora = c4.load_chapter_corpora("data/corpora", smoke, encoders=["dlib"])["dlib"]
    groups = cs.pass_groups(corpora, "hull", 5)
    assert len(groups) == smoke["identities"]
    n = min(len(x) for x in groups.values()) // 2
    alpha = bonferroni_alpha(smoke["audit"]["certificates"] * 5)
    assert n >= 10 and float(certifiable_cap(n, n, alpha, 1e-5, bound="clopper-pearson")) > 0.15


def test_parameters_are_checked():
    ns = {"profile": "smoke", "data": "data/corpora", "encoders": ["sface", "dlib"], "seed": 0, "n_jobs": 1}
    assert c4.check_parameters(ns, "chapter 4")["encoders"] == ["dlib", "sface"]
    with pytest.raises(ValueError, match="encoders"):
        c4.check_parameters({**ns, "encoders": ["arcface"]}, "chapter 4")
    with pytest.raises(ValueError, match="unknown parameter 'passes'"):
        c4.check_parameters({**ns, "passes": 3}, "chapter 4")


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_the_pages_have_no_glue_and_their_paper_values_come_from_data(page):
    source = page.read_text(encoding="utf-8")
    assert "{glue" not in source and "myst_nb" not in source and "studies.glue" not in source
    assert "reported(" in source and "claim(" in source
    visible, tags = 0, None
    for cell in re.split(r"^# %%", source, flags=re.M)[1:]:
        header, _, body = cell.partition("\n")
        if "[markdown]" in header or "remove-" in header:
            continue
        visible += sum(1 for line in body.splitlines() if line.strip() and not line.strip().startswith("#"))
    assert visible >= 100, f"{page.name}: {visible} visible code lines"
