"""GaussMech: the Gaussian-calibration diagnostic (*Picture the Epsilon*, Section III, Eq. 9).

``sigma >= Delta_2 sqrt(2 ln(1.25/delta)) / eps`` inverted with the sample mean displacement and the larger
residual scale: a *diagnostic* (~28.6 at the exact null, d = 512, n = 30). Definitions: the book's methods
chapter, section "GaussMech — a diagnostic".
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

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
        Root-mean-square within-identity residual per coordinate of A and B.

    See Also
    --------
    gaussmech_epsilon, gaussmech_pairs : the values these statistics come with.

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


def _residual_scale(x: np.ndarray) -> float:
    """Root-mean-square within-identity residual per coordinate, ``sqrt(mean((x - mean(x))**2))`` (ddof 0)."""
    return float(np.sqrt(np.mean((x - x.mean(axis=0)) ** 2)))


def _statistics(x: np.ndarray) -> tuple[np.ndarray, float]:
    """Mean and :func:`_residual_scale` of one identity via ``sum(x^2) - n ||m||^2`` (two passes where that loses
    more than three digits), agreeing with :func:`_residual_scale` to about 1e-13."""
    m = x.mean(axis=0)
    flat = x.ravel()
    total = float(flat @ flat)
    ss = total - len(x) * float(m @ m)
    if not ss > 1e-3 * total:
        r = (x - m).ravel()
        ss = float(r @ r)
    return m, float(np.sqrt(max(ss, 0.0) / x.size))


def _mean_distances(means: np.ndarray, ia: np.ndarray, ib: np.ndarray) -> np.ndarray:
    """``||means[ia] - means[ib]||`` per pair from the Gram matrix of the centred means (directly where that loses
    digits), agreeing with the direct norm to about 1e-12."""
    if len(ia) == 0:
        return np.zeros(0)
    c = means - means.mean(axis=0)
    sq = np.einsum("ij,ij->i", c, c)
    d2 = sq[ia] + sq[ib] - 2.0 * (c @ c.T)[ia, ib]
    close = np.flatnonzero(d2 <= 1e-4 * (sq[ia] + sq[ib]))
    d2[close] = np.einsum("ij,ij->i", c[ia[close]] - c[ib[close]], c[ia[close]] - c[ib[close]])
    return np.sqrt(np.maximum(d2, 0.0))


def _checked_groups(groups: Mapping[Hashable, np.ndarray]) -> dict[Hashable, np.ndarray]:
    """:func:`epsaudit.validation.as_groups` without its NaN/inf scan; any doubt goes to ``as_groups``."""
    if not isinstance(groups, Mapping) or len(groups) == 0:
        return as_groups(groups)
    out: dict[Hashable, np.ndarray] = {}
    dim = None
    for label, x in groups.items():
        try:
            arr = np.asarray(x, dtype=np.float64)
        except (TypeError, ValueError):
            return as_groups(groups)
        if arr.ndim != 2 or arr.shape[0] < 2 or arr.shape[1] < 1 or (dim is not None and arr.shape[1] != dim):
            return as_groups(groups)
        dim = arr.shape[1]
        out[label] = arr
    return out


_SETTINGS = {"scale": "max(sigma_A, sigma_B)", "sigma": "rms residual, ddof=0"}
_CONSTANT = "both identities' samples are constant (zero residual scale); GaussMech is undefined"


def _result(value, n_a, n_b, delta, pair, distance, sigma_a, sigma_b) -> EpsilonResult:
    return EpsilonResult(
        value=value, kind="diagnostic", route=ROUTE, n=(n_a, n_b), pair=pair, delta=delta,
        settings={"delta": delta, **_SETTINGS},
        statistics=GaussMechStatistics(mean_distance=distance, sigma_a=sigma_a, sigma_b=sigma_b),
    )


def gaussmech_epsilon(x_a, x_b, *, delta: float = 1e-5, pair=None) -> EpsilonResult:
    """GaussMech diagnostic ``||mu_A - mu_B||_2 sqrt(2 ln(1.25/delta)) / max(sigma_A, sigma_B)`` for one pair (Eq. 9).

    Parameters
    ----------
    x_a, x_b : array_like, shapes (n_A, d), (n_B, d)
        Embeddings of identities A and B (L2-normalised for face data).
    delta : float, default=1e-5
        The delta in the calibration formula.
    pair : tuple, default=None
        Identity labels recorded in the result.

    Returns
    -------
    EpsilonResult
        ``kind="diagnostic"``; ``statistics`` a :class:`GaussMechStatistics`.

    Raises
    ------
    ValueError
        Fewer than 2 rows per class, mismatched dimensions, NaN/inf, empty input, delta outside (0, 1), or both
        samples constant (zero residual scale).

    See Also
    --------
    gaussmech_pairs : the same diagnostic for many pairs, vectorised.
    epsaudit.audits.kde_lr_epsilon : the other diagnostic route.

    Examples
    --------
    >>> r = gaussmech_epsilon([[0.0, 0.0], [0.0, 2.0]], [[3.0, 0.0], [3.0, 2.0]], delta=1e-5)
    >>> round(r.value, 4), r.kind, r.statistics.mean_distance
    (20.5548, 'diagnostic', 3.0)
    """
    a, b = as_pair(x_a, x_b)
    c = _gauss_constant(delta)
    sigma_a, sigma_b = _residual_scale(a), _residual_scale(b)
    scale = max(sigma_a, sigma_b)
    if scale == 0.0:
        raise ValueError(_CONSTANT.replace("both identities'", "both"))
    distance = float(np.linalg.norm(a.mean(axis=0) - b.mean(axis=0)))
    return _result(distance * c / scale, len(a), len(b), delta, pair, distance, sigma_a, sigma_b)


def gaussmech_pairs(groups: Mapping[Hashable, np.ndarray], pairs: Sequence[tuple[Hashable, Hashable]], *,
                    delta: float = 1e-5) -> list[EpsilonResult]:
    """GaussMech for many identity pairs at once (per-identity statistics computed once; O(d) per pair).

    Parameters
    ----------
    groups : mapping identity -> array_like, shape (n_i, d)
    pairs : sequence of (identity, identity)
    delta : float, default=1e-5

    Returns
    -------
    list of EpsilonResult
        One per pair, equal to :func:`gaussmech_epsilon`; a pair of two constant samples is *not computed*.

    Raises
    ------
    ValueError
        Invalid groups or pairs, or ``delta`` outside (0, 1).

    See Also
    --------
    gaussmech_epsilon : the same diagnostic for one pair.
    epsaudit.audits.audit_pairs : the four routes on one shuffled pair list.

    Examples
    --------
    >>> groups = {"A": [[0.0, 0.0], [0.0, 2.0]], "B": [[3.0, 0.0], [3.0, 2.0]], "C": [[1.0, 1.0], [1.0, 1.0]]}
    >>> [round(r.value, 4) for r in gaussmech_pairs(groups, [("A", "B"), ("B", "C")])]
    [20.5548, 13.7032]
    """
    groups = _checked_groups(groups)
    pairs = as_pairs(pairs, groups)
    c = _gauss_constant(delta)
    labels = list(dict.fromkeys(label for pair in pairs for label in pair))  # the identities the pairs use
    index = {label: i for i, label in enumerate(labels)}
    stats = [_statistics(groups[k]) for k in labels]
    if not all(np.isfinite(s).all() for _, s in stats) or not all(np.isfinite(m).all() for m, _ in stats):
        as_groups(groups)  # NaN or inf somewhere: the full check names it
    means = np.stack([m for m, _ in stats]) if stats else np.zeros((0, 1))
    sigmas = np.array([s for _, s in stats])
    sizes = [len(groups[k]) for k in labels]
    ia = np.array([index[a] for a, _ in pairs])
    ib = np.array([index[b] for _, b in pairs])
    scale = np.maximum(sigmas[ia], sigmas[ib])
    distance = _mean_distances(means, ia, ib)
    with np.errstate(divide="ignore", invalid="ignore"):  # zero scales are recorded as not computed
        values = (distance * c / scale).tolist()
    failed = (scale == 0.0).tolist()
    sig, dist = sigmas.tolist(), distance.tolist()  # plain floats: cheap to index per pair
    ij = list(zip(ia.tolist(), ib.tolist()))
    done = [k for k in range(len(pairs)) if not failed[k]]
    made = iter(EpsilonResult.many(
        [values[k] for k in done], [pairs[k] for k in done], [(sizes[ij[k][0]], sizes[ij[k][1]]) for k in done],
        [GaussMechStatistics(mean_distance=dist[k], sigma_a=sig[ij[k][0]], sigma_b=sig[ij[k][1]]) for k in done],
        kind="diagnostic", route=ROUTE, delta=delta, settings={"delta": delta, **_SETTINGS}))
    return [
        not_computed(PairFailure(reason=_CONSTANT, error="ValueError"), route=ROUTE, kind="diagnostic",
                     pair=pairs[k], n=(sizes[i], sizes[j]), delta=delta, settings={"delta": delta, **_SETTINGS})
        if failed[k] else next(made)
        for k, (i, j) in enumerate(ij)
    ]
