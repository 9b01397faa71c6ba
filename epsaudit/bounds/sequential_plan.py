"""Planning a sequential certificate: when it stops, and what a fixed size delivers if the rates are off.

A fixed-size reserved test is planned at expected error rates (:func:`epsaudit.bounds.required_test_size`);
if the rates are off, its power drops and its rows are spent anyway. The sequential certificate
(:class:`epsaudit.bounds.SequentialCertificate`) stops when its bound reaches the target, so its
cost adapts to the rates actually met. These functions simulate it (seeded, vectorised over runs;
rows alternate A, B, A, ...):

* :func:`zero_error_stopping_row` -- the row at which it stops with zero errors (deterministic);
* :func:`sequential_stopping_rows` -- mean, median and 90% stopping rows at given error rates;
* :func:`fixed_size_power` -- the probability that the fixed-size joint certificate at ``n`` rows per
  side certifies the target at given error rates (Monte Carlo, seeded).
"""

from __future__ import annotations

import math

import numpy as np

from ..seeds import generator
from .joint import joint_epsilon
from .sequential import sequential_log_evalue

__all__ = ["fixed_size_power", "planned_prior", "sequential_stopping_rows", "zero_error_stopping_row"]

_CHUNK = 256  # rows simulated per step


def planned_prior(fpr: float, fnr: float) -> str | tuple[str, str]:
    """The default prior with a plan: ``"H:r"`` per side at the planned error rates; ``"B"`` without errors.

    Parameters
    ----------
    fpr, fnr : float in [0, 1]
        Planned false-positive and false-negative rates.

    Returns
    -------
    str or (str, str)
        One prior for both sides, or (negatives', positives').

    Examples
    --------
    >>> planned_prior(0.0, 0.0), planned_prior(0.02, 0.02), planned_prior(0.01, 0.03)
    ('B', 'H:0.02', ('H:0.01', 'H:0.03'))
    """
    if fpr == 0 and fnr == 0:
        return "B"
    return f"H:{fpr:g}" if fpr == fnr else (f"H:{fpr:g}", f"H:{fnr:g}")


def _alternating(rows: np.ndarray):
    """Rows per side after each total row (A first): (negatives, positives)."""
    return rows // 2, rows - rows // 2


def zero_error_stopping_row(epsilon: float, alpha: float, delta: float = 0.0, prior="B", max_rows: int = 10**7) -> int:
    """The total row (A, B alternating) at which the running bound first reaches ``epsilon`` with zero errors.

    Parameters
    ----------
    epsilon : float, >= 0
    alpha : float in (0, 1)
        Error level of this certificate.
    delta : float
    prior : str, SequentialPrior or pair of them
    max_rows : int

    Returns
    -------
    int
        Total rows (``ceil(t / 2)`` of A and ``floor(t / 2)`` of B).

    Raises
    ------
    ValueError
        If it does not stop within ``max_rows``.

    Examples
    --------
    >>> t = zero_error_stopping_row(3.0, 0.05); t, (t + 1) // 2
    (79, 40)
    """
    thr, high = -math.log(alpha), 64
    while high <= 2 * max_rows:
        t = np.arange(1, min(high, max_rows) + 1)
        neg, pos = _alternating(t)
        hit = sequential_log_evalue(0, neg, 0, pos, epsilon, delta, prior) >= thr
        if hit.any():
            return int(t[np.argmax(hit)])
        high *= 4
    raise ValueError(f"zero errors do not certify {epsilon:g} within {max_rows:,} rows")


def sequential_stopping_rows(epsilon: float, alpha: float, fpr: float, fnr: float, delta: float = 0.0, prior="B",
                             runs: int = 1000, max_rows: int = 100_000, seed: int = 0) -> dict:
    """Stopping rows of the sequential certificate at given error rates (target ``epsilon``), simulated.

    Parameters
    ----------
    epsilon : float
        The target.
    alpha : float
        Error level of this certificate.
    fpr, fnr : float in [0, 1]
        The test's error rates on rows of B and of A.
    delta : float
    prior : str, SequentialPrior or pair of them
    runs : int
    max_rows : int
        Runs not stopped by then are censored there.
    seed : int

    Returns
    -------
    dict
        ``mean``, ``median``, ``q90`` (total rows; censored runs count as ``max_rows``) and ``stopped``
        (the fraction of runs that reached the target within ``max_rows``).

    Examples
    --------
    >>> s = sequential_stopping_rows(2.0, 0.05, 0.02, 0.02, runs=200)
    >>> s["stopped"], s["median"] >= zero_error_stopping_row(2.0, 0.05)
    (1.0, True)
    """
    rng = generator(seed, "sequential-plan", round(epsilon, 12), fpr, fnr)
    thr = -math.log(alpha)
    stop = np.full(runs, -1)
    fp = fn = np.zeros(runs)
    done = 0
    while done < max_rows and (stop < 0).any():
        t = np.arange(done + 1, min(done + _CHUNK, max_rows) + 1)
        neg_row = (t % 2 == 0)[None, :]
        err = rng.random((runs, t.size)) < np.where(neg_row, fpr, fnr)
        x = fp[:, None] + np.cumsum(err & neg_row, axis=1)
        y = fn[:, None] + np.cumsum(err & ~neg_row, axis=1)
        neg, pos = _alternating(t)
        live = stop < 0
        hit = sequential_log_evalue(x[live], neg[None, :], y[live], pos[None, :], epsilon, delta, prior) >= thr
        first = np.where(hit.any(axis=1), t[np.argmax(hit, axis=1)], -1)
        stop[np.flatnonzero(live)] = first
        fp, fn, done = x[:, -1], y[:, -1], int(t[-1])
    rows = np.where(stop < 0, max_rows, stop)
    return {"mean": float(rows.mean()), "median": float(np.median(rows)), "q90": float(np.quantile(rows, 0.9)),
            "stopped": float(np.mean(stop >= 0))}


def fixed_size_power(n: int, epsilon: float, alpha: float, fpr: float, fnr: float, delta: float = 0.0,
                     runs: int = 2000, seed: int = 0) -> float:
    """Probability that the fixed-size joint certificate at ``n + n`` rows certifies ``epsilon`` at these rates.

    Counts ``FP ~ Bin(n, fpr)``, ``FN ~ Bin(n, fnr)`` are drawn ``runs`` times (seeded); each distinct
    false-positive count's largest certifying false-negative count is found by bisection on
    :func:`epsaudit.bounds.joint_epsilon` (non-increasing in the errors).

    Parameters
    ----------
    n : int
        Rows per side.
    epsilon, alpha, fpr, fnr, delta : float
    runs, seed : int

    Returns
    -------
    float
        In [0, 1] (exactly 1 or 0 when both rates are 0).

    Examples
    --------
    >>> fixed_size_power(31, 3.0, 0.05, 0.0, 0.0)
    1.0
    >>> round(fixed_size_power(31, 3.0, 0.05, 0.02, 0.02, runs=500), 2)
    0.32
    """
    rng = generator(seed, "fixed-plan-power", n, fpr, fnr)
    x, y = rng.binomial(n, fpr, runs), rng.binomial(n, fnr, runs)
    ok = np.zeros(runs, dtype=bool)
    for fp in np.unique(x):
        lo, hi = -1, int(y.max()) + 1  # lo: certifies (or -1), hi: does not
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if float(joint_epsilon(int(fp), n, mid, n, alpha, delta)) >= epsilon:
                lo = mid
            else:
                hi = mid
        ok |= (x == fp) & (y <= lo)
    return float(ok.mean())
