"""RGB view: highlights in the response and passages, checkers side by side (judges included), human decisions with
real key presses (5, 6, Shift+E, Shift+X), the checker Accept takes (H), undo, plain text, and the accuracy-vs-noise chart."""
from __future__ import annotations

import math
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from app.store import Project
from calibration.schemes.rgb.scheme import SCHEME
from tests.gui_data import open_window, settings  # noqa: F401 - fixtures

CTRL = Qt.KeyboardModifier.ControlModifier
SHIFT = Qt.KeyboardModifier.ShiftModifier
REFUSE = "I can not answer the question because of the insufficient information in documents."


@pytest.fixture
def rgb_path(tmp_path: Path) -> Path:
    raws = [
        {"scheme": "rgb", "id": "c1", "task": "counterfactual", "language": "en", "query": "<b>Where</b> is it?",
         "answer": ["Tampa", ["Florida", "FL"]], "fakeanswer": "Glendale", "noise_rate": 0.2,
         "docs": ["Played in Glendale, Arizona.", "Noise about <i>Ohio</i>.", "Played in Tampa, Florida."],
         "positive": ["Played in Tampa, Florida."], "positive_wrong": ["Played in Glendale, Arizona."],
         "negative": ["Noise about <i>Ohio</i>."],
         "responses": {"m1": "There are factual errors in the provided documents. It was Tampa, FL; however, unclear.",
                       "m2": "Glendale."}},
        {"scheme": "rgb", "id": "r1", "task": "rejection", "language": "en", "query": "Who?", "answer": "Lena",
         "noise_rate": 1.0, "docs": ["nothing"], "responses": {"m1": REFUSE, "m2": "I'm not sure."}},
        {"scheme": "rgb", "id": "n1", "task": "noise", "language": "en", "query": "Year?", "answer": "1964",
         "noise_rate": 0.0, "docs": ["1964"], "responses": {"m1": "1964", "m2": "1958"}},
    ]
    path = tmp_path / "rgb.concord"
    with Project.create(path) as p:
        p.samples.write_samples("rgb", [SCHEME.parse(r).record for r in raws])
        p.samples.save_machine_label("c1", "m1", "llm_judge:judge", {"error_detected": False, "error_corrected": False})
    return path


def _open(open_window, path):  # type: ignore[no-untyped-def]
    w = open_window(path)
    w.filters.scheme.setCurrentIndex(w.filters.scheme.findData("rgb"))
    view = w.current_view
    assert view.scheme == "rgb"
    if view.current() != ("c1", "m1"):
        view.request_unit.emit("c1", "m1")
    assert view.current() == ("c1", "m1")
    return w, view


def _row(view, source: str) -> dict:  # type: ignore[no-untyped-def]
    return next(r for r in view.decision_model.records() if r["source"].removesuffix(" ✓") == source)


def test_highlights_checkers_and_plain_text(qtbot, open_window, rgb_path):  # type: ignore[no-untyped-def]
    w, view = _open(open_window, rgb_path)
    assert view.query.toPlainText() == "<b>Where</b> is it?"  # markup shown, not interpreted
    text = view.response.toPlainText()
    kinds = {(text[s.start:s.end], s.kind) for s in view.response.spans}
    assert {("Tampa", "rgb_hit"), ("FL", "rgb_hit"), ("factual errors", "rgb_error"), ("however", "rgb_error"),
            ("unclear", "rgb_reject")} <= kinds
    ptext = view.passages.toPlainText()
    heads = {ptext[s.start:s.end]: s.kind for s in view.passages.spans if s.key[0] == "doc"}
    assert heads == {"[1] counterfactual": "rgb_counterfactual", "[2] negative": "rgb_negative",
                     "[3] positive": "rgb_positive"}
    assert "Noise about <i>Ohio</i>." in ptext
    assert {("Glendale", "rgb_fake"), ("Tampa", "rgb_hit")} <= {(ptext[s.start:s.end], s.kind) for s in view.passages.spans}
    # three machine sources side by side; they disagree on the rejection ("unclear") and the judge on detection
    assert view.sources() == ["rgb_original", "rgb_extended", "llm_judge:judge"]
    assert _row(view, "rgb_original")["rejected"] is False and _row(view, "rgb_extended")["rejected"] is True
    assert _row(view, "llm_judge:judge")["rejected"] is None
    assert _row(view, "rgb_original")["error_detected"] is True and _row(view, "llm_judge:judge")["error_detected"] is False
    assert _row(view, "human")["correct"] is None
    # the chart: both checkers and the humans over m1's noise and rejection units (RGB's noise-robustness data)
    assert view.chart.xs == [0.0, 1.0]
    names = [n for n, _ in view.chart.series]
    assert names == ["rgb_original", "rgb_extended", "human"]
    assert dict(view.chart.series)["rgb_original"] == [100.0, 100.0]  # 1964 found; a refusal at noise rate 1
    assert dict(view.chart.series)["rgb_extended"] == [100.0, 0.0]  # the seed: a refusal is not correct
    assert all(math.isnan(y) for y in dict(view.chart.series)["human"])


