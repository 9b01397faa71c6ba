"""Prototype-plus-noise mechanisms on a float-safe output grid (package docstring, "Float-safe outputs"):
:class:`ProductLaplace` (pure DP, exactly ``||mu_a - mu_b||_1 / b``), :class:`IsotropicGaussian` and
:class:`AnisotropicGaussian` (the analytic Gaussian mechanism's ``epsilon(delta)``, Balle & Wang 2018, Theorem 8).
"""

from __future__ import annotations

import numbers
from typing import Callable

import numpy as np
from scipy import special

from .. import bounds
from ..protocol import generators
from .base import DEFAULT_DELTA, Mechanism, check_int, check_positive, check_prototypes

#: Output grid: spacing ``2**(floor(log2(noise scale)) - GRID_BITS)`` per coordinate (package docstring).
GRID_BITS: int = 20
#: The grid spacing is at least ``2**_GRID_ULPS`` ulps of the largest output magnitude.
_GRID_ULPS: int = 22
#: Noise magnitudes the grid covers, in noise scales (numpy's Laplace sampler reaches 36.04 b, normal ~ 9 sigma).
_GRID_REACH = 64.0
# Rows per chunk when scoring Monte Carlo draws (bounds memory at ~ chunk * d * 8 bytes).
_MC_CHUNK = 4096


def _output_grid(scales, magnitudes) -> np.ndarray:
    """Grid spacing per coordinate: ``max(2**(floor(log2 scales) - GRID_BITS), 2**(ceil(log2 magnitudes) - 52 +
    _GRID_ULPS))``, at least ``2**22`` ulps of the largest output (package docstring, "Float-safe outputs")."""
    s = np.asarray(scales, dtype=np.float64)
    m = np.asarray(magnitudes, dtype=np.float64)
    if s.shape != m.shape or s.ndim != 1:
        raise ValueError(f"scales and magnitudes must be one-dimensional of equal shape; got {s.shape} and {m.shape}")
    if not (np.all(np.isfinite(s)) and np.all(s > 0) and np.all(np.isfinite(m)) and np.all(m > 0)):
        raise ValueError("scales and magnitudes must be finite and > 0")
    _, e_scale = np.frexp(s)  # s = f * 2**e, f in [0.5, 1): floor(log2 s) = e - 1
    f_mag, e_mag = np.frexp(m)  # ceil(log2 m) = e - 1 if f == 0.5 else e
    ceil_mag = np.where(f_mag == 0.5, e_mag - 1, e_mag)
    return np.ldexp(1.0, np.maximum(e_scale - 1 - GRID_BITS, ceil_mag - 52 + _GRID_ULPS))


