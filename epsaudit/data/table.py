"""The embedding-table format: :func:`load_embeddings` reads a file, :meth:`EmbeddingTable.from_arrays` takes
in-memory arrays (both end in the same key rules and row filter), :func:`write_embeddings` writes the format back.
The rules are the package docstring's (:mod:`epsaudit.data`).
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import math
import os
import re
import unicodedata
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any, Hashable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from ..validation import ROW_TOLERANCE, near_pairs as _near_pairs, row_keys

__all__ = [
    "DEFAULT_MIN_NORM", "DROP_CONFLICT", "DROP_DUPLICATE", "DROP_LABEL", "DROP_NONFINITE", "DROP_NORM",
    "IMAGE_NAMES", "LABEL_NAMES", "MISSING_TOKENS", "EmbeddingFileError", "EmbeddingTable", "check_same_dimension",
    "load_embeddings", "write_embeddings",
]

#: Column names (lower-cased; spaces and hyphens read as ``_``) taken for the identity label.
LABEL_NAMES: tuple[str, ...] = (
    "identity", "identity_id", "identity_label", "label", "id", "person", "person_id", "name",
    "subject", "subject_id", "class",
)
#: Column names (lower-cased, without ``_``, ``-`` and spaces) taken for the image id.
IMAGE_NAMES: tuple[str, ...] = (
    "imageid", "image", "img", "imgid", "imagename", "imagepath", "imagefile", "file", "filename",
    "filepath", "path", "photo", "photoid",
)
#: Cell text (stripped, lower-cased) read as a missing value, in every column.
MISSING_TOKENS = frozenset({"", "nan", "-nan", "+nan", "na", "n/a", "null", "none"})
DELIMITERS: tuple[str, ...] = (",", ";", "\t")
DEFAULT_MIN_NORM = 1e-6
DROP_LABEL = "missing label"
DROP_NONFINITE = "missing or non-finite embedding value"
DROP_NORM = "norm <= min_norm"
DROP_DUPLICATE = "duplicate of an earlier row"
DROP_CONFLICT = "same image under another label"

_BLOCK_NAME = re.compile(r"^(.*?)(\d+)$")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
#: ``(reason, counts key)`` of each drop reason, in the order counts and summaries list them.
DROP_KEYS = ((DROP_LABEL, "dropped_missing_label"), (DROP_NONFINITE, "dropped_nonfinite"),
             (DROP_NORM, "dropped_norm"), (DROP_DUPLICATE, "dropped_duplicate"),
             (DROP_CONFLICT, "dropped_label_conflict"))
KEY_COUNTS = ("labels_normalised", "label_collisions", "image_ids_missing", "image_ids_normalised")
#: Two L2-normalised rows closer than this show the same image: float32 rounding moves a unit vector by <= 2**-23
#: and 7 significant digits by <= ~1e-6, while distinct face embeddings lie >= 0.06 apart in the committed tables.
DUPLICATE_TOLERANCE = ROW_TOLERANCE


# --- The table ----------------------------------------------------------------------------------------------


class EmbeddingFileError(ValueError):
    """An embedding file that cannot be read as an embedding table; the message names the file and, where it
    applies, the line (1-based, header = line 1) and the column.

    Examples
    --------
    >>> issubclass(EmbeddingFileError, ValueError)
    True
    """


@dataclass(frozen=True, eq=False)
class EmbeddingTable:
    """Filtered, L2-normalised embeddings of one file (or one set of arrays).

    Attributes
    ----------
    labels : ndarray of str, shape (N,)
        Identity label of each kept row (stripped, Unicode NFC; integer labels in plain decimal).
    embeddings : ndarray of float64, shape (N, d)
        Unit-norm embeddings (rows kept by the filter, in file order).
    image_ids : ndarray of str, shape (N,), or None
        Image id of each kept row (stripped, NFC; ``""`` where missing), if the file has an image-id column.
    source : str
        Path of the file (or a description of the arrays).
    dropped : pandas.DataFrame
        One row per dropped row: ``file_line`` (for arrays the 0-based row index), ``label``, ``image_id``,
        ``reason`` (one of the ``DROP_*`` constants) and ``detail`` (e.g. the cell, or the line a duplicate copies).
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
        Column choices, ignored columns, format details, labels merged by normalisation, images under several labels.
    key_counts : dict of str to int
        ``labels_normalised``, ``label_collisions``, ``image_ids_missing``, ``image_ids_normalised``; part of
        :attr:`counts`.

    Examples
    --------
    >>> t = EmbeddingTable.from_arrays([" Ann", "Ann", "Bob", "Bob", "Cy"], [[3, 4], [1, 0], [0, 2], [0, 4], [1, 1]])
    >>> t.identities, t.single_row_identities, t.counts["dropped_duplicate"]
    (('Ann',), ('Bob', 'Cy'), 1)
    >>> {k: v.shape for k, v in t.groups(min_rows=1).items()}
    {'Ann': (2, 2), 'Bob': (1, 2), 'Cy': (1, 2)}
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
    key_counts: Mapping[str, int] = field(default_factory=dict)

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
        """Every count of the filter and the key rules: ``rows_read``; ``dropped_missing_label``, ``dropped_nonfinite``,
        ``dropped_norm``, ``dropped_duplicate``, ``dropped_label_conflict``; ``rows_kept``; ``identities`` (>= 2
        rows); ``single_row_identities``; ``dim``; and the key counts of :attr:`key_counts` (0 without image ids)."""
        reasons = self.dropped["reason"].value_counts() if len(self.dropped) else pd.Series(dtype=int)
        single = self.single_row_identities
        out = {"rows_read": int(self.rows_read)}
        out.update({key: int(reasons.get(reason, 0)) for reason, key in DROP_KEYS})
        out.update({
            "rows_kept": self.n_rows,
            "identities": len(self.identities),
            "single_row_identities": len(single),
            "dim": self.dim,
        })
        out.update({key: int(self.key_counts.get(key, 0)) for key in KEY_COUNTS})
        return out

    # -- access ----------------------------------------------------------------------------
    def groups(self, min_rows: int = 2) -> dict[str, np.ndarray]:
        """``label -> ndarray (n_i, d)`` (unit-norm rows, file order; labels sorted) of the identities with at
        least ``min_rows`` kept rows (default 2: single-row identities are left out).

        Raises
        ------
        ValueError
            If ``min_rows < 1``.
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
        """A few lines: what was read, the notes, the rows dropped per reason with their lines, the rows and
        identities kept, and the key counts when any is non-zero."""
        c = self.counts
        name = self.source if self.sha256 is None else f"{self.source} (sha256 {self.sha256[:12]})"
        lines = [f"{name}: {c['rows_read']} data rows, d = {c['dim']}"]
        lines += [f"  {note}" for note in self.notes]
        dropped = c["rows_read"] - c["rows_kept"]
        if dropped:
            parts = []
            for reason, key in DROP_KEYS:
                if c[key]:
                    where = _line_list(self.dropped.loc[self.dropped["reason"] == reason, "file_line"])
                    text = reason.replace("min_norm", f"{self.min_norm:g}")
                    parts.append(f"{c[key]} with {text} ({where})")
            lines.append(f"  dropped {dropped} row(s): " + "; ".join(parts))
        else:
            lines.append("  dropped 0 rows (no missing label, no missing/non-finite value, no norm <= "
                         f"{self.min_norm:g}, no duplicate, no image under two labels)")
        single = self.single_row_identities
        lines.append(f"  kept {c['rows_kept']} rows of {c['identities'] + len(single)} identities; "
                     f"{c['identities']} with >= 2 rows (groups())")
        if single:
            shown = ", ".join(repr(s) for s in single[:5]) + (" ..." if len(single) > 5 else "")
            lines.append(f"  {len(single)} identity(ies) with a single row excluded from groups(): {shown}")
        if any(c[k] for k in KEY_COUNTS):
            lines.append("  keys: " + ", ".join(f"{k} = {c[k]}" for k in KEY_COUNTS))
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"EmbeddingTable(source={self.source!r}, rows={self.n_rows}, identities="
                f"{len(self.identities)}, dim={self.dim}, dropped={len(self.dropped)})")

    # -- construction from arrays ------------------------------------------------------------
    @classmethod
    def from_arrays(cls, labels: Sequence[Hashable], embeddings: Any, image_ids: Sequence[Any] | None = None,
                    *, source: str = "<arrays>", min_norm: float = DEFAULT_MIN_NORM) -> "EmbeddingTable":
        """Apply the same label/image-id rules, row filter and normalisation to in-memory arrays: the result of
        :func:`load_embeddings` on a CSV of the same values as text (``str(v)``), with 0-based row indices for lines.

        ``labels`` (length N; ``None``, NaN, ``pd.NA``, blank and :data:`MISSING_TOKENS` are missing),
        ``embeddings`` (N, d), raw, NaN/inf allowed (dropped and counted), ``image_ids`` (length N, optional).

        Raises
        ------
        ValueError
            Mismatched lengths, a non-2-D or non-numeric ``embeddings``, ``d < 2``, or every row dropped
            (:class:`EmbeddingFileError`).
        """
        try:
            x = np.asarray(embeddings, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{source}: embeddings must be a numeric (N, d) array: {exc}") from None
        if x.ndim != 2 or x.shape[1] < 2:
            raise ValueError(f"{source}: embeddings must have shape (N, d) with d >= 2, got {x.shape}")
        raw = [_cell_text(v) for v in labels]
        if len(raw) != len(x):
            raise ValueError(f"{source}: {len(raw)} labels for {len(x)} embedding rows")
        ids = None
        if image_ids is not None:
            ids = [_cell_text(v) for v in image_ids]
            if len(ids) != len(x):
                raise ValueError(f"{source}: {len(ids)} image ids for {len(x)} embedding rows")
        names = tuple(f"e{j}" for j in range(x.shape[1]))
        return _filter(raw, ids, x, names, np.arange(len(x)), source=source, rows_read=len(x),
                       min_norm=min_norm, notes=["from arrays"], extra=dict(label_col=None, image_col=None))


def _line_list(lines: Iterable[int], limit: int = 8) -> str:
    """``"line 3"`` or ``"lines 3, 5, ... (12 in all)"``: file lines for messages and notes."""
    lines = [int(v) for v in lines]
    head = ", ".join(str(v) for v in lines[:limit])
    return ("line " if len(lines) == 1 else "lines ") + head + (f", ... ({len(lines)} in all)" if len(lines) > limit else "")


# --- Keys: labels and image ids -----------------------------------------------------------------------------


def _cell_text(value: Any) -> str | None:
    """A label or image-id value as text as written; ``None`` for None/NaN/pd.NA (a blank cell)."""
    if value is None or value is pd.NA:
        return None
    if isinstance(value, (float, np.floating)) and math.isnan(value):
        return None
    return str(value)


def _is_missing_text(text: str | None) -> bool:
    return text is None or text.strip().lower() in MISSING_TOKENS


def _clean(text: str) -> str:
    """Surrounding whitespace removed, Unicode NFC."""
    return unicodedata.normalize("NFC", text.strip())


def _number_kind(texts: Iterable[str | None]) -> str:
    """``"integer"`` (every non-missing text an integer-valued number), ``"number"``, ``"text"`` or ``"empty"``."""
    kind = "empty"
    for t in texts:
        if _is_missing_text(t):
            continue
        s = t.strip()
        if not _NUMBER.fullmatch(s):
            return "text"
        if kind != "number":
            kind = "integer" if _is_integer_text(s) else "number"
    return kind


def _is_integer_text(s: str) -> bool:
    """Whether a number literal is an integer of at most 100 digits (``7``, ``007``, ``7.0``, ``7e2``)."""
    d = Decimal(s)
    return d == d.to_integral_value() and d.adjusted() < 100


def _spelling(raw: str, integer: bool) -> str:
    """How a raw label spelling differs from its normal form (for the notes)."""
    tags = []
    if raw != raw.strip():
        tags.append("surrounding whitespace")
    s = raw.strip()
    if unicodedata.normalize("NFC", s) != s:
        tags.append("NFD" if unicodedata.is_normalized("NFD", s) else "not NFC")
    if integer and _clean(raw) != str(int(Decimal(s))):
        tags.append("integer spelling")
    return repr(raw) + (f" [{', '.join(tags)}]" if tags else "")


def _normalise_labels(raw: list[str | None], lines: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                                          list[str], dict[str, int]]:
    """Labels -> (labels with ``""`` where missing, missing, why missing, notes, counts) by the package rules."""
    n = len(raw)
    missing = np.array([_is_missing_text(t) for t in raw], dtype=bool)
    detail = np.array(["" if not m else ("no label (blank cell, None or NaN)" if t is None or not t.strip()
                                         else f"label {t.strip()!r} is a missing-value token")
                       for t, m in zip(raw, missing)], dtype=object)
    integer = _number_kind(raw) == "integer"
    labels = np.full(n, "", dtype=object)
    for i in np.flatnonzero(~missing):
        labels[i] = str(int(Decimal(raw[i].strip()))) if integer else _clean(raw[i])
    notes: list[str] = []
    if integer:
        notes.append("labels are integers: each is read as text in plain decimal ('7' for 7, 007, +7 or 7.0)")
    present = np.flatnonzero(~missing)
    frame = pd.DataFrame({"raw": [raw[i] for i in present], "label": labels[present], "line": lines[present]})
    changed = frame["raw"] != frame["label"]
    collisions = []
    for label, grp in frame.groupby("label", sort=False):
        spellings = grp.groupby("raw", sort=False)["line"].agg(list)
        if len(spellings) > 1:
            parts = [f"{_spelling(s, integer)} ({len(ln)} row(s), {_line_list(ln, 4)})" for s, ln in spellings.items()]
            collisions.append(f"{label!r} = " + " + ".join(parts))
    if collisions:
        shown = "; ".join(collisions[:5]) + (f"; ... ({len(collisions)} in all)" if len(collisions) > 5 else "")
        notes.append(f"{len(collisions)} label(s) written in several ways that are equal after normalisation "
                     f"(surrounding whitespace removed, Unicode NFC{', integer spelling' if integer else ''}), "
                     f"each read as one identity: {shown}")
    if changed.any():
        notes.append(f"{int(changed.sum())} row(s) with a label changed by normalisation "
                     f"({_line_list(frame.loc[changed, 'line'], 5)})")
    folded = frame.drop_duplicates("label").assign(fold=lambda f: f["label"].str.casefold())
    cases = [" / ".join(repr(v) for v in g["label"]) for _, g in folded.groupby("fold", sort=False) if len(g) > 1]
    if cases:
        notes.append(f"labels differing only in letter case stay different identities: {'; '.join(cases[:5])}"
                     + (f"; ... ({len(cases)} in all)" if len(cases) > 5 else ""))
    return labels, missing, detail, notes, {"labels_normalised": int(changed.sum()),
                                            "label_collisions": len(collisions)}


def _normalise_ids(raw: list[str | None], lines: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[str],
                                                                       dict[str, int]]:
    """Image ids -> (ids with ``""`` where missing, missing, notes, counts)."""
    missing = np.array([_is_missing_text(t) for t in raw], dtype=bool)
    ids = np.array(["" if m else _clean(t) for t, m in zip(raw, missing)], dtype=object)
    changed = np.array([not m and t != c for t, m, c in zip(raw, missing, ids)], dtype=bool)
    notes = []
    if missing.any():
        notes.append(f"image id missing on {int(missing.sum())} row(s) ({_line_list(lines[missing], 5)}): "
                     "those rows are matched by embedding only (missing ids never equal each other)")
    if changed.any():
        notes.append(f"{int(changed.sum())} image id(s) with surrounding whitespace or non-NFC text "
                     f"normalised ({_line_list(lines[changed], 5)})")
    return ids, missing, notes, {"image_ids_missing": int(missing.sum()), "image_ids_normalised": int(changed.sum())}


# --- The row filter -----------------------------------------------------------------------------------------


def _relation(i: int, j: int, line_j: int, x: np.ndarray, norms: np.ndarray, ids: np.ndarray | None,
              id_missing: np.ndarray | None, exact: np.ndarray, keys: np.ndarray) -> str:
    """How row ``i`` shows the same image as row ``j`` (indices into the full arrays), for a
    drop detail: e.g. ``"rescaled copy (x2) of line 3"`` or ``"line 9 has the same image id 'a'"``."""
    later, earlier = max(i, j), min(i, j)
    copy = ""
    if exact[i] == exact[j]:
        copy = "exact copy"
    else:
        ratio = norms[later] / norms[earlier]
        scale = f"x{ratio:.6g}" if abs(ratio - 1.0) > 1e-6 else ""
        if keys[i] == keys[j]:
            copy = f"rescaled copy ({scale})" if scale else "copy equal after L2-normalisation"
        else:
            dist = float(np.linalg.norm(x[i] / norms[i] - x[j] / norms[j]))
            if dist <= DUPLICATE_TOLERANCE:
                copy = f"rounded copy ({scale + '; ' if scale else ''}distance {dist:.1e} after L2-normalisation)"
    same_id = ids is not None and not id_missing[i] and not id_missing[j] and ids[i] == ids[j]
    id_text = f"same image id {ids[i]!r}" if same_id else ""
    if i > j:
        if copy:
            return f"{copy} of line {line_j}" + (f", {id_text}" if id_text else "")
        return f"{id_text} as line {line_j}"
    if copy:
        return f"line {line_j} is a {copy} of this row" + (f", {id_text}" if id_text else "")
    return f"line {line_j} has the {id_text}"


class _SameImage:
    """Rows linked by "shows the same image" (union-find), with each row's direct links."""

    def __init__(self, rows: np.ndarray):
        self.parent = {int(i): int(i) for i in rows}
        self.neighbours: dict[int, set[int]] = {int(i): set() for i in rows}
        self.by_embedding: set[int] = set()  # rows linked through their embedding (not only an image id)

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def link(self, a: int, b: int, *, embedding: bool) -> None:
        self.neighbours[a].add(b)
        self.neighbours[b].add(a)
        if embedding:
            self.by_embedding.update((a, b))
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)

    def components(self) -> list[list[int]]:
        """Groups of two or more rows showing one image, each sorted, in order of their first row."""
        out: dict[int, list[int]] = {}
        for i in self.parent:
            out.setdefault(self.find(i), []).append(i)
        return [sorted(m) for m in out.values() if len(m) > 1]


