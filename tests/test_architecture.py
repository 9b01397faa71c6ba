"""The layering the architecture promises: a core that knows no chapter, thin notebooks."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "epsaudit"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.py"))


def _imported_modules(path: Path) -> set[str]:
    """Absolute names of the epsaudit modules a file imports (relative imports resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    if path.name != "__init__.py":
        package = package.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            out.add(base)
            out |= {f"{base}.{alias.name}" for alias in node.names}  # "from pkg import module"
        elif isinstance(node, ast.Import):
            out |= {alias.name for alias in node.names}
    return {name for name in out if name.startswith("epsaudit")}


def test_no_core_module_imports_a_study():
    offenders = {}
    for path in PACKAGE.rglob("*.py"):
        if "studies" in path.relative_to(PACKAGE).parts:
            continue
        hits = sorted(m for m in _imported_modules(path) if m.startswith("epsaudit.studies"))
        if hits:
            offenders[str(path.relative_to(ROOT))] = hits
    assert offenders == {}


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_a_notebook_imports_its_study_and_plotting_only(notebook):
    modules = {m for m in _imported_modules(notebook)}
    studies = {m for m in modules if m.startswith("epsaudit.studies.")}
    others = modules - studies - {"epsaudit", "epsaudit.plotting", "epsaudit.studies"}
    assert others == set(), f"{notebook.name} imports library internals: {sorted(others)}"
    assert len(studies) == 1, f"{notebook.name} should import exactly one study module, got {sorted(studies)}"
