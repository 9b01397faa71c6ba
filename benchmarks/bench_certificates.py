"""Certificates from test counts: the exact joint bound, the split Clopper-Pearson bound and the field's tools.

    _build/peers-venv/bin/python benchmarks/bench_certificates.py           # everything (~30 min, loaded 2 cores)
    _build/peers-venv/bin/python benchmarks/bench_certificates.py --no-slow # without joint-beta (seconds a bound)
    _build/peers-venv/bin/python benchmarks/bench_certificates.py --quick   # 200 runs, no slow peer, small grid
    python benchmarks/bench_certificates.py --runs 2000 --n 100 --epsilon 1 --delta 1e-5 --seed 0 \\
        --out benchmarks/results/certificates.json --committed book/data/certificates

Run it in an environment with the optional extra ``epsaudit[peers]`` (jax-privacy, privacy-estimates,
riskcal; a separate venv: their pins conflict with ``requirements-lock.txt``). A tool that does not
import is recorded as such and its rows are left out; the book reads the committed output only.

What it measures, all on the same counts:

* **The least favourable point.** A fixed test of a pair at the randomized-response corner of
  (epsilon, delta)-DP, ``FPR = FNR = (1 - delta) / (1 + e^epsilon)`` (the point of the null region
  where zero errors are likeliest): ``--runs`` simulated runs of ``--n`` test rows per side, counts
  ``FP ~ Bin(n, FPR)``, ``FN ~ Bin(n, FNR)`` drawn once. Every method turns each run's counts into
  a bound at ``--confidence``; its *exceedance rate* is the fraction of runs whose bound exceeds the
  true epsilon, with a two-sided 95% Clopper-Pearson interval. A confidence bound at 95% may exceed
  it in at most 5% of runs. Each method is evaluated once per distinct count pair (a bound is a
  function of the counts). Times per bound are measured apart, interleaved: 20 random cells of the
  run, each evaluated by every method in turn (scalar call, caches cleared; the slow peer on 3),
  the median kept and given as a ratio to the joint bound's, so that a change of load on a shared
  machine affects all methods alike (``--retime`` measures them again for an earlier run). For the
  two bounds of epsaudit the exact exceedance probability (a sum over all outcomes of
  non-negligible probability) is given too.
  privacy-estimates' ``joint-beta`` takes seconds a bound (a numerical double integral per
  posterior probability, inside a root search); it is decided from its own posterior probability
  of the true epsilon's region over a lower set of count pairs (:func:`joint_beta_at_corner`).
* **Fixed counts.** The table of issue 17 (the split Clopper-Pearson bound against the joint bound
  at 95%, delta = 0), every method on the same six count pairs, and the rows per side each method
  needs to certify epsilon = 3 with zero errors.
* **Cost of the joint bound** at 30, 100, 1000 and 10,000 rows per side, with zero errors and with
  5% errors on each side.
* **Joint >= split** on an exhaustive grid of counts (every outcome of every pair of sizes in
  ``GRID_SIZES``, up to 60 + 60 rows).

The methods (``METHODS``): epsaudit's ``joint_epsilon`` (exact joint test) and ``certified_epsilon``
with ``bound="clopper-pearson"`` (the split bound of *Picture the Epsilon*); jax-privacy's
``CanaryScoreAuditor.epsilon_clopper_pearson`` (explicit threshold, both directions),
``epsilon_from_gdp`` (a mu bound converted to epsilon as if the mechanism were Gaussian) and
``epsilon_one_run`` (explicit threshold; the one-run model of Steinke, Nasr & Jagielski, whose
canaries are included at random: another sampling model); privacy-estimates' ``compute_eps_lo`` with
``beta`` (Clopper-Pearson), ``jeffreys`` and ``joint-beta`` (Bayesian credible bounds) and
``joint-dirichlet``; riskcal's ``get_epsilon_from_err_rates`` on the observed rates (riskcal has no
step from counts to a bound: this is the plug-in estimate). Counts become the peers' inputs as they
document them: jax-privacy takes attack scores (a test row scored 1 when the test says "A", else 0,
threshold 0.5), privacy-estimates an ``AttackResults(FN, FP, TN, TP)``.

Output: ``--out`` (JSON, everything, git-ignored) and, with ``--committed DIR``, the JSON and the
small display tables (CSV) the methods chapter reads at build time.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import math
import os
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from scipy import stats

#: Sizes of the exhaustive joint >= split grid: every outcome of every (n_neg, n_pos) pair below.
GRID_SIZES: tuple[int, ...] = (1, 2, 5, 10, 20, 30, 45, 60)
#: (rows per side, FP, FN) of issue 17's table.
ISSUE_TABLE: tuple[tuple[int, int, int], ...] = ((10, 0, 0), (30, 0, 0), (100, 0, 0), (100, 1, 1), (100, 5, 5),
                                                 (1000, 0, 0))
TIMING_SIZES: tuple[int, ...] = (30, 100, 1000, 10000)
PEERS: tuple[str, ...] = ("jax-privacy", "privacy-estimates", "riskcal")


# ---------------------------------------------------------------------------------------------
# The methods: each maps (fp, n_neg, fn, n_pos, alpha, delta) of one test to a number
# ---------------------------------------------------------------------------------------------


def _ours_joint(fp, n_neg, fn, n_pos, alpha, delta):
    from epsaudit.bounds import joint_epsilon

    return float(joint_epsilon(fp, n_neg, fn, n_pos, alpha, delta))


def _ours_split(fp, n_neg, fn, n_pos, alpha, delta):
    from epsaudit.bounds import certified_epsilon

    return float(certified_epsilon(fp, n_neg, fn, n_pos, alpha, delta, bound="clopper-pearson"))


def _scores(fp, n_neg, fn, n_pos):
    """jax-privacy's input: one score per test row, 1 where the test says "A" (in), else 0."""
    in_scores = np.r_[np.ones(n_pos - fn), np.zeros(fn)]
    out_scores = np.r_[np.ones(fp), np.zeros(n_neg - fp)]
    return in_scores, out_scores


