"""Properties every certificate and the sample-size planner must have, over random counts (hypothesis).

For each bound -- :func:`~epsaudit.bounds.joint_epsilon`, :func:`~epsaudit.bounds.joint_mu`,
:func:`~epsaudit.bounds.clopper_pearson_epsilon` and :func:`~epsaudit.bounds.certified_epsilon` with
either ``bound=`` (and the sequential bound of :mod:`epsaudit.bounds.sequential` when that module
exists) -- over test sizes 1..1000 per identity, any error counts, ``alpha`` from 1e-12 to 0.99 (and a
few extreme levels down to 1e-100) and ``delta`` from 0 to 0.5:

* the certificate is a finite number >= 0, returned as a Python ``float`` (not numpy's) for scalar counts;
* it never grows with ``delta``, with the confidence ``1 - alpha`` (a smaller ``alpha``), or with
  either error count;
* it is the same when the two identities swap roles;
* the joint certificate is never below the split Clopper-Pearson one on the same counts;
* at zero errors it is the closed form: ``logit(alpha^(1/2n))`` (joint, delta = 0; ``2 Phi^-1(...)``
  for mu), ``log((s - delta) / (1 - s))`` with ``s = (alpha/2)^(1/n)`` (split), floored at 0.

The planner (:func:`~epsaudit.bounds.required_test_size`, :func:`~epsaudit.bounds.planned_epsilon`,
:func:`~epsaudit.bounds.certifiable_cap`) answers every reachable question from one row upward, with
either bound, as a Python ``int`` that ``json.dumps`` accepts, and keeps its documented promise: the
returned size certifies the target at the expected counts, one row fewer does not, and each size of
the promised range ``n .. 2 n`` certifies it too.

Runs are reproducible (``derandomize=True``: the same examples on every machine and in CI). A failure
prints the shrunk counterexample (hypothesis' "Falsifying example") and each assertion names the
inputs and the values compared.
"""

from __future__ import annotations

import importlib
import inspect
import json
import math

import pytest
from hypothesis import HealthCheck, example, given, note, settings
from hypothesis import strategies as st
from scipy import stats

from epsaudit import bounds as B

# Differences below this are numerics (the joint certificate bisects to 1e-7 over epsilon).
TOL = 1e-6
# The joint certificates compare within a relative 1e-4 more: each is computed from a proven upper limit of
# its p-value within a relative 1e-4 of the exact one, so two computations of one number may differ by that.
REL = {"joint_epsilon": 1e-4, "joint_mu": 1e-4, "certified_epsilon[joint]": 1e-4}


def _tol(name: str, *values: float) -> float:
    """How far two values of the bound ``name`` may differ by numerics alone."""
    return TOL + REL.get(name, 0.0) * max(abs(v) for v in values)


# The joint certificate is computed from a proven upper limit of its p-value within a relative 1e-4
# above the exact one: at zero errors it lies between the closed form at alpha / (1 + this) and at alpha.
# (Documented as 1e-4; measured up to 2.6e-4 at zero errors, e.g. joint_mu(0, 100, 0, 100, 0.05): a certificate
# lower by about 1e-5, on the safe side.)
PVALUE_RTOL = 5e-4

#: Examples per property: the whole file runs in about a minute on 2 busy cores.
FEW, SOME, MANY = 15, 40, 100
#: joint_mu costs some 50 times a joint_epsilon call (0.3 s at hundreds of rows): it gets fewer examples.
SLOW_BOUNDS = {"joint_mu": 8}
#: Seconds hypothesis may spend shrinking one failure (its own limit is 300; a certificate costs up to a second).
SHRINK_SECONDS = 20


@pytest.fixture(autouse=True, scope="module")
def _shorter_shrinking():
    """Cap the shrinking of a failure at SHRINK_SECONDS, so a broken property costs seconds, not minutes."""
    from hypothesis.internal.conjecture import engine

    before = getattr(engine, "MAX_SHRINKING_SECONDS", None)
    if before is not None:
        engine.MAX_SHRINKING_SECONDS = SHRINK_SECONDS
    yield
    if before is not None:
        engine.MAX_SHRINKING_SECONDS = before


