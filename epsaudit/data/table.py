"""The embedding table: what a loaded file holds, its counts and its summary (format in :mod:`epsaudit.data`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Hashable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

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
#: Two L2-normalised rows closer than this (Euclidean distance) show the same image: float32
#: rounding moves a unit vector by <= 2**-23 and 7 significant digits by <= about 1e-6, while
#: distinct face embeddings lie >= 0.06 apart in the committed tables.
DROP_LABEL = "missing label"
DROP_NONFINITE = "missing or non-finite embedding value"
DROP_NORM = "norm <= min_norm"
DROP_DUPLICATE = "duplicate of an earlier row"
DROP_CONFLICT = "same image under another label"
MANIFEST_VERSION = 1

_BLOCK_NAME = re.compile(r"^(.*?)(\d+)$")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_DROP_KEYS = ((DROP_LABEL, "dropped_missing_label"), (DROP_NONFINITE, "dropped_nonfinite"),
              (DROP_NORM, "dropped_norm"), (DROP_DUPLICATE, "dropped_duplicate"),
              (DROP_CONFLICT, "dropped_label_conflict"))
_KEY_COUNTS = ("labels_normalised", "label_collisions", "image_ids_missing", "image_ids_normalised")


class EmbeddingFileError(ValueError):
    """An embedding file that cannot be read as an embedding table; the message names the file
    and, where it applies, the line (1-based, header = line 1) and the column.

    Examples
    --------
    >>> issubclass(EmbeddingFileError, ValueError)
    True
    """


# --------------------------------------------------------------------------------------------
# The table


@dataclass(frozen=True, eq=False)
class EmbeddingTable:
    """Filtered, L2-normalised embeddings of one file (or one set of arrays).

    Attributes
    ----------
    labels : ndarray of str, shape (N,)
        Identity label of each kept row (normalised: stripped, Unicode NFC; integer labels in
        plain decimal).
    embeddings : ndarray of float64, shape (N, d)
        Unit-norm embeddings (rows kept by the filter, in file order).
    image_ids : ndarray of str, shape (N,), or None
        Image id of each kept row (stripped, NFC; ``""`` where missing) when the file has an
        image-id column.
    source : str
        Path of the file (or a description of the arrays).
    dropped : pandas.DataFrame
        One row per dropped row: ``file_line`` (int; for arrays the 0-based row index),
        ``label``, ``image_id``, ``reason`` (:data:`DROP_LABEL`, :data:`DROP_NONFINITE`,
        :data:`DROP_NORM`, :data:`DROP_DUPLICATE` or :data:`DROP_CONFLICT`) and ``detail``
        (e.g. the offending column and cell, or the line a duplicate copies).
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
        How each column was chosen, ignored columns, format details, labels merged by
        normalisation, images found under several labels.
    key_counts : dict of str to int
        ``labels_normalised``, ``label_collisions``, ``image_ids_missing``,
        ``image_ids_normalised`` (see the module docstring); part of :attr:`counts`.

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
        """Every count of the filter and of the key rules.

        Returns
        -------
        dict of str to int
            ``rows_read``; rows dropped per reason (``dropped_missing_label``,
            ``dropped_nonfinite``, ``dropped_norm``, ``dropped_duplicate``,
            ``dropped_label_conflict``); ``rows_kept``; ``identities`` (with >= 2 rows);
            ``single_row_identities``; ``dim``; and the key counts ``labels_normalised`` (rows
            whose label text changed by normalisation), ``label_collisions`` (identities whose
            label was written in several ways), ``image_ids_missing`` and
            ``image_ids_normalised`` (rows read; 0 without an image-id column).
        """
        reasons = self.dropped["reason"].value_counts() if len(self.dropped) else pd.Series(dtype=int)
        single = self.single_row_identities
        out = {"rows_read": int(self.rows_read)}
        out.update({key: int(reasons.get(reason, 0)) for reason, key in _DROP_KEYS})
        out.update({
            "rows_kept": self.n_rows,
            "identities": len(self.identities),
            "single_row_identities": len(single),
            "dim": self.dim,
        })
        out.update({key: int(self.key_counts.get(key, 0)) for key in _KEY_COUNTS})
        return out

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
        """A few lines stating what was read, how columns were chosen and every count.

        The notes (column choices, labels merged by normalisation, missing image ids, images
        under several labels) come first, then the rows dropped per reason with their lines, the
        rows and identities kept, and the key counts when any is non-zero.
        """
        c = self.counts
        name = self.source if self.sha256 is None else f"{self.source} (sha256 {self.sha256[:12]})"
        lines = [f"{name}: {c['rows_read']} data rows, d = {c['dim']}"]
        lines += [f"  {note}" for note in self.notes]
        dropped = c["rows_read"] - c["rows_kept"]
        if dropped:
            parts = []
            for reason, key in _DROP_KEYS:
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
        if any(c[k] for k in _KEY_COUNTS):
            lines.append("  keys: " + ", ".join(f"{k} = {c[k]}" for k in _KEY_COUNTS))
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"EmbeddingTable(source={self.source!r}, rows={self.n_rows}, identities="
                f"{len(self.identities)}, dim={self.dim}, dropped={len(self.dropped)})")

    # -- construction from arrays ------------------------------------------------------------
    @classmethod
    def from_arrays(cls, labels: Sequence[Hashable], embeddings: Any, image_ids: Sequence[Any] | None = None,
                    *, source: str = "<arrays>", min_norm: float = DEFAULT_MIN_NORM) -> "EmbeddingTable":
        """Apply the same label/image-id rules, row filter and normalisation to in-memory arrays.

        The result equals what :func:`load_embeddings` gives for a CSV file holding the same
        values as text (``str(v)`` of each label and image id), except for the line numbers.

        Parameters
        ----------
        labels : sequence, length N
            Identity labels. ``None``, NaN, ``pd.NA``, blank strings and :data:`MISSING_TOKENS`
            strings are missing (the row is dropped); others are read as ``str(v)``, stripped and
            put in Unicode NFC; when every label is an integer-valued number (``7``, ``7.0``,
            ``'007'``) labels become the integer in plain decimal (``'7'``).
        embeddings : array_like, shape (N, d)
            Raw embeddings, any scale; NaN/inf allowed (those rows are dropped and counted).
        image_ids : sequence, length N, optional
            Image ids, same rules as labels except the integer rule; missing ones match nothing.
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
            dropped (:class:`EmbeddingFileError`).
        """
        from .rows import _cell_text, _filter  # the filter builds tables: imported here, not at module level

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
    lines = [int(v) for v in lines]
    head = ", ".join(str(v) for v in lines[:limit])
    return ("line " if len(lines) == 1 else "lines ") + head + (f", ... ({len(lines)} in all)" if len(lines) > limit else "")
