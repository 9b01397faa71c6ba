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
# # The cascade I: the affine operator and its predictions
#
# :::{admonition} What you will learn
# :class: tip
# - how a face swapper is modelled in the adversary's embedding space as an affine stochastic
#   operator $s = A d + B t + c + e$, fitted by ridge regression on single swaps;
# - how to tell which of the fitted numbers the data determine and which the ridge penalty decides;
# - what the fit predicts for a cascade of repeated swaps (the excess ratios, the
#   {term}`spectral radius` $\rho(B)$, the
#   stationary floor), written down before the measured cascade is read.
#
# The second lecture, {doc}`04b_cascade_measured`, measures the cascade, judges each prediction and
# audits every pass.
# :::
#
# :::{note}
# This page was executed with the **{glue:text}`ch4_profile`** profile:
# {glue:md}`ch4_profile_summary:myst`; encoders {glue:text}`ch4_encoders`.
# :::
#
# *Toward Interpretable Privacy Guarantees in Face-Swapping Anonymization* models a face swapper in
# the adversary's embedding space as an *affine stochastic operator*, $s = A d + B t + c + e$ (donor
# $d$, target $t$, swap $s$), and derives from the fitted matrices how target identity should fade
# when an image is swapped again and again with a fresh donor each time (its Sections VI-VIII). This
# lecture fits the operator to real LFW photographs {cite}`huang2007lfw` swapped by the project's
# classical landmark swapper, in two variants, embedded by dlib's ResNet {cite}`king2009dlib` and
# SFace {cite}`zhong2021sface`.
#
# The order matters and is kept here, as in that paper: the operator is fitted on **single swaps**
# of other people, and its predictions for the cascade are computed and printed before the measured
# cascade is read (next lecture).

# %% tags=["parameters"]
profile: str = "full"  # run profile: "smoke", "full" (the book), "paper"
data: str = "data/corpora"  # corpora folder, relative to the repository
encoders: list = ["dlib", "sface"]  # face encoders to include
seed: int = 0  # base seed of every draw
n_jobs: int = 2  # parallel workers (the numbers do not depend on it)

# %% tags=["remove-cell"]
from epsaudit.studies import cascade as study

study.check_parameters(globals(), "chapter 4 (the affine operator and its predictions)")

# %%
import numpy as np

from epsaudit import plotting
from epsaudit.operator import fit_affine_operator, spectral_summary

# %% tags=["remove-cell"]
from IPython.display import Markdown, display
from myst_nb import glue
from functools import partial

from threadpoolctl import threadpool_limits

P = study.choose_profile(profile)
plotting.set_style()
threadpool_limits(1)  # 2 BLAS threads per small solve thrash 2 cores


glue_values = study.glue_values
glue_each = partial(study.glue_each, encoders=encoders)  # one value per encoder of the run


glue_values({"ch4_profile": profile, "ch4_encoders": ", ".join(encoders),
             "ch4_profile_summary": study.profile_summary(profile, P)})

# %% [markdown]
# **Two swapper variants.** Both warp the donor's face onto the target's 68 dlib landmarks triangle
# by triangle and blend it in with Poisson seamless cloning; they differ only in the blended region.
# `hull` pastes the convex hull of all 68 landmarks (jaw line included); `inner` pastes only the hull
# of brows, eyes, nose and mouth (landmarks 17-67), so the target keeps its jaw, cheeks and face
# outline. One expects `inner` to pass more target identity through each pass: a larger $\rho(B)$
# and a slower cascade tail.
#
# ## The corpora
#
# The corpora are built by `make corpora` and committed under `data/corpora/`; the images are not.
# *Cascade:* targets are the LFW identities with at least 20 photographs; each chain starts from one
# photograph (up to 30 per identity) and is swapped five times, each {term}`pass` with a fresh donor
# photograph of an identity with at most 9 photographs. Each chain is scored against a gallery of up
# to 30 *other* photographs of its target and against a non-member identity with 10-19 photographs.
#
# *Operator:* single swaps (donor photograph, target photograph, swap) among identities with at most
# 9 photographs, split by identity into disjoint train and test partitions. Loading checks every
# file against the manifest's SHA-256:

