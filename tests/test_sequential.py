"""The anytime-valid sequential certificate (issue 25): its e-value, bound and running certificate.

The validity harness (500 runs x 1,000 rows per null point, the certificate checked after every
row, and the negative control of a re-peeked fixed-size certificate) is in
``tests/test_sequential_validity.py`` (slow-marked).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import special

from epsaudit.bounds import (SEQUENTIAL_BOUND, SequentialCertificate, joint_epsilon, sequential_epsilon, sequential_evalue,
                             sequential_prior, worst_pair_sequential, zero_error_sequential_epsilon)
from epsaudit.bounds.sequential import _Evaluator, _log_sup, sequential_log_evalue
from epsaudit.results import RESULT_BOUNDS, EpsilonResult
from epsaudit.validation import ReusedRowsError

PRIORS = ["B", "J", "Z", "P:0.05", "H:0.02", ("Z", "H:0.1")]


def grid_sup(x, n, y, m, eps, delta, points=401):
    """Brute force: the largest log-likelihood on a grid of the null region (every grid point is in it)."""
    k = math.exp(eps)
    p = np.linspace(0, 1, points)[:, None]
    q = np.linspace(0, 1, points)[None, :]
    inside = (1 - q <= k * p + delta) & (1 - p <= k * q + delta)
    ll = special.xlogy(x, p) + special.xlog1py(n - x, -p) + special.xlogy(y, q) + special.xlog1py(m - y, -q)
    # the two boundary segments themselves, finely (the grid alone may miss them)
    c = (1 - delta) / (1 + k)
    s = np.linspace(0, c, 4001)
    on = [special.xlogy(x, s) + special.xlog1py(n - x, -s) + special.xlogy(y, 1 - delta - k * s)
          + special.xlogy(m - y, delta + k * s),
          special.xlogy(y, s) + special.xlog1py(m - y, -s) + special.xlogy(x, 1 - delta - k * s)
          + special.xlogy(n - x, delta + k * s)]
    return max(float(np.max(np.where(inside, ll, -np.inf))), *(float(np.max(v)) for v in on))


def test_closed_form_supremum_is_at_least_a_brute_force_grid_maximum():
    rng = np.random.default_rng(25)
    gaps = []
    for _ in range(150):
        n, m = (int(v) for v in rng.integers(1, 80, 2))
        x, y = int(rng.integers(0, n + 1)), int(rng.integers(0, m + 1))
        eps, delta = float(rng.uniform(0, 5)), float(rng.choice([0.0, 1e-5, 0.01, 0.1]))
        closed = float(_log_sup(np.float64(x), np.float64(n), np.float64(y), np.float64(m), eps, delta))
        brute = grid_sup(x, n, y, m, eps, delta)
        assert closed >= brute - 1e-9 * (1 + abs(brute)), (x, n, y, m, eps, delta)
        gaps.append(closed - brute)
    assert np.median(gaps) < 1e-3  # and tight: the closed form is the supremum, not a loose upper limit


@pytest.mark.parametrize("prior", ["B", "J", "Z"])
def test_zero_error_closed_form(prior):
    n = np.array([5, 10, 30, 100, 300])
    expected = [math.log(s / (1 - s)) for s in np.exp((math.log(0.05) + 2 * sequential_prior(prior).log_predictive(0, n))
                                                       / (2 * n))]
    got = sequential_epsilon(0, n, 0, n, 0.05, prior=prior)
    np.testing.assert_allclose(got, np.maximum(expected, 0), atol=1e-9)
    np.testing.assert_allclose(zero_error_sequential_epsilon(n, 0.05, prior), got, atol=1e-9)


def test_evalue_is_non_increasing_in_epsilon():
    rng = np.random.default_rng(3)
    eps = np.linspace(0, 8, 161)
    for _ in range(200):
        n, m = (int(v) for v in rng.integers(0, 120, 2))
        x, y = int(rng.integers(0, n + 1)), int(rng.integers(0, m + 1))
        delta = float(rng.choice([0.0, 1e-5, 0.05]))
        prior = PRIORS[int(rng.integers(len(PRIORS)))]
        log_e = sequential_log_evalue(x, n, y, m, eps, delta, prior)
        assert np.all(np.diff(log_e) <= 1e-9 * (1 + np.abs(log_e[1:]))), (x, n, y, m, delta, prior)


def test_the_corner_alone_is_not_the_supremum_regression():
    """Null point (p, q) = (0, 1), a test that always says B: (0, 1) is in N(3). The e-value never exceeds 1,
    whereas dividing by the corner's likelihood alone grows without bound and rejects at once."""
    t = np.arange(1, 2001)
    n, m = t // 2, t - t // 2  # alternating sides, A first
    x, y = np.zeros_like(t), m  # no false positive, every positive missed
    log_e = sequential_log_evalue(x, n, y, m, 3.0)
    assert np.all(log_e <= 1e-12)
    assert float(sequential_epsilon(0, 1000, 1000, 1000, 0.05)) == 0.0
    pr = sequential_prior("B")
    c = 1 / (1 + math.exp(3.0))
    corner_only = pr.log_predictive(x, n) + pr.log_predictive(y, m) - (n * np.log1p(-c) + m * np.log(c))
    assert corner_only[-1] > 1000 and np.argmax(corner_only >= math.log(20)) < 10


