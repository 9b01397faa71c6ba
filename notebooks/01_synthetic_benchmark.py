# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3 (epsaudit)
#     language: python
#     name: epsaudit
# ---

# %% [markdown]
# # The known-epsilon benchmark
#
# **What you will learn.** How to tell a {term}`diagnostic` from an {term}`estimate` and a
# {term}`certificate` by running all of them on mechanisms whose epsilon is known exactly; why the
# diagnostics are large at the {term}`exact null`; how often a {term}`reserved test` certifies
# anything, and how its test size and {term}`family` cap it; what the {term}`joint certificate` gains
# over the paper's {term}`Clopper-Pearson` bound; and how a whole {term}`trade-off curve` is
# certified.
#
# Four audit {term}`routes <route>` return a number called "epsilon". Here every number is compared
# with the *exact* epsilon of a mechanism built to have it (*Picture the Epsilon*, Tables 4 and 6,
# Figures 2 and 3): identity prototypes on the unit sphere in $d = 512$, released through product
# Laplace noise (pure DP, $\varepsilon_{AB} = \lVert\mu_A - \mu_B\rVert_1 / b$), isotropic
# Gaussian noise (approximate DP, the analytic Gaussian mechanism at $\delta = 10^{-5}$
# {cite}`balle2018improving`), anisotropic Gaussian noise, and the exact null where every identity
# releases the same distribution.
#
# The noise is calibrated so that the worst pair of a 20-identity prototype set has the requested
# global epsilon; the reference for a setting is the median exact pairwise epsilon over the audited
# pairs ({glue:text}`pairs_per_setting` here, 40 in the paper). This page ran with the
# **{glue:text}`ch1_profile`** profile; its run time is on the {doc}`../execution_statistics` page.
#
# What this chapter reproduces, each beside the paper's numbers: Table 4 (the null), Figure 2 (each
# route against the exact epsilon), Figure 3 (how often the reserved test certifies anything) and
# Table 6 (the anisotropic gap between a learned and the exact test), with a shrinkage-LDA scorer
# added as a third test. Every certificate is the joint certificate unless marked Clopper-Pearson;
# the paper's Figure 3 and Table 6 are reproduced with both. Beyond the papers, the last section
# certifies whole trade-off curves.
#
# Choices the paper leaves open, made here: 20 identities per prototype set; the "face-like" set
# spreads prototypes along five dominant directions so pairwise distances vary widely; the reserved
# test draws $n$ fresh {term}`development rows` and $n$ fresh {term}`test rows` per identity, so $n$
# is the test size; the threshold maximises the bound on the development scores. The parameters
# below are what a class changes (`papermill --help-notebook` lists them; lists are comma-separated,
# e.g. `-p sizes 30,300`).

# %% tags=["parameters"]
profile: str = "full"  # run profile: "smoke" (a minute), "full" or "paper"
sizes: list = None  # test rows per identity, "30,300" (10-1000; None: profile)
epsilons: list = None  # requested epsilons, nats, "0,2,8" (None: profile)
mechanisms: list = None  # Figure 3: "gaussian", "laplace" (None: both)
seed: int = 0  # base seed of every draw
n_jobs: int = 2  # settings run in parallel; tables do not depend on it

# %% tags=["remove-cell"]
from epsaudit.studies import parameters
from epsaudit.studies import synthetic as study

parameters.check(globals(), study.PARAMETERS, "The known-epsilon benchmark")
P = study.settings(profile, sizes, epsilons, mechanisms)  # epsaudit.studies.synthetic.PROFILES

# %% tags=["remove-cell"]
from IPython.display import Markdown
from myst_nb import glue

from epsaudit import plotting
from epsaudit.audits import reserved_test_certificate
from epsaudit.mechanisms import benchmark_pairs, calibrate, prototype_set
from epsaudit.results import results_frame
from epsaudit.studies.glue import glue_numbers

plotting.set_style()


glue("ch1_profile", profile, display=False)
glue("pairs_per_setting", P["pairs"], display=False)

