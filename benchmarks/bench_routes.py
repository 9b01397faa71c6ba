"""Benchmark: epsaudit's audit routes against the strongest simple loops a user would write.

One run, one synthetic data set (identities with small mean shifts plus Gaussian noise, rows
L2-normalised like face embeddings), one shuffled pair list from :func:`epsaudit.protocol.identity_pairs`.
For every route the script computes the values with each baseline and with the library, checks that
they agree (maximum relative difference against a tolerance; ``+inf`` must coincide), times every
implementation in the same run and reports the library against the *best* baseline of its route.

Baselines (all pair by pair, numpy / scipy / scikit-learn):

* GaussMech  -- ``paper loop``: per pair ``np.mean``, the rms residual, ``np.linalg.norm``;
  ``cached loop``: the same with each identity's mean and residual scale computed once.
* MMD-TV     -- ``paper loop``: ``pdist`` on the pooled sample (median heuristic) and three
  ``cdist`` kernel blocks (*Picture the Epsilon*, Section III); ``one BLAS matrix``: one
  ``z @ z.T`` distance matrix of the pooled pair; ``cached loop``: each identity's within-class
  distances once, per pair only the cross block (the library's own algorithm, as a plain loop).
* KDE-LR     -- ``scipy loop``: per coordinate ``scipy.stats.gaussian_kde`` per class on a
  201-point grid (costs ~0.3 s per pair, so timed on a prefix; ratios are per pair).
* ROC-HT OOF -- ``scikit-learn loop``: per pair ``cross_val_predict`` of the default pipeline
  (``StandardScaler`` + ``LogisticRegression``) on the library's seeded folds, then the ROC;
  ``library, solver="sklearn"``: the library's per-pair reference path. The library fits all folds
  of all pairs in batches (:mod:`epsaudit.audits._batched_logistic`).
* ROC-HT OOF on a committed table (``--table``, default ``data/dlib_large_swap.csv``, 128-D face
  embeddings, the first ``--roc-pairs`` of its shuffled pairs): the same two baselines.
* MMD-TV at large n (one pair of ``--large-n`` rows per identity): the ``one BLAS matrix`` loop and
  the library in memory against the library's exact blocked computation; peak memory from
  ``tracemalloc`` (numpy's buffers included).

Timing: ``time.perf_counter`` wall time after one warm-up call on a 2-pair prefix; calls shorter
than 1 s are repeated (at most 5 times) and the fastest kept; the process CPU time of that call is
recorded too (it excludes joblib worker processes, and other load on a shared machine moves it much
less than wall time). "1 core" means it: every timing runs with the BLAS thread pool pinned to
``--blas-threads`` (default 1), so the "2 cores" column gets its parallelism only from
``n_jobs=2``. The load average (``os.getloadavg``, as ``uptime`` prints it) is recorded at the start
and the end.

Usage::

    python benchmarks/bench_routes.py [--pairs 500] [--n 100] [--dim 512] [--seed 0]
                                      [--out benchmarks/results/routes.csv]
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import numpy as np

try:  # run from a checkout without installing: make ``import epsaudit`` work
    import epsaudit
except ImportError:  # pragma: no cover
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import joblib
import scipy
import sklearn
from scipy.spatial.distance import cdist, pdist
from scipy.stats import gaussian_kde
from sklearn.metrics import roc_auc_score, roc_curve
from sklearn.model_selection import StratifiedKFold, cross_val_predict
from threadpoolctl import threadpool_info, threadpool_limits

import epsaudit
from epsaudit.audits import (
    gaussmech_pairs,
    kde_lr_pairs,
    mmd,
    mmd_tv_pairs,
    roc_oof_pairs,
)
from epsaudit.protocol import identity_pairs, sklearn_seed
from epsaudit.audits.scorers import logistic_regression

DELTA = 1e-5
KDE_ALPHAS = (0.0, 0.01)
KDE_GRID = 201
KDE_MARGIN = 3.0
KDE_FLOOR = 1e-12
TOLERANCE = {"gaussmech": 1e-9, "mmd_tv": 1e-9, "kde_lr": 1e-4, "roc_oof": 1e-6, "roc_table": 1e-6, "mmd_large": 1e-9}
ROUTES = ("gaussmech", "mmd_tv", "kde_lr", "roc_oof", "roc_table", "mmd_large")
REPO = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------------------------


def synthetic_groups(identities: int, n: int, dim: int, seed: int, shift: float = 0.1) -> dict[int, np.ndarray]:
    """``identities`` classes of ``n`` rows in ``dim`` dimensions, rows L2-normalised like face embeddings.

    Identity means are a common centre (norm 2) plus a small random shift; rows add isotropic
    Gaussian noise. Per coordinate the noise has scale 1 / sqrt(dim) and the shift
    ``shift / sqrt(dim)``, so two identities' means are ``shift * sqrt(2 dim)`` noise standard
    deviations apart (~3.2 at the defaults): with n = 100, d = 512 the out-of-fold logistic
    regression reaches a median AUC of ~0.94 -- distinguishable, not trivially separated.
    """
    rng = np.random.default_rng(seed)
    centre = rng.normal(size=dim)
    centre *= 2.0 / np.linalg.norm(centre)
    groups = {}
    for k in range(identities):
        mean = centre + shift * rng.normal(size=dim) / np.sqrt(dim)
        x = mean + rng.normal(size=(n, dim)) / np.sqrt(dim)
        groups[k] = x / np.linalg.norm(x, axis=1, keepdims=True)
    return groups


# ---------------------------------------------------------------------------------------------
# baselines: the loops a user would write
# ---------------------------------------------------------------------------------------------


def _gauss_c(delta: float = DELTA) -> float:
    return float(np.sqrt(2.0 * np.log(1.25 / delta)))


def loop_gaussmech(groups, pairs) -> np.ndarray:
    """Paper loop: everything recomputed per pair."""
    c, out = _gauss_c(), np.empty(len(pairs))
    for k, (ia, ib) in enumerate(pairs):
        a, b = groups[ia], groups[ib]
        mu_a, mu_b = np.mean(a, axis=0), np.mean(b, axis=0)
        sigma_a, sigma_b = np.sqrt(np.mean((a - mu_a) ** 2)), np.sqrt(np.mean((b - mu_b) ** 2))
        out[k] = np.linalg.norm(mu_a - mu_b) * c / max(sigma_a, sigma_b)
    return out


def cached_gaussmech(groups, pairs) -> np.ndarray:
    """Cached loop: each identity's mean and rms residual once, then O(d) per pair."""
    c, out, stats = _gauss_c(), np.empty(len(pairs)), {}
    for k, (ia, ib) in enumerate(pairs):
        for i in (ia, ib):
            if i not in stats:
                mu = groups[i].mean(axis=0)
                stats[i] = mu, np.sqrt(np.mean((groups[i] - mu) ** 2))
        (mu_a, s_a), (mu_b, s_b) = stats[ia], stats[ib]
        out[k] = np.linalg.norm(mu_a - mu_b) * c / max(s_a, s_b)
    return out


