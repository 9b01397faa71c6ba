"""The face-swap corpora on disk: the one home of their file formats, readers and writers.

The cascade and operator corpora (:mod:`epsaudit.build.corpora_builder`) and the resampled corpus
(:mod:`epsaudit.build.resampled_builder`), built from LFW photographs (*Toward Interpretable Privacy Guarantees in
Face-Swapping Anonymization*, Sections VI-VIII), share the embedding-table layout (key columns, ``path``,
``e0 .. e{d-1}`` as raw float32 in zstd Parquet), the manifest layout and the schema checks the readers apply.

Cascade and operator corpora
----------------------------
One folder, ``data/corpora/`` by default: per encoder three embedding tables and, shared by the encoders, three
design tables and a manifest:

- ``<encoder>_originals.parquet`` (every original photograph used, once: ``image_id``, ``identity``),
  ``<encoder>_cascade.parquet`` (every pass of every complete chain: ``variant``, ``chain``, ``pass`` 1..K) and
  ``<encoder>_operator.parquet`` (every single-swap output: ``variant``, ``triplet``), each with ``path`` (the
  face-detection path) and ``e0 ..``;
- ``cascade_chains.csv`` (``chain``, ``identity``, ``start``, ``nonmember``, ``donor_1 .. donor_K``),
  ``cascade_galleries.csv`` (``chain``, ``role`` ``target``/``nonmember``, ``image_id``) and ``operator_triplets.csv``
  (``triplet``, ``partition`` ``train``/``test``, ``donor``, ``target``, ``donor_identity``, ``target_identity``);
- ``corpora_manifest.json`` (:data:`CORPORA_MANIFEST`) -- ``manifest_version``, ``files`` (SHA-256, bytes, rows
  and detection paths of every table), ``design`` (counts, rules, seeds, lost chains) and ``run`` (timing).

Resampled corpus
----------------
Independent draws of the resampled mechanism ``M_k(A)`` (*Picture the Epsilon*, Section IV-C), one chain with its
own seed key per *draw*, so every row carries its draw id. Definitions and the two photograph designs: the book's
methods chapter, section 'A resampled mechanism: test rows beyond the photographs'. One folder per design
(:data:`DESIGN_DIRS`): ``pool`` (``data/resampled/``) and ``disjoint`` (``data/resampled_disjoint/``: photographs
cut once into the four :data:`PARTS`, :func:`check_disjoint`, :func:`control_half`). Each folder holds:

- ``<encoder>_resampled.parquet`` -- one row per stored (variant, draw, pass): ``variant`` (``none`` for pass 0,
  else the swap variant), ``draw``, ``pass``, ``path``, ``e0 ..``;
- ``resampled_draws.csv`` -- one row per draw (used or not): ``draw``, ``identity``, ``split`` (``dev``/``test``),
  ``key`` (the draw's index in its identity's split), ``seed_key``, ``photograph``, ``donor_1 .. donor_K``,
  ``used_none`` (its pass-0 row is stored) and per swap variant ``lost_pass_<variant>`` (0: all K passes ran;
  else the pass whose input had no face) and ``used_<variant>``;
- ``resampled_manifest.json`` (:data:`RESAMPLED_MANIFEST`) -- ``manifest_version``, ``files``, ``design`` (rules,
  seeds, counts, lost draws; ``passes``, ``variants`` and ``draws_per_split`` are read back) and ``run``.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from .manifest import jsonable, sha256_file

__all__ = [
    "ENCODERS", "EMBEDDING_DIM", "embedding_columns", "donor_columns", "embedding_frame",
    "CORPORA_DIR", "CORPORA_MANIFEST", "EMBEDDING_KINDS", "DESIGN_FILES", "ROLES", "Corpora", "embedding_file",
    "load_corpora", "subset_corpora", "write_embedding_table", "write_designs", "write_corpora_manifest",
    "RESAMPLED_DIR", "RESAMPLED_MANIFEST", "DESIGNS", "DESIGN_DIRS", "PARTS", "DRAWS_FILE", "SPLITS", "ORIGINAL",
    "ResampledPass", "Resampled", "corpus_dir", "control_half", "check_disjoint", "status_columns", "load_resampled",
    "resampled_frame", "write_resampled_table", "write_draws", "write_resampled_manifest",
]


# --- Shared: names, schema checks, embedding tables, manifests ----------------------------------------------


_MANIFEST_VERSION = 1
ENCODERS = ("dlib", "sface")
_EMBEDDING_PREFIX = "e"
EMBEDDING_DIM = 128
#: Key columns of each embedding table (unique per row).
_KEYS = {"originals": ("image_id",), "cascade": ("variant", "chain", "pass"), "operator": ("variant", "triplet"),
        "resampled": ("variant", "draw", "pass")}


def embedding_columns(dim: int = EMBEDDING_DIM) -> list[str]:
    """The embedding column names ``e0 .. e{dim-1}``.

    Examples
    --------
    >>> embedding_columns(3)
    ['e0', 'e1', 'e2']
    """
    return [f"{_EMBEDDING_PREFIX}{j}" for j in range(dim)]


def donor_columns(passes: int) -> list[str]:
    """The donor columns of ``cascade_chains.csv``, one per pass.

    Examples
    --------
    >>> donor_columns(2)
    ['donor_1', 'donor_2']
    """
    return [f"donor_{k}" for k in range(1, int(passes) + 1)]


def _embedding_columns(frame: pd.DataFrame, name: str) -> list[str]:
    cols = [c for c in frame.columns if isinstance(c, str) and c.startswith(_EMBEDDING_PREFIX) and c[1:].isdigit()]
    if not cols:
        raise ValueError(f"{name}: no embedding columns e0, e1, ...")
    expected = embedding_columns(len(cols))
    if sorted(cols, key=lambda c: int(c[1:])) != expected:
        raise ValueError(f"{name}: embedding columns must be e0..e{len(cols) - 1} without gaps")
    return expected


def _require(frame: pd.DataFrame, columns: Sequence[str], name: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{name}: missing column(s) {missing}; has {list(frame.columns)[:12]}")


def _check_unique(frame: pd.DataFrame, keys: Sequence[str], name: str) -> None:
    dup = frame.duplicated(list(keys), keep=False)
    if dup.any():
        example = frame.loc[dup, list(keys)].head(3).to_dict(orient="records")
        raise ValueError(f"{name}: {int(dup.sum())} rows repeat a key {list(keys)}, e.g. {example}")


def _check_finite(frame: pd.DataFrame, cols: list[str], name: str) -> None:
    values = frame[cols].to_numpy(dtype=np.float64)
    bad = ~np.isfinite(values)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise ValueError(f"{name}: {int(bad.any(axis=1).sum())} row(s) hold NaN/inf, first at row {r} column {cols[c]}")
    norms = np.linalg.norm(values, axis=1)
    if np.any(norms <= 1e-6):
        raise ValueError(f"{name}: {int(np.sum(norms <= 1e-6))} row(s) have (near) zero norm, first at row "
                         f"{int(np.argmax(norms <= 1e-6))}")


def _check_present(ids: pd.Series | pd.Index, universe: pd.Index, what: str, where: str) -> None:
    ids = pd.Index(pd.unique(pd.Series(ids)))
    missing = ids[~ids.isin(universe)]
    if len(missing):
        raise ValueError(f"{len(missing)} {what} not in {where}: {list(missing[:5])}"
                         + (" ..." if len(missing) > 5 else ""))


def _verify_file(path: Path, manifest: Mapping[str, Any], mpath: Path) -> None:
    """``ValueError`` unless ``path``'s SHA-256 is the one its manifest ``mpath`` lists."""
    entry = manifest.get("files", {}).get(path.name)
    if entry is None or "sha256" not in entry:
        raise ValueError(f"{path}: not listed with a sha256 in {mpath}")
    digest = sha256_file(path)
    if digest != entry["sha256"]:
        raise ValueError(f"{path}: SHA-256 {digest[:12]}... does not match {mpath.name} "
                         f"({entry['sha256'][:12]}...); the file changed after the manifest was written")


