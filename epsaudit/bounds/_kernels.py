"""The compiled kernels: built ahead of time when there is a build of the current sources, else numba's.

numba compiles :mod:`epsaudit.bounds._joint_kernel` (the exact joint bound) and
:mod:`epsaudit.bounds._sequential_kernel` (the sequential plan's screen) on first use and caches them on
disk, but importing numba and loading a cached kernel costs about a second in every new process
(``epsaudit plan`` as typed). :mod:`epsaudit.bounds._build_kernel` compiles the same functions into one C
extension, ``_kernels_aot``, beside the sources, and records the SHA-256 of the sources it was built from;
:func:`load` uses the extension only while that hash matches (else numba's; ``EPSAUDIT_KERNEL=jit`` forces
numba's).
"""

from __future__ import annotations

import hashlib
import os
import pathlib
from functools import lru_cache
from types import SimpleNamespace

HERE = pathlib.Path(__file__).resolve().parent
SOURCES = (HERE / "_joint_kernel.py", HERE / "_sequential_kernel.py", HERE / "_kernels.py")  # and the signatures
HASH_FILE = HERE / "_kernels_aot.sha256"

_TAIL = "i8[:], i8, i8, f8[:], f8[:], f8"  # c, n_neg, n_pos, lcx, lcy, window_sd
_PRIOR = "f8[:], b1[:], f8[:, :, :]"  # log weights, point masses, lgamma tables
SIGNATURES = {  # name: (module, signature)
    "cells": ("_joint_kernel", f"f8[:](i8, f8, f8, f8[:], f8[:], {_TAIL})"),
    "at_thetas": ("_joint_kernel", f"f8[:](i8, f8[:], f8, f8[:], {_TAIL})"),
    "estimated_root": ("_joint_kernel", f"Tuple((b1, f8, f8))(i8, f8, f8, f8, f8, f8, f8[:], f8[:], f8, {_TAIL})"),
    "search": ("_joint_kernel", f"Tuple((b1, f8, f8, f8))(i8, f8, f8, f8[:], f8, f8, b1, i8, i8, f8, i8, i8, {_TAIL})"),
    "dp_staircase": ("_joint_kernel", "i8[:](f8, f8[:], f8[:], f8[:], f8[:], i8, i8)"),
    "box_bounds": ("_sequential_kernel", f"f8[:]({', '.join(['i8[:]'] * 8)}, f8, f8, {_PRIOR}, {_PRIOR})"),
}


def source_hash() -> str:
    """SHA-256 of the kernels' sources, the extension's record of what it was built from.

    Returns
    -------
    str
        64 hexadecimal digits.

    See Also
    --------
    built : whether the recorded hash is this one.

    Examples
    --------
    >>> len(source_hash())
    64
    """
    digest = hashlib.sha256()
    for path in SOURCES:
        digest.update(path.read_bytes())
    return digest.hexdigest()


def built() -> bool:
    """Whether an extension built from the current sources is recorded.

    Returns
    -------
    bool
        False when there is no record (never built, or the build failed) or the sources changed since.

    See Also
    --------
    load : the compiled functions, from the extension when this is true.

    Examples
    --------
    >>> built() in (True, False)
    True
    """
    try:
        return HASH_FILE.read_text().strip() == source_hash()
    except OSError:
        return False


@lru_cache(maxsize=1)
def load() -> SimpleNamespace:
    """The compiled functions of :data:`SIGNATURES`: the extension built ahead of time from the current sources
    when there is one, else numba's (numba imports here, on first use).

    Returns
    -------
    types.SimpleNamespace
        One attribute per name of :data:`SIGNATURES` (cached: call ``load.cache_clear()`` after a build).

    See Also
    --------
    built : whether the extension is used.

    Examples
    --------
    >>> sorted(vars(load())) == sorted(SIGNATURES)
    True
    """
    import importlib

    if os.environ.get("EPSAUDIT_KERNEL", "").lower() != "jit" and built():
        try:
            compiled = importlib.import_module(f"{__package__}._kernels_aot")
        except ImportError:
            compiled = None
        if compiled is not None:
            return SimpleNamespace(**{name: getattr(compiled, name) for name in SIGNATURES})
    return SimpleNamespace(**{name: getattr(importlib.import_module(f"{__package__}.{module}"), name)
                              for name, (module, _) in SIGNATURES.items()})
