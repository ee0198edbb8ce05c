"""Engines (issue #17): the grid streamed on local threads or on a Dask cluster gives identical results, results
come back in chunk order, progress and cancel work, Dask is optional with a clear message, memory stays bounded."""
from __future__ import annotations

import sys
import threading
import time
from typing import Any

import cloudpickle
import distributed  # a dev dependency (pyproject: dev and dask extras)
import pandas as pd
import pytest

import tests.test_search_engine as toy
from calibration.schemes.violations.search import ViolationsProblem
from calibration.schemes.violations.space import SearchSpace
from calibration.schemes.violations.synthetic import human_labels, synthetic_table
from calibration.search import Calibrator, Cancelled
from calibration.search.engines import DaskEngine, EngineError, LocalEngine, make_engine
from calibration.search.evaluate import CELL_BUDGET, chunk_size

cloudpickle.register_pickle_by_value(toy)  # worker processes cannot import the tests package: send the class


@pytest.fixture(scope="module")
def client() -> Any:
    """Two worker processes on loopback, no dashboard: what CI can run without a network."""
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                       dashboard_address=None)
    c = distributed.Client(cluster, set_as_default=False)
    yield c
    c.close()
    cluster.close()


def violations_problem(samples: int = 80) -> ViolationsProblem:
    table = synthetic_table(samples, seed=3)
    human = human_labels(table, noise=0.05, seed=3)
    space = SearchSpace.preset("ha", step=0.25, overlap=(0.0, 0.2), rule=(0.01, 0.4), match=(0.3, 0.45, 0.6))
    return ViolationsProblem(table, human, range(len(table.groups)), space)


def results(cal: Calibrator) -> dict[str, Any]:
    return {k: getattr(cal, k) for k in ("best_index_", "best_config_", "best_params_", "best_score_", "n_tied_",
                                         "tie_anchor_", "fold_best_", "fold_scores_", "heldout_score_", "heldout_ci_",
                                         "baselines_", "baseline_cis_", "baseline_fold_scores_", "warnings_")}


@pytest.mark.xdist_group("dask")  # one worker starts the module's cluster (make test: --dist loadgroup)
@pytest.mark.timeout(300)
@pytest.mark.parametrize("objective", ["kappa", "spearman"])
def test_dask_cluster_gives_exactly_the_local_results(client: Any, objective: str) -> None:
    problem = violations_problem()
    kw = dict(objective=objective, folds=4, seed=7, n_boot=200, chunk_size=24)  # 24 configs a chunk: many chunks
    local = Calibrator(**kw).fit(problem)
    seen: list[tuple[int, int]] = []

    class Bar:
        def update(self, done: int, total: int, message: str = "") -> None:
            seen.append((done, total))

    remote = Calibrator(engine=DaskEngine(client=client), **kw).fit(problem, progress=Bar())
    assert problem.space.n_configs > 10 * 24
    pd.testing.assert_frame_equal(local.cv_results_, remote.cv_results_, check_exact=True)
    assert repr(results(local)) == repr(results(remote))  # repr: exact floats, and NaN equals NaN
    assert repr(local.to_dict()) == repr(remote.to_dict())
    done = [d for d, t in seen if t == problem.space.n_configs]
    assert done == sorted(done) and done[-1] == problem.space.n_configs and len(set(done)) > 3  # per-chunk progress
    assert client.nthreads() and len(client.nthreads()) == 2


@pytest.mark.xdist_group("dask")  # one worker starts the module's cluster (make test: --dist loadgroup)
@pytest.mark.timeout(300)
def test_a_generic_item_objective_problem_on_dask_equals_local(client: Any) -> None:
    problem = toy.planted(n=600, seed=5)
    kw = dict(objective="auroc", folds=3, n_boot=100, chunk_size=7)
    local = Calibrator(**kw).fit(problem)
    remote = Calibrator(engine=DaskEngine(client=client), **kw).fit(problem)
    pd.testing.assert_frame_equal(local.cv_results_, remote.cv_results_, check_exact=True)
    assert (local.best_config_, local.heldout_score_, local.heldout_ci_) == \
        (remote.best_config_, remote.heldout_score_, remote.heldout_ci_)


def slow_square(shared: dict[str, float], chunk: int, tick: Any) -> int:
    time.sleep(shared["delays"][chunk])
    if tick is not None:
        tick(1.0)
    return chunk * chunk


