# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
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
# # DP-Sniper on mechanisms with known epsilon
#
# DP-Sniper {cite}`bichsel2021dpsniper` is the other certificate paper 001 compares its audits with
# (Appendix, Table 5). For one fixed input pair $(a, a')$ and one direction it trains a
# classifier on outputs of $M(a)$ and $M(a')$, turns it into a randomised threshold attack $S$ that
# fires with probability $c = 0.01$ under $a'$ (ties at the threshold fire with probability $q$),
# and reports $\log\bigl(\underline{P}[S(M(a))] / \overline{P}[S(M(a'))]\bigr)$ from one-sided
# Clopper–Pearson bounds {cite}`clopper1934binomial` on fresh samples, joined by a union bound.
# Whatever the classifier, this is a lower confidence bound on the pure-DP $\varepsilon$ of the
# pair: the chapter checks it against the exact value.
#
# **Our implementation** (`epsaudit.sniper.dp_sniper`) tests *both* directions of a pair in one
# run: one classifier trained on both inputs' outputs, a threshold sample of each input, and
# shared final samples; the four one-sided bounds form one Bonferroni family at 95%, so each
# direction's bound and their maximum hold together. Tied scores fire with a *drawn* probability
# $q$, so the counts are exactly binomial; the reference input's upper bound is floored at $c$
# (a valid upper bound stays valid when raised), so no bound exceeds $\log(1/c) =$
# {glue:text}`log_inv_c:.2f`; a linear classifier is scored by its log-odds rather than
# probabilities rounded to three decimals; every draw is seeded. The budget counts mechanism
# calls for the pair: 10% for training (at most $10^5$ per input, the surplus goes to the final
# stage), 5% for the thresholds and 85% for the final estimate, split evenly between the inputs. The raw log ratio may be negative; the
# certificate is $\max(0, \text{raw})$, and tables of bounds show the raw value, as the paper does.
#
# **Mechanisms.** Product Laplace noise on the benchmark's dispersed identity prototypes
# ($d = 512$, 20 identities, the worst pair calibrated to the requested $\varepsilon$; exact
# pairwise $\varepsilon = \lVert\mu_a - \mu_{a'}\rVert_1 / b$), and $K$-ary randomized response
# with $K = 16$: identity $i$ reports category $i$ with probability $e^\varepsilon/(e^\varepsilon + 15)$
# and each other category with probability $1/(e^\varepsilon + 15)$, so every pair has exactly
# $\varepsilon$. The classifier sees a randomized-response output as a one-hot vector in
# $\mathbb{R}^{16}$. The three fixed pairs are the first three of the benchmark's shuffled pair list;
# each is run three times with independent seeds. The classifier is the paper's logistic regression
# ($C = 1$, lbfgs, no standardisation), passed explicitly (`paper_logistic_regression()`): the
# library's default standardises every feature first, which changes the effective penalty, and
# this chapter reproduces Table 5 with the paper's learner. As an upper reference we also run
# DP-Sniper with the mechanism's exact likelihood ratio as the score, the best attack any
# classifier could find. Outputs of the product Laplace mechanism are float-safe: rounded to a
# grid of $2^{-20}$ noise scales (chapter 1, "Floating point"), drawn by DP-Sniper's fast sampler
# from float64 uniforms.

# %% tags=["parameters"]
profile = "default"  # "smoke" (CI, ~10 s), "default" (the book, ~5 min on 2 shared cores), "paper" (6.5e6 calls per row, ~1 h)
seed = 0  # base seed: prototypes, pair order and every draw derive from it
n_jobs = 2  # rows run in parallel (joblib); results do not depend on it

# %%
import math
import time

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from IPython.display import display
from myst_nb import glue
from scipy import stats

from epsaudit import paper_values, plotting
from epsaudit import sniper as sn
from epsaudit.bounds import bonferroni_alpha, certifiable_cap
from epsaudit.scorers import paper_logistic_regression

