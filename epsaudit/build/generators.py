"""Image-space generators applied before encoding: ``none``, ``swap`` and ``dp-pix``.

Each generator is a callable ``gen(image, image_id) -> (output, info)`` on ``(H, W, 3)`` uint8 RGB
arrays, with ``gen.name`` and ``gen.settings()`` (recorded in the manifest).

``swap`` -- a classical landmark face swap, the stand-in for the FaceFusion protocol of *Picture the Epsilon* (Section
IV): ONE fixed donor image for every target, labelled by the target identity, deterministic. Steps (:func:`swap_face`):
dlib's 68 landmarks on target and donor; Delaunay triangulation of the target's points; each donor triangle affinely
warped onto its target triangle; OpenCV's Poisson ``seamlessClone`` inside a mask. Variants (:data:`SWAP_VARIANTS`):
``hull`` (convex hull of all 68 points, normal clone; the data condition), ``inner`` (hull of points 17-67: the target
keeps jaw and cheek outline) and ``hull-mixed`` (mixed clone). A target without a detectable face passes through
unchanged (``info["swap"] == "no-face"``, counted in the manifest).

``dp-pix`` -- Fan (2018), "Image pixelization with differential privacy": each ``b x b`` cell's mean plus Laplace noise
of scale ``Delta / epsilon``, clipped to [0, 255]; neighbours differ in at most ``m`` pixels. On RGB all three channels
of a changed pixel count, ``Delta = 3 * 255 m / b^2`` (Fan's grey formula per channel would give 3 epsilon); border
cells use their own pixel count in place of ``b^2``, which keeps the guarantee for any image size. The noise is seeded
by ``(seed, image_id)``; ``epsilon=inf`` is plain pixelisation.

``none`` -- the original photograph (what no privacy looks like).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..protocol import generator, stream

#: Swap variants: mask region and seamless-clone mode.
SWAP_VARIANTS: dict[str, dict[str, str]] = {
    "hull": {"region": "convex hull of all 68 landmarks", "clone": "normal"},
    "inner": {"region": "convex hull of landmarks 17-67 (brows, eyes, nose, mouth)", "clone": "normal"},
    "hull-mixed": {"region": "convex hull of all 68 landmarks", "clone": "mixed"},
}
_INNER = np.arange(17, 68)
_PAD = 32  # reflect-padding (px) so that landmarks near the border and the clone stay inside


class NoFaceError(ValueError):
    """No face (68 landmarks) was found in an image that :func:`swap_face` needs one in.

    Examples
    --------
    >>> issubclass(NoFaceError, ValueError)
    True
    """


# -------------------------------------------------------------------------------------------------
# landmarks


class LandmarkModels:
    """dlib's HOG and CNN detectors and the 68-point shape predictor (loaded once).

    Parameters
    ----------
    upsample : int
        Upsampling passes of both detectors.
    cnn_fallback : bool
        Use the CNN detector when HOG finds nothing.

    Raises
    ------
    ImportError
        When dlib or face-recognition-models is not installed.

    Examples
    --------
    >>> LandmarkModels(cnn_fallback=False).landmarks(np.full((150, 150, 3), 90, dtype=np.uint8))  # no face
    (None, None)
    """

    def __init__(self, upsample: int = 1, cnn_fallback: bool = True):
        import dlib
        import face_recognition_models as frm

        self._dlib = dlib
        self.upsample = upsample
        self.cnn_fallback = cnn_fallback
        self._hog = dlib.get_frontal_face_detector()
        self._cnn = None
        self._cnn_file = frm.cnn_face_detector_model_location()
        self._sp68 = dlib.shape_predictor(frm.pose_predictor_model_location())

    def hog_faces(self, img: np.ndarray) -> list:
        """Every face (``dlib.rectangle``) the HOG detector finds in a contiguous uint8 RGB image."""
        return list(self._hog(img, self.upsample))

    def cnn_faces(self, img: np.ndarray) -> list:
        """Every face (``dlib.rectangle``) the CNN detector finds (loaded on first use)."""
        if self._cnn is None:
            self._cnn = self._dlib.cnn_face_detection_model_v1(self._cnn_file)
        return [d.rect for d in self._cnn(img, self.upsample)]

    def points(self, img: np.ndarray, rect) -> np.ndarray:
        """The 68 landmarks ``(68, 2)`` (x, y) of the face in ``rect``."""
        shape = self._sp68(img, rect)
        return np.array([(p.x, p.y) for p in shape.parts()], dtype=np.float64)

    def detect(self, img: np.ndarray):
        """``(dlib.rectangle, "hog" | "cnn")`` of the face nearest the image centre, or ``(None, None)``."""
        rects, path = self.hog_faces(img), "hog"
        if not rects and self.cnn_fallback:
            rects, path = self.cnn_faces(img), "cnn"
        if not rects:
            return None, None
        cy, cx = img.shape[0] / 2, img.shape[1] / 2
        keys = [((r.left() + r.width() / 2 - cx) ** 2 + (r.top() + r.height() / 2 - cy) ** 2, -r.area()) for r in rects]
        return rects[min(range(len(rects)), key=keys.__getitem__)], path

    def landmarks(self, image: np.ndarray) -> tuple[np.ndarray | None, str | None]:
        """The 68 landmarks ``(68, 2)`` (x, y) of the central face and the detector, or ``(None, None)``."""
        img = np.ascontiguousarray(image, dtype=np.uint8)
        rect, path = self.detect(img)
        if rect is None:
            return None, None
        return self.points(img, rect), path


_MODELS: LandmarkModels | None = None


def default_models() -> LandmarkModels:
    """One :class:`LandmarkModels` per process, loaded on first use.

    Examples
    --------
    >>> default_models() is default_models()
    True
    """
    global _MODELS
    if _MODELS is None:
        _MODELS = LandmarkModels()
    return _MODELS


def face_landmarks(image: np.ndarray, models: LandmarkModels | None = None) -> tuple[np.ndarray | None, str | None]:
    """dlib's 68 landmarks ``(68, 2)`` (x, y) of the central face of an ``(H, W, 3)`` uint8 image and
    the detector used (``"hog"``/``"cnn"``), or ``(None, None)``.

    Parameters
    ----------
    image : numpy.ndarray, shape (H, W, 3), uint8
    models : LandmarkModels, optional
        Default: one set per process, loaded on first use.

    Returns
    -------
    landmarks : numpy.ndarray, shape (68, 2), or None
    detector : str or None

    Examples
    --------
    >>> face_landmarks(np.full((150, 150, 3), 90, dtype=np.uint8))
    (None, None)
    """
    return (models or default_models()).landmarks(image)


# -------------------------------------------------------------------------------------------------
# swap


def _warp_triangle(src: np.ndarray, dst: np.ndarray, tri_src: np.ndarray, tri_dst: np.ndarray) -> None:
    """Affine-warp triangle ``tri_src`` of ``src`` onto ``tri_dst`` of ``dst`` (float32, in place)."""
    import cv2

    x1, y1, w1, h1 = cv2.boundingRect(tri_src.astype(np.float32))
    x2, y2, w2, h2 = cv2.boundingRect(tri_dst.astype(np.float32))
    if w1 < 1 or h1 < 1 or w2 < 1 or h2 < 1:
        return
    patch = src[y1:y1 + h1, x1:x1 + w1]
    if patch.shape[0] != h1 or patch.shape[1] != w1:  # rectangle leaves the image: skip
        return
    t1 = (tri_src - (x1, y1)).astype(np.float32)
    t2 = (tri_dst - (x2, y2)).astype(np.float32)
    M = cv2.getAffineTransform(t1, t2)
    warped = cv2.warpAffine(patch, M, (w2, h2), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT_101)
    mask = np.zeros((h2, w2), dtype=np.float32)
    cv2.fillConvexPoly(mask, np.round(t2).astype(np.int32), 1.0, cv2.LINE_AA, 0)
    region = dst[y2:y2 + h2, x2:x2 + w2]
    if region.shape[:2] != mask.shape:
        return
    m = mask[:, :, None]
    region *= 1.0 - m
    region += warped * m


def swap_face(target: np.ndarray, donor: np.ndarray, variant: str = "hull", *,
              target_landmarks: np.ndarray | None = None, donor_landmarks: np.ndarray | None = None,
              models: LandmarkModels | None = None) -> np.ndarray:
    """Swap the face of ``donor`` onto ``target`` (both RGB uint8); deterministic.

    Parameters
    ----------
    target, donor : ndarray (H, W, 3) uint8
        Any sizes; the output has the target's.
    variant : str
        A key of :data:`SWAP_VARIANTS` (``hull``, ``inner``, ``hull-mixed``).
    target_landmarks, donor_landmarks : ndarray (68, 2), optional
        Precomputed dlib landmarks (x, y); found with :func:`face_landmarks` when omitted.

    Returns
    -------
    numpy.ndarray, shape of ``target``, uint8

    Raises
    ------
    NoFaceError
        No face in the target or the donor.
    ValueError
        An unknown ``variant``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> target, donor = (rng.integers(0, 256, size=(150, 150, 3), dtype=np.uint8) for _ in range(2))
    >>> points = rng.uniform(40, 110, size=(68, 2))  # landmarks given: no detector runs
    >>> out = swap_face(target, donor, target_landmarks=points, donor_landmarks=points)
    >>> out.shape, bool((out != target).any()), bool((out[:20] == target[:20]).all())
    ((150, 150, 3), True, True)
    """
    import cv2
    from scipy.spatial import Delaunay

    if variant not in SWAP_VARIANTS:
        raise ValueError(f"unknown swap variant {variant!r}; choose from {sorted(SWAP_VARIANTS)}")
    target = np.ascontiguousarray(target, dtype=np.uint8)
    donor = np.ascontiguousarray(donor, dtype=np.uint8)
    if target_landmarks is None:
        target_landmarks, _ = face_landmarks(target, models)
        if target_landmarks is None:
            raise NoFaceError("no face found in the target image")
    if donor_landmarks is None:
        donor_landmarks, _ = face_landmarks(donor, models)
        if donor_landmarks is None:
            raise NoFaceError("no face found in the donor image")

    p = _PAD
    tgt = cv2.copyMakeBorder(target, p, p, p, p, cv2.BORDER_REFLECT_101)
    don = cv2.copyMakeBorder(donor, p, p, p, p, cv2.BORDER_REFLECT_101)
    tp = np.clip(np.asarray(target_landmarks, np.float64) + p, 0, [tgt.shape[1] - 1, tgt.shape[0] - 1])
    dp = np.clip(np.asarray(donor_landmarks, np.float64) + p, 0, [don.shape[1] - 1, don.shape[0] - 1])

    warped = np.zeros(tgt.shape, dtype=np.float32)
    src = don.astype(np.float32)
    for simplex in Delaunay(tp).simplices:
        _warp_triangle(src, warped, dp[simplex], tp[simplex])

    spec = SWAP_VARIANTS[variant]
    region = tp[_INNER] if spec["region"].startswith("convex hull of landmarks 17") else tp
    hull = cv2.convexHull(np.round(region).astype(np.int32))
    mask = np.zeros(tgt.shape[:2], dtype=np.uint8)
    cv2.fillConvexPoly(mask, hull, 255)
    x, y, w, h = cv2.boundingRect(hull)
    centre = (int(x + w // 2), int(y + h // 2))
    flag = cv2.NORMAL_CLONE if spec["clone"] == "normal" else cv2.MIXED_CLONE
    out = cv2.seamlessClone(np.clip(np.round(warped), 0, 255).astype(np.uint8), tgt, mask, centre, flag)
    return np.ascontiguousarray(out[p:p + target.shape[0], p:p + target.shape[1]])


class SwapGenerator:
    """The ``swap`` generator: one fixed donor image swapped onto every target.

    Parameters
    ----------
    donor : ndarray (H, W, 3) uint8
    donor_id : str, optional
        Image id of the donor (recorded in :meth:`settings`).
    variant : str
        :data:`SWAP_VARIANTS` key.

    Raises
    ------
    NoFaceError
        No face in the donor image.
    ValueError
        An unknown ``variant``.

    Examples
    --------
    >>> SwapGenerator(np.full((150, 150, 3), 90, dtype=np.uint8), "blank.jpg")
    Traceback (most recent call last):
    ...
    epsaudit.build.generators.NoFaceError: no face found in the donor image blank.jpg
    """

    name = "swap"

    def __init__(self, donor: np.ndarray, donor_id: str | None = None, variant: str = "hull",
                 models: LandmarkModels | None = None):
        if variant not in SWAP_VARIANTS:
            raise ValueError(f"unknown swap variant {variant!r}; choose from {sorted(SWAP_VARIANTS)}")
        self.models = models or default_models()
        self.donor = np.ascontiguousarray(donor, dtype=np.uint8)
        self.donor_id = donor_id
        self.variant = variant
        self.donor_landmarks, path = self.models.landmarks(self.donor)
        if self.donor_landmarks is None:
            raise NoFaceError(f"no face found in the donor image {donor_id or ''}".strip())
        self.donor_path = path

    def __call__(self, image: np.ndarray, image_id: str | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        pts, path = self.models.landmarks(image)
        if pts is None:
            return np.array(image, dtype=np.uint8, copy=True), {"swap": "no-face"}
        out = swap_face(image, self.donor, self.variant, target_landmarks=pts, donor_landmarks=self.donor_landmarks)
        return out, {"swap": path}

    def settings(self) -> dict[str, Any]:
        """The generator's settings, for the manifest."""
        return {"method": "classical landmark face swap (dlib 68 landmarks, Delaunay, per-triangle affine, seamlessClone)",
                "variant": self.variant, **SWAP_VARIANTS[self.variant], "donor_image": self.donor_id,
                "landmarks": f"dlib shape_predictor_68, HOG detector upsample={self.models.upsample}"
                             + (", CNN fallback" if self.models.cnn_fallback else ""),
                "no_face_target": "passed through unchanged (counted)", "randomness": "none (deterministic)"}


