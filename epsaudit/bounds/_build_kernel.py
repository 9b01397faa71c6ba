"""Build the compiled kernels ahead of time: ``python -m epsaudit.bounds._build_kernel``.

Compiles every function of :data:`epsaudit.bounds._kernels.SIGNATURES` into one C extension,
``_kernels_aot``, beside the sources (numba's ahead-of-time compiler, for this machine's CPU), then records
the SHA-256 of the sources in ``_kernels_aot.sha256`` (:func:`epsaudit.bounds._kernels.load` uses the
extension only while that record matches). Needs a C compiler: ``make venv`` runs it and goes on without one.
"""

from __future__ import annotations

import importlib
import warnings

from ._kernels import HASH_FILE, HERE, SIGNATURES, SOURCES, source_hash


def _main() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba.pycc's pending deprecation
        from numba.pycc import CC

    HASH_FILE.unlink(missing_ok=True)  # no record while building: a failed build leaves numba's in use
    cc = CC("_kernels_aot")
    cc.output_dir = str(HERE)
    cc.target_cpu = "host"  # built where it runs, as numba's own compilation
    for name, (module, signature) in SIGNATURES.items():
        function = getattr(importlib.import_module(f"{__package__}.{module}"), name)
        cc.export(name, signature)(function.py_func)
    cc.compile()
    HASH_FILE.write_text(source_hash() + "\n")
    print(f"built {HERE.name}/_kernels_aot from {', '.join(p.name for p in SOURCES)} ({source_hash()[:12]})")


if __name__ == "__main__":
    _main()