PROFILES = {
    # calls: budget per Table 5 row; pairs x reps rows per cell; exact_reps: repetitions of the
    # exact-score reference; budgets: the budget figure's x values; sizes: matched-budget n
    "smoke": dict(calls=20_000, pairs=1, reps=1, exact_reps=1, budgets=(100, 1_000, 20_000), sizes=(30, 100, 300),
                  duel_pairs=1, duel_reps=1),
    "default": dict(calls=1_000_000, pairs=3, reps=3, exact_reps=1, budgets=tuple(np.geomspace(1e2, 1e6, 9).round().astype(int)),
                    sizes=(30, 100, 300), duel_pairs=3, duel_reps=3),
    "paper": dict(calls=sn.TABLE5_CALLS, pairs=3, reps=3, exact_reps=3,
                  budgets=tuple(np.geomspace(1e2, 1e6, 9).round().astype(int)) + (sn.TABLE5_CALLS,),
                  sizes=(30, 100, 300), duel_pairs=3, duel_reps=3),
}
ALIASES = {"full": "default"}  # `make book` passes PROFILE=full
profile = ALIASES.get(profile, profile)
if profile not in PROFILES:
    raise ValueError(f"profile must be one of {sorted(PROFILES) + sorted(ALIASES)}, got {profile!r}")
P = PROFILES[profile]
EPSILONS = (0.0,) + sn.TABLE5_EPSILONS  # the exact null, then the paper's columns
KINDS = sn.COMPARISON_MECHANISMS
LABELS = {"laplace": "product Laplace", "randomized_response": "K-ary RR"}
C = sn.DEFAULT_C
ALPHA = bonferroni_alpha(2)  # each one-sided bound: two directions x two bounds at 95%
LEARNER = paper_logistic_regression()  # the paper's learner (Table 5): LogisticRegression(C=1), raw features
plotting.set_style()
started = time.perf_counter()
print(f"profile={profile}: {P}")
glue("calls_k", P["calls"] / 1e3, display=False)
glue("paper_calls_m", sn.TABLE5_CALLS / 1e6, display=False)
glue("log_inv_c", math.log(1 / C), display=False)


def timed_rows(tasks, desc):
    """Run DP-Sniper rows; return their table and the wall time."""
    t0 = time.perf_counter()
    results = sn.run_tasks(tasks, n_jobs=n_jobs, desc=desc)
    return sn.sniper_frame(tasks, results), time.perf_counter() - t0


# %% [markdown]
# ## Table 5: DP-Sniper bounds against the exact epsilon
#
# Every mechanism and requested $\varepsilon$ (plus the exact null, $\varepsilon = 0$), three fixed
# pairs, three repetitions, {glue:text}`calls_k:,.0f` thousand calls per row in this profile (the
# paper: {glue:text}`paper_calls_m:.1f` million; profile `paper` runs that). Entries are medians over
# pairs, repetitions and both directions of the raw bound, and of its ratio to the pair's exact
# value; the paper's entries (one direction each) sit beside them.

# %%
learned_tasks = sn.comparison_tasks(KINDS, EPSILONS, P["calls"], n_pairs=P["pairs"], reps=P["reps"], seed=seed,
                                    classifier=LEARNER)
exact_tasks = sn.comparison_tasks(KINDS, sn.TABLE5_EPSILONS, P["calls"], n_pairs=P["pairs"], reps=P["exact_reps"],
                                  score="exact", seed=seed)
learned, t_learned = timed_rows(learned_tasks, "Table 5 (learned)")
exact_rows, t_exact = timed_rows(exact_tasks, "Table 5 (exact score)")
t5 = pd.concat([learned, exact_rows], ignore_index=True)
t5["ratio"] = t5["raw"] / t5["exact_epsilon"].where(t5["exact_epsilon"] > 0)


def table5_summary(rows):
    g = rows.groupby(["score", "mechanism", "requested_epsilon"])
    return pd.DataFrame({"bound": g["raw"].median(), "ratio": g["ratio"].median(),
                         "exact": g["exact_epsilon"].median(), "rows": g.size()})


