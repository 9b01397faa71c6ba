"""Closed-form values of the certificate and the epsilon conversions (the book's methods chapter; *Picture the Epsilon*, Tables 3 and 7)."""

import numpy as np
import pytest
from scipy import stats

from epsaudit.bounds import (
    bonferroni_alpha,
    certifiable_cap,
    certified_epsilon,
    clopper_pearson_epsilon,
    clopper_pearson_lower,
    clopper_pearson_upper,
    epsilon_from_mmd_hockey_stick,
    epsilon_from_mmd_tv_chain,
    roc_point_epsilon,
)
from epsaudit.bounds.conversions import _epsilon_from_tv as epsilon_from_tv

A40 = 0.05 / 40  # error level of each of 40 certificates reported together at 95%
CP = "clopper-pearson"  # the paper's split bound


@pytest.mark.parametrize(
    "tp, n, fp, expected",
    [
        (30, 30, 0, 1.277),  # zero errors, n = 30
        (29, 29, 0, 1.239),  # zero errors, n = 29
        (29, 30, 0, 1.192),  # one error, n = 30
        (28, 29, 0, 1.151),  # one error, n = 29
        (9, 9, 0, 0.0),  # n = 9 cannot certify
        (10, 10, 0, 0.0),  # n = 10 cannot certify
    ],
)
def test_certificate_closed_forms(tp, n, fp, expected):
    assert certified_epsilon(fp, n, n - tp, n, A40, 1e-5, bound=CP) == pytest.approx(expected, abs=5e-4)
    assert clopper_pearson_epsilon(fp, n, n - tp, n, A40, 1e-5) == certified_epsilon(fp, n, n - tp, n, A40, 1e-5, bound=CP)


def test_one_error_in_either_class_is_symmetric():
    # a false positive costs the same as a false negative
    for bound in ("joint", CP):
        one_fp = certified_epsilon(1, 30, 0, 30, A40, bound=bound)
        assert one_fp == pytest.approx(certified_epsilon(0, 30, 1, 30, A40, bound=bound), rel=1e-6)


def test_cap_at_n100():
    assert certifiable_cap(100, 100, 2e-4, 1e-5, bound=CP) == pytest.approx(2.338, abs=5e-4)
    assert bonferroni_alpha(250) == pytest.approx(2e-4)  # Table 7: 250 pair-pass certificates at 95%
    # the joint cap at the same setting: logit(2e-4 ** (1 / 200)) at delta 0, a little less at 1e-5
    closed = np.log(2e-4 ** (1 / 200) / (1 - 2e-4 ** (1 / 200)))
    assert certifiable_cap(100, 100, 2e-4, 0.0) == pytest.approx(closed, abs=1e-4)
    assert certifiable_cap(100, 100, 2e-4, 1e-5) == pytest.approx(3.135, abs=5e-4)


def test_bonferroni_alpha_values():
    assert bonferroni_alpha(40) == pytest.approx(A40)
    assert bonferroni_alpha(1, 0.9) == pytest.approx(0.1)
    with pytest.raises(ValueError, match="n_certificates"):
        bonferroni_alpha(0)
    with pytest.raises(ValueError, match="confidence"):
        bonferroni_alpha(3, 1.5)


def test_perfect_separation_gives_the_finite_cap():
    value = certified_epsilon(0, 50, 0, 50, 0.05, 0.0, bound=CP)
    assert np.isfinite(value) and value > 0
    assert value == pytest.approx(np.log((0.025 ** (1 / 50)) / (1 - 0.025 ** (1 / 50))))
    joint = certified_epsilon(0, 50, 0, 50, 0.05, 0.0)  # the corner mechanism's zero-error probability
    assert joint == pytest.approx(np.log((0.05 ** (1 / 100)) / (1 - 0.05 ** (1 / 100))), abs=1e-4)


def test_mirrored_direction_uses_tnr_and_fnr():
    # no false negatives but half the negatives above threshold: the TNR/FNR direction carries it
    a = 0.025
    tpr_lo, fpr_hi = clopper_pearson_lower(50, 50, a), clopper_pearson_upper(25, 50, a)
    direct, mirrored = np.log(tpr_lo / fpr_hi), np.log((1 - fpr_hi) / (1 - tpr_lo))
    assert mirrored > direct > 0
    assert certified_epsilon(25, 50, 0, 50, 2 * a, 0.0, bound=CP) == pytest.approx(mirrored, rel=1e-12)