def _link_same_images(ok: np.ndarray, x: np.ndarray, norms: np.ndarray, ids: np.ndarray | None,
                      id_missing: np.ndarray | None) -> tuple[_SameImage, np.ndarray, np.ndarray]:
    """Link the rows ``ok`` that show one image (equal keys or image ids, rounded copies); also each row's exact
    and normalised key (for the drop details)."""
    images = _SameImage(ok)
    exact = np.full(len(x), None, dtype=object)
    keys = np.full(len(x), None, dtype=object)
    exact[ok] = row_keys(x[ok], normalised=False)
    keys[ok] = row_keys(x[ok])
    # same normalised key (exact and rescaled copies), then same non-missing image id
    key_first: dict[Any, int] = {}
    for i in ok:
        i = int(i)
        if keys[i] in key_first:
            images.link(key_first[keys[i]], i, embedding=True)
        else:
            key_first[keys[i]] = i
    if ids is not None:
        id_first: dict[str, int] = {}
        for i in ok[~id_missing[ok]]:
            i = int(i)
            if ids[i] in id_first:
                images.link(id_first[ids[i]], i, embedding=False)
            else:
                id_first[ids[i]] = i
    # rounded copies: compare one row per normalised key (rows with equal keys are linked above)
    reps = np.array(sorted(key_first.values()), dtype=int)
    for a, b in _near_pairs(x[reps] / norms[reps, None], DUPLICATE_TOLERANCE):
        images.link(int(reps[a]), int(reps[b]), embedding=True)
    return images, exact, keys


