"""The anytime-valid sequential certificate: its cost per row, and what not fixing the size costs in rows.

    python benchmarks/bench_sequential.py                 # everything (~1-2 min on a loaded 2-core machine)
    python benchmarks/bench_sequential.py --quick         # timing and zero-error tables only
    python benchmarks/bench_sequential.py --runs 1000 --seed 0 --out benchmarks/results/sequential.json

What it measures (95%, delta = 0 unless said; rows alternate A, B, A, ...):

* **Per-update time** of :meth:`epsaudit.bounds.SequentialCertificate.update` (one test row: the
  counts, the freshness check of its draw id, the running bound re-solved only when it can move)
  and per row of ``update_many``, in microseconds, and as a ratio to one split Clopper-Pearson
  bound (:func:`epsaudit.bounds.clopper_pearson_epsilon`, a scalar call) timed in the same run,
  interleaved, so that the load of a shared machine affects both alike.
* **Zero errors: rows per side to certify eps 1-5**: the fixed-size exact joint test
  (:func:`epsaudit.bounds.required_test_size`, bound "joint") against the sequential certificate
  with priors B and Z (the smallest balanced size whose bound reaches eps).
* **Cost at a fixed size**: the bounds of 30, 100 and 300 rows per side with zero errors.
* **Stopping rows at known error rates** (mean, median, 90%, in total rows) for targets 3 and 2 at
  FPR = FNR = 2% and for target 2 at randomized response with eps 3 (its corner rates; target 3 is
  its true epsilon, which no valid bound reaches more often than alpha), with the default prior
  and the plan-informed H, beside the fixed size and its power.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time
from pathlib import Path

import numpy as np

from epsaudit.bounds import (SequentialCertificate, clopper_pearson_epsilon, fixed_size_power, joint_epsilon,
                             required_test_size, sequential_epsilon, sequential_stopping_rows)

ALPHA = 0.05


def timing(rows: int = 4000, rounds: int = 5) -> dict:
    """Median microseconds per update (per scenario) and per split Clopper-Pearson bound, interleaved."""
    rng = np.random.default_rng(0)
    scenarios = {"zero errors": (0.0, 0.0), "2% errors": (0.02, 0.0), "zero errors, delta 1e-5": (0.0, 1e-5),
                 "5% errors, delta 0.05": (0.05, 0.05)}
    out: dict[str, list[float]] = {name: [] for name in scenarios}
    out.update({"update_many (zero errors), per row": [], "clopper_pearson_epsilon": []})
    for _ in range(rounds):
        for name, (rate, delta) in scenarios.items():
            erred = (rng.random(rows) < rate).tolist()
            cert = SequentialCertificate(delta=delta)
            start = time.perf_counter()
            for i in range(rows):
                cert.update("AB"[i % 2], erred[i], i)
            out[name].append((time.perf_counter() - start) / rows * 1e6)
        cert = SequentialCertificate()
        start = time.perf_counter()
        cert.update_many(["AB"[i % 2] for i in range(rows)], [False] * rows, range(rows))
        out["update_many (zero errors), per row"].append((time.perf_counter() - start) / rows * 1e6)
        start = time.perf_counter()
        for k in range(200):
            clopper_pearson_epsilon(k % 3, 100, 0, 100, ALPHA, 0.0)
        out["clopper_pearson_epsilon"].append((time.perf_counter() - start) / 200 * 1e6)
    med = {name: statistics.median(v) for name, v in out.items()}
    cp = med["clopper_pearson_epsilon"]
    return {name: {"microseconds": round(v, 1), "ratio_to_clopper_pearson": round(v / cp, 3)} for name, v in med.items()}


def zero_error_rows(epsilons=(1, 2, 3, 4, 5)) -> dict:
    """Rows per side to certify each eps with zero errors: fixed-size joint, sequential B and Z."""
    out = {}
    for eps in epsilons:
        row = {"fixed-size joint": required_test_size(float(eps), ALPHA, 0.0, bound="joint")}
        for prior in ("B", "Z"):
            n = np.arange(1, 5000)
            ok = sequential_epsilon(0, n, 0, n, ALPHA, prior=prior) >= eps
            row[f"sequential {prior}"] = int(n[np.argmax(ok)])
        out[str(eps)] = row
    return out


def fixed_size_cost(sizes=(30, 100, 300)) -> dict:
    """Bounds at n + n rows with zero errors: fixed-size joint against sequential B and Z."""
    return {str(n): {"fixed-size joint": round(float(joint_epsilon(0, n, 0, n, ALPHA)), 3),
                     "sequential B": round(float(sequential_epsilon(0, n, 0, n, ALPHA, prior="B")), 3),
                     "sequential Z": round(float(sequential_epsilon(0, n, 0, n, ALPHA, prior="Z")), 3)} for n in sizes}


def stopping(runs: int, seed: int) -> list[dict]:
    """Stopping rows at known error rates, beside the fixed size and its power."""
    rr = 1 / (1 + math.exp(3.0))
    cases = [("2% errors", 0.02, 3.0), ("2% errors", 0.02, 2.0), ("randomized response eps 3", rr, 2.0)]
    out = []
    for label, rate, target in cases:
        n = required_test_size(target, ALPHA, 0.0, 1 - rate, rate, bound="joint")
        power = fixed_size_power(n, target, ALPHA, rate, rate, runs=runs, seed=seed)
        for prior in ("B", f"H:{rate:.4g}"):
            s = sequential_stopping_rows(target, ALPHA, rate, rate, prior=prior, runs=runs, max_rows=100 * n, seed=seed)
            out.append({"case": label, "rate": round(rate, 4), "target": target, "prior": prior,
                        "fixed rows per side": n, "fixed power": round(power, 3),
                        **{k: round(v, 1) for k, v in s.items()},
                        "median / fixed total": round(s["median"] / (2 * n), 2),
                        "mean / fixed total": round(s["mean"] / (2 * n), 2)})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="timing and zero-error tables only")
    parser.add_argument("--out", help="write the results as JSON")
    args = parser.parse_args()
    results = {"timing": timing(), "zero_error_rows_per_side": zero_error_rows(), "fixed_size_cost": fixed_size_cost()}
    if not args.quick:
        results["stopping_rows"] = stopping(args.runs, args.seed)
    for section, value in results.items():
        print(f"== {section}")
        for key, row in (value.items() if isinstance(value, dict) else enumerate(value)):
            print(f"  {key}: {row}")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