def _jax_auditor(fp, n_neg, fn, n_pos):
    from jax_privacy.auditing import CanaryScoreAuditor

    return CanaryScoreAuditor(*_scores(fp, n_neg, fn, n_pos))


def _jax_cp(fp, n_neg, fn, n_pos, alpha, delta):
    from jax_privacy.auditing import Explicit

    auditor = _jax_auditor(fp, n_neg, fn, n_pos)
    return float(auditor.epsilon_clopper_pearson(alpha, delta, one_sided=False, threshold_strategy=Explicit(0.5)))


def _jax_gdp(fp, n_neg, fn, n_pos, alpha, delta):
    return float(_jax_auditor(fp, n_neg, fn, n_pos).epsilon_from_gdp(alpha, delta))


def _jax_one_run(fp, n_neg, fn, n_pos, alpha, delta):
    from jax_privacy.auditing import Explicit

    auditor = _jax_auditor(fp, n_neg, fn, n_pos)
    return float(auditor.epsilon_one_run(alpha, delta, threshold_strategy=Explicit(0.5)))


def _privacy_estimates(method):
    def bound(fp, n_neg, fn, n_pos, alpha, delta):
        from privacy_estimates import AttackResults, compute_eps_lo

        counts = AttackResults(FN=int(fn), FP=int(fp), TN=int(n_neg - fp), TP=int(n_pos - fn))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return float(compute_eps_lo(counts, delta, alpha, method))

    return bound


def _riskcal_plug_in(fp, n_neg, fn, n_pos, alpha, delta):
    from riskcal.analysis import get_epsilon_from_err_rates

    with np.errstate(divide="ignore", invalid="ignore"):  # zero errors: log(x / 0) = +inf
        return float(get_epsilon_from_err_rates(delta, np.float64(fp / n_neg), np.float64(fn / n_pos)))


#: key -> (tool, function as called, kind, callable). Kinds: "confidence" (a lower confidence bound
#: under the two-sample model), "confidence, other model", "credible", "parametric", "estimate".
METHODS: dict[str, tuple[str, str, str, object]] = {
    "joint": ("epsaudit", "joint_epsilon", "confidence (exact joint test)", _ours_joint),
    "split": ("epsaudit", 'certified_epsilon (bound "clopper-pearson")', "confidence (split Clopper-Pearson)",
              _ours_split),
    "jax_cp": ("jax-privacy", "epsilon_clopper_pearson (explicit threshold, both directions)",
               "confidence (split Clopper-Pearson)",
               _jax_cp),
    "pe_beta": ("privacy-estimates", 'compute_eps_lo (method "beta")', "confidence (split Clopper-Pearson)",
                _privacy_estimates("beta")),
    "jax_one_run": ("jax-privacy", "epsilon_one_run (explicit threshold)", "confidence, one-run model",
                    _jax_one_run),
    "pe_jeffreys": ("privacy-estimates", 'compute_eps_lo (method "jeffreys")', "credible (split Jeffreys)",
                    _privacy_estimates("jeffreys")),
    "pe_joint_beta": ("privacy-estimates", 'compute_eps_lo (method "joint-beta")', "credible (joint Beta posterior)",
                      _privacy_estimates("joint-beta")),
    "pe_joint_dirichlet": ("privacy-estimates", 'compute_eps_lo (method "joint-dirichlet")',
                           "credible (joint Dirichlet)",
                           _privacy_estimates("joint-dirichlet")),
    "jax_gdp": ("jax-privacy", "epsilon_from_gdp", "parametric (μ bound, Gaussian shape assumed)", _jax_gdp),
    "riskcal_plug_in": ("riskcal", "get_epsilon_from_err_rates (observed rates)", "estimate (plug-in, no confidence)",
                        _riskcal_plug_in),
}
#: Methods too slow for ``--quick`` (a numerical double integral per bound: seconds each).
SLOW = ("pe_joint_beta",)


