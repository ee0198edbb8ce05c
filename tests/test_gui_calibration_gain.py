"""The calibration panel's verdict (issue #26 item 3): the first result line says, in words, whether the
calibrated config is better than the default on held-out data, as the stored run's gain says; Apply of a config
that is no better asks first and records a forced apply."""
from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from app.gui.calibration_panel import CalibrationPanel
from app.io.demo import create_demo
from calibration.search.gain import sentence
from tests.gui_data import open_window, settings  # noqa: F401 - fixtures


@pytest.fixture
def demo_path(tmp_path: Path) -> Path:
    path = tmp_path / "demo.concord"
    create_demo(path).close()
    return path


@pytest.mark.timeout(300)
def test_the_verdict_comes_first_and_apply_asks_when_not_better(qtbot, open_window, demo_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    answers: list[bool] = []
    asked: list[str] = []

    def confirm(_parent, result):  # type: ignore[no-untyped-def]
        asked.append(sentence(result["gain"], result["objective"]))
        return answers.pop(0)

    monkeypatch.setattr("app.gui.calibration_verdict.confirm_force", confirm)
    w = open_window(demo_path)
    panel = CalibrationPanel.open_for(w.panels)
    qtbot.addWidget(panel)
    qtbot.waitUntil(lambda: panel.task is None, timeout=60000)
    panel.scheme_box.setCurrentIndex(panel.scheme_box.findData("trace"))
    page = panel.scheme_page
    qtbot.waitUntil(lambda: page.task is None and bool(page.info), timeout=60000)
    assert page.verdict.text() == ""  # no run yet: no verdict
    page.folds.setValue(3)
    qtbot.mouseClick(page.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.task is None, timeout=120000)

    result = w.project.artifacts.calibration_runs()[-1]["result"]
    gain = result["gain"]
    assert gain["baseline"] == "ragbench" and not gain["promoted"]  # 20 labeled samples: the interval holds 0
    text = page.verdict.text()
    assert text == sentence(gain, result["objective"])
    assert text.startswith("The calibrated config is no better than the default (ragbench) on held-out data")
    # first: above the held-out score, the other figures, the summary and the warnings; the tables below the form
    texts = [page.verdict, page.results.headline, page.results.figures, page.summary, page.warnings]
    ys = [t.mapTo(page, t.rect().topLeft()).y() for t in texts]
    assert ys == sorted(ys) and len(set(ys)) == len(ys)
    assert page.verdict.isVisible() and page.base_table in page.results.findChildren(type(page.base_table))
    assert page.layout().indexOf(page.results) < page.layout().indexOf(page.top_table)

    page.apply_name.setText("tuned")
    answers.append(False)  # asked, declined: nothing saved
    qtbot.mouseClick(page.apply_button, Qt.MouseButton.LeftButton)
    assert asked == [text] and page.task is None
    assert not [r for r in w.project.scheme_data.param_refs("trace") if r.startswith("tuned@")]
    answers.append(True)  # asked, accepted: saved, and said to be forced
    qtbot.mouseClick(page.apply_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.task is None, timeout=60000)
    assert len(asked) == 2 and w.project.scheme_data.load_params("trace", "tuned@1.0.0") == result["best"]["params"]
    assert "Applied as tuned@1.0.0 (forced: no better than the default)" in page.summary.text()
    panel.close()


def test_a_run_stored_before_the_gain_says_so() -> None:
    from app.gui.calibration_verdict import needs_force, verdict_text

    assert verdict_text({"objective": "kappa"}).startswith("No verdict for this run")
    assert not needs_force({"objective": "kappa"}) and not needs_force({"gain": None})
    assert needs_force({"gain": {"promoted": False}}) and not needs_force({"gain": {"promoted": True}})
