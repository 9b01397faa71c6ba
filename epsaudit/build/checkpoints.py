"""Resumable batch output for the face builders: completed batches are saved as they finish, and a rerun after an
interruption loads them (the book's "Running at scale" page, section 'Resumable face builds').

Each batch's result is pickled atomically to ``<root>/<stage>/<index>-<key>.pkl``, keyed by the
SHA-256 of the stage's settings and the batch's items (:func:`fingerprint`); results come back in batch
order. Results should carry their own worker timings; :class:`StageRun` adds this session's wall time.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from ..parallel import cluster_backend_active, imap

__all__ = ["DEFAULT_ROOT", "MISSING", "BatchStore", "BuildCheckpoints", "BuildInterrupted", "StageRun", "fingerprint", "log",
           "run_batches", "source_hashes", "add_build_options"]

#: Default folder of the checkpoint files (git-ignored; ``make clean`` removes it).
DEFAULT_ROOT = Path("_build") / "checkpoints"


class BuildInterrupted(RuntimeError):
    """Raised by :func:`run_batches` after ``interrupt_after`` newly completed batches (tests of resumption).

    Examples
    --------
    >>> issubclass(BuildInterrupted, RuntimeError)
    True
    """


def log(message: str) -> None:
    """Print ``message`` to stderr with a local timestamp (``YYYY-MM-DD HH:MM:SS``), flushed.

    Examples
    --------
    >>> log("stage 1: 10 photographs")  # doctest: +SKIP
    2026-01-01 12:00:00 stage 1: 10 photographs
    """
    print(f"{datetime.now().strftime('%Y-%m-%d %H:%M:%S')} {message}", file=sys.stderr, flush=True)


def _canonical(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return {"ndarray": str(value.dtype), "shape": list(value.shape),
                "sha256": hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest()}
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {str(k): _canonical(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TypeError(f"cannot fingerprint a {type(value).__name__}")


def fingerprint(*parts: Any) -> str:
    """SHA-256 (hex) of JSON-like parts: dicts, lists, strings, numbers, ``None`` and numpy arrays
    (hashed by dtype, shape and bytes).

    Raises
    ------
    TypeError
        A part of another type.

    Examples
    --------
    >>> fingerprint({"seed": 0}, [1, 2]) == fingerprint({"seed": 0}, (1, 2))
    True
    >>> fingerprint(np.zeros(2)) == fingerprint(np.zeros(3))
    False
    """
    text = json.dumps(_canonical(list(parts)), sort_keys=True, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class _Missing:
    """The type of :data:`MISSING` (one instance; falsy)."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self):
        return (_Missing, ())


#: What :meth:`BatchStore.load` returns for a batch without a stored result (a stored ``None`` or
#: empty result is a result, and is returned as such).
MISSING = _Missing()


