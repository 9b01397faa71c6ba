"""What every chapter shares: checked claims, the papers' reported values, one number format, one table style.

A chapter's prose is written for the book's profile; where a sentence depends on the run, the cell
below it checks it with :func:`claim`: a contradicted claim raises :class:`ClaimError` when the book
is built (``make book`` sets ``EPSAUDIT_CLAIMS=strict``), and elsewhere shows a visible note naming the
claim and its numbers. The papers' values are data, ``data/papers/<name>.csv``, read by
:func:`reported`; tables are shown with :func:`show` (:func:`number`'s format, headers that wrap).
"""

from __future__ import annotations

import math
import os
from numbers import Integral, Real
from pathlib import Path
from typing import Any

__all__ = ["ClaimError", "claim", "claims_are_strict", "reported", "number", "show", "PAPERS_FOLDER"]

#: The papers' reported values, one CSV per reported table or figure.
PAPERS_FOLDER: Path = Path(__file__).resolve().parents[2] / "data" / "papers"


class ClaimError(AssertionError):
    """A sentence of the book that the run contradicts (raised only when claims are strict)."""


def claims_are_strict() -> bool:
    """Whether a contradicted claim fails the run: ``EPSAUDIT_CLAIMS=strict`` (set by ``make book`` at
    the full profile).

    Examples
    --------
    >>> isinstance(claims_are_strict(), bool)
    True
    """
    return os.environ.get("EPSAUDIT_CLAIMS", "").strip().lower() == "strict"


def number(value: Any, digits: int = 2) -> str:
    """The book's one number format: ``digits`` decimals for floats, thousands separators for integers,
    ``"–"`` for a missing value.

    Parameters
    ----------
    value : int, float, None or any
    digits : int, default=2

    Returns
    -------
    str

    Examples
    --------
    >>> number(4.19421), number(12345), number(float("nan")), number(None), number(0.5, 3)
    ('4.19', '12,345', '–', '–', '0.500')
    >>> import pandas as pd
    >>> number(pd.NA)
    '–'
    """
    if value is None or type(value).__name__ == "NAType":  # None, pandas.NA
        return "–"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, Real):
        if isinstance(value, Integral):
            return f"{int(value):,}"
        if math.isnan(float(value)):
            return "–"
        return f"{float(value):,.{digits}f}"
    return str(value)


def claim(statement: str, holds: bool, **numbers: Any) -> bool:
    """Check one data-dependent claim of the page's prose against this run.

    Parameters
    ----------
    statement : str
        The claim as the prose makes it, in a few words ("the exact score certifies about 4.2").
    holds : bool
        Whether this run bears it out.
    **numbers
        The numbers the claim rests on, shown when it fails (``certificate=4.07``).

    Returns
    -------
    bool
        ``holds``.

    Raises
    ------
    ClaimError
        If the claim does not hold and :func:`claims_are_strict` is true (the book's build).

    Examples
    --------
    >>> claim("two is more than one", 2 > 1, two=2)
    True
    """
    holds = bool(holds)
    if holds:
        return True
    values = ", ".join(f"{k} = {number(v, 3)}" for k, v in numbers.items())
    if claims_are_strict():
        raise ClaimError(f"the book says '{statement}', but this run has {values or 'no numbers given'}")
    from IPython.display import Markdown, display

    display(Markdown(f"**Note: this run does not bear out the text above.** The claim \"{statement}\" "
                     f"does not hold here ({values}). The text was written for the book's own run "
                     f"(full profile, default parameters)."))
    return False


def reported(name: str):
    """One table or figure of the papers as their authors reported it.

    Parameters
    ----------
    name : str
        The file stem under ``data/papers/``, e.g. ``"picture_table4"`` (*Picture the Epsilon*,
        Table 4); ``data/papers/README.md`` lists them with their source.

    Returns
    -------
    pandas.DataFrame
        The values as the paper prints them (columns as in the CSV).

    Raises
    ------
    FileNotFoundError
        If no such file is committed (the message lists the ones that are).

    Examples
    --------
    >>> sorted(p.stem for p in PAPERS_FOLDER.glob("*.csv")) == sorted(
    ...     p.stem for p in PAPERS_FOLDER.glob("*.csv"))
    True
    """
    import pandas as pd

    path = PAPERS_FOLDER / f"{name}.csv"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in PAPERS_FOLDER.glob("*.csv"))) or "none"
        raise FileNotFoundError(f"{path}: no such reported table; committed: {known}")
    return pd.read_csv(path)


def show(frame, digits: int | dict[str, int] = 2, caption: str | None = None, hide_index: bool = False):
    """The book's one table style: numbers in :func:`number`'s format, headers that wrap, an optional caption.

    Parameters
    ----------
    frame : pandas.DataFrame
    digits : int or dict column -> int, default=2
        Decimals of float columns (a dict sets them per column; others get 2).
    caption : str, optional
        Shown above the table.
    hide_index : bool, default=False

    Returns
    -------
    pandas.io.formats.style.Styler

    Examples
    --------
    >>> import pandas as pd
    >>> html = show(pd.DataFrame({"epsilon": [1.23456], "n": [30]}), digits=3).to_html()
    >>> "1.235" in html and "30" in html
    True
    """
    per_column = digits if isinstance(digits, dict) else {}
    default = 2 if isinstance(digits, dict) else digits
    formats = {c: (lambda v, d=per_column.get(c, default): number(v, d)) for c in frame.columns}
    style = frame.style.format(formats).set_table_attributes('class="epsaudit-table"')
    style = style.set_table_styles([{"selector": "th", "props": "white-space: normal; max-width: 9em;"}])
    if hide_index:
        style = style.hide(axis="index")
    return style.set_caption(caption) if caption else style
