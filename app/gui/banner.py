"""Errors appear in the window, never only on the terminal.

`MessageBar` sits above the review list and the detail pane: one non-modal row per problem, naming what failed
and what to do, with an optional action button (e.g. "Retry") and a dismiss button. Reporting the same `key`
again updates its row (with a repeat count) instead of stacking copies. Worker failures (`TaskRunner.failed`),
store errors in slots (the window's `guarded` wrapper) and failed writes (`Session.failed`) all end here.
"""
from __future__ import annotations

import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QPushButton, QToolButton, QVBoxLayout, QWidget

from app.errors import UsageError
from app.gui.plaintext import plain_label, plain_tooltip
from app.store.project import is_corrupt, is_store_error

LEVELS = {  # background, border, text
    "error": ("#fdecea", "#c62828", "#7f0000"),
    "warning": ("#fff8e1", "#f9a825", "#5d4037"),
    "info": ("#e3f2fd", "#1565c0", "#0d47a1"),
}


def advice(exc: BaseException | None, project: str = "PROJECT") -> str:
    """What the user can do about `exc`, in words."""
    msg = str(exc).lower()
    if (exc is not None and is_store_error(exc)) or any(w in msg for w in ("malformed", "disk i/o", "damaged")):
        if "locked" in msg or "busy" in msg:
            return "Another program is writing to the project file; try again in a moment."
        if "readonly" in msg or "read-only" in msg:
            return "The project file is read-only: check its permissions, then reopen it."
        if any(w in msg for w in ("malformed", "not a database", "disk i/o", "corrupt", "damaged")):
            return f"The project file may be damaged: close Concord and run `concord check --repair {project}`."
        return (f"Your decisions so far are saved. Try again; if it keeps failing, close Concord and run "
                f"`concord check {project}`.")
    if isinstance(exc, UsageError):
        return "Check the input and try again."
    return "Try again; if it keeps failing, please report it with the details (hover this message)."


def describe(exc: BaseException) -> str:
    """One line naming the exception (its type for non-usage errors, so 'database is locked' reads as a DB error)."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    if isinstance(exc, UsageError):
        return text or type(exc).__name__
    name = type(exc).__name__
    return f"{name}: {text}" if text else name


@dataclass
class Message:
    key: str
    level: str
    text: str
    todo: str
    detail: str
    count: int = 1


class MessageRow(QFrame):
    dismissed = Signal(str)

    def __init__(self, msg: Message, action: tuple[str, Callable[[], object]] | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(f"message_{msg.level}")
        self.msg = msg
        bg, border, fg = LEVELS.get(msg.level, LEVELS["error"])
        self.setStyleSheet(f"MessageRow {{ background:{bg}; border:1px solid {border}; border-radius:3px; }}"
                           f"QLabel {{ color:{fg}; border:none; }}")
        lay = QHBoxLayout(self)
        lay.setContentsMargins(8, 3, 4, 3)
        self.label = plain_label(wrap=True, selectable=True)
        lay.addWidget(self.label, 1)
        self.action_button: QPushButton | None = None
        if action is not None:
            self.action_button = QPushButton(action[0])
            self.action_button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
            self.action_button.setAutoDefault(False)
            callback = action[1]
            self.action_button.clicked.connect(lambda _c=False: callback())
            lay.addWidget(self.action_button)
        close = QToolButton()
        close.setText("✕")
        close.setObjectName("dismiss")
        close.setToolTip("Dismiss this message")
        close.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        close.setAutoRaise(True)
        close.clicked.connect(lambda: self.dismissed.emit(self.msg.key))
        lay.addWidget(close)
        self.update_text()

    def update_text(self) -> None:
        m = self.msg
        times = f" ({m.count}×)" if m.count > 1 else ""
        self.label.setText(f"{m.text}{times}" + (f"\n{m.todo}" if m.todo else ""))
        self.label.setToolTip(plain_tooltip(m.detail))


class MessageBar(QWidget):
    """The stack of current messages; hidden when empty."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("message_bar")
        self._lay = QVBoxLayout(self)
        self._lay.setContentsMargins(4, 4, 4, 0)
        self._lay.setSpacing(3)
        self._rows: dict[str, MessageRow] = {}
        self.hide()

    def show_message(self, key: str, text: str, todo: str = "", *, level: str = "error", detail: str = "",
                     action: tuple[str, Callable[[], object]] | None = None) -> MessageRow:
        row = self._rows.get(key)
        if row is not None and row.msg.level == level and row.msg.text == text and (row.action_button is None) == (action is None):
            row.msg.count += 1
            row.msg.todo, row.msg.detail = todo, detail
            row.update_text()
        else:
            if row is not None:
                self._remove(key)
            row = MessageRow(Message(key, level, text, todo, detail), action, self)
            row.dismissed.connect(self.dismiss)
            self._rows[key] = row
            self._lay.addWidget(row)
        self.show()
        self.changed.emit()
        return row

    def report(self, key: str, what: str, exc: BaseException, *, project: str = "PROJECT",
               action: tuple[str, Callable[[], object]] | None = None, todo: str | None = None,
               echo: bool = True) -> MessageRow:
        """An exception as a message: "<what>: <error>" and what to do; the traceback goes to the tooltip (and to
        stderr, unless `echo` is False because it was printed already)."""
        detail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__, limit=6))
        if echo:  # a damaged file is a known condition with its own advice, not a bug: no traceback in the log
            print(f"Concord: {what}: {describe(exc)}" + ("" if is_corrupt(exc) else f"\n{detail}"), file=sys.stderr)
        return self.show_message(key, f"{what}: {describe(exc)}", todo if todo is not None else advice(exc, project),
                                 detail=detail, action=action)

    def dismiss(self, key: str) -> None:
        if key in self._rows:
            self._remove(key)
            self.setVisible(bool(self._rows))
            self.changed.emit()

    def _remove(self, key: str) -> None:
        row = self._rows.pop(key)
        self._lay.removeWidget(row)
        row.hide()
        row.deleteLater()

    def clear(self) -> None:
        for key in list(self._rows):
            self.dismiss(key)

    def has(self, key: str) -> bool:
        return key in self._rows

    def row(self, key: str) -> MessageRow | None:
        return self._rows.get(key)

    def texts(self, level: str | None = None) -> list[str]:
        """The shown messages (of `level`, if given) as the user reads them."""
        return [r.label.text() for r in self._rows.values() if level is None or r.msg.level == level]