@dataclass(frozen=True)
class BatchStore:
    """The checkpoint files of one stage of one build: ``<root>/<stage>/<index>-<key>.pkl``.

    Parameters
    ----------
    root : path-like
        The build's checkpoint folder (created on the first save).
    stage : str
        The stage's name (a folder name).

    Examples
    --------
    >>> import tempfile
    >>> store = BatchStore(tempfile.mkdtemp(), "demo")
    >>> store.load(0, "k") is MISSING
    True
    >>> _ = store.save(0, "k", [1, 2])
    >>> store.load(0, "k"), store.load(0, "other")
    ([1, 2], MISSING)
    >>> _ = store.save(1, "k", None)  # a legitimate None result is stored and loaded as such
    >>> store.load(1, "k") is None
    True
    """

    root: Path
    stage: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "root", Path(self.root))

    @property
    def folder(self) -> Path:
        """``<root>/<stage>``."""
        return self.root / self.stage

    def path(self, index: int, key: str) -> Path:
        """The file of batch ``index`` with key ``key``."""
        return self.folder / f"{int(index):06d}-{key[:24]}.pkl"

    def load(self, index: int, key: str) -> Any:
        """The stored result of a batch (which may itself be ``None`` or empty), or :data:`MISSING`
        when absent, unreadable or stored under another key (then it is recomputed)."""
        path = self.path(index, key)
        if not path.is_file():
            return MISSING
        try:
            with open(path, "rb") as fh:
                stored_key, result = pickle.load(fh)
        except Exception as exc:  # a damaged file: recompute the batch
            log(f"{self.stage}: ignoring unreadable checkpoint {path.name} ({type(exc).__name__})")
            return MISSING
        return result if stored_key == key else MISSING

    def save(self, index: int, key: str, result: Any) -> Path:
        """Write a batch's result atomically (temporary file, then rename); returns its path."""
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.path(index, key)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        with open(tmp, "wb") as fh:
            pickle.dump((key, result), fh, protocol=pickle.HIGHEST_PROTOCOL)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        return path

    def completed(self) -> int:
        """How many batch files the stage's folder holds (of any key)."""
        return len(list(self.folder.glob("*.pkl"))) if self.folder.is_dir() else 0

    def clear(self) -> None:
        """Delete the stage's folder (and the root when it is left empty)."""
        shutil.rmtree(self.folder, ignore_errors=True)
        try:
            self.root.rmdir()
        except OSError:
            pass


@dataclass
class StageRun:
    """What one call of :func:`run_batches` did: batches and items computed now or loaded from
    checkpoints, and this session's wall seconds.

    Examples
    --------
    >>> StageRun(batches=4, loaded=1, items=40, items_loaded=10, wall_seconds=2.0).items_per_second
    15.0
    """

    batches: int = 0
    loaded: int = 0
    items: int = 0
    items_loaded: int = 0
    wall_seconds: float = 0.0
    from_checkpoints: set = field(default_factory=set, repr=False)

    @property
    def items_per_second(self) -> float | None:
        """Items computed in this session per wall second (``None`` when nothing was computed)."""
        done = self.items - self.items_loaded
        return round(done / self.wall_seconds, 3) if done and self.wall_seconds > 0 else None

    def record(self) -> dict[str, Any]:
        """The stage's run record (for a manifest)."""
        return {"batches": self.batches, "batches_from_checkpoints": self.loaded, "items": self.items,
                "items_from_checkpoints": self.items_loaded, "wall_seconds": round(self.wall_seconds, 1),
                "items_per_wall_second": self.items_per_second}


def split_batches(items: list, size: int) -> list[list]:
    """``items`` cut into consecutive batches of ``size`` (the last may be shorter), as :func:`run_batches` takes them.

    Examples
    --------
    >>> split_batches([1, 2, 3, 4, 5], 2)
    [[1, 2], [3, 4], [5]]
    """
    return [items[i:i + size] for i in range(0, len(items), size)]


def _call(func: Callable, indexed: tuple[int, Any]) -> tuple[int, Any]:
    index, batch = indexed
    return index, func(batch)


