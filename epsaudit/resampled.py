"""The resampled swap corpus on disk: the one home of its file format, reader and writer.

The corpus (built from LFW photographs by :mod:`epsaudit.build.resampled_builder`) holds independent
samples of the randomised mechanism

    M_k(A) = encode(pass k of a swap chain started from a photograph drawn uniformly from A's
    photographs, with a fresh donor photograph drawn for every pass),

so that an identity with ~25 photographs still gets 100+ development and 100+ test rows for the
reserved test (*Picture the Epsilon*, Section IV-C; the swapper of *Toward Interpretable Privacy
Guarantees in Face-Swapping Anonymization*, Sections VI-VII). Each *draw* is one chain: the start
photograph and the chain's donors, drawn with replacement from their pools by the draw's own seed
key, independently of every other draw. Its pass-0 row (the photograph itself, variant ``none``) and
its pass-k rows of each swap variant are encoded from that one chain, so the rows of one draw are
dependent (pass 1 and pass 5 share the photograph and the first donor) while rows of different draws
are independent. Repeated photographs across draws are expected; a repeated *draw* would not be,
which is why every row carries its draw id.

Two photograph designs, one folder each (:data:`DESIGN_DIRS`):

- ``pool`` (``data/resampled/``): every draw's photograph is uniform on all of the identity's
  photographs, development and test alike, so a test draw usually starts from a photograph some
  development draw also started from -- a certificate of this design is about the identity's
  *photograph pool*;
- ``disjoint`` (``data/resampled_disjoint/``): each identity's photographs are cut once, by a seeded
  shuffle and before anything else, into four disjoint parts :data:`PARTS`; development draws start
  on ``dev-1`` or ``dev-2``, test draws on ``test-1`` or ``test-2`` (the draws table's ``part``
  column), so the test is evidence about photographs the classifier never saw
  (:func:`check_disjoint` refuses a test draw whose photograph a development draw used). The same
  draws, re-partitioned by the part their photograph lies in (half 1: ``dev-1``/``test-1``, half 2:
  ``dev-2``/``test-2``, :func:`control_half`), make a same-person control that asks what the
  certificate asks.

Each folder holds:

- ``<encoder>_resampled.parquet`` -- one row per stored (variant, draw, pass): ``variant``
  (``none`` for pass 0, else the swap variant), ``draw``, ``pass``, ``path`` (the face-detection
  path), ``e0 .. e{d-1}`` (raw float32);
- ``resampled_draws.csv`` -- one row per draw (used or not): ``draw``, ``identity``, ``split``
  (``dev``/``test``), ``key`` (the draw's index in its identity's split), ``seed_key``,
  ``photograph``, ``donor_1 .. donor_K``, ``used_none`` (its pass-0 row is stored) and per swap
  variant ``lost_pass_<variant>`` (0: the chain ran all K passes; else the pass whose input had no
  face) and ``used_<variant>`` (its pass-k rows are stored);
- ``resampled_manifest.json`` -- ``manifest_version``, ``files`` (SHA-256, bytes, rows, detection
  paths), ``design`` (rules, seeds, counts, lost draws; ``passes``, ``variants`` and
  ``draws_per_split`` are read back) and ``run`` (timings per stage).

Parquet tables are zstd-compressed with byte-stream-split floats, as the cascade corpora
(:mod:`epsaudit.corpora`). :func:`load_resampled` reads one encoder and variant, checks every file
against the manifest and the schema, and returns per pass the development and test groups with
their draw ids; the writer functions (:func:`resampled_frame`, :func:`write_resampled_table`,
:func:`write_draws`, :func:`write_manifest`) are what the builder calls.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from .corpora import (EMBEDDING_DIM, ENCODERS, _check_finite, _check_unique, _embedding_columns, _require,
                      _verify_file, donor_columns, embedding_frame, file_entries)
from .data import jsonable

__all__ = ["RESAMPLED_DIR", "DESIGNS", "DESIGN_DIRS", "PARTS", "corpus_dir", "control_half", "check_disjoint",
           "MANIFEST", "MANIFEST_VERSION", "DRAWS_FILE", "ENCODERS", "SPLITS", "ORIGINAL", "KEYS",
           "ResampledPass", "Resampled", "embedding_file", "donor_columns", "status_columns", "load_resampled",
           "resampled_frame", "write_resampled_table", "write_draws", "write_manifest", "example_resampled"]

#: The corpus's folder inside the data folder (the pool design).
RESAMPLED_DIR = "resampled"
#: The photograph designs and their folders inside the data folder.
DESIGNS = ("pool", "disjoint")
DESIGN_DIRS = {"pool": RESAMPLED_DIR, "disjoint": "resampled_disjoint"}
#: The disjoint design's four parts of each identity's photographs.
PARTS = ("dev-1", "dev-2", "test-1", "test-2")
MANIFEST = "resampled_manifest.json"
MANIFEST_VERSION = 1
DRAWS_FILE = "resampled_draws.csv"
SPLITS = ("dev", "test")
#: The ``variant`` of pass-0 rows (the photograph itself; the project's generator name ``none``).
ORIGINAL = "none"
#: Key columns of the embedding tables (unique per row).
KEYS = ("variant", "draw", "pass")
_DRAW_REQUIRED = ("draw", "identity", "split", "key", "seed_key", "photograph", "used_none")
_TEXT = {c: str for c in ("identity", "split", "seed_key", "photograph", "part")}


def embedding_file(encoder: str) -> str:
    """File name of one encoder's embedding table.

    Examples
    --------
    >>> embedding_file("sface")
    'sface_resampled.parquet'
    """
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
    """The disjoint design's freshness check on a draws table: every draw has a part of its split,
    each photograph lies in one part, and no test draw starts from a photograph a development draw
    of its identity started from.

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


