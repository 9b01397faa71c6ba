"""``epsaudit audit --tradeoff``: the trade-off (f-DP) certificate of every certified pair, declared once
in :class:`epsaudit.condition.AuditSettings`; what the command prints and writes equals
:func:`epsaudit.condition.audit_condition` with ``tradeoff=True``, and each band is compared with the
reserved-test certificate of the same pair on the same rows at the same level."""

import contextlib
import io
import json

import numpy as np
import pandas as pd
import pytest

from epsaudit.cli import build_parser, main
from epsaudit.condition import AuditSettings, audit_condition
from epsaudit.data import load_embeddings, write_embeddings

K, N, D = 6, 60, 8  # identities x rows x dimensions: 18 test rows per identity at test_size 0.3
CERT_ONLY = ["--pairs", "0", "--kde-pairs", "0", "--roc-pairs", "0", "--certificates", "3", "--selection-pool", "8",
             "--jobs", "1"]
CERT_SETTINGS = {"pairs": 0, "kde_pairs": 0, "roc_pairs": 0, "certificates": 3, "selection_pool": 8}


@pytest.fixture(scope="module")
def csv_path(tmp_path_factory):
    rng = np.random.default_rng(3)
    protos = rng.normal(size=(K, D))
    protos /= np.linalg.norm(protos, axis=1, keepdims=True)
    x = np.concatenate([1.2 * protos[i] + rng.normal(scale=0.25, size=(N, D)) for i in range(K)])
    labels = np.repeat([f"person_{i}" for i in range(K)], N)
    path = tmp_path_factory.mktemp("tradeoff") / "condition.csv"
    return write_embeddings(path, labels, [f"img_{i:04d}.jpg" for i in range(len(x))], x)


@pytest.fixture(scope="module")
def direct(csv_path):
    return audit_condition(load_embeddings(csv_path), seed=0, n_jobs=1, tradeoff=True, **CERT_SETTINGS)


@pytest.fixture(scope="module")
def cli_run(csv_path, tmp_path_factory):
    prefix = tmp_path_factory.mktemp("tradeoff_out") / "runs" / "t"
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["audit", str(csv_path), *CERT_ONLY, "--tradeoff", "--out", f"{prefix}.csv"])
    return prefix, code, out.getvalue(), err.getvalue()


def test_the_flag_and_the_settings_table_come_from_the_one_declaration():
    assert AuditSettings().tradeoff is False
    assert AuditSettings(tradeoff=True).cli_args() == ["--tradeoff"]
    row = AuditSettings(tradeoff=True).table().set_index("setting").loc["tradeoff"]
    assert row["flag"] == "--tradeoff" and row["value"] == "True" and row["default"] == "False"
    assert "Gaussian-DP mu" in row["meaning"]
    args = build_parser().parse_args(["audit", "t.csv", "--tradeoff"])
    assert AuditSettings.from_namespace(args).tradeoff is True
    assert AuditSettings.from_namespace(build_parser().parse_args(["audit", "t.csv"])).tradeoff is False


def test_each_band_is_compared_with_the_reserved_test_of_its_pair(direct):
    table = direct.tradeoff_table()
    reserved = direct.per_pair[direct.per_pair["route"] == "roc_reserved"]
    assert len(table) == 3 and direct.counts["tradeoff_certificates"] == 3
    assert list(zip(table["identity_a"], table["identity_b"])) == list(zip(reserved["identity_a"], reserved["identity_b"]))
    # the band's single-threshold number is the audit's reserved-test certificate (same rows, same level)
    np.testing.assert_allclose(table["single_threshold_epsilon"], reserved["value"].astype(float), rtol=1e-12)
    assert (table["n_test_a"] == 18).all() and (table["n_test_b"] == 18).all()
    # each bound at (1 - confidence) / (2 K m), m = the 3 certificates, K = the band's points
    np.testing.assert_allclose(table["alpha_per_bound"], 0.05 / (2 * table["points"] * 3))
    assert (table["correction_cost"] >= 0).all()
    assert (table["best_epsilon"] >= table["single_threshold_epsilon"] - table["correction_cost"] - 1e-12).all()
    np.testing.assert_allclose(table["gain"], table["best_epsilon"] - table["single_threshold_epsilon"])
    # well-separated identities: 18 of 18 right on both sides, so every certificate sits at its cap
    np.testing.assert_allclose(reserved["value"].astype(float), reserved["cap"].astype(float))
    assert (table["points"] == 3).all()  # 3 distinct development thresholds: each band divides by 3
    np.testing.assert_allclose(table["mu_lower"], MU_LOWER, rtol=1e-9)
    np.testing.assert_allclose(table["best_epsilon"], BEST_EPSILON, rtol=1e-9)
    np.testing.assert_allclose(table["single_threshold_epsilon"], RESERVED, rtol=1e-4)
    np.testing.assert_allclose(table["correction_cost"], RESERVED - BEST_EPSILON, rtol=1e-4)
    np.testing.assert_allclose(table["joint_best_epsilon"], JOINT_BEST, rtol=1e-4)
    assert (table["joint_best_epsilon"] > table["best_epsilon"]).all() and (table["joint_gain"] < 0).all()


