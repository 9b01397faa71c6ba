"""LFW images: where they are, which identities enter which regime, the donor, loading.

Image ids are the relative paths ``<Person>/<Person>_NNNN.jpg`` under the image root (the shared
LFW copy, see its PROVENANCE.md; never committed, ``data/lfw`` is a git-ignored link).

Regimes (*Picture the Epsilon* contrasts ~100 and ~30 rows per identity, Section IV): ``large``,
identities with >= 20 images, at most 100 each; ``small``, identities with 10-19 images, all of
them. An identity over the cap keeps a seeded sample (``stream("select", seed, identity)``), listed
sorted, so the choice depends neither on LFW's file numbering nor on other identities.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Mapping

import numpy as np

from ..protocol import stream

#: Environment variable that overrides the default image root.
ENV_IMAGE_ROOT = "EPSAUDIT_IMAGE_ROOT"
#: Default image root, relative to the working directory or, failing that, the repository.
DEFAULT_IMAGE_ROOT = Path("data") / "lfw" / "images"
_REPO_ROOT = Path(__file__).resolve().parents[2]


class ImageRootError(FileNotFoundError):
    """The LFW image root does not exist or holds no ``<Person>/*.jpg`` folders.

    Examples
    --------
    >>> issubclass(ImageRootError, FileNotFoundError)
    True
    """


@dataclass(frozen=True)
class Regime:
    """Identities with ``min_images <= count <= max_images`` images, ``cap`` images kept at most.

    Attributes
    ----------
    name, description : str
    min_images : int
    max_images, cap : int or None
        No upper limit; images kept per identity (a seeded sample when there are more), None keeps all.

    Examples
    --------
    >>> REGIMES["small"].admits(12), REGIMES["small"].admits(25), REGIMES["large"].settings()["cap"]
    (True, False, 100)
    """

    name: str
    min_images: int
    max_images: int | None
    cap: int | None
    description: str

    def admits(self, count: int) -> bool:
        """Whether an identity with ``count`` images belongs to the regime."""
        return count >= self.min_images and (self.max_images is None or count <= self.max_images)

    def settings(self) -> dict:
        """The regime's rule as a dict (for the manifest)."""
        return {"min_images": self.min_images, "max_images": self.max_images, "cap": self.cap,
                "description": self.description}


REGIMES: dict[str, Regime] = {
    "large": Regime("large", 20, None, 100, "identities with >= 20 images, capped at 100 images each (large-n)"),
    "small": Regime("small", 10, 19, None, "identities with 10-19 images, all images (small-n)"),
}

#: Identities with fewer images than this form the donor pool (disjoint from both regimes).
DONOR_POOL_MAX_IMAGES = 9


def image_root(root: str | os.PathLike | None = None) -> Path:
    """Resolve the LFW image root and check it: ``root`` if given; else ``$EPSAUDIT_IMAGE_ROOT``; else
    ``data/lfw/images`` under the working directory if it exists; else the repository's.

    Parameters
    ----------
    root : path-like, optional

    Returns
    -------
    pathlib.Path

    Raises
    ------
    ImageRootError
        When the folder is absent or has no person folders, with what to do about it.

    Examples
    --------
    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> for person, n in (("Ann", 12), ("Bob", 3)):
    ...     (root / person).mkdir()
    ...     for k in range(n):
    ...         _ = (root / person / f"{person}_{k + 1:04d}.jpg").write_bytes(b"")
    >>> image_root(root) == root
    True
    """
    if root is not None:
        candidates = [Path(root)]
    elif os.environ.get(ENV_IMAGE_ROOT):
        candidates = [Path(os.environ[ENV_IMAGE_ROOT])]
    else:
        candidates = [DEFAULT_IMAGE_ROOT, _REPO_ROOT / DEFAULT_IMAGE_ROOT]
    for path in candidates:
        if path.is_dir() and any(p.is_dir() for p in path.iterdir()):
            return path
    tried = ", ".join(str(p) for p in candidates)
    raise ImageRootError(
        f"LFW image root not found (tried {tried}). The images are not in the repository: run "
        f"`make lfw` to fetch and verify them into data/lfw/images (or link a shared copy), "
        f"or pass the folder holding <Person>/<Person>_NNNN.jpg (argument or ${ENV_IMAGE_ROOT})."
    )


def images_available(root: str | os.PathLike | None = None) -> bool:
    """True when :func:`image_root` would succeed.

    Parameters
    ----------
    root : path-like, optional

    Returns
    -------
    bool

    Examples
    --------
    >>> images_available("/nonexistent/lfw/images")
    False
    """
    try:
        image_root(root)
    except ImageRootError:
        return False
    return True


def list_identities(root: str | os.PathLike | None = None) -> dict[str, list[str]]:
    """All identities under the image root.

    Parameters
    ----------
    root : path-like, optional

    Returns
    -------
    dict
        ``person -> ["<person>/<file>", ...]`` (``.jpg``, ``.jpeg``, ``.png``), both sorted.

    Raises
    ------
    ImageRootError
        From :func:`image_root`.

    Examples
    --------
    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> for person, n in (("Ann", 12), ("Bob", 3)):
    ...     (root / person).mkdir()
    ...     for k in range(n):
    ...         _ = (root / person / f"{person}_{k + 1:04d}.jpg").write_bytes(b"")
    >>> ids = list_identities(root)
    >>> list(ids), ids["Bob"]
    (['Ann', 'Bob'], ['Bob/Bob_0001.jpg', 'Bob/Bob_0002.jpg', 'Bob/Bob_0003.jpg'])
    """
    base = image_root(root)
    out: dict[str, list[str]] = {}
    for person in sorted(p for p in base.iterdir() if p.is_dir()):
        files = sorted(f.name for f in person.iterdir() if f.suffix.lower() in (".jpg", ".jpeg", ".png"))
        if files:
            out[person.name] = [f"{person.name}/{name}" for name in files]
    return out


def select_regime(identities: Mapping[str, list[str]], regime: str | Regime, seed: int = 0,
                  max_identities: int | None = None, max_images: int | None = None) -> dict[str, list[str]]:
    """The identities of one regime and the images each keeps.

    Parameters
    ----------
    identities : mapping
        ``person -> image ids`` (:func:`list_identities`).
    regime : str or Regime
        ``"large"`` or ``"small"`` (:data:`REGIMES`).
    seed : int
        Selection seed for identities over the cap.
    max_identities, max_images : int, optional
        Subset for smoke runs: the first ``max_identities`` identities (sorted by name) and the first
        ``max_images`` of each one's selected images.

    Returns
    -------
    dict
        ``person -> sorted image ids``, persons sorted.

    Examples
    --------
    >>> ids = {"Ann": [f"Ann/Ann_{k:04d}.jpg" for k in range(1, 13)], "Bob": ["Bob/Bob_0001.jpg"]}
    >>> {p: len(v) for p, v in select_regime(ids, "small").items()}, select_regime(ids, "large")
    ({'Ann': 12}, {})
    """
    reg = REGIMES[regime] if isinstance(regime, str) else regime
    out: dict[str, list[str]] = {}
    for person in sorted(identities):
        ids = sorted(identities[person])
        if not reg.admits(len(ids)):
            continue
        if reg.cap is not None and len(ids) > reg.cap:
            rng = stream("select", seed, person)
            ids = sorted(ids[i] for i in rng.choice(len(ids), size=reg.cap, replace=False))
        if max_images is not None:
            ids = ids[:max_images]
        out[person] = ids
        if max_identities is not None and len(out) >= max_identities:
            break
    return out


def donor_candidates(identities: Mapping[str, list[str]], seed: int = 0) -> list[str]:
    """Image ids of identities with <= 9 images (outside every regime), in the order ``stream("donor", seed)``.

    Parameters
    ----------
    identities : mapping person -> image ids
    seed : int

    Returns
    -------
    list of str

    Examples
    --------
    >>> ids = {"Ann": [f"Ann/Ann_{k:04d}.jpg" for k in range(1, 13)], "Bob": ["Bob/Bob_0001.jpg", "Bob/Bob_0002.jpg"]}
    >>> sorted(donor_candidates(ids))
    ['Bob/Bob_0001.jpg', 'Bob/Bob_0002.jpg']
    """
    return seeded_order((i for ids in identities.values() if len(ids) <= DONOR_POOL_MAX_IMAGES for i in ids),
                        "donor", seed)


def seeded_order(ids: Iterable[str], *key: object) -> list[str]:
    """``ids`` sorted, then permuted by ``stream(*key)`` (a purpose, the seed, ...): an order that
    depends only on the set of ids and the key.

    Parameters
    ----------
    ids : iterable of str
    *key
        The stream's key.

    Returns
    -------
    list of str

    Examples
    --------
    >>> seeded_order(["b", "a", "c"], "demo", 0) == seeded_order(["c", "b", "a"], "demo", 0)
    True
    >>> sorted(seeded_order(["b", "a", "c"], "demo", 0))
    ['a', 'b', 'c']
    """
    ids = sorted(ids)
    return [ids[i] for i in stream(*key).permutation(len(ids))]


def choose_donor(identities: Mapping[str, list[str]], accept: Callable[[str], bool], seed: int = 0,
                 max_tries: int = 500) -> str:
    """The first of the first ``max_tries`` donor candidates (seeded order) that ``accept(image_id)``
    approves (the pipeline's donor check).

    Parameters
    ----------
    identities : mapping person -> image ids
    accept : callable ``image_id -> bool``
    seed, max_tries : int

    Returns
    -------
    str

    Raises
    ------
    RuntimeError
        If no candidate among the first ``max_tries`` is accepted.

    Examples
    --------
    >>> ids = {"Bob": ["Bob/Bob_0001.jpg", "Bob/Bob_0002.jpg"]}
    >>> choose_donor(ids, lambda image_id: image_id.endswith("0002.jpg"))
    'Bob/Bob_0002.jpg'
    """
    for image_id in donor_candidates(identities, seed)[:max_tries]:
        if accept(image_id):
            return image_id
    raise RuntimeError(f"no usable donor among the first {max_tries} candidates")


def identity_of(image_id: str) -> str:
    """The person folder of an image id ``<Person>/<file>``.

    Examples
    --------
    >>> identity_of("Tony_Blair/Tony_Blair_0001.jpg")
    'Tony_Blair'
    """
    return image_id.split("/", 1)[0]


def load_image(image_id: str, root: str | os.PathLike | None = None) -> np.ndarray:
    """Read one image as an ``(H, W, 3)`` ``uint8`` RGB array, upright: the EXIF orientation tag is
    applied (``PIL.ImageOps.exif_transpose``, so ``H`` and ``W`` swap for a 90-degree tag) and the
    detectors see an upright face. Every image the project reads goes through this function.

    Parameters
    ----------
    image_id : str
        Path relative to the image root, ``<Person>/<file>``.
    root : path-like, optional
        Image root (default: :func:`image_root`).

    Returns
    -------
    numpy.ndarray, shape (H, W, 3), uint8

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    ValueError
        If the file is not an image PIL can read (the path is named).

    Examples
    --------
    >>> import tempfile
    >>> from PIL import Image
    >>> root = Path(tempfile.mkdtemp())
    >>> (root / "Ann").mkdir()
    >>> Image.new("RGB", (40, 30), (200, 10, 10)).save(root / "Ann" / "Ann_0001.jpg")
    >>> image = load_image("Ann/Ann_0001.jpg", root)
    >>> image.shape, image.dtype
    ((30, 40, 3), dtype('uint8'))
    """
    from PIL import Image, ImageOps, UnidentifiedImageError

    path = image_root(root) / image_id
    try:
        with Image.open(path) as im:
            upright = ImageOps.exif_transpose(im)
            return np.asarray(upright.convert("RGB"), dtype=np.uint8).copy()
    except UnidentifiedImageError:
        raise ValueError(f"{path}: not an image file PIL can read") from None


def iter_selection(selection: Mapping[str, Mapping[str, Iterable[str]]]) -> list[tuple[str, str, str]]:
    """Flatten ``regime -> person -> ids`` into ``(regime, person, image_id)`` triples.

    Examples
    --------
    >>> iter_selection({"small": {"Ann": ["Ann/1.jpg", "Ann/2.jpg"]}})
    [('small', 'Ann', 'Ann/1.jpg'), ('small', 'Ann', 'Ann/2.jpg')]
    """
    return [(reg, person, i) for reg, people in selection.items() for person, ids in people.items() for i in ids]
