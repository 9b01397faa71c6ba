"""The chapters' papermill parameters (epsaudit.studies.parameters): values as a class types them.

``papermill -p sizes 300`` passes a bare number (papermill parses ``300`` as an int, ``1.5`` as a float);
a list parameter takes it as a one-element list of its kind, exactly as ``-p sizes 300,3000`` gives two.
"""

from __future__ import annotations

import pytest

from epsaudit.studies import parameters
from epsaudit.studies.parameters import ENCODERS, Parameter

SIZES = Parameter("sizes", int, "test rows per identity", low=10, high=1000, optional=True, many=True)
EPSILONS = Parameter("epsilons", float, "exact epsilons", low=0, high=8, optional=True, many=True)


@pytest.mark.parametrize(("spec", "value", "expected"), [
    (SIZES, 300, [300]),  # papermill -p sizes 300
    (SIZES, 300.0, [300]),  # an integral float for an int list
    (SIZES, "300", [300]),  # papermill -p sizes "300" (a string)
    (SIZES, "30,300", [30, 300]),
    (SIZES, [30, 300], [30, 300]),
    (SIZES, None, None),
    (EPSILONS, 1, [1.0]),  # papermill -p epsilons 1: an int, made a float
    (EPSILONS, 1.5, [1.5]),
    (EPSILONS, "0.5,2", [0.5, 2.0]),
    (ENCODERS, "dlib", ["dlib"]),
])
def test_a_list_parameter_takes_one_bare_value(spec, value, expected):
    ns = {spec.name: value}
    assert parameters.check(ns, (spec,), "demo") == {spec.name: expected}
    assert ns[spec.name] == expected
    if expected is not None:
        assert all(type(v) is spec.kind for v in ns[spec.name]), ns  # typed: 300 -> [300] (int), 1 -> [1.0]


@pytest.mark.parametrize(("spec", "value", "what"), [
    (SIZES, 3, "is out of range"),  # a bare value is checked as the element it becomes
    (SIZES, 30.5, "has the wrong type"),
    (SIZES, True, "has the wrong type"),  # a bool is never an int
    (SIZES, [], "has the wrong type"),
    (SIZES, {"n": 30}, "has the wrong type"),
    (SIZES, "30,30", "repeats a value"),
    (EPSILONS, float("nan"), "has the wrong type"),
    (ENCODERS, "arcface", "is not allowed"),
])
def test_a_list_parameter_refuses_what_it_cannot_be(spec, value, what):
    with pytest.raises(ValueError, match=f"demo: parameter {spec.name} = .* {what}; "):
        parameters.check({spec.name: value}, (spec,), "demo")


def test_a_bare_value_for_the_synthetic_chapter_sizes():
    """The course's command `papermill notebooks/01_synthetic_benchmark.ipynb out.ipynb -p profile smoke -p sizes 300`."""
    from epsaudit.studies import synthetic as study

    ns = {"profile": "smoke", "sizes": 300, "epsilons": 2, "mechanisms": "laplace", "seed": 0, "n_jobs": 1}
    values = parameters.check(ns, study.PARAMETERS, "chapter 1")
    assert (values["sizes"], values["epsilons"], values["mechanisms"]) == ([300], [2.0], ["laplace"])
    assert study.settings("smoke", values["sizes"], values["epsilons"], values["mechanisms"])["sizes"] == (300,)
