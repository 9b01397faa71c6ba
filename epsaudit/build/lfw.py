"""Get the LFW photographs: the exact copy the committed embeddings were made from, verified.

The committed embeddings were computed from the 13,232 JPEG files of ``images/`` in the LFW web site's public repository
(:data:`LFW_REPOSITORY`) at commit :data:`LFW_COMMIT`; ``data/lfw_images.sha256`` lists their SHA-256 in ``sha256sum``
format (``<hex> images/<Person>/<Person>_NNNN.jpg``, sorted), so ``sha256sum -c`` can check a copy too.

``python -m epsaudit.build.lfw`` (``make lfw``) makes ``data/lfw/images`` hold exactly those files: an existing
destination is verified and never modified; else the shared read-only copy ``../shared/data/lfw`` is verified and linked
(as ``make data-link``); else the pinned commit's archive (:data:`DEFAULT_URL`, ~460 MB; ``--url``,
``$EPSAUDIT_LFW_URL`` or ``--archive PATH`` instead) is unpacked into a temporary folder beside the destination, every
file and the complete set checked, and only then renamed. On any failure the temporary files are removed and the
destination is not created. ``--verify`` checks a folder; ``--write-hashes SRC`` remakes the list.

Exit status: 0 images present and verified (or list written); 1 images or an archive fail the checks;
2 the command could not run (arguments, hash list, network, file system). Nothing is downloaded at import.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import http.client
import os
import re
import secrets
import shutil
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Mapping, Sequence

from epsaudit.build.images import DEFAULT_IMAGE_ROOT, ENV_IMAGE_ROOT

__all__ = ["DEFAULT_DEST", "DEFAULT_URL", "ENV_URL", "HASH_LIST", "LFW_COMMIT", "LFW_REPOSITORY", "N_IMAGES",
           "SHARED_COPY", "LfwDownloadError", "LfwError", "LfwIntegrityError", "Outcome", "VerifyReport",
           "ensure_images", "main", "read_hash_list", "verify_tree", "write_hash_list"]

#: Number of image files in the pinned copy (lines of the committed hash list).
N_IMAGES = 13_232

_REPO_ROOT = Path(__file__).resolve().parents[2]
#: The committed hash list.
HASH_LIST = _REPO_ROOT / "data" / "lfw_images.sha256"

#: The public GitHub repository holding the LFW images (the LFW web site).
LFW_REPOSITORY = "umass-vis-lfw/umass-vis-lfw.github.io"
#: The commit the committed embeddings were made from.
LFW_COMMIT = "2a620cd8cceb10430f8c7012fe9fa5f0837759e9"
#: GitHub's tar.gz of the whole repository at :data:`LFW_COMMIT` (one top-level folder, then ``images/``).
DEFAULT_URL = f"https://codeload.github.com/{LFW_REPOSITORY}/tar.gz/{LFW_COMMIT}"
#: Environment variable that overrides :data:`DEFAULT_URL`.
ENV_URL = "EPSAUDIT_LFW_URL"
#: Default destination (``$EPSAUDIT_IMAGE_ROOT`` when set instead).
DEFAULT_DEST = _REPO_ROOT / DEFAULT_IMAGE_ROOT
#: Shared read-only copy beside the repository, linked instead of downloading when it exists.
SHARED_COPY = _REPO_ROOT.parent / "shared" / "data" / "lfw"

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
    """Images or an archive failed the checks (exit status 1); ``report`` is the :class:`VerifyReport`
    of a comparison with the hash list, ``None`` for a truncated download, a damaged archive or an unsafe member.

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
    expected, found : int
        Files in the hash list; image files found (listed or not).
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