summary5 = table5_summary(t5)
side = []
for kind in KINDS:
    ours = summary5.loc[("learned", kind)]
    theirs = paper_values.TABLE5.xs(LABELS[kind], level="mechanism")
    ref = summary5.loc[("exact", kind)]
    side.append(pd.DataFrame({
        (LABELS[kind], "exact epsilon (median)"): ours["exact"],
        (LABELS[kind], "bound, ours"): ours["bound"],
        (LABELS[kind], "bound, paper"): theirs.loc["bound"],
        (LABELS[kind], "ratio, ours"): ours["ratio"],
        (LABELS[kind], "ratio, paper"): theirs.loc["ratio"],
        (LABELS[kind], "bound, exact-LR score"): ref["bound"],
    }).T)
table5 = pd.concat(side)
table5.columns.name = "requested epsilon"
display(table5.round(3).astype(object).where(table5.notna(), "n/a"))

for kind in KINDS:
    short = "lap" if kind == "laplace" else "rr"
    for eps in sn.TABLE5_EPSILONS:
        key = f"{short}_{eps:g}".replace(".", "p")
        glue(f"t5_{key}", float(summary5.loc[("learned", kind, eps), "bound"]), display=False)
        glue(f"t5_{key}_ratio", float(summary5.loc[("learned", kind, eps), "ratio"]), display=False)
        glue(f"t5_{key}_exact", float(summary5.loc[("learned", kind, eps), "exact"]), display=False)
        glue(f"t5_{key}_lr", float(summary5.loc[("exact", kind, eps), "bound"]), display=False)
    glue(f"t5_{short}_null_max", float(learned[(learned.mechanism == kind) & (learned.requested_epsilon == 0)]["value"].max()),
         display=False)
rr_high = learned[(learned.mechanism == "randomized_response") & (learned.requested_epsilon >= 8)]
glue("t5_cap_rows", int(len(rr_high)), display=False)
glue("t5_cap_hits", int((rr_high["raw"] > math.log(1 / C) - 0.1).sum()), display=False)
glue("t5_n_train", int(learned[learned.mechanism == "laplace"]["n_train"].iloc[0]), display=False)

# %% [markdown]
# **Product Laplace** ($d = 512$). The learned attack certifies {glue:text}`t5_lap_8:.2f` at
# requested $\varepsilon = 8$ (paper 0.75) and {glue:text}`t5_lap_32:.2f` at 32 (paper 2.63): about
# {glue:text}`t5_lap_32_ratio:.0%` of the exact value (paper 8%). At 0.5 and 2 the medians are
# {glue:text}`t5_lap_0p5:.2f` and {glue:text}`t5_lap_2:.2f` (paper -0.03 and 0.12): the privacy loss
# is spread over 512 bounded coordinates, a linear score recovers only the mean shift, and at
# small $\varepsilon$ {glue:text}`t5_n_train:,` training outputs per input are not enough to estimate its direction in
# 512 dimensions. Our values differ from the paper's mainly through the budget (this profile uses
# {glue:text}`calls_k:,.0f` thousand calls per row against 6.5 million, so the Clopper–Pearson
# widths are larger; profile `paper` narrows them) and through training size; the exact pairwise
# values of our dispersed pairs ({glue:text}`t5_lap_8_exact:.2f` at requested 8) are slightly below
# the requested $\varepsilon$, which raises our ratios a little. Even the exact likelihood-ratio
# score reaches only {glue:text}`t5_lap_32_lr:.2f` at 32: an attack that fires with probability 1%
# under $a'$ cannot exploit an $\varepsilon$ that lives in far tails, so DP-Sniper's bound on this
# mechanism is a small fraction of the truth by construction, not by a weak classifier alone.
#
# **Randomized response** ($K = 16$). The bounds are {glue:text}`t5_rr_0p5:.2f`,
# {glue:text}`t5_rr_2:.2f`, {glue:text}`t5_rr_8:.2f` and {glue:text}`t5_rr_32:.2f` (paper 0.12, 0.93,
# 4.47, 4.60): at 0.5 and 2 ours come close to the exact value (ratios
# {glue:text}`t5_rr_0p5_ratio:.2f` and {glue:text}`t5_rr_2_ratio:.2f`; the rest is the
# Clopper–Pearson width), far above the paper's. With one-hot features a linear classifier gives
# each category its own weight, and at these $\varepsilon$ the attack that fires on category $a$
# (ties broken with $q$) has population log ratio exactly $\varepsilon$;
# the paper does not state its feature encoding, and an encoding that mixes categories (an
# integer code, or scores rounded so that categories tie) loses exactly this. At 8 and 32 both
# are held by the cap $\log(1/c) =$ {glue:text}`log_inv_c:.2f`: the attack fires with probability
# about $c$ under $a'$ and at most 1 under $a$, so no bound can exceed it whatever the true
# $\varepsilon$: {glue:text}`t5_cap_hits` of the {glue:text}`t5_cap_rows` bounds at 8 and 32 lie
# within 0.1 of it.
#
# **The null.** At $\varepsilon = 0$ the largest certificate is {glue:text}`t5_lap_null_max:.3f`
# (product Laplace) and {glue:text}`t5_rr_null_max:.3f` (randomized response).

