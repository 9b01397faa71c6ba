"""The face case study (chapter 3, :mod:`epsaudit.studies.face_study` and
:mod:`epsaudit.studies.face_membership`): ``epsaudit audit`` on a committed condition reproduces the
chapter's audit; the study's settings map onto CLI flags; the committed data and the donor gallery; the
papers' Tables 2 and 3 as committed and the caps they imply; the membership protocol on synthetic
tables; the profiles and parameters."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from epsaudit.bounds import bonferroni_alpha, certifiable_cap, mmd2_deviation
from epsaudit.cli import build_parser, main
from epsaudit.condition import AuditSettings, SettingsError, audit_condition
from epsaudit.data import EmbeddingTable, load_embeddings, sha256_file, verify_manifest
from epsaudit.build import images as img
from epsaudit.studies import PROFILE_NAMES
from epsaudit.studies import face_membership as fm
from epsaudit.studies import face_study as fs
from epsaudit.studies.book import reported

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "data"
needs_images = pytest.mark.skipif(not img.images_available(), reason="LFW images absent (data/lfw/images; make data-link)")


def test_committed_conditions_and_donor_gallery_match_the_manifest():
    manifest = json.loads((DATA / "manifest.json").read_text())
    names = set(manifest["files"])
    assert {f"{n}.csv" for n in fs.condition_names()} <= names
    assert {f"{e}_donor_none.csv" for e in fs.ENCODERS} <= names
    assert verify_manifest(DATA / "manifest.json") == []
    donor = manifest["generation"]["donor"]
    gallery = manifest["generation"]["donor_gallery"]
    assert gallery["donor_image_id"] == donor["image_id"] and donor["image_id"] in gallery["images"]
    table = load_embeddings(DATA / "sface_donor_none.csv", min_identities=0)
    assert set(table.labels) == {donor["identity"]} and table.n_rows == len(gallery["images"])


@pytest.mark.parametrize("condition", fs.condition_names())
def test_cli_reproduces_the_notebooks_audit(condition, tmp_path, capsys):
    """Every committed condition: the CLI gives the numbers chapter 3 computes (same call)."""
    settings = fs.audit_settings(len(fs.condition_names()), seed=0)
    path = DATA / f"{condition}.csv"
    direct = audit_condition(load_embeddings(path), settings, n_jobs=2)
    prefix = tmp_path / "audit"
    assert main(["audit", str(path), *settings.cli_args(), "--jobs", "2", "--out", str(prefix)]) == 0
    capsys.readouterr()
    doc = json.loads(Path(f"{prefix}.json").read_text())
    record = doc["conditions"][0]
    assert record["settings"]["family_size"] == 60 and record["settings"]["prefer_certifiable"] is True
    cli = pd.DataFrame(record["summary"])
    ours = direct.summary
    assert list(cli["route"]) == list(ours["route"])
    np.testing.assert_allclose(cli["value"].astype(float), ours["value"].astype(float), rtol=1e-12)
    certs = ours["route"] == "roc_reserved"
    assert certs.sum() == 5
    # the default joint certificate is one test per pair at 0.05 / 60 (the paper's split bound: two at 0.05 / 120)
    np.testing.assert_allclose(cli.loc[certs.to_numpy(), "alpha_per_bound"].astype(float), 0.05 / 60)
    assert list(cli.loc[certs.to_numpy(), "identity_a"]) == list(ours.loc[certs, "identity_a"])
    # the page's Table 2 medians come from the same per-pair results the CLI writes
    per_pair = pd.read_csv(f"{prefix}.csv")
    ours = direct.per_pair
    for rows in (per_pair, ours):
        kde = rows[(rows.route == "kde_lr") & np.isclose(rows.setting_alpha.astype(float), 0.01)]
        assert len(kde) == 100
    np.testing.assert_allclose(np.median(per_pair.loc[(per_pair.route == "kde_lr")
                                                      & np.isclose(per_pair.setting_alpha, 0.01), "value"]),
                               np.median(ours.loc[(ours.route == "kde_lr")
                                                  & np.isclose(ours.setting_alpha.astype(float), 0.01), "value"]
                                         .astype(float)), rtol=1e-12)


def test_cli_args_parse_back_to_the_settings():
    settings = fs.audit_settings(12, seed=3, pairs=7, kde_alphas=(0.0, 0.05), delta=1e-6)
    args = build_parser().parse_args(["audit", "x.csv", *settings.cli_args()])
    assert AuditSettings.from_namespace(args) == settings
    assert settings.family_size == 12 * fs.CERTIFICATES_PER_CONDITION
    with pytest.raises(SettingsError, match="colour is not an audit setting"):
        fs.audit_settings(12, colour="red")


def _table(labels, x, ids):
    return EmbeddingTable.from_arrays(labels, x, ids)


def synthetic_swaps(seed=0, d=16, n_targets=6, per=8, n_nm=4):
    """Originals, swaps that keep part of the target plus a fixed donor, non-members, donor."""
    rng = np.random.default_rng(seed)
    protos = rng.normal(size=(n_targets + n_nm + 1, d))
    donor_p = protos[-1]
    labels, ids, orig, swap = [], [], [], []
    for t in range(n_targets):
        for j in range(per):
            x = protos[t] + 0.3 * rng.normal(size=d)
            labels.append(f"t{t}")
            ids.append(f"t{t}/{j}.jpg")
            orig.append(x)
            swap.append(0.6 * x + 0.8 * donor_p + 0.2 * rng.normal(size=d))
    nm_labels = [f"n{k}" for k in range(n_nm) for _ in range(per)]
    nm = np.array([protos[n_targets + k] + 0.3 * rng.normal(size=d) for k in range(n_nm) for _ in range(per)])
    return (_table(labels, np.array(orig), ids), _table(labels, np.array(swap), ids),
            _table(nm_labels, nm, [f"{name}/{i}.jpg" for i, name in enumerate(nm_labels)]), donor_p[None, :])


def test_swap_membership_protocol():
    originals, swaps, non_members, donor = synthetic_swaps()
    donor = EmbeddingTable.from_arrays(["donor"], donor, ["donor/0.jpg"])
    s, ranks = fm.swap_membership(swaps, originals, non_members, donor, seed=0)
    assert len(s) == swaps.n_rows
    assert (s["n_target"] == 7).all()  # the swap's own source photograph is left out
    assert set(s["non_member"]) == {"n0", "n1", "n2", "n3"}
    assert list(s["non_member"]) == fm.assign_non_members(len(s), ["n3", "n1", "n0", "n2"], seed=0)
    assert not set(s["non_member"]) & set(s["identity"])
    # a swap that keeps target identity: targets score above non-members, donor above both
    from epsaudit.audits.membership import membership_metrics

    assert membership_metrics(s["target_median"], s["non_member_median"])["auc"] > 0.9
    assert s["donor_median"].mean() > s["target_median"].mean() > s["non_member_median"].mean()
    for curve in ranks.values():
        assert 0.0 <= curve[0] <= curve[4] <= 1.0 and np.all(np.diff(curve) >= 0)
    # the genuine score (source photograph against the same gallery) exceeds the swap's
    assert (s["genuine_median"] > s["target_median"]).mean() > 0.9
    # gallery cap, and determinism
    capped, _ = fm.swap_membership(swaps, originals, non_members, donor, seed=0, gallery_size=5)
    assert (capped["n_target"] == 5).all() and (capped["n_non_member"] == 5).all()
    again, _ = fm.swap_membership(swaps, originals, non_members, donor, seed=0, gallery_size=5)
    pd.testing.assert_frame_equal(capped, again)
    np.testing.assert_allclose(fm.reference_centre(originals, non_members),
                               np.vstack([originals.embeddings, non_members.embeddings]).mean(axis=0))


def test_swap_membership_rejects_overlap_and_missing_originals():
    originals, swaps, non_members, donor = synthetic_swaps()
    donor = EmbeddingTable.from_arrays(["donor"], donor, ["donor/0.jpg"])
    with pytest.raises(ValueError, match="overlap"):
        fm.swap_membership(swaps, originals, originals, donor)
    other = _table(swaps.labels, swaps.embeddings, [i.replace(".jpg", ".png") for i in swaps.image_ids])
    with pytest.raises(ValueError, match="no original photograph"):
        fm.swap_membership(other, originals, non_members, donor)


def test_the_papers_tables_and_the_caps_they_imply():
    t2, t3 = reported("picture_table2"), reported("picture_table3")
    assert t2.shape == (6, 9) and t3.shape == (6, 12)
    # Picture the Epsilon, Table 2: 100 of 100 out-of-fold values are +inf in every condition
    assert (t2["ROC-HT +inf"] == 100).all() and t2["GaussMech"].between(44.2, 93.1).all()
    # Table 3: 40 certificates at 95% with its split Clopper-Pearson bound; a zero-error 30-row test caps
    # at 1.277, a 29-row test at 1.239 (its VGGFace2 rows), and nothing certifies at 9-10 rows (CelebA)
    alpha = bonferroni_alpha(40)
    cap = lambda n: certifiable_cap(n, n, alpha, bound="clopper-pearson")  # noqa: E731
    assert cap(30) == pytest.approx(t3["eps_max"].max(), abs=5e-4)
    assert cap(29) == pytest.approx(1.239, abs=5e-4) and cap(10) == 0.0
    assert t3["positive"].sum() == 20 and t3["above_one"].sum() == 15
    # our family of 60: lower caps; the joint bound certifies more at the same size
    ours = lambda n, b: certifiable_cap(n, n, bonferroni_alpha(60), bound=b)  # noqa: E731
    assert ours(30, "clopper-pearson") == pytest.approx(1.217, abs=1e-3) and ours(11, "clopper-pearson") == 0.0
    assert ours(30, "joint") == pytest.approx(2.076, abs=1e-3) and ours(6, "joint") > 0
    # the joint cap at zero errors is about logit(a^(1/2n)) (a little above at delta = 1e-5)
    a = 0.05 / 60
    assert ours(30, "joint") == pytest.approx(np.log(a ** (1 / 60) / (1 - a ** (1 / 60))), abs=0.02)
    diagnostics = reported("picture_diagnostics").set_index("quantity")
    assert diagnostics.loc["permutation tests rejecting", "low"] == 799
    assert list(reported("picture_bandwidth")["FF"]) == [0.677, 0.724, 0.642, 0.480, 0.374]
    table_i = reported("faceswap_table1").set_index("tool")
    assert table_i.loc["FaceFusion", "TPR1 buffalo_l median"] == 30.2 and len(table_i) == 7


def test_profiles_and_parameters():
    assert tuple(fs.PROFILES) == PROFILE_NAMES and fm.PROFILES is fs.PROFILES
    full, paper = fs.choose_profile("full"), fs.choose_profile("paper")
    assert full["audit"] == paper["audit"] == {} and full["subset"] is None
    # the paper's protocol: 10^4 permutations on the first 100 pairs, the forest on all 200 ROC pairs
    assert (paper["permutations"], paper["perm_pairs"], paper["split_permutations"]) == (10_000, 100, 10_000)
    assert paper["rf_pairs"] == fs.audit_settings(12).roc_pairs == 200
    with pytest.raises(ValueError, match="profile must be one of"):
        fs.choose_profile("quick")
    ns = dict(profile="smoke", data="data", encoders=["dlib"], generators=["dp-pix"], seed=0, n_jobs=1)
    with pytest.raises(ValueError, match="must include 'none' and 'swap'"):
        fs.check_parameters(ns, "page", required=("none", "swap"))


def test_the_smoke_profile_certifies_something():
    """smoke keeps the identities with the most photographs: a zero-error test of the >=20-photo regime
    certifies something in the smoke family (12 certificates), the 10-19-photo regime nothing."""
    smoke = fs.choose_profile("smoke")
    data = fs.load_conditions(smoke, encoders=["sface"], generators=["none", "swap"])
    large, small = data.tables["sface_large_none"], data.tables["sface_small_none"]
    assert len(large.identities) == 4 and (large.rows_per_identity() == 40).all()
    assert (small.rows_per_identity() >= 10).all()
    # every generator keeps the same photographs
    assert set(data.tables["sface_large_swap"].image_ids) == set(large.image_ids)
    alpha = bonferroni_alpha(12)
    assert certifiable_cap(12, 12, alpha) > 1 and certifiable_cap(5, 5, alpha, bound="clopper-pearson") == 0


def test_rows_for_deviation_is_the_smallest_sufficient_test_size():
    a = 0.05 / 60
    n = fm.rows_for_deviation(0.5, a)
    assert n == 454 and mmd2_deviation(n, n, a) < 0.5 <= mmd2_deviation(n - 1, n - 1, a)
    assert fm.rows_for_deviation(0.0, a) == 0


@needs_images
def test_donor_gallery_rebuild_matches_the_committed_file(tmp_path):
    from epsaudit.build.pipeline import build_donor_gallery

    shutil.copy2(DATA / "manifest.json", tmp_path / "manifest.json")
    before = json.loads((tmp_path / "manifest.json").read_text())
    doc = build_donor_gallery(tmp_path, encoders=("sface",))
    name = "sface_donor_none.csv"
    assert sha256_file(tmp_path / name) == before["files"][name]["sha256"]
    assert doc["files"][name]["regime"] == "donor" and doc["files"][name]["rows"] >= 1
    # the conditions' entries are left as they were
    for key, entry in before["files"].items():
        if key != name:
            assert doc["files"][key] == entry
    assert doc["generation"]["donor_gallery"]["includes_donor_image"] is True
