"""The core's public API: documented with examples, small modules and functions, a light start-up,
and route statistics as named fields that flatten to the same table columns as before."""

from __future__ import annotations

import ast
import dataclasses
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from epsaudit.audits import (CertificateStatistics, GaussMechStatistics, KDEStatistics, MMDCertificateStatistics,
                             MMDStatistics, RocStatistics, TradeoffStatistics, gaussmech_pairs, kde_lr_pairs,
                             mmd_certificate_pairs, mmd_tv_pairs, reserved_test_pairs, roc_oof_pairs,
                             tradeoff_certificate_pairs)
from epsaudit.results import EpsilonResult, RouteStatistics, results_frame

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "epsaudit"
CORE = sorted(
    [p for p in PACKAGE.glob("*.py") if p.name not in ("__init__.py", "__main__.py")]
    + [p for folder in ("audits", "bounds", "data") for p in (PACKAGE / folder).glob("*.py")]
    + [PACKAGE / "build" / name for name in ("images.py", "lfw.py", "pipeline.py", "encoders.py", "generators.py")])


def _public(tree: ast.Module):
    return [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and not n.name.startswith("_")]


@pytest.mark.parametrize("path", CORE, ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_public_names_have_numpy_docstrings_with_examples(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    missing = [n.name for n in _public(tree) if "Examples\n    --------" not in (ast.get_docstring(n, clean=False) or "")
               and "Examples\n--------" not in (ast.get_docstring(n) or "")]
    assert not missing, f"public names without an Examples section: {missing}"


def test_import_and_help_do_not_load_the_heavy_stack():
    code = ("import sys, epsaudit\n"
            "light = not any(m.split('.')[0] in ('pandas', 'sklearn', 'scipy') for m in sys.modules)\n"
            "from epsaudit.cli import build_parser\n"
            "build_parser().format_help()\n"
            "heavy = [m for m in ('pandas', 'sklearn', 'scipy.optimize', 'scipy.stats') if m in sys.modules]\n"
            "print(light, heavy)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True []"


# ---------------------------------------------------------------------------------------------
# Route statistics


@pytest.fixture(scope="module")
def groups():
    rng = np.random.default_rng(5)
    return {f"id{k}": rng.normal(0.5 * k, 1.0, size=(24, 4)) for k in range(3)}


PAIRS = [("id0", "id1"), ("id0", "id2")]
ROUTES = {
    "gaussmech": (lambda g: gaussmech_pairs(g, PAIRS), GaussMechStatistics),
    "kde_lr": (lambda g: kde_lr_pairs(g, PAIRS), KDEStatistics),
    "mmd_tv": (lambda g: mmd_tv_pairs(g, PAIRS, permutations=20), MMDStatistics),
    "roc_oof": (lambda g: roc_oof_pairs(g, PAIRS), RocStatistics),
    "roc_reserved": (lambda g: reserved_test_pairs(g, PAIRS), CertificateStatistics),
    "tradeoff_reserved": (lambda g: [c.to_result() for c in tradeoff_certificate_pairs(g, PAIRS)], TradeoffStatistics),
    "mmd_certificate": (lambda g: [c.to_result() for c in mmd_certificate_pairs(g, PAIRS)], MMDCertificateStatistics),
}


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_each_route_holds_its_statistics_and_flattens_them_to_columns(groups, route):
    run, cls = ROUTES[route]
    results = run(groups)
    frame = results_frame(results)
    for r in results:
        assert isinstance(r.statistics, cls) and dataclasses.is_dataclass(r.statistics)
        record = r.statistics.record()
        assert dict(r.details) == record  # the compatibility view holds exactly the statistics
        assert all(k in frame.columns for k in record)
    first = results[0].statistics
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(first, dataclasses.fields(first)[0].name, 0)
    with pytest.raises(TypeError):
        results[0].details["x"] = 1  # read-only


def test_named_fields_and_the_details_view_agree(groups):
    roc = roc_oof_pairs(groups, PAIRS)[0]
    assert roc.details["auc"] == roc.statistics.auc and roc.details.get("exact_corner") == roc.statistics.exact_corner
    cert = reserved_test_pairs(groups, PAIRS)[0]
    assert (cert.details["tp"], cert.details["cap"]) == (cert.statistics.tp, cert.statistics.cap)
    curve = [c for c in results_frame([tradeoff_certificate_pairs(groups, PAIRS)[0].to_result()]).columns
             if c.startswith("epsilon_at_delta_")]
    assert curve == ["epsilon_at_delta_0", "epsilon_at_delta_1e-06", "epsilon_at_delta_1e-05", "epsilon_at_delta_0.0001",
                     "epsilon_at_delta_0.001", "epsilon_at_delta_0.01", "epsilon_at_delta_0.1"]


def test_results_pickle_replace_and_refuse_contradictions(groups):
    result = mmd_tv_pairs(groups, PAIRS)[0]  # p_value NaN: equal after the round trip all the same
    again = pickle.loads(pickle.dumps(result))
    assert type(again.statistics) is MMDStatistics and list(again.details) == list(result.details)
    assert np.isnan(again.details["p_value"]) and again.details["mmd"] == result.statistics.mmd
    with pytest.raises(TypeError):
        again.details["mmd"] = 0.0  # still read-only after the round trip
    moved = dataclasses.replace(result, value=0.5)
    assert moved.value == 0.5 and moved.statistics is result.statistics
    with pytest.raises(ValueError, match="contradicts the statistic"):
        EpsilonResult(1.0, "estimate", "mmd_tv", (5, 5), statistics=result.statistics, details={"mmd": -1.0})
    with pytest.raises(TypeError, match="RouteStatistics"):
        EpsilonResult(1.0, "estimate", "mmd_tv", (5, 5), statistics={"mmd": 0.1})


def test_free_details_still_work_for_routes_without_a_statistics_class():
    r = EpsilonResult(1.0, "certificate", "dp_sniper", (10, 10), confidence=0.95, alpha_per_bound=0.0125,
                      correction="bonferroni", details={"raw": 1.2, "direction": "a->b"})
    assert r.statistics is None and r.details["direction"] == "a->b"
    assert results_frame([r]).loc[0, "raw"] == 1.2
    failed = EpsilonResult(0.0, "diagnostic", "kde_lr", (5, 5), not_computed="constant", details={"error": "ValueError"})
    assert failed.details == {"error": "ValueError"} and isinstance(RouteStatistics(), RouteStatistics)