# %% [markdown]
# ## How the budget caps the certifiable epsilon
#
# With $n$ final calls per input, the best possible outcome fires on every output of $a$ and on none
# of $a'$, so in closed form
#
# $$
# \varepsilon_{\mathrm{LB}} \le \log \frac{\alpha^{1/n}}{\max\bigl(1 - \alpha^{1/n},\ c\bigr)}
# \xrightarrow[n \to \infty]{} \log\frac{1}{c},
# $$
#
# with $\alpha = 0.05/4$ per bound (solid black line). An attack that fires with probability exactly
# $c$ under $a'$ and always under $a$ certifies, at the expected counts, the dashed line, which
# approaches $\log(1/c)$ more slowly. The figure runs one pair of each mechanism at requested
# $\varepsilon = 8$ and 32 over budgets from $10^2$ calls up to the profile's row budget (points: both
# directions).

# %%
figure_budgets = [b for b in P["budgets"] if b != P["calls"]]
figure_tasks = [t for b in figure_budgets
                for t in sn.comparison_tasks(KINDS, (8.0, 32.0), int(b), n_pairs=1, reps=1, seed=seed, classifier=LEARNER)]
figure_rows, t_figure = timed_rows(figure_tasks, "budget figure")
top = learned[(learned.pair_index == 0) & (learned.rep == 0) & learned.requested_epsilon.isin([8.0, 32.0])]
budget_rows = pd.concat([figure_rows, top], ignore_index=True)

grid = np.geomspace(min(P["budgets"]), max(max(P["budgets"]), P["calls"]), 200).round().astype(int)
n_final = np.array([sn.split_budget(int(b)).final for b in grid])
hard_cap = sn.attack_cap(n_final, ALPHA, C)
soft_cap = sn.design_cap(n_final, ALPHA, C)

fig, ax = plt.subplots(figsize=(7.5, 5.6), layout="constrained")
ax.plot(grid, hard_cap, color="black", lw=1.8, label="cap: all fire under $a$, none under $a'$ (closed form)")
ax.plot(grid, soft_cap, color="black", lw=1.2, ls="--", label="attack firing with prob. $c$ under $a'$, 1 under $a$")
ax.axhline(math.log(1 / C), color="grey", lw=1, ls=":", label=r"$\log(1/c)$")
markers = {8.0: "o", 32.0: "s"}
colors = {"laplace": "tab:blue", "randomized_response": "tab:orange"}
for (kind, eps), rows in budget_rows.groupby(["mechanism", "requested_epsilon"]):
    med = rows.groupby("calls")["raw"].median()
    ax.plot(med.index, med.values, color=colors[kind], marker=markers[eps], lw=1.2,
            label=f"{LABELS[kind]}, requested $\\varepsilon$ = {eps:g}")
    ax.scatter(rows["calls"], rows["raw"], color=colors[kind], marker=markers[eps], s=12, alpha=0.35)
ax.set_xscale("log")
ax.set_ylim(-0.5, math.log(1 / C) + 0.4)
ax.set_xlabel("mechanism calls per pair (both inputs, both directions)")
ax.set_ylabel(r"DP-Sniper lower bound on $\varepsilon$ (nats, raw)")
ax.set_title("Sample size and c cap what DP-Sniper can certify")
ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.17), ncol=2, frameon=False)
plt.show()