def _sha256_file(path: str | os.PathLike) -> str:
    """Hex SHA-256 of a file's bytes."""
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
        If the file is absent, empty, lists a path twice or has a line not of the form
        ``<64 hex digits><two spaces>images/<Person>/<file>.jpg`` (the line is named).

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
        Folder holding ``<Person>/<Person>_NNNN.jpg``; hidden files are ignored.
    out : path-like, optional
        Where to write (default :data:`HASH_LIST`), through a temporary file.
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
    lines = [f"{_sha256_file(path)}  {name}\n" for name, path in _bar(sorted(files.items()), progress,
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


def _compare(expected: Mapping[str, str], actual: Mapping[str, str]) -> VerifyReport:
    """``actual`` (``images/<Person>/<file>.jpg -> hex SHA-256``, from a folder or archive) compared with the list."""
    return VerifyReport(
        expected=len(expected), found=len(actual),
        missing=tuple(sorted(set(expected) - set(actual))),
        extra=tuple(sorted(set(actual) - set(expected))),
        mismatched=tuple(sorted(k for k, v in actual.items() if k in expected and expected[k] != v)),
    )


def _scan(root: Path) -> tuple[dict[str, Path], list[str]]:
    """``images/<Person>/<file>.jpg -> path`` for the files two levels down, and everything else found
    (as ``images/...``; hidden entries such as ``.DS_Store`` ignored)."""
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
    """Check a folder of images against the hash list: every listed file present as
    ``root/<Person>/<file>.jpg`` with its SHA-256, and nothing else (hidden files ignored).

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
    >>> listed = {"images/Ann/Ann_0001.jpg": _sha256_file(root / "Ann" / "Ann_0001.jpg"), "images/Bo/Bo_0001.jpg": "0" * 64}
    >>> verify_tree(root, listed, progress=False).describe()
    '2 files listed, 1 found; 1 missing: images/Bo/Bo_0001.jpg'
    """
    root = Path(root)
    expected = hashes if isinstance(hashes, Mapping) else read_hash_list(hashes)
    if not root.is_dir():
        raise LfwError(f"{root} is not a folder: nothing to verify (run `make lfw` to get the images)")
    files, other = _scan(root)
    actual = {name: (_sha256_file(path) if name in expected else "")
              for name, path in _bar(sorted(files.items()), progress, f"verifying {root}", len(files))}
    report = _compare(expected, actual)
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


# ---------------------------------------------------------------------------------------------
# Download and unpacking: the archive is streamed to a file, then read once, each image hashed while it is written, so a
# truncated or damaged archive, an unsafe member, a link or a duplicate is refused before anything is kept.


def _download(url: str, out: BinaryIO, timeout: float = 60.0, progress: bool = True) -> int:
    """Stream ``url`` into the open binary file ``out`` (removed by the caller on failure); return the bytes
    received. :class:`LfwDownloadError` when the server cannot be reached, answers an HTTP error or stops
    answering (timeout: seconds per connection and read); :class:`LfwIntegrityError` for a truncated download."""
    try:
        response = urllib.request.urlopen(url, timeout=timeout)
    except urllib.error.HTTPError as exc:
        raise LfwDownloadError(f"downloading {url} failed: HTTP {exc.code} {exc.reason}. {_WHAT_TO_DO}") from None
    except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
        reason = getattr(exc, "reason", exc)
        raise LfwDownloadError(f"could not download {url}: {reason}. {_WHAT_TO_DO}") from None
    except ValueError as exc:
        raise LfwError(f"--url {url!r} is not an http(s) address ({exc})") from None
    received = 0
    cut = False
    with response:
        length = response.headers.get("Content-Length")
        total = int(length) if length and length.isdigit() else None
        with _bar(None, progress, "downloading", total, unit="B") as bar:
            while True:
                try:
                    chunk = response.read(_CHUNK)
                except http.client.IncompleteRead:  # the server closed before the announced end
                    cut = True
                    break
                except (OSError, http.client.HTTPException) as exc:  # reset, timeout
                    raise LfwDownloadError(f"the download of {url} broke off after {received:,} bytes "
                                           f"({type(exc).__name__}: {exc}). {_WHAT_TO_DO}") from None
                if not chunk:
                    break
                out.write(chunk)
                received += len(chunk)
                bar.update(len(chunk))
    if cut or (total is not None and received != total):
        what = (f"received {received:,} of the {total:,} bytes announced by {url}" if total is not None
                else f"the transfer from {url} broke off after {received:,} bytes")
        raise LfwIntegrityError(f"truncated download: {what}; nothing was unpacked. Run the command again "
                                f"(or pass --archive PATH to a complete download)")
    return received


_WHAT_TO_DO = ("Run `make lfw` where GitHub (codeload.github.com) is reachable; or download that URL with a "
               "browser or curl and pass the file: `python -m epsaudit.build.lfw --archive PATH`; or link an "
               "existing LFW copy (a folder holding images/<Person>/...): `ln -s /path/to/lfw data/lfw`, or set "
               f"${ENV_IMAGE_ROOT} to its images folder")


def _member_parts(name: str) -> list[str]:
    return [p for p in name.split("/") if p not in ("", ".")]


def _unsafe(member: tarfile.TarInfo) -> str | None:
    """Why a member's path is unsafe to unpack anywhere, or None."""
    name = member.name
    if name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name):
        return "absolute path"
    if "\\" in name:
        return "backslash in path"
    if ".." in name.split("/"):
        return "'..' in path"
    return None


class _CountingReader:
    """A read-only file wrapper that advances a progress bar by the bytes read."""

    def __init__(self, f: BinaryIO, bar):
        self._f, self._bar = f, bar

    def read(self, n: int = -1) -> bytes:
        data = self._f.read(n)
        self._bar.update(len(data))
        return data


def _unpack_verified(archive: str | os.PathLike, into: str | os.PathLike,
                     hashes: Mapping[str, str] | str | os.PathLike | None = None,
                     progress: bool = True, label: str | None = None) -> VerifyReport:
    """Unpack the listed ``images/**.jpg`` members of a tar(.gz) into the empty folder ``into`` as
    ``<Person>/<file>.jpg``, hashing each while it is written; return the comparison with the list.

    Members come from ``<top>/images/`` when every member lies in one top-level folder (GitHub's
    archives), else from ``images/``; anything else, and hidden entries, is read past. A gzip archive
    is read to its end so that its length and CRC are checked. Raises :class:`LfwIntegrityError` for
    a truncated or damaged archive, an absolute or ``..`` path, a link or special file under
    ``images/``, or an image twice; :class:`LfwError` when the archive cannot be opened.
    """
    archive, into = Path(archive), Path(into)
    label = label or str(archive)
    expected = hashes if isinstance(hashes, Mapping) else read_hash_list(hashes)
    # Both layouts are collected (in practice an archive has only one); the choice is made at the end,
    # when it is known whether every member lay in one top-level folder.
    members = _Members(label, expected, {"top": into / ".images-at-top", "nested": into / ".images-in-folder"})
    try:
        raw = open(archive, "rb")
    except OSError as exc:
        raise LfwError(f"cannot open the archive {archive}: {exc.strerror}") from None
    size = archive.stat().st_size
    with raw, _bar(None, progress, "unpacking", size, unit="B") as bar:
        counted = _CountingReader(raw, bar)
        is_gzip = raw.read(2) == b"\x1f\x8b"
        raw.seek(0)
        stream = gzip.GzipFile(fileobj=counted, mode="rb") if is_gzip else counted
        try:
            with tarfile.open(fileobj=stream, mode="r|") as tar:
                for member in tar:
                    members.take(tar, member)
                if is_gzip:
                    while stream.read(_CHUNK):  # to the end: gzip checks its length and CRC at EOF
                        pass
        except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile) as exc:
            raise LfwIntegrityError(f"the archive {label} is truncated or damaged ({type(exc).__name__}: {exc}); "
                                    f"nothing was unpacked. Download it again (a complete archive of "
                                    f"{LFW_REPOSITORY} at {LFW_COMMIT[:12]} is a .tar.gz of about 460 MB)") from None
    return _compare(expected, members.finish(into))


