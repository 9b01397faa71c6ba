"""KDE-LR: the per-coordinate kernel-density log-ratio diagnostic (*Picture the Epsilon*, Section III).

The sum over coordinates of ``max_grid |log p_A - log p_B|`` of uniform-mixed, floored Silverman KDEs on a
201-point grid. Definitions: the book's methods chapter, section "KDE-LR — a diagnostic". All coordinates of a
pair are evaluated at once, the kernel values in float32 (relative error ~1e-5 in the far tails; a test checks
the scipy loop to 1e-4).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Hashable, Iterable, Mapping, Sequence

import numpy as np

from ..results import EpsilonResult, RouteStatistics
from ..validation import as_groups, as_pair, as_pairs
from .runner import PairFailure, map_pairs, not_computed

ROUTE = "kde_lr"
GRID_POINTS = 201
MARGIN_BANDWIDTHS = 3.0
DENSITY_FLOOR = 1e-12
DEFAULT_ALPHAS = (0.0, 0.01)
_CHUNK = 16  # coordinates per block; the float32 scratch is (16, n, 201), cache-sized


@dataclass(frozen=True)
class KDEStatistics(RouteStatistics):
    """Where one KDE-LR value's per-coordinate maxima sit.

    Attributes
    ----------
    grid_edge_coordinates : int
        Coordinates whose largest log-ratio sits at an end of the grid (set by its margin, not by the data).

    See Also
    --------
    kde_lr_epsilon, kde_lr_pairs : the values these statistics come with.

    Examples
    --------
    >>> KDEStatistics(grid_edge_coordinates=2).record()
    {'grid_edge_coordinates': 2}
    """

    grid_edge_coordinates: int


def _silverman_bandwidth(x: np.ndarray) -> np.ndarray:
    """Silverman's rule per coordinate as scipy uses it in 1-D: ``std(ddof=1) * (3n/4)**(-1/5)``, shape ``(d,)``."""
    n = x.shape[0]
    return x.std(axis=0, ddof=1) * (n * 3.0 / 4.0) ** (-1.0 / 5.0)


def _kernel_density(x: np.ndarray, h: np.ndarray, grid: np.ndarray, buffer: np.ndarray) -> np.ndarray:
    """Gaussian KDE per coordinate: x (n, c), h (c,), grid (c, G), float32 scratch buffer >= (c, n, G) -> (c, G)."""
    c, n = x.shape[1], x.shape[0]
    scale = 1.0 / (h * np.sqrt(2.0))  # exponent -(g - x)^2 / (2 h^2) = -((g - x) * scale)^2
    xs = (x * scale).T.astype(np.float32)[:, :, None]  # (c, n, 1)
    gs = (grid * scale[:, None]).astype(np.float32)[:, None, :]  # (c, 1, G)
    z = np.subtract(gs, xs, out=buffer[:c, :n])
    np.square(z, out=z)
    np.negative(z, out=z)
    np.exp(z, out=z)
    sums = np.matmul(np.ones((1, n), dtype=np.float32), z)[:, 0, :].astype(np.float64)  # BLAS row sums
    return sums / (n * h[:, None] * np.sqrt(2.0 * np.pi))


def _coordinates(x_a, x_b, alphas, names=("x_a", "x_b"), coordinate_names=None) -> tuple[np.ndarray, np.ndarray]:
    """Per-coordinate values ``max_grid |log p_A - log p_B|``, shape ``(len(alphas), d)``, and whether each
    maximum sits at an end of the grid; ``ValueError`` names a coordinate constant within a class."""
    a, b = as_pair(x_a, x_b)
    alphas = np.asarray(list(alphas), dtype=np.float64)
    if alphas.size == 0 or np.any((alphas < 0) | (alphas > 1)):
        raise ValueError(f"alphas must be a non-empty list of values in [0, 1], got {alphas}")
    h_a, h_b = _silverman_bandwidth(a), _silverman_bandwidth(b)
    for h, name in ((h_a, names[0]), (h_b, names[1])):
        zero = np.flatnonzero(h == 0)
        if zero.size:
            j = int(zero[0])
            label = f"coordinate {coordinate_names[j]!r}" if coordinate_names is not None else f"coordinate {j}"
            more = f" (and {zero.size - 1} more coordinate(s))" if zero.size > 1 else ""
            raise ValueError(
                f"{label} is constant within {name}{more} (zero Silverman bandwidth); "
                "KDE-LR needs spread in every coordinate"
            )
    d = a.shape[1]
    out = np.empty((alphas.size, d))
    at_edge = np.empty((alphas.size, d), dtype=bool)
    steps = np.linspace(0.0, 1.0, GRID_POINTS)
    buffer = np.empty((_CHUNK, max(len(a), len(b)), GRID_POINTS), dtype=np.float32)
    for start in range(0, d, _CHUNK):
        sl = slice(start, min(start + _CHUNK, d))
        h = np.maximum(h_a[sl], h_b[sl])
        lo = np.minimum(a[:, sl].min(axis=0), b[:, sl].min(axis=0)) - MARGIN_BANDWIDTHS * h
        hi = np.maximum(a[:, sl].max(axis=0), b[:, sl].max(axis=0)) + MARGIN_BANDWIDTHS * h
        width = hi - lo
        grid = lo[:, None] + width[:, None] * steps[None, :]
        p_a = _kernel_density(a[:, sl], h_a[sl], grid, buffer)
        p_b = _kernel_density(b[:, sl], h_b[sl], grid, buffer)
        for k, alpha in enumerate(alphas):
            uniform = alpha / width[:, None]
            la = np.log(np.maximum((1 - alpha) * p_a + uniform, DENSITY_FLOOR))
            lb = np.log(np.maximum((1 - alpha) * p_b + uniform, DENSITY_FLOOR))
            gap = np.abs(la - lb)
            where = gap.argmax(axis=1)
            out[k, sl] = gap[np.arange(len(where)), where]
            at_edge[k, sl] = (where == 0) | (where == GRID_POINTS - 1)
    return out, at_edge