def embedding_frame(keys: Mapping[str, Sequence] | pd.DataFrame | Sequence[Mapping[str, Any]], vectors,
                    paths: Sequence[str], *, dim: int | None = EMBEDDING_DIM) -> pd.DataFrame:
    """One embedding table in the stored layout: the key columns, ``path``, ``e0 ..`` as float32.

    Parameters
    ----------
    keys : mapping of columns, DataFrame or list of row dicts
        The key columns (e.g. ``image_id`` and ``identity``; or ``variant``, ``chain``, ``pass``).
    vectors, paths : array_like, shape (n, d), and sequence of str, length n
        Raw embeddings and the face-detection path of each.
    dim : int or None
        Required dimension (``None``: any).

    Raises
    ------
    ValueError
        Embeddings of another dimension or holding NaN/inf.

    Examples
    --------
    >>> embedding_frame({"image_id": ["A/A_0001.jpg"]}, [[0.5, 2.0]], ["hog"], dim=2)
           image_id path   e0   e1
    0  A/A_0001.jpg  hog  0.5  2.0
    """
    vec = np.asarray(np.stack([np.asarray(v) for v in vectors]), dtype=np.float32)
    if vec.ndim != 2 or (dim is not None and vec.shape[1] != dim) or not np.isfinite(vec).all():
        raise ValueError(f"bad embeddings (shape {vec.shape}, expected dimension {dim}, "
                         f"finite {bool(np.isfinite(vec).all())})")
    frame = pd.DataFrame(keys)
    frame["path"] = list(paths)
    return pd.concat([frame, pd.DataFrame(vec, columns=embedding_columns(vec.shape[1]), index=frame.index)], axis=1)


def _file_entries(directory: str | os.PathLike) -> dict[str, dict[str, Any]]:
    """Manifest entries of every ``.parquet``/``.csv`` in ``directory``: SHA-256, bytes, rows, and the detection
    paths of the Parquet tables."""
    files = {}
    for path in sorted(Path(directory).iterdir()):
        if path.suffix in (".parquet", ".csv"):
            entry: dict[str, Any] = {"sha256": sha256_file(path), "bytes": path.stat().st_size}
            if path.suffix == ".parquet":
                frame = pd.read_parquet(path, columns=["path"])
                entry["rows"] = len(frame)
                entry["detection_paths"] = dict(Counter(frame["path"]))
            else:
                with open(path, encoding="utf-8") as fh:
                    entry["rows"] = int(sum(1 for _ in fh) - 1)
            files[path.name] = entry
    return files


