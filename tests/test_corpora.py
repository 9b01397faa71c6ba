"""The cascade and operator corpora: designs (pure functions), a smoke build from the images, and
the committed ``data/corpora/`` tables (hashes, protocol rules, size)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from epsaudit.data import corpora as fmt
from epsaudit.data import sha256_file
from epsaudit.build import corpora_builder as cp
from epsaudit.build import images as img

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT / "data" / fmt.CORPORA_DIR
DONOR_COLS = [f"donor_{k}" for k in range(1, 6)]


def _listing(n_targets=4, n_target_images=25, n_nonmembers=3, n_small_ids=200, small_images=3):
    ids = {}
    for j in range(n_targets):
        ids[f"T{j}"] = [f"T{j}/T{j}_{i:04d}.jpg" for i in range(n_target_images + j)]
    for j in range(n_nonmembers):
        ids[f"N{j}"] = [f"N{j}/N{j}_{i:04d}.jpg" for i in range(12)]
    for j in range(n_small_ids):
        ids[f"S{j}"] = [f"S{j}/S{j}_{i:04d}.jpg" for i in range(1 + j % small_images)]
    return ids


def test_cascade_design_follows_the_protocol():
    ids = _listing()
    usable = {i for v in ids.values() for i in v if not i.endswith("_0001.jpg")}  # some photos have no face
    chains, galleries = cp.cascade_design(ids, usable, seed=3, passes=5, chains_per_identity=10, gallery_size=8)
    assert len(chains) == 4 * 10 and set(chains["identity"]) == {"T0", "T1", "T2", "T3"}
    donors = chains[DONOR_COLS].to_numpy().ravel()
    assert len(set(donors)) == len(donors)                       # no donor photograph reused
    assert all(d in usable for d in donors) and all(s in usable for s in chains["start"])
    assert all(img.identity_of(d).startswith("S") for d in donors)  # donors: identities with <= 9 photos
    for row in chains.itertuples():                               # fresh donor identity each pass
        assert len({img.identity_of(getattr(row, c)) for c in DONOR_COLS}) == 5
        assert row.nonmember.startswith("N")
    target = galleries[galleries.role == "target"].merge(chains[["chain", "start", "identity"]], on="chain")
    assert not (target.image_id == target.start).any()            # the start is never in its gallery
    assert (target.image_id.map(img.identity_of) == target.identity).all()
    assert target.groupby("chain").size().eq(8).all()
    nm = galleries[galleries.role == "nonmember"].merge(chains[["chain", "nonmember"]], on="chain")
    assert (nm.image_id.map(img.identity_of) == nm.nonmember).all()
    assert nm.groupby("chain").size().eq(12).all()
    again, _ = cp.cascade_design(ids, usable, seed=3, passes=5, chains_per_identity=10, gallery_size=8)
    pd.testing.assert_frame_equal(chains, again)                  # seeded: identical design


def test_cascade_design_refuses_an_exhausted_donor_pool():
    ids = _listing(n_small_ids=10)
    usable = {i for v in ids.values() for i in v}
    with pytest.raises(ValueError, match="donor pool exhausted after"):
        cp.cascade_design(ids, usable, chains_per_identity=10)


def test_operator_design_is_identity_disjoint():
    ids = _listing(n_small_ids=300)
    usable = {i for v in ids.values() for i in v}
    trip = cp.operator_design(ids, usable, seed=1, train_triplets=500, test_triplets=100,
                              photographs={"train": 200, "test": 60})
    assert trip.partition.value_counts().to_dict() == {"train": 500, "test": 100}
    train = set(trip.loc[trip.partition == "train", ["donor_identity", "target_identity"]].to_numpy().ravel())
    test = set(trip.loc[trip.partition == "test", ["donor_identity", "target_identity"]].to_numpy().ravel())
    assert not train & test
    assert (trip.donor_identity != trip.target_identity).all()
    assert all(p.startswith("S") for p in train | test)
    assert not trip.duplicated(["donor", "target"]).any()         # no (donor, target) pair twice
    photos = set(trip.loc[trip.partition == "train", ["donor", "target"]].to_numpy().ravel())
    assert len(photos) <= 200


def test_format_writer_and_reader_agree(tmp_path):
    """The builder writes through epsaudit.data.corpora; what it writes, load_corpora reads back."""
    frame = fmt.embedding_frame([{"variant": "hull", "triplet": 0}], [np.arange(1.0, 129.0)], ["hog"])
    assert frame[fmt.embedding_columns()].dtypes.eq(np.float32).all() and list(frame.columns[:3]) == [
        "variant", "triplet", "path"]
    path = fmt.write_embedding_table(tmp_path, "dlib", "operator", frame)
    pd.testing.assert_frame_equal(pd.read_parquet(path), frame)
    with pytest.raises(ValueError, match="expected dimension 128"):
        fmt.embedding_frame([{"image_id": "A"}], [[1.0, 2.0]], ["hog"])
    with pytest.raises(ValueError, match="missing column"):
        fmt.write_embedding_table(tmp_path, "dlib", "cascade", frame)
    folder = fmt._example_corpora(tmp_path / "example")
    doc = json.loads((folder / fmt.CORPORA_MANIFEST).read_text(encoding="utf-8"))
    assert sorted(doc["files"]) == sorted(p.name for p in folder.iterdir() if p.suffix in (".csv", ".parquet"))
    corpora = fmt.load_corpora("dlib", folder)
    assert corpora.passes == 1 and corpora.dim == 3 and corpora.embedding_columns == ["e0", "e1", "e2"]


needs_images = pytest.mark.skipif(not img.images_available(),
                                  reason="LFW images absent (data/lfw/images; run `make lfw`)")


@needs_images
def test_smoke_build_writes_every_table(tmp_path):
    pytest.importorskip("dlib")
    doc = cp.build_corpora(tmp_path, max_identities=2, chains_per_identity=1, passes=2, gallery_size=3,
                           train_triplets=12, test_triplets=4, n_jobs=2, progress=False)
    out = tmp_path / fmt.CORPORA_DIR
    for name, entry in doc["files"].items():
        assert sha256_file(out / name) == entry["sha256"]
    casc = pd.read_parquet(out / "dlib_cascade.parquet")
    assert casc.groupby(["variant", "chain"]).size().eq(2).sum() == 2 * 2 - sum(doc["design"]["cascade"]["lost_chains"].values())
    assert casc[fmt.embedding_columns()].dtypes.eq(np.float32).all()
    op = pd.read_parquet(out / "sface_operator.parquet")
    assert len(op) == 2 * 16 and set(op.variant) == {"hull", "inner"}
    # the chain re-rendered from its design row gives the stored embedding exactly (deterministic swaps)
    from epsaudit.build.encoders import DlibEncoder

    chain = pd.read_csv(out / "cascade_chains.csv").iloc[0]
    images, donors = cp.render_chain(chain.to_dict(), "inner")
    stored = casc[(casc.variant == "inner") & (casc.chain == chain["chain"])].sort_values("pass")
    assert len(images) == 3 and len(donors) == 2
    np.testing.assert_array_equal(DlibEncoder().encode(images[-1]), stored[fmt.embedding_columns()].to_numpy()[-1])


# ---------------------------------------------------------------------------------------------
# the committed corpora


def _manifest():
    return json.loads((CORPORA / fmt.CORPORA_MANIFEST).read_text(encoding="utf-8"))


def test_committed_corpora_match_their_manifest_and_fit_the_budget():
    doc = _manifest()
    assert sorted(doc["files"]) == sorted(p.name for p in CORPORA.iterdir() if p.suffix in (".csv", ".parquet"))
    for name, entry in doc["files"].items():
        assert sha256_file(CORPORA / name) == entry["sha256"], name
    committed = sum(p.stat().st_size for p in (ROOT / "data").rglob("*") if p.is_file() and "lfw" not in p.parts)
    # the compendium's budget for derived data (embedding tables, both resampled-swap designs, corpora)
    assert committed < 120e6, f"committed data is {committed / 1e6:.1f} MB"


def test_committed_cascade_follows_the_protocol():
    doc = _manifest()
    chains = pd.read_csv(CORPORA / "cascade_chains.csv")
    design = doc["design"]["cascade"]
    assert design["passes"] == 5 and design["chains"] == len(chains)
    assert chains.groupby("identity").size().max() <= 30 and chains["identity"].nunique() == 62
    donors = chains[DONOR_COLS].to_numpy().ravel()
    assert len(set(donors)) == len(donors)
    casc = pd.read_parquet(CORPORA / "dlib_cascade.parquet", columns=["variant", "chain", "pass"])
    for v in doc["design"]["variants"]:
        sizes = casc[casc.variant == v].groupby("chain").size()
        assert (sizes == 5).all()                                  # only complete chains are stored
        assert len(sizes) == design["complete_chains"][v] == len(chains) - design["lost_chains"][v]
    trip = pd.read_csv(CORPORA / "operator_triplets.csv")
    assert (trip.partition == "train").sum() >= 8000
    train = set(trip.loc[trip.partition == "train", ["donor_identity", "target_identity"]].to_numpy().ravel())
    test = set(trip.loc[trip.partition == "test", ["donor_identity", "target_identity"]].to_numpy().ravel())
    assert not train & test
    assert not train & set(chains["identity"]) and not train & set(chains["nonmember"])
