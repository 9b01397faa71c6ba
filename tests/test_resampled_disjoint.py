"""The disjoint-photograph design of the resampled corpus and the face the encoders take.

- the design (pure functions): four disjoint parts of each identity's photographs, development draws
  on the development parts only, the freshness check by photograph, and the same-person control's
  four parts (half 1/2 x development/test) disjoint;
- a smoke build of the design from a few LFW photographs (skipped when they are absent), checked the
  same way on the files it writes;
- the face choice: several detected faces -> the one the swap was put on, never a bystander, and
  the known case (a background face in Hamid_Karzai_0019) on its chain;
- validity: one identity's photographs split at random (exact epsilon 0) through the library's
  reserved-test certificate (its default bound), 200 times: certificates above 0 at most the
  binomial tolerance of the level.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from epsaudit.data import corpora as fmt
from epsaudit.build import images as img
from epsaudit.build import resampled_builder as rs

ROOT = Path(__file__).resolve().parents[1]
DISJOINT = ROOT / "data" / fmt.corpus_dir("disjoint")


def _listing(n_targets=3, n_small_ids=40):
    ids = {f"T{j}": [f"T{j}/T{j}_{i:04d}.jpg" for i in range(21 + j)] for j in range(n_targets)}
    ids.update({f"S{j}": [f"S{j}/S{j}_{i:04d}.jpg" for i in range(1 + j % 3)] for j in range(n_small_ids)})
    return ids


def _check_design(draws: pd.DataFrame) -> None:
    """No test draw starts from a development photograph; the control's four parts are disjoint."""
    for person, g in draws.groupby("identity"):
        dev = set(g.loc[g["split"] == "dev", "photograph"])
        test = set(g.loc[g["split"] == "test", "photograph"])
        assert dev and test and not dev & test, person
        parts = {(s, fmt.control_half(p)): set(x["photograph"]) for (s, p), x in g.groupby(["split", "part"])}
        assert sorted(parts) == [("dev", 1), ("dev", 2), ("test", 1), ("test", 2)]
        seen: set = set()
        for photos in parts.values():
            assert not photos & seen, person
            seen |= photos
    fmt.check_disjoint(draws)


# ---------------------------------------------------------------------------------------------
# the design (no images needed)


def test_parts_are_a_seeded_partition_of_near_equal_size():
    photos = [f"A/A_{k:04d}.jpg" for k in range(23)]
    parts = rs.photograph_parts(photos, "A", seed=0)
    assert sorted(parts) == sorted(photos)
    sizes = Counter(parts.values())
    assert sorted(sizes) == sorted(fmt.PARTS) and max(sizes.values()) - min(sizes.values()) <= 1
    assert parts == rs.photograph_parts(list(reversed(photos)), "A", seed=0)   # order of the input is irrelevant
    assert parts != rs.photograph_parts(photos, "A", seed=1)
    assert parts != rs.photograph_parts([p.replace("A", "B") for p in photos], "B", seed=0)
    with pytest.raises(ValueError, match="at least 4"):
        rs.photograph_parts(photos[:3], "A")


def test_disjoint_draws_keep_test_photographs_out_of_development():
    ids = _listing()
    photos = {p: ids[p] for p in ("T0", "T1", "T2")}
    parts = {p: rs.photograph_parts(v, p) for p, v in photos.items()}
    keys = {(p, s): range(100) for p in photos for s in fmt.SPLITS}
    draws = rs.draw_design(photos, rs.pool_candidates(ids), keys, parts=parts)
    _check_design(draws)
    assert (draws["seed_key"].str.startswith("resampled-disjoint-draw|")).all()
    # every part is used: with 100 draws on ~10 photographs each part's photographs recur
    assert draws.groupby("identity")["part"].nunique().eq(4).all()
    # development draws are uniform on the two development parts: about half start in each
    dev = draws[draws["split"] == "dev"]
    share = (dev["part"] == "dev-1").groupby(dev["identity"]).mean()
    assert share.between(0.3, 0.7).all()


