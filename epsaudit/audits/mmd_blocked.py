"""The MMD-TV statistics of one pair in bounded memory: the exact blocked computation for large samples.

:func:`epsaudit.audits.mmd_tv.mmd_statistics` holds every pairwise squared distance of the pooled
pair sample in memory (the median heuristic needs all of them), ``(m + n)^2 / 2`` numbers: 8 GB for
two identities of 20,000 rows. :func:`blocked_mmd2` computes the same two numbers -- the median of the
pooled pairwise distances and the unbiased ``MMD_u^2`` (Gretton et al. 2012) -- from distance blocks
of ``block_rows`` rows, in three passes over the blocks, with memory bounded by a few blocks:

1. a histogram of the squared distances on ``2^16`` equal bins of ``[0, 4 max ||z||^2]`` (every squared
   distance lies there) locates the bins of the two middle ranks;
2. the distances in those bins are collected and the middle ones selected exactly (a bin still too
   full is refined by another pass, only for its values); the median distance is the mean of the square
   roots of the two middle squared distances, as ``numpy.median`` of the distances gives it;
3. the kernel sums of the three parts (within A, within B, across) at that bandwidth.

Same numbers as the in-memory computation up to the order of floating-point sums: the values agree to
about 1e-12 (relative), checked in ``tests/test_batch_logistic.py``. Each pass costs one pooled distance
matrix of BLAS work, so this is 3x the arithmetic of the in-memory path, for samples that do not fit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

BLOCK_ROWS = 1024
BINS = 2**16
MAX_CANDIDATES = 2**22


def _blocks(x: np.ndarray, y: np.ndarray | None, block_rows: int) -> Iterator[np.ndarray]:
    """Squared distances of the rows of ``x`` with those of ``y`` (``None``: of ``x``, pairs i < j), in blocks."""
    from .mmd_tv import cross_squared_distances

    sq_x = np.einsum("ij,ij->i", x, x)
    sq_y = sq_x if y is None else np.einsum("ij,ij->i", y, y)
    other = x if y is None else y
    for i in range(0, len(x), block_rows):
        rows = slice(i, min(i + block_rows, len(x)))
        start = i if y is None else 0
        for j in range(start, len(other), block_rows):
            cols = slice(j, min(j + block_rows, len(other)))
            d2 = cross_squared_distances(x[rows], other[cols], sq_x[rows], sq_y[cols])
            if y is None and j == i:
                yield d2[np.triu_indices(d2.shape[0], k=1)]
            else:
                yield d2.ravel()


def _parts(a: np.ndarray, b: np.ndarray, block_rows: int) -> list[Callable[[], Iterator[np.ndarray]]]:
    return [lambda: _blocks(a, None, block_rows), lambda: _blocks(b, None, block_rows),
            lambda: _blocks(a, b, block_rows)]


def _bins(v: np.ndarray, lo: float, scale: float) -> np.ndarray:
    return np.clip((v - lo) * scale, 0, BINS - 1).astype(np.int64)


def _window(v: np.ndarray, keep: list) -> np.ndarray:
    """The values of ``v`` in every earlier round's selected bins (the same arithmetic as that round)."""
    for lo, scale, first, last in keep:
        b = _bins(v, lo, scale)
        v = v[(b >= first) & (b <= last)]
    return v


def _select(parts, ranks: tuple[int, int], high: float) -> tuple[float, float]:
    """The squared distances of ``ranks`` (0-based, ascending) among all blocks, by histogram passes."""
    lo, hi, below = 0.0, high, 0
    keep: list[tuple[float, float, int, int]] = []  # each earlier round's (lo, scale, first bin, last bin)
    while True:
        scale = BINS / (hi - lo) if hi > lo else 0.0
        counts = np.zeros(BINS, dtype=np.int64)
        for part in parts:
            for v in part():
                v = _window(v, keep)
                if v.size:
                    counts += np.bincount(_bins(v, lo, scale), minlength=BINS)
        cum = np.cumsum(counts)
        first, last = (int(np.searchsorted(cum, r - below, side="right")) for r in ranks)
        before = below + (int(cum[first - 1]) if first else 0)
        if not scale or int(cum[last]) - before + below <= MAX_CANDIDATES:
            break
        keep.append((lo, scale, first, last))  # refine: the next round bins only these bins' values
        lo, hi, below = lo + first / scale, lo + (last + 1) / scale, before
        if hi - lo <= 4 * np.spacing(hi):  # (nearly) equal values: collect them
            scale, first, last = 0.0, 0, 0
            break
    chosen = []
    for part in parts:
        for v in part():
            v = _window(v, keep)
            b = _bins(v, lo, scale)
            chosen.append(v[(b >= first) & (b <= last)])
    values = np.concatenate(chosen)
    picked = np.partition(values, sorted({r - before for r in ranks}))
    return float(picked[ranks[0] - before]), float(picked[ranks[1] - before])


def blocked_mmd2(a: np.ndarray, b: np.ndarray, bandwidth_scale: float = 1.0,
                 block_rows: int = BLOCK_ROWS) -> tuple[float, float]:
    """Unbiased ``MMD_u^2`` and the median-heuristic bandwidth of one pair, in blocks (module docstring).

    Parameters
    ----------
    a, b : numpy.ndarray, shapes (m, d), (n, d)
        Validated samples (at least 2 rows each).
    bandwidth_scale : float
        Multiplier of the median distance.
    block_rows : int
        Rows per distance block (memory about ``block_rows^2`` floats per temporary).

    Returns
    -------
    mmd2 : float
        As :func:`epsaudit.audits.mmd_statistics` computes it in memory.
    bandwidth : float
        Median pairwise distance of the pooled sample times ``bandwidth_scale``.

    Raises
    ------
    ValueError
        A zero median distance (most pooled points coincide).

    References
    ----------
    *Picture the Epsilon*, Section III (the MMD-TV route, Eq. 14); Gretton et al. (2012), A kernel
    two-sample test (JMLR 13), Eq. 3: the unbiased ``MMD_u^2``.

    Examples
    --------
    >>> from epsaudit.audits import mmd_statistics
    >>> rng = np.random.default_rng(0)
    >>> a, b = rng.normal(size=(40, 3)), rng.normal(0.5, 1.0, size=(30, 3))
    >>> mmd2, s = blocked_mmd2(a, b, block_rows=16)
    >>> ref = mmd_statistics(a, b)
    >>> bool(abs(mmd2 - ref["mmd2_u"]) < 1e-12 and abs(s - ref["bandwidth"]) < 1e-12)
    True
    """
    m, n = len(a), len(b)
    total = m * (m - 1) // 2 + n * (n - 1) // 2 + m * n
    parts = _parts(a, b, int(block_rows))
    high = 4.0 * float(max(np.einsum("ij,ij->i", a, a).max(), np.einsum("ij,ij->i", b, b).max())) * (1 + 1e-12)
    lower, upper = _select(parts, ((total - 1) // 2, total // 2), high)
    s = (float(np.sqrt(lower)) + float(np.sqrt(upper))) / 2.0 * bandwidth_scale  # as numpy.median
    if s == 0.0:
        raise ValueError("the median pairwise distance of the pooled pair sample is zero (most of its points "
                         "coincide); the median-heuristic bandwidth is undefined")
    g = -1.0 / (2.0 * s * s)
    sums = [sum(float(np.exp(g * v).sum()) for v in part()) for part in parts]
    mmd2 = 2.0 * sums[0] / (m * (m - 1)) + 2.0 * sums[1] / (n * (n - 1)) - 2.0 * sums[2] / (m * n)
    return float(mmd2), s
