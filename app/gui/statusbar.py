"""Status-bar progress: labeled / total units and this session's pace, counted in a worker.

A COUNT over 100,000 units with a join takes long enough to stall the UI thread, so it runs on the pool
with its own connection; bursts of decisions are coalesced by a short timer.
"""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtWidgets import QLabel

from app.gui.undo import Session
from app.gui.workers import Task, TaskProgress, TaskRunner
from app.store import Project, UnitFilter

DONE = ("accepted", "corrected")


class SessionProgress(QObject):
    def __init__(self, runner: TaskRunner, session: Callable[[], Session | None], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.runner = runner
        self._session = session
        self.label = QLabel()
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.counts: tuple[int, int] | None = None  # (labeled, total) from the last count
        self._task: Task | None = None
        self._dirty = False
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(400)
        self._timer.timeout.connect(self.refresh)

    def schedule(self) -> None:
        """Recount soon (after a decision)."""
        self._timer.start()

    def refresh(self) -> None:
        s = self._session()
        if s is None:
            self.label.setText("No project")
            return
        if self._task is not None:
            self._dirty = True
            return
        path = str(s.project.path)

        def count(_progress: TaskProgress) -> tuple[int, int]:
            with Project.open(path) as wp:
                return wp.count_units(UnitFilter(statuses=DONE)), wp.count_units(UnitFilter())

        task = Task(count, "progress")
        task.signals.finished.connect(self._show)
        for sig in (task.signals.finished, task.signals.failed, task.signals.cancelled):
            sig.connect(lambda *_a: self._ended())
        self._task = task
        self.runner.start(task)

    def _ended(self) -> None:
        self._task = None
        if self._dirty:
            self._dirty = False
            self._timer.start()

    def _show(self, counts: tuple[int, int]) -> None:
        s = self._session()
        if s is None:
            return
        self.counts = counts
        done, total = counts
        pct = 100.0 * done / total if total else 0.0
        self.label.setText(f"Labeled {done:,} / {total:,} ({pct:.1f}%) · this session: {len(s.done_units)} "
                           f"({s.pace_per_hour():.0f}/h) · {s.annotator}")
