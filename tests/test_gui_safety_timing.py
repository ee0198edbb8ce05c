"""The open-time integrity check and the hourly backup stay out of the way of the work they protect: the check starts
once the window has rendered (never for a window closed before that), a due backup waits for a pause in commits."""
from __future__ import annotations

import time

import pytest
from PySide6.QtCore import Qt

from app.gui import safety
from app.store.backup import list_backups
from tests.gui_data import open_window, project_path, settings  # noqa: F401 - fixtures

pytestmark = pytest.mark.xdist_group("timing")  # waits measured in ms: not beside another timing test


def test_check_starts_after_the_first_render_and_not_for_a_closed_window(qtbot, open_window, project_path,  # type: ignore[no-untyped-def]
                                                                          monkeypatch):
    started: list[str] = []
    real = safety.quick_check
    monkeypatch.setattr(safety, "quick_check", lambda path, progress: started.append(path) or real(path, progress))
    t = time.monotonic()
    w = open_window(project_path)
    assert w.current_view is not None and w.current_view.row is not None  # the first unit is on screen ...
    if time.monotonic() - t < safety.CHECK_AFTER_MS / 1000 * 0.8:
        assert started == [] and w.safety.health is None  # ... and the check has not started yet
    qtbot.waitUntil(lambda: w.safety.health is not None, timeout=30000)
    assert started == [str(project_path)] and w.safety.health == []
    w2 = open_window(project_path)
    w2.close()
    qtbot.wait(safety.CHECK_AFTER_MS + 300)
    assert started == [str(project_path)]  # the window closed before its check: none started


def test_a_due_backup_waits_for_a_pause_in_commits(qtbot, open_window, project_path, monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setattr(safety, "IDLE_MS", 600)
    w = open_window(project_path)
    w.safety._idle.setInterval(safety.IDLE_MS)
    qtbot.waitUntil(lambda: w.safety.health == [], timeout=30000)
    w.actions_by_id["auto_advance"].setChecked(True)
    for k in (Qt.Key.Key_A, Qt.Key.Key_S, Qt.Key.Key_A):  # a burst of commits, each well within the pause
        qtbot.keyClick(w.list, k)
        qtbot.wait(100)
        assert list_backups(project_path) == []
    qtbot.waitUntil(lambda: len(list_backups(project_path)) == 1, timeout=30000)  # the pause came: backed up once
