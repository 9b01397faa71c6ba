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
    # the default joint certificate is one test per pair at 0.05 / 60 (the paper's split bound: two at 0.05 / 120)
    np.testing.assert_allclose(cli.loc[certs.to_numpy(), "alpha_per_bound"].astype(float), 0.05 / 60)
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
            _table(nm_labels, nm, [f"{name}/{i}.jpg" for i, name in enumerate(nm_labels)]), donor_p[None, :])


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
    assert t3["certificates"] == 2 and t3["alpha_per_bound"] == pytest.approx(0.05 / 10)  # joint: one test each
    assert t3["Pos."] >= t3[">1"]
    caps = fs.cap_table([10, 30], 60, bound="clopper-pearson")  # the paper's bound: 0.05 / 120 per side
    assert caps.loc[10] == 0.0 and caps.loc[30] == pytest.approx(1.217, abs=1e-3)
    joint = fs.cap_table([10, 30], 60)  # the default joint bound certifies more at the same size
    assert (joint > caps).all() and joint.loc[10] > 0


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
    caps = fs.certificate_caps(60)
    assert list(caps.columns) == list(fs.CAP_COLUMNS)
    # Picture the Epsilon, Table 3: 30 test rows, 40 certificates at 95%, its Clopper-Pearson bound
    assert caps[("clopper-pearson", "paper")].loc[30] == pytest.approx(fs.CERTIFICATE_CLOSED_FORMS["n30_zero_errors"],
                                                                       abs=1e-3)
    # our family of 60 is larger, so its caps are lower; the joint bound is never below the split bound
    assert (caps[("clopper-pearson", "ours")] <= caps[("clopper-pearson", "paper")] + 1e-12).all()
    assert (caps[("joint", "ours")] >= caps[("clopper-pearson", "ours")] - 1e-12).all()
    # the joint cap at zero errors is logit(a^(1/2n)) at delta = 0 (issue 17); at delta = 1e-5 a little above
    a = 0.05 / 60
    logit = np.log(a ** (1 / 60) / (1 - a ** (1 / 60)))
    assert caps[("joint", "ours")].loc[30] == pytest.approx(logit, abs=0.02)
    assert fs.condition_label("dlib_small_dp-pix") == ("dlib", fs.REGIME_LABEL["small"], "dp-pix")


# -------------------------------------------------------------------------------------------------
# beyond the papers: trade-off and MMD certificates of the certified pairs


def _tiny_condition_groups(seed=0, k=4, n=24, d=6):
    """Groups for every condition name: k separated identities of n rows each."""
    rng = np.random.default_rng(seed)
    out = {}
    for j, name in enumerate(fs.CONDITIONS):
        shift = 0.4 if "dp-pix" in name else 2.0
        out[name] = {f"id{i}": rng.normal(size=(n + 2 * i, d)) + shift * i for i in range(k)}
    return out


@pytest.fixture(scope="module")
def tiny_audits():
    groups = _tiny_condition_groups()
    settings = fs.audit_settings(len(fs.CONDITIONS), seed=0, pairs=6, kde_pairs=6, roc_pairs=6, selection_pool=6,
                                 certificates=2)
    audits = {n: audit_condition(groups[n], settings, n_jobs=1) for n in fs.CONDITIONS}
    return groups, audits, settings


