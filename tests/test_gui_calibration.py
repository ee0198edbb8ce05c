"""Calibration panel: runs in the background, shows top configs, heatmap and curve, applies a config, and opens
a disagreement in the review window."""
from __future__ import annotations

import math

from PySide6.QtCore import Qt

from app.schemes.violations.corrections import link, set_matches
from app.gui.calibration_panel import CalibrationPanel
from tests.gui_data import C1, C2, open_window, project_path, settings  # noqa: F401 - fixtures


def _label(w) -> None:  # type: ignore[no-untyped-def]
    """Human decisions on every violations unit (v2's human link differs from what a strict metric proposes)."""
    s = w.session
    s.do(set_matches("v1", C1, [(0, 0)], "accepted", "accept"))
    s.do(set_matches("v1", C2, [(1, 0)], "accepted", "accept"))
    s.do(link("v2", C1, [], (0, 0)))
    s.do(set_matches("v3", C1, [(0, 0)], "accepted", "accept"))
    s.do(set_matches("v3", C2, [], "accepted", "accept"))


def test_calibration_panel_runs_applies_and_opens_disagreements(qtbot, qtmodeltester, open_window, project_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    asked = []
    monkeypatch.setattr("app.gui.calibration_verdict.confirm_force", lambda _p, result: asked.append(result) or True)
    w = open_window(project_path)
    _label(w)
    panel = CalibrationPanel.open_for(w.panels)
    qtbot.addWidget(panel)
    assert CalibrationPanel.open_for(w.panels) is panel  # one panel per window
    assert "No calibration run yet" in panel.page.summary.text()
    panel.page.folds.setValue(2)
    panel.page.step.setCurrentText("0.25")
    panel.page.run()
    assert not panel.page.run_button.isEnabled()  # running in the background; the UI stays responsive
    qtbot.waitUntil(lambda: panel.task is None, timeout=120000)
    assert panel.page.run_button.isEnabled()
    assert panel.page.results.headline.text().startswith("Held-out kappa of the calibrated config: ")
    assert panel.page.verdict.text().startswith("The calibrated config is ")  # the verdict, above the summary
    assert panel.page.verdict.y() < panel.page.results.headline.y() < panel.page.summary.y()
    qtmodeltester.check(panel.page.top_model, force_py=True)
    assert panel.page.top_model.rowCount() > 10
    best = panel.page.top_model.record(0)
    assert best["rank"] == 1
    runs = w.project.artifacts.calibration_runs()
    assert len(runs) == 1 and runs[0]["objective"] == "kappa"
    assert panel.page.heatmap.values and len(panel.page.heatmap.values) == len(panel.page.heatmap.y_values)
    assert panel.page.curve.xs == sorted(panel.page.curve.xs) and len(panel.page.curve.xs) > 1

    panel.page.apply_name.setText("tuned")
    panel.page.apply_selected()
    assert "tuned@1.0.0" in w.project.store("violations").match_config_refs()
    promoted = panel.page.result["gain"]["promoted"]
    assert len(asked) == (0 if promoted else 1) and ("forced" in panel.page.summary.text()) is not promoted
    assert w._config.ref == "tuned@1.0.0" and w.config_box.currentText() == "tuned@1.0.0"

    # disagreements are listed and open the pair in the review window
    panel.page.top_table.selectRow(panel.page.top_model.rowCount() - 1)  # the worst config disagrees somewhere
    qtbot.waitUntil(lambda: panel.page.dis_model.rowCount() > 0, timeout=5000)
    rec = panel.page.dis_model.record(0)
    panel.page.open_disagreement(panel.page.dis_model.index(0, 0))
    assert w.current_view.current() == (rec["sample_id"], rec["checker"])
    assert w.current_view.selected_pair() == (rec["gt"], rec["pred"])
    panel.close()


def test_panel_shows_the_latest_stored_run(qtbot, open_window, project_path) -> None:  # type: ignore[no-untyped-def]
    w = open_window(project_path)
    _label(w)
    first = CalibrationPanel(w.panels)
    qtbot.addWidget(first)
    first.page.folds.setValue(2)
    first.page.objective.setCurrentText("f1")
    first.page.run()
    qtbot.waitUntil(lambda: first.task is None, timeout=120000)
    first.close()
    again = CalibrationPanel(w.panels)  # a new panel loads the stored run and rebuilds the pairs in a worker
    qtbot.addWidget(again)
    assert "objective f1" in again.page.summary.text()
    qtbot.waitUntil(lambda: again.task is None, timeout=60000)
    assert again.page.top_model.rowCount() > 0 and again.page.table is not None
    qtbot.keyClick(again.page.top_table, Qt.Key.Key_Down)
    assert again.page.selected == again.page.top_model.record(1)


def test_top_configs_show_the_ranking_column_and_enough_decimals(qtbot, open_window, project_path) -> None:  # type: ignore[no-untyped-def]
    """QA: "All labeled" at 2 decimals read the same on every row, so the order looked arbitrary, and the charts'
    y ticks split a padded range (1.05, 0.76, 0.48). The ranking column says so and tells neighbouring ranks
    apart; the ticks are round."""
    w = open_window(project_path)
    _label(w)
    panel = CalibrationPanel.open_for(w.panels)
    qtbot.addWidget(panel)
    panel.page.folds.setValue(2)
    panel.page.step.setCurrentText("0.25")
    panel.page.run()
    qtbot.waitUntil(lambda: panel.task is None, timeout=120000)
    m = panel.page.top_model
    titles = [m.headerData(c, Qt.Orientation.Horizontal) for c in range(m.columnCount())]
    ranked = titles.index("All labeled, in-sample")
    assert "Cross-validated" in titles
    shown = [m.data(m.index(r, ranked)) for r in range(m.rowCount())]
    scores = [m.record(r)["score"] for r in range(m.rowCount())]
    assert all(len(s.split(".")[1]) >= 3 for s in shown)
    for (a, b), (sa, sb) in zip(zip(scores, scores[1:]), zip(shown, shown[1:])):
        assert (a == b) == (sa == sb)  # different scores read differently
        assert a >= b  # and the rows follow this column
    panel.page.curve.grab()
    _assert_round(panel.page.curve.tick_labels, min(panel.page.curve.ys), max(panel.page.curve.ys))
    panel.close()


def _assert_round(labels: list[str], lo: float, hi: float) -> None:
    values = [float(t) for t in labels]
    steps = {round(b - a, 9) for a, b in zip(values, values[1:])}
    assert len(steps) == 1 and values[0] <= lo and values[-1] >= hi
    step = steps.pop()
    mantissa = step / 10 ** math.floor(math.log10(step))
    assert round(mantissa, 6) in (1, 2, 2.5, 5)
    assert all(round(v / step, 6) == round(v / step) for v in values)  # ticks on multiples of the step


def test_learning_curve_ticks_are_round(qtbot) -> None:  # type: ignore[no-untyped-def]
    from app.gui.charts import IntervalChart

    chart = IntervalChart()
    qtbot.addWidget(chart)
    chart.resize(400, 240)
    chart.set_data([10, 20, 40], [0.62, 0.81, 0.93], [0.48, 0.7, 0.86], [0.75, 0.9, 1.0], "labeled units", "kappa")
    chart.grab()
    assert chart.tick_labels == ["0.4", "0.6", "0.8", "1.0"]
    _assert_round(chart.tick_labels, 0.48, 1.0)


def test_ranked_scores_read_differently_when_they_differ() -> None:
    from app.gui.models import RecordTableModel, ranked_score_columns

    rows = [{"score": 0.9551, "mean_test_score": 0.955}, {"score": 0.9549, "mean_test_score": 0.961},
            {"score": 0.95485, "mean_test_score": 0.961}, {"score": 0.95485, "mean_test_score": 0.9612}]
    m = RecordTableModel(ranked_score_columns([r["score"] for r in rows], [r["mean_test_score"] for r in rows]))
    m.set_records(rows)
    assert [m.data(m.index(r, 0)) for r in range(4)] == ["0.9551", "0.9549", "0.9548", "0.9548"]
    assert [m.data(m.index(r, 1)) for r in range(4)] == ["0.9550", "0.9610", "0.9610", "0.9612"]
    assert m.headerData(0, Qt.Orientation.Horizontal) == "All labeled, in-sample"
