"""Many small logistic regressions at once, each fitted the way scikit-learn fits it.

ROC-HT fits one logistic regression per fold and pair (out-of-fold scores, the development-only ranking of
*Picture the Epsilon*, Section IV) and one per certified pair (the reserved test). At tens to hundreds of rows,
scikit-learn's input checks and ``scipy.optimize.minimize`` cost as much as the arithmetic; :func:`batched_scores`
runs the same computation on a batch of fits in lock-step: each fit's own ``StandardScaler`` statistics (population
variance; near-constant features get scale 1 by scikit-learn's rule), the objective of ``LogisticRegression(C,
solver="lbfgs")`` (mean log-loss by scikit-learn's piecewise formula plus ``||w||^2 / (2 C n)``, intercept
unpenalised), scipy's L-BFGS-B 3.0 (Zhu, Byrd, Lu and Nocedal; Morales and Nocedal) as ``minimize`` runs it without
bounds (:class:`_BatchLBFGSB`: from zero, first step ``1 / ||g||`` along ``-g``, then the two-loop recursion with
``H0 = I / theta``, ``theta = y'y / s'y``, which equals the subspace minimisation without bounds; MINPACK-2's
More-Thuente line search; the constants below), stopped by ``max |g| <= tol``, a relative reduction ``<= 64 eps``
or ``max_iter``, and ``expit`` of the decision function as the scores.

Each fit thus follows scikit-learn's iterates up to rounding (scores agree to about 1e-12). This matters: at ``tol =
1e-4`` L-BFGS stops after ~10-30 iterations, well before the optimum, and the out-of-fold ROC compares scores of
different folds' models (exactly converged fits change the AUCs of 94 of 200 pairs of ``dlib_large_dp-pix.csv``).
A fit that leaves the common path is refitted with scikit-learn: a line search ending in a warning or needing more
than 20 evaluations, a skipped update, more than :data:`MAX_ITERATIONS` iterations, a branch that does not occur in
these regressions, a stopping or line-search test decided within 1e-9 (relative) of its threshold. Where features
sit far from zero relative to their spread (always without standardisation) every fit runs twice, on centred and
raw rows, and one whose runs differ by more than 1e-9 is refitted too. On the 12 committed condition tables: the same
AUCs, values and certificates as per-pair fits (``tests/test_batch_logistic.py``); ``EPSAUDIT_SOLVER=sklearn`` (or
``solver="sklearn"``) fits every pair with scikit-learn.
"""

from __future__ import annotations

import copy
import os
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import numpy as np


EPS = float(np.finfo(np.float64).eps)
MEMORY = 10            # scipy L-BFGS-B default maxcor, as scikit-learn leaves it
FTOL_LS, GTOL_LS, XTOL_LS = 1e-3, 0.9, 0.1   # lnsrlb's line-search constants
STPMAX = 1e10          # lnsrlb's largest step without bounds
FACTR_TOL = 64.0 * EPS  # scikit-learn passes ftol = 64 eps
MAX_LS_EVALUATIONS = 20  # scipy allows 50 (maxls); longer searches are flagged
CLOSE = 1e-9           # a test decided within this relative margin is flagged


# the More-Thuente line search (MINPACK-2 dcsrch / dcstep), vectorised over problems


class _Search:
    """State of one line search per fit (the ``isave``/``dsave`` of dcsrch), as arrays."""

    def __init__(self, B: int):
        self.stage = np.ones(B, dtype=np.int8)
        self.brackt = np.zeros(B, dtype=bool)
        names = ("finit", "ginit", "gtest", "stx", "fx", "gx", "sty", "fy", "gy", "stmin", "stmax", "width",
                 "width1", "stp")
        for name in names:
            setattr(self, name, np.zeros(B))

    def start(self, idx: np.ndarray, f: np.ndarray, g: np.ndarray, stp: np.ndarray) -> None:
        self.stage[idx], self.brackt[idx] = 1, False
        self.finit[idx], self.ginit[idx], self.gtest[idx] = f, g, FTOL_LS * g
        self.width[idx] = STPMAX
        self.width1[idx] = STPMAX / 0.5
        self.stx[idx], self.fx[idx], self.gx[idx] = 0.0, f, g
        self.sty[idx], self.fy[idx], self.gy[idx] = 0.0, f, g
        self.stmin[idx], self.stmax[idx] = 0.0, stp + 4.0 * stp
        self.stp[idx] = stp