def _zero_error_bounds(n, alpha, delta=1e-5):
    """Epsilon and mu of a point with n of n right on both sides: Clopper-Pearson limits alpha^(1/n)."""
    from scipy.stats import norm

    low = alpha ** (1.0 / n)  # lower limit of TPR = upper limit of 1 - FPR
    return float(np.log((low - delta) / (1.0 - low))), float(norm.ppf(low) - norm.ppf(1.0 - low))


def _joint_zero_errors(n, alpha, delta=1e-5):
    """The joint certificate of n + n rows without an error: the corner (1 - p)^(2n) = alpha, p = (1 - delta) / (1 + e^eps)."""
    p = 1.0 - alpha ** (1.0 / (2 * n))
    return float(np.log((1.0 - delta) / p - 1.0))


# Zero test errors with 18 test rows per identity. The reserved test: one joint test per
# certificate, 3 certificates, a = 0.05 / 3 -> 2.1165 (the paper's split bound: 1.1884). The band:
# 3 thresholds, two one-sided bounds each at 0.05 / 18 -> epsilon 0.9498 and mu 1.1721 at the
# same threshold, its best point; its joint best point, one test per threshold at 0.05 / 9.
RESERVED = _joint_zero_errors(18, 0.05 / 3)
BEST_EPSILON, MU_LOWER = _zero_error_bounds(18, 0.05 / 18)
JOINT_BEST = _joint_zero_errors(18, 0.05 / 9)


def test_summary_rows_and_the_results_of_the_audit(direct):
    rows = direct.summary[direct.summary["route"] == "tradeoff_reserved"]
    assert len(rows) == 3 and set(rows["statistic"]) == {"best-point lower bound"}
    np.testing.assert_allclose(rows["value"].astype(float), direct.tradeoff_table()["best_epsilon"])
    per_pair = direct.per_pair[direct.per_pair["route"] == "tradeoff_reserved"]
    np.testing.assert_allclose(per_pair["mu_lower"].astype(float), direct.tradeoff_table()["mu_lower"])
    assert (per_pair["kind"] == "certificate").all()
    plain = audit_condition(load_embeddings(direct.source), seed=0, n_jobs=1, **CERT_SETTINGS)
    assert plain.tradeoff == () and plain.tradeoff_table().empty and "tradeoff_certificates" not in plain.counts
    assert "tradeoff_reserved" not in set(plain.summary["route"])
    # the reserved-test certificates themselves do not change
    np.testing.assert_array_equal(plain.summary.loc[plain.summary.route == "roc_reserved", "value"].astype(float),
                                  direct.summary.loc[direct.summary.route == "roc_reserved", "value"].astype(float))