cap_at = {b: float(sn.attack_cap(sn.split_budget(int(b)).final, ALPHA, C)) for b in (100, 1_000, 10_000)}
for b, v in cap_at.items():
    glue(f"cap_{b}", v, display=False)
for b in (10_000, 1_000_000):
    glue(f"design_{b}", float(sn.design_cap(sn.split_budget(b).final, ALPHA, C)), display=False)
rr32 = budget_rows[(budget_rows.mechanism == "randomized_response") & (budget_rows.requested_epsilon == 32.0)]
glue("rr32_small", float(rr32[rr32.calls == min(P["budgets"])]["raw"].median()), display=False)
glue("small_budget", int(min(P["budgets"])), display=False)
glue("rr32_top", float(rr32[rr32.calls == P["calls"]]["raw"].median()), display=False)

# %% [markdown]
# The closed-form cap is {glue:text}`cap_100:.2f` at $10^2$ calls per pair,
# {glue:text}`cap_1000:.2f` at $10^3$ and {glue:text}`cap_10000:.2f` at $10^4$: beyond about a
# thousand calls $c$, not the sample size, is the hard limit. An attack that does fire with
# probability $c$ under $a'$ pays a Clopper–Pearson width on about $c n$ firings instead, and reaches
# {glue:text}`design_10000:.2f` at $10^4$ calls and {glue:text}`design_1000000:.2f` at $10^6$.
# Randomized response at $\varepsilon = 32$ follows the dashed curve (median
# {glue:text}`rr32_small:.2f` at {glue:text}`small_budget` calls, {glue:text}`rr32_top:.2f` at
# {glue:text}`calls_k:,.0f` thousand): the attack breaks it completely, and the budget and $c$ decide
# the number. Product Laplace stays far below both curves at every
# budget: there the attack, not the sample size, is the bottleneck.

# %% [markdown]
# ## Matched budget: DP-Sniper against the reserved ROC test
#
# The reserved test of chapter 1 draws $n$ development and $n$ test outputs per identity. Here
# DP-Sniper gets the same $2n$ calls per input ($4n$ per pair) on the same pairs, mechanisms and
# requested $\varepsilon$, with the same logistic regression, and both are scored against the exact
# value. Both are 95% certificates for the pair under pure DP: the reserved test's single
# certificate (two one-sided bounds at 0.025), DP-Sniper's two directions together (four bounds
# at 0.0125); DP-Sniper's pair value is the larger of its two directions.

# %%
t0 = time.perf_counter()
duels = sn.run_duels(KINDS, EPSILONS, P["sizes"], n_pairs=P["duel_pairs"], reps=P["duel_reps"], seed=seed, n_jobs=n_jobs,
                     classifier=LEARNER)
t_duels = time.perf_counter() - t0
keys = ["mechanism", "requested_epsilon", "n", "pair_index", "rep"]
sniper_pair = duels[duels.route == sn.ROUTE].groupby(keys)["value"].max().rename("DP-Sniper")
reserved = duels[duels.route == "roc_reserved"].set_index(keys)["value"].rename("reserved test")
exact_pair = duels.groupby(keys)["exact_epsilon"].first()
duel = pd.concat([sniper_pair, reserved, exact_pair], axis=1).reset_index()
duel_summary = duel.groupby(["mechanism", "requested_epsilon", "n"]).agg(
    exact=("exact_epsilon", "median"),
    sniper_median=("DP-Sniper", "median"), reserved_median=("reserved test", "median"),
    sniper_positive=("DP-Sniper", lambda v: float(np.mean(v > 0))),
    reserved_positive=("reserved test", lambda v: float(np.mean(v > 0))),
)
caps = pd.DataFrame({"n": P["sizes"],
                     "DP-Sniper cap": [float(sn.attack_cap(sn.split_budget(4 * n).final, ALPHA, C)) for n in P["sizes"]],
                     "reserved-test cap": [certifiable_cap(n, n, bonferroni_alpha(1), 0.0) for n in P["sizes"]]}).set_index("n")
display(caps.round(3))
display(duel_summary.round(3))

