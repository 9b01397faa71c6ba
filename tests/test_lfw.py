"""epsaudit.build.lfw: fetching, unpacking and verifying the LFW images; the committed hash list.

Archives are small fakes laid out like GitHub's archive of the LFW repository (a pax global header,
one top-level folder, ``images/<Person>/<file>.jpg``, ``images/.DS_Store``, other folders after
``images/``), served by ``http.server`` from 127.0.0.1 on an ephemeral port. Nothing is downloaded
from the internet and no test needs the LFW images; the shared copy is never used (``shared=None``,
``--no-shared``) except by a fake one made here.
"""

from __future__ import annotations

import hashlib
import http.server
import io
import json
import os
import re
import socket
import subprocess
import sys
import tarfile
import threading
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from epsaudit.build import images as img
from epsaudit.build import lfw

REPO = Path(__file__).resolve().parents[1]
TOP = f"umass-vis-lfw.github.io-{lfw.LFW_COMMIT}"
LINE = re.compile(r"^[0-9a-f]{64}  images/[^/\s]+/[^/\s]+\.jpg\n$")

# Five fake images of three people (random bytes: the code never decodes them).
_rng = np.random.default_rng(7)
IMAGES = {f"images/{p}/{p}_{i:04d}.jpg": _rng.integers(0, 256, 300 + 37 * i, dtype=np.uint8).tobytes()
          for p, n in (("Alice_A", 2), ("Bob_B", 2), ("Carol_C", 1)) for i in range(1, n + 1)}
CHANGED = "images/Bob_B/Bob_B_0002.jpg"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    monkeypatch.delenv(lfw.ENV_URL, raising=False)
    monkeypatch.delenv(img.ENV_IMAGE_ROOT, raising=False)
    for name in ("no_proxy", "NO_PROXY"):  # a proxy configured for the internet must not see 127.0.0.1
        monkeypatch.setenv(name, "127.0.0.1,localhost")


@pytest.fixture
def hash_list(tmp_path) -> Path:
    path = tmp_path / "fake.sha256"
    path.write_text("".join(f"{_sha(d)}  {n}\n" for n, d in sorted(IMAGES.items())), encoding="utf-8")
    return path


def make_archive(path: Path, images: dict[str, bytes] | None = None, *, top: str | None = TOP,
                 extra: list[tarfile.TarInfo | tuple[tarfile.TarInfo, bytes]] = (), gz: bool = True,
                 tail: int = 0) -> bytes:
    """Write a tar(.gz) laid out like GitHub's archive; return its bytes.

    ``extra`` members go right after the images; ``tail`` bytes of incompressible data form a last
    member outside ``images/`` (so a cut in it comes after every image).
    """
    images = IMAGES if images is None else images
    pre = f"{top}/" if top else ""
    buf = io.BytesIO()
    mode = "w:gz" if gz else "w"
    with tarfile.open(fileobj=buf, mode=mode, format=tarfile.PAX_FORMAT,
                      pax_headers={"comment": lfw.LFW_COMMIT}) as tar:
        def add(name: str, data: bytes | None):
            info = tarfile.TarInfo(name)
            if data is None:
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(info)
            else:
                info.size, info.mode = len(data), 0o644
                tar.addfile(info, io.BytesIO(data))

        if top:
            add(top, None)
        add(f"{pre}README.txt", b"LFW\n")
        add(f"{pre}images", None)
        add(f"{pre}images/.DS_Store", b"\0" * 64)
        for person in sorted({n.split("/")[1] for n in images}):
            add(f"{pre}images/{person}", None)
            for name, data in sorted(images.items()):
                if name.split("/")[1] == person:
                    add(pre + name, data)
        for member in extra:
            info, data = member if isinstance(member, tuple) else (member, None)
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
        add(f"{pre}images_funneled/Alice_A/Alice_A_0001.jpg", b"a funneled copy, not taken")
        if tail:
            add(f"{pre}lfw_funneled_spseg/tail.dat", np.random.default_rng(1).bytes(tail))
    data = buf.getvalue()
    path.write_bytes(data)
    return data