def _mmd_epsilon(mmd2: float) -> float:
    return 2.0 * np.arctanh(np.sqrt(max(mmd2, 0.0)) / 2.0)


def loop_mmd_tv(groups, pairs) -> np.ndarray:
    """Paper loop: ``pdist`` for the median heuristic and three ``cdist`` kernel blocks per pair."""
    out = np.empty(len(pairs))
    for k, (ia, ib) in enumerate(pairs):
        a, b = groups[ia], groups[ib]
        m, n = len(a), len(b)
        s = np.median(pdist(np.vstack([a, b])))
        g = 1.0 / (2.0 * s * s)
        k_aa, k_bb = np.exp(-g * cdist(a, a, "sqeuclidean")), np.exp(-g * cdist(b, b, "sqeuclidean"))
        k_ab = np.exp(-g * cdist(a, b, "sqeuclidean"))
        out[k] = _mmd_epsilon((k_aa.sum() - np.trace(k_aa)) / (m * (m - 1)) + (k_bb.sum() - np.trace(k_bb)) / (n * (n - 1))
                              - 2.0 * k_ab.sum() / (m * n))
    return out


def _sq_dist(x, y, sx, sy):
    return np.maximum(sx[:, None] + sy[None, :] - 2.0 * (x @ y.T), 0.0)


