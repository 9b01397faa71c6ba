"""Reading embedding CSV files: encoding, delimiter, column detection (rules in :mod:`epsaudit.data`)."""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import os
import re
import unicodedata
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .rows import _cell_text, _filter, _is_integer_text, _is_missing_text, _number_kind
from .table import (DEFAULT_MIN_NORM, DELIMITERS, IMAGE_NAMES, LABEL_NAMES, MISSING_TOKENS, _BLOCK_NAME,
                    EmbeddingFileError, EmbeddingTable, _line_list)
from .writer import write_embeddings  # noqa: F401  (its home until the writer got its own module)

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
    """Auto-detect the identity-label column (module docstring); record the choice in ``notes``.

    Raises
    ------
    EmbeddingFileError
        When no column qualifies, naming the label-like columns passed over and why.
    """
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


# Over 80 lines only through its docstring (every option and error documented); the stages are helpers.
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
        Identity-label column, any column. Default: auto-detected (a text column named like a
        label, else an integer column named like a label, else the first text column; see the
        module docstring). Its values are read as text: integer-valued numbers as plain decimal
        integers, other cells stripped and in Unicode NFC.
    embedding_cols : str or sequence of str, optional
        ``"e0:e127"`` (an inclusive range in file order), ``"e0,e1,e2"``, a mix of both, or a
        list of names. Default: auto-detected.
    image_col : str, optional
        Image-id column (read as text, stripped, NFC; missing ids match nothing). Default: the
        first column named like an image id.
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


def load_many(paths: Sequence[str | os.PathLike], **kwargs: Any) -> list[EmbeddingTable]:
    """Load several files with the same options and check they share ``d``.

    Parameters
    ----------
    paths : sequence of path-like
    **kwargs
        Options of :func:`load_embeddings`.

    Returns
    -------
    list of EmbeddingTable

    Raises
    ------
    EmbeddingFileError
        From :func:`load_embeddings` or :func:`check_same_dimension`.

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = path.write_text("identity,e0,e1\\nA,1,0\\nA,0,1\\nB,1,1\\nB,1,2\\n")
    >>> [t.dim for t in load_many([path, path])]
    [2, 2]
    """
    tables = [load_embeddings(p, **kwargs) for p in paths]
    check_same_dimension(tables)
    return tables
