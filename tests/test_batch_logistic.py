"""Batched logistic regressions (:mod:`epsaudit.audits._batched_logistic`): the same scores, AUCs and certificates as
scikit-learn's per-pair fits, on synthetic problems and on the committed condition tables. Timing is in
``benchmarks/bench_routes.py``, not here."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler, StandardScaler

from epsaudit.audits import (
    reserved_test_pairs,
    roc_oof_epsilon,
    roc_oof_pairs,
    select_pairs,
)
from epsaudit.audits.roc_oof import _oof_design, _out_of_fold_scores
from epsaudit.audits._batched_logistic import (
    Design,
    batched_scores,
    _logistic_spec as logistic_spec,
    _use_solver as use_solver,
    current_solver,
    resolve_solver,
)
from epsaudit.condition import audit_condition
from epsaudit.data import load_embeddings
from epsaudit.protocol import identity_pairs, split_identities, stream
from epsaudit.audits.scorers import paper_logistic_regression

DATA = Path(__file__).resolve().parents[1] / "data"
CONDITIONS = sorted(p.name for p in DATA.glob("*_*_*.csv") if p.stem.split("_")[-1] in ("none", "swap", "dp-pix")
                    and "donor" not in p.stem)
TOL = 1e-6


def gaussian_groups(n_groups: int, n: int, d: int, shift: float, seed: str) -> dict[int, np.ndarray]:
    rng = stream("test-batch-logistic", seed)
    return {k: rng.normal(shift * k, 1.0, size=(n + k % 3, d)) for k in range(n_groups)}


def same_values(a, b) -> bool:
    """Equal to TOL where finite; +inf (and NaN) exactly where the other is."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if not (np.array_equal(np.isinf(a), np.isinf(b)) and np.array_equal(np.isnan(a), np.isnan(b))):
        return False
    fin = np.isfinite(a)
    return bool(np.all(np.abs(a[fin] - b[fin]) <= TOL))


# -------------------------------------------------------------------------------------------------
# which estimators are batched, and the solver switch


def test_the_default_and_the_papers_logistic_regression_are_recognised_and_others_are_not():
    assert logistic_spec(None).standardize and logistic_spec(None).C == 1.0
    assert not logistic_spec(paper_logistic_regression()).standardize
    assert logistic_spec(LogisticRegression(C=0.5, tol=1e-6, max_iter=50)).C == 0.5
    for other in (LinearDiscriminantAnalysis(), LogisticRegression(solver="liblinear"),
                  LogisticRegression(class_weight="balanced"), LogisticRegression(fit_intercept=False),
                  make_pipeline(MinMaxScaler(), LogisticRegression()),
                  make_pipeline(StandardScaler(with_std=False), LogisticRegression())):
        assert logistic_spec(other) is None, other


def test_the_solver_switch_and_its_errors():
    assert current_solver() == (os.environ.get("EPSAUDIT_SOLVER") or "auto")
    with use_solver("sklearn"):
        assert current_solver() == "sklearn" and resolve_solver(None, None) is None
        with use_solver("auto"):
            assert resolve_solver(None, None) is not None
    assert resolve_solver("auto", LinearDiscriminantAnalysis()) is None
    with pytest.raises(ValueError, match="solver must be one of"):
        resolve_solver("newton", None)
    with pytest.raises(ValueError, match="solver='batched' fits only"):
        resolve_solver("batched", LinearDiscriminantAnalysis())
    with pytest.raises(ValueError, match="needs both labels"):
        batched_scores([Design(np.zeros((4, 2)), np.array([1, 1, 0, 0]), np.array([[1, 1, 0, 0]], bool),
                               ((np.arange(4),),))], logistic_spec(None))


@pytest.mark.parametrize("value, expected", [("sklearn", "sklearn"), ("", "auto"), ("newton", "must be one of")])
def test_the_environment_sets_the_default_solver(value, expected):
    code = "from epsaudit.audits._batched_logistic import current_solver; print(current_solver())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "EPSAUDIT_SOLVER": value})
    assert expected in (out.stdout if out.returncode == 0 else out.stderr)


# -------------------------------------------------------------------------------------------------
# the scores themselves, against scikit-learn fit by fit


@pytest.mark.parametrize("classifier", [None, paper_logistic_regression(), LogisticRegression(C=0.1, max_iter=1000)])
def test_batched_scores_equal_scikit_learns_fit_by_fit(classifier):
    groups = gaussian_groups(6, 30, 12, 0.3, "scores")
    groups[2][:, 5] = 0.7  # a constant coordinate: StandardScaler's scale 1
    spec = logistic_spec(classifier)
    pairs = [(0, 1), (2, 3), (1, 4), (5, 2)]
    designs = [_oof_design(groups[a], groups[b], 5, 0) for a, b in pairs]
    fitted = batched_scores(designs, spec)
    reference = spec.estimator()
    for design, (scores, warned, refits) in zip(designs, fitted):
        assert warned == 0 and len(scores) == 5
        for k, (test,) in enumerate(design.score_rows):
            rows = design.train[k]
            x = design.rows
            expected = reference.fit(x[rows], design.y[rows]).predict_proba(x[test])[:, 1]
            assert np.abs(scores[k][0] - expected).max() < 1e-10


