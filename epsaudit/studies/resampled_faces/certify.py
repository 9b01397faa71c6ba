"""Chapter 5's certificates: per design, encoder, swap variant and pass, the top pairs of one
development ranking certified on the untouched test draws, the worst-pair bound, and the
same-person control of the same design.

Every bound of an encoder and variant of one design (``pairs`` x passes) is one Bonferroni family at
95%, as in Table 7 of *Picture the Epsilon*; certificates use the library's default bound, and each
row also carries the paper's split Clopper-Pearson bound on the same test counts
(:func:`~.levels.cp_from_counts`), which is what Table 7 reports.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from ...audits import certify_top_pairs, ranked_pairs, reserved_test_pairs, select_pairs
from ...corpora import load_corpora
from ...pairs import identity_pairs
from ...progress import progress_bar
from ...resampled import control_half
from ...seeds import stream
from ...splits import split_identities
from ...validation import unit_rows
from ..cascade.scores import pass_groups
from . import levels

__all__ = ["PASSES", "pass_data", "certify_condition", "certify_passes", "capped_design", "same_person_control",
           "control_groups", "summary_table"]

#: Passes of the corpora: 0 = the photographs, 1 and 5 swaps.
PASSES = (0, 1, 5)


def pass_data(corpus: Any, k: int, identities: int | None = None
              ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Development and test rows (unit-normalised) of pass ``k`` with their draw ids.

    Parameters
    ----------
    corpus : epsaudit.resampled.Resampled
    k : int
        A pass of the corpus.
    identities : int, optional
        Keep the first ``identities`` identities in sorted order (smoke runs).

    Returns
    -------
    dev, test : dict identity -> ndarray (n, d)
    dev_ids, test_ids : dict identity -> ndarray (n,) int64

    Raises
    ------
    KeyError
        A pass the corpus does not hold.
    """
    p = corpus.passes[int(k)]
    keep = p.identities[:identities] if identities else p.identities
    return ({a: unit_rows(p.dev[a]) for a in keep}, {a: unit_rows(p.test[a]) for a in keep},
            {a: p.dev_draws[a] for a in keep}, {a: p.test_draws[a] for a in keep})


def _pair_rows(certs: Sequence[Any], family: int, confidence: float, ranking: pd.DataFrame | None = None
               ) -> pd.DataFrame:
    """One row per certificate: the default bound, the paper's bound on the same counts, both caps."""
    auc = {} if ranking is None else {(r.identity_a, r.identity_b): r.dev_auc for r in ranking.itertuples()}
    rows = []
    for rank, c in enumerate(certs, start=1):
        a, b = c.pair
        n_a, n_b = int(c.n[0]), int(c.n[1])
        st = c.statistics
        ok = c.not_computed is None and st is not None
        rows.append({"rank": rank, "identity_a": a, "identity_b": b, "dev_auc": auc.get((a, b), np.nan),
                     "bound": c.value,
                     "bound_cp": levels.cp_from_counts(st.tp, n_a, st.fp, n_b, family, confidence, c.delta)
                     if ok else np.nan,
                     "n_test_a": n_a, "n_test_b": n_b,
                     "cap": levels.cap(n_a, n_b, family, confidence, c.delta),
                     "cap_cp": levels.cap(n_a, n_b, family, confidence, c.delta, levels.CP),
                     "alpha_per_bound": c.alpha_per_bound, "not_computed": c.not_computed})
    return pd.DataFrame(rows)