class _Members:
    """The ``images/**.jpg`` members of one archive, in both layouts, written while they are hashed."""

    def __init__(self, label: str, expected: Mapping[str, str], roots: dict[str, Path]):
        self.label, self.expected, self.roots = label, expected, roots
        self.found: dict[str, dict[str, str]] = {"top": {}, "nested": {}}
        self.first: str | None = None
        self.single_top = True

    def take(self, tar: tarfile.TarFile, member: tarfile.TarInfo) -> None:
        """Check one member; hash (and write, when listed) an image under ``images/``; skip the rest."""
        label = self.label
        reason = _unsafe(member)
        if reason:
            raise LfwIntegrityError(f"refusing the archive {label}: member {member.name!r} has an "
                                    f"unsafe path ({reason}); nothing was unpacked")
        parts = _member_parts(member.name)
        if not parts:
            return
        if self.first is None:
            self.first = parts[0]
        elif parts[0] != self.first:
            self.single_top = False
        if parts[0] == "images":
            layout, rel = "top", parts[1:]
        elif len(parts) >= 2 and parts[0] == self.first and parts[1] == "images":
            layout, rel = "nested", parts[2:]
        else:
            return  # outside images/: read past, never written
        if member.issym() or member.islnk():
            raise LfwIntegrityError(f"refusing the archive {label}: member {member.name!r} is a link "
                                    f"(to {member.linkname!r}); LFW images are plain files; nothing was unpacked")
        if not (member.isfile() or member.isdir()):
            raise LfwIntegrityError(f"refusing the archive {label}: member {member.name!r} is not a "
                                    f"regular file or folder; nothing was unpacked")
        if member.isdir() or not rel or not rel[-1].endswith(".jpg") or any(p.startswith(".") for p in rel):
            return
        name = "images/" + "/".join(rel)
        if name in self.found[layout]:
            raise LfwIntegrityError(f"the archive {label} holds {name} twice; nothing was unpacked")
        target = self.roots[layout].joinpath(*rel) if name in self.expected else None
        self.found[layout][name] = _copy_member(tar, member, target)

    def finish(self, into: Path) -> dict[str, str]:
        """Keep the layout the archive has, move its person folders into ``into``; ``name -> sha256``."""
        layout = "nested" if self.single_top and self.first != "images" else "top"
        shutil.rmtree(self.roots["top" if layout == "nested" else "nested"], ignore_errors=True)
        if self.roots[layout].is_dir():
            for child in list(self.roots[layout].iterdir()):
                os.rename(child, into / child.name)
            self.roots[layout].rmdir()
        return self.found[layout]


