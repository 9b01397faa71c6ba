"""Run the four routes over one shuffled pair list with the per-route prefixes of *Picture the Epsilon*, Section IV."""

from __future__ import annotations

from typing import Any, Hashable, Mapping, Sequence

import numpy as np

from ..protocol import PAIRS_PER_ROUTE
from ..results import EpsilonResult
from .gaussmech import gaussmech_pairs
from .kde_lr import DEFAULT_ALPHAS, kde_lr_pairs
from .mmd import mmd_tv_pairs
from .roc_oof import roc_oof_pairs

ROUTES = ("gaussmech", "kde_lr", "mmd_tv", "roc_oof")


def audit_pairs(groups: Mapping[Hashable, np.ndarray], pairs: Sequence[tuple[Hashable, Hashable]], *,
                routes: Sequence[str] = ROUTES, pair_counts: Mapping[str, int] | None = None, delta: float = 1e-5,
                kde_alphas: Sequence[float] = DEFAULT_ALPHAS, permutations: int = 0, classifier: Any = None,
                coordinate_names: Sequence[str] | None = None, seed: int = 0, n_jobs: int | None = None,
                progress: bool = False) -> list[EpsilonResult]:
    """Audit the prefixes of one shuffled pair list with each route (*Picture the Epsilon*, Section IV).

    Parameters
    ----------
    groups : mapping identity -> array_like, shape (n_i, d)
    pairs : sequence of (identity, identity)
        The shuffled list (see :func:`epsaudit.protocol.identity_pairs`).
    routes : sequence of str, default=ROUTES
        Subset of ``("gaussmech", "kde_lr", "mmd_tv", "roc_oof")``.
    pair_counts : mapping route -> int, default=None
        Prefix length per route; default :data:`epsaudit.protocol.PAIRS_PER_ROUTE` (500 / 100 / 500 / 200).
    delta : float, default=1e-5
        GaussMech's delta (the ROC-HT and MMD-TV conversions are pure DP, delta = 0).
    kde_alphas : sequence of float, default=DEFAULT_ALPHAS
    permutations : int, default=0
        MMD permutation count (0 = none).
    classifier : estimator, default=None
        ROC-HT scorer (default: :func:`epsaudit.audits.scorers.logistic_regression`).
    coordinate_names : sequence of str, default=None
        Names of the embedding coordinates, for messages about a pair that cannot be computed.
    seed : int, default=0
        Fold and permutation seed.
    n_jobs : int, default=None
    progress : bool, default=False

    Returns
    -------
    list of EpsilonResult
        Route by route (:func:`epsaudit.results.results_frame` makes a table); failed pairs are *not computed*.

    Raises
    ------
    ValueError
        An unknown route, or the routes' own input errors.

    See Also
    --------
    epsaudit.audits.gaussmech_pairs, epsaudit.audits.kde_lr_pairs, epsaudit.audits.mmd_tv_pairs : routes it runs.
    epsaudit.condition.audit_condition : the audit of one table, with the reserved-test certificates.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> groups = {k: rng.normal(c, 1.0, size=(12, 3)) for k, c in (("A", 0.0), ("B", 1.0), ("C", 2.0))}
    >>> res = audit_pairs(groups, [("A", "B"), ("B", "C")], routes=("gaussmech", "mmd_tv"))
    >>> [(r.route, r.pair) for r in res]
    [('gaussmech', ('A', 'B')), ('gaussmech', ('B', 'C')), ('mmd_tv', ('A', 'B')), ('mmd_tv', ('B', 'C'))]
    """
    unknown = set(routes) - set(ROUTES)
    if unknown:
        raise ValueError(f"unknown route(s) {sorted(unknown)}; expected a subset of {ROUTES}")
    counts = {**PAIRS_PER_ROUTE, **(pair_counts or {})}
    out: list[EpsilonResult] = []
    for route in routes:
        chosen = list(pairs[: counts[route]])
        if route == "gaussmech":
            out += gaussmech_pairs(groups, chosen, delta=delta)
        elif route == "kde_lr":
            out += kde_lr_pairs(groups, chosen, alphas=kde_alphas, coordinate_names=coordinate_names,
                                n_jobs=n_jobs, progress=progress)
        elif route == "mmd_tv":
            out += mmd_tv_pairs(groups, chosen, permutations=permutations, seed=seed, n_jobs=n_jobs, progress=progress)
        else:
            out += roc_oof_pairs(groups, chosen, classifier=classifier, seed=seed, n_jobs=n_jobs, progress=progress)
    return out
