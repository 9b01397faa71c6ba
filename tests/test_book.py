"""End-to-end check of the book: execute the notebooks, build the HTML, look at it in a browser.

The repository's book sources (``_config.yml``, ``_toc.yml``, ``book/``) are copied to a temporary
directory; every ``notebooks/*.py`` is executed there by papermill with ``-p profile smoke``; the
copy is built with ``jupyter-book build -W -n --keep-going --all`` (warnings are errors); and each
page of the table of contents is opened in headless Chromium to check that MathJax rendered and
that figures are present. Nothing in the working tree is written.

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


def _dump_dom(chromium: Path, page: Path, profile_dir: Path) -> str:
    run = subprocess.run(
        [str(chromium), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", f"--user-data-dir={profile_dir}", "--virtual-time-budget=10000",
         "--dump-dom", page.as_uri()],
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
