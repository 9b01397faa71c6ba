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

The worst-pair certificate (the largest of K Bonferroni certificates of the top development-ranked
pairs) is a lower bound on the *worst-case* pairwise epsilon: a family violates when it exceeds the
exact epsilon of the worst pair (``calibrate(...).worst_pair``); families are counted against the
same tolerance, and its power is checked where the worst pair stands out.
"""

import numpy as np
import pytest
from joblib import Parallel, delayed
from scipy import stats
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

from epsaudit.audits import reserved_test_certificate, reserved_test_pairs, worst_pair_certificate
from epsaudit.results import results_frame
from epsaudit.studies.synthetic import Setting, classifier, run
from epsaudit.bounds import bonferroni_alpha, roc_point_epsilon
from epsaudit.mechanisms import ProductLaplace, TextbookLaplace, calibrate, reachability_score

NOMINAL = 0.05


def certify_setting(setting, *, test="logistic", n_certificates=None):
    """Reserved-test certificates of one setting's pairs (n development and n fresh test rows per
    identity), each beside its pair's exact epsilon; ``n_certificates=1``: each on its own at 95%."""
    mechanism, pairs = setting.build()
    dev = mechanism.sample_groups(setting.n, seed=setting.key("dev"))
    held_out = mechanism.sample_groups(setting.n, seed=setting.key("test"))
    exact = test == "exact"
    options = dict(test_groups=held_out, delta=mechanism.delta, seed=setting.seed,
                   classifier=None if exact else classifier(test),
                   score_functions=mechanism.exact_score if exact else None,
                   check_reuse=not mechanism.repeated_outputs)
    if n_certificates == 1:
        results = [r for pair in pairs for r in reserved_test_pairs(dev, [pair], **options)]
    else:
        results = reserved_test_pairs(dev, pairs, n_certificates=n_certificates, **options)
    frame = results_frame(results).assign(**setting.fields())
    frame["exact_epsilon"] = mechanism.exact_epsilons(list(zip(frame["identity_a"], frame["identity_b"])))
    frame["violation"] = frame["value"] > frame["exact_epsilon"] + 1e-9
    return frame


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
    assert np.allclose(single["alpha_per_bound"], 0.05) and (single["bound"] == "joint").all()  # one joint test
    violations = int(single["violation"].sum())
    print(f"single certificates: {len(single)} run, {violations} violations, tolerance {tolerance(len(single))}")
    assert violations <= tolerance(len(single))


def test_bonferroni_families_hold_together(exact_test_certificates):
    _, family = exact_test_certificates
    assert len(family) == 1200
    assert np.allclose(family["alpha_per_bound"], 0.05 / 40)  # one joint test per pair of the family of 40
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


# ---------------------------------------------------------------------------------------------
# The worst-pair certificate: the largest of K certificates bounds the worst-case pairwise epsilon
# ---------------------------------------------------------------------------------------------

#: Two clusters on a line (product Laplace noise calibrated to epsilon 1): the 6 pairs across the
#: clusters all attain the worst-case epsilon, the 4 within a cluster have 0. The top-ranked pairs
#: are worst pairs, and in one dimension the exact likelihood ratio is e^1 on the tails, so a
#: certificate above the worst-case epsilon is a violation that can happen.
TWO_CLUSTERS = np.array([[0.0], [0.0], [1.0], [1.0], [1.0]])
#: One pair far apart (exact epsilon 3 after calibration), four identities in between (each pair with
#: a far identity about 1.5, the middle pairs below 0.5): the worst pair stands out.
STANDS_OUT_1D = np.array([[-1.0], [1.0], [0.0], [0.05], [-0.05], [0.1]])
STANDS_OUT_2D = np.array([[-1.0, 0.0], [1.0, 0.0], [0.0, 0.1], [0.0, -0.1], [0.1, 0.0], [-0.1, 0.0]])
WORST_K = 5