# %% [markdown]
# ## Table 4: the exact null
#
# Every identity releases the same distribution, so the true pairwise epsilon is zero. At the null
# the two prototype geometries coincide (all prototypes are the same point), so one geometry is run;
# the table averages the per-setting medians over both noise mechanisms and the repetitions.

# %%
null_summary = study.null_summary(P, seed, n_jobs)  # every route, null pairs

# %% tags=["remove-input"]
table4, numbers = study.table4(null_summary, P["pairs"])
glue_numbers(numbers | study.table4_wording(table4, P))
study.table4_view(table4)

# %% [markdown]
# At $n = $ {glue:text}`t4_n0` per identity, GaussMech gives {glue:text}`t4_gaussmech_first:.2f` and
# KDE-LR at $\alpha = 0.01$ gives {glue:text}`t4_kde_first:.0f` although the true epsilon is zero;
# the out-of-fold ROC conversion is $+\infty$ on {glue:text}`t4_div_first:.1f` of 40 pairs
# ({glue:text}`t4_paper_first_phrase`) while the median AUC is {glue:text}`t4_auc_first:.3f`,
# {glue:text}`t4_auc_phrase`.
#
# **What carries over and why numbers differ.** GaussMech {glue:text}`t4_gm_phrase`: at the null it
# is $\approx \sqrt{2d/(n-1)} \cdot 4.845$ whatever the noise. Our count of $+\infty$ conversions is
# {glue:text}`t4_div_ours` of 40 at $n =$ {glue:text}`t4_sizes` (paper 29.3 / 24.7 / 20.8 at $n$ =
# 30 / 100 / 300). With continuous out-of-fold scores and no ties, the top score comes from
# identity A (an operating point with FPR = 0, TPR > 0) or the bottom one from identity B (TPR = 1,
# FPR < 1) with probability $1 - 1/4 = 3/4$ at the null, i.e. about 30 of 40 pairs at *any* $n$,
# {glue:text}`t4_div_phrase`.
#
# The paper's decline with $n$ points to ties among its scores (e.g. probabilities saturating at 0
# or 1), which hide such corners; its code is not available to check. Our KDE-LR is
# {glue:text}`t4_kde_phrase` (1526 / 1210 / 962): an independent reference implementation gives
# 1100-1400 / 850-1200 / 650-950, and the value is dominated by grid and tail details that the text
# does not pin down (the KDE-LR test checks the reference band and agreement with scipy's
# `gaussian_kde` to $10^{-4}$). MMD-TV at the null is {glue:text}`t4_mmd_ours` here and
# {glue:text}`t4_mmd_paper` in the paper: a sample value of a quantity that is 0.

# %% [markdown]
# ## The paper's Figure 2: each route against the exact epsilon
#
# Both geometries, both mechanisms, every requested epsilon, at one sample size
# ({numref}`fig-ch1-routes`). Lines are means over geometries and repetitions; bands span them. MMD-TV
# is a pure-DP route and is drawn for the Laplace mechanism only, with the tighter
# {term}`hockey-stick <hockey-stick divergence>` form dashed. The ROC panel shows, dotted, the
# population-optimal AUC of the exact likelihood-ratio test for the median-epsilon pair (closed
# form for Gaussian noise, Monte Carlo for Laplace).

# %%
fig2_summary, auc_reference = study.figure2_runs(P, null_summary, seed, n_jobs)

# %% tags=["remove-cell"]
fig = plotting.synthetic.routes_against_reference(fig2_summary, auc_reference)
plotting.style.glue_figure("ch1-figure2-routes", fig, study.figure2_data(fig2_summary, auc_reference))
fig2_table, numbers = study.figure2_table(fig2_summary, null_summary, P)  # a plot only in the paper
glue_numbers(numbers | study.figure2_wording(fig2_table, auc_reference))
glue("ch1_fig2_table", study.figure2_view(fig2_table, P["fig2_n"]), display=False)