def test_the_per_row_path_equals_the_vectorised_evalue():
    rng = np.random.default_rng(7)
    for delta in (0.0, 0.01, 0.2):
        ev = _Evaluator(*[sequential_prior("H:0.05")] * 2, delta)
        for _ in range(300):
            n, m = (int(v) for v in rng.integers(0, 90, 2))
            x, y = int(rng.integers(0, n + 1)), int(rng.integers(0, m + 1))
            eps = float(rng.uniform(0, 6))
            a, b = ev(x, n, y, m, eps), float(sequential_log_evalue(x, n, y, m, eps, delta, "H:0.05"))
            assert abs(a - b) <= 1e-10 * (1 + abs(b))


def test_bound_properties():
    assert float(sequential_epsilon(50, 100, 50, 100, 0.05)) == 0.0  # no evidence
    assert float(sequential_epsilon(0, 0, 0, 100, 0.05)) == 0.0  # one side alone says nothing
    zero = sequential_epsilon(0, 100, 0, 100, 0.05, delta=np.array([0.0, 1e-5, 0.01, 0.1]))
    assert np.all(np.diff(zero) < 0)  # more delta, less epsilon
    fixed = float(joint_epsilon(0, 100, 0, 100, 0.05))
    assert 0.2 < fixed - float(zero[0]) < 0.35  # the price of not fixing n: about 0.3 at 100 rows (3.90 vs 4.19)
    assert float(sequential_evalue(0, 10, 0, 10, 1.0)) == pytest.approx(math.exp(2 * float(
        sequential_prior("B").log_predictive(0, 10)) - 20 * math.log(1 / (1 + math.exp(-1.0)))), rel=1e-9)
    with pytest.raises(ValueError, match="alpha"):
        sequential_epsilon(0, 10, 0, 10, 1.5)
    with pytest.raises(ValueError, match="counts"):
        sequential_epsilon(11, 10, 0, 10, 0.05)
    with pytest.raises(ValueError, match="prior"):
        sequential_prior("Q")
    with pytest.raises(ValueError, match="planned"):
        sequential_prior("P:1.5")


def test_worst_pair_is_at_least_every_pair_at_alpha_over_k():
    fp, fn = np.array([0, 1, 3, 0]), np.array([0, 2, 1, 5])
    n = np.array([100, 120, 80, 150])
    worst = worst_pair_sequential(fp, n, fn, n, 0.05)
    each = sequential_epsilon(fp, n, fn, n, 0.05 / 4)
    assert worst >= each.max() - 1e-9
    assert worst <= float(sequential_epsilon(fp[0], n[0], fn[0], n[0], 0.05)) + 1e-9


def alternate(cert, erred, ids=None, start=0):
    for i, e in enumerate(erred):
        cert.update("AB"[(start + i) % 2], e, None if ids is None else ids[i])
    return cert


def test_running_bound_is_the_max_over_looks_and_batches_agree():
    rng = np.random.default_rng(11)
    erred = (rng.random(400) < 0.05).tolist()
    one = alternate(SequentialCertificate(prior="H:0.05"), erred, list(range(400)))
    batch = SequentialCertificate(prior="H:0.05")
    batch.update_many(["AB"[i % 2] for i in range(150)], erred[:150], range(150))
    batch.update_many(["AB"[i % 2] for i in range(150, 400)], erred[150:], range(150, 400))
    assert one.bound_path == batch.bound_path
    t = np.arange(1, 401)
    sides = np.array(["AB"[i % 2] for i in range(400)])
    err = np.array(erred)
    x, n = np.cumsum(err & (sides == "B")), np.cumsum(sides == "B")
    y, m = np.cumsum(err & (sides == "A")), np.cumsum(sides == "A")
    looks = sequential_epsilon(x, n, y, m, 0.05, prior="H:0.05")
    np.testing.assert_allclose(one.bound_path, np.maximum.accumulate(looks), atol=1e-8)
    assert len(t) == one.rows and one.bound == max(one.bound_path)