def run_batches(func: Callable[[Any], Any], batches: Sequence[Sequence], store: BatchStore, stage_key: str, *,
                n_jobs: int = 1, desc: str = "", progress: bool = True, count: Callable[[Sequence], int] = len,
                interrupt_after: int | None = None) -> tuple[list, StageRun]:
    """``[func(b) for b in batches]`` on ``n_jobs`` processes, each result saved as it completes, and
    the saved results of an earlier, interrupted call loaded instead of recomputed.

    Parameters
    ----------
    func : callable ``batch -> result``
        Picklable (module-level or a ``functools.partial`` of one) when ``n_jobs > 1``, as its result.
    batches : sequence of sequences
        The stage's work, cut the same way on every run (the keys depend on each batch's items).
    store : BatchStore
    stage_key : str
        :func:`fingerprint` of every setting the results depend on.
    n_jobs : int
        Spawned worker processes; 1 runs here. Ignored inside a cluster context
        (:func:`epsaudit.parallel.cluster`): one task per batch on the cluster's workers.
    desc : str
        Label of the progress bar and the log lines.
    progress : bool
        A tqdm bar counting completed items (those loaded from checkpoints included).
    count : callable
        Items in a batch, for the bar (default ``len``).
    interrupt_after : int, optional
        Raise :class:`BuildInterrupted` once this many batches have been computed in this call.

    Returns
    -------
    results : list
        One per batch, in batch order.
    run : StageRun

    Raises
    ------
    BuildInterrupted
        See ``interrupt_after``.

    Examples
    --------
    >>> import tempfile
    >>> store = BatchStore(tempfile.mkdtemp(), "demo")
    >>> out, run = run_batches(sum, [[1, 2], [3]], store, "k", progress=False)
    >>> out, run.loaded
    ([3, 3], 0)
    >>> out, run = run_batches(sum, [[1, 2], [3]], store, "k", progress=False)  # a rerun loads them
    >>> out, run.loaded
    ([3, 3], 2)
    """
    import multiprocessing as mp

    from tqdm.auto import tqdm

    t0 = time.perf_counter()
    keys = [fingerprint(stage_key, i, list(b)) for i, b in enumerate(batches)]
    results: dict[int, Any] = {}
    for i, key in enumerate(keys):
        stored = store.load(i, key)
        if stored is not MISSING:
            results[i] = stored
    run = StageRun(batches=len(batches), loaded=len(results), items=sum(count(b) for b in batches),
                   items_loaded=sum(count(batches[i]) for i in results), from_checkpoints=set(results))
    todo = [(i, batches[i]) for i in range(len(batches)) if i not in results]
    log(f"{desc}: {len(batches)} batches ({run.items} items); {run.loaded} from checkpoints, {len(todo)} to compute")
    bar = tqdm(total=run.items, initial=run.items_loaded, desc=desc, file=sys.stderr, disable=not progress,
               mininterval=10)
    done = 0

    def _finish(index: int, result: Any) -> None:
        nonlocal done
        store.save(index, keys[index], result)
        results[index] = result
        bar.update(count(batches[index]))
        done += 1
        if interrupt_after is not None and done >= interrupt_after:
            raise BuildInterrupted(f"{desc}: interrupted after {done} computed batches (interrupt_after)")

    try:
        if todo and cluster_backend_active():  # joblib's backend chosen by the caller (e.g. dask workers)
            for index, result in imap(partial(_call, func), todo, ordered=False):
                _finish(index, result)
        elif todo and n_jobs > 1:
            with mp.get_context("spawn").Pool(min(n_jobs, len(todo))) as pool:
                for index, result in pool.imap_unordered(partial(_call, func), todo):
                    _finish(index, result)
        else:
            for index, batch in todo:
                _finish(index, func(batch))
    finally:
        bar.close()
    run.wall_seconds = time.perf_counter() - t0
    log(f"{desc}: done in {run.wall_seconds:.1f} s ({done} batches computed, {run.loaded} loaded)")
    return [results[i] for i in range(len(batches))], run


def source_hashes(*paths: str | os.PathLike) -> dict[str, str]:
    """SHA-256 of source files the checkpointed results depend on (a changed file gives new keys).

    Parameters
    ----------
    *paths : path-like
        Files; relative paths are taken under the ``epsaudit/build`` folder.

    Returns
    -------
    dict
        ``file name -> SHA-256 (hex)``.

    Raises
    ------
    FileNotFoundError
        A file that does not exist.

    Examples
    --------
    >>> sorted(source_hashes("checkpoints.py"))
    ['checkpoints.py']
    """
    here = Path(__file__).resolve().parent
    return {Path(p).name: hashlib.sha256((here / p).read_bytes()).hexdigest() for p in paths}