def test_tradeoff_study_uses_the_audits_split_pairs_and_level(tiny_audits):
    groups, audits, settings = tiny_audits
    study = fs.tradeoff_study(groups, audits, settings, n_jobs=1)
    table = study.table()  # raises if a band's single-threshold certificate is not the audit's certificate
    assert len(table) == 6 * settings.certificates  # both encoders' >=20-photo conditions, all (2 < 3) pairs
    assert list(table["rank"]) == [1, 2] * 6 and set(table["generator"]) == {"none", "swap", "dp-pix"}
    assert list(dict.fromkeys(table["encoder"])) == ["dlib", "SFace"]
    for name in ("dlib_large_none", "dlib_large_swap", "dlib_large_dp-pix", "sface_large_swap"):
        chosen = fs.certified_pairs(audits[name])
        part = table[table["condition"] == name]
        assert list(zip(part["identity_a"], part["identity_b"])) == list(zip(chosen["identity_a"], chosen["identity_b"]))
        assert list(part["n_test_a"]) == list(chosen["n_test_a"])
    np.testing.assert_allclose(table["single_threshold"], table["reserved"])
    assert (table["mu_lower"] >= 0).all() and (table["mmd_epsilon"] >= 0).all() and (table["deviation"] > 0).all()
    # the band holds the reserved test's threshold, so it loses at most its correction cost there
    assert (table["best_epsilon"] >= table["reserved"] - table["correction_cost"] - 1e-12).all()
    band = study.bands["dlib_large_none"][0]
    assert band.alpha_per_bound == pytest.approx(0.05 / (2 * band.n_points * settings.family_size))
    assert study.mmd["dlib_large_none"][0].alpha_per_bound == pytest.approx(0.05 / settings.family_size)
    points, envelopes = study.points(), study.envelopes(grid=11)
    assert {"rank", "generator", "fpr_upper", "fnr_upper"} <= set(points.columns)
    assert ((points["fpr_upper"] >= points["fp"] / points["n_b"]) & (points["fnr_upper"] <= 1)).all()
    assert len(envelopes) == 11 * len(table) and envelopes["fnr_envelope"].between(0, 1).all()
    numbers = study.numbers()
    assert numbers["to_pairs"] == len(table) and numbers["to_family"] == settings.family_size
    assert numbers["to_mmd_positive"] == int((table["mmd_epsilon"] > 0).sum())
    assert numbers["to_per_condition"] == 2 and numbers["to_points_max"] <= 4
    first = fs.tradeoff_study(groups, audits, settings, encoders=("sface",), top=1, n_jobs=1).table()
    assert list(first["condition"]) == ["sface_large_none", "sface_large_swap", "sface_large_dp-pix"]
    same = table[(table["encoder"] == "SFace") & (table["rank"] == 1)]
    np.testing.assert_allclose(first["best_epsilon"], same["best_epsilon"])  # top-k changes nothing else
    np.testing.assert_allclose(first["mu_lower"], same["mu_lower"])
    bands, mmd = fs.tradeoff_views(table)
    assert list(mmd.data.columns)[-1] == "MMD certificate ε" and len(mmd.data) == len(table)
    assert len(bands.data.columns) == 5 and "cost at its threshold" in bands.data.columns
    assert bands.data.index.nlevels == 3 and "_" not in "".join(bands.data.index.get_level_values(2))
    claims = fs.tradeoff_claims(numbers)
    assert set(claims) == {"to_mu_claim", "to_band_claim", "to_mmd_claim"}
    import matplotlib.pyplot as plt

    from epsaudit.plotting import faces as face_figures

    fig = face_figures.tradeoff_curves(points, envelopes)  # rows: encoders, columns: generators
    assert [ax.get_title() for ax in fig.axes[:3]] == ["none", "swap", "dp-pix"]
    assert fig.axes[0].get_ylabel().startswith("dlib") and fig.axes[3].get_ylabel().startswith("SFace")
    names = [t.get_text() for t in fig.legends[0].get_texts()]
    assert names[:2] == ["pair 1", "pair 2"] and names[-1] == "no separation"
    plt.close(fig)