def test_stop_reasons():
    reached = alternate(SequentialCertificate(target=2.0, budget=200), [False] * 40)
    assert reached.stop_reason == "target reached" and reached.bound >= 2.0
    refuted = alternate(SequentialCertificate(claim=1.0), [False] * 40)
    assert refuted.stop_reason == "claim refuted" and refuted.bound > 1.0
    spent = alternate(SequentialCertificate(budget=10), [True, False] * 5)
    assert spent.stop_reason == "budget spent"
    futile = SequentialCertificate(target=3.0, budget=40)  # 20 + 20 zero-error rows certify at most ~2.4
    assert futile.stop_reason == "futile"  # known before the first row
    hopeful = alternate(SequentialCertificate(target=3.0, budget=400), [False] * 10)
    assert hopeful.stop_reason is None
    late = alternate(SequentialCertificate(target=3.0, budget=100), [True] * 30 + [False] * 20)
    assert late.stop_reason == "futile"


def test_prior_and_test_are_frozen_at_the_first_row():
    cert = SequentialCertificate(prior="B", test_hash="abc")
    cert.prior = "Z"  # before the first row: allowed
    digest = cert.prior_hash
    cert.update("A", False)
    with pytest.raises(ValueError, match="prior is fixed"):
        cert.prior = "B"
    with pytest.raises(ValueError, match="test is fixed"):
        cert.test_hash = "other"
    assert cert.prior_hash == digest and cert.record()["prior"] == ["Z", "Z"]


def test_freshness_of_draw_ids():
    cert = SequentialCertificate(dev_ids={"A": ["a0", "a1"], "B": ["b0"]})
    cert.update("A", False, "t0")
    with pytest.raises(ReusedRowsError, match="development draw"):
        cert.update("B", False, "a1")
    with pytest.raises(ReusedRowsError, match="occurs twice"):
        cert.update("B", False, "t0")
    with pytest.raises(ValueError, match="draw id"):
        cert.update("B", False)
    assert cert.rows == 1  # refused rows are not counted
    plain = SequentialCertificate()
    plain.update("A", False)
    with pytest.raises(ValueError, match="every test row or for none"):
        plain.update("B", False, "x")
    with pytest.raises(ValueError, match="side"):
        plain.update("C", False)


def test_result_and_record():
    cert = SequentialCertificate(alpha=0.05, family=10, target=1.0, test_hash="h", prior="H:0.02", delta=1e-5)
    alternate(cert, [False] * 30, [f"r{i}" for i in range(30)])
    r = cert.result(pair=("A", "B"))
    assert (r.kind, r.bound, r.route, r.n, r.pair) == ("certificate", SEQUENTIAL_BOUND, "sequential", (15, 15), ("A", "B"))
    assert r.confidence == 0.95 and r.alpha_per_bound == pytest.approx(0.005) and "x 10" in r.correction
    assert r.value == cert.bound and r.statistics.rows == 30 and r.settings["prior"] == "H:0.02/H:0.02"
    rec = json.loads(cert.to_json())
    for key in ("prior", "alpha", "family", "delta", "counts", "bound_path", "draw_ids", "test_hash", "prior_hash"):
        assert key in rec
    assert rec["family"] == 10 and len(rec["bound_path"]) == 30 and rec["draw_ids"][0] == "r0"
    assert SEQUENTIAL_BOUND in RESULT_BOUNDS
    with pytest.raises(ValueError, match="bound must be one of"):
        EpsilonResult(1.0, "certificate", "x", (5, 5), confidence=0.95, alpha_per_bound=0.05, correction="none",
                      bound="made-up")


def test_family_runs_each_pair_at_alpha_over_k_and_the_worst_pair_is_higher():
    certs = [SequentialCertificate(family=3) for _ in range(3)]
    for c, errors in zip(certs, ([False] * 60, [True] + [False] * 59, [False] * 60)):
        alternate(c, errors)
    for c in certs:
        assert c.alpha_per_pair == pytest.approx(0.05 / 3)
    assert certs[0].bound == pytest.approx(float(sequential_epsilon(0, 30, 0, 30, 0.05 / 3)), abs=1e-8)
    assert SequentialCertificate.worst_pair(certs) >= max(c.bound for c in certs)


