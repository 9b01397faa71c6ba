"""Benchmark: what an audit costs per pair and route, and the face pipeline per image, with a projection.

The numbers of the book page "Running at scale" (``book/scale.md``) come from this script:

1. **Per route, one core.** On one committed condition (default ``data/dlib_large_swap.csv``,
   loaded with :func:`epsaudit.data.load_embeddings`, the shuffled pair list of
   :func:`epsaudit.protocol.identity_pairs`), each route's many-pairs function runs in this process
   (``n_jobs=1``, BLAS pinned to one thread) on the protocol's prefix: GaussMech and MMD-TV the
   first ``--pairs``, KDE-LR (both alphas) the first ``--kde-pairs``, ROC-HT out-of-fold the first
   ``--roc-pairs``; the certificate selection (out-of-fold AUC on development rows) over
   ``--selection-pool`` pairs and ``--certificates`` reserved-test certificates. Wall seconds
   (``time.perf_counter``) and CPU seconds of this process (``time.process_time``) per pair, after
   a warm-up call on two pairs.
2. **The whole command.** ``epsaudit audit FILE --pairs P`` as a subprocess with ``--jobs 1`` and
   ``--jobs 2`` (wall; CPU of the process and the children it waited for), and with
   ``--scheduler`` on a ``dask.distributed`` LocalCluster of 2 worker processes with 1 thread each
   (``--cluster``; wall, plus the workers' CPU seconds read with psutil on each worker).
3. **The face pipeline per image**, read from the build manifests (``data/manifest.json``,
   ``data/corpora/corpora_manifest.json`` and, when built, ``data/resampled/resampled_manifest.json``):
   worker seconds per image and step.
4. **A projection** to the paper's size, 79,800 candidate pairs per condition (400 identities):
   per-pair CPU seconds x 79,800, and the wall time on W workers if the work divides evenly.

The machine may be shared: compare CPU seconds, which other load inflates far less than wall time.
Results: printed, and written as JSON to ``--out`` (default ``benchmarks/results/scale.json``, git-ignored).

Usage::

    python benchmarks/bench_scale.py [--condition data/dlib_large_swap.csv] [--pairs 200] [--cluster]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

try:  # run from a checkout without installing: make ``import epsaudit`` work
    import epsaudit  # noqa: F401
except ImportError:  # pragma: no cover
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from threadpoolctl import threadpool_limits

from epsaudit.audits import (
    gaussmech_pairs,
    kde_lr_pairs,
    mmd_tv_pairs,
    reserved_test_pairs,
    roc_oof_pairs,
    select_pairs,
)
from epsaudit.data import load_embeddings
from epsaudit.protocol import identity_pairs, split_identities

ROOT = Path(__file__).resolve().parents[1]
PAPER_PAIRS = 79_800  # 400 identities: 400 * 399 / 2 candidate pairs per condition


def _timed(call: Callable[[], Any]) -> tuple[float, float]:
    w, c = time.perf_counter(), time.process_time()
    call()
    return time.perf_counter() - w, time.process_time() - c


def per_route(path: Path, pairs: int, kde_pairs: int, roc_pairs: int, pool: int, certificates: int) -> dict:
    """Seconds per pair of every route on one core (this process, one BLAS thread)."""
    table = load_embeddings(path)
    groups = table.groups(min_rows=5)
    shuffled = identity_pairs(groups, seed=0)
    dev, test, _ = split_identities(groups, test_size=0.3, seed=0)
    pool_pairs = [p for p in shuffled[:pool] if p[0] in dev and p[1] in dev]
    jobs = {
        "gaussmech": (pairs, lambda ps: gaussmech_pairs(groups, ps)),
        "mmd_tv": (pairs, lambda ps: mmd_tv_pairs(groups, ps, n_jobs=1)),
        "kde_lr (2 alphas)": (kde_pairs, lambda ps: kde_lr_pairs(groups, ps, n_jobs=1)),
        "roc_oof": (roc_pairs, lambda ps: roc_oof_pairs(groups, ps, n_jobs=1)),
        "selection (dev OOF AUC)": (len(pool_pairs), lambda ps: select_pairs(dev, ps, certificates, seed=0)),
    }
    out: dict[str, dict] = {}
    with threadpool_limits(1):
        for name, (n, run) in jobs.items():
            chosen = pool_pairs[:n] if name.startswith("selection") else shuffled[:n]
            run(chosen[:2])  # warm-up: imports, first-call costs
            wall, cpu = _timed(lambda: run(chosen))
            out[name] = {"pairs": len(chosen), "wall_s": wall, "cpu_s": cpu,
                         "wall_s_per_pair": wall / len(chosen), "cpu_s_per_pair": cpu / len(chosen)}
            print(f"  {name:26s} {len(chosen):4d} pairs  {1e3 * wall / len(chosen):9.2f} ms/pair wall  "
                  f"{1e3 * cpu / len(chosen):9.2f} ms/pair CPU", flush=True)
        selected, _ = select_pairs(dev, pool_pairs, certificates, seed=0)
        wall, cpu = _timed(lambda: reserved_test_pairs(dev, selected, test_groups=test, seed=0, n_jobs=1))
        out["reserved-test certificate"] = {"pairs": len(selected), "wall_s": wall, "cpu_s": cpu,
                                            "wall_s_per_pair": wall / len(selected),
                                            "cpu_s_per_pair": cpu / len(selected)}
        print(f"  {'reserved-test certificate':26s} {len(selected):4d} pairs  {1e3 * wall / len(selected):9.2f} "
              f"ms/pair wall  {1e3 * cpu / len(selected):9.2f} ms/pair CPU", flush=True)
    sizes = sorted(len(v) for v in groups.values())
    return {"condition": str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path),
            "identities": len(groups), "candidate_pairs": len(shuffled), "dimension": int(table.embeddings.shape[1]),
            "rows_per_identity": {"min": sizes[0], "median": sizes[len(sizes) // 2], "max": sizes[-1]},
            "routes": out}


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def command(path: Path, pairs: int, extra: list[str]) -> dict:
    """``epsaudit audit`` as a subprocess: wall and CPU seconds (of the processes it waited for)."""
    cmd = [sys.executable, "-m", "epsaudit.cli", "audit", str(path), "--pairs", str(pairs), *extra]
    c0, w0 = _children_cpu(), time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - w0, _children_cpu() - c0
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    print(f"  epsaudit audit --pairs {pairs} {' '.join(extra):40s} {wall:7.1f} s wall  {cpu:7.1f} s CPU", flush=True)
    return {"args": extra, "wall_s": wall, "cpu_s": cpu, "stdout": done.stdout}


def _worker_cpu() -> float:
    import psutil

    t = psutil.Process().cpu_times()
    return t.user + t.system


def on_cluster(path: Path, pairs: int) -> dict:
    """The command with ``--scheduler`` on a LocalCluster (2 workers x 1 thread): wall, and CPU of the
    workers (psutil on each worker) and of the command's own process."""
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster, Client(cluster) as client:
        before = client.run(_worker_cpu)
        res = command(path, pairs, ["--scheduler", cluster.scheduler_address])
        after = client.run(_worker_cpu)
    workers = sum(after[w] - before[w] for w in after)
    print(f"  ... workers' CPU {workers:.1f} s (2 workers x 1 thread); the command's own process {res['cpu_s']:.1f} s")
    return {**res, "workers_cpu_s": workers}


