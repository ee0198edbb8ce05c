"""Issue #16: the labeling queue's orders (deterministic for a seed, labeled units skipped), `N` following the
chosen order with a real key press, and the learning curve whose last point is the full calibration."""
from __future__ import annotations

import numpy as np
import pandas as pd
from PySide6.QtCore import Qt

from app.services.queue import build
from app.store import Project
from calibration import learning
from calibration import queue as q
from calibration.search import Calibrator
from tests.gui_data import C1, open_window, project_path, settings  # noqa: F401 - fixtures


def _bench():  # type: ignore[no-untyped-def]
    """The benchmark's planted problem (benchmarks/ is not a package)."""
    import importlib.util
    import sys
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_queue.py"
    spec = importlib.util.spec_from_file_location("bench_queue", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["bench_queue"] = mod
    spec.loader.exec_module(mod)
    return mod


_B = _bench()
draw, PLANTED, problem = _B.draw, _B.PLANTED, _B.problem


def _planted(n: int = 300, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    feats, human = draw(n, rng, PLANTED, 0.02)
    return feats, human, rng.choice(np.array(["a", "b", "c"]), n)


def test_model_orders_deterministic_and_skip_labeled() -> None:
    feats, human, cats = _planted()
    labeled = np.zeros(len(human), dtype=bool)
    labeled[q.random_order(~labeled, 1)[:60]] = True
    cal = Calibrator(folds=5, n_boot=0, min_units=0, min_positives=0).fit(
        problem(feats, human, np.flatnonzero(labeled), cats))
    cand = problem(feats, human, np.arange(len(human)), cats, labeled)
    machine = problem(feats, 1 - human, np.arange(len(human)), cats, np.ones(len(human), dtype=bool))
    for order in ("disagreement", "boundary", "metric-vs-llm"):
        runs = [q.order_by(*q.model_scores(cand, cal.cv_results_, cal.best_config_, order, machine)[:1], ~labeled, 7,
                           q.model_scores(cand, cal.cv_results_, cal.best_config_, order, machine)[1])
                for _ in range(2)]
        assert np.array_equal(runs[0], runs[1]), order
        assert not labeled[runs[0]].any() and len(runs[0]) == (~labeled).sum(), order
    dis, _ = q.model_scores(cand, cal.cv_results_, cal.best_config_, "disagreement")
    top = q.order_by(dis, ~labeled, 7)[:20]
    # the committee disputes units near the planted boundary: their scores are higher than a random unit's
    score = feats @ np.array([PLANTED["a"], PLANTED["b"], PLANTED["c"]])
    assert np.abs(score[top] - PLANTED["t"]).mean() < np.abs(score[~labeled] - PLANTED["t"]).mean() / 2
    mv, _ = q.model_scores(cand, cal.cv_results_, cal.best_config_, "metric-vs-llm", machine)
    assert mv.max() == 1.0  # the machine says the opposite of the humans: it disagrees with a good metric


def test_pure_orders_seeded() -> None:
    eligible = np.array([True, False, True, True, False, True, True, True])
    strata = ["x", "x", "y", "y", "y", "z", "x", "z"]
    for fn in (lambda s: q.random_order(eligible, s), lambda s: q.stratified_order(strata, eligible, s, ~eligible)):
        a, b = fn(3), fn(3)
        assert np.array_equal(a, b) and set(a.tolist()) == set(np.flatnonzero(eligible).tolist())
    assert any(not np.array_equal(q.random_order(eligible, s), q.random_order(eligible, 0)) for s in range(1, 6))
    first = q.stratified_order(strata, eligible, 0, ~eligible)[:3]
    assert sorted(strata[i] for i in first) == ["x", "y", "z"]  # one of each stratum first


def test_service_orders_skip_labeled(project_path) -> None:  # noqa: F811
    with Project.open(project_path) as p:
        p.decisions.ensure_annotator("t")
        from app.corrections import set_status

        before = build(p, "list")
        assert before.keys()[0] == ("v1", C1)
        p.decisions.record("t", set_status("v1", C1, "accepted").changes)
        for order in ("list", "random", "stratified"):
            a, b = build(p, order, seed=4), build(p, order, seed=4)
            assert a.keys() == b.keys(), order
            assert ("v1", C1) not in a.keys(), order
            assert len(a.keys()) == before.n_unlabeled - 1, order


def test_n_follows_chosen_order(qtbot, open_window, project_path) -> None:  # noqa: F811
    w = open_window(project_path)
    w.queue.set_order("random")
    qtbot.waitUntil(lambda: bool(w.queue.keys), timeout=20000)
    expected = w.queue.keys
    with Project.open(project_path) as p:
        assert expected == build(p, "random", schemes=w.filters.schemes).keys()
    start = w._shown
    w.list.setFocus()
    qtbot.keyClick(w.list, Qt.Key.Key_N)
    first = next(k for k in expected if k != start)
    assert w._shown == first
    qtbot.keyClick(w.list, Qt.Key.Key_A)  # accept: labeled, so N skips it from now on (auto-advance moves on)
    assert w.project.decisions.current(*first, "status") == "accepted"
    cur = w._shown
    qtbot.keyClick(w.list, Qt.Key.Key_N)
    assert w._shown == next(k for k in expected if k not in (first, cur))
    w.queue.set_order("list")  # back to the list order: N walks down the list again
    qtbot.waitUntil(lambda: w.queue.keys == [], timeout=5000)


def test_curve_last_point_is_full_calibration() -> None:
    feats, human, cats = _planted(200, 2)
    order = np.random.default_rng(0).permutation(len(human))
    def fit(n: int) -> tuple[float, float, float]:
        cal = Calibrator(folds=5, n_boot=200, min_units=0, min_positives=0).fit(
            problem(feats, human, np.sort(order[:n]), cats))
        return cal.heldout_score_, *cal.heldout_ci_
    pts = learning.curve(learning.sizes(len(human), 40, 5), fit)
    full = Calibrator(folds=5, n_boot=200, min_units=0, min_positives=0).fit(
        problem(feats, human, np.arange(len(human)), cats))
    assert pts[-1].n == len(human) and pts[-1].score == full.heldout_score_
    assert (pts[-1].lo, pts[-1].hi) == tuple(full.heldout_ci_)
    stop = learning.stopping(pts, 0.05)
    assert stop.reached == (pts[-1].half_width <= 0.05)
    if not stop.reached:
        assert stop.more >= 1 and stop.needed == stop.n + stop.more and "more labels" in stop.message()
    assert learning.stopping(pts, 10.0).reached and "Target reached" in learning.stopping(pts, 10.0).message()


def test_service_metric_vs_llm_scores_the_problem_built_from_machine_labels(tmp_path) -> None:
    """metric-vs-llm builds the scheme's problem once, from the machine labels: its queue ranks first the units
    where the machine's label and the calibrated metric disagree (computed here from the library directly)."""
    from app.cli import main
    from app.services import queue as service
    from calibration.schemes.base import get
    from tests.test_calibrate_guarantee_cli import make_judge_project

    path, _scores, _human = make_judge_project(tmp_path)
    assert main(["calibrate", str(path), "--scheme", "judge", "--judge", "a", "--bootstrap", "20", "--json"]) == 0
    with Project.open(path) as p:
        scheme = get("judge")
        run = service.last_run(p, "judge")
        machine = service.candidates(p, scheme, run["params"]["options"], labels=service.machine_labels(p, scheme))
        cv = p.artifacts.calibration_cv_results(run["id"])
        best = {c: v for c, v in run["result"]["best"]["config"].items() if c in machine.space.columns}
        want, _ = q.model_scores(machine, cv, best, "metric-vs-llm", machine)
        got = service.build(p, "metric-vs-llm", schemes=["judge"], seed=0)
    assert got.notes == [] and 0 < (want > 0).sum() < len(want)  # some units disputed, not all
    disputed = {k for k, s in zip(service.unit_keys(machine), want) if s > 0}
    n = len(disputed & set(got.keys()))
    assert n > 0 and set(got.keys()[:n]) == disputed & set(got.keys())  # the disputed unlabeled units come first
