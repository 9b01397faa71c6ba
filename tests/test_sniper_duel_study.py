"""Chapter 2's study: profiles, the comparison mechanisms and pairs, the rows' plumbing, the
closed-form caps the page quotes, the paper's Table 5 as data, and the budget figure."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from epsaudit.bounds import bonferroni_alpha, certifiable_cap
from epsaudit.studies import sniper_duel as sniper_figures
from epsaudit.sniper import DEFAULT_C, attack_cap, design_cap, split_budget
from epsaudit.studies import sniper_duel as study
from epsaudit.studies.book import reported


def test_profiles_and_the_calls_parameter():
    assert study.settings("full")["calls"] == 500_000 and study.settings("paper")["calls"] == 6_500_000
    assert study.settings("smoke", 50_000)["budgets"] == (100, 1_000, 20_000, 50_000)
    with pytest.raises(ValueError, match="'tiny'"):
        study.settings("tiny")


def test_the_comparison_mechanisms_have_the_requested_epsilon():
    rr = study.comparison_mechanism("randomized_response", 8.0)
    assert rr.exact_epsilon(0, 1) == pytest.approx(8.0)
    lap = study.comparison_mechanism("laplace", 8.0, dim=16)
    pairs = study.comparison_pairs(lap, 3)
    assert len(pairs) == 3 and all(lap.exact_epsilon(a, b) <= 8.0 + 1e-9 for a, b in pairs)
    assert max(lap.exact_epsilon(a, b) for a in range(20) for b in range(20) if a != b) == pytest.approx(8.0)
    with pytest.raises(ValueError, match="'poisson'"):
        study.comparison_mechanism("poisson", 1.0)


def test_tasks_are_seeded_per_row_and_score_is_checked():
    tasks = study.comparison_tasks(["randomized_response"], (0.0, 8.0), 2_000, n_pairs=2, reps=2)
    assert len(tasks) == 8 and len({t.seed for t in tasks}) == 8
    assert tasks[0].meta == {"mechanism": "randomized_response", "requested_epsilon": 0.0, "pair_index": 0, "rep": 0,
                             "score": "learned"}
    with pytest.raises(ValueError, match="score"):
        study.comparison_tasks(["laplace"], (1.0,), 2_000, score="oracle")
    with pytest.raises(ValueError, match="SniperTask"):
        study.run_tasks([object()])


def test_rows_and_duels_are_certificates_below_the_truth():
    tasks = study.comparison_tasks(["randomized_response"], (0.0, 8.0), 20_000, n_pairs=1, reps=1,
                                   classifier=study.paper_logistic_regression())
    rows = study.run_rows(tasks, n_jobs=1)
    assert len(rows) == 4 and not rows["above_exact"].any()
    top = rows[rows.requested_epsilon == 8.0]["value"]
    assert top.max() > 4.0 and (top <= math.log(1 / DEFAULT_C) + 1e-9).all()  # the log(1/c) ceiling
    duels = study.run_duels(["randomized_response"], (8.0,), (100,), n_pairs=1, reps=1, n_jobs=1,
                            classifier=study.paper_logistic_regression())
    assert list(duels["direction"]).count("both") == 1 and len(duels) == 3
    assert not duels["above_exact"].any() and (duels["value"] > 0).all()


def test_closed_form_caps_the_page_quotes():
    # the matched budget at n = 30: 120 calls per pair, 51 final calls per input
    final = split_budget(120).final
    assert (split_budget(120).train, split_budget(120).threshold) == (6, 3)
    a = study.ALPHA ** (1 / final)
    assert attack_cap(final, study.ALPHA, DEFAULT_C) == pytest.approx(math.log(a / (1 - a)))
    assert certifiable_cap(30, 30, bonferroni_alpha(1), 0.0) > attack_cap(final, study.ALPHA, DEFAULT_C)
    # beyond ~1e3 calls only c limits the cap; the attack firing with prob. c approaches it more slowly
    big = split_budget(1_000_000).final
    assert attack_cap(big, study.ALPHA, DEFAULT_C) == pytest.approx(math.log(1 / DEFAULT_C), abs=0.02)
    assert design_cap(big, study.ALPHA, DEFAULT_C) < attack_cap(big, study.ALPHA, DEFAULT_C)


def test_the_papers_table5_as_data():
    table = reported("picture_table5").pivot_table(index=["mechanism", "statistic"], columns="requested_epsilon",
                                                   values="value")
    assert table.loc[("product Laplace", "bound")].tolist() == [-0.03, 0.12, 0.75, 2.63]
    assert table.loc[("K-ary RR", "bound")].tolist() == [0.12, 0.93, 4.47, 4.60]
    assert table.loc[("K-ary RR", "ratio")].tolist() == [0.23, 0.46, 0.56, 0.14]
    # every K-ary RR bound is below log(1/c) of DP-Sniper's c = 0.01
    assert (table.loc[("K-ary RR", "bound")] < math.log(100)).all()
    protocol = reported("picture_table5_protocol").set_index("quantity")["value"]
    assert protocol["rows_full_budget"] * protocol["calls_per_row"] < protocol["total_calls"]
    assert protocol["rows_full_budget"] + protocol["rows_matched_budget"] == protocol["bounds"] == 324


def test_budget_figure_is_page_sized_with_distinct_colours():
    grid = [100, 1_000, 20_000]
    caps = pd.DataFrame({"calls": grid, "cap": [attack_cap(split_budget(b).final, study.ALPHA, DEFAULT_C) for b in grid],
                         "design_cap": [design_cap(split_budget(b).final, study.ALPHA, DEFAULT_C) for b in grid]})
    rows = pd.DataFrame([dict(mechanism=m, requested_epsilon=e, calls=b, raw=r)
                         for m in ("laplace", "randomized_response") for e in (8.0, 32.0) for b in grid
                         for r in (-1.0 + e / 32, 2.0)])
    fig = sniper_figures.bounds_against_budget(rows, caps, c=DEFAULT_C)
    try:
        axes = fig.get_axes()
        assert 7.5 <= fig.get_size_inches()[0] <= 9
        assert [ax.get_title(loc="left") for ax in axes] == ["16-ary randomized response", "product Laplace (d = 512)"]
        assert all(ax.get_ylabel() == "raw bound on ε (nats)" for ax in axes)
        assert min(ax.get_ylim()[0] for ax in axes) < -1.0
        colours = {line.get_color() for ax in axes for line in ax.get_lines() if line.get_marker() not in ("None", "")}
        assert len(colours) == 2
        sizes = [t.get_fontsize() for ax in axes for t in ax.get_xticklabels() + ax.get_yticklabels()]
        assert min(sizes) >= 12
    finally:
        plt.close(fig)
