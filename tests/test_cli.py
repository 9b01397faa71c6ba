"""``epsaudit`` command line and :func:`epsaudit.condition.audit_condition`: end to end on a small
synthetic table, in-process and as a subprocess; the files --out writes equal the library's
numbers; certificates are selected on development rows only; bad input exits 2 with a message."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from epsaudit.cli import main
from epsaudit.condition import SUMMARY_COLUMNS, audit_condition
from epsaudit.protocol import split_identities
from epsaudit.data import EmbeddingTable, load_embeddings, sha256_file, write_embeddings

K, N, D = 8, 20, 16  # identities x rows x dimensions


def synthetic(k=K, n=N, d=D, seed=0, signal=0.3):
    rng = np.random.default_rng(seed)
    protos = rng.normal(size=(k, d))
    protos /= np.linalg.norm(protos, axis=1, keepdims=True)
    x = np.concatenate([signal * protos[i] + rng.normal(scale=0.25, size=(n, d)) for i in range(k)])
    labels = np.repeat([f"person_{i}" for i in range(k)], n)
    return labels, x


@pytest.fixture(scope="module")
def csv_path(tmp_path_factory):
    labels, x = synthetic()
    path = tmp_path_factory.mktemp("cli") / "condition.csv"
    return write_embeddings(path, labels, [f"img_{i:04d}.jpg" for i in range(len(x))], x)


# The paper's protocol on a small table: every route, 5 certificates; ROC-HT prefixes shortened
# (logistic fits dominate the run time) so the whole file runs in seconds.
SMALL = dict(pairs=500, kde_pairs=100, roc_pairs=12, certificates=5, selection_pool=12)
SMALL_ARGS = ["--roc-pairs", "12", "--selection-pool", "12"]


@pytest.fixture(scope="module")
def direct(csv_path):
    return audit_condition(load_embeddings(csv_path), seed=0, n_jobs=1, **SMALL)


@pytest.fixture(scope="module")
def cli_run(csv_path, tmp_path_factory):
    """One in-process ``epsaudit audit`` run: (prefix, exit code, stdout, stderr)."""
    import contextlib
    import io

    prefix = tmp_path_factory.mktemp("cli_out") / "out" / "run"
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["audit", str(csv_path), "--out", str(prefix), "--jobs", "1", *SMALL_ARGS])
    return prefix, code, out.getvalue(), err.getvalue()


def read_csv(path):
    return pd.read_csv(path)


def assert_frames_match(written: pd.DataFrame, per_pair: pd.DataFrame):
    assert list(written.columns) == ["condition"] + list(per_pair.columns)
    assert len(written) == len(per_pair)
    np.testing.assert_array_equal(written["value"].to_numpy(float), per_pair["value"].to_numpy(float))
    for col in ("route", "kind", "identity_a", "identity_b"):
        assert written[col].astype(str).tolist() == per_pair[col].astype(str).tolist()


# --- audit_condition -------------------------------------------------------------------------------


def test_audit_condition_protocol_and_summary(direct):
    pp = direct.per_pair
    counts = pp["route"].value_counts().to_dict()
    pairs = K * (K - 1) // 2  # 28 < 500 and 100: those routes audit them all
    assert counts == {"gaussmech": pairs, "mmd_tv": pairs, "kde_lr": 2 * pairs, "roc_oof": 12, "roc_reserved": 5}
    # every route audits a prefix of the same shuffled list
    order = list(zip(pp.loc[pp.route == "gaussmech", "identity_a"], pp.loc[pp.route == "gaussmech", "identity_b"]))
    roc = list(zip(pp.loc[pp.route == "roc_oof", "identity_a"], pp.loc[pp.route == "roc_oof", "identity_b"]))
    assert roc == order[:12]
    assert set(pp["kind"]) == {"diagnostic", "estimate", "certificate"}
    assert "p_value" not in pp.columns  # no permutation test requested
    s = direct.summary
    assert tuple(s.columns) == SUMMARY_COLUMNS
    assert s["route"].tolist() == ["gaussmech", "kde_lr", "kde_lr", "mmd_tv", "roc_oof"] + ["roc_reserved"] * 5
    assert s.loc[s.route == "kde_lr", "kde_alpha"].tolist() == [0.0, 0.01]
    roc_row = s[s.route == "roc_oof"].iloc[0]
    assert roc_row["n_infinite"] == int(pp.loc[pp.route == "roc_oof", "infinite"].sum())
    certs = s[s.route == "roc_reserved"]
    assert (certs["confidence"] == 0.95).all() and np.allclose(certs["alpha_per_bound"].astype(float), 0.05 / 5)
    assert (certs["bound"] == "joint").all() and s.loc[s.route != "roc_reserved", "bound"].isna().all()
    assert (certs["n_test_a"] == 6).all()  # round(0.3 * 20)
    finite = s[s.route != "roc_oof"]["value"].astype(float)
    assert np.isfinite(finite).all()
    assert direct.counts["certificates"] == 5 and direct.selection["selected"].sum() == 5
    # the certified pairs are the top of the development ranking, in that order
    top = direct.selection[direct.selection.selected]
    assert list(zip(top.identity_a, top.identity_b)) == list(zip(certs.identity_a, certs.identity_b))


def test_audit_condition_seed_changes_the_pair_order(csv_path, direct):
    cheap = dict(kde_pairs=0, roc_pairs=0, certificates=0, n_jobs=1)
    same = audit_condition(load_embeddings(csv_path), seed=0, **cheap)
    other = audit_condition(load_embeddings(csv_path), seed=1, **cheap)
    first = direct.per_pair[direct.per_pair.route.isin(["gaussmech", "mmd_tv"])].reset_index(drop=True)
    for col in ("route", "identity_a", "identity_b", "value"):
        assert same.per_pair[col].tolist() == first[col].tolist()
    assert other.per_pair["identity_a"].tolist() != same.per_pair["identity_a"].tolist()


def test_selection_uses_development_rows_only():
    labels, x = synthetic(k=5, n=20, d=8)
    groups = {lab: x[labels == lab] for lab in np.unique(labels)}
    dev, test, too_small = split_identities(groups, test_size=0.3, seed=0)
    assert not too_small and all(len(test[k]) == 6 and len(dev[k]) == 14 for k in groups)
    # replace every test row by noise: the ranking must not change, the certificates may
    rng = np.random.default_rng(5)
    noisy = {}
    for lab, rows in groups.items():
        is_test = np.isin(rows, test[lab]).all(axis=1)
        rows = rows.copy()
        rows[is_test] = rng.normal(size=(is_test.sum(), rows.shape[1]))
        noisy[lab] = rows
    kwargs = dict(pairs=0, kde_pairs=0, roc_pairs=0, certificates=3, n_jobs=1)
    a, b = audit_condition(groups, **kwargs), audit_condition(noisy, **kwargs)
    pd.testing.assert_frame_equal(a.selection, b.selection)
    assert a.per_pair["value"].tolist() != b.per_pair["value"].tolist() or a.per_pair["tp"].tolist() != b.per_pair["tp"].tolist()


def test_audit_condition_leaves_out_small_identities_and_counts_them():
    labels, x = synthetic(k=4, n=10, d=8)
    keep = ~((labels == "person_3") & (np.arange(len(x)) % 10 >= 3))  # person_3 keeps 3 rows
    table = EmbeddingTable.from_arrays(labels[keep], x[keep])
    audit = audit_condition(table, certificates=1, n_jobs=1)
    assert audit.counts["identities"] == 3 and audit.counts["identities_below_min_rows"] == 1
    assert "person_3" not in set(audit.per_pair["identity_a"]) | set(audit.per_pair["identity_b"])
    with pytest.raises(ValueError, match=r"only 0 identity\(ies\) with >= 11 rows \(4 left out"):
        audit_condition(table, min_rows=11)


# --- the command line ------------------------------------------------------------------------------


def test_cli_end_to_end_matches_audit_condition(csv_path, direct, cli_run):
    prefix, code, out, err = cli_run
    assert code == 0
    header = out.splitlines()[0].split()
    assert header[:2] == ["route", "kind"] and "confidence" in header and "n_infinite" in header
    assert "certificate" in out and "diagnostic" in out and "estimate" in out
    assert "label column 'identity' (name match)" in err and "dropped 0 rows" in err
    assert_frames_match(read_csv(f"{prefix}.csv"), direct.per_pair)
    doc = json.loads(Path(f"{prefix}.json").read_text())
    cond = doc["conditions"][0]
    assert cond["input"]["sha256"] == sha256_file(csv_path)
    assert cond["filter_counts"]["rows_read"] == K * N and cond["settings"]["seed"] == 0
    assert cond["counts"]["certificates"] == 5
    values = [r["value"] for r in cond["summary"]]  # JSON spells +inf as "inf"
    expected = ["inf" if np.isinf(v) else v for v in direct.summary["value"].astype(float)]
    assert values == expected


def test_cli_subprocess_gives_identical_files(csv_path, cli_run, tmp_path):
    """The installed script with 2 workers writes byte-identical per-pair results."""
    exe = Path(sys.executable).parent / "epsaudit"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "epsaudit.cli"]
    a, (b, _, out_b, _) = tmp_path / "a", cli_run
    proc = subprocess.run(cmd + ["audit", str(csv_path), "--out", str(a), "--jobs", "2", *SMALL_ARGS],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0].split()[:2] == ["route", "kind"]
    assert proc.stdout == out_b
    assert Path(f"{a}.csv").read_bytes() == Path(f"{b}.csv").read_bytes()
    ja, jb = (json.loads(Path(f"{p}.json").read_text())["conditions"][0] for p in (a, b))
    assert ja["summary"] == jb["summary"] and ja["selection"] == jb["selection"]


def test_cli_help_documents_everything(capsys):
    for argv in (["--help"], ["audit", "--help"]):
        with pytest.raises(SystemExit) as info:
            main(argv)
        assert info.value.code == 0
    text = capsys.readouterr().out
    for option in ("--label-col", "--embedding-cols", "--pairs", "--kde-pairs", "--roc-pairs", "--certificates",
                   "--seed", "--permutations", "--jobs", "--out", "column detection", "row filter"):
        assert option in text


def test_cli_worst_pair_flag_prints_the_worst_case_bound_and_writes_its_family(csv_path, tmp_path, capsys):
    args = ["audit", str(csv_path), "--pairs", "0", "--kde-pairs", "0", "--roc-pairs", "0", "--certificates", "2",
            "--selection-pool", "12", "--worst-pair", "4", "--jobs", "1", "--out", str(tmp_path / "wp")]
    assert main(args) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[-1].split()[:3] == ["worst_pair", "certificate", "worst-case"]
    assert "worst-pair certificate: with 95% confidence the worst-case pairwise epsilon is >= " in err
    direct = audit_condition(load_embeddings(csv_path), seed=0, n_jobs=1, pairs=0, kde_pairs=0, roc_pairs=0,
                             certificates=2, selection_pool=12, worst_pair=4)
    doc = json.loads((tmp_path / "wp.json").read_text())["conditions"][0]
    assert doc["settings"]["worst_pair"] == 4
    assert doc["worst_pair"]["value"] == pytest.approx(direct.worst_pair.value)
    assert doc["worst_pair"]["k"] == 4 and len(doc["worst_pair"]["certificates"]) == 4
    row = [r for r in doc["summary"] if r["route"] == "worst_pair"]
    assert len(row) == 1 and row[0]["alpha_per_bound"] == pytest.approx(0.05 / 4) and row[0]["pairs"] == 4
    assert row[0]["bound"] == "joint"
    written = read_csv(tmp_path / "wp.csv")
    assert written.loc[written.route == "worst_pair", "value"].item() == pytest.approx(direct.worst_pair.value)
    with pytest.raises(SystemExit):
        main(["audit", "--help"])
    assert "--worst-pair K" in capsys.readouterr().out


def test_cli_two_files_audited_separately(csv_path, tmp_path, capsys):
    labels, x = synthetic(k=4, n=10, seed=3)
    second = write_embeddings(tmp_path / "second.csv", labels, None, x)
    args = ["audit", str(csv_path), str(second), "--out", str(tmp_path / "two"), "--jobs", "1",
            "--kde-pairs", "2", "--roc-pairs", "2", "--certificates", "1", "--selection-pool", "3"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert f"== {csv_path}" in out and f"== {second}" in out
    frame = read_csv(tmp_path / "two.csv")
    assert set(frame["condition"]) == {str(csv_path), str(second)}
    assert len(json.loads((tmp_path / "two.json").read_text())["conditions"]) == 2


def test_cli_bad_input_exits_2_naming_the_file(tmp_path, capsys):
    bad = tmp_path / "ragged.csv"
    bad.write_text("identity,e0,e1\na,1,2\na,1\n")
    assert main(["audit", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("epsaudit: error:") and str(bad) in err and "line 3 has 2 fields" in err
    assert main(["check", str(tmp_path / "missing.csv")]) == 2
    assert "missing.csv" in capsys.readouterr().err


def test_cli_different_dimensions_exit_2(tmp_path, capsys):
    la, xa = synthetic(k=3, n=6, d=4)
    lb, xb = synthetic(k=3, n=6, d=5)
    a = write_embeddings(tmp_path / "a.csv", la, None, xa)
    b = write_embeddings(tmp_path / "b.csv", lb, None, xb)
    assert main(["audit", str(a), str(b)]) == 2
    err = capsys.readouterr().err
    assert f"{a} has d = 4" in err and f"{b} has d = 5" in err


def test_cli_explicit_columns_and_numeric_labels(tmp_path, capsys):
    _, x = synthetic(k=3, n=6, d=4)
    frame = pd.DataFrame(x, columns=["u", "v", "w", "z"])
    frame.insert(0, "subject_no", np.repeat([101, 102, 103], 6))
    path = tmp_path / "numeric.csv"
    frame.to_csv(path, index=False, sep=";")
    assert main(["check", str(path)]) == 2
    assert "--label-col" in capsys.readouterr().err
    assert main(["check", str(path), "--label-col", "subject_no", "--embedding-cols", "u:w"]) == 0
    out = capsys.readouterr().out  # check's report is its output: stdout
    assert "delimiter ';' (auto-detected)" in out and "embedding columns u..w (given, d = 3)" in out


@pytest.mark.parametrize("given", ["res", "res.csv", "res.json", "res.CSV"])
def test_out_names_the_two_files_whatever_suffix_is_given(tmp_path, given):
    from epsaudit.cli import _output_paths as output_paths

    csv, js = output_paths(str(tmp_path / given))
    assert (csv.name, js.name) == ("res.csv", "res.json")


def test_python_dash_m_epsaudit_is_the_command(csv_path):
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-m", "epsaudit", "check", str(csv_path)], capture_output=True, text=True)
    assert run.returncode == 0 and "kept" in run.stdout and run.stderr == ""


def test_min_rows_below_the_fold_count_is_refused_by_name_and_by_flag(tmp_path, capsys):
    import numpy as np

    from epsaudit.condition import audit_condition

    rng = np.random.default_rng(0)
    groups = {f"id{i}": rng.normal(size=(8, 4)) for i in range(3)}
    with pytest.raises(ValueError, match=r"^min_rows must be >= 5, the ROC-HT fold count"):
        audit_condition(groups, min_rows=2)  # the library names the parameter
    path = tmp_path / "t.csv"
    path.write_text("identity,e0,e1\n" + "".join(f"id{i},{rng.normal()},{rng.normal()}\n" for i in range(6) for _ in range(6)))
    assert main(["audit", str(path), "--min-rows", "2"]) == 2  # the command line names the flag
    assert "epsaudit: error: --min-rows must be >= 5, the ROC-HT fold count" in capsys.readouterr().err


def test_plan_gives_the_test_size_of_the_papers_cap(capsys):
    assert main(["plan", "--epsilon", "2.338", "--family", "250", "--bound", "clopper-pearson"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("To certify epsilon >= 2.338 with zero test errors, 95% over 250 certificate(s)")
    assert "clopper-pearson (the paper's): 100 test rows per identity; 99 rows certify at most 2.328" in out
    assert "at 0.0001]" in out and "joint" not in out
    # both bounds by default: epsilon 3 with one certificate needs 31 rows per side jointly, 76 split
    assert main(["plan", "--epsilon", "3", "--family", "1"]) == 0
    out = capsys.readouterr().out
    assert "joint (default): 31 test rows per identity; 30 rows certify at most 2.972" in out
    assert "clopper-pearson (the paper's): 76 test rows per identity" in out
    assert main(["plan", "--epsilon", "3", "--tpr", "0.9", "--fpr", "0.1"]) == 2
    assert "certifies at most 2.197" in capsys.readouterr().err


def test_audit_says_why_every_certificate_is_zero_when_test_sizes_hold_them_there(capsys):
    path = Path(__file__).resolve().parents[1] / "data" / "sface_small_swap.csv"
    args = ["audit", str(path), "--pairs", "20", "--kde-pairs", "5", "--roc-pairs", "10", "--jobs", "1"]
    assert main(args + ["--bound", "clopper-pearson"]) == 0
    err = capsys.readouterr().err
    assert "every certificate is 0 because of its test sizes (3-6 test rows per identity)" in err
    assert "needs at least 8 test rows per identity to certify anything above 0" in err
    assert "identities with at least 27 rows at test_size 0.3" in err
    assert "certificates: clopper-pearson bound" in err
    # the joint test certifies from fewer rows: the same 3-6 test rows give small positive bounds at their caps
    assert main(args) == 0
    out, err = capsys.readouterr()
    assert "certificates: joint bound" in err and "every certificate is 0" not in err
    rows = [line.split() for line in out.splitlines() if line.startswith("roc_reserved")]
    assert len(rows) == 5 and all(float(r[6]) > 0 and r[-2] == "joint" and r[6] == r[-1] for r in rows)  # value = cap


def test_plan_shows_enough_digits_and_says_nothing_when_tpr_does_not_exceed_fpr(capsys):
    # one row fewer than needed certifies less than the target, and the message shows enough digits to say so
    assert main(["plan", "--epsilon", "2", "--tpr", "0.9", "--fpr", "0.05", "--bound", "clopper-pearson"]) == 0
    out = capsys.readouterr().out
    assert "125 test rows per identity (so does every size up to 250); 124 rows certify at most 1.992" in out
    assert main(["plan", "--epsilon", "0.5", "--tpr", "0.3", "--fpr", "0.5"]) == 2
    assert "certifies nothing (TPR - delta does not exceed FPR)" in capsys.readouterr().err
