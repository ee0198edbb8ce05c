"""The session: project + annotator + undo stack. Every decision goes through `Session.do`.

A correction (app.corrections) is applied to the project *before* it is pushed, so a failed write never leaves
a phantom entry on the stack; the QUndoCommand only swaps the command with the inverse its application returned.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QUndoCommand, QUndoStack

from app.corrections import Commit, SetLabels
from app.store import Project

DONE = ("accepted", "corrected")


def _targets(cmd: SetLabels) -> list[tuple[str, str]]:
    return list(dict.fromkeys((c.sample_id, c.unit) for c in cmd.changes))


class CorrectionCommand(QUndoCommand):
    """Wraps one SetLabels: redo applies the forward command, undo its inverse; both persist events at once."""

    def __init__(self, session: "Session", forward: SetLabels, inverse: SetLabels) -> None:
        super().__init__(forward.text)
        self._session = session
        self._forward = forward
        self._inverse = inverse
        self._applied = True  # the session applied it before pushing

    @property
    def targets(self) -> list[tuple[str, str]]:
        return _targets(self._forward)

    def redo(self) -> None:
        if self._applied:
            return
        try:
            self._inverse = self._session.execute(self._forward, replay=True)
        except Exception:  # noqa: BLE001 - the session reported it; the stored state is unchanged
            return
        self._applied = True

    def undo(self) -> None:
        try:
            self._forward = self._session.execute(self._inverse, replay=True)
        except Exception:  # noqa: BLE001 - the session reported it; the stored state is unchanged
            return
        self._applied = False


class Session(QObject):
    """Who is labeling which project; emits `changed(sample_id, unit, replay)` after every write."""

    changed = Signal(str, str, bool)
    failed = Signal(str)

    def __init__(self, project: Project, annotator: str, parent: QObject | None = None, *, record_time: bool = True,
                 shown: Callable[[], tuple[str, str] | None] = lambda: None) -> None:
        super().__init__(parent)
        self.project = project
        self.annotator = annotator.strip()  # stored with the first decision (record() adds the annotator)
        # blind mode without anchoring (issue #27): machine labels hidden until the annotator's own decision;
        # `shown` is the unit on screen, whose visibility each event records
        self.hide_machine = project.reveals.hide_machine()
        self.shown = shown
        self.record_time = record_time
        self._time_log: list[tuple[str, str, float]] = []
        self._flush_timer = QTimer(self)  # time logs are batched off the navigation path
        self._flush_timer.setSingleShot(True)
        self._flush_timer.setInterval(2000)
        self._flush_timer.timeout.connect(self.flush_time)
        self.stack = QUndoStack(self)
        self.started = time.monotonic()
        self.done_units: set[tuple[str, str]] = set()  # units this session left accepted/corrected
        self.last_error: BaseException | None = None  # why the last `do` wrote nothing (None: it wrote, or no change)

    def machine_hidden(self, sample_id: str, unit: str) -> bool:
        """Whether the views hide the machine's labels of the unit from this annotator (not decided on it yet)."""
        return self.hide_machine and not self.project.reveals.revealed(self.annotator, sample_id, unit)

    def machine_visible(self) -> bool:
        """Whether the machine's labels of the unit on screen are visible now (recorded with each event)."""
        shown = self.shown()
        if shown is None:  # no unit on screen (the pane failed or was cleared): hidden if the setting hides them
            return not self.hide_machine
        return not self.machine_hidden(*shown)

    def execute(self, cmd: SetLabels, *, replay: bool = False,
                known: Mapping[tuple[str, str, str], Any] | None = None) -> SetLabels:
        try:
            inverse = cmd.apply(self.project, self.annotator, known=known, machine_visible=self.machine_visible())
        except Exception as exc:  # noqa: BLE001 - surfaced to the user, never swallowed
            self.last_error = exc
            self.failed.emit(f"Could not save '{cmd.text}': {exc}")
            raise
        self._track(cmd)
        for sid, unit in _targets(cmd):
            self.changed.emit(sid, unit, replay)
        return inverse

    def do(self, cmd: SetLabels) -> bool:
        """Apply and push; returns False when the command changes nothing (no event, no undo step) or the write
        failed (`last_error` says why, `failed` told the user)."""
        self.last_error = None
        try:
            # this annotator's own labels: a second annotator who agrees with the resolved label still records theirs
            before = {(c.sample_id, c.unit, c.kind): self.project.decisions.current(c.sample_id, c.unit, c.kind, self.annotator)
                      for c in cmd.changes}
        except Exception as exc:  # noqa: BLE001
            self.last_error = exc
            self.failed.emit(f"Could not save '{cmd.text}': {exc}")
            return False
        if not getattr(cmd, "adjudicates", False) and all(
                before[(c.sample_id, c.unit, c.kind)] == _norm(c.after) for c in cmd.changes):
            if isinstance(cmd, Commit):  # the labels were already these: the commit still reveals the machine's
                return self._reveal_only(cmd)
            return False
        try:
            inverse = self.execute(cmd, known=before)  # the values just read are the inverse's
        except Exception:  # noqa: BLE001 - `failed` already told the user
            return False
        self.stack.push(CorrectionCommand(self, cmd, inverse))
        return True

    def _reveal_only(self, cmd: Commit) -> bool:
        try:
            self.project.reveals.reveal(self.annotator, *cmd.unit)
        except Exception as exc:  # noqa: BLE001
            self.last_error = exc
            self.failed.emit(f"Could not save '{cmd.text}': {exc}")
            return False
        self.changed.emit(*cmd.unit, False)
        return False

    def _track(self, cmd: SetLabels) -> None:
        for c in cmd.changes:
            if c.kind == "status":
                key = (c.sample_id, c.unit)
                if c.after in DONE:
                    self.done_units.add(key)
                else:
                    self.done_units.discard(key)

    def pace_per_hour(self) -> float:
        hours = max(time.monotonic() - self.started, 1.0) / 3600.0
        return len(self.done_units) / hours

    def log_time(self, sample_id: str, unit: str, seconds: float) -> None:
        """Queue a work-log entry; entries are written together (one fsync) by `flush_time`, soon after."""
        if self.record_time:
            self._time_log.append((sample_id, unit, seconds))
            if not self._flush_timer.isActive():
                self._flush_timer.start()

    def flush_time(self) -> None:
        entries, self._time_log = self._time_log, []
        if not entries:
            return
        try:
            with self.project.transaction():
                for sid, unit, seconds in entries:
                    self.project.decisions.log_time(self.annotator, sid, unit, seconds)
        except Exception as exc:  # noqa: BLE001
            self.failed.emit(f"Could not record time spent: {exc}")


def _norm(value: object) -> object:
    """The value as the store returns it after a JSON round trip (tuples become lists)."""
    if isinstance(value, tuple):
        return [_norm(v) for v in value]
    if isinstance(value, list):
        return [_norm(v) for v in value]
    if isinstance(value, dict):
        return {k: _norm(v) for k, v in value.items()}
    return value
