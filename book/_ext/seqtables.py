"""The methods chapter's anytime-valid tables and numbers, computed from the library at build time.

``make_sequential_tables`` (beside this file) computes them from :mod:`epsaudit.bounds` (the
negative-control simulation is seeded; about 10 s); this extension puts them into the page, so the
page always shows what the current code computes and nothing generated is committed:

* the ``anytime-valid-table`` directive: a ``csv-table`` whose rows are computed; its argument
  names the table (``cost``: bounds from zero errors at fixed sizes; ``rows``: rows per side to
  certify epsilon 1-5), its content is the caption, and it takes ``name``, ``widths`` and
  ``align``::

    ```{anytime-valid-table} cost
    :name: tab-anytime-cost

    Caption.
    ```

* the ``anytime-valid-number`` role: one computed number by name
  (``{anytime-valid-number}`peek-fixed```; the names: ``make_sequential_tables.numbers``).
"""

from __future__ import annotations

import csv
import io

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.parsers.rst.directives.tables import CSVTable
from docutils.statemachine import StringList

import make_sequential_tables


class AnytimeValidTable(CSVTable):
    """A ``csv-table`` of :func:`make_sequential_tables.table` (argument: the table's name; content: caption)."""

    required_arguments = 1
    optional_arguments = 0
    final_argument_whitespace = False
    has_content = True
    option_spec = {"name": directives.unchanged, "widths": directives.value_or(("auto",), directives.positive_int_list),
                   "align": CSVTable.option_spec["align"], "class": directives.class_option}

    def run(self):
        which = self.arguments[0]
        caption = " ".join(line.strip() for line in self.content).strip()
        buffer = io.StringIO()
        csv.writer(buffer, lineterminator="\n").writerows(make_sequential_tables.table(which))
        self.arguments = [caption] if caption else []
        self.content = StringList(buffer.getvalue().splitlines(), source=f"anytime-valid-table {which}")
        self.options["header-rows"] = 1
        return super().run()


def number_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """``{anytime-valid-number}`key```: the computed number ``key`` as text."""
    values = make_sequential_tables.numbers()
    key = text.strip()
    if key not in values:
        msg = inliner.reporter.error(f"anytime-valid-number: unknown name {key!r}; known: {sorted(values)}", line=lineno)
        return [inliner.problematic(rawtext, rawtext, msg)], [msg]
    return [nodes.Text(values[key])], []


def setup(app):
    app.add_directive("anytime-valid-table", AnytimeValidTable)
    app.add_role("anytime-valid-number", number_role)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