def test_freshness_check_names_the_draw_and_the_photograph():
    ids = _listing()
    photos = {"T0": ids["T0"]}
    parts = {"T0": rs.photograph_parts(ids["T0"], "T0")}
    draws = rs.draw_design(photos, rs.pool_candidates(ids), {("T0", "dev"): range(10), ("T0", "test"): range(10)},
                           parts=parts)
    bad = draws.copy()
    row = bad.index[bad["split"] == "test"][3]
    bad.loc[row, "photograph"] = bad.loc[bad["split"] == "dev", "photograph"].iloc[0]
    bad.loc[row, "part"] = "test-1"
    with pytest.raises(ValueError, match=rf"test draw {bad.loc[row, 'draw']} starts from photograph T0/T0_\d+\.jpg, "
                                         r"which development draw \d+"):
        fmt.check_disjoint(bad)
    with pytest.raises(ValueError, match="has part 'dev-1'; expected test-1 or test-2"):
        fmt.check_disjoint(draws.assign(part=np.where(draws["split"] == "dev", "dev-1", "dev-1")))


# ---------------------------------------------------------------------------------------------
# the face a swap was put on


def test_choose_face_takes_the_swapped_face_not_the_central_one():
    from epsaudit.build.encoders import choose_face

    # a bystander at the centre and the swapped face off-centre: the landmarks decide
    boxes = [(50, 50, 50, 50), (0, 0, 40, 40)]
    lm = np.array([[2.0, 5.0], [38.0, 40.0]])
    assert choose_face(boxes, (150, 150)) == (0, "centre")
    assert choose_face(boxes, (150, 150), lm) == (1, "bystander")
    assert choose_face([boxes[0]], (150, 150), lm) == (None, "none")   # only a bystander found


needs_images = pytest.mark.skipif(not img.images_available(),
                                  reason="LFW images absent (data/lfw/images; run `make lfw`)")


@needs_images
def test_the_background_face_of_hamid_karzai_0019_is_never_encoded():
    """Hamid_Karzai_0019 shows a second face in the background; on a chain started from it, every
    pass's dlib and SFace face is the swapped one (the box of the chain's landmarks), never the
    bystander's."""
    pytest.importorskip("dlib")
    from epsaudit.build.encoders import DlibEncoder, SFaceEncoder, box_iou, landmark_box
    from epsaudit.build.generators import LandmarkModels

    models, dlib_enc, sface = LandmarkModels(), DlibEncoder(), SFaceEncoder()
    start = img.load_image("Hamid_Karzai/Hamid_Karzai_0019.jpg")
    lm0 = models.landmarks(start)[0]
    # the pool corpus's draw 1942 (its donors), whose pass-1 dlib row was the bystander's face
    donor_ids = ["Dan_Bartlett/Dan_Bartlett_0001.jpg", "Dorthy_Moxley/Dorthy_Moxley_0001.jpg",
                 "Roberto_Canessa/Roberto_Canessa_0001.jpg", "Nicola_Wilson/Nicola_Wilson_0001.jpg",
                 "Patricia_Clarkson/Patricia_Clarkson_0001.jpg"]
    draws = ROOT / "data" / fmt.RESAMPLED_DIR / fmt.DRAWS_FILE
    if draws.is_file():
        row = pd.read_csv(draws).set_index("draw").loc[1942]
        assert row["photograph"] == "Hamid_Karzai/Hamid_Karzai_0019.jpg"
        donor_ids = [row[c] for c in fmt.donor_columns(5)]
    donors = [img.load_image(d) for d in donor_ids]
    images, marks, lost = rs.render_draw(models, start, lm0, donors, [models.landmarks(d)[0] for d in donors], "hull")
    assert lost == 0
    bystander = (117, 36, 43, 43)  # dlib's HOG box of the background face
    face = landmark_box(lm0)
    assert box_iou(face, bystander) == 0
    for k, image in enumerate(images):
        used = marks[max(k - 1, 0)]
        assert box_iou(landmark_box(used), bystander) == 0, f"pass {k}: the chain moved to the bystander"
        rect, _ = dlib_enc.detect(image, used)
        if rect is not None:
            box = (rect.left(), rect.top(), rect.width(), rect.height())
            assert box_iou(box, face) > 0.2 and box_iou(box, bystander) == 0, (k, box)
        row, _ = sface.detect(image, used)
        if row is not None:
            assert box_iou(tuple(float(v) for v in row[:4]), bystander) < 0.1, (k, row[:4])
        assert dlib_enc.encode_with_path(image, used)[1] in ("hog", "cnn", "landmarks")


# ---------------------------------------------------------------------------------------------
# a smoke build of the design


