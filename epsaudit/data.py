"""Embedding tables: loading, validation, the row filter, writing, and manifests (SPEC section 5).

An embedding table is a delimited text file (CSV) with a header line and one row per generated
output: an identity label, optionally an image id, and the embedding in columns ``e0 .. e{d-1}``
(or similar). :func:`load_embeddings` reads it into an :class:`EmbeddingTable`;
:func:`write_embeddings` writes the same format.

Format detection (every decision is recorded in ``EmbeddingTable.notes`` and printed by
:meth:`EmbeddingTable.summary`):

* encoding: UTF-8, with or without a byte-order mark (removed); gzip-compressed files are read too;
* delimiter: the one of ``,`` ``;`` and tab that splits the header line into the most fields;
* a cell is *missing* when it is blank or one of ``nan``, ``na``, ``n/a``, ``null``, ``none``
  (case-insensitive); ``inf``/``-inf`` parse as infinite numbers. Any other cell that is not a
  number in an embedding column is an error (no silent coercion);
* a column is *numeric* when all its non-missing cells are numbers (booleans are not numbers).

Column detection, when not given explicitly:

* image id: the first column whose name, lower-cased without ``_``/``-``/spaces, is one of
  :data:`IMAGE_NAMES` (``image_id``, ``image``, ``filename``, ``path``, ...); read as strings;
* identity label: the first *non-numeric* column named like :data:`LABEL_NAMES` (``identity``,
  ``label``, ``id``, ``person``, ``name``, ...; case-insensitive), else the first non-numeric
  column that is not the image id. A numeric column is never chosen automatically: if no
  non-numeric column is left, loading fails and says to pass ``label_col`` (``--label-col``);
  an explicitly named label column may be numeric and is then read as strings;
* embedding: the columns of a *named block* -- names ``<prefix><k>`` with one common prefix
  (``e``, ``emb_``, ``x``, ``dim``, or none: ``0 .. d-1``) whose numbers are consecutive from 0
  or 1, e.g. ``e0 .. e127``. A prefix group with a gap, several blocks (e.g. ``orig_0..`` and
  ``gen_0..``, or blocks of mixed width) are errors that ask for ``embedding_cols``. Without any
  block, every numeric column except the label, the image id, unnamed columns and columns named
  like a label or an image id. Other columns are ignored and listed in the notes.

Row filter (paper 000, Section 4; every count is reported, nothing is dropped silently):

1. rows with a missing label are dropped;
2. rows with a missing or non-finite (NaN, inf) embedding cell are dropped;
3. rows whose embedding has Euclidean norm ``<= min_norm`` (1e-6) are dropped;
4. duplicates are dropped, keeping the first: a row repeating an earlier row's image id, or
   repeating an earlier row's label and embedding exactly (copies would leak development rows into
   a reserved test set and inflate certificates);
5. the remaining rows are L2-normalised;
6. identities left with fewer than ``min_rows`` rows (default 2, i.e. a single row) stay in the
   table but are left out of :meth:`EmbeddingTable.groups`, with their count reported.

The dropped rows are listed in ``EmbeddingTable.dropped`` with their line number in the file
(1-based; the header is line 1; blank lines count). Loading fails with
:class:`EmbeddingFileError` (a ``ValueError``) naming the file, line and/or column for: an empty
file, a header without rows, duplicate column names, a ragged line, no numeric columns, an
ambiguous or gapped embedding block, a non-numeric cell in an embedding column, every row
filtered out, and fewer than two identities with at least two rows.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Hashable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

#: Lower-cased column names taken for the identity label (first non-numeric match in file order).
LABEL_NAMES: tuple[str, ...] = (
    "identity", "identity_id", "identity_label", "label", "id", "person", "person_id", "name",
    "subject", "subject_id", "class",
)
#: Column names (lower-cased, without ``_``, ``-`` and spaces) taken for the image id.
IMAGE_NAMES: tuple[str, ...] = (
    "imageid", "image", "img", "imgid", "imagename", "imagepath", "imagefile", "file", "filename",
    "filepath", "path", "photo", "photoid",
)
#: Cell text (stripped, lower-cased) read as a missing value.
MISSING_TOKENS = frozenset({"", "nan", "-nan", "+nan", "na", "n/a", "null", "none"})
DELIMITERS: tuple[str, ...] = (",", ";", "\t")
DEFAULT_MIN_NORM = 1e-6
DROP_LABEL = "missing label"
DROP_NONFINITE = "missing or non-finite embedding value"
DROP_NORM = "norm <= min_norm"
DROP_DUPLICATE = "duplicate of an earlier row"
MANIFEST_VERSION = 1

_BLOCK_NAME = re.compile(r"^(.*?)(\d+)$")


class EmbeddingFileError(ValueError):
    """An embedding file that cannot be read as an embedding table; the message names the file
    and, where it applies, the line (1-based, header = line 1) and the column."""


# --------------------------------------------------------------------------------------------
# The table


@dataclass(frozen=True, eq=False)
class EmbeddingTable:
    """Filtered, L2-normalised embeddings of one file (or one set of arrays).

    Attributes
    ----------
    labels : ndarray of str, shape (N,)
        Identity label of each kept row.
    embeddings : ndarray of float64, shape (N, d)
        Unit-norm embeddings (rows kept by the filter, in file order).
    image_ids : ndarray of str, shape (N,), or None
        Image id of each kept row when the file has an image-id column.
    source : str
        Path of the file (or a description of the arrays).
    dropped : pandas.DataFrame
        One row per dropped row: ``file_line`` (int; for arrays the 0-based row index),
        ``label``, ``image_id``, ``reason`` (:data:`DROP_LABEL`, :data:`DROP_NONFINITE` or
        :data:`DROP_NORM`) and ``detail`` (e.g. the offending column and cell).
    rows_read : int
        Data rows in the file (blank lines excluded).
    label_col, image_col : str or None
        Columns used for the label and the image id.
    embedding_cols : tuple of str, length d
    delimiter : str
    bom : bool
        Whether a UTF-8 byte-order mark was removed.
    sha256 : str or None
        SHA-256 of the file's bytes as read.
    min_norm : float
        Norm threshold of the filter.
    notes : tuple of str
        How each column was chosen, ignored columns, format details.
    """

    labels: np.ndarray
    embeddings: np.ndarray
    image_ids: np.ndarray | None
    source: str
    dropped: pd.DataFrame
    rows_read: int
    label_col: str | None = None
    embedding_cols: tuple[str, ...] = ()
    image_col: str | None = None
    delimiter: str = ","
    bom: bool = False
    sha256: str | None = None
    min_norm: float = DEFAULT_MIN_NORM
    notes: tuple[str, ...] = field(default_factory=tuple)

    # -- sizes -----------------------------------------------------------------------------
    @property
    def n_rows(self) -> int:
        """Rows kept by the filter."""
        return int(self.embeddings.shape[0])

    @property
    def dim(self) -> int:
        """Embedding dimension ``d``."""
        return int(self.embeddings.shape[1])

    def rows_per_identity(self) -> pd.Series:
        """Kept rows per identity (index: label, sorted)."""
        return pd.Series(self.labels).value_counts().sort_index()

    @property
    def identities(self) -> tuple[str, ...]:
        """Sorted labels with at least two rows: the identities :meth:`groups` returns."""
        counts = self.rows_per_identity()
        return tuple(counts.index[counts >= 2])

    @property
    def single_row_identities(self) -> tuple[str, ...]:
        """Sorted labels left with a single row (excluded from :meth:`groups`)."""
        counts = self.rows_per_identity()
        return tuple(counts.index[counts < 2])

    @property
    def counts(self) -> dict[str, int]:
        """Every count of the filter: rows read, dropped per reason, kept, identities, ``d``."""
        reasons = self.dropped["reason"].value_counts() if len(self.dropped) else pd.Series(dtype=int)
        single = self.single_row_identities
        return {
            "rows_read": int(self.rows_read),
            "dropped_missing_label": int(reasons.get(DROP_LABEL, 0)),
            "dropped_nonfinite": int(reasons.get(DROP_NONFINITE, 0)),
            "dropped_norm": int(reasons.get(DROP_NORM, 0)),
            "dropped_duplicate": int(reasons.get(DROP_DUPLICATE, 0)),
            "rows_kept": self.n_rows,
            "identities": len(self.identities),
            "single_row_identities": len(single),
            "dim": self.dim,
        }

    # -- access ----------------------------------------------------------------------------
    def groups(self, min_rows: int = 2) -> dict[str, np.ndarray]:
        """Embeddings per identity, for identities with at least ``min_rows`` kept rows.

        Parameters
        ----------
        min_rows : int
            Fewest rows an identity needs (default 2: single-row identities are left out; their
            number is ``counts["single_row_identities"]``).

        Returns
        -------
        dict
            ``label -> ndarray (n_i, d)`` (float64, unit-norm rows, file order), labels sorted.
        """
        if min_rows < 1:
            raise ValueError(f"min_rows must be >= 1, got {min_rows}")
        order = np.argsort(self.labels, kind="stable")
        labels = self.labels[order]
        cuts = np.flatnonzero(labels[1:] != labels[:-1]) + 1
        out = {}
        for idx in np.split(order, cuts):
            if len(idx) >= min_rows:
                out[str(self.labels[idx[0]])] = self.embeddings[np.sort(idx)]
        return out

    def summary(self) -> str:
        """A few lines stating what was read, how columns were chosen and every filter count."""
        c = self.counts
        name = self.source if self.sha256 is None else f"{self.source} (sha256 {self.sha256[:12]})"
        lines = [f"{name}: {c['rows_read']} data rows, d = {c['dim']}"]
        lines += [f"  {note}" for note in self.notes]
        dropped = c["rows_read"] - c["rows_kept"]
        if dropped:
            parts = []
            for reason, key in ((DROP_LABEL, "dropped_missing_label"), (DROP_NONFINITE, "dropped_nonfinite"),
                                (DROP_NORM, "dropped_norm"), (DROP_DUPLICATE, "dropped_duplicate")):
                if c[key]:
                    where = _line_list(self.dropped.loc[self.dropped["reason"] == reason, "file_line"])
                    text = reason.replace("min_norm", f"{self.min_norm:g}")
                    parts.append(f"{c[key]} with {text} ({where})")
            lines.append(f"  dropped {dropped} row(s): " + "; ".join(parts))
        else:
            lines.append("  dropped 0 rows (no missing label, no missing/non-finite value, no norm <= "
                         f"{self.min_norm:g}, no duplicate)")
        single = self.single_row_identities
        lines.append(f"  kept {c['rows_kept']} rows of {c['identities'] + len(single)} identities; "
                     f"{c['identities']} with >= 2 rows (groups())")
        if single:
            shown = ", ".join(repr(s) for s in single[:5]) + (" ..." if len(single) > 5 else "")
            lines.append(f"  {len(single)} identity(ies) with a single row excluded from groups(): {shown}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"EmbeddingTable(source={self.source!r}, rows={self.n_rows}, identities="
                f"{len(self.identities)}, dim={self.dim}, dropped={len(self.dropped)})")

    # -- construction from arrays ------------------------------------------------------------
    @classmethod
    def from_arrays(cls, labels: Sequence[Hashable], embeddings: Any, image_ids: Sequence[Any] | None = None,
                    *, source: str = "<arrays>", min_norm: float = DEFAULT_MIN_NORM) -> "EmbeddingTable":
        """Apply the same row filter and normalisation to in-memory arrays.

        Parameters
        ----------
        labels : sequence, length N
            Identity labels (converted to ``str``; ``None``/NaN count as missing).
        embeddings : array_like, shape (N, d)
            Raw embeddings, any scale; NaN/inf allowed (those rows are dropped and counted).
        image_ids : sequence, length N, optional
        source : str
            Description used in messages.
        min_norm : float

        Returns
        -------
        EmbeddingTable
            ``dropped.file_line`` holds 0-based row indices here.

        Raises
        ------
        ValueError
            Mismatched lengths, a non-2-D or non-numeric ``embeddings``, ``d < 2``, or every row
            dropped.
        """
        try:
            x = np.asarray(embeddings, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{source}: embeddings must be a numeric (N, d) array: {exc}") from None
        if x.ndim != 2 or x.shape[1] < 2:
            raise ValueError(f"{source}: embeddings must have shape (N, d) with d >= 2, got {x.shape}")
        raw = pd.Series(list(labels), dtype=object)
        if len(raw) != len(x):
            raise ValueError(f"{source}: {len(raw)} labels for {len(x)} embedding rows")
        if image_ids is not None and len(image_ids) != len(x):
            raise ValueError(f"{source}: {len(image_ids)} image ids for {len(x)} embedding rows")
        missing = raw.isna().to_numpy() | np.array([isinstance(v, str) and not v.strip() for v in raw], dtype=bool)
        lab = np.array(["" if m else str(v) for v, m in zip(raw, missing)], dtype=object)
        ids = None if image_ids is None else np.array([str(v) for v in image_ids], dtype=object)
        names = tuple(f"e{j}" for j in range(x.shape[1]))
        return _filter(lab, missing, ids, x, names, np.arange(len(x)), source=source, rows_read=len(x),
                       min_norm=min_norm, extra=dict(label_col=None, image_col=None, notes=("from arrays",)))


def _line_list(lines: Iterable[int], limit: int = 8) -> str:
    lines = [int(v) for v in lines]
    head = ", ".join(str(v) for v in lines[:limit])
    return ("line " if len(lines) == 1 else "lines ") + head + (f", ... ({len(lines)} in all)" if len(lines) > limit else "")


def _mark_duplicates(reasons, details, labels, image_ids, x, lines) -> None:
    """Filter step 4: mark rows repeating an earlier kept row's image id, or its label and embedding."""
    ok = np.flatnonzero(reasons == "")
    keys = {"image id": None if image_ids is None else pd.Series(image_ids[ok]).astype(str),
            "label and embedding": pd.Series([f"{labels[i]}|{x[i].tobytes().hex()}" for i in ok])}
    for what, key in keys.items():
        if key is None:
            continue
        alive = reasons[ok] == ""
        first_line = {}
        for i, k, live in zip(ok, key, alive):
            if not live:
                continue
            if k in first_line:
                reasons[i] = DROP_DUPLICATE
                details[i] = f"same {what} as line {first_line[k]}"
            else:
                first_line[k] = int(lines[i])


