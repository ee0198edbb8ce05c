"""TRACe view: document sentences toggled relevant/utilized with keys and the mouse, response sentences marked
supported / not supported with editable supporting keys, scores recomputed live on both sides, accept, undo."""
from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt

from app.store import Project
from calibration.schemes.trace.scheme import SCHEME
from tests.gui_data import open_window, settings  # noqa: F401 - fixtures
from tests.test_trace_data import keyed_record

CTRL = Qt.KeyboardModifier.ControlModifier
SHIFT = Qt.KeyboardModifier.ShiftModifier


@pytest.fixture
def trace_path(tmp_path: Path) -> Path:
    raw = keyed_record("t1", doc_sizes=(3, 2), n_response=2, all_relevant_sentence_keys=["0a", "0b"],
                       all_utilized_sentence_keys=["0a"], unsupported_response_sentence_keys=["b"],
                       sentence_support_information=[
                           {"response_sentence_key": "a", "fully_supported": True, "supporting_sentence_keys": ["0a"]},
                           {"response_sentence_key": "b", "fully_supported": False, "supporting_sentence_keys": []}],
                       judges={"j1": {"adherence": 0.2, "relevance": 0.4}})
    raw["question"] = "<b>not bold</b>?"
    path = tmp_path / "trace.concord"
    with Project.create(path) as p:
        p.samples.write_samples("trace", [SCHEME.parse(raw).record])
    return path


def _open(open_window, path):  # type: ignore[no-untyped-def]
    w = open_window(path)
    w.filters.scheme.setCurrentIndex(w.filters.scheme.findData("trace"))
    view = w.current_view
    assert view.scheme == "trace" and view.current()[0] == "t1"
    return w, view


def _score(view, name: str, col: str) -> float:  # type: ignore[no-untyped-def]
    return next(r for r in view.score_model.records() if r["score"] == name)[col]


def _click_sentence(qtbot, view, i: int, modifier=Qt.KeyboardModifier.NoModifier) -> None:  # type: ignore[no-untyped-def]
    a = view.documents.text_map.to_qt(view.doc_spans[i][0])
    cur = view.documents.textCursor()
    cur.setPosition(a + 5)
    rect = view.documents.cursorRect(cur)
    qtbot.mouseClick(view.documents.viewport(), Qt.MouseButton.LeftButton, modifier, QPoint(rect.x() + 2, rect.center().y()))


def test_keys_toggle_labels_and_scores_follow(qtbot, open_window, trace_path):  # type: ignore[no-untyped-def]
    w, view = _open(open_window, trace_path)
    p = w.project
    assert view.question.toPlainText() == "<b>not bold</b>?"  # data text stays plain
    # ragbench relevance = |R| / 5 document sentences, the human starts from the annotator's labels
    assert _score(view, "relevance", "ann_ragbench") == 2 / 5 == _score(view, "relevance", "hum_ragbench")
    assert _score(view, "relevance", "hum_trace_guide") == 2 / 20
    kinds = {s.key: s.kind for s in view.documents.spans}
    assert kinds[("doc", 0)] == "trace_both" and kinds[("doc", 1)] == "trace_rel" and ("doc", 2) not in kinds

    for _ in range(3):
        qtbot.keyClick(w.list, Qt.Key.Key_D)  # third document sentence: 0c
    assert view.doc_sel == 2 and {s.key: s.kind for s in view.documents.spans}[("doc", 2)] == "trace_none"  # selected
    qtbot.keyClick(w.list, Qt.Key.Key_R)
    assert p.decisions.current("t1", "", "relevant", "tester") == ["0a", "0b", "0c"]
    assert p.decisions.current("t1", view.row["unit"], "status", "tester") == "corrected"
    assert _score(view, "relevance", "hum_ragbench") == 3 / 5
    assert _score(view, "relevance", "ann_ragbench") == 2 / 5  # the annotator's side is unchanged
    qtbot.keyClick(w.list, Qt.Key.Key_U)
    assert {s.key: s.kind for s in view.documents.spans}[("doc", 2)] == "trace_both"
    assert _score(view, "utilization", "hum_trace_guide") == 2 / 3

    qtbot.keyClick(w.list, Qt.Key.Key_O)
    qtbot.keyClick(w.list, Qt.Key.Key_O)  # response sentence b (annotator: not supported)
    assert view.resp_sel == 1
    assert _score(view, "adherence", "hum_ragbench") == 0.0
    qtbot.keyClick(w.list, Qt.Key.Key_V)
    assert p.decisions.current("t1", "", "unsupported", "tester") == [] and p.decisions.current("t1", "", "adherent", "tester") is True
    assert _score(view, "adherence", "hum_ragbench") == 1.0 and _score(view, "adherence", "ann_ragbench") == 0.0
    qtbot.keyClick(w.list, Qt.Key.Key_I)  # 0c becomes a supporting key of b
    assert p.decisions.current("t1", "", "support", "tester")["b"] == ["0c"]
    assert view.response_model.records()[1]["keys"] == "0c"

    for _ in range(4):
        qtbot.keyClick(w.list, Qt.Key.Key_Z, CTRL)
    assert p.decisions.current("t1", "", "relevant", "tester") is None
    assert _score(view, "relevance", "hum_ragbench") == 2 / 5 and _score(view, "adherence", "hum_ragbench") == 0.0


