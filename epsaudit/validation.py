"""Input checks shared by every public audit function.

Every audit takes two samples of embeddings, one per identity (class); bad input raises ``ValueError`` naming the
argument, and nothing is dropped silently. Reserved test rows must be fresh: checked on values (:func:`check_fresh`:
no test row repeats a development row, bit for bit or after L2-normalisation) or, where values repeat by design, on
draw ids (:func:`check_fresh_ids`).
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
    min_rows : int, default=2

    Returns
    -------
    numpy.ndarray, shape (n, d), float64

    Raises
    ------
    ValueError
        If ``x`` is empty, not two-dimensional, has fewer than ``min_rows`` rows or zero columns, or holds NaN or
        infinite values (the first offending row and column are named).

    See Also
    --------
    as_pair : the two samples of one pair.

    Examples
    --------
    >>> as_sample([[1.0, float("nan")], [3.0, 4.0]], "x_a")
    Traceback (most recent call last):
    ...
    ValueError: x_a holds 1 NaN/inf value(s); first at row 0, column 1
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
        raise ValueError(f"{name} has {arr.shape[0]} row(s); at least {min_rows} rows per class are needed")
    bad = ~np.isfinite(arr)
    if bad.any():
        row, col = np.argwhere(bad)[0]
        raise ValueError(f"{name} holds {int(bad.sum())} NaN/inf value(s); first at row {row}, column {col}")
    return arr


def as_pair(x_a: Any, x_b: Any, *, min_rows: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Validate the two samples of one identity pair (same embedding dimension).

    Parameters
    ----------
    x_a, x_b : array_like, shapes (n_A, d) and (n_B, d)
    min_rows : int, default=2

    Returns
    -------
    tuple of numpy.ndarray

    Raises
    ------
    ValueError
        From :func:`as_sample`, or if the two samples have different dimensions ``d``.

    See Also
    --------
    as_dev_test : the four parts of a reserved test.

    Examples
    --------
    >>> as_pair(np.zeros((3, 2)), np.zeros((3, 4)))
    Traceback (most recent call last):
    ...
    ValueError: x_a and x_b have different embedding dimensions: 2 vs 4
    """
    a = as_sample(x_a, "x_a", min_rows=min_rows)
    b = as_sample(x_b, "x_b", min_rows=min_rows)
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"x_a and x_b have different embedding dimensions: {a.shape[1]} vs {b.shape[1]}")
    return a, b


def as_groups(groups: Mapping[Hashable, Any], *, min_rows: int = 2) -> dict[Hashable, np.ndarray]:
    """Validate a mapping ``identity -> (n_i, d)`` array; all identities share ``d``.

    Parameters
    ----------
    groups : mapping identity -> array_like, shape (n_i, d)
    min_rows : int, default=2

    Returns
    -------
    dict identity -> numpy.ndarray (float64)

    Raises
    ------
    ValueError
        If the mapping is empty, an identity's sample is invalid (named), or dimensions differ.

    See Also
    --------
    as_pairs : the pairs of these identities.

    Examples
    --------
    >>> {k: v.shape for k, v in as_groups({"A": [[0, 1], [1, 0]], "B": [[1, 1], [2, 2], [3, 3]]}).items()}
    {'A': (2, 2), 'B': (3, 2)}
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
            raise ValueError(f"groups[{label!r}] has dimension {arr.shape[1]}; other identities have {dim}")
        out[label] = arr
    return out


def as_dev_test(dev_a: Any, dev_b: Any, test_a: Any, test_b: Any) -> tuple[np.ndarray, ...]:
    """Validate the development and test samples of one pair for a reserved test.

    Parameters
    ----------
    dev_a, dev_b, test_a, test_b : array_like, shapes (n, d)
        Development and test rows of identities A and B; all four share ``d``.

    Returns
    -------
    tuple of numpy.ndarray
        ``(dev_a, dev_b, test_a, test_b)`` as float64 arrays.

    Raises
    ------
    ValueError
        From :func:`as_pair`, or if development and test rows have different dimensions.

    See Also
    --------
    check_fresh : the freshness of the test parts.

    Examples
    --------
    >>> rows = as_dev_test([[0.0, 1.0], [1.0, 0.0]], [[1.0, 1.0], [2.0, 0.0]], [[0.5, 0.5], [1.0, 2.0]], [[3.0, 1.0], [0.0, 0.0]])
    >>> [r.shape for r in rows]
    [(2, 2), (2, 2), (2, 2), (2, 2)]
    """
    da, db = as_pair(dev_a, dev_b)
    ta, tb = as_pair(test_a, test_b)
    if da.shape[1] != ta.shape[1]:
        raise ValueError(f"development and test rows have different dimensions: {da.shape[1]} vs {ta.shape[1]}")
    return da, db, ta, tb


def as_pairs(pairs: Any, groups: Mapping[Hashable, Any]) -> list[tuple[Hashable, Hashable]]:
    """Validate a list of identity pairs against the identities present in ``groups``.

    Parameters
    ----------
    pairs : iterable of (identity, identity)
    groups : mapping identity -> array_like

    Returns
    -------
    list of tuple

    Raises
    ------
    ValueError
        If ``pairs`` is empty, an element is not a pair of two distinct identities, or an identity is missing
        from ``groups``.

    See Also
    --------
    epsaudit.protocol.identity_pairs : the shuffled pair list.

    Examples
    --------
    >>> as_pairs([("A", "A")], {"A": None})
    Traceback (most recent call last):
    ...
    ValueError: pairs[0] names identity 'A' twice; a pair needs two identities
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
    """Check that ``value`` lies in (0, 1) (or [0, 1) when ``open_interval`` is False); return it as a float.

    Parameters
    ----------
    value : float
    name : str
    open_interval : bool, default=True

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If it does not.

    See Also
    --------
    epsaudit.protocol.check_seed : the check of a seed.

    Examples
    --------
    >>> check_probability(1.0, "confidence")
    Traceback (most recent call last):
    ...
    ValueError: confidence must be in (0, 1), got 1.0
    """
    value = float(value)
    low_ok = value > 0.0 if open_interval else value >= 0.0
    if not (low_ok and value < 1.0):
        interval = "(0, 1)" if open_interval else "[0, 1)"
        raise ValueError(f"{name} must be in {interval}, got {value}")
    return value

