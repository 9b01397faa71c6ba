"""Builder of the cascade and operator corpora (*Toward Interpretable Privacy Guarantees in
Face-Swapping Anonymization*, Sections VI-VIII) on LFW with the classical swapper.

Both corpora use every swap variant in ``variants`` (default ``hull`` and ``inner``, paired: the
same chains, donors and triplets) and both encoders.

*Cascade* (:func:`cascade_design`). Each chain starts from a photograph (68 dlib landmarks) of an identity with >= 20
photographs (up to 30 per identity, seeded order) and runs 5 swaps, each re-swapping the previous output with a fresh
donor photograph of an identity with <= 9 photographs (no donor photograph twice in the corpus, distinct donor
identities within a chain). Each chain has a target gallery (up to 30 other photographs of its identity) and a
non-member identity (10-19 photographs, all of them). A chain whose face is lost at a pass is excluded for that variant
(counted in the manifest).

*Operator* (:func:`operator_design`). Single swaps ``(donor, target, swap)`` among identities with
<= 9 photographs, split identity-disjointly 80/20 into train (8,000 triplets) and test (1,000); donor
and target are different identities. Donor photographs may also be cascade donors.

Every original photograph is encoded and stored once per encoder. The file format and its reader are
:mod:`epsaudit.corpora`; ``python -m epsaudit.build.corpora_builder`` (``make corpora``) builds them.
Resumable (:mod:`epsaudit.build.checkpoints`, ``_build/checkpoints/corpora-<key>``); inside a cluster
context (``--scheduler``, :func:`epsaudit.parallel.cluster`) the batches run on its workers.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import deque
from datetime import datetime, timezone
from functools import partial
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ..data import corpora as fmt
from ..parallel import running_on
from ..protocol import key_int
from . import checkpoints as ckpt
from . import images as img
from .pipeline import package_versions, worker_models

VARIANTS_DEFAULT = ("hull", "inner")
ENCODERS = fmt.ENCODERS
TARGET_MIN_IMAGES = 20
NONMEMBER_RANGE = (10, 19)
DONOR_MAX_IMAGES = 9
CASCADE_DEFAULTS = {"passes": 5, "chains_per_identity": 30, "gallery_size": 30}
OPERATOR_DEFAULTS = {"train_triplets": 8000, "test_triplets": 1000, "test_fraction": 0.2,
                     "photographs": {"train": 3200, "test": 800}}
#: Code the checkpointed batch results depend on (a change gives new checkpoint keys).
_SOURCES = ("corpora_builder.py", "generators.py", "encoders.py", "images.py")


# -------------------------------------------------------------------------------------------------
# designs (pure functions of the identity listing, the usable photographs and the seed)


def cascade_design(identities: Mapping[str, list[str]], usable: set[str], *, seed: int = 0,
                   passes: int = CASCADE_DEFAULTS["passes"],
                   chains_per_identity: int = CASCADE_DEFAULTS["chains_per_identity"],
                   gallery_size: int = CASCADE_DEFAULTS["gallery_size"],
                   max_identities: int | None = None, reserved_donors: set[str] | None = None
                   ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Chains and galleries of the cascade corpus.

    Parameters
    ----------
    identities : mapping
        ``person -> image ids`` (:func:`epsaudit.build.images.list_identities`).
    usable : set of str
        Photographs with 68 dlib landmarks (chain starts and donors must be usable).
    seed, passes, chains_per_identity, gallery_size : int
    max_identities : int, optional
        First target identities only (smoke runs).
    reserved_donors : set of str, optional
        Photographs never to use as donors.

    Returns
    -------
    chains : DataFrame
        One row per chain: ``chain``, ``identity``, ``start``, ``nonmember``, ``donor_1 .. donor_<passes>``.
    galleries : DataFrame
        ``chain``, ``role`` (``target``/``nonmember``), ``image_id``.

    Raises
    ------
    ValueError
        Too few usable donor photographs for the requested chains.
    """
    targets = sorted(p for p, ids in identities.items() if len(ids) >= TARGET_MIN_IMAGES)
    if max_identities is not None:
        targets = targets[:max_identities]
    nonmembers = img.seeded_order([p for p, ids in identities.items() if NONMEMBER_RANGE[0] <= len(ids) <= NONMEMBER_RANGE[1]],
                        "cascade-nonmember", seed)
    if not nonmembers:
        raise ValueError("no identity with 10-19 photographs for the non-member controls")
    reserved = reserved_donors or set()
    pool = img.seeded_order([i for p, ids in identities.items() if len(ids) <= DONOR_MAX_IMAGES for i in ids
                   if i in usable and i not in reserved], "cascade-donors", seed)
    queue: deque[str] = deque(pool)
    rows, gal = [], []
    for person in targets:
        order = img.seeded_order(identities[person], "cascade-order", seed, person)
        starts = [i for i in order if i in usable][:chains_per_identity]
        for start in starts:
            chain = len(rows)
            donors: list[str] = []
            skipped: list[str] = []
            while len(donors) < passes:
                if not queue:
                    raise ValueError(f"donor pool exhausted after {chain} chains ({len(pool)} usable donor "
                                     f"photographs); lower chains_per_identity or passes")
                d = queue.popleft()
                if img.identity_of(d) in {img.identity_of(x) for x in donors}:
                    skipped.append(d)
                else:
                    donors.append(d)
            queue.extendleft(reversed(skipped))  # unused, back to the front
            nm = nonmembers[chain % len(nonmembers)]
            rows.append({"chain": chain, "identity": person, "start": start, "nonmember": nm,
                         **{f"donor_{k + 1}": d for k, d in enumerate(donors)}})
            gallery = [i for i in order if i != start][:gallery_size]
            gal += [{"chain": chain, "role": "target", "image_id": i} for i in gallery]
            gal += [{"chain": chain, "role": "nonmember", "image_id": i} for i in sorted(identities[nm])]
    return pd.DataFrame(rows), pd.DataFrame(gal)