def _write_parquet(frame: pd.DataFrame, path: Path) -> Path:
    """Write ``frame`` as zstd Parquet: float columns byte-stream-split without dictionary (float32 embeddings do not
    repeat: 37% smaller than pandas' default), others with one."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    floats = [c for c in frame.columns if pd.api.types.is_float_dtype(frame[c])]
    others = [c for c in frame.columns if c not in floats]
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path, compression="zstd",
                   use_dictionary=others or False, use_byte_stream_split=floats or False)
    return path


def _write_manifest(directory: str | os.PathLike, name: str, design: Mapping[str, Any],
                    run: Mapping[str, Any]) -> dict:
    """Write manifest ``name`` into ``directory`` (version, :func:`_file_entries`, design, run; JSON); return it."""
    doc = {"manifest_version": _MANIFEST_VERSION, "files": _file_entries(directory), "design": dict(design),
           "run": dict(run)}
    (Path(directory) / name).write_text(json.dumps(jsonable(doc), indent=1, allow_nan=False) + "\n",
                                        encoding="utf-8")
    return doc

# --- Cascade and operator corpora: names --------------------------------------------------------------------


#: The corpora's folder inside the data folder.
CORPORA_DIR = "corpora"
CORPORA_MANIFEST = "corpora_manifest.json"
#: The embedding tables of one encoder, ``<encoder>_<kind>.parquet``.
EMBEDDING_KINDS = ("originals", "cascade", "operator")
#: The design tables, shared by the encoders.
DESIGN_FILES = {"chains": "cascade_chains.csv", "galleries": "cascade_galleries.csv",
                "triplets": "operator_triplets.csv"}
ROLES = ("target", "nonmember")
_PARTITIONS = ("train", "test")
_REQUIRED = {"originals": ("image_id", "identity"), "cascade": _KEYS["cascade"], "operator": _KEYS["operator"],
             "galleries": ("chain", "role", "image_id"),
             "triplets": ("triplet", "partition", "donor", "target", "donor_identity", "target_identity")}
_DESIGN_TEXT = {c: str for c in ("image_id", "start", "donor", "target", "identity", "nonmember", "donor_identity",
                          "target_identity")}


def embedding_file(encoder: str, kind: str) -> str:
    """File name of one embedding table.

    Raises
    ------
    ValueError
        A ``kind`` not in :data:`EMBEDDING_KINDS`.

    Examples
    --------
    >>> embedding_file("dlib", "cascade")
    'dlib_cascade.parquet'
    """
    if kind not in EMBEDDING_KINDS:
        raise ValueError(f"kind must be one of {EMBEDDING_KINDS}, got {kind!r}")
    return f"{encoder}_{kind}.parquet"

# --- Cascade and operator corpora: reading ------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Corpora:
    """One encoder's view of the cascade and operator corpora (:func:`load_corpora`).

    Attributes
    ----------
    encoder : str
    originals, cascade, operator, chains, galleries, triplets : pandas.DataFrame
        The encoder's embedding tables and the design tables (module docstring); ``originals`` is indexed by
        ``image_id``, ``cascade`` holds complete chains only.
    manifest : dict
    directory : pathlib.Path
    cache : dict
        Memo of derived arrays for analyses of this view (keyed by the caller; never written).

    Examples
    --------
    >>> import tempfile
    >>> corpora = load_corpora("dlib", _example_corpora(tempfile.mkdtemp()))
    >>> corpora.dim, corpora.passes, corpora.variants
    (3, 1, ['hull'])
    >>> corpora.embeddings(["P/P_0002.jpg"]).tolist()
    [[1.0, 2.0, 1.0]]
    """

    encoder: str
    originals: pd.DataFrame
    cascade: pd.DataFrame
    operator: pd.DataFrame
    chains: pd.DataFrame
    galleries: pd.DataFrame
    triplets: pd.DataFrame
    manifest: dict
    directory: Path
    cache: dict = field(default_factory=dict, repr=False)

    @property
    def embedding_columns(self) -> list[str]:
        """``["e0", ..., "e{d-1}"]``."""
        return _embedding_columns(self.originals, "originals")

    @property
    def dim(self) -> int:
        """Embedding dimension ``d``."""
        return len(self.embedding_columns)

    @property
    def variants(self) -> list[str]:
        """Variants with cascade rows, sorted."""
        return sorted(self.cascade["variant"].unique())

    @property
    def passes(self) -> int:
        """``K``, the number of swap passes per chain."""
        return int(self.manifest.get("design", {}).get("cascade", {}).get("passes", self.cascade["pass"].max()))

    def embeddings(self, image_ids: Sequence[str]) -> np.ndarray:
        """Raw float64 embeddings of original photographs, shape (n, d).

        Raises
        ------
        KeyError
            Naming the image ids absent from the originals.
        """
        ids = pd.Index(image_ids)
        missing = ids[~ids.isin(self.originals.index)]
        if len(missing):
            raise KeyError(f"{len(missing)} image id(s) not in {embedding_file(self.encoder, 'originals')}, "
                           f"e.g. {list(missing[:5])}")
        return self.originals.loc[ids, self.embedding_columns].to_numpy(dtype=np.float64)


def _file_names(encoder: str) -> dict[str, str]:
    return {**{kind: embedding_file(encoder, kind) for kind in EMBEDDING_KINDS}, **DESIGN_FILES}


def _read_corpora(folder: Path, encoder: str, verify: bool) -> tuple[dict, dict[str, pd.DataFrame], dict[str, str]]:
    """The manifest and every table of one encoder, each file's SHA-256 checked against the manifest."""
    mpath = folder / CORPORA_MANIFEST
    if not mpath.is_file():
        raise FileNotFoundError(f"{mpath}: no corpora manifest (build the corpora with `make corpora`)")
    manifest = json.loads(mpath.read_text(encoding="utf-8"))
    names = _file_names(encoder)
    for name in names.values():
        path = folder / name
        if not path.is_file():
            have = sorted(p.name for p in folder.glob("*_originals.parquet"))
            raise FileNotFoundError(f"{path}: missing (encoder {encoder!r}; originals present: {have})")
        if verify:
            _verify_file(path, manifest, mpath)
    frames = {k: (pd.read_parquet(folder / n) if n.endswith(".parquet")
                  else pd.read_csv(folder / n, keep_default_na=False, dtype=_DESIGN_TEXT))
              for k, n in names.items()}
    return manifest, frames, names


def _manifest_passes(manifest: Mapping[str, Any]) -> int | None:
    passes = manifest.get("design", {}).get("cascade", {}).get("passes")
    return None if passes is None else int(passes)


def _check_schema(frames: Mapping[str, pd.DataFrame], names: Mapping[str, str], passes: int) -> None:
    """Columns, embedding blocks (finite, non-zero, one dimension), unique keys, known roles and partitions."""
    for key, cols in _REQUIRED.items():
        _require(frames[key], cols, names[key])
    _require(frames["chains"], ["chain", "identity", "start", "nonmember"] + donor_columns(passes), names["chains"])
    dims = {}
    for key in EMBEDDING_KINDS:
        cols = _embedding_columns(frames[key], names[key])
        dims[names[key]] = len(cols)
        _check_finite(frames[key], cols, names[key])
    if len(set(dims.values())) != 1:
        raise ValueError(f"embedding dimensions differ between files: {dims}")
    for key in EMBEDDING_KINDS:
        _check_unique(frames[key], _KEYS[key], names[key])
    _check_unique(frames["chains"], ["chain"], names["chains"])
    _check_unique(frames["triplets"], ["triplet"], names["triplets"])
    bad_roles = set(frames["galleries"]["role"]) - set(ROLES)
    if bad_roles:
        raise ValueError(f"{names['galleries']}: unknown role(s) {sorted(bad_roles)}; expected {ROLES}")
    bad_parts = set(frames["triplets"]["partition"]) - set(_PARTITIONS)
    if bad_parts:
        raise ValueError(f"{names['triplets']}: unknown partition(s) {sorted(bad_parts)}")


def _check_references(frames: Mapping[str, pd.DataFrame], names: Mapping[str, str]) -> None:
    """Every image id, chain and triplet referred to exists; every chain has both galleries and its
    start is not in its own target gallery."""
    orig, chains, gal, trip = frames["originals"], frames["chains"], frames["galleries"], frames["triplets"]
    ids, where = pd.Index(orig["image_id"].astype(str)), names["originals"]
    _check_present(gal["image_id"], ids, "gallery image id(s)", where)
    _check_present(chains["start"], ids, "chain start image id(s)", where)
    _check_present(trip["donor"], ids, "operator donor image id(s)", where)
    _check_present(trip["target"], ids, "operator target image id(s)", where)
    _check_present(gal["chain"], pd.Index(chains["chain"]), "gallery chain(s)", names["chains"])
    _check_present(frames["cascade"]["chain"], pd.Index(chains["chain"]), "cascade chain(s)", names["chains"])
    _check_present(frames["operator"]["triplet"], pd.Index(trip["triplet"]), "operator triplet(s)", names["triplets"])
    for role in ROLES:
        has = pd.Index(gal.loc[gal["role"] == role, "chain"].unique())
        _check_present(chains["chain"], has, f"chain(s) without a {role} gallery", names["galleries"])
    starts = dict(zip(chains["chain"], chains["start"]))
    own = gal[(gal["role"] == "target") & (gal["image_id"] == gal["chain"].map(starts))]
    if len(own):
        raise ValueError(f"{names['galleries']}: {len(own)} chain(s) have their own start in the target gallery, "
                         f"e.g. chain {int(own['chain'].iloc[0])}")


