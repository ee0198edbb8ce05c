"""Labeling a violations unit with real key presses: decisions are stored at once, undo/redo, reopen."""
from __future__ import annotations

from collections import Counter

from PySide6.QtCore import Qt

from app.store import Project
from tests.gui_data import C1, C2, open_window, project_path, settings  # noqa: F401 - fixtures

CTRL = Qt.KeyboardModifier.ControlModifier
SHIFT = Qt.KeyboardModifier.ShiftModifier


def key(qtbot, w, k, mod=Qt.KeyboardModifier.NoModifier):  # type: ignore[no-untyped-def]
    """Press a key where the user's focus is (the list), as a real key event."""
    qtbot.keyClick(w.list, k, mod)


def test_accept_undo_redo_close_reopen(qtbot, open_window, project_path):  # type: ignore[no-untyped-def]
    w = open_window(project_path)
    view = w.current_view
    assert view.current() == ("v1", C1)
    proposal = view.scores.proposed
    assert proposal == [(0, 0)]  # same rule, overlapping dosage spans
    key(qtbot, w, Qt.Key.Key_A)
    p = w.project
    assert p.decisions.current("v1", C1, "status") == "accepted"
    assert p.decisions.current("v1", C1, "matches") == [[0, 0]]
    assert w.model.row(0)["status"] == "accepted"
    assert w.current_view.current() == ("v1", C2)  # advanced to the next unit
    ev = p.decisions.events("v1")
    assert {e["annotator"] for e in ev} == {"tester"} and len(ev) == 2

    key(qtbot, w, Qt.Key.Key_Z, CTRL)
    assert p.decisions.current("v1", C1, "status") is None
    assert p.decisions.current("v1", C1, "matches") is None
    assert w.current_view.current() == ("v1", C1)  # undo shows the unit it changed
    assert w.model.row(0)["status"] == "unlabeled"

    key(qtbot, w, Qt.Key.Key_Z, CTRL | SHIFT)
    assert p.decisions.current("v1", C1, "status") == "accepted"
    assert p.decisions.current("v1", C1, "matches") == [[0, 0]]

    key(qtbot, w, Qt.Key.Key_J)
    key(qtbot, w, Qt.Key.Key_S)  # skip v1/C2 -> advances
    assert p.decisions.current("v1", C2, "status") == "skipped"
    key(qtbot, w, Qt.Key.Key_F)
    flagged = w.model.row(2)
    assert p.decisions.current(flagged["sample_id"], flagged["unit"], "status") == "flagged"
    last = w.current_view.current()
    w.close()

    with Project.open(project_path) as check:
        assert check.decisions.time_spent() > 0  # time per unit logged when leaving it
        logged = {(r["sample_id"], r["unit"]) for r in check.query("SELECT sample_id, unit FROM work_log")}
        assert ("v1", C1) in logged and ("v1", C2) in logged

    w2 = open_window(project_path)
    assert [w2.model.row(i)["status"] for i in range(3)] == ["accepted", "skipped", "flagged"]
    assert w2.current_view.current() == last  # resumes where the session stopped
    qtbot.keyClick(w2.list, Qt.Key.Key_Home, CTRL)  # the list has focus: Ctrl+Home goes to the first unit
    v = w2.current_view
    assert v.current() == ("v1", C1)
    assert v.human_matches() == [(0, 0)]
    assert "accepted" in v.status.text() and "human" in v.status.text()
    assert w2.session.stack.count() == 0  # a new session starts with an empty undo stack