def _filter(labels: np.ndarray, label_missing: np.ndarray, image_ids: np.ndarray | None, x: np.ndarray,
            names: tuple[str, ...], lines: np.ndarray, *, source: str, rows_read: int, min_norm: float,
            extra: dict) -> EmbeddingTable:
    """The row filter (module docstring, steps 1-4); ``x`` raw (N, d) with NaN for missing cells."""
    reasons = np.full(len(x), "", dtype=object)
    details = np.full(len(x), "", dtype=object)
    reasons[label_missing] = DROP_LABEL
    finite = np.isfinite(x)
    bad_rows = ~finite.all(axis=1) & (reasons == "")
    for i in np.flatnonzero(bad_rows):
        cols = np.flatnonzero(~finite[i])
        details[i] = f"{names[cols[0]]} = {x[i, cols[0]]}" + (f" (+{len(cols) - 1} more cells)" if len(cols) > 1 else "")
    reasons[bad_rows] = DROP_NONFINITE
    norms = np.full(len(x), np.nan)
    ok = reasons == ""
    norms[ok] = np.linalg.norm(x[ok], axis=1)
    small = ok & (norms <= min_norm)
    reasons[small] = DROP_NORM
    details[small] = [f"norm = {v:.3g}" for v in norms[small]]
    _mark_duplicates(reasons, details, labels, image_ids, x, lines)
    keep = reasons == ""
    dropped = pd.DataFrame({
        "file_line": lines[~keep].astype(int),
        "label": [None if label_missing[i] else labels[i] for i in np.flatnonzero(~keep)],
        "image_id": None if image_ids is None else image_ids[~keep],
        "reason": reasons[~keep].astype(str),
        "detail": details[~keep].astype(str),
    })
    if not keep.any():
        counts = dropped["reason"].value_counts().to_dict()
        raise EmbeddingFileError(
            f"{source}: every one of the {rows_read} rows was dropped by the filter "
            f"({', '.join(f'{n} with ' + r.replace('min_norm', f'{min_norm:g}') for r, n in counts.items())}); "
            "nothing is left to audit")
    emb = x[keep] / norms[keep, None]
    return EmbeddingTable(
        labels=labels[keep].astype(str).astype(object), embeddings=emb,
        image_ids=None if image_ids is None else image_ids[keep], source=source, dropped=dropped,
        rows_read=rows_read, embedding_cols=names, min_norm=min_norm, **extra)


