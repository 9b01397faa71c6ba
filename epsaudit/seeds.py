"""One seed scheme: every random stream of the project is ``stream(*key)``.

A stream is named by a *key*: a tuple of parts such as ``("split", seed, "George_W_Bush")`` or
``("mmd-permutations", seed, "A", "B")`` -- what the stream is for, the user's base seed, and
whatever the stream belongs to (an identity, a pair, a setting, a repetition). The key is
hashed with SHA-256 to a 63-bit integer that seeds a :class:`numpy.random.SeedSequence`, so

* different keys give independent streams: unlike ``seed + k`` (where pair ``k`` at seed 0 and
  pair ``k - 1`` at seed 1 share one stream) two keys collide only if SHA-256 does;
* a stream depends only on its key, never on how many other streams were drawn before, on the
  order of a loop, or on the number of parallel workers;
* a stream is stable across Python processes and versions (Python's ``hash`` is salted).

Parts are written with ``str`` and joined by the unit separator, so ``("a", 1)`` and
``("a", "1")`` name the same stream: use one type per part.

The face-data designs (which photographs, donors and splits; :mod:`epsaudit.build`) have always
used this construction, so the committed data are reproduced by it.
"""

from __future__ import annotations

import hashlib
import numbers
from typing import Any

import numpy as np

__all__ = ["key_int", "seed_sequence", "stream", "sklearn_seed", "check_seed", "seed_key", "generator", "generators"]


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