def _copy_member(tar: tarfile.TarFile, member: tarfile.TarInfo, target: Path | None) -> str:
    """Read one member, write it to ``target`` (unless None), return its hex SHA-256."""
    digest = hashlib.sha256()
    src = tar.extractfile(member)
    out = None
    if target is not None:
        target.parent.mkdir(parents=True, exist_ok=True)
        out = open(target, "xb")
    try:
        read = 0
        while chunk := src.read(_CHUNK):
            digest.update(chunk)
            read += len(chunk)
            if out is not None:
                out.write(chunk)
        if read != member.size:
            raise tarfile.ReadError(f"{member.name}: {read} of {member.size} bytes")
    finally:
        if out is not None:
            out.close()
    return digest.hexdigest()


# ---------------------------------------------------------------------------------------------
# The whole command


@dataclass(frozen=True)
class Outcome:
    """What :func:`ensure_images` did.

    Attributes
    ----------
    how : str
        ``"present"`` (already there, verified), ``"linked"`` (the shared copy verified and linked) or
        ``"fetched"`` (downloaded or unpacked, verified, renamed).
    dest : Path
    files : int
        Image files verified.
    message : str
        A sentence for the user.

    Examples
    --------
    >>> Outcome("present", Path("data/lfw/images"), N_IMAGES, "already present, verified").files
    13232
    """

    how: str
    dest: Path
    files: int
    message: str


def _default_dest() -> Path:
    """``$EPSAUDIT_IMAGE_ROOT`` if set, else :data:`DEFAULT_DEST`."""
    env = os.environ.get(ENV_IMAGE_ROOT)
    return Path(env) if env else DEFAULT_DEST


