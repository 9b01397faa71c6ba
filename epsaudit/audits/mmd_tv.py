"""MMD-TV: the kernel two-sample route to a pure-DP epsilon (*Picture the Epsilon*, Section III).

RBF kernel ``k(x, y) = exp(-||x - y||^2 / (2 s^2))`` with ``s`` the median pairwise distance of
the pooled pair sample (median heuristic), the unbiased ``MMD_u^2`` (Gretton et al. 2012) and
``MMD = sqrt(max(MMD_u^2, 0))``. Because ``k(x, x) <= 1``, ``TV >= MMD / 2``, and pure epsilon-DP
gives ``TV <= tanh(eps / 2)``, so ``eps >= 2 artanh(MMD / 2)`` (*Picture the Epsilon*, Eq. 14). The tighter
hockey-stick form ``eps >= 2 artanh(MMD / sqrt 2)`` is reported alongside. An *estimate*: a valid
population inequality evaluated at a sample value, with no one-sided confidence correction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Hashable, Mapping, Sequence

import numpy as np

from ..bounds import epsilon_from_mmd_hockey_stick, epsilon_from_mmd_tv_chain
from ..results import EpsilonResult, RouteStatistics
from ..seeds import check_seed, stream
from ..validation import as_groups, as_pair, as_pairs
from .runner import PairFailure, map_pairs, not_computed

ROUTE = "mmd_tv"
DEFAULT_PERMUTATIONS = 10_000
_PERMUTATION_BATCH = 500


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


def cross_squared_distances(x: np.ndarray, y: np.ndarray, sq_x=None, sq_y=None) -> np.ndarray:
    """Squared Euclidean distances between the rows of ``x`` and ``y``, via BLAS.

    Parameters
    ----------
    x, y : numpy.ndarray, shapes (m, d), (n, d)
    sq_x, sq_y : numpy.ndarray, shapes (m,), (n,), optional
        The rows' squared norms, when already known.

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
    d2 = sq_x[:, None] + sq_y[None, :] - 2.0 * (x @ y.T)
    return np.maximum(d2, 0.0, out=d2)


class _Sample:
    """One identity's rows with what every pair needs: squared norms and within-class distances."""

    def __init__(self, x: np.ndarray):
        self.x = x
        self.sq = np.einsum("ij,ij->i", x, x)
        self.d2 = cross_squared_distances(x, x, self.sq, self.sq)
        np.fill_diagonal(self.d2, 0.0)
        self.upper = self.d2[np.triu_indices(len(x), k=1)]  # the i < j distances


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


def _pair_statistics(sa: _Sample, sb: _Sample, bandwidth_scale: float, permutations: int, seed) -> dict:
    m, n = len(sa.x), len(sb.x)
    d2_ab = cross_squared_distances(sa.x, sb.x, sa.sq, sb.sq)
    pooled = np.concatenate([sa.upper, sb.upper, d2_ab.ravel()])
    s = float(np.median(np.sqrt(pooled))) * bandwidth_scale  # median heuristic (pooled, i < j)
    if s == 0.0:
        raise ValueError("the median pairwise distance of the pooled pair sample is zero (most of its points "
                         "coincide); the median-heuristic bandwidth is undefined")
    g = -1.0 / (2.0 * s * s)
    # sum over i != j equals twice the sum over i < j
    mmd2 = (2.0 * np.exp(g * sa.upper).sum() / (m * (m - 1))
            + 2.0 * np.exp(g * sb.upper).sum() / (n * (n - 1))
            - 2.0 * np.exp(g * d2_ab).sum() / (m * n))
    p_value = float("nan")
    if permutations:
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
        Bad samples, non-positive ``bandwidth_scale``, negative ``permutations``, or most pooled
        points identical (zero median distance).

    Examples
    --------
    >>> stats = mmd_statistics([[0.0], [0.0]], [[1.0], [1.0]])
    >>> round(stats["mmd2_u"], 6), stats["bandwidth"], stats["permutations"]
    (0.786939, 1.0, 0)
    """
    a, b = as_pair(x_a, x_b)
    _check_options(bandwidth_scale, permutations)
    return _pair_statistics(_Sample(a), _Sample(b), bandwidth_scale, permutations, seed)


def _result(stats: dict | PairFailure, n_a: int, n_b: int, pair, bandwidth_scale: float, seed,
            permutations: int) -> EpsilonResult:
    settings = {"kernel": "rbf", "bandwidth": "median heuristic", "bandwidth_scale": bandwidth_scale,
                "estimator": "unbiased MMD_u^2, clipped at 0", "permutations": permutations,
                "seed": seed if isinstance(seed, (int, type(None))) else "generator"}
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
    """MMD-TV for many pairs (joblib over pairs).

    The permutations of pair ``(A, B)`` use ``stream("mmd-permutations", seed, A, B)``
    (:mod:`epsaudit.seeds`); within-identity distances are computed once per identity.

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
    used = dict.fromkeys(label for pair in pairs for label in pair)
    samples = {label: _Sample(groups[label]) for label in used}  # within-class distances once
    seed = check_seed(seed)
    tasks = [(samples[a], samples[b], bandwidth_scale, permutations, stream("mmd-permutations", seed, a, b))
             for a, b in pairs]
    backend = "threads" if not permutations else None  # small per-pair work: avoid pickling
    stats = map_pairs(_pair_statistics, tasks, desc=ROUTE, n_jobs=n_jobs, progress=progress, prefer=backend)
    return [
        _result(st, len(groups[a]), len(groups[b]), (a, b), bandwidth_scale, seed, permutations)
        for (a, b), st in zip(pairs, stats)
    ]
