"""The audit protocol: one seed scheme, development/test splits and the identity-pair order.

*Seeds.* Every random stream is ``stream(*key)``, a key such as ``("split", seed, "George_W_Bush")`` (purpose, base
seed, owner). Its SHA-256 seeds a :class:`numpy.random.SeedSequence`: different keys give independent streams
(unlike ``seed + k``), a stream depends only on its key (not on draw order, loops or workers) and is stable across
processes. Parts are joined as ``str`` (``("a", 1)`` and ``("a", "1")`` are one stream). The committed face-data
designs (:mod:`epsaudit.build`) are reproduced by it.

*Splits.* Certificate routes take test rows never used to fit, threshold or choose the pair from
:func:`split_identities`; an identity's split depends only on its rows, the seed and its label.

*Pairs*: one shuffled list whose prefixes the routes share (*Picture the Epsilon*, Section IV, "Pair sampling"; the
book's methods chapter, section 'Setting and notation').
"""

from __future__ import annotations

import hashlib
import numbers
from itertools import combinations
from typing import Any, Hashable, Iterable, Mapping, Sequence

import numpy as np

from .validation import as_pair, check_probability

__all__ = ["key_int", "stream", "sklearn_seed", "check_seed", "seed_key", "generator", "generators", "MIN_PART",
           "split_identities", "split_dev_test", "PAIRS_PER_ROUTE", "identity_pairs"]


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
    stream : a Generator of the same key.

    Examples
    --------
    >>> key_int("pair", 0, 1) == key_int("pair", 1, 0)
    False
    """
    if not key:
        raise ValueError("a stream key needs at least one part")
    text = "\x1f".join(str(p) for p in key)
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big") >> 1


def _seed_sequence(*key: Any) -> np.random.SeedSequence:
    """The :class:`numpy.random.SeedSequence` of a stream key (entropy :func:`key_int`)."""
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

    See Also
    --------
    generator, generators : streams derived from a base seed and a purpose.

    Examples
    --------
    >>> bool((stream("demo", 0).random(3) == stream("demo", 0).random(3)).all())
    True
    """
    return np.random.default_rng(_seed_sequence(*key))


def sklearn_seed(*key: Any) -> int:
    """A 32-bit ``random_state`` for scikit-learn, derived from a stream key.

    See Also
    --------
    stream : a Generator of the same key.

    Examples
    --------
    >>> 0 <= sklearn_seed("folds", 0) < 2**32
    True
    """
    return int(_seed_sequence(*key).generate_state(1, np.uint32)[0])


def check_seed(seed: Any, name: str = "seed") -> int:
    """Check that a base seed is a non-negative integer; return it as ``int``.

    Raises
    ------
    ValueError
        If ``seed`` is not a non-negative integer (``bool`` is refused).

    See Also
    --------
    seed_key : the stream key of a checked seed.

    Examples
    --------
    >>> check_seed(3)
    3
    """
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {seed!r}")
    return int(seed)


def seed_key(seed: Any, purpose: str) -> tuple:
    """The stream key a function derives its streams from: ``(purpose, seed)`` for an int seed, a tuple as it is.

    Raises
    ------
    ValueError
        If ``seed`` is neither a non-negative int nor a non-empty tuple.

    See Also
    --------
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
    """The Generator ``stream(*seed_key(seed, purpose), *parts)``; a Generator ``seed`` is returned as it is.

    See Also
    --------
    generators : one Generator per label.

    Examples
    --------
    >>> generator(0, "demo").random() == stream("demo", 0).random()
    True
    """
    if isinstance(seed, np.random.Generator):
        return seed
    return stream(*seed_key(seed, purpose), *parts)


def generators(seed: Any, purpose: str, labels: Any) -> list[np.random.Generator]:
    """One Generator per label, ``stream(*seed_key(seed, purpose), label)``; a Generator seed's ``spawn`` children.

    See Also
    --------
    generator : one Generator for one purpose.

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


def _split_rows(x: Any, *, test_size: float, key: tuple, min_part: int = MIN_PART) -> tuple[np.ndarray, np.ndarray]:
    """``(dev, test)``: one identity's rows split by the permutation ``stream(*key)``, ``round(test_size * n)`` test
    rows clipped to ``[min_part, n - min_part]``, each part in the original order."""
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

    Identity ``L`` is permuted by ``stream("dev-test-split", seed, L)``; ``round(test_size * n_L)`` test rows,
    clipped to ``[min_part, n_L - min_part]``.

    Parameters
    ----------
    groups : mapping identity -> array_like, shape (n_L, d)
    test_size : float in (0, 1), default=0.3
    seed : int, default=0
    min_part : int, default=2

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
        dev[label], test[label] = _split_rows(x, test_size=test_size, key=("dev-test-split", seed, label),
                                             min_part=min_part)
    return dev, test, too_small


def split_dev_test(x_a: Any, x_b: Any, *, test_size: float = 0.3, seed: int = 0):
    """Split the two samples of one pair into development and test parts, as identities ``"A"`` and ``"B"``.

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

    Examples
    --------
    >>> [len(p) for p in split_dev_test(np.zeros((10, 2)), np.ones((20, 2)), test_size=0.3)]
    [7, 3, 14, 6]
    """
    a, b = as_pair(x_a, x_b, min_rows=2 * MIN_PART)
    seed = check_seed(seed)
    dev_a, test_a = _split_rows(a, test_size=test_size, key=("dev-test-split", seed, "A"))
    dev_b, test_b = _split_rows(b, test_size=test_size, key=("dev-test-split", seed, "B"))
    return dev_a, test_a, dev_b, test_b


#: Prefix of the shuffled pair list each route audits (*Picture the Epsilon*, Section IV).
PAIRS_PER_ROUTE: dict[str, int] = {"gaussmech": 500, "mmd_tv": 500, "roc_oof": 200, "kde_lr": 100, "common": 100}


def identity_pairs(identities: Iterable[Hashable], seed: int = 0) -> list[tuple[Hashable, Hashable]]:
    """All unordered pairs of distinct identities, sorted, then shuffled once by ``stream("pair-order", seed)``.

    Parameters
    ----------
    identities : iterable of hashable
        Identity labels (duplicates ignored; sorted as strings when not mutually comparable).
    seed : int, default=0

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
    epsaudit.audits.audit_pairs : the routes on their prefixes (:data:`PAIRS_PER_ROUTE`).

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

