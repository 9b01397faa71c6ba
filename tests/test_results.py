"""The result type: every number carries its kind; certificates carry their level and correction."""

import math

import pytest

from epsaudit.results import EpsilonResult, results_frame


def test_certificate_requires_its_level_and_correction():
    with pytest.raises(ValueError, match="confidence level"):
        EpsilonResult(1.0, "certificate", "roc_reserved", (30, 30))
    cert = EpsilonResult(1.0, "certificate", "roc_reserved", (30, 30), confidence=0.95,
                         alpha_per_bound=0.05 / 80, correction="bonferroni")
    assert cert.is_certificate
    assert "95% family-wise" in str(cert)


def test_only_certificates_carry_confidence_and_only_estimates_may_be_infinite():
    with pytest.raises(ValueError, match="only certificates"):
        EpsilonResult(1.0, "diagnostic", "gaussmech", (30, 30), confidence=0.95)
    with pytest.raises(ValueError, match="infinite"):
        EpsilonResult(math.inf, "diagnostic", "gaussmech", (30, 30))
    with pytest.raises(ValueError, match="NaN"):
        EpsilonResult(math.nan, "estimate", "roc_oof", (30, 30))
    with pytest.raises(ValueError, match="kind"):
        EpsilonResult(1.0, "guess", "x", (1, 1))
    assert math.isinf(EpsilonResult(math.inf, "estimate", "roc_oof", (30, 30)).value)


def test_results_frame_has_kind_and_flattened_settings():
    rows = [
        EpsilonResult(2.0, "diagnostic", "kde_lr", (10, 12), pair=("a", "b"), settings={"alpha": 0.01}),
        EpsilonResult(0.5, "certificate", "roc_reserved", (5, 6), pair=("a", "c"), confidence=0.95,
                      alpha_per_bound=0.0125, correction="bonferroni x 2", details={"tp": 5}),
    ]
    frame = results_frame(rows)
    assert list(frame["kind"]) == ["diagnostic", "certificate"]
    assert list(frame["n_a"]) == [10, 5] and list(frame["identity_b"]) == ["b", "c"]
    assert frame.loc[0, "setting_alpha"] == 0.01 and frame.loc[1, "tp"] == 5
    assert frame.columns[:3].tolist() == ["route", "kind", "value"]
    with pytest.raises(TypeError, match="element 0"):
        results_frame([1.0])
    assert list(results_frame([]).columns)[:2] == ["route", "kind"]