# ---------------------------------------------------------------------------------------------
# Samplers in the loop


def test_certify_sampler_stops_and_records():
    from epsaudit.audits import MechanismSampler, certify_sampler, fit_sequential_test, reserved_test_certificate
    from epsaudit.mechanisms import RandomizedResponse

    rr = RandomizedResponse(4, 3.0)
    a, b = MechanismSampler(rr, 0, seed=1), MechanismSampler(rr, 1, seed=2)
    (xa, ia), (xb, ib) = a.draw(40), b.draw(40)
    test = fit_sequential_test(xa, xb, score_function=rr.exact_score(0, 1), dev_ids=(ia, ib), delta=0.0)
    reserved = reserved_test_certificate(xa, xb, xa[:5], xb[:5], score_function=rr.exact_score(0, 1), delta=0.0,
                                         check_reuse=False)
    assert test.threshold == reserved.statistics.threshold  # fitted the same way as the reserved test
    refuted = certify_sampler(a, b, test, claim=1.0, budget=2000, progress=True, allocation="random", seed=3)
    assert refuted.stop_reason == "claim refuted" and refuted.bound > 1.0
    rec = refuted.record()
    assert rec["test_hash"] == test.test_hash and len(rec["draw_ids"]) == refuted.rows == len(set(rec["draw_ids"]))
    assert not set(rec["draw_ids"]) & set(ia + ib)
    futile = certify_sampler(a, b, test, target=2.9, budget=60, progress=False)
    assert futile.stop_reason == "futile" and futile.rows == 0


def test_certify_sampler_refuses_reused_draws_and_bad_tests():
    from epsaudit.audits import certify_sampler, fit_sequential_test

    rng = np.random.default_rng(0)
    dev_a, dev_b = rng.normal(3, 1, (30, 2)), rng.normal(0, 1, (30, 2))
    test = fit_sequential_test(dev_a, dev_b, dev_ids=(range(30), range(30, 60)))
    reuse = iter(range(25, 100))
    with pytest.raises(ReusedRowsError, match="development draw"):
        certify_sampler(lambda: (rng.normal(3, 1, 2), next(reuse)), lambda: (rng.normal(0, 1, 2), next(reuse)), test,
                        target=1.0, budget=50, progress=False)
    with pytest.raises(ValueError, match="threshold"):
        certify_sampler(lambda: (np.zeros(2), 0), lambda: (np.zeros(2), 1), lambda x: x[:, 0], budget=5,
                        progress=False)
    fresh = iter(range(100, 10_000))
    cert = certify_sampler(lambda: (rng.normal(3, 1, 2), next(fresh)), lambda: (rng.normal(0, 1, 2), next(fresh)),
                           test, target=1.0, budget=400, progress=False)
    assert cert.stop_reason == "target reached" and cert.result().bound == "anytime-valid"


@pytest.mark.parametrize("delta", [0.0, 1e-5, 0.05])
@pytest.mark.parametrize("pattern", ["AB", "ABBB", "AAB"])
def test_zero_error_fast_path_equals_the_max_over_looks(delta, pattern):
    sides = np.array([pattern[i % len(pattern)] for i in range(600)])
    cert = SequentialCertificate(delta=delta)
    for s in sides:
        cert.update(str(s), False)
    n, m = np.cumsum(sides == "B"), np.cumsum(sides == "A")
    looks = sequential_epsilon(0, n, 0, m, 0.05, delta)
    np.testing.assert_allclose(cert.bound_path, np.maximum.accumulate(looks), atol=1e-8)


def test_family_worst_pair_path_is_the_max_over_looks():
    from epsaudit.bounds import SequentialFamily

    rng = np.random.default_rng(4)
    fam = SequentialFamily(["p0", "p1", "p2"], prior="H:0.05")
    counts = np.zeros((3, 4))  # fp, n_neg, fn, n_pos per pair
    looks = []
    for i in range(300):
        k = int(rng.integers(3))  # adaptive in spirit: any rule from the past would do
        side, erred = "AB"[int(rng.integers(2))], bool(rng.random() < 0.03 * (k + 1))
        fam.update(f"p{k}", side, erred)
        if side == "B":
            counts[k, :2] += (erred, 1)
        else:
            counts[k, 2:] += (erred, 1)
        looks.append(worst_pair_sequential(*counts.T, 0.05, prior="H:0.05"))
    np.testing.assert_allclose(fam.worst_path, np.maximum.accumulate(looks), atol=1e-8)
    assert fam.worst_bound >= max(fam.bounds.values()) - 1e-9
    assert all(c.alpha_per_pair == pytest.approx(0.05 / 3) for c in fam.certificates.values())
    with pytest.raises(ValueError, match="unknown pair"):
        fam.update("p9", "A", False)