# %% [markdown]
# ```{glue:figure} ch1-figure2-routes
# :name: fig-ch1-routes
#
# **Each route against the exact epsilon** (the paper's Figure 2). Top: the two diagnostics
# (GaussMech, KDE-LR); bottom: the two estimates (MMD-TV, the out-of-fold ROC AUC), against the
# exact median $\varepsilon$ of each setting (nats). Lines: means over geometries and repetitions;
# bands: their range; dotted: the population-optimal AUC.
# ```
#
# {glue:md}`ch1-figure2-routes-files:myst`
#
# At the null, where the exact epsilon is 0, GaussMech gives {glue:text}`f2_gm_null:.2f` (the mean
# of both noises); at the largest setting it gives {glue:text}`f2_gm_top_phrase`: the diagnostics do
# not measure the exact epsilon. MMD-TV {glue:text}`f2_mmd_phrase` the exact epsilon but stays far
# below it (median {glue:text}`f2_mmd_top:.3f` against an exact median of {glue:text}`f2_ref_top:.2f`
# at the largest setting for Laplace noise). This is the paper's picture: MMD-TV is a valid
# population inequality evaluated at a sample value, not an estimate of epsilon.
#
# For Gaussian noise the out-of-fold AUC {glue:text}`f2_auc_phrase`; for product Laplace noise in
# $d = 512$ even the optimal test reaches an AUC of only {glue:text}`f2_lap_opt:.3f` at the largest
# setting (the learned one {glue:text}`f2_lap_auc:.3f`), because the privacy loss is spread over 512
# bounded terms.
#
# ````{dropdown} All numbers: Figure 2 as a table
# ```{glue} ch1_fig2_table
# ```
# ````

# %% [markdown]
# ## The paper's Figure 3: how often does the reserved test certify anything?
#
# First one certificate by hand: twenty identities of the dispersed prototype set under Gaussian
# noise calibrated so that the worst pair has $\varepsilon = 8$, the first audited pair, $n = 100$
# development and test rows per identity, and the exact likelihood-ratio score. It is one of a
# family of $K = $ {glue:text}`pairs_per_setting` certificates reported together, so it is made at
# error level $0.05 / K$.

# %%
prototypes = prototype_set("dispersed", 20, 512, seed=seed)  # 20 identities
mechanism = calibrate("gaussian", prototypes, 8.0, seed=seed)  # worst pair: 8
a, b = benchmark_pairs(20, seed=seed)[0]  # the first audited pair
key = ("by hand", seed)
dev = mechanism.sample_groups(100, seed=key + ("dev",), identities=[a, b])
test = mechanism.sample_groups(100, seed=key + ("test",), identities=[a, b])
cert = reserved_test_certificate(
    dev[a], dev[b], test[a], test[b],
    score_function=mechanism.exact_score(a, b),  # the exact likelihood ratio
    n_certificates=P["pairs"], delta=mechanism.delta)  # one of a family
columns = ["kind", "bound", "value", "n_a", "n_b", "tp", "fp", "cap"]
exact = mechanism.exact_epsilon(a, b)
results_frame([cert])[columns].assign(exact=exact).round(3)

# %% tags=["remove-cell"]
by_hand_cp = reserved_test_certificate(dev[a], dev[b], test[a], test[b], score_function=mechanism.exact_score(a, b),
                                       n_certificates=P["pairs"], delta=mechanism.delta, bound="clopper-pearson")
glue_numbers({"hand_joint": cert.value, "hand_cp": by_hand_cp.value, "hand_exact": mechanism.exact_epsilon(a, b),
          "hand_cap": cert.details["cap"], "hand_cap_cp": by_hand_cp.details["cap"]})
glue_numbers(study.figure3_caps(P["sizes"], P["pairs"]))

