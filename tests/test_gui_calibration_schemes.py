"""Calibration panel for every scheme (issues #11 item 5, #16 items 2-3, #17 item 4, #15): a non-match scheme of the
demo (TRACe) runs through the generic service and shows its held-out score next to the presets; Apply stores the
selected config's parameters; the learning curve's last point is the run's held-out score; the engine settings
persist; the human ceiling shows where two annotators labeled the same units."""
from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from app.gui.calibration_engine import ENGINE_KEY, SCHEDULER_KEY
from app.gui.calibration_panel import CalibrationPanel
from app.gui.ceiling_chart import bars
from app.schemes.violations.views_calibration import MatchPage
from app.io.demo import create_demo
from app.services.schemes import scheme_options
from app.store import Change, Project
from calibration.schemes.base import registry
from tests.gui_data import open_window, settings  # noqa: F401 - fixtures

TRACE = registry().get("trace")


@pytest.fixture
def demo_path(tmp_path: Path) -> Path:
    path = tmp_path / "demo.concord"
    create_demo(path).close()
    return path


def _choose(qtbot, panel: CalibrationPanel, name: str) -> None:  # type: ignore[no-untyped-def]
    """Pick a scheme in the combo with the keyboard and wait for its problem to be built."""
    box = panel.scheme_box
    box.setFocus()
    while box.currentData() != name:
        before = box.currentIndex()
        qtbot.keyClick(box, Qt.Key.Key_Down)
        assert box.currentIndex() != before, f"{name} is not offered"
    qtbot.waitUntil(lambda: panel.scheme_page.task is None and bool(panel.scheme_page.info), timeout=60000)