# --------------------------------------------------------------------------------------------
# Reading


def _read_text(path: Path) -> tuple[str, bool, str]:
    """Bytes -> text; returns (text, bom_removed, sha256). Raises on empty/undecodable files."""
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    if not data.strip():
        size = "0 bytes" if not data else "only whitespace"
        raise EmbeddingFileError(f"{path}: the file is empty ({size}); expected a header line and one row per embedding")
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise EmbeddingFileError(f"{path}: the file is UTF-16 encoded; save it as UTF-8")
    bom = data.startswith(b"\xef\xbb\xbf")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise EmbeddingFileError(f"{path}: line {line} is not UTF-8 text (byte 0x{data[exc.start]:02x}); "
                                 "save the file as UTF-8") from None
    return text, bom, digest


def _blank(fields: list[str]) -> bool:
    return not fields or (len(fields) == 1 and not fields[0].strip())


def _scan(path: Path, text: str, delimiter: str | None) -> tuple[list[str], str, list[int], list[int]]:
    """Header fields, delimiter, and (file line, field count) of every non-blank data line."""
    lines = text.split("\n")
    first = next(i for i, s in enumerate(lines) if s.strip())
    header_line = lines[first].rstrip("\r")
    if delimiter is None:
        splits = {d: next(csv.reader([header_line], delimiter=d)) for d in DELIMITERS}
        delimiter = max(DELIMITERS, key=lambda d: len(splits[d]))  # ties -> the earlier, ","
    header = next(csv.reader([header_line], delimiter=delimiter))
    record_lines, record_fields = [], []
    if '"' not in text:  # fast path: fields = delimiters + 1
        for i in range(first + 1, len(lines)):
            s = lines[i]
            if s.strip():
                record_lines.append(i + 1)
                record_fields.append(s.count(delimiter) + 1)
    else:  # quoted fields may hold delimiters or newlines
        reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
        seen_header = False
        for fields in reader:
            if _blank(fields):
                continue
            if not seen_header:
                seen_header = True
                continue
            record_lines.append(reader.line_num)
            record_fields.append(len(fields))
    return header, delimiter, record_lines, record_fields