# -------------------------------------------------------------------------------------------------
# dp-pix


def _cells(n: int, block: int) -> np.ndarray:
    """Sizes of the consecutive cells of length ``block`` covering ``n`` (the last may be shorter)."""
    sizes = np.full(n // block, block, dtype=np.int64)
    return np.append(sizes, n % block) if n % block else sizes


def dp_pix(image: np.ndarray, block: int, m: int, epsilon: float, rng: np.random.Generator | int = 0) -> np.ndarray:
    """Fan's DP-Pix on an RGB image: cell means + Laplace(``3*255*m/(cell pixels*epsilon)``), clipped.

    Parameters
    ----------
    image : ndarray (H, W, 3) uint8
    block, m : int
        Cell side ``b`` in pixels; images differing in at most ``m`` pixels are neighbours.
    epsilon : float
        Privacy parameter; ``math.inf`` gives noise-free pixelisation (no random draws).
    rng : numpy Generator or int seed

    Returns
    -------
    ndarray (H, W, 3) uint8

    Raises
    ------
    ValueError
        A non-3-D image, ``block < 1``, ``m < 1`` or ``epsilon <= 0``.

    Examples
    --------
    >>> dp_pix(np.full((4, 4, 3), 100, dtype=np.uint8), block=2, m=1, epsilon=100.0, rng=0)[:, :, 0].tolist()
    [[99, 99, 107, 107], [99, 99, 107, 107], [102, 102, 99, 99], [102, 102, 99, 99]]
    """
    x = np.asarray(image, dtype=np.float64)
    if x.ndim != 3:
        raise ValueError(f"expected an (H, W, C) image, got shape {x.shape}")
    if block < 1 or m < 1 or not epsilon > 0:
        raise ValueError("need block >= 1, m >= 1 and epsilon > 0")
    h, w, c = x.shape
    rows, cols = _cells(h, block), _cells(w, block)
    r0 = np.concatenate(([0], np.cumsum(rows)[:-1]))
    c0 = np.concatenate(([0], np.cumsum(cols)[:-1]))
    sums = np.add.reduceat(np.add.reduceat(x, r0, axis=0), c0, axis=1)
    counts = np.outer(rows, cols).astype(np.float64)
    means = sums / counts[:, :, None]
    if math.isfinite(epsilon):
        gen = generator(rng, "dp-pix")
        scale = c * 255.0 * m / (counts * epsilon)
        means = means + gen.laplace(0.0, 1.0, size=means.shape) * scale[:, :, None]
    cells = np.clip(means, 0.0, 255.0)
    out = np.repeat(np.repeat(cells, rows, axis=0), cols, axis=1)
    return np.round(out).astype(np.uint8)


def pixelate(image: np.ndarray, block: int) -> np.ndarray:
    """Plain pixelisation (cell means), i.e. :func:`dp_pix` with ``epsilon = inf``.

    Parameters
    ----------
    image : numpy.ndarray, shape (H, W, 3), uint8
    block : int
        Cell side in pixels.

    Returns
    -------
    numpy.ndarray, shape (H, W, 3), uint8

    Examples
    --------
    >>> pixelate(np.arange(16, dtype=np.uint8).reshape(4, 4, 1).repeat(3, axis=2), 2)[:, :, 0].tolist()
    [[2, 2, 4, 4], [2, 2, 4, 4], [10, 10, 12, 12], [10, 10, 12, 12]]
    """
    return dp_pix(image, block, 1, math.inf)


class DPPixGenerator:
    """The ``dp-pix`` generator (:func:`dp_pix`) with a per-image seed.

    Parameters
    ----------
    block, m : int
        Cell side and the number of changed pixels that define neighbouring images.
    epsilon : float
        ``inf`` is plain pixelisation.
    seed : int
        Base seed; image ``i`` uses ``stream("dp-pix", seed, i)``.

    Examples
    --------
    >>> gen = DPPixGenerator(block=2, epsilon=100.0)
    >>> image = np.full((4, 4, 3), 100, dtype=np.uint8)
    >>> a, _ = gen(image, "Ann/Ann_0001.jpg")
    >>> b, info = gen(image, "Ann/Ann_0001.jpg")
    >>> bool((a == b).all()), info, gen.settings()["noise_scale_full_cell"]
    (True, {}, 1.9125)
    """

    name = "dp-pix"

    def __init__(self, block: int = 6, m: int = 1, epsilon: float = 1.0, seed: int = 0):
        self.block, self.m, self.epsilon, self.seed = int(block), int(m), float(epsilon), int(seed)

    def rng(self, image_id: str) -> np.random.Generator:
        """The noise stream of one image: ``stream("dp-pix", seed, image_id)``."""
        return stream("dp-pix", self.seed, image_id)

    def __call__(self, image: np.ndarray, image_id: str | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        if image_id is None:
            raise ValueError("dp-pix needs the image id to derive its per-image seed")
        return dp_pix(image, self.block, self.m, self.epsilon, self.rng(image_id)), {}

    def settings(self) -> dict[str, Any]:
        """The generator's settings, for the manifest."""
        return {"method": "Fan 2018 DP pixelisation (cell means + Laplace noise, clipped to [0, 255])",
                "block": self.block, "m": self.m, "epsilon": self.epsilon,
                "sensitivity": "3*255*m/(pixels in the cell): all three channels of a changed pixel count",
                "noise_scale_full_cell": 3 * 255.0 * self.m / (self.block ** 2 * self.epsilon),
                "seed": self.seed, "per_image_seed": "sha256('dp-pix', seed, image_id) -> numpy default_rng",
                "randomness": "Laplace noise (internal randomness)"}


class NoneGenerator:
    """The ``none`` generator: the original photograph.

    Examples
    --------
    >>> image = np.zeros((2, 2, 3), dtype=np.uint8)
    >>> out, info = NoneGenerator()(image, "Ann/Ann_0001.jpg")
    >>> out is image, info
    (True, {})
    """

    name = "none"

    def __call__(self, image: np.ndarray, image_id: str | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        return image, {}

    def settings(self) -> dict[str, Any]:
        """The generator's settings, for the manifest."""
        return {"method": "identity (the original photograph)", "randomness": "none"}