# %% [markdown]
# It certifies {glue:text}`hand_joint:.2f` against an exact {glue:text}`hand_exact:.2f`; the most a
# test of this size can certify in this family, its {term}`cap`, is {glue:text}`hand_cap:.2f`.
# The paper's Figure 3, reproduced in {numref}`fig-ch1-certified`, repeats this for every pair,
# setting and test size, with the learned logistic test
# (solid) and the exact test (dashed), and with both bounds. All
# certificates of a setting hold together at 95%, each at $0.05 / K$, so a test of $n$ rows per
# identity can certify at most {glue:text}`f3_caps_phrase`.

# %%
fig3_runs = study.certify_grid(  # every pair: the joint and the paper's bound
    ["dispersed"], P["mechanisms"], ("logistic", "exact"), P, seed, n_jobs,
    "Figure 3", bounds=study.BOUNDS)
fig3 = study.certification_summary(fig3_runs)

# %% tags=["remove-cell"]
fig = plotting.synthetic.certification_curves(fig3)
plotting.style.glue_figure("ch1-figure3-certified", fig, fig3)
fig3_joint = fig3[fig3["bound"] == "joint"]
fig3_table, numbers = study.figure3_table(fig3)
words = study.figure3_wording(fig3_joint)
glue("f3_lap_sentence", Markdown(words.pop("f3_lap_sentence")), display=False)
glue_numbers(numbers | words | study.plan_exercise(fig3))
glue("ch1_fig3_table", study.figure3_view(fig3_table), display=False)

# %% [markdown]
# ```{glue:figure} ch1-figure3-certified
# :name: fig-ch1-certified
#
# **How often and how much the reserved test certifies** (the paper's Figure 3, dispersed set).
# Top: the fraction of pairs certified above 0; bottom: the median certified $\varepsilon$ (nats),
# against the exact median $\varepsilon$ of each setting. Colour: test rows per identity; solid:
# logistic regression, dashed: the exact test; bold with markers: the joint certificate, thin and
# faded: the paper's Clopper-Pearson bound; dotted (dash-dotted): the caps of each test size.
# ```
#
# {glue:md}`ch1-figure3-certified-files:myst`
#
# {glue:text}`f3_n_phrase` With {glue:text}`f3_first_noise` noise the exact test certifies up to
# {glue:text}`f3_exact_max:.2f` of the pairs with the joint certificate
# ({glue:text}`f3_exact_max_cp:.2f` with the paper's bound) and the learned logistic test up to
# {glue:text}`f3_learned_max:.2f` ({glue:text}`f3_learned_max_cp:.2f`). The largest median
# certificate is {glue:text}`f3_median_max:.2f` nats (joint) against {glue:text}`f3_median_max_cp:.2f`
# (Clopper-Pearson): {glue:text}`f3_joint_phrase`.
#
# {glue:md}`f3_lap_sentence:myst` Certified values never exceed the cap of their test size; the
# paper's curves have the same ceiling.
#
# ````{dropdown} All numbers: Figure 3 as a table
# ```{glue} ch1_fig3_table
# ```
# ````

# %% [markdown]
# ## Table 6: the anisotropic gap, and how much shrinkage closes it
#
# Anisotropic Gaussian noise with a diagonal covariance whose variances span four orders of
# magnitude; the signal lives mostly in the low-variance coordinates. The exact test scores along
# the whitening direction $S^{-1}(\mu_A - \mu_B)$; the learned logistic test (L2 penalty, $C = 1$)
# is dominated by the high-variance coordinates. The third test is linear discriminant analysis
# with a Ledoit-Wolf-shrunk covariance {cite}`ledoit2004well`, which estimates the whitening
# direction. Each is certified with the joint certificate and with the paper's bound.

# %%
t6_runs = study.certify_grid(
    study.GEOMETRIES, ["anisotropic_gaussian"],
    ("exact", "logistic", "shrinkage_lda"), P, seed, n_jobs, "Table 6",
    bounds=study.BOUNDS)
t6 = study.certification_summary(t6_runs)

# %% tags=["remove-input"]
table6, _ = study.table6(t6)
by_geometry, numbers = study.table6_by_geometry(t6, t6_runs, table6, P)
glue_numbers(numbers | study.table6_wording(numbers))
glue("ch1_by_geometry", study.by_geometry_view(by_geometry, numbers["t6_n"]), display=False)
study.table6_view(table6, study.TABLE6)