@pytest.mark.parametrize("eps, alpha, fpr, fnr, delta, prior", [
    (2.0, 0.05, 0.09, 0.09, 0.0, "B"), (1.1, 0.00125, 0.12, 0.2, 1e-5, ("H:0.2", "H:0.3")),
    (3.0, 0.05, 0.0, 0.02, 0.0, "Z"), (1.5, 0.05, 0.12, 0.12, 0.0, "J")])
def test_stopping_rows_screen_finds_the_brute_force_first_hits(eps, alpha, fpr, fnr, delta, prior):
    # sequential_stopping_rows's path: chunks screened by box limits and halved; here the halving reads the counts
    # off fixed paths, and the first hit must be the one that evaluating log E at every row finds
    from epsaudit.bounds.sequential import _alternating, _first_hits, _hits, _log_m_table, _may_hit, _priors
    rows, thr, priors = 900, -math.log(alpha), _priors(prior)
    t = np.arange(1, rows + 1)
    err = np.random.default_rng(5).random((80, rows)) < np.where(t % 2 == 0, fpr, fnr)
    x = np.hstack([np.zeros((80, 1), int), np.cumsum(err & (t % 2 == 0), axis=1)])
    y = np.hstack([np.zeros((80, 1), int), np.cumsum(err & (t % 2 == 1), axis=1)])
    n, m = _alternating(t)
    brute = sequential_log_evalue(x[:, 1:], n, y[:, 1:], m, eps, delta, prior) >= thr
    want = np.where(brute.any(axis=1), t[np.argmax(brute, axis=1)], -1)
    assert (want > 0).sum() > 10 and (want < 0).sum() + (want > 300).sum() > 3  # hits early, and late or none
    log_m = [_log_m_table(p, rows) for p in priors]
    got, run = np.full(80, -1), np.arange(80)
    may = lambda *c: _may_hit(*c, eps, delta, log_m, thr)  # noqa: E731
    for a, b in ((0, 256), (256, 512), (512, rows)):
        first = _first_hits(a, b, x[run, a], x[run, b], y[run, a], y[run, b],
                            lambda r, a_, mid, b_, *_: (x[run[r], mid], y[run[r], mid]), may,
                            lambda tt, xx, yy: _hits(tt, xx, yy, may, eps, delta, priors, thr))
        got[run] = first
        run = run[first < 0]
    np.testing.assert_array_equal(got, want)


def _numpy_log_m(prior, size):
    """log M(k; n) from tables of lgamma: the box limit's numpy formula before it was compiled."""
    j = np.arange(size)
    parts = [(math.log(w), None) if a is None else
             (math.log(w) - special.betaln(a, b), special.gammaln(a + j), special.gammaln(b + j), special.gammaln(a + b + j))
             for w, a, b in prior.components]

    def log_m(k, n):
        terms = [np.where(k == 0, p[0], -np.inf) if p[1] is None else p[0] + p[1][k] + p[2][n - k] - p[3][n]
                 for p in parts]
        return np.logaddexp.reduce(terms) if len(terms) > 1 else terms[0]

    return log_m


