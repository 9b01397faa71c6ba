"""Which detected face an encoder encodes: the one a swap put its face on, never a bystander.

A detector may find several faces in a photograph or a swapped image (a bystander in the
background). Given the 68 landmarks the swap used, the face to encode is the detected face whose box
overlaps the landmarks' box most (intersection over union at least :data:`MIN_IOU`); when no
detected face overlaps, the face is placed from the landmarks themselves. Without landmarks (an
original photograph), the face whose box centre is nearest the image centre.
"""

from __future__ import annotations

import numpy as np

__all__ = ["MIN_IOU", "box_iou", "choose_face", "landmark_box", "yunet_row"]


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
    """Which detected face to encode: ``(index or None, how)``.

    Without ``landmarks``, the box nearest the image centre (``how``: ``single`` or ``centre``).
    With the landmarks a swap used, the box overlapping their box most (IoU >= :data:`MIN_IOU`):
    ``single`` (one face), ``overlap`` (several, the overlapping one is also the central one) or
    ``bystander`` (several, and the central one is not the swapped face); ``(None, "none")`` when
    no box overlaps (the caller then places the face from the landmarks).

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


def _rect_boxes(rects) -> list[tuple[float, float, float, float]]:
    return [(r.left(), r.top(), r.width(), r.height()) for r in rects]


def yunet_row(landmarks: np.ndarray) -> np.ndarray:
    """A YuNet face row ``(15,)`` float32 made from 68 landmarks: the landmarks' box, the two eye
    centres (image left first, as YuNet orders them), the nose tip and the mouth corners, score 1.

    Examples
    --------
    >>> yunet_row(np.tile(np.arange(68.0)[:, None], (1, 2))).round(1).tolist()[:8]
    [0.0, 0.0, 67.0, 67.0, 38.5, 38.5, 44.5, 44.5]
    """
    pts = np.asarray(landmarks, dtype=np.float64)
    five = [pts[36:42].mean(axis=0), pts[42:48].mean(axis=0), pts[30], pts[48], pts[54]]
    return np.array([*landmark_box(pts), *np.concatenate(five), 1.0], dtype=np.float32)
