"""Synthetic mechanisms with exactly known epsilon: the known-epsilon benchmark (SPEC section 3).

Paper 001 calibrates the audit routes on mechanisms whose privacy is known exactly. Each identity
``i`` of a prototype set has a prototype ``mu_i`` on the unit sphere in ``R^d`` and the mechanism
releases ``x = mu_i + noise``:

* :class:`ProductLaplace` -- independent ``Laplace(0, b)`` noise per coordinate. The pairwise
  privacy loss is bounded, so the pair is pure ``epsilon``-DP with exactly
  ``epsilon = ||mu_a - mu_b||_1 / b``.
* :class:`IsotropicGaussian` -- ``N(0, sigma^2 I)`` noise. The exact ``epsilon(delta)`` of the pair
  is that of the analytic Gaussian mechanism (Balle & Wang 2018, Theorem 8) with standardised
  separation ``D = ||mu_a - mu_b||_2 / sigma`` (:func:`epsaudit.bounds.gaussian_epsilon`).
* :class:`AnisotropicGaussian` -- ``N(0, S)`` noise with a *diagonal* covariance
  ``S = diag(variances)`` in the standard basis; the same formula with the Mahalanobis distance
  ``D = ||S^{-1/2} (mu_a - mu_b)||_2``. Its exact test scores along the whitening direction
  ``S^{-1} (mu_a - mu_b)``.

:func:`calibrate` sets the noise scale so that the *worst* pair of a prototype set has exactly the
requested global epsilon (``epsilon = 0`` is the exact null: every identity releases the same
distribution); :func:`reference_epsilon` is the median exact pairwise epsilon over the audited
pairs, the reference the paper compares each audit with.

The released samples are the raw vectors ``mu_i + noise`` rounded to a fine grid (below); they
are deliberately *not* L2-normalised. Normalising is post-processing, which can only lower the
true epsilon, so the exact values here would become upper bounds rather than exact references.

Float-safe outputs
------------------
A float64 implementation of ``mu + noise`` is not the real-valued mechanism whose epsilon the
formulas give: the doubles reachable as ``fl(mu_a + noise)`` differ from those reachable as
``fl(mu_b + noise)``, so an output reachable from one mean only has an infinite likelihood ratio
and the textbook implementation is not epsilon-DP for any epsilon (Mironov 2012, "On significance
of the least significant bits for differential privacy", ACM CCS; :class:`TextbookLaplace` and
:func:`reachability_score` reproduce the attack). The mechanisms here therefore release
``g * rint(fl(mu + noise) / g)``: each coordinate ``j`` on a grid of spacing ``g_j``, a power of two
``2**(floor(log2(s_j)) - GRID_BITS)`` with ``s_j`` the coordinate's noise scale (Laplace ``b``,
Gaussian standard deviation) and ``GRID_BITS = 20``, coarsened if needed to at least ``2**22`` ulps
of the largest output magnitude (:func:`output_grid`). Division and multiplication by ``g`` are
exact, and the draws before rounding are those of the unrounded mechanism.

* **Ideal discretised mechanism** (exact arithmetic). Rounding is post-processing, so epsilon can
  only drop. For product Laplace noise it does not: a cell beyond both means has probabilities in
  the exact ratio ``exp(|mu_aj - mu_bj| / b)``, for any means (on or off the grid), so the pair's
  epsilon stays exactly ``||mu_a - mu_b||_1 / b``. For Gaussian noise the exact privacy loss is
  linear in ``x`` and varies by at most ``V = sum_j |mu_aj - mu_bj| g_j / s_j**2`` within a cell, so
  the discretised ``epsilon(delta)`` lies in ``[eps_c(delta) - V, eps_c(delta)]`` with ``eps_c`` the
  continuous value that :meth:`Mechanism.exact_epsilon` reports (an upper bound, exact to within
  :meth:`Mechanism.discretisation_slack`; at most ``7.2e-5`` nats on the benchmark's pairs).
* **float64 sampler against the ideal one.** numpy draws each uniform on the lattice
  ``k * 2**-53``, so a cell's probability is a count of equally likely lattice points, within
  ``2**-52`` of its ideal value; rounding ``mu + noise`` moves a cell boundary by at most an ulp of
  ``|x|``, a relative ``2**-52 |x| / g <= 2**-31 |x| / s`` of the cell. For product Laplace noise a
  cell at distance ``t`` from the mean has ideal probability at least ``2**-22 exp(-t / b)``, so
  its relative probability error is at most about ``2**-30 exp(t / b)``: below ``1e-5`` within
  ``9 b`` of both means (where a coordinate lies with probability ``1 - 1.2e-4``), so there the
  privacy loss of a coordinate is within ``2e-5`` nats of the ideal one; only beyond ``~21 b``
  (probability ``1e-9`` per coordinate) can the float64 sampler's support differ between the two
  means. A certificate above the exact epsilon through
  float effects would need such events, far rarer than any audit here can observe (the validity
  tests count certificates against the exact epsilon with means that are not representable).

Every random step takes a ``seed``: an ``int`` (the base seed), a stream key (a tuple, when a
caller derives the draws from its own key) or a :class:`numpy.random.Generator` (used as it is).
Streams come from :mod:`epsaudit.seeds`: prototypes from ``("prototypes", seed, geometry)``, the
outputs of identity ``i`` from ``("mechanism-draws", seed, i)``, so ``sample(i, n, s)`` and
``sample_groups(n, s)[i]`` are the same draw. ``None`` is refused so that no draw depends on
hidden global state.
"""

from __future__ import annotations

import math
import numbers
from typing import Callable, Iterable, Sequence

import numpy as np
from scipy import special
from scipy.spatial import distance

from . import bounds
from .seeds import generator, generators
from .pairs import identity_pairs

__all__ = [
    "AnisotropicGaussian",
    "BENCHMARK_EPSILONS",
    "BENCHMARK_SAMPLE_SIZES",
    "GEOMETRIES",
    "IsotropicGaussian",
    "MECHANISMS",
    "Mechanism",
    "N_AUDITED_PAIRS",
    "ProductLaplace",
    "GRID_BITS",
    "TextbookLaplace",
    "anisotropic_variance_shape",
    "benchmark_pairs",
    "calibrate",
    "distance_spread",
    "output_grid",
    "prototype_set",
    "laplace_noise_at",
    "reachability_score",
    "reference_epsilon",
]

#: Requested global epsilons of the benchmark (paper 001, Table 6; SPEC section 3).
BENCHMARK_EPSILONS: tuple[float, ...] = (0.0, 0.5, 2.0, 8.0, 16.0, 32.0)
#: Samples per class (identity) of the benchmark.
BENCHMARK_SAMPLE_SIZES: tuple[int, ...] = (30, 100, 300)
#: Number of identity pairs audited per setting.
N_AUDITED_PAIRS: int = 40
#: Prototype geometries accepted by :func:`prototype_set`.
GEOMETRIES: tuple[str, ...] = ("dispersed", "face_like")
#: Mechanism names accepted by :func:`calibrate`.
MECHANISMS: tuple[str, ...] = ("laplace", "gaussian", "anisotropic_gaussian")