def peer_versions() -> list[dict]:
    """Which peer tools import here, with their versions or the exact error."""
    modules = {"jax-privacy": "jax_privacy.auditing", "privacy-estimates": "privacy_estimates",
               "riskcal": "riskcal.analysis"}
    out = []
    for name in PEERS:
        row = {"package": name}
        try:
            row["version"] = importlib.metadata.version(name)
            __import__(modules[name])
            row["imports"] = True
        except Exception as exc:  # noqa: BLE001 - recorded, not fatal: the peers are optional
            row["imports"] = False
            row["error"] = f"{type(exc).__name__}: {exc}"
        out.append(row)
    return out


def usable_methods(peers: list[dict], quick: bool) -> list[str]:
    ok = {row["package"] for row in peers if row["imports"]} | {"epsaudit"}
    keys = [k for k, (tool, *_rest) in METHODS.items() if tool in ok]
    return [k for k in keys if not (quick and k in SLOW)]


def _clear_caches() -> None:
    """Forget the joint bound's per-count caches (results and tails) so that every timed call computes; the
    Clopper-Pearson bounds of every count per size and level stay cached, as in an audit of many pairs."""
    from epsaudit.bounds import joint

    for name in ("_joint_dp", "_joint_gdp", "_tail"):
        fn = getattr(joint, name, None)
        if hasattr(fn, "cache_clear"):
            fn.cache_clear()


def evaluate(key: str, cells: np.ndarray, n_neg: int, n_pos: int, alpha: float, delta: float) -> dict:
    """One method on every distinct (fp, fn) cell: values (NaN where it raised), seconds per call."""
    fn = METHODS[key][3]
    _clear_caches()
    values, seconds, error = np.full(len(cells), np.nan), [], None
    for i, (fp, fn_count) in enumerate(cells):
        t0 = time.perf_counter()
        try:
            values[i] = fn(int(fp), n_neg, int(fn_count), n_pos, alpha, delta)
        except Exception as exc:  # noqa: BLE001 - a tool that fails on these counts is reported
            error = f"{type(exc).__name__}: {exc}"
        seconds.append(time.perf_counter() - t0)
        if error is not None and i == 0:
            break  # fails on the first cell: it fails everywhere (recorded once)
    return {"values": values, "seconds": np.array(seconds), "error": error}


def binomial_interval(k: int, n: int) -> tuple[float, float]:
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    return float(ci.low), float(ci.high)


# ---------------------------------------------------------------------------------------------
# The experiments
# ---------------------------------------------------------------------------------------------


def corner_runs(args) -> tuple[np.ndarray, np.ndarray, float]:
    """The simulated counts at the randomized-response corner: FP and FN of every run, and the rate."""
    from epsaudit.protocol import generator

    rate = (1 - args.delta) / (1 + math.exp(args.epsilon))
    rng = generator(args.seed, "bench-certificates", "corner")
    return rng.binomial(args.n, rate, args.runs), rng.binomial(args.n, rate, args.runs), rate


def exact_exceedance(key: str, n: int, rate: float, alpha: float, delta: float, epsilon: float) -> float:
    """P(bound > epsilon) at the corner, summed over every outcome with probability above 1e-14."""
    x = np.arange(n + 1)
    pmf = stats.binom.pmf(x, n, rate)
    support = x[pmf > 1e-7]  # per side; the product of two such is above 1e-14
    fp, fn = np.meshgrid(support, support, indexing="ij")
    fp, fn = fp.ravel(), fn.ravel()
    if key == "joint":
        from epsaudit.bounds import joint_epsilon

        bound = np.asarray(joint_epsilon(fp, n, fn, n, alpha, delta))
    else:
        from epsaudit.bounds import certified_epsilon

        bound = np.asarray(certified_epsilon(fp, n, fn, n, alpha, delta, bound="clopper-pearson"))
    prob = stats.binom.pmf(fp, n, rate) * stats.binom.pmf(fn, n, rate)
    return float(prob[bound > epsilon + 1e-9].sum())