def _check_header(path: Path, header: list[str]) -> list[str]:
    names = [h.strip() for h in header]
    seen: dict[str, list[int]] = {}
    for j, name in enumerate(names):
        seen.setdefault(name, []).append(j + 1)
    dups = {n: pos for n, pos in seen.items() if len(pos) > 1}
    if dups:
        text = "; ".join(f"{n!r} (columns {', '.join(map(str, pos))})" for n, pos in dups.items())
        raise EmbeddingFileError(f"{path}: duplicate column names in the header: {text}; "
                                 "every column needs a distinct name")
    return names


def _classify(frame: pd.DataFrame) -> tuple[dict[str, str], dict[str, np.ndarray], dict[str, tuple]]:
    """Per column: kind ("numeric", "text", "empty"), parsed float values of numeric-looking
    columns, and the first non-numeric cell (row index, text) of mostly-numeric columns."""
    kinds, values, junk = {}, {}, {}
    for name in frame.columns:
        col = frame[name]
        if pd.api.types.is_bool_dtype(col):
            kinds[name] = "text"
            continue
        if pd.api.types.is_numeric_dtype(col):
            kinds[name] = "numeric" if col.notna().any() else "empty"
            values[name] = col.to_numpy(dtype=np.float64, na_value=np.nan)
            continue
        text = col.astype(object)
        present = text.notna().to_numpy()
        lowered = np.array([str(v).strip().lower() if p else "" for v, p in zip(text, present)], dtype=object)
        missing = np.isin(lowered, list(MISSING_TOKENS))
        parsed = pd.to_numeric(text.where(~missing), errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
        bad = ~missing & np.isnan(parsed)
        good = ~missing & ~bad
        if not good.any() and not bad.any():
            kinds[name] = "empty"
        elif not bad.any():
            kinds[name], values[name] = "numeric", parsed
        else:
            kinds[name] = "text"
            if good.sum() >= bad.sum():  # mostly numbers: a typo, not a text column
                i = int(np.flatnonzero(bad)[0])
                junk[name] = (i, str(text.iloc[i]))
                values[name] = parsed
    return kinds, values, junk


def _decimal_comma_hint(frame: pd.DataFrame, columns: list[str]) -> str:
    comma = any(re.fullmatch(r"[-+]?\d+,\d+", str(v).strip()) for c in columns for v in frame[c].head(3))
    return " (cells like '0,5' use a decimal comma; write decimals with '.')" if comma else ""


def _norm_image(name: str) -> str:
    return re.sub(r"[\s_\-]", "", name.lower())


def _parse_spec(path: Path, spec: str | Sequence[str], names: list[str]) -> list[str]:
    """``"e0:e127"``, ``"e0,e1,e5"``, ``"a:b,c"`` or a list of names -> column names in order."""
    items = [s.strip() for s in spec.split(",")] if isinstance(spec, str) else [str(s) for s in spec]
    out: list[str] = []
    for item in items:
        if not item:
            continue
        if item in names:
            out.append(item)
            continue
        if isinstance(spec, str) and ":" in item:
            lo, hi = (s.strip() for s in item.split(":", 1))
            for end in (lo, hi):
                if end not in names:
                    raise EmbeddingFileError(f"{path}: --embedding-cols range {item!r} names column {end!r}, "
                                             f"which is not in the header ({_names_preview(names)})")
            i, j = names.index(lo), names.index(hi)
            if j < i:
                raise EmbeddingFileError(f"{path}: --embedding-cols range {item!r}: {hi!r} (column {j + 1}) "
                                         f"comes before {lo!r} (column {i + 1}) in the file")
            out += names[i: j + 1]
            continue
        raise EmbeddingFileError(f"{path}: embedding column {item!r} is not in the header ({_names_preview(names)})")
    if len(set(out)) != len(out):
        raise EmbeddingFileError(f"{path}: --embedding-cols names a column twice")
    if not out:
        raise EmbeddingFileError(f"{path}: --embedding-cols {spec!r} selects no columns")
    return out


def _names_preview(names: list[str], limit: int = 8) -> str:
    shown = ", ".join(repr(n) for n in names[:limit])
    return f"columns {shown}" + (f", ... ({len(names)} in all)" if len(names) > limit else "")


def _blocks(names: list[str], exclude: set[str]) -> dict[str, list[tuple[int, str]]]:
    """Prefix -> [(number, name), ...] for names ``<prefix><digits>`` (>= 2 columns per prefix)."""
    groups: dict[str, list[tuple[int, str]]] = {}
    for name in names:
        m = _BLOCK_NAME.match(name)
        if m and name not in exclude:
            groups.setdefault(m.group(1), []).append((int(m.group(2)), name))
    return {p: g for p, g in groups.items() if len(g) >= 2}


def _describe_block(prefix: str, group: list[tuple[int, str]]) -> str:
    return f"{group[0][1]}..{group[-1][1]} ({len(group)} columns)"


def _detect_embedding(path: Path, names: list[str], kinds: dict[str, str], exclude: set[str],
                      notes: list[str]) -> list[str]:
    groups = _blocks(names, exclude)
    valid, broken = {}, {}
    for prefix, group in groups.items():
        numbers = [k for k, _ in group]
        start = numbers[0]
        if start in (0, 1) and numbers == list(range(start, start + len(numbers))):
            valid[prefix] = group
        elif start in (0, 1) or len(group) >= 3:
            broken[prefix] = group
    if len(valid) > 1:
        blocks = [_describe_block(p, g) for p, g in valid.items()]
        widths = {len(g) for g in valid.values()}
        kind = "of mixed width" if len(widths) > 1 else "of the same width"
        raise EmbeddingFileError(
            f"{path}: {len(valid)} embedding column blocks {kind}: {', '.join(blocks)}; pass "
            "--embedding-cols (embedding_cols=) to say which one is the embedding, e.g. "
            f"{valid[next(iter(valid))][0][1]}:{valid[next(iter(valid))][-1][1]}")
    if valid:
        prefix, group = next(iter(valid.items()))
        cols = [n for _, n in group]
        if broken:
            notes.append("other numbered columns ignored: " + ", ".join(_describe_block(p, g) for p, g in broken.items()))
        notes.append(f"embedding columns {cols[0]}..{cols[-1]} (named block, d = {len(cols)})")
        return cols
    if broken:
        prefix, group = next(iter(broken.items()))
        numbers = [k for k, _ in group]
        expected = set(range(min(numbers), max(numbers) + 1))
        gaps = sorted(expected - set(numbers))
        repeats = sorted({k for k in numbers if numbers.count(k) > 1})
        what = (f"skip {', '.join(prefix + str(k) for k in gaps[:5])}" if gaps else
                f"repeat number(s) {repeats[:5]}" if repeats else "are out of order")
        raise EmbeddingFileError(
            f"{path}: the columns {group[0][1]}..{group[-1][1]} look like an embedding block but {what} "
            "(not a consecutive run from 0 or 1); pass --embedding-cols (embedding_cols=) to choose the "
            "embedding columns explicitly")
    cols = [n for n in names if kinds[n] == "numeric" and n not in exclude and n]
    if cols:
        notes.append(f"no e0..e{{d-1}}-style block: embedding = all {len(cols)} numeric columns "
                     f"({cols[0]}..{cols[-1]})")
    return cols


def load_embeddings(
    path: str | os.PathLike,
    *,
    label_col: str | None = None,
    embedding_cols: str | Sequence[str] | None = None,
    image_col: str | None = None,
    delimiter: str | None = None,
    min_norm: float = DEFAULT_MIN_NORM,
    min_identities: int = 2,
) -> EmbeddingTable:
    """Read an embedding table, check it, filter rows and L2-normalise (see the module docstring).

    Parameters
    ----------
    path : path-like
        Delimited text file (``.csv``; gzip-compressed is fine) with a header line.
    label_col : str, optional
        Identity-label column. Default: auto-detected (never a numeric column). When given, its
        values are read as strings even if they look like numbers.
    embedding_cols : str or sequence of str, optional
        ``"e0:e127"`` (an inclusive range in file order), ``"e0,e1,e2"``, a mix of both, or a
        list of names. Default: auto-detected.
    image_col : str, optional
        Image-id column (read as strings). Default: the first column named like an image id.
    delimiter : str, optional
        Default: auto-detected among ``,`` ``;`` and tab.
    min_norm : float
        Rows with embedding norm ``<= min_norm`` are dropped (default 1e-6).
    min_identities : int
        Fewest identities with at least two rows the table must have (default 2: what an audit
        needs; 0 disables the check).

    Returns
    -------
    EmbeddingTable
        Embeddings of shape (N, d), float64, unit-norm; ``dropped`` and ``counts`` report the filter.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    EmbeddingFileError
        (a ``ValueError``) For each malformed input listed in the module docstring; the message
        names the file and the line and/or column.
    """
    path = Path(path)
    text, bom, digest = _read_text(path)
    header, delim, record_lines, record_fields = _scan(path, text, delimiter)
    names = _check_header(path, header)
    notes: list[str] = []
    if bom:
        notes.append("UTF-8 byte-order mark removed")
    if delim != ",":
        notes.append(f"delimiter {delim!r} ({'auto-detected' if delimiter is None else 'given'})")
    if not record_lines:
        raise EmbeddingFileError(f"{path}: the file has a header ({len(names)} columns) but no data rows")
    ragged = [(ln, n) for ln, n in zip(record_lines, record_fields) if n != len(names)]
    if ragged:
        ln, n = ragged[0]
        more = f"; {len(ragged)} ragged lines in all: {_line_list([r[0] for r in ragged])}" if len(ragged) > 1 else ""
        raise EmbeddingFileError(
            f"{path}: line {ln} has {n} fields but the header has {len(names)} (delimiter {delim!r}){more}; "
            "every row needs one value per column")
    for given, what in ((label_col, "label"), (image_col, "image")):
        if given is not None and given not in names:
            raise EmbeddingFileError(f"{path}: {what} column {given!r} is not in the header ({_names_preview(names)})")

    lowered = {n: n.lower() for n in names}
    if image_col is None:
        image_col = next((n for n in names if _norm_image(n) in IMAGE_NAMES and n != label_col), None)
    as_text = {c: str for c in (label_col, image_col) if c is not None}
    frame = pd.read_csv(io.StringIO(text), sep=delim, header=0, keep_default_na=False, na_values=[""],
                        dtype={header[names.index(c)]: t for c, t in as_text.items()}, engine="c",
                        skip_blank_lines=True, quoting=csv.QUOTE_MINIMAL)
    if len(frame) != len(record_lines) or frame.shape[1] != len(names):
        raise EmbeddingFileError(f"{path}: could not align the parsed rows with the file's lines "
                                 f"({len(frame)} parsed, {len(record_lines)} counted)")
    frame.columns = names
    kinds, values, junk = _classify(frame)

    # identity label
    if label_col is None:
        named = [n for n in names if lowered[n] in LABEL_NAMES and n != image_col]
        text_named = [n for n in named if kinds[n] == "text" and n not in junk]
        others = [n for n in names if kinds[n] == "text" and n not in junk and n != image_col and n]
        if text_named:
            label_col = text_named[0]
            notes.append(f"label column {label_col!r} (name match)")
        elif others:
            label_col = others[0]
            notes.append(f"label column {label_col!r} (first non-numeric column)")
        else:
            hint = (f"column {named[0]!r} looks like the label but holds numbers; " if named else
                    "every column is numeric; ")
            raise EmbeddingFileError(
                f"{path}: no non-numeric column to use as the identity label: {hint}auto-detection never "
                f"takes a numeric label column. Pass --label-col NAME (label_col=) to use one; its values "
                f"are then read as strings")
        numeric_named = [n for n in named if kinds[n] == "numeric"]
        if numeric_named:
            notes.append(f"numeric column(s) {numeric_named} named like a label not used as label")
    else:
        notes.append(f"label column {label_col!r} (given)")
    if image_col is not None:
        notes.append(f"image-id column {image_col!r}")

    # embedding columns
    reserved = {label_col, image_col} | {n for n in names if lowered[n] in LABEL_NAMES or _norm_image(n) in IMAGE_NAMES}
    if embedding_cols is not None:
        cols = _parse_spec(path, embedding_cols, names)
        if label_col in cols or (image_col is not None and image_col in cols):
            raise EmbeddingFileError(f"{path}: --embedding-cols includes the label or image-id column")
        notes.append(f"embedding columns {cols[0]}..{cols[-1]} (given, d = {len(cols)})")
    else:
        cols = _detect_embedding(path, names, kinds, reserved, notes)
    if not cols:
        hint = _decimal_comma_hint(frame, [n for n in names if kinds[n] == "text"])
        raise EmbeddingFileError(f"{path}: no numeric columns to use as the embedding{hint}; "
                                 f"{_names_preview(names)}")
    for c in cols:
        if c in junk:
            i, cell = junk[c]
            raise EmbeddingFileError(f"{path}: line {record_lines[i]}, column {c!r}: {cell!r} is not a number "
                                     "(missing cells may be blank or NaN; those rows are dropped and counted)")
        if kinds[c] == "text":
            raise EmbeddingFileError(f"{path}: embedding column {c!r} holds text (line {record_lines[0]}: "
                                     f"{frame[c].iloc[0]!r}), not numbers{_decimal_comma_hint(frame, [c])}")
    if len(cols) < 2:
        raise EmbeddingFileError(f"{path}: only one embedding column ({cols[0]!r}); an embedding needs d >= 2")
    ignored = [n for n in names if n not in cols and n not in (label_col, image_col)]
    if ignored:
        notes.append(f"ignored columns: {', '.join(repr(n) for n in ignored[:8])}"
                     + (f" ... ({len(ignored)} in all)" if len(ignored) > 8 else ""))

    x = np.column_stack([values[c] if c in values else np.full(len(frame), np.nan) for c in cols])
    raw_labels = frame[label_col].astype(object)
    missing = raw_labels.isna().to_numpy() | np.array([isinstance(v, str) and not v.strip() for v in raw_labels])
    labels = np.array(["" if m else str(v) for v, m in zip(raw_labels, missing)], dtype=object)
    ids = None
    if image_col is not None:
        ids = np.array(["" if pd.isna(v) else str(v) for v in frame[image_col]], dtype=object)
    table = _filter(labels, missing, ids, x, tuple(cols), np.asarray(record_lines), source=str(path),
                    rows_read=len(frame), min_norm=min_norm,
                    extra=dict(label_col=label_col, image_col=image_col, delimiter=delim, bom=bom,
                               sha256=digest, notes=tuple(notes)))
    if len(table.identities) < min_identities:
        single = len(table.single_row_identities)
        have = ", ".join(repr(s) for s in table.identities[:3])
        raise EmbeddingFileError(
            f"{path}: only {len(table.identities)} identity(ies) with >= 2 rows after filtering"
            f"{' (' + have + ')' if have else ''}, plus {single} with a single row; an audit needs "
            f">= {min_identities} identities (label column {label_col!r})")
    return table


def check_same_dimension(tables: Sequence[EmbeddingTable]) -> int:
    """Check that tables audited together share the embedding dimension; return it.

    Raises
    ------
    EmbeddingFileError
        Naming the first two files whose dimensions differ.
    """
    if not tables:
        raise ValueError("no tables given")
    first = tables[0]
    for other in tables[1:]:
        if other.dim != first.dim:
            raise EmbeddingFileError(
                f"embedding dimensions differ: {first.source} has d = {first.dim} "
                f"({first.embedding_cols[0]}..{first.embedding_cols[-1]}), {other.source} has d = "
                f"{other.dim} ({other.embedding_cols[0]}..{other.embedding_cols[-1]}); files audited "
                "together must come from the same encoder")
    return first.dim


def load_many(paths: Sequence[str | os.PathLike], **kwargs: Any) -> list[EmbeddingTable]:
    """Load several files with the same options and check they share ``d``.

    Raises
    ------
    EmbeddingFileError
        From :func:`load_embeddings` or :func:`check_same_dimension`.
    """
    tables = [load_embeddings(p, **kwargs) for p in paths]
    check_same_dimension(tables)
    return tables


# --------------------------------------------------------------------------------------------
# Writing


def write_embeddings(path: str | os.PathLike, labels: Sequence[Hashable], image_ids: Sequence[Any] | None,
                     embeddings: Any, *, label_col: str = "identity", image_col: str = "image_id",
                     prefix: str = "e") -> Path:
    """Write an embedding table: ``identity, image_id, e0 .. e{d-1}``, comma-separated, UTF-8.

    Values are written with ``%.7g`` (float32 precision); embeddings are written as given (not
    normalised). :func:`load_embeddings` reads the file back (labels that look like numbers need
    ``label_col=`` there).

    Parameters
    ----------
    path : path-like
    labels : sequence, length N
        Identity labels (written as strings; none may be missing or blank).
    image_ids : sequence, length N, or None
        Image ids; ``None`` omits the column.
    embeddings : array_like, shape (N, d)
        Finite values.
    label_col, image_col, prefix : str
        Header names: the label column, the image-id column, and the embedding prefix.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    ValueError
        Mismatched lengths, a missing label, a non-finite value or a non-2-D array.
    """
    x = np.asarray(embeddings, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] == 0 or x.shape[1] == 0:
        raise ValueError(f"embeddings must have shape (N, d) with N, d >= 1, got {x.shape}")
    labels = [str(v) if v is not None else "" for v in labels]
    if len(labels) != len(x):
        raise ValueError(f"{len(labels)} labels for {len(x)} embedding rows")
    blank = [i for i, v in enumerate(labels) if not v.strip()]
    if blank:
        raise ValueError(f"labels: row {blank[0]} has a missing or blank label ({len(blank)} in all)")
    if not np.isfinite(x).all():
        row, col = np.argwhere(~np.isfinite(x))[0]
        raise ValueError(f"embeddings: non-finite value at row {row}, column {col}")
    columns = {label_col: labels}
    if image_ids is not None:
        if len(image_ids) != len(x):
            raise ValueError(f"{len(image_ids)} image ids for {len(x)} embedding rows")
        columns[image_col] = [str(v) for v in image_ids]
    frame = pd.DataFrame(columns)
    emb = pd.DataFrame(x, columns=[f"{prefix}{j}" for j in range(x.shape[1])])
    path = Path(path)
    pd.concat([frame, emb], axis=1).to_csv(path, index=False, float_format="%.7g", lineterminator="\n")
    return path


# --------------------------------------------------------------------------------------------
# Manifests


def sha256_file(path: str | os.PathLike, chunk_size: int = 1 << 20) -> str:
    """SHA-256 hex digest of a file's bytes."""
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
        ``sha256``, ``rows`` (data rows in the file), ``rows_kept``, ``identities`` (with >= 2
        rows), ``single_row_identities``, ``dim``, ``label_col``, ``embedding_cols`` (first..last),
        ``dropped`` (``[{"file_line", "reason", "detail"}, ...]``), ``dropped_counts``
        (per reason) and ``generation``.
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
        "embedding_cols": f"{table.embedding_cols[0]}..{table.embedding_cols[-1]}",
        "dropped": table.dropped[["file_line", "reason", "detail"]].to_dict(orient="records"),
        "dropped_counts": {k: counts[k] for k in ("dropped_missing_label", "dropped_nonfinite", "dropped_norm")},
        "generation": dict(generation),
    }