#: Resolution of the duplicate key of a unit-norm row (2**-24): rows that differ only in scale share a key.
#: Rounded copies (float32, 7 digits) can cross a step, so they are found by distance (:data:`ROW_TOLERANCE`).
ROW_KEY_RESOLUTION = 2.0 ** -24
#: Two L2-normalised rows within this Euclidean distance (2**-19, about 1.9e-6) are copies of one embedding:
#: float32 or 7-digit rounding moves a unit row by at most about 1e-6, while distinct face embeddings in the
#: committed tables are at least 0.06 apart.
ROW_TOLERANCE = 2.0 ** -19


def unit_rows(x: Any) -> np.ndarray:
    """Rows of ``x`` divided by their Euclidean norm; all-zero rows stay zero.

    Parameters
    ----------
    x : array_like, shape (n, d)

    Returns
    -------
    numpy.ndarray, shape (n, d), float64

    See Also
    --------
    row_keys : keys of normalised rows.

    Examples
    --------
    >>> unit_rows([[3.0, 4.0], [0.0, 0.0]])
    array([[0.6, 0.8],
           [0. , 0. ]])
    """
    arr = np.asarray(x, dtype=np.float64)
    norms = np.linalg.norm(arr, axis=-1, keepdims=True)
    return np.divide(arr, norms, out=np.zeros_like(arr), where=norms > 0)


def row_keys(x: Any, *, normalised: bool = True) -> np.ndarray:
    """One hashable key per row: equal keys mean the same embedding.

    Parameters
    ----------
    x : array_like, shape (n, d)
    normalised : bool, default=True
        True: the L2-normalised row quantised to :data:`ROW_KEY_RESOLUTION` (rows that differ only in scale share
        a key; a float32 round trip usually does *not*: :func:`near_pairs` finds those). False: the row's bytes.

    Returns
    -------
    numpy.ndarray of bytes, shape (n,)

    See Also
    --------
    near_pairs : rows within a distance of each other.

    Examples
    --------
    >>> k = row_keys([[1.0, 2.0], [2.0, 4.0], [1.0, 2.5]])
    >>> bool(k[0] == k[1]), bool(k[0] == k[2])
    (True, False)
    """
    arr = np.ascontiguousarray(np.asarray(x, dtype=np.float64))
    if normalised:
        arr = np.ascontiguousarray(np.rint(unit_rows(arr) / ROW_KEY_RESOLUTION).astype(np.int64))
    return np.array([row.tobytes() for row in arr], dtype=object)


