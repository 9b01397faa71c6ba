"""The package others install: `pip install .` alone gives a working `epsaudit` command.

The core needs numpy, scipy, numba, scikit-learn, pandas, joblib and tqdm only; the face pipeline
(`[faces]`: dlib, OpenCV, ONNX) and the book (`[book]`: jupyter-book, papermill, matplotlib) are
extras. This test builds a fresh virtual environment, installs the repository without extras
(with the lock file as constraints, so no newer release is resolved) and audits a committed table.
"""

from __future__ import annotations

import subprocess
import venv
from pathlib import Path

import pytest

import epsaudit

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_pip_install_without_extras_runs_an_audit(tmp_path):
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    install = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "-c", str(ROOT / "requirements-lock.txt"),
                              str(ROOT)], capture_output=True, text=True, cwd=tmp_path)
    assert install.returncode == 0, install.stderr[-2000:]
    missing = subprocess.run([str(python), "-c", "import importlib.util as u; "
                              "print([m for m in ('dlib', 'cv2', 'jupyter_book', 'papermill', 'matplotlib') "
                              "if u.find_spec(m)])"], capture_output=True, text=True)
    assert missing.stdout.strip() == "[]"
    cli = env_dir / "bin" / "epsaudit"
    run = subprocess.run([str(cli), "audit", str(ROOT / "data" / "sface_small_none.csv"), "--pairs", "20",
                          "--kde-pairs", "5", "--roc-pairs", "10", "--certificates", "1", "--jobs", "1"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    for route in ("gaussmech", "kde_lr", "mmd_tv", "roc_oof", "roc_reserved"):
        assert route in run.stdout
    version = subprocess.run([str(cli), "--version"], capture_output=True, text=True)
    assert version.stdout.strip() == f"epsaudit {epsaudit.__version__}"