def certify_condition(dev: Mapping, test: Mapping, dev_ids: Mapping | None = None, test_ids: Mapping | None = None, *,
                      pairs: int = 50, worst_k: int = 10, family: int | None = None, confidence: float = 0.95,
                      delta: float = 1e-5, seed: int = 0, n_jobs: int | None = None, progress: bool = False
                      ) -> tuple[pd.DataFrame, Any]:
    """Certify one condition: ``pairs`` certificates and the worst-pair bound, both from one development ranking.

    Parameters
    ----------
    dev, test : mapping identity -> ndarray (n_i, d)
        Development rows (ranking, classifiers, thresholds) and untouched test rows.
    dev_ids, test_ids : mapping identity -> array_like, optional
        Draw ids of the rows (the freshness check then compares draws).
    pairs : int
        Certificates, the top of the ranking (*Picture the Epsilon*, Table 7: 50).
    worst_k : int
        Pairs certified for the worst-pair bound (its own family of ``worst_k``, at ``confidence``).
    family : int, optional
        Bonferroni family of the ``pairs`` certificates (default ``pairs``): each certificate is at
        the error level ``(1 - confidence) / family``.
    confidence, delta, seed, n_jobs, progress
        As in :func:`epsaudit.audits.reserved_test_pairs`.

    Returns
    -------
    per_pair : pandas.DataFrame
        One row per certificate: ``rank``, ``identity_a``, ``identity_b``, ``dev_auc``, ``bound``
        (the default certificate), ``bound_cp`` (the paper's split Clopper-Pearson bound on the same
        test counts), ``n_test_a``, ``n_test_b``, ``cap`` and ``cap_cp`` (the largest value each bound
        can take at these test sizes), ``alpha_per_bound``, ``not_computed``.
    worst : epsaudit.audits.WorstPairCertificate

    Raises
    ------
    ValueError
        As :func:`epsaudit.audits.select_pairs` and :func:`epsaudit.audits.reserved_test_pairs`.

    References
    ----------
    *Picture the Epsilon*, Section IV-C (the reserved test) and Table 7.
    """
    family = family or pairs
    candidates = identity_pairs(sorted(dev), seed=seed)
    _, ranking = select_pairs(dev, candidates, max(pairs, worst_k), seed=seed, n_jobs=n_jobs, progress=progress)
    ranked = ranked_pairs(ranking)
    certs = reserved_test_pairs(dev, ranked[:pairs], test_groups=test, n_certificates=family,
                                confidence=confidence, delta=delta, seed=seed, dev_ids=dev_ids, test_ids=test_ids,
                                n_jobs=n_jobs, progress=progress)
    worst = certify_top_pairs(dev, test, ranked, worst_k, confidence=confidence, delta=delta, seed=seed,
                              dev_ids=dev_ids, test_ids=test_ids, n_jobs=n_jobs, progress=progress)
    return _pair_rows(certs, family, confidence, ranking), worst


def _worst_row(worst: Any) -> dict[str, Any]:
    r = worst.result
    return {"worst_bound": r.value, "worst_pair": " / ".join(map(str, r.pair)) if r.pair else "",
            "worst_rank": r.statistics.rank, "worst_k": r.statistics.k,
            "worst_alpha_per_bound": r.alpha_per_bound}