def near_pairs(u: np.ndarray, tol: float = ROW_TOLERANCE, block: int = 1 << 16) -> list[tuple[int, int]]:
    """All pairs of rows within Euclidean distance ``tol`` of each other.

    Candidates from a sort along a fixed random unit direction ``w`` (``|w.(a - b)| <= |a - b|``: none missed) are
    checked exactly; the result does not depend on ``w``. About 0.4 s for 100,000 x 512.

    Parameters
    ----------
    u : numpy.ndarray, shape (n, d)
        Rows to compare (L2-normalised rows for the duplicate checks).
    tol : float, default=ROW_TOLERANCE
    block : int, default=65536
        Candidate pairs checked at a time.

    Returns
    -------
    list of (int, int)
        ``(i, j)`` with ``i < j``.

    See Also
    --------
    row_keys : keys of exactly equal rows.

    Examples
    --------
    >>> near_pairs(np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1e-7]]))
    [(0, 2)]
    """
    u = np.asarray(u, dtype=np.float64)
    n = len(u)
    if n < 2:
        return []
    from .protocol import stream  # protocol imports this module

    w = stream("near-pairs-direction").normal(size=u.shape[1])  # any fixed direction works
    p = u @ (w / np.linalg.norm(w))
    order = np.argsort(p, kind="stable")
    ps = p[order]
    width = np.searchsorted(ps, ps + tol * (1 + 1e-9) + 1e-15, side="right") - np.arange(n) - 1
    starts = np.flatnonzero(width > 0)
    pairs: list[tuple[int, int]] = []
    for lo in range(0, len(starts), block):
        first = starts[lo: lo + block]
        a = np.repeat(first, width[first])
        b = a + 1 + (np.arange(len(a)) - np.repeat(np.cumsum(width[first]) - width[first], width[first]))
        i, j = order[a], order[b]
        close = np.linalg.norm(u[i] - u[j], axis=1) <= tol
        pairs += [(int(min(s_, t_)), int(max(s_, t_))) for s_, t_ in zip(i[close], j[close])]
    return sorted(pairs)


def _shared_rows(development: Any, test: Any) -> tuple[np.ndarray, np.ndarray]:
    """``exact, normalised``: per test row, whether it equals a development row bit for bit, or (only from three
    dimensions on: below, fresh draws share directions) lies within :data:`ROW_TOLERANCE` of one after
    L2-normalisation but is not an exact copy."""
    dev = np.asarray(development, dtype=np.float64)
    tst = np.asarray(test, dtype=np.float64)
    seen = set(row_keys(dev, normalised=False).tolist())  # hashing: linear in the rows, not n x m
    exact = np.array([key in seen for key in row_keys(tst, normalised=False).tolist()], dtype=bool)
    if tst.ndim < 2 or tst.shape[1] < 3 or len(dev) == 0:
        return exact, np.zeros_like(exact)
    near = np.zeros(len(tst), dtype=bool)
    for i, j in near_pairs(unit_rows(np.vstack([dev, tst]))):
        if i < len(dev) <= j:  # one development row and one test row
            near[j - len(dev)] = True
    return exact, near & ~exact


class ReusedRowsError(ValueError):
    """Test rows of a reserved test repeat rows that selected or trained the test.

    See Also
    --------
    check_fresh, check_fresh_ids : raise it for repeated rows and repeated draw ids.

    Examples
    --------
    >>> issubclass(ReusedRowsError, ValueError)
    True
    """


def check_fresh(development: Mapping[Hashable, Any], test: Mapping[Hashable, Any], *, context: str) -> None:
    """Refuse a reserved test whose test rows repeat development (selection/training) rows.

    Test rows of every identity are compared with development rows of every identity: on copies of development
    rows a reserved test certifies its cap even for identical distributions, which is no confidence bound.

    Parameters
    ----------
    development, test : mapping identity -> array_like, shape (n_i, d)
        Rows that fitted the classifier or chose the threshold or the pair, and the reserved test rows.
    context : str
        Where the check runs, used in the message.

    Raises
    ------
    ReusedRowsError
        (a ``ValueError``) Naming how many test rows repeat a development row (exactly and after
        L2-normalisation), of which identities, and the first such row.

    See Also
    --------
    check_fresh_ids : the same check by draw ids.

    Examples
    --------
    >>> check_fresh({"A": [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]}, {"A": [[2.0, 0.0, 0.0]]}, context="demo")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    epsaudit.validation.ReusedRowsError: demo: 1 of 1 test row(s) repeat a development row (0 exact copies, 1 equal after L2-normalisation): 1 of identity 'A'; first: test row 0 of 'A'. ...
    """
    dev_rows = [np.asarray(v, dtype=np.float64) for v in development.values()]
    if not dev_rows:
        return
    pooled = np.vstack(dev_rows)
    total = n_exact = n_scaled = 0
    where: list[str] = []
    first = None
    for label, rows in test.items():
        rows = np.asarray(rows, dtype=np.float64)
        total += len(rows)
        exact, scaled = _shared_rows(pooled, rows)
        hit = exact | scaled
        if hit.any():
            n_exact += int(exact.sum())
            n_scaled += int(scaled.sum())
            where.append(f"{int(hit.sum())} of identity {label!r}")
            if first is None:
                first = f"test row {int(np.flatnonzero(hit)[0])} of {label!r}"
    if n_exact or n_scaled:
        raise ReusedRowsError(
            f"{context}: {n_exact + n_scaled} of {total} test row(s) repeat a development row "
            f"({n_exact} exact copies, {n_scaled} equal after L2-normalisation): {', '.join(where)}; "
            f"first: {first}. A reserved test needs test rows never used to fit the classifier or "
            "choose the threshold or the pair (fresh draws, or a split of distinct rows). Where values "
            "repeat by design (a resampled or discrete mechanism) or rows that differ only in scale are "
            "different outputs, give each row's draw id where the route takes them (dev_ids, test_ids): "
            "the check then compares draws, not values; without ids, when the test rows are fresh draws, "
            "pass check_reuse=False.")