def blas_mmd_tv(groups, pairs) -> np.ndarray:
    """One BLAS distance matrix of the pooled pair per pair."""
    out = np.empty(len(pairs))
    for k, (ia, ib) in enumerate(pairs):
        a, b = groups[ia], groups[ib]
        m, n = len(a), len(b)
        z = np.vstack([a, b])
        sq = np.einsum("ij,ij->i", z, z)
        d2 = _sq_dist(z, z, sq, sq)
        s = np.median(np.sqrt(d2[np.triu_indices(m + n, k=1)]))
        kern = np.exp(-d2 / (2.0 * s * s))
        np.fill_diagonal(kern, 0.0)
        out[k] = _mmd_epsilon(kern[:m, :m].sum() / (m * (m - 1)) + kern[m:, m:].sum() / (n * (n - 1))
                              - 2.0 * kern[:m, m:].sum() / (m * n))
    return out


def cached_mmd_tv(groups, pairs) -> np.ndarray:
    """Cached loop: each identity's within-class distances once; per pair the cross block, median, kernel sums."""
    out, cache = np.empty(len(pairs)), {}
    for k, (ia, ib) in enumerate(pairs):
        for i in (ia, ib):
            if i not in cache:
                x = groups[i]
                sq = np.einsum("ij,ij->i", x, x)
                cache[i] = x, sq, _sq_dist(x, x, sq, sq)[np.triu_indices(len(x), k=1)]
        (a, sa, ua), (b, sb, ub) = cache[ia], cache[ib]
        m, n = len(a), len(b)
        d_ab = _sq_dist(a, b, sa, sb)
        s = np.median(np.sqrt(np.concatenate([ua, ub, d_ab.ravel()])))
        g = -1.0 / (2.0 * s * s)
        out[k] = _mmd_epsilon(2.0 * np.exp(g * ua).sum() / (m * (m - 1)) + 2.0 * np.exp(g * ub).sum() / (n * (n - 1))
                              - 2.0 * np.exp(g * d_ab).sum() / (m * n))
    return out


def loop_kde_lr(groups, pairs, alphas=KDE_ALPHAS) -> np.ndarray:
    """scipy loop, shape (len(pairs), len(alphas)): KDE-LR sums for each alpha from one pair of KDEs per coordinate."""
    out = np.zeros((len(pairs), len(alphas)))
    for k, (ia, ib) in enumerate(pairs):
        a, b = groups[ia], groups[ib]
        for j in range(a.shape[1]):
            kde_a = gaussian_kde(a[:, j], bw_method="silverman")
            kde_b = gaussian_kde(b[:, j], bw_method="silverman")
            h = max(np.sqrt(kde_a.covariance[0, 0]), np.sqrt(kde_b.covariance[0, 0]))
            lo = min(a[:, j].min(), b[:, j].min()) - KDE_MARGIN * h
            hi = max(a[:, j].max(), b[:, j].max()) + KDE_MARGIN * h
            grid = np.linspace(lo, hi, KDE_GRID)
            p_a, p_b = kde_a(grid), kde_b(grid)
            for i, alpha in enumerate(alphas):
                u = alpha / (hi - lo)
                la = np.log(np.maximum((1 - alpha) * p_a + u, KDE_FLOOR))
                lb = np.log(np.maximum((1 - alpha) * p_b + u, KDE_FLOOR))
                out[k, i] += np.max(np.abs(la - lb))
    return out


