"""Input checks shared by every public audit function.

Every audit takes two samples of embeddings, one per identity (class). Bad input raises
``ValueError`` naming the argument and what was expected; nothing is dropped silently.
"""

from __future__ import annotations

from typing import Any, Hashable, Mapping

import numpy as np


def as_sample(x: Any, name: str, *, min_rows: int = 2) -> np.ndarray:
    """Return ``x`` as a finite float64 array of shape ``(n, d)``.

    Parameters
    ----------
    x : array_like, shape (n, d)
        Embeddings of one identity, one row per generated output.
    name : str
        Argument name used in error messages.
    min_rows : int
        Fewest rows accepted (default 2: a class with one row has no spread).

    Returns
    -------
    numpy.ndarray, shape (n, d), float64

    Raises
    ------
    ValueError
        If ``x`` is empty, not two-dimensional, has fewer than ``min_rows`` rows or zero
        columns, or holds NaN or infinite values (the first offending row and column are named).
    """
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a numeric array of shape (n, d): {exc}") from None
    if arr.size == 0:
        raise ValueError(f"{name} is empty; expected an (n, d) array with n >= {min_rows}")
    if arr.ndim != 2:
        raise ValueError(f"{name} must be two-dimensional (n, d); got shape {arr.shape}")
    if arr.shape[0] < min_rows:
        raise ValueError(
            f"{name} has {arr.shape[0]} row(s); at least {min_rows} rows per class are needed"
        )
    bad = ~np.isfinite(arr)
    if bad.any():
        row, col = np.argwhere(bad)[0]
        raise ValueError(
            f"{name} holds {int(bad.sum())} NaN/inf value(s); first at row {row}, column {col}"
        )
    return arr


def as_pair(x_a: Any, x_b: Any, *, min_rows: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Validate the two samples of one identity pair (same embedding dimension).

    Parameters
    ----------
    x_a, x_b : array_like, shapes (n_A, d) and (n_B, d)
    min_rows : int
        Fewest rows accepted per class.

    Returns
    -------
    tuple of numpy.ndarray

    Raises
    ------
    ValueError
        From :func:`as_sample`, or if the two samples have different dimensions ``d``.
    """
    a = as_sample(x_a, "x_a", min_rows=min_rows)
    b = as_sample(x_b, "x_b", min_rows=min_rows)
    if a.shape[1] != b.shape[1]:
        raise ValueError(
            f"x_a and x_b have different embedding dimensions: {a.shape[1]} vs {b.shape[1]}"
        )
    return a, b


def as_groups(groups: Mapping[Hashable, Any], *, min_rows: int = 2) -> dict[Hashable, np.ndarray]:
    """Validate a mapping ``identity -> (n_i, d)`` array; all identities share ``d``.

    Raises
    ------
    ValueError
        If the mapping is empty, an identity's sample is invalid (named), or dimensions differ.
    """
    if not isinstance(groups, Mapping) or len(groups) == 0:
        raise ValueError("groups must be a non-empty mapping identity -> (n, d) array")
    out: dict[Hashable, np.ndarray] = {}
    dim = None
    for label, x in groups.items():
        arr = as_sample(x, f"groups[{label!r}]", min_rows=min_rows)
        if dim is None:
            dim = arr.shape[1]
        elif arr.shape[1] != dim:
            raise ValueError(
                f"groups[{label!r}] has dimension {arr.shape[1]}; other identities have {dim}"
            )
        out[label] = arr
    return out


def as_pairs(pairs: Any, groups: Mapping[Hashable, Any]) -> list[tuple[Hashable, Hashable]]:
    """Validate a list of identity pairs against the identities present in ``groups``.

    Raises
    ------
    ValueError
        If ``pairs`` is empty, an element is not a pair of two distinct identities, or an
        identity is missing from ``groups``.
    """
    out = []
    for i, pair in enumerate(pairs):
        if len(pair) != 2:
            raise ValueError(f"pairs[{i}] = {pair!r} is not a pair of two identities")
        a, b = pair
        if a == b:
            raise ValueError(f"pairs[{i}] names identity {a!r} twice; a pair needs two identities")
        for label in (a, b):
            if label not in groups:
                raise ValueError(f"pairs[{i}] names identity {label!r}, which is not in groups")
        out.append((a, b))
    if not out:
        raise ValueError("pairs is empty; give at least one identity pair")
    return out


def check_probability(value: float, name: str, *, open_interval: bool = True) -> float:
    """Check that ``value`` lies in (0, 1) (or [0, 1) when ``open_interval`` is False).

    Raises
    ------
    ValueError
        If it does not.
    """
    value = float(value)
    low_ok = value > 0.0 if open_interval else value >= 0.0
    if not (low_ok and value < 1.0):
        interval = "(0, 1)" if open_interval else "[0, 1)"
        raise ValueError(f"{name} must be in {interval}, got {value}")
    return value
