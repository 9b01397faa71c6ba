"""The face case study (chapter 3, :mod:`epsaudit.studies.face_study`): ``epsaudit audit`` on a
committed condition reproduces the numbers the chapter computes; the study's settings map onto CLI
flags; the committed data and the donor gallery; the membership-inference protocol on synthetic
tables; the Table 2/3 rows; the chapter's profiles."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from epsaudit.cli import build_parser, main
from epsaudit.condition import audit_condition
from epsaudit.data import EmbeddingTable, load_embeddings, sha256_file, verify_manifest
from epsaudit.faces import images as img
from epsaudit.settings import AuditSettings, SettingsError
from epsaudit.studies import PROFILE_NAMES
from epsaudit.studies import face_study as fs

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
    np.testing.assert_allclose(cli.loc[certs.to_numpy(), "alpha_per_bound"].astype(float), 0.05 / 120)
    assert list(cli.loc[certs.to_numpy(), "identity_a"]) == list(ours.loc[certs, "identity_a"])
    # the notebook's Table 2 and Table 3 rows come from the same per-pair results the CLI writes
    per_pair = pd.read_csv(f"{prefix}.csv")
    row = fs.table2_row(direct)
    kde = per_pair[(per_pair.route == "kde_lr") & np.isclose(per_pair.setting_alpha, 0.01)]
    assert row["KDE-LR a=.01"] == pytest.approx(kde["value"].median())
    assert row["pairs"] == 100 and fs.table3_row(direct)["certificates"] == 5


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
            _table(nm_labels, nm, [f"{l}/{i}.jpg" for i, l in enumerate(nm_labels)]), donor_p[None, :])


def test_swap_membership_protocol():
    originals, swaps, non_members, donor = synthetic_swaps()
    m = fs.swap_membership(swaps, originals, non_members, donor, seed=0)
    s = m.scores
    assert len(s) == swaps.n_rows and m.candidates == 6
    assert (s["n_target"] == 7).all()  # the swap's own source photograph is left out
    assert set(s["non_member"]) == {"n0", "n1", "n2", "n3"}
    assert list(s["non_member"]) == fs.assign_non_members(len(s), ["n3", "n1", "n0", "n2"], seed=0)
    assert not set(s["non_member"]) & set(s["identity"])
    # a swap that keeps target identity: targets score above non-members, donor above both
    summary = m.summary()
    assert summary.loc["median", "AUC"] > 0.9
    assert summary.loc["median", "mean donor"] > summary.loc["median", "mean target"] > summary.loc["median", "mean non-member"]
    assert 0.0 <= summary.loc["median", "CMC rank-1"] <= summary.loc["median", "CMC rank-5"] <= 1.0
    assert np.all(np.diff(m.cmc["median"]) >= 0)
    # the genuine score (source photograph against the same gallery) exceeds the swap's
    assert (s["genuine_median"] > s["target_median"]).mean() > 0.9
    # gallery cap, and determinism
    capped = fs.swap_membership(swaps, originals, non_members, donor, seed=0, gallery_size=5)
    assert (capped.scores["n_target"] == 5).all() and (capped.scores["n_non_member"] == 5).all()
    again = fs.swap_membership(swaps, originals, non_members, donor, seed=0, gallery_size=5)
    pd.testing.assert_frame_equal(capped.scores, again.scores)
    # with a zero centre the centred scores are the raw cosines; the default centre is the mean unit row
    m_0 = fs.swap_membership(swaps, originals, non_members, donor, centre=np.zeros(originals.dim))
    np.testing.assert_allclose(m_0.scores["target_median"], m_0.scores["raw_target_median"])
    np.testing.assert_allclose(m.centre, fs.reference_centre(originals, non_members))


def test_swap_membership_rejects_overlap_and_missing_originals():
    originals, swaps, non_members, donor = synthetic_swaps()
    with pytest.raises(ValueError, match="overlap"):
        fs.swap_membership(swaps, originals, originals, donor)
    other = _table(swaps.labels, swaps.embeddings, [i.replace(".jpg", ".png") for i in swaps.image_ids])
    with pytest.raises(ValueError, match="no original photograph"):
        fs.swap_membership(other, originals, non_members, donor)


def test_roc_points_and_table_rows():
    fpr, tpr = fs.roc_curve_points([0.9, 0.8, 0.2], [0.1, 0.3, 0.85])
    assert fpr[0] == tpr[0] == 0.0 and fpr[-1] == tpr[-1] == 1.0
    assert np.all(np.diff(fpr) >= 0) and np.all(np.diff(tpr) >= 0)
    rng = np.random.default_rng(1)
    groups = {f"id{i}": rng.normal(size=(12 + 6 * (i % 3), 8)) + 2.0 * i for i in range(6)}
    audit = audit_condition(groups, pairs=15, kde_pairs=4, roc_pairs=6, certificates=2, selection_pool=4,
                            family_size=10, seed=0, n_jobs=1)
    row = fs.table2_row(audit, n=4)
    assert row["pairs"] == 4 and row["pairs (500)"] == 15
    assert 0 <= row["ROC-HT +inf"] <= 4
    t3 = fs.table3_row(audit)
    assert t3["certificates"] == 2 and t3["alpha_per_bound"] == pytest.approx(0.05 / 20)
    assert t3["Pos."] >= t3[">1"]
    caps = fs.cap_table([10, 30], 60)
    assert caps.loc[10] == 0.0 and caps.loc[30] == pytest.approx(1.217, abs=1e-3)


@needs_images
def test_donor_gallery_rebuild_matches_the_committed_file(tmp_path):
    from epsaudit.faces.pipeline import build_donor_gallery

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


def test_profiles_and_paper_values():
    assert tuple(fs.PROFILES) == PROFILE_NAMES
    full, paper = fs.choose_profile("full"), fs.choose_profile("paper")
    assert full["audit"] == paper["audit"] == {} and full["smoke"] is None
    # the paper's protocol: 10^4 permutations on the first 100 pairs, the forest on all 200 ROC pairs
    assert (paper["permutations"], paper["perm_pairs"], paper["split_permutations"]) == (10_000, 100, 10_000)
    assert paper["rf_pairs"] == fs.audit_settings(12).roc_pairs == 200
    with pytest.raises(ValueError, match="profile must be one of"):
        fs.choose_profile("quick")
    assert fs.TABLE2.shape == (6, 6) and fs.TABLE3.shape == (6, 5)
    assert fs.TABLE3_PROTOCOL["certificates"] == 40
    assert fs.certificate_caps(60).iloc[:, 1].loc[30] == pytest.approx(fs.CERTIFICATE_CLOSED_FORMS["n30_zero_errors"],
                                                                        abs=1e-3)
    assert fs.condition_label("dlib_small_dp-pix") == ("dlib", fs.REGIME_LABEL["small"], "dp-pix")
