"""What the face pipeline writes: one CSV per condition, its manifest entry and the manifest records.

:func:`epsaudit.build.pipeline.build_conditions` and :func:`~epsaudit.build.pipeline.build_donor_gallery`
call these helpers once the images are generated and encoded: each condition is written in the
conditions' row format with :func:`epsaudit.data.write_embeddings`, read back with
:func:`epsaudit.data.load_embeddings`, and recorded (SHA-256, counts, detection paths and fallbacks,
generator flags, same- vs different-identity cosines); the generation record says what was made
from what.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from . import images as img
from .batches import _packages

#: The detection path of each encoder when a face is found (anything else is a fallback).
PRIMARY_PATHS = {"dlib": "hog", "sface": "yunet"}


def condition_name(encoder: str, regime: str, generator: str) -> str:
    """``<encoder>_<regime>_<generator>``, also the CSV's stem.

    Parameters
    ----------
    encoder, regime, generator : str

    Returns
    -------
    str

    Examples
    --------
    >>> condition_name("dlib", "large", "dp-pix")
    'dlib_large_dp-pix'
    """
    return f"{encoder}_{regime}_{generator}"


def donor_gallery_name(encoder: str) -> str:
    """``<encoder>_donor_none.csv``: the donor identity's photographs, unchanged.

    Parameters
    ----------
    encoder : str

    Returns
    -------
    str

    Examples
    --------
    >>> donor_gallery_name("sface")
    'sface_donor_none.csv'
    """
    return f"{condition_name(encoder, 'donor', 'none')}.csv"


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
                path = out / f"{condition_name(ename, regime, gname)}.csv"
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
        "packages": _packages(),
    }


def _write_json(path: Path, doc: Mapping[str, Any]) -> None:
    """Write a manifest atomically (a temporary file beside it, then renamed)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1, allow_nan=False) + "\n", encoding="utf-8")
    tmp.replace(path)


def _write_gallery(out: Path, records: list[dict], person: str, encoders: Sequence[str]) -> dict[str, Any]:
    """Write ``<encoder>_donor_none.csv`` per encoder; return their manifest entries (JSON-ready)."""
    from ..data import jsonable, load_embeddings, manifest_entry, write_embeddings

    kept = [r for r in records if "dropped" not in r]
    dropped = Counter(r["dropped"] for r in records if "dropped" in r)
    files = {}
    for ename in encoders:
        name = donor_gallery_name(ename)
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


def _paths_of(encoder: str) -> tuple[str, ...]:
    return {"dlib": ("hog", "cnn", "whole"), "sface": ("yunet", "whole")}[encoder]