def test_link_unlink_missing_gt_and_wrong_gt(qtbot, open_window, project_path):  # type: ignore[no-untyped-def]
    w = open_window(project_path)
    p, view = w.project, w.current_view
    key(qtbot, w, Qt.Key.Key_G)  # GT 1, whose proposed partner is prediction 1
    assert view.selected_pair() == (0, 0)
    key(qtbot, w, Qt.Key.Key_L)  # linked in the proposal -> unlink
    assert p.decisions.current("v1", C1, "matches") == []
    assert p.decisions.current("v1", C1, "status") == "corrected"
    assert view.gt_model.record(0)["linked"] == ""
    key(qtbot, w, Qt.Key.Key_L)  # link again
    assert p.decisions.current("v1", C1, "matches") == [[0, 0]]

    key(qtbot, w, Qt.Key.Key_G)  # GT 2 (contact details), unlinked
    key(qtbot, w, Qt.Key.Key_P)  # prediction 2 (refunds)
    assert view.selected_pair() == (1, 1)
    key(qtbot, w, Qt.Key.Key_L)
    assert p.decisions.current("v1", C1, "matches") == [[0, 0], [1, 1]]
    assert view.pred_model.record(1)["linked"] == "GT2"
    key(qtbot, w, Qt.Key.Key_L)
    assert p.decisions.current("v1", C1, "matches") == [[0, 0]]

    key(qtbot, w, Qt.Key.Key_M)  # prediction 2 is a real violation missing from the ground truth
    assert p.decisions.current("v1", C1, "missing_gt") == [1]
    assert view.pred_model.record(1)["state"] == "missing GT"
    key(qtbot, w, Qt.Key.Key_W)  # GT 2 is wrong
    assert p.decisions.current("v1", "", "gt_wrong") == [1]
    assert view.gt_model.record(1)["state"] == "wrong"

    for _ in range(4):  # undo wrong GT, missing GT, unlink, link
        key(qtbot, w, Qt.Key.Key_Z, CTRL)
    assert p.decisions.current("v1", "", "gt_wrong") is None  # back to "never decided", not just empty
    assert p.decisions.current("v1", C1, "missing_gt") is None
    assert p.decisions.current("v1", C1, "matches") == [[0, 0]]
    assert view.gt_model.record(1)["state"] == ""



def test_refresh_after_a_decision_keeps_the_selection_and_updates_rows_in_place(qtbot, open_window, project_path):  # type: ignore[no-untyped-def]
    """A decision on the shown unit redraws what changed (no table reset), keeps the selected pair selected and
    emphasised in the text, and the checker box shows the new status."""
    from PySide6.QtGui import QFont

    w = open_window(project_path)
    view = w.current_view
    key(qtbot, w, Qt.Key.Key_G)  # GT 1 and its proposed partner, prediction 1
    resets: list[str] = []
    for name in ("gt_model", "pred_model", "pair_model"):
        getattr(view, name).modelReset.connect(lambda name=name: resets.append(name))
    key(qtbot, w, Qt.Key.Key_L)  # unlink: the shown unit is refreshed
    assert resets == []
    assert view.selected_pair() == (0, 0)
    assert view.gt_table.selectionModel().currentIndex().row() == 0
    assert view.pred_table.selectionModel().currentIndex().row() == 0
    pair_row = view.pair_table.selectionModel().currentIndex().row()
    assert view.pair_model.record(pair_row)["_gp"] == (0, 0) and view.pair_model.record(pair_row)["human"] == ""
    assert view.gt_model.record(0)["linked"] == "" and view.pred_model.record(0)["linked"] == ""
    bold = {sel.cursor.selectionStart() for sel in view.text.extraSelections()
            if sel.format.fontWeight() == QFont.Weight.Bold}
    assert len(bold) == 2  # GT 1 and prediction 1 still emphasised
    assert "[corrected]" in view.checker_box.currentText() and "Status: corrected" in view.status.text()
    key(qtbot, w, Qt.Key.Key_L)  # link again
    pair_row = view.pair_table.selectionModel().currentIndex().row()
    assert view.pair_model.record(pair_row)["human"] == "●" and view.gt_model.record(0)["linked"] == "P1"
    assert resets == []

def test_pair_table_explains_the_decision(qtbot, open_window, project_path):  # type: ignore[no-untyped-def]
    w = open_window(project_path)
    view = w.current_view
    rows = view.pair_model.records()
    assert len(rows) == 4  # 2 GT x 2 predictions
    top = rows[0]
    assert top["_gp"] == (0, 0) and top["proposed"] == "●"
    assert top["rule"] == 1.0 and top["category"] == 1.0
    assert 0 < top["overlap"] < 1
    assert "IoU ✓" in top["passes"] and "score ✓" in top["passes"]
    crossing = next(r for r in rows if r["_gp"] == (0, 1))
    assert crossing["overlap"] == 0.0 and "IoU ✗" in crossing["passes"] and crossing["proposed"] == ""