class ProductLaplace(Mechanism):
    """Product Laplace mechanism: ``x_j = mu_j + Laplace(0, b)`` independently per coordinate, on a grid.

    The log-likelihood ratio ``sum_j (|x_j - mu_bj| - |x_j - mu_aj|) / b`` is bounded by, and attains,
    ``||mu_a - mu_b||_1 / b``: pure epsilon-DP with exactly that epsilon (*Picture the Epsilon*, the synthetic
    benchmark). Outputs are rounded to the grid ``g = 2**(floor(log2 b) - 20)`` (:attr:`grid`), which keeps
    this epsilon (package docstring, "Float-safe outputs"); :class:`TextbookLaplace` is the unrounded version.

    Parameters
    ----------
    prototypes : array_like, shape (K, d)
        Identity means.
    scale : float, > 0
        Laplace scale ``b`` (per-coordinate variance ``2 b^2``).

    Raises
    ------
    ValueError
        If ``prototypes`` is not a finite 2-D array or ``scale`` is not positive and finite.

    Examples
    --------
    >>> m = ProductLaplace([[0.0, 0.0], [1.0, 0.5]], scale=0.5)
    >>> m.exact_epsilon(0, 1), m.grid * 2**21  # (1 + 0.5) / 0.5; 2**(floor(log2 0.5) - 20) per coordinate
    (3.0, array([1., 1.]))
    >>> x = m.sample(0, 5, seed=0)
    >>> bool(np.all(x / m.grid == np.rint(x / m.grid)))  # outputs on the grid
    True
    """

    name = "laplace"

    def __init__(self, prototypes, scale: float) -> None:
        super().__init__(prototypes, delta=0.0)
        self.scale = check_positive(scale, "scale")
        self.grid = _output_grid(np.full(self.dim, self.scale),
                                np.abs(self.prototypes).max(axis=0) + _GRID_REACH * self.scale)
        self.grid.setflags(write=False)

    def _scale_repr(self) -> str:
        return f"scale={self.scale:.6g}"

    def _noise(self, rng, n):
        return rng.laplace(0.0, self.scale, size=(n, self.dim))

    def _collision_probability(self) -> float:
        # sum over cells of P(cell)^2 ~ g * integral p(x)^2 dx = g / (4 b), per coordinate
        if self.grid is None:
            return 0.0
        return float(np.prod(self.grid / (4.0 * self.scale)))

    def _separation_pairs(self, a, b):
        return np.abs(self.prototypes[a] - self.prototypes[b]).sum(axis=1) / self.scale

    def _epsilon_from_separation(self, sep):
        return np.asarray(sep, dtype=np.float64)

    def exact_score(self, a: int, b: int) -> Callable[[np.ndarray], np.ndarray]:
        """Exact log-likelihood ratio ``log p_a(x) - log p_b(x)`` of the pair (the exact LR test).

        Computed per coordinate as ``sign(mu_aj - mu_bj) * clip(2 x_j - mu_aj - mu_bj, -|mu_aj - mu_bj|,
        |mu_aj - mu_bj|) / b``: without the cancellation of ``|x - mu_b| - |x - mu_a|``, whose last bits differ
        between the two inputs' outputs on the tails (Mironov 2012).

        Returns a callable ``(n, d) -> (n,)``, scores in ``[-epsilon, epsilon]`` (``+-epsilon`` beyond both means);
        ``ValueError`` if ``a`` or ``b`` is invalid (the callable: if its input is not ``(n, d)``).

        Examples
        --------
        >>> m = ProductLaplace([[0.0, 0.0], [1.0, 0.5]], scale=0.5)
        >>> m.exact_score(0, 1)(np.array([[5.0, 5.0], [-5.0, -5.0], [0.5, 0.25]]))  # beyond b, beyond a, midpoint
        array([-3.,  3.,  0.])
        """
        mu_a = self.prototypes[self._check_identity(a, "a")]
        mu_b = self.prototypes[self._check_identity(b, "b")]
        keep = mu_a != mu_b  # coordinates with equal means contribute exactly 0
        mid = (mu_a + mu_b)[keep]
        half_width = np.abs(mu_a - mu_b)[keep]
        sign = np.sign(mu_a - mu_b)[keep]
        scale = self.scale

        def score(x):
            t = 2.0 * self._check_points(x)[:, keep] - mid
            np.clip(t, -half_width, half_width, out=t)
            t *= sign
            return t.sum(axis=1) / scale

        return score

    def optimal_auc(self, a: int, b: int, n_mc: int = 20000, seed=0) -> float:
        """Population AUC of the exact likelihood-ratio test, by Monte Carlo (*Picture the Epsilon*, Figure 2):
        ``n_mc`` draws per identity from ``seed``; standard error below ``0.5 / sqrt(n_mc)`` (0.0035).

        AUC in [0.5, 1] up to Monte Carlo error (0.5 for an identical pair); ``ValueError`` if ``a``/``b``,
        ``n_mc`` (>= 1) or ``seed`` is invalid.

        Examples
        --------
        >>> m = ProductLaplace([[0.0, 0.0], [1.0, 0.5]], scale=0.5)
        >>> 0.85 < m.optimal_auc(0, 1, n_mc=2000, seed=0) < 0.95
        True
        """
        from sklearn.metrics import roc_auc_score

        score = self.exact_score(a, b)
        n_mc = check_int(n_mc, "n_mc", minimum=1)
        rng_a, rng_b = generators(seed, "optimal-auc", (a, b))
        s_a = _chunked_scores(self, a, n_mc, rng_a, score)
        s_b = _chunked_scores(self, b, n_mc, rng_b, score)
        labels = np.r_[np.ones(n_mc), np.zeros(n_mc)]
        return float(roc_auc_score(labels, np.r_[s_a, s_b]))


