"""MMD-TV: the kernel two-sample route to a pure-DP epsilon (*Picture the Epsilon*, Section III).

RBF kernel ``k(x, y) = exp(-||x - y||^2 / (2 s^2))`` with ``s`` the median pairwise distance of
the pooled pair sample (median heuristic), the unbiased ``MMD_u^2`` (Gretton et al. 2012) and
``MMD = sqrt(max(MMD_u^2, 0))``. Because ``k(x, x) <= 1``, ``TV >= MMD / 2``, and pure epsilon-DP
gives ``TV <= tanh(eps / 2)``, so ``eps >= 2 artanh(MMD / 2)`` (*Picture the Epsilon*, Eq. 14). The tighter
hockey-stick form ``eps >= 2 artanh(MMD / sqrt 2)`` is reported alongside. An *estimate*: a valid
population inequality evaluated at a sample value, with no one-sided confidence correction.

Cost. Each identity's within-class distances are computed once (one BLAS Gram matrix), each pair
then costs its cross block, a median and three kernel sums. A pair whose pooled sample has more than
:data:`MAX_IN_MEMORY` pairwise distances is computed in blocks of bounded memory, exactly
(:mod:`epsaudit.audits.mmd_blocked`; same numbers to rounding, three passes of BLAS work).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..bounds import epsilon_from_mmd_hockey_stick, epsilon_from_mmd_tv_chain
from ..results import EpsilonResult, RouteStatistics
from ..seeds import check_seed, stream
from ..validation import as_groups, as_pair, as_pairs
from .mmd_blocked import blocked_mmd2
from .runner import PAIR_ERRORS, PairFailure, map_pairs, not_computed

ROUTE = "mmd_tv"
DEFAULT_PERMUTATIONS = 10_000
_PERMUTATION_BATCH = 500
#: Pooled pairwise distances above which a pair is computed in blocks (32 MB of float64 distances).
MAX_IN_MEMORY = 2**22
_PAIRS_PER_TASK = 32  # pairs per joblib task without permutations (little work per pair)


@dataclass(frozen=True)
class MMDStatistics(RouteStatistics):
    """What one MMD-TV value is computed from (see :func:`mmd_statistics`).

    Attributes
    ----------
    mmd2_u : float
        Unbiased ``MMD_u^2`` (may be negative).
    mmd : float
        ``sqrt(max(mmd2_u, 0))``.
    bandwidth : float
        RBF bandwidth (median heuristic times ``bandwidth_scale``; embedding units).
    p_value : float
        Permutation p-value (Phipson-Smyth); NaN when no test was run.
    permutations : int
        Permutations of the test (0 = none).
    epsilon_hockey_stick : float
        The hockey-stick form ``2 artanh(MMD / sqrt 2)``, reported beside the value.

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


def cross_squared_distances(x: np.ndarray, y: np.ndarray, sq_x=None, sq_y=None, product=None) -> np.ndarray:
    """Squared Euclidean distances between the rows of ``x`` and ``y``, via BLAS.

    Parameters
    ----------
    x, y : numpy.ndarray, shapes (m, d), (n, d)
    sq_x, sq_y : numpy.ndarray, shapes (m,), (n,), optional
        The rows' squared norms, when already known.
    product : numpy.ndarray, shape (m, n), optional
        ``x @ y.T``, when already known (it is not modified).

    Returns
    -------
    numpy.ndarray, shape (m, n)
        ``||x_i - y_j||^2``, clipped at 0 (rounding).

    Examples
    --------
    >>> cross_squared_distances(np.array([[0.0, 0.0]]), np.array([[3.0, 4.0], [1.0, 0.0]]))
    array([[25.,  1.]])
    """
    sq_x = np.einsum("ij,ij->i", x, x) if sq_x is None else sq_x
    sq_y = np.einsum("ij,ij->i", y, y) if sq_y is None else sq_y
    twice = x @ y.T if product is None else np.array(product)
    twice *= 2.0
    d2 = sq_x[:, None] + sq_y[None, :]
    d2 -= twice
    return np.maximum(d2, 0.0, out=d2)


class _Sample:
    """One identity's rows with what every pair needs: squared norms and within-class distances.

    ``blocked`` identities keep only their rows (their distances are computed in blocks per pair);
    ``d2``, the full within-class matrix, is kept only for permutation tests.
    """

    def __init__(self, x: np.ndarray, *, keep_matrix: bool = False, blocked: bool = False):
        self.x, self.blocked = x, blocked
        self.sq = np.einsum("ij,ij->i", x, x)
        self.d2 = self.upper = None
        if not blocked:
            d2 = cross_squared_distances(x, x, self.sq, self.sq)
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
    """Unbiased MMD^2 for label assignments ``in_a`` (shape (B, N) booleans, m True per row).

    ``kernel`` is the pooled (N, N) kernel matrix with a zero diagonal.
    """
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
    np.add(sa.sq[:, None], sb.sq[None, :], out=d2_ab)  # as cross_squared_distances, into the buffer
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