# %% [markdown]
# At requested $\varepsilon = $ {glue:text}`t6_eps:g` and $n = $ {glue:text}`t6_n` the exact test
# certifies {glue:text}`t6_exact:.2f` of the pairs with the joint certificate and
# {glue:text}`t6_exact_cp:.2f` with the paper's Clopper-Pearson bound ({glue:text}`t6_paper_phrase`);
# the learned logistic test {glue:text}`t6_logistic:.2f` ({glue:text}`t6_logistic_cp:.2f`; paper
# 0.00-0.02 at every setting), and shrinkage LDA {glue:text}`t6_shrinkage_lda:.2f`
# ({glue:text}`t6_shrinkage_lda_cp:.2f`): {glue:text}`t6_gap_phrase`. A learned test is only as good
# as its scorer; a certificate from a weak scorer is valid but says little.
#
# **Why our numbers differ from the paper's.** The paper's covariance and prototype sets are not
# published; ours are documented in `epsaudit.mechanisms`. By geometry, the exact test certifies
# {glue:text}`t6_exact_dispersed:.2f` of the dispersed pairs and {glue:text}`t6_exact_face:.2f` of the
# face-like pairs at this setting (joint certificate): our face-like set spreads pairwise distances
# widely (largest to median distance about 4.5), so most of its pairs are far weaker than the worst
# pair that fixes the noise; the paper's average of 0.88 implies a less spread second set.
#
# The ordering (exact far above learned logistic, both zero at small epsilon) is what carries over,
# with either bound. Logistic regression keeps the paper's `max_iter=1000`; on this badly scaled
# data {glue:text}`t6_stopped_phrase`.
#
# ````{dropdown} All numbers: Table 6 by prototype geometry
# ```{glue} ch1_by_geometry
# ```
# ````

# %% [markdown]
# ## Floating point: a textbook Laplace implementation is not $\varepsilon$-DP
#
# Every exact epsilon in this chapter is a statement about a real-valued mechanism. The computer
# releases float64 numbers, and the textbook implementation of the Laplace mechanism,
# $\mathrm{fl}(\mu + L)$ with $L$ numpy's Laplace draw, is not $\varepsilon$-DP for *any*
# $\varepsilon$ {cite}`mironov2012significance`: numpy's noise takes only the values
# $\pm b \log(2k\,2^{-53})$, a sparse subset of the doubles, so most doubles reachable as
# $\mathrm{fl}(\mu_a + L)$ are unreachable as $\mathrm{fl}(\mu_b + L)$, and an output reachable from
# one mean only has likelihood ratio $+\infty$.
#
# Here both audits of this book are pointed at that flaw: one pair in one dimension with means 0.3
# and 0 and $b = 1$, so the nominal epsilon is 0.3. Two fixed attacks (score functions, nothing
# learned) are certified with the reserved test ({glue:text}`fp_n:,` development and
# {glue:text}`fp_n:,` test outputs per input, joint certificate) and with DP-Sniper
# ({glue:text}`fp_calls:,` calls, both directions, $c = 0.01$), each at 95%:
#
# * **reachability** (Mironov's support test, `reachability_score`): $+1$ when an output cannot be
#   produced from $\mu_b$ by the sampler (replayed bit for bit), $-1$ when it cannot be produced
#   from $\mu_a$;
# * **log-ratio** (the log-likelihood ratio): for the textbook mechanism computed the textbook way,
#   $|x - \mu_b| - |x - \mu_a|$, whose last bits on the clipped tails depend on the input; for the
#   fixed mechanism computed without cancellation.
#
# The fixed mechanism is the one every other section uses (`ProductLaplace`): the same draw, rounded
# to a grid of spacing $2^{\lfloor \log_2 b \rfloor - 20}$. Rounding is post-processing, and cells
# beyond both means keep the exact ratio $e^{|\mu_a - \mu_b|/b}$, so its epsilon is exactly the
# nominal one; every output moves by at most $2^{-21}$ noise scales, far below the precision of any
# table here.