#: Default delta of the approximate-DP (Gaussian) mechanisms.
DEFAULT_DELTA: float = 1e-5

# face_like geometry: rank of the dominant subspace, decay of its axis scales, tangent radius of
# the most distinctive identity, and ratio of the largest to the smallest identity radius.
_FACE_RANK = 5
_FACE_AXIS_DECAY = 0.5
_FACE_MAX_RADIUS = 0.5
_FACE_RADIUS_SPAN = 100.0

#: Orders of magnitude spanned by the anisotropic variance spectrum used by :func:`calibrate`.
ANISOTROPY_ORDERS: float = 4.0

# Rows per chunk when scoring Monte Carlo draws (bounds memory at ~ chunk * d * 8 bytes).
_MC_CHUNK = 4096

#: Output grid: spacing ``2**(floor(log2(noise scale)) - GRID_BITS)`` per coordinate (module docstring).
GRID_BITS: int = 20
#: The grid spacing is at least ``2**GRID_ULPS`` ulps of the largest output magnitude, so the
#: rounding of ``mu + noise`` moves a cell boundary by at most ``2**-GRID_ULPS`` of a cell.
GRID_ULPS: int = 22
#: Noise magnitudes the grid must cover, in noise scales (numpy's Laplace sampler reaches 36.04 b,
#: its exponential sampler ~44.4, its normal sampler ~ 9 sigma).
_GRID_REACH = 64.0
#: Two independent draws that coincide with at least this probability make equal rows expected
#: (:attr:`Mechanism.repeated_outputs`).
REPEAT_PROBABILITY: float = 1e-15


