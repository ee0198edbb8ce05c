"""The main window's project: opening and switching project files (a Session per project, blind mode), the unit
shown when the file was last closed, and the config box's choice for the project.

Opening a project is the one sequence that touches every part, in this order: the detail pane lets its views go,
the old session closes, the new one opens (its decisions go to `after_change`), then the configs, the filters, the
list and the counts follow. The parts are handed in (`panes`), each through its interface."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QMainWindow

from app.gui import blind
from app.gui.config_box import ConfigBox
from app.gui.safety import ProjectSafety
from app.gui.undo import Session
from app.gui.window_context import WindowContext
from app.gui.window_parts import Part, guarded, last_unit_key
from app.gui.window_list import UnitListPart
from app.gui.window_units import DetailPanePart
from app.store import Project


@dataclass(frozen=True)
class ProjectPanes:
    """What opening a project drives: the list and the pane, the config box, undo/redo, the safety checks, the
    status bar's counts, the slot for every decision and the machine-scores hint."""

    units: UnitListPart
    detail: DetailPanePart
    configs: ConfigBox
    undo: QAction
    redo: QAction
    safety: ProjectSafety
    recount: Callable[[], None]
    after_change: Callable[[str, str, bool], None]
    hint_scores: Callable[[], None]


class ProjectPart(Part):
    def __init__(self, ctx: WindowContext, host: QMainWindow, panes: ProjectPanes,
                 parent: QObject | None = None) -> None:
        super().__init__(ctx, parent)
        self.host = host
        self.panes = panes

    @guarded("Could not open the project", "project")
    def set_project(self, project: Project | None) -> None:
        ctx, panes = self.ctx, self.panes
        units, detail = panes.units, panes.detail
        detail.drop_views()
        if ctx.session is not None and ctx.owns_project:
            ctx.session.flush_time()
            ctx.runner.wait_all(10000)
            ctx.session.project.close()
        ctx.session = None
        ctx.blind_as, ctx.queue_of = None, None
        if project is not None:
            # blind mode (issue #15): this annotator sees only their own labels and, if work was assigned to them,
            # only their queue; the list status is theirs
            if project.assignments.blind():
                ctx.blind_as = ctx.annotator
                ctx.queue_of = ctx.annotator if project.assignments.assignment_counts().get(ctx.annotator) else None
            session = ctx.session = Session(project, ctx.annotator, self.host, record_time=ctx.record_time,
                                            shown=lambda: panes.detail.shown)
            session.changed.connect(panes.after_change)
            session.changed.connect(lambda *_a: panes.safety.committed())
            session.failed.connect(lambda m: ctx.messages.show_message(
                "write", m, "Nothing was recorded for it. Try again; if it keeps failing, close Concord and run "
                f"`concord check {project.path}`."))
            session.stack.canUndoChanged.connect(panes.undo.setEnabled)
            session.stack.canRedoChanged.connect(panes.redo.setEnabled)
            self.host.setWindowTitle(f"Concord — {project.path.name} — {ctx.annotator}"
                                     + (" (blind: only your labels)" if ctx.blind_as else ""))
        panes.undo.setEnabled(False)
        panes.redo.setEnabled(False)
        ctx.messages.clear()
        panes.safety.start(None if project is None else str(project.path))
        self.load_configs()
        units.filters.load(project)
        units.filters.config_ref = panes.configs.ref
        detail.clear()
        units.set_list_schemes()
        units.model.set_project(project, units.unit_filter())
        blind.apply_to_window(self.host)  # blind mode without anchoring: no machine scores in the list, a title note
        units.update_count()
        panes.recount()
        if units.model.rowCount():
            last = self._last_unit()
            units.select_row(max(0, units.model.row_of(*last)) if last else 0)
        units.list.setFocus(Qt.FocusReason.OtherFocusReason)
        panes.hint_scores()

    def _last_unit(self) -> tuple[str, str] | None:
        """The unit shown when this project file was last closed (restored if it is on the first page)."""
        key = last_unit_key(self.project)
        value = None if key is None else self.ctx.settings.value(key, None)
        if isinstance(value, (list, tuple)) and len(value) == 2:
            return str(value[0]), str(value[1])
        return None

    def load_configs(self) -> None:
        self.panes.configs.load(self.project)

    @guarded("Could not switch the match config", "config")
    def set_config(self, ref: str) -> None:
        p = self.project
        if p is None or not ref:
            return
        configs, units = self.panes.configs, self.panes.units
        configs.choose(p, ref)
        units.filters.config_ref = configs.ref
        units.reload_list(keep=True)

    def open_project_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.host, "Open Concord project", "", "Concord projects (*.concord);;All files (*)")
        if path:
            self.open_project(path)

    def open_project(self, path: str) -> None:
        try:
            project = Project.open(path)
        except Exception as exc:  # noqa: BLE001 - not a project, damaged, unreadable: say so in the window
            self.report_error("open", f"Could not open {path}", exc)
            return
        self.ctx.messages.dismiss("open")
        self.set_project(project)
