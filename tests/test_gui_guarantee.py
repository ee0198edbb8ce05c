"""The calibration panel's guaranteed-agreement box (issue #26 item 4): Guarantee runs `calibrate --guarantee` for
the chosen scheme in a worker and shows the stored band's sentence and its coverage/agreement curve, in a window
the calibration panel's button opens; the newest guarantee run is shown when it opens again; the queue combo
offers the `deferred` order."""
from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QPushButton

from app.gui.calibration_panel import CalibrationPanel
from app.gui.guarantee_panel import GuaranteeWindow, open_for
from tests.gui_data import open_window, settings  # noqa: F401 - fixtures
from tests.test_calibrate_guarantee_cli import make_judge_project


@pytest.mark.timeout(300)
def test_guarantee_box_certifies_and_shows_the_sentence_and_curve(qtbot, open_window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path, _scores, _human = make_judge_project(tmp_path)
    w = open_window(path)
    panel = CalibrationPanel.open_for(w.panels)
    qtbot.addWidget(panel)
    page = panel.page
    qtbot.waitUntil(lambda: page.task is None and bool(page.info), timeout=60000)
    qtbot.mouseClick(panel.findChild(QPushButton, "open_guarantee"), Qt.MouseButton.LeftButton)
    box = panel.findChild(GuaranteeWindow).box
    assert panel.current_scheme().name == "judge" and box.sentence.text() == "" and box.chart.coverage == []
    box.target.setCurrentIndex(box.target.findData(0.85))
    qtbot.mouseClick(box.button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: box.task is None, timeout=120000)
    run = w.project.artifacts.calibration_runs()[-1]
    g = run["result"]["guarantee"]
    assert g["target"] == 0.85 and g["calibration_samples"] == 120
    text = box.sentence.text()
    assert text.startswith(g["sentence"][:1].upper() + g["sentence"][1:] + ".") and "at >= 85% agreement" in text
    assert box.chart.coverage == [c["coverage"] for c in g["curve"]] and len(box.chart.coverage) > 10
    assert box.chart.chosen == (g["coverage"] if g["certified"] else None) and box.chart.target == 0.85
    window = panel.findChild(GuaranteeWindow)
    window.close()
    window.box.show_guarantee(None)
    # opened again: the newest guarantee run is shown without running anything
    assert open_for(panel) is window and window.isVisible() and window.box.sentence.text() == text
    panel.close()  # closes its guarantee window too
    assert not window.isVisible()
    combo = w.findChild(QComboBox, "queue_order")
    assert "deferred" in [combo.itemData(i) for i in range(combo.count())]