def output_grid(scales, magnitudes) -> np.ndarray:
    """Per-coordinate spacing of the output grid: powers of two far coarser than float64 rounding.

    ``g_j = max(2**(floor(log2(scales[j])) - GRID_BITS), 2**(ceil(log2(magnitudes[j])) - 52 + GRID_ULPS))``:
    ``2**-20`` to ``2**-21`` of the noise scale, and at least ``2**22`` ulps of the largest output
    magnitude ``magnitudes[j]``, so that rounding ``fl(mu + noise)`` to the grid is exact
    arithmetic up to boundary shifts of ``2**-22`` cell (module docstring, "Float-safe outputs").

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


# ---------------------------------------------------------------------------------------------
# Prototype sets
# ---------------------------------------------------------------------------------------------


def _normalise_rows(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def prototype_set(
    geometry: str, n_identities: int = 20, dim: int = 512, seed=0, *, radius_span: float = _FACE_RADIUS_SPAN
) -> np.ndarray:
    """Identity prototypes on the unit sphere (SPEC section 3).

    ``"dispersed"``
        Independent uniform directions on the sphere ``S^{d-1}`` (normalised standard normal
        vectors). In ``d = 512`` every pairwise L2 distance is close to ``sqrt(2)``.
    ``"face_like"``
        Prototypes ``normalise(m0 + U z_i)`` around a common mean direction ``m0`` ("the mean
        face"), with ``U`` a ``(d, r)`` orthonormal basis orthogonal to ``m0``, ``r = min(5, d-1)``.
        ``z_i = rho_i g_i / ||g_i||`` with ``g_i ~ N(0, diag(s_1^2, ..., s_r^2))``,
        ``s_k = 2^{-(k-1)}`` (a few dominant directions of decaying spread) and radii
        ``rho_i`` log-spaced from 0.5 down to ``0.5 / radius_span`` (0.005) and assigned to
        identities in random order: most identities are "typical" (close to the mean face) and a
        few are distinctive. Pairwise distances therefore vary widely: for ``K = 20``, ``d = 512``
        the ratio of the largest to the median pairwise distance (:func:`distance_spread`) is
        4.82 at ``seed = 0`` (minimum 3.26, median 4.74 over seeds 0-299), against ~1.06 for
        ``"dispersed"``. The largest distance is ~0.6-0.7 (an angle of ~35-40 degrees). The
        ratio grows with ``K`` (median 5.8 at ``K = 50``); at ``K = 10`` it can fall below 3
        (median 3.6, minimum 2.7).

    Parameters
    ----------
    geometry : {"dispersed", "face_like"}
    n_identities : int, >= 2
        Number of identities ``K``.
    dim : int, >= 1 (>= 2 for ``"face_like"``)
        Embedding dimension ``d``.
    seed : int, stream key (tuple) or numpy.random.Generator
        Seed of every random step (directions, basis, radii and their assignment).
    radius_span : float, >= 1, keyword-only
        ``"face_like"`` only: ratio of the largest to the smallest identity radius. Smaller
        values give a less spread set (1 puts every identity at the same distance from ``m0``).

    Returns
    -------
    numpy.ndarray, shape (K, d), float64
        Unit-norm rows, one prototype per identity.

    Raises
    ------
    ValueError
        If ``geometry`` is unknown, ``n_identities < 2``, ``dim < 1`` (or ``dim < 2`` for
        ``"face_like"``), ``radius_span`` is below 1 or not finite, or ``seed`` is not a valid seed.
    """
    if geometry not in GEOMETRIES:
        raise ValueError(f"unknown geometry {geometry!r}; expected one of {GEOMETRIES}")
    k = _check_int(n_identities, "n_identities", minimum=2)
    d = _check_int(dim, "dim", minimum=1)
    if isinstance(radius_span, bool) or not isinstance(radius_span, numbers.Real) or not (
        np.isfinite(radius_span) and radius_span >= 1
    ):
        raise ValueError(f"radius_span must be a finite number >= 1, got {radius_span!r}")
    rng = generator(seed, "prototypes", geometry)
    if geometry == "dispersed":
        return _normalise_rows(rng.standard_normal((k, d)))
    if d < 2:
        raise ValueError("the face_like geometry needs dim >= 2 (a mean direction plus spread)")
    r = min(_FACE_RANK, d - 1)
    basis, _ = np.linalg.qr(rng.standard_normal((d, r + 1)))
    m0, u = basis[:, 0], basis[:, 1:]
    axis_scales = _FACE_AXIS_DECAY ** np.arange(r)
    directions = _normalise_rows(rng.standard_normal((k, r)) * axis_scales)
    radii = _FACE_MAX_RADIUS * np.geomspace(1.0, 1.0 / float(radius_span), k)[rng.permutation(k)]
    return _normalise_rows(m0 + (directions * radii[:, None]) @ u.T)


def distance_spread(prototypes) -> float:
    """Ratio of the largest to the median pairwise L2 distance of a prototype set.

    Parameters
    ----------
    prototypes : array_like, shape (K, d), K >= 2

    Returns
    -------
    float
        ``max / median`` over the ``K (K - 1) / 2`` pairwise distances (``inf`` if the median is 0).

    Raises
    ------
    ValueError
        If ``prototypes`` is not a finite ``(K, d)`` array with ``K >= 2``.
    """
    p = _check_prototypes(prototypes, minimum=2)
    dist = _pairwise(p, "l2")[np.triu_indices(p.shape[0], 1)]
    med = float(np.median(dist))
    return float(dist.max() / med) if med > 0 else float("inf")


# ---------------------------------------------------------------------------------------------
# Mechanisms
# ---------------------------------------------------------------------------------------------


class Mechanism:
    """Base class: identity ``i`` releases ``prototypes[i] + noise`` (SPEC section 3).

    Subclasses define the noise and the exact pairwise privacy. Identities are the row indices
    ``0 .. K-1`` of ``prototypes``.

    Attributes
    ----------
    prototypes : numpy.ndarray, shape (K, d)
        Mean of each identity's outputs (all rows equal at the exact null).
    name : str
        ``"laplace"``, ``"gaussian"`` or ``"anisotropic_gaussian"``.
    delta : float
        The delta of the exact ``(epsilon, delta)`` values: 0.0 for Laplace (pure DP).
    null : bool
        True when every identity releases the same distribution (all prototypes equal), so
        every pairwise epsilon is exactly 0.
    requested_epsilon : float or None
        The global epsilon :func:`calibrate` fitted, ``None`` for a hand-built mechanism.
    worst_pair : tuple of int or None
        The pair that attains ``requested_epsilon`` (``None`` at the null or if not calibrated).
    grid : numpy.ndarray of shape (d,) or None
        Spacing of the output grid per coordinate (powers of two, :func:`output_grid`); outputs
        are ``grid * rint((mu + noise) / grid)``. ``None``: raw float64 outputs
        (:class:`TextbookLaplace`, or a mechanism that is not prototype-plus-noise).
    """

    name: str = ""
    grid: np.ndarray | None = None

    def __init__(self, prototypes, delta: float) -> None:
        self.prototypes = _check_prototypes(prototypes, minimum=1)
        self.prototypes.setflags(write=False)
        self.delta = float(delta)
        self.null = bool(np.all(self.prototypes == self.prototypes[0]))
        self.requested_epsilon: float | None = None
        self.worst_pair: tuple[int, int] | None = None

    # -- shape -----------------------------------------------------------------------------
    @property
    def n_identities(self) -> int:
        """Number of identities ``K``."""
        return int(self.prototypes.shape[0])

    @property
    def dim(self) -> int:
        """Embedding dimension ``d``."""
        return int(self.prototypes.shape[1])

    # -- to be provided by subclasses ------------------------------------------------------
    def _noise(self, rng: np.random.Generator, n: int) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def _separation_pairs(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def _epsilon_from_separation(self, sep):  # pragma: no cover
        raise NotImplementedError

    def exact_score(self, a: int, b: int) -> Callable[[np.ndarray], np.ndarray]:  # pragma: no cover
        """Exact log-likelihood ratio ``log p_a(x) - log p_b(x)``: a callable ``(n, d) -> (n,)``.

        Thresholding it is the most powerful test of ``a`` against ``b`` (Neyman-Pearson), the
        "exact" test of paper 001, Figure 3 and Table 6.
        """
        raise NotImplementedError

    def optimal_auc(self, a: int, b: int, n_mc: int = 20000, seed=0) -> float:  # pragma: no cover
        """Population AUC of the exact likelihood-ratio test of ``a`` (positive) against ``b``."""
        raise NotImplementedError

    def _collision_probability(self) -> float:
        """Probability that two independent outputs of one identity are equal (0: continuous)."""
        return 0.0

    # -- float safety ----------------------------------------------------------------------
    @property
    def repeated_outputs(self) -> bool:
        """True when equal output rows are expected between independent draws.

        That is when two independent outputs of one identity coincide with probability at least
        :data:`REPEAT_PROBABILITY` (``1e-15``): one-hot rows of :class:`RandomizedResponse`, and
        grid outputs in one or two dimensions (a Laplace coordinate hits a given grid cell with
        probability up to ``g / (2 b) ~ 2**-21``). Then a check that test rows do not repeat
        development rows (:func:`epsaudit.validation.check_fresh`) cannot tell a reused draw from
        a repeated value; pass ``repeated_values=True`` to the reserved test for such outputs.
        """
        return self._collision_probability() >= REPEAT_PROBABILITY

    def discretisation_slack(self, a: int, b: int) -> float:
        """How far the discretised mechanism's epsilon may lie below :meth:`exact_epsilon` (nats).

        0 for product Laplace noise (the grid keeps the exact epsilon) and for randomized
        response; for Gaussian noise ``sum_j |mu_aj - mu_bj| g_j / s_j**2``, the largest change of
        the exact privacy loss within one grid cell, so the released (discretised) mechanism's
        ``epsilon(delta)`` lies in ``[exact_epsilon - slack, exact_epsilon]`` (module docstring).

        Raises
        ------
        ValueError
            If ``a`` or ``b`` is not a valid identity index.
        """
        self._check_identity(a, "a"), self._check_identity(b, "b")
        return 0.0

    def _snap(self, x: np.ndarray) -> np.ndarray:
        """Round raw outputs ``x`` (a fresh array, modified in place) to the grid."""
        if self.grid is None:
            return x
        x /= self.grid  # exact: the grid spacing is a power of two
        np.rint(x, out=x)
        x *= self.grid
        return x

    def _draw(self, identity: int, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` released outputs of a validated identity: ``snap(prototype + noise)``."""
        return self._snap(self.prototypes[identity] + self._noise(rng, n))

    # -- sampling --------------------------------------------------------------------------
    def sample(self, identity: int, n: int, seed=0) -> np.ndarray:
        """Draw ``n`` outputs of one identity.

        Parameters
        ----------
        identity : int
            Row index of the identity in ``prototypes``, ``0 <= identity < K``.
        n : int, >= 1
            Number of outputs.
        seed : int, stream key (tuple) or numpy.random.Generator

        Returns
        -------
        numpy.ndarray, shape (n, d), float64
            Outputs ``prototypes[identity] + noise`` rounded to :attr:`grid` (same units as the
            prototypes; not normalised).

        Raises
        ------
        ValueError
            If ``identity`` is not a valid index, ``n < 1`` or ``seed`` is invalid.
        """
        i = self._check_identity(identity, "identity")
        n = _check_int(n, "n", minimum=1)
        return self._draw(i, generator(seed, "mechanism-draws", i), n)

    def sample_groups(self, n: int, seed=0, identities: Iterable[int] | None = None) -> dict[int, np.ndarray]:
        """Draw ``n`` outputs for each identity, on independent random streams.

        The stream of identity ``i`` is ``stream("mechanism-draws", seed, i)`` (for a key seed:
        ``stream(*seed, i)``; for a Generator seed: its ``spawn(K)`` children), so identity ``i``
        gets the same draw whichever subset ``identities`` is requested, and
        ``sample_groups(n, s)[i] == sample(i, n, s)``.

        Parameters
        ----------
        n : int, >= 1
            Outputs per identity.
        seed : int, stream key (tuple) or numpy.random.Generator
        identities : iterable of int, optional
            Identities to draw (default: all ``K``).

        Returns
        -------
        dict of int to numpy.ndarray, each of shape (n, d)
            Keys in the order requested.

        Raises
        ------
        ValueError
            If an identity is invalid or repeated, ``n < 1`` or ``seed`` is invalid.
        """
        n = _check_int(n, "n", minimum=1)
        if identities is None:
            ids = list(range(self.n_identities))
        else:
            ids = [self._check_identity(i, "identities") for i in identities]
            if len(set(ids)) != len(ids):
                raise ValueError(f"identities contains repeated entries: {ids}")
        streams = generators(seed, "mechanism-draws", range(self.n_identities))
        return {i: self._draw(i, streams[i], n) for i in ids}

    # -- exact privacy ---------------------------------------------------------------------
    def separation(self, a: int, b: int) -> float:
        """The standardised distance that determines the pair's exact epsilon.

        ``||mu_a - mu_b||_1 / b`` for Laplace (equal to its epsilon), ``||mu_a - mu_b||_2 / sigma``
        for the isotropic Gaussian and the Mahalanobis distance for the anisotropic Gaussian.
        """
        a, b = self._check_identity(a, "a"), self._check_identity(b, "b")
        return float(self._separation_pairs(np.array([a]), np.array([b]))[0])

    def exact_epsilon(self, a: int, b: int) -> float:
        """Exact pairwise epsilon of identities ``a`` and ``b`` (0 when their outputs are equal in law).

        Pure epsilon for Laplace; ``epsilon(delta)`` at ``self.delta`` for the Gaussians.

        Raises
        ------
        ValueError
            If ``a`` or ``b`` is not a valid identity index.
        """
        return float(self._epsilon_from_separation(self.separation(a, b)))

    def exact_epsilons(self, pairs: Sequence[tuple[int, int]]) -> np.ndarray:
        """Exact epsilon of each pair, shape ``(len(pairs),)``.

        Raises
        ------
        ValueError
            If ``pairs`` is empty or names an invalid identity.
        """
        a, b = self._check_pairs(pairs)
        out = self._epsilon_from_separation(self._separation_pairs(a, b))
        return np.atleast_1d(np.asarray(out, dtype=np.float64))

    # -- helpers ---------------------------------------------------------------------------
    def _check_identity(self, i, name: str) -> int:
        if isinstance(i, bool) or not isinstance(i, numbers.Integral):
            raise ValueError(f"{name} must be an integer identity index, got {i!r}")
        if not 0 <= int(i) < self.n_identities:
            raise ValueError(
                f"{name} = {i} is not an identity of this mechanism (valid: 0 .. {self.n_identities - 1})"
            )
        return int(i)

    def _check_pairs(self, pairs) -> tuple[np.ndarray, np.ndarray]:
        pairs = list(pairs)
        if not pairs:
            raise ValueError("pairs is empty; give at least one identity pair")
        a, b = [], []
        for k, pair in enumerate(pairs):
            if len(pair) != 2:
                raise ValueError(f"pairs[{k}] = {pair!r} is not a pair of two identities")
            a.append(self._check_identity(pair[0], f"pairs[{k}][0]"))
            b.append(self._check_identity(pair[1], f"pairs[{k}][1]"))
        return np.array(a), np.array(b)

    def _check_points(self, x) -> np.ndarray:
        arr = np.asarray(x, dtype=np.float64)
        if arr.ndim != 2 or arr.shape[1] != self.dim:
            raise ValueError(f"x must have shape (n, {self.dim}); got {arr.shape}")
        return arr

    def __repr__(self) -> str:
        extra = "" if self.requested_epsilon is None else f", requested_epsilon={self.requested_epsilon:g}"
        return (
            f"{type(self).__name__}(K={self.n_identities}, d={self.dim}, {self._scale_repr()}, "
            f"delta={self.delta:g}, null={self.null}{extra})"
        )

    def _scale_repr(self) -> str:  # pragma: no cover
        return ""


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
    the bounds in the module docstring ("Float-safe outputs"); the unrounded textbook version
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
    """

    name = "laplace"

    def __init__(self, prototypes, scale: float) -> None:
        super().__init__(prototypes, delta=0.0)
        self.scale = _check_positive(scale, "scale")
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
        """Population AUC of the exact likelihood-ratio test, by Monte Carlo (paper 001, Figure 2).

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
        """
        from sklearn.metrics import roc_auc_score

        score = self.exact_score(a, b)
        n_mc = _check_int(n_mc, "n_mc", minimum=1)
        rng_a, rng_b = generators(seed, "optimal-auc", (a, b))
        s_a = _chunked_scores(self, a, n_mc, rng_a, score)
        s_b = _chunked_scores(self, b, n_mc, rng_b, score)
        labels = np.r_[np.ones(n_mc), np.zeros(n_mc)]
        return float(roc_auc_score(labels, np.r_[s_a, s_b]))


class TextbookLaplace(ProductLaplace):
    """The textbook float64 Laplace mechanism ``fl(mu + Laplace noise)`` with no output grid: *not* epsilon-DP.

    The same means, scale and numpy draws as :class:`ProductLaplace`, but the float64 sum is
    released as it is. That is the implementation a textbook formula suggests, and it is not
    epsilon-DP for any finite epsilon (Mironov 2012, "On significance of the least significant
    bits for differential privacy", ACM CCS): numpy's Laplace noise takes only the values
    ``+-b log(2 k 2**-53)`` (a sparse subset of the doubles), so the doubles ``fl(mu_a + noise)``
    reachable from one mean are mostly unreachable from the other. An output reachable from
    ``mu_a`` only has likelihood ratio ``+inf``; :func:`reachability_score` tests exactly that.
    With means 0.3 and 0 in one dimension and ``b = 1``, 81% of the outputs of either input are
    unreachable from the other.

    Kept for teaching (the synthetic-benchmark chapter certifies the violation) and as a control
    for the float-safe :class:`ProductLaplace`.

    Parameters
    ----------
    prototypes : array_like, shape (K, d)
    scale : float, > 0
        Laplace scale ``b``.

    Attributes
    ----------
    grid : None
        No output grid.

    Raises
    ------
    ValueError
        As :class:`ProductLaplace`.
    """

    name = "textbook_laplace"

    def __init__(self, prototypes, scale: float) -> None:
        super().__init__(prototypes, scale)
        self.grid = None

    def nominal_epsilon(self, a: int, b: int) -> float:
        """``||mu_a - mu_b||_1 / b``: the epsilon claimed for the real-valued mechanism this implements.

        Raises
        ------
        ValueError
            If ``a`` or ``b`` is not a valid identity index.
        """
        return float(ProductLaplace._epsilon_from_separation(self, self.separation(a, b)))

    def _epsilon_from_separation(self, sep):
        """Pure-DP epsilon of the float64 sampler: ``+inf`` for distinct means (Mironov 2012), else 0."""
        sep = np.asarray(sep, dtype=np.float64)
        return np.where(sep > 0, np.inf, 0.0)

    def exact_score(self, a: int, b: int) -> Callable[[np.ndarray], np.ndarray]:
        """The textbook log-likelihood ratio ``sum_j (|x_j - mu_bj| - |x_j - mu_aj|) / b``, computed naively.

        The real-valued mechanism's exact ratio, evaluated the textbook way with the
        cancellation that the float-safe :meth:`ProductLaplace.exact_score` avoids; on the tails
        its last bits depend on the input that produced ``x``. Returns a callable
        ``(n, d) -> (n,)``.
        """
        mu_a = self.prototypes[self._check_identity(a, "a")]
        mu_b = self.prototypes[self._check_identity(b, "b")]
        scale = self.scale

        def score(x):
            xk = self._check_points(x)
            return (np.abs(xk - mu_b).sum(axis=1) - np.abs(xk - mu_a).sum(axis=1)) / scale

        return score


def laplace_noise_at(k, scale: float) -> np.ndarray:
    """numpy's Laplace draw ``Generator.laplace(0.0, scale)`` for the uniform ``U = k 2**-53``, bit for bit.

    numpy (>= 1.17, ``random_laplace`` in ``distributions.c``) draws ``U = (u64 >> 11) 2**-53``,
    rejects ``U = 0`` and returns ``0 - scale * log(2 - U - U)`` if ``U >= 0.5``, else
    ``0 + scale * log(U + U)``, with the C library's ``log``. This replays it with the same
    IEEE operations and :func:`math.log` (the same C ``log``; numpy's vectorised ``np.log``
    differs in the last bit on about 0.4% of arguments). The test suite checks the replay against
    ``Generator.laplace`` draw for draw.

    Parameters
    ----------
    k : array_like of int, values in [1, 2**53)
        Lattice indices of the uniforms.
    scale : float, > 0

    Returns
    -------
    numpy.ndarray, float64, shape of ``k``

    Raises
    ------
    ValueError
        If an index is outside ``[1, 2**53)`` or ``scale`` is not positive and finite.
    """
    scale = _check_positive(scale, "scale")
    k = np.asarray(k, dtype=np.int64)
    if k.size and (k.min() < 1 or k.max() >= 2**53):
        raise ValueError("k must hold lattice indices in [1, 2**53): numpy's uniform is k * 2**-53, k > 0")
    u = k.astype(np.float64) * 2.0**-53
    upper = u >= 0.5
    arg = np.where(upper, (2.0 - u) - u, u + u)
    log = np.fromiter(map(math.log, arg.ravel()), dtype=np.float64, count=arg.size).reshape(arg.shape)
    y = scale * log
    return np.where(upper, 0.0 - y, 0.0 + y)


def _reachable(x: np.ndarray, mu: np.ndarray, scale: float, grid, width: int = 3) -> np.ndarray:
    """Elementwise: is ``x`` a possible output ``snap(fl(mu + laplace_noise_at(k, scale)))`` for some k?

    The lattice index whose noise lands nearest ``x - mu`` is found by inverting the Laplace
    quantile function; its ``2 width + 1`` neighbours are replayed exactly. Where the noise lattice
    is coarser than the output's resolution (the doubles near ``x``, or the grid cell) each output
    has at most a few preimages, all among these neighbours; where it is finer (the body of a
    grid mechanism) the nearest index already maps to ``x``.
    """
    v = x - mu
    with np.errstate(over="ignore", under="ignore"):
        k0 = np.where(v < 0, 2.0**52 * np.exp(v / scale), 2.0**53 - 2.0**52 * np.exp(-v / scale))
    k0 = np.clip(np.rint(k0), 1, 2**53 - 1).astype(np.int64)
    ks = np.clip(k0[..., None] + np.arange(-width, width + 1), 1, 2**53 - 1)
    out = mu[..., None] + laplace_noise_at(ks, scale)
    if grid is not None:
        g = np.broadcast_to(np.asarray(grid, dtype=np.float64), x.shape)[..., None]
        out = np.rint(out / g) * g
    return np.any(out == x[..., None], axis=-1)


def reachability_score(mechanism: ProductLaplace, a: int, b: int) -> Callable[[np.ndarray], np.ndarray]:
    """Mironov's support attack on a Laplace mechanism: is an output impossible under one input?

    For each row ``x`` the score is ``+1`` if some coordinate of ``x`` cannot be produced from
    ``mu_b`` by the mechanism's float64 sampler (numpy's Laplace draw, replayed bit for bit by
    :func:`laplace_noise_at`, added to the mean and, for :class:`ProductLaplace`, rounded to its
    grid) while every coordinate can be produced from ``mu_a``; ``-1`` in the mirrored case; ``0``
    otherwise. An output unreachable from ``mu_b`` has likelihood ratio ``+inf``: thresholding
    this score is the most powerful test where the supports differ (Mironov 2012). Against the
    textbook float64 mechanism (:class:`TextbookLaplace`) it fires on most outputs; against the
    grid mechanism every grid cell within ``~21 b`` of a mean is reachable from both means and
    the score is almost always 0.

    The replay assumes the mechanism's draws come from ``Generator.laplace`` (as
    :meth:`Mechanism.sample` does) and that numpy and :func:`math.log` use the same C ``log``.
    Any fixed score is a valid test, so a mismatch can only cost power, never validity.

    Parameters
    ----------
    mechanism : ProductLaplace or TextbookLaplace
    a, b : int
        The pair; ``+1`` means "certainly from a".

    Returns
    -------
    callable
        ``(n, d) -> (n,)`` array of ``-1.0, 0.0, +1.0``.

    Raises
    ------
    ValueError
        If ``mechanism`` is not a product Laplace mechanism or ``a``/``b`` is invalid; the
        callable raises if its input is not ``(n, d)``.
    """
    if not isinstance(mechanism, ProductLaplace):
        raise ValueError(f"reachability_score needs a ProductLaplace or TextbookLaplace mechanism, got "
                         f"{type(mechanism).__name__}")
    mu_a = mechanism.prototypes[mechanism._check_identity(a, "a")]
    mu_b = mechanism.prototypes[mechanism._check_identity(b, "b")]
    scale, grid = mechanism.scale, mechanism.grid

    def score(x):
        xk = mechanism._check_points(x)
        from_a = _reachable(xk, np.broadcast_to(mu_a, xk.shape), scale, grid).all(axis=1)
        from_b = _reachable(xk, np.broadcast_to(mu_b, xk.shape), scale, grid).all(axis=1)
        return (~from_b).astype(np.float64) - (~from_a).astype(np.float64)

    return score


class _GaussianBase(Mechanism):
    """Shared code of the Gaussian mechanisms: noise ``N(0, diag(variances))``, outputs on a grid.

    Outputs are rounded to the grid ``g_j = 2**(floor(log2 s_j) - 20)`` (``s_j`` the standard
    deviation of coordinate ``j``; :func:`output_grid`). The reported :meth:`exact_epsilon` is the
    continuous mechanism's ``epsilon(delta)``, an upper bound on the released mechanism's, exact
    to within :meth:`discretisation_slack` (module docstring, "Float-safe outputs").
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
        """
        a, b = self._check_identity(a, "a"), self._check_identity(b, "b")
        return float(np.sum(np.abs(self.prototypes[a] - self.prototypes[b]) * self.grid / self._var))

    def _separation_pairs(self, a, b):
        diff = self.prototypes[a] - self.prototypes[b]
        return np.sqrt(np.sum(diff * diff / self._var, axis=1))

    def _epsilon_from_separation(self, sep):
        return bounds.gaussian_epsilon(sep, self.delta)

    def whitening_direction(self, a: int, b: int) -> np.ndarray:
        """``S^{-1} (mu_a - mu_b)``, shape (d,): the direction of the exact likelihood-ratio test."""
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
        """
        return float(special.ndtr(self.separation(a, b) / np.sqrt(2.0)))


