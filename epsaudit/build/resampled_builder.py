"""Builder of the resampled swap corpus: many independent draws per identity of the randomised swap mechanism ``M_k(A)``
(pass k of a chain from a photograph drawn uniformly from A's photographs, each pass swapping in a fresh donor from the
pool), so reserved-test certificates are not held down by the ~25 photographs of an LFW identity. The mechanism and both
photograph designs: the book's methods chapter, section 'A resampled mechanism: test rows beyond the photographs'.

*Design* (:func:`draw_design`, pure). ``identities`` (default 24) of the identities with >= 20 photographs, first in a
seeded order (:func:`choose_identities`); A's photographs are those with 68 dlib landmarks; the donor pool, the
photographs with 68 landmarks of identities with <= 9. Draw ``j`` of A's split ``s`` uses only
``stream("resampled-draw", seed, A, s, j)``: a uniform photograph, then ``chain_length`` (5) uniform donors, no donor
identity twice in a chain. Design ``disjoint`` (``data/resampled_disjoint/``; ``pool`` is ``data/resampled/``): A's
photographs cut (seeded) into ``dev-1``, ``dev-2``, ``test-1``, ``test-2``, development draws starting on dev parts,
test draws on test parts (``"resampled-disjoint-draw"`` streams, a ``part`` column).

*Faces*. Every image is encoded at the face the swap put its donor on (the detected face overlapping the landmarks the
swap used, else the face placed from them, never a bystander: :func:`epsaudit.build.encoders.choose_face`); passes >= 2
follow that face (a chain whose face is not found is lost). The manifest counts every choice (``face_choices``).

*Passes*. Each draw is rendered once per swap variant (``hull``; ``--variants hull inner`` adds
``inner``, paired) and passes 0, 1 and 5 are encoded with dlib and SFace; pass 0 is encoded once per
photograph and copied to every draw that drew it.

*Redraw rule* (fixed in advance). Per variant, identity and split the stored rows are those of the
first ``n`` complete draws in key order; missing ones are replaced by the next keys ``j = n, n + 1,
...``, rendered for every variant in rounds until each variant has ``n`` (``n`` iid draws conditioned
on a complete chain). Pass-0 rows are keys ``0 .. n-1``, lost or not. Every lost (variant, draw,
pass) is listed in the manifest and the draws table.

Stages are resumable (:mod:`epsaudit.build.checkpoints`). ``python -m epsaudit.build.resampled_builder``
(``make resampled``) builds it; :func:`epsaudit.resampled.load_resampled` reads it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter, defaultdict
from datetime import datetime, timezone
from functools import partial
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from ..data import corpora as fmt
from ..parallel import running_on
from ..protocol import stream
from . import checkpoints as ckpt
from . import images as img
from .pipeline import package_versions, worker_models

TARGET_MIN_IMAGES = 20
DONOR_MAX_IMAGES = 9
VARIANTS_DEFAULT = ("hull",)  # the pool corpus; --variants hull inner adds the second swapper
DEFAULTS = {"identities": 24, "dev": 100, "test": 100, "chain_length": 5, "encode_passes": (1, 5)}
MAX_ROUNDS = 20
#: The photograph designs: ``pool`` (every draw's photograph from all of the identity's photographs: a
#: certificate about the photograph pool) and ``disjoint`` (four disjoint parts of the photographs;
#: development draws start in parts dev-1/dev-2, test draws in test-1/test-2).
DESIGNS = fmt.DESIGNS
PARTS = fmt.PARTS
#: Code the checkpointed batch results depend on (a change gives new checkpoint keys).
_SOURCES = ("generators.py", "encoders.py", "images.py", "resampled_builder.py")


# -------------------------------------------------------------------------------------------------
# design (pure functions of the identity listing, the usable photographs and the seed)


def choose_identities(identities: Mapping[str, Sequence[str]], n: int, seed: int = 0) -> list[str]:
    """The audited identities: the first ``n`` of the identities with >= 20 photographs in the
    seeded order ``stream("resampled-identities", seed)``, returned sorted.

    Raises
    ------
    ValueError
        Fewer than ``n`` such identities, or ``n < 2``.

    Examples
    --------
    >>> listing = {f"P{i}": [f"P{i}/P{i}_{k:04d}.jpg" for k in range(20 + i)] for i in range(4)}
    >>> choose_identities(listing | {"Q": ["Q/Q_0001.jpg"]}, 2)
    ['P2', 'P3']
    """
    targets = sorted(p for p, ids in identities.items() if len(ids) >= TARGET_MIN_IMAGES)
    if n < 2 or len(targets) < n:
        raise ValueError(f"need 2 <= identities <= {len(targets)} (identities with >= {TARGET_MIN_IMAGES} "
                         f"photographs), got {n}")
    return sorted(img.seeded_order(targets, "resampled-identities", seed)[:n])


def pool_candidates(identities: Mapping[str, Sequence[str]], seed: int = 0, size: int | None = None) -> list[str]:
    """Photographs of the identities with <= 9 photographs (the donor pool before the landmark
    screen), sorted; ``size`` keeps a seeded subset (smoke runs).

    Examples
    --------
    >>> pool_candidates({"A": ["A/A_0001.jpg"], "B": [f"B/B_{k:04d}.jpg" for k in range(10)]})
    ['A/A_0001.jpg']
    """
    ids = sorted(i for p, photos in identities.items() if len(photos) <= DONOR_MAX_IMAGES for i in photos)
    return ids if size is None else sorted(img.seeded_order(ids, "resampled-pool", seed)[:size])


def _make_draw(identity: str, split: str, key: int, photographs: Sequence[str], pool: Sequence[str], *,
               seed: int = 0, chain_length: int = DEFAULTS["chain_length"], design: str = "pool") -> dict[str, Any]:
    """One draw from its own stream ``("resampled-draw", seed, identity, split, key)`` (``disjoint``:
    ``"resampled-disjoint-draw"``): a uniform photograph, then uniform donors, a donor whose identity
    the chain already has drawn again. ValueError without a photograph or with < ``chain_length`` donor identities."""
    key_parts = ("resampled-draw" if design == "pool" else f"resampled-{design}-draw", seed, identity, split, int(key))
    photographs, pool = sorted(photographs), sorted(pool)
    if not photographs:
        raise ValueError(f"identity {identity!r} has no usable photograph")
    if len({img.identity_of(d) for d in pool}) < chain_length:
        raise ValueError(f"the donor pool has fewer than {chain_length} identities")
    rng = stream(*key_parts)
    photo = photographs[int(rng.integers(len(photographs)))]
    donors: list[str] = []
    while len(donors) < chain_length:
        d = pool[int(rng.integers(len(pool)))]
        if img.identity_of(d) not in {img.identity_of(x) for x in donors}:
            donors.append(d)
    return {"identity": identity, "split": split, "key": int(key), "seed_key": "|".join(map(str, key_parts)),
            "photograph": photo, **{f"donor_{k}": d for k, d in enumerate(donors, start=1)}}


def photograph_parts(photographs: Sequence[str], identity: str, seed: int = 0) -> dict[str, str]:
    """The disjoint design's four parts (:data:`PARTS`) of one identity's photographs: a seeded shuffle
    ``stream("resampled-parts", seed, identity)`` of the sorted photographs, sizes differing by at most one.

    Returns
    -------
    dict photograph -> part

    Raises
    ------
    ValueError
        Fewer than four photographs.

    Examples
    --------
    >>> parts = photograph_parts([f"A/A_{k:04d}.jpg" for k in range(10)], "A")
    >>> sorted(pd.Series(parts).value_counts().tolist()), parts == photograph_parts(sorted(parts), "A")
    ([2, 2, 3, 3], True)
    """
    photos = sorted(photographs)
    if len(photos) < len(PARTS):
        raise ValueError(f"identity {identity!r} has {len(photos)} usable photograph(s); the disjoint design "
                         f"needs at least {len(PARTS)}")
    order = img.seeded_order(photos, "resampled-parts", seed, identity)
    return {ph: part for part, chunk in zip(PARTS, np.array_split(np.array(order, dtype=object), len(PARTS)))
            for ph in chunk}


def draw_design(photographs: Mapping[str, Sequence[str]], pool: Sequence[str],
                keys: Mapping[tuple[str, str], Sequence[int]], *, seed: int = 0,
                chain_length: int = DEFAULTS["chain_length"], first_id: int = 0,
                parts: Mapping[str, Mapping[str, str]] | None = None) -> pd.DataFrame:
    """The draws of ``keys`` (``(identity, split) -> key indices``), numbered from ``first_id`` in
    (identity, split, key) order; with ``parts`` (identity -> photograph -> part) the design is
    ``disjoint`` and a ``part`` column is added.

    Returns
    -------
    DataFrame
        ``draw``, ``identity``, ``split``, ``key``, ``seed_key``, ``photograph``, ``donor_1 ..`` (and ``part``).

    Examples
    --------
    >>> pool = [f"D{i}/D{i}_0001.jpg" for i in range(6)]
    >>> d = draw_design({"A": ["A/A_0001.jpg"]}, pool, {("A", "dev"): [0, 1], ("A", "test"): [0]}, chain_length=2)
    >>> d[["draw", "split", "key"]].values.tolist()
    [[0, 'dev', 0], [1, 'dev', 1], [2, 'test', 0]]
    >>> photos = {"A": [f"A/A_{k:04d}.jpg" for k in range(8)]}
    >>> parts = {"A": photograph_parts(photos["A"], "A")}
    >>> d = draw_design(photos, pool, {("A", "dev"): range(20), ("A", "test"): range(20)}, chain_length=2, parts=parts)
    >>> sorted(set(zip(d["split"], d["part"])))
    [('dev', 'dev-1'), ('dev', 'dev-2'), ('test', 'test-1'), ('test', 'test-2')]
    """
    order = {s: i for i, s in enumerate(fmt.SPLITS)}
    design = "pool" if parts is None else "disjoint"

    def candidates(p: str, s: str) -> Sequence[str]:
        return photographs[p] if parts is None else [ph for ph in photographs[p] if parts[p][ph].startswith(s)]

    rows = [_make_draw(p, s, j, candidates(p, s), pool, seed=seed, chain_length=chain_length, design=design)
            for (p, s) in sorted(keys, key=lambda ps: (ps[0], order[ps[1]])) for j in sorted(keys[(p, s)])]
    frame = pd.DataFrame(rows, columns=["identity", "split", "key", "seed_key", "photograph"]
                         + fmt.donor_columns(chain_length))
    frame.insert(0, "draw", np.arange(first_id, first_id + len(frame), dtype=np.int64))
    if parts is not None:
        frame["part"] = [parts[p][ph] for p, ph in zip(frame["identity"], frame["photograph"])]
    return frame


# -------------------------------------------------------------------------------------------------
# workers: the swap chain of one draw (following the face each pass swapped) and the stages' batch
# functions (models loaded once per worker thread by :func:`epsaudit.build.pipeline.worker_models`)


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


def _track_landmarks(models: Any, image: np.ndarray, previous: np.ndarray) -> tuple[np.ndarray | None, str]:
    """``(landmarks (68, 2) or None, how)`` of the face a chain's previous swap was put on in its output:
    the HOG (then CNN) face overlapping the ``previous`` landmarks' box (:func:`epsaudit.build.encoders.choose_face`),
    never a bystander; ``None`` when none does (the chain is lost at this pass)."""
    from .encoders import choose_face, rect_boxes

    x = np.ascontiguousarray(image, dtype=np.uint8)
    rects = models.hog_faces(x)  # all the faces, not only the central one
    k, how = choose_face(rect_boxes(rects), x.shape, previous)
    if k is None and models.cnn_fallback:
        rects = models.cnn_faces(x)
        k, how = choose_face(rect_boxes(rects), x.shape, previous)
    if k is None:
        return None, how
    return models.points(x, rects[k]), how


def render_draw(models: Any, start: np.ndarray, start_landmarks: np.ndarray, donors: Sequence[np.ndarray],
                donor_landmarks: Sequence[np.ndarray], variant: str, steps: _Steps | None = None,
                choices: Counter | None = None) -> tuple[list[np.ndarray], list[np.ndarray], int]:
    """One draw's chain: ``(images, landmarks, lost_pass)``; ``images[k]`` is pass ``k`` (0: the
    photograph) and ``landmarks[k]`` the 68 points pass ``k + 1`` swaps (so ``landmarks[k - 1]``
    is the face pass ``k`` put its donor on); ``lost_pass`` is 0, or the pass whose input had no
    face overlapping the previous swap's, where the chain stops."""
    from .generators import swap_face

    steps = steps or _Steps()
    images, marks, lm = [start], [start_landmarks], start_landmarks
    for k, (donor, dlm) in enumerate(zip(donors, donor_landmarks), start=1):
        if k > 1:
            lm, how = steps.run("landmarks", _track_landmarks, models, images[-1], marks[-1])
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
    state, steps = worker_models(fmt.ENCODERS), _Steps()
    out = []
    for i in image_ids:
        image = steps.run("read", img.load_image, i, image_root)
        out.append((i, steps.run("landmarks", state["models"].landmarks, image)[0]))
    return out, steps.record()


