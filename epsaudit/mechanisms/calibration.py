"""Calibration to a requested global epsilon (:func:`calibrate`), the audited pairs (:func:`benchmark_pairs`) and
the reference (:func:`reference_epsilon`) of the known-epsilon benchmark (*Picture the Epsilon*, Tables 4 and 6)."""

from __future__ import annotations

import numbers
from typing import Sequence

import numpy as np

from .. import bounds
from ..protocol import generator, identity_pairs
from .additive import AnisotropicGaussian, IsotropicGaussian, ProductLaplace
from .base import DEFAULT_DELTA, Mechanism, check_int, check_prototypes, pairwise_distances

#: Requested global epsilons of the benchmark (*Picture the Epsilon*, Table 6).
BENCHMARK_EPSILONS: tuple[float, ...] = (0.0, 0.5, 2.0, 8.0, 16.0, 32.0)
#: Samples per class (identity) of the benchmark.
BENCHMARK_SAMPLE_SIZES: tuple[int, ...] = (30, 100, 300)
#: Number of identity pairs audited per setting.
N_AUDITED_PAIRS: int = 40
#: Mechanism names accepted by :func:`calibrate`.
MECHANISMS: tuple[str, ...] = ("laplace", "gaussian", "anisotropic_gaussian")
#: Orders of magnitude spanned by the anisotropic variance spectrum used by :func:`calibrate`.
_ANISOTROPY_ORDERS: float = 4.0


def _anisotropic_variance_shape(dim: int, orders: float = _ANISOTROPY_ORDERS) -> np.ndarray:
    """Variances ``c * 10^(-orders * j / (d - 1))``, ``j = 0 .. d-1``, mean 1: at ``orders = 4``, ``d = 512`` the
    smallest quarter holds ~0.1% of the variance but ~90% of ``sum_j 1 / v_j`` (the Mahalanobis distance)."""
    d = check_int(dim, "dim", minimum=1)
    if not (np.isfinite(orders) and orders >= 0):
        raise ValueError(f"orders must be finite and >= 0, got {orders}")
    v = 10.0 ** (-float(orders) * np.linspace(0.0, 1.0, d)) if d > 1 else np.ones(1)
    return v / v.mean()


