"""The resampled corpus builder's workers: the models of one worker, the swap chain of one draw
(following the face each pass swapped), and the batch functions of the build's stages
(:mod:`epsaudit.build.resampled_builder` runs them through :mod:`epsaudit.build.checkpoints`)."""

from __future__ import annotations

import threading
import time
from collections import Counter, defaultdict
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from .. import resampled as fmt
from . import images as img

__all__ = ["track_landmarks", "render_draw"]

# models loaded once per worker thread: once per process with one thread per worker

_LOCAL = threading.local()  # dlib/OpenCV models are not shared between threads (Dask workers may run several)


def _state() -> dict[str, Any]:
    state = getattr(_LOCAL, "state", None)
    if state is None:
        import cv2

        from . import encoders as enc
        from . import generators as gen

        cv2.setNumThreads(1)
        state = _LOCAL.state = {"models": gen.LandmarkModels(),
                                "encoders": {e: enc.make_encoder(e) for e in fmt.ENCODERS}}
    return state


class _Steps:
    """Worker-side wall seconds, CPU seconds and counts per step."""

    def __init__(self) -> None:
        self.table: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0])

    def run(self, step: str, fn: Callable, *args: Any, **kwargs: Any) -> Any:
        w, c = time.perf_counter(), time.process_time()
        out = fn(*args, **kwargs)
        row = self.table[step]
        row[0] += time.perf_counter() - w
        row[1] += time.process_time() - c
        row[2] += 1
        return out

    def record(self) -> dict[str, list[float]]:
        return {k: list(v) for k, v in self.table.items()}


def _encode(state: Mapping[str, Any], image: np.ndarray, steps: _Steps, landmarks: np.ndarray | None,
            choices: Counter, where: tuple) -> dict[str, tuple[np.ndarray, str]]:
    """Both encodings of the face the swap was put on (``landmarks``: the 68 points it used); how each
    face was chosen is counted in ``choices[(*where, encoder, how)]``."""
    out = {}
    for name, enc in state["encoders"].items():
        out[name] = steps.run(f"encode:{name}", enc.encode_with_path, image, landmarks)
        choices[(*where, name, enc.last_choice.get("how", "none"), int(enc.last_choice.get("faces", 0)) > 1)] += 1
    return out


def track_landmarks(models: Any, image: np.ndarray, previous: np.ndarray) -> tuple[np.ndarray | None, str]:
    """The 68 landmarks of the face a chain's previous swap was put on, in its output ``image``.

    dlib's HOG faces (then its CNN faces when no HOG face does) are matched to the box of the
    ``previous`` landmarks (:func:`epsaudit.build.encoders.choose_face`); a face elsewhere in the
    image (a bystander) is never taken. ``(None, how)`` when no detected face overlaps it: the
    swapper lost the face it was swapping, and the chain is lost at this pass.

    Returns
    -------
    landmarks : ndarray (68, 2) or None
    how : str
        ``single``, ``overlap``, ``bystander`` (the face nearest the centre was another one) or ``none``.
    """
    from .encoders import choose_face

    x = np.ascontiguousarray(image, dtype=np.uint8)
    # LandmarkModels keeps its detectors private; the chain needs all their faces, not the central one
    rects = list(models._hog(x, models.upsample))
    k, how = choose_face([(r.left(), r.top(), r.width(), r.height()) for r in rects], x.shape, previous)
    if k is None and models.cnn_fallback:
        if models._cnn is None:
            models._cnn = models._dlib.cnn_face_detection_model_v1(models._cnn_file)
        rects = [d.rect for d in models._cnn(x, models.upsample)]
        k, how = choose_face([(r.left(), r.top(), r.width(), r.height()) for r in rects], x.shape, previous)
    if k is None:
        return None, how
    shape = models._sp68(x, rects[k])
    return np.array([(p.x, p.y) for p in shape.parts()], dtype=np.float64), how


def render_draw(models: Any, start: np.ndarray, start_landmarks: np.ndarray, donors: Sequence[np.ndarray],
                donor_landmarks: Sequence[np.ndarray], variant: str, steps: _Steps | None = None,
                choices: Counter | None = None) -> tuple[list[np.ndarray], list[np.ndarray], int]:
    """One draw's chain: ``(images, landmarks, lost_pass)``; ``images[k]`` is pass ``k`` (0: the
    photograph) and ``landmarks[k]`` the 68 points pass ``k + 1`` swaps (so ``landmarks[k - 1]``
    is the face pass ``k`` put its donor on); ``lost_pass`` is 0, or the pass whose input had no
    face overlapping the previous swap's (:func:`track_landmarks`), where the chain stops."""
    from .generators import swap_face

    steps = steps or _Steps()
    images, marks, lm = [start], [start_landmarks], start_landmarks
    for k, (donor, dlm) in enumerate(zip(donors, donor_landmarks), start=1):
        if k > 1:
            lm, how = steps.run("landmarks", track_landmarks, models, images[-1], marks[-1])
            if choices is not None:
                choices[(variant, k, "tracking", how, how in ("overlap", "bystander"))] += 1
            if lm is None:
                return images, marks, k
            marks.append(lm)
        images.append(steps.run("swap", swap_face, images[-1], donor, variant, target_landmarks=lm,
                                donor_landmarks=dlm))
    return images, marks, 0


def _screen_batch(image_ids: Sequence[str], image_root: str) -> tuple[list, dict]:
    """dlib's 68 landmarks of photographs (``None`` without a face)."""
    state, steps = _state(), _Steps()
    out = []
    for i in image_ids:
        image = steps.run("read", img.load_image, i, image_root)
        out.append((i, steps.run("landmarks", state["models"].landmarks, image)[0]))
    return out, steps.record()


def _originals_batch(items: Sequence[tuple[str, np.ndarray]], image_root: str) -> tuple[list, Counter, dict]:
    """Both encodings of photographs (the pass-0 rows), of the face their 68 landmarks are on."""
    state, steps, choices = _state(), _Steps(), Counter()
    out = [(i, _encode(state, steps.run("read", img.load_image, i, image_root), steps, lm, choices, (fmt.ORIGINAL, 0)))
           for i, lm in items]
    return out, choices, steps.record()


def _chain_batch(items: Sequence[Mapping[str, Any]], variants: Sequence[str], encode_passes: Sequence[int],
                 image_root: str) -> tuple[list, list, Counter, dict]:
    """Every draw's chain for every variant: rows ``(variant, draw, pass, codes)`` of the encoded
    passes of complete chains, lost ``(variant, draw, pass)``, and how faces were chosen."""
    state, steps, choices = _state(), _Steps(), Counter()
    rows, lost = [], []
    for it in items:
        start = steps.run("read", img.load_image, it["photograph"], image_root)
        donors = [steps.run("read", img.load_image, d, image_root) for d in it["donors"]]
        for variant in variants:
            images, marks, lost_at = render_draw(state["models"], start, it["start_landmarks"], donors,
                                                 it["donor_landmarks"], variant, steps, choices)
            if lost_at:
                lost.append((variant, it["draw"], lost_at))
                continue
            # pass k's donor face sits on the landmarks pass k swapped (marks[k - 1])
            rows += [(variant, it["draw"], k, _encode(state, images[k], steps, marks[k - 1], choices, (variant, k)))
                     for k in encode_passes]
    return rows, lost, choices, steps.record()