def _originals_batch(items: Sequence[tuple[str, np.ndarray]], image_root: str) -> tuple[list, Counter, dict]:
    """Both encodings of photographs (the pass-0 rows), of the face their 68 landmarks are on."""
    state, steps, choices = worker_models(fmt.ENCODERS), _Steps(), Counter()
    out = [(i, _encode(state, steps.run("read", img.load_image, i, image_root), steps, lm, choices, (fmt.ORIGINAL, 0)))
           for i, lm in items]
    return out, choices, steps.record()


def _chain_batch(items: Sequence[Mapping[str, Any]], variants: Sequence[str], encode_passes: Sequence[int],
                 image_root: str) -> tuple[list, list, Counter, dict]:
    """Every draw's chain for every variant: rows ``(variant, draw, pass, codes)`` of the encoded
    passes of complete chains, lost ``(variant, draw, pass)``, and how faces were chosen."""
    state, steps, choices = worker_models(fmt.ENCODERS), _Steps(), Counter()
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


# -------------------------------------------------------------------------------------------------
# main process: the stages


class _Build:
    """The settings, checkpoint stores and per-stage records of one build."""

    def __init__(self, cfg: dict[str, Any], root: str, checkpoint_root: Path, interrupt_after: int | None):
        self.cfg, self.root, self.interrupt_after = cfg, root, interrupt_after
        self.key = ckpt.fingerprint({k: v for k, v in cfg.items() if k not in ("n_jobs", "progress")},
                                    ckpt.source_hashes(*_SOURCES))
        self.checkpoints = checkpoint_root / f"resampled-{self.key[:16]}"
        self.stages: dict[str, dict[str, Any]] = {}
        self.choices: Counter = Counter()  # (variant, pass, encoder or "tracking", how, several faces) -> count

    def run(self, stage: str, func: Callable, items: list, batch_size: int, desc: str) -> list:
        store = ckpt.BatchStore(self.checkpoints, stage)
        remaining = None if self.interrupt_after is None else self.interrupt_after - self._computed()
        if remaining is not None and remaining <= 0:
            raise ckpt.BuildInterrupted(f"{desc}: interrupted before the stage (interrupt_after)")
        results, run = ckpt.run_batches(func, ckpt.split_batches(items, batch_size), store, ckpt.fingerprint(self.key, stage),
                                        n_jobs=self.cfg["n_jobs"], desc=desc, progress=self.cfg["progress"],
                                        interrupt_after=remaining)
        steps: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0])
        now: dict[str, int] = defaultdict(int)  # images of the batches computed in this session
        for i, res in enumerate(results):
            for step, (w, c, n) in res[-1].items():
                steps[step][0] += w
                steps[step][1] += c
                steps[step][2] += n
                now[step] += 0 if i in run.from_checkpoints else n
        wall = run.wall_seconds
        self.stages[stage] = {**run.record(), "cpu_seconds": round(sum(c for _, c, _ in steps.values()), 1),
                              "images_per_wall_second": {s: round(n / wall, 2) if wall > 0 and n else None
                                                         for s, n in sorted(now.items())},
                              "steps": {s: {"worker_seconds": round(w, 1), "cpu_seconds": round(c, 1),
                                            "count": int(n), "per_cpu_second": round(n / c, 2) if c > 0 else None}
                                        for s, (w, c, n) in sorted(steps.items())}}
        return results

    def _computed(self) -> int:
        return sum(s["batches"] - s["batches_from_checkpoints"] for s in self.stages.values())


