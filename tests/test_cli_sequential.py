"""``epsaudit plan --sequential`` and ``epsaudit certify-stream`` (issue 25)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import threading
import time

import pytest

from epsaudit.cli import main
from epsaudit.cli import EXIT_CODES


def rows(errors, ids=True, start=0):
    head = "side,erred,draw_id\n" if ids else "side,erred\n"
    return head + "".join(f"{'AB'[i % 2]},{int(e)}" + (f",d{start + i}" if ids else "") + "\n"
                          for i, e in enumerate(errors))


def run(tmp_path, text, *options, capsys=None):
    path = tmp_path / "rows.csv"
    path.write_text(text, encoding="utf-8")
    return main(["certify-stream", str(path), *options])


def test_plan_sequential_prints_the_stopping_rows_and_the_power(capsys):
    assert main(["plan", "--epsilon", "2", "--delta", "0", "--bound", "joint", "--sequential", "--runs", "100"]) == 0
    out = capsys.readouterr().out
    assert "joint (default): 12 test rows per identity" in out
    assert "sequential (anytime-valid, prior B): stops at 29 rows (15 of A, 14 of B) with zero errors" in out
    assert "at the planned rates (FPR 0, FNR 0): the fixed size certifies with probability 100%" in out
    assert "if the rates are off (FPR 0.01, FNR 0.01)" in out


def test_plan_sequential_with_planned_rates_uses_the_plan_informed_prior(capsys):
    assert main(["plan", "--epsilon", "2", "--delta", "0", "--tpr", "0.98", "--fpr", "0.02", "--bound", "joint",
                 "--sequential", "--runs", "100"]) == 0
    out = capsys.readouterr().out
    assert "prior H:0.02" in out and "(FPR 0.04, FNR 0.04)" in out and "median" in out and "90%" in out


@pytest.mark.parametrize("errors, options, reason", [
    ([False] * 40, ["--target", "2"], "target reached"),
    ([False] * 40, ["--claim", "1"], "claim refuted"),
    ([True, False] * 20, ["--budget", "10"], "budget spent"),
    ([False] * 40, ["--target", "3", "--budget", "40"], "futile"),
    ([False] * 10, ["--target", "3"], None),
])
def test_certify_stream_exits_by_its_stop_reason(tmp_path, capsys, errors, options, reason):
    assert run(tmp_path, rows(errors), *options) == EXIT_CODES[reason]
    out = capsys.readouterr().out
    assert f"stop: {reason or 'input ended before any stop rule'}" in out and "bound" in out


def test_exit_codes_are_distinct_and_documented(capsys):
    assert len(set(EXIT_CODES.values())) == len(EXIT_CODES) and 2 not in EXIT_CODES.values()
    with pytest.raises(SystemExit):
        main(["certify-stream", "--help"])
    text = capsys.readouterr().out
    for code in (0, 3, 4, 5, 6, 2):
        assert f"  {code}  " in text


def test_certify_stream_prints_the_running_bound_and_writes_its_record(tmp_path, capsys):
    record = tmp_path / "cert.json"
    assert run(tmp_path, rows([False] * 40), "--target", "2", "--record", str(record), "--test-hash", "abc") == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].startswith("row 1: A ok") and sum(line.startswith("row ") for line in out) == 29
    rec = json.loads(record.read_text())
    assert rec["test_hash"] == "abc" and rec["draw_ids"][:2] == ["d0", "d1"] and len(rec["bound_path"]) == 29


def test_certify_stream_refuses_bad_rows_and_reused_draws(tmp_path, capsys):
    assert run(tmp_path, "side,erred\nA,0\nC,1\n", "--target", "2") == 2
    assert "line 3, column side" in capsys.readouterr().err
    assert run(tmp_path, "side,erred\nA,maybe\n") == 2
    assert "line 2, column erred" in capsys.readouterr().err
    assert run(tmp_path, "side,error\nA,0\n") == 2
    assert "header needs the columns side and erred" in capsys.readouterr().err
    assert run(tmp_path, "side,erred,draw_id\nA,0,x\nB,0,x\n", "--target", "2") == 2
    assert "occurs twice" in capsys.readouterr().err


def test_certify_stream_reads_standard_input(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO(rows([False] * 40, ids=False)))
    assert main(["certify-stream", "-", "--target", "2", "--every", "10"]) == 0
    assert "row 10:" in capsys.readouterr().out


def test_certify_stream_follows_a_growing_file(tmp_path, capsys):
    path = tmp_path / "grow.csv"
    path.write_text("side,erred,draw_id\n", encoding="utf-8")

    def writer():
        for i in range(40):
            with path.open("a", encoding="utf-8") as f:
                f.write(f"{'AB'[i % 2]},0,d{i}" if i == 5 else f"{'AB'[i % 2]},0,d{i}\n")
                if i == 5:
                    f.flush()
                    time.sleep(0.05)
                    f.write("\n")  # a line written in two parts
            time.sleep(0.01)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        assert main(["certify-stream", str(path), "--follow", "--poll", "0.02", "--timeout", "5",
                     "--target", "2"]) == 0
    finally:
        thread.join()
    assert "stop: target reached after 29 row(s)" in capsys.readouterr().out
    start = time.perf_counter()
    assert main(["certify-stream", str(path), "--follow", "--poll", "0.05", "--timeout", "0.3", "--target", "5"]) == 6
    assert time.perf_counter() - start < 5


def test_help_names_the_new_command():
    out = subprocess.run([sys.executable, "-m", "epsaudit", "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "certify-stream" in out.stdout
