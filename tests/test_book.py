"""End-to-end check of the book: execute the notebooks, build the HTML, look at it in a browser.

The repository's book sources (``_config.yml``, ``_toc.yml``, ``book/``) are copied to a temporary
directory; every ``notebooks/*.py`` is executed there by papermill with ``-p profile smoke``; the
copy is built with ``jupyter-book build -W -n --keep-going --all`` (warnings are errors); and each
page of the table of contents is opened in headless Chromium in a window 1280 px wide, as a reader
sees it, to check that MathJax rendered, that figures are present, that nothing is cut off on the
right, and that a screenshot of the page is not blank. Nothing in the working tree is written.

Cut-off content is found by the book's own script ``book/_static/overflow_check.js``: after
MathJax has typeset the page it marks every display equation, table and code block wider than the
box that holds it (or reaching past the article's right edge, or an equation showing a vertical
scrollbar) with ``data-epsaudit-overflow`` and a readable ``data-epsaudit-overflow-label``, and
records on ``<body>`` that it ran; the test reads the marks from Chromium's ``--dump-dom``.
Equations and tables must fit on every page; code blocks must fit on the book's own Markdown
pages (a notebook's code cells and printed output are listed but not failed).

Chromium is Debian's ``/usr/bin/chromium`` (``.ci/run`` installs it). Without it the browser checks
are skipped, except under CI (``CI`` set), where they fail.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlparse

import jupytext
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK_DIR = ROOT / "notebooks"
CHROMIUM = Path(os.environ.get("EPSAUDIT_CHROMIUM", "/usr/bin/chromium"))
EXECUTED_PREFIX = "book/executed/"
METHODS_PAGE = "book/methods"
#: Window of the browser checks: a laptop screen, the width the pages are written for.
WINDOW_WIDTH, WINDOW_HEIGHT = 1280, 1600
#: What must fit the reading column: on every page, and also on the book's own Markdown pages.
MUST_FIT = frozenset({"equation", "table"})
MUST_FIT_MARKDOWN = MUST_FIT | {"code"}
#: A screenshot is blank when less than this fraction of the content area (right of the sidebar)
#: is ink (darker than near-white).
MIN_INK_FRACTION = 0.005
SIDEBAR_WIDTH = 300
#: Query that makes book/_static/overflow_check.js open every dropdown, solution and toggled block
#: before it measures: what is cut off inside a closed dropdown is cut off for the reader who opens it.
OPEN_ALL = "?epsaudit=open"
#: Smallest text a figure may show on the page, in CSS px (its smallest font at the PNG's dpi, scaled
#: to the width the page gives the image).
MIN_FIGURE_TEXT_PX = 9.0
#: Seconds one smoke-profile notebook may take before the test fails (a hang must not stall CI).
NOTEBOOK_TIMEOUT = 900


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def _toc_files(toc: dict) -> list[str]:
    """Document names of a jb-book toc, in reading order."""
    files = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                files.append(entry["file"])
            walk(entry.get("sections"))
            walk(entry.get("chapters"))

    walk(toc.get("chapters"))
    for part in toc.get("parts", []) or []:
        walk(part.get("chapters"))
    return files


def _drop_from_toc(toc: dict, names: set[str]) -> dict:
    def prune(entries):
        kept = []
        for entry in entries or []:
            if entry.get("file") in names:
                continue
            for key in ("sections", "chapters"):
                if key in entry:
                    entry[key] = prune(entry[key])
            kept.append(entry)
        return kept

    toc = json.loads(json.dumps(toc))
    if "chapters" in toc:
        toc["chapters"] = prune(toc["chapters"])
    for part in toc.get("parts", []) or []:
        part["chapters"] = prune(part.get("chapters"))
    return toc


class _PageParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[str] = []
        self.images: list[str] = []
        self.mjx_containers = 0
        self.mjx_errors = 0
        self.layout: str | None = None  # <body data-epsaudit-layout>: the overflow check ran
        self.overflowing: list[str] = []  # data-epsaudit-overflow-label of each marked element
        self.image_scales: list[tuple[str, float]] = []  # (src, displayed width / natural width)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "script" and attrs.get("src"):
            self.scripts.append(attrs["src"])
        elif tag == "img":
            self.images.append(attrs.get("src") or "")
        elif tag == "mjx-container":
            self.mjx_containers += 1
        elif tag == "mjx-merror":
            self.mjx_errors += 1
        if tag == "img" and "data-epsaudit-image-scale" in attrs:
            self.image_scales.append((attrs.get("src") or "", float(attrs["data-epsaudit-image-scale"])))
        if tag == "body" and "data-epsaudit-layout" in attrs:
            self.layout = attrs["data-epsaudit-layout"]
        if "data-epsaudit-overflow" in attrs:
            self.overflowing.append(
                attrs.get("data-epsaudit-overflow-label") or f"{tag}: {attrs['data-epsaudit-overflow']}"
            )


class _FigureParser(HTMLParser):
    """Images outside a ``<figure>``, and figures without a numbered ``<figcaption>``, of one page."""

    def __init__(self) -> None:
        super().__init__()
        self.depth = 0  # open <figure> elements
        self.captioned: list[bool] = []  # per open figure: a caption number was seen
        self.in_caption = 0
        self.bare_images: list[str] = []
        self.uncaptioned = 0
        self.figures = 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "figure":
            self.depth += 1
            self.captioned.append(False)
        elif tag == "figcaption" and self.depth:
            self.in_caption += 1
        elif tag == "span" and self.in_caption and "caption-number" in (attrs.get("class") or ""):
            self.captioned[-1] = True
        elif tag == "img" and not self.depth:
            self.bare_images.append((attrs.get("src") or "")[:80])

    def handle_endtag(self, tag):
        if tag == "figcaption" and self.in_caption:
            self.in_caption -= 1
        elif tag == "figure" and self.depth:
            self.depth -= 1
            self.figures += 1
            self.uncaptioned += not self.captioned.pop()


def _parse(html: str) -> _PageParser:
    parser = _PageParser()
    parser.feed(html)
    return parser


def _is_remote(src: str) -> bool:
    return urlparse(src).scheme in ("http", "https") or src.startswith("//")


# ---------------------------------------------------------------------------------------------
# Fixtures


def _write_kernelspec(root: Path) -> tuple[str, dict]:
    """A kernelspec running *this* interpreter, visible through JUPYTER_PATH only."""
    name = "epsaudit-book-test"
    spec_dir = root / "kernels" / name
    spec_dir.mkdir(parents=True)
    (spec_dir / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "epsaudit (book test)",
                "language": "python",
            }
        )
    )
    env = dict(os.environ)
    env["JUPYTER_PATH"] = os.pathsep.join(filter(None, [str(root), env.get("JUPYTER_PATH")]))
    env.pop("MPLBACKEND", None)  # a non-interactive backend would hide the inline figures
    return name, env


@pytest.fixture(scope="module")
def built_book(tmp_path_factory):
    """Execute the notebooks (profile smoke) and build a copy of the book; return its layout."""
    tmp = tmp_path_factory.mktemp("book")
    src = tmp / "src"
    src.mkdir()
    shutil.copy2(ROOT / "_config.yml", src / "_config.yml")
    shutil.copytree(
        ROOT / "book",
        src / "book",
        ignore=shutil.ignore_patterns("executed", ".ipynb_checkpoints", "__pycache__"),
    )
    executed = src / "book" / "executed"
    executed.mkdir()

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    notebooks = sorted(NOTEBOOK_DIR.glob("*.py"))
    wanted = {f for f in _toc_files(toc) if f.startswith(EXECUTED_PREFIX)}
    available = {EXECUTED_PREFIX + py.stem for py in notebooks}
    missing = wanted - available  # chapters whose notebook has not been written yet
    toc = _drop_from_toc(toc, missing)
    (src / "_toc.yml").write_text(yaml.safe_dump(toc, sort_keys=False))

    kernel, env = _write_kernelspec(tmp / "jupyter")
    # Figures saved by the chapters (studies.figures.save_figure) go into the copy, where the chapters'
    # download links (../../_build/figures/...) look for them, not into the working tree.
    env["EPSAUDIT_FIGURE_DIR"] = str(src / "_build" / "figures")
    scratch = tmp / "scratch"
    scratch.mkdir()
    for py in notebooks:
        if EXECUTED_PREFIX + py.stem not in wanted:
            continue  # reported by test_every_notebook_is_a_chapter
        unexecuted = scratch / f"{py.stem}.ipynb"
        jupytext.write(jupytext.read(py), unexecuted, fmt="ipynb")
        run = subprocess.run(
            [sys.executable, "-m", "papermill", "--kernel", kernel, "--cwd", str(NOTEBOOK_DIR),
             "--no-progress-bar", "-p", "profile", "smoke",
             str(unexecuted), str(executed / f"{py.stem}.ipynb")],
            env=env, capture_output=True, text=True, timeout=NOTEBOOK_TIMEOUT,
        )
        assert run.returncode == 0, (
            f"papermill failed on {py.name} (profile smoke):\n{run.stdout[-5000:]}\n{run.stderr[-5000:]}"
        )

    out = tmp / "out"
    build = subprocess.run(
        [sys.executable, "-c", "import sys; from jupyter_book.cli.main import main; sys.exit(main())",
         "build", str(src), "--path-output", str(out), "-W", "-n", "--keep-going", "--all"],
        env=env, capture_output=True, text=True,
    )
    html = out / "_build" / "html"
    pages = {name: html / f"{name}.html" for name in _toc_files(toc)}
    return {
        "build": build,
        "html": html,
        "pages": pages,
        "missing": sorted(missing),
        "notebook_pages": sorted(n for n in pages if n.startswith(EXECUTED_PREFIX)),
        "tmp": tmp,
    }


@pytest.fixture(scope="module")
def chromium() -> Path:
    if CHROMIUM.exists():
        return CHROMIUM
    message = f"headless Chromium not found at {CHROMIUM} (apt-get install chromium)"
    if _in_ci():
        pytest.fail(message + "; CI is set, so the browser checks may not be skipped")
    pytest.skip(message)


def _chromium_args(chromium: Path, profile_dir: Path) -> list[str]:
    """Headless Chromium, offline, in a window of :data:`WINDOW_WIDTH` px, scripts given 10 s."""
    return [str(chromium), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
            "--no-first-run", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", f"--user-data-dir={profile_dir}", "--virtual-time-budget=10000",
            f"--window-size={WINDOW_WIDTH},{WINDOW_HEIGHT}"]


def _dump_dom(chromium: Path, page: Path, profile_dir: Path) -> str:
    run = subprocess.run(
        _chromium_args(chromium, profile_dir) + ["--dump-dom", page.as_uri() + OPEN_ALL],
        capture_output=True, text=True, timeout=180,
    )
    assert run.returncode == 0, f"chromium failed on {page}:\n{run.stderr[-3000:]}"
    assert "<html" in run.stdout.lower(), f"chromium returned no DOM for {page}"
    return run.stdout


@pytest.fixture(scope="module")
def rendered(built_book, chromium) -> dict[str, str]:
    """DOM of each toc page after Chromium ran its scripts (MathJax included)."""
    if built_book["build"].returncode != 0:
        pytest.fail("the book did not build; see test_book_builds")
    profile_dir = built_book["tmp"] / "chromium-profile"
    return {
        name: _dump_dom(chromium, path, profile_dir) for name, path in built_book["pages"].items()
    }


def _screenshot(chromium: Path, page: Path, profile_dir: Path, out: Path) -> Path:
    """The first screen of ``page`` as a reader sees it (scrollbars hidden), written to ``out``."""
    run = subprocess.run(
        _chromium_args(chromium, profile_dir) + ["--hide-scrollbars", f"--screenshot={out}", page.as_uri() + OPEN_ALL],
        capture_output=True, text=True, timeout=180,
    )
    assert run.returncode == 0 and out.is_file(), f"chromium took no screenshot of {page}:\n{run.stderr[-3000:]}"
    return out


@pytest.fixture(scope="module")
def screenshots(built_book, chromium) -> dict[str, Path]:
    """A 1280-px screenshot of the first screen of each toc page (kept in the test's folder)."""
    if built_book["build"].returncode != 0:
        pytest.fail("the book did not build; see test_book_builds")
    folder = built_book["tmp"] / "screenshots"
    folder.mkdir(exist_ok=True)
    profile_dir = built_book["tmp"] / "chromium-profile-shots"
    return {
        name: _screenshot(chromium, path, profile_dir, folder / f"{name.replace('/', '_')}.png")
        for name, path in built_book["pages"].items()
    }


def _ink_fraction(png: Path) -> float:
    """Fraction of the content area (right of the sidebar) darker than near-white."""
    from PIL import Image

    with Image.open(png) as image:
        grey = image.convert("L")
        content = grey.crop((SIDEBAR_WIDTH, 0, grey.width, grey.height))
        histogram = content.histogram()
    return sum(histogram[:230]) / max(1, sum(histogram))


# ---------------------------------------------------------------------------------------------
# Tests


def test_every_notebook_is_a_chapter() -> None:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    chapters = set(_toc_files(toc))
    absent = [
        py.name for py in sorted(NOTEBOOK_DIR.glob("*.py"))
        if EXECUTED_PREFIX + py.stem not in chapters
    ]
    assert not absent, f"notebooks not in _toc.yml as {EXECUTED_PREFIX}<name>: {absent}"


@pytest.mark.slow
def test_book_builds(built_book) -> None:
    build = built_book["build"]
    assert build.returncode == 0, (
        "jupyter-book build -W -n --keep-going failed:\n"
        f"{build.stdout[-8000:]}\n{build.stderr[-8000:]}"
    )
    for name, path in built_book["pages"].items():
        assert path.is_file() and path.stat().st_size > 0, f"page {name} was not written"


@pytest.mark.slow
def test_mathjax_is_served_locally(built_book) -> None:
    html = built_book["html"]
    methods = _parse(built_book["pages"][METHODS_PAGE].read_text(encoding="utf-8"))
    mathjax = [s for s in methods.scripts if "mathjax" in s.lower()]
    assert mathjax, "the methods page loads no MathJax script"
    for src in mathjax:
        assert not _is_remote(src), f"MathJax is loaded from the network: {src}"
        local = (built_book["pages"][METHODS_PAGE].parent / unquote(urlparse(src).path)).resolve()
        assert local.is_file() and local.stat().st_size > 0, f"MathJax script {src} is missing"
    for page in html.rglob("*.html"):
        for src in _parse(page.read_text(encoding="utf-8")).scripts:
            if "mathjax" in src.lower():
                assert not _is_remote(src), f"{page.relative_to(html)} loads MathJax from {src}"


@pytest.mark.slow
def test_no_remote_scripts(built_book) -> None:
    html = built_book["html"]
    remote = {
        f"{page.relative_to(html)}: {src}"
        for page in html.rglob("*.html")
        for src in _parse(page.read_text(encoding="utf-8")).scripts
        if _is_remote(src)
    }
    assert not remote, f"pages load scripts from the network: {sorted(remote)}"


@pytest.mark.slow
def test_every_page_renders(rendered) -> None:
    for name, dom in rendered.items():
        page = _parse(dom)
        assert page.mjx_errors == 0, f"{name}: MathJax reported {page.mjx_errors} errors"
        assert "<main" in dom or "<article" in dom, f"{name}: no main content in the rendered DOM"


@pytest.mark.slow
def test_methods_page_has_rendered_mathjax(rendered) -> None:
    page = _parse(rendered[METHODS_PAGE])
    assert page.mjx_containers > 0, "MathJax did not typeset the methods page (no mjx-container)"


@pytest.mark.slow
def test_notebook_pages_show_figures(built_book, rendered) -> None:
    if not built_book["notebook_pages"]:
        pytest.skip(
            "no executed-notebook chapters to check; toc chapters without a notebook yet: "
            f"{built_book['missing']}"
        )
    for name in built_book["notebook_pages"]:
        page_path = built_book["pages"][name]
        images = _parse(rendered[name]).images
        assert images, f"{name}: the executed notebook page shows no <img>"
        for src in images:
            if src.startswith("data:image/"):
                assert len(src) > len("data:image/png;base64,") + 16, f"{name}: empty data URI"
                continue
            parsed = urlparse(src)
            assert parsed.scheme in ("", "file"), f"{name}: image from the network: {src}"
            target = Path(unquote(parsed.path)) if parsed.scheme == "file" else (
                page_path.parent / unquote(parsed.path)
            )
            target = target.resolve()
            assert target.suffix.lower() in (".png", ".svg", ".jpg", ".jpeg", ".gif"), (
                f"{name}: unexpected image type {src}"
            )
            assert target.is_file() and target.stat().st_size > 0, f"{name}: image {src} is missing"


@pytest.mark.slow
def test_every_figure_is_numbered_and_captioned(built_book, rendered) -> None:
    """Every image of every page sits in a <figure> with a numbered <figcaption> (a MyST or glued figure)."""
    problems = []
    for name, dom in rendered.items():
        page = _FigureParser()
        page.feed(dom)
        if page.bare_images:
            problems.append(f"{name}: {len(page.bare_images)} image(s) outside a captioned figure, e.g. "
                            f"{page.bare_images[0]!r}")
        if page.uncaptioned:
            problems.append(f"{name}: {page.uncaptioned} of {page.figures} figure(s) without a numbered caption")
    assert not problems, ("figures must be numbered and captioned ({glue:figure} with :name: and a caption):\n"
                          + "\n".join(problems))


@pytest.mark.parametrize("py", sorted(NOTEBOOK_DIR.glob("*.py")), ids=lambda p: p.stem)
def test_figures_have_a_label_and_a_caption(py: Path) -> None:
    """Each figure a chapter draws is captioned and labelled in its cell's metadata
    (``mystnb: figure: {name, caption}``), so the figure shows in the cell's output in JupyterLab and
    as a numbered figure in the book; no figure is glued."""
    cells = jupytext.read(py).cells
    problems = []
    for i, cell in enumerate(cells):
        figure = cell.metadata.get("mystnb", {}).get("figure")
        if cell.cell_type != "code" or figure is None:
            continue
        if not str(figure.get("name", "")).startswith("fig-"):
            problems.append(f"cell {i}: figure without a fig-... name")
        if len(str(figure.get("caption", "")).split()) < 5:
            problems.append(f"cell {i}: figure {figure.get('name')!r} without a caption")
    assert not problems, f"{py.name}: " + "; ".join(problems)


def _glue_placeholders(notebook) -> list[str]:
    """The unresolved ``{glue...}`` roles and directives in a notebook's Markdown cells."""
    import re

    found = []
    for i, cell in enumerate(notebook.cells):
        if cell.cell_type == "markdown":
            found += [f"cell {i}: {m}" for m in re.findall(r"\{glue(?::\w+)?\}`?[^`\s]*", cell.source)]
    return found


@pytest.mark.parametrize("py", sorted(NOTEBOOK_DIR.glob("*.py")), ids=lambda p: p.stem)
def test_chapter_sources_glue_nothing(py: Path) -> None:
    """A chapter's prose is written in its Markdown: no glued number, sentence or figure (JupyterLab
    would show the placeholder), and no code glues anything."""
    notebook = jupytext.read(py)
    placeholders = _glue_placeholders(notebook)
    assert not placeholders, f"{py.name}: {len(placeholders)} glue placeholders: {placeholders[:5]}"
    code = "\n".join(c.source for c in notebook.cells if c.cell_type == "code")
    assert "glue(" not in code and "myst_nb" not in code, f"{py.name}: the code glues values"


def _exercises_and_solutions(notebook) -> tuple[dict[str, str], dict[str, str]]:
    """``{label: exercise text}`` and ``{label: solution code}`` of a chapter (gated solutions: the code
    cells between ``solution-start <label>`` and ``solution-end``; a plain ``{solution}`` block: its text)."""
    import re

    exercises, solutions, current = {}, {}, None
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            for block in re.findall(r"(?::::+|```+)\{exercise(?:-start)?\}(.*?)(?=\n(?::::+|```+)\s*$|\n(?::::+|```+)\{|\Z)",
                                    cell.source, flags=re.S | re.M):
                label = re.search(r":label:\s*(\S+)", block)
                if label:
                    exercises[label.group(1)] = block
            for label, block in re.findall(r"(?::::+|```+)\{solution\}\s*(\S+)(.*?)(?=\n(?::::+|```+)\s*$|\Z)",
                                           cell.source, flags=re.S | re.M):
                solutions[label] = solutions.get(label, "") + block
            # in the order they appear: a cell may close one solution and open the next
            start = re.search(r"(?::::+|```+)\{solution-start\}\s*(\S+)", cell.source)
            end = re.search(r"(?::::+|```+)\{solution-end\}", cell.source)
            if end and (not start or end.start() < start.start()):
                current = None
            if start:
                current = start.group(1)
                solutions.setdefault(current, "")
                if end and end.start() > start.start():
                    current = None
        elif current is not None:
            solutions[current] += "\n" + cell.source
    return exercises, solutions


@pytest.mark.parametrize("py", sorted(NOTEBOOK_DIR.glob("*.py")), ids=lambda p: p.stem)
def test_every_solution_runs_its_exercise_parameters(py: Path) -> None:
    """An exercise states its parameters as inline code (`calls = 50000`); its solution's code sets
    exactly those (``calls = 50000``, the keyword ``calls=50000``, or the name and each stated value in a
    loop over them)."""
    import re

    exercises, solutions = _exercises_and_solutions(jupytext.read(py))
    problems = []
    for label, text in exercises.items():
        stated = re.findall(r"`\s*([A-Za-z_]\w*)\s*=\s*([^`]+?)\s*`", text)
        if not stated:
            continue
        code = re.sub(r"\s+", "", solutions.get(label, ""))
        if not code:
            problems.append(f"{label}: states {stated} but has no solution code")
            continue
        for name, value in stated:
            value = re.sub(r"\s+", "", value)
            if "..." in value:  # a placeholder ("alphas = [...]"): the reader chooses
                continue
            # set directly (`calls=50000`), or the name and the value both in the code (a loop over values)
            token = r"(?<![\w.])" + re.escape(value) + r"(?![\w.])"
            if name + "=" + value not in code and not (name in code and re.search(token, code)):
                problems.append(f"{label}: states `{name} = {value}` but its solution does not set it")
    assert not problems, f"{py.name}: " + "; ".join(problems)


def _executed_notebooks(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.ipynb"))


@pytest.mark.slow
def test_executed_chapters_have_no_placeholders(built_book) -> None:
    """Every executed chapter (smoke profile here; the book's own full-profile copies in book/executed/
    when they exist) shows every number in JupyterLab: no unresolved {glue} in any Markdown cell."""
    import nbformat

    folders = [built_book["tmp"] / "src" / "book" / "executed", ROOT / "book" / "executed"]
    counts = {}
    for folder in folders:
        for path in _executed_notebooks(folder):
            counts[str(path)] = _glue_placeholders(nbformat.read(path, as_version=4))
    assert counts, "no executed chapter found"
    bad = {k: v for k, v in counts.items() if v}
    assert not bad, f"unresolved placeholders: { {k: len(v) for k, v in bad.items()} }"


def _png_dpi(built_book, page_path: Path, src: str) -> float:
    """The dpi a figure's PNG was written at (its pHYs chunk; matplotlib writes it)."""
    import base64
    import io

    from PIL import Image

    if src.startswith("data:image/png;base64,"):
        data = io.BytesIO(base64.b64decode(src.split(",", 1)[1]))
    else:
        data = (page_path.parent / unquote(urlparse(src).path)).resolve()
    with Image.open(data) as image:
        return float(image.info.get("dpi", (72.0, 72.0))[0])


def _smallest_font_points() -> float:
    """The smallest font size, in points, of the book's figure style (epsaudit.studies.figures.set_style)."""
    import matplotlib
    from matplotlib.font_manager import FontProperties

    from epsaudit.studies import figures

    figures.set_style()
    keys = ("font.size", "axes.labelsize", "axes.titlesize", "xtick.labelsize", "ytick.labelsize",
            "legend.fontsize", "legend.title_fontsize")
    sizes = [matplotlib.rcParams[k] for k in keys if matplotlib.rcParams.get(k) is not None]
    return min(FontProperties(size=s).get_size_in_points() for s in sizes)


@pytest.mark.slow
def test_figure_text_is_readable(built_book, rendered) -> None:
    """No figure shows text smaller than MIN_FIGURE_TEXT_PX on the page: the style's smallest font at the
    PNG's dpi, times the width the page gives the image over its natural width."""
    points = _smallest_font_points()
    small = []
    for name in built_book["notebook_pages"]:
        for src, scale in _parse(rendered[name]).image_scales:
            dpi = _png_dpi(built_book, built_book["pages"][name], src)
            px = points * dpi / 72.0 * scale
            if px < MIN_FIGURE_TEXT_PX:
                small.append(f"{name}: {src[:60]!r}: smallest text {px:.1f} px ({points:.1f} pt at {dpi:.0f} dpi, "
                             f"shown at {scale:.2f} of its size)")
    assert not small, "figure text below 9 px at 1280 px (make the figure narrower or its fonts larger):\n" + "\n".join(small)


@pytest.mark.slow
def test_methods_page_shows_the_sample_size_figure(built_book, rendered) -> None:
    images = _parse(rendered[METHODS_PAGE]).images
    assert any("certifiable_cap" in src for src in images), (
        f"the methods page shows no certifiable-cap figure (book/_ext/capfigure.py); images: {images}"
    )
    assert any((built_book["html"] / "_images").glob("certifiable_cap*.png")), "certifiable_cap.png was not copied"


@pytest.mark.slow
def test_nothing_is_cut_off_at_1280px(built_book, rendered) -> None:
    """Display equations and tables (and code on the Markdown pages) fit the reading column."""
    problems, listed = [], []
    for name, dom in rendered.items():
        page = _parse(dom)
        assert page.layout and page.layout.startswith(f"checked width={WINDOW_WIDTH} opened=all"), (
            f"{name}: the overflow check (book/_static/overflow_check.js) did not run at {WINDOW_WIDTH} px "
            f"with every dropdown open (body data-epsaudit-layout = {page.layout!r})"
        )
        must_fit = MUST_FIT if name in built_book["notebook_pages"] else MUST_FIT_MARKDOWN
        for label in page.overflowing:
            (problems if label.split(" ", 1)[0] in must_fit else listed).append(f"{name}: {label}")
    if listed:
        print(f"code blocks wider than the column in notebook pages ({len(listed)}, not failed):")
        print("\n".join(listed))
    assert not problems, (
        f"{len(problems)} element(s) cut off on the right at {WINDOW_WIDTH} px (split the equation over "
        "lines with an aligned environment; make the table narrower):\n" + "\n".join(problems)
    )


@pytest.mark.slow
def test_every_page_screenshot_is_not_blank(screenshots) -> None:
    blank = {
        name: f"{png} ({fraction:.2%} ink)"
        for name, png in screenshots.items()
        if (fraction := _ink_fraction(png)) < MIN_INK_FRACTION
    }
    assert not blank, f"blank screenshots at {WINDOW_WIDTH} px: {blank}"