def _check_complete(frames: Mapping[str, pd.DataFrame], names: Mapping[str, str], manifest: Mapping[str, Any],
                    passes: int) -> None:
    """Every stored chain has passes 1..K; every chain is stored or listed as lost, per variant."""
    casc, chains = frames["cascade"], frames["chains"]
    counts = casc.groupby(["variant", "chain"])["pass"].agg(["count", "min", "max"])
    incomplete = counts[(counts["count"] != passes) | (counts["min"] != 1) | (counts["max"] != passes)]
    if len(incomplete):
        raise ValueError(f"{names['cascade']}: {len(incomplete)} (variant, chain) with passes other than 1..{passes}, "
                         f"e.g. {list(incomplete.index[:3])}")
    lost = manifest.get("design", {}).get("cascade", {}).get("lost")
    if lost is None:
        return
    listed = {(str(r["variant"]), int(r["chain"])) for r in lost}
    present = set(zip(casc["variant"].astype(str), casc["chain"].astype(int)))
    variants = manifest.get("design", {}).get("variants") or sorted(casc["variant"].unique())
    absent = {(v, int(ch)) for v in variants for ch in chains["chain"]} - present
    if absent != listed:
        unexplained, extra = sorted(absent - listed), sorted(listed & present)
        raise ValueError(f"{names['cascade']}: {len(unexplained)} chain(s) missing but not listed as lost in "
                         f"{CORPORA_MANIFEST} (e.g. {unexplained[:3]}); {len(extra)} listed as lost but present "
                         f"(e.g. {extra[:3]})")


def load_corpora(encoder: str, directory: str | os.PathLike = "data/corpora", *, verify: bool = True) -> Corpora:
    """Read one encoder's corpora from ``directory`` and check them (module docstring).

    Parameters
    ----------
    encoder : str
        ``"dlib"`` or ``"sface"`` (any prefix with the three parquet files is accepted).
    directory : path-like
        The folder (module docstring).
    verify : bool
        Compare the SHA-256 of every file read with the manifest.

    Returns
    -------
    Corpora
        Originals indexed by image id; the other tables sorted by their keys.

    Raises
    ------
    FileNotFoundError
        A missing file (named).
    ValueError
        A SHA-256 mismatch or a file the manifest does not list (named); missing columns, repeated keys, NaN/inf
        or zero-norm embeddings, dimensions that differ; a gallery, start, donor or target image id absent from
        the originals (named, counted); cascade or operator rows without a design row; an incomplete chain; a chain
        neither complete nor listed in ``design.cascade.lost``; a chain without a target or non-member gallery.

    Examples
    --------
    >>> import tempfile
    >>> corpora = load_corpora("dlib", _example_corpora(tempfile.mkdtemp()))
    >>> len(corpora.chains), len(corpora.galleries), list(corpora.triplets["partition"])
    (1, 2, ['train', 'test'])
    """
    folder = Path(directory)
    manifest, frames, names = _read_corpora(folder, encoder, verify)
    casc = frames["cascade"]
    passes = _manifest_passes(manifest)
    passes = passes if passes is not None else int(casc["pass"].max()) if len(casc) else 0
    _check_schema(frames, names, passes)
    _check_references(frames, names)
    _check_complete(frames, names, manifest, passes)
    orig = frames["originals"]
    return Corpora(encoder=encoder, originals=orig.assign(image_id=orig["image_id"].astype(str)).set_index("image_id"),
                   cascade=casc.sort_values(["variant", "chain", "pass"], kind="stable").reset_index(drop=True),
                   operator=frames["operator"].sort_values(["variant", "triplet"], kind="stable").reset_index(drop=True),
                   chains=frames["chains"].sort_values("chain", kind="stable").reset_index(drop=True),
                   galleries=frames["galleries"].reset_index(drop=True),
                   triplets=frames["triplets"].sort_values("triplet").reset_index(drop=True),
                   manifest=manifest, directory=folder)


def subset_corpora(corpora: Corpora, *, identities: int | None = None, chains_per_identity: int | None = None,
                   train: int | None = None, test: int | None = None) -> Corpora:
    """A slice of the corpora (smoke profiles), as a new view with an empty cache: the first ``identities`` target
    identities (sorted), the first ``chains_per_identity`` chains of each (by id), the first ``train`` / ``test``
    operator triplets of each partition (the design's seeded order); ``None`` keeps all. Originals and the manifest
    (of the whole corpus) are kept.

    Raises
    ------
    ValueError
        A limit below 1.

    Examples
    --------
    >>> import tempfile
    >>> corpora = load_corpora("dlib", _example_corpora(tempfile.mkdtemp()))
    >>> list(subset_corpora(corpora, test=1, train=1).triplets["triplet"])
    [0, 1]
    """
    for name, value in (("identities", identities), ("chains_per_identity", chains_per_identity),
                        ("train", train), ("test", test)):
        if value is not None and int(value) < 1:
            raise ValueError(f"{name} must be >= 1 or None, got {value}")
    chains = corpora.chains.sort_values("chain")
    if identities is not None:
        chains = chains[chains["identity"].isin(sorted(chains["identity"].unique())[:int(identities)])]
    if chains_per_identity is not None:
        chains = chains.groupby("identity", sort=False).head(int(chains_per_identity))
    keep = set(chains["chain"])
    trip = corpora.triplets
    parts = []
    for part, limit in (("train", train), ("test", test)):
        rows = trip[trip["partition"] == part].sort_values("triplet")
        parts.append(rows if limit is None else rows.head(int(limit)))
    trip = pd.concat(parts)
    return Corpora(encoder=corpora.encoder, originals=corpora.originals,
                   cascade=corpora.cascade[corpora.cascade["chain"].isin(keep)],
                   operator=corpora.operator[corpora.operator["triplet"].isin(set(trip["triplet"]))],
                   chains=chains.reset_index(drop=True),
                   galleries=corpora.galleries[corpora.galleries["chain"].isin(keep)],
                   triplets=trip.reset_index(drop=True), manifest=corpora.manifest, directory=corpora.directory)