def _posterior_null_probability(cells, n_neg, n_pos, epsilon, delta):
    """privacy-estimates' posterior probability of the (epsilon, delta) region, one cell at a time."""
    from privacy_estimates import AttackResults
    from privacy_estimates.joint_density import Beta

    out = np.empty(len(cells))
    for i, (fp, fn) in enumerate(cells):
        counts = AttackResults(FN=int(fn), FP=int(fp), TN=int(n_neg - fp), TP=int(n_pos - fn))
        out[i] = Beta(count=counts).probability_private(eps=epsilon, delta=delta, epsabs=5e-3)
    return out


def joint_beta_at_corner(cells, n, alpha, delta, epsilon, timing_cells: int, seed: int) -> dict:
    """privacy-estimates' ``joint-beta`` on every cell, decided as the tool decides but cheaply.

    Its bound (``Beta(count).eps_lo``) is the root in eps of ``P_post(N(eps)) - alpha``, the
    posterior probability of the (eps, delta) region (Jeffreys priors), which grows with eps; so the
    bound exceeds ``epsilon`` exactly when ``P_post(N(epsilon)) < alpha``: one double integral per
    cell (the tool's own ``probability_private``, at the tolerance its ``eps_lo`` uses) instead of a
    root search. Where that probability is within a factor 1.25 of ``alpha`` the tool's bound itself
    is computed (its root search stops at a tolerance of 0.01) and compared instead. The time per
    bound is that of full ``compute_eps_lo(..., "joint-beta")`` calls on ``timing_cells`` random
    cells and on those near cells.
    """
    prob = np.full(len(cells), np.nan)

    def probability(i):
        if np.isnan(prob[i]):
            prob[i] = _posterior_null_probability(cells[i:i + 1], n, n, epsilon, delta)[0]
        return prob[i]

    # The posterior probability of the region grows with either count here (the posterior sits in
    # the lower left, far from the anti-diagonal), so {exceeds} is a lower set of cells: per FP
    # value a bisection over the FN values present, bounded by the previous column's edge.
    exceeds = np.zeros(len(cells), dtype=bool)
    edge = np.inf
    for fp in np.unique(cells[:, 0]):
        col = np.flatnonzero((cells[:, 0] == fp) & (cells[:, 1] <= edge))
        col = col[np.argsort(cells[col, 1])]
        lo, hi = -1, len(col)  # col[:lo + 1] exceed, col[hi:] do not
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if probability(col[mid]) < alpha else (lo, mid)
        exceeds[col[:lo + 1]] = True
        if hi < len(col):  # this column's edge lies below its first cell that does not exceed
            edge = min(edge, cells[col[hi], 1] - 1)
    rng = np.random.default_rng(seed)
    check = rng.choice(np.flatnonzero(np.isnan(prob)), size=min(8, int(np.isnan(prob).sum())), replace=False)
    for i in check:  # a few cells the bisection did not visit: the lower-set shortcut must agree
        if (probability(i) < alpha) != exceeds[i]:
            raise RuntimeError(f"joint-beta: cell {cells[i]} contradicts the lower-set shortcut")
    near = np.flatnonzero((prob > alpha / 1.25) & (prob < 1.25 * alpha))
    timed = np.union1d(near, rng.choice(len(cells), size=min(timing_cells, len(cells)), replace=False))
    full = evaluate("pe_joint_beta", cells[timed], n, n, alpha, delta)
    values = np.full(len(cells), np.nan)
    values[timed] = full["values"]
    exceeds[near] = values[near] > epsilon + 1e-9
    return {"values": values, "exceeds": exceeds, "seconds": full["seconds"], "error": full["error"],
            "posterior_null_probability": prob, "near_cells": int(len(near)),
            "cells_integrated": int(np.sum(~np.isnan(prob)))}


