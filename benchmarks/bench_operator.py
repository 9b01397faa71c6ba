"""Benchmark: the operator fit's penalty search, GridSearchCV(Ridge) vs one SVD per fold.

``epsaudit.operator.ridge_penalty_search`` scores every ridge penalty on identity-disjoint folds
from one SVD of the fold's centred training inputs (``epsaudit.operator.ridge_cv_r2``; SVD rather
than an eigendecomposition of the Gram matrix, which squares the condition number, because the
widened grid reaches penalties of 1e-13, comparable with the smallest Gram eigenvalues of raw dlib
embeddings); the textbook route is ``GridSearchCV(Ridge(), {"alpha": alphas}, cv=GroupKFold(5),
scoring="r2")``, one Cholesky solve per penalty and fold. Both are timed in one run on the same
synthetic triplets (``n`` triplets, 128-D like the face encoders, the 15 penalties of the initial
grid), with one and with the default number of BLAS threads; the script checks that the fold
scores agree to 1e-10 and exits 1 otherwise (on this well-conditioned data Cholesky is accurate).

    python benchmarks/bench_operator.py [--n 8000] [--dim 128] [--out benchmarks/results/operator.csv]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV, GroupKFold
from threadpoolctl import threadpool_limits

from epsaudit.operator import DEFAULT_ALPHAS, ridge_cv_r2


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=8000)
    p.add_argument("--dim", type=int, default=128)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=None)
    a = p.parse_args(argv)
    rng = np.random.default_rng(a.seed)
    d, t = rng.normal(size=(a.n, a.dim)), rng.normal(size=(a.n, a.dim))
    s = d @ rng.normal(size=(a.dim, a.dim)) / np.sqrt(a.dim) + 0.5 * t + rng.normal(size=(a.n, a.dim))
    groups = rng.integers(0, a.n // 5, a.n)
    x, alphas = np.hstack([d, t]), list(DEFAULT_ALPHAS)
    rows = []
    for threads in (1, None):
        with threadpool_limits(threads):
            t0 = time.perf_counter()
            fast = ridge_cv_r2(x, s, groups, alphas, 5)
            t_fast = time.perf_counter() - t0
            t0 = time.perf_counter()
            grid = GridSearchCV(Ridge(), {"alpha": alphas}, cv=GroupKFold(5), scoring="r2").fit(x, s, groups=groups)
            t_grid = time.perf_counter() - t0
        diff = float(np.max(np.abs(fast - grid.cv_results_["mean_test_score"])))
        rows.append({"blas_threads": threads or "default", "gridsearchcv_s": round(t_grid, 3),
                     "svd_path_s": round(t_fast, 3), "ratio": round(t_grid / t_fast, 1), "max_score_diff": diff})
    table = pd.DataFrame(rows)
    print(f"n={a.n}, dim={a.dim}, {len(alphas)} penalties, 5 folds")
    print(table.to_string(index=False))
    if a.out:
        Path(a.out).parent.mkdir(parents=True, exist_ok=True)
        table.assign(n=a.n, dim=a.dim).to_csv(a.out, index=False)
    return 0 if table["max_score_diff"].max() <= 1e-10 else 1


if __name__ == "__main__":
    sys.exit(main())