def certify_passes(corpora: Mapping[tuple[str, str, str], Any], settings: Mapping[str, Any], *,
                   passes: Sequence[int] = PASSES, n_jobs: int | None = None, progress: bool = True
                   ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The chapter's certificates on the resampled corpora, per design, encoder, variant and pass.

    Parameters
    ----------
    corpora : mapping (design, encoder, variant) -> epsaudit.resampled.Resampled
    settings : mapping
        The profile: ``identities``, ``pairs``, ``worst_k``, ``confidence``, ``delta``, ``seed``.

    Returns
    -------
    per_pair : pandas.DataFrame
        :func:`certify_condition`'s rows with ``design``, ``encoder``, ``variant``, ``pass``.
    worst : pandas.DataFrame
        One row per (design, encoder, variant, pass): ``worst_bound``, ``worst_pair``,
        ``worst_rank``, ``worst_k``, ``worst_alpha_per_bound``.
    """
    def parts(key: tuple, k: int) -> tuple:
        return pass_data(corpora[key], k, settings["identities"])

    jobs = [(key, k) for key in corpora for k in passes]
    return _certify_jobs(jobs, parts, settings, len(passes), "resampled certificates", n_jobs, progress)


def capped_design(directory: str | Path, settings: Mapping[str, Any], *, passes: Sequence[int] = PASSES,
                  n_jobs: int | None = None, progress: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The same certificates on chapter 4's photographs: each identity's cascade chains split in halves.

    The cascade corpora (:mod:`epsaudit.corpora`) hold one chain per photograph, so an identity's
    pass-``k`` rows are its ~25 photographs swapped; half of them (seeded split,
    :func:`epsaudit.splits.split_identities` with ``test_size=0.5``) are the test rows.

    Returns
    -------
    per_pair, worst : pandas.DataFrame
        As :func:`certify_passes` (design ``photographs``).
    """
    corpora = {e: load_corpora(e, directory) for e in settings["encoders"]}

    def parts(key: tuple, k: int) -> tuple:
        groups = pass_groups(corpora[key[1]], key[2], k)
        if settings["identities"]:
            groups = {a: groups[a] for a in sorted(groups)[: settings["identities"]]}
        dev, test, _ = split_identities(groups, test_size=0.5, seed=settings["seed"])
        return dev, test, None, None

    jobs = [(("photographs", e, v), k) for e in settings["encoders"] for v in settings["variants"] for k in passes]
    return _certify_jobs(jobs, parts, settings, len(passes), "photograph design", n_jobs, progress)


def _certify_jobs(jobs: Sequence[tuple[tuple, int]], parts: Callable, settings: Mapping[str, Any], passes: int,
                  desc: str, n_jobs: int | None, progress: bool) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`certify_condition` of every ((design, encoder, variant), pass) job, whose rows
    ``parts(key, pass)`` gives as ``(dev, test, dev_ids, test_ids)``; one family of ``pairs x passes``
    certificates per design, encoder and variant. Returns the per-pair and the worst-pair frames."""
    frames, worst_rows = [], []
    for (design, encoder, variant), k in progress_bar(jobs, progress, desc):
        dev, test, dev_ids, test_ids = parts((design, encoder, variant), k)
        per_pair, worst = certify_condition(dev, test, dev_ids, test_ids, pairs=settings["pairs"],
                                            worst_k=settings["worst_k"], family=settings["pairs"] * passes,
                                            confidence=settings["confidence"], delta=settings["delta"],
                                            seed=settings["seed"], n_jobs=n_jobs)
        key = {"design": design, "encoder": encoder, "variant": variant, "pass": k}
        frames.append(per_pair.assign(**key))
        worst_rows.append({**key, **_worst_row(worst)})
    return pd.concat(frames, ignore_index=True), pd.DataFrame(worst_rows)


def _halves(corpus: Any, identities: Sequence[str], seed: int) -> Callable[[str, np.ndarray], np.ndarray]:
    """``half(identity, draw ids) -> 1 or 2 per draw``: the same-person control's halves of a design.

    Disjoint design: the half of the part the draw's photograph lies in (``dev-1``/``test-1`` -> 1,
    ``dev-2``/``test-2`` -> 2). Pool design: a seeded half of the identity's photographs
    (``stream("same-person-split", seed, identity)``), the draw going with its photograph's.
    """
    draws = corpus.draws.set_index("draw")
    if corpus.design == "disjoint":
        part = draws["part"]
        return lambda a, ids: np.array([control_half(p) for p in part.loc[ids]])
    photo = draws["photograph"]
    half_of: dict[str, int] = {}
    p0 = corpus.passes[0]
    for a in identities:
        photos = sorted(set(photo.loc[p0.dev_draws[a]]) | set(photo.loc[p0.test_draws[a]]))
        order = stream("same-person-split", seed, a).permutation(len(photos))
        half_of.update({photos[i]: (1 if rank < len(photos) / 2 else 2) for rank, i in enumerate(order)})
    return lambda a, ids: np.array([half_of[p] for p in photo.loc[ids]])


def control_groups(corpus: Any, k: int, identities: int | None = None, seed: int = 0
                   ) -> tuple[dict[str, dict], list[tuple[str, str]]]:
    """The same-person control's rows of pass ``k``: each identity's development and test draws split
    into halves ``"<identity> #1"`` and ``"<identity> #2"`` (:func:`_halves`), and the pairs
    (half 1, half 2) of every identity.

    Returns
    -------
    groups : dict
        ``dev``, ``test``, ``dev_ids``, ``test_ids``: each a dict half name -> rows or draw ids.
    pairs : list of (str, str)
    """
    dev, test, dev_ids, test_ids = pass_data(corpus, k, identities)
    names = sorted(dev)
    half = _halves(corpus, names, seed)
    groups: dict[str, dict] = {"dev": {}, "test": {}, "dev_ids": {}, "test_ids": {}}
    for a in names:
        for part, x, ids in (("dev", dev[a], dev_ids[a]), ("test", test[a], test_ids[a])):
            h = half(a, ids)
            for j in (1, 2):
                groups[part][f"{a} #{j}"] = x[h == j]
                groups[f"{part}_ids"][f"{a} #{j}"] = ids[h == j]
    return groups, [(f"{a} #1", f"{a} #2") for a in names]


def same_person_control(corpora: Mapping[tuple[str, str, str], Any], settings: Mapping[str, Any], *,
                        passes: Sequence[int] = PASSES, n_jobs: int | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Certificates between two halves of one identity's photographs: the same person, different photographs.

    Each identity's draws are split by where their start photograph lies (:func:`control_groups`):
    in the disjoint design by the corpus's four parts, so half 1 is the draws from ``dev-1``
    (development) and ``test-1`` (test), half 2 those from ``dev-2`` and ``test-2`` -- the control
    then asks exactly what the certificate asks (can development draws from some photographs tell
    apart test draws from photographs never seen?), and it costs no rendering. In the pool design by
    a seeded half of the photographs. The reserved test certifies the pair (half 1, half 2) of every
    identity, all pairs of a design, encoder and variant (identities x passes) in one Bonferroni
    family at ``settings["confidence"]``. The halves show the same face: a positive bound measures
    how recognisable photographs are, not the identity.

    Returns
    -------
    summary : pandas.DataFrame
        :func:`summary_table` of the control (``certificates`` named ``pairs``) with ``alpha_per_bound``.
    per_pair : pandas.DataFrame
        One row per identity and pass (``identity_a`` is ``"<identity> #1"``).

    Raises
    ------
    ValueError
        As :func:`epsaudit.audits.reserved_test_pairs`.

    References
    ----------
    *Picture the Epsilon*, Section IV-C (the reserved test).
    """
    frames = []
    for (design, encoder, variant), corpus in corpora.items():
        n_ids = len(pass_data(corpus, 0, settings["identities"])[0])
        family = n_ids * len(passes)
        for k in passes:
            groups, pairs = control_groups(corpus, k, settings["identities"], settings["seed"])
            certs = reserved_test_pairs(groups["dev"], pairs, test_groups=groups["test"], n_certificates=family,
                                        confidence=settings["confidence"], delta=settings["delta"],
                                        seed=settings["seed"], dev_ids=groups["dev_ids"],
                                        test_ids=groups["test_ids"], n_jobs=n_jobs)
            frames.append(_pair_rows(certs, family, settings["confidence"])
                          .assign(design=design, encoder=encoder, variant=variant, **{"pass": k}))
    per_pair = pd.concat(frames, ignore_index=True)
    keys = ["design", "encoder", "variant", "pass"]
    alpha = per_pair.groupby(keys, sort=False)["alpha_per_bound"].first().to_numpy()
    summary = summary_table(per_pair).rename(columns={"certificates": "pairs"}).assign(alpha_per_bound=alpha)
    return summary, per_pair


