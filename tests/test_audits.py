"""Values of the four routes: null-calibration numbers (*Picture the Epsilon*, Table 4; the book's methods chapter), agreement
with direct reference computations, bad input and reproducibility."""

import ast
import itertools
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import gaussian_kde
from sklearn.ensemble import RandomForestClassifier

from epsaudit.audits import (
    audit_pairs,
    certificate_with_bound,
    gaussmech_epsilon,
    gaussmech_pairs,
    kde_lr_epsilon,
    kde_lr_pairs,
    mmd_tv_epsilon,
    mmd_tv_pairs,
    reserved_test_certificate,
    reserved_test_pairs,
    roc_oof_epsilon,
    roc_oof_pairs,
    split_dev_test,
)
from epsaudit.audits.mmd import _mmd_statistics as mmd_statistics
from epsaudit.audits.roc_oof import _roc_summary
from epsaudit.bounds import bonferroni_alpha
from epsaudit.protocol import identity_pairs
from epsaudit.results import results_frame
from epsaudit.audits.scorers import shrinkage_lda


def null_groups(noise: str, n: int, k: int = 20, d: int = 512, seed: int = 1):
    rng = np.random.default_rng(seed)
    return {i: getattr(rng, noise)(size=(n, d)) for i in range(k)}


# --- GaussMech ---------------------------------------------------------------------------------


@pytest.mark.parametrize("n, paper", [(30, 28.6), (100, 15.5), (300, 9.0)])
@pytest.mark.parametrize("noise", ["normal", "laplace"])
def test_gaussmech_null_matches_table4(noise, n, paper):
    groups = null_groups(noise, n)
    pairs = identity_pairs(groups, seed=0)[:40]
    median = np.median([r.value for r in gaussmech_pairs(groups, pairs)])
    assert median == pytest.approx(paper, rel=0.03)


def test_gaussmech_closed_form():
    a = np.array([[0.0, 0.0], [2.0, 0.0]])  # mean (1, 0), rms residual sqrt(mean([1,0,1,0])) = sqrt(.5)
    b = np.array([[1.0, 3.0], [1.0, 5.0]])  # mean (1, 4), rms residual sqrt(.5)
    result = gaussmech_epsilon(a, b, delta=1e-5)
    assert result.kind == "diagnostic"
    assert result.value == pytest.approx(4.0 * np.sqrt(2 * np.log(1.25e5)) / np.sqrt(0.5))
    assert gaussmech_pairs({"a": a, "b": b}, [("a", "b")])[0].value == pytest.approx(result.value)


# --- KDE-LR ------------------------------------------------------------------------------------


@pytest.mark.parametrize("n, band", [(30, (1100, 1400)), (100, (850, 1200)), (300, (650, 950))])
def test_kde_lr_null_within_spec_band(n, band):
    # Table 4 averages over the Gaussian and Laplace mechanisms; the band checked is that average's range
    medians = []
    for noise in ("normal", "laplace"):
        groups = null_groups(noise, n, k=6)
        pairs = identity_pairs(groups, seed=0)[:6]
        medians.append(np.median([r.value for r in kde_lr_pairs(groups, pairs, alphas=[0.01])]))
    assert band[0] <= np.mean(medians) <= band[1]
    assert medians[0] < medians[1]  # heavier Laplace tails give larger log-ratios


def scipy_kde_lr(a, b, alpha):
    """The paper's per-coordinate loop with scipy's gaussian_kde."""
    total = 0.0
    for j in range(a.shape[1]):
        ka, kb = gaussian_kde(a[:, j], bw_method="silverman"), gaussian_kde(b[:, j], bw_method="silverman")
        h = max(np.sqrt(ka.covariance[0, 0]), np.sqrt(kb.covariance[0, 0]))
        lo = min(a[:, j].min(), b[:, j].min()) - 3 * h
        hi = max(a[:, j].max(), b[:, j].max()) + 3 * h
        grid = np.linspace(lo, hi, 201)
        pa = np.maximum((1 - alpha) * ka(grid) + alpha / (hi - lo), 1e-12)
        pb = np.maximum((1 - alpha) * kb(grid) + alpha / (hi - lo), 1e-12)
        total += np.abs(np.log(pa) - np.log(pb)).max()
    return total


@pytest.mark.parametrize("alpha", [0.0, 0.01, 0.5])
def test_kde_lr_matches_scipy_loop(alpha):
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(40, 24)), rng.laplace(size=(35, 24)) * 0.7 + 0.3
    assert kde_lr_epsilon(a, b, alpha=alpha).value == pytest.approx(scipy_kde_lr(a, b, alpha), rel=1e-4)