# %%
corpora = study.load_chapter_corpora(data, P, encoders=encoders)
VARIANTS = study.variants_of(corpora)
VARIANTS

# %% tags=["remove-cell"]
manifest = next(iter(corpora.values())).manifest
design, values = study.corpora_overview(manifest, VARIANTS)
glue_values(values)

# %% tags=["remove-input"]
display(design)

# %% [markdown]
# The table counts the whole committed corpus (a smoke run analyses a slice of it).
# {glue:text}`n_chains` chains over {glue:text}`n_targets` target identities used
# {glue:text}`n_donors` distinct donor photographs. The swapper lost the face of
# {glue:text}`lost_hull` `hull` chains and {glue:text}`lost_inner` `inner` chains before their fifth
# pass; they are excluded from that variant's analysis ({glue:text}`complete_hull` and
# {glue:text}`complete_inner` complete chains remain). The operator corpus has {glue:text}`n_train`
# train and {glue:text}`n_test` test triplets per variant.
#
# {glue:md}`chains_sentence:myst`

# %% tags=["remove-cell"]
examples = study.example_chains(next(iter(corpora.values())), VARIANTS)
glue_values({"chains_sentence": study.chains_text(examples is not None)})
if examples:
    fig = plotting.cascade.example_chains(examples)
    chain_links = plotting.save_figure(fig, "ch4-figure15-example-chains",
                                       study.example_chain_data(examples))

# %% tags=["remove-input"] mystnb={"figure": {"name": "fig-ch4-chains", "caption": "Two chains re-created from their design rows (the paper's Figure 15 analog): the original photograph, passes 1-5 and the fifth donor, for both variants; every image is 250 \u00d7 250 px."}}
if examples:
    display(fig)

# %% tags=["remove-input"]
if examples:
    display(Markdown(chain_links))

# %% [markdown]
# ## The operator, fitted on single swaps
#
# For each variant and encoder, $s = A d + B t + c$ is fitted by ridge regression on the raw
# (unnormalised) embeddings of the train triplets, the penalty chosen by 5-fold cross-validation
# over identity-disjoint folds. Every train identity is a donor in some triplets and a target in
# others, so the folds are disjoint in *both* roles: fold $k$ validates on the triplets whose donor
# and target both belong to it and trains on those with neither in it. This is the fold-level form
# of the rule *Toward Interpretable Privacy Guarantees* uses for its train/test split (Section
# VI-A). The penalty grid starts at $10^{-3}$-$10^{4}$ and is widened by two decades on any side
# where the best penalty, or one within a standard error of it, sits at the edge.
#
# One fit by hand, with the library's operator module:

# %%
first = corpora[encoders[0]]
d, t, s, groups = study.operator_arrays(first, "hull", "train")
op = fit_affine_operator(d, t, s, groups, seed=seed)  # penalty by CV
_, t_test, _, _ = study.operator_arrays(first, "hull", "test")
summary = spectral_summary(op, t_test)
print(f"{encoders[0]}, hull: {len(d):,} train swaps, "
      f"penalty {op.alpha:.1e}")
print(f"rho(B) = {summary['rho_B']:.3f}, b_u = {summary['b_u']:.3f}")

# %% [markdown]
# The study does the same for every variant and encoder, and adds what the next sections read:
# baselines on the test partition, the fit repeated on nested subsets of the train triplets, the
# residual checks and how each number moves with the penalty.

# %%
studies = study.fit_operator_studies(corpora, VARIANTS, sizes=P["sizes"],
                                     seed=seed)

