"""Synthetic mechanisms with exactly known epsilon, for the known-epsilon benchmark.

*Picture the Epsilon* (Tables 4-6, Figures 2-3) calibrates the audit routes on mechanisms whose
privacy is known exactly. Each identity
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
* :class:`RandomizedResponse` -- K-ary randomized response, every pair exactly ``epsilon``
  (the DP-Sniper comparison, *Picture the Epsilon*, Table 5).

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
Streams come from :mod:`epsaudit.protocol`: prototypes from ``("prototypes", seed, geometry)``, the
outputs of identity ``i`` from ``("mechanism-draws", seed, i)``, so ``sample(i, n, s)`` and
``sample_groups(n, s)[i]`` are the same draw. ``None`` is refused so that no draw depends on
hidden global state.

Modules
-------
- :mod:`~epsaudit.mechanisms.base` -- :class:`Mechanism`, the shared base class, and the argument checks
  the mechanism modules share;
- :mod:`~epsaudit.mechanisms.prototypes` -- :func:`prototype_set`, :func:`distance_spread`;
- :mod:`~epsaudit.mechanisms.additive` -- :class:`ProductLaplace`, the Gaussians, :func:`output_grid`;
- :mod:`~epsaudit.mechanisms.calibration` -- :func:`calibrate`, :func:`benchmark_pairs`,
  :func:`reference_epsilon` and the benchmark's constants;
- :mod:`~epsaudit.mechanisms.randomized_response` -- :class:`RandomizedResponse`;
- :mod:`~epsaudit.mechanisms.textbook` -- :class:`TextbookLaplace`, :func:`laplace_noise_at`,
  :func:`reachability_score`.
"""

from __future__ import annotations

from .additive import GRID_BITS, GRID_ULPS, AnisotropicGaussian, IsotropicGaussian, ProductLaplace, output_grid
from .base import DEFAULT_DELTA, REPEAT_PROBABILITY, Mechanism
from .calibration import (
    ANISOTROPY_ORDERS,
    BENCHMARK_EPSILONS,
    BENCHMARK_SAMPLE_SIZES,
    MECHANISMS,
    N_AUDITED_PAIRS,
    anisotropic_variance_shape,
    benchmark_pairs,
    calibrate,
    reference_epsilon,
)
from .prototypes import GEOMETRIES, distance_spread, prototype_set
from .randomized_response import RandomizedResponse
from .textbook import TextbookLaplace, laplace_noise_at, reachability_score

__all__ = [
    "ANISOTROPY_ORDERS",
    "AnisotropicGaussian",
    "BENCHMARK_EPSILONS",
    "BENCHMARK_SAMPLE_SIZES",
    "DEFAULT_DELTA",
    "GEOMETRIES",
    "GRID_BITS",
    "GRID_ULPS",
    "IsotropicGaussian",
    "MECHANISMS",
    "Mechanism",
    "N_AUDITED_PAIRS",
    "ProductLaplace",
    "REPEAT_PROBABILITY",
    "RandomizedResponse",
    "TextbookLaplace",
    "anisotropic_variance_shape",
    "benchmark_pairs",
    "calibrate",
    "distance_spread",
    "laplace_noise_at",
    "output_grid",
    "prototype_set",
    "reachability_score",
    "reference_epsilon",
]
