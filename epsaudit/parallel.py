"""Where the work runs, and how a long loop shows it: local cores, a Dask cluster, progress bars.

Every parallel loop of the library goes through joblib (the pair routes and certificate families, DP-Sniper rows,
synthetic settings, the face builders' batches): on local processes (``n_jobs``), or, inside
``joblib.parallel_config(backend="dask")`` with a ``dask.distributed`` client, on that cluster whatever ``n_jobs``
says; :func:`cluster` opens such a context from a scheduler address (``epsaudit audit --scheduler ADDRESS``,
``$EPSAUDIT_SCHEDULER``). Results do not depend on where the work ran: every task is seeded by its own key
(:func:`epsaudit.protocol.stream`) and results come in task order. Dask is optional
(``pip install 'epsaudit[scale]'``), imported only by :func:`cluster`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

__all__ = ["SCHEDULER_ENV", "available_cores", "cluster", "cluster_backend_active", "imap", "progress_bar", "running_on",
           "scheduler_address"]


#: Environment variable naming the Dask scheduler the command line sends work to (``--scheduler``).
SCHEDULER_ENV = "EPSAUDIT_SCHEDULER"

# joblib's own backends run on this machine; any other active one (dask, ray, ...) was chosen with parallel_config
_LOCAL_BACKENDS = frozenset({"SequentialBackend", "ThreadingBackend", "MultiprocessingBackend", "LokyBackend"})


def available_cores() -> int:
    """The cores this process may run on: ``os.sched_getaffinity`` (which shows a container or ``taskset`` limit)
    where it exists, else ``os.cpu_count()``.

    Returns
    -------
    int
        At least 1.

    Examples
    --------
    >>> available_cores() >= 1
    True
    """
    if hasattr(os, "sched_getaffinity"):
        try:
            return max(1, len(os.sched_getaffinity(0)))
        except OSError:  # pragma: no cover - a platform that lists the call but refuses it
            pass
    return max(1, os.cpu_count() or 1)


def scheduler_address(address: str | None = None) -> str | None:
    """The Dask scheduler to use: ``address`` when given, else ``$EPSAUDIT_SCHEDULER``, else ``None``.

    Parameters
    ----------
    address : str, optional
        ``tcp://host:port`` or ``host:port``; an empty string means "none" (overrides the variable).

    Returns
    -------
    str or None
        ``None``: run on this machine.

    Examples
    --------
    >>> scheduler_address("") is None  # this machine, whatever $EPSAUDIT_SCHEDULER says
    True
    """
    if address is None:
        address = os.environ.get(SCHEDULER_ENV)
    address = (address or "").strip()
    return address or None


@contextmanager
def cluster(address: str, *, timeout: float = 30.0) -> Iterator[Any]:
    """Connect to a running Dask scheduler and send every joblib loop inside the block to its workers: ``with
    Client(address) as c, joblib.parallel_config(backend="dask", client=c)`` (the cluster keeps running). The workers
    need epsaudit installed (the face builders also the ``faces`` extra and the photographs at the same path).

    Parameters
    ----------
    address : str
        The scheduler, ``tcp://host:port`` (what ``dask scheduler`` prints) or ``host:port``.
    timeout : float
        Seconds to wait for the connection.

    Yields
    ------
    distributed.Client
        The connected client (``client.ncores()`` lists the workers and their threads).

    Raises
    ------
    ImportError
        dask.distributed is not installed (``pip install 'epsaudit[scale]'``).
    OSError
        The scheduler cannot be reached within ``timeout`` (the message names the address).

    Examples
    --------
    >>> from distributed import LocalCluster  # doctest: +SKIP
    >>> with LocalCluster(n_workers=2, threads_per_worker=1) as local, cluster(local.scheduler_address):
    ...     audit = audit_condition(table)   # doctest: +SKIP
    """
    try:
        from distributed import Client
    except ImportError:
        raise ImportError("running on a Dask cluster needs dask.distributed: pip install 'epsaudit[scale]'") from None
    from joblib import parallel_config

    try:
        client = Client(address, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise OSError(f"cannot reach the Dask scheduler at {address!r} within {timeout:g} s ({exc}); start one "
                      "with `dask scheduler` and workers with `dask worker ADDRESS --nthreads 1`") from None
    try:
        with parallel_config(backend="dask", client=client):
            yield client
    finally:
        client.close()


@contextmanager
def running_on(scheduler: str | None, report: Callable[[str], None] | None = None) -> Iterator[Any]:
    """:func:`cluster` on the Dask scheduler ``scheduler`` (else ``$EPSAUDIT_SCHEDULER``) when there is one, else this
    machine (what the command lines' ``--scheduler`` does).

    Parameters
    ----------
    scheduler : str or None
        The address; ``None`` falls back to the environment variable, ``""`` means this machine.
    report : callable, optional
        Called with one line naming the scheduler and its workers and threads.

    Yields
    ------
    distributed.Client or None
        ``None`` on this machine.

    Raises
    ------
    ImportError, OSError
        From :func:`cluster`.

    Examples
    --------
    >>> with running_on("") as client:
    ...     client is None
    True
    """
    address = scheduler_address(scheduler)
    if address is None:
        yield None
        return
    with cluster(address) as client:
        if report is not None:
            cores = client.ncores()
            report(f"on the Dask scheduler at {address}: {len(cores)} worker(s), {sum(cores.values())} thread(s)")
        yield client


def cluster_backend_active() -> bool:
    """Whether a joblib backend other than joblib's local ones is active (e.g. ``parallel_config(backend="dask")``).

    Returns
    -------
    bool

    Examples
    --------
    >>> cluster_backend_active()
    False
    """
    from joblib.parallel import get_active_backend

    backend, _ = get_active_backend()
    return type(backend).__name__ not in _LOCAL_BACKENDS


def imap(func: Callable[[Any], Any], items: Iterable[Any], *, ordered: bool = True) -> Iterator[Any]:
    """``func(item)`` for every item on the active joblib backend, one task per item, yielded as they finish.

    Parameters
    ----------
    func : callable
        Picklable by cloudpickle (a module-level function or a ``functools.partial`` of one).
    items : iterable
    ordered : bool
        Yield in item order, else in order of completion.

    Returns
    -------
    iterator

    Examples
    --------
    >>> list(imap(abs, [-1, 2, -3]))
    [1, 2, 3]
    """
    from joblib import Parallel, delayed

    runner = Parallel(return_as="generator" if ordered else "generator_unordered", batch_size=1)
    return iter(runner(delayed(func)(item) for item in items))


T = TypeVar("T")


def progress_bar(items: Iterable[T], enabled: bool, desc: str, total: int | None = None) -> Iterable[T]:
    """Wrap ``items`` in a tqdm bar labelled ``desc`` when ``enabled``; otherwise return them unchanged.

    Parameters
    ----------
    items : iterable
    enabled : bool
    desc : str
        Label of the bar (stderr).
    total : int, optional
        Length of ``items`` when it has none (a generator).

    Returns
    -------
    iterable
        ``items`` itself when not ``enabled`` (tqdm is then not imported).

    Examples
    --------
    >>> list(progress_bar(range(3), False, "demo"))
    [0, 1, 2]
    """
    if not enabled:
        return items
    from tqdm import tqdm  # text bars: no ipywidgets needed; the book hides stderr

    return tqdm(items, desc=desc, total=total)