# --- Cascade and operator corpora: writing ------------------------------------------------------------------


def write_embedding_table(directory: str | os.PathLike, encoder: str, kind: str, frame: pd.DataFrame) -> Path:
    """Write one embedding table (``kind`` of :data:`EMBEDDING_KINDS`, ``frame`` from :func:`embedding_frame`) as
    zstd Parquet, ``<encoder>_<kind>.parquet``; returns the path.

    Raises
    ------
    ValueError
        An unknown ``kind`` or a frame without the kind's key columns.

    Examples
    --------
    >>> import tempfile
    >>> frame = embedding_frame({"variant": ["hull"], "triplet": [0]}, [[1.0, 2.0]], ["hog"], dim=2)
    >>> write_embedding_table(tempfile.mkdtemp(), "dlib", "operator", frame).name
    'dlib_operator.parquet'
    """
    name = embedding_file(encoder, kind)
    _require(frame, _KEYS[kind], name)
    return _write_parquet(frame, Path(directory) / name)


def write_designs(directory: str | os.PathLike, *, chains: pd.DataFrame | None = None,
                  galleries: pd.DataFrame | None = None, triplets: pd.DataFrame | None = None) -> list[Path]:
    """Write the design tables given (CSV without index) under their :data:`DESIGN_FILES` names.

    Raises
    ------
    ValueError
        A table without its required columns.

    Examples
    --------
    >>> import tempfile
    >>> gal = pd.DataFrame({"chain": [0], "role": ["target"], "image_id": ["A/A_0002.jpg"]})
    >>> [p.name for p in write_designs(tempfile.mkdtemp(), galleries=gal)]
    ['cascade_galleries.csv']
    """
    written = []
    for key, frame in (("chains", chains), ("galleries", galleries), ("triplets", triplets)):
        if frame is None:
            continue
        _require(frame, ("chain", "identity", "start", "nonmember") if key == "chains" else _REQUIRED[key],
                 DESIGN_FILES[key])
        path = Path(directory) / DESIGN_FILES[key]
        frame.to_csv(path, index=False)
        written.append(path)
    return written


def write_corpora_manifest(directory: str | os.PathLike, design: Mapping[str, Any],
                           run: Mapping[str, Any]) -> dict:
    """Write :data:`CORPORA_MANIFEST` (the version, the entries of the tables written so far, ``design`` and ``run``;
    JSON, no NaN) and return it. :func:`load_corpora` reads back ``design["cascade"]["passes"]`` and
    ``design["cascade"]["lost"]`` (rows ``variant``, ``chain``, ``pass``).

    Examples
    --------
    >>> import tempfile
    >>> doc = write_corpora_manifest(tempfile.mkdtemp(), {"cascade": {"passes": 1}}, {})
    >>> sorted(doc)
    ['design', 'files', 'manifest_version', 'run']
    """
    return _write_manifest(directory, CORPORA_MANIFEST, design, run)


def _example_corpora(directory: str | os.PathLike, encoder: str = "dlib") -> Path:
    """Write a minimal valid corpus into ``directory`` (returned as a path): one chain of one pass, 3-D embeddings,
    one train and one test triplet."""
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    ids = ["P/P_0001.jpg", "P/P_0002.jpg", "N/N_0001.jpg", "D/D_0001.jpg", "T/T_0001.jpg"]
    vectors = np.eye(5)[:, :3] + 1.0
    write_embedding_table(folder, encoder, "originals", embedding_frame(
        {"image_id": ids, "identity": [i.split("/")[0] for i in ids]}, vectors, ["hog"] * 5, dim=None))
    write_embedding_table(folder, encoder, "cascade", embedding_frame(
        {"variant": ["hull"], "chain": [0], "pass": [1]}, [[1.0, 2.0, 3.0]], ["hog"], dim=None))
    write_embedding_table(folder, encoder, "operator", embedding_frame(
        {"variant": ["hull", "hull"], "triplet": [0, 1]}, [[3.0, 2.0, 1.0], [1.0, 1.0, 2.0]], ["hog"] * 2, dim=None))
    write_designs(folder, chains=pd.DataFrame({"chain": [0], "identity": ["P"], "start": [ids[0]], "nonmember": ["N"],
                                               "donor_1": [ids[3]]}),
                  galleries=pd.DataFrame({"chain": [0, 0], "role": list(ROLES), "image_id": [ids[1], ids[2]]}),
                  triplets=pd.DataFrame({"triplet": [0, 1], "partition": list(_PARTITIONS),
                                         "donor": [ids[3], ids[4]], "target": [ids[4], ids[3]],
                                         "donor_identity": ["D", "T"], "target_identity": ["T", "D"]}))
    write_corpora_manifest(folder, {"variants": ["hull"], "cascade": {"passes": 1, "lost": []}}, {})
    return folder

# --- Resampled corpus: names --------------------------------------------------------------------------------


#: The corpus's folder inside the data folder (the pool design).
RESAMPLED_DIR = "resampled"
#: The photograph designs and their folders inside the data folder.
DESIGNS = ("pool", "disjoint")
DESIGN_DIRS = {"pool": RESAMPLED_DIR, "disjoint": "resampled_disjoint"}
#: The disjoint design's four parts of each identity's photographs.
PARTS = ("dev-1", "dev-2", "test-1", "test-2")
RESAMPLED_MANIFEST = "resampled_manifest.json"
DRAWS_FILE = "resampled_draws.csv"
SPLITS = ("dev", "test")
#: The ``variant`` of pass-0 rows (the photograph itself; the project's generator name ``none``).
ORIGINAL = "none"
_DRAW_REQUIRED = ("draw", "identity", "split", "key", "seed_key", "photograph", "used_none")
_DRAWS_TEXT = {c: str for c in ("identity", "split", "seed_key", "photograph", "part")}


def _resampled_file(encoder: str) -> str:
    """File name of one encoder's resampled embedding table."""
    return f"{encoder}_resampled.parquet"


def corpus_dir(design: str = "pool") -> str:
    """The folder name of a photograph design's corpus.

    Raises
    ------
    ValueError
        An unknown design.

    Examples
    --------
    >>> corpus_dir("pool"), corpus_dir("disjoint")
    ('resampled', 'resampled_disjoint')
    """
    try:
        return DESIGN_DIRS[design]
    except KeyError:
        raise ValueError(f"unknown photograph design {design!r}; choose from {list(DESIGNS)}") from None