def test_tradeoff_claims_follow_the_numbers():
    base = {"to_pairs": 18, "to_mu_positive": 12, "to_mu_none": 1.30985, "to_mu_swap": 0.7, "to_mu_dp": 0.0,
            "to_best_none": 1.0655, "to_best_swap": 0.6, "to_best_dp": 0.0, "to_reserved_none": 1.2167,
            "to_reserved_swap": 0.8, "to_reserved_dp": 0.0, "to_band_wins": 0, "to_cost_max": 0.1913, "to_n_min": 6,
            "to_n_max": 30, "to_points_min": 3, "to_points_max": 4, "to_dev_min": 1.9446, "to_dev_max": 3.9693,
            "to_mmd2_max": 0.788, "to_mmd_positive": 0}
    c = fs.tradeoff_claims(base)
    assert c["to_mu_claim"].startswith("12 of the 18 bands certify a positive μ, up to 1.310 for `none` and 0.700 "
                                       "for `swap`, and none for `dp-pix`: ")
    assert "No band certifies a larger single-point ε" in c["to_band_claim"] and "3–4 thresholds" in c["to_band_claim"]
    assert "costs up to 0.191 in ε" in c["to_band_claim"]
    assert "Every MMD certificate is 0, where the reserved tests of the same pairs certify up to 1.217" in c["to_mmd_claim"]
    assert "1.945–3.969" in c["to_mmd_claim"] and "cannot certify anything" in c["to_mmd_claim"]
    c = fs.tradeoff_claims({**base, "to_band_wins": 2, "to_mmd_positive": 1})
    assert c["to_band_claim"].startswith("2 of the 18 bands certify a larger") and "1 of the 18 MMD" in c["to_mmd_claim"]
    zero = {**base, **{k: 0.0 for k in base if k.startswith(("to_mu_", "to_best_", "to_reserved_"))}}
    c = fs.tradeoff_claims({**zero, "to_mu_positive": 0})
    assert c["to_mu_claim"] == "None of the 18 bands certifies a positive μ"
    assert c["to_band_claim"] == "With 6–30 test rows per identity neither a band nor a reserved test certifies anything here"
    assert c["to_mmd_claim"].startswith("Every MMD certificate is 0, as are the reserved tests of the same pairs.")


def test_rows_for_deviation_is_the_smallest_sufficient_test_size():
    from epsaudit.bounds import mmd2_deviation

    alpha = 0.05 / 60
    n = fs.rows_for_deviation(0.8, alpha)
    assert mmd2_deviation(n, n, alpha) < 0.8 <= mmd2_deviation(n - 1, n - 1, alpha)
    assert fs.rows_for_deviation(0.0, alpha) == 0 and fs.rows_for_deviation(-0.1, alpha) == 0


# -------------------------------------------------------------------------------------------------
# the page: number formats, table views, and wording that follows the numbers


def test_number_formats_have_no_negative_zero_and_print_counts_as_integers():
    assert fs.number(-0.0004) == "0.000" and fs.number(-0.0004, 4) == "-0.0004"
    assert fs.number(np.int64(2383)) == "2,383" and fs.count(500.0) == "500" and fs.count(np.nan) == "n/a"
    assert fs.percent(0.32396) == "32.4" and fs.certificate(0.0) == "0" and fs.certificate(1.21669) == "1.217"
    assert fs.span_text("0.000 - 0.348") == "0–0.348" and fs.span_text("1.000 - 1.000") == "1.000"
    assert fs.range_text(1.0, 1.0004) == "1.000" and fs.number(float("inf")) == "+∞"


def test_table_views_fit_the_page(tiny_audits):
    _, audits, _ = tiny_audits
    t2, t3 = fs.table2(audits), fs.table3(audits)
    for view in (fs.table2_view(t2), fs.table2_500_view(t2), fs.table3_view(t3), fs.table3_caps_view(t3)):
        html = view.to_html()
        assert "-0.000" not in html and "LFW &gt;=20" not in html and "VGGFace2 role" not in html
        assert len(view.data.columns) <= 7
    t2_html = fs.table2_view(t2).to_html()
    assert "ArcFace" in t2_html and "FaceNet" in t2_html  # the paper's rows beside ours
    assert ">100<" in t2_html and ">100.0<" not in t2_html  # counts print as integers
    assert "ROC-HT = +∞" in t2_html and "mean_tv_witness" not in t2_html
    caps = fs.cap_view(fs.certificate_caps(60), fs.CAP_ROWS).to_html()
    assert ">0<" in caps and "0.000" not in caps