class _GaussianBase(Mechanism):
    """Noise ``N(0, diag(variances))``, outputs on the grid ``2**(floor(log2 s_j) - 20)``; :meth:`exact_epsilon`
    is the continuous ``epsilon(delta)``, exact to within :meth:`discretisation_slack`."""

    def __init__(self, prototypes, variances: np.ndarray, delta: float) -> None:
        if not (isinstance(delta, numbers.Real) and 0.0 < float(delta) < 1.0):
            raise ValueError(f"delta must be in (0, 1) for a Gaussian mechanism, got {delta!r}")
        super().__init__(prototypes, delta=float(delta))
        self._var = variances
        self._std = np.sqrt(variances)
        self.grid = _output_grid(self._std, np.abs(self.prototypes).max(axis=0) + _GRID_REACH * self._std)
        self.grid.setflags(write=False)

    def _noise(self, rng, n):
        return rng.standard_normal((n, self.dim)) * self._std

    def _collision_probability(self) -> float:
        # sum over cells of P(cell)^2 ~ g * integral phi_s(x)^2 dx = g / (2 s sqrt(pi)), per coordinate
        return float(np.prod(self.grid / (2.0 * self._std * np.sqrt(np.pi))))

    def discretisation_slack(self, a: int, b: int) -> float:
        """``sum_j |mu_aj - mu_bj| g_j / s_j**2``: how far below :meth:`exact_epsilon` the released (grid-rounded)
        mechanism's ``epsilon(delta)`` may lie, in nats.

        The privacy loss ``w^T x + const`` (``w = S^-1 (mu_a - mu_b)``) varies by at most ``sum_j |w_j| g_j``
        within a cell, so the discretised hockey-stick divergence at ``e^eps`` is at least the continuous one
        at ``e^(eps + slack)``. ``ValueError`` for an invalid identity.

        Examples
        --------
        >>> g = IsotropicGaussian([[0.0, 0.0], [3.0, 4.0]], sigma=1.0)
        >>> g.discretisation_slack(0, 1) < 1e-5
        True
        """
        a, b = self._check_identity(a, "a"), self._check_identity(b, "b")
        return float(np.sum(np.abs(self.prototypes[a] - self.prototypes[b]) * self.grid / self._var))

    def _separation_pairs(self, a, b):
        diff = self.prototypes[a] - self.prototypes[b]
        return np.sqrt(np.sum(diff * diff / self._var, axis=1))

    def _epsilon_from_separation(self, sep):
        return bounds.gaussian_epsilon(sep, self.delta)

    def _whitening_direction(self, a: int, b: int) -> np.ndarray:
        """``S^{-1} (mu_a - mu_b)``, shape (d,): the direction of the exact likelihood-ratio test."""
        a, b = self._check_identity(a, "a"), self._check_identity(b, "b")
        return (self.prototypes[a] - self.prototypes[b]) / self._var

    def exact_score(self, a: int, b: int) -> Callable[[np.ndarray], np.ndarray]:
        """Exact log-likelihood ratio ``w^T (x - (mu_a + mu_b) / 2)``, ``w = S^{-1} (mu_a - mu_b)``: ``N(D^2/2, D^2)``
        under ``a``, ``N(-D^2/2, D^2)`` under ``b`` (``D`` = :meth:`separation`).

        Returns a callable ``(n, d) -> (n,)``; ``ValueError`` if ``a`` or ``b`` is invalid (the callable: if its input
        is not ``(n, d)``).

        Examples
        --------
        >>> g = IsotropicGaussian([[0.0, 0.0], [2.0, 0.0]], sigma=1.0)
        >>> g.exact_score(0, 1)(np.array([[0.0, 0.0], [1.0, 5.0]]))  # at mu_a, at the midpoint
        array([2., 0.])
        """
        w = self._whitening_direction(a, b)
        mid = 0.5 * (self.prototypes[a] + self.prototypes[b])

        def score(x):
            return (self._check_points(x) - mid) @ w

        return score

    def optimal_auc(self, a: int, b: int, n_mc: int = 20000, seed=0) -> float:
        """Population AUC of the exact likelihood-ratio test, ``Phi(D / sqrt(2))`` with ``D`` = :meth:`separation`
        (``n_mc`` and ``seed`` are ignored: a common signature with :class:`ProductLaplace`).

        In [0.5, 1); 0.5 for an identical pair.

        Examples
        --------
        >>> round(IsotropicGaussian([[0.0, 0.0], [3.0, 4.0]], sigma=1.0).optimal_auc(0, 1), 4)  # Phi(5 / sqrt 2)
        0.9998
        """
        return float(special.ndtr(self.separation(a, b) / np.sqrt(2.0)))


