"""The analytic Gaussian mechanism in ``epsaudit.bounds`` (Balle & Wang 2018).

``_gaussian_delta`` is checked against direct numerical integration of the hockey-stick divergence
of P = N(mu, 1) from Q = N(0, 1); ``gaussian_epsilon`` and ``gaussian_mu_for_epsilon`` against
round trips and a hand-checked value.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from epsaudit import bounds
from epsaudit.bounds.gaussian import _gaussian_delta

# (epsilon, mu): small and large separations, epsilon from 0 up to the benchmark's 32.
DELTA_CASES = [
    (0.0, 0.3),
    (0.0, 1.0),
    (0.1, 0.2),
    (0.5, 1.0),
    (1.0, 1.0),
    (2.0, 3.0),
    (4.3772, 1.0),
    (5.0, 4.0),
    (8.0, 1.6660305978457177),
    (32.0, 4.879598344338152),
]


def _hockey_stick_direct(eps: float, mu: float) -> float:
    """``integral max(p(x) - e^eps q(x), 0) dx`` for p = N(mu, 1), q = N(0, 1), by quadrature.

    The integrand is continuous with one kink where p = e^eps q, i.e. at
    ``x0 = eps / mu + mu / 2``; quad is told about it. Outside ``[mu - 40, x0 + 40]`` the integrand
    is below 1e-300.
    """
    x0 = eps / mu + mu / 2.0
    e = math.exp(eps)

    def integrand(x):
        return max(stats.norm.pdf(x, loc=mu) - e * stats.norm.pdf(x), 0.0)

    lo, hi = min(mu, x0) - 40.0, max(mu, x0) + 40.0
    val, err = integrate.quad(integrand, lo, hi, points=[x0, mu], limit=500, epsabs=1e-14, epsrel=1e-12)
    assert err < 1e-11
    return val


def _privacy_loss_direct(eps: float, mu: float) -> float:
    """The same delta from the privacy-loss distribution: ``E_P[(1 - e^(eps - L))_+]``.

    Under P the privacy loss ``L = log p(X)/q(X)`` is ``N(mu^2 / 2, mu^2)``.
    """
    m, s = mu * mu / 2.0, mu

    def integrand(l):
        return (1.0 - math.exp(eps - l)) * stats.norm.pdf(l, loc=m, scale=s)

    val, err = integrate.quad(integrand, eps, m + 40 * s + eps, limit=500, epsabs=1e-14, epsrel=1e-12)
    assert err < 1e-11
    return val


@pytest.mark.parametrize("eps,mu", DELTA_CASES)
def test_gaussian_delta_matches_direct_integration(eps, mu):
    closed = float(_gaussian_delta(eps, mu))
    assert closed == pytest.approx(_hockey_stick_direct(eps, mu), abs=1e-9)
    assert closed == pytest.approx(_privacy_loss_direct(eps, mu), abs=1e-9)


def test_gaussian_delta_relative_accuracy_in_the_tail():
    # At the deltas that matter (1e-5) absolute agreement is not enough: check 1e-6 relative.
    for eps, mu in [(4.3772, 1.0), (8.0, 1.6660305978457177), (32.0, 4.879598344338152)]:
        direct = _hockey_stick_direct(eps, mu)
        assert 1e-7 < direct < 1e-4
        assert float(_gaussian_delta(eps, mu)) == pytest.approx(direct, rel=1e-6)


def test_gaussian_delta_special_values_and_monotonicity():
    # eps = 0: delta is the total variation distance 2 Phi(mu/2) - 1 (0.3829249 at mu = 1).
    assert float(_gaussian_delta(0.0, 1.0)) == pytest.approx(0.38292492254802624, abs=1e-12)
    assert float(_gaussian_delta(0.0, 1.0)) == pytest.approx(2 * stats.norm.cdf(0.5) - 1, abs=1e-14)
    # mu = 0: identical distributions, delta = 0 at every eps.
    assert np.all(_gaussian_delta(np.array([0.0, 1.0, 10.0]), 0.0) == 0.0)
    eps_grid = np.linspace(0.0, 10.0, 41)
    d_eps = _gaussian_delta(eps_grid, 2.0)
    assert np.all(np.diff(d_eps) < 0)  # decreasing in eps
    mu_grid = np.linspace(0.1, 6.0, 40)
    d_mu = _gaussian_delta(1.0, mu_grid)
    assert np.all(np.diff(d_mu) > 0)  # increasing in mu
    assert d_eps.shape == (41,) and d_mu.shape == (40,)


def test_gaussian_epsilon_hand_checked_point():
    eps = bounds.gaussian_epsilon(1.0, 1e-5)
    assert eps == pytest.approx(4.3772, abs=5e-5)
    # By hand with math.erfc: delta(4.3772, 1) = Phi(0.5 - 4.3772) - e^4.3772 Phi(-0.5 - 4.3772).
    phi = lambda z: 0.5 * math.erfc(-z / math.sqrt(2.0))  # noqa: E731
    assert phi(0.5 - 4.3772) - math.exp(4.3772) * phi(-0.5 - 4.3772) == pytest.approx(1e-5, rel=1e-4)
    # Tighter than the classical sufficient calibration sqrt(2 ln(1.25/delta)) / sigma = 4.845.
    assert eps < math.sqrt(2 * math.log(1.25 / 1e-5))


@pytest.mark.parametrize("delta", [1e-5, 1e-3, 0.1])
@pytest.mark.parametrize("mu", [0.05, 0.5, 1.0, 2.0, 5.0, 10.0])
def test_gaussian_epsilon_solves_delta_of_eps(mu, delta):
    eps = bounds.gaussian_epsilon(mu, delta)
    if _gaussian_delta(0.0, mu) <= delta:
        assert eps == 0.0
    else:
        assert eps > 0
        assert float(_gaussian_delta(eps, mu)) == pytest.approx(delta, rel=1e-8)
        # it is the smallest such eps: slightly smaller eps violates delta
        assert float(_gaussian_delta(eps * (1 - 1e-6), mu)) > delta


def test_gaussian_epsilon_is_zero_when_delta_covers_total_variation():
    # delta(0, mu) = 2 Phi(mu/2) - 1 ~ 0.399 mu for small mu.
    assert bounds.gaussian_epsilon(1e-5, 1e-5) == 0.0  # TV ~ 4.0e-6 <= 1e-5
    assert bounds.gaussian_epsilon(3e-5, 1e-5) > 0.0  # TV ~ 1.2e-5 > 1e-5
    assert bounds.gaussian_epsilon(0.0, 1e-5) == 0.0
    tv = 2 * stats.norm.cdf(0.25) - 1  # mu = 0.5
    assert bounds.gaussian_epsilon(0.5, tv * 1.0001) == 0.0
    assert bounds.gaussian_epsilon(0.5, tv * 0.9999) > 0.0


def test_gaussian_epsilon_vectorised_and_monotone():
    mus = np.array([0.1, 0.5, 1.0, 2.0, 4.0])
    out = bounds.gaussian_epsilon(mus, 1e-5)
    assert out.shape == (5,)
    assert np.all(np.diff(out) > 0)
    for m, e in zip(mus, out):
        assert e == bounds.gaussian_epsilon(float(m), 1e-5)


@pytest.mark.parametrize("eps", [0.1, 0.5, 2.0, 8.0, 16.0, 32.0])
@pytest.mark.parametrize("delta", [1e-5, 1e-2])
def test_mu_for_epsilon_inverts_gaussian_epsilon(eps, delta):
    mu = bounds.gaussian_mu_for_epsilon(eps, delta)
    assert float(_gaussian_delta(eps, mu)) == pytest.approx(delta, rel=1e-9)
    assert bounds.gaussian_epsilon(mu, delta) == pytest.approx(eps, rel=1e-9)
    assert bounds.gaussian_mu_for_epsilon(bounds.gaussian_epsilon(mu, delta), delta) == pytest.approx(mu, rel=1e-9)


def test_mu_for_epsilon_benchmark_values():
    # Standardised separations of the worst pair at the benchmark's requested epsilons.
    expected = {0.5: 0.14221055866926044, 2.0: 0.5015516891696564, 8.0: 1.6660305978457177, 32.0: 4.879598344338152}
    for eps, mu in expected.items():
        assert bounds.gaussian_mu_for_epsilon(eps, 1e-5) == pytest.approx(mu, rel=1e-9)


def test_bad_arguments_raise():
    with pytest.raises(ValueError, match="delta must be in"):
        bounds.gaussian_epsilon(1.0, 0.0)
    with pytest.raises(ValueError, match="delta must be in"):
        bounds.gaussian_epsilon(1.0, 1.0)
    with pytest.raises(ValueError, match="mu must be finite"):
        bounds.gaussian_epsilon(-1.0, 1e-5)
    with pytest.raises(ValueError, match="mu must be finite"):
        bounds.gaussian_epsilon(np.inf, 1e-5)
    with pytest.raises(ValueError, match="epsilon must be finite and > 0"):
        bounds.gaussian_mu_for_epsilon(0.0, 1e-5)
    with pytest.raises(ValueError, match="epsilon must be finite and > 0"):
        bounds.gaussian_mu_for_epsilon(np.nan, 1e-5)
    with pytest.raises(ValueError, match="delta must be in"):
        bounds.gaussian_mu_for_epsilon(1.0, 1.5)
