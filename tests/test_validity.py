"""Statistical validity of the reserved-test certificate (SPEC section 1: certificates must be valid).

Mechanisms with exactly known epsilon are simulated; a certificate *violates* when its certified
epsilon exceeds the exact epsilon of its pair. A certificate at 95% may violate with probability at
most 5%; a Bonferroni family of m certificates may contain any violation with probability at most
5%. Each observed count is compared with the binomial tolerance: the 0.999 quantile of
Binomial(N, 0.05). A harness check shows the same comparison catches an invalid procedure.
"""

import numpy as np
import pytest
from scipy import stats

from epsaudit.audits import reserved_test_certificate
from epsaudit.benchmark import Setting, certify_setting, run
from epsaudit.bounds import roc_point_epsilon
from epsaudit.mechanisms import ProductLaplace

NOMINAL = 0.05


def tolerance(trials: int) -> int:
    """Largest violation count compatible with a rate <= 5% (one-sided binomial test at 0.001)."""
    return int(stats.binom.ppf(0.999, trials, NOMINAL))


def settings(mechanisms, epsilons, reps, n=30):
    return [Setting("dispersed", m, e, n, r, seed=100) for m in mechanisms for e in epsilons for r in range(reps)]


@pytest.fixture(scope="module")
def exact_test_certificates():
    grid = settings(("laplace", "gaussian"), (0.0, 0.5, 2.0), reps=5)
    single = run(grid, certify_setting, test="exact", n_certificates=1, progress=False, n_jobs=2)
    family = run(grid, certify_setting, test="exact", progress=False, n_jobs=2)  # m = 40 per setting
    return single, family


def test_single_certificates_exceed_exact_epsilon_at_most_5_percent(exact_test_certificates):
    single, _ = exact_test_certificates
    assert len(single) == 1200
    assert np.allclose(single["alpha_per_bound"], 0.025)
    violations = int(single["violation"].sum())
    print(f"single certificates: {len(single)} run, {violations} violations, tolerance {tolerance(len(single))}")
    assert violations <= tolerance(len(single))


def test_bonferroni_families_hold_together(exact_test_certificates):
    _, family = exact_test_certificates
    assert len(family) == 1200
    assert np.allclose(family["alpha_per_bound"], 0.05 / 80)
    keys = ["mechanism", "epsilon", "rep"]
    family_violated = family.groupby(keys)["violation"].any()
    assert len(family_violated) == 30
    print(f"families of 40: {len(family_violated)} run, {int(family_violated.sum())} with a violation, "
          f"tolerance {tolerance(len(family_violated))}")
    assert int(family_violated.sum()) <= tolerance(len(family_violated))


def test_learned_certificates_are_valid_at_the_null_and_small_epsilon():
    grid = settings(("laplace", "gaussian"), (0.0, 0.5), reps=2)
    learned = run(grid, certify_setting, test="logistic", n_certificates=1, progress=False, n_jobs=2)
    assert len(learned) == 320
    violations = int(learned["violation"].sum())
    print(f"learned certificates: {len(learned)} run, {violations} violations, tolerance {tolerance(len(learned))}")
    assert violations <= tolerance(len(learned))


def tight_laplace(reps: int, n: int, seed: int, procedure):
    """1-D Laplace pair with exact epsilon 1: the likelihood ratio is exactly e^1 in the tails,
    so a tail threshold makes the certificate nearly tight and violations possible."""
    mech = ProductLaplace(np.array([[1.0], [0.0]]), scale=1.0)
    assert mech.exact_epsilon(0, 1) == pytest.approx(1.0)
    score = mech.exact_score(0, 1)
    rng = np.random.default_rng(seed)
    values = []
    for r in range(reps):
        seeds = rng.integers(0, 2**32, size=4)
        dev_a, dev_b = mech.sample(0, n, seed=int(seeds[0])), mech.sample(1, n, seed=int(seeds[1]))
        test_a, test_b = mech.sample(0, n, seed=int(seeds[2])), mech.sample(1, n, seed=int(seeds[3]))
        values.append(procedure(dev_a, dev_b, test_a, test_b, score))
    return np.array(values)


def test_near_tight_certificates_stay_within_their_error_rate():
    certify = lambda da, db, ta, tb, s: reserved_test_certificate(  # noqa: E731
        da, db, ta, tb, score_function=s, delta=0.0).value
    values = tight_laplace(reps=1000, n=200, seed=1, procedure=certify)
    violations = int(np.sum(values > 1.0 + 1e-9))
    print(f"near-tight 1-D Laplace: 1000 run, {violations} violations, median bound {np.median(values):.3f}, "
          f"tolerance {tolerance(1000)}")
    assert np.median(values) > 0.5  # the test is powerful here, so validity is not trivial
    assert violations <= tolerance(1000)


def test_harness_catches_an_invalid_procedure():
    # plug-in ROC value with the threshold chosen on the test rows themselves: no confidence
    # correction, so it exceeds the exact epsilon far more often than 5%
    def plug_in(dev_a, dev_b, test_a, test_b, score):
        sa, sb = score(test_a), score(test_b)
        t = np.unique(np.r_[sa, sb])[:, None]
        return float(np.max(roc_point_epsilon((sa > t).mean(axis=1), (sb > t).mean(axis=1))))

    values = tight_laplace(reps=200, n=200, seed=2, procedure=plug_in)
    assert int(np.sum(values > 1.0 + 1e-9)) > tolerance(200)
