"""The exact joint certificate: closed forms, its relation to the split bound, its p-value, bad input.

Validity by simulation at the least favourable points is in ``tests/test_joint_validity.py``.
"""

import numpy as np
import pytest
from scipy import stats

from epsaudit.bounds import certified_epsilon, clopper_pearson_epsilon, joint_epsilon, joint_mu, joint_pvalue


def logit(p):
    return float(np.log(p / (1 - p)))


@pytest.mark.parametrize("n, fp, fn, split, joint", [
    (10, 0, 0, 0.807, 1.823), (30, 0, 0, 2.034, 2.972), (100, 0, 0, 3.281, 4.194),
    (100, 1, 1, 2.854, 3.242), (100, 5, 5, 2.062, 2.216), (1000, 0, 0, 5.601, 6.503),
])
def test_issue_table_at_95_percent_pure_dp(n, fp, fn, split, joint):
    assert clopper_pearson_epsilon(fp, n, fn, n, 0.05, 0.0) == pytest.approx(split, abs=5e-4)
    assert joint_epsilon(fp, n, fn, n, 0.05) == pytest.approx(joint, abs=5e-4)


@pytest.mark.parametrize("n, alpha", [(5, 0.05), (30, 0.05), (100, 0.05), (100, 2e-4), (300, 1e-3)])
def test_zero_errors_reach_the_corner_limit(n, alpha):
    # the randomized-response corner makes zero errors with probability sigmoid(eps) ** 2n
    assert joint_epsilon(0, n, 0, n, alpha) == pytest.approx(logit(alpha ** (1 / (2 * n))), abs=1e-4)
    assert joint_epsilon(0, n, 0, n, alpha) <= logit(alpha ** (1 / (2 * n))) + 1e-9  # never above the limit
    assert joint_mu(0, n, 0, n, alpha) == pytest.approx(2 * stats.norm.ppf(alpha ** (1 / (2 * n))), abs=1e-3)


def test_zero_errors_with_delta_use_the_delta_corner():
    # corner p = q = (1 - delta) / (1 + e^eps): (1 - p)^(2n) = alpha
    n, alpha, delta = 100, 0.05, 1e-3
    p = 1 - alpha ** (1 / (2 * n))
    assert joint_epsilon(0, n, 0, n, alpha, delta) == pytest.approx(np.log((1 - delta) / p - 1), abs=1e-4)


def test_unequal_sizes_zero_errors_is_the_supremum_along_the_boundary():
    # no closed form: check against a fine grid of the boundary's tail (1 - p)^nb (1 - q(p))^na
    na, nb, alpha = 40, 160, 0.05
    eps = float(joint_epsilon(0, nb, 0, na, alpha))
    p = np.linspace(0, 1, 400_001)
    q = np.maximum(1 - np.exp(eps) * p, (1 - p) * np.exp(-eps))
    tail = float(np.max((1 - p) ** nb * (1 - q) ** na))
    # the certificate's proven limit: at most alpha at the certificate, within its 1e-3 of it
    assert alpha * (1 - 1e-3) <= tail <= alpha
    assert joint_epsilon(0, nb, 0, na, alpha) == pytest.approx(joint_epsilon(0, na, 0, nb, alpha), abs=1e-6)


def test_never_below_the_split_bound_and_monotone_in_the_counts():
    n, alpha = 16, 0.05
    fp, fn = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    joint = joint_epsilon(fp, n, fn, n, alpha)
    split = clopper_pearson_epsilon(fp, n, fn, n, alpha, 0.0)
    assert np.all(joint >= split - 1e-9)
    assert np.all(np.diff(joint, axis=0) <= 1e-7) and np.all(np.diff(joint, axis=1) <= 1e-7)
    assert np.allclose(joint, joint.T, atol=1e-6)  # equal sizes: a false positive costs what a false negative does


def test_small_tests_certify_where_the_split_bound_cannot():
    # 40 certificates at 95%: the split bound needs 11 rows per side, the joint test 5
    alpha = 0.05 / 40
    assert clopper_pearson_epsilon(0, 10, 0, 10, alpha, 0.0) == 0.0
    assert joint_epsilon(0, 10, 0, 10, alpha) == pytest.approx(logit(alpha ** (1 / 20)), abs=1e-4)
    assert joint_epsilon(0, 4, 0, 4, alpha) == 0.0 < joint_epsilon(0, 5, 0, 5, alpha)


def test_pvalue_is_the_corner_probability_and_grows_with_epsilon():
    assert joint_pvalue(0, 10, 0, 10, 1.0, 0.05) == pytest.approx((1 / (1 + np.exp(-1.0))) ** 20, rel=2e-4)
    values = [joint_pvalue(3, 50, 2, 50, e, 0.05) for e in (0.5, 1.0, 1.5, 2.0)]
    assert values == sorted(values)
    eps = float(joint_epsilon(3, 50, 2, 50, 0.05))
    assert joint_pvalue(3, 50, 2, 50, eps, 0.05) <= 0.05 < joint_pvalue(3, 50, 2, 50, eps + 1e-3, 0.05)


def test_dispatcher_and_rounding_against_the_certificate():
    assert certified_epsilon(0, 100, 0, 100, 0.05, 0.0) == pytest.approx(4.1936, abs=1e-4)
    # fractional counts (DP-Sniper's tie-breaking): errors rounded up
    assert joint_epsilon(0.5, 30, 0, 30, 0.05) == joint_epsilon(1, 30, 0, 30, 0.05)
    assert certified_epsilon(0, 30, 0.5, 30, 0.05, 0.0) == joint_epsilon(0, 30, 1, 30, 0.05)
    assert joint_epsilon(15, 30, 15, 30, 0.05) == 0.0


@pytest.mark.parametrize("args, message", [
    ((31, 30, 0, 30, 0.05), r"0 <= fp <= n_neg"),
    ((0, 30, -1, 30, 0.05), r"0 <= fn <= n_pos"),
    ((0, 0, 0, 30, 0.05), "must be >= 1"),
    ((0, 30.5, 0, 30, 0.05), "integers"),
    ((0, 30, 0, 30, 1.0), r"alpha must be in \(0, 1\)"),
    ((0, 30, 0, 30, float("nan")), "alpha must be finite"),
])
def test_bad_input_is_refused_with_its_name(args, message):
    with pytest.raises(ValueError, match=message):
        joint_epsilon(*args)


def test_bad_delta_and_epsilon():
    with pytest.raises(ValueError, match=r"delta must be in \[0, 1\)"):
        joint_epsilon(0, 30, 0, 30, 0.05, delta=1.0)
    with pytest.raises(ValueError, match="epsilon must be a finite number >= 0"):
        joint_pvalue(0, 30, 0, 30, -1.0, 0.05)
