"""GaussMech: the Gaussian-calibration diagnostic (*Picture the Epsilon*, Section III, Eq. 9).

The textbook sufficient calibration ``sigma >= Delta_2 sqrt(2 ln(1.25/delta)) / eps`` inverted,
with the sample mean displacement for ``Delta_2`` and the larger root-mean-square within-identity
residual per coordinate for ``sigma``. A *diagnostic*: the generators are not Gaussian mechanisms,
so the number has no DP interpretation (at the exact null in d = 512 it is ~28.6 at n = 30).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Hashable, Mapping, Sequence

import numpy as np

from ..results import EpsilonResult, RouteStatistics
from ..validation import as_groups, as_pair, as_pairs, check_probability
from .runner import PairFailure, not_computed

ROUTE = "gaussmech"


@dataclass(frozen=True)
class GaussMechStatistics(RouteStatistics):
    """What one GaussMech value is computed from (columns of :func:`epsaudit.results.results_frame`).

    Attributes
    ----------
    mean_distance : float
        ``||mu_A - mu_B||_2``, the sample mean displacement (embedding units).
    sigma_a, sigma_b : float
        Root-mean-square within-identity residual per coordinate of A and B (:func:`residual_scale`).

    Examples
    --------
    >>> GaussMechStatistics(mean_distance=1.0, sigma_a=0.5, sigma_b=0.25).record()
    {'mean_distance': 1.0, 'sigma_a': 0.5, 'sigma_b': 0.25}
    """

    mean_distance: float
    sigma_a: float
    sigma_b: float


def _gauss_constant(delta: float) -> float:
    check_probability(delta, "delta")
    return float(np.sqrt(2.0 * np.log(1.25 / delta)))


def residual_scale(x: np.ndarray) -> float:
    """Root-mean-square within-identity residual per coordinate, ``sqrt(mean((x - mean(x))**2))`` (ddof 0).

    Parameters
    ----------
    x : numpy.ndarray, shape (n, d)
        One identity's embeddings.

    Returns
    -------
    float
        In the units of the embedding; 0 for a constant sample.

    Examples
    --------
    >>> residual_scale(np.array([[0.0, 0.0], [2.0, 2.0]]))
    1.0
    """
    return float(np.sqrt(np.mean((x - x.mean(axis=0)) ** 2)))


_SETTINGS = {"scale": "max(sigma_A, sigma_B)", "sigma": "rms residual, ddof=0"}
_CONSTANT = "both identities' samples are constant (zero residual scale); GaussMech is undefined"


def _result(value, n_a, n_b, delta, pair, distance, sigma_a, sigma_b) -> EpsilonResult:
    return EpsilonResult(
        value=value, kind="diagnostic", route=ROUTE, n=(n_a, n_b), pair=pair, delta=delta,
        settings={"delta": delta, **_SETTINGS},
        statistics=GaussMechStatistics(mean_distance=distance, sigma_a=sigma_a, sigma_b=sigma_b),
    )


def gaussmech_epsilon(x_a, x_b, *, delta: float = 1e-5, pair=None) -> EpsilonResult:
    """GaussMech diagnostic for one identity pair.

    ``||mu_A - mu_B||_2 * sqrt(2 ln(1.25/delta)) / max(sigma_A, sigma_B)`` with ``sigma`` the
    root-mean-square residual per coordinate (*Picture the Epsilon*, Eq. 9).

    Parameters
    ----------
    x_a, x_b : array_like, shapes (n_A, d), (n_B, d)
        Embeddings of identities A and B (L2-normalised for face data).
    delta : float
        The delta in the calibration formula (default 1e-5).
    pair : tuple, optional
        Identity labels recorded in the result.

    Returns
    -------
    EpsilonResult
        ``kind="diagnostic"``; ``statistics`` a :class:`GaussMechStatistics` (``mean_distance``,
        ``sigma_a``, ``sigma_b``).

    Raises
    ------
    ValueError
        Fewer than 2 rows per class, mismatched dimensions, NaN/inf, empty input, delta outside
        (0, 1), or both samples constant (zero residual scale).

    Examples
    --------
    >>> r = gaussmech_epsilon([[0.0, 0.0], [0.0, 2.0]], [[3.0, 0.0], [3.0, 2.0]], delta=1e-5)
    >>> round(r.value, 4), r.kind, r.statistics.mean_distance
    (20.5548, 'diagnostic', 3.0)
    """
    a, b = as_pair(x_a, x_b)
    c = _gauss_constant(delta)
    sigma_a, sigma_b = residual_scale(a), residual_scale(b)
    scale = max(sigma_a, sigma_b)
    if scale == 0.0:
        raise ValueError(_CONSTANT.replace("both identities'", "both"))
    distance = float(np.linalg.norm(a.mean(axis=0) - b.mean(axis=0)))
    return _result(distance * c / scale, len(a), len(b), delta, pair, distance, sigma_a, sigma_b)


def gaussmech_pairs(
    groups: Mapping[Hashable, np.ndarray],
    pairs: Sequence[tuple[Hashable, Hashable]],
    *,
    delta: float = 1e-5,
) -> list[EpsilonResult]:
    """GaussMech for many identity pairs at once (vectorised over pairs).

    Per-identity means and residual scales are computed once; each pair then costs O(d).

    Parameters
    ----------
    groups : mapping identity -> array_like, shape (n_i, d)
    pairs : sequence of (identity, identity)
    delta : float

    Returns
    -------
    list of EpsilonResult
        One per pair, in order, equal to :func:`gaussmech_epsilon` of the pair; a pair whose two
        samples are both constant is *not computed*, with the reason.

    Raises
    ------
    ValueError
        Invalid groups or pairs, or ``delta`` outside (0, 1).

    Examples
    --------
    >>> groups = {"A": [[0.0, 0.0], [0.0, 2.0]], "B": [[3.0, 0.0], [3.0, 2.0]], "C": [[1.0, 1.0], [1.0, 1.0]]}
    >>> [round(r.value, 4) for r in gaussmech_pairs(groups, [("A", "B"), ("B", "C")])]
    [20.5548, 13.7032]
    """
    groups = as_groups(groups)
    pairs = as_pairs(pairs, groups)
    c = _gauss_constant(delta)
    labels = list(groups)
    index = {label: i for i, label in enumerate(labels)}
    means = np.stack([groups[k].mean(axis=0) for k in labels])
    sigmas = np.array([np.sqrt(np.mean((groups[k] - means[i]) ** 2)) for i, k in enumerate(labels)])
    sizes = [len(groups[k]) for k in labels]
    ia = np.array([index[a] for a, _ in pairs])
    ib = np.array([index[b] for _, b in pairs])
    scale = np.maximum(sigmas[ia], sigmas[ib])
    distance = np.linalg.norm(means[ia] - means[ib], axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):  # zero scales are recorded as not computed
        values = (distance * c / scale).tolist()
    failed = (scale == 0.0).tolist()
    sig, dist = sigmas.tolist(), distance.tolist()  # plain floats: cheap to index per pair
    return [
        not_computed(PairFailure(reason=_CONSTANT, error="ValueError"), route=ROUTE, kind="diagnostic",
                     pair=pairs[k], n=(sizes[i], sizes[j]), delta=delta, settings={"delta": delta, **_SETTINGS})
        if failed[k] else _result(values[k], sizes[i], sizes[j], delta, pairs[k], dist[k], sig[i], sig[j])
        for k, (i, j) in enumerate(zip(ia.tolist(), ib.tolist()))
    ]
