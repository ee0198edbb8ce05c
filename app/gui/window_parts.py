"""What the main window's parts share. MainWindow (window.py) only composes: each part is a mixin in a module of its
own (the list, the detail pane, decisions, navigation, the project, the menus and status bar, the panels), and the
action registry calls their slots by name on the window (app/gui/actions.py).

Here: `guarded` (a slot's exception becomes a message in the window's message bar), the per-file settings key, and
`WindowPart`, the window's shared state as annotations only, so each part reads as typed code.
"""
from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from PySide6.QtCore import QSettings
    from PySide6.QtGui import QAction
    from PySide6.QtWidgets import QLabel, QSplitter, QStackedWidget, QTableView

    from app.gui.actions import ActionSpec
    from app.gui.banner import MessageBar
    from app.gui.config_box import ConfigBox
    from app.gui.filters import FilterBar
    from app.gui.models import UnitListModel
    from app.gui.plaintext import ElidedLabel
    from app.gui.queue_combo import QueueOrder
    from app.gui.safety import ProjectSafety
    from app.gui.statusbar import SessionProgress
    from app.gui.undo import Session
    from app.gui.views import DetailView
    from app.gui.workers import ProgressPanel, TaskRunner

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


class WindowPart:
    """The state the parts of the main window share (set by MainWindow and the parts' builders)."""

    settings: QSettings
    annotator: str
    session: Session | None
    runner: TaskRunner
    views: dict[str, DetailView]
    _shown: tuple[str, str] | None  # the unit the detail pane rendered (None: nothing or failed)
    _shown_at: float
    _owns_project: bool
    _record_time: bool
    blind_as: str | None  # blind mode: whose labels the app shows (None: the resolved ones)
    _queue_of: str | None  # blind mode with work assigned to this annotator: only their units
    model: UnitListModel
    list: QTableView
    filters: FilterBar
    queue: QueueOrder
    count_label: QLabel
    stack: QStackedWidget
    placeholder: QLabel
    failed_page: QLabel
    split: QSplitter
    messages: MessageBar
    safety: ProjectSafety
    all_actions: tuple[ActionSpec, ...]
    actions_by_id: dict[str, QAction]
    configs: ConfigBox
    progress: ProgressPanel
    session_progress: SessionProgress
    status_line: ElidedLabel