def pipeline_costs() -> dict:
    """Worker seconds per image and step, read from the committed build manifests."""
    out: dict[str, Any] = {}
    manifest = ROOT / "data" / "manifest.json"
    if manifest.exists():
        run = json.loads(manifest.read_text())["run"]
        out["conditions"] = {"images": run["images"], "wall_s": run["wall_seconds"], "n_jobs": run["n_jobs"],
                             "steps": {k: {"s_per_image": v["seconds_summed_over_workers"] / v["images"],
                                           "images": v["images"]}
                                       for k, v in run["stages"].items() if "images" in v}}
    corpora = ROOT / "data" / "corpora" / "corpora_manifest.json"
    if corpora.exists():
        doc = json.loads(corpora.read_text())
        out["corpora"] = {"wall_s": doc["run"]["wall_seconds"], "stage_wall_s": doc["run"]["stage_wall_seconds"],
                          "cpu_s_by_step": doc["run"]["cpu_seconds_by_step"], "n_jobs": doc["run"]["n_jobs"]}
        try:  # images encoded per stage: rows of the stage's table (one per encoded image)
            import pyarrow.parquet as pq

            rows = {k: pq.ParquetFile(corpora.parent / f"dlib_{k}.parquet").metadata.num_rows
                    for k in ("cascade", "operator", "originals")}
            rows["screen"] = doc["design"]["originals"]["screened_for_landmarks"]
            out["corpora"]["images"] = rows
            out["corpora"]["s_per_image"] = {step: sec / rows[step.split(":")[0]]
                                             for step, sec in doc["run"]["cpu_seconds_by_step"].items()
                                             if step.split(":")[0] in rows}
        except (ImportError, OSError):
            pass
    resampled = ROOT / "data" / "resampled" / "resampled_manifest.json"
    if resampled.exists():
        doc = json.loads(resampled.read_text())
        out["resampled"] = {"wall_s": doc["run"]["wall_seconds"], "n_jobs": doc["run"]["n_jobs"],
                            "steps": {s: r["steps"] for s, r in doc["run"]["stages"].items()}}
    return out