def _mark_same_images(reasons: np.ndarray, details: np.ndarray, labels: np.ndarray, ids: np.ndarray | None,
                      id_missing: np.ndarray | None, x: np.ndarray, norms: np.ndarray,
                      lines: np.ndarray) -> list[str]:
    """Filter step 4: mark duplicates and images under several labels; return the notes on the latter."""
    ok = np.flatnonzero(reasons == "")
    if len(ok) < 2:
        return []
    images, exact, keys = _link_same_images(ok, x, norms, ids, id_missing)

    def relation(i: int, j: int) -> str:
        return _relation(i, j, int(lines[j]), x, norms, ids, id_missing, exact, keys)

    conflicts = []
    id_only = 0
    for members in images.components():
        labs = list(dict.fromkeys(labels[members]))
        if len(labs) > 1:
            comp_lines = _line_list(lines[members], 6)
            label_text = ", ".join(repr(v) for v in labs)
            for i in members:
                other = [j for j in images.neighbours[i] if labels[j] != labels[i]]
                j = min(other or images.neighbours[i])
                reasons[i] = DROP_CONFLICT
                details[i] = (f"one image under labels {label_text} ({comp_lines}): {relation(i, j)} "
                              f"(label {labels[j]!r})")
            conflicts.append(f"{label_text} ({comp_lines})")
            id_only += not images.by_embedding.intersection(members)
            continue
        kept = members[0]
        for i in members[1:]:
            j = min(images.neighbours[i])
            via = "" if j == kept else f"; same image as kept line {int(lines[kept])}"
            reasons[i] = DROP_DUPLICATE
            details[i] = relation(i, j) + via
    return _conflict_notes(conflicts, id_only, int((reasons == DROP_CONFLICT).sum()))


