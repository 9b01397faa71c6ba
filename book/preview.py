"""Preview one chapter as a reader sees it: a small book around it, built and photographed at 1280 px.

    .venv/bin/python book/preview.py notebooks/03_face_case_study.py --profile smoke

Executes the chapter (papermill, into the preview folder; the book's own executed copies are not
touched), builds a book of the introduction, the methods chapter, the course, the chapter, the
glossary, the execution statistics and the bibliography in ``/tmp/epsaudit-preview/<chapter>/``, and writes screenshots of the chapter's page
at 1280 px width as tiles ``shot-01.png``, ``shot-02.png``, ... of 1280 x 1600 px. ``--executed``
uses an already executed notebook instead of running it. Prints the build's warnings and the
tiles' paths.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = ROOT / ".venv" / "bin"
CHROMIUM = "/usr/bin/chromium"
WIDTH, TILE = 1280, 1600
#: Height of the browser window (px): the longest chapter (3, about 25,000 px) must fit in it.
HEIGHT = 40000


def execute(source: Path, out: Path, profile: str, figures: Path) -> None:
    scratch = out.with_suffix(".src.ipynb")
    subprocess.run([BIN / "jupytext", "--quiet", "--to", "ipynb", "--output", scratch, source], check=True)
    env = {**os.environ, "EPSAUDIT_FIGURE_DIR": str(figures)}  # the chapter's figure files, for its links
    subprocess.run([BIN / "papermill", "--kernel", "epsaudit", "--cwd", ROOT / "notebooks", "-p", "profile", profile,
                    scratch, out], check=True, env=env)
    nb = json.loads(out.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        tags = cell.setdefault("metadata", {}).setdefault("tags", [])
        if "injected-parameters" in tags and "remove-cell" not in tags:
            tags.append("remove-cell")
    out.write_text(json.dumps(nb, indent=1, ensure_ascii=False), encoding="utf-8")
    scratch.unlink()


def build(folder: Path, chapter: str) -> str:
    (folder / "book" / "executed").mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "_config.yml", folder / "_config.yml")
    for name in ("intro.md", "methods.md", "course.md", "glossary.md", "execution_statistics.md", "scale.md",
                 "bibliography.md", "references.bib", "_ext", "_static"):
        target = folder / "book" / name
        if not target.exists():
            target.symlink_to(ROOT / "book" / name)
    toc = (f"format: jb-book\nroot: book/intro\nchapters:\n  - file: book/methods\n  - file: book/course\n"
           f"  - file: book/executed/{chapter}\n  - file: book/glossary\n  - file: book/execution_statistics\n"
           f"  - file: book/scale\n  - file: book/bibliography\n")
    (folder / "_toc.yml").write_text(toc, encoding="utf-8")
    run = subprocess.run([BIN / "jupyter-book", "build", folder, "--keep-going"], capture_output=True, text=True)
    return "\n".join(line for line in (run.stdout + run.stderr).splitlines() if "WARNING" in line or "ERROR" in line)


def photograph(page: Path, folder: Path) -> list[Path]:
    from PIL import Image

    full = folder / "page.png"
    for old in folder.glob("shot-*.png"):  # tiles of an earlier, longer page
        old.unlink()
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                        "--disable-background-networking", "--disable-component-update", "--disable-sync",
                        f"--user-data-dir={profile}", "--hide-scrollbars", f"--window-size={WIDTH},{HEIGHT}",
                        f"--screenshot={full}", page.as_uri()], check=True, capture_output=True)
    Image.MAX_IMAGE_PIXELS = None  # a tall page is larger than Pillow's default guard
    image = Image.open(full)
    grey = image.convert("L")
    tiles = []
    for k, top in enumerate(range(0, image.height, TILE), start=1):
        box = (0, top, WIDTH, min(top + TILE, image.height))
        content = grey.crop((300, box[1], WIDTH, box[3])).point(lambda v: 255 if v < 245 else 0)
        if content.getbbox() is None:  # nothing but background right of the sidebar: the page has ended
            break
        tile = folder / f"shot-{k:02d}.png"
        image.crop(box).save(tile)
        tiles.append(tile)
    return tiles


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="notebooks/NN_name.py")
    parser.add_argument("--profile", default="smoke")
    parser.add_argument("--executed", type=Path, help="an executed .ipynb to use instead of running the chapter")
    parser.add_argument("--page", help="photograph this page of the small book instead of the chapter "
                                       "(e.g. book/course, book/glossary)")
    args = parser.parse_args(argv)
    chapter = args.source.stem
    folder = Path("/tmp/epsaudit-preview") / chapter
    folder.mkdir(parents=True, exist_ok=True)
    executed = folder / "book" / "executed" / f"{chapter}.ipynb"
    executed.parent.mkdir(parents=True, exist_ok=True)
    figures = folder / "_build" / "figures"
    if args.executed:
        shutil.copy(args.executed, executed)
        if (ROOT / "_build" / "figures").is_dir():  # the figures the executed copy links to
            shutil.copytree(ROOT / "_build" / "figures", figures, dirs_exist_ok=True)
    else:
        execute(args.source.resolve(), executed, args.profile, figures)
    warnings = build(folder, chapter)
    print(warnings or "no build warnings")
    page = args.page or f"book/executed/{chapter}"
    for tile in photograph(folder / "_build" / "html" / f"{page}.html", folder):
        print(tile)
    return 0


if __name__ == "__main__":
    sys.exit(main())
