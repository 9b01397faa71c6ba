"""The audit protocol: one seed scheme, development/test splits and the identity-pair order.

*Seeds.* Every random stream of the project is ``stream(*key)``. A key is a tuple of parts such as
``("split", seed, "George_W_Bush")`` or ``("mmd-permutations", seed, "A", "B")`` -- what the stream
is for, the user's base seed, and whatever the stream belongs to (an identity, a pair, a setting, a
repetition). The key is hashed with SHA-256 to a 63-bit integer that seeds a
:class:`numpy.random.SeedSequence`, so

* different keys give independent streams: unlike ``seed + k`` (where pair ``k`` at seed 0 and
  pair ``k - 1`` at seed 1 share one stream) two keys collide only if SHA-256 does;
* a stream depends only on its key, never on how many other streams were drawn before, on the
  order of a loop, or on the number of parallel workers;
* a stream is stable across Python processes and versions (Python's ``hash`` is salted).

Parts are written with ``str`` and joined by the unit separator, so ``("a", 1)`` and ``("a", "1")``
name the same stream: use one type per part. The face-data designs (which photographs, donors and
splits; :mod:`epsaudit.build`) have always used this construction, so the committed data are
reproduced by it.

*Splits.* A reserved test is valid only if its test rows were never used to fit the classifier,
choose the threshold or choose the pair. Every certificate route therefore takes its development
and test rows from :func:`split_identities` (or from separate, freshly drawn test groups):
identity ``L``'s rows are permuted by ``stream("dev-test-split", seed, L)`` and its test part has
``round(test_size * n)`` rows, clipped so that each part keeps at least ``min_part`` rows. The split
of an identity does not depend on the other identities, on the pairs it is in, or on their order,
so every pair that contains it sees the same development and test rows.

*Pairs* (*Picture the Epsilon*, Section IV, "Pair sampling"). All unordered identity pairs are
listed and shuffled once with a fixed seed. Every method uses the first 100; GaussMech and MMD-TV
also pairs 101-500; ROC-HT also pairs 101-200. Methods are thus compared on exactly the same pairs,
and larger prefixes of one ordering serve the sensitivity analyses.
"""

from __future__ import annotations

import hashlib
import numbers
from itertools import combinations
from typing import Any, Hashable, Iterable, Mapping, Sequence

import numpy as np

from .validation import as_pair, check_probability

__all__ = ["key_int", "seed_sequence", "stream", "sklearn_seed", "check_seed", "seed_key", "generator", "generators",
           "MIN_PART", "split_rows", "split_identities", "split_dev_test",
           "PAIRS_PER_ROUTE", "identity_pairs", "route_pairs"]


def key_int(*key: Any) -> int:
    """The 63-bit integer of a stream key (SHA-256 of its parts).

    Parameters
    ----------
    *key : str, int or float
        The parts; each is written with ``str``.

    Returns
    -------
    int
        In ``[0, 2**63)``.

    See Also
    --------
    seed_sequence : the SeedSequence of the same key.
    stream : a Generator of the same key.

    Examples
    --------
    >>> key_int("split", 0, "A") == key_int("split", 0, "A")
    True
    >>> key_int("pair", 0, 1) == key_int("pair", 1, 0)
    False
    """
    if not key:
        raise ValueError("a stream key needs at least one part")
    text = "\x1f".join(str(p) for p in key)
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big") >> 1


def seed_sequence(*key: Any) -> np.random.SeedSequence:
    """The :class:`numpy.random.SeedSequence` of a stream key (entropy :func:`key_int`).

    See Also
    --------
    key_int : the entropy of the key.
    stream : a Generator of the same key.

    Examples
    --------
    >>> seed_sequence("demo", 0).entropy == key_int("demo", 0)
    True
    """
    return np.random.SeedSequence(key_int(*key))


def stream(*key: Any) -> np.random.Generator:
    """A :class:`numpy.random.Generator` for a stream key.

    Parameters
    ----------
    *key : str, int or float
        What the stream is for, the base seed, and what it belongs to.

    Returns
    -------
    numpy.random.Generator
        PCG64 seeded by :func:`seed_sequence` of the key.

    See Also
    --------
    seed_sequence : the SeedSequence behind it.
    generator, generators : streams derived from a base seed and a purpose.
    sklearn_seed : a ``random_state`` of the same key for scikit-learn.

    Examples
    --------
    >>> a = stream("demo", 0).random(3)
    >>> b = stream("demo", 0).random(3)
    >>> bool((a == b).all()), bool((a == stream("demo", 1).random(3)).any())
    (True, False)
    """
    return np.random.default_rng(seed_sequence(*key))