def control_half(part: str) -> int:
    """The same-person control's half of a part: 1 for ``dev-1``/``test-1``, 2 for ``dev-2``/``test-2``.

    Examples
    --------
    >>> [control_half(p) for p in PARTS]
    [1, 2, 1, 2]
    """
    if part not in PARTS:
        raise ValueError(f"unknown part {part!r}; expected one of {PARTS}")
    return int(part[-1])


def check_disjoint(draws: pd.DataFrame, name: str = DRAWS_FILE) -> None:
    """The disjoint design's freshness check on a draws table: every draw has a part of its split, each photograph
    lies in one part, and no test draw starts from a photograph a development draw of its identity started from.

    Raises
    ------
    ValueError
        Naming the draw and the photograph (or the column) that break it.

    Examples
    --------
    >>> ok = pd.DataFrame({"draw": [0, 1], "identity": ["A", "A"], "split": ["dev", "test"],
    ...                    "photograph": ["A/A_0001.jpg", "A/A_0002.jpg"], "part": ["dev-2", "test-1"]})
    >>> check_disjoint(ok)
    >>> check_disjoint(ok.assign(photograph="A/A_0001.jpg", part=["dev-1", "test-1"]))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: resampled_draws.csv: test draw 1 starts from photograph A/A_0001.jpg, which development draw 0 ...
    """
    _require(draws, ["draw", "identity", "split", "photograph", "part"], name)
    bad = ~draws["part"].isin(PARTS) | (draws["part"].str.split("-").str[0] != draws["split"])
    if bad.any():
        r = draws[bad].iloc[0]
        raise ValueError(f"{name}: draw {r['draw']} (split {r['split']!r}) has part {r['part']!r}; expected "
                         f"{r['split']}-1 or {r['split']}-2")
    dev = draws[draws["split"] == "dev"].drop_duplicates(["identity", "photograph"]).set_index(["identity", "photograph"])
    test = draws[draws["split"] == "test"]
    hit = test.set_index(["identity", "photograph"]).index.isin(dev.index)
    if hit.any():
        r = test[hit].iloc[0]
        first = dev.loc[(r["identity"], r["photograph"]), "draw"]
        raise ValueError(f"{name}: test draw {r['draw']} starts from photograph {r['photograph']}, which development "
                         f"draw {first} also starts from; a test draw of the disjoint design must start from a "
                         "photograph no development draw used")
    parts = draws.groupby(["identity", "photograph"])["part"].nunique()
    if (parts > 1).any():
        person, photo = parts[parts > 1].index[0]
        raise ValueError(f"{name}: photograph {photo} of {person!r} lies in more than one part")


def status_columns(variant: str) -> tuple[str, str]:
    """``(lost_pass_<variant>, used_<variant>)``: a swap variant's columns in the draws table.

    Examples
    --------
    >>> status_columns("hull")
    ('lost_pass_hull', 'used_hull')
    """
    return f"lost_pass_{variant}", f"used_{variant}"

# --- Resampled corpus: reading ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ResampledPass:
    """One pass of one variant: development and test groups with their draw ids.

    Attributes
    ----------
    dev, test : dict identity -> ndarray (n, d) float64
        Raw embeddings, rows in the order of the draws' keys.
    dev_draws, test_draws : dict identity -> ndarray (n,) int64
        The draw id of each row.

    Examples
    --------
    >>> import tempfile
    >>> p1 = load_resampled("dlib", _example_resampled(tempfile.mkdtemp())).passes[1]
    >>> p1.identities, p1.dev_draws["B"].tolist()
    (['A', 'B'], [4, 5])
    """

    dev: dict[str, np.ndarray]
    test: dict[str, np.ndarray]
    dev_draws: dict[str, np.ndarray]
    test_draws: dict[str, np.ndarray]

    @property
    def identities(self) -> list[str]:
        """Identities, sorted."""
        return sorted(self.dev)


@dataclass(frozen=True, eq=False)
class Resampled:
    """One encoder's and one swap variant's view of the resampled corpus (:func:`load_resampled`).

    Attributes
    ----------
    encoder, variant, design : str
        ``design``: the photograph design (:data:`DESIGNS`; ``pool`` if the manifest has no ``photograph_design``).
    passes : dict int -> ResampledPass
        Pass 0 (the photographs, variant ``none``) and the stored swap passes of ``variant``.
    rows, draws : pandas.DataFrame
        The embedding rows read (``none`` and ``variant``, sorted by (variant, draw, pass)); the draws table.
    manifest : dict
    directory : pathlib.Path

    Examples
    --------
    >>> import tempfile
    >>> corpus = load_resampled("dlib", _example_resampled(tempfile.mkdtemp()))
    >>> sorted(corpus.passes), corpus.dim, corpus.passes[1].test_draws["A"].tolist()  # draw 2 was lost
    ([0, 1], 3, [3, 8])
    """

    encoder: str
    variant: str
    design: str
    passes: dict[int, ResampledPass]
    rows: pd.DataFrame
    draws: pd.DataFrame
    manifest: dict
    directory: Path

    @property
    def dim(self) -> int:
        """Embedding dimension ``d``."""
        return len(_embedding_columns(self.rows, _resampled_file(self.encoder)))

    @property
    def identities(self) -> list[str]:
        """Identities of the corpus, sorted."""
        return sorted(self.draws["identity"].unique())


def _read_resampled(folder: Path, encoder: str, verify: bool) -> tuple[dict, pd.DataFrame, pd.DataFrame]:
    mpath = folder / RESAMPLED_MANIFEST
    if not mpath.is_file():
        raise FileNotFoundError(f"{mpath}: missing (the resampled corpus's manifest; folder {folder})")
    manifest = json.loads(mpath.read_text(encoding="utf-8"))
    for name in (_resampled_file(encoder), DRAWS_FILE):
        path = folder / name
        if not path.is_file():
            raise FileNotFoundError(f"{path}: missing (encoder {encoder!r}; present: "
                                    f"{sorted(p.name for p in folder.glob('*.parquet'))})")
        if verify:
            _verify_file(path, manifest, mpath)
    rows = pd.read_parquet(folder / _resampled_file(encoder))
    draws = pd.read_csv(folder / DRAWS_FILE, keep_default_na=False, dtype=_DRAWS_TEXT)
    return manifest, rows, draws


def _resampled_design(manifest: Mapping[str, Any]) -> tuple[list[int], list[str], dict[str, int], int]:
    design = manifest.get("design", {})
    try:
        return ([int(k) for k in design["passes"]], [str(v) for v in design["variants"]],
                {s: int(design["draws_per_split"][s]) for s in SPLITS}, int(design["chain_length"]))
    except (KeyError, TypeError) as exc:
        raise ValueError(f"{RESAMPLED_MANIFEST}: design lacks passes/variants/draws_per_split/chain_length ({exc})") from None


