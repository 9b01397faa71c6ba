"""The jupytext sources ``notebooks/*.py`` and their paired ``.ipynb`` files agree.

The ``.py`` file is the source a person edits and reviews; the paired ``.ipynb`` is what papermill
and Jupyter open. ``make sync`` (``jupytext --sync``) keeps them together; these tests catch a
pair that drifted apart, a notebook missing its partner, and a notebook without the ``profile``
parameter that ``make notebooks`` and the book test pass to papermill.
"""

from __future__ import annotations

import ast
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
