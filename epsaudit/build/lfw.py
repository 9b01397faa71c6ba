"""Get the LFW photographs: the exact copy the committed embeddings were made from, verified.

The committed embedding tables (``data/*.csv``) were computed from the 13,232 JPEG files of the
folder ``images/`` of the public repository of the LFW web site, ``umass-vis-lfw/umass-vis-lfw.github.io``,
at commit :data:`LFW_COMMIT`. ``data/lfw_images.sha256`` lists the SHA-256 of every one of them in
the format of ``sha256sum`` (``<hex>  images/<Person>/<Person>_NNNN.jpg``, sorted by path), so any
copy can be checked with this module (``--verify``) or with ``sha256sum -c`` run in the folder that
holds ``images/``.

``python -m epsaudit.build.lfw`` (``make lfw``) makes ``data/lfw/images`` hold exactly those files:

1. if the destination already exists it is verified and left alone ("already present, verified"),
   or reported file by file when it differs (it is never modified);
2. else, if the shared read-only copy ``../shared/data/lfw`` exists beside the repository, it is
   verified and linked (``data/lfw -> ../../shared/data/lfw``, as ``make data-link`` does);
3. else the archive of the pinned commit is downloaded from GitHub (:data:`DEFAULT_URL`, about
   460 MB, of which the images are 97 MB; ``--url`` or ``$EPSAUDIT_LFW_URL`` give another address,
   ``--archive PATH`` a tar.gz downloaded before) into a temporary file beside the destination, its
   ``images/**.jpg`` members are unpacked into a temporary folder there, each file and the complete
   set are checked against the list, and only then is the folder renamed to the destination.

On any failure (network, truncated download, damaged archive, unsafe member path, missing, extra or
changed file) the temporary files are removed and the destination is not created.

``python -m epsaudit.build.lfw --verify`` checks an existing folder without downloading anything;
``python -m epsaudit.build.lfw --write-hashes SRC`` (re)makes the list from a folder ``SRC`` holding
``<Person>/<Person>_NNNN.jpg`` (it was made once from the shared copy).

Exit status: 0 when the images are present and verified (or the list was written); 1 when images or
an archive fail the checks (missing, extra or changed files, a truncated download, a damaged archive,
an unsafe member); 2 when the command could not run (arguments, hash list, network, file system).
Messages go to stderr. Nothing is downloaded at import time.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from epsaudit.build.images import DEFAULT_IMAGE_ROOT, ENV_IMAGE_ROOT
from epsaudit.build.lfw_archive import DEFAULT_URL, LFW_COMMIT, LFW_REPOSITORY, download, unpack_verified
from epsaudit.build.lfw_hashes import (HASH_LIST, N_IMAGES, LfwDownloadError, LfwError, LfwIntegrityError,
                                       VerifyReport, _REPO_ROOT, compare, read_hash_list, sha256_file, verify_tree,
                                       write_hash_list)

__all__ = ["DEFAULT_DEST", "DEFAULT_URL", "ENV_URL", "HASH_LIST", "LFW_COMMIT", "LFW_REPOSITORY", "N_IMAGES",
           "SHARED_COPY", "LfwDownloadError", "LfwError", "LfwIntegrityError", "Outcome", "VerifyReport", "compare",
           "default_dest", "download", "ensure_images", "main", "read_hash_list", "sha256_file", "unpack_verified",
           "verify_tree", "write_hash_list"]

#: Environment variable that overrides :data:`DEFAULT_URL`.
ENV_URL = "EPSAUDIT_LFW_URL"
#: Default destination (``$EPSAUDIT_IMAGE_ROOT`` when set, see :func:`default_dest`).
DEFAULT_DEST = _REPO_ROOT / DEFAULT_IMAGE_ROOT
#: Shared read-only copy beside the repository, linked instead of downloading when it exists.
SHARED_COPY = _REPO_ROOT.parent / "shared" / "data" / "lfw"


@dataclass(frozen=True)
class Outcome:
    """What :func:`ensure_images` did.

    Attributes
    ----------
    how : str
        ``"present"`` (the destination was already there and verified), ``"linked"`` (the shared
        copy was verified and linked) or ``"fetched"`` (downloaded or unpacked, verified, renamed).
    dest : Path
        The destination folder.
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


def default_dest() -> Path:
    """The folder the project reads images from: ``$EPSAUDIT_IMAGE_ROOT`` if set, else ``data/lfw/images``.

    Returns
    -------
    pathlib.Path
        :data:`DEFAULT_DEST` (in the repository) unless the environment variable is set.

    Examples
    --------
    >>> default_dest() == (Path(os.environ[ENV_IMAGE_ROOT]) if os.environ.get(ENV_IMAGE_ROOT) else DEFAULT_DEST)
    True
    """
    env = os.environ.get(ENV_IMAGE_ROOT)
    return Path(env) if env else DEFAULT_DEST


# ---------------------------------------------------------------------------------------------
# The whole command


def ensure_images(dest: str | os.PathLike | None = None, *, hashes: str | os.PathLike | None = None,
                  url: str | None = None, archive: str | os.PathLike | None = None,
                  shared: str | os.PathLike | None = SHARED_COPY, timeout: float = 60.0,
                  progress: bool = True) -> Outcome:
    """Make ``dest`` hold exactly the listed LFW images; touch nothing on failure.

    Order: an existing ``dest`` is verified and left alone; else the shared copy, when it exists
    and no ``archive`` is given, is verified and linked; else the archive (``archive``, or a download
    of ``url``) is unpacked and verified in a temporary folder beside ``dest``, then renamed to it.

    Parameters
    ----------
    dest : path-like, optional
        Folder to hold ``<Person>/<file>.jpg`` (default :func:`default_dest`).
    hashes : path-like, optional
        Hash list (default the committed ``data/lfw_images.sha256``).
    url : str, optional
        Archive address (default ``$EPSAUDIT_LFW_URL``, else :data:`DEFAULT_URL`).
    archive : path-like, optional
        A tar.gz already on disk; nothing is downloaded.
    shared : path-like or None
        A copy holding ``images/`` to link instead of downloading when it exists (default the
        shared copy beside the repository); ``None`` never links.
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
        (the report names missing, extra and changed files); the destination is left as it was.
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
    dest = Path(default_dest() if dest is None else dest)
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
                size = download(url, out, timeout, progress)
            source, label = tmp_archive, f"downloaded from {url}"
            origin = f"{url} ({size / 1e6:,.1f} MB)"
        else:
            source = Path(archive)
            origin = label = str(source)
        tmp_dir = parent / f".{dest.name}.partial-{os.getpid()}-{secrets.token_hex(4)}"
        tmp_dir.mkdir()
        report = unpack_verified(source, tmp_dir, expected, progress, label)
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
        0 when the images are present and verified (or the list was written); 1 when images or an
        archive fail the checks; 2 when the command could not run. Messages go to stderr.

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
    >>> main(["--archive", str(work / "lfw.tar.gz"), "--dest", str(work / "lfw" / "images"), "--hashes", str(listed),
    ...       "--no-shared", "--no-progress"])
    0
    >>> main(["--verify", "--dest", str(work / "elsewhere"), "--hashes", str(listed), "--no-progress"])
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
            dest = a.dest or default_dest()
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
