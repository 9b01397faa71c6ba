"""Faults of a kind, fixed where they occur: reused test rows, one failing pair, user callables, scale.

Each test builds the failing input of one kind (or a variant of it) and asserts the right value or
the right message.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin

from epsaudit import cli
from epsaudit.audits import (gaussmech_pairs, kde_lr_pairs, mmd_tv_pairs, reserved_test_certificate,
                             reserved_test_pairs, roc_oof_pairs)
from epsaudit.condition import audit_condition
from epsaudit.results import EpsilonResult, results_frame
from epsaudit.audits.scorers import logistic_regression, paper_logistic_regression
from epsaudit.validation import ReusedRowsError, _shared_rows as shared_rows, check_fresh


def _gaussians(seed: int, n: int = 40, d: int = 8, shift: float = 0.0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)) + shift, rng.normal(size=(n, d))


# -- kind 1: test rows that repeat development rows -----------------------------------------------


def test_copies_as_test_rows_are_refused_where_they_used_to_certify_the_cap():
    # two identical distributions: with copies of the development rows as test rows the old code
    # certified the cap in 100 of 100 runs; every run must now be refused
    refused, certified = 0, 0
    for seed in range(100):
        a, b = _gaussians(seed, n=30, d=16)
        try:
            cert = reserved_test_certificate(a, b, a.copy(), b.copy(), confidence=0.95)
            certified += cert.value > 0
        except ReusedRowsError:
            refused += 1
    assert (refused, certified) == (100, 0)


def test_rescaled_copies_are_caught_after_normalisation_and_counted():
    a, b = _gaussians(1)
    test_a = np.vstack([a[:3] * 3.0, np.random.default_rng(5).normal(size=(7, 8))])  # 3 rescaled copies
    test_b = np.vstack([b[:2] * 0.1, b[2:3], np.random.default_rng(6).normal(size=(5, 8))])  # 2 rescaled, 1 exact
    with pytest.raises(ReusedRowsError) as err:
        reserved_test_certificate(a, b, test_a, test_b, pair=("Ann", "Bob"))
    msg = str(err.value)
    assert "reserved test of pair ('Ann', 'Bob'): 6 of 18 test row(s) repeat a development row" in msg
    assert "(1 exact copies, 5 equal after L2-normalisation)" in msg
    assert "3 of identity 'Ann', 3 of identity 'Bob'" in msg


def test_rounded_copies_float32_and_seven_digits_are_caught():
    a, b = _gaussians(21, d=128)
    ta, tb = _gaussians(22, n=10, d=128)
    ta[:4] = a[:4].astype(np.float32)  # float32 round trips: usually not the same quantised key
    tb[:3] = np.array([[float(f"{v:.7g}") for v in row] for row in b[5:8]])  # written with %.7g
    exact, near = shared_rows(np.vstack([a, b]), np.vstack([ta, tb]))
    assert not exact.any() and near.tolist() == [True] * 4 + [False] * 6 + [True] * 3 + [False] * 7
    with pytest.raises(ReusedRowsError, match=r"7 of 20 test row\(s\) repeat a development row \(0 exact copies, 7"):
        reserved_test_certificate(a, b, ta, tb)


def test_a_development_row_of_one_identity_reused_as_a_test_row_of_the_other_is_caught():
    a, b = _gaussians(2)
    test_a, test_b = _gaussians(3, n=10)
    test_b[4] = a[7]
    exact, scaled = shared_rows(np.vstack([a, b]), test_b)
    assert exact.tolist() == [False] * 4 + [True] + [False] * 5 and not scaled.any()
    with pytest.raises(ReusedRowsError, match="1 of 20 test row"):
        reserved_test_certificate(a, b, test_a, test_b)


def test_fresh_rows_pass_and_low_dimensional_rows_compare_exactly_only():
    a, b = _gaussians(4)
    ta, tb = _gaussians(5, n=10)
    check_fresh({"A": a, "B": b}, {"A": ta, "B": tb}, context="fresh")  # no error
    # in d = 1 normalisation keeps only the sign: 2.0 and 3.0 are different outputs
    check_fresh({"A": [[2.0]]}, {"A": [[3.0]]}, context="d=1")
    with pytest.raises(ReusedRowsError, match="1 exact copies"):
        check_fresh({"A": [[2.0]]}, {"A": [[2.0]]}, context="d=1")
    # in d = 2 fresh draws share a direction too often to call it a copy
    check_fresh({"A": [[1.0, 1.0]]}, {"A": [[2.0, 2.0]]}, context="d=2")
    with pytest.raises(ReusedRowsError, match="0 exact copies, 1 equal after L2-normalisation"):
        check_fresh({"A": [[1.0, 1.0, 1.0]]}, {"A": [[2.0, 2.0, 2.0]]}, context="d=3")


def test_many_pairs_record_a_reused_pair_as_not_computed_and_keep_the_others():
    a, b = _gaussians(6)
    c, _ = _gaussians(7)
    dev = {"A": a[:30], "B": b[:30], "C": c[:30]}
    test = {"A": a[30:], "B": b[:10], "C": c[30:]}  # B's test rows are B's development rows
    res = reserved_test_pairs(dev, [("A", "C"), ("A", "B")], test_groups=test)
    assert res[0].computed and res[0].value >= 0
    assert not res[1].computed and np.isnan(res[1].value)
    assert "10 of 20 test row(s) repeat a development row" in res[1].not_computed
    assert res[1].alpha_per_bound == res[0].alpha_per_bound  # still a member of the family of 2


def test_audit_condition_never_certifies_on_copies_in_its_own_split():
    rng = np.random.default_rng(8)
    groups = {f"id{i}": rng.normal(size=(20, 6)) + i for i in range(4)}
    groups["id1"] = np.vstack([groups["id1"][:10], groups["id1"][:10] * 2.0])  # every row twice, rescaled
    audit = audit_condition(groups, pairs=6, kde_pairs=6, roc_pairs=6, certificates=6, selection_pool=6, seed=0)
    certs = audit.per_pair[audit.per_pair["route"] == "roc_reserved"]
    with_copies = certs[(certs["identity_a"] == "id1") | (certs["identity_b"] == "id1")]
    assert len(with_copies) == 3 and with_copies["not_computed"].notna().all()
    assert with_copies["not_computed"].str.contains("repeat a development row").all()
    assert certs[(certs["identity_a"] != "id1") & (certs["identity_b"] != "id1")]["not_computed"].isna().all()
    assert audit.counts["not_computed"] == 3


# -- kind 1b: values that repeat by design, checked by draw ids ------------------------------------


def _one_hot(seed: int, n: int = 40):
    """Randomized response (one-hot rows, epsilon 3): values repeat by design between fresh draws."""
    from epsaudit.mechanisms import RandomizedResponse

    mech = RandomizedResponse(4, 3.0)
    dev, test = mech.sample_groups(n, seed=("ids", seed, "dev")), mech.sample_groups(n, seed=("ids", seed, "test"))
    return mech, dev, test


def _ids(prefix: str, n: int = 40):
    return {0: [f"{prefix}a{i}" for i in range(n)], 1: [f"{prefix}b{i}" for i in range(n)]}


def test_draw_ids_replace_the_value_check_where_values_repeat_by_design():
    mech, dev, test = _one_hot(0)
    # fresh draws of one-hot rows: every test value is a development value, so the value check refuses them
    with pytest.raises(ReusedRowsError, match=r"80 of 80 test row\(s\) repeat a development row \(80 exact copies"):
        reserved_test_certificate(dev[0], dev[1], test[0], test[1], delta=0.0)
    d, t = _ids("dev-"), _ids("test-")
    cert = reserved_test_certificate(dev[0], dev[1], test[0], test[1], delta=0.0, dev_ids=(d[0], d[1]),
                                     test_ids=(t[0], t[1]), pair=(0, 1))
    assert cert.computed and 0.0 < cert.value <= mech.exact_epsilon(0, 1)
    assert cert.settings["freshness"] == "test draw ids checked against development draw ids (values not compared)"
    # the same numbers as the unchecked certificate: ids change the check, never the bound
    unchecked = reserved_test_certificate(dev[0], dev[1], test[0], test[1], delta=0.0, check_reuse=False, pair=(0, 1))
    assert unchecked.value == cert.value
    assert unchecked.settings["freshness"].startswith("not checked (check_reuse=False)")
    plain = reserved_test_certificate(*_gaussians(30), *_gaussians(31))
    assert plain.settings["freshness"] == "test rows checked against development rows"


def test_a_reused_draw_is_refused_with_its_count_identity_and_first_id():
    _, dev, test = _one_hot(1)
    d, t = _ids("dev-"), _ids("test-")
    t[1][3], t[1][7] = d[1][5], d[1][9]  # two development draws of identity 1 reused as its test draws
    with pytest.raises(ReusedRowsError) as err:
        reserved_test_certificate(dev[0], dev[1], test[0], test[1], delta=0.0, dev_ids=(d[0], d[1]),
                                  test_ids=(t[0], t[1]), pair=("Ann", "Bob"))
    assert str(err.value).startswith(
        "reserved test of pair ('Ann', 'Bob'): 2 of 80 test draw id(s) equal a development draw id: "
        "2 of identity 'Bob'; first: test draw id 'dev-b5' of 'Bob' (a development draw of 'Bob').")
    # a development draw of one identity reused as a test draw of the other is caught too
    d, t = _ids("dev-"), _ids("test-")
    t[0][0] = d[1][2]
    with pytest.raises(ReusedRowsError, match=r"1 of 80 test draw id\(s\) equal a development draw id: 1 of identity "
                                              r"'A'; first: test draw id 'dev-b2' of 'A' \(a development draw of 'B'\)"):
        reserved_test_certificate(dev[0], dev[1], test[0], test[1], delta=0.0, dev_ids=(d[0], d[1]), test_ids=(t[0], t[1]))
    # one draw used twice as a test row is two rows that are not independent
    d, t = _ids("dev-"), _ids("test-")
    t[1][4] = t[0][6]
    with pytest.raises(ReusedRowsError, match=r"test draw id 'test-a6' occurs twice among the test rows \(of 'A' "
                                              r"and 'B'\)"):
        reserved_test_certificate(dev[0], dev[1], test[0], test[1], delta=0.0, dev_ids=(d[0], d[1]), test_ids=(t[0], t[1]))


@pytest.mark.parametrize("options, message", [
    (dict(dev_ids=([0, 1], [2, 3])), "dev_ids given without test_ids"),
    (dict(test_ids=([0, 1], [2, 3])), "test_ids given without dev_ids"),
    (dict(dev_ids=(range(40), range(40, 80)), test_ids=(range(80, 119), range(120, 160))),
     r"test_ids\[0\] \('A'\) has 39 draw id\(s\) for 40 row\(s\); give one id per row"),
    (dict(dev_ids=(range(40), [None] + list(range(41, 80))), test_ids=(range(80, 120), range(120, 160))),
     r"dev_ids\[1\] \('B'\) holds a missing draw id at row 0"),
    (dict(dev_ids=(range(40), range(40, 80)), test_ids=(range(80, 120), range(120, 160)), check_reuse=False),
     "check_reuse=False and draw ids given"),
    (dict(dev_ids=range(80), test_ids=(range(80, 120), range(120, 160))), "dev_ids must be a pair"),
])
def test_bad_draw_ids_are_named(options, message):
    _, dev, test = _one_hot(2)
    with pytest.raises(ValueError, match=message):
        reserved_test_certificate(dev[0], dev[1], test[0], test[1], delta=0.0, **options)


def test_many_pairs_check_draw_ids_per_pair_and_split_them_with_the_rows():
    mech, dev, test = _one_hot(3)
    third = {2: mech.sample(2, 40, seed=("ids", 3, "dev2"))}
    third_test = {2: mech.sample(2, 40, seed=("ids", 3, "test2"))}
    dev, test = {**dev, **third}, {**test, **third_test}
    d = {k: [f"dev-{k}-{i}" for i in range(40)] for k in dev}
    t = {k: [f"test-{k}-{i}" for i in range(40)] for k in test}
    t[2][0] = d[2][0]  # identity 2 reuses one draw
    res = reserved_test_pairs(dev, [(0, 1), (0, 2)], test_groups=test, delta=0.0, dev_ids=d, test_ids=t)
    assert res[0].computed and res[0].settings["freshness"].startswith("test draw ids")
    assert not res[1].computed and "1 of 80 test draw id(s) equal a development draw id: 1 of identity 2" in res[1].not_computed
    with pytest.raises(ValueError, match="dev_ids has no draw ids for identity 2"):
        reserved_test_pairs(dev, [(0, 2)], test_groups=test, dev_ids={0: d[0]}, test_ids=t)
    with pytest.raises(ValueError, match="dev_ids given without test_ids"):
        reserved_test_pairs(dev, [(0, 1)], test_groups=test, dev_ids=d)
    with pytest.raises(ValueError, match="test_ids given without test_groups"):
        reserved_test_pairs(dev, [(0, 1)], dev_ids=d, test_ids=t)
    # without test groups the rows are split once and the ids with them: one id shared by two rows of an
    # identity (the same draw stored twice) is refused when the split puts one copy on each side
    rows = {k: np.vstack([dev[k], test[k]]) for k in (0, 1)}
    ids = {k: d[k] + t[k] for k in (0, 1)}
    fresh = reserved_test_pairs(rows, [(0, 1)], delta=0.0, dev_ids=ids, seed=0)
    unchecked = reserved_test_pairs(rows, [(0, 1)], delta=0.0, check_reuse=False, seed=0)
    assert fresh[0].computed and fresh[0].value == unchecked[0].value
    ids[1] = [f"draw-{i % 40}" for i in range(80)]  # every draw of identity 1 stored twice
    twice = reserved_test_pairs(rows, [(0, 1)], delta=0.0, dev_ids=ids, seed=0)
    assert not twice[0].computed and "equal a development draw id" in twice[0].not_computed


def test_audit_condition_checks_draw_ids_where_given():
    mech, dev, test = _one_hot(4, n=60)
    groups = {f"id{k}": np.vstack([dev[k], test[k]]) + 0.0 for k in dev}
    ids = {f"id{k}": [f"{k}-{i}" for i in range(120)] for k in dev}
    cheap = dict(pairs=0, kde_pairs=0, roc_pairs=0, certificates=2, selection_pool=6, seed=0, n_jobs=1)
    by_value = audit_condition(groups, **cheap)  # one-hot rows: every certificate refused on its values
    assert by_value.counts["not_computed"] == 2
    by_id = audit_condition(groups, draw_ids=ids, **cheap)
    certs = by_id.per_pair[by_id.per_pair["route"] == "roc_reserved"]
    assert certs["not_computed"].isna().all() and (certs["setting_freshness"].str.startswith("test draw ids")).all()
    assert by_id.settings["freshness_check"] == "draw ids"
    ids["id1"] = [f"1-{i % 60}" for i in range(120)]  # identity id1's draws stored twice each
    reused = audit_condition(groups, draw_ids=ids, **cheap)
    failed = reused.per_pair[reused.per_pair["not_computed"].notna()]
    assert len(failed) >= 1 and ((failed["identity_a"] == "id1") | (failed["identity_b"] == "id1")).all()
    with pytest.raises(ValueError, match=r"draw_ids\['id0'\] has 3 draw id\(s\) for 120 row\(s\)"):
        audit_condition(groups, draw_ids={**ids, "id0": [1, 2, 3]}, **cheap)
    with pytest.raises(ValueError, match="draw_ids has no ids for identity 'id2'"):
        audit_condition(groups, draw_ids={"id0": ids["id0"], "id1": ids["id1"]}, **cheap)


# -- kind 4: one failing pair does not abort the audit ---------------------------------------------


def _const_coord_csv(path):
    rng = np.random.default_rng(11)
    rows = ["identity," + ",".join(f"e{j}" for j in range(8))]
    for label in ("id_a", "id_b", "id_c", "id_d"):
        x = rng.normal(size=(12, 8)) + rng.normal(size=8)
        if label == "id_b":
            x[:, 3] = 0.0  # a dead unit
        rows += [label + "," + ",".join(f"{v:.6f}" for v in row) for row in x]
    path.write_text("\n".join(rows) + "\n")
    return path


def test_cli_reports_every_route_when_kde_lr_fails_for_the_pairs_of_one_identity(tmp_path, capsys):
    csv = _const_coord_csv(tmp_path / "const_coord.csv")
    out = tmp_path / "res"
    code = cli.main(["audit", str(csv), "--pairs", "6", "--kde-pairs", "6", "--roc-pairs", "6",
                     "--certificates", "1", "--jobs", "1", "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 0
    for route in ("gaussmech", "kde_lr", "mmd_tv", "roc_oof", "roc_reserved"):
        assert route in captured.out
    note = [line for line in captured.err.splitlines() if "not computed" in line]
    assert len(note) == 1
    assert f"{csv}: KDE-LR not computed for 3 of 6 pair(s): coordinate 'e3' is constant within identity 'id_b'" in note[0]
    doc = json.loads((tmp_path / "res.json").read_text())
    failed = doc["conditions"][0]["not_computed"]
    assert len(failed) == 3 and {r["route"] for r in failed} == {"kde_lr"}
    summary = {(r["route"], r["kde_alpha"]): r for r in doc["conditions"][0]["summary"]}
    assert summary[("kde_lr", 0.01)]["pairs"] == 3 and summary[("kde_lr", 0.01)]["not_computed"] == 3
    assert summary[("gaussmech", None)]["pairs"] == 6 and summary[("gaussmech", None)]["not_computed"] == 0


def test_each_route_records_its_degenerate_pairs_as_not_computed():
    rng = np.random.default_rng(12)
    groups = {"A": rng.normal(size=(10, 4)), "B": rng.normal(size=(10, 4)),
              "C": np.ones((10, 4)), "D": np.ones((10, 4))}  # C and D: constant, identical samples
    pairs = [("A", "B"), ("C", "D")]
    gm = gaussmech_pairs(groups, pairs)
    assert gm[0].computed and not gm[1].computed and "zero residual scale" in gm[1].not_computed
    mmd = mmd_tv_pairs(groups, pairs)
    assert mmd[0].computed and "median pairwise distance" in mmd[1].not_computed
    kde = kde_lr_pairs(groups, pairs, coordinate_names=["u", "v", "w", "x"])
    assert [r.computed for r in kde] == [True, True, False, False]
    assert "coordinate 'u' is constant within identity 'C' (and 3 more coordinate(s))" in kde[2].not_computed
    frame = results_frame(gm + mmd + kde)
    assert frame["value"].isna().tolist() == frame["not_computed"].notna().tolist()


class _NaNScorer(ClassifierMixin, BaseEstimator):
    """A classifier whose decision function is NaN: a user estimator gone wrong."""

    def fit(self, x, y):
        self.classes_ = np.array([0, 1])
        return self

    def decision_function(self, x):
        return np.full(len(x), np.nan)

    def predict(self, x):
        return np.zeros(len(x), dtype=int)


def test_a_classifier_returning_nan_is_named_and_the_pair_not_computed():
    a, b = _gaussians(13)
    res = roc_oof_pairs({"A": a, "B": b}, [("A", "B")], classifier=_NaNScorer())
    assert not res[0].computed
    assert "returned 80 NaN or infinite score(s)" in res[0].not_computed


def test_not_computed_is_the_only_documented_nan():
    with pytest.raises(ValueError, match="value is NaN"):
        EpsilonResult(value=float("nan"), kind="estimate", route="x", n=(2, 2))
    r = EpsilonResult(value=1.0, kind="estimate", route="x", n=(2, 2), not_computed="why")
    assert np.isnan(r.value) and str(r) == "x: not computed (why)"


# -- kind 7: user-supplied score functions --------------------------------------------------------


@pytest.mark.parametrize("bad, message", [
    (lambda x: x, "returned an array of shape (40, 8); expected shape (40,): one score per row"),
    (lambda x: x[:, :1], "returned an array of shape (40, 1); expected shape (40,)"),
    (lambda x: x[:-1, 0], "returned an array of shape (39,); expected shape (40,)"),
    (lambda x: np.where(x[:, 0] > 1, np.nan, x[:, 0]), "NaN score(s) (first at row"),
    (lambda x: ["a"] * len(x), "values that are not numbers"),
])
def test_score_function_output_is_checked_with_a_clear_message(bad, message):
    a, b = _gaussians(14)
    ta, tb = _gaussians(15)
    with pytest.raises(ValueError) as err:
        reserved_test_certificate(a, b, ta, tb, score_function=bad)
    assert "score_function on the development rows of 'A'" in str(err.value)
    assert message in str(err.value)


def test_infinite_scores_are_thresholds_at_the_largest_float():
    # half of A's outputs carry a mark B never produces (score +inf); otherwise A and B agree,
    # so the best test on development scores is "score is +inf"
    rng = np.random.default_rng(16)

    def draw(marked: bool, n: int = 200):
        return np.column_stack([rng.normal(size=n), (rng.random(n) < 0.5) if marked else np.zeros(n)])

    dev_a, test_a, dev_b, test_b = draw(True), draw(True), draw(False), draw(False)

    def score(x):
        return np.where(x[:, 1] > 0, np.inf, x[:, 0])

    cert = reserved_test_certificate(dev_a, dev_b, test_a, test_b, score_function=score, delta=0.0)
    assert cert.details["threshold"] == np.finfo(np.float64).max
    assert (cert.details["tp"], cert.details["fp"]) == (int(test_a[:, 1].sum()), 0)
    assert cert.value > 2.0
    # with a third coordinate, B's rows (x, 0, 0) all point one way: equal after normalisation
    pad = lambda x: np.column_stack([x, np.zeros(len(x))])  # noqa: E731
    with pytest.raises(ReusedRowsError, match="pass check_reuse=False"):
        reserved_test_certificate(pad(dev_a), pad(dev_b), pad(test_a), pad(test_b), score_function=score)
    unchecked = reserved_test_certificate(pad(dev_a), pad(dev_b), pad(test_a), pad(test_b), score_function=score,
                                          delta=0.0, check_reuse=False)
    assert "not checked (check_reuse=False)" in unchecked.settings["freshness"]
    assert unchecked.value == cert.value


# -- kind 8: learned tests do not depend on the scale of the embedding ----------------------------


def test_default_learned_test_is_scale_free_where_the_papers_learner_is_not():
    a, b = _gaussians(17, n=100, d=8, shift=0.8)
    ta, tb = _gaussians(18, n=100, d=8, shift=0.8)
    ref = reserved_test_certificate(a, b, ta, tb)
    tiny = reserved_test_certificate(a * 1e-12, b * 1e-12, ta * 1e-12, tb * 1e-12)
    assert ref.value > 1.0
    assert tiny.value == pytest.approx(ref.value, abs=1e-9)
    assert (tiny.details["tp"], tiny.details["fp"]) == (ref.details["tp"], ref.details["fp"])
    # the paper's learner (no standardisation) predicts 0.5 everywhere on the rescaled rows
    paper = reserved_test_certificate(a * 1e-12, b * 1e-12, ta * 1e-12, tb * 1e-12,
                                      classifier=paper_logistic_regression())
    assert paper.value == 0.0
    oof = roc_oof_pairs({"A": a * 1e-12, "B": b * 1e-12}, [("A", "B")], classifier=logistic_regression())
    oof_ref = roc_oof_pairs({"A": a, "B": b}, [("A", "B")])
    assert oof[0].details["auc"] == pytest.approx(oof_ref[0].details["auc"], abs=1e-12)


# -- kind 9: images stored with an EXIF orientation tag -------------------------------------------


@pytest.mark.parametrize("orientation, turned", [(1, False), (6, True), (8, True), (3, False)])
def test_images_are_read_upright_whatever_their_exif_orientation(tmp_path, orientation, turned):
    Image = pytest.importorskip("PIL.Image")
    from epsaudit.build.images import load_image

    pixels = np.zeros((40, 60, 3), dtype=np.uint8)
    pixels[:10, :, 0] = 255  # a red band along the top edge, as stored
    (tmp_path / "P").mkdir()
    exif = Image.Exif()
    exif[0x0112] = orientation
    Image.fromarray(pixels).save(tmp_path / "P" / "P_0001.jpg", exif=exif, quality=95)
    image = load_image("P/P_0001.jpg", tmp_path)
    assert image.shape == ((60, 40, 3) if turned else (40, 60, 3))
    red = image[..., 0] > 128
    if orientation == 1:
        assert red[:10].all() and not red[15:].any()
    if orientation == 3:  # rotated 180 degrees: the band is at the bottom
        assert red[-10:].all() and not red[:-15].any()
    if orientation == 6:  # stored rotated: "rotate 90 clockwise to view"; the top band becomes the right edge
        assert red[:, -10:].all() and not red[:, :-15].any()
    if orientation == 8:  # "rotate 90 counter-clockwise to view": the band becomes the left edge
        assert red[:, :10].all() and not red[:, 15:].any()


def test_a_file_that_is_not_an_image_is_named(tmp_path):
    pytest.importorskip("PIL.Image")
    from epsaudit.build.images import load_image

    (tmp_path / "P").mkdir()
    (tmp_path / "P" / "P_0001.jpg").write_text("not a jpeg")
    with pytest.raises(ValueError, match=r"P_0001.jpg: not an image file"):
        load_image("P/P_0001.jpg", tmp_path)


# -- kind 5: a maximum over a grid says when it sits at the grid's end ---------------------------


def test_kde_lr_reports_coordinates_whose_maximum_is_at_the_end_of_its_grid():
    from epsaudit.audits import kde_lr_epsilon

    rng = np.random.default_rng(23)
    shifted, centred = rng.normal(size=(30, 1)) + 1.0, rng.normal(size=(30, 1))
    # without smoothing the log-ratio of two shifted densities grows towards the grid's ends, so
    # its maximum (12.1 nats here) is set by where the grid stops (three bandwidths out)
    unsmoothed = kde_lr_epsilon(shifted, centred, alpha=0.0)
    assert unsmoothed.details["grid_edge_coordinates"] == 1 and unsmoothed.value == pytest.approx(12.09, abs=0.01)
    # the uniform mixture caps the tails; the largest log-ratio is then inside the grid
    assert kde_lr_epsilon(shifted, centred, alpha=0.01).details["grid_edge_coordinates"] == 0
