"""The LFW hash list: the SHA-256 of every image the committed embeddings were made from, and the
check of a folder against it (the verification half of :mod:`epsaudit.build.lfw`).

``data/lfw_images.sha256`` is in the format of ``sha256sum`` (``<hex>  images/<Person>/<file>.jpg``,
sorted by path), so a copy can be checked here (:func:`verify_tree`) or with ``sha256sum -c`` in the
folder that holds ``images/``. The errors of the whole command are defined here too: their exit
statuses are part of the command's contract (1 for a failed check, 2 when it could not run).
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

#: Number of image files in the pinned copy (lines of the committed hash list).
N_IMAGES = 13_232

_REPO_ROOT = Path(__file__).resolve().parents[2]
#: The committed hash list.
HASH_LIST = _REPO_ROOT / "data" / "lfw_images.sha256"

_LINE = re.compile(r"^([0-9a-f]{64})  (images/[^/\s]+/[^/\s]+\.jpg)$")
_CHUNK = 1 << 20
_FIRST = 5


class LfwError(RuntimeError):
    """The command could not run: arguments, hash list, destination or file system (exit status 2).

    Examples
    --------
    >>> issubclass(LfwDownloadError, LfwError), issubclass(LfwIntegrityError, LfwError)
    (True, True)
    """


class LfwDownloadError(LfwError):
    """The archive could not be downloaded (no connection, HTTP error, timeout) (exit status 2).

    Examples
    --------
    >>> str(LfwDownloadError("could not download https://example.org/lfw.tar.gz"))
    'could not download https://example.org/lfw.tar.gz'
    """


class LfwIntegrityError(LfwError):
    """Images or an archive failed the checks (exit status 1).

    ``report`` is the :class:`VerifyReport` when the failure is a comparison with the hash list,
    ``None`` for a truncated download, a damaged archive or an unsafe member.

    Examples
    --------
    >>> err = LfwIntegrityError("images differ", VerifyReport(expected=1, found=0, missing=("images/A/A_0001.jpg",)))
    >>> err.report.ok
    False
    """

    def __init__(self, message: str, report: "VerifyReport | None" = None):
        super().__init__(message)
        self.report = report


@dataclass(frozen=True)
class VerifyReport:
    """A folder or archive compared with the hash list.

    Attributes
    ----------
    expected : int
        Files in the hash list.
    found : int
        Image files found (listed or not).
    missing, extra, mismatched : tuple of str
        Sorted paths (``images/<Person>/<file>``, as in the list) that are listed but absent, present
        but not listed, and present with another SHA-256.

    Examples
    --------
    >>> VerifyReport(expected=2, found=1, missing=("images/A/A_0002.jpg",)).describe()
    '2 files listed, 1 found; 1 missing: images/A/A_0002.jpg'
    """

    expected: int
    found: int
    missing: tuple[str, ...] = ()
    extra: tuple[str, ...] = ()
    mismatched: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """True when every listed file is present with its SHA-256 and nothing else is."""
        return not (self.missing or self.extra or self.mismatched)

    def describe(self) -> str:
        """One line: counts and the first few names of each kind of difference."""
        if self.ok:
            return f"all {self.expected:,} files present with the listed SHA-256"
        parts = []
        for label, names in (("missing", self.missing), ("extra (not in the list)", self.extra),
                             ("with a different SHA-256", self.mismatched)):
            if names:
                more = f", ... ({len(names) - _FIRST:,} more)" if len(names) > _FIRST else ""
                parts.append(f"{len(names):,} {label}: {', '.join(names[:_FIRST])}{more}")
        return f"{self.expected:,} files listed, {self.found:,} found; " + "; ".join(parts)


# ---------------------------------------------------------------------------------------------
# Hash list


def sha256_file(path: str | os.PathLike) -> str:
    """Hex SHA-256 of a file's bytes.

    Parameters
    ----------
    path : path-like

    Returns
    -------
    str
        64 lower-case hex digits.

    Examples
    --------
    >>> path = Path(tempfile.mkdtemp()) / "a.jpg"
    >>> _ = path.write_bytes(b"abc")
    >>> sha256_file(path)[:16]
    'ba7816bf8f01cfea'
    """
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def read_hash_list(path: str | os.PathLike | None = None) -> dict[str, str]:
    """Read a hash list in ``sha256sum`` format.

    Parameters
    ----------
    path : path-like, optional
        Default: the committed ``data/lfw_images.sha256`` (:data:`HASH_LIST`).

    Returns
    -------
    dict
        ``"images/<Person>/<file>.jpg" -> lower-case hex SHA-256``, in file order.

    Raises
    ------
    LfwError
        If the file is absent, empty, has a line not of the form
        ``<64 hex digits><two spaces>images/<Person>/<file>.jpg`` (the line number and the line are
        named) or lists a path twice.

    Examples
    --------
    >>> path = Path(tempfile.mkdtemp()) / "list.sha256"
    >>> _ = path.write_text("a" * 64 + "  images/Ann/Ann_0001.jpg\\n")
    >>> read_hash_list(path) == {"images/Ann/Ann_0001.jpg": "a" * 64}
    True
    """
    path = Path(HASH_LIST if path is None else path)
    if not path.is_file():
        raise LfwError(f"hash list {path} not found: the repository commits it as data/lfw_images.sha256; "
                       f"restore it from git or pass another list with --hashes FILE")
    out: dict[str, str] = {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            line = line.rstrip("\n")
            m = _LINE.match(line)
            if m is None:
                raise LfwError(f"{path} line {number}: expected '<64 hex digits>  images/<Person>/<file>.jpg' "
                               f"(sha256sum format), got {line[:120]!r}; regenerate the list with "
                               f"`python -m epsaudit.build.lfw --write-hashes SRC`")
            digest, name = m.groups()
            if name in out:
                raise LfwError(f"{path} line {number}: {name} is listed twice")
            out[name] = digest
    if not out:
        raise LfwError(f"hash list {path} is empty")
    return out


def write_hash_list(src: str | os.PathLike, out: str | os.PathLike | None = None, progress: bool = True) -> int:
    """Hash every image of a folder and write the list in ``sha256sum`` format, sorted by path.

    Parameters
    ----------
    src : path-like
        Folder holding ``<Person>/<Person>_NNNN.jpg`` (e.g. the shared copy's ``images``). Hidden
        files (names starting with ``.``) are ignored.
    out : path-like, optional
        Where to write (default :data:`HASH_LIST`); written to a temporary file first, then renamed.
    progress : bool
        Show a progress bar (stderr).

    Returns
    -------
    int
        Number of lines written.

    Raises
    ------
    LfwError
        If ``src`` is not a folder, holds no images, or holds anything other than
        ``<Person>/<file>.jpg`` files (the first few offending paths are named).

    Examples
    --------
    >>> src = Path(tempfile.mkdtemp())
    >>> (src / "Ann").mkdir()
    >>> _ = (src / "Ann" / "Ann_0001.jpg").write_bytes(b"abc")
    >>> out = Path(tempfile.mkdtemp()) / "list.sha256"
    >>> write_hash_list(src, out, progress=False), out.read_text()[64:]
    (1, '  images/Ann/Ann_0001.jpg\\n')
    """
    src = Path(src)
    out = Path(HASH_LIST if out is None else out)
    if not src.is_dir():
        raise LfwError(f"{src} is not a folder: pass the folder holding <Person>/<Person>_NNNN.jpg "
                       f"(e.g. data/lfw/images)")
    files, unexpected = _scan(src)
    if unexpected:
        raise LfwError(f"{src} holds {len(unexpected):,} entries that are not <Person>/<file>.jpg files "
                       f"({', '.join(unexpected[:_FIRST])}); pass the folder holding the person folders")
    if not files:
        raise LfwError(f"{src} holds no <Person>/<file>.jpg files: pass the folder holding the person folders")
    lines = [f"{sha256_file(path)}  {name}\n" for name, path in _bar(sorted(files.items()), progress,
                                                                      "hashing", len(files))]
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.writelines(lines)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; a committed file is world-readable
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return len(lines)


# ---------------------------------------------------------------------------------------------
# Verification


def compare(expected: Mapping[str, str], actual: Mapping[str, str]) -> VerifyReport:
    """Compare ``path -> sha256`` maps (``actual`` from a folder or archive) with the list.

    Parameters
    ----------
    expected, actual : mapping ``images/<Person>/<file>.jpg -> hex SHA-256``

    Returns
    -------
    VerifyReport
        Missing, extra and mismatched paths, each sorted.

    Examples
    --------
    >>> r = compare({"images/A/1.jpg": "aa", "images/A/2.jpg": "bb"}, {"images/A/1.jpg": "ab", "images/B/1.jpg": "cc"})
    >>> r.missing, r.extra, r.mismatched
    (('images/A/2.jpg',), ('images/B/1.jpg',), ('images/A/1.jpg',))
    """
    return VerifyReport(
        expected=len(expected), found=len(actual),
        missing=tuple(sorted(set(expected) - set(actual))),
        extra=tuple(sorted(set(actual) - set(expected))),
        mismatched=tuple(sorted(k for k, v in actual.items() if k in expected and expected[k] != v)),
    )


def _scan(root: Path) -> tuple[dict[str, Path], list[str]]:
    """``images/<Person>/<file>.jpg -> path`` for the files two levels down, and everything else found.

    Hidden entries (``.DS_Store``) are ignored; anything else that is not such a file (a file at the
    top, a deeper folder, another suffix) is returned in the second list as ``images/...``.
    """
    files: dict[str, Path] = {}
    other: list[str] = []
    for person in sorted(root.iterdir()):
        if person.name.startswith("."):
            continue
        if not person.is_dir():
            other.append(f"images/{person.name}")
            continue
        for f in sorted(person.iterdir()):
            if f.name.startswith("."):
                continue
            name = f"images/{person.name}/{f.name}"
            if f.is_file() and f.name.endswith(".jpg"):
                files[name] = f
            else:
                other.append(name + ("/" if f.is_dir() else ""))
    return files, other


def verify_tree(root: str | os.PathLike, hashes: Mapping[str, str] | str | os.PathLike | None = None,
                progress: bool = True) -> VerifyReport:
    """Check a folder of images against the hash list.

    Every listed file must be present as ``root/<Person>/<file>.jpg`` with the listed SHA-256, and
    the folder must hold nothing else (hidden files such as ``.DS_Store`` are ignored).

    Parameters
    ----------
    root : path-like
        The folder holding the person folders (e.g. ``data/lfw/images``).
    hashes : mapping or path-like, optional
        ``path -> sha256`` (:func:`read_hash_list`) or a hash-list file; default the committed list.
    progress : bool
        Show a progress bar (stderr).

    Returns
    -------
    VerifyReport

    Raises
    ------
    LfwError
        If ``root`` is not a folder or the hash list cannot be read.

    Examples
    --------
    >>> root = Path(tempfile.mkdtemp())
    >>> (root / "Ann").mkdir()
    >>> _ = (root / "Ann" / "Ann_0001.jpg").write_bytes(b"abc")
    >>> listed = {"images/Ann/Ann_0001.jpg": sha256_file(root / "Ann" / "Ann_0001.jpg"), "images/Bo/Bo_0001.jpg": "0" * 64}
    >>> verify_tree(root, listed, progress=False).describe()
    '2 files listed, 1 found; 1 missing: images/Bo/Bo_0001.jpg'
    """
    root = Path(root)
    expected = hashes if isinstance(hashes, Mapping) else read_hash_list(hashes)
    if not root.is_dir():
        raise LfwError(f"{root} is not a folder: nothing to verify (run `make lfw` to get the images)")
    files, other = _scan(root)
    actual = {name: (sha256_file(path) if name in expected else "")
              for name, path in _bar(sorted(files.items()), progress, f"verifying {root}", len(files))}
    report = compare(expected, actual)
    if other:
        extra = tuple(sorted(set(report.extra) | set(other)))
        report = VerifyReport(report.expected, report.found + len(other), report.missing, extra, report.mismatched)
    return report


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _bar(items, enabled: bool, desc: str, total: int | None, unit: str = "it"):
    """A tqdm bar on stderr (disabled when ``enabled`` is false); iterates ``items`` when given."""
    from tqdm import tqdm

    kw = dict(desc=desc, total=total, disable=not enabled, file=sys.stderr, leave=False)
    if unit == "B":
        kw.update(unit="B", unit_scale=True, unit_divisor=1024)
    return tqdm(items, **kw) if items is not None else tqdm(**kw)
