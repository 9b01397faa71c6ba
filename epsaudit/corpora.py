"""The cascade and operator corpora on disk: the one home of their file format, reader and writer.

The corpora (built from LFW photographs by :mod:`epsaudit.build.corpora_builder`; *Toward Interpretable
Privacy Guarantees in Face-Swapping Anonymization*, Sections VI-VIII) are one folder,
``data/corpora/`` by default, holding per encoder three embedding tables and, shared by the
encoders, three design tables and a manifest:

- ``<encoder>_originals.parquet`` -- every original photograph used anywhere, once: ``image_id``,
  ``identity``, ``path`` (the face-detection path), ``e0 .. e{d-1}`` (raw float32);
- ``<encoder>_cascade.parquet`` -- every pass of every complete chain: ``variant``, ``chain``,
  ``pass`` (1..K), ``path``, ``e0 ..``;
- ``<encoder>_operator.parquet`` -- every single-swap output: ``variant``, ``triplet``, ``path``,
  ``e0 ..``;
- ``cascade_chains.csv`` -- ``chain``, ``identity``, ``start``, ``nonmember``, ``donor_1 ..
  donor_K``;
- ``cascade_galleries.csv`` -- ``chain``, ``role`` (``target``/``nonmember``), ``image_id``;
- ``operator_triplets.csv`` -- ``triplet``, ``partition`` (``train``/``test``), ``donor``,
  ``target``, ``donor_identity``, ``target_identity``;
- ``corpora_manifest.json`` -- ``manifest_version``, ``files`` (SHA-256, bytes, rows and detection
  paths of every table), ``design`` (counts, rules, seeds, lost chains) and ``run`` (timing).

Parquet tables are zstd-compressed, float columns byte-stream-split (:func:`write_embedding_table`).
:func:`load_corpora` reads one encoder's view and checks it against the manifest and the schema;
:func:`subset_corpora` slices it; the writer functions (:func:`embedding_frame`,
:func:`write_embedding_table`, :func:`write_designs`, :func:`write_manifest`) are what the builder
calls, so reader and writer share this module's names.
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

from .data import jsonable, sha256_file

__all__ = ["CORPORA_DIR", "MANIFEST", "MANIFEST_VERSION", "ENCODERS", "EMBEDDING_KINDS", "DESIGN_FILES", "ROLES",
           "PARTITIONS", "EMBEDDING_PREFIX", "EMBEDDING_DIM", "Corpora", "embedding_file", "embedding_columns",
           "donor_columns", "load_corpora", "subset_corpora", "embedding_frame", "write_embedding_table",
           "write_designs", "file_entries", "write_manifest", "example_corpora"]

#: The corpora's folder inside the data folder.
CORPORA_DIR = "corpora"
MANIFEST = "corpora_manifest.json"
MANIFEST_VERSION = 1
ENCODERS = ("dlib", "sface")
#: The embedding tables of one encoder, ``<encoder>_<kind>.parquet``.
EMBEDDING_KINDS = ("originals", "cascade", "operator")
#: The design tables, shared by the encoders.
DESIGN_FILES = {"chains": "cascade_chains.csv", "galleries": "cascade_galleries.csv",
                "triplets": "operator_triplets.csv"}
ROLES = ("target", "nonmember")
PARTITIONS = ("train", "test")
EMBEDDING_PREFIX = "e"
EMBEDDING_DIM = 128
#: Key columns of each embedding table (unique per row).
KEYS = {"originals": ("image_id",), "cascade": ("variant", "chain", "pass"), "operator": ("variant", "triplet")}
_REQUIRED = {"originals": ("image_id", "identity"), "cascade": KEYS["cascade"], "operator": KEYS["operator"],
             "galleries": ("chain", "role", "image_id"),
             "triplets": ("triplet", "partition", "donor", "target", "donor_identity", "target_identity")}
_TEXT = {c: str for c in ("image_id", "start", "donor", "target", "identity", "nonmember", "donor_identity",
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


def embedding_columns(dim: int = EMBEDDING_DIM) -> list[str]:
    """The embedding column names ``e0 .. e{dim-1}``.

    Examples
    --------
    >>> embedding_columns(3)
    ['e0', 'e1', 'e2']
    """
    return [f"{EMBEDDING_PREFIX}{j}" for j in range(dim)]


def donor_columns(passes: int) -> list[str]:
    """The donor columns of ``cascade_chains.csv``, one per pass.

    Examples
    --------
    >>> donor_columns(2)
    ['donor_1', 'donor_2']
    """
    return [f"donor_{k}" for k in range(1, int(passes) + 1)]


# -------------------------------------------------------------------------------------------------
# reading


@dataclass(frozen=True, eq=False)
class Corpora:
    """One encoder's view of the cascade and operator corpora (:func:`load_corpora`).

    Attributes
    ----------
    encoder : str
    originals, cascade, operator : pandas.DataFrame
        The encoder's embedding tables (columns in the module docstring); ``originals`` is indexed
        by ``image_id``, ``cascade`` holds complete chains only.
    chains, galleries, triplets : pandas.DataFrame
        The design tables.
    manifest : dict
        ``corpora_manifest.json``.
    directory : pathlib.Path
    cache : dict
        Memo of derived arrays for analyses of this view (keyed by the caller; never written).

    Examples
    --------
    >>> import tempfile
    >>> corpora = load_corpora("dlib", example_corpora(tempfile.mkdtemp()))
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


