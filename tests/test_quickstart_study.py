"""The ten-minute page's study: its pair, its profiles and the numbers the page's text quotes."""

from __future__ import annotations

import math

import pytest

from epsaudit.audits import reserved_test_certificate
from epsaudit.bounds import bonferroni_alpha, certifiable_cap, required_test_size
from epsaudit.studies import quickstart as study


@pytest.mark.parametrize("epsilon", [0.0, 0.5, 1.0, 4.0])
@pytest.mark.parametrize("mechanism", study.MECHANISMS)
def test_the_pair_has_the_requested_epsilon(epsilon, mechanism):
    pair = study.pair_mechanism(epsilon, mechanism=mechanism)
    assert pair.exact_epsilon(0, 1) == pytest.approx(epsilon, abs=1e-9)
    assert pair.delta == (0.0 if mechanism == "laplace" else 1e-5)


def test_an_unknown_mechanism_or_profile_is_refused_by_name():
    with pytest.raises(ValueError, match="'poisson'"):
        study.pair_mechanism(1.0, mechanism="poisson")
    with pytest.raises(ValueError, match="'tiny'"):
        study.settings("tiny")


def test_profiles_audit_the_book_size_and_n_overrides():
    assert [study.settings(p)["n"] for p in ("smoke", "full", "paper")] == [300, 300, 300]
    assert study.settings("full", 30)["n"] == 30
    assert study.settings("full")["sizes"] == (10, 30, 100, 300, 1000, 3000)


def test_caps_are_the_closed_forms():
    # zero errors on n test rows: the paper's bound is log(a^(1/n) / (1 - a^(1/n))) at a = 0.025
    a = 0.025 ** (1 / 300)
    assert certifiable_cap(300, 300, bonferroni_alpha(1), 0.0, bound="clopper-pearson") == pytest.approx(
        math.log(a / (1 - a)), abs=1e-9)
    assert certifiable_cap(300, 300, bonferroni_alpha(1), 0.0) == pytest.approx(5.297, abs=1e-3)
    assert certifiable_cap(30, 30, bonferroni_alpha(1), 0.0) == pytest.approx(2.972, abs=1e-3)
    assert [required_test_size(1.0, bonferroni_alpha(m), 0.0, bound=b) for m in (1, 40)
            for b in ("joint", "clopper-pearson")] == [5, 12, 11, 24]


def test_the_page_certificate_of_the_book_run():
    """The page's exact-score certificate at its defaults (epsilon 1, n 300, seed 0): about 0.63,
    below the truth; the paper's bound about 0.54 on the same rows."""
    pair = study.pair_mechanism(1.0)
    dev = pair.sample_groups(300, seed=("quickstart", 0, "dev"))
    test = pair.sample_groups(300, seed=("quickstart", 0, "test"))
    kw = dict(score_function=pair.exact_score(0, 1), delta=0.0, check_reuse=False)
    joint = reserved_test_certificate(dev[0], dev[1], test[0], test[1], **kw)
    paper = reserved_test_certificate(dev[0], dev[1], test[0], test[1], bound="clopper-pearson", **kw)
    assert joint.kind == "certificate" and 0 < joint.value < 1.0
    assert joint.value == pytest.approx(0.626, abs=1e-3) and paper.value == pytest.approx(0.541, abs=1e-3)
