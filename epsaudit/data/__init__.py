"""Embedding tables: loading, validation, the row filter, writing, and manifests.

An embedding table is a delimited text file (CSV) with a header line and one row per generated output: an identity
label, optionally an image id, and the embedding in columns ``e0 .. e{d-1}`` (or similar). :func:`load_embeddings`
reads it into an :class:`EmbeddingTable`; :meth:`EmbeddingTable.from_arrays` applies the same key rules and row
filter to in-memory arrays; :func:`write_embeddings` writes the format. Modules: :mod:`~epsaudit.data.table` (the
format), :mod:`~epsaudit.data.manifest` (SHA-256 manifests), :mod:`~epsaudit.data.corpora` (the face-swap
corpora; imported on its own).

Format detection (every decision is recorded in ``EmbeddingTable.notes``, printed by :meth:`EmbeddingTable.summary`):

* encoding UTF-8, with or without a byte-order mark (removed), or gzip-compressed; delimiter: the one of ``,``
  ``;`` and tab that splits the header into the most fields; column names stripped and in Unicode NFC (also
  names passed as ``label_col``/``image_col``/``embedding_cols``); names equal after this are duplicates;
* a cell is *missing* when blank or one of ``nan``, ``na``, ``n/a``, ``null``, ``none`` (stripped,
  case-insensitive; :data:`MISSING_TOKENS`), in every column; ``inf``/``-inf`` are numbers. Any other non-number
  in an embedding column is an error; a column is *numeric* when all its non-missing cells are numbers (booleans
  are not).

Column detection, when not given explicitly:

* image id: the first column whose name, lower-cased without ``_``/``-``/spaces, is in :data:`IMAGE_NAMES`
  (``image_id``, ``image``, ``filename``, ``path``, ...); read as text;
* identity label: among the columns named like :data:`LABEL_NAMES` (``identity``, ``label``, ``id``, ``person``,
  ``subject``, ``name``, ...; case-insensitive, spaces/hyphens read as ``_``), the first *text* column; else the
  first *integer* column (every cell an integer-valued number such as ``7``, ``007`` or ``7.0``, as in CelebA's
  identity file) unless it holds a different value on every row (a row index); else the first text column not
  named like a label or an image id. A label-named column of other numbers (``0.5``, ``inf``) is never chosen.
  A candidate passed over is named in a note; with none, loading asks for ``label_col`` (``--label-col``);
* embedding: a *named block* -- names ``<prefix><k>`` with one common prefix (``e``, ``emb_``, ``x``, ``dim`` or
  none) numbered consecutively from 0 or 1 (``e0 .. e127``). A gapped block or several blocks (``orig_0..`` and
  ``gen_0..``) are errors that ask for ``embedding_cols``. Without a block, every numeric column except the label,
  the image id, unnamed columns and columns named like a label or an image id. Other columns are ignored (noted).

Keys (the same in :func:`load_embeddings` and :meth:`EmbeddingTable.from_arrays`):

* a label is its text stripped and in Unicode NFC (``'Ann '`` and ``'Ann'``, or ``'José'`` composed and
  decomposed, are one identity); labels written in several ways are listed in the notes and counted
  (``label_collisions``; ``labels_normalised`` counts rows whose label text changed). Labels differing only in
  letter case stay different identities (noted). When every label is an integer-valued number, labels are
  integers in plain decimal (``'7'`` for ``7``, ``007``, ``+7`` or ``7.0``); numbers not all integer-valued keep
  their text. A missing label (blank, NaN/None, or a :data:`MISSING_TOKENS` cell such as ``NA``) drops the row;
* an image id is likewise stripped and in NFC; a missing one matches no other row, not even another missing one
  (``image_ids_missing``; ``image_ids_normalised`` counts ids whose text changed).

Row filter (every count is reported, nothing is dropped silently):

1. rows with a missing label are dropped (:data:`DROP_LABEL`);
2. rows with a missing or non-finite embedding cell are dropped (:data:`DROP_NONFINITE`);
3. rows with Euclidean norm ``<= min_norm`` (1e-6) are dropped (:data:`DROP_NORM`);
4. two remaining rows show the *same image* when they have the same (non-missing) image id, or equal embeddings
   after L2-normalisation: equal keys of :func:`epsaudit.validation.row_keys` (exact and rescaled copies) or
   normalised rows within :data:`epsaudit.validation.ROW_TOLERANCE` (``2**-19``: copies rounded to float32 or to
   the 7 digits :func:`write_embeddings` uses); linked rows form one image. An image whose rows carry one label
   keeps its first row, the others are dropped (:data:`DROP_DUPLICATE`; the detail says ``exact copy``,
   ``rescaled copy (x2)``, ``rounded copy`` or ``same image id`` and names the line): copies would leak
   development rows into a reserved test set and inflate certificates. An image under *different* labels is
   dropped entirely (:data:`DROP_CONFLICT`; labels and lines in the detail and a note);
5. the remaining rows are L2-normalised;
6. identities left with fewer than ``min_rows`` rows (default 2) stay in the table but not in
   :meth:`EmbeddingTable.groups` (counted).

Dropped rows are listed in ``EmbeddingTable.dropped`` with their file line (1-based; the header is line 1; blank
lines count). Loading fails with :class:`EmbeddingFileError` (a ``ValueError``) naming the file, line and/or column
for: an empty file, a header without rows, duplicate column names, a ragged line, no numeric columns, no label
column, an ambiguous or gapped embedding block, a non-numeric cell in an embedding column, every row filtered out,
and fewer than two identities with at least two rows.
"""


from .manifest import jsonable, manifest_entry, sha256_file, verify_manifest
from .table import (DEFAULT_MIN_NORM, DROP_CONFLICT, DROP_DUPLICATE, DROP_LABEL, DROP_NONFINITE, DROP_NORM,
                    IMAGE_NAMES, LABEL_NAMES, MISSING_TOKENS, EmbeddingFileError, EmbeddingTable, check_same_dimension,
                    load_embeddings, write_embeddings)

__all__ = [
    "DEFAULT_MIN_NORM", "DROP_CONFLICT", "DROP_DUPLICATE", "DROP_LABEL", "DROP_NONFINITE", "DROP_NORM",
    "IMAGE_NAMES", "LABEL_NAMES", "MISSING_TOKENS", "EmbeddingFileError", "EmbeddingTable", "check_same_dimension",
    "jsonable", "load_embeddings", "manifest_entry", "sha256_file", "verify_manifest", "write_embeddings",
]
