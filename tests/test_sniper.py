"""DP-Sniper (``epsaudit.sniper``) and K-ary randomized response (SPEC section 4; paper 001 Table 5).

Validity is checked by simulation on mechanisms whose attack probabilities are known exactly;
the threshold, the conservative rounding and the closed-form cap against direct computations;
bad arguments against their error messages. Timing lives in ``benchmarks/bench_sniper.py``.
"""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest
from scipy import stats
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import roc_auc_score

from epsaudit import bounds
from epsaudit.mechanisms import ProductLaplace, RandomizedResponse, calibrate, prototype_set
from epsaudit.sniper import (
    SniperTask,
    _LaplaceSource,
    attack_cap,
    design_cap,
    dp_sniper,
    run_tasks,
    sniper_bound,
    sniper_frame,
    sniper_threshold,
    split_budget,
)

# ---------------------------------------------------------------------------------------------
# Randomized response
# ---------------------------------------------------------------------------------------------


def test_randomized_response_probabilities_and_exact_epsilon():
    m = RandomizedResponse(16, 2.0)
    assert m.p_true == pytest.approx(math.e**2 / (math.e**2 + 15), rel=1e-12)
    assert m.p_other == pytest.approx(1 / (math.e**2 + 15), rel=1e-12)
    assert math.log(m.p_true / m.p_other) == pytest.approx(2.0, abs=1e-12)
    assert m.exact_epsilon(3, 7) == 2.0 and m.exact_epsilon(5, 5) == 0.0
    codes = m.sample_codes(3, 200_000, seed=1)
    freq = np.bincount(codes, minlength=16) / codes.size
    np.testing.assert_allclose(freq, m.output_probabilities(3), atol=4e-3)
    np.testing.assert_array_equal(m.sample(3, 50, seed=2), m.encode(m.sample_codes(3, 50, seed=2)))
    assert RandomizedResponse(4, 0.0).null and not m.null
    # exact AUC against a brute-force computation from the three score levels
    sa, sb = m.exact_score(0, 1)(m.sample(0, 100_000, 3)), m.exact_score(0, 1)(m.sample(1, 100_000, 4))
    mc = roc_auc_score(np.r_[np.ones(sa.size), np.zeros(sb.size)], np.r_[sa, sb])  # ties count 1/2
    assert m.optimal_auc(0, 1) == pytest.approx(mc, abs=0.005)
    with pytest.raises(ValueError, match="n_categories"):
        RandomizedResponse(1, 1.0)
    with pytest.raises(ValueError, match="epsilon"):
        RandomizedResponse(4, -1.0)
    with pytest.raises(ValueError, match="codes"):
        m.encode(np.array([0, 16]))


def test_fast_laplace_sampler_has_the_laplace_law():
    mech = ProductLaplace(np.array([[0.0, 1.0, -2.0, 0.5], [1.0, 0.0, 0.0, 0.0]]), scale=0.7)
    x = _LaplaceSource(mech, 0, 1).draw(0, 50_000, np.random.default_rng(0))
    assert x.shape == (50_000, 4) and x.dtype == np.float32
    for j in range(4):
        res = stats.kstest(x[:, j], stats.laplace(loc=mech.prototypes[0, j], scale=0.7).cdf)
        assert res.pvalue > 1e-3, (j, res)
    # independent coordinates and signs
    assert abs(np.corrcoef(x[:, 0], x[:, 1])[0, 1]) < 0.02


# ---------------------------------------------------------------------------------------------
# Threshold, rounding, cap
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("c", [0.01, 0.1, 0.37, 0.5, 0.999])
def test_threshold_hits_c_exactly_on_discrete_scores(c):
    scores = np.random.default_rng(5).integers(0, 6, size=1003).astype(float)  # heavy ties
    t, q = sniper_threshold(scores, c)
    fired = np.sum(scores > t) + q * np.sum(scores == t)
    assert fired == pytest.approx(c * scores.size, abs=1e-9)
    assert 0.0 <= q < 1.0 and t in scores
    # the same from distinct values and their counts
    values, counts = np.unique(scores, return_counts=True)
    assert sniper_threshold(values, c, counts=counts) == pytest.approx((t, q))