def sklearn_seed(*key: Any) -> int:
    """A 32-bit ``random_state`` for scikit-learn, derived from a stream key.

    See Also
    --------
    stream : a Generator of the same key.
    key_int : the key's 63-bit integer.

    Examples
    --------
    >>> 0 <= sklearn_seed("folds", 0) < 2**32
    True
    """
    return int(seed_sequence(*key).generate_state(1, np.uint32)[0])


def check_seed(seed: Any, name: str = "seed") -> int:
    """Check that a base seed is a non-negative integer; return it as ``int``.

    Raises
    ------
    ValueError
        If ``seed`` is not a non-negative integer (``bool`` is refused).

    See Also
    --------
    seed_key : the stream key of a checked seed.
    epsaudit.validation.check_probability : the check of a probability.

    Examples
    --------
    >>> check_seed(3)
    3
    """
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {seed!r}")
    return int(seed)


def seed_key(seed: Any, purpose: str) -> tuple:
    """The stream key a function derives its streams from: ``(purpose, seed)`` for an int seed, the
    tuple itself for a key.

    Functions that draw take ``seed`` as an int (the user's base seed) or a full stream key (a
    tuple, when a caller derives the function's streams from its own key, e.g. one benchmark
    cell's development draws).

    Raises
    ------
    ValueError
        If ``seed`` is neither a non-negative int nor a non-empty tuple.

    See Also
    --------
    check_seed : the check of an int seed.
    generator, generators : the streams of the key.

    Examples
    --------
    >>> seed_key(3, "prototypes"), seed_key(("cell", 0, "dev"), "prototypes")
    (('prototypes', 3), ('cell', 0, 'dev'))
    """
    if isinstance(seed, tuple) and seed:
        return seed
    if isinstance(seed, numbers.Integral) and not isinstance(seed, bool) and seed >= 0:
        return (purpose, int(seed))
    raise ValueError(f"seed must be a non-negative integer or a stream key (a tuple), got {seed!r}")


def generator(seed: Any, purpose: str, *parts: Any) -> np.random.Generator:
    """The Generator of ``seed`` for one purpose: ``stream(*seed_key(seed, purpose), *parts)``.

    A :class:`numpy.random.Generator` passed as ``seed`` is used as it is (``parts`` ignored): the
    caller then owns the stream.

    See Also
    --------
    generators : one Generator per label.
    seed_key : the key it derives from.
    stream : a Generator of any key.

    Examples
    --------
    >>> generator(0, "demo").random() == stream("demo", 0).random()
    True
    """
    if isinstance(seed, np.random.Generator):
        return seed
    return stream(*seed_key(seed, purpose), *parts)


def generators(seed: Any, purpose: str, labels: Any) -> list[np.random.Generator]:
    """One Generator per label: ``stream(*seed_key(seed, purpose), label)``.

    For a :class:`numpy.random.Generator` seed, its ``spawn`` children (fresh on every call).

    See Also
    --------
    generator : one Generator for one purpose.
    seed_key : the key they derive from.

    Examples
    --------
    >>> a, b = generators(0, "demo", ["A", "B"])
    >>> bool(a.random() == stream("demo", 0, "A").random())
    True
    """
    labels = list(labels)
    if isinstance(seed, np.random.Generator):
        return seed.spawn(len(labels))
    key = seed_key(seed, purpose)
    return [stream(*key, label) for label in labels]


#: Rows each part of a split keeps at least (a class with one row has no spread).
MIN_PART = 2


def split_rows(x: Any, *, test_size: float, key: tuple, min_part: int = MIN_PART) -> tuple[np.ndarray, np.ndarray]:
    """Split one identity's rows into development and test parts.

    Parameters
    ----------
    x : array_like, shape (n, d)
    test_size : float in (0, 1)
        Fraction of rows in the test part (rounded; at least ``min_part`` in each part).
    key : tuple
        Stream key of the permutation (:func:`stream`).
    min_part : int, default=2

    Returns
    -------
    dev, test : numpy.ndarray, shapes (n - t, d), (t, d)
        Rows in their original order within each part.

    Raises
    ------
    ValueError
        If ``test_size`` is outside (0, 1) or ``x`` has fewer than ``2 * min_part`` rows.

    See Also
    --------
    split_identities : the split of every identity.
    split_dev_test : the split of one pair's two samples.

    Examples
    --------
    >>> dev, test = split_rows(np.arange(20.0).reshape(10, 2), test_size=0.3, key=("demo", 0))
    >>> dev.shape, test.shape
    ((7, 2), (3, 2))
    """
    check_probability(test_size, "test_size")
    x = np.asarray(x)
    n = len(x)
    if n < 2 * min_part:
        raise ValueError(f"{n} row(s) cannot be split into development and test parts of >= {min_part} rows each")
    t = int(min(max(round(test_size * n), min_part), n - min_part))
    order = stream(*key).permutation(n)
    return x[np.sort(order[t:])], x[np.sort(order[:t])]