def corner_table(args, keys: list[str]) -> tuple[list[dict], dict]:
    fp, fn, rate = corner_runs(args)
    alpha = 1 - args.confidence
    cells, inverse = np.unique(np.stack([fp, fn], axis=1), axis=0, return_inverse=True)
    inverse = np.asarray(inverse).ravel()
    print(f"corner: FPR = FNR = {rate:.6f}, {args.runs} runs of {args.n} + {args.n} rows, "
          f"{len(cells)} distinct count pairs", flush=True)
    rows, base = [], None
    for key in keys:
        t0 = time.perf_counter()
        if key == "pe_joint_beta":
            res = joint_beta_at_corner(cells, args.n, alpha, args.delta, args.epsilon, 4, args.seed)
        else:
            res = evaluate(key, cells, args.n, args.n, alpha, args.delta)
        tool, function, kind, _ = METHODS[key]
        row = {"method": key, "tool": tool, "function": function, "kind": kind, "runs": args.runs,
               "distinct_counts": int(len(cells)), "calls_timed": int(len(res["seconds"])),
               "seconds_per_bound": float(np.mean(res["seconds"])), "error": res["error"]}
        if res["error"] is None:
            exceeds = res["exceeds"] if "exceeds" in res else res["values"] > args.epsilon + 1e-9
            k = int(np.sum(exceeds[inverse]))
            low, high = binomial_interval(k, args.runs)
            row.update(exceedances=k, exceedance_rate=k / args.runs, rate_ci_low=low, rate_ci_high=high)
            if "exceeds" not in res:
                per_run = res["values"][inverse]
                row.update(median_bound=float(np.median(per_run)), per_run=per_run)
            else:
                row["near_cells_computed_in_full"] = res["near_cells"]
                row["cells_integrated"] = res["cells_integrated"]
        if key == "joint":
            base = row["seconds_per_bound"]
        row["time_ratio_to_joint"] = row["seconds_per_bound"] / base if base else float("nan")
        rows.append(row)
        shown = (f"{row['exceedances']:5d} exceed ({row['exceedance_rate']:.2%}, CI {row['rate_ci_low']:.2%}-"
                 f"{row['rate_ci_high']:.2%}), median {row.get('median_bound', math.nan):.3f}" if res["error"] is None
                 else f"failed: {res['error']}")
        print(f"  {key:<20} {shown}, {1e3 * row['seconds_per_bound']:.3g} ms/bound "
              f"({time.perf_counter() - t0:.0f} s)", flush=True)
    # The same counts: the split bounds of the three tools coincide.
    ref = next(r for r in rows if r["method"] == "split")["per_run"]
    for r in rows:
        if r["method"] in ("jax_cp", "pe_beta") and "per_run" in r:
            r["max_abs_difference_from_split"] = float(np.max(np.abs(r["per_run"] - ref)))
    exact = {key: exact_exceedance(key, args.n, rate, alpha, args.delta, args.epsilon) for key in ("joint", "split")}
    print(f"  exact exceedance probability: joint {exact['joint']:.4f}, split {exact['split']:.4f}", flush=True)
    for r in rows:
        if r["method"] in exact:
            r["exact_exceedance_probability"] = exact[r["method"]]
    for r in rows:
        r.pop("per_run", None)
    return rows, {"rate": rate, "fp": fp.tolist(), "fn": fn.tolist()}


def interleaved_times(keys: list[str], cells: np.ndarray, n: int, alpha: float, delta: float, seed: int,
                      sample: int = 20, slow_sample: int = 3) -> dict[str, float]:
    """Seconds per bound of every method on the same random corner cells, interleaved cell by cell.

    Each cell is evaluated by every method in turn (a scalar call, caches cleared), so a change of
    load on the shared machine affects all methods alike; the median over the cells is kept. The
    slow peer is timed on the first ``slow_sample`` cells only.
    """
    rng = np.random.default_rng([seed, 1])
    chosen = cells[rng.choice(len(cells), size=min(sample, len(cells)), replace=False)]
    times: dict[str, list[float]] = {k: [] for k in keys}
    for i, (fp, fn) in enumerate(chosen):
        for key in keys:
            if key in SLOW and i >= slow_sample:
                continue
            _clear_caches()
            t0 = time.perf_counter()
            try:
                METHODS[key][3](int(fp), n, int(fn), n, alpha, delta)
            except Exception:  # noqa: BLE001 - a failing tool is timed to its failure
                pass
            times[key].append(time.perf_counter() - t0)
    return {k: float(np.median(v)) for k, v in times.items() if v}


def retime(result: dict, keys: list[str]) -> None:
    """Replace the corner table's times by :func:`interleaved_times` and redo :func:`joint_times`."""
    s = result["settings"]
    cells = np.unique(np.stack([result["corner_counts"]["fp"], result["corner_counts"]["fn"]], axis=1), axis=0)
    times = interleaved_times(keys, cells, s["n"], 1 - s["confidence"], s["delta"], s["seed"])
    for row in result["corner"]:
        if row["method"] in times:
            row["seconds_per_bound"] = times[row["method"]]
            row["time_ratio_to_joint"] = times[row["method"]] / times["joint"]
            row["timing"] = "interleaved: median over the same random corner cells, methods in turn"
            print(f"  time {row['method']:<20} {1e3 * row['seconds_per_bound']:.3g} ms "
                  f"({row['time_ratio_to_joint']:.3g} x joint)", flush=True)
    result["joint_times"] = joint_times(s["confidence"], s["delta"])
    result["environment"]["load_average_retimed"] = os.getloadavg()


