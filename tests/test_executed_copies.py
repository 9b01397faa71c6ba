"""An executed copy of a chapter is a plain notebook: no jupytext pairing travels with it.

The chapters in ``notebooks/`` are paired with their jupytext sources by ``notebooks/jupytext.toml``
(``x.ipynb`` <-> ``x.py``), not by their own metadata. papermill copies a notebook's metadata into its
output, so a pairing in the metadata (``metadata.jupytext.formats``) made every executed copy paired
too: a student who opened ``out.ipynb`` in JupyterLab with jupytext installed and saved it created
``out.py``; after papermill wrote ``out.ipynb`` again, opening it failed with "HTTP 400: Bad Request
(out.ipynb ... is more recent than out.py)". These tests drive that round trip as a class does, for
the three routes: bare papermill, ``make chapter`` and ``make notebooks`` (the Makefile's execute step,
which also drops any pairing from its output).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jupytext
import nbformat
import pytest
from jupytext.config import load_jupytext_config
from jupytext.paired_paths import paired_paths

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK_DIR = ROOT / "notebooks"
BIN = Path(sys.executable).parent
#: The chapter the round trip executes (the fastest real one, about half a minute at the smoke profile).
CHAPTER = NOTEBOOK_DIR / "00_ten_minutes.ipynb"


def _pairing(path: Path) -> str | None:
    """The formats jupytext pairs ``path`` with: from its metadata, else from a configuration file."""
    if path.exists():
        formats = jupytext.read(path).metadata.get("jupytext", {}).get("formats")
        if formats:
            return formats
    config = load_jupytext_config(str(path))
    return config.default_formats(str(path)) if config is not None else None


def _files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()
                  and ".ipynb_checkpoints" not in p.parts)


@pytest.mark.parametrize("source", sorted(NOTEBOOK_DIR.glob("*.py")) + sorted(NOTEBOOK_DIR.glob("*.ipynb")),
                         ids=lambda p: p.name)
def test_sources_carry_no_pairing_in_their_metadata(source: Path) -> None:
    """The pairing is the folder's (notebooks/jupytext.toml): papermill would copy one in the metadata."""
    metadata = jupytext.read(source).metadata
    assert "formats" not in metadata.get("jupytext", {}), (
        f"{source.name} pairs itself in its metadata (jupytext.formats = {metadata['jupytext']['formats']!r}): "
        "every executed copy would be paired with a .py; the pairing belongs in notebooks/jupytext.toml")


@pytest.mark.parametrize("source", sorted(NOTEBOOK_DIR.glob("*.ipynb")), ids=lambda p: p.name)
def test_the_chapters_are_paired_by_their_folder(source: Path) -> None:
    """`make sync`, `jupytext --sync` and JupyterLab pair notebooks/x.ipynb with notebooks/x.py."""
    assert _pairing(source) == "ipynb,py:percent"
    assert [Path(p).name for p, _ in paired_paths(str(source), "ipynb", _pairing(source))] == [
        source.name, source.with_suffix(".py").name]


@pytest.mark.parametrize("copy", ["out.ipynb", "book/executed/00_ten_minutes.ipynb",
                                  "_build/chapters/smoke/00_ten_minutes.ipynb", "_build/notebooks/00_ten_minutes.ipynb"])
def test_copies_outside_the_notebooks_folder_are_not_paired(copy: str) -> None:
    """papermill's output in the checkout, `make notebooks`' and `make chapter`'s copies and the scratch input."""
    path = ROOT / copy
    config = load_jupytext_config(str(path))
    assert config is None or config.default_formats(str(path)) is None, f"{copy} would be paired: {config.formats}"


