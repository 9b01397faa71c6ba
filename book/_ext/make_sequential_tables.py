"""The methods chapter's anytime-valid numbers, computed from the library (never typed).

Three computations, each a function of ``epsaudit.bounds`` only (95%, delta = 0, zero errors
unless said):

* :func:`fixed_size_cost` -- the bound from ``n + n`` rows with zero errors: the fixed-size exact
  joint certificate against the sequential certificate with priors B and Z, and what not fixing
  the size costs (their differences);
* :func:`rows_to_certify` -- rows per side that certify epsilon 1, ..., 5 with zero errors: the
  fixed-size joint test (:func:`epsaudit.bounds.required_test_size`) against the sequential
  certificate (the smallest balanced size whose bound reaches epsilon);
* :func:`peeking` -- the negative control: runs of test rows at the randomized-response corner of
  the true epsilon (the least favourable null point), the fixed-size joint certificate recomputed
  after every row until it exceeds the truth; the fraction of runs in which it does (seeded,
  vectorised over runs: per test size one table of the outcomes the fixed-size test rejects).

``book/_ext/seqtables.py`` puts them into the page at build time; by hand:

    .venv/bin/python book/_ext/make_sequential_tables.py
"""

from __future__ import annotations

import math
from functools import lru_cache

ALPHA = 0.05
SIZES: tuple[int, ...] = (30, 100, 300)
EPSILONS: tuple[int, ...] = (1, 2, 3, 4, 5)
PRIORS: tuple[str, ...] = ("B", "Z")
#: The negative control: true epsilon, rows (both sides, alternating), runs, seed.
PEEK_EPSILON, PEEK_ROWS, PEEK_RUNS, PEEK_SEED = 1.0, 200, 2000, 25


@lru_cache(maxsize=None)
def fixed_size_cost(sizes: tuple[int, ...] = SIZES, alpha: float = ALPHA) -> tuple[dict, ...]:
    """Per size ``n``: the fixed-size joint bound and the sequential bounds (priors B, Z) from zero errors in ``n + n`` rows."""
    from epsaudit.bounds import joint_epsilon, sequential_epsilon

    rows = []
    for n in sizes:
        row = {"n": n, "joint": float(joint_epsilon(0, n, 0, n, alpha))}
        for prior in PRIORS:
            row[prior] = float(sequential_epsilon(0, n, 0, n, alpha, prior=prior))
            row[f"cost {prior}"] = row["joint"] - row[prior]
        rows.append(row)
    return tuple(rows)


@lru_cache(maxsize=None)
def rows_to_certify(epsilons: tuple[int, ...] = EPSILONS, alpha: float = ALPHA) -> tuple[dict, ...]:
    """Per epsilon: rows per side that certify it with zero errors, fixed-size joint and sequential (B, Z)."""
    import numpy as np

    from epsaudit.bounds import required_test_size, sequential_epsilon

    n = np.arange(1, 2001)
    rows = []
    for eps in epsilons:
        row = {"epsilon": eps, "joint": int(required_test_size(float(eps), alpha, 0.0, bound="joint"))}
        for prior in PRIORS:
            ok = sequential_epsilon(0, n, 0, n, alpha, prior=prior) >= eps
            if not ok.any():
                raise ValueError(f"prior {prior}: epsilon {eps} needs more than {n[-1]} rows per side")
            row[prior] = int(n[np.argmax(ok)])
        rows.append(row)
    return tuple(rows)


