"""The jupytext sources ``notebooks/*.py`` and their paired ``.ipynb`` files agree.

The ``.py`` file is the source a person edits and reviews; the paired ``.ipynb`` is what papermill
and Jupyter open. ``make sync`` rewrites each ``.ipynb`` from its ``.py`` (the source always wins,
whichever file is newer); these tests catch a pair that drifted apart, a notebook missing its
partner, a ``make sync`` that would let a newer ``.ipynb`` override the source, a notebook without
the ``profile`` parameter that ``make notebooks`` and the book test pass to papermill, and a
parameter without the type and one-line help that ``papermill --help-notebook`` shows.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK_DIR = ROOT / "notebooks"
SOURCES = sorted(NOTEBOOK_DIR.glob("*.py"))
IPYNBS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))

_NO_NOTEBOOKS = "no notebooks/*.py or notebooks/*.ipynb in the repository yet"


def _cells(notebook) -> list[tuple[str, str]]:
    return [(cell.cell_type, cell.source) for cell in notebook.cells]


def _ids(path: Path | None) -> str:
    return path.name if path is not None else "none"


@pytest.mark.parametrize("py", SOURCES or [None], ids=_ids)
def test_source_has_paired_ipynb_in_sync(py: Path | None) -> None:
    if py is None:
        if IPYNBS:
            pytest.fail(f"notebooks without a jupytext .py source: {[p.name for p in IPYNBS]}")
        pytest.skip(_NO_NOTEBOOKS)
    ipynb = py.with_suffix(".ipynb")
    assert ipynb.exists(), f"{py.name} has no paired {ipynb.name}; run `make sync`"

    from_py = _cells(jupytext.read(py))
    from_ipynb = _cells(jupytext.read(ipynb))
    assert len(from_py) == len(from_ipynb), (
        f"{py.name} has {len(from_py)} cells but {ipynb.name} has {len(from_ipynb)}; "
        "run `make sync`"
    )
    for index, (a, b) in enumerate(zip(from_py, from_ipynb)):
        assert a == b, (
            f"cell {index} differs between {py.name} and {ipynb.name} "
            f"({a[0]} vs {b[0]}); run `make sync`"
        )


@pytest.mark.parametrize("ipynb", IPYNBS or [None], ids=_ids)
def test_every_ipynb_has_a_py_source(ipynb: Path | None) -> None:
    if ipynb is None:
        pytest.skip(_NO_NOTEBOOKS)
    assert ipynb.with_suffix(".py").exists(), (
        f"{ipynb.name} has no jupytext source {ipynb.with_suffix('.py').name}"
    )


@pytest.mark.parametrize("py", SOURCES or [None], ids=_ids)
def test_notebook_has_profile_parameter(py: Path | None) -> None:
    """papermill injects ``profile`` after the cell tagged ``parameters``; it must exist."""
    if py is None:
        pytest.skip(_NO_NOTEBOOKS)
    notebook = jupytext.read(py)
    tagged = [
        cell
        for cell in notebook.cells
        if cell.cell_type == "code" and "parameters" in cell.metadata.get("tags", [])
    ]
    assert len(tagged) == 1, f"{py.name}: expected exactly one cell tagged 'parameters'"
    assigned = {
        target.id
        for node in ast.walk(ast.parse(tagged[0].source))
        if isinstance(node, (ast.Assign, ast.AnnAssign))
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Name)
    }
    assert "profile" in assigned, f"{py.name}: the parameters cell does not set `profile`"


def test_make_sync_takes_the_source_when_the_ipynb_is_newer(tmp_path: Path) -> None:
    """An edit of the .py survives `make sync` although the .ipynb was saved after it."""
    source = SOURCES[0] if SOURCES else pytest.skip(_NO_NOTEBOOKS)
    py, ipynb = tmp_path / source.name, tmp_path / source.with_suffix(".ipynb").name
    shutil.copy2(source, py)
    shutil.copy2(source.with_suffix(".ipynb"), ipynb)
    marker = "# an edit of the source that must survive make sync"
    py.write_text(py.read_text(encoding="utf-8") + f"\n# %%\n{marker}\n", encoding="utf-8")
    edited = py.read_bytes()
    later = py.stat().st_mtime + 60
    os.utime(ipynb, (later, later))  # the .ipynb is newer, as after an editor save or a checkout
    bin_dir = Path(sys.executable).parent
    run = subprocess.run(["make", "--no-print-directory", "-C", str(ROOT), "_sync", f"SYNC_SOURCES={py}",
                          f"BIN={bin_dir}"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert py.read_bytes() == edited, "make sync rewrote the .py source"
    assert _cells(jupytext.read(ipynb)) == _cells(jupytext.read(py)), "the .ipynb did not take the source's cells"
    assert marker in ipynb.read_text(encoding="utf-8")


@pytest.mark.parametrize("py", SOURCES or [None], ids=_ids)
def test_every_parameter_has_a_type_and_a_help_text(py: Path | None) -> None:
    """`papermill --help-notebook` shows a type and a one-line help for every parameter, and `seed`."""
    if py is None:
        pytest.skip(_NO_NOTEBOOKS)
    from papermill.translators import PythonTranslator

    cells = [c for c in jupytext.read(py).cells if "parameters" in c.metadata.get("tags", [])]
    assert cells, f"{py.name}: no cell tagged 'parameters'"
    params = PythonTranslator.inspect(cells[0])  # what papermill --help-notebook prints
    names = [p.name for p in params]
    assert {"profile", "seed"} <= set(names), f"{py.name}: the parameters cell lacks profile or seed: {names}"
    untyped = [p.name for p in params if p.inferred_type_name in ("None", "")]
    unhelped = [p.name for p in params if not p.help.strip()]
    assert not untyped, f"{py.name}: parameters without a type annotation (papermill shows 'Unknown type'): {untyped}"
    assert not unhelped, f"{py.name}: parameters without a help comment: {unhelped}"


@pytest.mark.parametrize("py", SOURCES or [None], ids=_ids)
def test_parameters_are_checked_in_the_first_cell(py: Path | None) -> None:
    """The cell after the parameters cell checks them (epsaudit.studies.parameters.check) against the study's
    PARAMETERS, whose names are exactly the parameters cell's: an unknown or out-of-range value stops there."""
    if py is None:
        pytest.skip(_NO_NOTEBOOKS)
    import importlib
    import re

    from papermill.translators import PythonTranslator

    cells = jupytext.read(py).cells
    first = next(i for i, c in enumerate(cells) if "parameters" in c.metadata.get("tags", []))
    following = next((c for c in cells[first + 1:] if c.cell_type == "code"), None)
    assert following is not None and re.search(r"check\w*\(\s*globals\(\)", following.source), (
        f"{py.name}: the code cell after the parameters cell must check them "
        "(parameters.check(globals(), study.PARAMETERS, ...) or the study's wrapper of it)")
    module = re.search(r"from epsaudit\.studies import (\w+) as study", following.source)
    spec = re.search(r"parameters\.check\(globals\(\),\s*study\.(\w+)", following.source)
    study = importlib.import_module(f"epsaudit.studies.{module.group(1)}") if module else None
    declared = getattr(study, spec.group(1) if spec else "PARAMETERS", None) if study else None
    if declared is None:
        return  # a study's own wrapper; the papermill run of the chapter checks it
    in_cell = [p.name for p in PythonTranslator.inspect(cells[first])]
    assert sorted(p.name for p in declared) == sorted(in_cell), (
        f"{py.name}: parameters cell {in_cell} but the study checks {[p.name for p in declared]}")