def test_no_separation_certifies_zero():
    assert certified_epsilon(15, 30, 15, 30, 0.05, bound=CP) == 0.0
    assert certified_epsilon(15, 30, 15, 30, 0.05) == 0.0


def test_clopper_pearson_matches_scipy_binomtest():
    for k, n, a in [(0, 10, 0.05), (3, 10, 0.05), (10, 10, 0.01), (17, 40, 0.001)]:
        lo = stats.binomtest(k, n, alternative="greater").proportion_ci(1 - a).low
        hi = stats.binomtest(k, n, alternative="less").proportion_ci(1 - a).high
        assert clopper_pearson_lower(k, n, a) == pytest.approx(lo, abs=1e-12)
        assert clopper_pearson_upper(k, n, a) == pytest.approx(hi, abs=1e-12)


def test_clopper_pearson_rounds_fractional_counts_conservatively():
    assert clopper_pearson_lower(2.5, 10, 0.05) == clopper_pearson_lower(2, 10, 0.05)
    assert clopper_pearson_upper(2.5, 10, 0.05) == clopper_pearson_upper(3, 10, 0.05)


def test_clopper_pearson_rejects_bad_counts():
    with pytest.raises(ValueError, match="0 <= k <= n"):
        clopper_pearson_lower(11, 10, 0.05)
    with pytest.raises(ValueError, match="alpha"):
        clopper_pearson_upper(1, 10, 0.0)
    with pytest.raises(ValueError, match="n must be >= 1"):
        clopper_pearson_upper(0, 0, 0.05)


def test_roc_point_epsilon_conventions():
    tpr = np.array([0.0, 0.5, 1.0, 0.5, 0.8])
    fpr = np.array([0.0, 0.0, 0.5, 0.25, 0.2])
    eps = roc_point_epsilon(tpr, fpr)
    assert eps[0] == 0.0  # the (0, 0) corner: no evidence, log(1/1) from the mirrored term
    assert np.isinf(eps[1]) and np.isinf(eps[2])  # FPR = 0 with TPR > 0; TPR = 1 with FPR < 1
    assert eps[3] == pytest.approx(np.log(2.0))
    assert eps[4] == pytest.approx(np.log(4.0))  # max(log(0.8/0.2), log(0.8/0.2))


def test_tv_and_mmd_conversions():
    assert epsilon_from_tv(np.tanh(0.35)) == pytest.approx(0.7)
    assert epsilon_from_mmd_tv_chain(0.5) == pytest.approx(2 * np.arctanh(0.25))
    assert epsilon_from_mmd_hockey_stick(0.5) == pytest.approx(2 * np.arctanh(0.5 / np.sqrt(2)))
    assert epsilon_from_mmd_hockey_stick(0.5) > epsilon_from_mmd_tv_chain(0.5)
    assert np.isinf(epsilon_from_tv(1.0))


def test_bound_functions_refuse_bad_arguments():
    with pytest.raises(ValueError, match="delta"):
        certified_epsilon(0, 30, 0, 30, A40, delta=-0.1)
    with pytest.raises(ValueError, match="alpha"):
        certified_epsilon(0, 30, 0, 30, float("nan"))
    with pytest.raises(ValueError, match="finite"):
        certified_epsilon(0, 30, float("nan"), 30, A40)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        epsilon_from_tv(1.5)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        epsilon_from_tv(float("nan"))
    with pytest.raises(ValueError, match="integer"):
        bonferroni_alpha(2.5)
    with pytest.raises(ValueError, match="bound must be one of 'joint', 'clopper-pearson'"):
        certified_epsilon(0, 30, 0, 30, A40, bound="beta")


