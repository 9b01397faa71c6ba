"""The chapters' papermill parameters: typed, checked in the first cell, and data paths from the repository.

A chapter declares its parameters in its ``parameters`` cell (``epsilon: float = 1.0  # ...``) and in
its study as :class:`Parameter` specifications; the next cell runs :func:`check` (the book's
introduction, section 'Re-running a chapter'). :func:`data_folder` resolves a data folder from
:data:`REPOSITORY`, never from the working directory. Shared specifications: :data:`PROFILE`,
:data:`SEED`, :data:`N_JOBS`; for chapters 3-5 :data:`DATA`, :data:`ENCODERS`, :data:`GENERATORS`.

Examples
--------
>>> spec = (Parameter("n", int, "test rows per identity", low=10, high=5000, optional=True), SEED)
>>> ns = {"n": 30, "seed": 0}
>>> check(ns, spec, "demo")
{'n': 30, 'seed': 0}
>>> check({"n": 3, "seed": 0}, spec, "demo")
Traceback (most recent call last):
...
ValueError: demo: parameter n = 3 is out of range; test rows per identity: an int from 10 to 5000, or None
>>> check({"n": 30, "seed": 0, "nn": 1}, spec, "demo")
Traceback (most recent call last):
...
ValueError: demo: unknown parameter 'nn' (= 1); this notebook's parameters are n (int), seed (int)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Iterable, MutableMapping, Sequence

from . import PROFILE_NAMES

__all__ = ["Parameter", "check", "subset", "REPOSITORY", "data_folder", "PROFILE", "SEED", "N_JOBS", "DATA",
           "ENCODERS", "GENERATORS"]

#: The repository the package was imported from (the folder holding ``epsaudit/`` and ``data/``).
REPOSITORY: Path = Path(__file__).resolve().parents[2]

#: The types of the values papermill injects (JSON/YAML values).
_INJECTABLE = (str, int, float, bool, list, dict, tuple)
_KIND_NAMES = {int: "int", float: "float", str: "str", bool: "bool"}


@dataclass(frozen=True)
class Parameter:
    """What one notebook parameter may be.

    Parameters
    ----------
    name : str
        The variable of the parameters cell.
    kind : type
        ``int``, ``float``, ``str`` or ``bool`` (an ``int`` is accepted for a ``float``, an integral
        ``float`` for an ``int``; a ``bool`` is never an ``int``).
    help : str
        One line: what it is and its unit (the parameters cell's comment).
    choices : tuple, optional
        The allowed values (for a list parameter: of each element).
    low, high : float, optional
        Inclusive range of the value (of each element).
    optional, many : bool
        ``None`` is allowed (the profile's value); a list of ``kind`` (a list/tuple, a comma-separated
        string or one bare value), at least one element, no repeats.
    """

    name: str
    kind: type
    help: str
    choices: tuple | None = None
    low: float | None = None
    high: float | None = None
    optional: bool = False
    many: bool = False

    def allowed(self) -> str:
        """The allowed values in words, e.g. ``"an int from 10 to 5000, or None"``."""
        kind = _KIND_NAMES.get(self.kind, self.kind.__name__)
        if self.choices is not None:
            text = "one of " + ", ".join(repr(c) for c in self.choices)
        elif self.low is not None and self.high is not None:
            text = f"a{'n' if kind[0] in 'aeiou' else ''} {kind} from {self.low:g} to {self.high:g}"
        elif self.low is not None:
            text = f"a{'n' if kind[0] in 'aeiou' else ''} {kind} >= {self.low:g}"
        elif self.high is not None:
            text = f"a{'n' if kind[0] in 'aeiou' else ''} {kind} <= {self.high:g}"
        else:
            text = f"a{'n' if kind[0] in 'aeiou' else ''} {kind}"
        if self.many:
            text = f"a list (or comma-separated string) of distinct values, each {text}"
        return text + (", or None" if self.optional else "")

    def coerce(self, value: Any, where: str) -> Any:
        """``value`` checked and converted to :attr:`kind` (a list of it when :attr:`many`).

        Raises
        ------
        ValueError
            Naming ``where``, the parameter, the value and :meth:`allowed`.
        """
        if value is None and self.optional:
            return None
        if self.many:
            if isinstance(value, str):
                items = [v.strip() for v in value.split(",")]
            elif isinstance(value, (int, float)):  # one bare value: papermill passes `-p sizes 300` as an int
                items = [value]
            else:
                items = value
            if not isinstance(items, (list, tuple)) or not items:
                raise self._error(value, where, "has the wrong type")
            out = [self._one(item, value, where) for item in items]
            if len(set(out)) != len(out):
                raise self._error(value, where, "repeats a value")
            return out
        return self._one(value, value, where)

    def _one(self, item: Any, value: Any, where: str) -> Any:
        converted = _convert(item, self.kind)
        if converted is None:
            raise self._error(value, where, "has the wrong type")
        if self.choices is not None and converted not in self.choices:
            raise self._error(value, where, "is not allowed")
        if (self.low is not None and converted < self.low) or (self.high is not None and converted > self.high):
            raise self._error(value, where, "is out of range")
        return converted

    def _error(self, value: Any, where: str, what: str) -> ValueError:
        return ValueError(f"{where}: parameter {self.name} = {value!r} {what}; {self.help}: {self.allowed()}")


def _convert(item: Any, kind: type) -> Any:
    """``item`` as ``kind``, or None when it cannot be one (strings from ``-p`` are parsed)."""
    if isinstance(item, str) and kind is not str:
        text = item.strip()
        if kind is bool:
            return {"true": True, "false": False}.get(text.lower())
        try:
            item = float(text) if kind is float else int(text)
        except ValueError:
            return None
    if kind is bool:
        return item if isinstance(item, bool) else None
    if isinstance(item, bool):
        return None
    if kind is float and isinstance(item, (int, float)) and math.isfinite(item):
        return float(item)
    if kind is int and isinstance(item, int):
        return item
    if kind is int and isinstance(item, float) and item.is_integer():
        return int(item)
    if kind is str and isinstance(item, str):
        return item
    return None


def subset(parameter: Parameter, choices: Iterable, **changes: Any) -> Parameter:
    """A copy of ``parameter`` with other allowed ``choices`` (and other fields ``changes``).

    Examples
    --------
    >>> subset(ENCODERS, ("dlib",)).choices
    ('dlib',)
    """
    return replace(parameter, choices=tuple(choices), **changes)


def _hidden_names() -> set[str]:
    """Names IPython puts in a kernel's namespace itself (``In``, ``Out``, ``get_ipython``, ...)."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency of the book extra only
        return set()
    shell = get_ipython()
    return set(getattr(shell, "user_ns_hidden", {}) or {})


def check(namespace: MutableMapping[str, Any], parameters: Sequence[Parameter], where: str) -> dict[str, Any]:
    """Check a notebook's parameters (call it with ``globals()`` right after the parameters cell).

    Parameters
    ----------
    namespace : mutable mapping
        The notebook's globals (checked values written back); any other public name holding what papermill
        can inject, other than IPython's, is an unknown parameter.
    parameters : sequence of Parameter
        The study's ``PARAMETERS``.
    where : str
        The chapter, for the messages.

    Returns
    -------
    dict
        Name -> checked value, in the order of ``parameters``.

    Raises
    ------
    ValueError
        An unknown parameter (naming it and the notebook's parameters), a declared one missing from the
        namespace, or a value of the wrong type or out of range (naming it and its allowed values).
    """
    declared = {p.name for p in parameters}
    hidden = _hidden_names()
    unknown = sorted(name for name, value in namespace.items()
                     if name not in declared and not name.startswith("_") and name not in hidden
                     and (value is None or isinstance(value, _INJECTABLE)))
    if unknown:
        listing = ", ".join(f"{p.name} ({_KIND_NAMES.get(p.kind, p.kind.__name__)})" for p in parameters)
        given = ", ".join(f"{name!r} (= {namespace[name]!r})" for name in unknown)
        raise ValueError(f"{where}: unknown parameter{'s' if len(unknown) > 1 else ''} {given}; "
                         f"this notebook's parameters are {listing}")
    out = {}
    for p in parameters:
        if p.name not in namespace:
            raise ValueError(f"{where}: parameter {p.name} is not set by the parameters cell ({p.help})")
        out[p.name] = namespace[p.name] = p.coerce(namespace[p.name], where)
    return out


def data_folder(folder: str | Path, required: Sequence[str] = ()) -> Path:
    """A data-folder parameter as an absolute path: relative paths are taken from :data:`REPOSITORY`.

    Parameters
    ----------
    folder : str or Path
        ``"data"``, ``"data/resampled"``, or an absolute path.
    required : sequence of str
        Files (relative to the folder) that must exist.

    Returns
    -------
    Path

    Raises
    ------
    ValueError
        If the folder or a required file does not exist (the message names the resolved path).

    Examples
    --------
    >>> data_folder("data").name
    'data'
    """
    path = Path(folder).expanduser()
    path = path if path.is_absolute() else REPOSITORY / path
    if not path.is_dir():
        raise ValueError(f"data folder {str(folder)!r} does not exist (resolved to {path}; relative folders are "
                         f"taken from the repository {REPOSITORY}, whose committed data are in data/)")
    missing = [name for name in required if not (path / name).exists()]
    if missing:
        raise ValueError(f"data folder {path} lacks {', '.join(missing)}")
    return path


# ---------------------------------------------------------------------------------------------
# Parameters every chapter shares, and those of the face chapters (3-5)

#: The run profile (every chapter): ``smoke`` for tests, ``full`` for the book, ``paper`` for the papers' counts.
PROFILE = Parameter("profile", str, "run profile", choices=PROFILE_NAMES)
#: The base seed of every random draw of a chapter.
SEED = Parameter("seed", int, "base seed of every draw", low=0, high=2**32 - 1)
#: joblib workers; the numbers never depend on it.
N_JOBS = Parameter("n_jobs", int, "parallel workers (the numbers do not depend on it)", low=1, high=256)
#: The data folder of a face chapter, relative to the repository (pass through :func:`data_folder`).
DATA = Parameter("data", str, "data folder, relative to the repository root")
#: Encoders a face chapter includes (a list; ``-p encoders dlib`` or ``-p encoders dlib,sface``).
ENCODERS = Parameter("encoders", str, "face encoders to include", choices=("dlib", "sface"), many=True)
#: Generators (anonymisers) a face chapter includes; ``none`` is the untouched photographs.
GENERATORS = Parameter("generators", str, "anonymisers to include", choices=("none", "swap", "dp-pix"), many=True)