def _embedding_columns(frame: pd.DataFrame, name: str) -> list[str]:
    cols = [c for c in frame.columns if isinstance(c, str) and c.startswith(EMBEDDING_PREFIX) and c[1:].isdigit()]
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
    """``ValueError`` unless ``path``'s SHA-256 is the one its manifest ``mpath`` lists (shared with the resampled corpus)."""
    entry = manifest.get("files", {}).get(path.name)
    if entry is None or "sha256" not in entry:
        raise ValueError(f"{path}: not listed with a sha256 in {mpath}")
    digest = sha256_file(path)
    if digest != entry["sha256"]:
        raise ValueError(f"{path}: SHA-256 {digest[:12]}... does not match {mpath.name} "
                         f"({entry['sha256'][:12]}...); the file changed after the manifest was written")


def _file_names(encoder: str) -> dict[str, str]:
    return {**{kind: embedding_file(encoder, kind) for kind in EMBEDDING_KINDS}, **DESIGN_FILES}


def _read_files(folder: Path, encoder: str, verify: bool) -> tuple[dict, dict[str, pd.DataFrame], dict[str, str]]:
    """The manifest and every table of one encoder, each file's SHA-256 checked against the manifest."""
    mpath = folder / MANIFEST
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
                  else pd.read_csv(folder / n, keep_default_na=False, dtype=_TEXT))
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
        _check_unique(frames[key], KEYS[key], names[key])
    _check_unique(frames["chains"], ["chain"], names["chains"])
    _check_unique(frames["triplets"], ["triplet"], names["triplets"])
    bad_roles = set(frames["galleries"]["role"]) - set(ROLES)
    if bad_roles:
        raise ValueError(f"{names['galleries']}: unknown role(s) {sorted(bad_roles)}; expected {ROLES}")
    bad_parts = set(frames["triplets"]["partition"]) - set(PARTITIONS)
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
                         f"{MANIFEST} (e.g. {unexplained[:3]}); {len(extra)} listed as lost but present "
                         f"(e.g. {extra[:3]})")


def load_corpora(encoder: str, directory: str | os.PathLike = "data/corpora", *, verify: bool = True) -> Corpora:
    """Read one encoder's corpora from ``directory`` and check them (module docstring).

    Parameters
    ----------
    encoder : str
        ``"dlib"`` or ``"sface"`` (any prefix with the three parquet files is accepted).
    directory : path-like
        Folder holding :data:`MANIFEST`, ``<encoder>_{originals,cascade,operator}.parquet`` and the
        design CSVs.
    verify : bool
        Compare the SHA-256 of every file read with the manifest.

    Returns
    -------
    Corpora
        Originals indexed by image id; cascade rows sorted by (variant, chain, pass), operator rows
        by (variant, triplet), chains and triplets by their ids.

    Raises
    ------
    FileNotFoundError
        A missing file (named).
    ValueError
        A SHA-256 mismatch or a file the manifest does not list (named); missing columns,
        repeated keys, NaN/inf or zero-norm embeddings, embedding dimensions that differ; a
        gallery, start, donor or target image id absent from the originals (the ids and their
        count are named); cascade or operator rows without a design row; an incomplete chain; a
        chain that is neither complete nor listed in the manifest's ``design.cascade.lost``; a
        chain without a target or non-member gallery.

    Examples
    --------
    >>> import tempfile
    >>> corpora = load_corpora("dlib", example_corpora(tempfile.mkdtemp()))
    >>> len(corpora.chains), len(corpora.galleries), list(corpora.triplets["partition"])
    (1, 2, ['train', 'test'])
    """
    folder = Path(directory)
    manifest, frames, names = _read_files(folder, encoder, verify)
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
    """A slice of the corpora (smoke profiles).

    The first ``identities`` target identities (sorted), the first ``chains_per_identity`` chains of
    each (by chain id), and the first ``train`` / ``test`` operator triplets of each partition (the
    design's seeded order). ``None`` keeps everything. Originals and the manifest (which describes
    the whole corpus) are kept.

    Returns a new view (with an empty cache).

    Raises
    ------
    ValueError
        A limit below 1.

    Examples
    --------
    >>> import tempfile
    >>> corpora = load_corpora("dlib", example_corpora(tempfile.mkdtemp()))
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


# -------------------------------------------------------------------------------------------------
# writing


def embedding_frame(keys: Mapping[str, Sequence] | pd.DataFrame | Sequence[Mapping[str, Any]], vectors,
                    paths: Sequence[str], *, dim: int | None = EMBEDDING_DIM) -> pd.DataFrame:
    """One embedding table in the stored layout: the key columns, ``path``, ``e0 ..`` as float32.

    Parameters
    ----------
    keys : mapping of columns, DataFrame or list of row dicts
        The key columns (e.g. ``image_id`` and ``identity``; or ``variant``, ``chain``, ``pass``).
    vectors : array_like, shape (n, d)
        Raw embeddings.
    paths : sequence of str, length n
        The face-detection path of each embedding.
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


