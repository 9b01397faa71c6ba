"""Bibliography labels that read like the citations: "[Balle and Wang 2018]", "[Picture the Epsilon]".

A pybtex label style registered for sphinxcontrib-bibtex: an entry's ``shorthand`` field if it has
one (an unpublished paper known by its title), else the authors' last names and the year, with
LaTeX accents decoded ("González", not "Gonz\\'alez"). The book uses it with
``bibtex_reference_style: label``, so a citation and its bibliography entry carry the same label,
and nothing is numbered; the list is sorted by author, year and title, an entry without authors
by its shorthand, so it reads alphabetically by label.
"""

from __future__ import annotations

from pybtex.plugin import register_plugin
from pybtex.richtext import Text
from pybtex.style.formatting.unsrt import Style as UnsrtStyle
from pybtex.style.labels import BaseLabelStyle
from pybtex.style.sorting.author_year_title import SortingStyle as AuthorYearTitle


def _plain(latex: str) -> str:
    """BibTeX text as a reader sees it: ``Gonz{\\'a}lez`` -> ``González``, braces dropped."""
    return Text.from_latex(latex).render_as("text")


def _names(entry) -> str:
    people = entry.persons.get("author") or entry.persons.get("editor") or []
    last = [_plain(" ".join(p.last_names)) for p in people]
    if not last:
        return _plain(entry.fields.get("title", entry.key))
    if len(last) == 1:
        return last[0]
    if len(last) == 2:
        return f"{last[0]} and {last[1]}"
    return f"{last[0]} et al."


class ShorthandOrAuthorYear(BaseLabelStyle):
    """``shorthand`` if given, else "Author Year" (two authors joined by "and", more as "et al.")."""

    def format_labels(self, sorted_entries):
        for entry in sorted_entries:
            if "shorthand" in entry.fields:
                yield _plain(entry.fields["shorthand"])
            else:
                year = entry.fields.get("year", "")
                yield f"{_names(entry)} {year}".strip()


class ShorthandAuthorYearTitle(AuthorYearTitle):
    """Author, year and title; an entry without authors sorts by its ``shorthand`` (its label), so
    the list reads alphabetically by label ("Picture the Epsilon" among the P's)."""

    def sorting_key(self, entry):
        author, year, title = super().sorting_key(entry)
        if not author and "shorthand" in entry.fields:
            author = _plain(entry.fields["shorthand"]).lower()
        return (author, year, title)


class BookStyle(UnsrtStyle):
    """Entries sorted by :class:`ShorthandAuthorYearTitle`, labelled by :class:`ShorthandOrAuthorYear`."""

    default_label_style = "shorthand_author_year"
    default_sorting_style = "shorthand_author_year_title"


def setup(app):
    register_plugin("pybtex.style.labels", "shorthand_author_year", ShorthandOrAuthorYear)
    register_plugin("pybtex.style.sorting", "shorthand_author_year_title", ShorthandAuthorYearTitle)
    register_plugin("pybtex.style.formatting", "epsaudit_book", BookStyle)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