def loop_roc_oof(groups, pairs, seed: int = 0, folds: int = 5) -> np.ndarray:
    """scikit-learn loop, shape (len(pairs), 2): ``cross_val_predict`` of the default pipeline; epsilon and AUC."""
    out = np.empty((len(pairs), 2))
    for k, (ia, ib) in enumerate(pairs):
        a, b = groups[ia], groups[ib]
        x, y = np.vstack([a, b]), np.r_[np.ones(len(a), dtype=int), np.zeros(len(b), dtype=int)]
        cv = StratifiedKFold(n_splits=folds, shuffle=True, random_state=sklearn_seed("roc-folds", seed))
        scores = cross_val_predict(logistic_regression(), x, y, cv=cv, method="predict_proba")[:, 1]
        fpr, tpr, _ = roc_curve(y, scores, drop_intermediate=False)
        with np.errstate(divide="ignore", invalid="ignore"):
            up = np.where(tpr > 0, np.log(tpr) - np.log(fpr), -np.inf)  # +inf at FPR = 0 < TPR
            down = np.where(1 - fpr > 0, np.log(1 - fpr) - np.log(1 - tpr), -np.inf)
        out[k] = max(float(np.max(np.maximum(up, down))), 0.0), roc_auc_score(y, scores)
    return out


# ---------------------------------------------------------------------------------------------
# library calls, reduced to arrays comparable with the baselines
# ---------------------------------------------------------------------------------------------


def lib_gaussmech(groups, pairs) -> np.ndarray:
    return np.array([r.value for r in gaussmech_pairs(groups, pairs, delta=DELTA)])


def lib_mmd_tv(groups, pairs, n_jobs=1) -> np.ndarray:
    return np.array([r.value for r in mmd_tv_pairs(groups, pairs, permutations=0, n_jobs=n_jobs)])


def lib_kde_lr(groups, pairs, n_jobs=1) -> np.ndarray:
    res = kde_lr_pairs(groups, pairs, alphas=KDE_ALPHAS, n_jobs=n_jobs)
    return np.array([r.value for r in res]).reshape(len(pairs), len(KDE_ALPHAS))


def lib_roc_oof(groups, pairs, n_jobs=1, seed: int = 0, solver: str = "auto") -> np.ndarray:
    res = roc_oof_pairs(groups, pairs, seed=seed, n_jobs=n_jobs, solver=solver)
    return np.array([[r.value, r.statistics.auc] for r in res])


# ---------------------------------------------------------------------------------------------
# timing and comparison
# ---------------------------------------------------------------------------------------------


def timed(fn: Callable[[list], np.ndarray], pairs: list, warm: list | None,
          min_seconds: float = 1.0, max_repeats: int = 5):
    """Warm up with ``fn(warm)``, then time ``fn(pairs)``: (values, best wall s, CPU s of that call)."""
    if warm is not None:
        fn(warm)  # imports, caches, joblib worker start-up
    best, best_cpu, total, calls = np.inf, np.inf, 0.0, 0
    while calls == 0 or (total < min_seconds and calls < max_repeats):
        c0, t0 = time.process_time(), time.perf_counter()
        values = fn(pairs)
        dt, dc = time.perf_counter() - t0, time.process_time() - c0
        if dt < best:
            best, best_cpu = dt, dc
        total, calls = total + dt, calls + 1
    return values, best, best_cpu


def peak_memory(fn: Callable[[], object]) -> float:
    """Peak traced memory of ``fn()`` in MB (numpy buffers included)."""
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def max_relative_difference(x: np.ndarray, ref: np.ndarray) -> float:
    """max |x - ref| / |ref| over finite entries; +inf if the infinite entries disagree."""
    x, ref = np.asarray(x, dtype=float), np.asarray(ref, dtype=float)
    if not np.array_equal(np.isinf(x), np.isinf(ref)) or not np.array_equal(x[np.isinf(x)], ref[np.isinf(ref)]):
        return float("inf")
    fin = np.isfinite(ref)
    if not fin.any():
        return 0.0
    scale = np.maximum(np.abs(ref[fin]), np.finfo(float).tiny)
    return float(np.max(np.abs(x[fin] - ref[fin]) / scale))


