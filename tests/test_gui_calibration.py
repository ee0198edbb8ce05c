"""Calibration panel: runs in the background, shows top configs, heatmap and curve, applies a config, and opens
a disagreement in the review window."""
from __future__ import annotations

from PySide6.QtCore import Qt

from app.corrections import link, set_matches
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


def test_calibration_panel_runs_applies_and_opens_disagreements(qtbot, qtmodeltester, open_window, project_path) -> None:  # type: ignore[no-untyped-def]
    w = open_window(project_path)
    _label(w)
    panel = CalibrationPanel.open_for(w)
    qtbot.addWidget(panel)
    assert CalibrationPanel.open_for(w) is panel  # one panel per window
    assert "No calibration run yet" in panel.summary.text()
    panel.folds.setValue(2)
    panel.step.setCurrentText("0.25")
    panel.run()
    assert not panel.run_button.isEnabled()  # running in the background; the UI stays responsive
    qtbot.waitUntil(lambda: panel.task is None, timeout=120000)
    assert panel.run_button.isEnabled()
    assert "Held-out score" in panel.summary.text()
    qtmodeltester.check(panel.top_model, force_py=True)
    assert panel.top_model.rowCount() > 10
    best = panel.top_model.record(0)
    assert best["rank"] == 1
    runs = w.project.calibration_runs()
    assert len(runs) == 1 and runs[0]["objective"] == "kappa"
    assert panel.heatmap.values and len(panel.heatmap.values) == len(panel.heatmap.y_values)
    assert panel.curve.xs == sorted(panel.curve.xs) and len(panel.curve.xs) > 1

    panel.apply_name.setText("tuned")
    panel.apply_selected()
    assert "tuned@1.0.0" in w.project.match_config_refs()
    assert w._config.ref == "tuned@1.0.0" and w.config_box.currentText() == "tuned@1.0.0"

    # disagreements are listed and open the pair in the review window
    panel.top_table.selectRow(panel.top_model.rowCount() - 1)  # the worst config disagrees somewhere
    qtbot.waitUntil(lambda: panel.dis_model.rowCount() > 0, timeout=5000)
    rec = panel.dis_model.record(0)
    panel.open_disagreement(panel.dis_model.index(0, 0))
    assert w.current_view.current() == (rec["sample_id"], rec["checker"])
    assert w.current_view.selected_pair() == (rec["gt"], rec["pred"])
    panel.close()


def test_panel_shows_the_latest_stored_run(qtbot, open_window, project_path) -> None:  # type: ignore[no-untyped-def]
    w = open_window(project_path)
    _label(w)
    first = CalibrationPanel(w)
    qtbot.addWidget(first)
    first.folds.setValue(2)
    first.objective.setCurrentText("f1")
    first.run()
    qtbot.waitUntil(lambda: first.task is None, timeout=120000)
    first.close()
    again = CalibrationPanel(w)  # a new panel loads the stored run and rebuilds the pairs in a worker
    qtbot.addWidget(again)
    assert "objective f1" in again.summary.text()
    qtbot.waitUntil(lambda: again.task is None, timeout=60000)
    assert again.top_model.rowCount() > 0 and again.table is not None
    qtbot.keyClick(again.top_table, Qt.Key.Key_Down)
    assert again.selected == again.top_model.record(1)
