"""Mechanism adapters of DP-Sniper: draw calls of the two inputs in batches, expose features.

:func:`_source` picks the adapter: the fast float-safe sampler of product Laplace, integer codes
for randomized response, any other :class:`~epsaudit.mechanisms.Mechanism`, or a user callable
whose outputs are checked batch by batch (shape, finiteness and, with ``check_reuse``, reuse of
earlier stages' rows).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..mechanisms import Mechanism, ProductLaplace, RandomizedResponse
from ..validation import ReusedRowsError, row_keys


class _Source:
    """Draws outputs of the two inputs (0 = a, 1 = b)."""

    discrete = False
    dim: int | None = None
    n_outputs = 0
    stage = "training"  # set by dp_sniper: "training", "threshold" or "final"

    def draw(self, which: int, n: int, rng: np.random.Generator) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def features(self, batch: np.ndarray) -> np.ndarray:
        return batch


class _LaplaceSource(_Source):
    """Float-safe product Laplace outputs ``g * rint((mu + noise) / g)`` in float64, float32 features.

    The noise is the Laplace inverse CDF of numpy's float64 uniform ``U`` (lattice ``k 2**-53``),
    vectorised: with ``S = U - 1/2`` and ``V = 1 - 2 |S| + 2**-53`` (exact: the midpoints of the
    ``2**-52`` lattice, never 0), ``noise = sign(S) b E`` with ``E = -log V`` -- numpy's
    ``Generator.laplace`` formula (``log(2U)`` below the median, ``-log(2 - 2U)`` above) up to
    that half-step. The sum is rounded to the mechanism's grid ``g``
    (:attr:`epsaudit.mechanisms.ProductLaplace.grid`), computed in units of ``g`` (exact:
    powers of two). This is the same float-safe mechanism as :meth:`ProductLaplace.sample` -- the
    Laplace law rounded to the same grid, with the same uniform lattice, so grid cells are filled
    unevenly only beyond ~21 b from the mean (probability 1e-9 per coordinate; package docstring
    of :mod:`epsaudit.mechanisms`) -- drawn with numpy's vectorised ``log`` instead of its
    per-draw C loop; the draws themselves differ. The classifier sees the outputs as float32
    features, a deterministic function of the output (post-processing); a ``score_function``
    sees the float64 outputs.

    (Until this was float-safe the source drew float32 noise from 31-bit uniforms: beyond ~8 b
    from the mean, probability 3e-4 per coordinate, its outputs were coarser than float32 and
    their lattice differed between the two means, so the sampled mechanism was not epsilon-DP.
    The float64 draw costs about 2.5 times the CPU time per value, 1.8 times per 512-dimensional
    DP-Sniper row.)
    """

    def __init__(self, mech: ProductLaplace, a: int, b: int) -> None:
        self.grid = np.asarray(mech.grid, dtype=np.float64)
        self.mu_in_cells = (mech.prototypes[a] / self.grid, mech.prototypes[b] / self.grid)  # exact
        self.scale_in_cells = float(mech.scale) / self.grid  # exact
        self.dim = mech.dim
        self._work = np.empty(0)

    def draw(self, which, n, rng):
        x = rng.random((n, self.dim))  # U = k 2**-53
        x -= 0.5  # S, exact
        if self._work.size < x.size:
            self._work = np.empty(x.size)
        v = np.abs(x, out=self._work[: x.size].reshape(x.shape))
        v *= -2.0
        v += 1.0  # 1 - 2|S| in [0, 1], exact
        v += 2.0**-53  # V: midpoints, exact (1 + 2**-53 rounds to 1), never 0
        np.log(v, out=v)  # -E
        v *= -self.scale_in_cells  # b E / g >= 0
        np.copysign(v, x, out=x)  # noise / g, with the sign of S
        x += self.mu_in_cells[which]
        np.rint(x, out=x)
        x *= self.grid
        return x

    def features(self, batch):
        return batch.astype(np.float32)


class _CodeSource(_Source):
    """Randomized response: integer category codes; the classifier sees one-hot rows."""

    discrete = True

    def __init__(self, mech: RandomizedResponse, a: int, b: int) -> None:
        self.mech, self.inputs = mech, (a, b)
        self.n_outputs = mech.n_categories
        self.dim = mech.n_categories

    def draw(self, which, n, rng):
        return self.mech.sample_codes(self.inputs[which], n, rng)

    def features(self, batch):
        return self.mech.encode(batch)


class _MechanismSource(_Source):
    """Any :class:`Mechanism`: ``mechanism.sample(identity, n, rng)``."""

    def __init__(self, mech: Mechanism, a: int, b: int) -> None:
        self.mech, self.inputs = mech, (a, b)
        self.dim = mech.dim

    def draw(self, which, n, rng):
        return self.mech.sample(self.inputs[which], n, rng)


class _CallableSource(_Source):
    """A callable ``mechanism(input, n, rng) -> (n, d)`` (or ``(n,)``); every batch is checked.

    Outputs must be real numbers of the promised shape, finite, of one dimension ``d`` for both
    inputs; with ``check_reuse`` the rows are also checked for reuse across stages
    (:class:`_ReuseCheck`).
    """

    def __init__(self, fn: Callable, a: Any, b: Any, check_reuse: bool = True) -> None:
        self.fn, self.inputs = fn, (a, b)
        self.shapes: dict[int, tuple[int, ...]] = {}
        self.reuse = _ReuseCheck() if check_reuse else None
        self.stage = "training"

    def draw(self, which, n, rng):
        name = f"mechanism(input {'ab'[which]}, n={n}, rng)"
        try:
            raw = self.fn(self.inputs[which], n, rng)
        except TypeError as exc:
            raise ValueError(f"{name} failed with TypeError ({exc}); DP-Sniper calls the mechanism as "
                             "mechanism(input, n, rng) with a numpy Generator rng") from exc
        try:
            arr = np.asarray(raw)
            if arr.dtype.kind == "c":
                raise TypeError(f"complex values ({arr.dtype})")
            x = np.asarray(arr, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name} returned {type(raw).__name__} that is not an array of real numbers ({exc}); "
                             "expected a float array of shape (n,) or (n, d)") from None
        if x.ndim == 1:
            x = x[:, None]
        if x.ndim != 2 or x.shape[0] != n:
            raise ValueError(
                f"mechanism(input {'ab'[which]}, n={n}, rng) must return an array of shape (n,) or (n, d); "
                f"got shape {x.shape}"
            )
        bad = ~np.isfinite(x)
        if bad.any():
            row = int(np.argwhere(bad)[0][0])
            raise ValueError(f"mechanism output for input {'ab'[which]} holds NaN or infinite values "
                             f"({int(bad.sum())} in the {self.stage} stage; first in row {row}: {x[row].tolist()[:4]})")
        if self.dim is None:
            self.dim = x.shape[1]
            self.shapes[which] = x.shape[1:]
        elif x.shape[1] != self.dim:
            first = "a" if 0 in self.shapes else "b"
            raise ValueError(
                f"mechanism outputs have mismatched shapes: input {first} gave rows of length {self.dim}, "
                f"input {'ab'[which]} gave {x.shape[1]} (shape {x.shape})"
            )
        else:
            self.shapes.setdefault(which, x.shape[1:])
        if self.reuse is not None:
            self.reuse.observe(x, self.stage, "ab"[which])
        return x


class _ReuseCheck:
    """Refuses a callable mechanism whose outputs in one stage repeat outputs of an earlier stage.

    A certificate needs the threshold sample to be fresh with respect to the training sample and
    the final sample fresh with respect to both; a callable that ignores its ``rng`` (returns the
    same array every call) or replays stored rows breaks that silently. Each row's key
    (:func:`epsaudit.validation.row_keys`: its exact bytes, and for ``d >= 4`` also its
    L2-normalised key, which in one to three dimensions would merge distinct rows) is hashed and
    compared with the keys of all training and threshold rows; final rows are compared, not
    stored. Rows repeated *within the first stage* mean outputs repeat by design (a discrete or
    low-resolution mechanism), where a value check cannot tell a reused draw from a repeated
    value: refused too, with the advice to declare it (``check_reuse=False``).
    """

    NORMALISED_MIN_DIM = 4

    def __init__(self) -> None:
        self.exact: dict[int, str] = {}
        self.normalised: dict[int, str] = {}
        self.batches: dict[tuple[str, str], int] = {}
        self.first_stage: str | None = None

    def observe(self, x: np.ndarray, stage: str, label: str) -> None:
        batch = self.batches.get((stage, label), 0)
        self.batches[(stage, label)] = batch + 1
        if self.first_stage is None:
            self.first_stage = stage
        exact = [hash(k) for k in row_keys(x, normalised=False)]
        normalised = ([hash(k) for k in row_keys(x)] if x.shape[1] >= self.NORMALISED_MIN_DIM
                      else [None] * len(exact))
        if stage == self.first_stage and len(set(exact)) < len(exact):
            repeats = len(exact) - len(set(exact))
            raise ReusedRowsError(
                f"DP-Sniper: {repeats} of {len(exact)} rows of batch {batch} of the {stage} stage of input {label!r} "
                "repeat other rows of the same batch: the mechanism's outputs repeat (a discrete or low-resolution "
                "mechanism, or a callable that returns stored rows). A value check cannot tell a reused draw from a "
                "repeated value; if every call draws fresh outputs from its rng and values repeat by design, pass "
                "check_reuse=False.")
        hits_exact, hits_normalised, origins, first = 0, 0, set(), None
        for i, (ke, kn) in enumerate(zip(exact, normalised)):
            origin = self.exact.get(ke)
            if origin is not None:
                hits_exact += 1
            elif kn is not None and kn in self.normalised:
                origin = self.normalised[kn]
                hits_normalised += 1
            if origin is not None:
                origins.add(origin)
                first = i if first is None else first
        if hits_exact or hits_normalised:
            where = f"batch {batch} of the {stage} stage of input {label!r}"
            counts = (f"({hits_exact} exact copies, {hits_normalised} equal after L2-normalisation; "
                      f"first: row {first})")
            if stage == self.first_stage:
                raise ReusedRowsError(
                    f"DP-Sniper: {hits_exact + hits_normalised} of {len(exact)} rows of {where} repeat rows drawn "
                    f"earlier in the same stage, for {', '.join(sorted(origins))} {counts}: the mechanism's outputs "
                    "repeat (a discrete or low-resolution mechanism, or a callable that ignores its rng or returns "
                    "stored rows). A value check cannot tell a reused draw from a repeated value; if every call "
                    "draws fresh outputs from its rng and values repeat by design, pass check_reuse=False.")
            raise ReusedRowsError(
                f"DP-Sniper: {hits_exact + hits_normalised} of {len(exact)} rows of {where} repeat rows drawn "
                f"for {', '.join(sorted(origins))} {counts}. The threshold and final samples must be fresh draws: "
                "does the mechanism ignore its rng argument or return stored rows? (If outputs repeat by design, "
                "pass check_reuse=False.)")
        if stage != "final":
            tag = f"{stage} of input {label!r}"
            for ke, kn in zip(exact, normalised):
                self.exact.setdefault(ke, tag)
                if kn is not None:
                    self.normalised.setdefault(kn, tag)


def _source(mechanism, a, b, check_reuse: bool = True) -> _Source:
    if isinstance(mechanism, Mechanism):
        for name, value in (("a", a), ("b", b)):
            mechanism._check_identity(value, name)
        if int(a) == int(b):
            raise ValueError(f"a and b are the same input ({a}); DP-Sniper audits two different inputs")
        if type(mechanism) is ProductLaplace:
            return _LaplaceSource(mechanism, int(a), int(b))
        if isinstance(mechanism, RandomizedResponse):
            return _CodeSource(mechanism, int(a), int(b))
        return _MechanismSource(mechanism, int(a), int(b))
    if callable(mechanism):
        return _CallableSource(mechanism, a, b, check_reuse)
    raise ValueError(
        f"mechanism must be an epsaudit Mechanism or a callable (input, n, rng) -> (n, d) array, "
        f"got {type(mechanism).__name__}"
    )



def _freshness(source: _Source) -> str:
    """How the freshness of the threshold and final samples was established (``settings["freshness"]``)."""
    if isinstance(source, _CallableSource):
        if source.reuse is None:
            return "not checked (check_reuse=False): the caller declares that outputs repeat by design"
        normalised = " and after L2-normalisation" if (source.dim or 0) >= _ReuseCheck.NORMALISED_MIN_DIM else ""
        return f"checked: no threshold or final row repeats a training or threshold row (exactly{normalised})"
    return ("not checked: the library's own mechanism draws each stage on an independent child stream of the seed "
            "(outputs may repeat by design)")