def library_versions() -> str:
    blas = ", ".join(f"{i['internal_api']} {i.get('version')}" for i in threadpool_info() if i["user_api"] == "blas")
    return (f"python {platform.python_version()}, numpy {np.__version__}, scipy {scipy.__version__}, "
            f"scikit-learn {sklearn.__version__}, joblib {joblib.__version__}, "
            f"epsaudit {getattr(epsaudit, '__version__', '?')}, BLAS: {blas or 'unknown'}")


def load_average() -> str:
    try:
        return "/".join(f"{x:.2f}" for x in os.getloadavg())
    except (AttributeError, OSError):  # not available on Windows
        return "n/a"


def fmt_time(t: float | None) -> str:
    if t is None or not np.isfinite(t):
        return "-"
    return f"{t * 1e3:.3f} ms" if t < 1 else f"{t:.3f} s"


def fmt_ratio(r: float | None) -> str:
    return "-" if r is None or not np.isfinite(r) else f"{r:.1f}x"


def print_table(header: list[str], rows: list[list[str]]) -> None:
    table = [header] + rows
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for i, row in enumerate(table):
        print("| " + " | ".join(cell.ljust(w) for cell, w in zip(row, widths)) + " |")
        if i == 0:
            print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    print()


# ---------------------------------------------------------------------------------------------
# the run
# ---------------------------------------------------------------------------------------------


def route_specs(args, groups, all_pairs) -> dict[str, dict]:
    """Per route: its label, the library's pairs and calls (1 core, 2 cores) and its baselines."""
    pairs, kde_pairs = all_pairs[: args.pairs], all_pairs[: args.kde_pairs]
    kde_base = all_pairs[: min(args.kde_baseline_pairs, args.kde_pairs)]
    roc_pairs, seed = all_pairs[: args.roc_pairs], args.seed
    return {
        "gaussmech": {"label": "GaussMech", "pairs": pairs, "one": lambda ps: lib_gaussmech(groups, ps), "two": None,
                      "baselines": [("paper loop", pairs, lambda ps: loop_gaussmech(groups, ps)),
                                    ("cached loop", pairs, lambda ps: cached_gaussmech(groups, ps))]},
        "mmd_tv": {"label": "MMD-TV (no perm.)", "pairs": pairs, "one": lambda ps: lib_mmd_tv(groups, ps, 1),
                   "two": lambda ps: lib_mmd_tv(groups, ps, 2),
                   "baselines": [("paper loop (pdist/cdist)", pairs, lambda ps: loop_mmd_tv(groups, ps)),
                                 ("one BLAS matrix", pairs, lambda ps: blas_mmd_tv(groups, ps)),
                                 ("cached loop", pairs, lambda ps: cached_mmd_tv(groups, ps))]},
        "kde_lr": {"label": "KDE-LR (a=0, 0.01)", "pairs": kde_pairs, "one": lambda ps: lib_kde_lr(groups, ps, 1),
                   "two": lambda ps: lib_kde_lr(groups, ps, 2),
                   "baselines": [("scipy loop", kde_base, lambda ps: loop_kde_lr(groups, ps))]},
        "roc_oof": _roc_spec("ROC-HT OOF", groups, roc_pairs, seed),
    }


def _roc_spec(label: str, groups, pairs, seed: int) -> dict:
    return {"label": label, "pairs": pairs, "one": lambda ps: lib_roc_oof(groups, ps, 1, seed),
            "two": lambda ps: lib_roc_oof(groups, ps, 2, seed),
            "baselines": [("scikit-learn loop", pairs, lambda ps: loop_roc_oof(groups, ps, seed)),
                          ('library, solver="sklearn"', pairs,
                           lambda ps: lib_roc_oof(groups, ps, 1, seed, solver="sklearn"))]}


