"""Chapter 3 beyond the papers: trade-off-curve (f-DP) and MMD certificates of the audited pairs.

The reserved test of *Picture the Epsilon* (Section IV-C, Table 3) certifies one (epsilon, delta)
point from one threshold. :func:`epsaudit.audits.tradeoff_certificate_pairs` certifies a whole
trade-off curve instead: simultaneous upper limits ``(FPR_hi, FNR_hi)`` at a few thresholds fixed
on development rows, their lower convex hull (an upper envelope of the pair's true trade-off
curve), and from them the best single-point epsilon and a lower bound on the Gaussian-DP
parameter mu. :func:`epsaudit.audits.mmd_certificate_pairs` makes MMD-TV's chain a certificate by
subtracting a worst-case deviation from the test-row ``MMD_u^2``.

:func:`tradeoff_study` runs both on the first pairs the chapter's audit certified in each
≥20-photo condition (both encoders; the 10-19-photo regime's test parts are too small to certify
anything), with the audit's own development/test split (:func:`epsaudit.splits.split_identities` at the audit's seed and test
size), its confidence, delta and family size, so each pair's band, MMD certificate and
reserved-test certificate are computed from the same rows at the same per-certificate level. The
band's single-threshold comparison number then *is* the audit's reserved-test certificate
(:meth:`TradeoffStudy.table` checks it). :mod:`epsaudit.studies.face_study` re-exports every
public name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Hashable, Mapping, Sequence

import numpy as np
import pandas as pd

from ...audits import MMDCertificate, TradeoffCertificate, mmd_certificate_pairs, tradeoff_certificate_pairs
from ...bounds import mmd2_deviation
from ...condition import ConditionAudit
from ...settings import AuditSettings
from ...splits import split_identities
from . import ENCODER_LABEL, ENCODERS, GENERATORS

#: The encoders and the regime whose certified pairs the trade-off section shows, and how many of
#: each condition's certified pairs (the best on development rows first).
TRADEOFF_ENCODERS, TRADEOFF_REGIME, TRADEOFF_PAIRS = ENCODERS, "large", 3


def certified_pairs(audit: ConditionAudit) -> pd.DataFrame:
    """The pairs an audit certified on its reserved test rows, best development rank first.

    Parameters
    ----------
    audit : ConditionAudit

    Returns
    -------
    pandas.DataFrame
        ``identity_a``, ``identity_b``, ``n_test_a``, ``n_test_b``, ``reserved`` (the
        reserved-test certificate), ``cap`` and ``alpha_per_bound``; empty when the audit
        certified none.
    """
    rows = audit.per_pair[audit.per_pair["route"] == "roc_reserved"]
    return pd.DataFrame({
        "identity_a": rows["identity_a"].to_numpy(), "identity_b": rows["identity_b"].to_numpy(),
        "n_test_a": rows["n_a"].astype(int).to_numpy(), "n_test_b": rows["n_b"].astype(int).to_numpy(),
        "reserved": rows["value"].astype(float).to_numpy(), "cap": rows["cap"].astype(float).to_numpy(),
        "alpha_per_bound": rows["alpha_per_bound"].astype(float).to_numpy(),
    })


@dataclass(frozen=True)
class TradeoffStudy:
    """Trade-off and MMD certificates of the certified pairs of a few conditions.

    Attributes
    ----------
    pairs : dict
        Condition name -> :func:`certified_pairs` of its audit.
    bands : dict
        Condition name -> one :class:`~epsaudit.audits.TradeoffCertificate` per pair.
    mmd : dict
        Condition name -> one :class:`~epsaudit.audits.MMDCertificate` per pair.
    family : int
        Certificates each bound is corrected for (the audit's family size).
    confidence : float
    delta : float
    """

    pairs: dict[str, pd.DataFrame]
    bands: dict[str, list[TradeoffCertificate]]
    mmd: dict[str, list[MMDCertificate]]
    family: int
    confidence: float
    delta: float

    def table(self) -> pd.DataFrame:
        """One row per certified pair: the reserved-test certificate beside the band and the MMD certificate.

        Returns
        -------
        pandas.DataFrame
            ``condition``, ``encoder`` (its label), ``generator``, ``rank`` (the pair's selection rank
            in its condition, 1 = best on development rows), ``identity_a``, ``identity_b``, ``n_test_a``, ``n_test_b``,
            ``reserved`` (the audit's certificate), ``single_threshold`` (the band's recomputation
            of it), ``best_epsilon`` and ``mu_lower`` (the band), ``points`` (certified points),
            ``correction_cost``, ``mmd2_u``, ``deviation``, ``mmd_epsilon``.

        Raises
        ------
        ValueError
            If a band's single-threshold certificate differs from the audit's (the splits or the
            levels would then not be the audit's).
        """
        rows = []
        for name, pairs in self.pairs.items():
            for rank, ((_, p), band, mmd) in enumerate(zip(pairs.iterrows(), self.bands[name], self.mmd[name]), 1):
                rows.append({
                    "condition": name, **_parts(name), "rank": rank,
                    "identity_a": p["identity_a"], "identity_b": p["identity_b"],
                    "n_test_a": int(p["n_test_a"]), "n_test_b": int(p["n_test_b"]),
                    "reserved": float(p["reserved"]), "single_threshold": band.single_threshold_epsilon,
                    "best_epsilon": band.best_epsilon, "mu_lower": band.mu_lower, "points": band.n_points,
                    "correction_cost": band.correction_cost,
                    "mmd2_u": mmd.mmd2_u, "deviation": mmd.deviation, "mmd_epsilon": mmd.epsilon,
                })
        frame = pd.DataFrame(rows)
        if len(frame):
            done = frame["single_threshold"].notna()
            if not np.allclose(frame.loc[done, "single_threshold"], frame.loc[done, "reserved"], rtol=1e-9, atol=1e-12):
                raise ValueError("a band's single-threshold certificate differs from the audit's reserved test")
        return frame

    def points(self) -> pd.DataFrame:
        """The certified points of every band (the figure's data).

        Returns
        -------
        pandas.DataFrame
            :meth:`epsaudit.audits.TradeoffCertificate.frame` rows with ``condition``, ``encoder``,
            ``generator`` and ``rank``: ``threshold``, test counts, ``fpr_upper``, ``fnr_upper`` and
            each point's own epsilon and mu bounds.
        """
        frames = [band.frame().assign(condition=name, **_parts(name), rank=rank)
                  for name, bands in self.bands.items() for rank, band in enumerate(bands, 1) if band.computed]
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

    def envelopes(self, grid: int = 201) -> pd.DataFrame:
        """Each band's certified upper envelope of the trade-off curve on an FPR grid.

        Parameters
        ----------
        grid : int
            FPR values from 0 to 1.

        Returns
        -------
        pandas.DataFrame
            ``condition``, ``encoder``, ``generator``, ``rank``, ``identity_a``, ``identity_b``,
            ``fpr``, ``fnr_envelope``
            (:meth:`epsaudit.audits.TradeoffCertificate.envelope`): the true FNR at that FPR is at
            most this, with the family's confidence.
        """
        fpr = np.linspace(0.0, 1.0, int(grid))
        frames = [pd.DataFrame({"condition": name, **_parts(name), "rank": rank,
                                "identity_a": band.pair[0], "identity_b": band.pair[1], "fpr": fpr,
                                "fnr_envelope": band.envelope(fpr)})
                  for name, bands in self.bands.items() for rank, band in enumerate(bands, 1) if band.computed]
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

    def numbers(self) -> dict[str, Any]:
        """The numbers the trade-off prose quotes (glue key -> value).

        Returns
        -------
        dict
            Pairs, pairs per condition, family and level; per generator the largest band epsilon,
            mu and reserved-test certificate; the largest correction cost, how many bands beat the
            reserved test and how many certify a positive mu; the band's points (fewest, most);
            the MMD deviation range, the largest test ``MMD_u^2``, the MMD certificates above 0, and
            the test rows per identity at which the deviation would fall below that ``MMD_u^2``.
        """
        t = self.table()
        out: dict[str, Any] = {"to_pairs": int(len(t)), "to_family": int(self.family),
                               "to_per_condition": int(t.groupby("condition").size().max()),
                               "to_n_min": int(t[["n_test_a", "n_test_b"]].min().min()),
                               "to_n_max": int(t[["n_test_a", "n_test_b"]].max().max()),
                               "to_points_min": int(t["points"].min()), "to_points_max": int(t["points"].max()),
                               "to_generators": [g for g in GENERATORS if (t["generator"] == g).any()]}
        for gen, key in (("none", "none"), ("swap", "swap"), ("dp-pix", "dp")):
            part = t[t["generator"] == gen]
            out[f"to_best_{key}"] = float(part["best_epsilon"].max()) if len(part) else 0.0
            out[f"to_mu_{key}"] = float(part["mu_lower"].max()) if len(part) else 0.0
            out[f"to_reserved_{key}"] = float(part["reserved"].max()) if len(part) else 0.0
        out["to_cost_max"] = float(t["correction_cost"].max())
        out["to_band_wins"] = int((t["best_epsilon"] > t["reserved"] + 1e-12).sum())
        out["to_mu_positive"] = int((t["mu_lower"] > 0).sum())
        out["to_dev_min"], out["to_dev_max"] = float(t["deviation"].min()), float(t["deviation"].max())
        out["to_mmd2_max"] = float(t["mmd2_u"].max())
        out["to_mmd_positive"] = int((t["mmd_epsilon"] > 0).sum())
        alpha = (1.0 - self.confidence) / self.family
        out["to_mmd_alpha"] = alpha
        out["to_mmd_rows_needed"] = rows_for_deviation(out["to_mmd2_max"], alpha)
        return out


def _parts(name: str) -> dict[str, str]:
    """``"sface_large_dp-pix"`` -> ``{"encoder": "SFace", "generator": "dp-pix"}``."""
    encoder, _, generator = name.split("_", 2)
    return {"encoder": ENCODER_LABEL[encoder], "generator": generator}


def rows_for_deviation(mmd2: float, alpha: float, *, limit: int = 1_000_000) -> int:
    """Fewest test rows per identity at which the MMD deviation falls below ``mmd2``.

    The MMD certificate is positive only when the test-row ``MMD_u^2`` exceeds the deviation
    ``t = sqrt(8 (2 / n) log(1 / alpha))`` (:func:`epsaudit.bounds.mmd2_deviation`, ``n`` rows of
    each identity); this is the smallest such ``n`` if ``MMD_u^2`` stayed at ``mmd2``.

    Parameters
    ----------
    mmd2 : float
        A test-row ``MMD_u^2``; 0 or less can never exceed the deviation.
    alpha : float in (0, 1)
        The certificate's level.
    limit : int
        Largest ``n`` searched.

    Returns
    -------
    int
        The smallest ``n`` with ``t(n) < mmd2``, or 0 if none up to ``limit``.

    Examples
    --------
    >>> rows_for_deviation(0.5, 0.05 / 60)  # 16 log(1200) / 0.25 = 453.7
    454
    """
    if not mmd2 > 0:
        return 0
    guess = int(np.ceil(16.0 * np.log(1.0 / alpha) / mmd2 ** 2))
    for n in range(max(2, guess - 2), min(limit, guess + 3) + 1):
        if float(mmd2_deviation(n, n, alpha)) < mmd2:
            return n
    return 0


def tradeoff_study(groups: Mapping[str, Mapping[Hashable, np.ndarray]], audits: Mapping[str, ConditionAudit],
                   settings: AuditSettings, *, encoders: Sequence[str] = TRADEOFF_ENCODERS,
                   regime: str = TRADEOFF_REGIME, generators: Sequence[str] = GENERATORS,
                   top: int | None = TRADEOFF_PAIRS, n_jobs: int | None = None) -> TradeoffStudy:
    """Trade-off and MMD certificates of the first pairs each condition's audit certified.

    For each ``<encoder>_<regime>_<generator>`` condition: the first ``top`` pairs its reserved test
    certified (:func:`certified_pairs`, best development rank first), each identity split as the
    audit split it
    (:func:`epsaudit.splits.split_identities` with ``settings.test_size`` and ``settings.seed``),
    then :func:`epsaudit.audits.tradeoff_certificate_pairs` (Bonferroni band, the default four
    thresholds) and :func:`epsaudit.audits.mmd_certificate_pairs` on those development and test
    rows, each corrected as one of ``settings.family_size`` certificates at
    ``settings.confidence``, at ``settings.delta``.

    Parameters
    ----------
    groups : mapping condition name -> (identity -> rows)
        The audited groups (:func:`epsaudit.studies.face_study.condition_groups`).
    audits : mapping condition name -> ConditionAudit
    settings : AuditSettings
        The audits' settings (:func:`epsaudit.studies.face_study.audit_settings`).
    encoders : sequence of str
    regime : str
    generators : sequence of str
    top : int or None
        Certified pairs per condition (the first ``top`` by development rank; None: all). Each
        bound is still corrected for ``settings.family_size`` certificates.
    n_jobs : int, optional

    Returns
    -------
    TradeoffStudy

    Raises
    ------
    KeyError
        A condition missing from ``groups`` or ``audits``.

    References
    ----------
    *Picture the Epsilon*, Section IV-C and Table 3: the reserved-test certificate each band is
    compared with. Dong, Roth & Su, "Gaussian differential privacy", J. R. Stat. Soc. B 84(1), 2022:
    trade-off functions and mu-GDP.
    """
    family = int(settings.family_size or settings.certificates)
    common = dict(n_certificates=family, confidence=settings.confidence, delta=settings.delta, seed=settings.seed,
                  n_jobs=n_jobs)
    pairs, bands, mmd = {}, {}, {}
    for name in (f"{enc}_{regime}_{gen}" for enc in encoders for gen in generators):
        chosen = certified_pairs(audits[name])
        chosen = chosen if top is None else chosen.head(int(top))
        dev, test, _ = split_identities(groups[name], test_size=settings.test_size, seed=settings.seed)
        keys = list(zip(chosen["identity_a"], chosen["identity_b"]))
        pairs[name] = chosen
        bands[name] = tradeoff_certificate_pairs(dev, keys, test_groups=test, **common) if keys else []
        mmd[name] = mmd_certificate_pairs(dev, keys, test_groups=test, **common) if keys else []
    return TradeoffStudy(pairs, bands, mmd, family, float(settings.confidence), float(settings.delta))