def _conflict_notes(conflicts: list[str], id_only: int, n_rows: int) -> list[str]:
    """The notes on images found under several labels (``n_rows`` rows dropped)."""
    if not conflicts:
        return []
    shown = "; ".join(conflicts[:5]) + (f"; ... ({len(conflicts)} in all)" if len(conflicts) > 5 else "")
    notes = [f"{len(conflicts)} image(s) found under more than one label (same image id, or same embedding "
             f"after L2-normalisation): all {n_rows} of their rows dropped as '{DROP_CONFLICT}': {shown}"]
    if id_only:
        notes.append(f"{id_only} of them share only an image id (different embeddings): if image ids are unique "
                     "only within an identity (e.g. '0001.jpg' in every folder), pass --image-col (image_col=) "
                     "naming a column of globally unique ids")
    return notes


def _filter(raw_labels: list[str | None], raw_ids: list[str | None] | None, x: np.ndarray,
            names: tuple[str, ...], lines: np.ndarray, *, source: str, rows_read: int, min_norm: float,
            notes: list[str], extra: dict) -> EmbeddingTable:
    """Key rules and row filter, where :func:`load_embeddings` and :meth:`EmbeddingTable.from_arrays` both end:
    ``raw_labels``/``raw_ids`` cell text as written (``None`` blank), ``x`` (N, d) with NaN for missing cells."""
    lines = np.asarray(lines)
    labels, label_missing, label_detail, label_notes, key_counts = _normalise_labels(raw_labels, lines)
    notes = list(notes) + label_notes
    ids = id_missing = None
    key_counts.update(image_ids_missing=0, image_ids_normalised=0)
    if raw_ids is not None:
        ids, id_missing, id_notes, id_counts = _normalise_ids(raw_ids, lines)
        notes += id_notes
        key_counts.update(id_counts)
    reasons = np.full(len(x), "", dtype=object)
    details = np.full(len(x), "", dtype=object)
    reasons[label_missing] = DROP_LABEL
    details[label_missing] = label_detail[label_missing]
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
    notes += _mark_same_images(reasons, details, labels, ids, id_missing, x, norms, lines)
    keep = reasons == ""
    dropped = pd.DataFrame({
        "file_line": lines[~keep].astype(int),
        "label": [None if label_missing[i] else labels[i] for i in np.flatnonzero(~keep)],
        "image_id": None if ids is None else ids[~keep],
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
        image_ids=None if ids is None else ids[keep], source=source, dropped=dropped,
        rows_read=rows_read, embedding_cols=names, min_norm=min_norm, notes=tuple(notes),
        key_counts=key_counts, **extra)


# --- Reading ------------------------------------------------------------------------------------------------


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


def _col_name(name: Any) -> str:
    """A column name as matched: surrounding whitespace removed, Unicode NFC."""
    return unicodedata.normalize("NFC", str(name).strip())


def _label_name(name: str) -> str:
    """A column name as compared with :data:`LABEL_NAMES`: lower-cased, spaces/hyphens -> ``_``."""
    return re.sub(r"[\s\-]+", "_", name.lower())


def _check_header(path: Path, header: list[str]) -> list[str]:
    names = [_col_name(h) for h in header]
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
    items = [_col_name(s) for s in spec.split(",")] if isinstance(spec, str) else [_col_name(s) for s in spec]
    out: list[str] = []
    for item in items:
        if not item:
            continue
        if item in names:
            out.append(item)
            continue
        if isinstance(spec, str) and ":" in item:
            lo, hi = (_col_name(s) for s in item.split(":", 1))
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


def _read_frame(text: str, delim: str, header: list[str], names: list[str], as_text: set[str],
                only: str | None = None) -> pd.DataFrame:
    """Parse the file with pandas; columns in ``as_text`` as text (blank cells NaN), others typed
    by pandas; ``only``: parse just that column. Columns are renamed to ``names``."""
    dtype = {header[names.index(c)]: str for c in as_text}
    extra = {} if only is None else {"usecols": [names.index(only)]}
    frame = pd.read_csv(io.StringIO(text), sep=delim, header=0, keep_default_na=False, na_values=[""],
                        dtype=dtype, engine="c", skip_blank_lines=True, quoting=csv.QUOTE_MINIMAL, **extra)
    frame.columns = names if only is None else [only]
    return frame


def _texts(col: pd.Series) -> list[str | None]:
    """Cells of a column read as text: the text as written, ``None`` for blank cells."""
    return [_cell_text(v) for v in col.astype(object)]


def _choose_label(path: Path, frame: pd.DataFrame, names: list[str], named: list[str], kinds: dict[str, str],
                  junk: dict[str, tuple], image_col: str | None, record_lines: list[int],
                  notes: list[str]) -> str:
    """Auto-detect the identity-label column, recorded in ``notes`` (:class:`EmbeddingFileError` if none qualifies,
    naming the label-like columns passed over and why)."""
    kind = {n: _number_kind(_texts(frame[n])) for n in named}
    text_named = [n for n in named if kind[n] == "text"]
    integer_named, row_index = [], []
    for n in (n for n in named if kind[n] == "integer"):
        present = [str(int(Decimal(t.strip()))) for t in _texts(frame[n]) if not _is_missing_text(t)]
        (row_index if len(present) >= 2 and len(set(present)) == len(present) else integer_named).append(n)
    non_integer = [n for n in named if kind[n] == "number"]
    empty = [n for n in named if kind[n] == "empty"]
    others = [n for n in names if kinds[n] == "text" and n not in junk and n != image_col and n and n not in named]
    passed: list[str] = []
    if text_named:
        label = text_named[0]
        notes.append(f"label column {label!r} (name match)")
        if integer_named:
            passed.append(f"integer column(s) {', '.join(map(repr, integer_named))} named like a label not used as "
                          f"label: the text column {label!r} is preferred")
    elif integer_named:
        label = integer_named[0]
        notes.append(f"label column {label!r} (name match; holds integers, read as text labels)")
        if len(integer_named) > 1:
            passed.append(f"integer column(s) {', '.join(map(repr, integer_named[1:]))} named like a label not used "
                          f"as label: the first one, {label!r}, is used")
        if others:
            passed.append(f"text column(s) {', '.join(map(repr, others[:3]))} not used as label: a column named "
                          "like a label is preferred (pass --label-col to choose another)")
    elif others:
        label = others[0]
        notes.append(f"label column {label!r} (first non-numeric column)")
    else:
        label = None
    for n in row_index:
        passed.append(f"integer column {n!r} named like a label holds a different value on every row (a row index, "
                      "not an identity label): not used as label")
    for n in non_integer:
        texts = _texts(frame[n])
        i = next(i for i, t in enumerate(texts) if not _is_missing_text(t) and not _is_integer_text(t.strip()))
        passed.append(f"column {n!r} named like a label holds numbers that are not integers ({texts[i].strip()!r} "
                      f"on line {record_lines[i]}): not an identity label, not used as label")
    for n in empty:
        passed.append(f"column {n!r} named like a label is empty (every cell missing): not used as label")
    if label is None:
        hint = "; ".join(passed) if passed else "every column is numeric"
        raise EmbeddingFileError(
            f"{path}: no column to use as the identity label ({hint}). Pass --label-col NAME (label_col=) to "
            "choose one; its values are then read as text")
    notes.extend(passed)
    return label


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
    """Read an embedding table, check it, filter rows and L2-normalise (the rules: the package docstring).

    Parameters
    ----------
    path : path-like
        Delimited text file (``.csv``; gzip-compressed is fine) with a header line.
    label_col : str, optional
        Identity-label column, any column (read as text). Default: auto-detected (package docstring).
    embedding_cols : str or sequence of str, optional
        ``"e0:e127"`` (inclusive, in file order), ``"e0,e1,e2"``, a mix, or a list of names. Default: auto-detected.
    image_col : str, optional
        Image-id column (read as text). Default: the first column named like an image id.
    delimiter : str, optional
        Default: auto-detected among ``,`` ``;`` and tab.
    min_norm : float
        Rows with embedding norm ``<= min_norm`` are dropped (default 1e-6).
    min_identities : int
        Fewest identities with at least two rows the table must have (default 2: what an audit needs; 0: no check).

    Returns
    -------
    EmbeddingTable
        Embeddings of shape (N, d), float64, unit-norm; ``dropped`` and ``counts`` report the filter.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    EmbeddingFileError
        (a ``ValueError``) For each malformed input listed in the package docstring, naming file, line and/or column.

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = path.write_text("person,e0,e1\\nAnn,3,4\\nAnn,1,0\\nBob,0,2\\nBob,0,2\\nBob,1,1\\n")
    >>> table = load_embeddings(path)
    >>> table.label_col, table.embeddings[0].tolist(), table.counts["dropped_duplicate"]
    ('person', [0.6, 0.8], 1)
    """
    path = Path(path)
    src = _parse_file(path, delimiter)
    names, notes = src.names, src.notes
    label_col = None if label_col is None else _col_name(label_col)
    image_col = None if image_col is None else _col_name(image_col)
    for given, what in ((label_col, "label"), (image_col, "image")):
        if given is not None and given not in names:
            raise EmbeddingFileError(f"{path}: {what} column {given!r} is not in the header ({_names_preview(names)})")
    if image_col is None:
        image_col = next((n for n in names if _norm_image(n) in IMAGE_NAMES and n != label_col), None)
    named = [n for n in names if _label_name(n) in LABEL_NAMES and n != image_col]
    as_text = {c for c in [label_col, image_col, *named] if c is not None}
    frame = _read_frame(src.text, src.delimiter, src.header, names, as_text)
    if len(frame) != len(src.record_lines) or frame.shape[1] != len(names):
        raise EmbeddingFileError(f"{path}: could not align the parsed rows with the file's lines "
                                 f"({len(frame)} parsed, {len(src.record_lines)} counted)")
    kinds, values, junk = _classify(frame)
    label_col = _label_column(path, frame, names, named, kinds, junk, label_col, image_col, src.record_lines, notes)
    reserved = {label_col, image_col} | set(named) | {n for n in names if _norm_image(n) in IMAGE_NAMES}
    cols = _embedding_columns(path, frame, names, kinds, junk, embedding_cols, label_col, image_col, reserved,
                              src.record_lines, notes)
    x = np.column_stack([values[c] if c in values else np.full(len(frame), np.nan) for c in cols])
    if label_col not in as_text:  # the fallback text column: read its cells again exactly as written
        frame[label_col] = _read_frame(src.text, src.delimiter, src.header, names, {label_col},
                                       only=label_col)[label_col].to_numpy()
    raw_ids = None if image_col is None else _texts(frame[image_col])
    table = _filter(_texts(frame[label_col]), raw_ids, x, tuple(cols), np.asarray(src.record_lines),
                    source=str(path), rows_read=len(frame), min_norm=min_norm, notes=notes,
                    extra=dict(label_col=label_col, image_col=image_col, delimiter=src.delimiter, bom=src.bom,
                               sha256=src.sha256))
    if len(table.identities) < min_identities:
        single = len(table.single_row_identities)
        have = ", ".join(repr(s) for s in table.identities[:3])
        raise EmbeddingFileError(
            f"{path}: only {len(table.identities)} identity(ies) with >= 2 rows after filtering"
            f"{' (' + have + ')' if have else ''}, plus {single} with a single row; an audit needs "
            f">= {min_identities} identities (label column {label_col!r})")
    return table


@dataclass(frozen=True)
class _ParsedFile:
    """A file's text, format and line structure, checked (stage 1 of :func:`load_embeddings`)."""

    text: str
    bom: bool
    sha256: str
    header: list[str]
    names: list[str]
    delimiter: str
    record_lines: list[int]
    notes: list[str]


def _parse_file(path: Path, delimiter: str | None) -> _ParsedFile:
    """Read and decode the file, detect the delimiter, check the header and that no line is ragged."""
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
    return _ParsedFile(text, bom, digest, header, names, delim, record_lines, notes)


def _label_column(path: Path, frame: pd.DataFrame, names: list[str], named: list[str], kinds: dict[str, str],
                  junk: dict[str, tuple], label_col: str | None, image_col: str | None, record_lines: list[int],
                  notes: list[str]) -> str:
    """The identity-label column, given or detected (:func:`_choose_label`); the choice goes to ``notes``."""
    if label_col is None:
        label_col = _choose_label(path, frame, names, named, kinds, junk, image_col, record_lines, notes)
    else:
        notes.append(f"label column {label_col!r} (given)")
        if _number_kind(_texts(frame[label_col])) == "number":
            notes.append(f"label column {label_col!r} holds numbers that are not all integers: each text is one "
                         "label as written ('0.5' and '0.50' are different labels)")
    if image_col is not None:
        notes.append(f"image-id column {image_col!r}")
    return label_col


def _embedding_columns(path: Path, frame: pd.DataFrame, names: list[str], kinds: dict[str, str],
                       junk: dict[str, tuple], embedding_cols, label_col: str, image_col: str | None,
                       reserved: set, record_lines: list[int], notes: list[str]) -> list[str]:
    """The embedding columns, given or detected, checked to hold numbers (d >= 2); notes the others ignored."""
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
    return cols


def check_same_dimension(tables: Sequence[EmbeddingTable]) -> int:
    """Check that tables audited together share the embedding dimension; return it.

    Parameters
    ----------
    tables : sequence of EmbeddingTable

    Returns
    -------
    int
        The common dimension ``d``.

    Raises
    ------
    EmbeddingFileError
        Naming the first two files whose dimensions differ.

    Examples
    --------
    >>> t = EmbeddingTable.from_arrays(["A", "A", "B", "B"], [[1, 0], [0, 1], [1, 1], [1, 2]])
    >>> check_same_dimension([t, t])
    2
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


def _load_many(paths: Sequence[str | os.PathLike], **kwargs: Any) -> list[EmbeddingTable]:
    """:func:`load_embeddings` of several files with the same options, checked to share ``d``."""
    tables = [load_embeddings(p, **kwargs) for p in paths]
    check_same_dimension(tables)
    return tables


# --- Writing ------------------------------------------------------------------------------------------------


def write_embeddings(path: str | os.PathLike, labels: Sequence[Hashable], image_ids: Sequence[Any] | None,
                     embeddings: Any, *, label_col: str = "identity", image_col: str = "image_id",
                     prefix: str = "e") -> Path:
    """Write an embedding table: ``identity, image_id, e0 .. e{d-1}``, comma-separated, UTF-8, values with ``%.7g``
    (float32 precision), embeddings as given. :func:`load_embeddings` reads it back (labels that are numbers but
    not all integers need ``label_col=``).

    Parameters
    ----------
    path : path-like
    labels : sequence, length N
        Identity labels (``str(v)``); none may be missing, blank or a :data:`MISSING_TOKENS` token such as ``'NA'``.
    image_ids : sequence, length N, or None
        Image ids (``None`` omits the column); a ``None``/NaN id is written as a blank cell.
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
        Mismatched lengths, a missing or missing-token label (first row and count named), a non-finite value or a
        non-2-D array.

    Examples
    --------
    >>> import tempfile
    >>> path = write_embeddings(Path(tempfile.mkdtemp()) / "t.csv", ["A", "B"], ["a.jpg", "b.jpg"],
    ...                         [[0.5, 1.0], [2.0, 0.25]])
    >>> print(path.read_text(), end="")
    identity,image_id,e0,e1
    A,a.jpg,0.5,1
    B,b.jpg,2,0.25
    """
    x = np.asarray(embeddings, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] == 0 or x.shape[1] == 0:
        raise ValueError(f"embeddings must have shape (N, d) with N, d >= 1, got {x.shape}")
    texts = [_cell_text(v) for v in labels]
    if len(texts) != len(x):
        raise ValueError(f"{len(texts)} labels for {len(x)} embedding rows")
    blank = [i for i, v in enumerate(texts) if _is_missing_text(v)]
    if blank:
        raise ValueError(f"labels: row {blank[0]} has a missing or blank label ({texts[blank[0]]!r}; "
                         f"{len(blank)} in all); blank cells and {sorted(MISSING_TOKENS - {''})} are read as missing")
    labels = texts
    if not np.isfinite(x).all():
        row, col = np.argwhere(~np.isfinite(x))[0]
        raise ValueError(f"embeddings: non-finite value at row {row}, column {col}")
    columns = {label_col: labels}
    if image_ids is not None:
        if len(image_ids) != len(x):
            raise ValueError(f"{len(image_ids)} image ids for {len(x)} embedding rows")
        columns[image_col] = ["" if v is None else v for v in map(_cell_text, image_ids)]
    frame = pd.DataFrame(columns)
    emb = pd.DataFrame(x, columns=[f"{prefix}{j}" for j in range(x.shape[1])])
    path = Path(path)
    pd.concat([frame, emb], axis=1).to_csv(path, index=False, float_format="%.7g", lineterminator="\n")
    return path