def test_keys_set_human_decisions_accept_and_undo(qtbot, open_window, rgb_path):  # type: ignore[no-untyped-def]
    w, view = _open(open_window, rgb_path)
    p = w.project
    qtbot.keyClick(w.list, Qt.Key.Key_6)  # rejected: flip rgb_original's "no" to yes
    assert p.decisions.current("c1", "m1", "rejected", "tester") is True
    assert p.decisions.current("c1", "m1", "status", "tester") == "corrected"
    assert _row(view, "human")["rejected"] is True
    assert _row(view, "rgb_original")["_bg"] and not _row(view, "rgb_extended")["_bg"]  # differs from the human
    qtbot.keyClick(w.list, Qt.Key.Key_6)
    assert p.decisions.current("c1", "m1", "rejected", "tester") is False
    qtbot.keyClick(w.list, Qt.Key.Key_5)  # correct: original says yes -> no
    qtbot.keyClick(w.list, Qt.Key.Key_E, SHIFT)
    qtbot.keyClick(w.list, Qt.Key.Key_X, SHIFT)
    assert [p.decisions.current("c1", "m1", k, "tester") for k in ("correct", "error_detected", "error_corrected")] == [False, False, False]
    qtbot.keyClick(w.list, Qt.Key.Key_Z, CTRL)
    assert p.decisions.current("c1", "m1", "error_corrected", "tester") is None
    # H chooses the checker Accept takes: rgb_extended, then the judge (which decides only detection/correction)
    qtbot.keyClick(w.list, Qt.Key.Key_H)
    assert view.chosen == "rgb_extended"
    qtbot.keyClick(w.list, Qt.Key.Key_H)
    assert view.chosen == "llm_judge:judge"
    qtbot.keyClick(w.list, Qt.Key.Key_A)
    assert p.decisions.current("c1", "m1", "status", "tester") == "accepted"
    assert p.decisions.current("c1", "m1", "error_detected", "tester") is False
    assert p.decisions.current("c1", "m1", "correct", "tester") is False  # the judge does not decide it: left as it was
    qtbot.keyClick(w.list, Qt.Key.Key_Z, CTRL)
    view.request_unit.emit("c1", "m1")
    qtbot.keyClick(w.list, Qt.Key.Key_H)  # back to rgb_original
    assert view.chosen == "rgb_original"
    qtbot.keyClick(w.list, Qt.Key.Key_A)
    assert [p.decisions.current("c1", "m1", k, "tester") for k in ("correct", "rejected", "error_detected", "error_corrected")] \
        == [True, False, True, True]
    # the chart's human line follows the decisions when the model is shown again
    view.request_unit.emit("r1", "m1")
    qtbot.keyClick(w.list, Qt.Key.Key_5)  # a refusal at noise rate 1 counts as correct for RGB; this human says no
    view.request_unit.emit("n1", "m2")
    view.request_unit.emit("c1", "m1")
    assert dict(view.chart.series)["human"] == [pytest.approx(math.nan, nan_ok=True), 0.0]


def test_rgb_actions_do_not_clash_with_any_other_action() -> None:
    from PySide6.QtGui import QKeySequence

    from app.gui.views import all_actions
    from app.schemes.rgb.views import RGBView

    mine = {QKeySequence(s).toString(): a.id for a in RGBView.action_specs for s in a.shortcuts}
    assert len(mine) == 5
    others = {QKeySequence(s).toString(): a.id for a in all_actions() if not a.id.startswith("rgb_") for s in a.shortcuts}
    assert not set(mine) & set(others), {k: (mine[k], others[k]) for k in set(mine) & set(others)}
    assert {a.id for a in RGBView.action_specs} <= {a.id for a in all_actions()}
