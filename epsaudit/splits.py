"""Development and test rows: each identity's rows split once, by its own seeded stream.

A reserved test is valid only if its test rows were never used to fit the classifier, choose the
threshold or choose the pair. Every certificate route therefore takes its development and test
rows from :func:`split_identities` (or from separate, freshly drawn test groups): identity ``L``'s
rows are permuted by ``stream("dev-test-split", seed, L)`` (:mod:`epsaudit.seeds`) and its test
part has ``round(test_size * n)`` rows, clipped so that each part keeps at least ``min_part`` rows.
The split of an identity does not depend on the other identities, on the pairs it is in, or on
their order, so every pair that contains it sees the same development and test rows.
"""

from __future__ import annotations

from typing import Any, Hashable, Mapping

import numpy as np

from .seeds import check_seed, stream
from .validation import as_pair, check_probability

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
        Stream key of the permutation (:func:`epsaudit.seeds.stream`).
    min_part : int

    Returns
    -------
    dev, test : numpy.ndarray, shapes (n - t, d), (t, d)
        Rows in their original order within each part.

    Raises
    ------
    ValueError
        If ``test_size`` is outside (0, 1) or ``x`` has fewer than ``2 * min_part`` rows.

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
    test_size : float in (0, 1)
    seed : int
    min_part : int
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
    test_size : float in (0, 1)
    seed : int

    Returns
    -------
    tuple
        ``(dev_a, test_a, dev_b, test_b)``.

    Raises
    ------
    ValueError
        If ``test_size`` is outside (0, 1) or a sample has fewer than 4 rows.

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