# %% [markdown]
# Quality is measured on the test partition, whose identities the fit never saw, against two
# baselines: copying the donor's embedding, and a $k$-nearest-neighbour regression on $(d, t)$
# ($k = 10$). The paper's rows (its Table II and Section VI) are FaceFusion, BlendFace and CanonSwap
# in 512-D ArcFace, fitted on 17,000-57,000 train swaps.

# %% tags=["remove-cell"]
quality, spectra, values = study.operator_fit_tables(studies)
glue_values(values)
glue_each(values, "mean_cosine_hull_{e}", "mean_cosine_copy_hull_{e}", "mean_cosine_knn_hull_{e}")

# %% tags=["remove-input"]
display(quality, spectra)

# %% [markdown]
# The affine fit {glue:md}`beats_phrase:myst` on held-out identities: for `hull` its mean cosine is
# {glue:text}`mean_cosine_hull_each`, against {glue:text}`mean_cosine_copy_hull_each` (copy the
# donor) and {glue:text}`mean_cosine_knn_hull_each` ($k$NN) (*Toward Interpretable Privacy
# Guarantees*, FaceFusion: 0.769, 0.654, 0.442). {glue:md}`copy_baseline_sentence:myst` The
# affine model explains {glue:text}`r2_span` of the held-out variance (paper 0.338-0.585 over three
# tools): a first-order account, as in the paper.
#
# **Has the spectrum settled?** *Toward Interpretable Privacy Guarantees* (its Figure 14) needed
# $10^3$-$10^4$ swaps per tool for stable spectra. The fit is repeated on nested, seeded subsets of
# the train triplets ({numref}`fig-ch4-size`); with enough swaps $\rho(B)$, $b_u$ and the held-out
# $R^2$ level off.

# %% tags=["remove-cell"]
curve_table, values, curve = study.size_curve_table(studies)
glue_values(values)
glue_each(values, "alpha_curve_hull_{e}", "smax_curve_hull_{e}")
fig = plotting.cascade.spectra_against_size(curve)
glue("fig_ch4_size", fig, display=False)
size_links = plotting.save_figure(fig, "ch4-figure14-spectra-vs-size", curve)
glue("tbl_ch4_size", curve_table, display=False)

# %% [markdown]
# ```{glue:figure} fig_ch4_size
# :name: fig-ch4-size
#
# The fitted spectra against the number of train triplets (the paper's Figure 14 analog):
# $\rho(B)$ and $b_u$ (unitless) against train triplets (log scale), one line per variant and
# encoder.
# ```

# %% tags=["remove-input"]
Markdown(size_links)

# %% [markdown]
# {glue:md}`creep_sentence:myst`, so the verdicts of the next lecture that compare measured ratios
# with $\rho(B)$ carry about that much slack. Each size has its own penalty search: for `hull` the
# chosen penalties are {glue:text}`alpha_curve_hull_each` from the smallest to the largest size,
# and $\sigma_{\max}(B)$ is {glue:text}`smax_curve_hull_each`. Which of these numbers the data pin
# down is the subject of the next section.
#
# :::{dropdown} All numbers: the fit at every train size
# ```{glue:} tbl_ch4_size
# ```
# :::
#
# ### Which numbers the data determine
#
# A penalty chosen at the edge of its grid is not a choice the data made: a wider grid could move
# it, and with it every number that depends on it. So every penalty search records where its best
# value sits: the final grid, the chosen penalty, whether it is *interior* or at the *lower*/*upper*
# edge, how often the grid was widened and why the search stopped (*interior*; *flat*: the scores
# no longer change at the edge; *limit*: five widenings used up).
#
# The *one-SE range* is the span of penalties whose cross-validated $R^2$ is within one standard
# error (over the folds) of the best: penalties the cross-validation cannot tell apart. Three fold
# designs are compared on the same triplets: folds grouped by target identity on the original grid
# $10^{-3}$-$10^{4}$, the same folds on the widened grid, and the current design (folds disjoint in
# both roles, widened grid).