@pytest.mark.timeout(300)
def test_panel_calibrates_trace_applies_and_draws_the_learning_curve(qtbot, open_window, demo_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr("app.gui.calibration_verdict.confirm_force", lambda *_a: True)  # Apply asks (tests/test_gui_calibration_gain.py)
    w = open_window(demo_path)
    panel = CalibrationPanel.open_for(w.panels)
    qtbot.addWidget(panel)
    names = [panel.scheme_box.itemData(i) for i in range(panel.scheme_box.count())]
    assert names[0] == panel.scheme_box.currentData() and isinstance(panel.page, MatchPage)
    assert "trace" in names and "rubric" not in names  # rubric says calibrates = False
    qtbot.waitUntil(lambda: panel.task is None, timeout=60000)

    _choose(qtbot, panel, "trace")
    page = panel.scheme_page
    assert panel.pages.currentWidget() is page
    with Project.open(demo_path) as p:  # what the controls offer comes from the problem itself
        problem = TRACE.search_problem(p.scheme_data.scheme_records("trace"), p.scheme_data.scheme_labels("trace"),
                                       scheme_options(p, TRACE, {}))
    assert page.objective.itemText(0) == (getattr(problem, "objective", None) or "kappa")
    assert page.objective.currentText() == page.objective.itemText(0)
    assert page.run_button.isEnabled() and "Runs on: this machine" in page.runs_on.text()
    page.folds.setValue(3)
    qtbot.mouseClick(page.run_button, Qt.MouseButton.LeftButton)
    assert not page.run_button.isEnabled()
    qtbot.waitUntil(lambda: page.task is None, timeout=120000)

    run = w.project.artifacts.calibration_runs()[-1]
    result = run["result"]
    assert run["params"]["scheme"] == "trace" and result["folds"] == 3
    rows = page.base_model.records()
    assert rows[0]["config"] == "calibrated"
    assert sorted(r["config"] for r in rows[1:]) == sorted(problem.baselines())  # every preset, on the same folds
    assert rows[0]["score"] == result["heldout"]["score"] and rows[0]["ci"] == result["heldout"]["ci"]
    for r in rows[1:]:
        assert r["score"] == result["baselines"][r["config"]] and r["ci"] == result["baselines_ci"][r["config"]]
    assert f"{result['heldout']['score']:.3f}" in page.results.headline.text()
    if result["best"]["n_tied"] > 1:
        assert f"{result['best']['n_tied']:,} configs tie" in page.tie.text()
        assert str(result["best"]["tie_anchor"]) in page.tie.text()
    titles = [page.top_model.headerData(i, Qt.Orientation.Horizontal) for i in range(page.top_model.columnCount())]
    assert set(problem.space.config(0)) <= set(titles)  # the space's dimensions are columns
    assert page.top_model.rowCount() == min(200, result["n_configs"])

    # Apply: the best row saves the run's best params; another row saves that config's params
    page.apply_name.setText("tuned")
    qtbot.mouseClick(page.apply_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.task is None, timeout=60000)
    assert w.project.scheme_data.load_params("trace", "tuned@1.0.0") == result["best"]["params"]
    page.top_table.setFocus()
    page.top_table.selectRow(0)
    for _ in range(3):
        qtbot.keyClick(page.top_table, Qt.Key.Key_Down)
    other = page.selected
    assert other is page.top_model.record(3)
    page.apply_selected()
    qtbot.waitUntil(lambda: page.task is None, timeout=60000)
    assert w.project.scheme_data.load_params("trace", "tuned@1.1.0") == problem.to_params(problem.space.config(other["_id"]))
    assert "tuned@1.1.0" in page.summary.text()

    # the learning curve runs the same search; its last point is the full run
    qtbot.mouseClick(panel.curve_box.button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.curve_box.task is None, timeout=120000)
    pts = panel.curve_box.chart.points()
    assert len(pts) >= 2 and pts[-1][0] == panel.curve_box.result["n_labeled"]
    assert pts[-1][1] == pytest.approx(result["heldout"]["score"], abs=1e-12)
    assert [pts[-1][2], pts[-1][3]] == pytest.approx(result["heldout"]["ci"], abs=1e-12)
    text = panel.curve_box.sentence.text()
    assert text == panel.curve_box.result["stopping"]["message"].strip() or text.startswith(
        panel.curve_box.result["stopping"]["message"])
    assert ("more labels" in text) or text.startswith("Target reached")

    # switching back keeps the match metric's page and controls
    _back = panel.scheme_box.findData(names[0])
    panel.scheme_box.setCurrentIndex(_back)
    assert isinstance(panel.page, MatchPage) and panel.page.components.count() == 2
    panel.close()


def test_engine_settings_persist_and_say_where_runs_go(qtbot, open_window, demo_path, settings) -> None:  # type: ignore[no-untyped-def]
    w = open_window(demo_path)
    panel = CalibrationPanel(w.panels)
    qtbot.addWidget(panel)
    panel.show()
    qtbot.waitExposed(panel)
    panel.activateWindow()
    qtbot.waitUntil(panel.isActiveWindow, timeout=3000)
    es = panel.engine_settings
    assert not es.address.isEnabled() and panel.engine_options() == {"engine": "local"}
    es.engine.setCurrentIndex(es.engine.findData("dask"))
    assert es.address.isEnabled()
    assert "local Dask cluster" in panel.page.embedding.text()
    es.address.setFocus()
    qtbot.keyClicks(es.address, "tcp://10.1.2.3:8786")
    qtbot.keyClick(es.address, Qt.Key.Key_Return)
    assert settings.value(SCHEDULER_KEY) == "tcp://10.1.2.3:8786" and settings.value(ENGINE_KEY) == "dask"
    assert "Runs on: tcp://10.1.2.3:8786" in panel.page.embedding.text()
    qtbot.waitUntil(lambda: panel.task is None, timeout=60000)
    panel.close()
    again = CalibrationPanel(w.panels)  # a new panel reads the stored settings
    qtbot.addWidget(again)
    assert again.engine_settings.address.text() == "tcp://10.1.2.3:8786"
    assert again.engine_settings.engine.currentData() == "dask"
    assert again.engine_options() == {"engine": "dask", "scheduler": "tcp://10.1.2.3:8786"}
    assert "Runs on: tcp://10.1.2.3:8786" in again.page.embedding.text()
    again.engine_settings.engine.setCurrentIndex(0)  # back to local: the address is kept but not used
    assert again.engine_options() == {"engine": "local"} and settings.value(SCHEDULER_KEY) == "tcp://10.1.2.3:8786"
    assert "Runs on: this machine" in again.page.embedding.text()
    qtbot.waitUntil(lambda: again.task is None, timeout=60000)
    again.close()


def test_human_ceiling_shows_under_another_schemes_page(qtbot, open_window, demo_path) -> None:  # type: ignore[no-untyped-def]
    """The ceiling chart (ceiling_chart.py) sits beside the learning curve, visible whichever scheme is chosen, and
    carries the chosen scheme's ceiling when a second annotator labeled some of its units."""
    from app.services.ceiling import ceiling

    with Project.open(demo_path) as p:  # a second annotator labels four TRACe samples, differently on one
        rows = [r for r in p.decisions.annotator_label_rows() if r[0] == "trace" and r[2] == "" and r[3] in TRACE.label_kinds]
        sids = sorted({r[1] for r in rows})[:4]
        for sid, unit, kind, value in ((r[1], r[2], r[3], r[5]) for r in rows if r[1] in sids):
            if kind == "relevant" and sid == sids[0]:
                value = list(value)[:1]
            p.decisions.record("bea", [Change(sid, unit, kind, value)])
        expected = ceiling(p, "trace", n_boot=500)
    assert expected is not None and expected["annotators"] == 2
    w = open_window(demo_path)
    panel = CalibrationPanel.open_for(w.panels)
    qtbot.addWidget(panel)
    _choose(qtbot, panel, "trace")
    qtbot.waitUntil(lambda: bool(panel.ceiling.results), timeout=60000)
    assert panel.ceiling.isVisible() and panel.pages.currentWidget() is panel.scheme_page
    assert panel.ceiling.results["trace"]["human_human"] == expected["human_human"]
    qtbot.waitUntil(lambda: panel.task is None, timeout=60000)
    panel.close()


def test_scheme_without_labels_says_there_is_nothing_to_calibrate(qtbot, open_window, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A TRACe-only project nobody labeled: the scheme is listed (and chosen: there is no match metric), its page
    says why there is nothing to search, and Run stays off."""
    from tests.test_trace_evaluate import make

    recs, _ = make()
    path = tmp_path / "p.concord"
    with Project.create(path) as p:
        p.samples.write_samples("trace", recs)
    w = open_window(path)
    panel = CalibrationPanel(w.panels)
    qtbot.addWidget(panel)
    assert [panel.scheme_box.itemData(i) for i in range(panel.scheme_box.count())] == ["trace"]
    assert panel.pages.currentWidget() is panel.scheme_page
    qtbot.waitUntil(lambda: panel.scheme_page.task is None and bool(panel.scheme_page.info), timeout=60000)
    assert "nothing to calibrate yet" in panel.scheme_page.space_label.text()
    assert not panel.scheme_page.run_button.isEnabled() and panel.scheme_page.objective.count() == 0
    panel.scheme_page.run()  # refused quietly: no task starts
    assert panel.scheme_page.task is None and w.project.artifacts.calibration_runs() == []
    panel.curve_box.run()  # no objective yet: nothing to re-run
    assert panel.curve_box.task is None
    panel.close()


def test_ceiling_chart_shows_the_metric_side_as_evaluate_reports_it(qtbot, open_window, demo_path, capsys) -> None:  # type: ignore[no-untyped-def]
    """QA: the chart used the stored machine labels only, so the violations metric side read "no figure" on the demo
    while `concord evaluate --json` gives it from the matcher's decisions; now both get the same figures."""
    import json

    from app.cli import main

    assert main(["evaluate", str(demo_path), "--scheme", "violations", "--bootstrap", "500", "--json"]) == 0
    want = json.loads(capsys.readouterr().out)["violations"]["human_ceiling"]
    assert want["metric_human"] is not None and want["metric_human"]["items"] > 0
    w = open_window(demo_path)
    panel = CalibrationPanel.open_for(w.panels)
    qtbot.addWidget(panel)
    qtbot.waitUntil(lambda: bool(panel.ceiling.results), timeout=60000)
    got = panel.ceiling.results["violations"]
    assert got["metric_human"] == want["metric_human"]
    assert got["human_human"] == want["human_human"]
    metric = [ci for s, who, ci in bars(panel.ceiling.results) if s == "violations" and who == "metric"]
    assert metric == [want["metric_human"]["kappa_vs_resolved"]]
    qtbot.waitUntil(lambda: panel.task is None, timeout=60000)
    panel.close()


def test_the_match_config_box_shows_only_for_schemes_whose_scores_follow_it(open_window, demo_path: Path) -> None:  # noqa: F811
    """Issue #25: the violations config box (and its "no machine scores" hint) showed in every scheme's view."""
    w = open_window(demo_path)
    box = w.filters.scheme
    shown = {}
    for name in ("trace", "rgb", "addm", "rubric", "judge", "violations", None):
        box.setCurrentIndex(box.findData(name))
        shown[name] = any(a.isVisible() for a in w.configs.actions)
        if name not in ("violations", None):
            assert not w.messages.has("hint_scores"), name
    assert shown == {"trace": False, "rgb": False, "addm": False, "rubric": False, "judge": False,
                     "violations": True, None: True}