class BuildCheckpoints:
    """The checkpoint folder of one build (``<root>/<name>-<key[:16]>``): one :class:`BatchStore` per
    stage, keys from the build's settings and code, and an interruption count shared by the stages.

    Parameters
    ----------
    name : str
        The builder (``conditions``, ``corpora``).
    settings, sources : mapping
        Every setting the results depend on (not the worker count or progress bars); :func:`source_hashes`
        of the code they depend on.
    root : path-like, optional
        Default :data:`DEFAULT_ROOT`.
    n_jobs : int
        Local worker processes (:func:`run_batches`).
    progress : bool
    interrupt_after : int, optional
        Raise :class:`BuildInterrupted` after this many batches computed in this session, over all stages.

    Examples
    --------
    >>> import tempfile
    >>> build = BuildCheckpoints("demo", {"seed": 0}, {}, tempfile.mkdtemp(), progress=False)
    >>> build.run("double", lambda b: [2 * x for x in b], [[1, 2], [3]], "demo")
    [[2, 4], [6]]
    >>> build.stages["double"]["batches"], build.resumed
    (2, False)
    >>> build.clear()
    """

    def __init__(self, name: str, settings: Any, sources: Any, root: str | os.PathLike | None = None, *,
                 n_jobs: int = 1, progress: bool = True, interrupt_after: int | None = None) -> None:
        self.key = fingerprint(settings, sources)
        self.folder = Path(root if root is not None else DEFAULT_ROOT) / f"{name}-{self.key[:16]}"
        self.n_jobs, self.progress, self.interrupt_after = n_jobs, progress, interrupt_after
        self.stages: dict[str, dict[str, Any]] = {}
        self.computed = 0

    def run(self, stage: str, func: Callable[[Any], Any], batches: Sequence[Sequence], desc: str, *,
            count: Callable[[Sequence], int] = len) -> list:
        """:func:`run_batches` of one stage; its :meth:`StageRun.record` goes to :attr:`stages`.

        Raises
        ------
        BuildInterrupted
            Once ``interrupt_after`` batches have been computed in this session.
        """
        remaining = None if self.interrupt_after is None else self.interrupt_after - self.computed
        if remaining is not None and remaining <= 0:
            raise BuildInterrupted(f"{desc}: interrupted before the stage (interrupt_after)")
        results, run = run_batches(func, batches, BatchStore(self.folder, stage), fingerprint(self.key, stage),
                                   n_jobs=self.n_jobs, desc=desc, progress=self.progress, count=count,
                                   interrupt_after=remaining)
        self.computed += run.batches - run.loaded
        self.stages[stage] = run.record()
        return results

    @property
    def resumed(self) -> bool:
        """Whether any stage loaded batches saved by an earlier, interrupted session."""
        return any(r["batches_from_checkpoints"] for r in self.stages.values())

    def clear(self) -> None:
        """Delete the checkpoint files of every stage run (after the final files are written), and the
        build's folder and the root when that leaves them empty."""
        for stage in self.stages:
            BatchStore(self.folder, stage).clear()
        for folder in (self.folder, self.folder.parent):
            try:
                folder.rmdir()
            except OSError:  # not empty (another build's checkpoints) or already gone
                pass


def add_build_options(parser: Any) -> None:
    """The options every face builder's command line shares: ``--no-progress``, ``--checkpoint-dir``,
    ``--keep-checkpoints`` and ``--scheduler`` (an :class:`argparse.ArgumentParser`)."""
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument("--checkpoint-dir", default=None,
                        help=f"root of the resumable batch checkpoints (default {DEFAULT_ROOT}); rerun the same "
                             "command after an interruption to resume")
    parser.add_argument("--keep-checkpoints", action="store_true", help="keep the checkpoints after a complete build")
    parser.add_argument("--scheduler", metavar="ADDRESS", default=None,
                        help="run the batches on the workers of a Dask scheduler (default $EPSAUDIT_SCHEDULER when "
                             "set); the workers need the [faces] extra and the images at the same path")
