"""Execution statistics of the executed chapters, read from the notebooks papermill wrote.

Every chapter is executed by papermill into ``book/executed/<name>.ipynb`` (``make notebooks``); papermill
records in the notebook's metadata when it ran, how long it took (``metadata.papermill.duration``,
seconds of wall clock) and the parameters it was given. Nothing here is typed by hand:

- the directive ``execution-statistics`` (no argument) is a table of every executed chapter in the order
  of the table of contents: the page, its profile, the parameters given, when it ran, its run time and
  whether it ran without error::

      ```{execution-statistics}
      ```

- the role ``exec-minutes`` writes one chapter's run time in minutes, e.g. ``{exec-minutes}`01_synthetic_benchmark```
  -> "4.0 min" (the course page's session plans use it); a prefix such as ``{exec-minutes}`03``` adds up
  every executed page whose name starts with it (a chapter split into ``03_...`` and ``03b_...``); a
  chapter not executed in this build is "not executed".

Each page using them depends on the executed notebooks, so a rebuild after ``make notebooks`` updates
them.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective

EXECUTED = "book/executed"


def _executed(srcdir: str) -> Path:
    return Path(srcdir) / EXECUTED


def _record(path: Path) -> dict:
    """Profile, parameters, start time, duration (s) and error status of one executed notebook."""
    meta = json.loads(path.read_text(encoding="utf-8")).get("metadata", {}).get("papermill", {})
    params = dict(meta.get("parameters") or {})
    started = meta.get("start_time") or ""
    try:
        when = datetime.fromisoformat(started.replace("Z", "+00:00")).strftime("%Y-%m-%d %H:%M UTC")
    except ValueError:
        when = "unknown"
    return {"profile": params.pop("profile", "default"), "parameters": params, "started": when,
            "seconds": meta.get("duration"), "failed": bool(meta.get("exception"))}


def _minutes(seconds) -> str:
    """A run time as the pages write it: ``"12 s"`` under a minute, else ``"4.0 min"``."""
    if seconds is None:
        return "unknown"
    seconds = float(seconds)
    return f"{seconds:.0f} s" if seconds < 59.5 else f"{seconds / 60:.1f} min"


def _toc_order(srcdir: str, names: list[str]) -> list[str]:
    """``names`` (executed notebook stems) in the order their pages appear in ``_toc.yml``."""
    import yaml

    files: list[str] = []

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                files.append(str(entry["file"]))
            walk(entry.get("sections"))
            walk(entry.get("chapters"))

    try:
        toc = yaml.safe_load((Path(srcdir) / "_toc.yml").read_text(encoding="utf-8")) or {}
    except OSError:
        toc = {}
    walk(toc.get("chapters"))
    for part in toc.get("parts") or []:
        walk(part.get("chapters"))
    order = {f: k for k, f in enumerate(files)}
    return sorted(names, key=lambda n: (order.get(f"{EXECUTED}/{n}", len(order)), n))


class ExecutionStatistics(SphinxDirective):
    """A table of the executed chapters: page, profile, parameters, when it ran, run time, status."""

    has_content = False

    def run(self):
        folder = _executed(self.env.srcdir)
        paths = {p.stem: p for p in folder.glob("*.ipynb")}
        for path in paths.values():
            self.env.note_dependency(str(path))
        if not paths:
            para = nodes.paragraph(text="No chapter has been executed in this build (make notebooks).")
            return [para]
        rows = ["| page | profile | other parameters | executed | run time | status |", "| --- | --- | --- | --- | --- | --- |"]
        total = 0.0
        for name in _toc_order(self.env.srcdir, list(paths)):
            rec = _record(paths[name])
            total += float(rec["seconds"] or 0.0)
            given = ", ".join(f"`{k} = {v!r}`" for k, v in rec["parameters"].items()) or "defaults"
            page = f"{{doc}}`/{EXECUTED}/{name}`" if f"{EXECUTED}/{name}" in self.env.found_docs else f"`{name}`"
            rows.append(f"| {page} | {rec['profile']} | {given} | {rec['started']} | {_minutes(rec['seconds'])} | "
                        f"{'failed' if rec['failed'] else 'ran without error'} |")
        rows.append(f"| **all chapters** | | | | **{_minutes(total)}** | |")
        container = nodes.container(classes=["execution-statistics"])
        self.state.nested_parse(StringList(rows, source=self.get_source_info()[0]), self.content_offset, container)
        return [container]


def exec_minutes_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """``{exec-minutes}`<stem or prefix>``` -> the run time in minutes of that executed chapter, or the sum
    over every executed chapter whose name starts with the prefix (``03`` covers ``03_...`` and ``03b_...``)."""
    env = inliner.document.settings.env
    folder, key = _executed(env.srcdir), text.strip()
    exact = folder / f"{key}.ipynb"
    paths = [exact] if exact.is_file() else sorted(folder.glob(f"{key}*.ipynb"))
    if not paths:
        return [nodes.emphasis(text="not executed")], []
    for path in paths:
        env.note_dependency(str(path))
    seconds = [_record(path)["seconds"] for path in paths]
    total = None if any(s is None for s in seconds) else sum(float(s) for s in seconds)
    return [nodes.inline(text=_minutes(total))], []


def setup(app):
    app.add_directive("execution-statistics", ExecutionStatistics)
    app.add_role("exec-minutes", exec_minutes_role)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
