"""audit_condition's family size (certificates reported together across conditions) and the
size-aware tie-break of the certificate selection (``prefer_certifiable``), in the library and the CLI."""

import numpy as np
import pytest

from epsaudit.bounds import bonferroni_alpha, certifiable_cap
from epsaudit.cli import main
from epsaudit.condition import audit_condition
from epsaudit.protocol import split_identities
from epsaudit.data import load_embeddings, write_embeddings

CERT_ONLY = dict(pairs=0, kde_pairs=0, roc_pairs=0, certificates=3, selection_pool=30)


def unequal_groups(seed=0, d=8):
    """Well-separated identities with very different row counts (as LFW's large regime)."""
    rng = np.random.default_rng(seed)
    sizes = [12, 60, 14, 50, 16, 40, 13, 45]
    protos = rng.normal(size=(len(sizes), d))
    return {f"id{i}": 3 * protos[i] + rng.normal(size=(n, d)) for i, n in enumerate(sizes)}


@pytest.fixture(scope="module")
def groups():
    return unequal_groups()


def test_family_size_sets_the_level_of_every_bound(groups):
    own = audit_condition(groups, seed=0, n_jobs=1, **CERT_ONLY)
    fam = audit_condition(groups, seed=0, n_jobs=1, family_size=60, **CERT_ONLY)
    c_own = own.summary[own.summary.route == "roc_reserved"]
    c_fam = fam.summary[fam.summary.route == "roc_reserved"]
    assert len(c_own) == len(c_fam) == 3
    assert np.allclose(c_own["alpha_per_bound"].astype(float), bonferroni_alpha(3))
    assert np.allclose(c_fam["alpha_per_bound"].astype(float), 0.05 / 60)  # one joint test per certificate
    # same pairs, same tests: the larger family can only lower each bound and its cap
    assert list(c_own["identity_a"]) == list(c_fam["identity_a"])
    assert np.all(c_fam["value"].to_numpy(float) <= c_own["value"].to_numpy(float) + 1e-12)
    for _, r in c_fam.iterrows():
        assert r["cap"] == pytest.approx(certifiable_cap(int(r["n_test_a"]), int(r["n_test_b"]), 0.05 / 60))
    certs = [r for r in fam.results if r.route == "roc_reserved"]
    assert all("x 60 certificate" in r.correction for r in certs)
    assert fam.settings["family_size"] == 60


def test_family_size_smaller_than_certificates_is_an_error(groups):
    with pytest.raises(ValueError, match="family_size"):
        audit_condition(groups, seed=0, n_jobs=1, family_size=2, **CERT_ONLY)


def test_prefer_certifiable_breaks_auc_ties_by_the_cap_of_the_test_sizes(groups):
    plain = audit_condition(groups, seed=0, n_jobs=1, family_size=60, **CERT_ONLY)
    sized = audit_condition(groups, seed=0, n_jobs=1, family_size=60, prefer_certifiable=True, **CERT_ONLY)
    ranking = sized.selection
    assert "test_cap" in ranking and "test_cap" not in plain.selection
    # lexicographic: development AUC descending, then the cap descending
    keys = list(zip(-ranking["dev_auc"], -ranking["test_cap"]))
    assert keys == sorted(keys)
    # the caps come from the sizes of the split alone
    _, test, _ = split_identities(groups, seed=0)
    alpha = bonferroni_alpha(60)
    for _, r in ranking.iterrows():
        assert r["test_cap"] == pytest.approx(certifiable_cap(len(test[r.identity_a]), len(test[r.identity_b]), alpha))
    # these identities separate perfectly, so every AUC ties and the largest test sizes win
    assert (ranking["dev_auc"] == 1.0).all()
    caps = lambda audit: sorted(audit.summary[audit.summary.route == "roc_reserved"]["cap"].astype(float))  # noqa: E731
    assert caps(sized) >= caps(plain)
    assert min(caps(sized)) > 0
    assert "test sizes" in sized.settings["selection_rule"]


def test_cli_passes_family_size_and_preference(groups, tmp_path, capsys):
    labels = [k for k, v in groups.items() for _ in range(len(v))]
    x = np.vstack(list(groups.values()))
    path = write_embeddings(tmp_path / "t.csv", labels, None, x)
    code = main(["audit", str(path), "--pairs", "0", "--kde-pairs", "0", "--roc-pairs", "0", "--certificates", "3",
                 "--selection-pool", "30", "--family-size", "60", "--prefer-certifiable", "--jobs", "1",
                 "--out", str(tmp_path / "out")])
    assert code == 0
    out = capsys.readouterr().out
    direct = audit_condition(load_embeddings(path), seed=0, n_jobs=1, family_size=60, prefer_certifiable=True,
                             **CERT_ONLY)
    import json

    doc = json.loads((tmp_path / "out.json").read_text())
    got = [r["value"] for r in doc["conditions"][0]["summary"] if r["route"] == "roc_reserved"]
    want = direct.summary[direct.summary.route == "roc_reserved"]["value"].astype(float).tolist()
    assert got == pytest.approx(want)
    assert doc["conditions"][0]["settings"]["family_size"] == 60
    assert "roc_reserved" in out


def test_the_worst_pair_certificate_is_its_own_family_of_k(groups):
    fam = audit_condition(groups, seed=0, n_jobs=1, family_size=60, worst_pair=4, prefer_certifiable=True, **CERT_ONLY)
    certs = fam.summary[fam.summary.route == "roc_reserved"]
    worst = fam.summary[fam.summary.route == "worst_pair"]
    assert np.allclose(certs["alpha_per_bound"].astype(float), 0.05 / 60)
    assert len(worst) == 1 and float(worst["alpha_per_bound"].iloc[0]) == pytest.approx(bonferroni_alpha(4))
    # the same development ranking (with the size-aware tie-break) chooses both
    ranked = fam.selection.sort_values("rank")
    assert ranked["selected"].tolist()[:3] == [True] * 3 and ranked["worst_pair_selected"].sum() == 4
    assert [c.pair for c in fam.worst_pair.certificates] == list(zip(ranked["identity_a"][:4], ranked["identity_b"][:4]))
