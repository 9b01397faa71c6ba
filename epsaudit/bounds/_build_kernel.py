"""Build the joint bound's kernel ahead of time: ``python -m epsaudit.bounds._build_kernel``.

numba compiles :mod:`epsaudit.bounds._joint_kernel` on first use and caches it on disk, but importing
numba and loading a cached kernel costs about a second in every new process (``epsaudit plan`` as
typed). This compiles the same functions into a C extension, ``_joint_kernel_aot``, beside the source,
and records the SHA-256 of the source it was built from; :mod:`epsaudit.bounds.joint` uses the
extension only while that hash matches (else numba, as before). It needs a C compiler: ``make venv``
runs it and goes on without it.
"""

from __future__ import annotations

import hashlib
import pathlib
import warnings

HERE = pathlib.Path(__file__).resolve().parent
SOURCE = HERE / "_joint_kernel.py"
HASH_FILE = HERE / "_joint_kernel_aot.sha256"

_TAIL = "i8[:], i8, i8, f8[:], f8[:], f8"  # c, n_neg, n_pos, lcx, lcy, window_sd
SIGNATURES = {
    "cells": f"f8[:](i8, f8, f8, f8[:], f8[:], {_TAIL})",
    "at_thetas": f"f8[:](i8, f8[:], f8, f8[:], {_TAIL})",
    "estimated_root": f"Tuple((b1, f8, f8))(i8, f8, f8, f8, f8, f8, f8[:], f8[:], f8, {_TAIL})",
    "search": f"Tuple((b1, f8, f8, f8))(i8, f8, f8, f8[:], f8, f8, b1, i8, i8, f8, i8, i8, {_TAIL})",
    "dp_staircase": "i8[:](f8, f8, f8[:], f8[:], f8[:], f8[:], i8, i8)",
}


def source_hash() -> str:
    """SHA-256 of the kernel's source."""
    return hashlib.sha256(SOURCE.read_bytes()).hexdigest()


def built() -> bool:
    """Whether an extension built from the current source is recorded."""
    try:
        return HASH_FILE.read_text().strip() == source_hash()
    except OSError:
        return False


def main() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba.pycc's pending deprecation
        from numba.pycc import CC
    from ._joint_kernel import at_thetas, cells, dp_staircase, estimated_root, search

    kernel = {"cells": cells, "at_thetas": at_thetas, "estimated_root": estimated_root, "search": search,
              "dp_staircase": dp_staircase}

    HASH_FILE.unlink(missing_ok=True)  # no record while building: a failed build leaves numba in use
    cc = CC("_joint_kernel_aot")
    cc.output_dir = str(HERE)
    cc.target_cpu = "host"  # built where it runs, as numba's own compilation
    for name, signature in SIGNATURES.items():
        cc.export(name, signature)(kernel[name].py_func)
    cc.compile()
    HASH_FILE.write_text(source_hash() + "\n")
    print(f"built {HERE.name}/_joint_kernel_aot from {SOURCE.name} ({source_hash()[:12]})")


if __name__ == "__main__":
    main()
