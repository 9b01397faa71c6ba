"""The book's checked claims: a sentence the run contradicts fails the book's build and shows a note elsewhere."""

from __future__ import annotations

import pytest

from epsaudit.studies import book


def test_a_claim_that_holds_is_silent(monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda *a, **k: shown.append(a))
    monkeypatch.setenv("EPSAUDIT_CLAIMS", "strict")
    assert book.claim("one is less than two", 1 < 2, one=1) is True
    assert shown == []


def test_a_broken_claim_fails_a_strict_run(monkeypatch):
    monkeypatch.setenv("EPSAUDIT_CLAIMS", "strict")
    with pytest.raises(book.ClaimError, match=r"the book says 'the cap is about 4.2', but this run has cap = 3.281"):
        book.claim("the cap is about 4.2", False, cap=3.2814)


def test_a_broken_claim_shows_a_note_elsewhere(monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj, **k: shown.append(obj.data))
    monkeypatch.delenv("EPSAUDIT_CLAIMS", raising=False)
    assert book.claim("the cap is about 4.2", False, cap=3.2814) is False
    assert len(shown) == 1
    assert "the cap is about 4.2" in shown[0] and "cap = 3.281" in shown[0]


@pytest.mark.parametrize("value, text", [("strict", True), ("STRICT ", True), ("", False), ("note", False)])
def test_strictness_comes_from_the_environment(monkeypatch, value, text):
    monkeypatch.setenv("EPSAUDIT_CLAIMS", value)
    assert book.claims_are_strict() is text


def test_reported_names_a_missing_table():
    with pytest.raises(FileNotFoundError, match="no such reported table"):
        book.reported("no_such_table")


@pytest.mark.parametrize("value, digits, text", [(4.19421, 2, "4.19"), (12345, 2, "12,345"), (float("nan"), 2, "–"),
                                                 (None, 2, "–"), (0.5, 3, "0.500"), (True, 2, "True")])
def test_one_number_format(value, digits, text):
    assert book.number(value, digits) == text


def _run_page(source_text: str, tmp_path, name: str, env_changes: dict, *parameters: str):
    """Execute a page's source text with papermill (this interpreter's kernel); return the run and output path."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    import jupytext

    root = Path(__file__).resolve().parents[1]
    kernels = tmp_path / "jupyter" / "kernels" / "epsaudit-claims-test"
    kernels.mkdir(parents=True, exist_ok=True)
    (kernels / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "epsaudit (claims test)", "language": "python"}))
    env = {**os.environ, "JUPYTER_PATH": str(tmp_path / "jupyter"), "EPSAUDIT_FIGURE_DIR": str(tmp_path / "figures")}
    env.pop("EPSAUDIT_CLAIMS", None)
    env.update(env_changes)
    source = tmp_path / f"{name}.ipynb"
    jupytext.write(jupytext.reads(source_text, fmt="py:percent"), source, fmt="ipynb")
    out = tmp_path / f"{name}-out.ipynb"
    run = subprocess.run([sys.executable, "-m", "papermill", "--kernel", "epsaudit-claims-test", "--cwd",
                          str(root / "notebooks"), "--no-progress-bar", str(source), str(out), *parameters],
                         env=env, capture_output=True, text=True, timeout=900)
    return run, out


@pytest.mark.slow
def test_a_changed_parameter_fails_the_book_and_shows_a_note_elsewhere(tmp_path):
    """The ten-minute page's prose quotes its run (KDE-LR about 3.5 at the exact null, ...). With another
    seed written into its parameters cell, the book's strict build fails on the claim; the same change
    given as a papermill parameter (a class's run) runs through and shows the note."""
    from pathlib import Path

    import nbformat

    page = (Path(__file__).resolve().parents[1] / "notebooks" / "00_ten_minutes.py").read_text(encoding="utf-8")
    assert "seed: int = 0" in page
    edited = page.replace("seed: int = 0", "seed: int = 1", 1)

    strict, _ = _run_page(edited, tmp_path, "strict", {"EPSAUDIT_CLAIMS": "strict"})
    assert strict.returncode != 0
    assert "ClaimError" in strict.stderr + strict.stdout and "the book says" in strict.stderr + strict.stdout

    lenient, out = _run_page(page, tmp_path, "class", {}, "-p", "seed", "1")
    assert lenient.returncode == 0, lenient.stderr[-3000:]
    notes = [o for c in nbformat.read(out, as_version=4).cells if c.cell_type == "code" for o in c.get("outputs", [])
             if "this run does not bear out the text above" in str(o.get("data", {}).get("text/markdown", ""))]
    assert notes, "the class's run shows no note for the claim its seed breaks"