class IsotropicGaussian(_GaussianBase):
    """Isotropic Gaussian mechanism: ``x = mu_i + N(0, sigma^2 I_d)``.

    Exact pairwise ``epsilon(delta) = bounds.gaussian_epsilon(||mu_a - mu_b||_2 / sigma, delta)``,
    the analytic Gaussian mechanism of Balle & Wang (2018, Theorem 8); SPEC section 3.

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
    """

    name = "gaussian"

    def __init__(self, prototypes, sigma: float, delta: float = DEFAULT_DELTA) -> None:
        sigma = _check_positive(sigma, "sigma")
        p = _check_prototypes(prototypes, minimum=1)
        super().__init__(p, np.full(p.shape[1], sigma**2), delta)
        self.sigma = sigma

    def _scale_repr(self) -> str:
        return f"sigma={self.sigma:.6g}"


class AnisotropicGaussian(_GaussianBase):
    """Anisotropic Gaussian mechanism: ``x = mu_i + N(0, S)``, ``S = diag(variances)``.

    The covariance is **diagonal in the standard basis** (coordinate ``j`` has variance
    ``variances[j]``), so the outputs are product-form, like the other two mechanisms. Exact
    pairwise ``epsilon(delta) = bounds.gaussian_epsilon(D_M, delta)`` with the Mahalanobis distance
    ``D_M = ||S^{-1/2} (mu_a - mu_b)||_2`` (Balle & Wang 2018 after whitening; SPEC section 3). The
    exact test scores along the whitening direction ``S^{-1} (mu_a - mu_b)``
    (:meth:`whitening_direction`).

    With the spread spectrum :func:`calibrate` uses (:func:`anisotropic_variance_shape`, four
    orders of magnitude), ``D_M`` is dominated by the low-variance coordinates while the total
    variance sits in the high-variance ones, so a learned linear test on raw outputs with an L2
    penalty (paper's logistic regression, C = 1) looks in the wrong directions and fails where
    the exact test succeeds (paper 001, Table 6). An L2-penalised logistic regression is
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
    """

    name = "anisotropic_gaussian"

    def __init__(self, prototypes, variances, delta: float = DEFAULT_DELTA) -> None:
        p = _check_prototypes(prototypes, minimum=1)
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


