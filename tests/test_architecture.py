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


def test_no_core_module_imports_the_builder():
    """The data builder (``epsaudit.build``: photographs to embeddings) sits behind the auditing core:
    only the builder itself and the chapter layer (studies) import it."""
    offenders = {}
    for path in PACKAGE.rglob("*.py"):
        if path.relative_to(PACKAGE).parts[0] in ("build", "studies"):
            continue
        hits = sorted(m for m in _imported_modules(path) if m == "epsaudit.build" or m.startswith("epsaudit.build."))
        if hits:
            offenders[str(path.relative_to(ROOT))] = hits
    assert offenders == {}


#: The public core API a notebook may import besides its study: packages and
#: modules whose ``__all__`` is the public surface (ARCHITECTURE.md). Nothing below them
#: (``epsaudit.bounds.binomial``, ``epsaudit.audits.roc_reserved``) and no private name.
PUBLIC_CORE = frozenset({
    "epsaudit", "epsaudit.audits", "epsaudit.bounds", "epsaudit.mechanisms", "epsaudit.data", "epsaudit.results",
    "epsaudit.sniper", "epsaudit.audits.membership", "epsaudit.protocol", "epsaudit.condition", "epsaudit.data.corpora",
    "epsaudit.operator", "epsaudit.validation",
})
#: Study modules every chapter may import besides its own: the checked papermill parameters.
SHARED_STUDIES = frozenset({"epsaudit.studies.parameters", "epsaudit.studies.book", "epsaudit.studies.figures"})  # parameters, claims, tables, figure style


def _notebook_imports(path: Path) -> list[tuple[str, tuple[str, ...]]]:
    """``(module, names)`` of each epsaudit import of a notebook (``names`` empty for ``import m``)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("epsaudit"):
            out.append((node.module, tuple(alias.name for alias in node.names)))
        elif isinstance(node, ast.Import):
            out += [(alias.name, ()) for alias in node.names if alias.name.startswith("epsaudit")]
    return out


def _public_names(module: str) -> set[str]:
    """A module's public names: its ``__all__`` (and submodules) if it has one, else every name not
    starting with ``_``."""
    import importlib

    mod = importlib.import_module(module)
    if not hasattr(mod, "__all__"):
        return {n for n in dir(mod) if not n.startswith("_")}
    return set(mod.__all__) | {n for n in dir(mod) if not n.startswith("_") and type(getattr(mod, n)).__name__ == "module"}


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_a_notebook_imports_its_study_and_the_public_api_only(notebook):
    studies, problems = set(), []
    for module, names in _notebook_imports(notebook):
        targets = [f"{module}.{n}" for n in names] if module in ("epsaudit", "epsaudit.studies") else [module]
        for target in targets:
            if target.startswith("epsaudit.studies."):
                if target not in SHARED_STUDIES:
                    studies.add(target)
            elif target in PUBLIC_CORE or (module == "epsaudit" and names):
                if module == "epsaudit" and target not in PUBLIC_CORE:
                    public = _public_names("epsaudit")
                    if target.rsplit(".", 1)[1] not in public:
                        problems.append(f"{target}: not public")
                for name in names if module != "epsaudit" else ():
                    if name.startswith("_") or name not in _public_names(module):
                        problems.append(f"{module}.{name}: not in the public API of {module}")
            else:
                problems.append(f"{target}: below the public API")
    assert problems == [], f"{notebook.name} imports library internals: {problems}"
    assert len(studies) == 1, f"{notebook.name} should import exactly one study module, got {sorted(studies)}"


# ---------------------------------------------------------------------------------------------
# The map in ARCHITECTURE.md and the layout rules it states


def _modules() -> set[str]:
    return {p.relative_to(ROOT).as_posix() for p in PACKAGE.rglob("*.py")
            if p.name not in ("__init__.py", "__main__.py") and "__pycache__" not in p.parts}


def _map() -> dict[str, str]:
    """``path -> layer`` of every line in the map's text block of ARCHITECTURE.md."""
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    block = text.split("## Map", 1)[1].split("```text", 1)[1].split("```", 1)[0]
    rows = [line.split() for line in block.strip().splitlines()]
    return {row[0]: row[1] for row in rows}


def test_the_map_is_the_tree():
    listed, tree = set(_map()), _modules()
    assert (sorted(tree - listed), sorted(listed - tree)) == ([], []), "(not in the map, not in the tree)"


def test_the_map_names_each_modules_layer_and_the_layers_import_downwards():
    layers = _map()
    assert set(layers.values()) <= {"core", "around", "build", "book"}
    rank = {"core": 0, "around": 1, "build": 2, "book": 3}
    offenders = []
    for path, layer in layers.items():
        for module in _imported_modules(ROOT / path):
            target = module.replace(".", "/") + ".py"
            if target in layers and rank[layers[target]] > rank[layer]:
                offenders.append(f"{path} ({layer}) imports {target} ({layers[target]})")
    assert offenders == []


def test_one_name_one_module_and_at_most_eight_top_level_modules():
    names = [Path(m).name for m in _modules()]
    assert sorted({n for n in names if names.count(n) > 1}) == []
    top = sorted(p.name for p in PACKAGE.glob("*.py") if p.name not in ("__init__.py", "__main__.py"))
    assert len(top) <= 8, top


def test_no_module_imports_another_modules_private_name():
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                private = [a.name for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
                if private:
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} {private}")
    assert offenders == []