# -------------------------------------------------------------------------------------------------
# reading


@dataclass(frozen=True)
class ResampledPass:
    """One pass of one variant: development and test groups with their draw ids.

    Attributes
    ----------
    dev, test : dict identity -> ndarray (n, d) float64
        Raw embeddings, rows in the order of the draws' keys.
    dev_draws, test_draws : dict identity -> ndarray (n,) int64
        The draw id of each row.
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
    encoder, variant : str
    design : str
        The photograph design (:data:`DESIGNS`; a manifest without ``design.photograph_design`` is ``pool``).
    passes : dict int -> ResampledPass
        Pass 0 (the photographs, variant ``none``) and the stored swap passes of ``variant``.
    rows : pandas.DataFrame
        The embedding rows read (``none`` and ``variant``), sorted by (variant, draw, pass).
    draws : pandas.DataFrame
        The draws table.
    manifest : dict
    directory : pathlib.Path

    Examples
    --------
    >>> import tempfile
    >>> corpus = load_resampled("dlib", example_resampled(tempfile.mkdtemp()))
    >>> sorted(corpus.passes), corpus.dim, corpus.identities
    ([0, 1], 3, ['A', 'B'])
    >>> corpus.passes[1].test["A"].shape, corpus.passes[1].test_draws["A"].tolist()  # draw 2 was lost
    ((2, 3), [3, 8])
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
        return len(_embedding_columns(self.rows, embedding_file(self.encoder)))

    @property
    def identities(self) -> list[str]:
        """Identities of the corpus, sorted."""
        return sorted(self.draws["identity"].unique())


def _read(folder: Path, encoder: str, verify: bool) -> tuple[dict, pd.DataFrame, pd.DataFrame]:
    mpath = folder / MANIFEST
    if not mpath.is_file():
        raise FileNotFoundError(f"{mpath}: missing (the resampled corpus's manifest; folder {folder})")
    manifest = json.loads(mpath.read_text(encoding="utf-8"))
    for name in (embedding_file(encoder), DRAWS_FILE):
        path = folder / name
        if not path.is_file():
            raise FileNotFoundError(f"{path}: missing (encoder {encoder!r}; present: "
                                    f"{sorted(p.name for p in folder.glob('*.parquet'))})")
        if verify:
            _verify_file(path, manifest, mpath)
    rows = pd.read_parquet(folder / embedding_file(encoder))
    draws = pd.read_csv(folder / DRAWS_FILE, keep_default_na=False, dtype=_TEXT)
    return manifest, rows, draws


def _design(manifest: Mapping[str, Any]) -> tuple[list[int], list[str], dict[str, int], int]:
    design = manifest.get("design", {})
    try:
        return ([int(k) for k in design["passes"]], [str(v) for v in design["variants"]],
                {s: int(design["draws_per_split"][s]) for s in SPLITS}, int(design["chain_length"]))
    except (KeyError, TypeError) as exc:
        raise ValueError(f"{MANIFEST}: design lacks passes/variants/draws_per_split/chain_length ({exc})") from None


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


def _check_rows(rows: pd.DataFrame, draws: pd.DataFrame, name: str, passes: Sequence[int],
                variants: Sequence[str], per_split: Mapping[str, int]) -> None:
    """Keys, embeddings, and that the stored rows are exactly the used draws, each with every pass."""
    _require(rows, list(KEYS) + ["path"], name)
    _check_finite(rows, _embedding_columns(rows, name), name)
    _check_unique(rows, KEYS, name)
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


def _groups(rows: pd.DataFrame, draws: pd.DataFrame, cols: list[str]) -> ResampledPass:
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
        Folder holding :data:`MANIFEST`, ``<encoder>_resampled.parquet`` and :data:`DRAWS_FILE`.
    variant : str
        A swap variant of the manifest's ``design.variants`` (pass 0 is shared by all).
    verify : bool
        Compare the SHA-256 of the files read with the manifest.

    Returns
    -------
    Resampled
        ``passes[k]`` holds the development and test groups (identity -> (n, d) float64) of pass
        ``k`` and their draw ids; rows are ordered by the draws' keys.

    Raises
    ------
    FileNotFoundError
        A missing file (named).
    ValueError
        A SHA-256 mismatch or an unlisted file; a manifest without the design fields read back; a
        variant the corpus lacks; missing columns, repeated keys, NaN/inf or zero-norm embeddings, a
        draw id absent from the draws table, stored rows that are not exactly the draws marked used
        (each with every pass), per-split counts other than the manifest's, unknown splits, a
        photograph of another identity, a used draw that was lost (each naming file and column).

    Examples
    --------
    >>> import tempfile
    >>> corpus = load_resampled("dlib", example_resampled(tempfile.mkdtemp()))
    >>> p0 = corpus.passes[0]
    >>> p0.dev["A"].tolist(), p0.dev_draws["A"].tolist()
    ([[1.0, 0.0, 0.0], [1.0, 0.0, 0.0]], [0, 1])
    """
    folder = Path(directory)
    manifest, rows, draws = _read(folder, encoder, verify)
    passes, variants, per_split, chain_length = _design(manifest)
    if variant not in variants:
        raise ValueError(f"variant {variant!r} not in {folder / MANIFEST} (design.variants {variants})")
    name = embedding_file(encoder)
    _check_draws(draws, variants, chain_length)
    design = str(manifest.get("design", {}).get("photograph_design", "pool"))
    if design not in DESIGNS:
        raise ValueError(f"{folder / MANIFEST}: design.photograph_design {design!r} is not one of {list(DESIGNS)}")
    if design == "disjoint":
        check_disjoint(draws)
    _check_rows(rows, draws, name, passes, variants, per_split)
    rows = rows[rows["variant"].isin([ORIGINAL, variant])].sort_values(list(KEYS), kind="stable").reset_index(drop=True)
    cols = _embedding_columns(rows, name)
    out = {0: _groups(rows[rows["pass"] == 0], draws, cols)}
    for k in passes:
        if k > 0:
            out[k] = _groups(rows[(rows["variant"] == variant) & (rows["pass"] == k)], draws, cols)
    return Resampled(encoder=encoder, variant=variant, design=design, passes=out, rows=rows,
                     draws=draws.sort_values("draw", kind="stable").reset_index(drop=True), manifest=manifest,
                     directory=folder)


