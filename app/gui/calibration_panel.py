"""Calibration panel: for each scheme of the project whose metric has parameters to calibrate (the Scheme combo),
a page that searches them against the human decisions in the background and shows what the search found; below it
the learning curve of the chosen scheme (calibration_curve.py) and the human ceiling (ceiling_chart.py); where the
searches run is a setting (calibration_engine.py).

The panel names no scheme: a scheme's view may bring its own page (DetailView.calibration_page; the violations view
brings the match metric's form, heatmap and disagreements), every other scheme gets the generic page
(calibration_scheme.SchemePage). The first scheme with a page of its own is chosen first.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QDialog, QHBoxLayout, QSplitter, QStackedWidget, QVBoxLayout, QWidget

from app.gui.banner import MessageBar
from app.gui.calibration_curve import CurveBox, Setup
from app.gui.calibration_engine import SCHEDULER_KEY, EngineSettings, describe, engine_options
from app.gui.calibration_scheme import SchemePage, calibrated_schemes
from app.gui.plaintext import plain_label
from app.gui.views import view_class
from app.gui.workers import Task
from app.store import Project
from calibration.schemes.base import Scheme, registry

if TYPE_CHECKING:
    from app.gui.window_context import PanelHost

__all__ = ["CalibrationPanel", "SCHEDULER_KEY", "calibrated_schemes"]


class CalibrationPanel(QDialog):
    def __init__(self, host: "PanelHost") -> None:
        # no Qt parent: a child window stays above the main window, which must come to the front when a
        # disagreement is opened; the main window closes the panel when it closes
        super().__init__(None)
        self.host = host  # what the panel asks of the window: reveal a unit, choose a config (window_context.py)
        self.ctx = host.ctx
        self.setWindowTitle("Calibration")
        self.setWindowFlag(Qt.WindowType.Window)
        self.own_pages: dict[str, QWidget | None] = {}  # scheme name -> the page its view brings (None: generic)
        self._build()
        self.resize(1400, 980)
        self._fill_schemes()

    @classmethod
    def open_for(cls, host: "PanelHost") -> "CalibrationPanel":
        panel = host.opened.get("calibration")
        if panel is None:
            panel = host.opened["calibration"] = cls(host)
        panel.show()
        panel.raise_()
        return panel

    @property
    def project(self) -> Project:
        assert self.ctx.project is not None
        return self.ctx.project

    @property
    def page(self) -> Any:
        """The page of the chosen scheme."""
        return self.pages.currentWidget()

    @property
    def task(self) -> Task | None:
        """A search or load that one of the pages is running (None: every page is idle)."""
        return next((p.task for p in self._pages() if p.task is not None), None)

    def _pages(self) -> list[Any]:
        return [self.scheme_page, *(p for p in self.own_pages.values() if p is not None)]

    # -- layout ----------------------------------------------------------------------------------------------------
    def _build(self) -> None:
        outer = QVBoxLayout(self)
        self.messages = MessageBar()
        outer.addWidget(self.messages)
        head = QHBoxLayout()
        self.scheme_box = QComboBox()
        self.scheme_box.setObjectName("scheme")
        self.scheme_box.setToolTip("The schemes of this project whose metric has parameters to calibrate")
        self.scheme_box.currentIndexChanged.connect(self._scheme_changed)
        self.engine_settings = EngineSettings(self.ctx.settings)
        self.engine_settings.changed.connect(self.refresh_engine)
        head.addWidget(plain_label("Scheme"))
        head.addWidget(self.scheme_box)
        head.addSpacing(24)
        head.addWidget(self.engine_settings, 1)
        from app.gui.guarantee_panel import guarantee_button  # the band where the machine defers (issue #26)

        head.addWidget(guarantee_button(self))
        outer.addLayout(head)
        self.pages = QStackedWidget()
        self.scheme_page = SchemePage(self)
        self.pages.addWidget(self.scheme_page)
        self.curve_box = CurveBox(self, self.curve_setup)
        self.bottom = QSplitter(Qt.Orientation.Horizontal)  # the learning curve, then the human ceiling (below)
        self.bottom.addWidget(self.curve_box)
        body = QSplitter(Qt.Orientation.Vertical)
        body.addWidget(self.pages)
        body.addWidget(self.bottom)
        body.setSizes([700, 260])
        outer.addWidget(body, 1)
        from app.gui.ceiling_chart import CeilingChart  # the human ceiling beside the metric (issue #15)

        self.ceiling = CeilingChart()
        self.bottom.addWidget(self.ceiling)  # every scheme's ceiling, under whichever page is shown
        self.bottom.setSizes([760, 640])
        if self.ctx.project is not None:
            self.ceiling.compute(self.ctx.runner, str(self.ctx.project.path))
        self.refresh_engine()

    def refresh_engine(self) -> None:
        """Every page says where its searches run (the engine settings changed)."""
        where = describe(self.engine_options())
        for page in self._pages():
            page.refresh_engine(where)

    def engine_options(self) -> dict[str, Any]:
        """Where the grid runs (the panel's Engine/Scheduler settings, keys `calibration_engine` and
        `dask_scheduler`): this machine or a Dask cluster. Results are identical either way (issue #17)."""
        return engine_options(self.ctx.settings)

    # -- schemes ---------------------------------------------------------------------------------------------------
    def own_page(self, name: str) -> QWidget | None:
        """The page the scheme's view brings, built on first use (None: the scheme uses the generic page)."""
        if name not in self.own_pages:
            page = view_class(name).calibration_page(self)
            self.own_pages[name] = page
            if page is not None:
                self.pages.addWidget(page)
                page.refresh_engine(describe(self.engine_options()))
        return self.own_pages[name]

    def _fill_schemes(self) -> None:
        schemes = calibrated_schemes(self.project) if self.ctx.project is not None else []
        self.scheme_box.blockSignals(True)
        for s in schemes:
            self.scheme_box.addItem(s.title, s.name)
        self.scheme_box.blockSignals(False)
        if not schemes:
            self.scheme_page.summary.setText("No scheme in this project has parameters to calibrate.")
            return
        at = next((i for i, s in enumerate(schemes) if self.own_page(s.name) is not None), 0)
        self.scheme_box.setCurrentIndex(at)
        self._scheme_changed(at)

    def current_scheme(self) -> Scheme | None:
        name = self.scheme_box.currentData()
        return registry().get(name) if name else None

    def _scheme_changed(self, _index: int) -> None:
        scheme = self.current_scheme()
        if scheme is None:
            return
        self.curve_box.clear()
        page = self.own_page(scheme.name) or self.scheme_page
        self.pages.setCurrentWidget(page)
        page.set_scheme(scheme)

    def curve_setup(self) -> Setup | None:
        """The learning curve runs the search the current page would run (its objective, folds and grouping)."""
        return None if self.current_scheme() is None else self.page.curve_setup()

    def run_for_screenshot(self, timeout_ms: int = 600_000) -> None:
        self.page.run()
        self.ctx.runner.wait_all(timeout_ms)

    def closeEvent(self, event: Any) -> None:
        if self.curve_box.task is not None:
            self.curve_box.task.cancel()
        for page in self._pages():
            page.shutdown()
        super().closeEvent(event)