def _settings(alpha: float) -> dict:
    return {"alpha": float(alpha), "bandwidth": "silverman (per class)", "grid": GRID_POINTS,
            "margin_bandwidths": MARGIN_BANDWIDTHS, "floor": DENSITY_FLOOR}


def _results(values, alphas, n_a, n_b, pair) -> list[EpsilonResult]:
    if isinstance(values, PairFailure):
        return [not_computed(values, route=ROUTE, kind="diagnostic", pair=pair, n=(n_a, n_b), settings=_settings(alpha))
                for alpha in alphas]
    sums, edges = values
    return [
        EpsilonResult(value=float(v), kind="diagnostic", route=ROUTE, n=(n_a, n_b), pair=pair,
                      settings=_settings(alpha), statistics=KDEStatistics(grid_edge_coordinates=int(e)))
        for v, e, alpha in zip(sums, edges, alphas)
    ]


def kde_lr_epsilon(x_a, x_b, *, alpha: float = 0.01, pair=None) -> EpsilonResult:
    """KDE-LR diagnostic for one identity pair at one smoothing weight ``alpha``.

    Parameters
    ----------
    x_a, x_b : array_like, shapes (n_A, d), (n_B, d)
    alpha : float in [0, 1], default=0.01
        Weight of the uniform mixture (the paper reports 0 and 0.01).
    pair : tuple, default=None

    Returns
    -------
    EpsilonResult
        ``kind="diagnostic"``, value in nats (sum over coordinates); ``statistics`` a :class:`KDEStatistics`.

    Raises
    ------
    ValueError
        Bad samples (see :func:`epsaudit.validation.as_pair`), an alpha outside [0, 1], or a coordinate constant
        within a class (zero Silverman bandwidth).

    See Also
    --------
    kde_lr_pairs : the same diagnostic for many pairs at several smoothing weights.
    epsaudit.audits.gaussmech_epsilon : the other diagnostic route.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> r = kde_lr_epsilon(rng.normal(size=(40, 3)), rng.normal(1.0, 1.0, size=(40, 3)), alpha=0.01)
    >>> round(r.value, 3), r.kind, r.statistics.grid_edge_coordinates
    (9.398, 'diagnostic', 0)
    """
    a, b = as_pair(x_a, x_b)
    return _results(_pair_job(a, b, [alpha]), [alpha], len(a), len(b), pair)[0]


def kde_lr_pairs(groups: Mapping[Hashable, np.ndarray], pairs: Sequence[tuple[Hashable, Hashable]], *,
                 alphas: Iterable[float] = DEFAULT_ALPHAS, coordinate_names: Sequence[str] | None = None,
                 n_jobs: int | None = None, progress: bool = False) -> list[EpsilonResult]:
    """KDE-LR for many pairs: all coordinates of a pair at once, pairs in parallel (joblib).

    Parameters
    ----------
    groups : mapping identity -> array_like, shape (n_i, d)
    pairs : sequence of (identity, identity)
    alphas : iterable of float, default=DEFAULT_ALPHAS
    coordinate_names : sequence of str, length d, default=None
        Coordinate names for messages (e.g. the file's embedding columns).
    n_jobs : int, default=None
        joblib workers (``None`` = 1, ``-1`` = all cores).
    progress : bool, default=False
        Show a tqdm bar.

    Returns
    -------
    list of EpsilonResult
        ``len(alphas)`` results per pair, pair-major; a pair with a coordinate constant within one identity is
        *not computed* (the reason names the identity and the coordinate).

    Raises
    ------
    ValueError
        Invalid ``groups`` or ``pairs``.

    See Also
    --------
    kde_lr_epsilon : the same diagnostic for one pair.
    epsaudit.audits.audit_pairs : the four routes on one shuffled pair list.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> groups = {"A": rng.normal(size=(30, 2)), "B": rng.normal(size=(30, 2)), "C": np.ones((30, 2))}
    >>> out = kde_lr_pairs(groups, [("A", "B"), ("A", "C")], alphas=[0.0, 0.01])
    >>> len(out), out[0].computed, out[2].not_computed
    (4, True, "coordinate 0 is constant within identity 'C' (and 1 more coordinate(s)) ...")
    """
    groups = as_groups(groups)
    pairs = as_pairs(pairs, groups)
    alphas = [float(a) for a in alphas]
    tasks = [(groups[a], groups[b], alphas, (f"identity {a!r}", f"identity {b!r}"), coordinate_names)
             for a, b in pairs]
    per_pair = map_pairs(_pair_job, tasks, desc=ROUTE, n_jobs=n_jobs, progress=progress)
    out: list[EpsilonResult] = []
    for (a, b), values in zip(pairs, per_pair):
        out.extend(_results(values, alphas, len(groups[a]), len(groups[b]), (a, b)))
    return out


def _pair_job(a, b, alphas, names=("x_a", "x_b"), coordinate_names=None) -> tuple[np.ndarray, np.ndarray]:
    """Per alpha: the score (sum over coordinates) and how many coordinates peak at a grid end."""
    values, at_edge = _coordinates(a, b, alphas, names, coordinate_names)
    return values.sum(axis=1), at_edge.sum(axis=1)
