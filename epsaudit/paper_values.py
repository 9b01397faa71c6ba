"""Numbers the papers report, for side-by-side tables (paper 001 = "Picture the Epsilon", tables
and appendix; SPEC sections 2-4). Typed once here, from the paper text, never in notebook prose."""

import numpy as np
import pandas as pd

#: Paper 001, Table 4: the exact null (true epsilon 0); medians over 40 pairs averaged over both
#: prototype sets, the applicable mechanisms and three repetitions. "Div." = mean +inf count of 40.
TABLE4 = pd.DataFrame(
    {"AUC": [0.490, 0.499, 0.502], "Div.": [29.3, 24.7, 20.8], "MMD-TV": [0.003, 0.003, 0.001],
     "GaussMech": [28.60, 15.51, 8.96], "KDE-LR a=.01": [1526.0, 1210.0, 962.0]},
    index=pd.Index([30, 100, 300], name="n"),
)

#: Paper 001, Table 6: fraction of the 40 anisotropic-Gaussian pairs certified above zero,
#: averaged over both prototype sets and three repetitions; columns are requested global epsilon.
TABLE6 = pd.DataFrame(
    [[0.00, 0.00, 0.00, 0.01, 0.29, 0.85],
     [0.00, 0.00, 0.00, 0.64, 0.88, 0.88],
     [0.00, 0.00, 0.04, 0.88, 0.90, 0.98],
     [0.00, 0.00, 0.00, 0.00, 0.00, 0.00],
     [0.00, 0.00, 0.00, 0.00, 0.00, 0.02]],
    index=pd.MultiIndex.from_tuples([("exact", 30), ("exact", 100), ("exact", 300), ("logistic", 30), ("logistic", 100)],
                                    names=["test", "n"]),
    columns=pd.Index([0.0, 0.5, 2.0, 8.0, 16.0, 32.0], name="requested epsilon"),
)

#: Paper 001, Table 3 closed forms (zero or one test error, 40 certificates at 95%).
CERTIFICATE_CLOSED_FORMS = {"n30_zero_errors": 1.277, "n29_zero_errors": 1.239, "n30_one_error": 1.192,
                            "n29_one_error": 1.151, "n100_cap_alpha_1e-4": 2.338}

#: Paper 001, Table 5: DP-Sniper with 6.5e6 mechanism calls per row; median 95% lower bounds over
#: three fixed pairs and three repetitions (one direction each), and their ratio to the exact
#: pairwise value (unrounded numbers; "realized reference" for randomized response). Columns are
#: the requested global epsilon. 81 rows at this budget + 243 at the matched 2n budget; none of the
#: 324 bounds exceeds its exact value.
TABLE5 = pd.DataFrame(
    [[-0.03, 0.12, 0.75, 2.63],
     [-0.05, 0.06, 0.09, 0.08],
     [0.12, 0.93, 4.47, 4.60],
     [0.23, 0.46, 0.56, 0.14]],
    index=pd.MultiIndex.from_tuples([("product Laplace", "bound"), ("product Laplace", "ratio"),
                                     ("K-ary RR", "bound"), ("K-ary RR", "ratio")], names=["mechanism", "statistic"]),
    columns=pd.Index([0.5, 2.0, 8.0, 32.0], name="requested epsilon"),
)
#: Paper 001, Table 5 caption: calls per row, rows at that budget and at the matched budget, bounds
#: above their exact value.
TABLE5_PROTOCOL = {"calls_per_row": 6_500_000, "rows_full_budget": 81, "rows_matched_budget": 243,
                   "total_calls": 526_569_660, "bounds_above_exact": 0, "bounds": 324}

#: Paper 001, Table 2: L2-normalised face embeddings (512-D); medians over the same 100 identity
#: pairs per condition; "ROC-HT +inf" counts out-of-fold values equal to +inf among the 100.
#: Encoders ArcFace / FaceNet; data sets VGGFace2 (90-100 generated embeddings per identity) and
#: CelebA (26-35); generators FF = FaceFusion (one fixed donor), ID = InstantID.
TABLE2 = pd.DataFrame(
    [["ArcFace", "VGGFace2", "FF", 93.1, 10447.0, 1657.0, 0.475, 100, 1.000],
     ["ArcFace", "VGGFace2", "ID", 46.1, 8560.0, 1334.0, 0.236, 100, 0.982],
     ["ArcFace", "CelebA", "FF", 81.6, 8271.0, 1689.0, 0.388, 100, 1.000],
     ["ArcFace", "CelebA", "ID", 58.7, 7249.0, 1523.0, 0.257, 100, 0.978],
     ["FaceNet", "VGGFace2", "FF", 91.8, 9976.0, 1652.0, 0.459, 100, 0.999],
     ["FaceNet", "VGGFace2", "ID", 44.2, 7872.0, 1278.0, 0.217, 100, 0.937]],
    columns=["encoder", "dataset", "generator", "GaussMech", "KDE-LR a=0", "KDE-LR a=.01", "MMD-TV",
             "ROC-HT +inf", "ROC AUC"],
).set_index(["encoder", "dataset", "generator"])
#: Paper 001, Table 2: pairs per condition behind each median and count.
TABLE2_PAIRS = 100

