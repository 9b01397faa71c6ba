"""The product stands alone: no citation of internal file numbers or of the developers' notes.

Readers have the papers by title, not the file names they had in the developers' workspace, and
the book's methods chapter, not a separate specification. Cite *Picture the Epsilon* and *Toward
Interpretable Privacy Guarantees in Face-Swapping Anonymization* with their own section, table and
figure numbers.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INTERNAL = re.compile(r"paper 00[0-2]|SPEC section|SPEC\.md|shared/papers|\bSPEC \d", re.IGNORECASE)
PRODUCT = ["epsaudit", "notebooks", "book", "benchmarks", "README.md", "ARCHITECTURE.md", "CITATION.cff", "LICENSE",
           "_config.yml", "_toc.yml", "Makefile"]


def _files():
    for name in PRODUCT:
        path = ROOT / name
        if path.is_file():
            yield path
        elif path.is_dir():
            yield from (p for p in path.rglob("*") if p.is_file() and p.suffix in {".py", ".md", ".ipynb", ".bib", ".yml"}
                        and "executed" not in p.parts and "__pycache__" not in p.parts)


def test_no_internal_names_in_the_product():
    hits = []
    for path in _files():
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), start=1):
            if INTERNAL.search(line):
                hits.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:100]}")
    assert hits == [], "\n".join(hits)


def test_the_pattern_catches_what_it_should():
    for bad in ("(paper 001, Table 6)", "see SPEC section 2", "SPEC.md", "../shared/papers/000.txt"):
        assert INTERNAL.search(bad), bad
    for fine in ("--embedding-cols SPEC", "a spec of columns", "Picture the Epsilon, Table 6"):
        assert not INTERNAL.search(fine), fine
