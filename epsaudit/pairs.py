"""The identity-pair protocol (*Picture the Epsilon*, Section IV, "Pair sampling").

All unordered identity pairs are listed and shuffled once with a fixed seed. Every method uses the
first 100; GaussMech and MMD-TV also pairs 101-500; ROC-HT also pairs 101-200. Methods are thus
compared on exactly the same pairs, and larger prefixes of one ordering serve the sensitivity
analyses.

Importing this module imports nothing but the standard library (the command line's parser reads
:data:`PAIRS_PER_ROUTE`); the shuffle loads :mod:`epsaudit.seeds` (numpy) when it runs.
"""

from __future__ import annotations

from itertools import combinations
from typing import Hashable, Iterable, Sequence

#: Prefix of the shuffled pair list each route audits (*Picture the Epsilon*, Section IV).
PAIRS_PER_ROUTE: dict[str, int] = {
    "gaussmech": 500,
    "mmd_tv": 500,
    "roc_oof": 200,
    "kde_lr": 100,
    "common": 100,
}


def identity_pairs(identities: Iterable[Hashable], seed: int = 0) -> list[tuple[Hashable, Hashable]]:
    """All unordered pairs of distinct identities, shuffled once with ``seed``.

    Identities are sorted first (as strings when they are not mutually comparable), so the order
    does not depend on how the caller listed them.

    Parameters
    ----------
    identities : iterable of hashable
        Identity labels; duplicates are ignored.
    seed : int
        Seed of the one shuffle, a permutation by ``stream("pair-order", seed)``
        (:mod:`epsaudit.seeds`).

    Returns
    -------
    list of tuple
        ``k (k - 1) / 2`` pairs ``(A, B)`` with ``A`` before ``B`` in sorted order.

    Raises
    ------
    ValueError
        If fewer than two distinct identities are given, or ``seed`` is not a non-negative integer.

    Examples
    --------
    >>> identity_pairs(["C", "A", "B"], seed=0)
    [('B', 'C'), ('A', 'B'), ('A', 'C')]
    """
    from .seeds import check_seed, stream  # numpy: loaded when pairs are drawn, not when settings are read

    unique = set(identities)
    try:
        labels = sorted(unique)
    except TypeError:
        labels = sorted(unique, key=str)
    if len(labels) < 2:
        raise ValueError(f"need at least two distinct identities to form a pair, got {len(labels)}")
    pairs = list(combinations(labels, 2))
    order = stream("pair-order", check_seed(seed)).permutation(len(pairs))
    return [pairs[i] for i in order]


def route_pairs(pairs: Sequence[tuple[Hashable, Hashable]], route: str) -> list[tuple[Hashable, Hashable]]:
    """The prefix of the shuffled pair list that ``route`` audits (see :data:`PAIRS_PER_ROUTE`).

    Parameters
    ----------
    pairs : sequence of (identity, identity)
        The shuffled list (:func:`identity_pairs`).
    route : str
        A key of :data:`PAIRS_PER_ROUTE`.

    Returns
    -------
    list of tuple
        The first ``PAIRS_PER_ROUTE[route]`` pairs (all of them for a shorter list).

    Raises
    ------
    ValueError
        If ``route`` is unknown.

    Examples
    --------
    >>> len(route_pairs(identity_pairs(range(40)), "kde_lr")), len(route_pairs([(0, 1)], "roc_oof"))
    (100, 1)
    """
    if route not in PAIRS_PER_ROUTE:
        raise ValueError(f"unknown route {route!r}; expected one of {sorted(PAIRS_PER_ROUTE)}")
    return list(pairs[: PAIRS_PER_ROUTE[route]])