# -------------------------------------------------------------------------------------------------
# writing


def resampled_frame(keys: Mapping[str, Sequence] | pd.DataFrame | Sequence[Mapping[str, Any]], vectors,
                    paths: Sequence[str], *, dim: int | None = EMBEDDING_DIM) -> pd.DataFrame:
    """One embedding table in the stored layout: ``variant``, ``draw``, ``pass``, ``path``, ``e0 ..``
    (float32); :func:`epsaudit.corpora.embedding_frame` with this corpus's keys checked.

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
    _require(frame, KEYS, "resampled embedding table")
    return frame


def write_resampled_table(directory: str | os.PathLike, encoder: str, frame: pd.DataFrame) -> Path:
    """Write one encoder's embedding table as zstd Parquet, rows sorted by (variant, draw, pass),
    float columns byte-stream-split without dictionary; returns the path.

    Examples
    --------
    >>> import tempfile
    >>> frame = resampled_frame({"variant": ["none"], "draw": [0], "pass": [0]}, [[1.0, 2.0]], ["hog"], dim=2)
    >>> write_resampled_table(tempfile.mkdtemp(), "dlib", frame).name
    'dlib_resampled.parquet'
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    name = embedding_file(encoder)
    _require(frame, KEYS, name)
    frame = frame.sort_values(list(KEYS), kind="stable").reset_index(drop=True)
    path = Path(directory) / name
    floats = [c for c in frame.columns if pd.api.types.is_float_dtype(frame[c])]
    others = [c for c in frame.columns if c not in floats]
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path, compression="zstd",
                   use_dictionary=others or False, use_byte_stream_split=floats or False)
    return path


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


