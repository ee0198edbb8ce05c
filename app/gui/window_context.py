"""What the main window's parts share, and the small interfaces through which they ask each other (issue #25 item 3:
composition, not mixins).

`WindowContext` holds the window's state every part may read -- the settings, the annotator, the task runner and
progress panel, the Session (and so the project), blind mode, the message bar -- with two services: a transient
status message (`status_message`, shown by the status bar that connects `status`) and `report_error` (the
message bar). The parts (window_list.py, window_units.py, window_navigation.py, window_decisions.py,
window_project.py, window_chrome.py, window_panels.py) are objects MainWindow builds with this context and with
the few other parts they call, typed by the Protocols below; none reads another's attributes beyond these.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QObject, QSettings, Signal

if TYPE_CHECKING:
    from PySide6.QtWidgets import QTableView, QWidget

    from app.gui.banner import MessageBar
    from app.gui.filters import FilterBar
    from app.gui.models import UnitListModel
    from app.gui.queue_combo import QueueOrder
    from app.gui.undo import Session
    from app.gui.views import DetailView
    from app.gui.workers import ProgressPanel, TaskRunner
    from app.store import Project, UnitFilter


class WindowContext(QObject):
    """The window's shared state and services (see the module's docstring)."""

    status = Signal(str, int)  # a transient status message and how long it shows (ms; 0: until replaced)

    def __init__(self, settings: QSettings, annotator: str, runner: "TaskRunner", progress: "ProgressPanel",
                 messages: "MessageBar", *, owns_project: bool = True, record_time: bool = True,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.settings = settings
        self.annotator = annotator
        self.runner = runner
        self.progress = progress
        self.messages = messages
        self.owns_project = owns_project
        self.record_time = record_time
        self.session: Session | None = None
        self.blind_as: str | None = None  # blind mode: whose labels the app shows (None: the resolved ones)
        self.queue_of: str | None = None  # blind mode with work assigned to this annotator: only their units
        self.config: Callable[[], Any] = lambda: None  # the config chosen in the toolbar's box (set by the chrome)

    @property
    def project(self) -> "Project | None":
        return None if self.session is None else self.session.project

    def status_message(self, text: str, msecs: int = 5000) -> None:
        self.status.emit(text, msecs)

    def report_error(self, key: str, what: str, exc: BaseException,
                     action: tuple[str, Callable[[], object]] | None = None) -> None:
        """Show `exc` in the message bar: what failed, the error, and what to do (details in the tooltip)."""
        path = str(self.project.path) if self.project is not None else "PROJECT"
        self.messages.report(key, what, exc, project=path, action=action)


def config_ref(ctx: WindowContext) -> str:
    """The ref of the config chosen in the toolbar's box ('' without one)."""
    cfg = ctx.config()
    return "" if cfg is None else str(cfg.ref)


class ListPane(Protocol):
    """What the other parts ask of the review list (window_list.UnitListPart)."""

    model: "UnitListModel"
    list: "QTableView"
    filters: "FilterBar"
    queue: "QueueOrder"

    def select_row(self, row: int) -> None: ...
    def current_row(self) -> int: ...
    def find_row(self, sample_id: str, unit: str) -> int: ...
    def clear_selection(self) -> None: ...
    def reload_list(self, keep: bool) -> None: ...
    def unit_filter(self, f: "UnitFilter | None" = None) -> "UnitFilter": ...


class DetailPane(Protocol):
    """What the other parts ask of the detail pane (window_units.DetailPanePart)."""

    views: dict[str, "DetailView"]

    @property
    def current_view(self) -> "DetailView | None": ...
    @property
    def shown(self) -> tuple[str, str] | None: ...
    def shown_view(self) -> "DetailView | None": ...
    def show_unit_by_key(self, sample_id: str, unit: str) -> None: ...
    def show_failed(self, row: dict[str, Any], exc: BaseException) -> None: ...
    def reveal_unit(self, sample_id: str, unit: str, pair: tuple[int, int] | None = None) -> bool: ...


class PanelHost(Protocol):
    """What the panels that open over the window (calibration, adjudication, agreement, export; their pages) ask of
    it: the context (project, runner, settings, session, status messages, the chosen config) and three services.
    window_panels.PanelsPart is it; a panel names no other part of the window."""

    ctx: WindowContext
    parent_widget: "QWidget"  # the window itself, as a dialog's Qt parent
    opened: dict[str, Any]  # the panels open over the window, one per kind (the window closes them with it)

    def reveal_unit(self, sample_id: str, unit: str, pair: tuple[int, int] | None = None) -> bool: ...
    def choose_config(self, ref: str) -> None: ...  # list the project's configs again and choose `ref` in the window