def issue_table(confidence: float) -> list[dict]:
    """Issue 17's table recomputed: split Clopper-Pearson against the joint bound, delta = 0."""
    alpha, rows = 1 - confidence, []
    for n, fp, fn in ISSUE_TABLE:
        rows.append({"rows_per_side": n, "fp": fp, "fn": fn, "split": _ours_split(fp, n, fn, n, alpha, 0.0),
                     "joint": _ours_joint(fp, n, fn, n, alpha, 0.0)})
    return rows


def counts_table(keys: list[str], confidence: float, delta: float) -> list[dict]:
    """Every method on the six count pairs of :data:`ISSUE_TABLE`, at ``delta``."""
    alpha, rows = 1 - confidence, []
    for n, fp, fn in ISSUE_TABLE:
        row = {"rows_per_side": n, "fp": fp, "fn": fn}
        for key in keys:
            if key in SLOW and n != 100:  # minutes a bound at zero errors: the 100-row cells only
                row[key] = None
                continue
            res = evaluate(key, np.array([[fp, fn]]), n, n, alpha, delta)
            row[key] = None if res["error"] else float(res["values"][0])
        rows.append(row)
        print(f"  counts {n}, ({fp}, {fn}): " + ", ".join(f"{k} {row[k]}" for k in keys if row[k] is not None),
              flush=True)
    return rows


def rows_needed(key: str, target: float, alpha: float, delta: float, limit: int = 100000) -> int | None:
    """Smallest rows per side at which a method's zero-error bound reaches ``target`` (None: beyond limit).

    Zero-error bounds grow with the size for every method here: a doubling search, then bisection.
    """
    fn = METHODS[key][3]

    def reaches(n: int) -> bool:
        value = fn(0, n, 0, n, alpha, delta)
        return bool(np.isfinite(value) and value >= target) or value == np.inf

    start = 8 if key in SLOW else 1  # the slow peer: fewer calls (its bound at 8 rows is far below 3)
    if reaches(start):
        return start if start == 1 or not reaches(start - 1) else _down(reaches, start)
    lo, hi = start, 2 * start
    while not reaches(hi):
        lo, hi = hi, 2 * hi
        if hi > limit:
            return None
    while hi - lo > 1:  # reaches(hi), not reaches(lo)
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if reaches(mid) else (mid, hi)
    return hi


def _down(reaches, n: int) -> int:
    while n > 1 and reaches(n - 1):
        n -= 1
    return n


def rows_table(keys: list[str], confidence: float, delta: float, target: float = 3.0) -> list[dict]:
    alpha, rows = 1 - confidence, []
    for key in keys:
        try:
            n = rows_needed(key, target, alpha, delta)
            row = {"method": key, "target_epsilon": target, "rows_per_side": n}
        except Exception as exc:  # noqa: BLE001
            row = {"method": key, "target_epsilon": target, "rows_per_side": None,
                   "error": f"{type(exc).__name__}: {exc}"}
        if key in ("joint", "split"):
            from epsaudit.bounds import required_test_size

            bound = "joint" if key == "joint" else "clopper-pearson"
            row["required_test_size"] = int(required_test_size(target, alpha, delta, bound=bound))
        rows.append(row)
        print(f"  rows for epsilon {target} at zero errors: {key} {row['rows_per_side']}", flush=True)
    return rows


def joint_times(confidence: float, delta: float, repeats: int = 3) -> list[dict]:
    """Seconds per joint bound (and per split bound, for the ratio) at each size, 0% and 5% errors."""
    alpha, rows = 1 - confidence, []
    for n in TIMING_SIZES:
        for errors in (0, round(0.05 * n)):
            best = {}
            for key in ("joint", "split"):
                times = []
                for _ in range(repeats if n < 10000 or errors == 0 else 1):
                    _clear_caches()
                    t0 = time.perf_counter()
                    value = METHODS[key][3](errors, n, errors, n, alpha, delta)
                    times.append(time.perf_counter() - t0)
                best[key] = (min(times), value)
            rows.append({"rows_per_side": n, "fp": errors, "fn": errors, "joint_seconds": best["joint"][0],
                         "split_seconds": best["split"][0], "ratio": best["joint"][0] / best["split"][0],
                         "joint": best["joint"][1], "split": best["split"][1]})
            print(f"  time {n} rows, {errors} + {errors} errors: joint {1e3 * best['joint'][0]:.3g} ms "
                  f"({best['joint'][1]:.3f}), split {1e3 * best['split'][0]:.3g} ms", flush=True)
    return rows