def table_spec(args) -> tuple[dict, list]:
    """ROC-HT OOF on a committed embedding table (epsaudit's loader; identities with >= 5 rows)."""
    from epsaudit.data import load_embeddings

    path = Path(args.table) if Path(args.table).is_absolute() else REPO / args.table
    groups = load_embeddings(path).groups(min_rows=5)
    pairs = identity_pairs(groups, seed=args.seed)
    return _roc_spec(f"ROC-HT OOF, {path.name}", groups, pairs[: args.roc_pairs], args.seed), pairs[:2]


def run_route(name: str, spec: dict, warm: list) -> tuple[list[dict], dict]:
    """Time the library and every baseline of one route; compare their values."""
    print(f"[{name}] library ...", end=" ", flush=True)
    values, t1, c1 = timed(spec["one"], spec["pairs"], warm)
    n = len(spec["pairs"])
    rows = [{"route": spec["label"], "implementation": "library (1 core)", "pairs": n, "s_per_pair": t1 / n,
             "cpu_s_per_pair": c1 / n, "max_rel_diff": 0.0}]
    two = None
    if spec["two"] is not None:
        v2, t2, _ = timed(spec["two"], spec["pairs"], warm)
        two = t2 / n
        rows.append({"route": spec["label"], "implementation": "library (n_jobs=2)", "pairs": n, "s_per_pair": two,
                     "cpu_s_per_pair": None, "max_rel_diff": max_relative_difference(v2, values)})
    print(f"{t1:.2f} s", flush=True)
    for label, pairs, fn in spec["baselines"]:
        print(f"[{name}] {label} on {len(pairs)} pairs ...", end=" ", flush=True)
        ref, t, c = timed(fn, pairs, warm)
        print(f"{t:.2f} s", flush=True)
        rows.append({"route": spec["label"], "implementation": label, "pairs": len(pairs), "s_per_pair": t / len(pairs),
                     "cpu_s_per_pair": c / len(pairs), "max_rel_diff": max_relative_difference(values[: len(ref)], ref)})
    base = [r for r in rows if not r["implementation"].startswith("library (")]
    best = min(base, key=lambda r: r["s_per_pair"])
    best_cpu = min(base, key=lambda r: r["cpu_s_per_pair"])
    diff = max(r["max_rel_diff"] for r in rows)
    summary = {"route": spec["label"], "best_baseline": best["implementation"], "best_s_per_pair": best["s_per_pair"],
               "library_s_per_pair": t1 / n, "ratio": best["s_per_pair"] / (t1 / n),
               "ratio_cpu": best_cpu["cpu_s_per_pair"] / (c1 / n) if c1 > 0 else float("nan"),
               "library_2core_s_per_pair": two, "ratio_2core": None if two is None else best["s_per_pair"] / two,
               "max_rel_diff": diff, "tolerance": TOLERANCE[name], "values_match": diff <= TOLERANCE[name]}
    return rows, summary


