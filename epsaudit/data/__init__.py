"""Embedding tables: loading, validation, the row filter, writing, and manifests.

An embedding table is a delimited text file (CSV) with a header line and one row per generated
output: an identity label, optionally an image id, and the embedding in columns ``e0 .. e{d-1}``
(or similar). :func:`load_embeddings` reads it into an :class:`EmbeddingTable`;
:meth:`EmbeddingTable.from_arrays` applies the same label/image-id rules and row filter to
in-memory arrays; :func:`write_embeddings` writes the format.

Modules: :mod:`~epsaudit.data.table` (the embedding-table format: reading, the row filter, the
table, writing), :mod:`~epsaudit.data.manifest` (SHA-256 manifests) and
:mod:`~epsaudit.data.corpora` (the face-swap corpora formats: the cascade/operator corpora and the
resampled corpus; imported on its own, not re-exported here).

Format detection (every decision is recorded in ``EmbeddingTable.notes`` and printed by
:meth:`EmbeddingTable.summary`):

* encoding: UTF-8, with or without a byte-order mark (removed); gzip-compressed files are read too;
* delimiter: the one of ``,`` ``;`` and tab that splits the header line into the most fields;
* column names are stripped of surrounding whitespace and put in Unicode NFC (so are names passed
  as ``label_col``/``image_col``/``embedding_cols``); names equal after this are duplicates;
* a cell is *missing* when it is blank or one of ``nan``, ``na``, ``n/a``, ``null``, ``none``
  (stripped, case-insensitive; :data:`MISSING_TOKENS`) -- in every column, the label and the
  image id included; ``inf``/``-inf`` parse as infinite numbers. Any other cell that is not a
  number in an embedding column is an error (no silent coercion);
* a column is *numeric* when all its non-missing cells are numbers (booleans are not numbers).

Column detection, when not given explicitly:

* image id: the first column whose name, lower-cased without ``_``/``-``/spaces, is one of
  :data:`IMAGE_NAMES` (``image_id``, ``image``, ``filename``, ``path``, ...); read as text;
* identity label: among the columns named like :data:`LABEL_NAMES` (``identity``, ``label``,
  ``id``, ``person``, ``subject``, ``name``, ...; case-insensitive, spaces/hyphens read as ``_``),
  the first *text* column (a cell that is not a number); else the first *integer* column (every
  cell an integer-valued number such as ``7``, ``007`` or ``7.0``, as in CelebA's identity file),
  unless it holds a different value on every row (a row index, not a label); else the first text
  column not named like a label (and not the image id). A label-named column holding other
  numbers (``0.5``, ``inf``) is not an identity label and is never chosen automatically. Whichever
  candidate is passed over is named in a note. If there is no candidate, loading fails and asks for
  ``label_col`` (``--label-col``), which may name any column;
* embedding: the columns of a *named block* -- names ``<prefix><k>`` with one common prefix
  (``e``, ``emb_``, ``x``, ``dim``, or none: ``0 .. d-1``) whose numbers are consecutive from 0
  or 1, e.g. ``e0 .. e127``. A prefix group with a gap, several blocks (e.g. ``orig_0..`` and
  ``gen_0..``, or blocks of mixed width) are errors that ask for ``embedding_cols``. Without any
  block, every numeric column except the label, the image id, unnamed columns and columns named
  like a label or an image id. Other columns are ignored and listed in the notes.

Labels and image ids (the keys rows are grouped and matched by; the same rules in
:func:`load_embeddings` and :meth:`EmbeddingTable.from_arrays`):

* a label is its text with surrounding whitespace removed, in Unicode NFC, so ``'Ann '`` and
  ``'Ann'``, or ``'José'`` written composed (NFC) and decomposed (NFD), are one identity; labels
  that were written in several ways and meet only after this are listed (spellings, row counts,
  lines) in the notes and counted (``label_collisions``; ``labels_normalised`` counts the rows
  whose label text changed). Labels that differ only in letter case stay different identities and
  are named in a note;
* when every label of a column is an integer-valued number, labels are integers written in plain
  decimal (``'7'`` for ``7``, ``007``, ``+7`` or ``7.0``; a note says so). A label column whose
  cells are numbers but not all integer-valued keeps each text as written;
* a missing label (blank, NaN/None, or a :data:`MISSING_TOKENS` cell such as ``NA``) drops the row;
* an image id is likewise stripped and put in NFC; a missing image id (blank, NaN/None or a
  missing token) matches no other row, not even another missing one (``image_ids_missing``
  counts them; ``image_ids_normalised`` counts ids whose text changed).

Row filter (every count is reported, nothing is dropped silently):

1. rows with a missing label are dropped (:data:`DROP_LABEL`);
2. rows with a missing or non-finite (NaN, inf) embedding cell are dropped (:data:`DROP_NONFINITE`);
3. rows whose embedding has Euclidean norm ``<= min_norm`` (1e-6) are dropped (:data:`DROP_NORM`);
4. rows showing the *same image* are found among the remaining rows: two rows show the same image
   when they have the same (non-missing) image id, or when their embeddings are equal after
   L2-normalisation -- equal keys of :func:`epsaudit.validation.row_keys` (exact copies and copies
   multiplied by any factor) or L2-normalised rows within Euclidean distance
   :data:`epsaudit.validation.ROW_TOLERANCE` (``2**-19``; copies rounded to float32 or to the 7 significant
   digits :func:`write_embeddings` uses). Rows linked through this relation form one image.
   An image whose rows all carry one label keeps its first row; the others are dropped as
   duplicates (:data:`DROP_DUPLICATE`; the detail says ``exact copy``, ``rescaled copy (x2)``,
   ``rounded copy`` or ``same image id`` and names the line). Copies would leak development rows
   into a reserved test set and inflate certificates. An image whose rows carry *different* labels
   is dropped entirely (:data:`DROP_CONFLICT`, every row, with the labels and lines in the detail
   and a note): its identity is contradictory, and keeping it would put one embedding in two
   classes (making them look alike) or assign it to whichever label came first;
5. the remaining rows are L2-normalised;
6. identities left with fewer than ``min_rows`` rows (default 2, i.e. a single row) stay in the
   table but are left out of :meth:`EmbeddingTable.groups`, with their count reported.

The dropped rows are listed in ``EmbeddingTable.dropped`` with their line number in the file
(1-based; the header is line 1; blank lines count). Loading fails with
:class:`EmbeddingFileError` (a ``ValueError``) naming the file, line and/or column for: an empty
file, a header without rows, duplicate column names, a ragged line, no numeric columns, no label
column, an ambiguous or gapped embedding block, a non-numeric cell in an embedding column, every
row filtered out, and fewer than two identities with at least two rows.
"""


from .manifest import jsonable, manifest_entry, read_manifest, sha256_file, verify_manifest, write_manifest
from .table import (DEFAULT_MIN_NORM, DROP_CONFLICT, DROP_DUPLICATE, DROP_LABEL, DROP_NONFINITE, DROP_NORM,
                    IMAGE_NAMES, LABEL_NAMES, MISSING_TOKENS, EmbeddingFileError, EmbeddingTable, check_same_dimension,
                    load_embeddings, load_many, write_embeddings)

__all__ = [
    "DEFAULT_MIN_NORM", "DROP_CONFLICT", "DROP_DUPLICATE", "DROP_LABEL", "DROP_NONFINITE", "DROP_NORM",
    "IMAGE_NAMES", "LABEL_NAMES", "MISSING_TOKENS", "EmbeddingFileError", "EmbeddingTable", "check_same_dimension",
    "jsonable", "load_embeddings", "load_many", "manifest_entry", "read_manifest", "sha256_file", "verify_manifest",
    "write_embeddings", "write_manifest",
]
