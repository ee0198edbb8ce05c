"""The calibration panel's guaranteed-agreement box (issue #26 item 4): Guarantee runs `calibrate --guarantee` for
the chosen scheme in a worker and shows the stored band's sentence and its coverage/agreement curve; a scheme's
newest guarantee run is shown when the panel opens; the queue combo offers the `deferred` order."""
from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox

from app.gui.calibration_panel import CalibrationPanel
from tests.gui_data import open_window, settings  # noqa: F401 - fixtures
from tests.test_calibrate_guarantee_cli import make_judge_project


@pytest.mark.timeout(300)
def test_guarantee_box_certifies_and_shows_the_sentence_and_curve(qtbot, open_window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path, _scores, _human = make_judge_project(tmp_path)
    w = open_window(path)
    panel = CalibrationPanel.open_for(w)
    qtbot.addWidget(panel)
    page, box = panel.page, panel.guarantee
    qtbot.waitUntil(lambda: page.task is None and bool(page.info), timeout=60000)
    assert panel.current_scheme().name == "judge" and box.sentence.text() == "" and box.chart.coverage == []
    box.target.setValue(0.85)
    qtbot.mouseClick(box.button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: box.task is None, timeout=120000)
    run = w.project.calibration_runs()[-1]
    g = run["result"]["guarantee"]
    assert g["target"] == 0.85 and g["calibration_samples"] == 120
    text = box.sentence.text()
    assert text.startswith(g["sentence"][:1].upper() + g["sentence"][1:] + ".") and "at >= 85% agreement" in text
    assert box.chart.coverage == [c["coverage"] for c in g["curve"]] and len(box.chart.coverage) > 10
    assert box.chart.chosen == (g["coverage"] if g["certified"] else None) and box.chart.target == 0.85
    panel.close()
    # opened again: the newest guarantee run is shown without running anything
    w._calibration_panel = None
    again = CalibrationPanel.open_for(w)
    qtbot.addWidget(again)
    assert again.guarantee.sentence.text() == text
    qtbot.waitUntil(lambda: again.task is None, timeout=60000)
    again.close()
    combo = w.findChild(QComboBox, "queue_order")
    assert "deferred" in [combo.itemData(i) for i in range(combo.count())]
