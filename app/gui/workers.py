"""Long work off the UI thread: a plain function `fn(progress) -> result` runs in QThreadPool.

The function gets a `TaskProgress` (the app.progress protocol): it reports `update(done, total, message)` and
checks `cancelled()`. Results and errors come back as queued signals, so slots always run on the UI thread.
A worker that touches the project opens its own `Project` (connections are per thread). Every failure is also
emitted by `TaskRunner.failed`, which the window shows in its message bar: no worker error is terminal-only.
"""
from __future__ import annotations

import threading
import traceback
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal, Slot
from PySide6.QtWidgets import QHBoxLayout, QProgressBar, QToolButton, QWidget

from app.gui import gcguard
from app.gui.plaintext import ElidedLabel
from app.progress import Cancelled


class _Signals(QObject):
    progress = Signal(int, int, str)
    finished = Signal(object)
    failed = Signal(str)
    cancelled = Signal()


class TaskProgress:
    """Thread-safe progress/cancel handle passed to the work function."""

    def __init__(self, signals: _Signals) -> None:
        self._signals = signals
        self._cancel = threading.Event()

    def update(self, done: int, total: int, message: str = "") -> None:
        self._signals.progress.emit(int(done), int(total), message)

    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def cancel(self) -> None:
        self._cancel.set()


class Task(QRunnable):
    """One run of `fn(progress)`; connect to `signals` before `start()`."""

    def __init__(self, fn: Callable[[TaskProgress], Any], name: str = "") -> None:
        super().__init__()
        self.setAutoDelete(False)  # the Python object owns it; Qt must not delete it under us
        self.name = name
        self.signals = _Signals()
        self.progress = TaskProgress(self.signals)
        self._fn = fn
        self.done = threading.Event()
        self.error: BaseException | None = None  # set before `failed` is emitted

    def cancel(self) -> None:
        self.progress.cancel()

    @Slot()
    def run(self) -> None:
        try:
            result = self._fn(self.progress)
        except Cancelled:
            self.signals.cancelled.emit()
        except Exception as exc:  # noqa: BLE001 - reported to the UI thread
            self.error = exc
            tb = traceback.format_exc(limit=4)
            self.signals.failed.emit(f"{self.name or 'task'} failed: {exc}\n{tb}")
        else:
            if self.progress.cancelled():
                self.signals.cancelled.emit()
            else:
                self.signals.finished.emit(result)
        finally:
            self.done.set()


def when_done(task: Task, fn: Callable[[], object]) -> None:
    """Call `fn` once the task has ended, however it ended (finished, failed or cancelled): where a page re-enables
    its button or forgets its task."""
    for sig in (task.signals.finished, task.signals.failed, task.signals.cancelled):
        sig.connect(lambda *_a: fn())


class SingleTask:
    """A page's one background run at a time: its buttons are off while the run lasts, its ProgressPanel tracks it,
    a failure goes to `report`, and a result that arrives after the page moved on (a newer run, a scheme switched
    away from) is dropped. One helper: five pages had each written this out."""

    def __init__(self, progress: "ProgressPanel", enable: Callable[[bool], object]) -> None:
        self.progress = progress
        self.enable = enable  # False when a run starts, True when the page's current run ends
        self.current: Task | None = None

    def start(self, runner: "TaskRunner", task: Task, title: str, on_result: Callable[[Any], object],
              report: Callable[[BaseException], object]) -> Task:
        self.current = task
        self.enable(False)
        task.signals.finished.connect(lambda out, t=task: on_result(out) if t is self.current else None)
        task.signals.failed.connect(lambda m, t=task: report(
            t.error or RuntimeError(m.splitlines()[0] if m else f"{t.name or 'task'} failed")))
        when_done(task, lambda t=task: self._ended(t))
        self.progress.track(task, title)
        return runner.start(task)

    def cancel(self) -> None:
        if self.current is not None:
            self.current.cancel()

    def _ended(self, task: Task) -> None:
        if task is self.current:
            self.current = None
            self.enable(True)


class TaskRunner(QObject):
    """Starts tasks on a private pool and keeps them alive until they end; `wait_all` for shutdown and tests.

    `failed(task, message)` is emitted on the UI thread for every task that raised."""

    failed = Signal(object, str)

    def __init__(self, parent: QObject | None = None, max_threads: int = 2) -> None:
        super().__init__(parent)
        gcguard.install()  # workers must never run the cyclic collector over Qt objects (see app/gui/gcguard.py)
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(max_threads)
        self._tasks: set[Task] = set()

    def start(self, task: Task) -> Task:
        self._tasks.add(task)
        when_done(task, lambda t=task: self._tasks.discard(t))
        task.signals.failed.connect(lambda m, t=task: self.failed.emit(t, m))
        self.pool.start(task)
        return task

    def running(self) -> list[Task]:
        return [t for t in self._tasks if not t.done.is_set()]

    def cancel_all(self) -> None:
        for t in list(self._tasks):
            t.cancel()

    def wait_all(self, msecs: int = 30000) -> bool:
        return self.pool.waitForDone(msecs)


class ProgressPanel(QWidget):
    """Status-bar widget: message, progress bar and a cancel button for the task it tracks."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.label = ElidedLabel()
        self.label.setMaximumWidth(360)
        self.bar = QProgressBar()
        self.bar.setMaximumWidth(160)
        self.bar.setTextVisible(True)
        self.cancel_button = QToolButton()
        self.cancel_button.setText("Cancel")
        self.cancel_button.setToolTip("Cancel the running task (Esc)")
        lay.addWidget(self.label)
        lay.addWidget(self.bar)
        lay.addWidget(self.cancel_button)
        self._task: Task | None = None
        self.cancel_button.clicked.connect(self.cancel)
        self.hide()

    def track(self, task: Task, title: str) -> None:
        self._task = task
        self.label.setText(title)
        self.bar.setRange(0, 0)
        task.signals.progress.connect(self._on_progress)
        when_done(task, lambda t=task: self._ended(t))
        self.show()

    def _on_progress(self, done: int, total: int, message: str) -> None:
        if total > 0:
            self.bar.setRange(0, total)
            self.bar.setValue(min(done, total))
        if message:
            self.label.setText(message)

    def _ended(self, task: Task) -> None:
        if task is self._task:
            self._task = None
            self.hide()

    def cancel(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self.label.setText("Cancelling…")
