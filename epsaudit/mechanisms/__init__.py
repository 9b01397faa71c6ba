"""Synthetic mechanisms with exactly known epsilon, for the known-epsilon benchmark.

*Picture the Epsilon* (Tables 4-6, Figures 2-3). Identity ``i`` has a prototype ``mu_i`` on the unit sphere
in ``R^d`` and releases ``x = mu_i + noise``:

* :class:`ProductLaplace` -- ``Laplace(0, b)`` per coordinate: pure DP with exactly ``||mu_a - mu_b||_1 / b``;
* :class:`IsotropicGaussian` -- ``N(0, sigma^2 I)``: the analytic Gaussian mechanism's ``epsilon(delta)``
  (Balle & Wang 2018, Theorem 8) at ``D = ||mu_a - mu_b||_2 / sigma`` (:func:`epsaudit.bounds.gaussian_epsilon`);
* :class:`AnisotropicGaussian` -- ``N(0, S)``, ``S`` diagonal: the same at the Mahalanobis distance; its exact
  test scores along ``S^{-1} (mu_a - mu_b)``;
* :class:`RandomizedResponse` -- K-ary randomized response, every pair exactly ``epsilon`` (Table 5).

:func:`calibrate` sets the noise so that the *worst* pair has exactly the requested global epsilon
(``epsilon = 0``: the exact null); :func:`reference_epsilon` is the median exact pairwise epsilon over the
audited pairs. Outputs are *not* L2-normalised: post-processing would make the exact values upper bounds.

Float-safe outputs
------------------
``fl(mu + noise)`` in float64 is not epsilon-DP for any epsilon: some doubles are reachable from one mean
only (Mironov 2012, ACM CCS; :class:`TextbookLaplace` and :func:`reachability_score` reproduce the attack).
The mechanisms here release ``g * rint(fl(mu + noise) / g)``, per coordinate a power-of-two grid
``g_j = 2**(floor(log2(s_j)) - GRID_BITS)`` (``s_j`` the noise scale, ``GRID_BITS = 20``), coarsened to at
least ``2**22`` ulps of the largest output magnitude (:func:`~epsaudit.mechanisms.additive._output_grid`);
division and multiplication by ``g`` are exact.

* **Ideal discretised mechanism.** Rounding is post-processing. For Laplace noise a cell beyond both means
  has probability ratio exactly ``exp(|mu_aj - mu_bj| / b)``, so epsilon stays ``||mu_a - mu_b||_1 / b``.
  For Gaussian noise the privacy loss is linear and varies by at most
  ``V = sum_j |mu_aj - mu_bj| g_j / s_j**2`` within a cell, so the discretised ``epsilon(delta)`` lies in
  ``[eps_c - V, eps_c]`` (:meth:`Mechanism.discretisation_slack`; at most ``7.2e-5`` nats on the
  benchmark's pairs), ``eps_c`` the continuous value :meth:`Mechanism.exact_epsilon` reports.
* **float64 sampler against the ideal one.** numpy's uniforms lie on the lattice ``k * 2**-53``; rounding
  ``mu + noise`` moves a cell boundary by at most ``2**-31 |x| / s`` of a cell. For Laplace noise a cell at
  distance ``t`` from the mean has relative probability error at most about ``2**-30 exp(t / b)``: below
  ``1e-5`` within ``9 b`` of both means (probability ``1 - 1.2e-4``), and the supports can differ only
  beyond ``~21 b`` (probability ``1e-9`` per coordinate), far rarer than any audit here can observe.

Every random step takes a ``seed`` (``int``, stream key or :class:`numpy.random.Generator`; not ``None``):
prototypes from stream ``("prototypes", seed, geometry)``, identity ``i``'s outputs from
``("mechanism-draws", seed, i)`` (:mod:`epsaudit.protocol`).
"""

from __future__ import annotations

from .additive import GRID_BITS, AnisotropicGaussian, IsotropicGaussian, ProductLaplace
from .base import Mechanism
from .calibration import (BENCHMARK_EPSILONS, BENCHMARK_SAMPLE_SIZES, MECHANISMS, N_AUDITED_PAIRS, benchmark_pairs,
                          calibrate, reference_epsilon)
from .prototypes import GEOMETRIES, prototype_set
from .randomized_response import RandomizedResponse
from .textbook import TextbookLaplace, reachability_score

__all__ = [
    "AnisotropicGaussian", "BENCHMARK_EPSILONS", "BENCHMARK_SAMPLE_SIZES", "GEOMETRIES", "GRID_BITS",
    "IsotropicGaussian", "MECHANISMS", "Mechanism", "N_AUDITED_PAIRS", "ProductLaplace", "RandomizedResponse",
    "TextbookLaplace", "benchmark_pairs", "calibrate", "prototype_set", "reachability_score", "reference_epsilon",
]