SMOKE = {"identities": 2, "dev": 6, "test": 6, "pool_size": 60, "variants": ("hull",), "batch_size": 4,
         "progress": False, "design": "disjoint"}


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    if not img.images_available():
        pytest.skip("LFW images absent (data/lfw/images; run `make lfw`)")
    pytest.importorskip("dlib")
    out = tmp_path_factory.mktemp("resampled-disjoint")
    doc = rs.build_resampled(out, n_jobs=1, checkpoint_dir=out / "checkpoints", **SMOKE)
    return out / fmt.corpus_dir("disjoint"), doc


@needs_images
def test_smoke_build_of_the_disjoint_design(smoke):
    folder, doc = smoke
    design = doc["design"]
    assert design["photograph_design"] == "disjoint" and folder.name == "resampled_disjoint"
    draws = pd.read_csv(folder / fmt.DRAWS_FILE, keep_default_na=False)
    _check_design(draws)
    # the manifest's parts are the draws' parts, and disjoint
    for person, parts in design["parts"].items():
        listed = {ph: part for part, photos in parts.items() for ph in photos}
        assert len(listed) == sum(len(v) for v in parts.values())
        mine = draws[draws["identity"] == person]
        assert (mine["photograph"].map(listed) == mine["part"]).all()
    # face choices are counted per variant, pass and encoder
    choices = design["face_choices"]["hull"]
    assert {"dlib", "sface"} <= set(choices["1"]) and "tracking" in choices["2"]
    assert sum(choices["1"]["dlib"]["how"].values()) == choices["1"]["dlib"]["images"] >= 12
    corpus = fmt.load_resampled("sface", folder, variant="hull")
    assert corpus.design == "disjoint"
    # the reader refuses a draws table whose test draw starts from a development photograph
    bad = folder.parent / "tampered"
    bad.mkdir()
    for p in folder.iterdir():
        (bad / p.name).write_bytes(p.read_bytes())
    t = draws.copy()
    i = t.index[t["split"] == "test"][0]
    t.loc[i, ["photograph", "part"]] = [t.loc[t["split"] == "dev", "photograph"].iloc[0], "test-1"]
    t.to_csv(bad / fmt.DRAWS_FILE, index=False)
    with pytest.raises(ValueError, match="starts from photograph"):
        fmt.load_resampled("sface", bad, variant="hull", verify=False)


# ---------------------------------------------------------------------------------------------
# validity: exact epsilon 0


def test_random_halves_of_one_identity_certify_nothing_beyond_the_level():
    """George_W_Bush's 100 photographs (dlib, committed table) split at random into two "identities"
    of 50 (exact epsilon 0: the halves are exchangeable), each into 25 development and 25 test rows,
    200 times; each certificate at 95% with the library's default bound. Certificates above 0 must
    be at most the 99.9% quantile of Binomial(200, 0.05)."""
    from epsaudit.audits import reserved_test_certificate
    from epsaudit.data import load_embeddings
    from epsaudit.protocol import stream

    x = load_embeddings(ROOT / "data" / "dlib_large_none.csv").groups()["George_W_Bush"]  # L2-normalised rows
    assert len(x) >= 100
    reps, positive = 200, 0
    for r in range(reps):
        order = stream("test-validity-halves", r).permutation(len(x))
        a, b = x[order[:50]], x[order[50:100]]
        cert = reserved_test_certificate(a[:25], b[:25], a[25:], b[25:], confidence=0.95)
        positive += cert.value > 0
    tolerance = int(stats.binom.ppf(0.999, reps, 0.05))
    assert positive <= tolerance, f"{positive} of {reps} certificates above 0 (tolerance {tolerance})"


# ---------------------------------------------------------------------------------------------
# the committed corpus of the design


@pytest.mark.skipif(not (DISJOINT / fmt.RESAMPLED_MANIFEST).exists(), reason="data/resampled_disjoint absent")
def test_committed_disjoint_corpus_keeps_test_photographs_out_of_development():
    doc = json.loads((DISJOINT / fmt.RESAMPLED_MANIFEST).read_text(encoding="utf-8"))
    design = doc["design"]
    assert design["photograph_design"] == "disjoint" and not design["subset"]
    assert set(design["variants"]) == {"hull", "inner"} and design["passes"][:1] == [0]
    draws = pd.read_csv(DISJOINT / fmt.DRAWS_FILE, keep_default_na=False)
    _check_design(draws)
    for variant in design["variants"]:
        corpus = fmt.load_resampled("dlib", DISJOINT, variant=variant)
        assert all(len(v) == 100 for v in corpus.passes[1].test.values())