def operator_design(identities: Mapping[str, list[str]], usable: set[str], *, seed: int = 0,
                    train_triplets: int = OPERATOR_DEFAULTS["train_triplets"],
                    test_triplets: int = OPERATOR_DEFAULTS["test_triplets"],
                    test_fraction: float = OPERATOR_DEFAULTS["test_fraction"],
                    photographs: Mapping[str, int] | None = OPERATOR_DEFAULTS["photographs"]) -> pd.DataFrame:
    """Single-swap triplets with identity-disjoint train and test partitions.

    Photographs with 68 landmarks of identities with <= 9 photographs; an identity is in the test
    partition when its seeded hash falls in the first ``test_fraction``. Donors and targets cycle
    through fresh seeded orders of the partition's photographs (each used about equally often in each
    role); a triplet never pairs one identity with itself, and no (donor, target) pair occurs twice.
    ``photographs`` caps the distinct photographs per partition (a seeded subset: encoding is the cost).

    Returns
    -------
    DataFrame
        ``triplet``, ``partition`` (``train``/``test``), ``donor``, ``target``, ``donor_identity``, ``target_identity``.
    """
    people = sorted(p for p, ids in identities.items() if len(ids) <= DONOR_MAX_IMAGES)
    is_test = {p: (key_int("operator-split", seed, p) % 10_000) < test_fraction * 10_000 for p in people}
    rows = []
    for part, n in (("train", train_triplets), ("test", test_triplets)):
        ids = [i for p in people if is_test[p] == (part == "test") for i in identities[p] if i in usable]
        if photographs is not None:
            ids = sorted(img.seeded_order(ids, "operator-photographs", seed, part)[:photographs[part]])
        if len(ids) < 2:
            raise ValueError(f"operator {part} partition has {len(ids)} usable photographs")
        cycles = -(-n // len(ids)) + 1  # a fresh seeded order per cycle
        donors = [i for c in range(cycles) for i in img.seeded_order(ids, "operator-donor", seed, part, c)]
        targets = deque(i for c in range(cycles + 1) for i in img.seeded_order(ids, "operator-target", seed, part, c))
        used: set[tuple[str, str]] = set()
        for t in range(n):
            d = donors[t]
            skipped = []
            while img.identity_of(targets[0]) == img.identity_of(d) or (d, targets[0]) in used:
                skipped.append(targets.popleft())
            tg = targets.popleft()
            used.add((d, tg))
            targets.extendleft(reversed(skipped))
            rows.append({"triplet": len(rows), "partition": part, "donor": d, "target": tg,
                         "donor_identity": img.identity_of(d), "target_identity": img.identity_of(tg)})
    return pd.DataFrame(rows)


# -------------------------------------------------------------------------------------------------
# workers (models loaded once per worker thread by :func:`epsaudit.build.pipeline.worker_models`)


def _encode(state: Mapping[str, Any], image: np.ndarray, timing: dict) -> dict[str, tuple[np.ndarray, str]]:
    out = {}
    for name, encoder in state["encoders"].items():
        t0 = time.perf_counter()
        out[name] = encoder.encode_with_path(image)
        timing[f"encode:{name}"] = timing.get(f"encode:{name}", 0.0) + time.perf_counter() - t0
    return out


def _screen_batch(image_ids: Sequence[str], image_root: str) -> tuple[list[dict], dict]:
    """dlib's 68 landmarks of original photographs (``None`` without a face)."""
    state = worker_models(ENCODERS)
    t0 = time.perf_counter()
    out = [{"image_id": i, "landmarks": state["models"].landmarks(img.load_image(i, image_root))[0]}
           for i in image_ids]
    return out, {"landmarks": time.perf_counter() - t0}


def _originals_batch(image_ids: Sequence[str], image_root: str) -> tuple[list[dict], dict]:
    """Both encodings of original photographs."""
    state = worker_models(ENCODERS)
    timing: dict[str, float] = {}
    out = [{"image_id": i, "codes": _encode(state, img.load_image(i, image_root), timing)} for i in image_ids]
    return out, timing


def _cascade_batch(chains: Sequence[dict], variants: Sequence[str], image_root: str) -> tuple[list[dict], list[dict], dict]:
    """Run every chain of the batch through all passes for each variant."""
    from .generators import swap_face

    state = worker_models(ENCODERS)
    timing: dict[str, float] = {}
    rows, lost = [], []
    for ch in chains:
        start = img.load_image(ch["start"], image_root)
        donors = [img.load_image(d, image_root) for d in ch["donors"]]
        for variant in variants:
            x, lm = start, ch["start_landmarks"]
            chain_rows = []
            for k, (donor, dlm) in enumerate(zip(donors, ch["donor_landmarks"]), start=1):
                if k > 1:
                    t0 = time.perf_counter()
                    lm, _ = state["models"].landmarks(x)
                    timing["landmarks"] = timing.get("landmarks", 0.0) + time.perf_counter() - t0
                if lm is None:
                    lost.append({"variant": variant, "chain": ch["chain"], "pass": k})
                    chain_rows = []
                    break
                t0 = time.perf_counter()
                x = swap_face(x, donor, variant, target_landmarks=lm, donor_landmarks=dlm)
                timing["swap"] = timing.get("swap", 0.0) + time.perf_counter() - t0
                chain_rows.append({"variant": variant, "chain": ch["chain"], "pass": k,
                                   "codes": _encode(state, x, timing)})
            rows += chain_rows
    return rows, lost, timing


def _operator_batch(triplets: Sequence[dict], variants: Sequence[str], image_root: str) -> tuple[list[dict], dict]:
    from .generators import swap_face

    state = worker_models(ENCODERS)
    timing: dict[str, float] = {}
    rows = []
    for tr in triplets:
        donor = img.load_image(tr["donor"], image_root)
        target = img.load_image(tr["target"], image_root)
        for variant in variants:
            t0 = time.perf_counter()
            s = swap_face(target, donor, variant, target_landmarks=tr["target_landmarks"],
                          donor_landmarks=tr["donor_landmarks"])
            timing["swap"] = timing.get("swap", 0.0) + time.perf_counter() - t0
            rows.append({"variant": variant, "triplet": tr["triplet"], "codes": _encode(state, s, timing)})
    return rows, timing


def render_chain(chain: Mapping[str, Any], variant: str, image_root: str | os.PathLike | None = None
                 ) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Re-create one cascade chain's images (deterministic: what the corpus encoded).

    Parameters
    ----------
    chain : mapping
        A row of ``cascade_chains.csv`` (``start``, ``donor_1 .. donor_K``).
    variant : str
    image_root : path-like, optional

    Returns
    -------
    passes : list of ndarray (H, W, 3) uint8
        Pass 0 (the start photograph) to the last pass the swapper could run.
    donors : list of ndarray
        The donor photographs, one per pass.
    """
    from .generators import face_landmarks, swap_face

    donors_ids = [chain[k] for k in sorted((k for k in chain if str(k).startswith("donor_")),
                                           key=lambda k: int(str(k).split("_")[1]))]
    donors = [img.load_image(d, image_root) for d in donors_ids]
    out = [img.load_image(chain["start"], image_root)]
    for donor in donors:
        lm, _ = face_landmarks(out[-1])
        if lm is None:
            break
        out.append(swap_face(out[-1], donor, variant, target_landmarks=lm))
    return out, donors


# -------------------------------------------------------------------------------------------------
# main process: the build in stages (each writes its tables through :mod:`epsaudit.corpora`)


def _add_timing(total: dict, part: Mapping[str, float], prefix: str) -> None:
    for k, v in part.items():
        total[f"{prefix}:{k}"] = total.get(f"{prefix}:{k}", 0.0) + v


def _write_encoded(out: Path, kind: str, keys: list[dict], codes: list[dict]) -> None:
    """One embedding table per encoder from the workers' ``codes`` (encoder -> (vector, path))."""
    for enc in ENCODERS:
        frame = fmt.embedding_frame(keys, [c[enc][0] for c in codes], [c[enc][1] for c in codes])
        fmt.write_embedding_table(out, enc, kind, frame)


def _candidate_photographs(identities: Mapping[str, list[str]], cfg: Mapping[str, Any]
                           ) -> tuple[list[str], list[str], list[str]]:
    """Photographs a design may use (chain starts, galleries, non-members, donors), the non-member
    identities and the donor-pool photographs (slices of both in smoke runs)."""
    seed, max_identities = cfg["seed"], cfg["max_identities"]
    targets = sorted(p for p, ids in identities.items() if len(ids) >= TARGET_MIN_IMAGES)
    if max_identities is not None:
        targets = targets[:max_identities]
    # candidate chain starts and galleries: the first (chains + gallery + a margin) in each order
    cand = set()
    for p in targets:
        cand.update(img.seeded_order(identities[p], "cascade-order", seed, p)[:cfg["chains_per_identity"] + cfg["gallery_size"] + 10])
    nonmembers = [p for p, ids in identities.items() if NONMEMBER_RANGE[0] <= len(ids) <= NONMEMBER_RANGE[1]]
    small = [i for p, ids in identities.items() if len(ids) <= DONOR_MAX_IMAGES for i in ids]
    if max_identities is not None:  # smoke: slices of the non-member and donor pools suffice
        nonmembers = img.seeded_order(nonmembers, "smoke-nonmembers", seed)[:3]
        n_small = (len(targets) * cfg["chains_per_identity"] * cfg["passes"] * 2
                   + 2 * (cfg["train_triplets"] + cfg["test_triplets"]) + 50)
        small = img.seeded_order(small, "smoke-pool", seed)[:n_small]
    cand.update(i for p in nonmembers for i in identities[p])
    cand.update(small)
    return sorted(cand), nonmembers, small


def _screen(ids: list[str], roots: str, cfg: Mapping[str, Any], timing: dict,
            build: ckpt.BuildCheckpoints) -> dict[str, dict]:
    """Stage 1: dlib's 68 landmarks of every candidate photograph (``None`` without a face)."""
    batches = ckpt.split_batches(ids, 4 * cfg["batch_size"])
    res = build.run("landmarks", partial(_screen_batch, image_root=roots), batches, "corpora: landmarks")
    orig: dict[str, dict] = {}
    for recs, tim in res:
        _add_timing(timing, tim, "screen")
        for r in recs:
            orig[r["image_id"]] = r
    return orig


def _designs(identities: Mapping[str, list[str]], usable: set[str], nonmembers: list[str], small: list[str],
             cfg: Mapping[str, Any]) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The cascade chains and galleries and the operator triplets."""
    ident_used = dict(identities)
    if cfg["max_identities"] is not None:  # smoke: the donor-pool identities keep only the sliced photographs
        keep = set(small)
        ident_used = {p: ids if len(ids) > DONOR_MAX_IMAGES else [i for i in ids if i in keep]
                      for p, ids in identities.items() if len(ids) > NONMEMBER_RANGE[1] or p in nonmembers
                      or len(ids) <= DONOR_MAX_IMAGES}
        ident_used = {p: ids for p, ids in ident_used.items() if ids}
    chains, galleries = cascade_design(ident_used, usable, seed=cfg["seed"], passes=cfg["passes"],
                                       chains_per_identity=cfg["chains_per_identity"],
                                       gallery_size=cfg["gallery_size"], max_identities=cfg["max_identities"])
    triplets = operator_design(ident_used, usable, seed=cfg["seed"], train_triplets=cfg["train_triplets"],
                               test_triplets=cfg["test_triplets"])
    return chains, galleries, triplets


def _encode_originals(out: Path, used: list[str], orig: dict[str, dict], roots: str, cfg: Mapping[str, Any],
                      timing: dict, build: ckpt.BuildCheckpoints) -> None:
    """Stage 2: encode every original photograph a design uses, once, and write the originals."""
    res = build.run("originals", partial(_originals_batch, image_root=roots), ckpt.split_batches(used, cfg["batch_size"]),
                    "corpora: encode originals")
    for recs, tim in res:
        _add_timing(timing, tim, "originals")
        for r in recs:
            orig[r["image_id"]]["codes"] = r["codes"]
    _write_encoded(out, "originals", [{"image_id": i, "identity": img.identity_of(i)} for i in used],
                   [orig[i]["codes"] for i in used])


def _run_cascade(out: Path, chains: pd.DataFrame, orig: Mapping[str, dict], roots: str, cfg: Mapping[str, Any],
                 timing: dict, build: ckpt.BuildCheckpoints) -> list[dict]:
    """Stage 3: every chain through every pass and variant; writes the cascade tables, returns the
    lost (variant, chain, pass) rows."""
    donor_cols = fmt.donor_columns(cfg["passes"])
    items = [{"chain": int(r.chain), "start": r.start, "start_landmarks": orig[r.start]["landmarks"],
              "donors": [getattr(r, c) for c in donor_cols],
              "donor_landmarks": [orig[getattr(r, c)]["landmarks"] for c in donor_cols]}
             for r in chains.itertuples(index=False)]
    res = build.run("cascade", partial(_cascade_batch, variants=list(cfg["variants"]), image_root=roots),
                    ckpt.split_batches(items, max(1, cfg["batch_size"] // 4)), "corpora: cascade chains")
    crow, lost = [], []
    for rows, lst, tim in res:
        crow += rows
        lost += lst
        _add_timing(timing, tim, "cascade")
    crow.sort(key=lambda r: (r["variant"], r["chain"], r["pass"]))
    _write_encoded(out, "cascade", [{"variant": r["variant"], "chain": r["chain"], "pass": r["pass"]} for r in crow],
                   [r["codes"] for r in crow])
    return lost


def _run_operator(out: Path, triplets: pd.DataFrame, orig: Mapping[str, dict], roots: str, cfg: Mapping[str, Any],
                  timing: dict, build: ckpt.BuildCheckpoints) -> None:
    """Stage 4: every single swap of every variant; writes the operator tables."""
    items = [{"triplet": int(r.triplet), "donor": r.donor, "target": r.target,
              "donor_landmarks": orig[r.donor]["landmarks"], "target_landmarks": orig[r.target]["landmarks"]}
             for r in triplets.itertuples(index=False)]
    res = build.run("operator", partial(_operator_batch, variants=list(cfg["variants"]), image_root=roots),
                    ckpt.split_batches(items, cfg["batch_size"]), "corpora: operator triplets")
    orow = []
    for rows, tim in res:
        orow += rows
        _add_timing(timing, tim, "operator")
    orow.sort(key=lambda r: (r["variant"], r["triplet"]))
    _write_encoded(out, "operator", [{"variant": r["variant"], "triplet": r["triplet"]} for r in orow],
                   [r["codes"] for r in orow])


def _partition_identities(triplets: pd.DataFrame, part: str) -> int:
    rows = triplets[triplets["partition"] == part]
    return int(pd.concat([rows[c] for c in ("donor_identity", "target_identity")]).nunique())


def _design_record(chains: pd.DataFrame, triplets: pd.DataFrame, lost: list[dict], orig: Mapping[str, dict],
                   usable: set[str], used: list[str], cfg: Mapping[str, Any]) -> dict[str, Any]:
    """The manifest's ``design``: settings, counts, rules and the lost chains."""
    from .generators import SWAP_VARIANTS

    variants, passes = list(cfg["variants"]), cfg["passes"]
    lost_frame = pd.DataFrame(lost, columns=["variant", "chain", "pass"])
    n_chains = len(chains)
    n_lost = {v: int((lost_frame["variant"] == v).sum()) for v in variants}
    cascade = {"passes": passes, "chains_per_identity": cfg["chains_per_identity"], "gallery_size": cfg["gallery_size"],
               "target_identities": int(chains["identity"].nunique()), "chains": n_chains,
               "nonmember_identities": int(chains["nonmember"].nunique()),
               "donor_photographs": int(chains[fmt.donor_columns(passes)].stack().nunique()),
               "donor_slots": int(n_chains * passes),
               "target_rule": f"identities with >= {TARGET_MIN_IMAGES} photographs",
               "nonmember_rule": f"identities with {NONMEMBER_RANGE[0]}-{NONMEMBER_RANGE[1]} photographs",
               "donor_rule": f"identities with <= {DONOR_MAX_IMAGES} photographs; no photograph used twice; "
                             "distinct identities within a chain; both variants share chains and donors",
               "lost_chains": n_lost, "complete_chains": {v: int(n_chains - n_lost[v]) for v in variants},
               "lost": lost_frame.to_dict(orient="records")}
    operator = {"train_triplets": int((triplets["partition"] == "train").sum()),
                "test_triplets": int((triplets["partition"] == "test").sum()),
                "train_identities": _partition_identities(triplets, "train"),
                "test_identities": _partition_identities(triplets, "test"),
                "rule": f"identities with <= {DONOR_MAX_IMAGES} photographs, identity-disjoint 80/20 split "
                        "by seeded hash; donor and target of a triplet from different identities"}
    originals = {"screened_for_landmarks": len(orig), "without_landmarks": int(len(orig) - len(usable)),
                 "encoded_and_stored": len(used),
                 "note": "cascade donors are screened (landmarks) but not encoded unless they are also "
                         "operator photographs"}
    return {"seed": cfg["seed"], "variants": variants, "swap_variants": {v: SWAP_VARIANTS[v] for v in variants},
            "cascade": cascade, "operator": operator, "originals": originals, "max_identities": cfg["max_identities"]}


def build_corpora(out_dir: str | os.PathLike = "data", image_root: str | os.PathLike | None = None, *,
                  seed: int = 0, variants: Sequence[str] = VARIANTS_DEFAULT,
                  passes: int = CASCADE_DEFAULTS["passes"],
                  chains_per_identity: int = CASCADE_DEFAULTS["chains_per_identity"],
                  gallery_size: int = CASCADE_DEFAULTS["gallery_size"],
                  train_triplets: int = OPERATOR_DEFAULTS["train_triplets"],
                  test_triplets: int = OPERATOR_DEFAULTS["test_triplets"],
                  max_identities: int | None = None, n_jobs: int = 2, batch_size: int = 16,
                  progress: bool = True, checkpoint_dir: str | os.PathLike | None = None,
                  keep_checkpoints: bool = False, interrupt_after: int | None = None) -> dict[str, Any]:
    """Build both corpora into ``<out_dir>/corpora/`` (see the module docstring): landmarks of every
    candidate photograph, the designs, the originals, the cascade, the operator triplets, the manifest.

    Parameters
    ----------
    out_dir : path-like
        Parent folder; the corpora go to ``<out_dir>/corpora``.
    image_root : path-like, optional
        LFW image root (default ``data/lfw/images``).
    seed : int
        Seed of every selection (orders, donors, non-members, partitions).
    variants : sequence of str
        Swap variants (:data:`epsaudit.build.generators.SWAP_VARIANTS` keys).
    passes, chains_per_identity, gallery_size, train_triplets, test_triplets, max_identities : int
        The designs' sizes; ``max_identities`` (smoke runs) keeps that many target identities.
    n_jobs, batch_size, progress, checkpoint_dir, keep_checkpoints, interrupt_after
        As :func:`epsaudit.build.pipeline.build_conditions` (this build's checkpoints: ``corpora-<key>``).

    Returns
    -------
    dict
        The manifest as written.

    Raises
    ------
    ValueError
        Unknown variant, or too few usable photographs.
    epsaudit.build.images.ImageRootError
        No images at the image root.
    epsaudit.build.checkpoints.BuildInterrupted
        See ``interrupt_after``.
    """
    from .generators import SWAP_VARIANTS

    bad = [v for v in variants if v not in SWAP_VARIANTS]
    if bad or not variants:
        raise ValueError(f"variants must be a non-empty subset of {sorted(SWAP_VARIANTS)}, got {list(variants)}")
    cfg = dict(seed=seed, variants=list(variants), passes=passes, chains_per_identity=chains_per_identity,
               gallery_size=gallery_size, train_triplets=train_triplets, test_triplets=test_triplets,
               max_identities=max_identities, n_jobs=n_jobs, batch_size=batch_size, progress=progress)
    t_start = time.perf_counter()
    root = img.image_root(image_root)
    roots = str(root.resolve())
    out = Path(out_dir) / fmt.CORPORA_DIR
    out.mkdir(parents=True, exist_ok=True)
    identities = img.list_identities(root)
    timing: dict[str, float] = {}
    walls: dict[str, float] = {}
    build = ckpt.BuildCheckpoints("corpora", {**{k: v for k, v in cfg.items() if k not in ("n_jobs", "progress")},
                                              "image_root": roots}, ckpt.source_hashes(*_SOURCES), checkpoint_dir,
                                  n_jobs=n_jobs, progress=progress, interrupt_after=interrupt_after)
    ckpt.log(f"corpora: {len(identities)} identities under {roots}; variants {list(variants)}; checkpoints in "
             f"{build.folder}")

    t0 = time.perf_counter()
    candidates, nonmembers, small = _candidate_photographs(identities, cfg)
    orig = _screen(candidates, roots, cfg, timing, build)
    usable = {i for i, r in orig.items() if r["landmarks"] is not None}
    walls["landmarks"] = time.perf_counter() - t0
    chains, galleries, triplets = _designs(identities, usable, nonmembers, small, cfg)
    used = sorted(set(chains["start"]) | set(galleries["image_id"]) | set(triplets["donor"]) | set(triplets["target"]))
    ckpt.log(f"corpora: {len(usable)} of {len(orig)} screened photographs have landmarks; {len(chains)} chains, "
             f"{len(triplets)} triplets, {len(used)} originals to encode")
    t0 = time.perf_counter()
    _encode_originals(out, used, orig, roots, cfg, timing, build)
    fmt.write_designs(out, chains=chains, galleries=galleries, triplets=triplets)
    walls["originals"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    lost = _run_cascade(out, chains, orig, roots, cfg, timing, build)
    walls["cascade"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    _run_operator(out, triplets, orig, roots, cfg, timing, build)
    walls["operator"] = time.perf_counter() - t0

    design = _design_record(chains, triplets, lost, orig, usable, used, cfg)
    run_record = {"finished_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), "n_jobs": n_jobs,
                  "wall_seconds": round(time.perf_counter() - t_start, 1),
                  "stage_wall_seconds": {k: round(v, 1) for k, v in walls.items()},
                  "cpu_seconds_by_step": {k: round(v, 1) for k, v in sorted(timing.items())},
                  "cpu_count": os.cpu_count(), "packages": package_versions(), "resumed": build.resumed,
                  "checkpoints": build.stages}
    doc = fmt.write_corpora_manifest(out, design, run_record)
    if not keep_checkpoints:
        build.clear()
    ckpt.log(f"corpora: wrote {out} in {run_record['wall_seconds']} s")
    return doc


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m epsaudit.build.corpora_builder",
                                description="Build the cascade and operator corpora (data/corpora/) from LFW images.")
    p.add_argument("--image-root", default=None)
    p.add_argument("--out-dir", default="data")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--variants", nargs="+", default=list(VARIANTS_DEFAULT))
    p.add_argument("--passes", type=int, default=CASCADE_DEFAULTS["passes"])
    p.add_argument("--chains-per-identity", type=int, default=CASCADE_DEFAULTS["chains_per_identity"])
    p.add_argument("--gallery-size", type=int, default=CASCADE_DEFAULTS["gallery_size"])
    p.add_argument("--train-triplets", type=int, default=OPERATOR_DEFAULTS["train_triplets"])
    p.add_argument("--test-triplets", type=int, default=OPERATOR_DEFAULTS["test_triplets"])
    p.add_argument("--max-identities", type=int, default=None, help="smoke runs: this many target identities")
    p.add_argument("--n-jobs", type=int, default=2, help="local worker processes (default 2)")
    p.add_argument("--batch-size", type=int, default=16, help="photographs per task (default 16)")
    ckpt.add_build_options(p)
    p.add_argument("--force", action="store_true",
                   help="allow a subset run (--max-identities) to overwrite a full corpus in OUT_DIR/corpora")
    a = p.parse_args(argv)
    existing = Path(a.out_dir) / fmt.CORPORA_DIR / fmt.CORPORA_MANIFEST
    if a.max_identities is not None and existing.exists() and not a.force:
        design = json.loads(existing.read_text(encoding="utf-8")).get("design", {})
        if design.get("max_identities") is None:
            print(f"error: {existing.parent} holds a full corpus; a --max-identities run would overwrite it. "
                  "Give another --out-dir (make corpora OUT=/tmp/corpora-smoke ...) or --force.", file=sys.stderr)
            return 2
    try:
        with running_on(a.scheduler, ckpt.log):
            doc = build_corpora(a.out_dir, a.image_root, seed=a.seed, variants=a.variants, passes=a.passes,
                                chains_per_identity=a.chains_per_identity, gallery_size=a.gallery_size,
                                train_triplets=a.train_triplets, test_triplets=a.test_triplets,
                                max_identities=a.max_identities, n_jobs=a.n_jobs, batch_size=a.batch_size,
                                progress=not a.no_progress, checkpoint_dir=a.checkpoint_dir,
                                keep_checkpoints=a.keep_checkpoints)
    except (img.ImageRootError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps({k: v for k, v in doc["design"].items() if k != "cascade"}, indent=1))
    c = dict(doc["design"]["cascade"])
    c.pop("lost")
    print(json.dumps(c, indent=1))
    print(json.dumps(doc["run"]["stage_wall_seconds"]), doc["run"]["wall_seconds"], "s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