def calibrate(mechanism: str, prototypes, epsilon: float, *, delta: float = DEFAULT_DELTA, seed=0) -> Mechanism:
    """A mechanism whose worst pair over the prototype set has exactly the requested epsilon.

    Fitted to the most separated of the ``K (K - 1) / 2`` pairs: ``"laplace"`` ``b = max ||mu_a - mu_b||_1 / epsilon``
    (``delta`` unused); ``"gaussian"`` ``sigma = max ||mu_a - mu_b||_2 / m``,
    ``m = bounds.gaussian_mu_for_epsilon(epsilon, delta)``; ``"anisotropic_gaussian"`` variances
    ``(max D_shape / m)^2`` times the fixed mean-1 spectrum (``D_shape`` its Mahalanobis distances).
    ``epsilon = 0`` is the exact null: every identity gets ``prototypes[0]``, unit variance per coordinate on
    average (Laplace ``b = 1 / sqrt(2)``), ``null`` True.

    Parameters
    ----------
    mechanism : {"laplace", "gaussian", "anisotropic_gaussian"}
    prototypes : array_like, shape (K, d), K >= 2
        Identity prototypes, e.g. from :func:`prototype_set`.
    epsilon : float, >= 0
        Requested global epsilon (natural-log units).
    delta : float in (0, 1), default 1e-5
        The delta of the Gaussian mechanisms' ``epsilon(delta)``.
    seed : int, stream key (tuple) or numpy.random.Generator
        Validated for a uniform signature; calibration is deterministic.

    Returns
    -------
    Mechanism
        With ``requested_epsilon = epsilon`` and ``worst_pair`` attaining it (``None`` at the null).

    Raises
    ------
    ValueError
        If ``mechanism`` is unknown, ``epsilon`` negative or not finite, ``delta`` outside (0, 1), ``prototypes``
        has fewer than two rows, or ``epsilon > 0`` while all prototypes coincide.

    Examples
    --------
    >>> from epsaudit.mechanisms import prototype_set
    >>> m = calibrate("gaussian", prototype_set("dispersed", 5, 16, seed=0), 2.0)
    >>> m.worst_pair, round(m.exact_epsilon(*m.worst_pair), 9)
    ((1, 3), 2.0)
    >>> calibrate("laplace", prototype_set("dispersed", 3, 4, seed=0), 0.0).null  # the exact null
    True
    """
    if mechanism not in MECHANISMS:
        raise ValueError(f"unknown mechanism {mechanism!r}; expected one of {MECHANISMS}")
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real) or not np.isfinite(epsilon) or epsilon < 0:
        raise ValueError(f"epsilon must be a finite number >= 0, got {epsilon!r}")
    if not (isinstance(delta, numbers.Real) and 0.0 < float(delta) < 1.0):
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")
    generator(seed, "calibration")  # validates; calibration itself is deterministic
    p = check_prototypes(prototypes, minimum=2)
    k, d = p.shape
    epsilon, delta = float(epsilon), float(delta)
    shape = _anisotropic_variance_shape(d)

    if epsilon == 0.0:
        null_p = np.repeat(p[:1], k, axis=0)
        if mechanism == "laplace":
            mech: Mechanism = ProductLaplace(null_p, 1.0 / np.sqrt(2.0))
        elif mechanism == "gaussian":
            mech = IsotropicGaussian(null_p, 1.0, delta=delta)
        else:
            mech = AnisotropicGaussian(null_p, shape, delta=delta)
        mech.requested_epsilon = 0.0
        return mech

    if mechanism == "laplace":
        dist = pairwise_distances(p, "l1")
    elif mechanism == "gaussian":
        dist = pairwise_distances(p, "l2")
    else:
        dist = pairwise_distances(p / np.sqrt(shape), "l2")
    iu = np.triu_indices(k, 1)
    worst = int(np.argmax(dist[iu]))
    d_max = float(dist[iu][worst])
    if d_max <= 0:
        raise ValueError("all prototypes coincide; there is no pair to calibrate epsilon > 0 on")

    if mechanism == "laplace":
        mech = ProductLaplace(p, d_max / epsilon)
    else:
        m = bounds.gaussian_mu_for_epsilon(epsilon, delta)
        if mechanism == "gaussian":
            mech = IsotropicGaussian(p, d_max / m, delta=delta)
        else:
            mech = AnisotropicGaussian(p, shape * (d_max / m) ** 2, delta=delta)
    mech.requested_epsilon = epsilon
    mech.worst_pair = (int(iu[0][worst]), int(iu[1][worst]))
    return mech


def reference_epsilon(mechanism: Mechanism, pairs: Sequence[tuple[int, int]]) -> float:
    """Median exact pairwise epsilon over ``pairs``: the paper's reference per setting.

    Raises
    ------
    ValueError
        If ``mechanism`` is not a Mechanism, ``pairs`` (e.g. :func:`benchmark_pairs`) is empty or invalid.

    Examples
    --------
    >>> from epsaudit.mechanisms import prototype_set
    >>> m = calibrate("gaussian", prototype_set("dispersed", 5, 16, seed=0), 2.0)
    >>> round(reference_epsilon(m, benchmark_pairs(5, seed=0)), 3)
    1.627
    """
    if not isinstance(mechanism, Mechanism):
        raise ValueError(f"mechanism must be a Mechanism, got {type(mechanism).__name__}")
    return float(np.median(mechanism.exact_epsilons(pairs)))


def benchmark_pairs(n_identities: int, seed=0) -> list[tuple[int, int]]:
    """The audited pairs: ``identity_pairs(range(n_identities), seed)[:40]`` (:data:`N_AUDITED_PAIRS`; all if fewer).

    ``ValueError`` if ``n_identities < 2``.

    Examples
    --------
    >>> benchmark_pairs(5, seed=0)[:3], len(benchmark_pairs(5)), len(benchmark_pairs(20))
    ([(3, 4), (1, 3), (2, 4)], 10, 40)
    """
    k = check_int(n_identities, "n_identities", minimum=2)
    return [(int(a), int(b)) for a, b in identity_pairs(range(k), seed)[:N_AUDITED_PAIRS]]