#: Paper 001, Table 3: reserved-test certificates for five pairs per condition selected on
#: development data; all 40 bounds hold together at 95% (alpha = 0.05/80 per one-sided bound).
#: Ranges are min - max over the five pairs; "Pos." and ">1" count bounds above 0 and above 1.
TABLE3 = pd.DataFrame(
    [["ArcFace", "VGGFace2", "FF", "30", "1.000 - 1.000", 5, 5, "1.192 - 1.277"],
     ["ArcFace", "VGGFace2", "ID", "29 - 30", "0.986 - 1.000", 5, 5, "1.151 - 1.277"],
     ["ArcFace", "CelebA", "FF", "9 - 10", "1.000 - 1.000", 0, 0, "0"],
     ["ArcFace", "CelebA", "ID", "9", "1.000 - 1.000", 0, 0, "0"],
     ["FaceNet", "VGGFace2", "FF", "30", "0.997 - 1.000", 5, 5, "1.192 - 1.277"],
     ["FaceNet", "VGGFace2", "ID", "29 - 30", "0.970 - 0.999", 5, 0, "0.685 - 0.925"]],
    columns=["encoder", "dataset", "generator", "n/class", "AUC", "Pos.", ">1", "eps_LB"],
).set_index(["encoder", "dataset", "generator"])
TABLE3_PROTOCOL = {"certificates": 40, "per_condition": 5, "alpha_per_bound": 0.05 / 80, "confidence": 0.95}

#: Paper 000, Section 4 (diagnostics of the eight face conditions, 512-D embeddings).
DIAGNOSTICS = {
    # Shapiro-Wilk rejections at p < 1e-3 among 512 coordinates: range over conditions, and the
    # canonical ArcFace+VGGFace2+InstantID condition
    "shapiro_rejections_min": 296, "shapiro_rejections_max": 512, "shapiro_dimensions": 512,
    "shapiro_canonical": 509,
    # KDE-LR: ratio of the alpha = 0 to the alpha = 0.01 median
    "kde_ratio_min": 4.8, "kde_ratio_max": 6.4,
    # MMD-TV bandwidth sweep (max over the audited pairs) on ArcFace+VGGFace2, sigma / sigma*
    "bandwidth_scales": (0.5, 0.75, 1.0, 1.5, 2.0),
    "bandwidth_max_facefusion": (0.677, 0.724, 0.642, 0.480, 0.374),
    "bandwidth_max_instantid": (0.413, 0.448, 0.406, 0.310, 0.244),
    # classifier witness TV = max(TPR - FPR) against MMD/2 on the 200 ROC-tested pairs
    "witness_ratio_min": 4.39, "witness_ratio_max": 7.52, "witness_tv_min": 0.735, "witness_tv_max": 0.992,
    # mean per-pair AUC difference logistic minus random forest (200 pairs per condition)
    "rf_difference_min": -0.002, "rf_difference_max": 0.013,
    # inter-identity MMD permutation tests (10^4 permutations, first 100 pairs per condition)
    "permutation_rejections": 799, "permutation_tests": 800,
    # same-identity split-half controls: MMD rejections at 0.05
    "split_half_rejections": 16, "split_half_controls": 400,
}

#: Paper 002, Table I, FaceFusion row (VGGFace2, 947-948 pairs): TPR at FPR <= 1% and <= 0.1% and
#: the best balanced accuracy, in percent, for the two recognizers and median / max aggregation.
MIA_TABLE_I_FACEFUSION = pd.DataFrame(
    {("buffalo_l (ArcFace)", "median"): [30.2, 14.6, 81.7], ("buffalo_l (ArcFace)", "max"): [26.3, 11.6, 79.8],
     ("Facenet512", "median"): [15.5, 3.6, 72.9], ("Facenet512", "max"): [13.4, 4.5, 72.1]},
    index=pd.Index(["TPR @ FPR <= 1% (%)", "TPR @ FPR <= 0.1% (%)", "max balanced accuracy (%)"], name="metric"),
)
#: Paper 002, Section V and VIII: other single-swap numbers quoted beside ours.
MIA = {
    "facefusion_target_genuine": 0.616,  # mean target score of a genuine target image (buffalo_l, median)
    "facefusion_target_swap": 0.098,  # mean target score of the FaceFusion swap
    "non_member_mean": 0.008,  # non-member baseline (buffalo_l), about
    "non_member_mean_min": 0.004, "non_member_mean_max": 0.009,
    "facefusion_auc": 0.874,  # MIA AUC at pass 0 of the FaceFusion cascade (Section VIII)
    "auc_min_all_tools": 0.729, "auc_max_all_tools": 0.993,  # E4S ... DiffSwap
    "auc_min_donor_tools": 0.73, "auc_max_donor_tools": 0.95,  # the five donor-retaining tools
    "donor_dominated_min_fraction": 0.93,  # five tools: donor score above target in > 93% of pairs
    "diffswap_target_closer_fraction": 0.86,  # DiffSwap: closer to the target than the donor
    "rank1_blendface": 0.34, "rank1_chance": 0.001, "closed_set_candidates": 948,
    "pairs": 947,
}