def ensure_images(dest: str | os.PathLike | None = None, *, hashes: str | os.PathLike | None = None,
                  url: str | None = None, archive: str | os.PathLike | None = None,
                  shared: str | os.PathLike | None = SHARED_COPY, timeout: float = 60.0,
                  progress: bool = True) -> Outcome:
    """Make ``dest`` hold exactly the listed LFW images; touch nothing on failure.

    Order: an existing ``dest`` is verified and left alone; else the shared copy (when it exists and
    no ``archive`` is given) is verified and linked; else the archive (``archive``, or a download of
    ``url``) is unpacked and verified in a temporary folder beside ``dest``, then renamed to it.

    Parameters
    ----------
    dest : path-like, optional
        Default ``$EPSAUDIT_IMAGE_ROOT``, else :data:`DEFAULT_DEST`.
    hashes : path-like, optional
        Hash list (default the committed ``data/lfw_images.sha256``).
    url : str, optional
        Archive address (default ``$EPSAUDIT_LFW_URL``, else :data:`DEFAULT_URL`).
    archive : path-like, optional
        A tar.gz already on disk; nothing is downloaded.
    shared : path-like or None
        A copy holding ``images/`` to link when it exists (default :data:`SHARED_COPY`); ``None`` never links.
    timeout : float
        Seconds to wait for the server (connection and each read).
    progress : bool
        Show progress bars (stderr).

    Returns
    -------
    Outcome

    Raises
    ------
    LfwIntegrityError
        If the existing destination, the shared copy, the download or the archive fails the checks
        (the report names the files); the destination is left as it was.
    LfwDownloadError
        If the archive cannot be downloaded.
    LfwError
        If the hash list cannot be read or the destination is a broken link or not a folder.

    Examples
    --------
    >>> import io, tarfile, hashlib
    >>> work, data = Path(tempfile.mkdtemp()), b"not really a jpeg"
    >>> with tarfile.open(work / "lfw.tar.gz", "w:gz") as tar:  # laid out like GitHub's archive
    ...     info = tarfile.TarInfo("repo-abc123/images/Ann/Ann_0001.jpg")
    ...     info.size = len(data)
    ...     tar.addfile(info, io.BytesIO(data))
    >>> listed = work / "list.sha256"
    >>> _ = listed.write_text(hashlib.sha256(data).hexdigest() + "  images/Ann/Ann_0001.jpg")
    >>> out = ensure_images(work / "lfw" / "images", hashes=listed, archive=work / "lfw.tar.gz", shared=None,
    ...                     progress=False)
    >>> out.how, out.files
    ('fetched', 1)
    >>> ensure_images(work / "lfw" / "images", hashes=listed, shared=None, progress=False).how
    'present'
    """
    dest = Path(_default_dest() if dest is None else dest)
    expected = read_hash_list(hashes)
    list_name = hashes or "data/lfw_images.sha256"
    for p in (dest, dest.parent):
        if p.is_symlink() and not p.exists():
            raise LfwError(f"{p} is a link to {os.readlink(p)}, which does not exist: remove the link "
                           f"(rm {p}) and run again")
    if dest.exists():
        if not dest.is_dir():
            raise LfwError(f"{dest} exists and is not a folder: move it aside and run again")
        report = verify_tree(dest, expected, progress)
        if not report.ok:
            raise LfwIntegrityError(f"{dest} already exists but does not match {list_name}: {report.describe()}. "
                                    f"It was left untouched: move it aside (or delete it) and run again to get a "
                                    f"verified copy", report)
        return Outcome("present", dest, report.found, f"{dest}: already present, verified ({report.found:,} images)")
    if shared is not None and archive is None and (Path(shared) / "images").is_dir():
        return _link_shared(dest, Path(shared), expected, list_name, progress)
    return _fetch(dest, expected, list_name, url, archive, timeout, progress)


def _link_shared(dest: Path, shared: Path, expected: Mapping[str, str], list_name, progress: bool) -> Outcome:
    report = verify_tree(shared / "images", expected, progress)
    if not report.ok:
        raise LfwIntegrityError(f"the shared copy {shared / 'images'} does not match {list_name}: {report.describe()}. "
                                f"Nothing was linked; pass --no-shared to download a verified copy instead", report)
    if dest.parent.exists():  # data/lfw is a real folder: link only its images
        link, target = dest, os.path.relpath(shared / "images", dest.parent)
    else:  # as `make data-link`: data/lfw -> ../../shared/data/lfw
        dest.parent.parent.mkdir(parents=True, exist_ok=True)
        link, target = dest.parent, os.path.relpath(shared, dest.parent.parent)
    link.symlink_to(target, target_is_directory=True)
    return Outcome("linked", dest, report.found,
                   f"linked {link} -> {target} (the shared copy; {report.found:,} images verified)")


def _fetch(dest: Path, expected: Mapping[str, str], list_name, url: str | None, archive, timeout: float,
           progress: bool) -> Outcome:
    parent = dest.parent
    created = [p for p in [parent, *parent.parents] if not p.exists()]
    tmp_archive: Path | None = None
    tmp_dir: Path | None = None
    done = False
    if archive is not None and not Path(archive).is_file():
        raise LfwError(f"--archive {archive}: no such file (give the .tar.gz downloaded from {DEFAULT_URL})")
    try:
        parent.mkdir(parents=True, exist_ok=True)
        if archive is None:
            url = url or os.environ.get(ENV_URL) or DEFAULT_URL
            fd, name = tempfile.mkstemp(dir=parent, prefix=f".{dest.name}.download-", suffix=".tar.gz")
            tmp_archive = Path(name)
            with os.fdopen(fd, "wb") as out:
                size = _download(url, out, timeout, progress)
            source, label = tmp_archive, f"downloaded from {url}"
            origin = f"{url} ({size / 1e6:,.1f} MB)"
        else:
            source = Path(archive)
            origin = label = str(source)
        tmp_dir = parent / f".{dest.name}.partial-{os.getpid()}-{secrets.token_hex(4)}"
        tmp_dir.mkdir()
        report = _unpack_verified(source, tmp_dir, expected, progress, label)
        if not report.ok:
            raise LfwIntegrityError(f"the archive {label} does not match {list_name}: {report.describe()}. "
                                    f"Nothing was written to {dest}", report)
        if dest.exists() or dest.is_symlink():
            raise LfwError(f"{dest} appeared while the archive was being unpacked (another run?); it was left "
                           f"alone: run again to verify it")
        os.rename(tmp_dir, dest)
        done = True
        return Outcome("fetched", dest, report.found,
                       f"fetched {report.found:,} images from {origin}, verified against {list_name}, into {dest}")
    finally:
        if tmp_archive is not None:
            tmp_archive.unlink(missing_ok=True)
        if not done:
            if tmp_dir is not None:
                shutil.rmtree(tmp_dir, ignore_errors=True)
            for p in created:  # deepest first; only folders this call made, only when empty
                try:
                    p.rmdir()
                except OSError:
                    break


