"""One runner for every route's many-pairs function: parallel, with progress, failures contained.

Each route computes one identity pair at a time; :func:`map_pairs` runs those per-pair jobs with
joblib and turns an error of one pair (a coordinate constant within one identity, a zero median
distance, a classifier that cannot be fitted, test rows that repeat development rows, ...) into a
:class:`PairFailure` for that pair, so the other pairs and routes go on. The route then records
the pair as *not computed*, with the reason (:func:`not_computed`), and every table counts it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Hashable, Mapping, Sequence, TypeVar

import numpy as np
from joblib import Parallel, delayed

from ..results import EpsilonResult
from ..protocol import MIN_PART, split_identities

T = TypeVar("T")
#: Errors that mean "this pair cannot be computed" rather than a bug: bad or degenerate data
#: (ValueError, which includes numpy's LinAlgError and the project's input errors) and arithmetic
#: failures. Anything else propagates.
PAIR_ERRORS: tuple[type[BaseException], ...] = (ValueError, ArithmeticError)


@dataclass(frozen=True)
class PairFailure:
    """Why one pair could not be computed.

    Attributes
    ----------
    reason : str
        The error message (names the identities and, where it applies, the coordinate).
    error : str
        The exception's class name, e.g. ``"ValueError"``.

    See Also
    --------
    not_computed : the result recorded for a pair that raises it.
    map_pairs : the runner that records it and goes on with the other pairs.

    Examples
    --------
    >>> PairFailure(reason="identity 'A' has 3 row(s)", error="ValueError").error
    'ValueError'
    """

    reason: str
    error: str


def _guarded(job: Callable[..., T], *args: Any) -> T | PairFailure:
    try:
        return job(*args)
    except PAIR_ERRORS as exc:
        return PairFailure(reason=str(exc), error=type(exc).__name__)


def map_pairs(
    job: Callable[..., T],
    tasks: Sequence[tuple],
    *,
    desc: str,
    n_jobs: int | None = None,
    progress: bool = False,
    prefer: str | None = None,
) -> list[T | PairFailure]:
    """Run ``job(*task)`` for every task (one per pair) with joblib, in order.

    Parameters
    ----------
    job : callable
        A module-level function (picklable), computing one pair.
    tasks : sequence of tuple
        The arguments of each call.
    desc : str
        Label of the tqdm bar.
    n_jobs : int, default=None
        joblib workers (``None`` = 1, ``-1`` = all cores); results do not depend on it. Inside a
        cluster context (``joblib.parallel_config(backend="dask")``, :func:`epsaudit.parallel.cluster`)
        the pairs go to the cluster's workers whatever ``n_jobs`` says. Jobs that run in this process
        use one BLAS thread.
    progress : bool, default=False
        Show a tqdm bar on stderr that counts *completed* pairs.
    prefer : {"threads", "processes"}, default=None
        joblib's backend hint (threads for cheap numpy-bound jobs: no pickling).

    Returns
    -------
    list
        One entry per task, in the order of ``tasks``: the job's return value, or a
        :class:`PairFailure` when the job raised one of :data:`PAIR_ERRORS`.

    See Also
    --------
    map_certificates : the same over the split pairs of a certificate route.
    not_computed : the result of a pair that could not be computed.

    Examples
    --------
    >>> out = map_pairs(lambda x: 1.0 / x, [(2.0,), (0.0,)], desc="demo")
    >>> out[0], out[1].error
    (0.5, 'ZeroDivisionError')
    """
    from threadpoolctl import threadpool_limits  # a dependency of scikit-learn

    runner = Parallel(n_jobs=n_jobs, prefer=prefer, return_as="generator")
    # One BLAS thread while jobs run in this process (sequentially or on threads): the pairs are the
    # parallelism, and several BLAS threads on one pair's small matrices mostly spin (`epsaudit audit
    # --pairs 200 --jobs 1` on data/dlib_large_swap.csv: 50 CPU seconds with 2 BLAS threads, 8 with 1).
    # Process workers (loky, Dask) already run one BLAS thread each.
    with threadpool_limits(1):
        outputs = runner(delayed(_guarded)(job, *task) for task in tasks)
        if progress:
            from tqdm import tqdm  # text bars: no ipywidgets needed; the book hides stderr

            outputs = tqdm(outputs, desc=desc, total=len(tasks))
        return list(outputs)


def not_computed(failure: PairFailure, *, route: str, kind: str, pair: tuple[Hashable, Hashable] | None,
                 n: tuple[int, ...], **fields: Any) -> EpsilonResult:
    """The result recorded for a pair the route could not compute (value NaN, with the reason).

    Parameters
    ----------
    failure : PairFailure
    route, kind : str
        The route and the kind its values have.
    pair : tuple or None
    n : tuple of int
        Sample sizes of the pair.
    **fields
        Further :class:`~epsaudit.results.EpsilonResult` fields (settings, delta and, for a
        certificate, its confidence, per-bound level and correction).

    Returns
    -------
    EpsilonResult
        ``computed`` False, ``value`` NaN, ``statistics`` None; ``details["error"]`` is the
        exception's class name.

    Raises
    ------
    ValueError
        From :class:`~epsaudit.results.EpsilonResult` (e.g. a certificate without its level).

    See Also
    --------
    PairFailure : the reason a route raises for one pair.
    map_pairs : the runner that records it.
    epsaudit.condition.not_computed_notes : lines naming the pairs a route could not compute.

    Examples
    --------
    >>> r = not_computed(PairFailure("too few rows", "ValueError"), route="gaussmech", kind="diagnostic",
    ...                  pair=("A", "B"), n=(1, 5))
    >>> r.computed, r.details["error"], str(r)
    (False, 'ValueError', 'gaussmech: not computed (too few rows)')
    """
    details = {"error": failure.error, **fields.pop("details", {})}
    return EpsilonResult(value=float("nan"), kind=kind, route=route, n=n, pair=pair,
                         not_computed=failure.reason, details=details, **fields)



def pair_parts(groups: Mapping[Hashable, np.ndarray], pairs: Sequence[tuple[Hashable, Hashable]], *,
               test_groups: Mapping[Hashable, np.ndarray] | None, test_size: float, seed: int) -> list[Any]:
    """The development and test rows ``(dev_a, dev_b, test_a, test_b)`` of each pair of a certificate route.

    With ``test_groups`` (fresh draws), the development rows are ``groups`` and the test rows
    ``test_groups``; otherwise each identity is split once (:func:`epsaudit.protocol.split_identities`),
    so every pair that contains an identity sees the same development and test rows.

    Parameters
    ----------
    groups : mapping identity -> numpy.ndarray, shape (n_i, d)
        Validated groups (:func:`epsaudit.validation.as_groups`).
    pairs : sequence of (identity, identity)
    test_groups : mapping or None
        Separate test rows per identity, or None to split ``groups``.
    test_size : float in (0, 1)
        Fraction of each identity's rows in its test part when splitting.
    seed : int
        Base seed of the splits.

    Returns
    -------
    list
        Per pair a 4-tuple of arrays, or a :class:`PairFailure` naming the identity too small to split.

    Raises
    ------
    ValueError
        ``test_size`` outside (0, 1) or a bad ``seed``.

    See Also
    --------
    pair_id_parts : the draw ids of the same parts.
    split_test_sizes : the test rows per identity of each pair.
    map_certificates : runs a certificate on each pair's parts.
    epsaudit.protocol.split_identities : the split behind the parts.

    Examples
    --------
    >>> groups = {"A": np.zeros((10, 2)), "B": np.ones((10, 2)), "C": np.ones((3, 2))}
    >>> parts = pair_parts(groups, [("A", "B"), ("A", "C")], test_groups=None, test_size=0.3, seed=0)
    >>> [p.shape for p in parts[0]], parts[1].reason
    ([(7, 2), (7, 2), (3, 2), (3, 2)], "identity 'C' has 3 row(s); a development/test split needs >= 4")
    """
    if test_groups is not None:
        return [(groups[a], groups[b], test_groups[a], test_groups[b]) for a, b in pairs]
    used = {label: groups[label] for pair in pairs for label in pair}
    dev, test, _ = split_identities(used, test_size=test_size, seed=seed)
    out: list[Any] = []
    for a, b in pairs:
        small = [label for label in (a, b) if label not in dev]
        out.append(PairFailure(reason=f"identity {small[0]!r} has {len(groups[small[0]])} row(s); a development/test "
                                      f"split needs >= {2 * MIN_PART}", error="ValueError")
                   if small else (dev[a], dev[b], test[a], test[b]))
    return out


def pair_id_parts(groups: Mapping[Hashable, np.ndarray], pairs: Sequence[tuple[Hashable, Hashable]], *,
                  dev_ids: Mapping[Hashable, Any], test_ids: Mapping[Hashable, Any] | None,
                  test_groups: Mapping[Hashable, np.ndarray] | None, test_size: float,
                  seed: int) -> dict[tuple[Hashable, Hashable], tuple[np.ndarray, ...]]:
    """The draw ids of each pair's development and test rows, parted as :func:`pair_parts` parts the rows.

    Without ``test_groups`` the ids of ``groups`` are split with the same permutation as the rows
    (:func:`epsaudit.protocol.split_identities`), so every row keeps its id; with ``test_groups`` the
    development ids are ``dev_ids`` and the test ids ``test_ids``.

    Parameters
    ----------
    groups : mapping identity -> numpy.ndarray, shape (n_i, d)
        Validated groups (development rows, or all rows when ``test_groups`` is None).
    pairs : sequence of (identity, identity)
    dev_ids : mapping identity -> array_like, shape (n_i,)
        One draw id per row of ``groups``, for every identity in ``pairs``.
    test_ids : mapping identity -> array_like, or None
        One draw id per row of ``test_groups`` (required with ``test_groups``, refused without).
    test_groups : mapping or None
    test_size : float
    seed : int
        As in :func:`pair_parts`.

    Returns
    -------
    dict
        ``(A, B) -> (dev ids of A, dev ids of B, test ids of A, test ids of B)`` for every pair
        whose identities could be split (the others fail in :func:`pair_parts`).

    Raises
    ------
    ValueError
        An identity of ``pairs`` without ids, ids that are not one per row or missing, or
        ``test_ids`` given without ``test_groups`` (or missing with them).

    See Also
    --------
    pair_parts : the rows, parted the same way.
    epsaudit.validation.as_draw_ids : the check of each identity's ids.

    Examples
    --------
    >>> groups = {"A": np.arange(20.0).reshape(10, 2), "B": np.ones((10, 2))}
    >>> ids = {"A": np.arange(10), "B": np.arange(10, 20)}
    >>> parts = pair_parts(groups, [("A", "B")], test_groups=None, test_size=0.3, seed=0)[0]
    >>> id_parts = pair_id_parts(groups, [("A", "B")], dev_ids=ids, test_ids=None, test_groups=None, test_size=0.3, seed=0)
    >>> bool((parts[2][:, 0] == 2 * id_parts[("A", "B")][2]).all())  # row i of A is (2i, 2i + 1)
    True
    """
    from ..validation import as_draw_ids

    if test_groups is None and test_ids is not None:
        raise ValueError("test_ids given without test_groups: without test groups the rows of groups are split "
                         "and dev_ids (one id per row of groups) is split with them")
    if test_groups is not None and test_ids is None:
        raise ValueError("test_groups given with dev_ids but without test_ids: give the draw ids of the test rows")
    used = list(dict.fromkeys(label for pair in pairs for label in pair))

    def checked(ids, rows, name):
        missing = [label for label in used if label not in ids]
        if missing:
            raise ValueError(f"{name} has no draw ids for identity {missing[0]!r} ({len(missing)} identity(ies) "
                             "of the pairs without ids)")
        return {label: as_draw_ids(ids[label], len(rows[label]), f"{name}[{label!r}]") for label in used}

    dev = checked(dev_ids, groups, "dev_ids")
    if test_groups is None:
        dev, test, _ = split_identities(dev, test_size=test_size, seed=seed)
    else:
        test = checked(test_ids, test_groups, "test_ids")
    return {(a, b): (dev[a], dev[b], test[a], test[b]) for a, b in pairs if a in dev and b in dev}


def family_size(pairs: Sequence[tuple[Hashable, Hashable]], n_certificates: int | None) -> int:
    """The Bonferroni family size of a many-pairs certificate call: ``n_certificates``, default ``len(pairs)``.

    Parameters
    ----------
    pairs : sequence of (identity, identity)
        The certificates this call reports together.
    n_certificates : int or None
        The family size asked for (it may include certificates reported elsewhere).

    Returns
    -------
    int

    Raises
    ------
    ValueError
        If ``n_certificates`` is not an integer >= 1 or is smaller than ``len(pairs)``.

    See Also
    --------
    map_certificates : the runner of a many-pairs certificate call.
    epsaudit.bounds.bonferroni_alpha : the level of each certificate of the family.

    Examples
    --------
    >>> family_size([("A", "B"), ("A", "C")], None), family_size([("A", "B")], 60)
    (2, 60)
    """
    if n_certificates is None:
        return len(pairs)
    if isinstance(n_certificates, bool) or int(n_certificates) != n_certificates or int(n_certificates) < 1:
        raise ValueError(f"n_certificates must be an integer >= 1, got {n_certificates!r}")
    m = int(n_certificates)
    if m < len(pairs):
        raise ValueError(f"n_certificates = {m} is smaller than the {len(pairs)} certificates this call "
                         "reports together; the Bonferroni family must include all of them")
    return m


def map_certificates(job: Callable[..., T], parts: Sequence[Any], pairs: Sequence[tuple[Hashable, Hashable]],
                     arguments: Callable[[Hashable, Hashable], tuple], *, desc: str, n_jobs: int | None = None,
                     progress: bool = False, prefer: str | None = None) -> list[T | PairFailure]:
    """Run ``job(*parts[k], *arguments(a, b))`` for every pair whose split succeeded (:func:`map_pairs`).

    Parameters
    ----------
    job : callable
        Certifies one pair from ``(dev_a, dev_b, test_a, test_b, *arguments)``.
    parts : sequence
        :func:`pair_parts` of ``pairs``: 4-tuples of rows, or a :class:`PairFailure`.
    pairs : sequence of (identity, identity)
    arguments : callable ``(A, B) -> tuple``
        The job's further arguments for pair ``(A, B)``.
    desc, n_jobs, progress, prefer
        As in :func:`map_pairs`.

    Returns
    -------
    list
        One entry per pair, in order: the job's value, or a :class:`PairFailure` (the split's own,
        or the job's error).

    See Also
    --------
    map_pairs : the runner it uses.
    pair_parts : the development and test rows of each pair.
    family_size : the Bonferroni family of the call.

    Examples
    --------
    >>> parts = [(1, 2, 3, 4), PairFailure("too small", "ValueError")]
    >>> out = map_certificates(lambda *x: sum(x), parts, [("A", "B"), ("A", "C")], lambda a, b: (10,), desc="demo")
    >>> out[0], out[1].reason
    (20, 'too small')
    """
    tasks = [(*parts[k], *arguments(a, b)) for k, (a, b) in enumerate(pairs) if not isinstance(parts[k], PairFailure)]
    computed = iter(map_pairs(job, tasks, desc=desc, n_jobs=n_jobs, progress=progress, prefer=prefer))
    return [part if isinstance(part, PairFailure) else next(computed) for part in parts]


def split_test_sizes(part: Any, groups: Mapping[Hashable, np.ndarray], pair: tuple[Hashable, Hashable],
               test_size: float) -> tuple[int, int]:
    """Test rows per identity of a pair: those of its split, or the expected sizes when the split failed.

    Parameters
    ----------
    part : tuple or PairFailure
        The pair's entry of :func:`pair_parts`.
    groups : mapping identity -> numpy.ndarray
    pair : (identity, identity)
    test_size : float

    Returns
    -------
    tuple of int

    See Also
    --------
    pair_parts : the parts whose test sizes these are.

    Examples
    --------
    >>> split_test_sizes(PairFailure("too small", "ValueError"), {"A": np.zeros((10, 2)), "B": np.zeros((3, 2))},
    ...            ("A", "B"), 0.3)
    (3, 1)
    """
    if not isinstance(part, PairFailure):
        return len(part[2]), len(part[3])
    return tuple(int(round(test_size * len(groups[label]))) for label in pair)
