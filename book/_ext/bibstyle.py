"""Bibliography labels that read like the citations: "[Balle and Wang 2018]", "[Picture the Epsilon]".

A pybtex label style registered for sphinxcontrib-bibtex: an entry's ``shorthand`` field if it has
one (an unpublished paper known by its title), else the authors' last names and the year. The
book uses it with ``bibtex_reference_style: label``, so a citation and its bibliography entry
carry the same label, and nothing is numbered.
"""

from __future__ import annotations

from pybtex.plugin import register_plugin
from pybtex.style.formatting.unsrt import Style as UnsrtStyle
from pybtex.style.labels import BaseLabelStyle


def _names(entry) -> str:
    people = entry.persons.get("author") or entry.persons.get("editor") or []
    last = [" ".join(p.last_names).replace("{", "").replace("}", "") for p in people]
    if not last:
        return entry.fields.get("title", entry.key)
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
                yield entry.fields["shorthand"]
            else:
                year = entry.fields.get("year", "")
                yield f"{_names(entry)} {year}".strip()


class BookStyle(UnsrtStyle):
    """Entries sorted by author and year, labelled by :class:`ShorthandOrAuthorYear`."""

    default_label_style = "shorthand_author_year"
    default_sorting_style = "author_year_title"


def setup(app):
    register_plugin("pybtex.style.labels", "shorthand_author_year", ShorthandOrAuthorYear)
    register_plugin("pybtex.style.formatting", "epsaudit_book", BookStyle)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
