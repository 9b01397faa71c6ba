"""MMD: the kernel two-sample route to epsilon, as an estimate (MMD-TV) and as a certificate.

Both use the RBF kernel ``k(x, y) = exp(-||x - y||^2 / (2 s^2))`` with a median-heuristic bandwidth ``s`` and the
unbiased ``MMD_u^2`` (Gretton et al. 2012, "A kernel two-sample test", JMLR 13, Eq. 3), then links MMD -> TV -> epsilon.

* MMD-TV, an *estimate* (:func:`mmd_tv_epsilon`, :func:`mmd_tv_pairs`; *Picture the Epsilon*, Section III, Eq. 14):
  ``eps >= 2 artanh(MMD / 2)`` (the hockey-stick form ``2 artanh(MMD / sqrt 2)`` beside it), ``s`` from the pooled
  pair sample; a valid population inequality evaluated at a sample value, with no one-sided confidence correction.
* MMD certificate, a *certificate* (:func:`mmd_certificate`, :func:`mmd_certificate_pairs`): ``s`` fixed on
  development rows; on test rows ``MMD^2 >= MMD_u^2 - t_a`` with McDiarmid's ``t_a = sqrt(8 (1/m + 1/n) log(1/a))``
  (:func:`epsaudit.bounds.mmd2_deviation`), ``TV >= MMD / sqrt 2`` and ``eps >= log((1 + TV - 2 delta) / (1 - TV))``,
  each of ``m`` certificates at ``a = (1 - confidence) / m``; valid for test rows iid within each identity and
  independent of the development rows. Much weaker than the reserved test (``t_a`` is 1.26 at ``n = 30`` per
  identity and 95%, 0.69 at 100): a zero certificate says little about the pair.

Definitions and derivation: the book's methods chapter, sections 'MMD-TV — an estimate' and 'MMD certificate — a
certificate, much weaker'.

Large pairs. Above :data:`MAX_IN_MEMORY` pooled pairwise distances (the median needs all of them: 8 GB for two
identities of 20,000 rows) :func:`blocked_mmd2` computes the same numbers in bounded memory, in three passes over
distance blocks: a histogram on ``2^16`` bins of ``[0, 4 max ||z||^2]`` locates the two middle ranks, whose bins'
values are collected (a bin still too full is refined by another pass) and selected as ``numpy.median`` does, then
the kernel sums. Equal up to the order of floating-point sums (about 1e-12 relative,
``tests/test_route_speed_paths.py``), for 3x the arithmetic of the in-memory path.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..bounds import (epsilon_from_mmd_hockey_stick, epsilon_from_mmd_tv_chain, epsilon_from_tv_delta, mmd2_deviation,
                      tv_lower_from_mmd)
from ..results import EpsilonResult, RouteStatistics
from ..protocol import check_seed, stream
from ..validation import as_dev_test, as_groups, as_pair, as_pairs, check_fresh, check_probability
from .roc_reserved import FRESHNESS
from .runner import (PAIR_ERRORS, PairFailure, family_size, map_certificates, map_pairs, not_computed, pair_parts,
                     split_test_sizes)
from .tradeoff import DEFAULT_DELTAS, curve_columns

if TYPE_CHECKING:  # pragma: no cover - typing only
    import pandas as pd

ESTIMATE_ROUTE = "mmd_tv"
CERTIFICATE_ROUTE = "mmd_certificate"
_PERMUTATION_BATCH = 500
#: Pooled pairwise distances above which a pair is computed in blocks (32 MB of float64 distances).
MAX_IN_MEMORY = 2**22
_PAIRS_PER_TASK = 32  # pairs per joblib task without permutations (little work per pair)
#: Rows per distance block, histogram bins and the most candidates collected per pass of :func:`blocked_mmd2`.
BLOCK_ROWS = 1024
BINS = 2**16
MAX_CANDIDATES = 2**22
#: Multipliers of the development median-heuristic bandwidth tried on development rows.
DEFAULT_BANDWIDTH_SCALES: tuple[float, ...] = (0.25, 0.5, 1.0, 2.0, 4.0)
TV_LINKS: tuple[str, ...] = ("sqrt2", "2")
#: Development statistics a certificate records in ``details`` (and its result in ``statistics``).
DEVELOPMENT_FIELDS: tuple[str, ...] = ("dev_mmd2_u", "median_distance", "n_dev_a", "n_dev_b")


@dataclass(frozen=True)
class MMDStatistics(RouteStatistics):
    """What one MMD-TV value is computed from.

    Attributes
    ----------
    mmd2_u, mmd, bandwidth : float
        Unbiased ``MMD_u^2`` (may be negative), ``sqrt(max(mmd2_u, 0))`` and the RBF bandwidth (median heuristic times
        ``bandwidth_scale``; embedding units).
    p_value : float
        Permutation p-value (Phipson-Smyth); NaN when no test was run.
    permutations : int
        Permutations of the test (0 = none).
    epsilon_hockey_stick : float
        The hockey-stick form ``2 artanh(MMD / sqrt 2)``, reported beside the value.

    See Also
    --------
    mmd_tv_epsilon, mmd_tv_pairs : the values they come with.
    epsaudit.results.RouteStatistics : the base class: frozen fields that flatten to table columns.

    Examples
    --------
    >>> s = MMDStatistics(mmd2_u=0.25, mmd=0.5, bandwidth=1.0, p_value=float("nan"), permutations=0,
    ...                   epsilon_hockey_stick=0.73)
    >>> list(s.record())
    ['mmd2_u', 'mmd', 'bandwidth', 'p_value', 'permutations', 'epsilon_hockey_stick']
    """

    mmd2_u: float
    mmd: float
    bandwidth: float
    p_value: float
    permutations: int
    epsilon_hockey_stick: float


def _cross_squared_distances(x: np.ndarray, y: np.ndarray, sq_x=None, sq_y=None, product=None) -> np.ndarray:
    """``||x_i - y_j||^2`` via BLAS, clipped at 0; squared norms ``sq_x``, ``sq_y`` and ``product = x @ y.T`` (not
    modified) when already known."""
    sq_x = np.einsum("ij,ij->i", x, x) if sq_x is None else sq_x
    sq_y = np.einsum("ij,ij->i", y, y) if sq_y is None else sq_y
    twice = x @ y.T if product is None else np.array(product)
    twice *= 2.0
    d2 = sq_x[:, None] + sq_y[None, :]
    d2 -= twice
    return np.maximum(d2, 0.0, out=d2)


class _Sample:
    """One identity's rows, squared norms and within-class distances (``blocked``: rows only, distances per pair in
    blocks; ``d2``, the full within-class matrix, only for permutation tests)."""

    def __init__(self, x: np.ndarray, *, keep_matrix: bool = False, blocked: bool = False):
        self.x, self.blocked = x, blocked
        self.sq = np.einsum("ij,ij->i", x, x)
        self.d2 = self.upper = None
        if not blocked:
            d2 = _cross_squared_distances(x, x, self.sq, self.sq)
            np.fill_diagonal(d2, 0.0)
            self.upper = d2[np.triu_indices(len(x), k=1)]  # the i < j distances
            self.d2 = d2 if keep_matrix else None


def _median_distance(d2: np.ndarray) -> float:
    """``numpy.median(numpy.sqrt(d2))`` (``len(d2) >= 2``) without the square roots of all of ``d2``: the same number."""
    k = len(d2)
    part = np.partition(d2, [k // 2 - 1, k // 2])  # two middle ranks at once (faster than one, here)
    if k % 2:
        return float(np.sqrt(part[k // 2]))
    return (float(np.sqrt(part[k // 2 - 1])) + float(np.sqrt(part[k // 2]))) / 2.0


def _too_large(m: int, n: int) -> bool:
    return (m + n) * (m + n - 1) // 2 > MAX_IN_MEMORY


def _block_statistic(kernel: np.ndarray, in_a: np.ndarray) -> np.ndarray:
    """Unbiased MMD^2 for label assignments ``in_a`` ((B, N) booleans) of the pooled zero-diagonal kernel matrix."""
    p = in_a.astype(np.float64)
    q = 1.0 - p
    m = p[0].sum()
    n = q[0].sum()
    kp = p @ kernel  # (B, N)
    s_aa = np.einsum("bi,bi->b", kp, p)
    s_ab = np.einsum("bi,bi->b", kp, q)
    s_bb = np.einsum("bi,bi->b", q @ kernel, q)
    return s_aa / (m * (m - 1)) + s_bb / (n * (n - 1)) - 2.0 * s_ab / (m * n)


def _pair_statistics(sa: _Sample, sb: _Sample, bandwidth_scale: float, permutations: int, seed,
                     product: np.ndarray | None = None) -> dict:
    m, n = len(sa.x), len(sb.x)
    if sa.blocked or sb.blocked:
        if permutations:
            raise ValueError(f"a permutation test needs the pooled kernel matrix of {m + n} rows in memory; with more "
                             f"than {MAX_IN_MEMORY} pooled distances use permutations=0")
        mmd2, s = blocked_mmd2(sa.x, sb.x, bandwidth_scale)
        return {"mmd2_u": mmd2, "mmd": float(np.sqrt(max(mmd2, 0.0))), "bandwidth": s, "p_value": float("nan"),
                "permutations": 0}
    ua, ub = len(sa.upper), len(sb.upper)
    pooled = np.empty(ua + ub + m * n)  # the i < j distances of A, of B, then the cross block A x B
    pooled[:ua], pooled[ua: ua + ub] = sa.upper, sb.upper
    d2_ab = pooled[ua + ub:].reshape(m, n)
    np.add(sa.sq[:, None], sb.sq[None, :], out=d2_ab)  # as _cross_squared_distances, into the buffer
    twice = sa.x @ sb.x.T if product is None else np.array(product)
    twice *= 2.0
    d2_ab -= twice
    np.maximum(d2_ab, 0.0, out=d2_ab)
    if permutations:
        d2_ab = d2_ab.copy()  # kept for the kernel matrix (the buffer becomes kernel values)
    s = _median_distance(pooled) * bandwidth_scale  # median heuristic (pooled, i < j)
    if s == 0.0:
        raise ValueError("the median pairwise distance of the pooled pair sample is zero (most of its points "
                         "coincide); the median-heuristic bandwidth is undefined")
    g = -1.0 / (2.0 * s * s)
    kernel = np.exp(np.multiply(pooled, g, out=pooled), out=pooled)  # the three parts' kernel values, in place
    # sum over i != j equals twice the sum over i < j
    mmd2 = (2.0 * kernel[:ua].sum() / (m * (m - 1))
            + 2.0 * kernel[ua: ua + ub].sum() / (n * (n - 1))
            - 2.0 * kernel[ua + ub:].sum() / (m * n))
    p_value = float("nan")
    if permutations:
        if sa.d2 is None or sb.d2 is None:
            raise ValueError("permutations need the identities' full within-class distance matrices")
        kernel = np.exp(g * np.block([[sa.d2, d2_ab], [d2_ab.T, sb.d2]]))
        np.fill_diagonal(kernel, 0.0)
        rng = seed if isinstance(seed, np.random.Generator) else stream("mmd-permutations", check_seed(seed))
        exceed = 0
        for start in range(0, permutations, _PERMUTATION_BATCH):
            size = min(_PERMUTATION_BATCH, permutations - start)
            in_a = np.argsort(rng.random((size, m + n)), axis=1) < m  # random m-subsets
            exceed += int(np.sum(_block_statistic(kernel, in_a) >= mmd2 - 1e-12))
        p_value = (exceed + 1) / (permutations + 1)  # Phipson & Smyth (2010)
    return {"mmd2_u": float(mmd2), "mmd": float(np.sqrt(max(mmd2, 0.0))), "bandwidth": s,
            "p_value": p_value, "permutations": int(permutations)}


def _check_estimate_options(bandwidth_scale: float, permutations: int) -> None:
    if not bandwidth_scale > 0:
        raise ValueError(f"bandwidth_scale must be > 0, got {bandwidth_scale}")
    if permutations < 0:
        raise ValueError(f"permutations must be >= 0, got {permutations}")


def _mmd_statistics(x_a, x_b, *, bandwidth_scale: float = 1.0, permutations: int = 0,
                    seed: int | np.random.Generator = 0) -> dict[str, float]:
    """The fields of :class:`MMDStatistics` but the hockey-stick epsilon, of one pair (see :func:`mmd_tv_epsilon`)."""
    a, b = as_pair(x_a, x_b)
    _check_estimate_options(bandwidth_scale, permutations)
    blocked = _too_large(len(a), len(b))
    return _pair_statistics(_Sample(a, keep_matrix=bool(permutations), blocked=blocked),
                            _Sample(b, keep_matrix=bool(permutations), blocked=blocked), bandwidth_scale,
                            permutations, seed)


def _estimate_settings(bandwidth_scale: float, seed, permutations: int) -> dict:
    return {"kernel": "rbf", "bandwidth": "median heuristic", "bandwidth_scale": bandwidth_scale,
            "estimator": "unbiased MMD_u^2, clipped at 0", "permutations": permutations,
            "seed": seed if isinstance(seed, (int, type(None))) else "generator"}


def _result(stats: dict | PairFailure, n_a: int, n_b: int, pair, bandwidth_scale: float, seed,
            permutations: int) -> EpsilonResult:
    settings = _estimate_settings(bandwidth_scale, seed, permutations)
    if isinstance(stats, PairFailure):
        return not_computed(stats, route=ESTIMATE_ROUTE, kind="estimate", pair=pair, n=(n_a, n_b), delta=0.0,
                            settings=settings)
    mmd = stats["mmd"]
    return EpsilonResult(
        value=float(epsilon_from_mmd_tv_chain(mmd)), kind="estimate", route=ESTIMATE_ROUTE, n=(n_a, n_b),
        pair=pair, delta=0.0, settings=settings,
        statistics=MMDStatistics(**stats, epsilon_hockey_stick=float(epsilon_from_mmd_hockey_stick(mmd))),
    )


def mmd_tv_epsilon(x_a, x_b, *, bandwidth_scale: float = 1.0, permutations: int = 0,
                   seed: int = 0, pair=None) -> EpsilonResult:
    """MMD-TV sample value ``2 artanh(MMD / 2)`` for one identity pair.

    Parameters
    ----------
    x_a, x_b : array_like, shapes (n_A, d), (n_B, d)
    bandwidth_scale : float, default=1.0
        Multiplier of the median-heuristic bandwidth (the paper's sweep uses 0.5 ... 2).
    permutations : int, default=0
        Label permutations of a test of ``P_A = P_B`` (0 = no test; the paper uses 10^4); p-value
        ``(b + 1) / (B + 1)`` (Phipson-Smyth), ``b`` permuted statistics >= the observed one.
    seed : int, default=0
        Seed of the permutations (``stream("mmd-permutations", seed)``, :mod:`epsaudit.protocol`).
    pair : tuple, default=None

    Returns
    -------
    EpsilonResult
        ``kind="estimate"``, ``delta`` 0; ``statistics`` an :class:`MMDStatistics`.

    Raises
    ------
    ValueError
        Bad samples, non-positive ``bandwidth_scale``, negative ``permutations``, most pooled points identical (zero
        median distance), or a permutation test on a pair with more than :data:`MAX_IN_MEMORY` pooled distances
        (computed in blocks, without the kernel matrix a permutation test needs).

    See Also
    --------
    mmd_tv_pairs, mmd_certificate : many pairs; a certified lower bound from development and test rows.
    epsaudit.audits.roc_oof_epsilon, epsaudit.audits.gaussmech_epsilon, epsaudit.audits.kde_lr_epsilon : other routes.

    Examples
    --------
    >>> r = mmd_tv_epsilon([[0.0], [0.0]], [[1.0], [1.0]])
    >>> round(r.value, 4), r.kind, round(r.statistics.mmd, 4)
    (0.9533, 'estimate', 0.8871)
    """
    stats = _mmd_statistics(x_a, x_b, bandwidth_scale=bandwidth_scale, permutations=permutations, seed=seed)
    return _result(stats, len(x_a), len(x_b), pair, bandwidth_scale, seed, permutations)


def mmd_tv_pairs(
    groups: Mapping[Hashable, np.ndarray],
    pairs: Sequence[tuple[Hashable, Hashable]],
    *,
    bandwidth_scale: float = 1.0,
    permutations: int = 0,
    seed: int = 0,
    n_jobs: int | None = None,
    progress: bool = False,
) -> list[EpsilonResult]:
    """MMD-TV for many pairs (joblib over tasks of pairs).

    Pair ``(A, B)`` permutes with ``stream("mmd-permutations", seed, A, B)``; within-identity distances are computed
    once per identity, and without permutations pairs sharing an identity together, in tasks of 32 pairs.

    Parameters
    ----------
    groups : mapping identity -> array_like, shape (n_i, d)
    pairs : sequence of (identity, identity)
    bandwidth_scale : float, default=1.0
    permutations : int, default=0
        This and ``bandwidth_scale``: see :func:`mmd_tv_epsilon`.
    seed : int, default=0
        Base seed; results do not depend on ``n_jobs``.
    n_jobs : int, default=None
    progress : bool, default=False

    Returns
    -------
    list of EpsilonResult
        One per pair, as :func:`mmd_tv_epsilon`. A pair whose pooled points mostly coincide (zero median distance) is
        *not computed*, with the reason; the other pairs go on.

    Raises
    ------
    ValueError
        Invalid ``groups``/``pairs``, a non-positive ``bandwidth_scale``, negative ``permutations`` or a bad ``seed``.

    See Also
    --------
    mmd_tv_epsilon, mmd_certificate_pairs : one pair; certified lower bounds for many pairs.
    epsaudit.audits.roc_oof_pairs, epsaudit.audits.gaussmech_pairs, epsaudit.audits.kde_lr_pairs : other routes.
    epsaudit.audits.audit_pairs : the four routes on one shuffled pair list.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> groups = {k: rng.normal(c, 1.0, size=(20, 2)) for k, c in (("A", 0.0), ("B", 2.0), ("C", 0.0))}
    >>> res = mmd_tv_pairs(groups, [("A", "B"), ("A", "C")], permutations=99, seed=1)
    >>> [round(r.value, 3) for r in res], [r.statistics.p_value for r in res]
    ([0.936, 0.0], [0.01, 0.6])
    """
    groups = as_groups(groups)
    pairs = as_pairs(pairs, groups)
    _check_estimate_options(bandwidth_scale, permutations)
    seed = check_seed(seed)
    in_memory = dict.fromkeys(label for a, b in pairs if not _too_large(len(groups[a]), len(groups[b]))
                              for label in (a, b))
    samples = {label: _Sample(groups[label], keep_matrix=bool(permutations), blocked=label not in in_memory)
               for label in dict.fromkeys(label for pair in pairs for label in pair)}  # once per identity
    if permutations:
        tasks = [(samples[a], samples[b], bandwidth_scale, permutations, stream("mmd-permutations", seed, a, b))
                 for a, b in pairs]
        stats = map_pairs(_pair_statistics, tasks, desc=ESTIMATE_ROUTE, n_jobs=n_jobs, progress=progress)
    else:  # little work per pair: tasks of several pairs sharing an identity (its rows stay in cache), threads
        first = {label: i for i, label in enumerate(samples)}
        order = sorted(range(len(pairs)), key=lambda k: (first[pairs[k][0]], first[pairs[k][1]]))
        chunks = [order[i: i + _PAIRS_PER_TASK] for i in range(0, len(order), _PAIRS_PER_TASK)]
        tasks = [([(samples[pairs[k][0]], samples[pairs[k][1]]) for k in chunk], bandwidth_scale) for chunk in chunks]
        stats = [None] * len(pairs)
        for chunk, out in zip(chunks, map_pairs(_chunk_statistics, tasks, desc=ESTIMATE_ROUTE, n_jobs=n_jobs,
                                               progress=progress, prefer="threads")):
            for k, st in zip(chunk, out):
                stats[k] = st
    return _results(stats, groups, pairs, bandwidth_scale, seed, permutations)


def _chunk_statistics(chunk: list[tuple[_Sample, _Sample]], bandwidth_scale: float) -> list[dict | PairFailure]:
    """:func:`_pair_statistics` of several pairs without permutations (a pair's error is its failure); consecutive pairs
    sharing their first identity get their cross products from one BLAS product."""
    out: list[dict | PairFailure] = []
    i = 0
    while i < len(chunk):
        sa = chunk[i][0]
        j = i
        while j < len(chunk) and chunk[j][0] is sa and not chunk[j][1].blocked and not sa.blocked:
            j += 1
        partners = [sb for _, sb in chunk[i:j]]
        product = sa.x @ np.vstack([sb.x for sb in partners]).T if len(partners) > 1 else None
        offsets = np.cumsum([0] + [len(sb.x) for sb in partners])
        for t, (sa_, sb) in enumerate(chunk[i: max(j, i + 1)]):
            try:
                cross = None if product is None else product[:, offsets[t]: offsets[t + 1]]
                out.append(_pair_statistics(sa_, sb, bandwidth_scale, 0, None, cross))
            except PAIR_ERRORS as exc:
                out.append(PairFailure(reason=str(exc), error=type(exc).__name__))
        i = max(j, i + 1)
    return out


def _results(stats: list, groups, pairs, bandwidth_scale: float, seed, permutations: int) -> list[EpsilonResult]:
    """The results of :func:`mmd_tv_pairs`: the computed ones made together (:meth:`EpsilonResult.many`)."""
    done = [k for k, st in enumerate(stats) if not isinstance(st, PairFailure)]
    mmd = np.array([stats[k]["mmd"] for k in done])
    values, hockey = epsilon_from_mmd_tv_chain(mmd), epsilon_from_mmd_hockey_stick(mmd)
    sizes = [(len(groups[a]), len(groups[b])) for a, b in pairs]
    made = iter(EpsilonResult.many(
        values.tolist(), [pairs[k] for k in done], [sizes[k] for k in done],
        [MMDStatistics(**stats[k], epsilon_hockey_stick=h) for k, h in zip(done, hockey.tolist())],
        kind="estimate", route=ESTIMATE_ROUTE, delta=0.0,
        settings=_estimate_settings(bandwidth_scale, seed, permutations)))
    return [next(made) if not isinstance(st, PairFailure) else
            _result(st, *sizes[k], pairs[k], bandwidth_scale, seed, permutations) for k, st in enumerate(stats)]


def _blocks(x: np.ndarray, y: np.ndarray | None, block_rows: int) -> Iterator[np.ndarray]:
    """Squared distances of the rows of ``x`` with those of ``y`` (``None``: of ``x``, pairs i < j), in blocks."""
    sq_x = np.einsum("ij,ij->i", x, x)
    sq_y = sq_x if y is None else np.einsum("ij,ij->i", y, y)
    other = x if y is None else y
    for i in range(0, len(x), block_rows):
        rows = slice(i, min(i + block_rows, len(x)))
        start = i if y is None else 0
        for j in range(start, len(other), block_rows):
            cols = slice(j, min(j + block_rows, len(other)))
            d2 = _cross_squared_distances(x[rows], other[cols], sq_x[rows], sq_y[cols])
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
    """Unbiased ``MMD_u^2`` and the median-heuristic bandwidth of one pair, exactly, in blocks (module docstring).

    Parameters
    ----------
    a, b : numpy.ndarray, shapes (m, d), (n, d)
        Validated samples (at least 2 rows each).
    bandwidth_scale : float, default=1.0
        Multiplier of the median distance.
    block_rows : int, default=1024
        Rows per distance block (memory about ``block_rows^2`` floats per temporary).

    Returns
    -------
    mmd2, bandwidth : float
        As :func:`mmd_tv_epsilon` computes them in memory (the median pooled distance times ``bandwidth_scale``).

    Raises
    ------
    ValueError
        A zero median distance (most pooled points coincide).

    See Also
    --------
    mmd_tv_epsilon : the estimate from the same statistic.

    References
    ----------
    *Picture the Epsilon*, Section III (Eq. 14); Gretton et al. (2012), JMLR 13, Eq. 3.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> a, b = rng.normal(size=(40, 3)), rng.normal(0.5, 1.0, size=(30, 3))
    >>> mmd2, s = blocked_mmd2(a, b, block_rows=16)
    >>> ref = mmd_tv_epsilon(a, b).statistics
    >>> bool(abs(mmd2 - ref.mmd2_u) < 1e-12 and abs(s - ref.bandwidth) < 1e-12)
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


def _mmd2(a: np.ndarray, b: np.ndarray, s: float) -> float:
    """Unbiased ``MMD_u^2`` (Gretton et al. 2012, Eq. 3) of two samples at the fixed RBF bandwidth ``s``."""
    g = -1.0 / (2.0 * s * s)
    m, n = len(a), len(b)
    k_aa = np.exp(g * _cross_squared_distances(a, a))
    k_bb = np.exp(g * _cross_squared_distances(b, b))
    k_ab = np.exp(g * _cross_squared_distances(a, b))
    return ((k_aa.sum() - np.trace(k_aa)) / (m * (m - 1)) + (k_bb.sum() - np.trace(k_bb)) / (n * (n - 1))
            - 2.0 * k_ab.sum() / (m * n))


def _development_bandwidth(dev_a, dev_b,
                           bandwidth_scales: Sequence[float] = DEFAULT_BANDWIDTH_SCALES) -> dict[str, float]:
    """The certificate's RBF bandwidth: the pooled development rows' median distance ``s0`` times the scale maximising
    the development ``MMD_u^2`` (first among ties); ``bandwidth``, ``scale``, ``median_distance``, ``dev_mmd2_u``."""
    a, b = as_pair(dev_a, dev_b)
    scales = np.asarray(bandwidth_scales, dtype=np.float64)  # checked by _check_certificate_options
    iu_a, iu_b = np.triu_indices(len(a), k=1), np.triu_indices(len(b), k=1)
    pooled = np.concatenate([_cross_squared_distances(a, a)[iu_a], _cross_squared_distances(b, b)[iu_b],
                             _cross_squared_distances(a, b).ravel()])
    s0 = float(np.median(np.sqrt(pooled)))
    if s0 == 0.0:
        raise ValueError("the median pairwise distance of the development rows is zero (most pooled points "
                         "coincide); the median-heuristic bandwidth is undefined")
    values = [_mmd2(a, b, s0 * float(c)) for c in scales]
    best = int(np.argmax(values))
    return {"bandwidth": s0 * float(scales[best]), "scale": float(scales[best]), "median_distance": s0,
            "dev_mmd2_u": float(values[best])}


def _mmd_lower_bound(mmd2_u, n_a, n_b, alpha, kernel_bound: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """One-sided lower confidence bounds ``MMD^2_LB = max(0, MMD_u^2 - t_alpha)`` and ``MMD_LB = sqrt(MMD^2_LB)``,
    ``t_alpha`` from :func:`epsaudit.bounds.mmd2_deviation`."""
    t = mmd2_deviation(n_a, n_b, alpha, kernel_bound)
    low = np.maximum(np.asarray(mmd2_u, dtype=np.float64) - t, 0.0)
    root = np.sqrt(low)
    return (low[()] if low.ndim == 0 else low), (root[()] if root.ndim == 0 else root)


@dataclass(frozen=True)
class MMDCertificateStatistics(RouteStatistics):
    """What one MMD certificate's epsilon is computed from (columns of a results table).

    Attributes
    ----------
    mmd2_u, deviation, mmd2_lower, mmd_lower, tv_lower : float
        The test statistic, the subtracted deviation ``t_alpha`` and the certified lower bounds on ``MMD^2``, ``MMD``
        and total variation.
    bandwidth, bandwidth_scale : float
        The RBF bandwidth fixed on development rows and its multiple of the median heuristic.
    deltas, epsilon_at_delta : tuple of float
        The certified epsilon curve; :meth:`record` writes it as ``epsilon_at_delta_<delta>``.
    dev_mmd2_u, median_distance, n_dev_a, n_dev_b : float or int, optional
        Development statistics (:data:`DEVELOPMENT_FIELDS`); left out of the record when None.

    See Also
    --------
    MMDCertificate, mmd_certificate, mmd_certificate_pairs : its certificate; they compute it.
    epsaudit.results.RouteStatistics : the base class: frozen fields that flatten to table columns.

    Examples
    --------
    >>> s = MMDCertificateStatistics(0.9, 0.5, 0.4, 0.63, 0.45, 1.0, 1.0, (0.0,), (0.97,), n_dev_a=70)
    >>> s.record()["epsilon_at_delta_0"], s.record()["n_dev_a"], "n_dev_b" in s.record()
    (0.97, 70, False)
    """

    mmd2_u: float
    deviation: float
    mmd2_lower: float
    mmd_lower: float
    tv_lower: float
    bandwidth: float
    bandwidth_scale: float
    deltas: tuple[float, ...] = ()
    epsilon_at_delta: tuple[float, ...] = ()
    dev_mmd2_u: float | None = None
    median_distance: float | None = None
    n_dev_a: int | None = None
    n_dev_b: int | None = None

    def record(self) -> dict[str, Any]:
        """The statistics as columns: the chain of bounds, the curve, then the development statistics."""
        out = {k: v for k, v in super().record().items() if k not in ("deltas", "epsilon_at_delta")
               and k not in DEVELOPMENT_FIELDS}
        out.update(curve_columns(self.deltas, self.epsilon_at_delta))
        out.update({k: getattr(self, k) for k in DEVELOPMENT_FIELDS if getattr(self, k) is not None})
        return out


@dataclass(frozen=True, eq=False)
class MMDCertificate:
    """A certified lower bound on MMD, total variation and epsilon(delta) for one pair.

    Attributes
    ----------
    pair : tuple or None
    n : tuple of int
        Test sizes ``(n_A, n_B)``.
    confidence, alpha_per_bound : float
        Family-wise confidence of every certificate reported together; level of this one-sided bound.
    correction : str
    bandwidth, bandwidth_scale : float
        RBF bandwidth fixed on development rows (embedding units); its multiple of the median heuristic.
    mmd2_u, deviation : float
        Unbiased statistic on the test rows; ``t_alpha``, subtracted from it.
    mmd2_lower, mmd_lower : float
        Certified lower bounds on ``MMD^2`` and ``MMD``.
    tv_link : {"sqrt2", "2"}
    tv_lower : float
        Certified lower bound on total variation.
    deltas, epsilon_at_delta : numpy.ndarray, shape (J,)
        Certified lower bound on epsilon at each delta.
    delta, epsilon : float
        Certified lower bound on epsilon at ``delta``.
    settings, details : dict
    kind, route : str
        ``"certificate"``; ``"mmd_certificate"``.
    not_computed : str or None
        Why the pair could not be certified (many-pairs runs only); then the numbers are NaN and the pair still
        counts in the family.

    Raises
    ------
    ValueError
        If ``kind`` is not ``"certificate"``, a level is outside (0, 1), the curve arrays differ in length or
        ``tv_link`` is unknown.

    See Also
    --------
    mmd_certificate, mmd_certificate_pairs, MMDCertificateStatistics : build it; its result's statistics.
    epsaudit.audits.TradeoffCertificate, epsaudit.audits.WorstPairCertificate : the other certificates.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> rows = [rng.normal(c, 0.1, size=(100, 3)) for c in (0.0, 3.0, 0.0, 3.0)]
    >>> cert = mmd_certificate(*rows)
    >>> round(cert.mmd2_lower, 4) == round(max(cert.mmd2_u - cert.deviation, 0.0), 4), cert.frame().shape
    (True, (7, 6))
    """

    pair: tuple[Any, Any] | None
    n: tuple[int, int]
    confidence: float
    alpha_per_bound: float
    correction: str
    bandwidth: float
    bandwidth_scale: float
    mmd2_u: float
    deviation: float
    mmd2_lower: float
    mmd_lower: float
    tv_link: str
    tv_lower: float
    deltas: np.ndarray
    epsilon_at_delta: np.ndarray
    delta: float
    epsilon: float
    settings: Mapping[str, Any] = field(default_factory=dict)
    details: Mapping[str, Any] = field(default_factory=dict)
    kind: str = "certificate"
    route: str = CERTIFICATE_ROUTE
    not_computed: str | None = None

    def __post_init__(self) -> None:
        if self.kind != "certificate":
            raise ValueError(f"an MMDCertificate is a certificate, got kind {self.kind!r}")
        if self.not_computed is not None and not str(self.not_computed).strip():
            raise ValueError("not_computed must give the reason, got an empty string")
        if self.tv_link not in TV_LINKS:
            raise ValueError(f"tv_link must be one of {TV_LINKS}, got {self.tv_link!r}")
        check_probability(self.confidence, "confidence")
        check_probability(self.alpha_per_bound, "alpha_per_bound")
        for name in ("deltas", "epsilon_at_delta"):
            arr = np.array(getattr(self, name), dtype=np.float64)
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)
        if len(self.deltas) != len(self.epsilon_at_delta):
            raise ValueError("deltas and epsilon_at_delta must have the same length")
        object.__setattr__(self, "n", tuple(int(v) for v in self.n))

    @classmethod
    def failed(cls, reason: str, *, pair, n, confidence, alpha_per_bound, correction, tv_link, delta, deltas,
               settings=None, details=None) -> "MMDCertificate":
        """A certificate that could not be computed for ``pair`` (NaN numbers, the reason)."""
        nan = float("nan")
        return cls(pair=pair, n=n, confidence=confidence, alpha_per_bound=alpha_per_bound, correction=correction,
                   bandwidth=nan, bandwidth_scale=nan, mmd2_u=nan, deviation=nan, mmd2_lower=nan, mmd_lower=nan,
                   tv_link=tv_link, tv_lower=nan, deltas=deltas, epsilon_at_delta=np.full(len(deltas), nan),
                   delta=delta, epsilon=nan, settings=dict(settings or {}), details=dict(details or {}),
                   not_computed=reason)

    @property
    def computed(self) -> bool:
        """True unless the pair could not be certified (see ``not_computed``)."""
        return self.not_computed is None

    def frame(self) -> "pd.DataFrame":
        """The certified epsilon curve: columns ``identity_a, identity_b, delta, epsilon, tv_lower, mmd_lower``."""
        import pandas as pd

        a, b = self.pair if self.pair is not None else (None, None)
        return pd.DataFrame({"identity_a": a, "identity_b": b, "delta": self.deltas, "epsilon": self.epsilon_at_delta,
                             "tv_lower": self.tv_lower, "mmd_lower": self.mmd_lower})

    def to_result(self) -> EpsilonResult:
        """The epsilon at ``delta`` as an :class:`EpsilonResult` (``kind="certificate"``) with an
        :class:`MMDCertificateStatistics`; *not computed* with the reason when it failed."""
        fields = dict(kind="certificate", route=self.route, n=self.n, pair=self.pair, delta=self.delta,
                      confidence=self.confidence, alpha_per_bound=self.alpha_per_bound, correction=self.correction,
                      settings=dict(self.settings))
        if not self.computed:
            return not_computed(PairFailure(reason=self.not_computed, error=str(self.details.get("error", "ValueError"))),
                                **fields)
        development = {k: self.details[k] for k in DEVELOPMENT_FIELDS if k in self.details}
        stats = MMDCertificateStatistics(
            mmd2_u=self.mmd2_u, deviation=self.deviation, mmd2_lower=self.mmd2_lower, mmd_lower=self.mmd_lower,
            tv_lower=self.tv_lower, bandwidth=self.bandwidth, bandwidth_scale=self.bandwidth_scale,
            deltas=tuple(float(d) for d in self.deltas), epsilon_at_delta=tuple(float(e) for e in self.epsilon_at_delta),
            **development)
        extra = {k: v for k, v in self.details.items() if k not in development}
        return EpsilonResult(value=self.epsilon, statistics=stats, details=extra, **fields)

    def __str__(self) -> str:
        if not self.computed:
            return f"{self.route}: not computed ({self.not_computed})"
        return (f"{self.route}: epsilon >= {self.epsilon:.4g} at delta = {self.delta:g} (TV >= {self.tv_lower:.3g}, "
                f"MMD^2 >= {self.mmd2_lower:.3g} = {self.mmd2_u:.3g} - {self.deviation:.3g}; "
                f"{self.confidence:.0%} family-wise, n = {self.n}, {self.correction})")


def _correction_label(n_certificates: int) -> str:
    """The multiplicity correction in words."""
    return f"bonferroni: 1 one-sided MMD deviation bound x {n_certificates} certificate(s)"


def _check_certificate_options(n_certificates, confidence, delta, deltas, tv_link, bandwidth_scales) -> np.ndarray:
    if isinstance(n_certificates, bool) or int(n_certificates) != n_certificates or int(n_certificates) < 1:
        raise ValueError(f"n_certificates must be an integer >= 1, got {n_certificates!r}")
    check_probability(confidence, "confidence")
    check_probability(delta, "delta", open_interval=False)
    if tv_link not in TV_LINKS:
        raise ValueError(f"tv_link must be one of {TV_LINKS}, got {tv_link!r}")
    scales = np.asarray(bandwidth_scales, dtype=np.float64)
    if scales.ndim != 1 or scales.size < 1 or np.any(~(scales > 0)) or np.any(~np.isfinite(scales)):
        raise ValueError(f"bandwidth_scales must be a non-empty sequence of finite numbers > 0, got {bandwidth_scales!r}")
    d = np.asarray(deltas, dtype=np.float64)
    if d.ndim != 1 or d.size < 1 or np.any(~((d >= 0) & (d < 1))):
        raise ValueError(f"deltas must be a non-empty 1-D sequence of values in [0, 1), got {deltas!r}")
    return np.unique(np.r_[d, delta])


def _certificate_settings(bandwidth_scales, tv_link, m, seed, check_reuse) -> dict:
    return {"kernel": "rbf", "bandwidth": "development median heuristic x scale maximising development MMD_u^2",
            "bandwidth_scales": ",".join(f"{c:g}" for c in bandwidth_scales), "tv_link": tv_link,
            "deviation": "McDiarmid, kernel in [0, 1]", "n_certificates": m, "seed": seed,
            "freshness": FRESHNESS["values" if check_reuse else "none"]}


def _certify(dev_a, dev_b, test_a, test_b, bandwidth_scales, tv_link, m, confidence, delta, deltas, pair, seed,
             check_reuse) -> MMDCertificate:
    """One pair (module-level, so that joblib can run it anywhere)."""
    names = tuple(pair) if pair is not None else ("A", "B")
    if check_reuse:
        check_fresh({names[0]: dev_a, names[1]: dev_b}, {names[0]: test_a, names[1]: test_b},
                    context=f"MMD certificate of pair ({names[0]!r}, {names[1]!r})")
    kernel = _development_bandwidth(dev_a, dev_b, bandwidth_scales)
    alpha = (1.0 - confidence) / m
    mmd2 = float(_mmd2(test_a, test_b, kernel["bandwidth"]))
    na, nb = len(test_a), len(test_b)
    deviation = float(mmd2_deviation(na, nb, alpha))
    mmd2_lo, mmd_lo = _mmd_lower_bound(mmd2, na, nb, alpha)
    tv = float(tv_lower_from_mmd(mmd_lo, tv_link))
    return MMDCertificate(
        pair=pair, n=(na, nb), confidence=confidence, alpha_per_bound=alpha, correction=_correction_label(m),
        bandwidth=kernel["bandwidth"], bandwidth_scale=kernel["scale"], mmd2_u=mmd2, deviation=deviation,
        mmd2_lower=float(mmd2_lo), mmd_lower=float(mmd_lo), tv_link=tv_link, tv_lower=tv,
        deltas=deltas, epsilon_at_delta=epsilon_from_tv_delta(tv, deltas), delta=delta,
        epsilon=float(epsilon_from_tv_delta(tv, delta)),
        settings=_certificate_settings(bandwidth_scales, tv_link, m, seed, check_reuse),
        details={"dev_mmd2_u": kernel["dev_mmd2_u"], "median_distance": kernel["median_distance"],
                 "n_dev_a": len(dev_a), "n_dev_b": len(dev_b)},
    )


def mmd_certificate(
    dev_a, dev_b, test_a, test_b, *,
    bandwidth_scales: Sequence[float] = DEFAULT_BANDWIDTH_SCALES,
    tv_link: str = "sqrt2",
    n_certificates: int = 1,
    confidence: float = 0.95,
    delta: float = 1e-5,
    deltas: Sequence[float] = DEFAULT_DELTAS,
    pair=None,
    check_reuse: bool = True,
) -> MMDCertificate:
    """MMD certificate for one pair from separate development and test samples (module docstring).

    Parameters
    ----------
    dev_a, dev_b : array_like, shapes (m_dev, d), (n_dev, d)
        Development rows: fix the kernel bandwidth.
    test_a, test_b : array_like, shapes (m, d), (n, d)
        Untouched test rows: the unbiased statistic.
    bandwidth_scales : sequence of float, default=DEFAULT_BANDWIDTH_SCALES
        Multiples of the development median heuristic tried (0.25 ... 4); ``(1.0,)`` is the plain median heuristic.
    tv_link : {"sqrt2", "2"}, default="sqrt2"
        ``TV >= MMD / sqrt(2)`` (kernel in [0, 1]) or the MMD-TV chain ``TV >= MMD / 2``.
    n_certificates : int, default=1
        Family size ``m``: each bound is at ``(1 - confidence) / m``.
    confidence : float in (0, 1), default=0.95
    delta : float in [0, 1), default=1e-5
        Delta of the headline ``epsilon``.
    deltas : sequence of float in [0, 1), default=DEFAULT_DELTAS
        Deltas of the reported epsilon curve (``delta`` is added).
    pair : tuple, default=None
    check_reuse : bool, default=True
        Refuse test rows that copy development rows; as in :func:`epsaudit.audits.reserved_test_certificate`.

    Returns
    -------
    MMDCertificate

    Raises
    ------
    ValueError
        Bad samples, a zero development median distance, or options out of range.
    epsaudit.validation.ReusedRowsError
        (a ``ValueError``) Test rows that repeat development rows.

    See Also
    --------
    mmd_certificate_pairs, mmd_tv_epsilon : many pairs in a Bonferroni family; the MMD-TV estimate.
    epsaudit.audits.reserved_test_certificate, epsaudit.audits.tradeoff_certificate : one threshold; several.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> rows = [rng.normal(c, 0.1, size=(200, 3)) for c in (0.0, 3.0, 0.0, 3.0)]
    >>> cert = mmd_certificate(*rows)
    >>> cert.kind, bool(cert.epsilon > 0), round(cert.deviation, 4)
    ('certificate', True, 0.4895)
    """
    da, db, ta, tb = as_dev_test(dev_a, dev_b, test_a, test_b)
    deltas = _check_certificate_options(n_certificates, confidence, delta, deltas, tv_link, bandwidth_scales)
    return _certify(da, db, ta, tb, tuple(float(c) for c in bandwidth_scales), tv_link, int(n_certificates),
                    confidence, delta, deltas, pair, None, check_reuse)


def mmd_certificate_pairs(
    groups: Mapping[Hashable, np.ndarray],
    pairs: Sequence[tuple[Hashable, Hashable]],
    *,
    test_groups: Mapping[Hashable, np.ndarray] | None = None,
    test_size: float = 0.3,
    bandwidth_scales: Sequence[float] = DEFAULT_BANDWIDTH_SCALES,
    tv_link: str = "sqrt2",
    n_certificates: int | None = None,
    confidence: float = 0.95,
    delta: float = 1e-5,
    deltas: Sequence[float] = DEFAULT_DELTAS,
    seed: int = 0,
    n_jobs: int | None = None,
    progress: bool = False,
    check_reuse: bool = True,
) -> list[MMDCertificate]:
    """MMD certificates for many pairs, all holding together at ``confidence`` (splits as the reserved test's).

    Parameters
    ----------
    groups : mapping identity -> array_like, shape (n_i, d)
    pairs : sequence of (identity, identity)
    test_groups : mapping, default=None
    test_size : float, default=0.3
    bandwidth_scales, tv_link, confidence, delta, deltas, check_reuse
        As in :func:`mmd_certificate`.
    n_certificates : int, default=None
        Family size; defaults to ``len(pairs)``; must be at least that.
    seed : int, default=0
    n_jobs : int, default=None
    progress : bool, default=False

    Returns
    -------
    list of MMDCertificate, one per pair; a pair that cannot be certified (reused rows, a split too small, a zero
    median distance, ...) is *not computed*, with the reason, and stays in the family.

    Raises
    ------
    ValueError
        As :func:`mmd_certificate`, plus invalid ``groups``/``pairs`` or ``n_certificates`` below the number of pairs.

    See Also
    --------
    mmd_certificate, mmd_tv_pairs : the same certificate for one pair; the MMD-TV estimate for many pairs.
    epsaudit.audits.reserved_test_pairs, epsaudit.audits.tradeoff_certificate_pairs : the other certificates.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> groups = {c: rng.normal(c, 0.1, size=(40, 3)) for c in (0, 1, 2)}
    >>> certs = mmd_certificate_pairs(groups, [(0, 1), (0, 2)])
    >>> certs[0].correction, certs[0].n
    ('bonferroni: 1 one-sided MMD deviation bound x 2 certificate(s)', (12, 12))
    """
    groups = as_groups(groups)
    pairs = as_pairs(pairs, groups)
    if test_groups is not None:
        test_groups = as_groups(test_groups)
        as_pairs(pairs, test_groups)
    deltas = _check_certificate_options(len(pairs) if n_certificates is None else n_certificates, confidence, delta, deltas,
                            tv_link, bandwidth_scales)
    m = family_size(pairs, n_certificates)
    scales = tuple(float(c) for c in bandwidth_scales)
    parts = pair_parts(groups, pairs, test_groups=test_groups, test_size=test_size, seed=seed)
    outs = map_certificates(
        _certify, parts, pairs,
        lambda a, b: (scales, tv_link, m, confidence, delta, deltas, (a, b), seed, check_reuse),
        desc=CERTIFICATE_ROUTE, n_jobs=n_jobs, progress=progress, prefer="threads")
    return [out if not isinstance(out, PairFailure) else MMDCertificate.failed(
                out.reason, pair=(a, b), n=split_test_sizes(parts[k], groups, (a, b), test_size),
                confidence=confidence, alpha_per_bound=(1.0 - confidence) / m, correction=_correction_label(m),
                tv_link=tv_link, delta=delta, deltas=deltas,
                settings=_certificate_settings(scales, tv_link, m, seed, check_reuse), details={"error": out.error})
            for k, ((a, b), out) in enumerate(zip(pairs, outs))]
