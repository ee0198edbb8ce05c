"""Never silent (issue #10): store and worker errors appear in the window's message bar, the detail pane and the
list stay in step (a failed render disables decisions, so A never acts on a unit the user does not see), counts are
read from the store after commits, a damaged file is reported on open, and backups are made at most hourly."""
from __future__ import annotations

import sqlite3
import threading
import time

from PySide6.QtCore import Qt

import app.schemes.violations.services
from app.corrections import Change, SetLabels
from app.gui.window_parts import DECIDE
from app.store import Project
from app.store.backup import list_backups
from app.store.units import UnitsPart
from tests.gui_data import C1, C2, open_window, project_path, settings  # noqa: F401 - fixtures
from tests.test_store_health import damage_events_pages, project_with_events


def key(qtbot, w, k):  # type: ignore[no-untyped-def]
    qtbot.keyClick(w.list, k)


def fail(message: str):  # type: ignore[no-untyped-def]
    def raiser(*_a, **_k):  # type: ignore[no-untyped-def]
        raise sqlite3.OperationalError(message)

    return raiser


def decide_enabled(w) -> dict[str, bool]:  # type: ignore[no-untyped-def]
    return {a: w.actions_by_id[a].isEnabled() for a in (*DECIDE, "link", "missing_gt", "gt_wrong")}


def test_failed_navigation_shows_the_error_and_disables_decisions(qtbot, open_window, project_path, monkeypatch):  # type: ignore[no-untyped-def]
    w = open_window(project_path)
    p = w.project
    assert w.current_view.current() == ("v1", C1) and all(decide_enabled(w).values())
    monkeypatch.setattr(p.decisions, "sample_labels", fail("disk I/O error"))
    key(qtbot, w, Qt.Key.Key_J)  # the list moves on to v1 / C2, whose decisions cannot be read
    assert w.current_row() == 1
    errors = w.messages.texts("error")
    assert len(errors) == 1 and f"Could not show sample v1 · {C2}" in errors[0] and "disk I/O error" in errors[0]
    assert "concord check --repair" in errors[0]  # what to do
    assert w.messages.isVisible()
    assert w.stack.currentWidget() is w.failed_page  # the pane says which unit failed: never the previous unit
    assert "v1" in w.failed_page.text() and C2 in w.failed_page.text()
    assert not any(decide_enabled(w).values())
    key(qtbot, w, Qt.Key.Key_A)  # neither the unit in the list nor the one shown before gets a decision
    key(qtbot, w, Qt.Key.Key_S)
    w.accept()  # not even when the handler is called directly
    w.view_action("link")
    assert p.decisions.events("v1") == [] and w.session.stack.count() == 0

    monkeypatch.undo()  # the store recovers: Retry renders the selected unit and decisions come back
    w.messages.row("show").action_button.click()
    assert w.current_view.current() == ("v1", C2) and w.stack.currentWidget() is w.current_view
    assert not w.messages.has("show") and all(decide_enabled(w).values())
    key(qtbot, w, Qt.Key.Key_A)
    assert p.decisions.current("v1", C2, "status") == "accepted" and p.decisions.current("v1", C1, "status") is None


def test_failed_refresh_after_a_decision_disables_decisions(qtbot, open_window, project_path, monkeypatch):  # type: ignore[no-untyped-def]
    w = open_window(project_path)
    w.actions_by_id["auto_advance"].setChecked(False)
    p = w.project
    monkeypatch.setattr(p.decisions, "sample_labels", fail("database disk image is malformed"))
    key(qtbot, w, Qt.Key.Key_F)  # flag is saved; re-reading the unit's decisions for the pane fails
    assert p.decisions.current("v1", C1, "status") == "flagged"
    assert w.stack.currentWidget() is w.failed_page and not any(decide_enabled(w).values())
    assert any("malformed" in t for t in w.messages.texts("error"))
    key(qtbot, w, Qt.Key.Key_A)
    assert p.decisions.current("v1", C1, "status") == "flagged"  # A did not accept a pane showing stale decisions


def test_list_that_cannot_load_is_empty_and_says_so(qtbot, open_window, project_path, monkeypatch):  # type: ignore[no-untyped-def]
    w = open_window(project_path)
    monkeypatch.setattr(w.project.units, "count_units", fail("database is locked"))
    w.filters.set_status("unlabeled")  # reloading the list fails
    assert w.model.rowCount() == 0 and w.stack.currentWidget() is w.placeholder
    texts = w.messages.texts("error")
    assert len(texts) == 1 and "Could not load the review list" in texts[0] and "Another program" in texts[0]
    assert not any(decide_enabled(w).values())
    key(qtbot, w, Qt.Key.Key_A)
    assert w.project.decisions.events() == []
    monkeypatch.undo()
    w.messages.row("list").action_button.click()  # Retry
    assert w.model.rowCount() == 7 and not w.messages.has("list") and w.current_view.current() == ("v1", C1)


def test_worker_failure_shows_in_the_window(qtbot, open_window, project_path, monkeypatch):  # type: ignore[no-untyped-def]
    w = open_window(project_path)
    monkeypatch.setattr(app.schemes.violations.services, "store_machine_scores", fail("database is locked"))
    w.compute_machine_scores()
    qtbot.waitUntil(lambda: w.messages.has("task:machine scores"), timeout=60000)
    text = w.messages.row("task:machine scores").label.text()
    assert "machine scores" in text and "OperationalError: database is locked" in text and "try again" in text
    assert "Traceback" in w.messages.row("task:machine scores").label.toolTip()  # details on hover