def test_the_makefile_execute_step_drops_a_pairing(tmp_path: Path) -> None:
    """`make chapter` and `make notebooks` pass papermill's output through HIDE_INJECTED, which drops any pairing."""
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 + 1")])
    notebook.metadata["jupytext"] = {"formats": "ipynb,py:percent", "kept": True}
    path = tmp_path / "out.ipynb"
    nbformat.write(notebook, path)
    hide = subprocess.run(["make", "--no-print-directory", "-s", "-C", str(ROOT), "--eval",
                           "print-hide-injected: ; @printf '%s' \"$$HIDE_INJECTED\"", "print-hide-injected"],
                          capture_output=True, text=True)
    assert hide.returncode == 0 and "import json" in hide.stdout, hide.stderr
    run = subprocess.run([sys.executable, "-c", hide.stdout, str(path)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert json.loads(path.read_text(encoding="utf-8"))["metadata"]["jupytext"] == {"kept": True}
    del notebook.metadata["jupytext"]["kept"]
    nbformat.write(notebook, path)
    subprocess.run([sys.executable, "-c", hide.stdout, str(path)], check=True)
    assert "jupytext" not in json.loads(path.read_text(encoding="utf-8"))["metadata"]


def _papermill(source: Path, output: Path, *parameters: str) -> None:
    """What the course types from the repository root: papermill notebooks/<chapter>.ipynb out.ipynb -p profile smoke ..."""
    run = subprocess.run([str(BIN / "papermill"), str(source.relative_to(ROOT)), str(output), "-p", "profile", "smoke",
                          *parameters], capture_output=True, text=True, cwd=ROOT,
                         env={**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"})
    assert run.returncode == 0, run.stderr[-3000:]


@pytest.mark.slow
def test_open_save_and_execute_again_as_jupyterlab_does(tmp_path: Path) -> None:
    """papermill -> JupyterLab (jupytext's contents manager) opens and saves -> papermill again -> opens: no error, no .py."""
    from jupytext import TextFileContentsManager

    _papermill(CHAPTER, tmp_path / "out.ipynb")
    executed = json.loads((tmp_path / "out.ipynb").read_text(encoding="utf-8"))
    assert "formats" not in executed["metadata"].get("jupytext", {}), executed["metadata"]
    assert executed["metadata"]["papermill"]["parameters"] == {"profile": "smoke"}

    cm = TextFileContentsManager(root_dir=str(tmp_path))
    model = cm.get("out.ipynb")
    assert model["type"] == "notebook" and model["content"]["cells"]
    cm.save(model, "out.ipynb")  # the student's save
    assert _files(tmp_path) == ["out.ipynb"], "saving the executed copy created a paired file"

    _papermill(CHAPTER, tmp_path / "out.ipynb", "-p", "epsilon", "2", "-p", "n", "30")  # the class changes a parameter
    model = cm.get("out.ipynb")  # was: HTTP 400 "out.ipynb ... is more recent than out.py"
    assert model["content"]["metadata"]["papermill"]["parameters"] == {"profile": "smoke", "epsilon": 2, "n": 30}
    cm.save(model, "out.ipynb")
    assert _files(tmp_path) == ["out.ipynb"]


@pytest.mark.slow
def test_make_chapter_copy_opens_and_saves_alone(tmp_path: Path) -> None:
    """`make chapter`'s route (jupytext source -> scratch .ipynb -> papermill -> HIDE_INJECTED), then JupyterLab."""
    from jupytext import TextFileContentsManager

    output = tmp_path / "chapters" / "00_ten_minutes.ipynb"
    run = subprocess.run(["make", "--no-print-directory", "-C", str(ROOT), "_chapter",
                          f"SRC=notebooks/{CHAPTER.with_suffix('.py').name}", f"OUTNB={output}", "PROFILE=smoke",
                          f"BIN={BIN}", f"NB_SCRATCH={tmp_path / 'scratch'}"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    executed = json.loads(output.read_text(encoding="utf-8"))
    assert "formats" not in executed["metadata"].get("jupytext", {}), executed["metadata"]
    cm = TextFileContentsManager(root_dir=str(output.parent))
    cm.save(cm.get(output.name), output.name)
    assert _files(output.parent) == [output.name]
    shutil.rmtree(tmp_path / "scratch", ignore_errors=True)
