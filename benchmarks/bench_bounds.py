"""Time per call of the reserved-test bounds: the split Clopper-Pearson bound and each joint bound.

One run measures every bound on the same grid of counts (n rows per side in 30, 100, 300, 1000;
error rates 0, 1%, 2%, 5% on both sides, alpha = 0.05, delta = 1e-5), so the ratios to the split
bound are comparable even on a busy machine (absolute times are not). Each timed call computes:
the joint bounds' per-input caches and their tail-structure cache are cleared before it (the
Clopper-Pearson bounds of every count per size and level stay cached, as in an audit of many pairs;
the "cold" columns clear those too, the first call at a new size and level).

Also times the planner (``required_test_size``) on a few targets and ``epsaudit plan`` as typed (a new
process, numba's cache warm), and with ``--invariants`` scans
random outcomes for the order of claims (joint >= split, non-increasing in alpha and delta).

    python benchmarks/bench_bounds.py [--repeats 7] [--invariants]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

import numpy as np

from epsaudit.bounds import (bonferroni_alpha, clopper_pearson_epsilon, joint_epsilon, joint_mu,
                             required_test_size)
from epsaudit.bounds import joint

SIZES = (30, 100, 300, 1000)
RATES = (0.0, 0.01, 0.02, 0.05)
ALPHA, DELTA = 0.05, 1e-5


def _clear(cold: bool = False) -> None:
    for name in ("_joint_dp", "_joint_gdp", "_tail") + (("_side", "_side_less", "_log_binomial_coefficients") if cold else ()):
        getattr(joint, name).cache_clear()


def _median_ms(call, repeats: int, cold: bool = False) -> tuple[float, float]:
    """Median wall-clock and CPU (this process) milliseconds per call."""
    wall, cpu = [], []
    for _ in range(repeats):
        _clear(cold)
        t0, c0 = time.perf_counter(), time.process_time()
        call()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return 1e3 * statistics.median(wall), 1e3 * statistics.median(cpu)


def timing_table(repeats: int) -> list[dict]:
    rows = []
    for n in SIZES:
        for rate in RATES:
            k = max(int(round(rate * n)), 1) if rate > 0 else 0
            calls = {
                "split": lambda: clopper_pearson_epsilon(k, n, k, n, ALPHA, DELTA),
                "joint_epsilon": lambda: joint_epsilon(k, n, k, n, ALPHA, DELTA),
                "joint_mu": lambda: joint_mu(k, n, k, n, ALPHA),
            }
            for call in calls.values():  # warm: imports and the per-size Clopper-Pearson bounds
                call()
            ms = {name: _median_ms(call, repeats) for name, call in calls.items()}
            ms.update({f"{name} cold": _median_ms(calls[name], repeats, cold=True) for name in ("joint_epsilon", "joint_mu")})
            rows.append({"n": n, "errors": k, **ms})
    return rows


def planner_table() -> list[dict]:
    rows = []
    for epsilon, tpr, fpr, family in ((3.0, 1.0, 0.0, 1), (6.0, 1.0, 0.0, 40), (2.0, 0.9, 0.05, 1),
                                      (2.5, 0.9, 0.05, 1), (1.0, 0.7, 0.2, 1), (1.1, 0.7, 0.2, 40)):
        for bound in ("joint", "clopper-pearson"):
            _clear()
            t0, c0 = time.perf_counter(), time.process_time()
            n = required_test_size(epsilon, bonferroni_alpha(family), 1e-5, tpr, fpr, bound=bound)
            rows.append({"target": f"eps {epsilon:g}, TPR {tpr:g}, FPR {fpr:g}, family {family}", "bound": bound,
                         "n": n, "wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0})
    return rows


PLAN_TARGETS = ("--epsilon 3", "--epsilon 6 --family 40", "--epsilon 2.5 --tpr 0.9 --fpr 0.05",
                "--epsilon 1 --tpr 0.7 --fpr 0.2", "--epsilon 1.1 --tpr 0.7 --fpr 0.2 --family 40",
                "--epsilon 3 --tpr 0.98 --fpr 0.02 --sequential", "--epsilon 2 --tpr 0.9 --fpr 0.1 --sequential",
                "--epsilon 1.1 --tpr 0.7 --fpr 0.2 --family 40 --sequential")


def plan_table(split_ms: float, repeats: int = 3) -> list[dict]:
    """Wall seconds of ``epsaudit plan`` as a user types it (a new process, after one warm-up run that fills
    numba's on-disk cache; the median of ``repeats`` runs), and as a ratio to one split bound measured in this run."""
    rows = []
    for target in PLAN_TARGETS:
        command = [sys.executable, "-m", "epsaudit", "plan", *target.split()]
        subprocess.run(command, capture_output=True, check=True)
        walls = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            subprocess.run(command, capture_output=True, check=True)
            walls.append(time.perf_counter() - t0)
        wall = statistics.median(walls)
        rows.append({"target": target, "wall_s": wall, "ratio": 1e3 * wall / split_ms})
    return rows


def invariants(seed: int = 26) -> list[tuple]:
    """Random outcomes where the joint bound is below the split one or rises as alpha falls."""
    rng = np.random.default_rng(seed)
    found = []
    for n in (30, 100, 300, 1000):
        for delta in (1e-5, 1e-3, 1e-2, 0.03):
            fp, fn = rng.integers(0, n // 5 + 1, 25), rng.integers(0, n // 5 + 1, 25)
            previous = None
            for alpha in (0.5, 0.05, 1e-3, 1e-6):
                j = np.asarray(joint_epsilon(fp, n, fn, n, alpha, delta))
                s = np.asarray(clopper_pearson_epsilon(fp, n, fn, n, alpha, delta))
                found += [("below split", int(fp[i]), int(fn[i]), n, alpha, delta, float(j[i]), float(s[i]))
                          for i in np.flatnonzero(j < s - 1e-9)]
                if previous is not None:
                    found += [("rises as alpha falls", int(fp[i]), int(fn[i]), n, alpha, delta, float(previous[i]),
                               float(j[i])) for i in np.flatnonzero(j > previous + 1e-9)]
                previous = j
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--invariants", action="store_true")
    args = parser.parse_args()
    print(f"Median ms per call, wall clock (and CPU of this process), alpha {ALPHA}, delta {DELTA}; "
          "ratio to the split bound in this run (wall); cold: with the per-size bounds cleared too (wall)")
    print(f"{'n':>5} {'errors':>6} {'split':>15} {'joint_epsilon':>17} {'ratio':>6} {'cold':>8} "
          f"{'joint_mu':>17} {'ratio':>6} {'cold':>8}")
    table = timing_table(args.repeats)
    for r in table:
        (sw, sc), (ew, ec), (mw, mc) = r["split"], r["joint_epsilon"], r["joint_mu"]
        print(f"{r['n']:>5} {r['errors']:>6} {sw:>7.3f} ({sc:>5.3f}) {ew:>8.3f} ({ec:>6.3f}) {ew / sw:>6.0f} "
              f"{r['joint_epsilon cold'][0]:>8.3f} {mw:>8.3f} ({mc:>6.3f}) {mw / sw:>6.0f} {r['joint_mu cold'][0]:>8.3f}")
    print("\nPlanner (required_test_size), seconds")
    for r in planner_table():
        print(f"  {r['target']:<40} {r['bound']:<16} n = {r['n']:>6}  wall {r['wall_s']:6.2f}  cpu {r['cpu_s']:6.2f}")
    split_ms = statistics.median(r["split"][0] for r in table)
    print(f"\nepsaudit plan, wall seconds of a new process (median of 3 after a warm-up), ratio to one split bound ({split_ms:.3f} ms)")
    for r in plan_table(split_ms):
        print(f"  {r['target']:<62} {r['wall_s']:6.2f} s  {r['ratio']:>8.0f}")
    if args.invariants:
        found = invariants()
        print(f"\nOrder-of-claims scan: {len(found)} finding(s)")
        for row in found[:20]:
            print("  ", row)


if __name__ == "__main__":
    main()
