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
from ..splits import MIN_PART, split_identities

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
    n_jobs : int, optional
        joblib workers (``None`` = 1, ``-1`` = all cores); results do not depend on it.
    progress : bool
        Show a tqdm bar on stderr that counts *completed* pairs.
    prefer : {"threads", "processes"}, optional
        joblib's backend hint (threads for cheap numpy-bound jobs: no pickling).

    Returns
    -------
    list
        One entry per task, in the order of ``tasks``: the job's return value, or a
        :class:`PairFailure` when the job raised one of :data:`PAIR_ERRORS`.

    Examples
    --------
    >>> out = map_pairs(lambda x: 1.0 / x, [(2.0,), (0.0,)], desc="demo")
    >>> out[0], out[1].error
    (0.5, 'ZeroDivisionError')
    """
    runner = Parallel(n_jobs=n_jobs, prefer=prefer, return_as="generator")
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
        ``computed`` False; ``details["error"]`` is the exception's class name.
    """
    details = {"error": failure.error, **fields.pop("details", {})}
    return EpsilonResult(value=float("nan"), kind=kind, route=route, n=n, pair=pair,
                         not_computed=failure.reason, details=details, **fields)



def pair_parts(groups: Mapping[Hashable, np.ndarray], pairs: Sequence[tuple[Hashable, Hashable]], *,
               test_groups: Mapping[Hashable, np.ndarray] | None, test_size: float, seed: int) -> list[Any]:
    """The development and test rows ``(dev_a, dev_b, test_a, test_b)`` of each pair of a certificate route.

    With ``test_groups`` (fresh draws), the development rows are ``groups`` and the test rows
    ``test_groups``; otherwise each identity is split once (:func:`epsaudit.splits.split_identities`),
    so every pair that contains an identity sees the same development and test rows.

    Returns
    -------
    list
        Per pair a 4-tuple of arrays, or a :class:`PairFailure` naming the identity too small to split.
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
