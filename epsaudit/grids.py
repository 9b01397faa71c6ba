"""Grid searches that say where their choice sits: interior, or at an edge of the grid.

Every hyperparameter that is chosen over a grid (the operator's ridge penalty,
:func:`epsaudit.operator.fit_affine_operator`) or whose effect is swept (MMD-TV's bandwidth) carries
a :class:`GridSearchRecord`: the grid, the score of every grid value, the chosen (best-scoring)
value and whether it is *interior* or sits at the *lower* or *upper* edge of the grid, and whether
and how often the grid was widened. A choice at an edge is not determined by the data: a wider
grid could move it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

#: Where a grid's best value sits: strictly inside, at the smallest or largest grid value, or a
#: grid of one value (nothing was searched).
EDGES = ("interior", "lower", "upper", "fixed")


# -------------------------------------------------------------------------------------------------
# grid-search records


@dataclass(frozen=True)
class GridSearchRecord:
    """Where the best value of a searched (or swept) hyperparameter sits in its grid.

    Build one with :func:`grid_record`, which computes ``chosen`` and ``edge``.

    Attributes
    ----------
    parameter : str
        What was searched, e.g. ``"ridge penalty"`` or ``"bandwidth scale"``.
    criterion : str
        What ``scores`` are, e.g. ``"mean held-out R^2 over 5 folds"``.
    grid : tuple of float, shape (g,)
        The final grid, strictly increasing (after any widening).
    scores : tuple of float, shape (g,)
        The criterion at every grid value.
    chosen : float
        The best grid value (first of equal scores, i.e. the smallest, as ``GridSearchCV``).
    edge : str
        One of :data:`EDGES`: ``"interior"``, ``"lower"``/``"upper"`` (the chosen value is the
        smallest/largest of the final grid) or ``"fixed"`` (a one-value grid).
    initial_grid : tuple of float
        The grid before widening.
    widenings : int
        How many times the grid was extended beyond an edge (0: not widened).
    stopped : str
        Why the search ended: ``"interior"`` (best value inside the grid), ``"limit"`` (the
        allowed widenings were used up with the best value still at an edge), ``"flat"`` (the
        scores at the edge no longer changed, so widening further cannot move the choice),
        ``"not widened"`` (widening disabled) or ``"fixed"``.
    score_se : tuple of float or None, shape (g,)
        Standard error of each score over the folds (``std(ddof=1) / sqrt(folds)``), if the
        criterion is a cross-validation mean.
    maximise : bool
        Higher scores are better.

    Raises
    ------
    ValueError
        Grid and scores of different lengths, an unknown ``edge``, or ``chosen`` not in the grid.

    Examples
    --------
    >>> rec = grid_record("ridge penalty", [0.1, 1.0, 10.0], [0.5, 0.7, 0.68], criterion="held-out R^2",
    ...                   score_se=[0.05, 0.05, 0.05])
    >>> rec.chosen, rec.edge, rec.determined, rec.one_se_range
    (1.0, 'interior', True, (1.0, 10.0))
    >>> rec.describe()
    'ridge penalty 1: interior of [0.1, 10] (not widened)'
    """

    parameter: str
    criterion: str
    grid: tuple
    scores: tuple
    chosen: float
    edge: str
    initial_grid: tuple
    widenings: int = 0
    stopped: str = "not widened"
    score_se: tuple | None = None
    maximise: bool = True

    def __post_init__(self) -> None:
        if len(self.grid) != len(self.scores) or not self.grid:
            raise ValueError(f"{self.parameter}: grid ({len(self.grid)}) and scores ({len(self.scores)}) must be "
                             "non-empty and of one length")
        if self.score_se is not None and len(self.score_se) != len(self.grid):
            raise ValueError(f"{self.parameter}: score_se has {len(self.score_se)} entries for {len(self.grid)} "
                             "grid values")
        if self.edge not in EDGES:
            raise ValueError(f"edge must be one of {EDGES}, got {self.edge!r}")
        if self.chosen not in self.grid:
            raise ValueError(f"{self.parameter}: chosen value {self.chosen} is not in the grid")

    @property
    def index(self) -> int:
        """Position of ``chosen`` in ``grid``."""
        return self.grid.index(self.chosen)

    @property
    def widened(self) -> bool:
        """True if the grid was extended beyond its initial range."""
        return self.widenings > 0

    @property
    def determined(self) -> bool:
        """True only for an interior choice: an edge (or one-value) choice could move with the grid."""
        return self.edge == "interior"

    @property
    def best_score(self) -> float:
        """The criterion at the chosen value."""
        return float(self.scores[self.index])

    def within_one_se(self) -> np.ndarray:
        """Boolean mask over ``grid``: scores within one standard error of the best score (the
        one-standard-error rule: values the criterion cannot tell apart from the chosen one).

        Raises
        ------
        ValueError
            If the record has no ``score_se``.
        """
        if self.score_se is None:
            raise ValueError(f"{self.parameter}: no standard errors recorded, so no one-standard-error set")
        s, se = np.asarray(self.scores, dtype=np.float64), float(self.score_se[self.index])
        return s >= self.best_score - se if self.maximise else s <= self.best_score + se

    @property
    def one_se_range(self) -> tuple[float, float] | None:
        """Smallest and largest grid value within one standard error of the best (``None``
        without standard errors). The set need not be contiguous (see :meth:`within_one_se`)."""
        if self.score_se is None:
            return None
        values = np.asarray(self.grid)[self.within_one_se()]
        return float(values.min()), float(values.max())

    @property
    def one_se_edge(self) -> str | None:
        """Whether the one-standard-error set reaches a grid edge: ``"interior"``, ``"lower"``,
        ``"upper"`` or ``"both"`` (``None`` without standard errors). At an edge, values beyond
        the grid might be as good: a spread measured over the set is then a lower bound."""
        if self.score_se is None:
            return None
        mask = self.within_one_se()
        lo, hi = bool(mask[0]), bool(mask[-1])
        return "both" if lo and hi else "lower" if lo else "upper" if hi else "interior"

    def as_row(self) -> dict[str, Any]:
        """One table row: ``parameter``, ``chosen``, ``edge``, ``determined``, ``widenings``,
        ``stopped``, ``grid_low``/``grid_high``/``grid_points``, ``initial_low``/``initial_high``,
        ``best_score``, ``one_se_low``/``one_se_high``/``one_se_edge`` (``<NA>`` without standard
        errors) and ``criterion``."""
        import pandas as pd  # <NA> cells; loaded only when a table row is made

        rng = self.one_se_range
        return {"parameter": self.parameter, "chosen": float(self.chosen), "edge": self.edge,
                "determined": self.determined, "widenings": int(self.widenings), "stopped": self.stopped,
                "grid_low": float(self.grid[0]), "grid_high": float(self.grid[-1]), "grid_points": len(self.grid),
                "initial_low": float(self.initial_grid[0]), "initial_high": float(self.initial_grid[-1]),
                "best_score": self.best_score,
                "one_se_low": pd.NA if rng is None else rng[0], "one_se_high": pd.NA if rng is None else rng[1],
                "one_se_edge": pd.NA if rng is None else self.one_se_edge, "criterion": self.criterion}

    def describe(self) -> str:
        """One sentence, e.g. ``"ridge penalty 3.16e-11: interior of [1e-13, 1e+04] (widened 5 times)"``."""
        where = {"interior": "interior of", "lower": "at the lower edge of", "upper": "at the upper edge of",
                 "fixed": "the only value of"}[self.edge]
        text = f"{self.parameter} {self.chosen:.3g}: {where} [{self.grid[0]:.3g}, {self.grid[-1]:.3g}]"
        text += f" (widened {self.widenings} time{'s' if self.widenings != 1 else ''})" if self.widened else " (not widened)"
        if not self.determined:
            text += f"; not determined: a wider grid could move it (search stopped: {self.stopped})"
        return text


def grid_record(parameter: str, grid: Sequence[float], scores: Sequence[float], *, criterion: str,
                maximise: bool = True, score_se: Sequence[float] | None = None,
                initial_grid: Sequence[float] | None = None, widenings: int = 0,
                stopped: str | None = None) -> GridSearchRecord:
    """A :class:`GridSearchRecord` from a grid and its scores: the best value and its edge status.

    Parameters
    ----------
    parameter, criterion : str
    grid : sequence of float, shape (g,)
        Strictly increasing.
    scores : sequence of float, shape (g,)
        Finite.
    maximise : bool
        Higher is better (else lower is).
    score_se : sequence of float, shape (g,), optional
    initial_grid : sequence of float, optional
        The grid before widening (default: ``grid``).
    widenings : int
    stopped : str, optional
        Default: ``"fixed"`` for a one-value grid, ``"interior"`` for an interior choice, else
        ``"not widened"``.

    Returns
    -------
    GridSearchRecord
        ``chosen`` is the first best value (the smallest of equal scores, as ``GridSearchCV``).

    Raises
    ------
    ValueError
        An empty grid, lengths that differ, a grid that is not strictly increasing, or NaN/inf
        scores (named by grid value).

    Examples
    --------
    >>> rec = grid_record("bandwidth scale", [0.5, 1.0, 2.0], [0.1, 0.2, 0.3], criterion="MMD^2")
    >>> rec.chosen, rec.edge, rec.stopped
    (2.0, 'upper', 'not widened')
    """
    g = np.asarray(grid, dtype=np.float64)
    s = np.asarray(scores, dtype=np.float64)
    if g.ndim != 1 or g.size == 0 or s.shape != g.shape:
        raise ValueError(f"{parameter}: grid and scores must be non-empty 1-D of one length, got {g.shape}, {s.shape}")
    if np.any(np.diff(g) <= 0):
        raise ValueError(f"{parameter}: the grid must be strictly increasing, got {g.tolist()}")
    bad = ~np.isfinite(s)
    if bad.any():
        raise ValueError(f"{parameter}: {criterion} is NaN/inf at {g[bad].tolist()}; no choice can be recorded")
    i = int(np.argmax(s) if maximise else np.argmin(s))
    edge = "fixed" if g.size == 1 else "lower" if i == 0 else "upper" if i == g.size - 1 else "interior"
    if stopped is None:
        stopped = "fixed" if edge == "fixed" else "interior" if edge == "interior" else "not widened"
    return GridSearchRecord(parameter=parameter, criterion=criterion, grid=tuple(float(x) for x in g),
                            scores=tuple(float(x) for x in s), chosen=float(g[i]), edge=edge,
                            initial_grid=tuple(float(x) for x in (g if initial_grid is None else initial_grid)),
                            widenings=int(widenings), stopped=stopped,
                            score_se=None if score_se is None else tuple(float(x) for x in score_se),
                            maximise=maximise)


def widen_log_grid(grid: Sequence[float], side: str, decades: float) -> np.ndarray:
    """Values extending a positive, log-spaced grid by ``decades`` decades beyond one edge, at the
    grid's own spacing at that edge.

    Parameters
    ----------
    grid : sequence of float
        Positive, strictly increasing.
    side : ``"lower"`` or ``"upper"``
    decades : float > 0

    Returns
    -------
    ndarray
        The new values only, increasing (e.g. ``[1e-5, 3.16e-5, 1e-4, 3.16e-4]`` below
        ``[1e-3, 3.16e-3, ...]`` for two decades).

    Raises
    ------
    ValueError
        A non-positive grid or ``decades``, or an unknown side.

    Examples
    --------
    >>> widen_log_grid([1e-3, 1e-2, 1e-1], "lower", 2)
    array([1.e-05, 1.e-04])
    """
    g = np.asarray(grid, dtype=np.float64)
    if g.size == 0 or np.any(g <= 0) or np.any(np.diff(g) <= 0):
        raise ValueError(f"a log grid must be positive and strictly increasing, got {g.tolist()}")
    if not decades > 0:
        raise ValueError(f"decades must be positive, got {decades}")
    if side not in ("lower", "upper"):
        raise ValueError(f"side must be 'lower' or 'upper', got {side!r}")
    step = np.log10(g[1] / g[0] if side == "lower" else g[-1] / g[-2]) if g.size > 1 else 0.5
    k = np.arange(1, max(int(round(decades / step)), 1) + 1)
    return np.sort(g[0] * 10.0 ** (-step * k)) if side == "lower" else g[-1] * 10.0 ** (step * k)
