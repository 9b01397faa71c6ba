"""Downloading and unpacking the LFW archive, every image checked against the hash list on the way
(the fetch half of :mod:`epsaudit.build.lfw`; the list and the checks are :mod:`epsaudit.build.lfw_hashes`).

The archive is GitHub's tar.gz of :data:`LFW_REPOSITORY` at :data:`LFW_COMMIT`. It is streamed: a
download goes straight to a file, and unpacking reads the archive once, hashing each image while it
is written, so a truncated or damaged archive, an unsafe member path, a link or a duplicate is
refused before anything is kept. Nothing is downloaded at import time.
"""

from __future__ import annotations

import gzip
import hashlib
import http.client
import os
import re
import shutil
import tarfile
import urllib.error
import urllib.request
import zlib
from pathlib import Path
from typing import BinaryIO, Mapping

from epsaudit.build.images import ENV_IMAGE_ROOT
from epsaudit.build.lfw_hashes import (_CHUNK, LfwDownloadError, LfwError, LfwIntegrityError, VerifyReport, _bar,
                                       compare, read_hash_list)

#: The public GitHub repository holding the LFW images (the LFW web site).
LFW_REPOSITORY = "umass-vis-lfw/umass-vis-lfw.github.io"
#: The commit the committed embeddings were made from.
LFW_COMMIT = "2a620cd8cceb10430f8c7012fe9fa5f0837759e9"
#: GitHub's tar.gz of the whole repository at :data:`LFW_COMMIT` (one top-level folder, then ``images/``).
DEFAULT_URL = f"https://codeload.github.com/{LFW_REPOSITORY}/tar.gz/{LFW_COMMIT}"


def download(url: str, out: BinaryIO, timeout: float = 60.0, progress: bool = True) -> int:
    """Stream ``url`` into the open binary file ``out``.

    Parameters
    ----------
    url : str
        ``http(s)://`` address of the archive.
    out : binary file
        Open for writing; the caller removes it on failure.
    timeout : float
        Seconds to wait for the connection and for each read.
    progress : bool
        Show a progress bar (stderr) in bytes.

    Returns
    -------
    int
        Bytes received.

    Raises
    ------
    LfwDownloadError
        If the server cannot be reached, answers with an HTTP error or stops answering; the message
        names the URL and what to do instead.
    LfwIntegrityError
        If the server sent fewer bytes than the ``Content-Length`` it announced, or closed a chunked
        transfer early (a truncated download).

    Examples
    --------
    >>> import io, tempfile
    >>> source = Path(tempfile.mkdtemp()) / "archive.tar.gz"
    >>> _ = source.write_bytes(b"x" * 10)
    >>> out = io.BytesIO()
    >>> download(source.as_uri(), out, progress=False), out.getvalue()[:3]
    (10, b'xxx')
    """
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


# Over 80 lines only through its docstring (layouts, checks and errors documented, an example).
def unpack_verified(archive: str | os.PathLike, into: str | os.PathLike,
                    hashes: Mapping[str, str] | str | os.PathLike | None = None,
                    progress: bool = True, label: str | None = None) -> VerifyReport:
    """Unpack the ``images/**.jpg`` members of a tar(.gz) into a folder, checking each one.

    Members are taken from ``<top>/images/`` when every member lies in one top-level folder
    ``<top>`` (GitHub's archives: ``<repository>-<commit>/images/...``), else from ``images/`` at the
    top of the archive. Other members, and hidden files and folders under ``images/`` (``.DS_Store``),
    are read past, never written. Each image is written below ``into`` as ``<Person>/<file>.jpg``
    while its SHA-256 is computed; images not in the list are not written. A gzip archive is read to
    its end so that its length and CRC are checked: a truncated or damaged download is an error even
    when every image came before the cut.

    Parameters
    ----------
    archive : path-like
        A ``.tar.gz`` (as GitHub serves it) or an uncompressed ``.tar``.
    into : path-like
        An existing, empty folder (the caller removes it on failure).
    hashes : mapping or path-like, optional
        ``path -> sha256`` or a hash-list file; default the committed list.
    progress : bool
        Show a progress bar (stderr) over the archive's bytes.
    label : str, optional
        How messages name the archive (default its path), e.g. ``"downloaded from <url>"``.

    Returns
    -------
    VerifyReport
        The images found compared with the list; the caller decides what a failed report means.

    Raises
    ------
    LfwIntegrityError
        If the archive is truncated or damaged, or a member has an absolute path or ``..``, or a
        member under ``images/`` is a link or a special file, or an image appears twice.
    LfwError
        If the archive cannot be opened.

    Examples
    --------
    >>> import io, tempfile
    >>> work, data = Path(tempfile.mkdtemp()), b"not really a jpeg"
    >>> with tarfile.open(work / "lfw.tar.gz", "w:gz") as tar:  # laid out like GitHub's archive
    ...     info = tarfile.TarInfo("repo-abc123/images/Ann/Ann_0001.jpg")
    ...     info.size = len(data)
    ...     tar.addfile(info, io.BytesIO(data))
    >>> (work / "out").mkdir()
    >>> listed = {"images/Ann/Ann_0001.jpg": hashlib.sha256(data).hexdigest()}
    >>> report = unpack_verified(work / "lfw.tar.gz", work / "out", listed, progress=False)
    >>> report.ok, [p.name for p in (work / "out" / "Ann").iterdir()]
    (True, ['Ann_0001.jpg'])
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
    return compare(expected, members.finish(into))


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