class _Server:
    """Serve ``routes[path] = (body, how)`` from 127.0.0.1; how: ok | short | nolength | 404."""

    def __init__(self):
        self.routes: dict[str, tuple[bytes, str]] = {}
        routes = self.routes

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's name)
                body, how = routes.get(self.path, (b"", "404"))
                if how == "404":
                    self.send_error(404, "no such archive")
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/x-gzip")
                if how != "nolength":
                    self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body[: len(body) // 2] if how == "short" else body)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}{path}"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)


@pytest.fixture
def server():
    s = _Server()
    yield s
    s.close()


def _tree(root: Path) -> list[str]:
    """Every path under ``root`` (relative, sorted), hidden ones included."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")) if root.exists() else []


def _fetch(tmp_path, hash_list, **kw):
    kw.setdefault("shared", None)
    return lfw.ensure_images(tmp_path / "repo" / "data" / "lfw" / "images", hashes=hash_list, progress=False, **kw)


# ---------------------------------------------------------------------------------------------
# Fetching from a local server


def test_good_archive_is_fetched_verified_and_then_left_alone(tmp_path, hash_list, server):
    data = make_archive(tmp_path / "good.tar.gz")
    server.routes["/good.tar.gz"] = (data, "ok")
    out = _fetch(tmp_path, hash_list, url=server.url("/good.tar.gz"))
    dest = tmp_path / "repo" / "data" / "lfw" / "images"
    assert (out.how, out.dest, out.files) == ("fetched", dest, 5)
    assert out.message.startswith(f"fetched 5 images from {server.url('/good.tar.gz')} ")
    # Exactly the listed images: no .DS_Store, no images_funneled copy, no temporary files beside it.
    assert _tree(tmp_path / "repo") == sorted(["data", "data/lfw", "data/lfw/images"]
                                              + [f"data/lfw/{n}" for n in IMAGES]
                                              + [f"data/lfw/images/{p}" for p in ("Alice_A", "Bob_B", "Carol_C")])
    for name, content in IMAGES.items():
        assert (dest.parent / name).read_bytes() == content
    mask = os.umask(0)
    os.umask(mask)
    assert dest.stat().st_mode & 0o777 == 0o777 & ~mask  # an ordinary folder, not a private temporary one
    # The project's loader sees the three identities.
    assert img.list_identities(dest) == {"Alice_A": ["Alice_A/Alice_A_0001.jpg", "Alice_A/Alice_A_0002.jpg"],
                                         "Bob_B": ["Bob_B/Bob_B_0001.jpg", "Bob_B/Bob_B_0002.jpg"],
                                         "Carol_C": ["Carol_C/Carol_C_0001.jpg"]}
    server.routes.clear()  # a second run must not download
    again = _fetch(tmp_path, hash_list, url=server.url("/good.tar.gz"))
    assert again.how == "present"
    assert again.message == f"{dest}: already present, verified (5 images)"


def test_url_from_environment(tmp_path, hash_list, server, monkeypatch):
    server.routes["/env.tar.gz"] = (make_archive(tmp_path / "a.tar.gz"), "ok")
    monkeypatch.setenv(lfw.ENV_URL, server.url("/env.tar.gz"))
    assert _fetch(tmp_path, hash_list).how == "fetched"


def test_corrupted_file_is_named_and_nothing_is_written(tmp_path, hash_list, server):
    bad = dict(IMAGES, **{CHANGED: IMAGES[CHANGED][:-1] + b"\x00"})
    server.routes["/bad.tar.gz"] = (make_archive(tmp_path / "bad.tar.gz", bad), "ok")
    parent = tmp_path / "repo" / "data" / "lfw"
    parent.mkdir(parents=True)
    (parent / "keep.txt").write_text("mine")
    with pytest.raises(lfw.LfwIntegrityError) as err:
        _fetch(tmp_path, hash_list, url=server.url("/bad.tar.gz"))
    msg = str(err.value)
    assert f"1 with a different SHA-256: {CHANGED}" in msg
    assert msg.startswith(f"the archive downloaded from {server.url('/bad.tar.gz')} does not match {hash_list}: "
                          f"5 files listed, 5 found; ")
    assert msg.endswith(f"Nothing was written to {parent / 'images'}")
    assert err.value.report.mismatched == (CHANGED,)
    assert err.value.report.missing == () and err.value.report.extra == ()
    assert _tree(parent) == ["keep.txt"]  # destination absent, no temporary archive or folder


def test_missing_and_extra_files_are_counted_and_named(tmp_path, hash_list):
    images = {k: v for k, v in IMAGES.items() if k != "images/Carol_C/Carol_C_0001.jpg"}
    images["images/Dave_D/Dave_D_0001.jpg"] = b"not in the list"
    images["images/Dave_D/Dave_D_0002.jpg"] = b"not in the list either"
    make_archive(tmp_path / "odd.tar.gz", images)
    with pytest.raises(lfw.LfwIntegrityError) as err:
        _fetch(tmp_path, hash_list, archive=tmp_path / "odd.tar.gz")
    assert ("5 files listed, 6 found; 1 missing: images/Carol_C/Carol_C_0001.jpg; 2 extra (not in the list): "
            "images/Dave_D/Dave_D_0001.jpg, images/Dave_D/Dave_D_0002.jpg") in str(err.value)
    assert not (tmp_path / "repo").exists()  # every folder the call made is removed again


def test_truncated_download_against_content_length(tmp_path, hash_list, server):
    data = make_archive(tmp_path / "good.tar.gz")
    server.routes["/cut.tar.gz"] = (data, "short")
    with pytest.raises(lfw.LfwIntegrityError) as err:
        _fetch(tmp_path, hash_list, url=server.url("/cut.tar.gz"))
    assert (f"truncated download: received {len(data) // 2:,} of the {len(data):,} bytes announced by "
            f"{server.url('/cut.tar.gz')}; nothing was unpacked") in str(err.value)
    assert not (tmp_path / "repo").exists()


@pytest.mark.parametrize("cut", ["in the images", "after the images", "in the gzip trailer"])
def test_truncated_gzip_without_content_length(tmp_path, hash_list, server, cut):
    if cut == "in the images":
        data = make_archive(tmp_path / "good.tar.gz")
        n = len(data) // 2
    else:
        # The random tail does not compress, so the last 50 kB of the gzip lie inside it: every image
        # comes before such a cut, and only reading the gzip to its end notices it. Without its last
        # 4 bytes (the length field of the trailer) the tar itself is complete.
        data = make_archive(tmp_path / "good.tar.gz", tail=200_000)
        n = len(data) - (50_000 if cut == "after the images" else 4)
    server.routes["/cut.tar.gz"] = (data[:n], "nolength")
    with pytest.raises(lfw.LfwIntegrityError) as err:
        _fetch(tmp_path, hash_list, url=server.url("/cut.tar.gz"))
    assert str(err.value).startswith(f"the archive downloaded from {server.url('/cut.tar.gz')} is truncated or "
                                     f"damaged (")
    assert "is truncated or damaged (" in str(err.value) and "nothing was unpacked" in str(err.value)
    if cut != "in the images":
        assert "(EOFError: Compressed file ended before the end-of-stream marker was reached)" in str(err.value)
    assert not (tmp_path / "repo").exists()


@pytest.mark.parametrize("member, why", [
    (f"/{TOP}/images/Alice_A/evil.jpg", "unsafe path (absolute path)"),
    (f"{TOP}/images/../../evil.jpg", "unsafe path ('..' in path)"),
    ("../evil.jpg", "unsafe path ('..' in path)"),
    (("sym", f"{TOP}/images/Alice_A/Alice_A_0003.jpg", "/etc/passwd"), "is a link (to '/etc/passwd')"),
    (("hard", f"{TOP}/images/Bob_B/Bob_B_0003.jpg", f"{TOP}/README.txt"), "is a link"),
])
def test_unsafe_members_are_refused(tmp_path, hash_list, member, why):
    if isinstance(member, tuple):
        kind, name, target = member
        info = tarfile.TarInfo(name)
        info.type, info.linkname = (tarfile.SYMTYPE if kind == "sym" else tarfile.LNKTYPE), target
        extra = [info]
    else:
        name = member
        info = tarfile.TarInfo(name)
        info.size = 3
        extra = [(info, b"bad")]
    make_archive(tmp_path / "evil.tar.gz", extra=extra)
    with pytest.raises(lfw.LfwIntegrityError) as err:
        _fetch(tmp_path, hash_list, archive=tmp_path / "evil.tar.gz")
    assert f"member {name!r}" in str(err.value) and why in str(err.value)
    assert "nothing was unpacked" in str(err.value)
    assert not (tmp_path / "repo").exists() and not (tmp_path / "evil.jpg").exists()


def test_plain_tar_without_top_folder_via_the_command_line(tmp_path, hash_list, capsys):
    archive = tmp_path / "plain.tar"
    make_archive(archive, top=None, gz=False)
    dest = tmp_path / "out" / "images"
    code = lfw.main(["--archive", str(archive), "--dest", str(dest), "--hashes", str(hash_list),
                     "--no-shared", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert err.strip() == f"fetched 5 images from {archive}, verified against {hash_list}, into {dest}"
    assert sorted(str(p.relative_to(dest.parent)) for p in dest.rglob("*.jpg")) == sorted(IMAGES)


def test_network_failure_says_which_url_and_what_to_do(tmp_path, hash_list, capsys):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/lfw.tar.gz"
    with pytest.raises(lfw.LfwDownloadError) as err:
        _fetch(tmp_path, hash_list, url=url)
    msg = str(err.value)
    assert msg.startswith(f"could not download {url}: ")
    for advice in ("where GitHub (codeload.github.com) is reachable", "--archive PATH", "ln -s /path/to/lfw data/lfw"):
        assert advice in msg
    assert not (tmp_path / "repo").exists()
    code = lfw.main(["--url", url, "--dest", str(tmp_path / "x" / "images"), "--hashes", str(hash_list),
                     "--no-shared", "--no-progress"])
    assert code == 2
    assert capsys.readouterr().err.startswith(f"error: could not download {url}: ")
    assert not (tmp_path / "x").exists()


def test_http_error_is_reported_with_its_status(tmp_path, hash_list, server):
    with pytest.raises(lfw.LfwDownloadError, match=r"downloading http://127\.0\.0\.1:\d+/gone\.tar\.gz failed: "
                                                   r"HTTP 404 no such archive\. Run `make lfw` where GitHub"):
        _fetch(tmp_path, hash_list, url=server.url("/gone.tar.gz"))
    assert not (tmp_path / "repo").exists()


def test_missing_archive_file_is_a_usage_error(tmp_path, hash_list, capsys):
    code = lfw.main(["--archive", str(tmp_path / "none.tar.gz"), "--dest", str(tmp_path / "d" / "images"),
                     "--hashes", str(hash_list), "--no-progress"])
    assert code == 2
    assert f"--archive {tmp_path / 'none.tar.gz'}: no such file" in capsys.readouterr().err
    assert not (tmp_path / "d").exists()


# ---------------------------------------------------------------------------------------------
# Existing folders, the shared copy, --verify


def _folder(root: Path, images: dict[str, bytes] = IMAGES) -> Path:
    for name, data in images.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root / "images"


def test_verify_reports_a_changed_file(tmp_path, hash_list, capsys):
    images = _folder(tmp_path / "lfw")
    argv = ["--verify", "--dest", str(images), "--hashes", str(hash_list), "--no-progress"]
    assert lfw.main(argv) == 0
    assert capsys.readouterr().err.strip() == f"{images}: verified, all 5 files present with the listed SHA-256"
    (images / "Bob_B" / "Bob_B_0002.jpg").write_bytes(b"edited")
    (images / ".DS_Store").write_bytes(b"ignored")
    assert lfw.main(argv) == 1
    assert capsys.readouterr().err.strip() == (f"error: {images} does not match {hash_list}: 5 files listed, "
                                               f"5 found; 1 with a different SHA-256: {CHANGED}")
    assert (images / "Bob_B" / "Bob_B_0002.jpg").read_bytes() == b"edited"  # reported, not repaired


def test_verify_counts_stray_files_and_folders_as_extra(tmp_path, hash_list):
    images = _folder(tmp_path / "lfw")
    (images / "notes.txt").write_text("x")
    (images / "Alice_A" / "Alice_A_0001.png").write_bytes(b"x")
    (images / "Alice_A" / "deeper").mkdir()
    report = lfw.verify_tree(images, hash_list, progress=False)
    assert not report.ok
    assert report.extra == ("images/Alice_A/Alice_A_0001.png", "images/Alice_A/deeper/", "images/notes.txt")
    assert report.missing == () and report.mismatched == () and report.found == 8


def test_verify_without_a_folder_is_a_usage_error(tmp_path, hash_list, capsys):
    assert lfw.main(["--verify", "--dest", str(tmp_path / "nowhere"), "--hashes", str(hash_list)]) == 2
    assert "is not a folder: nothing to verify (run `make lfw`" in capsys.readouterr().err


def test_existing_destination_that_differs_is_left_untouched(tmp_path, hash_list, capsys):
    dest = _folder(tmp_path / "repo" / "data" / "lfw")
    (dest / "Carol_C" / "Carol_C_0001.jpg").unlink()
    before = _tree(tmp_path)
    code = lfw.main(["--dest", str(dest), "--hashes", str(hash_list), "--archive", str(tmp_path / "unused.tar.gz"),
                     "--no-progress"])
    assert code == 1
    err = capsys.readouterr().err
    assert f"error: {dest} already exists but does not match {hash_list}: 5 files listed, 4 found; " \
           f"1 missing: images/Carol_C/Carol_C_0001.jpg. It was left untouched" in err
    assert _tree(tmp_path) == before


def test_shared_copy_is_verified_and_linked(tmp_path, hash_list):
    shared = tmp_path / "shared" / "data" / "lfw"
    _folder(shared)
    dest = tmp_path / "repo" / "data" / "lfw" / "images"
    (tmp_path / "repo" / "data").mkdir(parents=True)
    out = lfw.ensure_images(dest, hashes=hash_list, shared=shared, progress=False)
    assert out.how == "linked" and out.files == 5
    assert os.readlink(dest.parent) == "../../shared/data/lfw"  # what `make data-link` makes
    assert (dest / "Alice_A" / "Alice_A_0001.jpg").read_bytes() == IMAGES["images/Alice_A/Alice_A_0001.jpg"]
    assert lfw.ensure_images(dest, hashes=hash_list, shared=shared, progress=False).how == "present"


def test_shared_copy_that_differs_is_not_linked(tmp_path, hash_list):
    shared = tmp_path / "shared" / "data" / "lfw"
    _folder(shared, {k: v for k, v in IMAGES.items() if "Alice" not in k})
    dest = tmp_path / "repo" / "data" / "lfw" / "images"
    with pytest.raises(lfw.LfwIntegrityError, match=r"the shared copy .* does not match .*: 5 files listed, 3 found; "
                                                    r"2 missing: images/Alice_A/Alice_A_0001\.jpg, "
                                                    r"images/Alice_A/Alice_A_0002\.jpg\. Nothing was linked"):
        lfw.ensure_images(dest, hashes=hash_list, shared=shared, progress=False)
    assert not (tmp_path / "repo").exists()


def test_broken_link_is_named(tmp_path, hash_list):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "lfw").symlink_to(tmp_path / "gone")
    with pytest.raises(lfw.LfwError, match=r"data/lfw is a link to .*gone, which does not exist: remove the link"):
        lfw.ensure_images(tmp_path / "data" / "lfw" / "images", hashes=hash_list, shared=None, progress=False)


# ---------------------------------------------------------------------------------------------
# Writing and reading hash lists


def test_write_hash_list_matches_sha256sum_format(tmp_path, hash_list, capsys):
    images = _folder(tmp_path / "lfw")
    (images / ".DS_Store").write_bytes(b"ignored")
    out = tmp_path / "made.sha256"
    assert lfw.main(["--write-hashes", str(images), "--hashes", str(out), "--no-progress"]) == 0
    assert re.fullmatch(rf"wrote 5 lines to {re.escape(str(out))} in \d+\.\d s\n", capsys.readouterr().err)
    assert out.read_bytes() == hash_list.read_bytes()
    assert out.stat().st_mode & 0o044 == 0o044  # readable by others, like any committed file
    assert lfw.read_hash_list(out) == {n: _sha(d) for n, d in sorted(IMAGES.items())}


def test_write_hash_list_refuses_a_folder_of_the_wrong_shape(tmp_path):
    _folder(tmp_path / "lfw")
    with pytest.raises(lfw.LfwError, match=r"lfw holds 3 entries that are not <Person>/<file>\.jpg files "
                                           r"\(images/images/Alice_A/, images/images/Bob_B/, images/images/Carol_C/\); "
                                           r"pass the folder holding the person folders"):
        lfw.write_hash_list(tmp_path / "lfw", tmp_path / "out.sha256", progress=False)
    assert not (tmp_path / "out.sha256").exists()


@pytest.mark.parametrize("text, message", [
    ("", "is empty"),
    (f"{'a' * 64}  images/A/A_0001.jpg\n{'b' * 63}  images/A/A_0002.jpg\n", "line 2: expected '<64 hex digits>"),
    (f"{'a' * 64} images/A/A_0001.jpg\n", "line 1: expected"),
    (f"{'a' * 64}  A/A_0001.jpg\n", "line 1: expected"),
    (f"{'a' * 64}  images/A/A_0001.jpg\n{'b' * 64}  images/A/A_0001.jpg\n",
     "line 2: images/A/A_0001.jpg is listed twice"),
])
def test_read_hash_list_rejects_malformed_lists(tmp_path, text, message):
    path = tmp_path / "bad.sha256"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(lfw.LfwError, match=re.escape(message)):
        lfw.read_hash_list(path)


def test_missing_hash_list_says_where_it_should_be(tmp_path):
    with pytest.raises(lfw.LfwError, match=r"hash list .*none\.sha256 not found: the repository commits it as "
                                           r"data/lfw_images\.sha256"):
        lfw.read_hash_list(tmp_path / "none.sha256")


def test_module_runs_as_a_command_and_imports_without_network(tmp_path, hash_list):
    images = _folder(tmp_path / "lfw")
    code = ("import sys, urllib.request\n"
            "def refuse(*a, **k): raise AssertionError('network used at import')\n"
            "urllib.request.urlopen = refuse\n"
            "import runpy\n"
            f"sys.argv = ['lfw', '--verify', '--dest', {str(images)!r}, '--hashes', {str(hash_list)!r},\n"
            "            '--no-progress']\n"
            "runpy.run_module('epsaudit.build.lfw', run_name='__main__')\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stderr.strip() == f"{images}: verified, all 5 files present with the listed SHA-256"
    assert res.stdout == ""


# ---------------------------------------------------------------------------------------------
# The committed hash list (no images needed)


def test_committed_hash_list_is_complete_and_well_formed():
    lines = lfw.HASH_LIST.read_text(encoding="utf-8").splitlines(keepends=True)
    assert len(lines) == lfw.N_IMAGES == 13_232
    bad = [line for line in lines if not LINE.match(line)]
    assert bad == []
    paths = [line[66:-1] for line in lines]
    assert len(set(paths)) == 13_232
    assert paths == sorted(paths)  # byte order, as `LC_ALL=C sort -k2`
    by_hash: dict[str, list[str]] = {}
    for line in lines:
        by_hash.setdefault(line[:64], []).append(line[66:-1])
    # Two photographs are in LFW twice, under two names each (identical bytes); no other repeats.
    assert sorted(v for v in by_hash.values() if len(v) > 1) == [
        ["images/Bart_Hendricks/Bart_Hendricks_0001.jpg", "images/Ricky_Ray/Ricky_Ray_0001.jpg"],
        ["images/Carlos_Beltran/Carlos_Beltran_0001.jpg", "images/Raul_Ibanez/Raul_Ibanez_0001.jpg"]]
    hashes = lfw.read_hash_list()
    assert len(hashes) == 13_232
    per_person = Counter(p.split("/")[1] for p in paths)
    assert len(per_person) == 5_748  # LFW's 5,749 people less Betsy_Coffin, whose one file is absent
    # PROVENANCE.md of the copy: 158 people with >= 10 images (4,324), 62 with >= 20 (3,023).
    assert sum(1 for c in per_person.values() if c >= 10) == 158
    assert sum(c for c in per_person.values() if c >= 10) == 4_324
    assert sum(1 for c in per_person.values() if c >= 20) == 62
    assert sum(c for c in per_person.values() if c >= 20) == 3_023
    assert per_person.most_common(2) == [("George_W_Bush", 530), ("Colin_Powell", 236)]


def test_committed_hash_list_matches_the_committed_embedding_tables():
    hashes = lfw.read_hash_list()
    identities: dict[str, list[str]] = {}
    for path in hashes:
        _, person, name = path.split("/")
        identities.setdefault(person, []).append(f"{person}/{name}")
    manifest = json.loads((REPO / "data" / "manifest.json").read_text(encoding="utf-8"))
    seed = manifest["generation"]["seed"]
    tables = sorted((REPO / "data").glob("*.csv"))
    assert len(tables) == 14
    for table in tables:
        df = pd.read_csv(table, usecols=["identity", "image_id"])
        ids = set(df["image_id"])
        assert {f"images/{i}" for i in ids} <= set(hashes), table.name
        assert (df["image_id"].str.split("/").str[0] == df["identity"]).all(), table.name
        encoder, regime, _ = table.stem.split("_", 2)
        if regime in img.REGIMES:  # the regime selection re-made from the list gives exactly the table's images
            chosen = img.select_regime(identities, regime, seed=seed)
            assert ids == {i for people in chosen.values() for i in people}, table.name
            assert df["identity"].nunique() == manifest["generation"]["regimes"][regime]["identities"]
    donor = manifest["generation"]["donor"]
    assert hashes[f"images/{donor['image_id']}"] == donor["sha256"]
