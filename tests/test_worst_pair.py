"""The worst-pair certificate (:mod:`epsaudit.audits.worst_pair`): what it reports, how it is built
from the development-only ranking and the reserved tests, its errors, and its place in
:func:`epsaudit.condition.audit_condition` and the settings. Validity and power are simulated in
``tests/test_validity.py``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from epsaudit.audits import (certify_top_pairs, ranked_pairs, reserved_test_pairs, select_pairs,
                             worst_pair_certificate)
from epsaudit.bounds import bonferroni_alpha
from epsaudit.condition import SUMMARY_COLUMNS, AuditSettings, SettingsError, audit_condition
from epsaudit.mechanisms import ProductLaplace
from epsaudit.protocol import split_identities


def laplace_groups(n: int = 120, seed: int = 0):
    """Four identities on a line, product Laplace noise (scale 1): exact pairwise epsilon = distance."""
    mech = ProductLaplace([[0.0, 0.0], [0.4, 0.0], [2.5, 0.0], [0.2, 0.2]], scale=1.0)
    dev, test = mech.sample_groups(n, seed=("wp", seed, "dev")), mech.sample_groups(n, seed=("wp", seed, "test"))
    pairs = [(a, b) for a in range(4) for b in range(a + 1, 4)]
    return mech, dev, test, pairs


@pytest.fixture(scope="module")
def worst():
    mech, dev, test, pairs = laplace_groups()
    return mech, dev, test, pairs, worst_pair_certificate(dev, pairs, 3, test_groups=test, delta=0.0, seed=0)


def test_the_result_is_the_largest_of_k_bonferroni_certificates_of_the_top_ranked_pairs(worst):
    mech, dev, test, pairs, w = worst
    r = w.result
    assert (w.kind, r.kind, r.route) == ("certificate", "certificate", "worst_pair")
    assert len(w.certificates) == 3 and r.statistics.k == 3 and r.statistics.pairs_certified == 3
    assert r.statistics.candidates == 6 and r.statistics.pairs_not_computed == 0
    # the k certificates are the top of the development ranking, certified as one family of k
    assert [c.pair for c in w.certificates] == ranked_pairs(w.ranking)[:3]
    direct = reserved_test_pairs(dev, ranked_pairs(w.ranking)[:3], test_groups=test, delta=0.0, seed=0)
    assert [c.value for c in w.certificates] == [c.value for c in direct]
    assert r.alpha_per_bound == bonferroni_alpha(3) == pytest.approx(0.05 / 3)  # one joint test per pair
    assert r.bound == "joint" and all(c.bound == "joint" for c in w.certificates)
    assert all(c.alpha_per_bound == r.alpha_per_bound for c in w.certificates)
    assert "x 3 certificate(s); the largest of the 3" in r.correction
    # the value, its pair, its test sizes and its counts are those of the largest certificate
    best = max(w.certificates, key=lambda c: c.value)
    assert (w.value, w.pair, r.n) == (best.value, best.pair, best.n)
    assert (r.statistics.tp, r.statistics.fp, r.statistics.cap) == (best.statistics.tp, best.statistics.fp,
                                                                     best.statistics.cap)
    assert r.statistics.rank == 1 + [c.pair for c in w.certificates].index(best.pair)
    assert r.statistics.max_cap == max(c.statistics.cap for c in w.certificates)
    assert w.pair == (0, 2) and 0 < w.value <= mech.exact_epsilon(0, 2)  # the far pair stands out
    assert r.settings["claim"].startswith("lower bound on the worst-case pairwise epsilon")
    frame = w.frame()
    assert frame["rank"].tolist() == [1, 2, 3] and frame["attains"].sum() == 1
    assert str(w).startswith("worst_pair: epsilon = ")


def test_ties_go_to_the_best_ranked_pair_and_k_beyond_the_candidates_certifies_them_all():
    rng = np.random.default_rng(3)
    same = {k: rng.normal(size=(40, 3)) for k in "ABC"}  # identical distributions: every certificate 0 here
    test = {k: rng.normal(size=(40, 3)) for k in "ABC"}
    w = certify_top_pairs(same, test, [("A", "B"), ("B", "C"), ("A", "C")], k=10)
    assert w.result.statistics.pairs_certified == 3 and w.result.statistics.k == 10
    assert w.result.alpha_per_bound == bonferroni_alpha(3)
    values = [c.value for c in w.certificates]
    assert w.value == max(values)
    assert w.result.statistics.rank == 1 + values.index(max(values))  # the first of the largest


def test_split_mode_equals_an_explicit_split_and_splits_the_draw_ids_with_the_rows():
    mech, dev, _, pairs = laplace_groups(n=100, seed=1)
    auto = worst_pair_certificate(dev, pairs, 2, test_size=0.4, seed=5, delta=0.0)
    d, t, _ = split_identities(dev, test_size=0.4, seed=5)
    manual = worst_pair_certificate(d, pairs, 2, test_groups=t, seed=5, delta=0.0)
    assert (auto.value, auto.pair, auto.result.n) == (manual.value, manual.pair, manual.result.n)
    pd.testing.assert_frame_equal(auto.ranking, manual.ranking)
    ids = {k: [f"{k}-{i}" for i in range(100)] for k in dev}
    with_ids = worst_pair_certificate(dev, pairs, 2, test_size=0.4, seed=5, delta=0.0, dev_ids=ids)
    assert with_ids.value == auto.value
    assert with_ids.result.settings["freshness"].startswith("test draw ids")
    assert all(c.settings["freshness"].startswith("test draw ids") for c in with_ids.certificates)


def test_a_family_none_of_whose_pairs_can_be_certified_is_not_computed_with_the_reason():
    mech, dev, _, pairs = laplace_groups(n=60, seed=2)
    w = worst_pair_certificate(dev, pairs, 2, test_groups=dev, delta=0.0)  # test rows = development rows
    assert not w.result.computed and np.isnan(w.value) and w.kind == "certificate"
    assert "none of the 2 top-ranked pair(s) could be certified" in w.result.not_computed
    assert "repeat a development row" in w.result.not_computed
    empty = certify_top_pairs(dev, dev, [], k=3)
    assert not empty.result.computed and "no candidate pair" in empty.result.not_computed


@pytest.mark.parametrize("change, message", [
    (dict(k=0), "k must be an integer >= 1, got 0"),
    (dict(k=2.5), "k must be an integer >= 1"),
    (dict(candidates=[(0, 9)]), "names identity 9, which is not in groups"),
    (dict(confidence=1.0), "confidence must be in"),
    (dict(test_size=1.5), "test_size must be in"),
])
def test_bad_options_are_named(change, message):
    _, dev, _, pairs = laplace_groups(n=30)
    options = dict(k=2, candidates=pairs)
    options.update(change)
    with pytest.raises(ValueError, match=message):
        worst_pair_certificate(dev, options.pop("candidates"), options.pop("k"), **options)


def test_select_pairs_is_one_function_for_the_condition_audit_and_the_worst_pair():
    import inspect

    import epsaudit.condition as condition

    # the condition audit imports the worst pair's selection when it runs (it loads light for the CLI)
    source = inspect.getsource(condition._certify_selected)
    assert "from .audits.worst_pair import" in source and "select_pairs(" in source
    rng = np.random.default_rng(0)
    dev = {k: rng.normal(c, 1.0, size=(10, 2)) for k, c in (("A", 0.0), ("B", 4.0), ("C", 0.5))}
    selected, ranking = select_pairs(dev, [("A", "C"), ("A", "B"), ("B", "C")], k=1)
    assert selected == [("A", "B")] and ranked_pairs(ranking)[0] == ("A", "B")


# --- in the condition audit ----------------------------------------------------------------------


def condition_groups(seed: int = 0):
    rng = np.random.default_rng(seed)
    centres = {"far_a": -2.0, "far_b": 2.0, "m1": 0.0, "m2": 0.2, "m3": -0.2, "m4": 0.1}
    return {k: c * np.eye(6)[0] + rng.normal(size=(70, 6)) for k, c in centres.items()}


CHEAP = dict(pairs=0, kde_pairs=0, roc_pairs=0, selection_pool=15, seed=0, n_jobs=1)


@pytest.fixture(scope="module")
def audits():
    groups = condition_groups()
    return groups, audit_condition(groups, certificates=2, **CHEAP), audit_condition(groups, certificates=2,
                                                                                     worst_pair=4, **CHEAP)


def test_audit_condition_reports_the_worst_pair_row_and_keeps_everything_else(audits):
    groups, plain, worst = audits
    assert plain.worst_pair is None and "worst_pair" not in set(plain.summary["route"])
    assert "worst_pair_selected" not in plain.selection and "worst_pair" not in plain.to_dict()
    # the certificates of the audit do not change when the worst pair is added
    certs = lambda a: a.per_pair[a.per_pair["route"] == "roc_reserved"]  # noqa: E731
    pd.testing.assert_frame_equal(certs(plain).reset_index(drop=True),
                                  certs(worst)[certs(plain).columns].reset_index(drop=True), check_dtype=False)
    assert plain.selection["selected"].tolist() == worst.selection["selected"].tolist()
    assert worst.selection["worst_pair_selected"].sum() == 4
    # the summary row
    s = worst.summary
    assert tuple(s.columns) == SUMMARY_COLUMNS and s["route"].tolist()[-1] == "worst_pair"
    row = s.iloc[-1]
    w = worst.worst_pair.result
    assert (row["kind"], row["statistic"], row["pairs"]) == ("certificate", "worst-case lower bound", 4)
    assert row["value"] == pytest.approx(w.value) and (row["identity_a"], row["identity_b"]) == w.pair
    assert (row["n_test_a"], row["n_test_b"]) == w.n and row["alpha_per_bound"] == pytest.approx(0.05 / 4)
    assert row["cap"] == pytest.approx(w.statistics.max_cap)
    assert set(w.pair) == {"far_a", "far_b"}
    assert w.value > 0.5
    # the top 4 of the same development ranking, certified as a family of 4
    top = worst.selection[worst.selection["worst_pair_selected"]]
    assert [c.pair for c in worst.worst_pair.certificates] == list(zip(top["identity_a"], top["identity_b"]))
    per_pair = worst.per_pair[worst.per_pair["route"] == "worst_pair"]
    assert len(per_pair) == 1 and per_pair["value"].iloc[0] == w.value
    assert worst.counts["worst_pair_certificates"] == 4 and worst.settings["worst_pair"] == 4
    record = worst.to_dict()["worst_pair"]
    assert record["k"] == 4 and len(record["certificates"]) == 4 and record["value"] == w.value
    assert sum(c["attains"] for c in record["certificates"]) == 1
    note = worst.certificate_notes()[0]
    assert "worst-pair certificate: with 95% confidence the worst-case pairwise epsilon is >= " in note
    assert "the largest of 4 reserved-test certificate(s)" in note


def test_audit_condition_worst_pair_alone_and_with_the_size_aware_ranking():
    groups = condition_groups(1)
    alone = audit_condition(groups, certificates=0, worst_pair=3, prefer_certifiable=True, **CHEAP)
    assert alone.counts["certificates"] == 0 and alone.worst_pair.result.statistics.k == 3
    assert "test_cap" in alone.selection and not alone.selection["selected"].any()
    assert alone.summary["route"].tolist() == ["worst_pair"]


def test_worst_pair_setting_and_flag():
    assert AuditSettings().worst_pair == 0 and AuditSettings(worst_pair=5).cli_args() == ["--worst-pair", "5"]
    with pytest.raises(SettingsError, match=r"^worst_pair must be an integer >= 0; got -1"):
        AuditSettings(worst_pair=-1)
    table = AuditSettings().table()
    assert table.loc[table.setting == "worst_pair", "flag"].item() == "--worst-pair"
