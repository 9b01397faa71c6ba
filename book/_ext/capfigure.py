"""The ``certifiable-cap-figure`` directive: the methods chapter's sample-size figure, drawn at build time.

At the start of every build (``builder-inited``) ``make_cap_figure.write`` (beside this file) draws
the figure from the library's :func:`epsaudit.bounds.certifiable_cap` into the build folder
(``<build>/generated/certifiable_cap.png``, next to the doctrees; never into the sources), so the
figure always shows what the current code computes and nothing generated is committed. The
directive is a ``figure`` whose image is that file; it takes the figure's options (``alt``,
``name``, ``width``, ...) and its caption as content::

    ```{certifiable-cap-figure}
    :alt: ...
    :name: fig-certifiable-cap

    Caption.
    ```
"""

from __future__ import annotations

import os
from pathlib import Path

from sphinx.directives.patches import Figure
from sphinx.util import logging

import make_cap_figure

logger = logging.getLogger(__name__)
FILE_NAME = "certifiable_cap.png"


def _figure_path(app) -> Path:
    return Path(app.doctreedir).parent / "generated" / FILE_NAME


def draw(app) -> None:
    """Write the figure before any page is read (the ``figure`` directive needs the file)."""
    path = make_cap_figure.write(_figure_path(app))
    logger.info(f"certifiable-cap figure: {path}")


class CertifiableCapFigure(Figure):
    """A ``figure`` of the build's certifiable-cap PNG (no argument; caption as content)."""

    required_arguments = 0
    optional_arguments = 0

    def run(self):
        env = self.state.document.settings.env
        here = Path(env.srcdir, env.docname).parent
        self.arguments = [Path(os.path.relpath(_figure_path(env.app), here)).as_posix()]
        return super().run()


def setup(app):
    app.connect("builder-inited", draw)
    app.add_directive("certifiable-cap-figure", CertifiableCapFigure)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