class IsotropicGaussian(_GaussianBase):
    """Isotropic Gaussian mechanism ``x = mu_i + N(0, sigma^2 I_d)``: exact pairwise
    ``epsilon(delta) = bounds.gaussian_epsilon(||mu_a - mu_b||_2 / sigma, delta)`` (Balle & Wang 2018, Theorem 8).

    Parameters
    ----------
    prototypes : array_like, shape (K, d)
    sigma : float, > 0
        Noise standard deviation per coordinate (same units as the prototypes).
    delta : float in (0, 1), default 1e-5
        The delta at which exact epsilons are reported.

    Raises
    ------
    ValueError
        If ``prototypes`` is not a finite 2-D array, ``sigma`` not positive and finite or ``delta`` outside (0, 1).

    Examples
    --------
    >>> g = IsotropicGaussian([[0.0, 0.0], [3.0, 4.0]], sigma=1.0)
    >>> g.separation(0, 1), round(g.exact_epsilon(0, 1), 4)
    (5.0, 33.1037)
    """

    name = "gaussian"

    def __init__(self, prototypes, sigma: float, delta: float = DEFAULT_DELTA) -> None:
        sigma = check_positive(sigma, "sigma")
        p = check_prototypes(prototypes, minimum=1)
        super().__init__(p, np.full(p.shape[1], sigma**2), delta)
        self.sigma = sigma

    def _scale_repr(self) -> str:
        return f"sigma={self.sigma:.6g}"


class AnisotropicGaussian(_GaussianBase):
    """Anisotropic Gaussian mechanism: ``x = mu_i + N(0, S)``, ``S = diag(variances)`` in the standard basis.

    Exact pairwise ``epsilon(delta) = bounds.gaussian_epsilon(D_M, delta)``, ``D_M = ||S^{-1/2} (mu_a - mu_b)||_2``
    (Balle & Wang 2018 after whitening); the exact test scores along ``S^{-1} (mu_a - mu_b)``. With
    :func:`calibrate`'s spectrum (four orders of magnitude) ``D_M`` sits in the low-variance coordinates and
    the variance in the others, so an L2-penalised logistic regression (rotation-equivariant) looks in the
    wrong directions and fails where the exact test succeeds (*Picture the Epsilon*, Table 6).

    Parameters
    ----------
    prototypes : array_like, shape (K, d)
    variances : array_like, shape (d,), all > 0
        Per-coordinate noise variances (squared prototype units).
    delta : float in (0, 1), default 1e-5

    Raises
    ------
    ValueError
        If ``prototypes`` is not a finite 2-D array, ``variances`` not of shape ``(d,)``, finite and > 0, or
        ``delta`` outside (0, 1).

    Examples
    --------
    >>> a = AnisotropicGaussian([[0.0, 0.0], [1.0, 1.0]], variances=[1.0, 0.25])
    >>> round(a.separation(0, 1), 6)  # Mahalanobis distance sqrt(1 + 4)
    2.236068
    """

    name = "anisotropic_gaussian"

    def __init__(self, prototypes, variances, delta: float = DEFAULT_DELTA) -> None:
        p = check_prototypes(prototypes, minimum=1)
        var = np.asarray(variances, dtype=np.float64)
        if var.shape != (p.shape[1],):
            raise ValueError(f"variances must have shape ({p.shape[1]},) to match prototypes; got {var.shape}")
        if not np.all(np.isfinite(var)) or np.any(var <= 0):
            raise ValueError("variances must all be finite and > 0")
        var = var.copy()
        var.setflags(write=False)
        super().__init__(p, var, delta)
        self.variances = var

    def _scale_repr(self) -> str:
        return f"variances in [{self.variances.min():.3g}, {self.variances.max():.3g}]"


def _chunked_scores(mech: Mechanism, identity: int, n: int, rng: np.random.Generator, score) -> np.ndarray:
    """``score`` of ``n`` draws of ``identity`` from ``rng``, drawn and scored :data:`_MC_CHUNK` rows at a time."""
    out = np.empty(n)
    for start in range(0, n, _MC_CHUNK):
        stop = min(n, start + _MC_CHUNK)
        out[start:stop] = score(mech._draw(identity, rng, stop - start))
    return out
