"""A navigable surface: every public function and class of the listed core modules names its
siblings in a numpydoc ``See Also`` section (each name resolves), and every documented parameter
with a default writes it in the type line as scikit-learn does (``alpha : float, default=0.05``).

``MODULES`` is the list checked: the bounds, the routes and certificates, the result type, the
protocol, the checks, the table audit and the operator model.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import textwrap

import pytest

MODULES = [
    "epsaudit.audits.batch",
    "epsaudit.audits.gaussmech",
    "epsaudit.audits.kde_lr",
    "epsaudit.audits.membership",
    "epsaudit.audits.mmd",
    "epsaudit.audits.roc_oof",
    "epsaudit.audits.roc_reserved",
    "epsaudit.audits.runner",
    "epsaudit.audits.sampler_audit",
    "epsaudit.audits.scorers",
    "epsaudit.audits.tradeoff",
    "epsaudit.audits.worst_pair",
    "epsaudit.results",
    "epsaudit.protocol",
    "epsaudit.validation",
    "epsaudit.condition",
    "epsaudit.operator",
    "epsaudit.bounds.binomial",
    "epsaudit.bounds.joint",
    "epsaudit.bounds.sequential",
    "epsaudit.bounds.conversions",
    "epsaudit.bounds.gaussian",
]

# numpydoc's section order (the sections these docstrings use).
ORDER = ["Parameters", "Attributes", "Returns", "Yields", "Other Parameters", "Raises", "Warns", "Warnings",
         "See Also", "Notes", "References", "Examples"]
_HEADER = re.compile(r"^([A-Z][A-Za-z ]*)\n(-{3,})$", re.M)
_ROLE = re.compile(r"^:\w+:`~?([^`]+)`$")
_PARAM = re.compile(r"^(\*{0,2}\w+(?:\s*,\s*\*{0,2}\w+)*)\s+:\s*(.*)$")


def public_objects(module_name: str) -> list[tuple[str, object]]:
    """The functions and classes a module exports: its ``__all__``, else its own names not starting with ``_``."""
    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n, obj in vars(module).items() if not n.startswith("_")
                 and getattr(obj, "__module__", None) == module_name]
    return [(n, getattr(module, n)) for n in names if inspect.isfunction(getattr(module, n))
            or inspect.isclass(getattr(module, n))]


def sections(obj) -> dict[str, str]:
    """Section title -> body of a numpy-style docstring (dedented as ``help`` shows it)."""
    doc = inspect.cleandoc(obj.__doc__ or "")
    heads = [m for m in _HEADER.finditer(doc) if len(m.group(2)) >= len(m.group(1))]
    return {m.group(1): doc[m.end():heads[i + 1].start() if i + 1 < len(heads) else len(doc)].strip("\n")
            for i, m in enumerate(heads)}


def see_also_names(body: str) -> list[str]:
    """The names a ``See Also`` body lists (``name : reason`` or ``name, name``, roles allowed)."""
    names = []
    for line in body.splitlines():
        if not line or line[0].isspace():
            continue  # a description's continuation
        head = line.split(" : ", 1)[0] if " : " in line else line.rstrip(":")
        names += [_ROLE.sub(r"\1", n.strip()) for n in head.split(",") if n.strip()]
    return names


def resolve(name: str, module):
    """The object a See Also name names: plain names in the module, dotted names from ``epsaudit...``."""
    if "." not in name:
        return getattr(module, name)
    if not name.startswith("epsaudit."):
        raise LookupError(f"{name!r}: a name from another module is written in full (epsaudit....)")
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise LookupError(name)


def parameter_lines(body: str) -> list[tuple[list[str], str]]:
    """``(names, type)`` of each ``name : type`` line of a Parameters section."""
    out = []
    for line in body.splitlines():
        if line and not line[0].isspace():
            match = _PARAM.match(line)
            if match:
                out.append(([n.strip().lstrip("*") for n in match.group(1).split(",")], match.group(2)))
    return out


def source_defaults(obj) -> dict[str, str]:
    """Parameter name -> its default as written in the source (``DEFAULT_BOUND``, ``1e-5``)."""
    func = obj.__init__ if inspect.isclass(obj) else obj
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    except (OSError, TypeError, SyntaxError):
        return {}
    node = next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if node is None:
        return {}
    positional = node.args.posonlyargs + node.args.args
    pairs = list(zip(positional[len(positional) - len(node.args.defaults):], node.args.defaults))
    pairs += [(a, d) for a, d in zip(node.args.kwonlyargs, node.args.kw_defaults) if d is not None]
    return {a.arg: ast.unparse(d) for a, d in pairs}


def signature_defaults(obj) -> dict[str, object]:
    try:
        params = inspect.signature(obj).parameters
    except (TypeError, ValueError):
        return {}
    return {n: p.default for n, p in params.items() if p.default is not inspect.Parameter.empty}


def default_matches(text: str, name: str, value, written: dict[str, str]) -> bool:
    """Whether ``default=text`` states the signature's default: its value, or its source expression."""
    if text == written.get(name):
        return True
    try:
        return ast.literal_eval(text) == value
    except (ValueError, SyntaxError, TypeError):
        return False