def _numpy_box_bound(x, n, y, m, k, delta, log_m):
    """Upper limit on log E on any path from counts (x[0], n[0], y[0], m[0]) to (x[1], n[1], y[1], m[1]).

    For P in N, log M(x; n) M(y; m) - log L_P >= log E, each side's part convex in (x, n) (a log of an integral of
    exponentials linear in them): its largest value is at a corner of the box (+inf where it leaves x <= n). P: on
    S1, S2 the maximiser's closed form at delta 0 at the start's counts (any point serves), and the MLE if inside N.
    """
    own, other = np.stack([x[0], y[0]]), np.stack([y[0], x[0]])
    rows, rows_other = np.stack([n[0], m[0]]), np.stack([m[0], n[0]])
    a = own + rows_other - other
    a2, b2, c2 = rows + rows_other, a * (1 + 1 / k) + (rows - own) / k + other, a / k
    with np.errstate(divide="ignore", invalid="ignore"):
        root = np.where(c2 > 0, 2 * c2 / (b2 + np.sqrt(np.maximum(b2 * b2 - 4 * a2 * c2, 0.0))), 0.0)
        p = np.clip(root, 1e-300, (1 - delta) / (1 + k))  # p of S1's point, q of S2's
        mle = own / np.maximum(rows, 1)
        inside = (n[0] > 0) & (m[0] > 0) & (1 - mle[1] < k * mle[0] + delta) & (1 - mle[0] < k * mle[1] + delta)
        lp, l1p, lq, l1q = np.log(p), np.log1p(-p), np.log1p(-delta - k * p), np.log(delta + k * p)
        lm, l1m = np.log(mle), np.log1p(-mle)
    total = 0.0
    for s, (v0, v1), (r0, r1), log_ms in ((0, x, n, log_m[0]), (1, y, m, log_m[1])):
        v, r = np.stack([v0, v1, v0, v1])[:, None], np.stack([r0, r0, r1, r1])[:, None]
        num = np.where(v <= r, log_ms(np.minimum(v, r), r), np.inf)
        own_side = s == 0  # log P's rate on this side (x: p, y: q) at S1's point, S2's and the MLE
        la = np.stack([(lp if own_side else lq)[0], (lq if own_side else lp)[1], lm[s]])
        lb = np.stack([(l1p if own_side else l1q)[0], (l1q if own_side else l1p)[1], l1m[s]])
        with np.errstate(invalid="ignore"):
            lin = np.where(v > 0, v * la, 0.0) + np.where(r > v, (r - v) * lb, 0.0)
        total = total + (num - lin).max(axis=0)
    return np.minimum(total[:2].min(axis=0), np.where(inside, total[2], np.inf))


@pytest.mark.parametrize("prior", ["B", ("H:0.1", "H:0.2"), "Z", "J"])
def test_compiled_box_limit_is_the_numpy_formula(prior):
    """The screen of sequential_stopping_rows, compiled, against its numpy formula on random boxes."""
    from epsaudit.bounds.sequential import _box_bound, _log_m_table, _priors
    rng = np.random.default_rng(11)
    n0 = rng.integers(0, 200, 400)
    n1, m0 = n0 + rng.integers(0, 50, 400), rng.integers(0, 200, 400)
    m1 = m0 + rng.integers(0, 50, 400)
    x0, y0 = rng.binomial(n0, 0.1), rng.binomial(m0, 0.2)
    x, n, y, m = (x0, x0 + rng.binomial(n1 - n0, 0.1)), (n0, n1), (y0, y0 + rng.binomial(m1 - m0, 0.2)), (m0, m1)
    priors = _priors(prior)
    for k, delta in ((np.exp(1.5), 1e-5), (np.exp(0.3), 0.0), (np.exp(3.0), 0.05)):
        with np.errstate(all="ignore"):
            want = _numpy_box_bound(x, n, y, m, k, delta, [_numpy_log_m(p, 260) for p in priors])
        got = _box_bound(x, n, y, m, k, delta, [_log_m_table(p, 260) for p in priors])
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        assert np.isfinite(got).mean() > 0.5


@pytest.mark.parametrize("n, eps, alpha, fpr, fnr, delta", [
    (31, 3.0, 0.05, 0.02, 0.02, 0.0), (70, 2.0, 0.05, 0.0474, 0.0474, 0.0), (214, 3.0, 0.05, 0.02, 0.02, 0.0),
    (300, 1.1, 0.00125, 0.2, 0.3, 1e-5), (120, 1.0, 0.05, 0.3, 0.3, 0.0), (60, 2.0, 0.05, 0.05, 0.0, 0.0)])
def test_fixed_size_power_decides_every_draw_as_its_own_bound(n, eps, alpha, fpr, fnr, delta):
    # the power's shortcut (one bound decides the draws it dominates) against a bound per drawn pair of counts
    from epsaudit.bounds import fixed_size_power
    from epsaudit.protocol import generator
    rng = generator(0, "fixed-plan-power", n, fpr, fnr)
    x, y = rng.binomial(n, fpr, 400), rng.binomial(n, fnr, 400)
    want = np.mean(joint_epsilon(x, n, y, n, alpha, delta) >= eps)
    assert fixed_size_power(n, eps, alpha, fpr, fnr, delta, runs=400) == want


@pytest.mark.parametrize("runs", [0, -5])
def test_fixed_size_power_names_runs_below_one(runs):
    from epsaudit.bounds import fixed_size_power
    with pytest.raises(ValueError, match=f"runs .* at least 1, got {runs}"):
        fixed_size_power(30, 2.0, 0.05, 0.1, 0.1, runs=runs)