def _screen(build: _Build, photos: list[str]) -> dict[str, np.ndarray | None]:
    res = build.run("landmarks", partial(_screen_batch, image_root=build.root), photos, 64,
                    "resampled: landmarks")
    return {i: lm for out, _ in res for i, lm in out}


def _render_round(build: _Build, draws: pd.DataFrame, landmarks: Mapping[str, np.ndarray | None],
                  rnd: int) -> tuple[list, list]:
    cfg = build.cfg
    donor_cols = fmt.donor_columns(cfg["chain_length"])
    items = [{"draw": int(r["draw"]), "photograph": r["photograph"], "start_landmarks": landmarks[r["photograph"]],
              "donors": [r[c] for c in donor_cols], "donor_landmarks": [landmarks[r[c]] for c in donor_cols]}
             for r in draws.to_dict(orient="records")]
    res = build.run(f"chains-{rnd}", partial(_chain_batch, variants=cfg["variants"],
                                              encode_passes=cfg["encode_passes"], image_root=build.root),
                    items, cfg["batch_size"], f"resampled: chains (round {rnd})")
    for _, _, choices, _ in res:
        build.choices.update(choices)
    return [r for rows, _, _, _ in res for r in rows], [x for _, lost, _, _ in res for x in lost]


def _complete(draws: pd.DataFrame, lost: list, variant: str) -> pd.DataFrame:
    bad = {d for v, d, _ in lost if v == variant}
    return draws[~draws["draw"].isin(bad)]