def run_large(args) -> tuple[list[dict], dict]:
    """One MMD-TV pair at large n: the BLAS loop and the library in memory against the exact blocked path."""
    groups = synthetic_groups(2, args.large_n, args.dim, args.seed + 1, shift=args.shift)
    pair = [(0, 1)]
    label = f"MMD-TV n = {args.large_n} + {args.large_n}"
    blocked = mmd._too_large(args.large_n, args.large_n)
    print(f"[mmd_large] one pair of {args.large_n} + {args.large_n} rows "
          f"({'blocked' if blocked else 'in memory'} by default) ...", flush=True)

    def in_memory(ps):
        limit = mmd.MAX_IN_MEMORY
        mmd.MAX_IN_MEMORY = 2**62
        try:
            return lib_mmd_tv(groups, ps, 1)
        finally:
            mmd.MAX_IN_MEMORY = limit

    impls = [("library, exact blocked" if blocked else "library", lambda ps: lib_mmd_tv(groups, ps, 1)),
             ("library in memory", in_memory), ("one BLAS matrix", lambda ps: blas_mmd_tv(groups, ps))]
    rows, ref = [], None
    for name, fn in impls:
        values, t, c = timed(fn, pair, None, min_seconds=0.0, max_repeats=1)
        mem = peak_memory(lambda fn=fn: fn(pair))
        ref = values if ref is None else ref
        rows.append({"route": label, "implementation": name, "pairs": 1, "s_per_pair": t, "cpu_s_per_pair": c,
                     "peak_mb": mem, "max_rel_diff": max_relative_difference(values, ref)})
        print(f"  {name}: {t:.2f} s, peak {mem:.0f} MB", flush=True)
    diff = max(r["max_rel_diff"] for r in rows)
    summary = {"route": label, "best_baseline": "one BLAS matrix", "best_s_per_pair": rows[2]["s_per_pair"],
               "library_s_per_pair": rows[0]["s_per_pair"], "ratio": rows[2]["s_per_pair"] / rows[0]["s_per_pair"],
               "ratio_cpu": rows[2]["cpu_s_per_pair"] / rows[0]["cpu_s_per_pair"], "library_2core_s_per_pair": None,
               "ratio_2core": None, "max_rel_diff": diff, "tolerance": TOLERANCE["mmd_large"],
               "values_match": diff <= TOLERANCE["mmd_large"], "peak_mb": rows[0]["peak_mb"],
               "baseline_peak_mb": rows[2]["peak_mb"]}
    return rows, summary


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pairs", type=int, default=500, help="pairs for GaussMech and MMD-TV (default 500)")
    p.add_argument("--identities", type=int, default=40, help="synthetic identities (default 40: 780 pairs)")
    p.add_argument("--shift", type=float, default=0.1,
                   help="identity mean shift, in units of the per-row noise norm (default 0.1)")
    p.add_argument("--n", type=int, default=100, help="rows per identity (default 100)")
    p.add_argument("--dim", type=int, default=512, help="embedding dimension (default 512)")
    p.add_argument("--seed", type=int, default=0, help="data, pair-shuffle and fold seed (default 0)")
    p.add_argument("--kde-pairs", type=int, default=100,
                   help="pairs for the library's KDE-LR timing (default 100, the paper's KDE-LR prefix)")
    p.add_argument("--kde-baseline-pairs", type=int, default=40,
                   help="prefix timed with the scipy gaussian_kde loop (default 40; ~0.3 s per pair)")
    p.add_argument("--roc-pairs", type=int, default=200,
                   help="pairs for ROC-HT OOF, loops and library (default 200, the paper's ROC-HT prefix)")
    p.add_argument("--table", default="data/dlib_large_swap.csv",
                   help="committed table of the roc_table route (default data/dlib_large_swap.csv)")
    p.add_argument("--large-n", type=int, default=1500,
                   help="rows per identity of the large-n MMD-TV pair (default 1500: 4.5 million pooled distances, "
                        "above the in-memory limit)")
    p.add_argument("--blas-threads", type=int, default=1,
                   help="BLAS threads during every timing (default 1, so '1 core' is one core)")
    p.add_argument("--routes", default=",".join(ROUTES), help=f"comma-separated subset of {','.join(ROUTES)}")
    p.add_argument("--out", default="benchmarks/results/routes.csv", help="CSV of all timings ('' = none)")
    args = p.parse_args(argv)

    routes = [r.strip() for r in args.routes.split(",") if r.strip()]
    unknown = set(routes) - set(ROUTES)
    if unknown or not routes:
        p.error(f"--routes: unknown {sorted(unknown)}; choose from {list(ROUTES)}")
    groups = synthetic_groups(args.identities, args.n, args.dim, args.seed, shift=args.shift)
    all_pairs = identity_pairs(groups, seed=args.seed)
    if max(args.pairs, args.kde_pairs, args.roc_pairs) > len(all_pairs):
        p.error(f"more pairs asked for than the {len(all_pairs)} pairs of {args.identities} identities")
    warm = all_pairs[:2]

    print("epsaudit route benchmark: the library against the strongest simple loops, one run")
    print(f"machine: {platform.machine()}, {os.cpu_count()} logical cores (os.cpu_count), "
          f"joblib.cpu_count() = {joblib.cpu_count()}; BLAS pinned to {args.blas_threads} thread(s)")
    print(f"versions: {library_versions()}")
    start_load = load_average()
    print(f"load average at start (1/5/15 min, as uptime): {start_load} -- other processes skew wall times; "
          "CPU times are the cross-check")
    print(f"data: {args.identities} synthetic identities x n = {args.n} rows x d = {args.dim} "
          f"(L2-normalised, mean shift {args.shift:g} + Gaussian noise), seed {args.seed}; "
          f"pairs from identity_pairs(seed={args.seed})")
    print()

    rows, summaries = [], []
    started, cpu_started = time.perf_counter(), time.process_time()
    with threadpool_limits(limits=args.blas_threads, user_api="blas"):
        specs = route_specs(args, groups, all_pairs)
        for name in routes:
            if name == "mmd_large":
                r, s = run_large(args)
            elif name == "roc_table":
                spec, table_warm = table_spec(args)
                r, s = run_route(name, spec, table_warm)
            else:
                r, s = run_route(name, specs[name], warm)
            rows += r
            summaries.append(s)
    elapsed, cpu_elapsed = time.perf_counter() - started, time.process_time() - cpu_started

    print()
    print("All implementations (seconds per pair; CPU = this process's CPU time, joblib workers excluded):")
    print_table(["route", "implementation", "pairs", "wall s/pair", "CPU s/pair", "peak MB", "max rel diff"],
                [[r["route"], r["implementation"], str(r["pairs"]), fmt_time(r["s_per_pair"]),
                  fmt_time(r["cpu_s_per_pair"]), f"{r['peak_mb']:.0f}" if r.get("peak_mb") else "-",
                  f"{r['max_rel_diff']:.1e}"] for r in rows])
    print("The library against the best baseline of each route (ratio = best baseline s/pair / library s/pair):")
    print_table(["route", "best baseline", "baseline s/pair", "library 1 core", "ratio 1 core", "ratio (CPU)",
                 "library 2 cores", "ratio 2 cores", "values"],
                [[s["route"], s["best_baseline"], fmt_time(s["best_s_per_pair"]), fmt_time(s["library_s_per_pair"]),
                  fmt_ratio(s["ratio"]), fmt_ratio(s["ratio_cpu"]), fmt_time(s["library_2core_s_per_pair"]),
                  fmt_ratio(s["ratio_2core"]),
                  f"{'match' if s['values_match'] else 'DIFFER'} ({s['max_rel_diff']:.0e} <= {s['tolerance']:g})"
                  if s["values_match"] else f"DIFFER ({s['max_rel_diff']:.1e})"] for s in summaries])
    for s in summaries:
        verdict = "at least as fast" if s["ratio"] >= 1.0 else "SLOWER"
        print(f"  {s['route']}: library {fmt_ratio(s['ratio'])} the best baseline ({s['best_baseline']}) on one core, "
              f"{fmt_ratio(s['ratio_cpu'])} in CPU time -> {verdict}")
    print(f"total benchmark time {elapsed:.0f} s wall, {cpu_elapsed:.0f} s CPU of this process; "
          f"load average at start {start_load}, at end {load_average()}")

    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        fields = ["route", "implementation", "pairs", "s_per_pair", "cpu_s_per_pair", "peak_mb", "max_rel_diff"]
        with out.open("w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=fields + ["cores", "blas_threads", "n", "dim", "seed", "shift",
                                                             "load_start", "load_end"])
            writer.writeheader()
            for r in rows:
                writer.writerow({**{k: r.get(k) for k in fields}, "cores": os.cpu_count(),
                                 "blas_threads": args.blas_threads, "n": args.n, "dim": args.dim, "seed": args.seed,
                                 "shift": args.shift, "load_start": start_load, "load_end": load_average()})
        print(f"wrote {out}")
    ok = all(s["values_match"] for s in summaries)
    if not ok:
        print("ERROR: the library's values differ from a baseline beyond tolerance", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