def jsonable(value: Any) -> Any:
    """Convert ``value`` for ``json.dumps(allow_nan=False)``: NumPy scalars/arrays to Python, NaN
    and ``pd.NA`` to ``None``, infinities to ``"inf"``/``"-inf"``, paths to strings (recursively)."""
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


def write_manifest(path: str | os.PathLike, entries: Mapping[str, Mapping[str, Any]]) -> Path:
    """Write a JSON manifest: ``{"manifest_version": 1, "files": entries}``.

    Parameters
    ----------
    path : path-like
    entries : mapping file name -> mapping
        One record per file, e.g. from :func:`manifest_entry` (keys ``sha256``, ``rows``,
        ``identities``, ``dim``, ``dropped``, ``generation``). File names are taken relative to
        the manifest's directory by convention. NumPy scalars and arrays are converted; NaN
        becomes null and infinities ``"inf"``/``"-inf"``.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    ValueError
        If ``entries`` is not a mapping of names to mappings.
    """
    if not isinstance(entries, Mapping) or not all(isinstance(v, Mapping) for v in entries.values()):
        raise ValueError("entries must be a mapping file name -> mapping of that file's record")
    path = Path(path)
    doc = {"manifest_version": MANIFEST_VERSION, "files": jsonable(entries)}
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=2, allow_nan=False) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def read_manifest(path: str | os.PathLike) -> dict[str, dict[str, Any]]:
    """Read a manifest written by :func:`write_manifest`; return its ``files`` mapping.

    Raises
    ------
    ValueError
        If the file is not valid JSON or not an epsaudit manifest (named in the message).
    """
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

    Returns
    -------
    list of str
        One message per missing or changed file; empty when everything matches.
    """
    path = Path(path)
    problems = []
    for name, entry in read_manifest(path).items():
        target = path.parent / name
        if not target.exists():
            problems.append(f"{name}: listed in {path.name} but missing")
        elif entry.get("sha256") and sha256_file(target) != entry["sha256"]:
            problems.append(f"{name}: SHA-256 differs from {path.name}")
    return problems