def projection(routes: dict, workers: tuple[int, ...] = (2, 16, 64)) -> dict:
    """CPU hours for 79,800 pairs per route, and hours of wall time on W workers (even split)."""
    out = {}
    for name, r in routes.items():
        cpu_h = r["cpu_s_per_pair"] * PAPER_PAIRS / 3600
        out[name] = {"cpu_hours": cpu_h, **{f"wall_hours_{w}_workers": cpu_h / w for w in workers}}
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--condition", default="data/dlib_large_swap.csv")
    p.add_argument("--pairs", type=int, default=200, help="GaussMech and MMD-TV pairs; the command's --pairs")
    p.add_argument("--kde-pairs", type=int, default=50)
    p.add_argument("--roc-pairs", type=int, default=100)
    p.add_argument("--selection-pool", type=int, default=100)
    p.add_argument("--certificates", type=int, default=5)
    p.add_argument("--cluster", action="store_true", help="also run the command on a 2-worker LocalCluster")
    p.add_argument("--skip-command", action="store_true", help="only the per-route timings")
    p.add_argument("--out", default="benchmarks/results/scale.json")
    a = p.parse_args(argv)
    path = (ROOT / a.condition).resolve()
    load = os.getloadavg()
    print(f"{path.name}: load average {load[0]:.2f} (1 min) on {os.cpu_count()} logical cores", flush=True)
    result: dict[str, Any] = {"python": platform.python_version(), "cpu_count": os.cpu_count(),
                              "load_average_start": load}
    result["per_route"] = per_route(path, a.pairs, a.kde_pairs, a.roc_pairs, a.selection_pool, a.certificates)
    result["projection_79800_pairs"] = projection(result["per_route"]["routes"])
    if not a.skip_command:
        result["command"] = [command(path, a.pairs, ["--jobs", "1"]), command(path, a.pairs, ["--jobs", "2"])]
        if a.cluster:
            result["command"].append(on_cluster(path, a.pairs))
        same = {r["stdout"] for r in result["command"]}
        print(f"  the commands' tables are {'identical' if len(same) == 1 else 'DIFFERENT'}")
        result["command_tables_identical"] = len(same) == 1
    result["pipeline"] = pipeline_costs()
    result["load_average_end"] = os.getloadavg()
    print("projection to 79,800 pairs per condition (CPU hours; wall hours on 16 / 64 workers):")
    for name, r in result["projection_79800_pairs"].items():
        print(f"  {name:26s} {r['cpu_hours']:8.2f}  {r['wall_hours_16_workers']:7.3f}  "
              f"{r['wall_hours_64_workers']:7.3f}")
    out = ROOT / a.out
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1, default=str) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