def _check_draws(draws: pd.DataFrame, variants: Sequence[str], chain_length: int) -> None:
    name = DRAWS_FILE
    _require(draws, list(_DRAW_REQUIRED) + donor_columns(chain_length)
             + [c for v in variants for c in status_columns(v)], name)
    _check_unique(draws, ["draw"], name)
    _check_unique(draws, ["identity", "split", "key"], name)
    bad = sorted(set(draws["split"]) - set(SPLITS))
    if bad:
        raise ValueError(f"{name}: column 'split' holds {bad}; expected {SPLITS}")
    owner = draws["photograph"].str.split("/").str[0]
    if (owner != draws["identity"]).any():
        row = int(np.argmax((owner != draws["identity"]).to_numpy()))
        raise ValueError(f"{name}: column 'photograph' names another identity than column 'identity' at row {row}")
    for col in ["used_none"] + [status_columns(v)[1] for v in variants]:
        if not draws[col].isin([0, 1]).all():
            raise ValueError(f"{name}: column {col!r} must hold 0 or 1")
    for v in variants:
        lost, used = status_columns(v)
        if not draws[lost].between(0, chain_length).all():
            raise ValueError(f"{name}: column {lost!r} must hold a pass in 0..{chain_length}")
        if ((draws[used] == 1) & (draws[lost] != 0)).any():
            raise ValueError(f"{name}: draws marked in {used!r} were lost (column {lost!r} > 0)")


def _check_resampled_rows(rows: pd.DataFrame, draws: pd.DataFrame, name: str, passes: Sequence[int],
                variants: Sequence[str], per_split: Mapping[str, int]) -> None:
    """Keys, embeddings, and that the stored rows are exactly the used draws, each with every pass."""
    _require(rows, list(_KEYS["resampled"]) + ["path"], name)
    _check_finite(rows, _embedding_columns(rows, name), name)
    _check_unique(rows, _KEYS["resampled"], name)
    unknown = sorted(set(rows["draw"]) - set(draws["draw"]))
    if unknown:
        raise ValueError(f"{name}: column 'draw' holds {len(unknown)} id(s) not in {DRAWS_FILE}, e.g. {unknown[:5]}")
    for variant, want_passes, used in [(ORIGINAL, [0], "used_none")] + [(v, [k for k in passes if k > 0],
                                                                          status_columns(v)[1]) for v in variants]:
        part = rows[rows["variant"] == variant]
        bad = sorted(set(part["pass"]) - set(want_passes))
        if bad:
            raise ValueError(f"{name}: column 'pass' holds {bad} for variant {variant!r}; expected {want_passes}")
        expected = set(draws.loc[draws[used] == 1, "draw"])
        for k in want_passes:
            have = set(part.loc[part["pass"] == k, "draw"])
            if have != expected:
                raise ValueError(f"{name}: variant {variant!r} pass {k}: {len(expected - have)} draw(s) marked in "
                                 f"{DRAWS_FILE} column {used!r} have no row, {len(have - expected)} row(s) "
                                 f"belong to unmarked draws")
        counts = draws[draws[used] == 1].groupby(["identity", "split"]).size()
        wrong = {k: int(n) for k, n in counts.items() if n != per_split[k[1]]}
        if wrong or len(counts) != 2 * draws["identity"].nunique():
            raise ValueError(f"{DRAWS_FILE}: column {used!r} marks other than {dict(per_split)} draws per identity "
                             f"and split, e.g. {dict(list(wrong.items())[:3])}")
    other = sorted(set(rows["variant"]) - {ORIGINAL, *variants})
    if other:
        raise ValueError(f"{name}: column 'variant' holds {other}, not in the manifest's variants {list(variants)}")


def _pass_groups(rows: pd.DataFrame, draws: pd.DataFrame, cols: list[str]) -> ResampledPass:
    merged = rows.merge(draws[["draw", "identity", "split", "key"]], on="draw", how="left")
    merged = merged.sort_values(["identity", "split", "key"], kind="stable")
    out: dict[str, dict[str, np.ndarray]] = {"dev": {}, "test": {}, "dev_draws": {}, "test_draws": {}}
    for (person, split), part in merged.groupby(["identity", "split"], sort=True):
        out[split][person] = part[cols].to_numpy(dtype=np.float64)
        out[f"{split}_draws"][person] = part["draw"].to_numpy(dtype=np.int64)
    return ResampledPass(**out)


def load_resampled(encoder: str, directory: str | os.PathLike = "data/resampled", *, variant: str = "hull",
                   verify: bool = True) -> Resampled:
    """Read one encoder's resampled corpus for one swap variant and check it (module docstring).

    Parameters
    ----------
    encoder : str
        ``"dlib"`` or ``"sface"``.
    directory : path-like
        The folder (module docstring).
    variant : str
        A swap variant of the manifest's ``design.variants`` (pass 0 is shared by all).
    verify : bool
        Compare the SHA-256 of the files read with the manifest.

    Returns
    -------
    Resampled
        ``passes[k]``: the development and test groups (identity -> (n, d)) of pass ``k`` and their draw ids.

    Raises
    ------
    FileNotFoundError
        A missing file (named).
    ValueError
        A SHA-256 mismatch or an unlisted file; a manifest without the design fields read back; a variant the
        corpus lacks; missing columns, repeated keys, NaN/inf or zero-norm embeddings, an unknown draw id, stored
        rows that are not exactly the used draws (each with every pass), per-split counts other than the
        manifest's, unknown splits, a photograph of another identity, a used draw that was lost (file, column named).

    Examples
    --------
    >>> import tempfile
    >>> corpus = load_resampled("dlib", _example_resampled(tempfile.mkdtemp()))
    >>> p0 = corpus.passes[0]
    >>> p0.dev["A"].tolist(), p0.dev_draws["A"].tolist()
    ([[1.0, 0.0, 0.0], [1.0, 0.0, 0.0]], [0, 1])
    """
    folder = Path(directory)
    manifest, rows, draws = _read_resampled(folder, encoder, verify)
    passes, variants, per_split, chain_length = _resampled_design(manifest)
    if variant not in variants:
        raise ValueError(f"variant {variant!r} not in {folder / RESAMPLED_MANIFEST} (design.variants {variants})")
    name = _resampled_file(encoder)
    _check_draws(draws, variants, chain_length)
    design = str(manifest.get("design", {}).get("photograph_design", "pool"))
    if design not in DESIGNS:
        raise ValueError(f"{folder / RESAMPLED_MANIFEST}: design.photograph_design {design!r} is not one of {list(DESIGNS)}")
    if design == "disjoint":
        check_disjoint(draws)
    _check_resampled_rows(rows, draws, name, passes, variants, per_split)
    rows = rows[rows["variant"].isin([ORIGINAL, variant])].sort_values(list(_KEYS["resampled"]), kind="stable")
    rows = rows.reset_index(drop=True)
    cols = _embedding_columns(rows, name)
    out = {0: _pass_groups(rows[rows["pass"] == 0], draws, cols)}
    for k in passes:
        if k > 0:
            out[k] = _pass_groups(rows[(rows["variant"] == variant) & (rows["pass"] == k)], draws, cols)
    return Resampled(encoder=encoder, variant=variant, design=design, passes=out, rows=rows,
                     draws=draws.sort_values("draw", kind="stable").reset_index(drop=True), manifest=manifest,
                     directory=folder)