# %%
fp_table, numbers = study.floating_point_table(P, seed)  # 2 attacks x 2

# %% tags=["remove-input"]
glue_numbers(numbers | study.floating_point_wording(numbers))
study.floating_point_view(fp_table)

# %% [markdown]
# Against the textbook implementation the reachability attack certifies
# $\varepsilon \ge$ {glue:text}`fp_tb_reach_reserved:.2f` with the reserved test and
# {glue:text}`fp_tb_reach_sniper:.2f` with DP-Sniper, against a nominal 0.3:
# {glue:text}`fp_refute_phrase`. {glue:text}`fp_sniper_phrase` $\log(1/c) =$
# {glue:text}`fp_cap:.2f`; the reserved test is limited only by its test size.
# {glue:text}`fp_lr_phrase`: the reserved test certifies {glue:text}`fp_tb_lr_reserved:.2f` by
# thresholding between two values of $|x| - |x - 0.3|$ that differ in the last bit
# ({glue:text}`fp_tb_lr_sniper:.2f` for DP-Sniper, whose threshold sits in the top 1% of scores,
# where the pattern helps less).
#
# Against the grid mechanism the same attacks certify {glue:text}`fp_grid_reach_reserved:.2f` and
# {glue:text}`fp_grid_reach_sniper:.2f` (reachability: every grid cell near the means is reachable
# from both) and {glue:text}`fp_grid_lr_reserved:.2f` and {glue:text}`fp_grid_lr_sniper:.2f`
# (log-ratio): {glue:text}`fp_grid_phrase`. The papers do not run this check, so there is no paper
# value to set beside these; it is why the benchmark's certificates can be compared with exact
# epsilons at all. The test suite counts certificates above the exact epsilon for means that are not
# exactly representable (0.3, 0.1, 1/3; in one and three dimensions) against the binomial tolerance.

# %% [markdown]
# ## Validity: no certificate above the truth more often than promised
#
# Every certificate in this chapter is compared with the exact epsilon of its pair. Within a setting
# the {glue:text}`pairs_per_setting` certificates of one test and one bound form one family at 95%;
# the family-wise error rate may be at most 5%. The test suite (`tests/test_validity.py`) runs a
# larger, dedicated simulation.

# %% tags=["remove-input"]
validity, numbers = study.validity_table(fig3_runs, t6_runs)
glue_numbers(numbers | study.validity_wording(validity))
study.validity_view(validity)

# %% [markdown]
# Of {glue:text}`v_certs` certificates (both bounds), {glue:text}`v_viol` exceed the exact epsilon of
# their pair, and {glue:text}`v_fam_viol` of {glue:text}`v_fam` families contain any violation. The
# paper reports none of 324 DP-Sniper bounds above the truth; {glue:text}`v_phrase`.

# %% [markdown]
# ## Beyond the papers: certifying the whole trade-off curve
#
# The reserved test certifies one point: one threshold, one $(\varepsilon, \delta)$. The *trade-off
# certificate* ({doc}`../methods`) certifies the pair's whole {term}`trade-off curve`, the smallest
# false-negative rate $\beta$ of any test at false-positive rate $\alpha$ (f-DP
# {cite}`dong2022gaussian`): four thresholds are fixed on development outputs, and simultaneous
# upper limits on both error rates at all four give certified points that the true curve lies
# below, together with 95% probability. From them follow a lower bound on the {term}`mu-GDP`
# parameter $\mu$ and an $\varepsilon$ at every $\delta$.
#
# The test bed is the simplest pair whose curve is known exactly: $N(\mu, 1)$ against $N(0, 1)$
# (`IsotropicGaussian` in one dimension), exactly $\mu$-GDP with curve
# $\beta = \Phi(\Phi^{-1}(1 - \alpha) - \mu)$. Each certificate uses the exact likelihood-ratio
# score, $n$ development and $n$ fresh test outputs per identity, and holds on its own at 95%. In
# {numref}`fig-ch1-tradeoff` (one draw per $n$, true $\mu = $ {glue:text}`gdp_sp_mu:g`) the grey
# diagonal is a test that cannot tell the identities apart; the lower a curve, the more
# distinguishable the pair.