# %%
design_tables = study.cv_design_tables(corpora, VARIANTS, seed=seed)

# %% tags=["remove-cell"]
search = study.search_table(studies)
search_shown = study.search_styler(search)
designs, held_out, design_shown = study.design_table(design_tables)
det, det_shown, notes = study.determination_table(studies)
values = study.penalty_values(studies, search, det, design_tables, VARIANTS)
glue_values(values)
glue_each(values, "alpha_hull_{e}", "alpha_inner_{e}", "weak_{e}", "edge_hull_{e}")
glue_values({"range_hull_each_sentence": " ".join(values[f"range_hull_{e}_sentence"] for e in encoders)})
for k, shown in enumerate([*search_shown, *design_shown]):
    glue(f"tbl_ch4_search_{k}", shown, display=False)
glue("ch4_held_out", Markdown(held_out), display=False)
sensitivity = study.sensitivity_data(studies)
fig = plotting.cascade.penalty_sensitivity(sensitivity)
glue("fig_ch4_penalty", fig, display=False)
penalty_links = plotting.save_figure(fig, "ch4-penalty-sensitivity", sensitivity)

# %% [markdown]
# Over the one-SE range each fitted number moves; a number is *determined by the data* if it moves
# by at most 10% (relative). The paper's FaceFusion values stand beside ours; the paper reports
# neither its penalty nor how its numbers move with it.

# %% tags=["remove-input"]
display(det_shown, *([Markdown(notes)] if notes else []))

# %% [markdown]
# ```{glue:figure} fig_ch4_penalty
# :name: fig-ch4-penalty
#
# How the fitted numbers move with the ridge penalty: $\rho(B)$, $\sigma_{\max}(B)$ and the
# held-out $R^2$ (unitless) against the penalty (log scale); the shaded band is the one-SE range.
# ```

# %% tags=["remove-input"]
Markdown(penalty_links)

# %% [markdown]
# **Edge status.** Of the {glue:text}`n_searches` penalty searches {glue:text}`n_interior` end with
# the chosen penalty inside the final grid ({glue:md}`edge_phrase:myst`). Before this check the
# operator was fitted with folds grouped by target identity only on the grid $10^{-3}$-$10^{4}$: for
# {glue:text}`old_first_encoder` `hull` that {glue:md}`old_first_phrase:myst`, and on average
# identities of a validation fold also sat in its training part (the fold designs' first table,
# under "All numbers"). With folds disjoint in both roles nothing is shared, at a price: only a
# share of the train triplets is ever validated, since both identities must fall in the same fold.
#
# The search now settles on {glue:text}`alpha_hull_each` for `hull` and
# {glue:text}`alpha_inner_each` for `inner` (position in the grid for `hull`:
# {glue:text}`edge_hull_each`). Input directions that carry less than $10^{-6}$ of the largest input
# variance (donor and target side by side, 256 in all): {glue:text}`weak_each`.
#
# What $B$ does along such directions is decided by the penalty, not by the swaps; predictions hardly notice,
# because the embeddings hardly vary there, but at a small penalty the largest singular value of $B$
# comes from them ({numref}`fig-ch4-penalty`). {glue:md}`range_hull_each_sentence:myst`
#
# **So, beside the paper's FaceFusion values** (Table II: $b_u$ 0.183, $\rho(B)$ 0.894,
# $\sigma_{\max}(B)$ 10.1, $R^2$ 0.585): the numbers the data determine here in every fit are
# {glue:md}`determined_phrase:myst`; not determined are {glue:md}`undetermined_phrase:myst`. Hence:
# {glue:md}`smax_reading:myst`. {glue:md}`straddle_sentence:myst` The levels of $b_u$, $\rho(B)$ and
# $R^2$ {glue:md}`levels_sentence:myst`.
#
# :::{dropdown} All numbers: the penalty searches and the three fold designs
# ```{glue:} tbl_ch4_search_0
# ```
#
# {glue:md}`ch4_held_out:myst`
#
# ```{glue:} tbl_ch4_search_1
# ```
#
# ```{glue:} tbl_ch4_search_2
# ```
# :::
#
# **The eigenvalues of $B$** ({numref}`fig-ch4-eigenvalues`, the paper's Figure 4). Every eigenvalue
# inside the unit circle means the cascade forgets the target eventually; the one of largest
# modulus sets the asymptotic rate.

