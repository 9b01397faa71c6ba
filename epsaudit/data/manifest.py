"""Manifests: SHA-256 of each file with its counts and generation settings, written and verified."""

from __future__ import annotations

import hashlib
import json
import math
import os
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from .table import DROP_KEYS, KEY_COUNTS, EmbeddingTable

MANIFEST_VERSION = 1  # version of the manifest layout, checked on reading


def sha256_file(path: str | os.PathLike, chunk_size: int = 1 << 20) -> str:
    """SHA-256 hex digest of a file's bytes.

    Parameters
    ----------
    path : path-like
    chunk_size : int
        Bytes read at a time (default 1 MiB).

    Returns
    -------
    str
        64 lower-case hex digits.

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "empty"
    >>> _ = path.write_bytes(b"")
    >>> sha256_file(path)[:16]
    'e3b0c44298fc1c14'
    """
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(chunk_size), b""):
            h.update(block)
    return h.hexdigest()


def manifest_entry(table: EmbeddingTable, **generation: Any) -> dict[str, Any]:
    """The manifest record of one loaded file.

    Parameters
    ----------
    table : EmbeddingTable
        As returned by :func:`load_embeddings`.
    **generation
        Free-form generation settings (generator, encoder, seeds, checkpoint hashes, ...).

    Returns
    -------
    dict
        ``sha256``, ``rows`` (data rows in the file), ``rows_kept``, ``identities`` (with >= 2 rows),
        ``single_row_identities``, ``dim``, ``label_col``, ``image_col``, ``embedding_cols`` (first..last),
        ``dropped`` (``file_line``, ``reason``, ``detail`` per row), ``dropped_counts`` and ``key_counts`` (those of
        :attr:`EmbeddingTable.counts`), ``notes`` and ``generation``.

    Examples
    --------
    >>> table = EmbeddingTable.from_arrays(["A", "A", "B", "B"], [[1, 0], [0, 1], [1, 1], [1, 2]])
    >>> entry = manifest_entry(table, encoder="demo")
    >>> entry["rows"], entry["identities"], entry["embedding_cols"], entry["generation"]
    (4, 2, 'e0..e1', {'encoder': 'demo'})
    """
    counts = table.counts
    return {
        "sha256": table.sha256,
        "rows": counts["rows_read"],
        "rows_kept": counts["rows_kept"],
        "identities": counts["identities"],
        "single_row_identities": counts["single_row_identities"],
        "dim": counts["dim"],
        "label_col": table.label_col,
        "image_col": table.image_col,
        "embedding_cols": f"{table.embedding_cols[0]}..{table.embedding_cols[-1]}",
        "dropped": table.dropped[["file_line", "reason", "detail"]].to_dict(orient="records"),
        "dropped_counts": {key: counts[key] for _, key in DROP_KEYS},
        "key_counts": {key: counts[key] for key in KEY_COUNTS},
        "notes": list(table.notes),
        "generation": dict(generation),
    }


def jsonable(value: Any) -> Any:
    """Convert ``value`` for ``json.dumps(allow_nan=False)``: NumPy scalars/arrays to Python, NaN and ``pd.NA`` to
    ``None``, infinities to ``"inf"``/``"-inf"``, paths to strings (recursively).

    Parameters
    ----------
    value : any
        Mappings, lists and tuples are converted element by element.

    Returns
    -------
    any
        Built from ``dict``, ``list``, ``str``, ``int``, ``float``, ``bool`` and ``None``.

    Examples
    --------
    >>> jsonable({"a": np.float64(0.5), "b": [float("nan"), float("inf")], "c": np.arange(2)})
    {'a': 0.5, 'b': [None, 'inf'], 'c': [0, 1]}
    """
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return [jsonable(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, Path):
        return str(value)
    return value


def _write_manifest(path: str | os.PathLike, entries: Mapping[str, Mapping[str, Any]]) -> Path:
    """Write a JSON manifest ``{"manifest_version": 1, "files": entries}`` atomically (entries converted by
    :func:`jsonable`); ``ValueError`` unless ``entries`` maps file names to mappings."""
    if not isinstance(entries, Mapping) or not all(isinstance(v, Mapping) for v in entries.values()):
        raise ValueError("entries must be a mapping file name -> mapping of that file's record")
    path = Path(path)
    doc = {"manifest_version": MANIFEST_VERSION, "files": jsonable(entries)}
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=2, allow_nan=False) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def _read_manifest(path: str | os.PathLike) -> dict[str, dict[str, Any]]:
    """The ``files`` mapping of a manifest (``ValueError`` for invalid JSON or not an epsaudit manifest)."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(doc, dict) or "files" not in doc or not isinstance(doc["files"], dict):
        raise ValueError(f"{path}: not an epsaudit manifest (no 'files' mapping)")
    if doc.get("manifest_version") != MANIFEST_VERSION:
        raise ValueError(f"{path}: manifest_version {doc.get('manifest_version')!r}; expected {MANIFEST_VERSION}")
    return doc["files"]


def verify_manifest(path: str | os.PathLike) -> list[str]:
    """Compare each listed file's SHA-256 with the manifest (names relative to its directory).

    Parameters
    ----------
    path : path-like
        The manifest (``{"manifest_version": 1, "files": {name: {"sha256": ...}}}``).

    Returns
    -------
    list of str
        One message per missing or changed file; empty when everything matches.

    Raises
    ------
    ValueError
        For invalid JSON or a file that is not an epsaudit manifest.

    Examples
    --------
    >>> import tempfile
    >>> path = _write_manifest(Path(tempfile.mkdtemp()) / "m.json", {"gone.csv": {"sha256": "0" * 64}})
    >>> verify_manifest(path)
    ['gone.csv: listed in m.json but missing']
    """
    path = Path(path)
    problems = []
    for name, entry in _read_manifest(path).items():
        target = path.parent / name
        if not target.exists():
            problems.append(f"{name}: listed in {path.name} but missing")
        elif entry.get("sha256") and sha256_file(target) != entry["sha256"]:
            problems.append(f"{name}: SHA-256 differs from {path.name}")
    return problems