def test_out_of_fold_values_do_not_depend_on_the_solver_or_on_n_jobs():
    groups = gaussian_groups(8, 25, 6, 0.15, "oof")
    pairs = identity_pairs(groups, seed=0)[:10]
    ref = roc_oof_pairs(groups, pairs, solver="sklearn")
    for kwargs in ({}, {"n_jobs": 2}, {"solver": "batched"}):
        res = roc_oof_pairs(groups, pairs, **kwargs)
        assert [r.statistics.auc for r in res] == pytest.approx([r.statistics.auc for r in ref], abs=TOL)
        assert same_values([r.value for r in res], [r.value for r in ref])
    a, b = groups[0], groups[1]
    assert roc_oof_epsilon(a, b).statistics.auc == roc_oof_epsilon(a, b, solver="sklearn").statistics.auc
    # a pair with too few rows for the folds is not computed, with the same reason either way
    small = {"A": groups[0], "B": groups[1][:3]}
    assert (roc_oof_pairs(small, [("A", "B")])[0].not_computed
            == roc_oof_pairs(small, [("A", "B")], solver="sklearn")[0].not_computed)
    np.testing.assert_allclose(_out_of_fold_scores(a, b), _oof(a, b), atol=1e-10)


def _oof(a, b) -> np.ndarray:
    design = _oof_design(a, b)
    (scores, _, _), = batched_scores([design], logistic_spec(None))
    out = np.empty(len(design.y))
    for k, (test,) in enumerate(design.score_rows):
        out[test] = scores[k][0]
    return out


# -------------------------------------------------------------------------------------------------
# the committed conditions


def _route_records(table, pairs_oof: int, certificates: int, solver: str):
    groups = table.groups(min_rows=5)
    pairs = identity_pairs(groups, seed=0)
    oof = roc_oof_pairs(groups, pairs[:pairs_oof], solver=solver)
    dev, test, _ = split_identities(groups, test_size=0.3, seed=0)
    selected, ranking = select_pairs(dev, pairs[:pairs_oof], certificates, solver=solver)
    certs = reserved_test_pairs(dev, selected, test_groups=test, solver=solver)
    return oof, ranking, certs


def test_one_condition_a_few_pairs_auc_values_and_certificates_match_scikit_learn():
    table = load_embeddings(DATA / "dlib_small_dp-pix.csv")
    batched = _route_records(table, 12, 3, "auto")
    reference = _route_records(table, 12, 3, "sklearn")
    (oof, ranking, certs), (oof_ref, ranking_ref, certs_ref) = batched, reference
    assert same_values([r.statistics.auc for r in oof], [r.statistics.auc for r in oof_ref])
    assert same_values([r.value for r in oof], [r.value for r in oof_ref])
    assert any(np.isfinite(r.value) for r in oof_ref)  # the dp-pix table has finite values too
    pd.testing.assert_frame_equal(ranking, ranking_ref, atol=TOL, rtol=0)
    assert [c.pair for c in certs] == [c.pair for c in certs_ref]
    for c, r in zip(certs, certs_ref):
        assert same_values([c.value, c.statistics.threshold, c.statistics.test_auc],
                           [r.value, r.statistics.threshold, r.statistics.test_auc])
        assert (c.statistics.tp, c.statistics.fp) == (r.statistics.tp, r.statistics.fp)


@pytest.mark.slow
@pytest.mark.parametrize("name", CONDITIONS)
def test_every_condition_audit_is_the_same_with_batched_and_per_pair_fits(name):
    """The CLI's audit (ROC-HT out-of-fold on 200 pairs, the development ranking, 5 certificates) of each
    committed table: identical pairs, AUCs and values to 1e-6, +inf where the other is, equal test counts."""
    table = load_embeddings(DATA / name)
    options = {"pairs": 0, "kde_pairs": 0, "seed": 0, "n_jobs": 1}
    batched = audit_condition(table, **options)
    with use_solver("sklearn"):
        reference = audit_condition(table, **options)
    assert len(CONDITIONS) == 12
    for frame, ref in ((batched.per_pair, reference.per_pair), (batched.selection, reference.selection)):
        assert list(frame.columns) == list(ref.columns) and len(frame) == len(ref)
        for column in frame.columns:
            if pd.api.types.is_float_dtype(ref[column]):
                assert same_values(frame[column], ref[column]), column
            else:
                assert frame[column].astype(str).tolist() == ref[column].astype(str).tolist(), column