def _check_options(bandwidth_scale: float, permutations: int) -> None:
    if not bandwidth_scale > 0:
        raise ValueError(f"bandwidth_scale must be > 0, got {bandwidth_scale}")
    if permutations < 0:
        raise ValueError(f"permutations must be >= 0, got {permutations}")


def mmd_statistics(
    x_a,
    x_b,
    *,
    bandwidth_scale: float = 1.0,
    permutations: int = 0,
    seed: int | np.random.Generator = 0,
) -> dict[str, float]:
    """Unbiased MMD^2, the median-heuristic bandwidth and (optionally) a permutation p-value.

    ``MMD_u^2 = sum_{i != j} k(a_i, a_j) / (m (m - 1)) + sum_{i != j} k(b_i, b_j) / (n (n - 1))
    - 2 sum_{i, j} k(a_i, b_j) / (m n)`` (Gretton et al. 2012, Eq. 3).

    Parameters
    ----------
    x_a, x_b : array_like, shapes (m, d), (n, d)
    bandwidth_scale : float
        Multiplier of the median-heuristic bandwidth (the paper's sweep uses 0.5 ... 2).
    permutations : int
        Number of label permutations (0 = no test; the paper uses 10^4). The bandwidth, computed
        on the pooled sample, is the same under every permutation.
    seed : int or numpy Generator
        An int seeds ``stream("mmd-permutations", seed)`` (:mod:`epsaudit.seeds`); a Generator is
        used as it is. Seed of the permutations.

    Returns
    -------
    dict
        ``mmd2_u`` (may be negative), ``mmd`` (= sqrt(max(mmd2_u, 0))), ``bandwidth`` (units of
        the embedding), ``p_value`` (Phipson-Smyth ``(b + 1) / (B + 1)`` with ``b`` the number of
        permuted statistics >= the observed one; NaN when no test) and ``permutations``.

    Raises
    ------
    ValueError
        Bad samples, non-positive ``bandwidth_scale``, negative ``permutations``, most pooled
        points identical (zero median distance), or a permutation test on a pair with more than
        :data:`MAX_IN_MEMORY` pooled distances (computed in blocks, exactly, without the kernel
        matrix a permutation test needs).

    Examples
    --------
    >>> stats = mmd_statistics([[0.0], [0.0]], [[1.0], [1.0]])
    >>> round(stats["mmd2_u"], 6), stats["bandwidth"], stats["permutations"]
    (0.786939, 1.0, 0)
    """
    a, b = as_pair(x_a, x_b)
    _check_options(bandwidth_scale, permutations)
    blocked = _too_large(len(a), len(b))
    return _pair_statistics(_Sample(a, keep_matrix=bool(permutations), blocked=blocked),
                            _Sample(b, keep_matrix=bool(permutations), blocked=blocked), bandwidth_scale,
                            permutations, seed)


def _settings(bandwidth_scale: float, seed, permutations: int) -> dict:
    return {"kernel": "rbf", "bandwidth": "median heuristic", "bandwidth_scale": bandwidth_scale,
            "estimator": "unbiased MMD_u^2, clipped at 0", "permutations": permutations,
            "seed": seed if isinstance(seed, (int, type(None))) else "generator"}


def _result(stats: dict | PairFailure, n_a: int, n_b: int, pair, bandwidth_scale: float, seed,
            permutations: int) -> EpsilonResult:
    settings = _settings(bandwidth_scale, seed, permutations)
    if isinstance(stats, PairFailure):
        return not_computed(stats, route=ROUTE, kind="estimate", pair=pair, n=(n_a, n_b), delta=0.0,
                            settings=settings)
    mmd = stats["mmd"]
    return EpsilonResult(
        value=float(epsilon_from_mmd_tv_chain(mmd)), kind="estimate", route=ROUTE, n=(n_a, n_b),
        pair=pair, delta=0.0, settings=settings,
        statistics=MMDStatistics(**stats, epsilon_hockey_stick=float(epsilon_from_mmd_hockey_stick(mmd))),
    )