def test_threshold_when_every_score_ties_is_q_equal_c():
    assert sniper_threshold(np.full(500, 0.25), 0.01) == (0.25, pytest.approx(0.01))
    # continuous scores: t is the (floor(cn) + 1)-th largest, q the leftover fraction
    s = np.arange(1000.0)
    t, q = sniper_threshold(s, 0.0105)
    assert t == 989.0 and q == pytest.approx(0.5)


def test_fractional_counts_are_rounded_conservatively():
    alpha = 0.0125
    out = sniper_bound(10.7, 1000, 3.2, 1000, alpha)
    assert out["num_lower"] == pytest.approx(float(bounds.clopper_pearson_lower(10, 1000, alpha)), rel=1e-12)
    assert out["den_upper"] == pytest.approx(float(bounds.clopper_pearson_upper(4, 1000, alpha)), rel=1e-12)
    # the original truncates the upper bound's count (int(3.2) = 3): a smaller, invalid upper bound
    truncated = float(bounds.clopper_pearson_upper(3, 1000, alpha))
    assert out["den_upper"] > truncated * 1.1
    # Clopper-Pearson against scipy's exact binomial interval
    ref = stats.binomtest(4, 1000).proportion_ci(1 - 2 * alpha, method="exact").high
    assert out["den_upper"] == pytest.approx(ref, rel=1e-9)
    assert out["raw"] == pytest.approx(math.log(out["num_lower"] / out["den_upper"]), rel=1e-12)
    assert out["certificate"] == max(0.0, out["raw"])


def test_c_floor_caps_the_bound_at_log_one_over_c():
    free = sniper_bound(1000, 1000, 0, 1000, 0.025)
    floored = sniper_bound(1000, 1000, 0, 1000, 0.025, c=0.01)
    assert floored["denominator"] == 0.01 and free["raw"] > math.log(100) + 0.5
    assert floored["raw"] == pytest.approx(math.log(floored["num_lower"] / 0.01)) and floored["raw"] < math.log(100)
    n = np.array([30, 100, 1000, 10**5, 10**7])
    cap = attack_cap(n, 0.0125, 0.01)
    np.testing.assert_allclose(cap, [sniper_bound(k, k, 0, k, 0.0125, 0.01)["raw"] for k in n], rtol=1e-10)
    assert np.all(np.diff(cap) > 0) and cap[-1] == pytest.approx(math.log(100), abs=1e-3)
    # zero errors at n = 30 and alpha = 0.0125: log(a^(1/30) / (1 - a^(1/30)))
    r = 0.0125 ** (1 / 30)
    assert attack_cap(30, 0.0125, 0.01) == pytest.approx(math.log(r / (1 - r)), rel=1e-12)
    assert np.all(design_cap(n, 0.0125, 0.01) <= cap + 1e-12)


def test_budget_split():
    b = split_budget(10**6)
    assert (b.train, b.threshold, b.final, b.calls) == (50_000, 25_000, 425_000, 10**6)
    capped = split_budget(6_500_000, max_train=100_000)
    assert capped.train == 100_000 and capped.calls == 6_500_000
    assert split_budget(120, (0.25, 0.25, 0.5)).final == 30
    assert split_budget(1000, train=False).train == 0


# ---------------------------------------------------------------------------------------------
# Validity by simulation
# ---------------------------------------------------------------------------------------------


def _attack_probability(mech: RandomizedResponse, identity: int, table: np.ndarray, t: float, q: float) -> float:
    p = mech.output_probabilities(identity)
    return float(p[table > t].sum() + q * p[table == t].sum())