#: Paper 002, Table III: the five-pass FaceFusion cascade (478 chains, median over chains; buffalo_l
#: ArcFace, raw cosines), measured against the Monte Carlo rollout; pass 0 is the original image.
CASCADE_TABLE_III_FACEFUSION = pd.DataFrame(
    {"measured": [0.616, 0.091, 0.064, 0.056, 0.052, 0.047],
     "predicted_monte_carlo": [np.nan, 0.168, 0.053, 0.032, 0.024, 0.018],
     "non_member": [np.nan, 0.006, 0.003, 0.008, 0.004, 0.011],
     "excess_ratio": [np.nan, 0.139, 0.677, 0.873, 0.915, 0.893],
     "mia_auc": [np.nan, 0.874, 0.804, 0.761, 0.762, 0.709]},
    index=pd.Index(range(6), name="pass"),
)
#: Paper 002, Table II (fitted operators, raw ArcFace space) and Sections VII-VIII (predictions).
OPERATOR_TABLE_II = pd.DataFrame(
    {"train": [57048, 56848, 16849], "test": [10667, 10397, 7239],
     "fit_cosine": [0.769, 0.647, 0.599], "r2": [0.585, 0.399, 0.338], "residual_fraction": [0.414, 0.600, 0.662],
     "b_u": [0.183, 0.219, 0.198], "rho_B": [0.894, 0.920, 0.854], "sigma_max_B": [10.1, 15.1, 7.81],
     "late_cascade_ratio": [0.893, 0.88, 0.79]},
    index=pd.Index(["FaceFusion", "BlendFace", "CanonSwap"], name="tool"),
)
CASCADE = {
    "chains": 478, "target_identities": 500, "passes": 5,
    "rho_A_facefusion": 1.12,
    "copy_donor_cosine": 0.654, "knn_cosine": 0.442,  # held-out cosine of the baselines (FaceFusion)
    "residual_target_abs_corr_max": 0.023,  # mean |corr(residual, target)| <= 0.023
    "floor_measured": 0.006, "floor_lyapunov": 0.0055,
    "first_pass_removed": 0.525, "later_passes_removed": 0.044,  # absolute similarity, a 12:1 asymmetry
    "spearman_pass1": 0.21, "spearman_survival": 0.11,  # persistent directions (weak support)
    "passes_to_excess_001": (18, 20),
    "auc_pass5": 0.709,
    "spectra_corpus_size": (1_000, 10_000),  # Figure 14: reliable spectra need 1e3-1e4 swaps
}
#: Paper 001, Table 7 (FaceFusion cascade, 50 difficult pairs, alpha = 0.05/500, cap 2.338) and
#: Table 8 (development-data descriptives per pass; GaussMech/MMD-TV 500 pairs, KDE-LR 100, ROC 200).
CASCADE_TABLE_7 = pd.DataFrame(
    {"median_lb": [2.290, 2.076, 1.890, 1.784, 1.701], "min_lb": [1.683, 1.367, 1.085, 1.025, 0.671],
     "max_lb": [2.338, 2.338, 2.338, 2.338, 2.312], "positive": [50] * 5, "above_1": [50, 50, 50, 50, 46],
     "censored": [9, 4, 2, 2, 0]},
    index=pd.Index(range(1, 6), name="pass"),
)
CASCADE_TABLE_7_CAP = 2.338
CASCADE_TABLE_8 = pd.DataFrame(
    {"gaussmech": [39.5, 34.3, 32.1, 30.5, 29.3], "kde_alpha_0": [5408, 5211, 5166, 5080, 5034],
     "kde_alpha_0.01": [1083, 1051, 1039, 1028, 1025], "mmd_tv": [0.181, 0.153, 0.141, 0.131, 0.124],
     "oof_auc": [1.000, 0.999, 0.997, 0.994, 0.991], "exact_corner": [79, 43, 25, 6, 4],
     "raw_inf": [200] * 5, "mmd_reject": [100] * 5},
    index=pd.Index(range(1, 6), name="pass"),
)
