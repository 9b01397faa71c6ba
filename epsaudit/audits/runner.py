"""One runner for every route's many-pairs function: parallel, with progress, failures contained.

:func:`map_pairs` runs the per-pair jobs with joblib and turns one pair's error (a constant coordinate, a
classifier that cannot be fitted, reused test rows, ...) into a :class:`PairFailure`, recorded as *not computed*
with the reason (:func:`not_computed`) while the other pairs go on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Hashable, Mapping, Sequence, TypeVar

import numpy as np
from joblib import Parallel, delayed

from ..results import EpsilonResult
from ..protocol import MIN_PART, split_identities

T = TypeVar("T")
#: Errors that mean "this pair cannot be computed" rather than a bug (ValueError, including numpy's LinAlgError
#: and the project's input errors, and arithmetic failures). Anything else propagates.
PAIR_ERRORS: tuple[type[BaseException], ...] = (ValueError, ArithmeticError)


@dataclass(frozen=True)
class PairFailure:
    """Why one pair could not be computed.

    Attributes
    ----------
    reason : str
        The error message.
    error : str
        The exception's class name, e.g. ``"ValueError"``.

    See Also
    --------
    not_computed, map_pairs : the result recorded for such a pair, and the runner that records it.

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


def map_pairs(job: Callable[..., T], tasks: Sequence[tuple], *, desc: str, n_jobs: int | None = None,
              progress: bool = False, prefer: str | None = None) -> list[T | PairFailure]:
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
        joblib workers (``None`` = 1, ``-1`` = all cores); results do not depend on it. Inside a cluster context
        (:func:`epsaudit.parallel.cluster`) the pairs go to its workers. Jobs in this process use one BLAS thread.
    progress : bool, default=False
        Show a tqdm bar on stderr that counts *completed* pairs.
    prefer : {"threads", "processes"}, default=None
        joblib's backend hint (threads for cheap numpy-bound jobs: no pickling).

    Returns
    -------
    list
        One entry per task, in order: the job's value, or a :class:`PairFailure` for one of :data:`PAIR_ERRORS`.

    See Also
    --------
    map_certificates, not_computed : the same over a certificate route's split pairs; a failed pair's result.

    Examples
    --------
    >>> out = map_pairs(lambda x: 1.0 / x, [(2.0,), (0.0,)], desc="demo")
    >>> out[0], out[1].error
    (0.5, 'ZeroDivisionError')
    """
    from threadpoolctl import threadpool_limits  # a dependency of scikit-learn

    runner = Parallel(n_jobs=n_jobs, prefer=prefer, return_as="generator")
    # One BLAS thread in this process: the pairs are the parallelism, and BLAS threads on one pair's small matrices
    # mostly spin (`epsaudit audit --pairs 200 --jobs 1`: 50 CPU seconds with 2 BLAS threads, 8 with 1).
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
        Sample sizes.
    **fields
        Further :class:`~epsaudit.results.EpsilonResult` fields (settings, delta, a certificate's levels).

    Returns
    -------
    EpsilonResult
        ``computed`` False, ``value`` NaN, ``statistics`` None; ``details["error"]`` the exception's class name.

    Raises
    ------
    ValueError
        From :class:`~epsaudit.results.EpsilonResult` (e.g. a certificate without its level).

    See Also
    --------
    PairFailure, map_pairs : the reason a route raises for one pair, and the runner that records it.

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

    Rows of ``groups`` and ``test_groups``, or, without ``test_groups``, each identity split once
    (:func:`epsaudit.protocol.split_identities`): every pair with an identity sees the same parts.

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
    pair_id_parts, map_certificates : the draw ids of the same parts; a certificate run on each pair's parts.

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
    """The draw ids of each pair's development and test rows, parted as :func:`pair_parts` parts the rows (the same
    permutation, so every row keeps its id; with ``test_groups``: ``dev_ids`` and ``test_ids``).

    Parameters
    ----------
    groups : mapping identity -> numpy.ndarray, shape (n_i, d)
        Validated groups (development rows, or all rows when ``test_groups`` is None).
    pairs : sequence of (identity, identity)
    dev_ids : mapping identity -> array_like, shape (n_i,)
        One draw id per row of ``groups``, for every identity in ``pairs``.
    test_ids : mapping identity -> array_like, or None
        One draw id per row of ``test_groups`` (required with ``test_groups``, refused without).
    test_groups, test_size, seed
        As in :func:`pair_parts`.

    Returns
    -------
    dict
        ``(A, B) -> (dev ids of A, dev ids of B, test ids of A, test ids of B)`` for every pair whose identities
        could be split.

    Raises
    ------
    ValueError
        An identity of ``pairs`` without ids, ids not one per row, or ``test_ids`` given without ``test_groups``
        (or missing with them).

    See Also
    --------
    pair_parts : the rows, parted the same way.

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
        One entry per pair, in order: the job's value, or a :class:`PairFailure` (the split's or the job's).

    See Also
    --------
    map_pairs, pair_parts : the runner it uses and the parts it runs on.

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
