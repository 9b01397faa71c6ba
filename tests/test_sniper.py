"""DP-Sniper (``epsaudit.sniper``) and K-ary randomized response (*Picture the Epsilon*, Appendix Table 5).

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

from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, StandardScaler
from sklearn.linear_model import LogisticRegression

from epsaudit import bounds
from epsaudit.mechanisms import ProductLaplace, RandomizedResponse, TextbookLaplace, calibrate, prototype_set, reachability_score
from epsaudit.audits.scorers import logistic_regression
from epsaudit.validation import ReusedRowsError
from epsaudit.sniper import (_LaplaceSource, _linear_parts, attack_cap, design_cap, dp_sniper, sniper_bound,
                             _sniper_threshold, split_budget)
from epsaudit.studies.sniper_duel import SniperTask, run_tasks, sniper_frame
from epsaudit.studies.synthetic import attack_certificates

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
    np.testing.assert_allclose(freq, m._output_probabilities(3), atol=4e-3)
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


def test_fast_laplace_sampler_is_the_float_safe_mechanism():
    mech = ProductLaplace(np.array([[0.0, 1.0, -2.0, 0.5], [1.0, 0.0, 0.0, 0.0]]), scale=0.7)
    source = _LaplaceSource(mech, 0, 1)
    x = source.draw(0, 50_000, np.random.default_rng(0))
    assert x.shape == (50_000, 4) and x.dtype == np.float64 and np.all(np.isfinite(x))
    # on the mechanism's grid (2**(floor(log2 0.7) - 20) = 2**-21), like ProductLaplace.sample
    assert mech.grid[0] == 2.0**-21
    np.testing.assert_array_equal(np.rint(x / mech.grid) * mech.grid, x)
    for j in range(4):
        res = stats.kstest(x[:, j], stats.laplace(loc=mech.prototypes[0, j], scale=0.7).cdf)
        assert res.pvalue > 1e-3, (j, res)
        # the same law as ProductLaplace.sample (two-sample test)
        assert stats.ks_2samp(x[:, j], mech.sample(0, 50_000, seed=1)[:, j]).pvalue > 1e-3
    # independent coordinates and signs: half the noise is negative
    assert abs(np.corrcoef(x[:, 0], x[:, 1])[0, 1]) < 0.02
    assert abs(np.mean(x[:, 0] < 0) - 0.5) < 5 * np.sqrt(0.25 / 50_000)
    assert source.features(x[:3]).dtype == np.float32


# ---------------------------------------------------------------------------------------------
# Threshold, rounding, cap
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("c", [0.01, 0.1, 0.37, 0.5, 0.999])
def test_threshold_hits_c_exactly_on_discrete_scores(c):
    scores = np.random.default_rng(5).integers(0, 6, size=1003).astype(float)  # heavy ties
    t, q = _sniper_threshold(scores, c)
    fired = np.sum(scores > t) + q * np.sum(scores == t)
    assert fired == pytest.approx(c * scores.size, abs=1e-9)
    assert 0.0 <= q < 1.0 and t in scores
    # the same from distinct values and their counts
    values, counts = np.unique(scores, return_counts=True)
    assert _sniper_threshold(values, c, counts=counts) == pytest.approx((t, q))


def test_threshold_when_every_score_ties_is_q_equal_c():
    assert _sniper_threshold(np.full(500, 0.25), 0.01) == (0.25, pytest.approx(0.01))
    # continuous scores: t is the (floor(cn) + 1)-th largest, q the leftover fraction
    s = np.arange(1000.0)
    t, q = _sniper_threshold(s, 0.0105)
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
    p = mech._output_probabilities(identity)
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
# Float safety
# ---------------------------------------------------------------------------------------------


def test_certificates_valid_with_non_representable_means():
    """1-D Laplace with means 0.3 and 0 (b = 0.3, exact epsilon 1): exact-score certificates above
    epsilon at most at the stated rate (confidence 0.8 for both directions), over 300 runs."""
    mech = ProductLaplace(np.array([[0.3], [0.0]]), scale=0.3)
    eps = mech.exact_epsilon(0, 1)
    assert eps == pytest.approx(1.0, rel=1e-15)
    runs, above, values = 300, 0, []
    for seed in range(runs):
        res = dp_sniper(mech, 0, 1, 6000, c=0.05, score_function=mech.exact_score(0, 1), confidence=0.8, seed=seed)
        above += any(r.value > eps + 1e-12 for r in res)
        values.append(res[0].value)
    tol = int(stats.binom.ppf(0.999, runs, 0.2))
    print(f"DP-Sniper, means 0.3 / 0: {runs} runs, {above} with a certificate above {eps}, tolerance {tol}, "
          f"median {np.median(values):.3f}")
    assert above <= tol
    assert np.median(values) > 0.5  # near-tight: a tail threshold where the ratio is exactly e^eps


def test_reachability_attack_certifies_the_textbook_mechanism_far_above_nominal():
    p = np.array([[0.3], [0.0]])
    textbook, grid = TextbookLaplace(p, 1.0), ProductLaplace(p, 1.0)
    out = attack_certificates(textbook, 0, 1, reachability_score(textbook, 0, 1), n=20_000, calls=100_000, seed=0)
    assert out["reserved"].value > 7.0  # log(0.8 / CP_upper(0 of 20000)) ~ 8.4
    assert out["sniper a->b"].value > 3.5 and out["sniper b->a"].value > 3.5  # cap log(1/c) = 4.6
    assert out["reserved"].settings["freshness"].startswith("not checked")
    fixed = attack_certificates(grid, 0, 1, reachability_score(grid, 0, 1), n=20_000, calls=100_000, seed=0)
    assert all(r.value == 0.0 for r in fixed.values())


# ---------------------------------------------------------------------------------------------
# Classifiers: the standardised default is folded into the linear fast path
# ---------------------------------------------------------------------------------------------


def test_pipeline_is_folded_into_one_linear_map():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, 6)) * [1e-3, 1.0, 50.0, 2.0, 1.0, 3.0] + [5.0, 0.0, -3.0, 1.0, 0.0, 2.0]
    y = ((x[:, 0] - 5.0) * 1e3 + (x[:, 2] + 3.0) / 50 + rng.normal(size=400) > 0).astype(int)
    assert 100 < y.sum() < 300
    for clf in (logistic_regression(), make_pipeline(StandardScaler(with_mean=False), LogisticRegression()),
                make_pipeline(StandardScaler(), StandardScaler(), LogisticRegression())):
        fitted = clf.fit(x, y)
        w, b0 = _linear_parts(fitted)
        np.testing.assert_allclose(x @ w + b0, fitted.decision_function(x), rtol=1e-10, atol=1e-10)
    assert _linear_parts(make_pipeline(FunctionTransformer(), LogisticRegression()).fit(x, y)) is None


def test_default_pipeline_fast_path_fires_like_its_probabilities():
    # the same fitted pipeline scored by folded log-odds (fast path) or by predict_proba (slow path,
    # forced by an identity step the fold does not know) fires on the same outputs
    mech = RandomizedResponse(16, 2.0)
    fast = dp_sniper(mech, 2, 9, 50_000, seed=7)
    slow_clf = make_pipeline(FunctionTransformer(), StandardScaler(), LogisticRegression(max_iter=1000))
    slow = dp_sniper(mech, 2, 9, 50_000, classifier=slow_clf, seed=7)
    for f, s_ in zip(fast, slow):
        for key in ("k_num", "k_den", "threshold_tied", "raw"):
            assert f.details[key] == s_.details[key], key
    assert fast[0].settings["test"] == "StandardScaler() -> LogisticRegression(max_iter=1000)"


# ---------------------------------------------------------------------------------------------
# Checked callables: score functions, mechanisms, reused rows
# ---------------------------------------------------------------------------------------------


def test_score_function_output_is_checked():
    mech = RandomizedResponse(4, 1.0)
    with pytest.raises(ValueError, match=r"score_function returned an array of shape \(4, 1\); expected shape \(4,\)"):
        dp_sniper(mech, 0, 1, 10_000, score_function=lambda x: x[:, :1])
    with pytest.raises(ValueError, match=r"score_function returned 1 NaN score\(s\) \(first at row 2"):
        dp_sniper(mech, 0, 1, 10_000, score_function=lambda x: np.where(x[:, 2] == 1, np.nan, x[:, 0]))
    with pytest.raises(ValueError, match="not numbers"):
        dp_sniper(mech, 0, 1, 10_000, score_function=lambda x: np.array(["a"] * len(x)))
    lap = ProductLaplace(np.array([[1.0], [0.0]]), 1.0)
    with pytest.raises(ValueError, match=r"score_function returned an array of shape \(\d+, 1\)"):
        dp_sniper(lap, 0, 1, 10_000, score_function=lambda x: x)


def test_infinite_scores_are_an_ordering_like_any_other():
    # +inf on a's category, -inf on b's, 0 elsewhere: the same attack as +1 / -1 / 0
    mech = RandomizedResponse(8, 2.0)
    finite = dp_sniper(mech, 0, 1, 40_000, score_function=lambda x: x[:, 0] - x[:, 1], seed=3)
    infinite = dp_sniper(mech, 0, 1, 40_000, score_function=lambda x: np.where(x[:, 0] == 1, np.inf, np.where(x[:, 1] == 1, -np.inf, 0.0)), seed=3)
    for f, i in zip(finite, infinite):
        assert (f.details["k_num"], f.details["k_den"], f.value) == (i.details["k_num"], i.details["k_den"], i.value)
    # b reports a's category with probability 1 / (e^2 + 7) = 0.069 > c: the threshold is +inf itself,
    # and the attack fires on ties at +inf with probability q = c / 0.069
    assert infinite[0].details["threshold"] == np.inf and finite[0].details["threshold"] == 1.0
    assert infinite[0].details["q"] == pytest.approx(finite[0].details["q"]) and 1.0 < infinite[0].value < 2.0


def test_callable_mechanism_outputs_are_checked():
    def complex_out(x, n, rng):
        return rng.normal(size=n) + 1j

    with pytest.raises(ValueError, match="not an array of real numbers"):
        dp_sniper(complex_out, "a", "b", 10_000)

    def two_args(n, rng):
        return rng.normal(size=n)

    with pytest.raises(ValueError, match=r"called as mechanism\(input, n, rng\)|mechanism\(input, n, rng\)"):
        dp_sniper(two_args, "a", "b", 10_000)

    def some_nan(x, n, rng):
        out = rng.normal(size=(n, 2))
        out[3, 1] = np.nan
        return out

    with pytest.raises(ValueError, match=r"NaN or infinite values \(1 in the training stage; first in row 3"):
        dp_sniper(some_nan, "a", "b", 10_000)


def test_callable_that_ignores_its_rng_is_refused():
    fixed = np.random.default_rng(0).normal(size=(100_000, 5))

    def stored(x, n, rng):  # ignores rng: every call returns the same rows
        return fixed[:n] + (1.0 if x == "a" else 0.0)

    with pytest.raises(ReusedRowsError, match=r"DP-Sniper: 1000 of 1000 rows of batch 1 of the training stage of "
                                              r"input 'a' repeat rows drawn earlier in the same stage, for training "
                                              r"of input 'a' \(1000 exact copies, 0 equal after L2-normalisation"):
        dp_sniper(stored, "a", "b", 40_000, batch_size=1000)

    def replay(x, n, rng):  # fresh training draws, then replays them
        if x not in replay.saved:
            replay.saved[x] = rng.normal(size=(n, 5)) + (1.0 if x == "a" else 0.0)
            return replay.saved[x]
        return replay.saved[x][:n]

    replay.saved = {}
    with pytest.raises(ReusedRowsError, match=r"DP-Sniper: 1000 of 1000 rows of batch 0 of the threshold stage of "
                                              r"input 'b' repeat rows drawn for training of input 'b' \(1000 exact "
                                              r"copies, 0 equal after L2-normalisation; first: row 0\)"):
        dp_sniper(replay, "a", "b", 40_000, batch_size=5000)  # 2000 training rows and 1000 threshold rows per input

    # rescaled copies are caught after L2-normalisation (d >= 4)

    def rescaled(x, n, rng):
        rescaled.calls += 1
        return fixed[:n] * (1.0 + rescaled.calls)

    rescaled.calls = 0
    with pytest.raises(ReusedRowsError, match=r"0 exact copies, 1000 equal after L2-normalisation"):
        dp_sniper(rescaled, "a", "b", 40_000, batch_size=1000, score_function=lambda x: x[:, 0])


def test_repeated_values_by_design_must_be_declared():
    def coin(x, n, rng):  # a discrete mechanism: outputs 0 / 1
        return (rng.random(n) < (0.7 if x == "a" else 0.3)).astype(float)

    with pytest.raises(ReusedRowsError, match="pass check_reuse=False"):
        dp_sniper(coin, "a", "b", 20_000)
    ab, ba = dp_sniper(coin, "a", "b", 20_000, check_reuse=False, c=0.3, seed=0)
    assert ab.settings["freshness"].startswith("not checked (check_reuse=False)")
    assert 0.4 < max(ab.value, ba.value) <= math.log(0.7 / 0.3) + 1e-12  # exact epsilon log(7/3) = 0.85

    def fresh(x, n, rng):
        return rng.laplace(1.0 if x == "a" else 0.0, 1.0, size=n)

    checked, _ = dp_sniper(fresh, "a", "b", 20_000, c=0.05, seed=0)
    assert checked.settings["freshness"].startswith("checked: no threshold or final row")
    own, _ = dp_sniper(RandomizedResponse(4, 1.0), 0, 1, 10_000, seed=0)
    assert own.settings["freshness"].startswith("not checked: the library's own mechanism")


# ---------------------------------------------------------------------------------------------
# Bad arguments
# ---------------------------------------------------------------------------------------------


def test_bad_arguments_raise_clear_errors():
    mech = RandomizedResponse(4, 1.0)
    for c in (0.0, 1.0, -0.1, 1.5, True):
        with pytest.raises(ValueError, match=r"c \(the attack's target firing probability\) must be in \(0, 1\)"):
            dp_sniper(mech, 0, 1, 10_000, c=c)
    with pytest.raises(ValueError, match="c .* must be in"):
        _sniper_threshold([1.0, 2.0], 0.0)
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