# ---------------------------------------------------------------------------------------------
# Command line


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m epsaudit.build.lfw``: get, verify, or list the LFW images; returns the exit status.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments (default ``sys.argv[1:]``); ``--help`` lists them.

    Returns
    -------
    int
        The exit status (module docstring); messages go to stderr.

    Examples
    --------
    >>> main(["--verify", "--dest", str(Path(tempfile.mkdtemp()) / "elsewhere"), "--no-progress"])  # no such folder
    2
    """
    a = _parser().parse_args(argv)
    progress = not a.no_progress
    try:
        if a.write_hashes is not None:
            start = time.perf_counter()
            n = write_hash_list(a.write_hashes, a.hashes, progress)
            print(f"wrote {n:,} lines to {a.hashes or HASH_LIST} in {time.perf_counter() - start:.1f} s",
                  file=sys.stderr)
            return 0
        if a.verify:
            dest = a.dest or _default_dest()
            report = verify_tree(dest, read_hash_list(a.hashes), progress)
            if not report.ok:
                print(f"error: {dest} does not match {a.hashes or 'data/lfw_images.sha256'}: {report.describe()}",
                      file=sys.stderr)
                return 1
            print(f"{dest}: verified, {report.describe()}", file=sys.stderr)
            return 0
        outcome = ensure_images(a.dest, hashes=a.hashes, url=a.url, archive=a.archive,
                                shared=None if a.no_shared else SHARED_COPY, timeout=a.timeout, progress=progress)
        print(outcome.message, file=sys.stderr)
        return 0
    except LfwIntegrityError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except LfwError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"error: {exc} (file system; check the path, free space and permissions)", file=sys.stderr)
        return 2



def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m epsaudit.build.lfw",
        description=("Make data/lfw/images hold exactly the LFW images the committed embeddings were made from "
                     f"({LFW_REPOSITORY} at {LFW_COMMIT[:12]}, folder images/), verified against "
                     "data/lfw_images.sha256: an existing folder is verified, else the shared copy beside the "
                     "repository is linked when it exists, else the archive is downloaded from GitHub, checked "
                     "and unpacked (nothing is left behind on failure)."),
        epilog=("Exit status: 0 images present and verified (or list written); 1 images or archive fail the "
                "checks; 2 could not run (arguments, hash list, network, file system)."))
    p.add_argument("--dest", type=Path, default=None,
                   help=f"folder to hold <Person>/<file>.jpg (default ${ENV_IMAGE_ROOT}, else {DEFAULT_IMAGE_ROOT} "
                        f"in the repository)")
    p.add_argument("--hashes", type=Path, default=None,
                   help="hash list in sha256sum format (default data/lfw_images.sha256 in the repository)")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--url", default=None, help=f"archive address (default ${ENV_URL}, else {DEFAULT_URL})")
    src.add_argument("--archive", type=Path, default=None,
                     help="a tar.gz of the repository downloaded before; nothing is downloaded")
    p.add_argument("--no-shared", action="store_true",
                   help="never link the shared copy (../shared/data/lfw beside the repository); download instead")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for the server (default 60)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--verify", action="store_true", help="only check the existing destination; download nothing")
    mode.add_argument("--write-hashes", type=Path, metavar="SRC", default=None,
                      help="write the hash list (--hashes, default data/lfw_images.sha256) from the folder SRC "
                           "holding <Person>/<file>.jpg")
    return p


if __name__ == "__main__":
    raise SystemExit(main())