@pytest.mark.parametrize("ties", ["draw", "expected"])
def test_bounds_hold_at_their_error_rate_on_randomized_response(ties):
    """Exact attack probabilities: each one-sided bound fails at most at its level.

    Ternary randomized response with the exact likelihood-ratio score: the attack fires on
    category ``a`` only (ties broken with q), so its population log ratio is exactly epsilon and a
    certificate exceeds epsilon only when a Clopper-Pearson bound fails.
    """
    eps, runs = 1.0, 300
    mech = RandomizedResponse(3, eps)
    table = mech.exact_score(0, 1)(np.eye(3))
    alpha = 0.2 / 4  # confidence 0.8, two certificates of two bounds each
    fails, above, point_above, values = 0, 0, 0, []
    for seed in range(runs):
        results = dp_sniper(mech, 0, 1, 4000, c=0.05, score_function=mech.exact_score(0, 1),
                            confidence=0.8, ties=ties, seed=seed)
        assert results[0].alpha_per_bound == pytest.approx(alpha)
        for res, sign, (num, den) in zip(results, (1, -1), ((0, 1), (1, 0))):
            d = res.details
            p_num = _attack_probability(mech, num, sign * table, d["threshold"], d["q"])
            p_den = _attack_probability(mech, den, sign * table, d["threshold"], d["q"])
            assert math.log(p_num / p_den) == pytest.approx(eps, abs=1e-9)
            fails += (d["num_lower"] > p_num) + (d["den_upper"] < p_den)
            point_above += d["p_num_hat"] > 0 and math.log(d["p_num_hat"] / max(d["p_den_hat"], 1e-300)) > eps
            values.append(res.value)
        above += any(r.value > eps + 1e-12 for r in results)
    n_bounds = 4 * runs
    assert fails / n_bounds <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / n_bounds), fails
    assert above / runs <= 0.2 + 3 * math.sqrt(0.2 * 0.8 / runs), above
    # the setting is tight: the point estimate exceeds epsilon about half the time, and the
    # certificates are far from vacuous, so an invalid procedure would be caught
    assert point_above / (2 * runs) > 0.3
    assert np.median(values) > 0.4


def test_learned_attack_is_valid_and_tight_on_one_dimensional_laplace():
    """1-D Laplace, b = 1, means 0 and 1: the learned threshold lies beyond both means, where the
    likelihood ratio is exactly e^eps, so certificates sit just below eps = 1."""
    mech = ProductLaplace(np.array([[1.0], [0.0]]), scale=1.0)
    values = []
    for seed in range(60):
        res = dp_sniper(mech, 0, 1, 20_000, c=0.05, confidence=0.8, seed=seed)
        values.append(res[0].value)
        assert res[0].details["threshold"] > 0
    values = np.array(values)
    assert np.mean(values > 1.0 + 1e-12) <= 0.1 + 3 * math.sqrt(0.1 * 0.9 / 60)
    assert 0.6 < np.median(values) < 1.0


def test_null_mechanism_certifies_nothing_much():
    mech = calibrate("laplace", prototype_set("dispersed", 4, 16, seed=0), 0.0)
    values = [r.value for seed in range(10) for r in dp_sniper(mech, 0, 1, 20_000, seed=seed)]
    assert sum(v > 0 for v in values) <= 2, values


# ---------------------------------------------------------------------------------------------
# Behaviour of the pipeline
# ---------------------------------------------------------------------------------------------


def test_both_directions_reproducible_certificates():
    mech = RandomizedResponse(16, 2.0)
    ab, ba = dp_sniper(mech, 2, 9, 50_000, seed=7)
    assert (ab.details["direction"], ba.details["direction"]) == ("a->b", "b->a")
    for r in (ab, ba):
        assert r.kind == "certificate" and r.route == "dp_sniper" and r.confidence == 0.95
        assert r.alpha_per_bound == pytest.approx(0.05 / 4) and r.delta == 0.0
        assert r.value == max(0.0, r.details["raw"]) and r.pair == (2, 9)
        assert 1.0 < r.value < 2.0  # exact epsilon 2
        assert r.details["calls"] == 50_000 and r.n == (r.details["n_final"],) * 2
    again = dp_sniper(mech, 2, 9, 50_000, seed=7)
    assert [r.details for r in again] == [ab.details, ba.details]
    other = dp_sniper(mech, 2, 9, 50_000, seed=8)
    assert other[0].details["k_num"] != ab.details["k_num"]


def test_ties_expected_mode_uses_fractional_counts_rounded_conservatively():
    mech = RandomizedResponse(16, 32.0)  # every reference output ties at the threshold
    for ties in ("draw", "expected"):
        ab, _ = dp_sniper(mech, 0, 1, 20_000, ties=ties, seed=3)
        d = ab.details
        assert d["q"] == pytest.approx(0.01) and d["threshold_tied"] == d["n_threshold"]
        if ties == "expected":
            assert d["k_den"] == pytest.approx(0.01 * d["n_final"])  # fractional: 85.0 of 8500
            assert d["den_upper"] == pytest.approx(
                float(bounds.clopper_pearson_upper(math.ceil(d["k_den"] - 1e-9), d["n_final"], ab.alpha_per_bound)))
        else:
            assert d["k_den"] == int(d["k_den"])
            assert abs(d["k_den"] - 0.01 * d["n_final"]) < 4 * math.sqrt(0.01 * d["n_final"])
        assert ab.value <= math.log(100)