def _settings(examples: int):
    return settings(max_examples=examples, derandomize=True, deadline=None, database=None, print_blob=False,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


# ---------------------------------------------------------------------------------------------
# Strategies
# ---------------------------------------------------------------------------------------------

#: Levels a test asks about: log-uniform over 1e-12 .. 0.99, uniform, and a few extreme ones.
EXTREME_ALPHAS = (1e-100, 1e-50, 1e-20, 1e-16, 1e-15, 1e-13, 0.5, 0.9, 0.99)
alphas = st.one_of(
    st.floats(-12.0, math.log10(0.99)).map(lambda e: float(10.0 ** e)),
    st.floats(1e-12, 0.99),
    st.sampled_from(EXTREME_ALPHAS),
)
deltas = st.one_of(st.floats(0.0, 0.5), st.sampled_from((0.0, 1e-10, 1e-5, 1e-3, 0.01, 0.1, 0.5)))
sizes = st.integers(1, 1000)
#: Two deltas, small first: anywhere in 0 .. 0.5, or close together (a local bump shows only between neighbours).
delta_pairs = st.one_of(
    st.lists(deltas, min_size=2, max_size=2).map(sorted),
    st.tuples(st.floats(0.0, 0.45), st.sampled_from((1e-4, 1e-3, 5e-3, 0.01, 0.05))).map(lambda t: [t[0], t[0] + t[1]]),
)
#: Two alphas, small first: anywhere, or one a little larger than the other.
alpha_pairs = st.one_of(
    st.lists(alphas, min_size=2, max_size=2).map(sorted),
    st.tuples(alphas, st.sampled_from((1.001, 1.01, 1.1, 1.5, 2.0))).map(lambda t: [t[0], min(t[0] * t[1], 0.99)]).map(sorted),
)


@st.composite
def outcomes(draw, max_size: int = 1000):
    """(fp, n_neg, fn, n_pos): error counts anywhere in 0..n, often few (what a good test sees)."""
    n_neg, n_pos = draw(st.integers(1, max_size)), draw(st.integers(1, max_size))
    few = lambda n: st.one_of(st.integers(0, min(n, 3)), st.integers(0, n))  # noqa: E731
    return draw(few(n_neg)), n_neg, draw(few(n_pos)), n_pos


def _split_mu(fp, n_neg, fn, n_pos, alpha):
    """The split statistic of joint_mu: Phi^-1(TPR_lo) - Phi^-1(FPR_hi), Clopper-Pearson at alpha/2, floored at 0."""
    return float(B.tradeoff_mu(B.clopper_pearson_upper(fp, n_neg, alpha / 2), B.clopper_pearson_upper(fn, n_pos, alpha / 2)))


# ---------------------------------------------------------------------------------------------
# The bounds, each as f(fp, n_neg, fn, n_pos, alpha, delta)
# ---------------------------------------------------------------------------------------------

BOUNDS = {
    "joint_epsilon": lambda fp, n_neg, fn, n_pos, a, d: B.joint_epsilon(fp, n_neg, fn, n_pos, a, d),
    "joint_mu": lambda fp, n_neg, fn, n_pos, a, d: B.joint_mu(fp, n_neg, fn, n_pos, a),
    "clopper_pearson_epsilon": lambda fp, n_neg, fn, n_pos, a, d: B.clopper_pearson_epsilon(fp, n_neg, fn, n_pos, a, d),
    "certified_epsilon[joint]":
        lambda fp, n_neg, fn, n_pos, a, d: B.certified_epsilon(fp, n_neg, fn, n_pos, a, d, bound="joint"),
    "certified_epsilon[clopper-pearson]":
        lambda fp, n_neg, fn, n_pos, a, d: B.certified_epsilon(fp, n_neg, fn, n_pos, a, d, bound="clopper-pearson"),
}
#: Bounds that do not read delta (the mu of Gaussian DP has none).
NO_DELTA = {"joint_mu"}
#: Each bound's split counterpart, which the joint one is never below.
SPLIT = {
    "joint_epsilon": lambda fp, n_neg, fn, n_pos, a, d: float(B.clopper_pearson_epsilon(fp, n_neg, fn, n_pos, a, d)),
    "certified_epsilon[joint]":
        lambda fp, n_neg, fn, n_pos, a, d: float(B.certified_epsilon(fp, n_neg, fn, n_pos, a, d, bound="clopper-pearson")),
    "joint_mu": lambda fp, n_neg, fn, n_pos, a, d: _split_mu(fp, n_neg, fn, n_pos, a),
}


def _sequential_bound():
    """The anytime-valid bound of epsaudit.bounds.sequential, as f(fp, n_neg, fn, n_pos, alpha, delta), if any."""
    try:
        module = importlib.import_module("epsaudit.bounds.sequential")
    except ImportError:
        return None
    for name in ("sequential_epsilon", "certified_epsilon", "epsilon"):
        f = getattr(module, name, None)
        if callable(f):
            names = list(inspect.signature(f).parameters)
            if names[:4] == ["fp", "n_neg", "fn", "n_pos"]:
                return lambda fp, n_neg, fn, n_pos, a, d: f(fp, n_neg, fn, n_pos, a, d)
            if names[:4] == ["tp", "n_pos", "fp", "n_neg"]:
                return lambda fp, n_neg, fn, n_pos, a, d: f(n_pos - fn, n_pos, fp, n_neg, a, d)
    return None


if (_sequential := _sequential_bound()) is not None:
    BOUNDS["sequential"] = _sequential

NAMES = sorted(BOUNDS)


def _value(name, fp, n_neg, fn, n_pos, alpha, delta, *, python_float: bool = False):
    """The bound's value, checked to be a finite number >= 0 (and a Python float: test_finite_... checks that)."""
    args = (fp, n_neg, fn, n_pos, alpha, delta)
    out = BOUNDS[name](*args)
    note(f"{name}(fp={fp}, n_neg={n_neg}, fn={fn}, n_pos={n_pos}, alpha={alpha!r}, delta={delta!r}) = {out!r}")
    if python_float:
        assert type(out) is float, f"{name}{args} returned {type(out).__name__} {out!r}, not a Python float"
    assert math.isfinite(out) and out >= 0.0, f"{name}{args} = {out!r}: not a finite number >= 0"
    return float(out)


def per_bound(names, examples: int, **strategies):
    """Run a property for each bound in ``names`` (pytest parameter ``name``) with ``examples`` examples each
    (fewer for SLOW_BOUNDS), drawing its other arguments from ``strategies``; @example below this decorator pins
    inputs every bound is checked at."""
    def decorate(check):
        runs = {name: _settings(SLOW_BOUNDS.get(name, examples))(given(**strategies)(check)) for name in names}

        @pytest.mark.parametrize("name", names)
        def test(name):
            runs[name](name=name)

        test.__name__, test.__qualname__, test.__doc__ = check.__name__, check.__qualname__, check.__doc__
        return test
    return decorate


# ---------------------------------------------------------------------------------------------
# Properties of every bound
# ---------------------------------------------------------------------------------------------


@per_bound(NAMES, MANY, outcome=outcomes(), alpha=alphas, delta=deltas)
def test_finite_non_negative_python_float(name, outcome, alpha, delta):
    _value(name, *outcome, alpha, delta, python_float=True)


@per_bound([n for n in NAMES if n not in NO_DELTA], SOME, outcome=outcomes(), alpha=alphas, deltas_=delta_pairs)
@example(outcome=(2, 30, 3, 30), alpha=0.05, deltas_=[0.018, 0.019])  # issue 26: 1.4991 at 0.018, 1.5151 at 0.019
def test_non_increasing_in_delta(name, outcome, alpha, deltas_):
    small, large = deltas_
    at_small, at_large = _value(name, *outcome, alpha, small), _value(name, *outcome, alpha, large)
    assert at_large <= at_small + _tol(name, at_small), (
        f"{name}{outcome}, alpha={alpha!r}: {at_large!r} at delta={large!r} > {at_small!r} at delta={small!r}")


#: Deltas of the confidence property: up to 0.1. Above it the joint certificate is not monotone in alpha
#: (see test_known_confidence_violation_at_large_delta and the joint module's notes).
confidence_deltas = st.one_of(st.floats(0.0, 0.1), st.sampled_from((0.0, 1e-10, 1e-5, 1e-3, 0.01, 0.1)))


def _confidence_holds(name, outcome, alphas_, delta):
    small, large = alphas_
    at_small, at_large = _value(name, *outcome, small, delta), _value(name, *outcome, large, delta)
    assert at_small <= at_large + _tol(name, at_large), (
        f"{name}{outcome}, delta={delta!r}: {at_small!r} at alpha={small!r} > {at_large!r} at alpha={large!r}")


@per_bound(NAMES, SOME, outcome=outcomes(), alphas_=alpha_pairs, delta=confidence_deltas)
@example(outcome=(0, 100, 0, 100), alphas_=[1e-16, 1e-12], delta=0.0)
def test_non_increasing_in_confidence(name, outcome, alphas_, delta):
    """A smaller alpha (more confidence) never certifies more (delta up to 0.1)."""
    _confidence_holds(name, outcome, alphas_, delta)


@pytest.mark.xfail(strict=True, reason="known: at delta = 0.5 the joint certificate's delta = 0 ordering depends on "
                                       "alpha and it can certify more at a smaller alpha (found by this suite)")
@pytest.mark.parametrize("name", ["joint_epsilon", "certified_epsilon[joint]"])
def test_known_confidence_violation_at_large_delta(name):
    _confidence_holds(name, (1, 62, 1, 12), [0.375, 0.37875], 0.5)


@per_bound(NAMES, SOME, count=st.sampled_from(("fp", "fn")), outcome=outcomes(), more=st.integers(1, 50), alpha=alphas,
           delta=deltas)
@example(count="fp", outcome=(0, 222, 105, 855), more=1, alpha=0.1, delta=0.125)  # found for a draft of the sequential bound
@example(count="fn", outcome=(0, 463, 70, 486), more=1, alpha=1e-12, delta=0.5)  # found for a draft of the sequential bound
def test_non_increasing_in_each_error_count(name, count, outcome, more, alpha, delta):
    fp, n_neg, fn, n_pos = outcome
    worse = (min(fp + more, n_neg), n_neg, fn, n_pos) if count == "fp" else (fp, n_neg, min(fn + more, n_pos), n_pos)
    before, after = _value(name, *outcome, alpha, delta), _value(name, *worse, alpha, delta)
    assert after <= before + _tol(name, before), (
        f"{name}, alpha={alpha!r}, delta={delta!r}: {after!r} at (fp, n_neg, fn, n_pos) = {worse} "
        f"> {before!r} at {outcome} with fewer errors")


@per_bound(NAMES, SOME, outcome=outcomes(), alpha=alphas, delta=deltas)
@example(outcome=(0, 38, 7, 114), alpha=1e-15, delta=0.0)  # found: certified_epsilon[joint] 0.01241 vs 0.01135 swapped
@example(outcome=(0, 417, 0, 14), alpha=1e-15, delta=0.0)  # found: certified_epsilon[joint] 0 vs 0.00398 swapped
def test_symmetric_under_relabelling_the_identities(name, outcome, alpha, delta):
    """Swapping A and B (and the side the test calls positive) swaps the two error counts."""
    fp, n_neg, fn, n_pos = outcome
    value, swapped = _value(name, fp, n_neg, fn, n_pos, alpha, delta), _value(name, fn, n_pos, fp, n_neg, alpha, delta)
    assert abs(value - swapped) <= _tol(name, value, swapped), (
        f"{name}, alpha={alpha!r}, delta={delta!r}: {value!r} at (fp, n_neg, fn, n_pos) = {outcome} "
        f"but {swapped!r} with the identities swapped, {(fn, n_pos, fp, n_neg)}")


@per_bound(sorted(SPLIT), SOME, outcome=outcomes(), alpha=alphas, delta=deltas)
@example(outcome=(0, 7, 2, 40), alpha=0.1, delta=0.5)  # found after the fix of 34cd786: joint 0 < split 0.0178
def test_joint_never_below_split(name, outcome, alpha, delta):
    joint, split = _value(name, *outcome, alpha, delta), SPLIT[name](*outcome, alpha, delta)
    assert joint >= split - _tol(name, split), (
        f"{name}{outcome}, alpha={alpha!r}, delta={delta!r}: joint {joint!r} < split {split!r}")


def _logit(s: float) -> float:
    return math.log(s) - math.log1p(-s)


def _corner(n: int, alpha: float) -> float:
    """alpha^(1/2n): the chance a randomized-response pair at the certified epsilon makes zero errors per row."""
    return math.exp(math.log(alpha) / (2 * n))


#: The zero-error closed forms of the joint certificates (delta = 0): what the corner mechanism allows.
CLOSED_FORMS = {"joint_epsilon": _logit, "certified_epsilon[joint]": _logit,
                "joint_mu": lambda s: 2 * float(stats.norm.ppf(s))}


@per_bound(sorted(CLOSED_FORMS), SOME, n=sizes, alpha=alphas)
@example(n=100, alpha=1e-16)  # issue 26: 0 instead of logit(1e-16 ** (1 / 200)) = 1.60
def test_joint_closed_form_at_zero_errors(name, n, alpha):
    """Zero errors in n + n rows, delta = 0: logit(alpha^(1/2n)) (mu: 2 Phi^-1(alpha^(1/2n))), floored at 0.

    The computed certificate may sit below by the p-value's relative slack (PVALUE_RTOL), never above.
    """
    form = CLOSED_FORMS[name]
    value = _value(name, 0, n, 0, n, alpha, 0.0)
    exact, low = max(form(_corner(n, alpha)), 0.0), max(form(_corner(n, alpha / (1 + PVALUE_RTOL))), 0.0)
    assert low - TOL <= value <= exact + TOL, (
        f"{name}(0, {n}, 0, {n}, alpha={alpha!r}, delta=0) = {value!r}; the closed form is {exact!r} "
        f"(at least {low!r} allowing the p-value's relative slack {PVALUE_RTOL})")


@pytest.mark.skipif("sequential" not in BOUNDS, reason="no epsaudit.bounds.sequential yet")
@_settings(SOME)
@given(n=sizes, alpha=alphas)
@example(n=100, alpha=1e-16)
def test_sequential_at_zero_errors(n, alpha):
    """Zero errors, delta = 0: its own closed form, and never above logit(alpha^(1/2n)), the most any valid bound certifies."""
    value = _value("sequential", 0, n, 0, n, alpha, 0.0)
    most = max(_logit(_corner(n, alpha)), 0.0)
    assert value <= most + TOL, f"sequential(0, {n}, 0, {n}, alpha={alpha!r}) = {value!r} > {most!r}, the most any valid bound certifies"
    closed = getattr(importlib.import_module("epsaudit.bounds.sequential"), "zero_error_sequential_epsilon", None)
    if closed is not None:
        form = float(closed(n, alpha))
        assert abs(value - form) <= TOL * max(1.0, form), (
            f"sequential(0, {n}, 0, {n}, alpha={alpha!r}) = {value!r}, but zero_error_sequential_epsilon gives {form!r}")


@_settings(SOME)
@given(n=sizes, alpha=alphas, delta=deltas)
def test_split_closed_form_at_zero_errors(n, alpha, delta):
    """Zero errors: log((s - delta) / (1 - s)) with s = (alpha/2)^(1/n), floored at 0."""
    s = math.exp(math.log(alpha / 2) / n)
    exact = max(math.log(s - delta) - math.log1p(-s), 0.0) if s > delta else 0.0
    for name in ("clopper_pearson_epsilon", "certified_epsilon[clopper-pearson]"):
        value = _value(name, 0, n, 0, n, alpha, delta)
        assert abs(value - exact) <= TOL * max(1.0, exact), (
            f"{name}(0, {n}, 0, {n}, alpha={alpha!r}, delta={delta!r}) = {value!r}; the closed form is {exact!r}")


# ---------------------------------------------------------------------------------------------
# The planner
# ---------------------------------------------------------------------------------------------

PLAN_BOUNDS = ("joint", "clopper-pearson")
plan_alphas = st.one_of(st.floats(-12.0, math.log10(0.99)).map(lambda e: float(10.0 ** e)),
                        st.sampled_from((1e-16, 1e-6, 0.05 / 40, 0.05, 0.5, 0.9, 0.99)))
plan_deltas = st.one_of(st.just(0.0), st.just(1e-5), st.floats(0.0, 0.5))


def _reaches(value: float, epsilon: float) -> bool:
    return value > 0 if epsilon == 0 else value >= epsilon


@pytest.mark.parametrize("bound", PLAN_BOUNDS)
@_settings(SOME)
@given(n_pos=sizes, n_neg=sizes, alpha=plan_alphas, delta=plan_deltas)
def test_cap_and_planned_epsilon_from_one_row(bound, n_pos, n_neg, alpha, delta):
    """certifiable_cap and planned_epsilon answer at every size from 1 row: a Python float, the zero-error certificate."""
    cap = B.certifiable_cap(n_pos, n_neg, alpha, delta, bound=bound)
    planned = B.planned_epsilon(n_pos, alpha, delta, bound=bound)
    note(f"certifiable_cap({n_pos}, {n_neg}, {alpha!r}, {delta!r}, bound={bound!r}) = {cap!r}; "
         f"planned_epsilon({n_pos}, ...) = {planned!r}")
    for what, v in (("certifiable_cap", cap), ("planned_epsilon", planned)):
        assert type(v) is float and math.isfinite(v) and v >= 0, f"{what} returned {type(v).__name__} {v!r}"
        json.dumps(v)
    assert cap == float(B.certified_epsilon(0, n_neg, 0, n_pos, alpha, delta, bound=bound))
    assert planned == B.certifiable_cap(n_pos, n_pos, alpha, delta, bound=bound)


@pytest.mark.parametrize("bound", PLAN_BOUNDS)
@_settings(SOME)
@given(n=st.integers(1, 999), alpha=plan_alphas, delta=plan_deltas)
def test_cap_grows_with_the_size(bound, n, alpha, delta):
    """The zero-error certificate never falls when a row is added to each side (what the planner's bisection assumes)."""
    smaller, larger = B.certifiable_cap(n, n, alpha, delta, bound=bound), B.certifiable_cap(n + 1, n + 1, alpha, delta, bound=bound)
    assert larger >= smaller - TOL, (
        f"certifiable_cap at alpha={alpha!r}, delta={delta!r}, bound={bound!r}: {smaller!r} at {n} rows, {larger!r} at {n + 1}")


def _check_plan(bound, epsilon, alpha, delta, tpr, fpr, data):
    question = f"required_test_size({epsilon!r}, {alpha!r}, {delta!r}, tpr={tpr!r}, fpr={fpr!r}, bound={bound!r})"
    n = B.required_test_size(epsilon, alpha, delta, tpr, fpr, bound=bound)
    note(f"{question} = {n!r}")
    assert type(n) is int, f"{question} returned {type(n).__name__} {n!r}, not a Python int"
    assert json.loads(json.dumps({"n": n})) == {"n": n}
    assert n >= 1, f"{question} = {n}"

    def planned(m):
        return B.planned_epsilon(int(m), alpha, delta, tpr, fpr, bound=bound)

    at_n = planned(n)
    assert _reaches(at_n, epsilon), f"{question} = {n}, but {n} rows certify only {at_n!r}"
    if n > 1:
        below = planned(n - 1)
        assert not _reaches(below, epsilon), f"{question} = {n}, but {n - 1} rows already certify {below!r}"
    m = int(data.draw(st.sampled_from(list(B.promise_sizes(n))), label="size in the promised range"))
    at_m = planned(m)
    assert _reaches(at_m, epsilon), f"{question} = {n} promises every size to {2 * n}, but {m} rows certify {at_m!r}"
    return n


@pytest.mark.parametrize("bound", PLAN_BOUNDS)
@_settings(SOME)
@given(n0=sizes, share=st.one_of(st.just(0.0), st.just(1.0), st.floats(0.0, 1.0)), alpha=plan_alphas,
       delta=plan_deltas, data=st.data())
def test_planner_with_perfect_separation(bound, n0, share, alpha, delta, data):
    """A target that some size up to 1000 reaches (a share of its cap) is answered, from 1 row upward."""
    cap = B.certifiable_cap(n0, n0, alpha, delta, bound=bound)
    epsilon = share * cap
    if epsilon == 0 and cap == 0:
        return  # nothing certified at n0: the question 'more than 0' may need more than 1000 rows
    n = _check_plan(bound, epsilon, alpha, delta, 1.0, 0.0, data)
    assert n <= n0, f"required_test_size({epsilon!r}, {alpha!r}, {delta!r}, bound={bound!r}) = {n}, but {n0} rows reach it"


@pytest.mark.parametrize("bound", PLAN_BOUNDS)
@_settings(FEW)
@given(n0=st.integers(1, 150), share=st.floats(0.0, 1.0), alpha=plan_alphas, delta=st.sampled_from((0.0, 1e-5, 0.01)),
       tpr=st.floats(0.5, 1.0), fpr=st.floats(0.0, 0.3), data=st.data())
def test_planner_with_imperfect_rates(bound, n0, share, alpha, delta, tpr, fpr, data):
    """Rates below perfection: the counts are rounded, so the promise is checked size by size."""
    reached = B.planned_epsilon(n0, alpha, delta, tpr, fpr, bound=bound)
    if reached == 0:
        return
    _check_plan(bound, share * reached, alpha, delta, tpr, fpr, data)


@pytest.mark.parametrize("bound", PLAN_BOUNDS)
@_settings(FEW)
@given(alpha=plan_alphas, delta=plan_deltas)
def test_planner_answers_one_row(bound, alpha, delta):
    """When one row per identity certifies something, 'more than 0' needs exactly 1 row."""
    at_one = B.planned_epsilon(1, alpha, delta, bound=bound)
    note(f"planned_epsilon(1, {alpha!r}, {delta!r}, bound={bound!r}) = {at_one!r}")
    if at_one > 0:
        for epsilon in (0.0, at_one / 2, at_one):
            n = B.required_test_size(epsilon, alpha, delta, bound=bound)
            assert n == 1 and type(n) is int, (
                f"required_test_size({epsilon!r}, {alpha!r}, {delta!r}, bound={bound!r}) = {n!r}; one row certifies {at_one!r}")
