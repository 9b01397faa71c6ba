"""Prototype-plus-noise mechanisms on a float-safe output grid: product Laplace and the Gaussians.

* :class:`ProductLaplace` -- independent ``Laplace(0, b)`` noise per coordinate, pure
  ``epsilon``-DP with exactly ``epsilon = ||mu_a - mu_b||_1 / b`` per pair;
* :class:`IsotropicGaussian` and :class:`AnisotropicGaussian` -- ``N(0, sigma^2 I)`` and
  ``N(0, diag(variances))`` noise, exact ``epsilon(delta)`` of the analytic Gaussian mechanism
  (Balle & Wang 2018, Theorem 8);
* :func:`output_grid` -- the power-of-two grid every output is rounded to (package docstring of
  :mod:`epsaudit.mechanisms`, "Float-safe outputs").
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
#: The grid spacing is at least ``2**GRID_ULPS`` ulps of the largest output magnitude, so the
#: rounding of ``mu + noise`` moves a cell boundary by at most ``2**-GRID_ULPS`` of a cell.
GRID_ULPS: int = 22
#: Noise magnitudes the grid must cover, in noise scales (numpy's Laplace sampler reaches 36.04 b,
#: its exponential sampler ~44.4, its normal sampler ~ 9 sigma).
_GRID_REACH = 64.0
# Rows per chunk when scoring Monte Carlo draws (bounds memory at ~ chunk * d * 8 bytes).
_MC_CHUNK = 4096


def output_grid(scales, magnitudes) -> np.ndarray:
    """Per-coordinate spacing of the output grid: powers of two far coarser than float64 rounding.

    ``g_j = max(2**(floor(log2(scales[j])) - GRID_BITS), 2**(ceil(log2(magnitudes[j])) - 52 + GRID_ULPS))``:
    ``2**-20`` to ``2**-21`` of the noise scale, and at least ``2**22`` ulps of the largest output
    magnitude ``magnitudes[j]``, so that rounding ``fl(mu + noise)`` to the grid is exact
    arithmetic up to boundary shifts of ``2**-22`` cell (package docstring, "Float-safe outputs").

    Parameters
    ----------
    scales : array_like, shape (d,), all finite and > 0
        Noise scale per coordinate (Laplace ``b`` or Gaussian standard deviation).
    magnitudes : array_like, shape (d,), all finite and > 0
        Largest ``|output|`` per coordinate the sampler can produce (e.g. ``max |mu_j| + 64 s_j``).

    Returns
    -------
    numpy.ndarray, shape (d,), float64
        Powers of two.

    Raises
    ------
    ValueError
        If the arrays differ in shape or hold a non-positive or non-finite value.

    Examples
    --------
    >>> output_grid([1.0, 0.75], [65.0, 65.0]) * 2**20
    array([1. , 0.5])
    """
    s = np.asarray(scales, dtype=np.float64)
    m = np.asarray(magnitudes, dtype=np.float64)
    if s.shape != m.shape or s.ndim != 1:
        raise ValueError(f"scales and magnitudes must be one-dimensional of equal shape; got {s.shape} and {m.shape}")
    if not (np.all(np.isfinite(s)) and np.all(s > 0) and np.all(np.isfinite(m)) and np.all(m > 0)):
        raise ValueError("scales and magnitudes must be finite and > 0")
    _, e_scale = np.frexp(s)  # s = f * 2**e, f in [0.5, 1): floor(log2 s) = e - 1
    f_mag, e_mag = np.frexp(m)  # ceil(log2 m) = e - 1 if f == 0.5 else e
    ceil_mag = np.where(f_mag == 0.5, e_mag - 1, e_mag)
    return np.ldexp(1.0, np.maximum(e_scale - 1 - GRID_BITS, ceil_mag - 52 + GRID_ULPS))



class ProductLaplace(Mechanism):
    """Product Laplace mechanism: ``x_j = mu_j + Laplace(0, b)`` independently per coordinate, on a grid.

    Density ``p_i(x) = prod_j exp(-|x_j - mu_ij| / b) / (2 b)``. The log-likelihood ratio of a
    pair is ``sum_j (|x_j - mu_bj| - |x_j - mu_aj|) / b``, bounded in absolute value by
    ``||mu_a - mu_b||_1 / b`` and attaining that bound with positive probability, so the pair is
    pure epsilon-DP with exactly ``epsilon = ||mu_a - mu_b||_1 / b`` (*Picture the Epsilon*, the
    synthetic known-epsilon benchmark).

    Outputs are float-safe: numpy's float64 Laplace draw is added to the mean and rounded to the
    grid ``g = 2**(floor(log2 b) - 20)`` (:attr:`grid`, :func:`output_grid`). The rounded
    mechanism keeps exactly this epsilon for any means, and the float64 sampler matches it up to
    the bounds in the package docstring ("Float-safe outputs"); the unrounded textbook version
    (:class:`TextbookLaplace`) is not epsilon-DP at all (Mironov 2012).

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
    >>> m.exact_epsilon(0, 1)  # (1 + 0.5) / 0.5
    3.0
    >>> m.grid * 2**21  # 2**(floor(log2 0.5) - 20) per coordinate
    array([1., 1.])
    >>> x = m.sample(0, 5, seed=0)
    >>> bool(np.all(x / m.grid == np.rint(x / m.grid)))  # outputs on the grid
    True
    """

    name = "laplace"

    def __init__(self, prototypes, scale: float) -> None:
        super().__init__(prototypes, delta=0.0)
        self.scale = check_positive(scale, "scale")
        self.grid = output_grid(np.full(self.dim, self.scale),
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

        Per coordinate ``(|x_j - mu_bj| - |x_j - mu_aj|) / b`` equals
        ``sign(mu_aj - mu_bj) * clip(2 x_j - mu_aj - mu_bj, -|mu_aj - mu_bj|, |mu_aj - mu_bj|) / b``,
        which is how it is computed: without the cancellation of ``|x - mu_b| - |x - mu_a|``,
        whose last bits differ between outputs of the two inputs on the tails (Mironov 2012), so
        beyond both means every coordinate contributes one constant ``+-|mu_aj - mu_bj| / b``
        computed once. (On the mechanism's grid outputs any score is post-processing; this one
        is also exact to the last bit where the ratio is clipped.)

        Returns
        -------
        callable
            Maps an ``(n, d)`` array to the ``(n,)`` scores; values lie in ``[-epsilon, epsilon]``
            (up to the rounding of the sum over coordinates), ``+-epsilon`` when every coordinate
            is beyond both means.

        Raises
        ------
        ValueError
            If ``a`` or ``b`` is invalid; the callable raises if its input is not ``(n, d)``.

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
        """Population AUC of the exact likelihood-ratio test, by Monte Carlo (*Picture the Epsilon*, Figure 2).

        ``n_mc`` outputs of each identity are drawn on independent streams spawned from
        ``seed``, scored with :meth:`exact_score` and the AUC (class ``a`` positive) is computed
        by :func:`sklearn.metrics.roc_auc_score`. The Monte Carlo standard error is below
        ``0.5 / sqrt(n_mc)`` (0.0035 at the default).

        Returns
        -------
        float
            AUC in [0.5, 1] up to Monte Carlo error; exactly 0.5 when the pair is identical.

        Raises
        ------
        ValueError
            If ``a``/``b`` is invalid, ``n_mc < 1`` or ``seed`` is invalid.

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
    """Shared code of the Gaussian mechanisms: noise ``N(0, diag(variances))``, outputs on a grid.

    Outputs are rounded to the grid ``g_j = 2**(floor(log2 s_j) - 20)`` (``s_j`` the standard
    deviation of coordinate ``j``; :func:`output_grid`). The reported :meth:`exact_epsilon` is the
    continuous mechanism's ``epsilon(delta)``, an upper bound on the released mechanism's, exact
    to within :meth:`discretisation_slack` (package docstring, "Float-safe outputs").
    """

    def __init__(self, prototypes, variances: np.ndarray, delta: float) -> None:
        if not (isinstance(delta, numbers.Real) and 0.0 < float(delta) < 1.0):
            raise ValueError(f"delta must be in (0, 1) for a Gaussian mechanism, got {delta!r}")
        super().__init__(prototypes, delta=float(delta))
        self._var = variances
        self._std = np.sqrt(variances)
        self.grid = output_grid(self._std, np.abs(self.prototypes).max(axis=0) + _GRID_REACH * self._std)
        self.grid.setflags(write=False)

    def _noise(self, rng, n):
        return rng.standard_normal((n, self.dim)) * self._std

    def _collision_probability(self) -> float:
        # sum over cells of P(cell)^2 ~ g * integral phi_s(x)^2 dx = g / (2 s sqrt(pi)), per coordinate
        return float(np.prod(self.grid / (2.0 * self._std * np.sqrt(np.pi))))

    def discretisation_slack(self, a: int, b: int) -> float:
        """``sum_j |mu_aj - mu_bj| g_j / s_j**2``: how far below :meth:`exact_epsilon` the released
        (grid-rounded) mechanism's ``epsilon(delta)`` may lie, in nats.

        The exact privacy loss is linear, ``w^T x + const`` with ``w = S^-1 (mu_a - mu_b)``, so it
        varies by at most ``sum_j |w_j| g_j`` within a grid cell; a cell's log ratio is an average
        of the loss over the cell, hence within that amount of the loss at any of its points, and
        the hockey-stick divergence at ``e^eps`` of the discretised pair is at least the continuous
        one at ``e^(eps + slack)``.

        Raises
        ------
        ValueError
            If ``a`` or ``b`` is not a valid identity index.

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

    def whitening_direction(self, a: int, b: int) -> np.ndarray:
        """``S^{-1} (mu_a - mu_b)``, shape (d,): the direction of the exact likelihood-ratio test.

        Examples
        --------
        >>> AnisotropicGaussian([[0.0, 0.0], [1.0, 1.0]], variances=[1.0, 0.25]).whitening_direction(0, 1)
        array([-1., -4.])
        """
        a, b = self._check_identity(a, "a"), self._check_identity(b, "b")
        return (self.prototypes[a] - self.prototypes[b]) / self._var

    def exact_score(self, a: int, b: int) -> Callable[[np.ndarray], np.ndarray]:
        """Exact log-likelihood ratio ``log p_a(x) - log p_b(x)`` of the pair (the exact LR test).

        For Gaussian noise with covariance ``S`` it is linear along the whitening direction:
        ``w^T (x - (mu_a + mu_b) / 2)`` with ``w = S^{-1} (mu_a - mu_b)``; under identity ``a`` it
        is ``N(D^2/2, D^2)``, under ``b`` ``N(-D^2/2, D^2)`` (``D`` the standardised or Mahalanobis
        distance).

        Returns
        -------
        callable
            Maps an ``(n, d)`` array to the ``(n,)`` scores.

        Raises
        ------
        ValueError
            If ``a`` or ``b`` is invalid; the callable raises if its input is not ``(n, d)``.

        Examples
        --------
        >>> g = IsotropicGaussian([[0.0, 0.0], [2.0, 0.0]], sigma=1.0)
        >>> g.exact_score(0, 1)(np.array([[0.0, 0.0], [1.0, 5.0]]))  # at mu_a, at the midpoint
        array([2., 0.])
        """
        w = self.whitening_direction(a, b)
        mid = 0.5 * (self.prototypes[a] + self.prototypes[b])

        def score(x):
            return (self._check_points(x) - mid) @ w

        return score

    def optimal_auc(self, a: int, b: int, n_mc: int = 20000, seed=0) -> float:
        """Population AUC of the exact likelihood-ratio test: ``Phi(D / sqrt(2))`` (closed form).

        ``D`` is :meth:`separation`. ``n_mc`` and ``seed`` are accepted for a common signature
        with :class:`ProductLaplace` and ignored.

        Returns
        -------
        float
            AUC in [0.5, 1); 0.5 when the pair is identical.

        Examples
        --------
        >>> round(IsotropicGaussian([[0.0, 0.0], [3.0, 4.0]], sigma=1.0).optimal_auc(0, 1), 4)  # Phi(5 / sqrt 2)
        0.9998
        """
        return float(special.ndtr(self.separation(a, b) / np.sqrt(2.0)))


class IsotropicGaussian(_GaussianBase):
    """Isotropic Gaussian mechanism: ``x = mu_i + N(0, sigma^2 I_d)``.

    Exact pairwise ``epsilon(delta) = bounds.gaussian_epsilon(||mu_a - mu_b||_2 / sigma, delta)``,
    the analytic Gaussian mechanism of Balle & Wang (2018, Theorem 8).

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
        If ``prototypes`` is not a finite 2-D array, ``sigma`` is not positive and finite or
        ``delta`` is outside (0, 1).

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
    """Anisotropic Gaussian mechanism: ``x = mu_i + N(0, S)``, ``S = diag(variances)``.

    The covariance is **diagonal in the standard basis** (coordinate ``j`` has variance
    ``variances[j]``), so the outputs are product-form, like the other two mechanisms. Exact
    pairwise ``epsilon(delta) = bounds.gaussian_epsilon(D_M, delta)`` with the Mahalanobis distance
    ``D_M = ||S^{-1/2} (mu_a - mu_b)||_2`` (Balle & Wang 2018 after whitening). The
    exact test scores along the whitening direction ``S^{-1} (mu_a - mu_b)``
    (:meth:`whitening_direction`).

    With the spread spectrum :func:`calibrate` uses (:func:`anisotropic_variance_shape`, four
    orders of magnitude), ``D_M`` is dominated by the low-variance coordinates while the total
    variance sits in the high-variance ones, so a learned linear test on raw outputs with an L2
    penalty (paper's logistic regression, C = 1) looks in the wrong directions and fails where
    the exact test succeeds (*Picture the Epsilon*, Table 6). An L2-penalised logistic regression is
    rotation-equivariant, so a random rotation of the basis would not change that; the standard
    basis keeps the noise product-form for the per-coordinate routes.

    Parameters
    ----------
    prototypes : array_like, shape (K, d)
    variances : array_like, shape (d,), all > 0
        Per-coordinate noise variances (squared prototype units).
    delta : float in (0, 1), default 1e-5

    Raises
    ------
    ValueError
        If ``prototypes`` is not a finite 2-D array, ``variances`` does not have shape ``(d,)``
        or has a non-positive or non-finite entry, or ``delta`` is outside (0, 1).

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