@pytest.mark.xdist_group("dask")  # one worker starts the module's cluster (make test: --dist loadgroup)
@pytest.mark.parametrize("kind", ["local", "dask"])
def test_results_come_in_chunk_order_whatever_finishes_first(client: Any, kind: str) -> None:
    delays = [0.3, 0.0, 0.2, 0.0, 0.1, 0.0]
    eng = LocalEngine(3) if kind == "local" else DaskEngine(client=client)
    progress: list[float] = []
    out = list(eng.map_chunks(slow_square, list(range(6)), {"delays": delays}, weights=[1] * 6,
                              progress=progress.append))
    assert out == [0, 1, 4, 9, 16, 25]
    assert progress == sorted(progress) and progress[-1] == 6


@pytest.mark.xdist_group("timing")  # a wall-clock bound: not beside another such test (make test: --dist loadgroup)
def test_local_engine_cancel_stops_running_and_queued_chunks() -> None:
    started: list[int] = []
    stop = threading.Event()

    def work(_shared: Any, chunk: int, tick: Any) -> int:
        started.append(chunk)
        for _ in range(100):  # a long chunk that ticks
            time.sleep(0.01)
            tick(0.5)
        return chunk

    gen = LocalEngine(2, poll=0.02).map_chunks(work, list(range(50)), None, cancelled=stop.is_set)
    assert next(gen) == 0
    stop.set()
    t0 = time.perf_counter()
    with pytest.raises(Cancelled):
        list(gen)
    assert time.perf_counter() - t0 < 1.5 and len(started) < 10


@pytest.mark.xdist_group("dask")  # one worker starts the module's cluster (make test: --dist loadgroup)
def test_dask_engine_cancel_cancels_futures(client: Any) -> None:
    calls = {"n": 0}

    def cancelled() -> bool:
        calls["n"] += 1
        return calls["n"] > 3

    gen = DaskEngine(client=client).map_chunks(slow_square, list(range(40)), {"delays": [0.2] * 40},
                                                cancelled=cancelled)
    with pytest.raises(Cancelled):
        list(gen)
    time.sleep(0.5)
    assert not any(k.startswith("concord-chunk") for k in client.who_has())  # nothing left on the cluster


@pytest.mark.xdist_group("dask")  # one worker starts the module's cluster (make test: --dist loadgroup)
def test_cancel_from_the_calibrator_progress_object_works_on_dask(client: Any) -> None:
    problem = violations_problem(40)

    class CancelAfterFirstChunk:
        def update(self, done: int, total: int, message: str = "") -> None:
            self.done = done

        def cancelled(self) -> bool:
            return getattr(self, "done", 0) > 0

    with pytest.raises(Cancelled):
        Calibrator(engine=DaskEngine(client=client), chunk_size=24, n_boot=10).fit(problem, progress=CancelAfterFirstChunk())


def test_engine_names_and_missing_dask_message(monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(make_engine("local"), LocalEngine)
    with pytest.raises(EngineError, match="only applies to --engine dask"):
        make_engine("local", "tcp://127.0.0.1:1")
    with pytest.raises(EngineError, match="expected one of"):
        make_engine("spark")
    with pytest.raises(ValueError, match="engine: expected one of"):
        Calibrator(engine="ray").fit(toy.planted(n=60))
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if the extra were not installed
    with pytest.raises(EngineError, match=r"pip install 'concord\[dask\]'"):
        make_engine("dask")


def test_unreachable_scheduler_is_a_clear_error() -> None:
    with pytest.raises(EngineError, match="cannot reach the Dask scheduler"):
        DaskEngine("tcp://127.0.0.1:9", timeout=2)


def test_chunks_stay_within_the_cell_budget_so_memory_does_not_grow_with_the_grid() -> None:
    problem = violations_problem(40)
    cal = Calibrator(folds=4, n_boot=0)
    layout = cal._layout(problem, cal._validate_params())
    size = chunk_size(problem, cal._validate_params(), layout.item_unit.size, 1 << 20, layout.n_cells)
    assert size * layout.n_cells * 4 <= CELL_BUDGET < (size + 1) * layout.n_cells * 4
    running: list[int] = []
    peak = {"n": 0}
    lock = threading.Lock()

    def work(_s: Any, chunk: int, _t: Any) -> int:
        with lock:
            running.append(chunk)
            peak["n"] = max(peak["n"], len(running))
        time.sleep(0.01)
        with lock:
            running.remove(chunk)
        return chunk

    started: list[int] = []

    def counted(s: Any, chunk: int, t: Any) -> int:
        started.append(chunk)
        return work(s, chunk, t)

    for i in LocalEngine(2).map_chunks(counted, list(range(30)), None):
        assert len(started) - (i + 1) <= 2  # a slow consumer: finished chunks do not pile up beyond workers + 1
        time.sleep(0.02)
    assert peak["n"] <= 2 and len(started) == 30