def test_switch_checker_and_note(qtbot, open_window, project_path, monkeypatch):  # type: ignore[no-untyped-def]
    w = open_window(project_path)
    key(qtbot, w, Qt.Key.Key_C)
    assert w.current_view.current() == ("v1", C2)
    key(qtbot, w, Qt.Key.Key_C)
    assert w.current_view.current() == ("v1", C1)
    import app.gui.window_decisions

    monkeypatch.setattr(app.gui.window_decisions, "ask_text", lambda *a, **k: ("needs a second look", True))
    key(qtbot, w, Qt.Key.Key_E)
    assert w.project.decisions.current("v1", C1, "note") == "needs a second look"
    assert "needs a second look" in w.current_view.note.text()
    key(qtbot, w, Qt.Key.Key_Z, CTRL)
    assert w.project.decisions.current("v1", C1, "note") is None


def test_filters_and_next_unlabeled(qtbot, open_window, project_path):  # type: ignore[no-untyped-def]
    w = open_window(project_path)
    qtbot.waitUntil(lambda: w.session_progress.counts == (0, 7), timeout=10000)
    key(qtbot, w, Qt.Key.Key_A)  # accept v1/C1 -> v1/C2
    qtbot.waitUntil(lambda: w.session_progress.counts == (1, 7), timeout=10000)  # status bar: labeled / total, pace
    assert "Labeled 1 / 7" in w.session_progress.label.text() and "this session: 1" in w.session_progress.label.text()
    key(qtbot, w, Qt.Key.Key_K)
    assert w.current_view.current() == ("v1", C1)
    key(qtbot, w, Qt.Key.Key_N)
    assert w.current_view.current() == ("v1", C2)
    w.filters.set_status("accepted")
    assert w.model.total == 1 and w.model.row(0)["sample_id"] == "v1"
    w.filters.set_status(None)
    qtbot.keyClicks(w.filters.search, "refunds")  # typing J/K/N... in the search box types, it does not navigate
    qtbot.waitUntil(lambda: w.model.total == 2, timeout=3000)  # both checkers of v1
    assert {w.model.row(i)["sample_id"] for i in range(2)} == {"v1"}
    w.filters.search.clear()
    w.filters.category.select_data("tone")  # v2 has a "tone" ground truth
    qtbot.waitUntil(lambda: w.model.total == 1, timeout=3000)
    assert w.model.row(0)["sample_id"] == "v2"
    w.filters.category.select_data(None)
    w.filters.unit.select_data(C2)
    assert w.model.total == 2 and {w.model.row(i)["unit"] for i in range(2)} == {C2}
    w.list.horizontalHeader().setSortIndicator(0, Qt.SortOrder.DescendingOrder)  # click-sort: done by the store
    assert [w.model.row(i)["sample_id"] for i in range(2)] == ["v3", "v1"]


def test_cheat_sheet_on_question_mark(qtbot, open_window, project_path):  # type: ignore[no-untyped-def]
    w = open_window(project_path)
    qtbot.keyClick(w.list, "?")
    assert w.cheatsheet.isVisible()
    keys = {r["action"]: r["keys"] for r in w.cheatsheet.model.records()}
    assert keys["Next sample"] == "J" and "A" in keys["Accept"]


def test_checker_without_predictions_and_escape(qtbot, open_window, project_path):  # type: ignore[no-untyped-def]
    w = open_window(project_path)
    w.show_unit_by_key("v3", C2)  # C2 ran on v3 and found nothing: every GT is a miss
    view = w.current_view
    assert view.pred_model.rowCount() == 0 and view.pair_model.rowCount() == 0
    assert view.gt_model.rowCount() == 1
    assert view.units_of_sample() == [C1, C2]  # both checkers ran on v3
    qtbot.keyClick(w.list, Qt.Key.Key_A)
    assert w.project.decisions.current("v3", C2, "matches") == [] and w.project.decisions.current("v3", C2, "status") == "accepted"
    qtbot.keyClick(w.list, Qt.Key.Key_Escape)  # nothing running: harmless


