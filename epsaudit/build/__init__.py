"""The data builder: LFW photographs -> generator (image space) -> encoder -> embedding tables.

The only part of :mod:`epsaudit` that touches pixels; the auditing core never imports it, and
``import epsaudit.build`` imports neither dlib nor OpenCV (the modules load on first use of a name).
Images are ``(H, W, 3)`` ``uint8`` RGB arrays throughout.

- :mod:`epsaudit.build.images` -- the LFW image root, identities, regimes, the donor, image loading;
- :mod:`epsaudit.build.encoders` -- :class:`DlibEncoder` and :class:`SFaceEncoder` (128-D, offline);
- :mod:`epsaudit.build.generators` -- ``none``, ``swap`` (:func:`swap_face`) and ``dp-pix`` (Fan 2018);
- :mod:`epsaudit.build.pipeline` -- the condition CSVs and ``manifest.json`` (``make data``), :func:`run_smoke`;
- :mod:`epsaudit.build.lfw` -- the LFW photographs, verified (``make lfw``);
- :mod:`epsaudit.build.corpora_builder` -- chapter 4's corpora (``make corpora``), :func:`render_chain`;
- :mod:`epsaudit.build.resampled_builder` -- chapter 5's resampled-swap corpora (``make resampled``);
- :mod:`epsaudit.build.checkpoints` -- batches saved as they complete, so an interrupted build resumes.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    # images (pillow only)
    "ImageRootError": "images",
    "image_root": "images",
    "list_identities": "images",
    "select_regime": "images",
    "load_image": "images",
    "REGIMES": "images",
    # encoders (dlib / OpenCV / onnx, loaded on use)
    "DlibEncoder": "encoders",
    "SFaceEncoder": "encoders",
    "make_encoder": "encoders",
    "repair_sface_graph": "encoders",
    "sface_model_path": "encoders",
    # generators
    "NoneGenerator": "generators",
    "SwapGenerator": "generators",
    "DPPixGenerator": "generators",
    "swap_face": "generators",
    "dp_pix": "generators",
    "pixelate": "generators",
    "face_landmarks": "generators",
    # pipeline
    "build_conditions": "pipeline",
    "run_smoke": "pipeline",
    # corpora_builder
    "build_corpora": "corpora_builder",
    "cascade_design": "corpora_builder",
    "operator_design": "corpora_builder",
    "render_chain": "corpora_builder",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'epsaudit.build' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