def test_kde_lr_alpha_zero_exceeds_alpha_smoothed():
    groups = null_groups("normal", 50, k=3, d=64)
    res = kde_lr_pairs(groups, [(0, 1)], alphas=[0.0, 0.01])
    assert [r.settings["alpha"] for r in res] == [0.0, 0.01]
    assert res[0].value > 2 * res[1].value


def test_kde_lr_rejects_constant_coordinate():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(10, 4)), rng.normal(size=(10, 4))
    a[:, 2] = 1.0
    with pytest.raises(ValueError, match="coordinate 2 is constant"):
        kde_lr_epsilon(a, b)


# --- MMD-TV ------------------------------------------------------------------------------------


def test_mmd_unbiased_matches_double_loop():
    rng = np.random.default_rng(5)
    a, b = rng.normal(size=(7, 3)), rng.normal(size=(9, 3)) + 0.4
    pooled = np.vstack([a, b])
    dists = [np.linalg.norm(x - y) for x, y in itertools.combinations(pooled, 2)]
    s = np.median(dists)
    k = lambda x, y: np.exp(-np.sum((x - y) ** 2) / (2 * s * s))  # noqa: E731
    m, n = len(a), len(b)
    aa = sum(k(a[i], a[j]) for i in range(m) for j in range(m) if i != j) / (m * (m - 1))
    bb = sum(k(b[i], b[j]) for i in range(n) for j in range(n) if i != j) / (n * (n - 1))
    ab = sum(k(a[i], b[j]) for i in range(m) for j in range(n)) / (m * n)
    stats = mmd_statistics(a, b)
    assert stats["bandwidth"] == pytest.approx(s, rel=1e-12)
    assert stats["mmd2_u"] == pytest.approx(aa + bb - 2 * ab, rel=1e-10)
    result = mmd_tv_epsilon(a, b)
    assert result.kind == "estimate"
    assert result.value == pytest.approx(2 * np.arctanh(np.sqrt(max(aa + bb - 2 * ab, 0)) / 2), rel=1e-10)
    assert mmd_tv_pairs({"a": a, "b": b}, [("a", "b")])[0].details["mmd2_u"] == pytest.approx(stats["mmd2_u"], rel=1e-12)


def test_mmd_permutation_p_value_is_phipson_smyth():
    rng = np.random.default_rng(0)
    far = mmd_statistics(rng.normal(size=(20, 5)), rng.normal(size=(20, 5)) + 3.0, permutations=99, seed=1)
    assert far["p_value"] == pytest.approx(1 / 100)  # b = 0 exceedances: (0 + 1) / (99 + 1)
    # exact permutation distribution for a tiny case: 3 + 3 rows, all 20 labelings
    a, b = rng.normal(size=(3, 2)), rng.normal(size=(3, 2)) + 0.8
    observed = mmd_statistics(a, b)["mmd2_u"]
    pooled = np.vstack([a, b])
    exact = np.mean([
        mmd_statistics(pooled[list(s)], pooled[[i for i in range(6) if i not in s]])["mmd2_u"] >= observed - 1e-12
        for s in itertools.combinations(range(6), 3)
    ])
    p = mmd_statistics(a, b, permutations=20000, seed=2)["p_value"]
    assert p == pytest.approx(exact, abs=0.01)


def test_mmd_null_p_values_are_calibrated():
    groups = null_groups("normal", 20, k=41, d=8, seed=7)
    pairs = [(i, i + 1) for i in range(0, 40, 2)] * 1
    res = mmd_tv_pairs(groups, pairs, permutations=199, seed=3)
    rejections = sum(r.details["p_value"] <= 0.05 for r in res)
    assert rejections <= 4  # P(X >= 5) < 0.016 for X ~ Bin(20, 0.05)


# --- ROC-HT out-of-fold ------------------------------------------------------------------------


def test_roc_summary_on_hand_made_scores():
    y = np.array([1, 1, 1, 0, 0, 0])
    summary = _roc_summary(y, np.array([0.9, 0.8, 0.3, 0.4, 0.2, 0.1]))
    assert summary["auc"] == pytest.approx(8 / 9)
    assert summary["infinite"] and not summary["exact_corner"]  # (FPR, TPR) = (0, 2/3) exists
    assert summary["tv_witness"] == pytest.approx(2 / 3)
    separated = _roc_summary(y, np.array([0.9, 0.8, 0.7, 0.3, 0.2, 0.1]))
    assert separated["exact_corner"] and separated["auc"] == 1.0


