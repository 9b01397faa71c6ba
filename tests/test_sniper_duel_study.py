"""Chapter 2's page: number formats, table views, phrases computed from numbers, exercises, figure."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from epsaudit.plotting import sniper as sniper_figures
from epsaudit.sniper import attack_cap, design_cap, split_budget
from epsaudit.studies import sniper_duel as study


def test_one_number_format_without_negative_zero():
    assert study.fmt(-0.004) == "0.00"
    assert study.fmt(-0.006) == "-0.01"
    assert study.fmt(2.345678) == "2.35"
    assert study.fmt(float("nan")) == "n/a"
    assert study.fmt(None) == "n/a"
    assert study.fmt(500.0, ",d") == "500"
    assert study.fmt(1_000_000, ",d") == "1,000,000"
    # the prose's glue references use the same spec: format(value, NUMBER)
    assert format(-0.0004, study.NUMBER) == study.fmt(-0.0004)


def test_counts_in_words():
    assert study.count_words(1, "fixed pair") == "one fixed pair"
    assert study.count_words(3, "fixed pair") == "three fixed pairs"
    assert study.count_words(2, "worker") == "two workers"
    assert study.count_words(1000, "call") == "1,000 calls"


@pytest.mark.parametrize("name", ["smoke", "full", "paper"])
def test_page_numbers_state_the_profile_in_words(name):
    profile = study.profile_settings(name)
    numbers = study.page_numbers(name, profile, 2)
    assert numbers["ch2_profile"] == f"**{name}**"
    assert isinstance(numbers["calls_per_row"], int) and numbers["calls_per_row"] == profile["calls"]
    assert numbers["ch2_workers"] == "two workers"
    expected = "one fixed pair of each mechanism, run once" if name == "smoke" else \
        "three fixed pairs of each mechanism, each run three times"
    assert numbers["ch2_protocol"] == expected


def _table5_numbers(lap8: float, lap32: float, rr05_ratio: float, rr2_ratio: float) -> dict:
    return {"t5_lap_8": lap8, "t5_lap_32": lap32, "t5_rr_0p5_ratio": rr05_ratio, "t5_rr_2_ratio": rr2_ratio}


def test_a_negative_raw_bound_certifies_nothing():
    phrases = study.table5_phrases(_table5_numbers(-0.21, 1.4, 0.9, 0.95), study.TABLE5)
    assert phrases["t5_lap_8_says"] == "it certifies nothing (certificate 0)"
    assert phrases["t5_lap_32_says"] == "it certifies **1.40**"
    assert "-0.21" not in phrases["t5_lap_8_says"]
    # a raw bound that rounds to 0.00 certifies nothing either
    assert study.table5_phrases(_table5_numbers(0.001, 1.4, 0.9, 0.95), study.TABLE5)["t5_lap_8_says"].startswith(
        "it certifies nothing")


def test_randomized_response_wording_follows_the_ratios():
    close = study.table5_phrases(_table5_numbers(0.5, 2.0, 0.87, 0.97), study.TABLE5)["t5_rr_small_phrase"]
    assert close.startswith("At 0.5 (ratio **0.87**) and 2 (ratio **0.97**) ours come close")
    assert "both above the paper's ratios (0.23 and 0.46)" in close
    mixed = study.table5_phrases(_table5_numbers(0.5, 2.0, -0.08, 0.82), study.TABLE5)["t5_rr_small_phrase"]
    assert "at 0.5 (ratio **-0.08**) ours stay well below it" in mixed
    assert "At 2 (ratio **0.82**) ours come close" in mixed
    assert "one above and one below" in mixed
    low = study.table5_phrases(_table5_numbers(0.5, 2.0, 0.1, 0.2), study.TABLE5)["t5_rr_small_phrase"]
    assert "come close" not in low and "both below" in low


def _table5_frame() -> pd.DataFrame:
    cols = [0.0, 0.5, 2.0, 8.0, 32.0]
    rows = []
    for label in study.LABELS.values():
        for stat in ("exact epsilon (median)", "bound, ours", "bound, paper", "ratio, ours", "ratio, paper",
                     "bound, exact-LR score"):
            rows.append(((label, stat), [np.nan if (c == 0 and "paper" in stat) else -0.0004 + c for c in cols]))
    return pd.DataFrame([v for _, v in rows], index=pd.MultiIndex.from_tuples([k for k, _ in rows]), columns=cols)


def test_table5_view_has_readable_labels_and_one_format():
    views = study.table5_view(_table5_frame(), study.LABELS)
    assert set(views) == {"laplace", "randomized_response"}
    data = views["laplace"].data
    assert list(data.columns) == ["0 (null)", "0.5", "2", "8", "32"]
    assert list(data.index) == ["exact ε (median)", "raw bound, ours", "raw bound, paper", "ratio, ours",
                                "ratio, paper", "raw bound, exact LR"]
    assert data.loc["raw bound, ours", "0 (null)"] == "0.00"  # no negative zero
    assert data.loc["raw bound, paper", "0 (null)"] == "n/a"
    assert data.loc["raw bound, ours", "32"] == "32.00"
    html = views["laplace"].to_html()
    assert "exact-LR score" not in html and "bound, ours" in html


def _summary() -> pd.DataFrame:
    idx = pd.MultiIndex.from_product([["laplace", "randomized_response"], [0.0, 8.0], [30, 300]],
                                     names=["mechanism", "requested_epsilon", "n"])
    return pd.DataFrame({"exact": 1.0, "sniper_median": 0.5, "reserved_median": 0.25, "sniper_positive": 1 / 9,
                         "reserved_positive": 8 / 9}, index=idx)


def test_duel_views_split_by_mechanism_without_raw_identifiers():
    views = study.duel_views(_summary())
    assert set(views) == {"laplace", "randomized_response"}
    data = views["randomized_response"].data
    assert list(data.columns) == [("", "exact ε"), ("median certificate", "DP-Sniper"),
                                  ("median certificate", "reserved"), ("pairs certified", "DP-Sniper"),
                                  ("pairs certified", "reserved")]
    assert data.index[0] == ("ε = 0", "n = 30")
    assert data.iloc[0, 3] == "11%" and data.iloc[0, 4] == "89%"
    html = views["laplace"].to_html()
    for raw in ("sniper_median", "reserved_positive", "requested_epsilon", "randomized_response"):
        assert raw not in html


def test_caps_view_shows_the_calls_behind_each_cap_without_an_index():
    caps = pd.DataFrame({"DP-Sniper cap": [2.411, 4.597], "reserved-test cap": [2.034, 4.392]},
                        index=pd.Index([30, 300], name="n"))
    styler = study.caps_view(caps)
    assert list(styler.data["DP-Sniper final calls per input"]) == [split_budget(120).final, split_budget(1200).final]
    html = styler.to_html()
    assert "1,200" in html and "2.41" in html and "4.60" in html


def _pairs(sniper: list[float], reserved: list[float], mechanism: str = "laplace") -> pd.DataFrame:
    eps = [0.0, 0.5, 2.0, 32.0][: len(sniper)]
    return pd.DataFrame({"mechanism": mechanism, "requested_epsilon": eps, "n": 30, "DP-Sniper": sniper,
                         "reserved test": reserved})


def _duel_numbers(**rr8) -> dict:
    numbers = {"duel_lap32_reserved_pos": 0.89, "duel_lap32_sniper_pos": 0.11}
    for n in (30, 100, 300):
        numbers[f"duel_nfinal_{n}"] = split_budget(4 * n).final
        numbers[f"duel_rr8_sniper_{n}"], numbers[f"duel_rr8_reserved_{n}"] = rr8.get(f"n{n}", (1.0, 1.0))
    return numbers


def test_duel_phrases_name_the_settings_that_certify_nothing():
    pairs = _pairs([0, 0, 0, 0.3], [0, 0, 0, 0.2])
    phrases = study.duel_phrases(pairs, _duel_numbers(), (30, 100, 300))
    assert phrases["both_zero_phrase"] == ("every duel at the exact null, at requested $\\varepsilon = 0.5$ and "
                                           "on product Laplace below requested $\\varepsilon = 32$")
    pairs = _pairs([0, 0, 0.1, 0], [0, 0, 0, 0])  # product Laplace at 2 certifies once; at 32 both are zero
    phrases = study.duel_phrases(pairs, _duel_numbers(), (30, 100, 300))
    assert phrases["both_zero_phrase"].startswith("among them every duel at the exact null")
    assert "product Laplace" not in phrases["both_zero_phrase"]


def test_duel_phrases_follow_who_certifies_more():
    numbers = _duel_numbers(n30=(2.05, 2.03), n100=(3.27, 3.28), n300=(3.81, 4.39))
    phrases = study.duel_phrases(_pairs([0], [0]), numbers, (30, 100, 300))
    assert phrases["duel_rr8_sentence"] == (
        "At $n$ = 30 DP-Sniper certifies more (medians: DP-Sniper **2.05**, reserved test **2.03**); at $n$ = 100 "
        "and 300 the reserved test certifies more (medians: DP-Sniper **3.27** and **3.81**, reserved test "
        "**3.28** and **4.39**)")
    assert "**170** and **510** final calls" in phrases["duel_rr8_reason"]
    assert phrases["duel_lap_phrase"].startswith("the reserved test certifies more often")
    ahead = _duel_numbers(n30=(2.05, 2.03), n100=(3.5, 3.28), n300=(4.5, 4.39))
    ahead["duel_lap32_reserved_pos"] = 0.0
    phrases = study.duel_phrases(_pairs([0], [0]), ahead, (30, 100, 300))
    assert phrases["duel_rr8_sentence"].startswith("At $n$ = 30, 100 and 300 DP-Sniper certifies more")
    assert phrases["duel_rr8_reason"].startswith("DP-Sniper is not behind")
    assert phrases["duel_lap_phrase"] == "neither method certifies more often"


def _budget_rows(rr32: dict[int, float], lap: dict[int, float]) -> pd.DataFrame:
    rows = [dict(mechanism="randomized_response", requested_epsilon=32.0, calls=b, raw=v) for b, v in rr32.items()]
    rows += [dict(mechanism="laplace", requested_epsilon=8.0, calls=b, raw=v) for b, v in lap.items()]
    return pd.DataFrame(rows)


def test_budget_phrases_place_randomized_response_against_the_caps():
    profile = study.profile_settings("smoke")
    cap_small = float(attack_cap(split_budget(100).final, study.ALPHA, study.DEFAULT_C))
    design_top = float(design_cap(split_budget(20_000).final, study.ALPHA, study.DEFAULT_C))
    rows = _budget_rows({100: cap_small, 1_000: 4.0, 20_000: design_top + 0.01}, {100: -2.0, 1_000: -1.0, 20_000: 0.5})
    phrases = study.budget_phrases(profile, rows)
    assert phrases["rr32_phrase"] == "sits on the closed-form cap at **100** calls and on the dashed curve at **20,000**"
    assert phrases["rr32_verdict"].startswith("the attack breaks it completely")
    assert phrases["lap_budget_phrase"].startswith("stays at least **")
    full = study.profile_settings("full")
    top = full["calls"]
    rows = _budget_rows({100: cap_small, 10_000: 4.3, top: 4.568}, {100: -2.0, 10_000: -0.3, top: 0.57})
    assert study.budget_phrases(full, rows)["rr32_phrase"] == (
        "sits on the closed-form cap at **100** calls and where the two curves meet at **500,000**")
    weak = _budget_rows({100: 0.5, 1_000: 1.0, 20_000: 1.0}, {100: 1.5, 1_000: 3.4, 20_000: 4.3})
    phrases = study.budget_phrases(profile, weak)
    assert "below the dashed curve" in phrases["rr32_phrase"]
    assert not phrases["rr32_verdict"].startswith("the attack breaks it")
    assert phrases["lap_budget_phrase"].startswith("comes within")


def test_validity_wording_follows_the_counts():
    assert study.validity_phrases(dict(v_above=0, v_fam_above=0, v_tol=9))["v_phrase"].startswith(
        "The paper's 0 of 324 carries over")
    assert "within the binomial tolerance" in study.validity_phrases(dict(v_above=2, v_fam_above=1, v_tol=9))["v_phrase"]
    assert "something is wrong" in study.validity_phrases(dict(v_above=20, v_fam_above=12, v_tol=9))["v_phrase"]
    counts = pd.Series({"DP-Sniper bounds": 112, "bounds above exact epsilon": 0})
    assert list(study.validity_view(counts).data.index) == ["DP-Sniper bounds", "bounds above exact ε"]


def test_exercise_numbers_are_the_closed_forms():
    learned = pd.DataFrame({"requested_epsilon": [0.0] * 4 + [8.0] * 2, "value": [0, 0, 0.2, 0, 1, 1],
                            "raw": [-0.5, -0.1, 0.2, -0.3, 1, 1]})
    ex = study.exercise_numbers(learned)
    assert ex["ex_null_runs"] == 2 and ex["ex_null_positive"] == 1
    assert ex["ex_null_raw_min"] == -0.5 and ex["ex_null_raw_max"] == 0.2
    assert ex["ex_c_needed"] == pytest.approx(math.exp(-8))
    assert ex["ex_cap_small_c"] == pytest.approx(math.log(1e4))
    assert (ex["ex_train_30"], ex["ex_threshold_30"]) == (6, 3)
    assert ex["ex_upper_30"] == pytest.approx(1 - study.ALPHA ** (1 / split_budget(120).final))
    # the closed-form cap passes 8 near the stated budget (two significant digits), not far below it
    below, above = int(ex["ex_budget_cap"] * 0.9), int(ex["ex_budget_cap"] * 1.1)
    assert attack_cap(split_budget(below).final, study.ALPHA, 1e-4) < 8 < attack_cap(split_budget(above).final,
                                                                                       study.ALPHA, 1e-4)
    assert ex["ex_budget_design"] > ex["ex_budget_cap"]


def test_budget_figure_is_page_sized_with_distinct_colours_and_its_data():
    profile = study.profile_settings("smoke")
    caps = study.budget_caps(profile, points=20)
    rows = pd.DataFrame([dict(mechanism=m, requested_epsilon=e, calls=b, raw=r, value=max(r, 0.0), pair_index=0, rep=0,
                              direction=d)
                         for m in ("laplace", "randomized_response") for e in (8.0, 32.0) for b in (100, 1_000, 20_000)
                         for d, r in (("a->b", -1.0 + e / 32), ("b->a", 2.0))])
    fig = sniper_figures.bounds_against_budget(rows, caps, c=study.DEFAULT_C, labels=study.MECHANISM_NAMES)
    try:
        width, _ = fig.get_size_inches()
        assert 7.5 <= width <= 9
        axes = fig.get_axes()
        assert [ax.get_title(loc="left") for ax in axes] == ["16-ary randomized response", "product Laplace (d = 512)"]
        assert all(ax.get_ylabel() == "raw bound on ε (nats)" for ax in axes)
        assert min(ax.get_ylim()[0] for ax in axes) < -1.0  # every raw bound is inside the axes
        colours = {line.get_color() for ax in axes for line in ax.get_lines() if line.get_marker() not in ("None", "")}
        assert len(colours) == 2 and {c.lower() for c in colours} <= {c.lower() for c in sniper_figures.PALETTE}
        sizes = [t.get_fontsize() for ax in axes for t in ax.get_xticklabels() + ax.get_yticklabels()]
        sizes += [t.get_fontsize() for t in fig.legends[0].get_texts()]
        assert min(sizes) >= 12
    finally:
        plt.close(fig)
    data = sniper_figures.budget_figure_data(rows, caps)
    assert set(data["series"]) == {"DP-Sniper run", "closed-form cap", "attack firing with prob. c"}
    assert (data["certificate_nats"] >= 0).all()
    assert len(data) == len(rows) + 2 * len(caps)