def _deficits(draws: pd.DataFrame, lost: list, cfg: Mapping[str, Any]) -> dict[tuple[str, str], int]:
    """Per (identity, split): how many more keys every variant needs to reach its n complete draws."""
    need: dict[tuple[str, str], int] = {}
    for v in cfg["variants"]:
        counts = _complete(draws, lost, v).groupby(["identity", "split"]).size()
        for p in cfg["identities"]:
            for s in fmt.SPLITS:
                short = cfg[s] - int(counts.get((p, s), 0))
                if short > 0:
                    need[(p, s)] = max(need.get((p, s), 0), short)
    return need


def _render(build: _Build, photographs: Mapping[str, list[str]], pool: list[str],
            landmarks: Mapping[str, np.ndarray | None],
            parts: Mapping[str, Mapping[str, str]] | None = None) -> tuple[pd.DataFrame, list, list, int]:
    """The chains of the initial draws, then of redraws (next keys) until every variant has n complete
    draws per identity and split; returns all draws, rows, lost and the number of rounds."""
    cfg = build.cfg
    keys = {(p, s): range(cfg[s]) for p in cfg["identities"] for s in fmt.SPLITS}
    draws = draw_design(photographs, pool, keys, seed=cfg["seed"], chain_length=cfg["chain_length"], parts=parts)
    rows, lost = _render_round(build, draws, landmarks, 0)
    for rnd in range(1, MAX_ROUNDS + 1):
        need = _deficits(draws, lost, cfg)
        if not need:
            return draws, rows, lost, rnd
        nxt = draws.groupby(["identity", "split"])["key"].max() + 1
        more = draw_design(photographs, pool, {ps: range(int(nxt[ps]), int(nxt[ps]) + n) for ps, n in need.items()},
                           seed=cfg["seed"], chain_length=cfg["chain_length"], first_id=int(draws["draw"].max()) + 1,
                           parts=parts)
        ckpt.log(f"resampled: round {rnd} redraws {len(more)} draw(s) for {len(need)} (identity, split)")
        r, lst = _render_round(build, more, landmarks, rnd)
        draws, rows, lost = pd.concat([draws, more], ignore_index=True), rows + r, lost + lst
    raise ValueError(f"fewer than the requested complete draws after {MAX_ROUNDS} redraw rounds")


