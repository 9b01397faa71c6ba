"""Progress bars for long loops over identity pairs (tqdm)."""

from __future__ import annotations

from typing import Iterable, TypeVar

T = TypeVar("T")


def progress_bar(items: Iterable[T], enabled: bool, desc: str, total: int | None = None) -> Iterable[T]:
    """Wrap ``items`` in a tqdm bar labelled ``desc`` when ``enabled``; otherwise return them unchanged."""
    if not enabled:
        return items
    from tqdm import tqdm  # text bars: no ipywidgets needed; the book hides stderr

    return tqdm(items, desc=desc, total=total)
