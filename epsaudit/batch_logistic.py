"""Many small logistic regressions at once, each fitted the way scikit-learn fits it.

ROC-HT fits one logistic regression per fold and pair (out-of-fold scores and the
development-only ranking of *Picture the Epsilon*, Section IV) and one per certified pair (the
reserved test). scikit-learn fits them one at a time; at these sizes (tens to hundreds of rows)
its input checks and the Python side of ``scipy.optimize.minimize`` cost as much as the
arithmetic. :func:`batched_scores` runs the same computation on a batch of fits in lock-step with
numpy arrays:

* the same model: with standardisation, each fit's ``StandardScaler`` statistics of its own
  training rows (population variance; near-constant features get scale 1 by scikit-learn's
  rule), then the objective of ``LogisticRegression(C, solver="lbfgs")``: the mean log-loss
  (scikit-learn's piecewise formula) plus ``||w||^2 / (2 C n)``, intercept unpenalised;
* the same optimiser: scipy's L-BFGS-B as scikit-learn calls it (memory 10, start at zero, first
  step ``1 / ||g||``, More-Thuente line search with ``ftol = 1e-3``, ``gtol = 0.9``,
  ``xtol = 0.1``), stopped by the same tests (``max |gradient| <= tol``, relative reduction of
  the objective ``<= 64 eps``, ``max_iter`` iterations) -- :class:`epsaudit.batch_lbfgsb.BatchLBFGSB`;
* the same scores: ``expit`` of the decision function of the standardised rows.

Each fit therefore follows scikit-learn's iterates up to floating-point rounding (sums run in
another order), and its scores agree with scikit-learn's to about 1e-12 -- which matters,
because at ``tol = 1e-4`` L-BFGS stops after ~10-30 iterations, well before the exact optimum, and
the out-of-fold ROC compares scores of different folds' models: an exactly converged fit gives
different AUCs (measured: 94 of 200 pairs of ``dlib_large_dp-pix.csv``). A fit that leaves the
common path is refitted with scikit-learn itself: a line search that ends in a warning or needs
more than 20 evaluations, a skipped quasi-Newton update, more than :data:`MAX_ITERATIONS`
iterations (rounding grows along long runs), any stopping or line-search test decided within
1e-9 (relative) of its threshold. Where features sit far from zero relative to their spread
(always without standardisation), every fit is run twice, on centred and on raw rows, and a fit
whose two runs differ by more than 1e-9 is refitted too: there scikit-learn's own result depends
on its rounding. Measured on the 12 committed condition tables: the same AUCs, values and
certificates as the per-pair fits (``tests/test_batch_logistic.py``).
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import numpy as np

from .batch_lbfgsb import BatchLBFGSB

EPS = float(np.finfo(np.float64).eps)
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
        ``StandardScaler()`` before the regression (:func:`epsaudit.scorers.logistic_regression`).
    C : float
        Inverse L2 penalty.
    tol : float
        L-BFGS-B's ``pgtol`` (scikit-learn's ``tol``).
    max_iter : int
        Iteration limit.

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


_LR_DEFAULTS = {"class_weight": None, "dual": False, "fit_intercept": True, "solver": "lbfgs",
                "warm_start": False}


def logistic_spec(classifier: Any) -> LogisticSpec | None:
    """The :class:`LogisticSpec` of a classifier a batched fit reproduces exactly, or None.

    Recognised: None (the default :func:`epsaudit.scorers.logistic_regression`), a binary
    ``LogisticRegression`` with the L2 penalty, ``solver="lbfgs"``, an intercept, no class
    weights and no warm start (:func:`epsaudit.scorers.paper_logistic_regression`), and a
    two-step pipeline of a default ``StandardScaler`` and such a regression.

    Parameters
    ----------
    classifier : scikit-learn estimator or None

    Returns
    -------
    LogisticSpec or None
        None for any other estimator (it is then fitted pair by pair with scikit-learn).

    Examples
    --------
    >>> from epsaudit.scorers import paper_logistic_regression, shrinkage_lda
    >>> logistic_spec(None)
    LogisticSpec(standardize=True, C=1.0, tol=0.0001, max_iter=1000)
    >>> logistic_spec(paper_logistic_regression()).standardize, logistic_spec(shrinkage_lda())
    (False, None)
    """
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


#: The ways the learned tests can be fitted: ``"auto"`` (batched where :func:`logistic_spec` recognises
#: the classifier, else scikit-learn pair by pair), ``"batched"`` (required), ``"sklearn"`` (the reference).
SOLVERS = ("auto", "batched", "sklearn")
_SOLVER: ContextVar[str] = ContextVar("epsaudit_logistic_solver", default="auto")


@contextmanager
def use_solver(solver: str) -> Iterator[None]:
    """Within the block, routes called with ``solver=None`` fit their logistic regressions with ``solver``.

    Parameters
    ----------
    solver : {"auto", "batched", "sklearn"}
        ``"sklearn"`` runs every fit with scikit-learn itself, pair by pair (the reference the
        batched fits reproduce); ``"auto"`` is the default outside any block.

    Raises
    ------
    ValueError
        An unknown solver.

    Examples
    --------
    >>> with use_solver("sklearn"):
    ...     current_solver()
    'sklearn'
    >>> current_solver()
    'auto'
    """
    token = _SOLVER.set(_check_solver(solver))
    try:
        yield
    finally:
        _SOLVER.reset(token)


def current_solver() -> str:
    """The solver routes use when called with ``solver=None`` (see :func:`use_solver`).

    Examples
    --------
    >>> current_solver()
    'auto'
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

    Returns
    -------
    LogisticSpec or None

    Raises
    ------
    ValueError
        An unknown solver, or ``"batched"`` with a classifier :func:`logistic_spec` does not
        recognise.

    Examples
    --------
    >>> resolve_solver("sklearn", None) is None, resolve_solver("auto", None).standardize
    (True, True)
    """
    solver = current_solver() if solver is None else _check_solver(solver)
    if solver == "sklearn":
        return None
    spec = logistic_spec(classifier)
    if spec is None and solver == "batched":
        raise ValueError(f"solver='batched' fits only scikit-learn's binary L2 logistic regression (lbfgs, with an "
                         f"intercept), optionally after a default StandardScaler; got {classifier!r}: use "
                         "solver='auto' or 'sklearn'")
    return spec


# -------------------------------------------------------------------------------------------------
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
        w, b = coef[..., :-1], coef[..., -1]
        v = w / sc
        if coef.any():
            z = np.matmul(v, xc.transpose(0, 2, 1))
            z += (b - np.einsum("pkd,pkd->pk", mu, v))[..., None]
        else:  # the start, zero coefficients: every decision value is 0
            z = np.zeros(m.shape)
        loss, grad = _loss_grad(z, self.sign[sel][:, None, :])
        f = (loss * m).sum(-1) / n + 0.5 * l2 * np.einsum("pkd,pkd->pk", w, w)
        gp = grad * m / n[..., None]
        sg = gp.sum(-1)
        gw = (_rows_times(gp, xc) - mu * sg[..., None]) / sc + l2[..., None] * w
        return f, np.concatenate([gw, sg[..., None]], axis=-1)


# -------------------------------------------------------------------------------------------------
# the public entry point


@dataclass(frozen=True)
class Design:
    """The fits of one batched problem: rows, labels, each fit's training rows and the rows it scores.

    Attributes
    ----------
    x : numpy.ndarray, shape (N, d), or tuple of them
        All rows (float64, finite), or their blocks in order (e.g. the rows of identity A, then of
        B: they are copied into the batch without being stacked first).
    y : numpy.ndarray, shape (N,)
        Labels in {0, 1} (1 = identity A); only those of training rows matter.
    train : numpy.ndarray of bool, shape (K, N)
        Training rows of each of the ``K`` fits (each with both labels).
    score_rows : tuple of K tuples of index arrays
        For each fit, the groups of rows it scores, each group in one call (as scikit-learn would
        score them: the test fold, or the development and test rows of each identity).

    Examples
    --------
    >>> x = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> Design(x, np.array([0, 0, 1, 1]), np.ones((1, 4), bool), ((np.arange(4),),)).train.shape
    (1, 4)
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
    """``predict_proba(rows)[:, 1]`` of every fit of the chunk for all its rows, shape (P, K, N).

    The decision function of the standardised rows, ``((x - mean) / scale) @ w + b``, evaluated as
    the objective evaluates it (centred rows, the scaling folded into ``w``): the same scores as
    scikit-learn's to rounding.
    """
    from scipy.special import expit

    w, b = coef[..., :-1], coef[..., -1]
    v = w / chunk.scale
    z = np.matmul(v, chunk.xc.transpose(0, 2, 1))
    z += (b - np.einsum("pkd,pkd->pk", chunk.mu, v))[..., None]
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
    solver = BatchLBFGSB(chunk, tol=spec.tol, max_iter=max_iter)
    solver.run()
    final = _final_scores(whole, solver.coef_out)  # before another chunk reuses the work arrays
    if not spec.standardize or np.max(np.abs(whole.mean) / whole.scale) > OFFSET:
        # raw features, or features far from zero relative to their spread: their offsets can make a fit
        # sensitive to rounding (scikit-learn's own result then depends on its summation order). Fit again on
        # uncentred rows, as scikit-learn computes, and leave the fits whose two runs differ to scikit-learn.
        again = BatchLBFGSB(_Chunk(rows, spec, centred=False), tol=spec.tol, max_iter=max_iter)
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
        The estimator reproduced (:func:`logistic_spec`).
    n_jobs : int, optional
        joblib threads over chunks of designs; the numbers do not depend on it.
    progress : bool
        A tqdm bar counting finished designs.
    desc : str
        Its label.

    Returns
    -------
    list
        Per design ``(scores, convergence_warnings, refits)``: ``scores[k][j]`` the scores (shape
        ``(len(group),)``, probability of label 1) of the ``j``-th group of ``score_rows[k]`` under fit
        ``k``; the ConvergenceWarnings of its scikit-learn refits; how many fits were refitted.

    Raises
    ------
    ValueError
        Designs of different ``K`` or ``d``, a fit without both labels among its training rows.

    References
    ----------
    *Picture the Epsilon*, Section IV ("ROC-HT configuration"): the logistic regression of the
    learned tests. Zhu, Byrd, Lu and Nocedal (1997), L-BFGS-B (ACM TOMS 23); Morales and Nocedal
    (2011), its version 3.0 (ACM TOMS 38): the optimiser reproduced.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = np.vstack([rng.normal(1.0, 1.0, (20, 3)), rng.normal(size=(20, 3))])
    >>> y = np.r_[np.ones(20, int), np.zeros(20, int)]
    >>> design = Design(x, y, np.ones((1, 40), bool), ((np.arange(40),),))
    >>> (scores,), warned, refits = batched_scores([design], logistic_spec(None))[0]
    >>> reference = logistic_spec(None).estimator().fit(x, y).predict_proba(x)[:, 1]
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

    from .progress import progress_bar

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