def mmd_tv_epsilon(x_a, x_b, *, bandwidth_scale: float = 1.0, permutations: int = 0,
                   seed: int = 0, pair=None) -> EpsilonResult:
    """MMD-TV sample value ``2 artanh(MMD / 2)`` for one identity pair.

    Parameters
    ----------
    x_a, x_b : array_like, shapes (n_A, d), (n_B, d)
    bandwidth_scale, permutations, seed
        See :func:`mmd_statistics`.
    pair : tuple, optional

    Returns
    -------
    EpsilonResult
        ``kind="estimate"``, ``delta`` 0; ``statistics`` an :class:`MMDStatistics` (``mmd2_u``,
        ``mmd``, ``bandwidth``, ``p_value``, ``permutations``, ``epsilon_hockey_stick``).

    Raises
    ------
    ValueError
        See :func:`mmd_statistics`.

    Examples
    --------
    >>> r = mmd_tv_epsilon([[0.0], [0.0]], [[1.0], [1.0]])
    >>> round(r.value, 4), r.kind, round(r.statistics.mmd, 4)
    (0.9533, 'estimate', 0.8871)
    """
    stats = mmd_statistics(x_a, x_b, bandwidth_scale=bandwidth_scale, permutations=permutations, seed=seed)
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

    The permutations of pair ``(A, B)`` use ``stream("mmd-permutations", seed, A, B)``
    (:mod:`epsaudit.seeds`); within-identity distances are computed once per identity. Without
    permutations, pairs sharing an identity are computed together (its rows multiplied with all
    their partners' rows in one BLAS product), in tasks of 32 pairs; a pair with more than
    :data:`MAX_IN_MEMORY` pooled distances is computed in blocks (:mod:`epsaudit.audits.mmd_blocked`).

    Parameters
    ----------
    groups : mapping identity -> array_like, shape (n_i, d)
    pairs : sequence of (identity, identity)
    bandwidth_scale, permutations : see :func:`mmd_statistics`
    seed : int
        Base seed; results do not depend on ``n_jobs``.
    n_jobs : int, optional
    progress : bool

    Returns
    -------
    list of EpsilonResult
        One per pair, as :func:`mmd_tv_epsilon`. A pair whose pooled points mostly coincide (zero
        median distance) is *not computed*, with the reason; the other pairs go on.

    Raises
    ------
    ValueError
        Invalid ``groups``/``pairs``, a non-positive ``bandwidth_scale``, negative
        ``permutations`` or a bad ``seed``.

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
    _check_options(bandwidth_scale, permutations)
    seed = check_seed(seed)
    in_memory = dict.fromkeys(label for a, b in pairs if not _too_large(len(groups[a]), len(groups[b]))
                              for label in (a, b))
    samples = {label: _Sample(groups[label], keep_matrix=bool(permutations), blocked=label not in in_memory)
               for label in dict.fromkeys(label for pair in pairs for label in pair)}  # once per identity
    if permutations:
        tasks = [(samples[a], samples[b], bandwidth_scale, permutations, stream("mmd-permutations", seed, a, b))
                 for a, b in pairs]
        stats = map_pairs(_pair_statistics, tasks, desc=ROUTE, n_jobs=n_jobs, progress=progress)
    else:  # little work per pair: tasks of several pairs sharing an identity (its rows stay in cache), threads
        first = {label: i for i, label in enumerate(samples)}
        order = sorted(range(len(pairs)), key=lambda k: (first[pairs[k][0]], first[pairs[k][1]]))
        chunks = [order[i: i + _PAIRS_PER_TASK] for i in range(0, len(order), _PAIRS_PER_TASK)]
        tasks = [([(samples[pairs[k][0]], samples[pairs[k][1]]) for k in chunk], bandwidth_scale) for chunk in chunks]
        stats = [None] * len(pairs)
        for chunk, out in zip(chunks, map_pairs(_chunk_statistics, tasks, desc=ROUTE, n_jobs=n_jobs,
                                               progress=progress, prefer="threads")):
            for k, st in zip(chunk, out):
                stats[k] = st
    return _results(stats, groups, pairs, bandwidth_scale, seed, permutations)


def _chunk_statistics(chunk: list[tuple[_Sample, _Sample]], bandwidth_scale: float) -> list[dict | PairFailure]:
    """:func:`_pair_statistics` of several pairs (no permutations); a pair's error is its failure.

    Consecutive in-memory pairs that share their first identity get their cross products from one
    BLAS product of its rows with all their partners' rows.
    """
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
        kind="estimate", route=ROUTE, delta=0.0, settings=_settings(bandwidth_scale, seed, permutations)))
    return [next(made) if not isinstance(st, PairFailure) else
            _result(st, *sizes[k], pairs[k], bandwidth_scale, seed, permutations) for k, st in enumerate(stats)]