def grid_check(confidence: float, delta: float, sizes=GRID_SIZES) -> dict:
    """Joint >= split at every outcome of every pair of sizes in ``sizes`` (0 violations expected)."""
    from epsaudit.bounds import certified_epsilon, joint_epsilon

    alpha, outcomes, worst, t0 = 1 - confidence, 0, 0.0, time.perf_counter()
    for n_neg in sizes:
        for n_pos in sizes:
            fp, fn = np.meshgrid(np.arange(n_neg + 1), np.arange(n_pos + 1), indexing="ij")
            fp, fn = fp.ravel(), fn.ravel()
            joint = np.asarray(joint_epsilon(fp, n_neg, fn, n_pos, alpha, delta))
            split = np.asarray(certified_epsilon(fp, n_neg, fn, n_pos, alpha, delta, bound="clopper-pearson"))
            outcomes += fp.size
            worst = max(worst, float(np.max(split - joint)))
    seconds = time.perf_counter() - t0
    print(f"  grid: {outcomes} outcomes, largest split - joint {worst:.3g}, {seconds:.0f} s", flush=True)
    return {"sizes": list(sizes), "outcomes": outcomes, "largest_split_minus_joint": worst,
            "below_split": int(worst > 1e-9), "seconds": seconds, "delta": delta}


# ---------------------------------------------------------------------------------------------
# Display tables (the methods chapter reads these at build time)
# ---------------------------------------------------------------------------------------------


def _fmt(x, digits=3):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "--"
    if x == np.inf:
        return "inf"
    return f"{x:.{digits}f}"


def _time(seconds: float) -> str:
    ms = 1e3 * seconds
    return f"{seconds:.2g} s" if seconds >= 1 else (f"{ms:.0f} ms" if ms >= 10 else f"{ms:.2g} ms")


def _ratio(x: float) -> str:
    return f"{x:.0f}" if x >= 10 else f"{x:.2g}"


#: Short names of the methods in the book's tables.
LABELS = {"joint": "epsaudit, joint", "split": "epsaudit, split", "jax_cp": "jax-privacy, Clopper-Pearson",
          "pe_beta": "privacy-estimates, beta", "jax_one_run": "jax-privacy, one run",
          "pe_jeffreys": "privacy-estimates, jeffreys", "pe_joint_beta": "privacy-estimates, joint-beta",
          "pe_joint_dirichlet": "privacy-estimates, joint-dirichlet", "jax_gdp": "jax-privacy, from GDP",
          "riskcal_plug_in": "riskcal, plug-in"}


def display_tables(result: dict) -> dict[str, list[list[str]]]:
    """The book's tables (lists of rows, the first the header), formatted from a benchmark result."""
    s = result["settings"]
    zero = next((r for r in result["counts"] if (r["rows_per_side"], r["fp"], r["fn"]) == (100, 0, 0)), {})
    needed = {r["method"]: r for r in result["rows_for_epsilon"]}
    target = result["rows_for_epsilon"][0]["target_epsilon"]
    tools = [["method", "function called", "kind of number"]]
    for r in result["corner"]:
        function = METHODS[r["method"]][1] if r["method"] in METHODS else r["function"]
        name, _, note = function.partition(" (")
        kind = METHODS[r["method"]][2] if r["method"] in METHODS else r["kind"]
        tools.append([LABELS[r["method"]], f"`{name}`" + (f" ({note}" if note else ""), kind])
    methods = [["method", "zero errors, 100 + 100 rows", f"rows per side for ε = {target:g} at zero errors",
                f"exceeds the true ε = {s['epsilon']:g} (95% interval)", "time per bound (÷ joint)"]]
    for r in result["corner"]:
        key = r["method"]
        if r.get("error"):
            rate = f"fails ({r['error'].split(':')[0]})"
        else:
            rate = f"{r['exceedance_rate']:.1%} ({100 * r['rate_ci_low']:.1f}–{100 * r['rate_ci_high']:.1f}%)"
        n = needed.get(key, {}).get("rows_per_side")
        methods.append([LABELS[key], _fmt(zero.get(key)), "--" if n is None else str(n), rate,
                        f"{_time(r['seconds_per_bound'])} ({_ratio(r['time_ratio_to_joint'])})"])
    issue = [["test rows per side, (FP, FN)", "split Clopper–Pearson", "exact joint test"]]
    issue += [[f"{r['rows_per_side']}, ({r['fp']}, {r['fn']})", _fmt(r["split"]), _fmt(r["joint"])]
              for r in result["issue_table"]]
    times = [["test rows per side", "errors per side", "joint bound", "split bound", "joint ÷ split"]]
    times += [[str(r["rows_per_side"]), str(r["fp"]), _time(r["joint_seconds"]), _time(r["split_seconds"]),
               _ratio(r["ratio"])] for r in result["joint_times"]]
    return {"tools": tools, "methods": methods, "issue_table": issue, "joint_times": times}


