"""GaussMech: the Gaussian-calibration diagnostic (*Picture the Epsilon*, Section III, Eq. 9).

The textbook sufficient calibration ``sigma >= Delta_2 sqrt(2 ln(1.25/delta)) / eps`` inverted,
with the sample mean displacement for ``Delta_2`` and the larger root-mean-square within-identity
residual per coordinate for ``sigma``. A *diagnostic*: the generators are not Gaussian mechanisms,
so the number has no DP interpretation (at the exact null in d = 512 it is ~28.6 at n = 30).
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
        Root-mean-square within-identity residual per coordinate of A and B (:func:`residual_scale`).

    See Also
    --------
    gaussmech_epsilon, gaussmech_pairs : the values these statistics come with.
    epsaudit.results.RouteStatistics : the base class: frozen fields that flatten to table columns.

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

    See Also
    --------
    gaussmech_epsilon : the diagnostic that calibrates against this scale.
    gaussmech_pairs : the same diagnostic for many pairs.

    Examples
    --------
    >>> residual_scale(np.array([[0.0, 0.0], [2.0, 2.0]]))
    1.0
    """
    return float(np.sqrt(np.mean((x - x.mean(axis=0)) ** 2)))


def _statistics(x: np.ndarray) -> tuple[np.ndarray, float]:
    """Mean and :func:`residual_scale` of one identity, the residual sum from one pass over the rows.

    ``sum((x - m)^2) = sum(x^2) - n ||m||^2``; where the rows' offset makes that difference lose more
    than three digits to cancellation, the residuals are summed directly (two passes), so the scale
    agrees with :func:`residual_scale` to about 1e-13 (relative).
    """
    m = x.mean(axis=0)
    flat = x.ravel()
    total = float(flat @ flat)
    ss = total - len(x) * float(m @ m)
    if not ss > 1e-3 * total:
        r = (x - m).ravel()
        ss = float(r @ r)
    return m, float(np.sqrt(max(ss, 0.0) / x.size))


def _mean_distances(means: np.ndarray, ia: np.ndarray, ib: np.ndarray) -> np.ndarray:
    """``||means[ia] - means[ib]||`` per pair from the Gram matrix of the (centred) identity means.

    Pairs whose squared distance is below 1e-4 of their squared norms, where the difference of
    the Gram entries loses digits, are computed directly; the others agree with the direct norm
    to about 1e-12 (relative).
    """
    if len(ia) == 0:
        return np.zeros(0)
    c = means - means.mean(axis=0)
    sq = np.einsum("ij,ij->i", c, c)
    d2 = sq[ia] + sq[ib] - 2.0 * (c @ c.T)[ia, ib]
    close = np.flatnonzero(d2 <= 1e-4 * (sq[ia] + sq[ib]))
    d2[close] = np.einsum("ij,ij->i", c[ia[close]] - c[ib[close]], c[ia[close]] - c[ib[close]])
    return np.sqrt(np.maximum(d2, 0.0))


def _checked_groups(groups: Mapping[Hashable, np.ndarray]) -> dict[Hashable, np.ndarray]:
    """:func:`epsaudit.validation.as_groups` without its scan for NaN/inf (left to the statistics).

    Shapes, sizes and dimensions are checked here; any doubt goes to ``as_groups``, which names
    the offending identity, row and column.
    """
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
    """GaussMech diagnostic for one identity pair.

    ``||mu_A - mu_B||_2 * sqrt(2 ln(1.25/delta)) / max(sigma_A, sigma_B)`` with ``sigma`` the
    root-mean-square residual per coordinate (*Picture the Epsilon*, Eq. 9).

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
        ``kind="diagnostic"``; ``statistics`` a :class:`GaussMechStatistics` (``mean_distance``,
        ``sigma_a``, ``sigma_b``).

    Raises
    ------
    ValueError
        Fewer than 2 rows per class, mismatched dimensions, NaN/inf, empty input, delta outside
        (0, 1), or both samples constant (zero residual scale).

    See Also
    --------
    gaussmech_pairs : the same diagnostic for many pairs, vectorised.
    residual_scale : the per-coordinate noise scale it calibrates against.
    epsaudit.audits.kde_lr_epsilon : the other diagnostic route (per-coordinate density ratios).
    epsaudit.audits.mmd_tv_epsilon, epsaudit.audits.roc_oof_epsilon : the estimate routes.

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

    Per-identity means and residual scales are computed once, for the identities the pairs use
    (the residual sum from one pass over the rows, see :func:`_statistics`); each pair then costs
    O(d).

    Parameters
    ----------
    groups : mapping identity -> array_like, shape (n_i, d)
    pairs : sequence of (identity, identity)
    delta : float, default=1e-5

    Returns
    -------
    list of EpsilonResult
        One per pair, in order, equal to :func:`gaussmech_epsilon` of the pair; a pair whose two
        samples are both constant is *not computed*, with the reason.

    Raises
    ------
    ValueError
        Invalid groups or pairs, or ``delta`` outside (0, 1).

    See Also
    --------
    gaussmech_epsilon : the same diagnostic for one pair.
    epsaudit.audits.kde_lr_pairs, epsaudit.audits.mmd_tv_pairs, epsaudit.audits.roc_oof_pairs : the other routes
        over many pairs.
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
