"""run_gui: offscreen screenshot, annotator asked once and remembered; workers report progress and cancel."""
from __future__ import annotations

import threading
from pathlib import Path

import pytest
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QInputDialog

from app.gui import main as gui_main
from app.gui.workers import Task, TaskRunner
from app.progress import check
from app.store import Project
from tests.gui_data import project_path, settings  # noqa: F401 - fixtures


def test_screenshot_renders_the_window_and_exits(qtbot, project_path: Path, settings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "shots" / "main.png"
    assert gui_main.run_gui(str(project_path), str(out), annotator="shooter", settings=settings) == 0
    img = QImage(str(out))
    assert (img.width(), img.height()) == gui_main.SCREENSHOT_SIZE
    assert len({img.pixel(x, y) for x in range(0, img.width(), 37) for y in range(0, img.height(), 37)}) > 10
    with Project.open(project_path) as p:  # a screenshot records nothing in the project
        assert p.decisions.events() == [] and p.decisions.time_spent() == 0 and p.decisions.annotators() == []


def test_annotator_is_asked_once_then_remembered(qtbot, settings, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("CONCORD_ANNOTATOR", raising=False)
    asked = []
    monkeypatch.setattr(QInputDialog, "getText", staticmethod(lambda *a, **k: (asked.append(1), ("  ada ", True))[1]))
    assert gui_main.resolve_annotator(None, settings, ask=True) == "ada"
    assert gui_main.resolve_annotator(None, settings, ask=True) == "ada"
    assert asked == [1]
    monkeypatch.setenv("CONCORD_ANNOTATOR", "grace")
    assert gui_main.resolve_annotator(None, settings, ask=True) == "grace"
    assert gui_main.resolve_annotator("linus", settings, ask=True) == "linus"


def test_annotator_dialog_cancelled_means_no_start(qtbot, settings, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("CONCORD_ANNOTATOR", raising=False)
    monkeypatch.setattr(QInputDialog, "getText", staticmethod(lambda *a, **k: ("", False)))
    assert gui_main.resolve_annotator(None, settings, ask=True) is None
    assert gui_main.resolve_annotator(None, settings, ask=False) is None


def test_not_a_project_is_refused(qtbot, tmp_path: Path, settings) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "x.concord"
    bad.write_text("hello")
    from app.errors import UsageError

    with pytest.raises(UsageError):
        gui_main.run_gui(str(bad), str(tmp_path / "s.png"), annotator="a", settings=settings)


def test_task_reports_progress_and_can_be_cancelled(qtbot) -> None:  # type: ignore[no-untyped-def]
    runner = TaskRunner()
    started = threading.Event()

    def slow(progress):  # type: ignore[no-untyped-def]
        for i in range(1000):
            progress.update(i, 1000, "working")
            started.set()
            check(progress)
            threading.Event().wait(0.005)
        return "finished"

    task = Task(slow, "slow")
    seen = []
    task.signals.progress.connect(lambda d, t, m: seen.append((d, t)))
    with qtbot.waitSignal(task.signals.cancelled, timeout=5000):
        runner.start(task)
        assert started.wait(5)
        task.cancel()
    assert seen and seen[0] == (0, 1000)
    assert runner.wait_all(5000)

    ok = Task(lambda p: 41 + 1, "quick")
    with qtbot.waitSignal(ok.signals.finished, timeout=5000) as blocker:
        runner.start(ok)
    assert blocker.args == [42]
    bad = Task(lambda p: 1 / 0, "broken")
    with qtbot.waitSignal(bad.signals.failed, timeout=5000) as blocker:
        runner.start(bad)
    assert "broken failed: division by zero" in blocker.args[0]


def test_pyside_build_keeps_none_alive(qtbot) -> None:  # type: ignore[no-untyped-def]
    """A labeling session makes millions of void Qt calls: none may drop a reference to None."""
    import sys

    from app.gui.compat import guard_none_refcount, none_refs_dropped

    applied = guard_none_refcount()
    assert none_refs_dropped(1000) == 0 or applied or sys.version_info >= (3, 12)
