"""The main window. It only composes: review list + filters on the left (window_list.py), the scheme's detail view
on the right (window_units.py), menus built from the action registry, the toolbar and a status bar with progress
(window_chrome.py); decisions (window_decisions.py) go through the Session; navigation (window_navigation.py),
the project (window_project.py) and the panels (window_panels.py) are parts of their own.

Never silent: every slot that touches the store is `guarded` (window_parts.py: an exception becomes a message in the
window's message bar, naming what failed and what to do), and so is every worker failure (`TaskRunner.failed`).
The window names no scheme: the views come from the registry, and the config box holds whatever config the views
declared (opaque here).
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import QMainWindow, QSplitter, QVBoxLayout, QWidget

from app.gui.banner import MessageBar
from app.gui.environment import quiet_model_loading
from app.gui.files_part import FilesPart
from app.gui.safety import ProjectSafety
from app.gui.undo import Session
from app.gui.views import DetailView
from app.gui.window_chrome import ChromePart
from app.gui.window_decisions import DecisionsPart
from app.gui.window_list import UnitListPart
from app.gui.window_navigation import NavigationPart
from app.gui.window_panels import PanelsPart
from app.gui.window_project import ProjectPart
from app.gui.window_units import DetailPanePart
from app.gui.workers import TaskRunner
from app.store import Project

DEFAULT_SIZE = (1500, 940)


class MainWindow(UnitListPart, DetailPanePart, DecisionsPart, NavigationPart, ProjectPart, ChromePart, PanelsPart,
                 FilesPart, QMainWindow):
    def __init__(self, project: Project | None, annotator: str, settings: QSettings | None = None,
                 owns_project: bool = True, record_time: bool = True) -> None:
        super().__init__()
        quiet_model_loading()  # before any worker starts the embedding helper process
        self.settings = settings or QSettings()
        self.annotator = annotator
        self._owns_project = owns_project
        self._record_time = record_time
        self.session: Session | None = None
        self.runner = TaskRunner(self)
        self.views: dict[str, DetailView] = {}
        self._shown: tuple[str, str] | None = None  # the unit the detail pane rendered (None: nothing or failed)
        self._shown_at = 0.0
        self.blind_as: str | None = None  # blind mode: whose labels the app shows (None: the resolved ones)
        self._queue_of: str | None = None  # blind mode with work assigned to this annotator: only their units
        self.setWindowTitle("Concord")
        self._build()
        self.set_project(project)

    # -- composition -----------------------------------------------------------------------------------------------
    def _build(self) -> None:
        left = self._build_list()
        self._build_detail()
        self.split = QSplitter(Qt.Orientation.Horizontal)
        self.split.addWidget(left)
        self.split.addWidget(self.stack)
        self.split.setStretchFactor(0, 0)
        self.split.setStretchFactor(1, 1)
        self.split.setSizes([600, 1000])
        self.messages = MessageBar()
        central = QWidget()
        cl = QVBoxLayout(central)
        cl.setContentsMargins(0, 0, 0, 0)
        cl.setSpacing(0)
        cl.addWidget(self.messages)
        cl.addWidget(self.split, 1)
        self.setCentralWidget(central)
        self.runner.failed.connect(self._task_failed)
        self.safety = ProjectSafety(self.runner, self.messages, lambda m: self.status_message(m, 6000), self)
        self.model.failed.connect(self._list_failed)
        self._build_menus()
        self._build_status_bar()

    @property
    def _config(self) -> Any:
        """The config chosen in the toolbar's box: opaque here, the views that declared the choice read it."""
        return self.configs.current

    @property
    def project(self) -> Project | None:
        return None if self.session is None else self.session.project

    # -- lifecycle ------------------------------------------------------------------------------------------------
    def closeEvent(self, event: QCloseEvent) -> None:
        self._leave_unit()
        if self.session is not None:
            self.session.flush_time()
        for name in ("_calibration_panel", "_adjudication_panel", "_agreement_panel"):
            panel = getattr(self, name, None)
            if panel is not None:  # a top-level window of its own (see CalibrationPanel): close it with us
                panel.close()
        for v in self.views.values():
            v.shutdown()
        self.runner.cancel_all()
        self.runner.wait_all(15000)
        from app.gui.embedproc import shutdown

        shutdown()
        if self._record_time:  # a screenshot run (offscreen, fixed size) records nothing, its geometry included
            self.settings.setValue("geometry", self.saveGeometry())
        if self.session is not None and self._owns_project:
            self.session.project.close()
            self.session = None
        super().closeEvent(event)