def test_roc_oof_null_is_chance_but_often_infinite():
    groups = null_groups("normal", 30, k=10, d=512, seed=11)
    res = roc_oof_pairs(groups, identity_pairs(groups, seed=0)[:12])
    aucs = [r.details["auc"] for r in res]
    assert 0.4 < np.mean(aucs) < 0.6
    assert sum(np.isinf(r.value) for r in res) >= 6  # the paper: 29.3 of 40 at n = 30
    assert not any(r.details["exact_corner"] for r in res)
    assert all(r.kind == "estimate" for r in res)


def test_roc_oof_same_folds_for_any_classifier():
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=(25, 6)) + 1.5, rng.normal(size=(25, 6))
    lr = roc_oof_epsilon(a, b, seed=4)
    rf = roc_oof_epsilon(a, b, seed=4, classifier=RandomForestClassifier(n_estimators=20, random_state=0))
    assert lr.details["auc"] > 0.9 and rf.details["auc"] > 0.8
    assert lr.settings["seed"] == rf.settings["seed"] == 4
    assert roc_oof_epsilon(a, b, seed=4).details == lr.details


# --- ROC-HT reserved test ----------------------------------------------------------------------


def test_reserved_certificate_on_perfect_separation_is_the_cap():
    rng = np.random.default_rng(8)
    dev_a, dev_b = rng.normal(size=(30, 4)) + 10, rng.normal(size=(30, 4))
    test_a, test_b = rng.normal(size=(30, 4)) + 10, rng.normal(size=(30, 4))
    cert = reserved_test_certificate(dev_a, dev_b, test_a, test_b, n_certificates=40)
    assert cert.kind == "certificate" and cert.confidence == 0.95 and cert.bound == "joint"
    assert cert.alpha_per_bound == pytest.approx(0.05 / 40)  # one joint test per certificate
    assert cert.n == (30, 30) and cert.details["censored"]
    # zero errors: the joint cap logit(a ** (1 / 60)) less a little for delta = 1e-5 (the paper's bound: 1.277)
    assert cert.value == pytest.approx(2.138, abs=5e-4)
    assert cert.value == pytest.approx(cert.details["cap"], rel=1e-12)
    paper = reserved_test_certificate(dev_a, dev_b, test_a, test_b, n_certificates=40, bound="clopper-pearson")
    assert paper.value == pytest.approx(1.277, abs=5e-4) and paper.alpha_per_bound == pytest.approx(0.05 / 80)
    assert paper.bound == "clopper-pearson" and paper.correction.startswith("bonferroni: 2 one-sided")
    fixed = reserved_test_certificate(dev_a, dev_b, test_a, test_b, n_certificates=40,
                                      score_function=lambda x: x.sum(axis=1))
    assert fixed.value == pytest.approx(cert.value) and fixed.settings["test"] == "fixed score function"


def test_reserved_threshold_uses_development_data_only():
    # test rows are shifted so that a threshold tuned on them would differ; counts must follow
    # the threshold fixed on development data
    dev_a, dev_b = np.array([[1.0], [2.0], [3.0]]), np.array([[-1.0], [-2.0], [-3.0]])
    test_a, test_b = np.array([[0.1], [0.2], [-0.5]]), np.array([[-0.1], [0.3], [-0.2]])
    cert = reserved_test_certificate(dev_a, dev_b, test_a, test_b, score_function=lambda x: x[:, 0])
    assert cert.details["threshold"] == 0.0
    assert (cert.details["tp"], cert.details["fp"]) == (2, 1)


def test_reserved_pairs_family_correction_and_split():
    groups = null_groups("normal", 40, k=5, d=16)
    pairs = identity_pairs(groups)[:4]
    res = reserved_test_pairs(groups, pairs, seed=1)
    assert all(r.alpha_per_bound == pytest.approx(bonferroni_alpha(4)) for r in res)
    assert all(r.n == (12, 12) for r in res)  # 30% of 40 rows per class held out
    assert all("x 4 certificate" in r.correction for r in res)
    frame = results_frame(res)
    assert set(frame["kind"]) == {"certificate"}
    assert (frame["value"] <= frame["cap"]).all()
    dev_a, test_a, dev_b, test_b = split_dev_test(groups[0], groups[1], test_size=0.3, seed=0)
    assert (len(dev_a), len(test_a)) == (28, 12)


