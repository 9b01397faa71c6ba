"""Writing embedding tables in the format :func:`epsaudit.data.load_embeddings` reads."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Hashable, Sequence

import numpy as np
import pandas as pd

from .rows import _cell_text, _is_missing_text
from .table import MISSING_TOKENS


def write_embeddings(path: str | os.PathLike, labels: Sequence[Hashable], image_ids: Sequence[Any] | None,
                     embeddings: Any, *, label_col: str = "identity", image_col: str = "image_id",
                     prefix: str = "e") -> Path:
    """Write an embedding table: ``identity, image_id, e0 .. e{d-1}``, comma-separated, UTF-8.

    Values are written with ``%.7g`` (float32 precision); embeddings are written as given (not
    normalised). :func:`load_embeddings` reads the file back: labels are stripped and put in
    Unicode NFC there, integer labels come back in plain decimal (``'7'`` for ``7.0``), and labels
    that are numbers but not all integers need ``label_col=``.

    Parameters
    ----------
    path : path-like
    labels : sequence, length N
        Identity labels (written as ``str(v)``); none may be missing, blank or a missing-value
        token such as ``'NA'`` (:data:`MISSING_TOKENS`), which would be read back as missing.
    image_ids : sequence, length N, or None
        Image ids; ``None`` omits the column. A ``None``/NaN id is written as a blank cell
        (read back as missing).
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
        Mismatched lengths, a missing or missing-token label (the first row and the count are
        named), a non-finite value or a non-2-D array.

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