def test_planner_inverts_the_cap_exactly():
    from epsaudit.bounds import planned_epsilon, required_test_size

    # 2.338 is what 100 rows per side certify with the split bound in a family of 250; 99 rows cannot
    assert required_test_size(2.338, 2e-4, bound=CP) == 100
    assert certifiable_cap(99, 99, 2e-4, bound=CP) < 2.338 <= certifiable_cap(100, 100, 2e-4, bound=CP)
    # 40 certificates at 95%: 10 test rows certify nothing with the split bound, 11 something;
    # the joint test certifies something from 5 rows on
    alpha = bonferroni_alpha(40)
    assert required_test_size(0.0, alpha, bound=CP) == 11
    assert certifiable_cap(10, 10, alpha, bound=CP) == 0.0 < certifiable_cap(11, 11, alpha, bound=CP)
    assert required_test_size(0.0, alpha) == 5
    assert certifiable_cap(4, 4, alpha) == 0.0 < certifiable_cap(5, 5, alpha)
    # epsilon 3 at 95% with one certificate: 31 rows per side for the joint test, 76 for the split bound
    assert required_test_size(3.0, 0.05, 0.0) == 31 and required_test_size(3.0, 0.05, 0.0, bound=CP) == 76
    # an imperfect test needs more rows, and its counts are rounded against the certificate
    for bound, expected in (("joint", None), (CP, 76)):
        n = required_test_size(1.0, bonferroni_alpha(50), tpr=0.9, fpr=0.1, bound=bound)
        assert planned_epsilon(n - 1, bonferroni_alpha(50), tpr=0.9, fpr=0.1, bound=bound) < 1.0
        assert all(planned_epsilon(m, bonferroni_alpha(50), tpr=0.9, fpr=0.1, bound=bound) >= 1.0
                   for m in range(n, 2 * n + 1))  # the promise: every size from n to 2n
        assert expected is None or n == expected


def test_planner_checks_every_size_it_promises():
    from epsaudit.bounds import planned_epsilon, required_test_size

    # the case the old planner got wrong: it sampled every n // 50-th size and answered 156 although
    # 155 rows certify more than the target at the expected counts and some larger sizes less
    alpha = bonferroni_alpha(5)
    for bound in ("joint", CP):
        n = required_test_size(1.5, alpha, tpr=0.9, fpr=0.1, bound=bound)
        values = [planned_epsilon(m, alpha, tpr=0.9, fpr=0.1, bound=bound) for m in range(n - 1, 2 * n + 1)]
        assert values[0] < 1.5 and min(values[1:]) >= 1.5
    # epsilon 0 promises a bound above 0, never a bound of exactly 0
    n = required_test_size(0.0, alpha, tpr=0.9, fpr=0.1)
    assert min(planned_epsilon(m, alpha, tpr=0.9, fpr=0.1) for m in range(n, 2 * n + 1)) > 0
    assert planned_epsilon(n - 1, alpha, tpr=0.9, fpr=0.1) == 0


def test_planner_refuses_a_target_no_test_size_reaches():
    from epsaudit.bounds import required_test_size

    # TPR 0.9 and FPR 0.1 can never certify more than log(0.9 / 0.1) = 2.197
    with pytest.raises(ValueError, match=r"certifies at most 2\.197 .*epsilon 2\.5 is out of reach"):
        required_test_size(2.5, 1e-3, delta=0.0, tpr=0.9, fpr=0.1)
    with pytest.raises(ValueError, match="epsilon must be a finite number >= 0"):
        required_test_size(-1.0, 1e-3)


def test_every_bound_over_counts_takes_them_in_one_order():
    """(fp, n_neg, fn, n_pos): identity B's errors first, then A's, in every bound of epsaudit.bounds."""
    import inspect

    import epsaudit.bounds as bounds

    takes_counts = {}
    for name in bounds.__all__:
        obj = getattr(bounds, name)
        if callable(obj) and not inspect.isclass(obj):
            params = list(inspect.signature(obj).parameters)
            if {"fp", "fn", "tp"} & set(params):
                takes_counts[name] = params[:4]
    assert len(takes_counts) >= 8, sorted(takes_counts)
    assert {n: p for n, p in takes_counts.items() if p != ["fp", "n_neg", "fn", "n_pos"]} == {}
    # the order is what the values say: B's errors first
    assert certified_epsilon(3, 30, 0, 30, A40) == certified_epsilon(0, 30, 3, 30, A40)  # symmetric bound
    assert bounds.clopper_pearson_epsilon(0, 30, 30, 30, 0.05) == 0.0  # every A row missed
