"""Background safety work for the open project, shown in the window's message bar:

- a quick integrity check (`PRAGMA quick_check`, app.store.health) soon after the project opens (CHECK_AFTER_MS),
  so a damaged file is reported within a second or two ("run `concord check --repair`") rather than when a decision
  fails to save;
- automatic backups through SQLite's backup API (`Project.backup_if_due`, app.store.backup), at most once per
  hour of use: tried at the first pause of IDLE_MS after a commit when the last attempt is an hour old, and on a
  timer while there are commits not yet backed up. The store skips the backup if the newest one in
  `<name>.backups/` is younger than an hour. No backup before the check has found the file healthy, and none of a
  damaged file.

Both run in workers with their own connections; the UI thread never waits for them. Neither starts in the middle
of the work it protects: at 200k units the check reads the whole 200 MB file (0.5 s of a core) and a backup writes
it (1.6 s of disk); started at once, they competed with the window's first render and with the commits of a
labeling burst (each commit's fsync queued behind the backup's writes). A window closed before the check starts
never starts it.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QWidget

from app.gui.banner import MessageBar
from app.gui.workers import Task, TaskProgress, TaskRunner, when_done
from app.store import Project

BACKUP_EVERY = 3600.0  # seconds of app use between automatic backups
TICK_MS = 5 * 60 * 1000  # how often the timer looks for commits not backed up yet
CHECK_AFTER_MS = 1500  # the open-time check starts once the window has rendered its first unit
IDLE_MS = 3000  # a due backup waits for this long a pause in commits


def quick_check(path: str, _progress: TaskProgress) -> list[str]:
    """Worker: SQLite's quick_check of the project ([] = healthy)."""
    from app.store import health

    with Project.open(path) as wp:
        return health.quick_check(wp.conn)


def backup_if_due(path: str, every: float, _progress: TaskProgress) -> str | None:
    """Worker: an automatic backup unless the newest is younger than `every` seconds; its path, or None."""
    with Project.open(path) as wp:
        made = wp.backup_if_due(every)
    return None if made is None else str(made)


class ProjectSafety(QObject):
    checked = Signal(list)  # the quick_check problems ([] = healthy)
    backed_up = Signal(str)  # the backup file written

    def __init__(self, runner: TaskRunner, messages: MessageBar, notify: Callable[[str], None],
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.runner, self.messages, self._notify = runner, messages, notify
        self.every = BACKUP_EVERY
        self.path: str | None = None
        self.health: list[str] | None = None  # None until the check has run
        self._last_attempt: float | None = None  # monotonic time of the last backup attempt in this session
        self._pending = False  # commits since the last attempt
        self._backup: Task | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._tick)
        self._check_timer = self._single_shot(CHECK_AFTER_MS, self._start_check)
        self._idle = self._single_shot(IDLE_MS, self._tick)

    def _single_shot(self, msecs: int, slot: Callable[[], None]) -> QTimer:
        timer = QTimer(self)
        timer.setSingleShot(True)
        timer.setInterval(msecs)
        timer.timeout.connect(slot)
        return timer

    # -- project ---------------------------------------------------------------------------------------------------
    def start(self, path: str | None) -> None:
        """A project was opened (or closed, with None): check it in the background; the backup clock restarts."""
        self.path, self.health = path, None
        self._last_attempt, self._pending = None, False
        self.messages.dismiss("health")
        self._idle.stop()
        if path is None:
            self._timer.stop()
            self._check_timer.stop()
            return
        self._timer.start()
        self._check_timer.start()

    def _start_check(self) -> None:
        path = self.path
        if path is None:
            return
        if not self._window_shown():  # not shown yet, or closed: the check waits until the window shows
            self._check_timer.start()
            return
        task = Task(partial(quick_check, path), "integrity check")
        task.signals.finished.connect(lambda problems, p=path: self._checked(p, problems))
        self.runner.start(task)

    def _checked(self, path: str, problems: list[str]) -> None:
        if path != self.path:
            return
        self.health = list(problems)
        self.checked.emit(self.health)
        if not problems and self._pending and self.due():
            self._idle.start()  # a decision saved before the check ended: backed up at the next pause
        if problems:
            more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
            self.messages.show_message(
                "health", f"The project file is damaged: {problems[0].strip()}{more}",
                f"Close Concord and run `concord check --repair {path}`; until then decisions may fail to save "
                "and what you see may be incomplete.", detail="\n".join(problems))

    # -- backups ---------------------------------------------------------------------------------------------------
    def committed(self) -> None:
        """A decision was written: back up at the next pause of IDLE_MS if the last attempt is `every` seconds old
        (or there was none); each commit restarts the wait."""
        self._pending = True
        if self.due():
            self._idle.start()

    def due(self) -> bool:
        return self._last_attempt is None or time.monotonic() - self._last_attempt >= self.every

    def _tick(self) -> None:
        if self._pending and self.due() and self._window_shown():
            self.backup_now()

    def _window_shown(self) -> bool:
        """False once the window is closed (a timer that fires after closing starts no work), or before it shows."""
        window = self.parent()
        return not isinstance(window, QWidget) or window.isVisible()

    def backup_now(self) -> Task | None:
        """Back up in a worker, once the open-time check found the file healthy: a backup of a damaged file copies
        the damage, and keeping only the newest few would push out the healthy ones."""
        if self.path is None or self._backup is not None or self.health != []:
            return None
        self._last_attempt, self._pending = time.monotonic(), False
        task = Task(partial(backup_if_due, self.path, self.every), "automatic backup")
        task.signals.finished.connect(self._backed_up)
        when_done(task, lambda: setattr(self, "_backup", None))
        self._backup = task
        self.runner.start(task)  # a failure reaches the message bar through TaskRunner.failed
        return task

    def _backed_up(self, made: str | None) -> None:
        if made:
            self.messages.dismiss("task:automatic backup")
            self.backed_up.emit(made)
            self._notify(f"Backed up to {made}")
