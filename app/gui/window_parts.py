"""What the main window's parts share. MainWindow (window.py) only composes: each part is an object in a module of
its own (the list, the detail pane, decisions, navigation, the project, the menus and status bar, the panels),
built with the WindowContext (window_context.py) and the few parts it calls; the action registry calls slots the
window maps to the parts (app/gui/actions.py).

Here: `guarded` (a slot's exception becomes a message in the window's message bar), the per-file settings keys,
and `Part`, the base of every part: its context and the context's services under short names.
"""
from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from PySide6.QtCore import QObject

if TYPE_CHECKING:
    from app.gui.undo import Session
    from app.gui.window_context import WindowContext
    from app.store import Project

SCAN_PAGES = 50  # "next unlabeled" fetches at most this many pages before giving up
DECIDE = ("accept", "skip", "flag", "note", "clear_status")
F = TypeVar("F", bound=Callable[..., Any])


def guarded(what: str, key: str = "") -> Callable[[F], F]:
    """Wrap a window slot: an exception is shown in the message bar ("<what>: <error>" and what to do) instead of
    vanishing into the terminal (Qt only prints exceptions raised in slots)."""

    def deco(fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                return fn(self, *args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - shown to the user
                self.report_error(key or fn.__name__, what, exc)
                return None

        return wrapper  # type: ignore[return-value]

    return deco


def settings_key(path: str | Path) -> str:
    """Per-file settings key: two copies of a project share a project_id but not a path."""
    p = Path(path)
    return _absolute_key(str(p)) if p.is_absolute() else hashlib.sha1(str(p.resolve()).encode()).hexdigest()[:16]


@functools.lru_cache(maxsize=64)  # asked on every move to another unit: resolve() is a syscall per path component
def _absolute_key(path: str) -> str:
    return hashlib.sha1(str(Path(path).resolve()).encode()).hexdigest()[:16]


def last_unit_key(project: "Project | None") -> str | None:
    """The settings key of the unit shown when this project file was last closed."""
    return None if project is None else f"files/{settings_key(project.path)}/last_unit"


class Part(QObject):
    """A part of the main window: its context, and the context's services under short names (`guarded` calls
    `report_error`)."""

    def __init__(self, ctx: "WindowContext", parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx

    @property
    def project(self) -> "Project | None":
        return self.ctx.project

    @property
    def session(self) -> "Session | None":
        return self.ctx.session

    def report_error(self, key: str, what: str, exc: BaseException,
                     action: tuple[str, Callable[[], object]] | None = None) -> None:
        self.ctx.report_error(key, what, exc, action)

    def status_message(self, text: str, msecs: int = 5000) -> None:
        self.ctx.status_message(text, msecs)