def test_counts_are_read_from_the_store_after_each_commit(qtbot, open_window, project_path):  # type: ignore[no-untyped-def]
    w = open_window(project_path)
    w.filters.set_status("unlabeled")
    qtbot.waitUntil(lambda: w.model.total == 7, timeout=5000)
    assert w.count_label.text().startswith("7 unit(s) match")
    with Project.open(project_path) as other:  # another annotator, in another connection
        # a decision (a label besides the status: a bare status is not a label, app/store/counts.py)
        SetLabels((Change("v3", C1, "status", "accepted"), Change("v3", C1, "matches", []))).apply(other, "someone else")
    key(qtbot, w, Qt.Key.Key_A)  # our own decision
    qtbot.waitUntil(lambda: w.session_progress.counts == (2, 7), timeout=10000)
    assert "Labeled 2 / 7" in w.session_progress.label.text()
    qtbot.waitUntil(lambda: w.count_label.text().startswith("5 unit(s) match"), timeout=5000)
    assert "the list keeps 7 row(s)" in w.count_label.text()  # rows do not vanish under the cursor


def test_count_failure_is_shown(qtbot, open_window, project_path, monkeypatch):  # type: ignore[no-untyped-def]
    w = open_window(project_path)
    qtbot.waitUntil(lambda: w.session_progress.counts is not None, timeout=10000)
    real = UnitsPart.count_units

    def fails_in_workers(self, f=None):  # type: ignore[no-untyped-def]
        if threading.current_thread() is not threading.main_thread():
            raise sqlite3.OperationalError("database is locked")
        return real(self, f)

    monkeypatch.setattr(UnitsPart, "count_units", fails_in_workers)
    key(qtbot, w, Qt.Key.Key_A)
    qtbot.waitUntil(lambda: w.messages.has("task:counting labeled units"), timeout=10000)
    assert "count failed" in w.session_progress.label.text()


def test_damaged_project_is_reported_on_open(qtbot, open_window, tmp_path):  # type: ignore[no-untyped-def]
    path = project_with_events(tmp_path / "damaged.concord")
    damage_events_pages(path)
    w = open_window(path)  # opening reads only page 1 and the schema: fine
    qtbot.waitUntil(lambda: w.safety.health is not None, timeout=30000)
    assert w.safety.health
    text = w.messages.row("health").label.text()
    assert text.startswith("The project file is damaged") and f"concord check --repair {path}" in text


def test_damaged_list_pages_give_repair_advice_without_a_traceback(qtbot, open_window, tmp_path, capsys):  # type: ignore[no-untyped-def]
    """QA: `concord gui` on a file whose units pages are damaged printed a traceback to the terminal. A damaged
    file is a known condition: the bar says what to do and the log gets one line."""
    path = project_with_events(tmp_path / "hurt.concord")
    conn = sqlite3.connect(path)
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    page = conn.execute("SELECT rootpage FROM sqlite_schema WHERE name = 'units'").fetchone()[0]
    conn.close()
    with open(path, "r+b") as fh:
        fh.seek((page - 1) * size)
        fh.write(b"\xee" * 64)
    capsys.readouterr()
    w = open_window(path)
    texts = " | ".join(w.messages.texts())
    assert "malformed" in texts and f"concord check --repair {path}" in texts
    err = capsys.readouterr().err
    assert "Concord: Could not open the project: DatabaseError: database disk image is malformed" in err
    assert "Traceback" not in err


def test_a_damaged_project_is_not_backed_up(qtbot, open_window, tmp_path):  # type: ignore[no-untyped-def]
    """A backup of a damaged file is a copy of the damage, and only the newest few backups are kept: each one would
    push out an older, healthy backup. The hourly backup waits for the open-time check and is skipped on damage."""
    path = project_with_events(tmp_path / "damaged.concord")
    damage_events_pages(path)
    w = open_window(path)
    w.safety.committed()  # a decision saved before the check has finished: the backup waits for it
    qtbot.waitUntil(lambda: w.safety.health is not None, timeout=30000)
    assert w.safety.health
    w.safety.committed()
    w.safety.backup_now()
    w.runner.wait_all(30000)
    qtbot.wait(100)
    assert list_backups(path) == []


def test_healthy_project_shows_no_message(qtbot, open_window, project_path):  # type: ignore[no-untyped-def]
    w = open_window(project_path)
    qtbot.waitUntil(lambda: w.safety.health is not None, timeout=30000)
    assert w.safety.health == [] and w.messages.texts("error") == []


def test_automatic_backups_at_most_once_per_hour(qtbot, open_window, project_path):  # type: ignore[no-untyped-def]
    w = open_window(project_path)
    w.actions_by_id["auto_advance"].setChecked(True)
    assert list_backups(project_path) == []  # opening alone writes nothing
    key(qtbot, w, Qt.Key.Key_A)  # the first commit of the session backs up (no backup yet)
    qtbot.waitUntil(lambda: len(list_backups(project_path)) == 1, timeout=30000)
    w.runner.wait_all(30000)
    for k in (Qt.Key.Key_A, Qt.Key.Key_S, Qt.Key.Key_F):  # more commits within the hour: no more backups
        key(qtbot, w, k)
    w.runner.wait_all(30000)
    qtbot.wait(50)
    assert len(list_backups(project_path)) == 1
    with Project.open(list_backups(project_path)[0]) as b:  # a real project holding the first decision
        assert b.decisions.current("v1", C1, "status") == "accepted"
    w.safety._last_attempt = time.monotonic() - 3601  # an hour of use later ...
    w.safety.every = 0  # ... and the newest backup is older than `every` too
    key(qtbot, w, Qt.Key.Key_S)
    qtbot.waitUntil(lambda: len(list_backups(project_path)) == 2, timeout=30000)