# %%
gdp = study.gdp_runs(P, seed, n_jobs)  # trade-off certificates: every mu, size, rep
curves, points = study.gdp_curves(P, seed)

# %% tags=["remove-cell"]
fig = plotting.synthetic.tradeoff_curves(curves, points)
plotting.style.glue_figure("ch1-tradeoff-gaussian", fig, curves)
mu_table, numbers = study.gdp_mu_table(gdp)
single, more = study.gdp_single_point_table(gdp, P["gdp_figure_mu"])
glue_numbers(numbers | more | study.gdp_curve_wording(curves, mu_table) | study.gdp_one_threshold(P, seed))
glue("ch1_gdp_single", study.gdp_single_point_view(single, P["gdp_figure_mu"], P["gdp_reps"]), display=False)

# %% [markdown]
# ```{glue:figure} ch1-tradeoff-gaussian
# :name: fig-ch1-tradeoff
#
# **Certified trade-off curves of a Gaussian pair.** False-negative rate against false-positive
# rate. Left: the certified upper envelope at each test size (dots: the certified points); right:
# the Gaussian-DP curve of the certified $\mu$. Black: the exact curve, which lies below every
# certified curve (95% each).
# ```
#
# {glue:md}`ch1-tradeoff-gaussian-files:myst`

# %% tags=["remove-input"]
study.gdp_mu_view(mu_table, P["gdp_reps"])

# %% [markdown]
# {glue:text}`gdp_curve_phrase` Of the {glue:text}`gdp_certs` certificates behind the table,
# {glue:text}`gdp_mu_above` certify a $\mu$ above the truth and {glue:text}`gdp_eps_above` an
# $\varepsilon$ above the exact $\varepsilon(10^{-5})$, {glue:text}`gdp_validity_phrase` (at most
# {glue:text}`gdp_tolerance` of them by the binomial tolerance).
#
# **What the curve costs at one point.** At $n = $ {glue:text}`gdp_sp_n` the single-threshold
# reserved test certifies $\varepsilon \ge$ {glue:text}`gdp_sp_single:.2f` at $\delta = 10^{-5}$
# (median; the exact value is {glue:text}`gdp_sp_exact:.2f`). At that same threshold the band's
# bound is {glue:text}`gdp_sp_cost:.2f` nats lower, the price of splitting the 5% over four
# thresholds, and {glue:text}`gdp_sp_phrase`: its best point certifies {glue:text}`gdp_sp_best:.2f`.
# For that price the band certifies the whole curve: $\mu \ge$ {glue:text}`gdp_sp_mu_lower:.2f`
# (true {glue:text}`gdp_sp_mu:g`) and an $\varepsilon$ at every $\delta$, where the reserved test says
# nothing beyond its one point.
#
# ````{dropdown} All numbers: the band's best point against the reserved test
# ```{glue} ch1_gdp_single
# ```
# ````