CASES = [(m, n) for m in MODULES for n, _ in public_objects(m)]


def _object(module_name: str, name: str):
    return getattr(importlib.import_module(module_name), name)


@pytest.mark.parametrize(("module_name", "name"), CASES, ids=[f"{m}.{n}" for m, n in CASES])
def test_public_names_have_a_see_also_section_that_resolves(module_name, name):
    obj = _object(module_name, name)
    found = sections(obj)
    assert "See Also" in found, f"{module_name}.{name}: no See Also section (found {list(found)})"
    titles = [t for t in found if t in ORDER]
    assert titles == sorted(titles, key=ORDER.index), f"{module_name}.{name}: sections out of numpydoc order {titles}"
    names = see_also_names(found["See Also"])
    assert names, f"{module_name}.{name}: an empty See Also section"
    module = importlib.import_module(module_name)
    for entry in names:
        assert entry != name, f"{module_name}.{name}: See Also names the object itself"
        try:
            target = resolve(entry, module)
        except (AttributeError, LookupError) as error:
            pytest.fail(f"{module_name}.{name}: See Also entry {entry!r} does not resolve ({error})")
        if "." not in entry and (inspect.isfunction(target) or inspect.isclass(target)):
            assert target.__module__ == module_name, (
                f"{module_name}.{name}: {entry!r} is defined in {target.__module__}; write it in full")


@pytest.mark.parametrize(("module_name", "name"), CASES, ids=[f"{m}.{n}" for m, n in CASES])
def test_parameters_with_a_default_state_it_in_the_type_line(module_name, name):
    obj = _object(module_name, name)
    body = sections(obj).get("Parameters", "")
    defaults, written = signature_defaults(obj), source_defaults(obj)
    for names, type_line in parameter_lines(body):
        stated = re.search(r"(?:^|,\s*)default=(.+)$", type_line)
        with_default = [n for n in names if n in defaults]
        if stated:
            assert with_default, f"{module_name}.{name}: {names} states a default the signature does not have"
            for n in with_default:
                assert default_matches(stated.group(1).strip(), n, defaults[n], written), (
                    f"{module_name}.{name}: {n} : ...default={stated.group(1)} but the signature has "
                    f"{written.get(n, defaults[n])!r}")
        elif any(defaults[n] is not None for n in with_default):
            pytest.fail(f"{module_name}.{name}: {', '.join(names)} : {type_line} -- the default "
                        f"{[written.get(n, defaults[n]) for n in with_default]} is not in the type line (default=...)")


def test_the_checks_see_what_they_check():
    def demo(alpha=0.05, n_jobs=None, bound="joint"):
        """Demo.

        Parameters
        ----------
        alpha : float, default=0.05
            Level.
        n_jobs : int, optional
            Workers.
        bound : {"joint", "clopper-pearson"}, default="joint"
            Which.

        See Also
        --------
        results_frame : a table of results.
        epsaudit.validation.as_pair, epsaudit.audits.reserved_test_certificate
        """

    found = sections(demo)
    assert list(found) == ["Parameters", "See Also"]
    assert see_also_names(found["See Also"]) == ["results_frame", "epsaudit.validation.as_pair",
                                                 "epsaudit.audits.reserved_test_certificate"]
    module = importlib.import_module("epsaudit.results")
    assert all(resolve(n, module) for n in see_also_names(found["See Also"]))
    with pytest.raises(AttributeError):
        resolve("no_such_name", module)
    with pytest.raises(AttributeError):
        resolve("epsaudit.validation.no_such_name", module)
    lines = parameter_lines(found["Parameters"])
    assert lines[0] == (["alpha"], "float, default=0.05") and lines[1] == (["n_jobs"], "int, optional")
    assert default_matches('"joint"', "bound", "joint", {}) and not default_matches("0.1", "alpha", 0.05, {})
    assert default_matches("DEFAULT_BOUND", "bound", "joint", {"bound": "DEFAULT_BOUND"})