def write_manifest(directory: str | os.PathLike, design: Mapping[str, Any], run: Mapping[str, Any]) -> dict:
    """Write :data:`MANIFEST`: the version, the entries of every table in the folder
    (:func:`epsaudit.corpora.file_entries`), the design and the run record; returns it.

    ``design`` must hold ``passes``, ``variants``, ``draws_per_split`` and ``chain_length`` (read
    back by :func:`load_resampled`).

    Raises
    ------
    ValueError
        A design without those fields.

    Examples
    --------
    >>> import tempfile
    >>> doc = write_manifest(tempfile.mkdtemp(), {"passes": [0, 1], "variants": ["hull"],
    ...                      "draws_per_split": {"dev": 1, "test": 1}, "chain_length": 1}, {})
    >>> sorted(doc)
    ['design', 'files', 'manifest_version', 'run']
    """
    _design({"design": design})
    doc = {"manifest_version": MANIFEST_VERSION, "files": file_entries(directory), "design": dict(design),
           "run": dict(run)}
    (Path(directory) / MANIFEST).write_text(json.dumps(jsonable(doc), indent=1, allow_nan=False) + "\n",
                                            encoding="utf-8")
    return doc


def example_resampled(directory: str | os.PathLike, encoder: str = "dlib") -> Path:
    """Write a minimal valid corpus into ``directory``: identities A and B, two dev and two test draws
    each, passes 0 and 1 of ``hull`` (chains of one pass), 3-D embeddings, one lost draw redrawn.

    Returns ``directory`` as a path.

    Examples
    --------
    >>> import tempfile
    >>> sorted(p.name for p in example_resampled(tempfile.mkdtemp()).iterdir())
    ['dlib_resampled.parquet', 'resampled_draws.csv', 'resampled_manifest.json']
    """
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
    write_manifest(folder, {"passes": [0, 1], "variants": ["hull"], "draws_per_split": {"dev": 2, "test": 2},
                            "chain_length": 1, "lost": [{"variant": "hull", "draw": 2, "pass": 1}]}, {})
    return folder