def test_cli_prints_mu_the_best_point_and_its_cost(cli_run, direct):
    _, code, out, err = cli_run
    assert code == 0
    lines = out.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("trade-off certificates"))
    assert lines[head] == "trade-off certificates (95% family-wise, delta 1e-05, 0.00278 per one-sided bound):"
    assert lines[head + 1].split() == ["identity_a", "identity_b", "n_test_a", "n_test_b", "points", "mu_lower",
                                       "best_epsilon", "reserved", "cost", "gain"]
    table = direct.tradeoff_table()
    for k, line in enumerate(lines[head + 2: head + 5]):
        cells = line.split()
        assert cells[:2] == [table["identity_a"][k], table["identity_b"][k]]
        assert [float(c) for c in cells[5:]] == pytest.approx(
            table.loc[k, ["mu_lower", "best_epsilon", "single_threshold_epsilon", "correction_cost", "gain"]]
            .astype(float).tolist(), abs=6e-4)
    assert lines[head + 2].split()[4:] == ["3", "1.172", "0.9498", "2.116", "1.167", "-1.167"]
    assert "PREFIX_tradeoff.csv" not in err and "t_tradeoff.csv" in err


def test_cli_writes_the_certified_curve_beside_the_main_table(cli_run, direct):
    prefix, _, _, _ = cli_run
    points = pd.read_csv(prefix.with_name("t_tradeoff.csv"))
    expected = direct.tradeoff_points()
    assert list(points.columns) == ["condition"] + list(expected.columns)
    assert len(points) == int(direct.tradeoff_table()["points"].sum()) == 9
    np.testing.assert_allclose(points[["fpr_upper", "fnr_upper", "epsilon", "mu"]],
                               expected[["fpr_upper", "fnr_upper", "epsilon", "mu"]], rtol=1e-12)
    assert (points["fpr_upper"] >= points["fp"] / points["n_b"]).all()
    assert (points["fnr_upper"] >= points["fn"] / points["n_a"]).all()
    assert points["mu"].max() == pytest.approx(MU_LOWER, abs=1e-4)
    doc = json.loads(prefix.with_suffix(".json").read_text())["conditions"][0]
    assert doc["settings"]["tradeoff"] is True and len(doc["tradeoff"]) == 3
    record = doc["tradeoff"][0]
    assert record["mu_lower"] == pytest.approx(direct.tradeoff[0].mu_lower)
    assert record["epsilon_curve"]["1e-05"] == pytest.approx(direct.tradeoff[0].best_epsilon)
    assert record["epsilon_curve"]["0"] >= record["epsilon_curve"]["0.1"]
    main_table = pd.read_csv(prefix.with_suffix(".csv"))
    assert (main_table["route"] == "tradeoff_reserved").sum() == 3


def test_no_flag_no_curve_file(csv_path, tmp_path, capsys):
    assert main(["audit", str(csv_path), *CERT_ONLY, "--out", str(tmp_path / "plain")]) == 0
    out, _ = capsys.readouterr()
    assert "trade-off" not in out and not (tmp_path / "plain_tradeoff.csv").exists()
    with pytest.raises(SystemExit):
        main(["audit", "--help"])
    help_text = capsys.readouterr().out
    assert "--tradeoff" in help_text and "PREFIX_tradeoff.csv" in help_text


def test_draw_ids_freshness_carries_over_to_the_bands(csv_path, direct):
    table = load_embeddings(csv_path)
    by_ids = audit_condition(table, seed=0, n_jobs=1, tradeoff=True, draw_ids="image_ids", **CERT_SETTINGS)
    np.testing.assert_allclose(by_ids.tradeoff_table()["best_epsilon"], direct.tradeoff_table()["best_epsilon"])
    # one repeated draw id across the split of a certified identity: its reserved test and its band are refused
    first = direct.tradeoff_table()["identity_a"][0]
    ids = {label: table.image_ids[table.labels == label].copy() for label in table.groups()}
    ids[first][:] = ids[first][0]
    refused = audit_condition(table, seed=0, n_jobs=1, tradeoff=True, draw_ids=ids, **CERT_SETTINGS)
    t = refused.tradeoff_table()
    hit = (t["identity_a"] == first) | (t["identity_b"] == first)
    assert hit.any() and t.loc[hit, "not_computed"].notna().all() and t.loc[~hit, "not_computed"].isna().all()
    reserved = refused.per_pair[refused.per_pair["route"] == "roc_reserved"]
    assert list(t.loc[hit, "not_computed"]) == list(reserved.loc[hit.to_numpy(), "not_computed"])
