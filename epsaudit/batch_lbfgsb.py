"""scipy's L-BFGS-B without bounds, vectorised over many small problems (the solver of :mod:`epsaudit.batch_logistic`).

The algorithm is that of scipy's C translation of L-BFGS-B 3.0 (Zhu, Byrd, Lu and Nocedal; Morales
and Nocedal) as ``scipy.optimize.minimize(method="L-BFGS-B")`` runs it without bounds: from zero,
the first direction ``-g`` with step ``1 / ||g||``, then the limited-memory quasi-Newton direction
(memory 10, ``H0 = I / theta`` with ``theta = y'y / s'y`` of the latest pair; computed here with the
two-loop recursion, which equals the subspace minimisation without bounds), the More-Thuente line
search of MINPACK-2 (``dcsrch``/``dcstep``, ``ftol = 1e-3``, ``gtol = 0.9``, ``xtol = 0.1``), and the
stopping tests ``max |g| <= pgtol`` and ``(f_k - f_k+1) / max(|f_k|, |f_k+1|, 1) <= 64 eps``.
Branches that do not occur in the logistic regressions it serves, and decisions within rounding of
their threshold, flag the problem (:attr:`BatchLBFGSB.rare_out`) for its caller to solve otherwise.
"""

from __future__ import annotations

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
    """MINPACK-2 dcstep on arrays (``stpmin``/``stpmax``: dcsrch's current ``stmin``/``stmax``).

    Returns the updated interval, the new step, ``brackt`` and a flag for cases left to scikit-learn.
    """
    with np.errstate(all="ignore"):
        sgnd = dp * (dx / np.abs(dx))
        c1 = fp > fx
        c2 = ~c1 & (sgnd < 0.0)
        c3 = ~c1 & ~c2 & (np.abs(dp) < np.abs(dx))
        c4 = ~(c1 | c2 | c3)
        theta = 3.0 * (fx - fp) / (stp - stx) + dx + dp
        s = np.maximum(np.abs(theta), np.maximum(np.abs(dx), np.abs(dp)))
        # case 1: a higher function value; the minimum is bracketed
        gamma = s * np.sqrt((theta / s) ** 2 - (dx / s) * (dp / s))
        gamma = np.where(stp < stx, -gamma, gamma)
        r = ((gamma - dx) + theta) / (((gamma - dx) + gamma) + dp)
        stpc = stx + r * (stp - stx)
        stpq = stx + ((dx / ((fx - fp) / (stp - stx) + dx)) / 2.0) * (stp - stx)
        stpf1 = np.where(np.abs(stpc - stx) < np.abs(stpq - stx), stpc, stpc + (stpq - stpc) / 2.0)
        # case 2: a lower value and derivatives of opposite sign; the minimum is bracketed
        gamma2 = s * np.sqrt((theta / s) ** 2 - (dx / s) * (dp / s))
        gamma2 = np.where(stp > stx, -gamma2, gamma2)
        r2 = ((gamma2 - dp) + theta) / (((gamma2 - dp) + gamma2) + dx)
        stpc2 = stp + r2 * (stx - stp)
        stpq2 = stp + (dp / (dp - dx)) * (stx - stp)
        stpf2 = np.where(np.abs(stpc2 - stp) > np.abs(stpq2 - stp), stpc2, stpq2)
        # case 3: a lower value, derivatives of the same sign, decreasing in magnitude
        gamma3 = s * np.sqrt(np.maximum(0.0, (theta / s) ** 2 - (dx / s) * (dp / s)))
        gamma3 = np.where(stp > stx, -gamma3, gamma3)
        r3 = ((gamma3 - dp) + theta) / ((gamma3 + (dx - dp)) + gamma3)
        stpc3 = np.where((r3 < 0.0) & (gamma3 != 0.0), stp + r3 * (stx - stp), np.where(stp > stx, stpmax, stpmin))
        stpq3 = stp + (dp / (dp - dx)) * (stx - stp)
        in_bracket = np.where(np.abs(stpc3 - stp) < np.abs(stpq3 - stp), stpc3, stpq3)
        in_bracket = np.where(stp > stx, np.minimum(stp + 0.66 * (sty - stp), in_bracket),
                              np.maximum(stp + 0.66 * (sty - stp), in_bracket))
        outside = np.maximum(stpmin, np.minimum(stpmax, np.where(np.abs(stpc3 - stp) > np.abs(stpq3 - stp), stpc3,
                                                                   stpq3)))
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
    """One dcsrch call for fits ``idx`` with the value ``f`` and slope ``g`` at their current step.

    Returns (done, rare, stp): the search accepted the step (convergence), the fit left the common
    path (a warning, a rare case, a close call), and the next step to evaluate.
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


# -------------------------------------------------------------------------------------------------
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


class BatchLBFGSB:
    """scipy's L-BFGS-B without bounds, run in lock-step on ``P x K`` smooth problems from zero.

    The problems come in ``P`` groups of ``K`` (the folds of a pair share their rows). Every
    running problem makes one quasi-Newton update per iteration, so their limited memories fill
    in step; a problem that would leave the common path of scipy's implementation (see
    :mod:`epsaudit.batch_logistic`) is stopped and flagged in :attr:`rare_out` instead.

    Parameters
    ----------
    problem : object
        With attributes ``P``, ``K``, ``d`` (the problems have ``d + 1`` variables) and methods
        ``fg(coef, pairs)`` -- values (P', K) and gradients (P', K, d + 1) at ``coef`` (P', K,
        d + 1) for the groups ``pairs`` (all when None) -- and ``take(pairs)`` (keep only those
        groups; called once most groups have finished).
    tol : float
        ``pgtol``: stop when ``max |gradient| <= tol``.
    max_iter : int
        Iteration limit (reaching it flags the problem).

    Attributes
    ----------
    coef_out : numpy.ndarray, shape (P, K, d + 1)
        Solutions (after :meth:`run`).
    iter_out : numpy.ndarray of int, shape (P, K)
        Iterations.
    rare_out : numpy.ndarray of bool, shape (P, K)
        Problems that left the common path (their ``coef_out`` is not a solution).

    References
    ----------
    Zhu, Byrd, Lu and Nocedal (1997), L-BFGS-B (ACM TOMS 23); Morales and Nocedal (2011), its
    version 3.0 (ACM TOMS 38); More and Thuente (1994), the line search (ACM TOMS 20); the
    learned tests of *Picture the Epsilon*, Section IV, are what it fits here.

    Examples
    --------
    >>> class Quadratics:  # f(x) = ||x - t||^2 / 2 for two targets t
    ...     P, K, d = 2, 1, 1
    ...     t = np.array([[[1.0, -2.0]], [[0.5, 3.0]]])
    ...     def fg(self, coef, pairs=None):
    ...         t = self.t if pairs is None else self.t[pairs]
    ...         return 0.5 * ((coef - t) ** 2).sum(-1), coef - t
    ...     def take(self, pairs):
    ...         self.t, self.P = self.t[pairs], len(pairs)
    >>> solver = BatchLBFGSB(Quadratics(), tol=1e-8, max_iter=100)
    >>> solver.run()
    >>> solver.coef_out.round(6).tolist(), solver.rare_out.tolist()
    ([[[1.0, -2.0]], [[0.5, 3.0]]], [[False], [False]])
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