def test_failed_write_is_reported_and_not_pushed(qtbot, open_window, project_path, monkeypatch):  # type: ignore[no-untyped-def]
    import sqlite3

    w = open_window(project_path)

    def locked(*_a, **_k):  # type: ignore[no-untyped-def]
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(w.project.decisions, "record", locked)
    key(qtbot, w, Qt.Key.Key_A)
    shown = w.messages.texts("error")  # in the window's message bar, not only on the terminal
    assert len(shown) == 1 and "database is locked" in shown[0] and "try again" in shown[0].lower()
    assert w.messages.isVisible()
    assert w.session.stack.count() == 0  # nothing to undo: nothing was stored
    assert w.model.row(0)["status"] == "unlabeled"
    assert w.current_view.current() == ("v1", C1)  # a failed accept does not advance past the unit


def test_navigation_fetches_further_pages(qtbot, open_window, project_path):  # type: ignore[no-untyped-def]
    w = open_window(project_path)
    w.model._page = 2  # tiny pages: every second step crosses a page boundary
    w.model.reload()
    w.select_row(0)
    assert w.model.rowCount() == 2
    for _ in range(4):
        key(qtbot, w, Qt.Key.Key_J)
    assert w.current_row() == 4 and w.model.rowCount() >= 5
    w.select_row(0)
    for _ in range(4):  # skip the first four units; row 4 stays unlabeled
        key(qtbot, w, Qt.Key.Key_S)
    w.select_row(0)
    key(qtbot, w, Qt.Key.Key_N)
    assert w.current_row() == 4 and w.model.row(4)["status"] == "unlabeled"


def test_score_cache_index_follows_the_cache(open_window, project_path, monkeypatch):  # type: ignore[no-untyped-def]
    """The (sample, checker, config) index `prefetch` asks stays the cache's keys through eviction and rescore."""
    import dataclasses

    import app.schemes.violations.views as violations

    monkeypatch.setattr(violations, "CACHE_SIZE", 3)
    view = open_window(project_path).current_view
    sc = view.scores

    def index_is_cache() -> bool:
        return dict(view._cached_units) == dict(Counter(k[:3] for k in view._cache))

    for i in range(5):  # two evicted
        view._remember(dataclasses.replace(sc, sample_id=f"x{i}"), 1)
    view._remember(dataclasses.replace(sc, sample_id="x4"), 2)  # a second ground-truth signature, same unit
    assert len(view._cache) == 3 and index_is_cache()
    units = view._cached_units
    assert ("x4", sc.checker, sc.config_ref) in units and ("x0", sc.checker, sc.config_ref) not in units
    view._remember(dataclasses.replace(sc, sample_id=view.sample.id), 1)
    view.rescore()
    assert index_is_cache() and all(k[0] != view.sample.id or k[3] != 1 for k in view._cache)


def test_prefetch_starts_the_next_batch_while_the_nearer_half_is_scored(open_window, project_path,  # type: ignore[no-untyped-def]
                                                                         monkeypatch):
    """The next batch is scored in the background once a unit in the nearer half of the next ones is neither cached
    nor underway, not only when the very next one is (then moving on quickly scored it again in the GUI thread)."""
    import dataclasses

    view = open_window(project_path).current_view
    config = dataclasses.replace(view.ctx.config(), embedding="onnx:x")  # not Jaccard: its scores need no prefetch
    monkeypatch.setattr(view, "_config", lambda: config)
    scheduled: list[list[str]] = []
    monkeypatch.setattr(view, "_schedule", lambda samples, **_: scheduled.append([s.id for s in samples]))
    view._pending = {}
    rows = [{"scheme": "violations", "sample_id": sid, "unit": u} for sid in ("v1", "v2", "v3") for u in (C1, C2)]

    def cached(n: int) -> None:  # the first n rows scored already
        view._cached_units.clear()
        for r in rows[:n]:
            view._cached_units[(r["sample_id"], r["unit"], config.ref)] += 1

    cached(0)
    view.prefetch(rows)
    assert scheduled == [["v1", "v2", "v3"]]  # nothing scored: everything from the next one
    cached(2)
    view.prefetch(rows)
    assert scheduled[1:] == [["v2", "v3"]]  # the third of six is not scored: its batch starts now
    cached(3)
    view.prefetch(rows)
    assert scheduled[2:] == []  # the nearer half is scored: nothing yet
    view._pending = {f"v2|{config.ref}|0": object()}
    cached(2)
    view.prefetch(rows)
    assert scheduled[2:] == []  # the third one is underway: nothing more
    view._pending = {}