def _close(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Comparisons of ``a`` with ``b`` that rounding could decide otherwise."""
    return np.abs(a - b) <= CLOSE * (np.abs(a) + np.abs(b))


def _dcstep(stx, fx, dx, sty, fy, dy, stp, fp, dp, brackt, stpmin, stpmax):
    """MINPACK-2 dcstep on arrays (``stpmin``/``stpmax``: dcsrch's ``stmin``/``stmax``): the updated interval,
    the new step, ``brackt`` and a flag for cases left to scikit-learn."""
    with np.errstate(all="ignore"):
        sgnd = dp * (dx / np.abs(dx))
        c1 = fp > fx
        c2 = ~c1 & (sgnd < 0.0)
        c3 = ~c1 & ~c2 & (np.abs(dp) < np.abs(dx))
        c4 = ~(c1 | c2 | c3)
        theta = 3.0 * (fx - fp) / (stp - stx) + dx + dp
        s = np.maximum(np.abs(theta), np.maximum(np.abs(dx), np.abs(dp)))
        root = s * np.sqrt((theta / s) ** 2 - (dx / s) * (dp / s))
        # case 1: a higher function value; the minimum is bracketed
        gamma = np.where(stp < stx, -root, root)
        r = ((gamma - dx) + theta) / (((gamma - dx) + gamma) + dp)
        stpc = stx + r * (stp - stx)
        stpq = stx + ((dx / ((fx - fp) / (stp - stx) + dx)) / 2.0) * (stp - stx)
        stpf1 = np.where(np.abs(stpc - stx) < np.abs(stpq - stx), stpc, stpc + (stpq - stpc) / 2.0)
        # case 2: a lower value and derivatives of opposite sign; the minimum is bracketed
        gamma2 = np.where(stp > stx, -root, root)
        r2 = ((gamma2 - dp) + theta) / (((gamma2 - dp) + gamma2) + dx)
        stpc2 = stp + r2 * (stx - stp)
        stpq2 = stp + (dp / (dp - dx)) * (stx - stp)
        stpf2 = np.where(np.abs(stpc2 - stp) > np.abs(stpq2 - stp), stpc2, stpq2)
        # case 3: a lower value, derivatives of the same sign, decreasing in magnitude
        gamma3 = s * np.sqrt(np.maximum(0.0, (theta / s) ** 2 - (dx / s) * (dp / s)))
        gamma3 = np.where(stp > stx, -gamma3, gamma3)
        r3 = ((gamma3 - dp) + theta) / ((gamma3 + (dx - dp)) + gamma3)
        stpc3 = np.where((r3 < 0.0) & (gamma3 != 0.0), stp + r3 * (stx - stp), np.where(stp > stx, stpmax, stpmin))
        in_bracket = np.where(np.abs(stpc3 - stp) < np.abs(stpq2 - stp), stpc3, stpq2)
        in_bracket = np.where(stp > stx, np.minimum(stp + 0.66 * (sty - stp), in_bracket),
                              np.maximum(stp + 0.66 * (sty - stp), in_bracket))
        outside = np.maximum(stpmin, np.minimum(stpmax, np.where(np.abs(stpc3 - stp) > np.abs(stpq2 - stp), stpc3,
                                                                   stpq2)))
        stpf3 = np.where(brackt, in_bracket, outside)
        # case 4 without a bracket: the step goes to a bound
        stpf4 = np.where(stp > stx, stpmax, stpmin)
        stpf = np.where(c1, stpf1, np.where(c2, stpf2, np.where(c3, stpf3, stpf4)))
    # case 4 with a bracket does not occur here; it is left to scikit-learn, as are NaNs
    rare = (c4 & brackt) | ~np.isfinite(stpf)
    rare |= _close(fp, fx) | _close(np.abs(dp), np.abs(dx)) | (sgnd == 0.0)
    new_sty = np.where(c1, stp, np.where(c2, stx, sty))
    new_fy = np.where(c1, fp, np.where(c2, fx, fy))
    new_dy = np.where(c1, dp, np.where(c2, dx, dy))
    new_stx = np.where(c1, stx, stp)
    new_fx = np.where(c1, fx, fp)
    new_dx = np.where(c1, dx, dp)
    return new_stx, new_fx, new_dx, new_sty, new_fy, new_dy, stpf, brackt | c1 | c2, rare


def _dcsrch(ls: _Search, idx: np.ndarray, f: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One dcsrch call for fits ``idx`` with value ``f`` and slope ``g`` at their step: (accepted, rare, next step).

    ``rare``: the fit left the common path (a warning, a rare case, a close call).
    """
    stp, finit, ginit, gtest = ls.stp[idx], ls.finit[idx], ls.ginit[idx], ls.gtest[idx]
    ftest = finit + stp * gtest
    conv = (f <= ftest) & (np.abs(g) <= GTOL_LS * (-ginit))
    rare = _close(f, ftest) | _close(np.abs(g), GTOL_LS * (-ginit))
    if conv.all():  # the usual case: the first trial step is accepted
        return conv, rare, stp
    # the rest of dcsrch, for the fits whose search goes on (or ends in a warning)
    go = ~conv
    sub = idx[go]
    stp, f, g, ftest, ginit, gtest = stp[go], f[go], g[go], ftest[go], ginit[go], gtest[go]
    stage, brackt = ls.stage[sub], ls.brackt[sub]
    stx, fx, gx, sty, fy, gy = ls.stx[sub], ls.fx[sub], ls.gx[sub], ls.sty[sub], ls.fy[sub], ls.gy[sub]
    stmin, stmax, width, width1 = ls.stmin[sub], ls.stmax[sub], ls.width[sub], ls.width1[sub]
    stage = np.where((stage == 1) & (f <= ftest) & (g >= 0.0), 2, stage).astype(np.int8)
    warn = (brackt & ((stp <= stmin) | (stp >= stmax))) | (brackt & (stmax - stmin <= XTOL_LS * stmax))
    warn |= ((stp == STPMAX) & (f <= ftest) & (g <= gtest)) | ((stp == 0.0) & ((f > ftest) | (g >= gtest)))
    rare_go = warn | ((stage == 1) & ((np.abs(g) <= CLOSE * np.abs(ginit)) | _close(f, fx)))
    modified = (stage == 1) & (f <= fx) & (f > ftest)
    off = np.where(modified, gtest, 0.0)  # the modified function psi of the first stage
    nstx, nfx, ngx, nsty, nfy, ngy, nstp, nbrackt, rare_step = _dcstep(
        stx, fx - stx * off, gx - off, sty, fy - sty * off, gy - off, stp, f - stp * off, g - off, brackt, stmin,
        stmax)
    nfx, nfy, ngx, ngy = nfx + nstx * off, nfy + nsty * off, ngx + off, ngy + off
    bis = nbrackt & (np.abs(nsty - nstx) >= 0.66 * width1)
    nstp = np.where(bis, nstx + 0.5 * (nsty - nstx), nstp)
    nwidth1 = np.where(nbrackt, width, width1)
    nwidth = np.where(nbrackt, np.abs(nsty - nstx), width)
    nstmin = np.where(nbrackt, np.minimum(nstx, nsty), nstp + 1.1 * (nstp - nstx))
    nstmax = np.where(nbrackt, np.maximum(nstx, nsty), nstp + 4.0 * (nstp - nstx))
    nstp = np.clip(nstp, 0.0, STPMAX)
    stuck = nbrackt & ((nstp <= nstmin) | (nstp >= nstmax) | (nstmax - nstmin <= XTOL_LS * nstmax))
    nstp = np.where(stuck, nstx, nstp)
    rare[go] |= rare_go | rare_step | stuck
    ls.stage[sub] = stage
    for name, value in (("stx", nstx), ("fx", nfx), ("gx", ngx), ("sty", nsty), ("fy", nfy), ("gy", ngy),
                        ("stmin", nstmin), ("stmax", nstmax), ("width", nwidth), ("width1", nwidth1),
                        ("stp", nstp), ("brackt", nbrackt)):
        getattr(ls, name)[sub] = value
    return conv, rare, ls.stp[idx]


# L-BFGS-B without bounds, vectorised over the fits of a chunk


def _two_loop(g: np.ndarray, S: np.ndarray, Y: np.ndarray, rho: np.ndarray, theta: np.ndarray,
              order: list[int]) -> np.ndarray:
    """``-H g`` of the limited-memory matrix with ``H0 = I / theta`` (L-BFGS-B's direction without bounds)."""
    q = g.copy()
    tmp = np.empty_like(q)
    alpha = np.empty((len(order), len(g)))
    for j in reversed(range(len(order))):
        i = order[j]
        alpha[j] = rho[i] * np.einsum("bn,bn->b", S[i], q)
        q -= np.multiply(alpha[j, :, None], Y[i], out=tmp)
    r = np.divide(q, theta[:, None], out=q)
    for j, i in enumerate(order):
        beta = rho[i] * np.einsum("bn,bn->b", Y[i], r)
        r += np.multiply(S[i], (alpha[j] - beta)[:, None], out=tmp)
    return np.negative(r, out=r)


class _BatchLBFGSB:
    """scipy's L-BFGS-B without bounds, in lock-step on ``P x K`` smooth problems from zero (module docstring).

    ``problem`` has ``P``, ``K`` (groups of ``K`` share their rows), ``d`` (``d + 1`` variables),
    ``fg(coef, pairs)`` (values (P', K) and gradients (P', K, d + 1) for the groups ``pairs``, all when None) and
    ``take(pairs)`` (keep only those groups). :meth:`run` fills ``coef_out`` (P, K, d + 1), ``iter_out`` and
    ``rare_out`` (P, K): problems that left scipy's common path, whose ``coef_out`` is not a solution.
    """

    def __init__(self, problem: Any, *, tol: float, max_iter: int):
        self.chunk, self.tol, self.max_iter = problem, float(tol), int(max_iter)
        chunk = problem
        P, K, n = chunk.P, chunk.K, chunk.d + 1
        self.orig = np.arange(P)
        self.coef_out = np.zeros((P, K, n))
        self.iter_out = np.zeros((P, K), dtype=int)
        self.rare_out = np.zeros((P, K), dtype=bool)
        self.x = np.zeros((P * K, n))
        f, g = chunk.fg(self.x.reshape(P, K, n))
        self.f, self.g = f.reshape(-1), g.reshape(P * K, n)
        self.S, self.Y = np.zeros((MEMORY, P * K, n)), np.zeros((MEMORY, P * K, n))  # slot-major: rows contiguous
        self.rho, self.theta = np.zeros((MEMORY, P * K)), np.ones(P * K)
        self.n_iter = np.zeros(P * K, dtype=int)
        sbgnrm = np.abs(self.g).max(1)
        self.done = sbgnrm <= self.tol
        self.rare = _close(sbgnrm, np.full_like(sbgnrm, self.tol))
        self.col = self.head = self.itail = self.iupdat = self.iteration = 0

    def _evaluate(self, fits: np.ndarray) -> None:
        """f and g of ``fits`` at their current coefficients (their pairs' other fits are not touched)."""
        K, n = self.chunk.K, self.chunk.d + 1
        pairs = np.unique(fits // K)
        whole = len(pairs) == self.chunk.P
        f, g = self.chunk.fg(self.x.reshape(-1, K, n)[pairs], None if whole else pairs)
        rows = (pairs[:, None] * K + np.arange(K)).ravel()
        where = np.searchsorted(rows, fits)
        self.f[fits] = f.reshape(-1)[where]
        self.g[fits] = g.reshape(-1, n)[where]

    def _retire(self) -> None:
        """Record finished fits and drop pairs none of whose fits is still running (when half are gone)."""
        K, n = self.chunk.K, self.chunk.d + 1
        P = len(self.orig)
        pk = (self.orig[:, None], np.arange(K)[None, :])
        finished = (self.done | self.rare).reshape(P, K)
        self.coef_out[pk] = np.where(finished[..., None], self.x.reshape(P, K, n), self.coef_out[pk])
        self.iter_out[pk] = self.n_iter.reshape(P, K)
        self.rare_out[pk] = self.rare.reshape(P, K)
        live = ~finished.all(1)
        if live.sum() <= P // 2 and live.sum() < P:
            keep = np.flatnonzero(live)
            fits = (keep[:, None] * K + np.arange(K)).ravel()
            self.chunk.take(keep)
            self.orig = self.orig[keep]
            for name in ("x", "f", "g", "theta", "n_iter", "done", "rare"):
                setattr(self, name, getattr(self, name)[fits])
            self.S, self.Y, self.rho = self.S[:, fits], self.Y[:, fits], self.rho[:, fits]

    def run(self) -> None:
        """Iterate until every problem has converged or been flagged."""
        while True:
            self._retire()
            active = np.flatnonzero(~self.done & ~self.rare)
            if len(active) == 0:
                return
            self._iterate(active)
            if self.iteration >= self.max_iter:  # scipy stops here and scikit-learn warns: refit those
                self.rare[active] = True

    def _iterate(self, a: np.ndarray) -> None:
        x0, g0, fold = self.x[a], self.g[a], self.f[a]
        if self.col == 0:  # the Cauchy point of B = theta I with theta = 1: x - g
            z = x0 + 1.0 * (-g0)
        else:
            order = [(self.head + j) % MEMORY for j in range(self.col)]
            if len(a) == len(self.f):  # every fit of the chunk runs: no copies of the memory
                z = x0 + _two_loop(g0, self.S, self.Y, self.rho, self.theta, order)
            else:
                z = x0 + _two_loop(g0, self.S[:, a], self.Y[:, a], self.rho[:, a], self.theta[a], order)
        d = z - x0
        dtd = np.einsum("bn,bn->b", d, d)
        stp0 = np.minimum(1.0 / np.sqrt(dtd), STPMAX) if self.iteration == 0 else np.ones(len(a))
        gdold = np.einsum("bn,bn->b", g0, d)
        bad = gdold >= 0.0
        self.rare[a[bad]] = True
        ls = _Search(len(a))
        pos = np.flatnonzero(~bad)
        ls.start(pos, fold[pos], gdold[pos], stp0[pos])
        gd = gdold.copy()
        for evaluation in range(MAX_LS_EVALUATIONS + 1):
            if len(pos) == 0:
                break
            if evaluation == MAX_LS_EVALUATIONS:
                self.rare[a[pos]] = True
                break
            stp = ls.stp[pos]
            if (stp == 1.0).all():  # the usual trial: the quasi-Newton point itself
                self.x[a[pos]] = z[pos]
            else:
                self.x[a[pos]] = np.where((stp == 1.0)[:, None], z[pos], stp[:, None] * d[pos] + x0[pos])
            self._evaluate(a[pos])
            gd[pos] = np.einsum("bn,bn->b", self.g[a[pos]], d[pos])
            conv, rare, _ = _dcsrch(ls, pos, self.f[a[pos]], gd[pos])
            self.rare[a[pos[rare]]] = True
            pos = pos[~conv & ~rare]
        self.iteration += 1
        ok = ~self.rare[a]
        b = a[ok]
        self.n_iter[b] = self.iteration
        f, g = self.f[b], self.g[b]
        sbgnrm = np.abs(g).max(1)
        tol = np.full_like(sbgnrm, self.tol)
        ddum = np.maximum(np.maximum(np.abs(fold[ok]), np.abs(f)), 1.0)
        conv_f = (fold[ok] - f) <= FACTR_TOL * ddum
        self.rare[b] |= _close(sbgnrm, tol) | _close(fold[ok] - f, FACTR_TOL * ddum)
        self.done[b] |= (sbgnrm <= tol) | conv_f
        upd = ok & ~self.done[a] & ~self.rare[a]
        stp = ls.stp[upd]
        dd, gdo, gdn = d[upd], gdold[upd], gd[upd]
        one = stp == 1.0
        dr = np.where(one, gdn - gdo, (gdn - gdo) * stp)
        skip = dr <= EPS * np.where(one, -gdo, -gdo * stp)
        self.rare[a[upd][skip]] = True  # a skipped update: L-BFGS-B keeps its memory, we leave it to scipy
        if not upd.any():
            return
        c = a[upd]
        y = self.g[c] - g0[upd]
        self.iupdat += 1
        if self.iupdat <= MEMORY:
            self.col = self.iupdat
            self.itail = (self.head + self.iupdat - 1) % MEMORY
        else:
            self.itail = (self.itail + 1) % MEMORY
            self.head = (self.head + 1) % MEMORY
        rows = slice(None) if len(c) == len(self.f) else c
        self.S[self.itail, rows] = np.where(one[:, None], dd, stp[:, None] * dd)
        self.Y[self.itail, rows] = y
        self.rho[self.itail, rows] = 1.0 / dr
        self.theta[c] = np.einsum("bn,bn->b", y, y) / dr


# the logistic regressions that use the solver

MAX_ITERATIONS = 60    # longer runs amplify rounding: refitted by scikit-learn
STABLE = 1e-9          # raw or offset features: two runs (centred, uncentred) must agree to this
OFFSET = 1e3           # a feature's |mean| / scale above which the two runs are compared
CHUNK_BYTES = 8 * 2**20  # rows of a chunk of designs solved in lock-step (cache-sized)


@dataclass(frozen=True)
class LogisticSpec:
    """What a batched fit reproduces: scikit-learn's logistic regression, optionally standardised.

    Attributes
    ----------
    standardize : bool
        ``StandardScaler()`` before the regression (:func:`epsaudit.audits.scorers.logistic_regression`).
    C, tol, max_iter : float, float, int
        Inverse L2 penalty, L-BFGS-B's ``pgtol`` (scikit-learn's ``tol``), iteration limit.

    Examples
    --------
    >>> LogisticSpec(standardize=True, C=1.0, tol=1e-4, max_iter=1000).standardize
    True
    """

    standardize: bool
    C: float
    tol: float
    max_iter: int

    def estimator(self) -> Any:
        """The scikit-learn estimator this spec reproduces (the reference, and the refit of rare fits)."""
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        lr = LogisticRegression(C=self.C, solver="lbfgs", max_iter=self.max_iter, tol=self.tol)
        return make_pipeline(StandardScaler(), lr) if self.standardize else lr


_LR_DEFAULTS = {"class_weight": None, "dual": False, "fit_intercept": True, "solver": "lbfgs", "warm_start": False}


def _logistic_spec(classifier: Any) -> LogisticSpec | None:
    """The spec of a classifier a batched fit reproduces, else None: None (the default logistic regression),
    a binary L2 ``LogisticRegression`` (lbfgs, intercept, no class weights or warm start), or one after a default
    ``StandardScaler`` in a two-step pipeline."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    if classifier is None:
        return LogisticSpec(standardize=True, C=1.0, tol=1e-4, max_iter=1000)
    standardize = False
    if isinstance(classifier, Pipeline):
        steps = [step for _, step in classifier.steps]
        if len(steps) != 2 or type(steps[0]) is not StandardScaler:
            return None
        scaler = steps[0].get_params()
        if not (scaler["with_mean"] and scaler["with_std"]):
            return None
        standardize, classifier = True, steps[1]
    if type(classifier) is not LogisticRegression:
        return None
    params = classifier.get_params()
    if any(params.get(k, v) != v for k, v in _LR_DEFAULTS.items()):
        return None
    penalty = params.get("penalty", "l2")
    l1_ratio = params.get("l1_ratio")
    if penalty not in ("l2", "deprecated") or l1_ratio not in (None, 0, 0.0):
        return None
    C, tol, max_iter = params["C"], params["tol"], params["max_iter"]
    if not (np.isfinite(C) and C > 0 and tol >= 0 and int(max_iter) >= 1):
        return None
    return LogisticSpec(standardize=standardize, C=float(C), tol=float(tol), max_iter=int(max_iter))


#: ``"auto"`` (batched where :func:`_logistic_spec` recognises the classifier, else scikit-learn pair by pair),
#: ``"batched"`` (required), ``"sklearn"`` (the reference).
SOLVERS = ("auto", "batched", "sklearn")
#: The solver outside any :func:`_use_solver` block (``"auto"`` unless set), e.g. ``EPSAUDIT_SOLVER=sklearn make book``.
SOLVER_ENV = "EPSAUDIT_SOLVER"


def _default_solver() -> str:
    solver = os.environ.get(SOLVER_ENV, "auto") or "auto"
    if solver not in SOLVERS:
        raise ValueError(f"${SOLVER_ENV} must be one of {SOLVERS}, got {solver!r}")
    return solver


_SOLVER: ContextVar[str] = ContextVar("epsaudit_logistic_solver", default=_default_solver())


@contextmanager
def _use_solver(solver: str) -> Iterator[None]:
    """Within the block, routes called with ``solver=None`` fit with ``solver``; ValueError if it is unknown."""
    token = _SOLVER.set(_check_solver(solver))
    try:
        yield
    finally:
        _SOLVER.reset(token)


def current_solver() -> str:
    """The solver routes use when called with ``solver=None`` (``$EPSAUDIT_SOLVER``, or set by a block).

    Examples
    --------
    >>> current_solver() == os.environ.get(SOLVER_ENV, "auto")
    True
    """
    return _SOLVER.get()


def _check_solver(solver: Any) -> str:
    if solver not in SOLVERS:
        raise ValueError(f"solver must be one of {SOLVERS}, got {solver!r}")
    return solver


def resolve_solver(solver: str | None, classifier: Any) -> LogisticSpec | None:
    """The :class:`LogisticSpec` to fit ``classifier`` with in batches, or None for scikit-learn pair by pair.

    Parameters
    ----------
    solver : {"auto", "batched", "sklearn"} or None
        None: :func:`current_solver`.
    classifier : scikit-learn estimator or None
        None: the default :func:`epsaudit.audits.scorers.logistic_regression`.

    Returns
    -------
    LogisticSpec or None

    Raises
    ------
    ValueError
        An unknown solver, or ``"batched"`` with a classifier :func:`_logistic_spec` does not recognise.

    Examples
    --------
    >>> resolve_solver("sklearn", None) is None, resolve_solver("auto", None).standardize
    (True, True)
    """
    solver = current_solver() if solver is None else _check_solver(solver)
    if solver == "sklearn":
        return None
    spec = _logistic_spec(classifier)
    if spec is None and solver == "batched":
        raise ValueError(f"solver='batched' fits only scikit-learn's binary L2 logistic regression (lbfgs, with an "
                         f"intercept), optionally after a default StandardScaler; got {classifier!r}: use "
                         "solver='auto' or 'sklearn'")
    return spec


# the objective of one chunk of fits: pairs of rows (P, N, d), K fits per pair


def _loss_grad(z: np.ndarray, sign: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The half binomial loss ``log(1 + e^z) - y z`` and its derivative ``expit(z) - y``, accurately.

    ``sign = 1 - 2 y``; with ``u = sign * z`` the loss is ``log(1 + e^u) = max(u, 0) + log1p(e^-|u|)``
    and the derivative ``sign * expit(u)``: no cancellation, scikit-learn's ``closs_grad_half_binomial``
    to rounding (numpy's vectorised ``exp``/``log1p``).
    """
    u = sign * z
    t = np.exp(-np.abs(u))
    loss = np.log1p(t)
    loss += np.maximum(u, 0.0)
    grad = np.where(u >= 0.0, 1.0, t)
    grad /= 1.0 + t
    grad *= sign
    return loss, grad


_BUFFERS = threading.local()


def _buffer(name: str, shape: tuple[int, ...]) -> np.ndarray:
    """A float64 work array of ``shape``, reused by the chunks one thread solves in turn (no fresh pages)."""
    size = int(np.prod(shape))
    store = _BUFFERS.__dict__.setdefault("arrays", {})
    if name not in store or store[name].size < size:
        store[name] = np.empty(max(size, CHUNK_BYTES // 8))
    return store[name][:size].reshape(shape)


def _rows_times(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` for stacks (P, K, N) @ (P, N, d), in blocks of four rows of ``a``.

    The same product; OpenBLAS multiplies four (or one) rows by a tall matrix markedly faster than five.
    """
    if a.shape[1] <= 4:
        return np.matmul(a, b)
    out = np.empty(a.shape[:2] + b.shape[2:])
    for i in range(0, a.shape[1], 4):
        np.matmul(a[:, i: i + 4], b, out=out[:, i: i + 4])
    return out


def _decision(coef: np.ndarray, xc: np.ndarray, mu: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """``((x - mean) / scale) @ w + b`` (P, K, N) from centred rows ``xc``, the scaling folded into ``w``."""
    w, b = coef[..., :-1], coef[..., -1]
    v = w / scale
    z = np.matmul(v, xc.transpose(0, 2, 1))
    z += (b - np.einsum("pkd,pkd->pk", mu, v))[..., None]
    return z


class _Chunk:
    """Rows, labels, training masks and scaler statistics of a chunk of pairs (padded to N rows)."""

    def __init__(self, designs: Sequence[tuple[tuple[np.ndarray, ...], np.ndarray, np.ndarray]], spec: LogisticSpec,
                 centred: bool = True):
        P, K = len(designs), designs[0][2].shape[0]
        N, d = max(len(y) for _, y, _ in designs), designs[0][0][0].shape[1]
        # rows centred on their design's mean (and zero beyond it): the objective is evaluated as
        # xc @ (w / scale) + b - mu @ (w / scale) with mu = shift - centre, which loses nothing to cancellation
        self.xc = _buffer("xc", (P, N, d))
        self.xc[:] = 0.0
        self.y = np.zeros((P, N))
        self.mask = np.zeros((P, K, N))
        centre = np.empty((P, d))
        for p, (blocks, y, train) in enumerate(designs):
            centre[p] = sum(b.sum(axis=0) for b in blocks) / len(y) if centred else 0.0
            start = 0
            for b in blocks:
                np.subtract(b, centre[p], out=self.xc[p, start: start + len(b)])
                start += len(b)
            self.y[p, : len(y)] = y
            self.mask[p, :, : len(y)] = train
        self.n = self.mask.sum(-1)                                          # (P, K) training rows
        mean_c = _rows_times(self.mask, self.xc) / self.n[..., None]        # (P, K, d) training means - centre
        self.mean = mean_c + centre[:, None, :]
        if spec.standardize:  # population variances, as StandardScaler
            square = np.multiply(self.xc, self.xc, out=_buffer("square", (P, N, d)))
            var = np.maximum(_rows_times(self.mask, square) / self.n[..., None] - mean_c * mean_c, 0.0)
            for p, k, j in zip(*np.nonzero(var <= 1e-6 * (var + mean_c * mean_c))):  # (nearly) constant in the fold:
                t = np.concatenate([b[:, j] for b in designs[p][0]])[designs[p][2][k]]  # two passes, as sklearn
                temp = t - self.mean[p, k, j]
                var[p, k, j] = ((temp * temp).sum() - temp.sum() ** 2 / len(t)) / len(t)
            n = self.n[..., None]
            constant = var <= n * EPS * var + (n * self.mean * EPS) ** 2
            self.scale = np.where(constant, 1.0, np.sqrt(var))
            self.mu = mean_c
        else:
            self.scale = np.ones_like(self.mean)
            self.mu = -np.broadcast_to(centre[:, None, :], self.mean.shape).copy()
        self.sign = 1.0 - 2.0 * self.y
        self.l2 = 1.0 / (spec.C * self.n)
        self.P, self.K, self.N, self.d = P, K, N, d

    def take(self, pairs: np.ndarray) -> None:
        """Keep only ``pairs`` (compaction once most pairs have finished)."""
        for name in ("y", "sign", "mask", "n", "mean", "scale", "xc", "mu", "l2"):
            setattr(self, name, getattr(self, name)[pairs])
        self.P = len(pairs)

    def fg(self, coef: np.ndarray, pairs: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Objective and gradient of every fit of ``pairs`` (all pairs when None) at ``coef`` (P, K, d + 1)."""
        sel = slice(None) if pairs is None else pairs
        xc, mu, sc, l2, m, n = self.xc[sel], self.mu[sel], self.scale[sel], self.l2[sel], self.mask[sel], self.n[sel]
        w = coef[..., :-1]
        # at the start, zero coefficients, every decision value is 0
        z = _decision(coef, xc, mu, sc) if coef.any() else np.zeros(m.shape)
        loss, grad = _loss_grad(z, self.sign[sel][:, None, :])
        f = (loss * m).sum(-1) / n + 0.5 * l2 * np.einsum("pkd,pkd->pk", w, w)
        gp = grad * m / n[..., None]
        sg = gp.sum(-1)
        gw = (_rows_times(gp, xc) - mu * sg[..., None]) / sc + l2[..., None] * w
        return f, np.concatenate([gw, sg[..., None]], axis=-1)


# the public entry point


@dataclass(frozen=True)
class Design:
    """The fits of one batched problem: rows, labels, each fit's training rows and the rows it scores.

    Attributes
    ----------
    x : numpy.ndarray, shape (N, d), or tuple of them
        All rows (float64, finite), or their blocks in order (copied into the batch without stacking).
    y : numpy.ndarray, shape (N,)
        Labels in {0, 1} (1 = identity A).
    train : numpy.ndarray of bool, shape (K, N)
        Training rows of each of the ``K`` fits (each with both labels).
    score_rows : tuple of K tuples of index arrays
        Per fit, the groups of rows it scores, each in one call (the test fold, or each identity's rows).

    Examples
    --------
    >>> x = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> Design((x[:2], x[2:]), np.array([0, 0, 1, 1]), np.ones((1, 4), bool), ((np.arange(4),),)).rows.shape
    (4, 1)
    """

    x: np.ndarray | tuple[np.ndarray, ...]
    y: np.ndarray
    train: np.ndarray
    score_rows: tuple

    @property
    def blocks(self) -> tuple[np.ndarray, ...]:
        """The rows as blocks (one block when given stacked)."""
        return tuple(self.x) if isinstance(self.x, (tuple, list)) else (self.x,)

    @property
    def shape(self) -> tuple[int, int]:
        """``(N, d)``."""
        blocks = self.blocks
        return sum(len(b) for b in blocks), blocks[0].shape[1]

    @property
    def rows(self) -> np.ndarray:
        """All rows stacked, shape (N, d)."""
        return self.x if not isinstance(self.x, (tuple, list)) else np.vstack(self.x)


def _chunks(designs: Sequence[Design]) -> list[list[int]]:
    """Designs grouped by size (largest first) into chunks of at most :data:`CHUNK_BYTES` of rows."""
    order = sorted(range(len(designs)), key=lambda i: (-designs[i].shape[0], i))
    out: list[list[int]] = []
    for i in order:
        rows = designs[i].shape[0] * designs[i].shape[1] * 8
        if out and (len(out[-1]) + 1) * designs[out[-1][0]].shape[0] * designs[i].shape[1] * 8 <= max(
                CHUNK_BYTES, rows):
            out[-1].append(i)
        else:
            out.append([i])
    return out


def _final_scores(chunk: _Chunk, coef: np.ndarray) -> np.ndarray:
    """``predict_proba(rows)[:, 1]`` of every fit of the chunk for all its rows (P, K, N), as the objective sees it."""
    from scipy.special import expit

    z = _decision(coef, chunk.xc, chunk.mu, chunk.scale)
    return expit(z, out=z)


def _refit(design: Design, k: int, spec: LogisticSpec) -> tuple[list[np.ndarray], int]:
    """One fit with scikit-learn itself (a fit that left the common path)."""
    from .scorers import count_convergence_warnings, positive_scores

    rows = np.flatnonzero(design.train[k])
    x = design.rows
    fitted, warned = count_convergence_warnings(lambda: spec.estimator().fit(x[rows], design.y[rows]))
    return [positive_scores(fitted, x[group]) for group in design.score_rows[k]], warned


def _solve_chunk(designs: Sequence[Design], spec: LogisticSpec) -> list[tuple[list[list[np.ndarray]], int, int]]:
    rows = [(d.blocks, d.y, d.train) for d in designs]
    chunk = _Chunk(rows, spec)
    whole = copy.copy(chunk)  # the solver compacts the chunk's arrays as fits finish
    # a fit past MAX_ITERATIONS is refitted by scikit-learn whatever it does next: stop it there
    max_iter = min(spec.max_iter, MAX_ITERATIONS + 1)
    solver = _BatchLBFGSB(chunk, tol=spec.tol, max_iter=max_iter)
    solver.run()
    final = _final_scores(whole, solver.coef_out)  # before another chunk reuses the work arrays
    if not spec.standardize or np.max(np.abs(whole.mean) / whole.scale) > OFFSET:
        # raw features, or features far from zero relative to their spread: their offsets can make a fit
        # sensitive to rounding (scikit-learn's own result then depends on its summation order). Fit again on
        # uncentred rows, as scikit-learn computes, and leave the fits whose two runs differ to scikit-learn.
        again = _BatchLBFGSB(_Chunk(rows, spec, centred=False), tol=spec.tol, max_iter=max_iter)
        again.run()
        gap = np.abs(again.coef_out - solver.coef_out).max(-1)
        size = np.abs(solver.coef_out).max(-1)
        solver.rare_out |= again.rare_out | (gap > STABLE * (1.0 + size)) | (again.iter_out != solver.iter_out)
    solver.rare_out |= solver.iter_out > MAX_ITERATIONS
    out = []
    for p, design in enumerate(designs):
        scores, warned, refits = [], 0, 0
        for k in range(design.train.shape[0]):
            if solver.rare_out[p, k]:
                fit_scores, w = _refit(design, k, spec)
                warned, refits = warned + w, refits + 1
            else:
                fit_scores = [final[p, k, group] for group in design.score_rows[k]]
            scores.append(fit_scores)
        out.append((scores, warned, refits))
    return out


def batched_scores(designs: Sequence[Design], spec: LogisticSpec, *, n_jobs: int | None = None,
                   progress: bool = False, desc: str = "logistic fits") -> list[tuple[list[list[np.ndarray]], int, int]]:
    """Fit every design's logistic regressions in batches and score their rows (module docstring).

    Parameters
    ----------
    designs : sequence of Design
        All with the same number of fits ``K`` and dimension ``d``.
    spec : LogisticSpec
        The estimator reproduced (:func:`resolve_solver`).
    n_jobs : int, default=None
        joblib threads over chunks of designs; the numbers do not depend on it.
    progress : bool, default=False
        A tqdm bar counting finished designs.
    desc : str, default="logistic fits"
        Its label.

    Returns
    -------
    list
        Per design ``(scores, convergence_warnings, refits)``: ``scores[k][j]`` the probabilities of label 1 of
        the ``j``-th group of ``score_rows[k]`` under fit ``k``; the ConvergenceWarnings of its scikit-learn
        refits; how many fits were refitted.

    Raises
    ------
    ValueError
        Designs of different ``K`` or ``d``, a fit without both labels among its training rows.

    References
    ----------
    *Picture the Epsilon*, Section IV ("ROC-HT configuration"). Zhu, Byrd, Lu and Nocedal (1997), L-BFGS-B
    (ACM TOMS 23); Morales and Nocedal (2011), its version 3.0 (ACM TOMS 38); More and Thuente (1994) (ACM TOMS 20).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = np.vstack([rng.normal(1.0, 1.0, (20, 3)), rng.normal(size=(20, 3))])
    >>> y = np.r_[np.ones(20, int), np.zeros(20, int)]
    >>> design = Design(x, y, np.ones((1, 40), bool), ((np.arange(40),),))
    >>> (scores,), warned, refits = batched_scores([design], _logistic_spec(None))[0]
    >>> reference = _logistic_spec(None).estimator().fit(x, y).predict_proba(x)[:, 1]
    >>> bool(np.abs(scores[0] - reference).max() < 1e-12), warned
    (True, 0)
    """
    if not designs:
        return []
    K, d = designs[0].train.shape[0], designs[0].shape[1]
    for i, design in enumerate(designs):
        if design.train.shape != (K, design.shape[0]) or design.shape[1] != d:
            raise ValueError(f"design {i}: train mask of shape {design.train.shape} and rows of shape "
                             f"{design.shape}; every design needs {K} fits over its rows in dimension {d}")
        ones = design.y == 1
        both = (design.train & ones).any(1) & (design.train & ~ones).any(1)
        if not both.all() or not np.isin(design.y, (0, 1)).all():
            k = int(np.flatnonzero(~both)[0]) if not both.all() else 0
            raise ValueError(f"design {i}: fit {k} has training labels {np.unique(design.y[design.train[k]]).tolist()}; "
                             "a logistic regression needs both labels 0 and 1 (and no others)")
    from joblib import Parallel, delayed

    from ..parallel import progress_bar

    chunks = _chunks(designs)
    runner = Parallel(n_jobs=n_jobs, prefer="threads", return_as="generator")
    results = runner(delayed(_solve_chunk)([designs[i] for i in chunk], spec) for chunk in chunks)
    out: list[Any] = [None] * len(designs)
    bar = progress_bar(range(len(designs)), progress, desc) if progress else None
    for chunk, result in zip(chunks, results):
        for i, r in zip(chunk, result):
            out[i] = r
        if bar is not None:
            bar.update(len(chunk))
    if bar is not None:
        bar.close()
    return out