def test_shrinkage_lda_is_a_valid_scorer():
    rng = np.random.default_rng(9)
    scale = np.r_[np.full(4, 0.05), np.full(28, 5.0)]
    shift = np.r_[np.full(4, 0.2), np.zeros(28)]
    make = lambda n, mu: rng.normal(size=(n, 32)) * scale + mu  # noqa: E731
    lda = reserved_test_certificate(make(200, shift), make(200, 0), make(100, shift), make(100, 0),
                                    classifier=shrinkage_lda())
    assert lda.details["test_auc"] > 0.95 and lda.value > 0


# --- bad input and reproducibility -------------------------------------------------------------

GOOD = np.random.default_rng(0).normal(size=(10, 3))
ONE_PAIR_FUNCTIONS = [
    gaussmech_epsilon,
    kde_lr_epsilon,
    mmd_tv_epsilon,
    roc_oof_epsilon,
    lambda a, b: reserved_test_certificate(a, b, GOOD, GOOD),
    lambda a, b: reserved_test_certificate(GOOD, GOOD, a, b),
]
BATCH_FUNCTIONS = [gaussmech_pairs, kde_lr_pairs, mmd_tv_pairs, roc_oof_pairs, reserved_test_pairs, audit_pairs]


@pytest.mark.parametrize("fn", ONE_PAIR_FUNCTIONS)
@pytest.mark.parametrize(
    "bad, message",
    [
        (GOOD[:1], "1 row"),
        (np.empty((0, 3)), "empty"),
        (GOOD[:, :2], "different .*dimensions"),
        (np.where(np.eye(10, 3) > 0, np.nan, GOOD), "NaN/inf .* row 0, column 0"),
        (np.full((10, 3), np.inf), "NaN/inf"),
        (GOOD[:, 0], "two-dimensional"),
    ],
)
def test_one_pair_functions_reject_bad_input(fn, bad, message):
    with pytest.raises(ValueError, match=message):
        fn(bad, GOOD)


@pytest.mark.parametrize("fn", BATCH_FUNCTIONS)
def test_batch_functions_reject_bad_input(fn):
    groups = {"a": GOOD, "b": GOOD + 1.0}
    with pytest.raises(ValueError, match="names identity 'a' twice"):  # one class only
        fn(groups, [("a", "a")])
    with pytest.raises(ValueError, match="not in groups"):
        fn(groups, [("a", "z")])
    with pytest.raises(ValueError, match=r"groups\['b'\] has 1 row"):
        fn({"a": GOOD, "b": GOOD[:1]}, [("a", "b")])
    with pytest.raises(ValueError, match="dimension"):
        fn({"a": GOOD, "b": GOOD[:, :2]}, [("a", "b")])
    with pytest.raises(ValueError, match="pairs is empty"):
        fn(groups, [])


def test_option_errors():
    with pytest.raises(ValueError, match="delta"):
        gaussmech_epsilon(GOOD, GOOD + 1, delta=0.0)
    with pytest.raises(ValueError, match="alphas"):
        kde_lr_epsilon(GOOD, GOOD + 1, alpha=1.5)
    with pytest.raises(ValueError, match="bandwidth_scale"):
        mmd_tv_epsilon(GOOD, GOOD + 1, bandwidth_scale=0)
    with pytest.raises(ValueError, match="folds"):
        roc_oof_epsilon(GOOD[:3], GOOD[:3] + 1)
    with pytest.raises(ValueError, match="predict_proba nor decision_function"):
        roc_oof_epsilon(GOOD, GOOD + 1, classifier=object())
    with pytest.raises(ValueError, match="confidence"):
        reserved_test_certificate(GOOD, GOOD + 1, GOOD, GOOD + 1, confidence=1.0)
    with pytest.raises(ValueError, match="unknown route"):
        audit_pairs({"a": GOOD, "b": GOOD + 1}, [("a", "b")], routes=["gausmech"])


def test_same_seed_same_table_and_new_seed_new_table():
    groups = null_groups("laplace", 20, k=6, d=32, seed=4)
    pairs = identity_pairs(groups, seed=5)

    def table(seed):
        results = audit_pairs(groups, pairs, permutations=50, seed=seed)
        results += reserved_test_pairs(groups, pairs[:5], seed=seed)
        return results_frame(results)

    first, again = table(0), table(0)
    assert first.equals(again)
    other = table(1)
    assert not first["p_value"].equals(other["p_value"])
    parallel = results_frame(audit_pairs(groups, pairs, permutations=50, seed=0, n_jobs=2))
    assert parallel.equals(results_frame(audit_pairs(groups, pairs, permutations=50, seed=0)))
    assert identity_pairs(groups, seed=5) == pairs and identity_pairs(groups, seed=6) != pairs