def test_wording_follows_the_numbers():
    assert fs.fold_words(4.05, 4.84) == "four- to fivefold"
    index = pd.MultiIndex.from_tuples([fs.condition_label(n) for n in fs.CONDITIONS], names=fs.LEVELS)
    checks = pd.DataFrame({"logistic - forest": 0.0, "split MMD rejections": 1.0, "split-half controls": 10.0},
                          index=index)
    numbers = {"split_auc_min": 0.45, "split_auc_max": 0.54, "perm_tests": 1200, "perm_b": 10_000,
               "perm_pairs": 100, "perm_needed": 24_000}
    dp = checks.index.get_level_values("generator") == "dp-pix"
    checks.loc[dp, "logistic - forest"] = [0.05, 0.06, 0.07, 0.09]
    claims = fs.robustness_claims(checks, numbers)
    assert "logistic regression is better in all 4" in claims["rf_dp_claim"]
    assert "more than the paper" in claims["rf_dp_size"] and "both sides of 0.5" in claims["split_auc_claim"]
    assert "would need at least 24,000" in claims["perm_family_claim"] and "floor suffices" in claims["perm_family_claim"]
    checks.loc[dp, "logistic - forest"] = [0.05, -0.06, 0.07, -0.09]
    assert "both directions" in fs.robustness_claims(checks, numbers)["rf_dp_claim"]
    few = fs.robustness_claims(checks, {**numbers, "perm_tests": 12, "perm_b": 1000, "perm_pairs": 1})
    assert "suffice for a family-wise claim" in few["perm_family_claim"]


def test_diagnostics_tables_carry_the_papers_row():
    index = pd.MultiIndex.from_tuples([fs.condition_label(n) for n in fs.CONDITIONS], names=fs.LEVELS)
    sw = pd.DataFrame({"coordinates": 128, "residual rows": 2000, "rejections (p<1e-3)": 10, "fraction": 10 / 128,
                       "min W": 0.95}, index=index)
    view = fs.shapiro_view(sw)
    assert view.data.index[-1] == fs.PAPER_ROW and len(view.data) == len(fs.CONDITIONS) + 1
    html = view.to_html()
    assert "296–512" in html and "58–100" in html and ">5,000<" in html and ">8<" in html  # 10/128 = 7.8%
    checks = pd.DataFrame({"RF pairs": 20, "AUC logistic": 0.9, "AUC forest": 0.88, "logistic - forest": 0.02,
                           "split-half controls": 30, "split MMD rejections": 1, "split mean MMD2_u": 0.001,
                           "split mean AUC": 0.5, "split exact corners": 0, "split +inf": 3, "perm tests": 100,
                           "perm reject 0.05": 100, "perm at floor": 100}, index=index)
    classifiers, split, perm = (v.to_html() for v in fs.robustness_views(checks))
    assert "-0.002–0.013" in classifiers and ">400<" in split and ">16<" in split
    assert ">800<" in perm and ">799<" in perm


def test_both_bounds_on_the_same_conditions(tiny_audits):
    groups, audits, settings = tiny_audits
    paper = {n: audit_condition(groups[n], settings, bound="clopper-pearson", pairs=0, kde_pairs=0, roc_pairs=0,
                                n_jobs=1) for n in fs.CONDITIONS}
    summary = fs.bound_summary({"clopper-pearson": paper, "joint": audits})
    assert list(summary.index) == ["clopper-pearson", "joint"]
    assert (summary["certificates"] == len(fs.CONDITIONS) * settings.certificates).all()
    # the joint bound certifies at least what the split bound does, and its caps are at least as large
    assert summary.loc["joint", "cap"] >= summary.loc["clopper-pearson", "cap"]
    assert summary.loc["joint", "median"] >= summary.loc["clopper-pearson", "median"] - 1e-12
    rows = fs.reserved_certificates(paper)
    assert len(rows) == summary.loc["clopper-pearson", "certificates"] and set(rows["condition"]) == set(fs.CONDITIONS)
    # the paper's alpha per one-sided bound is half each certificate's level
    np.testing.assert_allclose(rows["alpha_per_bound"].astype(float), 0.05 / settings.family_size / 2)
    view = fs.table3_joint_view(fs.table3(paper), fs.table3(audits)).to_html()
    assert "paper's CP" in view and ">joint<" in view and "-0.000" not in view
    claims = fs.bound_claims(paper, audits, {})
    assert claims["bound_sentence"].startswith(f"Over the {len(rows)} certificates of the family, the paper’s bound "
                                               "has median")
    assert "in the ≥20-photo regime" in claims["bound_sentence"] and "the joint bound has median" in claims["bound_sentence"]


