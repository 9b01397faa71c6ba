"""The data builder: LFW photographs -> generator (image space) -> encoder -> embedding tables.

This subpackage builds the data the audits read and is the only part of :mod:`epsaudit` that
touches pixels; the auditing core never imports it. It is optional at import
time: ``import epsaudit`` and ``import epsaudit.build`` never import dlib or OpenCV; the heavy
modules load on first use of a name below.

- :mod:`epsaudit.build.images` -- the LFW image root, identities, regimes, the donor, image loading;
- :mod:`epsaudit.build.encoders` -- :class:`DlibEncoder` (dlib ResNet, 128-D) and
  :class:`SFaceEncoder` (SFace + YuNet, 128-D), both offline, both on in-memory RGB arrays;
- :mod:`epsaudit.build.generators` -- ``none``, ``swap`` (classical landmark face swap with one
  fixed donor; :func:`swap_face` swaps any donor onto any target) and ``dp-pix`` (Fan 2018);
- :mod:`epsaudit.build.pipeline` -- builds every condition CSV and ``manifest.json``
  (``python -m epsaudit.build.pipeline --help``; ``make data``), its worker processes and what it
  writes; :func:`run_smoke` for tests and the notebooks' smoke profile;
- :mod:`epsaudit.build.lfw` -- gets the LFW photographs, verified (``make lfw``): the hash list and
  the checks, download and unpacking;
- :mod:`epsaudit.build.corpora_builder` -- the cascade and operator corpora of chapter 4
  (``python -m epsaudit.build.corpora_builder --help``; ``make corpora``); :func:`render_chain` re-creates a
  chain's images;
- :mod:`epsaudit.build.resampled_builder` -- the resampled-swap corpora of chapter 5 (photograph-pool
  and disjoint-photograph designs; ``python -m epsaudit.build.resampled_builder --help``;
  ``make resampled``) and their batch workers;
- :mod:`epsaudit.build.checkpoints` -- the builders' batches saved as they complete, so a build run
  again after an interruption resumes where it stopped (on local processes or, inside
  :func:`epsaudit.parallel.cluster`, on a Dask cluster's workers).

Images are ``(H, W, 3)`` ``uint8`` RGB numpy arrays throughout.
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