def split_identities(
    groups: Mapping[Hashable, Any], *, test_size: float = 0.3, seed: int = 0, min_part: int = MIN_PART,
) -> tuple[dict[Hashable, np.ndarray], dict[Hashable, np.ndarray], list[Hashable]]:
    """Split each identity's rows once into development and test parts.

    Identity ``L`` is permuted by ``stream("dev-test-split", seed, L)``; its test part has
    ``round(test_size * n_L)`` rows, clipped to ``[min_part, n_L - min_part]``.

    Parameters
    ----------
    groups : mapping identity -> array_like, shape (n_L, d)
    test_size : float in (0, 1), default=0.3
    seed : int, default=0
    min_part : int, default=2
        Fewest rows in each part; identities with fewer than ``2 * min_part`` rows are not split.

    Returns
    -------
    dev, test : dict identity -> numpy.ndarray
        Development rows ``(n_L - t_L, d)`` and test rows ``(t_L, d)``.
    too_small : list
        Identities left out because they have fewer than ``2 * min_part`` rows.

    Raises
    ------
    ValueError
        If ``test_size`` is outside (0, 1) or ``seed`` is not a non-negative integer.

    See Also
    --------
    split_rows : the split of one identity's rows.
    split_dev_test : the split of one pair's two samples.
    epsaudit.audits.runner.pair_parts : each pair's parts from this split.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> dev, test, small = split_identities({"A": rng.normal(size=(10, 3)), "B": rng.normal(size=(3, 3))})
    >>> len(dev["A"]), len(test["A"]), small
    (7, 3, ['B'])
    """
    check_probability(test_size, "test_size")
    seed = check_seed(seed)
    dev, test, too_small = {}, {}, []
    for label in sorted(groups, key=str):
        x = np.asarray(groups[label])
        if len(x) < 2 * min_part:
            too_small.append(label)
            continue
        dev[label], test[label] = split_rows(x, test_size=test_size, key=("dev-test-split", seed, label),
                                             min_part=min_part)
    return dev, test, too_small


def split_dev_test(x_a: Any, x_b: Any, *, test_size: float = 0.3, seed: int = 0):
    """Split the two samples of one pair into development and test parts (as :func:`split_identities`).

    The two samples are split as identities ``"A"`` and ``"B"``.

    Parameters
    ----------
    x_a, x_b : array_like, shapes (n_A, d), (n_B, d), n >= 4
    test_size : float in (0, 1), default=0.3
    seed : int, default=0

    Returns
    -------
    tuple
        ``(dev_a, test_a, dev_b, test_b)``.

    Raises
    ------
    ValueError
        If ``test_size`` is outside (0, 1) or a sample has fewer than 4 rows.

    See Also
    --------
    split_identities : the split of every identity.
    split_rows : the split of one identity's rows.
    epsaudit.audits.reserved_test_certificate : a certificate from the two parts.

    Examples
    --------
    >>> parts = split_dev_test(np.zeros((10, 2)), np.ones((20, 2)), test_size=0.3)
    >>> [len(p) for p in parts]
    [7, 3, 14, 6]
    """
    a, b = as_pair(x_a, x_b, min_rows=2 * MIN_PART)
    seed = check_seed(seed)
    dev_a, test_a = split_rows(a, test_size=test_size, key=("dev-test-split", seed, "A"))
    dev_b, test_b = split_rows(b, test_size=test_size, key=("dev-test-split", seed, "B"))
    return dev_a, test_a, dev_b, test_b


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
    seed : int, default=0
        Seed of the one shuffle, a permutation by ``stream("pair-order", seed)`` (:func:`stream`).

    Returns
    -------
    list of tuple
        ``k (k - 1) / 2`` pairs ``(A, B)`` with ``A`` before ``B`` in sorted order.

    Raises
    ------
    ValueError
        If fewer than two distinct identities are given, or ``seed`` is not a non-negative integer.

    See Also
    --------
    route_pairs : the prefix each route audits.
    epsaudit.validation.as_pairs : the check of a given pair list.

    Examples
    --------
    >>> identity_pairs(["C", "A", "B"], seed=0)
    [('B', 'C'), ('A', 'B'), ('A', 'C')]
    """

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

    See Also
    --------
    identity_pairs : the shuffled list it cuts.
    epsaudit.audits.audit_pairs : the routes on their prefixes.

    Examples
    --------
    >>> len(route_pairs(identity_pairs(range(40)), "kde_lr")), len(route_pairs([(0, 1)], "roc_oof"))
    (100, 1)
    """
    if route not in PAIRS_PER_ROUTE:
        raise ValueError(f"unknown route {route!r}; expected one of {sorted(PAIRS_PER_ROUTE)}")
    return list(pairs[: PAIRS_PER_ROUTE[route]])