# %% tags=["remove-cell"]
eigs = study.eigenvalue_data(studies, VARIANTS)
fig = plotting.cascade.eigenvalues(eigs)
glue("fig_ch4_eigenvalues", fig, display=False)
eig_links = plotting.save_figure(fig, "ch4-figure4-eigenvalues", eigs)

# %% [markdown]
# ```{glue:figure} fig_ch4_eigenvalues
# :name: fig-ch4-eigenvalues
#
# The eigenvalues of every fitted $B$ in the complex plane (real and imaginary part, unitless), one
# panel per encoder, with the unit circle; $\rho(B)$ is the largest modulus.
# ```

# %% tags=["remove-input"]
Markdown(eig_links)

# %% [markdown]
# **Residual checks** (*Toward Interpretable Privacy Guarantees*, Section VI and Appendix D): is the
# residual $e = s - \hat s$ isotropic (top eigenvalue of its covariance over the mean eigenvalue; 1
# for isotropic noise) and Gaussian (coordinates rejected by Shapiro-Wilk at $p < 10^{-3}$), and
# does it still carry the target (mean and largest absolute correlation between residual and target
# coordinates; the paper's mean is at most 0.023)?

# %% tags=["remove-cell"]
resid_shown, values = study.residual_table(studies)
glue_values(values)
for k, shown in enumerate(resid_shown[1:]):
    glue(f"tbl_ch4_resid_{k}", shown, display=False)

# %% tags=["remove-input"]
display(resid_shown[0])

# %% [markdown]
# {glue:md}`resid_iso_sentence:myst` (the top eigenvalue of the residual covariance is at least
# {glue:text}`resid_iso_min` times the mean one), and {glue:md}`resid_corr_phrase:myst` (mean
# absolute correlation at most {glue:text}`resid_corr_max`; paper: at most 0.023).
# {glue:md}`resid_gauss_sentence:myst` (at most {glue:text}`resid_nongauss_max` of
# {glue:text}`resid_tested` rejected at $p < 10^{-3}$), and the residual is
# {glue:md}`resid_size_phrase:myst` the distance between two photographs of one person (median ratio
# {glue:text}`resid_same_span`), which is the paper's reading of its 0.414 residual fraction too.
#
# :::{dropdown} All numbers: the other residual checks
# ```{glue:} tbl_ch4_resid_0
# ```
# :::
#
# ## Predictions, before looking at the cascade
#
# From each fit alone (*Toward Interpretable Privacy Guarantees*, Section VII and its Figure 5):
# roll the cascade $s_k = A d_k + B s_{k-1} + c + e_k$ forward from the chains' original photographs
# ($s_0$, pass 0), with the donor at its mean and no noise (*noiseless*), or with donors drawn from
# the operator's train donors and Gaussian noise of the residual covariance (*Monte Carlo*, median
# over replicates), and score every rolled-out embedding against the same galleries as the measured
# cascade.
#
# The *carrier* $\cos(B^k t_0, t_0)$ is the pure target channel; the *Lyapunov floor* scores draws
# from the stationary law (mean $(I - B)^{-1}(A\,E[d] + c)$, covariance from
# $S = B S B^\top + A S_d A^\top + S_e$) against the non-member galleries. Cosines are centred on
# the mean unit embedding of the operator corpus's train photographs, as in chapter 3; "excess" is
# leakage minus the floor, "excess ratio" its ratio between consecutive passes.

# %%
predicted = study.predict_cascades(studies, corpora, passes=study.PASSES,
                                   mc_reps=P["mc_reps"], seed=seed)