@lru_cache(maxsize=None)
def peeking(eps: float = PEEK_EPSILON, rows: int = PEEK_ROWS, runs: int = PEEK_RUNS, seed: int = PEEK_SEED,
            alpha: float = ALPHA) -> dict:
    """Re-peeking the fixed-size joint certificate after every row: how often it ever exceeds the truth.

    Test rows alternate A, B, A, ...; each has error rate ``1 / (1 + e^eps)`` (the randomized-response
    corner of ``eps``, a null point of every epsilon up to ``eps``). After every row with both sides
    tested, the fixed-size joint certificate of the counts so far is recomputed; a run counts when it
    certifies ``eps`` at some row. Returns the count, the fraction, its 95% Clopper-Pearson interval
    and the same for the sequential certificate (prior B) on the same runs.
    """
    import numpy as np

    from epsaudit.bounds import clopper_pearson_lower, clopper_pearson_upper, joint_rejection_region
    from epsaudit.bounds.sequential import sequential_log_evalue
    from epsaudit.protocol import generator

    rate = 1 / (1 + math.exp(eps))
    rng = generator(seed, "methods-peeking", eps)
    err = rng.random((runs, rows)) < rate
    neg = np.arange(rows) % 2 == 1  # rows of B (negatives) at odd positions
    x, y = np.cumsum(err & neg, axis=1), np.cumsum(err & ~neg, axis=1)
    n, m = np.cumsum(neg), np.cumsum(~neg)
    hit = np.zeros(runs, dtype=bool)
    for t in range(1, rows):
        table = joint_rejection_region(int(n[t]), int(m[t]), eps, alpha)
        hit |= table[x[:, t], y[:, t]]
    seq = (sequential_log_evalue(x, n[None, :], y, m[None, :], eps, 0.0, "B") >= -math.log(alpha)).any(axis=1)
    out = {"epsilon": eps, "rows": rows, "runs": runs, "rate": rate}
    for name, h in (("fixed", hit), ("sequential", seq)):
        k = int(h.sum())
        out[name] = {"count": k, "fraction": k / runs,
                     "low": float(clopper_pearson_lower(k, runs, 0.025)), "high": float(clopper_pearson_upper(k, runs, 0.025))}
    return out


def _pct(v: float) -> str:
    return f"{100 * v:.0f}%" if v >= 0.095 else f"{100 * v:.1f}%"


def numbers() -> dict[str, str]:
    """The page's inline numbers, formatted, by name (``{anytime-valid-number}`name```)."""
    cost, need, peek = fixed_size_cost(), rows_to_certify(), peeking()
    cb, cz = [r["cost B"] for r in cost], [r["cost Z"] for r in cost]
    by_eps = {r["epsilon"]: r for r in need}
    out = {
        "cost-B-range": f"{min(cb):.2f}–{max(cb):.2f}", "cost-Z-range": f"{min(cz):.2f}–{max(cz):.2f}",
        "sizes": ", ".join(str(r["n"]) for r in cost),
        "rows-3-joint": str(by_eps[3]["joint"]), "rows-3-B": str(by_eps[3]["B"]), "rows-3-Z": str(by_eps[3]["Z"]),
        "rows-5-ratio-B": f"{by_eps[5]['B'] / by_eps[5]['joint']:.2f}",
        "rows-5-ratio-Z": f"{by_eps[5]['Z'] / by_eps[5]['joint']:.2f}",
        "peek-epsilon": f"{peek['epsilon']:g}", "peek-rows": str(peek["rows"]), "peek-runs": f"{peek['runs']:,}",
        "peek-rate": f"{peek['rate']:.3f}",
    }
    for name in ("fixed", "sequential"):
        p = peek[name]
        out[f"peek-{name}"] = _pct(p["fraction"])
        out[f"peek-{name}-interval"] = f"{_pct(p['low'])}–{_pct(p['high'])}"
    return out


def table(name: str) -> list[list[str]]:
    """A table as rows of cells (header first): ``"cost"`` or ``"rows"``."""
    if name == "cost":
        head = ["rows per side", "fixed-size joint", "sequential, prior B", "sequential, prior Z", "cost of B", "cost of Z"]
        return [head] + [[str(r["n"]), f"{r['joint']:.3f}", f"{r['B']:.3f}", f"{r['Z']:.3f}", f"{r['cost B']:.3f}",
                          f"{r['cost Z']:.3f}"] for r in fixed_size_cost()]
    if name == "rows":
        head = ["epsilon", "fixed-size joint", "sequential, prior B", "sequential, prior Z", "B / fixed", "Z / fixed"]
        return [head] + [[str(r["epsilon"]), str(r["joint"]), str(r["B"]), str(r["Z"]), f"{r['B'] / r['joint']:.2f}",
                          f"{r['Z'] / r['joint']:.2f}"] for r in rows_to_certify()]
    raise ValueError(f"unknown table {name!r}: 'cost' or 'rows'")


if __name__ == "__main__":
    import time

    start = time.perf_counter()
    for which in ("cost", "rows"):
        print("\n".join(" | ".join(r) for r in table(which)), end="\n\n")
    for key, value in numbers().items():
        print(f"{key}: {value}")
    print(f"{time.perf_counter() - start:.1f} s")