# ---------------------------------------------------------------------------------------------
# Calibration and the benchmark protocol
# ---------------------------------------------------------------------------------------------


def anisotropic_variance_shape(dim: int, orders: float = ANISOTROPY_ORDERS) -> np.ndarray:
    """The fixed anisotropic spectrum shape: variances log-spaced over ``orders`` decades, mean 1.

    ``v_j = c * 10^(-orders * j / (d - 1))``, ``j = 0 .. d-1`` (decreasing), with ``c`` chosen so
    that ``mean(v) = 1``. With ``orders = 4`` and ``d = 512``, ``v`` runs from ~9.2 to ~9.2e-4; the
    quarter of coordinates with the smallest variances carries ~0.1% of the total variance but
    ~90% of ``sum_j 1 / v_j``, i.e. of the Mahalanobis distance of a generic mean difference.

    Raises
    ------
    ValueError
        If ``dim < 1`` or ``orders`` is negative or not finite.
    """
    d = _check_int(dim, "dim", minimum=1)
    if not (np.isfinite(orders) and orders >= 0):
        raise ValueError(f"orders must be finite and >= 0, got {orders}")
    v = 10.0 ** (-float(orders) * np.linspace(0.0, 1.0, d)) if d > 1 else np.ones(1)
    return v / v.mean()