sniper_wins = int((duel["DP-Sniper"] > duel["reserved test"] + 1e-12).sum())
reserved_wins = int((duel["reserved test"] > duel["DP-Sniper"] + 1e-12).sum())
both_zero = int(((duel["DP-Sniper"] == 0) & (duel["reserved test"] == 0)).sum())
glue("duels", int(len(duel)), display=False)
glue("sniper_wins", sniper_wins, display=False)
glue("reserved_wins", reserved_wins, display=False)
glue("both_zero", both_zero, display=False)
for n in P["sizes"]:
    glue(f"duel_nfinal_{n}", int(sn.split_budget(4 * n).final), display=False)
    glue(f"cap_sniper_{n}", float(caps.loc[n, "DP-Sniper cap"]), display=False)
    glue(f"cap_reserved_{n}", float(caps.loc[n, "reserved-test cap"]), display=False)
rr_big = duel_summary.loc[("randomized_response", 8.0)]
lap_big = duel_summary.loc[("laplace", 32.0)]
for n in P["sizes"]:
    glue(f"duel_rr8_sniper_{n}", float(rr_big.loc[n, "sniper_median"]), display=False)
    glue(f"duel_rr8_reserved_{n}", float(rr_big.loc[n, "reserved_median"]), display=False)
larger_n = [n for n in P["sizes"] if n > min(P["sizes"])]
reserved_ahead = all(rr_big.loc[n, "reserved_median"] > rr_big.loc[n, "sniper_median"] for n in larger_n)
glue("duel_rr8_phrase", "the reserved test certifies more" if reserved_ahead
     else "the reserved test does not certify more at every size", display=False)
glue("duel_lap32_sniper_pos", float(lap_big["sniper_positive"].max()), display=False)
glue("duel_lap32_reserved_pos", float(lap_big["reserved_positive"].max()), display=False)
glue("duel_lap_sniper_max", float(duel[duel.mechanism == "laplace"]["DP-Sniper"].max()), display=False)
glue("duel_lap_reserved_max", float(duel[duel.mechanism == "laplace"]["reserved test"].max()), display=False)

# %% [markdown]
# Of {glue:text}`duels` matched duels, DP-Sniper's pair bound is the larger in
# {glue:text}`sniper_wins`, the reserved test's in {glue:text}`reserved_wins`, and both certify
# nothing in {glue:text}`both_zero` (every duel at the null, at $\varepsilon = 0.5$ and on product
# Laplace below 32). On product Laplace in $d = 512$ the largest bounds are
# {glue:text}`duel_lap_sniper_max:.2f` (DP-Sniper) and {glue:text}`duel_lap_reserved_max:.2f`
# (reserved test); at requested $\varepsilon = 32$ and $n = 300$ the reserved test is positive on
# {glue:text}`duel_lap32_reserved_pos:.0%` of the pairs, DP-Sniper on
# {glue:text}`duel_lap32_sniper_pos:.0%`: a threshold near the middle of the two score
# distributions, as the reserved test picks, uses a few hundred outputs better than a 1% tail.
#
# Where the attack is easy (randomized response at $\varepsilon = 8$) both run into a sample-size
# limit. DP-Sniper's hard cap is the higher ({glue:text}`cap_sniper_30:.2f` against
# {glue:text}`cap_reserved_30:.2f` at $n = 30$, {glue:text}`cap_sniper_300:.2f` against
# {glue:text}`cap_reserved_300:.2f` at $n = 300$), because it spends 15% of its calls before the
# final estimate where the reserved test spends half, and at $n = 30$ it reaches it (medians
# {glue:text}`duel_rr8_sniper_30:.2f` against {glue:text}`duel_rr8_reserved_30:.2f`). At $n = 100$ and
# 300 {glue:text}`duel_rr8_phrase` ({glue:text}`duel_rr8_reserved_100:.2f` and
# {glue:text}`duel_rr8_reserved_300:.2f` against {glue:text}`duel_rr8_sniper_100:.2f` and
# {glue:text}`duel_rr8_sniper_300:.2f`). Where it does, the reason is that DP-Sniper's attack is built to fire with probability
# $c = 1\%$ under $a'$, so with {glue:text}`duel_nfinal_100` and {glue:text}`duel_nfinal_300` final
# calls per input it counts a few firings there and pays their Clopper–Pearson width, while the
# reserved test separates the one-hot outputs perfectly and pays only the zero-error width.
# $c = 0.01$ is tuned for millions of calls; at a few hundred it is what limits DP-Sniper.