# %% [markdown]
# ## Exercises
#
# :::{exercise}
# :label: ex-ch1-sizes
# **Change a parameter.** Run the chapter with other test sizes and one noise, e.g. from the
# repository root `papermill notebooks/01_synthetic_benchmark.ipynb out.ipynb -p profile smoke
# -p sizes 30,300 -p mechanisms gaussian`. In {numref}`fig-ch1-certified`, what happens to the
# fraction of pairs certified and to the cap when $n$ grows tenfold?
# :::
#
# :::{solution} ex-ch1-sizes
# :class: dropdown
# The caps of this run, computed by
#
# ```python
# study.figure3_caps(P["sizes"], P["pairs"])
# ```
#
# are {glue:text}`f3_caps_phrase`: a tenfold larger test raises the cap by about $\log 10 = 2.3$
# nats, and the fraction certified rises with it. {glue:text}`f3_n_phrase`
# :::
#
# :::{exercise}
# :label: ex-ch1-bound
# **Change a line.** In the cell that certifies one pair by hand, add `bound="clopper-pearson"` to
# the call and run it again. How does the paper's certificate compare with the joint one, and what
# is its cap?
# :::
#
# :::{solution} ex-ch1-bound
# :class: dropdown
# ```python
# cert = reserved_test_certificate(
#     dev[a], dev[b], test[a], test[b],
#     score_function=mechanism.exact_score(a, b),
#     n_certificates=P["pairs"], delta=mechanism.delta, bound="clopper-pearson")
# ```
#
# The paper's bound certifies {glue:text}`hand_cp:.2f` where the joint certificate gives
# {glue:text}`hand_joint:.2f` (exact {glue:text}`hand_exact:.2f`); its cap in this family is
# {glue:text}`hand_cap_cp:.2f` against {glue:text}`hand_cap:.2f`. Both are valid 95% family-wise
# bounds; the joint test spends the whole error level on both error rates at once.
# :::
#
# :::{exercise}
# :label: ex-ch1-plan
# **Plan a test.** In {numref}`fig-ch1-certified` the {glue:text}`plan_mechanism` setting of
# requested $\varepsilon = $ {glue:text}`plan_eps:g` has an exact median $\varepsilon$ of
# {glue:text}`plan_ref:.2f` nats, but its largest median certificate is
# {glue:text}`plan_certified:.2f`. With {glue:text}`plan_pairs` certificates reported together, how
# many test rows per identity would even a perfect test (zero errors) need to certify
# {glue:text}`plan_ref:.2f`? And one certificate alone?
# :::
#
# :::{solution} ex-ch1-plan
# :class: dropdown
# ```python
# from epsaudit.bounds import bonferroni_alpha, required_test_size
# required_test_size(ref, bonferroni_alpha(40), delta=1e-5)  # joint
# required_test_size(ref, bonferroni_alpha(40), delta=1e-5, bound="clopper-pearson")
# ```
#
# {glue:text}`plan_n:,` test rows per identity for a family of {glue:text}`plan_pairs` with the joint
# certificate ({glue:text}`plan_n_cp:,` with the paper's bound), and {glue:text}`plan_n_single:,`
# for one certificate alone, against {glue:text}`plan_n_run` in the largest test here. With zero
# errors the cap grows only like $\log n$, so certifying $\varepsilon$ takes a test of size about
# $e^{\varepsilon}$. `epsaudit plan --epsilon <value> --family 40` answers the same question from
# the command line.
# :::
#
# :::{exercise}
# :label: ex-ch1-one-threshold
# **Change a line.** The trade-off band spreads its 5% over four thresholds. Run the certificate of
# the $\mu = $ {glue:text}`gdp_ex_mu:g` pair at $n = $ {glue:text}`gdp_ex_n` with one threshold,
# `study.gdp_certificate(2.0, 1000, n_thresholds=1)`. What does it certify at $\delta = 10^{-5}$,
# and how does that compare with the reserved-test certificate on the same outputs?
# :::
#
# :::{solution} ex-ch1-one-threshold
# :class: dropdown
# ```python
# one = study.gdp_certificate(2.0, 1000, n_thresholds=1)
# four = study.gdp_certificate(2.0, 1000)
# ```
#
# With one threshold the band certifies $\varepsilon \ge$ {glue:text}`gdp_ex_one:.2f`,
# {glue:text}`gdp_ex_same` as the single-threshold reserved-test certificate on the same outputs
# ({glue:text}`gdp_ex_single:.2f`). With four thresholds its best point certifies
# {glue:text}`gdp_ex_four:.2f`, and $\mu \ge$ {glue:text}`gdp_ex_mu_four:.2f` against
# {glue:text}`gdp_ex_mu_one:.2f` from the one point: the extra thresholds buy the rest of the curve.
# :::