# %% tags=["remove-cell"]
for k, shown in enumerate(study.prediction_table(predicted)):
    glue(f"tbl_ch4_pred_{k}", shown, display=False)
expect, values = study.expectation_table(studies, predicted, VARIANTS)
glue_values(values)

# %% [markdown]
# The predictions in words, per variant and encoder: the first excess ratio should be near $b_u$,
# later ratios should climb towards $\rho(B)$, the non-member score should sit at the Lyapunov
# floor, and the variant with the larger $\rho(B)$ should keep more of its excess in the tail.

# %% tags=["remove-input"]
display(expect)

# %% [markdown]
# :::{dropdown} All numbers: the predicted cascade, pass by pass
# ```{glue:} tbl_ch4_pred_0
# ```
#
# ```{glue:} tbl_ch4_pred_1
# ```
# :::
#
# The next lecture, {doc}`04b_cascade_measured`, reads the measured cascade and gives each of these
# predictions a verdict.
#
# ## Exercises
#
# :::{exercise}
# :label: ex-ch4-penalty
# The fit by hand chose its penalty by cross-validation. Refit it with a fixed penalty ten times
# smaller and ten times larger (`alphas=[...]`, `widen=0`). How much do $\rho(B)$ and $b_u$ move?
# Compare with the one-SE ranges of the determination table.
# :::
#
# ```{solution-start} ex-ch4-penalty
# :class: dropdown
# ```

# %%
for factor in (0.1, 1.0, 10.0):
    fixed = fit_affine_operator(d, t, s, groups, alphas=[op.alpha * factor],
                                widen=0, seed=seed)
    row = spectral_summary(fixed, t_test)
    print(f"penalty x {factor:>4}: rho(B) = {row['rho_B']:.3f}, "
          f"b_u = {row['b_u']:.3f}")

# %% [markdown]
# Where the determination table calls a number determined, a tenfold change of penalty moves it
# little; $\sigma_{\max}(B)$, not printed here, is the number the penalty decides.
#
# ```{solution-end}
# ```
#
# :::{exercise}
# :label: ex-ch4-size
# *Toward Interpretable Privacy Guarantees* needed $10^3$-$10^4$ swaps per tool for stable spectra.
# Fit the operator on the first quarter of the train triplets only (change one line of the fit by
# hand) and compare $\rho(B)$ with the full fit's.
# :::
#
# ```{solution-start} ex-ch4-size
# :class: dropdown
# ```

# %%
n_small = len(d) // 4
small = fit_affine_operator(d[:n_small], t[:n_small], s[:n_small],
                            groups[:n_small], seed=seed)
rho_small = spectral_summary(small, t_test)["rho_B"]
print(f"{n_small:,} triplets: rho(B) = {rho_small:.3f}; "
      f"all {len(d):,}: {summary['rho_B']:.3f}")

# %% [markdown]
# With few swaps the spectrum is not yet stable, as in the paper's Figure 14 and in
# {numref}`fig-ch4-size`.
#
# ```{solution-end}
# ```
#
# :::{exercise}
# :label: ex-ch4-stationary
# A cascade forgets its target when every eigenvalue of $B$ lies inside the unit circle. Given
# $\rho(B)$ of the fit by hand, after how many passes is the carrier $\|B^k\|$ below 1% of its start,
# if it decays like $\rho(B)^k$?
# :::
#
# ```{solution-start} ex-ch4-stationary
# :class: dropdown
# ```

# %%
rho = summary["rho_B"]
int(np.ceil(np.log(0.01) / np.log(rho))) if 0 < rho < 1 else None

# %% [markdown]
# At a constant rate $\rho$ the carrier falls by a factor of 100 after $\ln 100 / (-\ln \rho)$
# passes; the measured cascade (next lecture) shows whether the swaps follow this rate.
#
# ```{solution-end}
# ```
