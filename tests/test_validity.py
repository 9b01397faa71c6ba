"""Statistical validity of the reserved-test certificate (a certificate must hold at its stated level).

Mechanisms with exactly known epsilon are simulated; a certificate *violates* when its certified
epsilon exceeds the exact epsilon of its pair. A certificate at 95% may violate with probability at
most 5%; a Bonferroni family of m certificates may contain any violation with probability at most
5%. Each observed count is compared with the binomial tolerance: the 0.999 quantile of
Binomial(N, 0.05). A harness check shows the same comparison catches an invalid procedure.

Float safety: the mechanisms release outputs on a grid (``epsaudit.mechanisms``, "Float-safe
outputs"), so certificates stay valid with means that are not exactly representable in binary
(0.3, 0.1, 1/3); the textbook float64 Laplace mechanism with the same means is caught certifying
far above its nominal epsilon (Mironov 2012).
"""

import numpy as np
import pytest
from scipy import stats

from epsaudit.audits import reserved_test_certificate
from epsaudit.studies.synthetic import Setting, certify_setting, run
from epsaudit.bounds import roc_point_epsilon
from epsaudit.mechanisms import ProductLaplace, TextbookLaplace, reachability_score

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
    # 1-D grid outputs repeat by design (a cell has probability up to 2**-21): the test rows are
    # fresh draws, so the value check of test rows against development rows is declared off
    certify = lambda da, db, ta, tb, s: reserved_test_certificate(  # noqa: E731
        da, db, ta, tb, score_function=s, delta=0.0, check_reuse=False).value
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


# ---------------------------------------------------------------------------------------------
# Float safety: means that are not exactly representable
# ---------------------------------------------------------------------------------------------

#: (label, mean of a, mean of b, Laplace scale): exact epsilon ||mu_a - mu_b||_1 / b between 1 and 2,
#: so the reserved test at n = 200 certifies well above 0 and a violation is possible.
NON_REPRESENTABLE = [
    ("1-D, means 0.3 and 0", [0.3], [0.0], 0.2),
    ("1-D, means 0.1 and 1/3", [0.1], [1 / 3], 0.15),
    ("3-D, means (0.1, 1/3, 0.7) and (0.3, 0, 0.2)", [0.1, 1 / 3, 0.7], [0.3, 0.0, 0.2], 0.6),
]


def reserved_runs(mech, score, runs: int, n: int, seed: int) -> np.ndarray:
    """``runs`` reserved-test certificates (95%, pure DP) of the pair (0, 1) with a fixed score.

    Each run draws n development and n test rows per input on independent streams (one
    ``sample_groups`` call per part), so rows repeat only by value, never by reuse.
    """
    values = np.empty(runs)
    for r in range(runs):
        dev = mech.sample_groups(n, seed=("validity-run", seed, r, "dev"))
        test = mech.sample_groups(n, seed=("validity-run", seed, r, "test"))
        values[r] = reserved_test_certificate(dev[0], dev[1], test[0], test[1], score_function=score, delta=0.0,
                                              check_reuse=False).value
    return values


@pytest.mark.parametrize("label, mu_a, mu_b, scale", NON_REPRESENTABLE, ids=[c[0] for c in NON_REPRESENTABLE])
def test_exact_score_certificates_valid_with_non_representable_means(label, mu_a, mu_b, scale):
    mech = ProductLaplace(np.array([mu_a, mu_b]), scale)
    eps = mech.exact_epsilon(0, 1)
    assert eps == pytest.approx(np.abs(np.subtract(mu_a, mu_b)).sum() / scale, rel=1e-15)
    values = reserved_runs(mech, mech.exact_score(0, 1), runs=300, n=200, seed=11)
    violations = int(np.sum(values > eps + 1e-9))
    print(f"{label}: eps {eps:.4f}, 300 runs, {violations} violations, tolerance {tolerance(300)}, "
          f"median certificate {np.median(values):.3f}")
    assert np.median(values) > 0.35 * eps  # powerful enough that validity is not trivial
    assert violations <= tolerance(300)


def test_harness_catches_the_textbook_float64_laplace():
    # the same pair released without the grid: outputs reachable from one mean only certify far
    # above the nominal epsilon in every run (Mironov's attack), and its naive log-ratio leaks too
    label, mu_a, mu_b, scale = NON_REPRESENTABLE[0]
    textbook = TextbookLaplace(np.array([mu_a, mu_b]), scale)
    nominal = textbook.nominal_epsilon(0, 1)
    assert nominal == pytest.approx(1.5, rel=1e-12) and textbook.exact_epsilon(0, 1) == np.inf
    attack = reserved_runs(textbook, reachability_score(textbook, 0, 1), runs=250, n=200, seed=12)
    print(f"textbook float64 Laplace, reachability score: 250 runs, {int(np.sum(attack > nominal))} above nominal, "
          f"median {np.median(attack):.3f}")
    assert np.sum(attack > nominal + 1e-9) > tolerance(250)
    assert np.median(attack) > nominal + 1.0
    grid = ProductLaplace(np.array([mu_a, mu_b]), scale)
    fixed = reserved_runs(grid, reachability_score(grid, 0, 1), runs=250, n=200, seed=12)
    assert np.all(fixed == 0.0)  # every grid output is reachable from both means
    # the textbook log-ratio |x - mu_b| - |x - mu_a| lands on different last bits under the two
    # means on its clipped tail: a threshold between them certifies above epsilon in most runs
    label, mu_a, mu_b, scale = NON_REPRESENTABLE[1]
    textbook = TextbookLaplace(np.array([mu_a, mu_b]), scale)
    naive = reserved_runs(textbook, textbook.exact_score(0, 1), runs=250, n=200, seed=11)
    above = int(np.sum(naive > textbook.nominal_epsilon(0, 1) + 1e-9))
    print(f"textbook float64 Laplace ({label}), its naive log-ratio: 250 runs, {above} above nominal")
    assert above > tolerance(250)