def write_embedding_table(directory: str | os.PathLike, encoder: str, kind: str, frame: pd.DataFrame) -> Path:
    """Write one embedding table as zstd Parquet (``<encoder>_<kind>.parquet``).

    Float columns are written without dictionary encoding and with byte-stream-split (float32
    embeddings do not repeat: this is 37% smaller than pandas' default dictionary encoding).

    ``kind`` is one of :data:`EMBEDDING_KINDS`, ``frame`` from :func:`embedding_frame`; returns the path.

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
    import pyarrow as pa
    import pyarrow.parquet as pq

    name = embedding_file(encoder, kind)
    _require(frame, KEYS[kind], name)
    path = Path(directory) / name
    floats = [c for c in frame.columns if pd.api.types.is_float_dtype(frame[c])]
    others = [c for c in frame.columns if c not in floats]
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path, compression="zstd",
                   use_dictionary=others or False, use_byte_stream_split=floats or False)
    return path


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


def file_entries(directory: str | os.PathLike) -> dict[str, dict[str, Any]]:
    """Manifest entries of every ``.parquet``/``.csv`` in ``directory``: SHA-256, bytes, rows, and
    the detection paths of the Parquet tables.

    Examples
    --------
    >>> import tempfile
    >>> entries = file_entries(example_corpora(tempfile.mkdtemp()))
    >>> entries["dlib_cascade.parquet"]["rows"], entries["dlib_cascade.parquet"]["detection_paths"]
    (1, {'hog': 1})
    """
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


def write_manifest(directory: str | os.PathLike, design: Mapping[str, Any], run: Mapping[str, Any]) -> dict:
    """Write :data:`MANIFEST`: the version, :func:`file_entries` of the tables written so far, the
    design and the run record (JSON, no NaN).

    ``design`` holds counts, rules and seeds (``design["cascade"]["passes"]`` and
    ``design["cascade"]["lost"]``, rows ``variant``, ``chain``, ``pass``, are read back by
    :func:`load_corpora`), ``run`` timing and environment. Returns the manifest as written.

    Examples
    --------
    >>> import tempfile
    >>> doc = write_manifest(tempfile.mkdtemp(), {"cascade": {"passes": 1}}, {})
    >>> sorted(doc)
    ['design', 'files', 'manifest_version', 'run']
    """
    doc = {"manifest_version": MANIFEST_VERSION, "files": file_entries(directory), "design": dict(design),
           "run": dict(run)}
    (Path(directory) / MANIFEST).write_text(json.dumps(jsonable(doc), indent=1, allow_nan=False) + "\n",
                                            encoding="utf-8")
    return doc


def example_corpora(directory: str | os.PathLike, encoder: str = "dlib") -> Path:
    """Write a minimal valid corpus (one chain of one pass, 3-D embeddings, one train and one test
    triplet) into ``directory``: what :func:`load_corpora` accepts at the least; for examples and tests.

    Returns ``directory`` as a path.

    Examples
    --------
    >>> import tempfile
    >>> sorted(p.name for p in example_corpora(tempfile.mkdtemp()).iterdir())[:2]
    ['cascade_chains.csv', 'cascade_galleries.csv']
    """
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
                  triplets=pd.DataFrame({"triplet": [0, 1], "partition": list(PARTITIONS), "donor": [ids[3], ids[4]],
                                         "target": [ids[4], ids[3]], "donor_identity": ["D", "T"],
                                         "target_identity": ["T", "D"]}))
    write_manifest(folder, {"variants": ["hull"], "cascade": {"passes": 1, "lost": []}}, {})
    return folder
