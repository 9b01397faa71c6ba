"""Seconds per stage of a chapter run, for the chapters' timing tables and first screens."""

from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Iterator

import pandas as pd

__all__ = ["Stopwatch"]


class Stopwatch:
    """Seconds per stage of a chapter, in the order the stages first ran (a stage timed twice adds up),
    timed with ``with clock("stage"):``, between :meth:`mark` and :meth:`lap`, or recorded with :meth:`add`.

    Examples
    --------
    >>> clock = Stopwatch()
    >>> with clock("load"):
    ...     pass
    >>> clock.add("fit", 2.0)
    >>> list(clock.seconds), clock.seconds["fit"]
    (['load', 'fit'], 2.0)
    >>> clock.table()["stage"].tolist()
    ['load', 'fit', 'total']
    """

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.seconds: dict[str, float] = {}
        self._mark = self.started

    @contextmanager
    def __call__(self, stage: str) -> Iterator[None]:
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.add(stage, time.perf_counter() - t0)

    def add(self, stage: str, seconds: float) -> None:
        """Add ``seconds`` to ``stage`` (timed elsewhere)."""
        self.seconds[stage] = self.seconds.get(stage, 0.0) + float(seconds)

    def mark(self) -> None:
        """Start timing the next stage now (its seconds are recorded by :meth:`lap`)."""
        self._mark = time.perf_counter()

    def lap(self, stage: str) -> float:
        """Record (and return) the seconds since the last :meth:`mark` or :meth:`lap` for ``stage``, and start again."""
        now = time.perf_counter()
        seconds = now - self._mark
        self.add(stage, seconds)
        self._mark = now
        return seconds

    @property
    def elapsed(self) -> float:
        """Seconds since the stopwatch was made."""
        return time.perf_counter() - self.started

    def table(self) -> pd.DataFrame:
        """``stage``, ``seconds`` (wall clock, rounded to 0.1 s) per stage and for the whole run (``total``)."""
        rows = [*self.seconds.items(), ("total", self.elapsed)]
        return pd.DataFrame({"stage": [r[0] for r in rows], "seconds": [round(r[1], 1) for r in rows]})
