"""The main window. It only composes: it builds the parts and wires their signals. The review list + filters on
the left (window_list.py), the scheme's detail view on the right (window_units.py), menus built from the action
registry, the toolbar and a status bar with progress (window_chrome.py); decisions (window_decisions.py) go
through the Session; navigation (window_navigation.py), the project (window_project.py) and the panels
(window_panels.py) are parts of their own.

Each part is an object holding its own state, built with the WindowContext (window_context.py: the settings,
the annotator, the runner, the session, blind mode, the message bar and status messages) and the few other parts
it calls, through their interfaces (window_context.ListPane / DetailPane) or callables handed in here. They tell
each other what happened by signals wired below (a row selected, the list cleared, the decisions on or off, a
config chosen, a unit to bring to the front).

Never silent: every slot that touches the store is `guarded` (window_parts.py: an exception becomes a message in the
window's message bar, naming what failed and what to do), and so is every worker failure (`TaskRunner.failed`).
The window names no scheme: the views come from the registry, and the config box holds whatever config the views
declared (opaque here).

The panels that open over the window (calibration, adjudication, agreement, export) see only the context and
the PanelsPart (window_context.PanelHost). The attributes below the composition (`list`, `model`,
`session_progress`, `select_row`, ...) are thin read-only views of the parts, for tests and screenshots.
"""
from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from PySide6.QtCore import QSettings, Qt, QTimer
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import QMainWindow, QSplitter, QVBoxLayout, QWidget

from app.gui.banner import MessageBar
from app.gui.environment import quiet_model_loading
from app.gui.files_part import FilesPart
from app.gui.safety import ProjectSafety
from app.gui.window_chrome import ChromePart
from app.gui.window_context import WindowContext
from app.gui.window_decisions import DecisionsPart
from app.gui.window_list import UnitListPart
from app.gui.window_navigation import NavigationPart
from app.gui.window_panels import PanelsPart
from app.gui.window_project import ProjectPanes, ProjectPart
from app.gui.window_units import DetailPanePart
from app.gui.workers import ProgressPanel, TaskRunner
from app.store import Project

DEFAULT_SIZE = (1500, 940)


def _via(part: str, name: str) -> property:
    """A read-only view of one part's attribute or method on the window."""
    return property(lambda self: getattr(getattr(self, part), name))