# --- Resampled corpus: writing ------------------------------------------------------------------------------


def resampled_frame(keys: Mapping[str, Sequence] | pd.DataFrame | Sequence[Mapping[str, Any]], vectors,
                    paths: Sequence[str], *, dim: int | None = EMBEDDING_DIM) -> pd.DataFrame:
    """:func:`embedding_frame` with this corpus's keys checked: ``variant``, ``draw``, ``pass``, ``path``, ``e0 ..``.

    Raises
    ------
    ValueError
        Missing key columns, or embeddings of another dimension or holding NaN/inf.

    Examples
    --------
    >>> resampled_frame({"variant": ["none"], "draw": [0], "pass": [0]}, [[0.5, 2.0]], ["hog"], dim=2)
      variant  draw  pass path   e0   e1
    0    none     0     0  hog  0.5  2.0
    """
    frame = embedding_frame(keys, vectors, paths, dim=dim)
    _require(frame, _KEYS["resampled"], "resampled embedding table")
    return frame


def write_resampled_table(directory: str | os.PathLike, encoder: str, frame: pd.DataFrame) -> Path:
    """Write one encoder's resampled table as zstd Parquet, rows sorted by (variant, draw, pass); returns the path.

    Examples
    --------
    >>> import tempfile
    >>> frame = resampled_frame({"variant": ["none"], "draw": [0], "pass": [0]}, [[1.0, 2.0]], ["hog"], dim=2)
    >>> write_resampled_table(tempfile.mkdtemp(), "dlib", frame).name
    'dlib_resampled.parquet'
    """
    name = _resampled_file(encoder)
    _require(frame, _KEYS["resampled"], name)
    frame = frame.sort_values(list(_KEYS["resampled"]), kind="stable").reset_index(drop=True)
    return _write_parquet(frame, Path(directory) / name)


def write_draws(directory: str | os.PathLike, draws: pd.DataFrame) -> Path:
    """Write :data:`DRAWS_FILE` (CSV, rows sorted by draw id); returns the path.

    Raises
    ------
    ValueError
        A table without the required columns.

    Examples
    --------
    >>> import tempfile
    >>> draws = pd.DataFrame({"draw": [0], "identity": ["A"], "split": ["dev"], "key": [0], "seed_key": ["k"],
    ...                       "photograph": ["A/A_0001.jpg"], "used_none": [1]})
    >>> write_draws(tempfile.mkdtemp(), draws).name
    'resampled_draws.csv'
    """
    _require(draws, _DRAW_REQUIRED, DRAWS_FILE)
    path = Path(directory) / DRAWS_FILE
    draws.sort_values("draw", kind="stable").to_csv(path, index=False)
    return path


def write_resampled_manifest(directory: str | os.PathLike, design: Mapping[str, Any],
                             run: Mapping[str, Any]) -> dict:
    """Write :data:`RESAMPLED_MANIFEST` (the version, the entries of every table in the folder, ``design``, ``run``)
    and return it; ``design`` must hold ``passes``, ``variants``, ``draws_per_split`` and ``chain_length``.

    Raises
    ------
    ValueError
        A design without those fields.

    Examples
    --------
    >>> import tempfile
    >>> doc = write_resampled_manifest(tempfile.mkdtemp(), {"passes": [0, 1], "variants": ["hull"],
    ...                                "draws_per_split": {"dev": 1, "test": 1}, "chain_length": 1}, {})
    >>> sorted(doc)
    ['design', 'files', 'manifest_version', 'run']
    """
    _resampled_design({"design": design})
    return _write_manifest(directory, RESAMPLED_MANIFEST, design, run)


def _example_resampled(directory: str | os.PathLike, encoder: str = "dlib") -> Path:
    """Write a minimal valid resampled corpus into ``directory`` (returned as a path): identities A and B, two dev
    and two test draws each, passes 0 and 1 of ``hull`` (chains of one pass), 3-D embeddings, one lost draw redrawn."""
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for person, split, key in [(p, s, k) for p in "AB" for s in SPLITS for k in range(2)] + [("A", "test", 2)]:
        rows.append({"draw": len(rows), "identity": person, "split": split, "key": key,
                     "seed_key": f"resampled-draw|0|{person}|{split}|{key}",
                     "photograph": f"{person}/{person}_0001.jpg", "donor_1": "D/D_0001.jpg",
                     "used_none": int(key < 2), "lost_pass_hull": 0, "used_hull": 1})
    draws = pd.DataFrame(rows)
    draws.loc[(draws["identity"] == "A") & (draws["split"] == "test") & (draws["key"] == 0),
              ["lost_pass_hull", "used_hull"]] = [1, 0]
    keys, vectors = [], []
    for r in draws.itertuples(index=False):
        base = np.array([1.0, 0.0, 0.0]) if r.identity == "A" else np.array([0.0, 1.0, 0.0])
        if r.used_none:
            keys.append({"variant": ORIGINAL, "draw": r.draw, "pass": 0})
            vectors.append(base)
        if r.used_hull:
            keys.append({"variant": "hull", "draw": r.draw, "pass": 1})
            vectors.append(base + [0.0, 0.0, 1.0 + r.key])
    write_resampled_table(folder, encoder, resampled_frame(keys, vectors, ["hog"] * len(keys), dim=None))
    write_draws(folder, draws)
    write_resampled_manifest(folder, {"passes": [0, 1], "variants": ["hull"], "draws_per_split": {"dev": 2, "test": 2},
                            "chain_length": 1, "lost": [{"variant": "hull", "draw": 2, "pass": 1}]}, {})
    return folder