# %% [markdown]
# ## Validity: bounds above the exact epsilon
#
# Every DP-Sniper certificate of this chapter (Table 5 rows with the learned and the exact score,
# the budget figure, the matched-budget duels) is compared with the exact epsilon of its pair. A
# pair-run's two directions form one family at 95%, so at most 5% of families may contain a bound
# above the truth; the paper reports none of 324.

# %%
duel_sniper = duels[duels.route == sn.ROUTE].assign(family=lambda f: f.groupby(keys).ngroup())
sniper_all = pd.concat([t5.assign(part="Table 5"), figure_rows.assign(part="budget figure"),
                        duel_sniper.assign(part="matched budget")], ignore_index=True)
n_families = len(t5) // 2 + len(figure_rows) // 2 + len(duel_sniper) // 2
above = int(sniper_all["above_exact"].sum())
families_above = int(
    t5.assign(f=np.arange(len(t5)) // 2).groupby("f")["above_exact"].any().sum()
    + figure_rows.assign(f=np.arange(len(figure_rows)) // 2).groupby("f")["above_exact"].any().sum()
    + duel_sniper.groupby("family")["above_exact"].any().sum()
)
tolerance = int(stats.binom.ppf(0.999, n_families, 0.05))
reserved_above = int(duels[duels.route == "roc_reserved"]["above_exact"].sum())
validity = pd.Series({
    "DP-Sniper bounds": len(sniper_all),
    "bounds above exact epsilon": above,
    "families (pair-runs, both directions at 95%)": n_families,
    "families with a bound above exact": families_above,
    "binomial tolerance (families, 99.9%)": tolerance,
    "reserved-test certificates (matched budget)": int((duels.route == "roc_reserved").sum()),
    "reserved-test certificates above exact": reserved_above,
})
display(validity.to_frame("count"))
glue("v_bounds", int(len(sniper_all)), display=False)
glue("v_above", above, display=False)
glue("v_families", n_families, display=False)
glue("v_fam_above", families_above, display=False)
glue("v_tol", tolerance, display=False)
glue("v_reserved", int((duels.route == "roc_reserved").sum()), display=False)
glue("v_reserved_above", reserved_above, display=False)

sniper_calls = int(t5["calls"].sum() // 2 + figure_rows["calls"].sum() // 2)
sniper_seconds = t_learned + t_exact + t_figure
glue("calls_per_s", sniper_calls / sniper_seconds, display=False)
glue("total_calls_m", sniper_calls / 1e6, display=False)
elapsed = time.perf_counter() - started
glue("elapsed_minutes", elapsed / 60, display=False)
print(f"DP-Sniper rows: {sniper_calls:,} calls in {sniper_seconds:.0f} s ({sniper_calls / sniper_seconds:,.0f} calls/s "
      f"with {n_jobs} worker(s), training included); notebook time {elapsed:.0f} s")

# %% [markdown]
# Of {glue:text}`v_bounds` DP-Sniper bounds, {glue:text}`v_above` exceed the exact epsilon of
# their pair, and {glue:text}`v_fam_above` of {glue:text}`v_families` families contain one (the
# binomial tolerance at 5% is {glue:text}`v_tol`); of {glue:text}`v_reserved` reserved-test
# certificates, {glue:text}`v_reserved_above` do. The paper's 0 of 324 carries over: a DP-Sniper
# bound is a certificate whatever the classifier, because the classifier and the threshold are
# fixed before the final samples are drawn.
#
# The DP-Sniper rows of this page ran {glue:text}`total_calls_m:.1f` million mechanism calls at
# {glue:text}`calls_per_s:,.0f` calls per second including training (two workers, mostly the
# 512-dimensional Laplace rows); `benchmarks/bench_sniper.py` measures the pipeline on one and two
# cores. This chapter ran in {glue:text}`elapsed_minutes:.1f` minutes.