def _mark(draws: pd.DataFrame, lost: list, cfg: Mapping[str, Any]) -> pd.DataFrame:
    """The draws table with ``used_none`` and each variant's ``lost_pass_`` and ``used_`` columns."""
    draws = draws.copy()
    draws["used_none"] = (draws["key"] < draws["split"].map({s: cfg[s] for s in fmt.SPLITS})).astype(int)
    for v in cfg["variants"]:
        lost_col, used_col = fmt.status_columns(v)
        at = {d: k for vv, d, k in lost if vv == v}
        draws[lost_col] = draws["draw"].map(at).fillna(0).astype(int)
        ok = draws[draws[lost_col] == 0].sort_values(["identity", "split", "key"])
        first = ok[ok.groupby(["identity", "split"]).cumcount() < ok["split"].map({s: cfg[s] for s in fmt.SPLITS})]
        draws[used_col] = draws["draw"].isin(first["draw"]).astype(int)
    return draws


def _write(out: Path, draws: pd.DataFrame, rows: list, codes0: Mapping[str, dict], cfg: Mapping[str, Any]) -> None:
    keys, codes = [], []
    for r in draws[draws["used_none"] == 1].itertuples(index=False):
        keys.append({"variant": fmt.ORIGINAL, "draw": int(r.draw), "pass": 0})
        codes.append(codes0[r.photograph])
    used = {v: set(draws.loc[draws[fmt.status_columns(v)[1]] == 1, "draw"]) for v in cfg["variants"]}
    for variant, draw, k, c in sorted(rows, key=lambda r: (r[0], r[1], r[2])):
        if draw in used[variant]:
            keys.append({"variant": variant, "draw": int(draw), "pass": int(k)})
            codes.append(c)
    for enc in fmt.ENCODERS:
        frame = fmt.resampled_frame(keys, [c[enc][0] for c in codes], [c[enc][1] for c in codes])
        fmt.write_resampled_table(out, enc, frame)
    fmt.write_draws(out, draws)


def face_choices(choices: Mapping[tuple, int]) -> dict[str, Any]:
    """The manifest's record of how faces were chosen: per variant, pass and encoder (or ``tracking``: the chain's
    landmarks at passes >= 2) the count of each choice (:func:`epsaudit.build.encoders.choose_face`), of images with
    several faces, and of fallbacks (``bystander``: a nearest-centre rule would have taken another face; ``landmarks``:
    no detected face on the swapped face, placed from the landmarks; ``none``: a tracked face lost).

    Examples
    --------
    >>> face_choices({("hull", 1, "dlib", "single", False): 3, ("hull", 1, "dlib", "bystander", True): 1})
    {'hull': {'1': {'dlib': {'images': 4, 'several_faces': 1, 'fallbacks': 1, 'how': {'bystander': 1, 'single': 3}}}}}
    """
    out: dict[str, Any] = {}
    for (variant, k, who, how, several), n in sorted(choices.items(), key=lambda kv: tuple(map(str, kv[0]))):
        rec = out.setdefault(str(variant), {}).setdefault(str(k), {}).setdefault(
            str(who), {"images": 0, "several_faces": 0, "fallbacks": 0, "how": {}})
        rec["images"] += int(n)
        rec["several_faces"] += int(n) if several else 0
        rec["fallbacks"] += int(n) if how in ("bystander", "landmarks", "none") else 0
        rec["how"][how] = rec["how"].get(how, 0) + int(n)
    return out