def test_mouse_toggles_and_support_keys(qtbot, open_window, trace_path):  # type: ignore[no-untyped-def]
    w, view = _open(open_window, trace_path)
    p = w.project
    _click_sentence(qtbot, view, 3, CTRL)  # 1a relevant
    assert view.doc_sel == 3 and p.decisions.current("t1", "", "relevant", "tester") == ["0a", "0b", "1a"]
    _click_sentence(qtbot, view, 4, SHIFT)  # 1b utilized
    assert p.decisions.current("t1", "", "utilized", "tester") == ["0a", "1b"]
    assert {s.key: s.kind for s in view.documents.spans}[("doc", 4)] == "trace_utl"
    # with response sentence a selected, a plain click adds or removes a supporting key
    view.response_table.clicked.emit(view.response_model.index(0, 0))
    assert view.resp_sel == 0
    _click_sentence(qtbot, view, 1)
    assert p.decisions.current("t1", "", "support", "tester")["a"] == ["0a", "0b"]
    _click_sentence(qtbot, view, 0)
    assert p.decisions.current("t1", "", "support", "tester")["a"] == ["0b"]


def test_accept_takes_the_annotators_labels(qtbot, open_window, trace_path):  # type: ignore[no-untyped-def]
    w, view = _open(open_window, trace_path)
    p = w.project
    qtbot.keyClick(w.list, Qt.Key.Key_D)
    qtbot.keyClick(w.list, Qt.Key.Key_R)  # unmark 0a: a correction
    assert p.decisions.current("t1", "", "relevant", "tester") == ["0b"]
    unit = view.row["unit"]
    qtbot.keyClick(w.list, Qt.Key.Key_A)
    assert p.decisions.current("t1", "", "relevant", "tester") == ["0a", "0b"]
    assert p.decisions.current("t1", "", "unsupported", "tester") == ["b"] and p.decisions.current("t1", "", "adherent", "tester") is False
    assert p.decisions.current("t1", "", "support", "tester") == {"a": ["0a"], "b": []}
    assert p.decisions.current("t1", unit, "status", "tester") == "accepted"


def test_view_actions_do_not_clash_with_any_other_action() -> None:
    from PySide6.QtGui import QKeySequence

    from app.gui.views import all_actions
    from app.schemes.trace.views import OWN_ACTIONS

    mine = {QKeySequence(s).toString(): a.id for a in OWN_ACTIONS for s in a.shortcuts}
    assert len(mine) == sum(len(a.shortcuts) for a in OWN_ACTIONS)
    others = {QKeySequence(s).toString(): a.id for a in all_actions() if not a.id.startswith("trace_") for s in a.shortcuts}
    assert not set(mine) & set(others), {k: (mine[k], others[k]) for k in set(mine) & set(others)}
    assert {"trace_relevant", "trace_utilized", "trace_supported"} <= {a.id for a in all_actions()}


def test_an_llm_annotators_unit_shows_its_labels_and_accept_takes_them(qtbot, open_window, trace_path):  # type: ignore[no-untyped-def]
    """`concord assign --scheme trace` stores labels under llm:<model> as a unit of its own beside `annotator`."""
    from calibration.schemes.trace.annotate import label_value
    from calibration.schemes.trace.records import SupportInfo, TraceLabels

    llm = TraceLabels(("0c", "1a", "1b"), ("1a",), (SupportInfo("a", True, ("1a",), "x"), SupportInfo("b", True, ("general",), "y")),
                      (), True)
    with Project.open(trace_path) as p:
        p.samples.save_machine_unit("t1", "llm:m", "llm:m", label_value(llm, {}, "m"), None, {"relevance": 0.4})
    w, view = _open(open_window, trace_path)
    for _ in range(4):
        if view.row["unit"] == "llm:m":
            break
        qtbot.keyClick(w.list, Qt.Key.Key_Down)
    assert view.current() == ("t1", "llm:m")
    assert "llm:m" in view.units_of_sample() and "annotator" in view.units_of_sample()
    # the annotator's side is the LLM's: 3 of 5 sentences relevant, 1 utilized, everything supported
    assert _score(view, "relevance", "ann_ragbench") == 3 / 5 and _score(view, "utilization", "ann_ragbench") == 1 / 5
    assert _score(view, "adherence", "ann_ragbench") == 1.0
    assert view.response_model.records()[1]["keys"] == "general"
    qtbot.keyClick(w.list, Qt.Key.Key_A)
    p = w.project
    assert p.decisions.current("t1", "", "relevant", "tester") == ["0c", "1a", "1b"]
    assert p.decisions.current("t1", "", "unsupported", "tester") == [] and p.decisions.current("t1", "", "adherent", "tester") is True
    assert p.decisions.current("t1", "", "support", "tester") == {"a": ["1a"], "b": ["general"]}
    assert p.decisions.current("t1", "llm:m", "status", "tester") == "accepted"
    assert _score(view, "relevance", "hum_ragbench") == 3 / 5