def calibrate(mechanism: str, prototypes, epsilon: float, *, delta: float = DEFAULT_DELTA, seed=0) -> Mechanism:
    """A mechanism whose worst pair over the prototype set has exactly the requested epsilon.

    The noise scale is fitted to the pair with the largest separation among all
    ``K (K - 1) / 2`` pairs (SPEC section 3):

    * ``"laplace"``: ``b = max_{a,b} ||mu_a - mu_b||_1 / epsilon`` (pure DP; ``delta`` unused);
    * ``"gaussian"``: ``sigma = max ||mu_a - mu_b||_2 / m`` with
      ``m = bounds.gaussian_mu_for_epsilon(epsilon, delta)``;
    * ``"anisotropic_gaussian"``: ``variances = s * anisotropic_variance_shape(d)`` with the scalar
      ``s = (max D_shape / m)^2``, ``D_shape`` the Mahalanobis distances under the shape.

    ``epsilon = 0`` is the exact null: every identity gets ``prototypes[0]``, so all identities
    release the same distribution and every exact pairwise epsilon is 0; the noise then has unit
    variance per coordinate on average (Laplace ``b = 1 / sqrt(2)``, ``sigma = 1``, anisotropic
    variances equal to the mean-1 shape), and ``null`` is True.

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
        Accepted (and validated) for a uniform benchmark signature; calibration itself is
        deterministic, all randomness is in the prototypes and in the sampling.

    Returns
    -------
    Mechanism
        With ``requested_epsilon = epsilon`` and ``worst_pair`` the ``(a, b)`` attaining it
        (``None`` at the null).

    Raises
    ------
    ValueError
        If ``mechanism`` is unknown, ``epsilon`` is negative or not finite, ``delta`` is outside
        (0, 1), ``prototypes`` has fewer than two rows, or ``epsilon > 0`` while all prototypes
        coincide (no pair to calibrate).
    """
    if mechanism not in MECHANISMS:
        raise ValueError(f"unknown mechanism {mechanism!r}; expected one of {MECHANISMS}")
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real) or not np.isfinite(epsilon) or epsilon < 0:
        raise ValueError(f"epsilon must be a finite number >= 0, got {epsilon!r}")
    if not (isinstance(delta, numbers.Real) and 0.0 < float(delta) < 1.0):
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")
    generator(seed, "calibration")  # validates; calibration itself is deterministic
    p = _check_prototypes(prototypes, minimum=2)
    k, d = p.shape
    epsilon, delta = float(epsilon), float(delta)
    shape = anisotropic_variance_shape(d)

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
        dist = _pairwise(p, "l1")
    elif mechanism == "gaussian":
        dist = _pairwise(p, "l2")
    else:
        dist = _pairwise(p / np.sqrt(shape), "l2")
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

    Parameters
    ----------
    mechanism : Mechanism
    pairs : sequence of (int, int)
        Audited identity pairs, e.g. :func:`benchmark_pairs`.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``pairs`` is empty or names an identity the mechanism does not have.
    """
    if not isinstance(mechanism, Mechanism):
        raise ValueError(f"mechanism must be a Mechanism, got {type(mechanism).__name__}")
    return float(np.median(mechanism.exact_epsilons(pairs)))


def benchmark_pairs(n_identities: int, seed=0) -> list[tuple[int, int]]:
    """The audited pairs: the first :data:`N_AUDITED_PAIRS` (40) of the shuffled pair list.

    ``pairs.identity_pairs(range(n_identities), seed)[:40]`` (all pairs if there are fewer than
    40, i.e. ``n_identities <= 9``).

    Raises
    ------
    ValueError
        If ``n_identities < 2``.
    """
    k = _check_int(n_identities, "n_identities", minimum=2)
    return [(int(a), int(b)) for a, b in identity_pairs(range(k), seed)[:N_AUDITED_PAIRS]]


# ---------------------------------------------------------------------------------------------
# Internals
# ---------------------------------------------------------------------------------------------


def _check_int(value, name: str, *, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def _check_positive(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


def _check_prototypes(prototypes, *, minimum: int) -> np.ndarray:
    try:
        p = np.array(prototypes, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"prototypes must be a numeric (K, d) array: {exc}") from None
    if p.ndim != 2 or p.shape[1] < 1:
        raise ValueError(f"prototypes must be a two-dimensional (K, d) array; got shape {p.shape}")
    if p.shape[0] < minimum:
        raise ValueError(f"prototypes needs at least {minimum} identities (rows); got {p.shape[0]}")
    if not np.all(np.isfinite(p)):
        raise ValueError("prototypes holds NaN or infinite values")
    return p


def _pairwise(p: np.ndarray, metric: str) -> np.ndarray:
    """(K, K) matrix of pairwise L1 or L2 distances between the rows of ``p``."""
    return distance.cdist(p, p, "cityblock" if metric == "l1" else "euclidean")


def _chunked_scores(mech: Mechanism, identity: int, n: int, rng: np.random.Generator, score) -> np.ndarray:
    out = np.empty(n)
    for start in range(0, n, _MC_CHUNK):
        stop = min(n, start + _MC_CHUNK)
        out[start:stop] = score(mech._draw(identity, rng, stop - start))
    return out


# ---------------------------------------------------------------------------------------------
# K-ary randomized response (DP-Sniper comparison, paper 001 Table 5; SPEC section 4)
# ---------------------------------------------------------------------------------------------


class RandomizedResponse(Mechanism):
    """K-ary randomized response: identity ``i`` reports category ``i`` or, rarely, another one.

    Identity ``i`` (``0 <= i < K``) releases category ``i`` with probability
    ``p_true = e^eps / (e^eps + K - 1)`` and each of the other ``K - 1`` categories with
    probability ``p_other = 1 / (e^eps + K - 1)``. For two identities ``a != b`` the likelihood
    ratio of any output is ``e^eps`` (category ``a``), ``e^-eps`` (category ``b``) or 1, so every
    pair is pure epsilon-DP with exactly ``epsilon`` (Warner 1965; Kairouz, Oh & Viswanath 2016).
    ``epsilon = 0`` is the exact null (every identity reports a uniform category).

    Feature encoding. :meth:`sample` returns **one-hot rows** in ``R^K`` (float64, the
    ``x[:, k] = 1`` column is the reported category): the encoding the classifiers of
    :mod:`epsaudit.sniper` and :mod:`epsaudit.audits` see, so a linear classifier can give each
    category its own weight. :meth:`sample_codes` returns the same draws as integer codes
    ``0 .. K-1``; :meth:`encode` maps codes to one-hot rows. (An integer-coded single feature
    would force a linear classifier to rank categories by their index, which cannot isolate a
    category in the middle and gives much weaker attacks.)

    ``prototypes`` (used by the base class) are the mean one-hot outputs
    ``p_other + (p_true - p_other) I``; the mechanism is *not* "prototype plus additive noise",
    so :meth:`sample` and :meth:`sample_groups` are overridden.

    Parameters
    ----------
    n_categories : int, >= 2
        ``K``, the number of categories (= identities). The DP-Sniper comparison uses ``K = 16``.
    epsilon : float, >= 0
        Exact pairwise epsilon (natural-log units).

    Raises
    ------
    ValueError
        If ``n_categories < 2`` or ``epsilon`` is negative or not finite.
    """

    name = "randomized_response"

    def __init__(self, n_categories: int, epsilon: float) -> None:
        k = _check_int(n_categories, "n_categories", minimum=2)
        if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real) or not np.isfinite(epsilon) or epsilon < 0:
            raise ValueError(f"epsilon must be a finite number >= 0, got {epsilon!r}")
        eps = float(epsilon)
        # p_other = 1 / (e^eps + K - 1) computed as e^-eps / (1 + (K - 1) e^-eps): no overflow at large eps
        p_other = float(np.exp(-eps) / (1.0 + (k - 1) * np.exp(-eps)))
        p_true = float(1.0 / (1.0 + (k - 1) * np.exp(-eps)))
        super().__init__(np.full((k, k), p_other) + (p_true - p_other) * np.eye(k), delta=0.0)
        self.epsilon = eps
        self.n_categories = k
        self.p_true = p_true
        self.p_other = p_other
        self.requested_epsilon = eps
        self.worst_pair = (0, 1) if eps > 0 else None

    def _scale_repr(self) -> str:
        return f"epsilon={self.epsilon:g}, p_true={self.p_true:.6g}"

    def _collision_probability(self) -> float:
        return float(np.sum(self.prototypes[0] ** 2))  # one of K categories: equal rows are the rule

    @property
    def sampled_epsilon(self) -> float:
        """Exact epsilon of the float64 sampler of :meth:`sample_codes` (nats).

        A report keeps the true category when ``U < p_true`` with ``U`` numpy's uniform on the
        lattice ``k 2**-53``, i.e. with probability ``P = ceil(p_true 2**53) 2**-53`` exactly, and
        otherwise picks one of the ``K - 1`` others uniformly (an exact integer draw), so the
        sampled pair's epsilon is ``log(P (K - 1) / (1 - P))``. For ``K = 16`` it equals ``epsilon``
        to 1e-14 for ``epsilon <= 8`` and is 31.99943 at ``epsilon = 32``, where ``1 - P`` holds
        only ~1700 lattice points; DP-Sniper cannot certify above ``log(1/c)`` there anyway.
        """
        if self.epsilon == 0:
            return 0.0
        keep = math.ceil(self.p_true * 2.0**53)  # exact: scaling by a power of two
        other = 2**53 - keep
        return math.log(keep * (self.n_categories - 1) / other)

    # -- sampling --------------------------------------------------------------------------
    def output_probabilities(self, identity: int) -> np.ndarray:
        """Probability of each category under ``identity``, shape ``(K,)`` (sums to 1)."""
        return self.prototypes[self._check_identity(identity, "identity")].copy()

    def sample_codes(self, identity: int, n: int, seed=0) -> np.ndarray:
        """Draw ``n`` reports of one identity as integer category codes.

        Each report is category ``identity`` if ``U < p_true`` for ``U ~ Uniform(0, 1)``, else
        a uniform draw from the other ``K - 1`` categories.

        Parameters
        ----------
        identity : int, ``0 <= identity < K``
        n : int, >= 1
        seed : int, stream key (tuple) or numpy.random.Generator

        Returns
        -------
        numpy.ndarray, shape (n,), int64
            Codes in ``0 .. K-1``.

        Raises
        ------
        ValueError
            If ``identity`` is invalid, ``n < 1`` or ``seed`` is invalid.
        """
        i = self._check_identity(identity, "identity")
        n = _check_int(n, "n", minimum=1)
        rng = generator(seed, "mechanism-draws", i)
        keep = rng.random(n) < self.p_true
        other = rng.integers(0, self.n_categories - 1, size=n)
        other += other >= i  # skip the true category
        return np.where(keep, i, other)

    def encode(self, codes) -> np.ndarray:
        """One-hot rows for category codes: shape ``(n,) -> (n, K)``, float64.

        Raises
        ------
        ValueError
            If a code is not an integer in ``0 .. K-1``.
        """
        c = np.asarray(codes)
        if c.ndim != 1 or not np.issubdtype(c.dtype, np.integer) or (c.size and (c.min() < 0 or c.max() >= self.n_categories)):
            raise ValueError(f"codes must be a 1-D integer array with values in 0 .. {self.n_categories - 1}")
        out = np.zeros((c.shape[0], self.n_categories))
        out[np.arange(c.shape[0]), c] = 1.0
        return out

    def sample(self, identity: int, n: int, seed=0) -> np.ndarray:
        """Draw ``n`` reports of one identity as one-hot rows, shape ``(n, K)`` float64.

        ``sample(i, n, s) == encode(sample_codes(i, n, s))``. Errors as :meth:`sample_codes`.
        """
        return self.encode(self.sample_codes(identity, n, seed))

    def sample_groups(self, n: int, seed=0, identities: Iterable[int] | None = None) -> dict[int, np.ndarray]:
        """One-hot reports of each identity on independent streams (as :meth:`Mechanism.sample_groups`).

        Returns
        -------
        dict of int to numpy.ndarray, each of shape (n, K)
        """
        n = _check_int(n, "n", minimum=1)
        if identities is None:
            ids = list(range(self.n_identities))
        else:
            ids = [self._check_identity(i, "identities") for i in identities]
            if len(set(ids)) != len(ids):
                raise ValueError(f"identities contains repeated entries: {ids}")
        streams = generators(seed, "mechanism-draws", range(self.n_identities))
        return {i: self.sample(i, n, streams[i]) for i in ids}

    def _noise(self, rng, n):  # pragma: no cover - randomized response is not additive
        raise NotImplementedError("RandomizedResponse is not prototype-plus-noise; use sample()")

    # -- exact privacy ---------------------------------------------------------------------
    def _separation_pairs(self, a, b):
        return np.where(np.asarray(a) != np.asarray(b), self.epsilon, 0.0)

    def _epsilon_from_separation(self, sep):
        return np.asarray(sep, dtype=np.float64)

    def exact_score(self, a: int, b: int) -> Callable[[np.ndarray], np.ndarray]:
        """Exact log-likelihood ratio on one-hot rows: ``eps * (x[:, a] - x[:, b])``.

        Returns
        -------
        callable
            Maps an ``(n, K)`` one-hot array to scores in ``{-eps, 0, eps}``.
        """
        a, b = self._check_identity(a, "a"), self._check_identity(b, "b")
        eps = self.epsilon if a != b else 0.0

        def score(x):
            xk = self._check_points(x)
            return eps * (xk[:, a] - xk[:, b])

        return score

    def optimal_auc(self, a: int, b: int, n_mc: int = 20000, seed=0) -> float:
        """Population AUC of the exact likelihood-ratio test of ``a`` against ``b`` (closed form).

        Scores take three values (``a``'s category, ``b``'s, any other), so the AUC is
        ``P(S_a > S_b) + P(S_a = S_b) / 2`` computed exactly. ``n_mc`` and ``seed`` are accepted
        for a common signature and ignored.
        """
        a, b = self._check_identity(a, "a"), self._check_identity(b, "b")
        if a == b or self.epsilon == 0:
            return 0.5
        pt, po, k = self.p_true, self.p_other, self.n_categories
        # score levels +eps / 0 / -eps: probabilities under a and under b
        pa = np.array([pt, (k - 2) * po, po])
        pb = np.array([po, (k - 2) * po, pt])
        greater = pa[0] * (pb[1] + pb[2]) + pa[1] * pb[2]
        equal = float(pa @ pb)
        return float(greater + equal / 2)


__all__.append("RandomizedResponse")