def _design_record(draws: pd.DataFrame, lost: list, rounds: int, photographs: Mapping[str, list[str]],
                   identities: Mapping[str, list[str]], pool: list[str], n_candidates: int,
                   cfg: Mapping[str, Any], parts: Mapping[str, Mapping[str, str]] | None = None,
                   choices: Mapping[tuple, int] | None = None) -> dict[str, Any]:
    from .generators import SWAP_VARIANTS

    lost_frame = pd.DataFrame(lost, columns=["variant", "draw", "pass"]).sort_values(["variant", "draw"])
    variants = list(cfg["variants"])
    disjoint = cfg["design"] == "disjoint"
    photo_rule = ("photographs of its split's two parts (development: dev-1 and dev-2; test: test-1 and test-2)"
                  if disjoint else "A's photographs")
    return {
        "photograph_design": cfg["design"],
        "photograph_rule": ("disjoint: each identity's usable photographs, sorted and shuffled by "
                            "stream('resampled-parts', seed, identity), cut into four parts of near-equal size "
                            "(dev-1, dev-2, test-1, test-2) before anything else; development draws start uniformly "
                            "on dev-1 and dev-2, test draws on test-1 and test-2; no test draw starts from a "
                            "photograph a development draw used (checked); the same-person control re-partitions "
                            "the same draws by part (half 1: dev-1/test-1, half 2: dev-2/test-2)" if disjoint else
                            "pool: every draw's photograph uniform on all of the identity's usable photographs, "
                            "development and test alike (a certificate about the photograph pool)"),
        "parts": ({p: {part: sorted(ph for ph, q in parts[p].items() if q == part) for part in PARTS}
                   for p in cfg["identities"]} if disjoint else None),
        "face_choice": ("the face the swap put its donor on: the detected face overlapping the box of the 68 "
                        "landmarks the swap used (pass 0: the photograph's own landmarks) most, IoU >= 0.1 (dlib: "
                        "HOG, then CNN); when none overlaps, the face placed from those landmarks (path "
                        "'landmarks'); never a bystander. Passes >= 2 track the face the previous pass swapped "
                        "the same way (a chain whose tracked face is not found is lost)"),
        "face_choices": face_choices(choices or {}),
        "seed": cfg["seed"], "variants": variants, "swap_variants": {v: SWAP_VARIANTS[v] for v in variants},
        "encoders": list(fmt.ENCODERS), "chain_length": cfg["chain_length"],
        "passes": [0] + list(cfg["encode_passes"]), "draws_per_split": {s: cfg[s] for s in fmt.SPLITS},
        "mechanism": "M_k(A) = encode(pass k of a chain started from a photograph drawn uniformly from "
                     f"{photo_rule} with 68 dlib landmarks, each pass swapping in a fresh donor drawn from the pool)",
        "identities": {"rule": f"the first {len(cfg['identities'])} identities with >= {TARGET_MIN_IMAGES} "
                               "photographs in the seeded order stream('resampled-identities', seed)",
                       "chosen": list(cfg["identities"]),
                       "photographs": {p: len(identities[p]) for p in cfg["identities"]},
                       "usable_photographs": {p: len(photographs[p]) for p in cfg["identities"]}},
        "donor_pool": {"rule": f"photographs with 68 dlib landmarks of the identities with <= {DONOR_MAX_IMAGES} "
                               "photographs" + ("" if cfg["pool_size"] is None else
                                                f" (a seeded subset of {cfg['pool_size']} candidates: smoke run)"),
                       "candidates": n_candidates, "photographs": len(pool),
                       "identities": len({img.identity_of(d) for d in pool})},
        "draw_rule": f"draw j of (identity, split) uses only stream('{'resampled-disjoint-draw' if disjoint else 'resampled-draw'}', "
                     "seed, identity, split, j): photograph uniform; donors uniform from the pool with replacement across draws, no donor "
                     "identity twice within a chain; draws are independent",
        "redraw_rule": "per variant, identity and split the stored swap rows are the first n complete draws in key "
                       "order; missing ones are replaced by the next keys j = n, n+1, ..., rendered for every "
                       "variant, until each variant has n (fixed in advance); pass-0 rows are keys 0..n-1",
        "dependence": "rows of one draw are dependent: pass 0, pass 1 and pass 5 share the photograph, passes 1 "
                      "and 5 also the first donor; variants share the draws (paired); rows of different draws "
                      "are independent; pass-0 rows repeat a photograph's single encoding (deterministic encoders)",
        "rounds": rounds, "draws_rendered": len(draws),
        "draws_rendered_by_split": {s: int((draws["split"] == s).sum()) for s in fmt.SPLITS},
        "used_draws": {"none": int(draws["used_none"].sum()),
                       **{v: int(draws[fmt.status_columns(v)[1]].sum()) for v in variants}},
        "lost_draws": {v: int((lost_frame["variant"] == v).sum()) for v in variants},
        "lost_by_pass": {v: {str(k): int(n) for k, n in lost_frame[lost_frame["variant"] == v]["pass"]
                             .value_counts().sort_index().items()} for v in variants},
        "spare_draws": {v: int(((draws[fmt.status_columns(v)[0]] == 0) & (draws[fmt.status_columns(v)[1]] == 0)).sum())
                        for v in variants},
        "pass0_photographs": int(draws.loc[draws["used_none"] == 1, "photograph"].nunique()),
        "lost": lost_frame.to_dict(orient="records"), "subset": is_subset(cfg),
    }


