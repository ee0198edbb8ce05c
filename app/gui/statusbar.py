"""Status-bar progress: labeled / total units and this session's pace, counted in a worker.

Labeled and total are `Project.counts.unit_counts` (what `concord status` prints; blind mode: the annotator's own labels
over their queue).

A COUNT over 100,000 units with a join takes long enough to stall the UI thread, so it runs on the pool
with its own connection; bursts of decisions are coalesced by a short timer. The counts are read from the store
after every commit (never incremented in memory), with the units matching the list's filters (`counted`).
"""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer, Signal

from app.gui.plaintext import ElidedLabel
from app.gui.undo import Session
from app.gui.workers import Task, TaskProgress, TaskRunner, when_done
from app.store import Project, UnitFilter


class SessionProgress(QObject):
    counted = Signal(int, object)  # units matching the filter (the UnitFilter counted), as stored now

    def __init__(self, runner: TaskRunner, session: Callable[[], Session | None], parent: QObject | None = None,
                 unit_filter: Callable[[], UnitFilter] | None = None) -> None:
        super().__init__(parent)
        self.runner = runner
        self._session = session
        self._filter = unit_filter
        self.label = ElidedLabel()
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
        f = None if self._filter is None else self._filter()

        def count(_progress: TaskProgress) -> tuple[int, int, int | None, UnitFilter | None]:
            # blind mode: the annotator's own labels over their queue (the filter carries both)
            # labeled and total as every other surface counts them (Project.counts.unit_counts, app/store/counts.py)
            mine = {} if f is None else {"annotator": f.annotator, "assigned_to": f.assigned_to}
            with Project.open(path) as wp:
                schemes = wp.counts.unit_counts(**mine)["schemes"].values()
                return (sum(c["labeled"] for c in schemes), sum(c["units"] for c in schemes),
                        None if f is None else wp.units.count_units(f), f)

        task = Task(count, "counting labeled units")
        task.signals.finished.connect(self._show)
        task.signals.failed.connect(lambda _m: self.label.setText("Labeled: count failed (see the message above)"))
        when_done(task, self._ended)
        self._task = task
        self.runner.start(task)

    def _ended(self) -> None:
        self._task = None
        if self._dirty:
            self._dirty = False
            self._timer.start()

    def _show(self, counts: tuple[int, int, int | None, UnitFilter | None]) -> None:
        s = self._session()
        if s is None:
            return
        done, total, matching, f = counts
        self.counts = (done, total)
        if matching is not None:
            self.counted.emit(matching, f)
        pct = 100.0 * done / total if total else 0.0
        self.label.setText(f"Labeled {done:,} / {total:,} ({pct:.1f}%) · this session: {len(s.done_units)} "
                           f"({s.pace_per_hour():.0f}/h) · {s.annotator}")