def test_conditions_and_parameters_of_a_run():
    assert fs.present({"sface_small_none": 1, "dlib_large_swap": 2}) == ["dlib_large_swap", "sface_small_none"]
    ns = {"profile": "smoke", "data": "data", "encoders": "sface", "generators": ["swap", "none"], "seed": 0,
          "n_jobs": 1}
    values = fs.check_parameters(ns, "chapter 3")
    assert ns["generators"] == ["none", "swap"] == values["generators"] and ns["encoders"] == ["sface"]
    with pytest.raises(ValueError, match=r"generators = \['swap'\] must include 'none'"):
        fs.check_parameters({**ns, "generators": ["swap"]}, "chapter 3")
    with pytest.raises(ValueError, match="must include 'none' and 'swap'"):
        fs.check_parameters({**ns, "generators": ["none"]}, "chapter 3b", required=("none", "swap"))
    with pytest.raises(ValueError, match="parameter encoders = 'facenet' is not allowed"):
        fs.check_parameters({**ns, "encoders": "facenet"}, "chapter 3")
    with pytest.raises(ValueError, match="unknown parameter 'n'"):
        fs.check_parameters({**ns, "n": 30}, "chapter 3")
    with pytest.raises(ValueError, match="data folder 'no/such/folder' does not exist"):
        fs.load_conditions(fs.choose_profile("full"), "no/such/folder")
    # a relative data folder is the repository's, whatever the working directory
    import os
    here = os.getcwd()
    try:
        os.chdir("/")
        loaded = fs.load_conditions(fs.choose_profile("full"), "data", encoders=["sface"], generators=["none"])
    finally:
        os.chdir(here)
    assert list(loaded.tables) == ["sface_large_none", "sface_small_none"] and list(loaded.donors) == ["sface"]
    assert loaded.encoders == ["sface"] and loaded.generators == ["none"]
    numbers = fs.data_numbers(fs.data_table(loaded), loaded)
    assert "dlib_mean_norm" not in numbers and "dppix_rows" not in numbers
    assert fs.centring_claims(numbers, loaded.encoders)["da_centring"].count("SFace") == 1
    assert fs.data_claims(numbers, fs.audit_settings(2))["da_dppix"] == ""
    assert fs.example_condition(loaded.tables) == "sface_large_none"


def test_membership_reading_for_one_or_two_encoders():
    one = {"mia_swaps": 900, "mia_candidates": 100, "mia_chance_r1": 0.01, "paper_drop": 0.84, "matched": 10}
    for e, drop in (("dlib", 0.5), ("sface", 0.4)):
        one.update({f"mia_{e}_drop": drop, f"mia_{e}_genuine": 0.6, f"mia_{e}_target": 0.3, f"mia_{e}_nonmember": 0.01,
                    f"mia_{e}_auc_median": 0.9, f"mia_{e}_auc_max": 0.92, f"mia_{e}_matched_auc_max": 0.88,
                    f"mia_{e}_tpr1_median": 0.3, f"mia_{e}_tpr01_median": 0.1, f"mia_{e}_r1_median": 0.2,
                    f"mia_{e}_r5_median": 0.4, f"mia_{e}_raw_auc": 0.85, f"mia_{e}_donor_wins": 0.7 if e == "dlib" else 0.2,
                    f"mia_{e}_matched_tpr01_median": 0.1, f"mia_{e}_matched_tpr01_max": 0.05})
    both = fs.membership_claims(one, ["dlib", "sface"])
    assert "0.900 (dlib) and 0.900 (SFace)" in both["mia_rates_sentence"]
    assert "our classical swap suppresses less" in both["mia_scores_sentence"]  # 50% and 40% < 84%
    assert "fails as an anonymiser for SFace" in both["mia_donor_sentence"]  # SFace: 20% donor-dominated
    only = fs.membership_claims({k: v for k, v in one.items() if "_dlib_" not in k}, ["sface"])
    assert "(dlib)" not in only["mia_rates_sentence"] and "0.900 (SFace)" in only["mia_rates_sentence"]
    assert only["mia_centring"].startswith("Centring raises SFace's AUC")
    assert fs.examples_text(False) == ("The LFW photographs are not on this machine (`make lfw`), so this section "
                                       "shows no examples.")
