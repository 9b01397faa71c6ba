"""The resampled swap corpus: the draw design (pure functions), resumable batch output, the format
(reader, writer, schema checks), a smoke build and a resumed build on the images, and the committed
``data/resampled/`` tables."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from epsaudit.data import corpora as fmt
from epsaudit.data import sha256_file
from epsaudit.build import checkpoints as ckpt
from epsaudit.build import images as img
from epsaudit.build import resampled_builder as rs

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = ROOT / "data" / fmt.RESAMPLED_DIR
DONORS = fmt.donor_columns(5)


def _listing(n_targets=4, n_small_ids=40):
    ids = {f"T{j}": [f"T{j}/T{j}_{i:04d}.jpg" for i in range(20 + j)] for j in range(n_targets)}
    ids.update({f"S{j}": [f"S{j}/S{j}_{i:04d}.jpg" for i in range(1 + j % 3)] for j in range(n_small_ids)})
    ids["M"] = [f"M/M_{i:04d}.jpg" for i in range(12)]  # neither target nor donor
    return ids


# ---------------------------------------------------------------------------------------------
# the design


def test_identities_and_pool_follow_their_rules():
    ids = _listing()
    chosen = rs.choose_identities(ids, 3, seed=1)
    assert len(chosen) == 3 and set(chosen) <= {"T0", "T1", "T2", "T3"} and chosen == sorted(chosen)
    assert chosen == rs.choose_identities(ids, 3, seed=1)
    assert set(rs.choose_identities(ids, 2, seed=1)) <= set(chosen)   # a prefix of one seeded order
    pool = rs.pool_candidates(ids)
    assert all(img.identity_of(i).startswith("S") for i in pool) and len(pool) == sum(1 + j % 3 for j in range(40))
    assert set(rs.pool_candidates(ids, seed=0, size=10)) <= set(pool)
    with pytest.raises(ValueError, match="identities with >= 20"):
        rs.choose_identities(ids, 5)


def test_draws_are_independent_streams_with_fresh_donors():
    ids = _listing()
    photos = {p: ids[p][1:] for p in ("T0", "T1")}                      # T*_0000 has no face, say
    pool = rs.pool_candidates(ids)
    keys = {(p, s): range(30) for p in photos for s in fmt.SPLITS}
    draws = rs.draw_design(photos, pool, keys, seed=2)
    assert list(draws["draw"]) == list(range(120)) and not draws.duplicated(["identity", "split", "key"]).any()
    assert (draws["photograph"].map(img.identity_of) == draws["identity"]).all()
    assert draws["photograph"].isin([i for v in photos.values() for i in v]).all()
    assert draws[DONORS].isin(pool).all().all()
    for row in draws[DONORS].itertuples(index=False):                 # distinct donor identities per chain
        assert len({img.identity_of(d) for d in row}) == 5
    assert draws["photograph"].duplicated().any()                     # photographs recur across draws (by design)
    # a draw depends on its own key only: the same key alone gives the same draw
    one = rs.draw_design(photos, pool, {("T1", "test"): [7]}, seed=2, first_id=500).iloc[0]
    same = draws[(draws.identity == "T1") & (draws.split == "test") & (draws.key == 7)].iloc[0]
    assert one["draw"] == 500 and one.drop("draw").equals(same.drop("draw"))
    assert one["seed_key"] == "resampled-draw|2|T1|test|7"
    other = rs.draw_design(photos, pool, keys, seed=3)
    assert (other[DONORS].to_numpy() != draws[DONORS].to_numpy()).any()


def test_redraw_rule_keeps_the_first_n_complete_draws_in_key_order():
    ids = _listing()
    photos = {"T0": ids["T0"]}
    cfg = {"identities": ["T0"], "dev": 3, "test": 2, "variants": ["hull", "inner"]}
    draws = rs.draw_design(photos, rs.pool_candidates(ids), {("T0", "dev"): range(5), ("T0", "test"): range(2)})
    dev = dict(zip(draws.loc[draws.split == "dev", "key"], draws.loc[draws.split == "dev", "draw"]))
    lost = [("hull", dev[1], 3), ("inner", dev[0], 5)]
    assert rs._deficits(draws[draws.key < 3], lost, cfg) == {("T0", "dev"): 1}
    marked = rs._mark(draws, lost, cfg).set_index("draw")
    assert list(marked.loc[[dev[k] for k in range(5)], "used_hull"]) == [1, 0, 1, 1, 0]
    assert list(marked.loc[[dev[k] for k in range(5)], "used_inner"]) == [0, 1, 1, 1, 0]
    assert marked.loc[dev[1], "lost_pass_hull"] == 3 and marked.loc[dev[1], "lost_pass_inner"] == 0
    assert list(marked.loc[[dev[k] for k in range(5)], "used_none"]) == [1, 1, 1, 0, 0]  # pass 0: keys 0..n-1
    assert rs.is_subset({"pool_size": None, **cfg}) and not rs.is_subset(
        {"pool_size": None, "identities": 24, "dev": 100, "test": 100})


# ---------------------------------------------------------------------------------------------
# resumable batches


def _double(batch, calls):
    calls.append(list(batch))
    return [2 * x for x in batch]


def test_batches_resume_after_an_interruption(tmp_path):
    batches = [[1, 2], [3], [4, 5], [6]]
    store = ckpt.BatchStore(tmp_path, "demo")
    calls: list = []
    with pytest.raises(ckpt.BuildInterrupted):
        ckpt.run_batches(lambda b: _double(b, calls), batches, store, "k", progress=False, interrupt_after=2)
    assert calls == [[1, 2], [3]] and store.completed() == 2
    calls.clear()
    out, run = ckpt.run_batches(lambda b: _double(b, calls), batches, store, "k", progress=False)
    assert out == [[2, 4], [6], [8, 10], [12]] and calls == [[4, 5], [6]]   # only the missing ones ran
    assert (run.loaded, run.items_loaded, run.from_checkpoints) == (2, 3, {0, 1})
    # another stage key (changed settings) or changed items: nothing is reused
    calls.clear()
    ckpt.run_batches(lambda b: _double(b, calls), batches, store, "k2", progress=False)
    assert len(calls) == 4
    calls.clear()
    ckpt.run_batches(lambda b: _double(b, calls), [[1, 2], [3], [4, 5], [7]], store, "k", progress=False)
    assert calls == [[7]]
    # a damaged file is recomputed, a half-written temporary file ignored
    key = ckpt.fingerprint("k", 0, [1, 2])
    store.path(0, key).write_bytes(b"not a pickle")
    (store.folder / ".000001-x.pkl.123.tmp").write_bytes(pickle.dumps("junk"))
    calls.clear()
    out, _ = ckpt.run_batches(lambda b: _double(b, calls), batches, store, "k", progress=False)
    assert calls == [[1, 2]] and out[0] == [2, 4]
    store.clear()
    assert not store.folder.exists()


def test_batches_on_worker_processes_match(tmp_path):
    from functools import partial

    batches = [[1, 2], [3], [4, 5]]
    out, run = ckpt.run_batches(partial(sum), batches, ckpt.BatchStore(tmp_path, "p"), "k", n_jobs=2, progress=False)
    assert out == [3, 3, 9] and run.loaded == 0


# ---------------------------------------------------------------------------------------------
# the format


def _example(tmp_path):
    return fmt._example_resampled(tmp_path / "example")


def test_reader_returns_groups_with_draw_ids(tmp_path):
    corpus = fmt.load_resampled("dlib", _example(tmp_path))
    assert sorted(corpus.passes) == [0, 1] and corpus.identities == ["A", "B"]
    p1 = corpus.passes[1]
    assert {k: v.shape for k, v in p1.dev.items()} == {"A": (2, 3), "B": (2, 3)}
    assert p1.test_draws["A"].tolist() == [3, 8]                      # draw 2 was lost and redrawn (key 2)
    assert corpus.passes[0].test_draws["A"].tolist() == [2, 3]        # pass 0: keys 0..n-1, lost or not
    assert all(a.dtype == np.float64 for a in p1.test.values())
    with pytest.raises(ValueError, match="variant 'inner' not in"):
        fmt.load_resampled("dlib", _example(tmp_path), variant="inner")


def _rewrite(folder, mutate_rows=None, mutate_draws=None):
    rows = pd.read_parquet(folder / fmt._resampled_file("dlib"))
    draws = pd.read_csv(folder / fmt.DRAWS_FILE, keep_default_na=False)
    doc = json.loads((folder / fmt.RESAMPLED_MANIFEST).read_text(encoding="utf-8"))
    if mutate_rows:
        mutate_rows(rows).to_parquet(folder / fmt._resampled_file("dlib"), index=False)  # not through the writer
    if mutate_draws:
        draws = mutate_draws(draws)
        draws.to_csv(folder / fmt.DRAWS_FILE, index=False)
    fmt.write_resampled_manifest(folder, doc["design"], doc["run"])


@pytest.mark.parametrize("rows, draws, message", [
    (lambda r: r.drop(columns=["pass"]), None, r"dlib_resampled.parquet: missing column\(s\) \['pass'\]"),
    (lambda r: r.assign(e1=np.where(r.index == 3, np.nan, r.e1)), None, r"dlib_resampled.parquet: 1 row\(s\) hold NaN"),
    (lambda r: pd.concat([r, r.iloc[:1]]), None, "dlib_resampled.parquet: 2 rows repeat a key"),
    (lambda r: r.assign(draw=r.draw.replace(8, 99)), None, r"column 'draw' holds 1 id\(s\) not in resampled_draws"),
    (lambda r: r[~((r.variant == "hull") & (r.draw == 3))], None, "variant 'hull' pass 1: 1 draw"),
    (None, lambda d: d.assign(split=d.split.replace("test", "val")), "column 'split' holds"),
    (None, lambda d: d.drop(columns=["used_hull"]), r"resampled_draws.csv: missing column\(s\) \['used_hull'\]"),
    (None, lambda d: d.assign(used_hull=d.used_hull.where(d.draw != 2, 1)), "were lost"),
    (None, lambda d: d.assign(photograph=d.photograph.where(d.draw != 0, "B/B_0001.jpg")),
     "column 'photograph' names another identity"),
])
def test_reader_names_file_and_column_of_bad_input(tmp_path, rows, draws, message):
    folder = _example(tmp_path)
    _rewrite(folder, rows, draws)
    with pytest.raises(ValueError, match=message):
        fmt.load_resampled("dlib", folder)


def test_reader_verifies_hashes_and_counts(tmp_path):
    folder = _example(tmp_path)
    with open(folder / fmt.DRAWS_FILE, "a", encoding="utf-8") as fh:
        fh.write("\n")
    with pytest.raises(ValueError, match="resampled_draws.csv: SHA-256 .* does not match"):
        fmt.load_resampled("dlib", folder)
    folder = _example(tmp_path / "b")
    doc = json.loads((folder / fmt.RESAMPLED_MANIFEST).read_text(encoding="utf-8"))
    fmt.write_resampled_manifest(folder, {**doc["design"], "draws_per_split": {"dev": 2, "test": 3}}, {})
    with pytest.raises(ValueError, match="marks other than"):
        fmt.load_resampled("dlib", folder)
    with pytest.raises(FileNotFoundError, match="sface_resampled.parquet: missing"):
        fmt.load_resampled("sface", folder)


# ---------------------------------------------------------------------------------------------
# builds on the images

needs_images = pytest.mark.skipif(not img.images_available(),
                                  reason="LFW images absent (data/lfw/images; run `make lfw`)")
SMOKE = {"identities": 2, "dev": 3, "test": 3, "pool_size": 60, "variants": ("hull", "inner"), "batch_size": 2,
         "progress": False}


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    pytest.importorskip("dlib")
    out = tmp_path_factory.mktemp("resampled")
    doc = rs.build_resampled(out, n_jobs=2, checkpoint_dir=out / "checkpoints", **SMOKE)
    return out, doc


@needs_images
def test_smoke_build_writes_and_reads_back(smoke):
    out, doc = smoke
    folder = out / fmt.RESAMPLED_DIR
    assert sorted(doc["files"]) == sorted(p.name for p in folder.iterdir() if p.suffix in (".csv", ".parquet"))
    for name, entry in doc["files"].items():
        assert sha256_file(folder / name) == entry["sha256"]
    assert not any((out / "checkpoints").rglob("*.pkl"))              # removed after a complete build
    design = doc["design"]
    assert design["used_draws"] == {"none": 12, "hull": 12, "inner": 12} and design["passes"] == [0, 1, 5]
    assert set(doc["run"]["stages"]) >= {"landmarks", "chains-0", "originals"}
    assert doc["run"]["stages"]["chains-0"]["steps"]["swap"]["count"] >= 12 * 2 * 5 - 5 * len(design["lost"])
    for encoder in fmt.ENCODERS:
        for variant in ("hull", "inner"):
            corpus = fmt.load_resampled(encoder, folder, variant=variant)
            for k in (0, 1, 5):
                assert all(a.shape == (3, 128) for a in corpus.passes[k].dev.values())
            np.testing.assert_array_equal(corpus.passes[1].dev_draws[corpus.identities[0]],
                                          corpus.passes[5].dev_draws[corpus.identities[0]])
    # a draw's chain re-rendered from its row gives the stored pass-5 embedding exactly
    from epsaudit.build.encoders import DlibEncoder
    from epsaudit.build.generators import LandmarkModels

    row = pd.read_csv(folder / fmt.DRAWS_FILE).query("used_hull == 1").iloc[0]
    draw = int(row["draw"])
    models = LandmarkModels()
    start = img.load_image(row["photograph"])
    donors = [img.load_image(row[c]) for c in DONORS]
    images, marks, lost = rs.render_draw(models, start, models.landmarks(start)[0], donors,
                                         [models.landmarks(d)[0] for d in donors], "hull")
    assert lost == 0 and len(images) == 6 and len(marks) == 5
    stored = pd.read_parquet(folder / fmt._resampled_file("dlib")).query("variant == 'hull' and draw == @draw")
    np.testing.assert_array_equal(DlibEncoder().encode_with_path(images[5], marks[4])[0],
                                  stored.sort_values("pass")[[f"e{j}" for j in range(128)]].to_numpy()[-1])
    pass0 = pd.read_parquet(folder / fmt._resampled_file("sface")).query("variant == 'none' and draw == @draw")
    assert len(pass0) == 1


@needs_images
def test_an_interrupted_build_resumes_to_identical_files(smoke, tmp_path):
    _, reference = smoke
    kwargs = {**SMOKE, "n_jobs": 1, "checkpoint_dir": tmp_path / "checkpoints"}
    with pytest.raises(ckpt.BuildInterrupted):                       # 3 landmark batches, then 1 of 6 chain batches
        rs.build_resampled(tmp_path, interrupt_after=4, **kwargs)
    assert not (tmp_path / fmt.RESAMPLED_DIR / fmt.RESAMPLED_MANIFEST).exists()
    assert len(list((tmp_path / "checkpoints").rglob("*.pkl"))) == 4
    doc = rs.build_resampled(tmp_path, **kwargs)
    assert {k: v["sha256"] for k, v in doc["files"].items()} == {k: v["sha256"] for k, v in reference["files"].items()}
    assert doc["design"] == reference["design"]
    stages = doc["run"]["stages"]
    assert doc["run"]["resumed"] and stages["landmarks"]["batches_from_checkpoints"] == 3
    assert stages["chains-0"]["batches_from_checkpoints"] == 1


def test_cli_refuses_to_overwrite_a_full_corpus_with_a_subset(tmp_path, capsys):
    folder = tmp_path / fmt.RESAMPLED_DIR
    folder.mkdir()
    (folder / fmt.RESAMPLED_MANIFEST).write_text(json.dumps({"design": {"subset": False}}), encoding="utf-8")
    assert rs.main(["--out-dir", str(tmp_path), "--identities", "2"]) == 2
    assert "holds a full corpus" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------
# the committed corpus

needs_corpus = pytest.mark.skipif(not (COMMITTED / fmt.RESAMPLED_MANIFEST).exists(),
                                  reason="data/resampled absent (build it with `make resampled`)")


@needs_corpus
def test_committed_corpus_matches_its_manifest_and_the_design():
    doc = json.loads((COMMITTED / fmt.RESAMPLED_MANIFEST).read_text(encoding="utf-8"))
    assert sorted(doc["files"]) == sorted(p.name for p in COMMITTED.iterdir() if p.suffix in (".csv", ".parquet"))
    design = doc["design"]
    assert not design["subset"] and design["passes"] == [0, 1, 5] and "hull" in design["variants"]
    assert len(design["identities"]["chosen"]) >= 24 and min(design["draws_per_split"].values()) >= 100
    assert min(design["identities"]["photographs"].values()) >= 20
    draws = pd.read_csv(COMMITTED / fmt.DRAWS_FILE)
    assert len(draws) == design["draws_rendered"]
    for v in design["variants"]:
        lost_col, _ = fmt.status_columns(v)
        assert int((draws[lost_col] > 0).sum()) == design["lost_draws"][v]
    for encoder in fmt.ENCODERS:
        for variant in design["variants"]:
            corpus = fmt.load_resampled(encoder, COMMITTED, variant=variant)   # hashes and schema checked
            for k in design["passes"]:
                sizes = {len(a) for part in (corpus.passes[k].dev, corpus.passes[k].test) for a in part.values()}
                assert sizes == set(design["draws_per_split"].values())
                assert len(corpus.passes[k].dev) == len(design["identities"]["chosen"])
