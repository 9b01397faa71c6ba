"""The row filter: label and image-id keys, copies of one image, dropped rows (rules in :mod:`epsaudit.data`)."""

from __future__ import annotations

import math
import unicodedata
from decimal import Decimal
from typing import Any, Iterable

import numpy as np
import pandas as pd

from ..validation import ROW_TOLERANCE as DUPLICATE_TOLERANCE, near_pairs as _near_pairs, row_keys
from .table import (DROP_CONFLICT, DROP_DUPLICATE, DROP_LABEL, DROP_NONFINITE, DROP_NORM, MISSING_TOKENS, _NUMBER,
                    EmbeddingFileError, EmbeddingTable, _line_list)

# --------------------------------------------------------------------------------------------
# Keys: labels and image ids


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
    """``"integer"`` when every non-missing text is an integer-valued number, ``"number"`` when
    every one is a number but not all integer-valued, ``"text"`` otherwise, ``"empty"`` when all
    are missing."""
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
    """Whether a number literal (``_NUMBER``) is an integer of at most 100 digits (``7``, ``007``,
    ``7.0``, ``7e2``); ``int(Decimal(s))`` is then its plain decimal value."""
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
    """Labels -> (labels, missing, missing_detail, notes, counts) by the module docstring's rules.

    ``labels`` is an object array with ``""`` where missing; ``missing_detail`` says why a label
    is missing; ``counts`` holds ``labels_normalised`` and ``label_collisions``.
    """
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


# --------------------------------------------------------------------------------------------
# The row filter


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
    """Link the rows ``ok`` that show one image: equal normalised keys, equal image ids, rounded copies.

    Returns the links and each row's exact and normalised key (for the drop details).
    """
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
    """Filter step 4 (module docstring): mark duplicates and images under several labels.

    Returns the notes on images found under several labels.
    """
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
    """Key rules and row filter (module docstring); ``x`` raw (N, d) with NaN for missing cells.

    Both :func:`load_embeddings` and :meth:`EmbeddingTable.from_arrays` end here, so they apply
    the same rules. ``raw_labels``/``raw_ids`` hold cell text as written (``None`` for a blank
    cell); ``lines`` the file line (or row index) of each row.
    """
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
