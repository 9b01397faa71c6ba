"""Progress bars for long loops over identity pairs (tqdm)."""

from __future__ import annotations

from typing import Iterable, TypeVar

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
