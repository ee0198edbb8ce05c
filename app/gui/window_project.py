"""The main window's project: opening and switching project files (a Session per project, blind mode), the unit
shown when the file was last closed, and the config box's choice for the project."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog

from app.gui import blind
from app.gui.undo import Session
from app.gui.window_parts import WindowPart, guarded, settings_key
from app.store import Project


class ProjectPart(WindowPart):
    @guarded("Could not open the project", "project")
    def set_project(self, project: Project | None) -> None:
        self._leave_unit()
        for v in self.views.values():
            v.shutdown()
            self.stack.removeWidget(v)
            v.deleteLater()
        self.views = {}
        if self.session is not None and self._owns_project:
            self.session.flush_time()
            self.runner.wait_all(10000)
            self.session.project.close()
        self.session = None
        self.blind_as, self._queue_of = None, None
        if project is not None:
            # blind mode (issue #15): this annotator sees only their own labels and, if work was assigned to them,
            # only their queue; the list status is theirs
            if project.blind():
                self.blind_as = self.annotator
                self._queue_of = self.annotator if project.assignment_counts().get(self.annotator) else None
            self.session = Session(project, self.annotator, self, record_time=self._record_time,
                                   shown=lambda: self._shown)
            self.session.changed.connect(self._changed)
            self.session.changed.connect(lambda *_a: self.safety.committed())
            self.session.failed.connect(lambda m: self.messages.show_message(
                "write", m, "Nothing was recorded for it. Try again; if it keeps failing, close Concord and run "
                f"`concord check {project.path}`."))
            self.session.stack.canUndoChanged.connect(self.actions_by_id["undo"].setEnabled)
            self.session.stack.canRedoChanged.connect(self.actions_by_id["redo"].setEnabled)
            self.setWindowTitle(f"Concord — {project.path.name} — {self.annotator}"
                                + (" (blind: only your labels)" if self.blind_as else ""))
        self.actions_by_id["undo"].setEnabled(False)
        self.actions_by_id["redo"].setEnabled(False)
        self.messages.clear()
        self.safety.start(None if project is None else str(project.path))
        self._load_configs()
        self.filters.load(project)
        self.filters.config_ref = self.configs.ref
        self.stack.setCurrentWidget(self.placeholder)
        self._update_action_state()
        self._set_list_schemes()
        self.model.set_project(project, self.unit_filter())
        blind.apply_to_window(self)  # blind mode without anchoring: no machine scores in the list, a title note
        self._update_count()
        self.session_progress.refresh()
        if self.model.rowCount():
            last = self._last_unit()
            self.select_row(max(0, self.model.row_of(*last)) if last else 0)
        self.list.setFocus(Qt.FocusReason.OtherFocusReason)
        self._hint_machine_scores()

    def _last_unit_key(self) -> str | None:
        p = self.project
        return None if p is None else f"files/{settings_key(p.path)}/last_unit"

    def _last_unit(self) -> tuple[str, str] | None:
        """The unit shown when this project file was last closed (restored if it is on the first page)."""
        key = self._last_unit_key()
        value = None if key is None else self.settings.value(key, None)
        if isinstance(value, (list, tuple)) and len(value) == 2:
            return str(value[0]), str(value[1])
        return None

    def _load_configs(self) -> None:
        self.configs.load(self.project)

    @guarded("Could not switch the match config", "config")
    def set_config(self, ref: str) -> None:
        p = self.project
        if p is None or not ref:
            return
        self.configs.choose(p, ref)
        self.filters.config_ref = self.configs.ref
        self._reload_list(keep=True)

    def open_project_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open Concord project", "", "Concord projects (*.concord);;All files (*)")
        if path:
            self.open_project(path)

    def open_project(self, path: str) -> None:
        try:
            project = Project.open(path)
        except Exception as exc:  # noqa: BLE001 - not a project, damaged, unreadable: say so in the window
            self.report_error("open", f"Could not open {path}", exc)
            return
        self.messages.dismiss("open")
        self.set_project(project)
