"""Validity of the anytime-valid sequential certificate, checked after every row (issue 25).

Per null point (FPR, FNR) in N(eps*, delta): ``RUNS`` runs of ``ROWS`` test rows, counts drawn row
by row (vectorised over runs), and the certificate looked at after *every* row. A run *exceeds*
when its running bound ever exceeds eps*: since ``LB_t >= eps*`` exactly when
``E_t(eps*) >= 1 / alpha`` (the e-value is non-increasing in eps), a run is counted when
``E_t(eps*) >= 1 / alpha`` at some row, which counts every exceedance (and the ties). The count
must not exceed ``binom.ppf(0.999, RUNS, alpha)`` = 41 of 500 (a one-sided binomial test at 0.001
of an exceedance rate <= alpha). Points: the randomized-response corner at eps 1, 2, 3; both
boundary segments; the interior; lopsided errors and lopsided allocation; the null point (0, 1)
where the corner alone is not least favourable; delta > 0; other priors; an allocation that
depends on the past; a family of 10 pairs; two stopping rules. The negative control re-peeks the
fixed-size exact joint certificate (:func:`epsaudit.bounds.joint_epsilon`) after every row up to
200 and must fail the same tolerance. Seeded; each point about 1-2 s on a loaded 2-core machine
(delta > 0: 4-8 s, the Newton step per segment; the family of 10: 15-30 s; each negative control
10-25 s, a bisection over the fixed-size test's outcomes per size); about 2 min in all.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from epsaudit.bounds import SequentialCertificate, joint_rejection_region
from epsaudit.bounds.sequential import sequential_log_evalue
from epsaudit.protocol import generator

pytestmark = pytest.mark.slow

ALPHA = 0.05
RUNS, ROWS = 500, 1000
TOLERANCE = int(stats.binom.ppf(0.999, RUNS, ALPHA))  # 41
SEED = 25
COUNTS: dict[str, int] = {}  # exceedances per point, printed by the last test (-s)


def corner(eps: float, delta: float = 0.0) -> float:
    return (1 - delta) / (1 + math.exp(eps))


def on_steep(fpr: float, eps: float, delta: float = 0.0) -> float:
    """FNR on S1 = {FNR = 1 - delta - e^eps FPR}."""
    return 1 - delta - math.exp(eps) * fpr


def paths(label: str, fpr: float, fnr: float, runs: int = RUNS, rows: int = ROWS, allocation: str = "alternate"):
    """Cumulative counts (fp, n_neg, fn, n_pos), each of shape (runs, rows): the state after every row."""
    rng = generator(SEED, "sequential-validity", label)
    u = rng.random((runs, rows))
    if allocation == "alternate":
        neg = np.broadcast_to(np.arange(rows) % 2 == 1, (runs, rows))
    elif allocation == "three negatives per positive":
        neg = np.broadcast_to(np.arange(rows) % 4 != 0, (runs, rows))
    else:  # adaptive: the side with fewer errors so far, from the past alone (ties: negatives)
        neg = np.zeros((runs, rows), dtype=bool)
        fp = fn = np.zeros(runs)
        for t in range(rows):
            neg[:, t] = fp <= fn
            err = u[:, t] < np.where(neg[:, t], fpr, fnr)
            fp, fn = fp + (err & neg[:, t]), fn + (err & ~neg[:, t])
    err = u < np.where(neg, fpr, fnr)
    return np.cumsum(err & neg, 1), np.cumsum(neg, 1), np.cumsum(err & ~neg, 1), np.cumsum(~neg, 1)


def ever_exceeds(counts, eps: float, alpha: float = ALPHA, delta: float = 0.0, prior="B") -> np.ndarray:
    """Per run: does the running bound ever reach eps (E_t(eps) >= 1 / alpha at some row)?"""
    return (sequential_log_evalue(*counts, eps, delta, prior) >= -math.log(alpha)).any(axis=1)


# (label, eps*, delta, FPR, FNR, allocation, prior)
POINTS = [
    ("corner eps 1", 1.0, 0.0, corner(1.0), corner(1.0), "alternate", "B"),
    ("corner eps 2", 2.0, 0.0, corner(2.0), corner(2.0), "alternate", "B"),
    ("corner eps 3", 3.0, 0.0, corner(3.0), corner(3.0), "alternate", "B"),
    ("steep segment eps 2", 2.0, 0.0, corner(2.0) / 3, on_steep(corner(2.0) / 3, 2.0), "alternate", "B"),
    ("flat segment eps 2", 2.0, 0.0, on_steep(corner(2.0) / 3, 2.0), corner(2.0) / 3, "alternate", "B"),
    ("interior eps 1", 1.0, 0.0, 0.2, 0.5, "alternate", "B"),
    ("lopsided errors eps 3 (FPR near 0)", 3.0, 0.0, 0.002, on_steep(0.002, 3.0), "alternate", "B"),
    ("null point (0, 1) eps 3", 3.0, 0.0, 0.0, 1.0, "alternate", "B"),
    ("lopsided allocation, steep segment eps 1", 1.0, 0.0, corner(1.0) / 2, on_steep(corner(1.0) / 2, 1.0),
     "three negatives per positive", "B"),
    ("adaptive allocation, corner eps 1", 1.0, 0.0, corner(1.0), corner(1.0), "adaptive", "B"),
    ("corner eps 1, delta 0.05", 1.0, 0.05, corner(1.0, 0.05), corner(1.0, 0.05), "alternate", "B"),
    ("steep segment eps 1, delta 0.05", 1.0, 0.05, corner(1.0, 0.05) / 2, on_steep(corner(1.0, 0.05) / 2, 1.0, 0.05),
     "alternate", "B"),
    ("corner eps 2, prior Z", 2.0, 0.0, corner(2.0), corner(2.0), "alternate", "Z"),
    ("corner eps 2, prior H:0.05", 2.0, 0.0, corner(2.0), corner(2.0), "alternate", "H:0.05"),
    ("corner eps 1, prior J", 1.0, 0.0, corner(1.0), corner(1.0), "alternate", "J"),
]


@pytest.mark.parametrize("label, eps, delta, fpr, fnr, allocation, prior", POINTS, ids=[p[0] for p in POINTS])
def test_running_bound_exceeds_the_truth_at_most_alpha(label, eps, delta, fpr, fnr, allocation, prior):
    assert fnr >= 0 and 1 - fnr <= math.exp(eps) * fpr + delta + 1e-12 and 1 - fpr <= math.exp(eps) * fnr + delta + 1e-12
    count = int(ever_exceeds(paths(label, fpr, fnr, allocation=allocation), eps, delta=delta, prior=prior).sum())
    COUNTS[label] = count
    assert count <= TOLERANCE, f"{label}: {count} of {RUNS} runs exceeded (tolerance {TOLERANCE})"


def test_the_certificate_object_agrees_with_the_harness():
    """The class, fed row by row, exceeds exactly where the vectorised e-value says (20 runs at the eps-1 corner)."""
    x, n, y, m = paths("object check", corner(1.0), corner(1.0), runs=20, rows=400)
    hit = ever_exceeds((x, n, y, m), 1.0)
    for r in range(20):
        cert = SequentialCertificate()
        neg = np.diff(np.r_[0, n[r]]) == 1
        err = np.diff(np.r_[0, x[r] + y[r]]) == 1  # a false positive or a false negative at this row
        cert.update_many(np.where(neg, "B", "A"), err)
        assert (cert.bound >= 1.0 - 1e-9) == bool(hit[r])


def test_family_of_ten_pairs():
    """Ten pairs, each its own null point, each at alpha / 10: P(some pair's bound ever exceeds its truth) <= alpha.
    The worst-pair bound (the average of the ten e-processes at level alpha) exceeds the largest truth at most alpha."""
    truths = np.linspace(1.0, 3.0, 10)
    any_pair = np.zeros(RUNS, dtype=bool)
    log_mean = None
    for k, eps in enumerate(truths):
        fpr = corner(eps) if k % 2 == 0 else corner(eps) / 2
        counts = paths(f"family pair {k}", fpr, on_steep(fpr, eps))
        any_pair |= ever_exceeds(counts, eps, ALPHA / 10)
        log_e = sequential_log_evalue(*counts, truths.max())  # each pair's truth <= the largest
        log_mean = log_e if log_mean is None else np.logaddexp(log_mean, log_e)
    worst = ((log_mean - math.log(10)) >= -math.log(ALPHA)).any(axis=1)
    COUNTS["family of 10, any pair"], COUNTS["family of 10, worst pair"] = int(any_pair.sum()), int(worst.sum())
    assert any_pair.sum() <= TOLERANCE and worst.sum() <= TOLERANCE


@pytest.mark.parametrize("eps, target", [(1.0, 0.5), (2.0, 1.5)])
def test_stopping_rules(eps, target):
    """Rule 1: stop the first time the bound reaches a target below the truth (or at the budget); the bound at
    that stop exceeds the truth at most alpha. Rule 2: peek until the bound exceeds the truth (the harness)."""
    counts = paths(f"stopping {eps}", corner(eps), corner(eps))
    thr = -math.log(ALPHA)
    reached = sequential_log_evalue(*counts, target) >= thr
    stop = np.where(reached.any(axis=1), reached.argmax(axis=1), ROWS - 1)
    above = sequential_log_evalue(*counts, eps) >= thr
    at_stop = np.array([above[r, : stop[r] + 1].any() for r in range(RUNS)])  # the running bound at the stop
    peek = above.any(axis=1)
    COUNTS[f"stop at target {target} (truth {eps})"], COUNTS[f"peek until above truth {eps}"] = int(at_stop.sum()), int(peek.sum())
    assert at_stop.sum() <= peek.sum() <= TOLERANCE


# ---------------------------------------------------------------------------------------------
# Negative control: the fixed-size joint certificate, re-peeked after every row


@pytest.mark.parametrize("eps", [1.0, 3.0])
def test_negative_control_re_peeking_the_fixed_size_joint_certificate_fails(eps):
    rows = 200
    x, n, y, m = paths(f"negative control {eps}", corner(eps), corner(eps), rows=rows)
    hit = np.zeros(RUNS, dtype=bool)
    for t in range(1, rows):  # after every row with both sides tested
        nn, mm = int(n[0, t]), int(m[0, t])
        table = joint_rejection_region(nn, mm, eps, ALPHA)
        hit |= table[x[:, t], y[:, t]]
    COUNTS[f"negative control: fixed-size joint re-peeked every row to 200, eps {eps:g}"] = int(hit.sum())
    assert hit.sum() > TOLERANCE, f"{hit.sum()} of {RUNS}"


def test_print_counts():
    for label, count in COUNTS.items():
        print(f"{label}: {count} of {RUNS} (tolerance {TOLERANCE})")