def summary_table(per_pair: pd.DataFrame) -> pd.DataFrame:
    """Table 7's columns per (design, encoder, variant, pass): counts, median/min/max bound and the cap.

    Returns
    -------
    pandas.DataFrame
        ``design``, ``encoder``, ``variant``, ``pass``, ``certificates``, ``positive`` (> 0),
        ``above_1``, ``at_cap`` (bound equal to its cap: zero test errors), ``median_bound``,
        ``min_bound``, ``max_bound``, ``cap`` (the largest cap of the family), the same for the
        paper's bound (``positive_cp``, ``median_cp``, ``min_cp``, ``max_cp``, ``cap_cp``) when the
        rows carry it, ``n_test`` and ``n_test_max`` (the smallest and the largest test size per side
        of a pair), ``not_computed``.
    """
    has_cp = "bound_cp" in per_pair

    def row(g: pd.DataFrame) -> pd.Series:
        ok = g[g["not_computed"].isna()]
        b = ok["bound"].to_numpy(float)
        out = {"certificates": len(g), "positive": int((b > 0).sum()), "above_1": int((b > 1).sum()),
               "at_cap": int(np.isclose(b, ok["cap"].to_numpy(float), rtol=0, atol=1e-9).sum()),
               "median_bound": float(np.median(b)) if len(b) else np.nan,
               "min_bound": float(b.min()) if len(b) else np.nan,
               "max_bound": float(b.max()) if len(b) else np.nan,
               "cap": float(g["cap"].max())}
        if has_cp:
            c = ok["bound_cp"].to_numpy(float)
            out.update({"positive_cp": int((c > 0).sum()), "median_cp": float(np.median(c)) if len(c) else np.nan,
                        "min_cp": float(c.min()) if len(c) else np.nan, "max_cp": float(c.max()) if len(c) else np.nan,
                        "cap_cp": float(g["cap_cp"].max())})
        out.update({"n_test": int(min(g["n_test_a"].min(), g["n_test_b"].min())),
                    "n_test_max": int(np.minimum(g["n_test_a"], g["n_test_b"]).max()),
                    "not_computed": int(g["not_computed"].notna().sum())})
        return pd.Series(out)

    keys = [c for c in ("design", "encoder", "variant", "pass") if c in per_pair]
    out = per_pair.groupby(keys, sort=False).apply(row, include_groups=False).reset_index()
    counts = ["certificates", "positive", "above_1", "at_cap", "n_test", "n_test_max", "not_computed"]
    counts += ["positive_cp"] if has_cp else []
    return out.astype({c: int for c in counts})