def is_subset(settings: Mapping[str, Any]) -> bool:
    """Whether a build's settings make a smoke subset (a donor-pool slice, or fewer identities or
    draws than the defaults), which must not overwrite a full corpus.

    Examples
    --------
    >>> is_subset({"pool_size": None, "identities": 24, "dev": 100, "test": 100})
    False
    >>> is_subset({"pool_size": None, "identities": 2, "dev": 100, "test": 100})
    True
    """
    n = settings["identities"]
    n = len(n) if isinstance(n, (list, tuple)) else int(n)
    return (settings["pool_size"] is not None or n < DEFAULTS["identities"]
            or min(settings["dev"], settings["test"]) < min(DEFAULTS["dev"], DEFAULTS["test"]))


def build_resampled(out_dir: str | os.PathLike = "data", image_root: str | os.PathLike | None = None, *,
                    seed: int = 0, identities: int = DEFAULTS["identities"], dev: int = DEFAULTS["dev"],
                    test: int = DEFAULTS["test"], variants: Sequence[str] = VARIANTS_DEFAULT, design: str = "pool",
                    chain_length: int = DEFAULTS["chain_length"],
                    encode_passes: Sequence[int] = DEFAULTS["encode_passes"], pool_size: int | None = None,
                    n_jobs: int = 2, batch_size: int = 8, checkpoint_dir: str | os.PathLike | None = None,
                    keep_checkpoints: bool = False, progress: bool = True,
                    interrupt_after: int | None = None) -> dict[str, Any]:
    """Build the resampled corpus into ``<out_dir>/resampled/`` (design ``pool``) or
    ``<out_dir>/resampled_disjoint/`` (design ``disjoint``; see the module docstring).

    Parameters
    ----------
    out_dir : path-like
        Parent folder.
    image_root : path-like, optional
        LFW image root (default ``data/lfw/images``).
    seed : int
        Seed of the identity choice and of every draw.
    identities, dev, test : int
        Identities, and development and test draws per identity.
    variants : sequence of str
        Swap variants (:data:`epsaudit.build.generators.SWAP_VARIANTS` keys).
    design : {"pool", "disjoint"}
        The photograph design (:data:`DESIGNS`).
    chain_length : int
        Passes per chain (donors per draw).
    encode_passes : sequence of int
        The swap passes encoded (pass 0 always is).
    pool_size : int, optional
        A seeded subset of the donor-pool candidates (smoke runs; ``None``: all).
    n_jobs, batch_size, checkpoint_dir, keep_checkpoints, progress, interrupt_after
        As :func:`epsaudit.build.pipeline.build_conditions` (``batch_size``: draws per chain batch).

    Returns
    -------
    dict
        The manifest as written.

    Raises
    ------
    ValueError
        Bad settings, too few identities or usable photographs.
    epsaudit.build.images.ImageRootError
        No images at the image root.
    """
    from .generators import SWAP_VARIANTS

    bad = [v for v in variants if v not in SWAP_VARIANTS]
    fmt.corpus_dir(design)  # an unknown design raises here
    if bad or not variants or min(dev, test) < 1 or not set(encode_passes) <= set(range(1, chain_length + 1)):
        raise ValueError(f"variants must be a non-empty subset of {sorted(SWAP_VARIANTS)}, dev/test >= 1 and "
                         f"encode_passes within 1..{chain_length}; got {list(variants)}, {dev}/{test}, "
                         f"{list(encode_passes)}")
    t_start = time.perf_counter()
    root = img.image_root(image_root)
    listing = img.list_identities(root)
    chosen = choose_identities(listing, identities, seed)
    cfg = dict(seed=seed, design=design, identities=chosen, dev=dev, test=test, variants=list(variants),
               chain_length=chain_length,
               encode_passes=sorted({int(k) for k in encode_passes}), pool_size=pool_size, batch_size=batch_size,
               n_jobs=n_jobs, progress=progress)
    build = _Build(cfg, str(root.resolve()), Path(checkpoint_dir or ckpt.DEFAULT_ROOT), interrupt_after)
    ckpt.log(f"resampled ({design} design): {len(chosen)} identities, {dev}+{test} draws each, variants {list(variants)}; "
             f"checkpoints in {build.checkpoints}")

    candidates = pool_candidates(listing, seed, pool_size)
    landmarks = _screen(build, sorted(set(candidates) | {i for p in chosen for i in listing[p]}))
    photographs = {p: [i for i in listing[p] if landmarks[i] is not None] for p in chosen}
    pool = [i for i in candidates if landmarks[i] is not None]
    ckpt.log(f"resampled: donor pool {len(pool)} of {len(candidates)} photographs; usable photographs per identity "
             f"{min(map(len, photographs.values()))}-{max(map(len, photographs.values()))}")
    parts = ({p: photograph_parts(photographs[p], p, seed) for p in chosen} if design == "disjoint" else None)
    draws, rows, lost, rounds = _render(build, photographs, pool, landmarks, parts)
    draws = _mark(draws, lost, cfg)
    if parts is not None:
        fmt.check_disjoint(draws)  # freshness: no test draw starts from a development photograph
    starts = sorted(set(draws.loc[draws["used_none"] == 1, "photograph"]))
    res = build.run("originals", partial(_originals_batch, image_root=build.root),
                    [(i, landmarks[i]) for i in starts], 16, "resampled: pass-0 photographs")
    codes0 = {i: c for out, _, _ in res for i, c in out}
    for _, choices, _ in res:
        build.choices.update(choices)

    out = Path(out_dir) / fmt.corpus_dir(design)
    out.mkdir(parents=True, exist_ok=True)
    _write(out, draws, rows, codes0, cfg)
    record = _design_record(draws, lost, rounds, photographs, listing, pool, len(candidates), cfg, parts,
                            build.choices)
    run = {"finished_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), "n_jobs": n_jobs,
           "cpu_count": os.cpu_count(), "wall_seconds": round(time.perf_counter() - t_start, 1),
           "resumed": any(s["batches_from_checkpoints"] for s in build.stages.values()),
           "stages": build.stages, "packages": package_versions(),
           "note": "wall seconds are this session's; worker and CPU seconds per step sum every batch, those "
                   "loaded from checkpoints of an interrupted session included"}
    doc = fmt.write_resampled_manifest(out, record, run)
    if not keep_checkpoints:
        for stage in build.stages:
            ckpt.BatchStore(build.checkpoints, stage).clear()
    ckpt.log(f"resampled: wrote {out} in {run['wall_seconds']} s")
    return doc


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m epsaudit.build.resampled_builder",
                                description="Build the resampled swap corpus (data/resampled/, or with --design "
                                            "disjoint data/resampled_disjoint/) from LFW images. "
                                            "Resumable: rerun the same command after an interruption.")
    p.add_argument("--image-root", default=None)
    p.add_argument("--out-dir", default="data")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--identities", type=int, default=DEFAULTS["identities"])
    p.add_argument("--dev", type=int, default=DEFAULTS["dev"], help="development draws per identity")
    p.add_argument("--test", type=int, default=DEFAULTS["test"], help="test draws per identity")
    p.add_argument("--variants", nargs="+", default=list(VARIANTS_DEFAULT))
    p.add_argument("--design", choices=list(DESIGNS), default="pool",
                   help="photograph design: pool (every draw from all of an identity's photographs; data/resampled) "
                        "or disjoint (development and test draws from disjoint photographs; data/resampled_disjoint)")
    p.add_argument("--pool-size", type=int, default=None, help="smoke runs: a seeded subset of donor candidates")
    p.add_argument("--n-jobs", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=8)
    ckpt.add_build_options(p)
    p.add_argument("--force", action="store_true",
                   help="allow a subset run (--pool-size, fewer identities or draws) to overwrite a full corpus")
    a = p.parse_args(argv)
    existing = Path(a.out_dir) / fmt.corpus_dir(a.design) / fmt.RESAMPLED_MANIFEST
    full = existing.exists() and not json.loads(existing.read_text(encoding="utf-8")).get("design", {}).get("subset")
    if is_subset(vars(a)) and full and not a.force:
        print(f"error: {existing.parent} holds a full corpus; a subset run would overwrite it. Give another "
              "--out-dir (make resampled OUT=/tmp/resampled-smoke ...) or --force.", file=sys.stderr)
        return 2
    try:
        with running_on(a.scheduler, ckpt.log):
            doc = build_resampled(a.out_dir, a.image_root, seed=a.seed, identities=a.identities, dev=a.dev,
                                  test=a.test, variants=a.variants, design=a.design, pool_size=a.pool_size,
                                  n_jobs=a.n_jobs,
                                  batch_size=a.batch_size, checkpoint_dir=a.checkpoint_dir,
                                  keep_checkpoints=a.keep_checkpoints, progress=not a.no_progress)
    except (img.ImageRootError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    d = doc["design"]
    print(json.dumps({k: d[k] for k in ("draws_rendered", "rounds", "used_draws", "lost_draws", "lost_by_pass",
                                        "spare_draws", "pass0_photographs")}, indent=1))
    print(json.dumps({s: {k: r[k] for k in ("wall_seconds", "items", "items_per_wall_second")}
                      for s, r in doc["run"]["stages"].items()}, indent=1), doc["run"]["wall_seconds"], "s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