def write_committed(result: dict, folder: Path) -> None:
    import csv

    folder.mkdir(parents=True, exist_ok=True)
    slim = {k: v for k, v in result.items() if k != "corner_counts"}
    (folder / "bench_certificates.json").write_text(json.dumps(slim, indent=1, default=float) + "\n")
    for name, table in display_tables(result).items():
        with (folder / f"{name}.csv").open("w", newline="", encoding="utf-8") as f:
            csv.writer(f).writerows(table)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=2000)
    p.add_argument("--n", type=int, default=100, help="test rows per side at the corner")
    p.add_argument("--epsilon", type=float, default=1.0)
    p.add_argument("--delta", type=float, default=1e-5)
    p.add_argument("--confidence", type=float, default=0.95)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-slow", action="store_true", help="leave out privacy-estimates' joint-beta (seconds a bound)")
    p.add_argument("--quick", action="store_true", help="200 runs, no slow peer, small grid (a smoke run)")
    p.add_argument("--out", type=Path, default=Path("benchmarks/results/certificates.json"))
    p.add_argument("--committed", type=Path, default=None, help="folder of the committed output the book reads")
    p.add_argument("--tables-from", type=Path, default=None,
                   help="only rewrite the --committed tables from this JSON of an earlier run (no computation)")
    p.add_argument("--retime", action="store_true",
                   help="with --tables-from: measure the times again (interleaved) and keep the values")
    args = p.parse_args(argv)
    if args.tables_from is not None:
        if args.committed is None:
            p.error("--tables-from needs --committed")
        result = json.loads(args.tables_from.read_text())
        if args.retime:
            retime(result, [row["method"] for row in result["corner"] if row["method"] in METHODS])
            args.tables_from.write_text(json.dumps(result, indent=1, default=float) + "\n")
        write_committed(result, args.committed)
        return 0
    if args.quick:
        args.runs = min(args.runs, 200)
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} (1 min) on {os.cpu_count()} logical cores", flush=True)
    peers = peer_versions()
    for row in peers:
        print(f"  {row['package']}: " + (row["version"] if row["imports"] else f"not usable ({row['error']})"))
    keys = usable_methods(peers, args.quick or args.no_slow)
    result = {"settings": {k: v for k, v in vars(args).items() if k not in ("out", "committed")}}
    result["environment"] = {"python": platform.python_version(), "cores": os.cpu_count(),
                             "numpy": np.__version__, "scipy": importlib.metadata.version("scipy"),
                             "epsaudit": importlib.metadata.version("epsaudit"), "load_average_start": load}
    result["peers"] = peers
    result["corner"], result["corner_counts"] = corner_table(args, keys)
    times = interleaved_times(keys, np.unique(np.stack([result["corner_counts"]["fp"], result["corner_counts"]["fn"]],
                                                       axis=1), axis=0), args.n, 1 - args.confidence, args.delta,
                              args.seed)
    for row in result["corner"]:  # the per-call means above ran one method after another: replace them
        row.update(seconds_per_bound=times[row["method"]], time_ratio_to_joint=times[row["method"]] / times["joint"],
                   timing="interleaved: median over the same random corner cells, methods in turn")
    result["issue_table"] = issue_table(args.confidence)
    result["counts"] = counts_table(keys, args.confidence, args.delta)
    result["rows_for_epsilon"] = rows_table(keys, args.confidence, args.delta)
    result["joint_times"] = joint_times(args.confidence, args.delta)
    result["grid"] = grid_check(args.confidence, args.delta, GRID_SIZES[:5] if args.quick else GRID_SIZES)
    result["environment"]["load_average_end"] = os.getloadavg()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1, default=float) + "\n")
    if args.committed is not None:
        write_committed(result, args.committed)
    print(f"wrote {args.out}" + (f" and {args.committed}/" if args.committed else ""))
    return 0 if result["grid"]["below_split"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
