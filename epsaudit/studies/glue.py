"""What a chapter glues for its prose: numbers and sentences, glued without being shown where glued.

Every page's Markdown quotes the numbers of its run with myst-nb's ``{glue:text}`` and pastes its
number-dependent sentences with ``{glue:md}``; these are the two ways a page glues them (imported
from myst-nb when called, so the studies import without the book's extra).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["MARKDOWN_ENDS", "glue_markdown", "glue_numbers", "glue_values"]

#: Keys whose string values are Markdown sentences (pasted with ``{glue:md}``) in :func:`glue_values`.
MARKDOWN_ENDS: tuple[str, ...] = ("_phrase", "_sentence", "_reading", "_summary")


def glue_numbers(values: Mapping[str, Any]) -> None:
    """Glue every value under its key, as it is (numbers and plain text for ``{glue:text}``).

    Parameters
    ----------
    values : mapping str -> value

    Examples
    --------
    >>> glue_numbers({})  # nothing to glue
    """
    from myst_nb import glue

    for key, value in values.items():
        glue(key, value, display=False)


def glue_markdown(values: Mapping[str, str]) -> None:
    """Glue every value as Markdown (sentence parts pasted with ``{glue:md}``).

    Parameters
    ----------
    values : mapping str -> str

    Examples
    --------
    >>> glue_markdown({})
    """
    from IPython.display import Markdown
    from myst_nb import glue

    for key, value in values.items():
        glue(key, Markdown(value), display=False)


def glue_values(values: Mapping[str, Any], markdown_ends: tuple[str, ...] | None = MARKDOWN_ENDS) -> None:
    """Glue every value: strings whose key ends with one of ``markdown_ends`` as Markdown, the rest as they are.

    Parameters
    ----------
    values : mapping str -> value
    markdown_ends : tuple of str, or None
        ``None``: every string value is Markdown (a page that pastes all its sentences with ``{glue:md}``).

    Examples
    --------
    >>> glue_values({})
    """
    def is_markdown(key: str, value: Any) -> bool:
        return isinstance(value, str) and (markdown_ends is None or key.endswith(markdown_ends))

    glue_markdown({k: v for k, v in values.items() if is_markdown(k, v)})
    glue_numbers({k: v for k, v in values.items() if not is_markdown(k, v)})