def test_other_classifiers_and_callable_mechanisms():
    mech = RandomizedResponse(8, 3.0)
    rf = dp_sniper(mech, 0, 1, 20_000, classifier=RandomForestClassifier(n_estimators=10, random_state=0), seed=0)
    assert rf[0].value > 1.5 and "RandomForest" in rf[0].settings["test"]

    def laplace_1d(mean, n, rng):
        return rng.laplace(mean, 1.0, size=n)  # shape (n,) is accepted as d = 1

    res = dp_sniper(laplace_1d, 1.0, 0.0, 20_000, c=0.05, seed=0)
    assert 0.5 < res[0].value <= 1.0 + 1e-9


def test_streamed_batches_bound_memory():
    mech = calibrate("laplace", prototype_set("dispersed", 4, 512, seed=0), 8.0)
    tracemalloc.start()
    dp_sniper(mech, 0, 1, 200_000, max_train=1000, seed=0)  # 2e5 calls x 512 floats = 410 MB if held
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 40e6, peak


def test_rows_in_parallel_do_not_depend_on_n_jobs():
    tasks = [SniperTask(RandomizedResponse(16, eps), 0, 1, 20_000, seed=s, meta={"eps": eps})
             for s, eps in enumerate((0.5, 8.0))]
    serial, parallel = run_tasks(tasks, n_jobs=1), run_tasks(tasks, n_jobs=2)
    assert [[r.details for r in p] for p in serial] == [[r.details for r in p] for p in parallel]
    frame = sniper_frame(tasks, parallel)
    assert len(frame) == 4 and list(frame["eps"]) == [0.5, 0.5, 8.0, 8.0]
    assert list(frame["exact_epsilon"]) == [0.5, 0.5, 8.0, 8.0] and not frame["above_exact"].any()


# ---------------------------------------------------------------------------------------------
# Bad arguments
# ---------------------------------------------------------------------------------------------


def test_bad_arguments_raise_clear_errors():
    mech = RandomizedResponse(4, 1.0)
    for c in (0.0, 1.0, -0.1, 1.5, True):
        with pytest.raises(ValueError, match=r"c \(the attack's target firing probability\) must be in \(0, 1\)"):
            dp_sniper(mech, 0, 1, 10_000, c=c)
    with pytest.raises(ValueError, match="c .* must be in"):
        sniper_threshold([1.0, 2.0], 0.0)
    with pytest.raises(ValueError, match="too small to split"):
        dp_sniper(mech, 0, 1, 30)
    with pytest.raises(ValueError, match="split must be three fractions"):
        dp_sniper(mech, 0, 1, 10_000, split=(0.5, 0.5, 0.5))
    with pytest.raises(ValueError, match="confidence"):
        dp_sniper(mech, 0, 1, 10_000, confidence=1.0)
    with pytest.raises(ValueError, match="ties"):
        dp_sniper(mech, 0, 1, 10_000, ties="random")
    with pytest.raises(ValueError, match="same input"):
        dp_sniper(mech, 2, 2, 10_000)
    with pytest.raises(ValueError, match="not an identity"):
        dp_sniper(mech, 0, 4, 10_000)
    with pytest.raises(ValueError, match="seed"):
        dp_sniper(mech, 0, 1, 10_000, seed=None)
    with pytest.raises(ValueError, match="n_certificates"):
        dp_sniper(mech, 0, 1, 10_000, n_certificates=0)

    def mismatched(x, n, rng):
        return rng.normal(size=(n, 3 if x == "a" else 4))

    with pytest.raises(ValueError, match="mismatched shapes"):
        dp_sniper(mismatched, "a", "b", 10_000)

    def wrong_rows(x, n, rng):
        return rng.normal(size=(n + 1, 2))

    with pytest.raises(ValueError, match=r"shape \(n,\) or \(n, d\)"):
        dp_sniper(wrong_rows, "a", "b", 10_000)
    with pytest.raises(ValueError, match="mechanism must be"):
        dp_sniper("not a mechanism", 0, 1, 10_000)