def as_draw_ids(ids: Any, n_rows: int, name: str) -> np.ndarray:
    """Validate the draw ids of one identity's rows: one id per row, none missing.

    A *draw id* names one draw of the mechanism: rows with the same id are one draw used twice, rows with different
    ids are different draws whatever their values (a resampled mechanism repeats values; one-hot outputs repeat).

    Parameters
    ----------
    ids : array_like, shape (n_rows,)
        Hashable scalars (integers or strings), one per row.
    n_rows : int
    name : str
        Argument name used in messages.

    Returns
    -------
    numpy.ndarray, shape (n_rows,)

    Raises
    ------
    ValueError
        If ``ids`` is not one-dimensional, its length is not ``n_rows``, or an id is missing (``None`` or NaN;
        the first is named).

    See Also
    --------
    check_fresh_ids : the freshness check by these ids.

    Examples
    --------
    >>> as_draw_ids([0, 1, 2], 2, "dev_ids['A']")
    Traceback (most recent call last):
    ...
    ValueError: dev_ids['A'] has 3 draw id(s) for 2 row(s); give one id per row
    """
    arr = np.asarray(ids)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional (one draw id per row); got shape {arr.shape}")
    if len(arr) != n_rows:
        raise ValueError(f"{name} has {len(arr)} draw id(s) for {n_rows} row(s); give one id per row")
    for i, v in enumerate(arr.tolist()):
        if v is None or (isinstance(v, float) and v != v):
            raise ValueError(f"{name} holds a missing draw id at row {i}; every row needs its id")
    return arr


def check_fresh_ids(development: Mapping[Hashable, Any], test: Mapping[Hashable, Any], *, context: str) -> None:
    """Refuse a reserved test whose test draw ids repeat development draw ids (or each other).

    :func:`check_fresh` by draw ids (values are not compared); a test id may also occur only once among the test
    rows (a draw counted twice is not two independent rows).

    Parameters
    ----------
    development, test : mapping identity -> array_like of ids, shape (n_i,)
        Draw ids of the development rows and of the reserved test rows, one per row.
    context : str
        Where the check runs, used in the message.

    Raises
    ------
    ReusedRowsError
        (a ``ValueError``) Naming how many test draw ids repeat a development draw id, of which identities, and
        the first such id (and whose development rows it is in); or the first test id that occurs twice.

    See Also
    --------
    as_draw_ids : the check of each identity's ids.

    Examples
    --------
    >>> check_fresh_ids({"A": [1, 2], "B": [3, 4]}, {"A": [5, 2], "B": [7, 8]}, context="demo")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    epsaudit.validation.ReusedRowsError: demo: 1 of 4 test draw id(s) equal a development draw id: 1 of identity 'A'; first: test draw id 2 of 'A' (a development draw of 'A'). ...
    """
    owner: dict[Any, Hashable] = {}
    for label, ids in development.items():
        for v in np.asarray(ids).tolist():
            owner.setdefault(v, label)
    total = hits = 0
    where: list[str] = []
    first = None
    seen: dict[Any, Hashable] = {}
    twice = None
    for label, ids in test.items():
        values = np.asarray(ids).tolist()
        total += len(values)
        reused = [v for v in values if v in owner]
        if reused:
            hits += len(reused)
            where.append(f"{len(reused)} of identity {label!r}")
            if first is None:
                first = f"test draw id {reused[0]!r} of {label!r} (a development draw of {owner[reused[0]]!r})"
        for v in values:
            if v in seen and twice is None:
                twice = f"test draw id {v!r} occurs twice among the test rows (of {seen[v]!r} and {label!r})"
            seen.setdefault(v, label)
    if hits:
        raise ReusedRowsError(
            f"{context}: {hits} of {total} test draw id(s) equal a development draw id: {', '.join(where)}; "
            f"first: {first}. A reserved test needs test draws never used to fit the classifier or choose the "
            "threshold or the pair: draw the test rows afresh, or split the draws into development and test parts.")
    if twice is not None:
        raise ReusedRowsError(
            f"{context}: {twice}. Each test row must be its own draw: the certificate counts test rows as "
            "independent draws.")
