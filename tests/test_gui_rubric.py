"""Rubric view: excerpts moved between buckets with the 1-4 keys, added, removed; live metrics."""
from __future__ import annotations

from PySide6.QtCore import Qt

from tests.gui_data import open_window, project_path, settings  # noqa: F401 - fixtures

CTRL = Qt.KeyboardModifier.ControlModifier


def _open_r1(qtbot, open_window, project_path):  # type: ignore[no-untyped-def]
    w = open_window(project_path)
    w.filters.scheme.setCurrentIndex(w.filters.scheme.findData("rubric"))
    view = w.current_view
    assert view.current() == ("r1", "coverage")
    return w, view


def _metric(view, name: str, col: str) -> float:  # type: ignore[no-untyped-def]
    rec = next(r for r in view.metric_model.records() if r["metric"] == name)
    return rec[col]


def test_move_excerpt_between_buckets_with_keys(qtbot, open_window, project_path):  # type: ignore[no-untyped-def]
    w, view = _open_r1(qtbot, open_window, project_path)
    p = w.project
    assert _metric(view, "precision", "llm") == 2 / 3
    assert _metric(view, "precision", "human") == 2 / 3  # the human starts from the LLM's buckets

    qtbot.keyClick(w.list, Qt.Key.Key_X)  # select the first excerpt: TP "relieves pain"
    assert view.selected == ("tp", 0)
    qtbot.keyClick(w.list, Qt.Key.Key_3)  # -> FP
    stored = p.decisions.current("r1", "coverage", "buckets")
    assert stored == {"tp": ["thins the blood"], "fn": ["mentions fever"], "fp": ["cures infections", "relieves pain"], "tn": []}
    assert p.decisions.current("r1", "coverage", "status") == "corrected"
    assert view.selected == ("fp", 1)
    assert [r["text"] for r in view.bucket_models["fp"].records()] == ["cures infections", "relieves pain"]
    assert _metric(view, "precision", "human") == 1 / 3  # recomputed live
    assert _metric(view, "precision", "llm") == 2 / 3  # the LLM side is unchanged
    assert _metric(view, "recall", "human") == 1 / 2
    # the moved excerpt is now highlighted as FP in the response
    kinds = {s.key: s.kind for s in view.response.spans}
    assert kinds[("fp", 1)] == "fp"

    qtbot.keyClick(w.list, Qt.Key.Key_1)  # and back to TP
    assert p.decisions.current("r1", "coverage", "buckets")["tp"] == ["thins the blood", "relieves pain"]
    qtbot.keyClick(w.list, Qt.Key.Key_Z, CTRL)
    qtbot.keyClick(w.list, Qt.Key.Key_Z, CTRL)
    assert p.decisions.current("r1", "coverage", "buckets") is None
    assert _metric(view, "precision", "human") == 2 / 3


def test_add_and_remove_excerpt(qtbot, open_window, project_path):  # type: ignore[no-untyped-def]
    w, view = _open_r1(qtbot, open_window, project_path)
    p = w.project
    qtbot.keyClick(w.list, Qt.Key.Key_Insert)
    assert view.add_edit.hasFocus()
    qtbot.keyClicks(view.add_edit, "mentions fever")
    view.add_bucket.setCurrentIndex(view.add_bucket.findData("tn"))
    qtbot.keyClick(view.add_edit, Qt.Key.Key_Return)  # Return adds (it does not trigger "accept")
    assert p.decisions.current("r1", "coverage", "buckets")["tn"] == ["mentions fever"]
    assert p.decisions.current("r1", "coverage", "status") == "corrected"
    assert view.selected == ("tn", 0)
    assert _metric(view, "specificity", "human") == 0.5  # tn 1 / (tn 1 + fp 1)
    w.list.setFocus()
    qtbot.keyClick(w.list, Qt.Key.Key_Delete)
    assert p.decisions.current("r1", "coverage", "buckets")["tn"] == []


def test_accept_llm_buckets_and_highlights(qtbot, open_window, project_path):  # type: ignore[no-untyped-def]
    w, view = _open_r1(qtbot, open_window, project_path)
    response = view.response.text_map.text
    spans = {s.key: response[s.start : s.end] for s in view.response.spans}
    assert spans == {("tp", 0): "relieves pain", ("tp", 1): "thins the blood", ("fp", 0): "cures infections"}
    # the response has an emoji before two of the excerpts: the highlight must still cover the right characters
    for sel in view.response.extraSelections():
        assert sel.cursor.selectedText() in spans.values()
    qtbot.keyClick(w.list, Qt.Key.Key_A)
    assert w.project.decisions.current("r1", "coverage", "status") == "accepted"
    assert w.project.decisions.current("r1", "coverage", "buckets")["fp"] == ["cures infections"]
    assert w.current_view.current() == ("r2", "coverage")