class MainWindow(QMainWindow):
    import_summary: Any = None  # the latest File ▸ Import summary dialog (app/gui/import_dialog.py sets it)

    def __init__(self, project: Project | None, annotator: str, settings: QSettings | None = None,
                 owns_project: bool = True, record_time: bool = True) -> None:
        super().__init__()
        quiet_model_loading()  # before any worker starts the embedding helper process
        self.messages = MessageBar()
        self.ctx = WindowContext(settings or QSettings(), annotator, TaskRunner(self), ProgressPanel(), self.messages,
                                 owns_project=owns_project, record_time=record_time, parent=self)
        self.setWindowTitle("Concord")
        self._build()
        self.set_project(project)

    # -- composition -----------------------------------------------------------------------------------------------
    def _build(self) -> None:
        ctx = self.ctx
        self.chrome = chrome = ChromePart(ctx, self, self)
        self.units = units = UnitListPart(ctx, shown=lambda: self.detail.shown,
                                          show_config_box=lambda on: chrome.configs.set_visible(on), parent=self)
        left = units.build()
        self.detail = detail = DetailPanePart(ctx, units, self)
        self.split = QSplitter(Qt.Orientation.Horizontal)
        self.split.addWidget(left)
        self.split.addWidget(detail.build())
        self.split.setStretchFactor(0, 0)
        self.split.setStretchFactor(1, 1)
        self.split.setSizes([600, 1000])
        central = QWidget()
        cl = QVBoxLayout(central)
        cl.setContentsMargins(0, 0, 0, 0)
        cl.setSpacing(0)
        cl.addWidget(self.messages)
        cl.addWidget(self.split, 1)
        self.setCentralWidget(central)
        self.safety = ProjectSafety(ctx.runner, self.messages, lambda m: ctx.status_message(m, 6000), self)

        self.navigation = nav = NavigationPart(ctx, units, detail, lambda: self.panels.next_disagreement(), self)
        self.decisions = dec = DecisionsPart(
            ctx, units, detail, go_next=nav.go_next, recount=lambda: chrome.session_progress.schedule(),
            auto_advance=lambda: chrome.actions_by_id["auto_advance"].isChecked(), dialog_parent=self, parent=self)
        self.files = FilesPart(ctx, self, self)
        chrome.build_menus(self.handlers())
        chrome.build_status_bar(unit_filter=lambda: units.model.unit_filter)
        self.panels = panels = PanelsPart(ctx, self, units, detail, chrome.configs, chrome.actions_by_id["evaluate"],
                                          choose_config=self._choose_config, parent=self)
        actions = chrome.actions_by_id
        self.project_part = ProjectPart(ctx, self, ProjectPanes(
            units=units, detail=detail, configs=chrome.configs, undo=actions["undo"], redo=actions["redo"],
            safety=self.safety, recount=chrome.session_progress.refresh, after_change=dec.after_change,
            hint_scores=panels.hint_machine_scores), self)

        units.row_selected.connect(detail.show_unit)
        units.cleared.connect(detail.clear)
        detail.decisions_changed.connect(chrome.enable_decisions)
        detail.front_requested.connect(self._to_front)
        chrome.config_chosen.connect(self.project_part.set_config)
        chrome.session_progress.counted.connect(
            lambda n, f: units.update_count(n) if f == units.model.unit_filter else None)

    def handlers(self) -> SimpleNamespace:
        """The slots the action registry names (app/gui/actions.py `handler`), each a part's. The project and the
        panels are built after the menus (they need the config box and the actions): theirs are looked up late."""
        nav, dec = self.navigation, self.decisions

        def late(part: str, name: str) -> Callable[[], object]:
            return lambda: getattr(getattr(self, part), name)()

        names = {"project_part": ("open_project_dialog",),
                 "panels": ("open_export_dialog", "open_calibration", "compute_machine_scores", "open_adjudication",
                            "open_agreement", "show_cheatsheet")}
        return SimpleNamespace(
            **{name: late(part, name) for part, ns in names.items() for name in ns},
            close=self.close, undo=dec.undo, redo=dec.redo, accept=dec.accept, skip=dec.skip, flag=dec.flag,
            edit_note=dec.edit_note, clear_status=dec.clear_status, set_auto_advance=dec.set_auto_advance,
            cancel_tasks=dec.cancel_tasks, view_action=dec.view_action, go_next=nav.go_next, go_prev=nav.go_prev,
            go_next_unlabeled=nav.go_next_unlabeled, focus_list=nav.focus_list, focus_search=nav.focus_search,
            new_project_dialog=self.files.new_project_dialog, import_dialog=self.files.import_dialog,
            set_hide_machine=self.files.set_hide_machine)

    def _choose_config(self, ref: str) -> None:
        """A panel made config `ref` (a calibration applied): list the configs again and choose it."""
        self.project_part.load_configs()
        self.project_part.set_config(ref)

    def _to_front(self) -> None:
        if self.isMinimized():
            self.showNormal()
        self.raise_()
        self.activateWindow()

    def showEvent(self, event: Any) -> None:  # noqa: N802
        super().showEvent(event)
        if not self.units.panes_fitted:
            QTimer.singleShot(0, self.fit_panes)  # once the splitter has its real width

    def fit_panes(self) -> None:
        self.units.fit_panes(self.split)

    # -- the parts, seen from the panels and tests -----------------------------------------------------------------
    settings = _via("ctx", "settings")
    annotator = _via("ctx", "annotator")
    runner = _via("ctx", "runner")
    progress = _via("ctx", "progress")
    session = _via("ctx", "session")
    project = _via("ctx", "project")
    blind_as = _via("ctx", "blind_as")
    status_message = _via("ctx", "status_message")
    report_error = _via("ctx", "report_error")
    list = _via("units", "list")
    model = _via("units", "model")
    filters = _via("units", "filters")
    queue = _via("units", "queue")
    count_label = _via("units", "count_label")
    select_row = _via("units", "select_row")
    current_row = _via("units", "current_row")
    _panes_fitted = _via("units", "panes_fitted")
    stack = _via("detail", "stack")
    placeholder = _via("detail", "placeholder")
    failed_page = _via("detail", "failed_page")
    views = _via("detail", "views")
    current_view = _via("detail", "current_view")
    shown_view = _via("detail", "shown_view")
    show_unit = _via("detail", "show_unit")
    show_unit_by_key = _via("detail", "show_unit_by_key")
    reveal_unit = _via("detail", "reveal_unit")
    _shown = _via("detail", "shown")
    _show_failed = _via("detail", "show_failed")
    configs = _via("chrome", "configs")
    config_box = _via("chrome", "config_box")
    session_progress = _via("chrome", "session_progress")
    status_line = _via("chrome", "status_line")
    actions_by_id = _via("chrome", "actions_by_id")
    all_actions = _via("chrome", "all_actions")
    set_project = _via("project_part", "set_project")
    open_project = _via("project_part", "open_project")
    set_config = _via("project_part", "set_config")
    load_configs = _via("project_part", "load_configs")
    compute_machine_scores = _via("panels", "compute_machine_scores")
    cheatsheet = _via("panels", "cheatsheet")
    accept = _via("decisions", "accept")
    undo = _via("decisions", "undo")
    view_action = _via("decisions", "view_action")
    go_next = _via("navigation", "go_next")

    # the panels open over the window (the PanelsPart keeps them; older tests read them here)
    _calibration_panel = property(lambda self: self.panels.opened.get("calibration"))
    _adjudication_panel = property(lambda self: self.panels.opened.get("adjudication"))
    _agreement_panel = property(lambda self: self.panels.opened.get("agreement"))

    @property
    def _config(self) -> Any:
        """The config chosen in the toolbar's box: opaque here, the views that declared the choice read it."""
        return self.ctx.config()

    # -- lifecycle ------------------------------------------------------------------------------------------------
    def closeEvent(self, event: QCloseEvent) -> None:
        ctx = self.ctx
        self.detail.leave_unit()
        self.detail.remember_now()
        if ctx.session is not None:
            ctx.session.flush_time()
        self.panels.close_panels()
        self.detail.shutdown()
        ctx.runner.cancel_all()
        ctx.runner.wait_all(15000)
        from app.gui.embedproc import shutdown

        shutdown()
        if ctx.record_time:  # a screenshot run (offscreen, fixed size) records nothing, its geometry included
            ctx.settings.setValue("geometry", self.saveGeometry())
        if ctx.session is not None and ctx.owns_project:
            ctx.session.project.close()
            ctx.session = None
        super().closeEvent(event)