def test_convergence_warnings_are_counted_not_printed(recwarn):
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(40, 20)) * 50 + 1, rng.normal(size=(40, 20)) * 50
    stopped = LogisticRegression(max_iter=2)
    cert = reserved_test_certificate(a[:30], b[:30], a[30:], b[30:], classifier=stopped)
    a, b = a[:30], b[:30]
    oof = roc_oof_epsilon(a, b, classifier=stopped)
    assert cert.details["convergence_warnings"] == 1
    assert oof.details["convergence_warnings"] == 5  # one per fold
    assert roc_oof_epsilon(a, b).details["convergence_warnings"] == 0
    assert not [w for w in recwarn if "converge" in str(w.message)]


def test_reserved_pairs_refuse_a_family_smaller_than_the_call():
    groups = null_groups("normal", 20, k=4, d=8)
    with pytest.raises(ValueError, match="Bonferroni family must include"):
        reserved_test_pairs(groups, [(0, 1), (2, 3)], n_certificates=1)


def test_certificate_with_bound_equals_certifying_again_with_that_bound():
    """One fit, the other bound: the same value, level, correction and cap as certifying again."""
    rng = np.random.default_rng(4)
    groups = {k: rng.normal(shift, 1.0, (60, 3)) for k, shift in (("A", 0.0), ("B", 0.8), ("C", 1.6))}
    tests = {k: rng.normal(v.mean(), 1.0, (40, 3)) for k, v in groups.items()}
    pairs = [("A", "B"), ("B", "C"), ("A", "C")]
    joint = reserved_test_pairs(groups, pairs, test_groups=tests, delta=1e-5)
    split = reserved_test_pairs(groups, pairs, test_groups=tests, delta=1e-5, bound="clopper-pearson")
    for j, s in zip(joint, split):
        other = certificate_with_bound(j, "clopper-pearson")
        assert other.value == pytest.approx(s.value, abs=1e-12)
        assert (other.bound, other.alpha_per_bound, other.correction) == (s.bound, s.alpha_per_bound, s.correction)
        assert other.details["cap"] == pytest.approx(s.details["cap"], abs=1e-12)
        assert (other.details["tp"], other.details["fp"]) == (j.details["tp"], j.details["fp"])
        back = certificate_with_bound(other, "joint")
        assert back.value == pytest.approx(j.value, abs=1e-12) and back.bound == "joint"
    assert joint[0].value > split[0].value  # the joint bound is the tighter one here


def test_certificate_with_bound_refuses_other_routes_and_bounds():
    rng = np.random.default_rng(0)
    a, b = rng.normal(2, 1, (40, 2)), rng.normal(-2, 1, (40, 2))
    cert = reserved_test_certificate(a[:20], b[:20], a[20:], b[20:])
    with pytest.raises(ValueError, match="bound must be one of"):
        certificate_with_bound(cert, "wilson")
    est = audit_pairs({"A": a, "B": b}, [("A", "B")], routes=("mmd_tv",))[0]
    with pytest.raises(ValueError, match="needs a reserved-test certificate .*got route 'mmd_tv', kind 'estimate'"):
        certificate_with_bound(est, "joint")


# --- Layout ------------------------------------------------------------------------------------

AUDITS = Path(__file__).resolve().parents[1] / "epsaudit" / "audits"


def private_imports(source: str) -> list[str]:
    """Private names (``_x``, not dunders) a module takes from another module: imported by name, or read as
    an attribute of an imported module."""
    tree = ast.parse(source)
    modules, found = set(), []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append(f"line {node.lineno}: from {'.' * node.level}{node.module or ''} import {alias.name}")
                modules.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            modules |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                and isinstance(node.value, ast.Name) and node.value.id in modules):
            found.append(f"line {node.lineno}: {node.value.id}.{node.attr}")
    return found


def test_the_private_import_check_finds_both_forms():
    source = "from .tradeoff import _lower_hull, epsilon_curve\nfrom . import mmd\nx = mmd._too_large(1, 2)\n"
    assert private_imports(source) == ["line 1: from .tradeoff import _lower_hull", "line 3: mmd._too_large"]
    assert private_imports("from __future__ import annotations\nfrom .mmd import mmd_tv_pairs\n") == []


@pytest.mark.parametrize("path", sorted(AUDITS.glob("*.py")), ids=lambda p: p.name)
def test_no_audit_module_uses_another_modules_private_names(path):
    assert private_imports(path.read_text(encoding="utf-8")) == []