def worst_pair_family(mechanism: str, prototypes, epsilon: float, rep: int, *, n: int, exact: bool,
                      seed: int) -> dict:
    """One simulated family: calibrate, draw development and test rows on their own streams (with
    draw ids: one-dimensional grid outputs repeat by design), rank every pair on development rows
    (out-of-fold AUC, LDA: the ranking's classifier decides power only), certify the top K with the
    exact score (``exact``) or the learned test, and compare with the exact epsilons."""
    mech = calibrate(mechanism, prototypes, epsilon)
    pairs = [(a, b) for a in range(len(prototypes)) for b in range(a + 1, len(prototypes))]
    dev = mech.sample_groups(n, seed=("worst-pair-validity", seed, rep, "dev"))
    test = mech.sample_groups(n, seed=("worst-pair-validity", seed, rep, "test"))
    dev_ids = {i: [f"dev-{i}-{j}" for j in range(n)] for i in dev}
    test_ids = {i: [f"test-{i}-{j}" for j in range(n)] for i in test}
    delta = 0.0 if mechanism == "laplace" else mech.delta
    worst = worst_pair_certificate(dev, pairs, WORST_K, test_groups=test, classifier=LinearDiscriminantAnalysis(),
                                   folds=3, score_functions=mech.exact_score if exact else None, delta=delta, seed=rep,
                                   dev_ids=dev_ids, test_ids=test_ids)
    exact_eps = dict(zip(pairs, mech.exact_epsilons(pairs)))
    ordered = sorted(exact_eps.values())
    repeated = any(np.isin(test[i][:, 0], dev[i][:, 0]).any() for i in dev)  # equal values, different draws
    return {"value": worst.value, "worst_epsilon": exact_eps[mech.worst_pair], "second_epsilon": ordered[-2],
            "attained_by_worst": set(worst.pair) == set(mech.worst_pair), "rank": worst.result.statistics.rank,
            "own_violation": any(c.value > exact_eps[c.pair] + 1e-9 for c in worst.certificates),
            "alpha": worst.result.alpha_per_bound, "freshness": worst.result.settings["freshness"],
            "repeated_values": repeated}


def worst_pair_families(mechanism, prototypes, epsilon, reps, *, n, exact=True, seed=0):
    import pandas as pd

    rows = Parallel(n_jobs=2)(delayed(worst_pair_family)(mechanism, prototypes, epsilon, r, n=n, exact=exact,
                                                         seed=seed) for r in range(reps))
    return pd.DataFrame(rows)


def test_worst_pair_certificates_exceed_the_worst_case_epsilon_at_most_5_percent():
    families = worst_pair_families("laplace", TWO_CLUSTERS, 1.0, 200, n=200, seed=21)
    assert len(families) == 200 and (families["worst_epsilon"] == 1.0).all()
    assert np.allclose(families["alpha"], bonferroni_alpha(WORST_K)) and np.isclose(families["alpha"][0], 0.01)
    assert (families["freshness"] == "test draw ids checked against development draw ids (values not compared)").all()
    violations = int((families["value"] > families["worst_epsilon"] + 1e-9).sum())
    own = int(families["own_violation"].sum())  # the stronger event: some certificate above its own pair's epsilon
    repeated = int(families["repeated_values"].sum())
    print(f"worst-pair families (K = {WORST_K} of 10 candidates, n = 200): {len(families)} run, {violations} above the "
          f"worst-case epsilon, {own} with a certificate above its own pair's epsilon, tolerance "
          f"{tolerance(len(families))}; median bound {families['value'].median():.3f} (worst case 1); {repeated} "
          "families with a test value equal to a development value (fresh draws: the ids tell)")
    assert families["value"].median() > 0.4  # close enough to the worst case that a violation can happen
    assert repeated > 0  # a value check would have refused valid families
    assert violations <= own <= tolerance(len(families))


def test_worst_pair_certificate_has_power_when_the_worst_pair_stands_out():
    families = worst_pair_families("laplace", STANDS_OUT_1D, 3.0, 40, n=200, seed=22)
    worst, second = families["worst_epsilon"][0], families["second_epsilon"][0]
    assert worst == pytest.approx(3.0) and second == pytest.approx(1.65)
    certified = float((families["value"] > 0).mean())
    beyond = float((families["value"] > second).mean())  # more than any other pair could give
    attained = float(families["attained_by_worst"].mean())
    violations = int((families["value"] > worst + 1e-9).sum())
    print(f"worst pair standing out (Laplace, exact test): {len(families)} families, certified > 0 in {certified:.0%}, "
          f"above the second-largest pairwise epsilon {second:.3g} in {beyond:.0%}, attained by the worst pair in "
          f"{attained:.0%}; median bound {families['value'].median():.3f} (worst case {worst:g}); {violations} violations")
    assert certified == 1.0 and beyond >= 0.6 and attained >= 0.9
    assert violations <= tolerance(len(families))
    # a Gaussian mechanism with the learned test (its epsilon(1e-5) rests on far tails: the bound is lower)
    gauss = worst_pair_families("gaussian", STANDS_OUT_2D, 4.0, 20, n=200, exact=False, seed=23)
    certified = float((gauss["value"] > 0).mean())
    attained = float(gauss["attained_by_worst"].mean())
    print(f"worst pair standing out (Gaussian, learned test): {len(gauss)} families, certified > 0 in {certified:.0%}, "
          f"attained by the worst pair in {attained:.0%}, median bound {gauss['value'].median():.3f} "
          f"(worst case {gauss['worst_epsilon'][0]:g})")
    # 15 of 20 with the joint bound: it lifts every pair's certificate, so a far-identity pair at about
    # 1.5-2 beats the worst pair's noisier learned-test bound a little more often than the split bound let it
    assert certified >= 0.8 and attained >= 0.7
    assert int((gauss["value"] > gauss["worst_epsilon"] + 1e-9).sum()) <= tolerance(len(gauss))
