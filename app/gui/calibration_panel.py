"""Calibration panel: search match weights and thresholds against the human decisions in the background, then
inspect the top configs, the objective over two chosen dimensions, the curve over the match threshold, apply
a config, and open the pairs where the chosen config and the humans still disagree.

The search itself is app.services.calibration.calibrate (the same code as `concord calibrate`), run in a worker.
Every other scheme with a search problem is chosen in the Scheme combo and shown generically (calibration_scheme.py);
the learning curve follows the chosen scheme (calibration_curve.py), the human ceiling sits beside it
(ceiling_chart.py); where the searches run is a setting (calibration_engine.py).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox, QDialog, QFormLayout, QGroupBox, QHBoxLayout, QPushButton, QSpinBox,
    QSplitter, QStackedWidget, QVBoxLayout, QWidget,
)

from app.gui.banner import MessageBar
from app.gui.calibration_curve import CurveBox, Setup
from app.gui.calibration_engine import SCHEDULER_KEY, EngineSettings, describe, engine_options
from app.gui.calibration_match import DIM_TITLES, MatchResults, config_of  # noqa: F401 - re-exported
from app.gui.calibration_scheme import SchemePage, calibrated_schemes
from app.gui.plaintext import plain_label
from app.gui.workers import ProgressPanel, Task, TaskProgress
from app.store import Project
from calibration.schemes.base import Scheme, registry
from calibration.schemes.violations.scheme import SCHEME as MATCH_SCHEME  # the page with its own controls

if TYPE_CHECKING:
    from app.gui.window import MainWindow

OBJECTIVES = ("kappa", "f1", "accuracy", "mcc", "spearman", "kendall")
STEPS = ("0.5", "0.25", "0.2", "0.1", "0.05")
__all__ = ["DIM_TITLES", "CalibrationPanel", "SCHEDULER_KEY", "calibrated_schemes", "config_of"]


class CalibrationPanel(QDialog, MatchResults):
    def __init__(self, window: "MainWindow") -> None:
        # no Qt parent: a child window stays above the main window, which must come to the front when a
        # disagreement is opened; the main window closes the panel when it closes
        super().__init__(None)
        self.window_ = window
        self.setWindowTitle("Calibration")
        self.setWindowFlag(Qt.WindowType.Window)
        self.cv: pd.DataFrame | None = None
        self.result: dict[str, Any] | None = None
        self.table: Any = None
        self.labels: Any = None
        self.selected: dict[str, Any] | None = None
        self.task: Task | None = None
        self._build()
        self.resize(1400, 980)
        self._fill_schemes()

    @classmethod
    def open_for(cls, window: "MainWindow") -> "CalibrationPanel":
        panel = getattr(window, "_calibration_panel", None)
        if panel is None:
            panel = cls(window)
            window._calibration_panel = panel  # type: ignore[attr-defined]
        panel.show()
        panel.raise_()
        return panel

    @property
    def project(self) -> Project:
        assert self.window_.project is not None
        return self.window_.project

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
        self.engine_settings = EngineSettings(self.window_.settings)
        self.engine_settings.changed.connect(self._refresh_embedding)
        head.addWidget(plain_label("Scheme"))
        head.addWidget(self.scheme_box)
        head.addSpacing(24)
        head.addWidget(self.engine_settings, 1)
        outer.addLayout(head)
        self.pages = QStackedWidget()
        self.match_page = QWidget()
        lay = QVBoxLayout(self.match_page)
        lay.setContentsMargins(0, 0, 0, 0)
        self.scheme_page = SchemePage(self)
        self.pages.addWidget(self.match_page)
        self.pages.addWidget(self.scheme_page)
        self.curve_box = CurveBox(self, self.curve_setup)
        self.bottom = QSplitter(Qt.Orientation.Horizontal)  # the learning curve, then the human ceiling (below)
        self.bottom.addWidget(self.curve_box)
        bottom = self.bottom
        body = QSplitter(Qt.Orientation.Vertical)
        body.addWidget(self.pages)
        body.addWidget(bottom)
        body.setSizes([700, 260])
        outer.addWidget(body, 1)
        form_box = QGroupBox("Search")
        form = QHBoxLayout(form_box)
        self.objective = QComboBox()
        self.objective.addItems(OBJECTIVES)
        self.objective.setToolTip("kappa/f1/accuracy/mcc: pair-level agreement; spearman/kendall: checker ranking")
        self.components = QComboBox()
        self.components.addItem("std: IoU + rule", "std")
        self.components.addItem("ha: all five components", "ha")
        self.step = QComboBox()
        self.step.addItems(STEPS)
        self.step.setCurrentText("0.1")
        self.folds = QSpinBox()
        self.folds.setRange(2, 20)
        self.folds.setValue(5)
        self.group_by = QComboBox()
        self.group_by.addItem("folds grouped by sample", "sample")
        self.group_by.addItem("leave one checker out", "checker")
        self.matching = QComboBox()
        self.matching.addItems(["greedy", "optimal"])
        self.run_button = QPushButton("Run calibration")
        self.run_button.setDefault(False)
        self.run_button.setAutoDefault(False)
        self.run_button.clicked.connect(self.run)
        sub = QFormLayout()
        for label, w in (("Objective", self.objective), ("Weights", self.components), ("Step", self.step)):
            sub.addRow(label, w)
        sub2 = QFormLayout()
        for label, w in (("Folds", self.folds), ("Grouping", self.group_by), ("Matching", self.matching)):
            sub2.addRow(label, w)
        form.addLayout(sub)
        form.addLayout(sub2)
        right = QVBoxLayout()
        self.embedding = plain_label()
        right.addWidget(self.embedding)
        right.addWidget(self.run_button)
        self.progress = ProgressPanel()
        right.addWidget(self.progress)
        right.addStretch(1)
        form.addLayout(right, 1)
        lay.addWidget(form_box)

        self.summary = plain_label(wrap=True, selectable=True)
        self.warnings = plain_label(wrap=True)
        self.warnings.setStyleSheet("color:#b71c1c;")
        lay.addWidget(self.summary)
        lay.addWidget(self.warnings)

        self._build_results(lay)
        from app.gui.ceiling_chart import CeilingChart  # the human ceiling beside the metric (issue #15)

        self.ceiling = CeilingChart()
        self.bottom.addWidget(self.ceiling)  # every scheme's ceiling, under whichever page is shown
        self.bottom.setSizes([760, 640])
        if self.window_.project is not None:
            self.ceiling.compute(self.window_.runner, str(self.window_.project.path))
        self._refresh_embedding()

    def _refresh_embedding(self) -> None:
        where = describe(self.engine_options())
        self.scheme_page.runs_on.setText(f"Runs on: {where}")
        self.embedding.setText(f"Similarity: {self.window_._config.embedding} (from {self.window_._config.ref})\n"
                               f"Runs on: {where}")

    # -- running ---------------------------------------------------------------------------------------------------
    def run(self) -> None:
        if self.task is not None:
            return
        path, emb = str(self.project.path), self.window_._config.embedding
        opts = {"objective": self.objective.currentText(), "folds": self.folds.value(),
                "group_by": self.group_by.currentData(), **self.engine_options()}
        components, step, matching = self.components.currentData(), float(self.step.currentText()), self.matching.currentText()

        def work(progress: TaskProgress) -> dict[str, Any]:
            from app.gui.views.violations_scoring import ensure_sample_vectors
            from app.services.calibration import calibrate, make_space
            from app.services.evaluation import human_labels, pair_table

            with Project.open(path) as wp:
                ensure_sample_vectors(path, wp, emb, wp.violation_samples(), progress)  # the model stays out of the app
                space = make_space(components, step, matching)
                cal, run_id = calibrate(wp, space, embedding=emb, progress=progress, **opts)
                table = pair_table(wp, emb)  # vectors are cached now: cheap, and needed for the disagreements
                labels = human_labels(wp, table)
            return {"result": cal.to_dict() | {"embedding": emb}, "cv": cal.cv_results_, "table": table,
                    "labels": labels, "run_id": run_id}

        self._start(Task(work, "calibration"), "Calibrating…")

    def engine_options(self) -> dict[str, Any]:
        """Where the grid runs (the panel's Engine/Scheduler settings, keys `calibration_engine` and
        `dask_scheduler`): this machine or a Dask cluster. Results are identical either way (issue #17)."""
        return engine_options(self.window_.settings)

    # -- schemes ---------------------------------------------------------------------------------------------------
    def _fill_schemes(self) -> None:
        schemes = calibrated_schemes(self.project) if self.window_.project is not None else []
        self.scheme_box.blockSignals(True)
        for s in schemes:
            self.scheme_box.addItem(s.title, s.name)
        self.scheme_box.blockSignals(False)
        if not schemes:
            self.summary.setText("No scheme in this project has parameters to calibrate.")
            return
        at = max(0, self.scheme_box.findData(MATCH_SCHEME.name))  # the match metric stays the default
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
        if scheme.name == MATCH_SCHEME.name:
            self.pages.setCurrentWidget(self.match_page)
            if self.result is None and self.task is None:
                self.load_latest()
        else:
            self.pages.setCurrentWidget(self.scheme_page)
            self.scheme_page.set_scheme(scheme)

    def curve_setup(self) -> Setup | None:
        """The learning curve runs the search the current page would run (its objective, folds and grouping)."""
        scheme = self.current_scheme()
        if scheme is None:
            return None
        if scheme.name != MATCH_SCHEME.name:
            page = self.scheme_page
            if not page.objective.currentText():
                return None
            return (scheme.name, {}, page.objective.currentText(), page.folds.value(), page.group_by.currentData(), None)
        emb = self.window_._config.embedding
        opts = {"components": self.components.currentData(), "step": float(self.step.currentText()),
                "matching": self.matching.currentText(), "embedding": emb}

        def prepare(path: str, wp: Project, progress: Any) -> None:
            from app.gui.views.violations_scoring import ensure_sample_vectors

            ensure_sample_vectors(path, wp, emb, wp.violation_samples(), progress)  # the model stays out of the app

        return (scheme.name, opts, self.objective.currentText(), self.folds.value(), self.group_by.currentData(), prepare)

    def run_for_screenshot(self, timeout_ms: int = 600_000) -> None:
        self.run()
        self.window_.runner.wait_all(timeout_ms)

    def _start(self, task: Task, title: str) -> None:
        self.task = task
        self.run_button.setEnabled(False)
        task.signals.finished.connect(self._finished)
        task.signals.failed.connect(lambda _m, t=task: self.messages.report(
            "task", f"{title.rstrip('…')} failed", t.error or RuntimeError(_m.splitlines()[0]),
            project=str(self.project.path)))
        for sig in (task.signals.finished, task.signals.failed, task.signals.cancelled):
            sig.connect(lambda *_a: self._ended())
        self.progress.track(task, title)
        self.window_.runner.start(task)

    def _ended(self) -> None:
        self.task = None
        self.run_button.setEnabled(True)

    def load_latest(self) -> None:
        """Show the project's newest stored run; the pair table for its disagreements is built in a worker."""
        runs = [r for r in (self.project.calibration_runs() if self.window_.project is not None else [])
                if ((r.get("result") or {}).get("scheme") or (r.get("params") or {}).get("scheme") or MATCH_SCHEME.name)
                == MATCH_SCHEME.name]  # the match metric's own runs (older ones carry no scheme name)
        if not runs:
            self.summary.setText("No calibration run yet. Label some units (accept or fix matches), then Run.")
            return
        run = runs[-1]
        emb = run["params"].get("embedding") or run["result"].get("embedding") or self.window_._config.embedding
        self._show_result(run["result"] | {"embedding": emb}, self.project.calibration_cv_results(run["id"]), run["id"])
        path = str(self.project.path)

        def work(progress: TaskProgress) -> dict[str, Any]:
            from app.gui.views.violations_scoring import ensure_sample_vectors
            from app.services.evaluation import human_labels, pair_table

            with Project.open(path) as wp:
                ensure_sample_vectors(path, wp, emb, wp.violation_samples(), progress)
                table = pair_table(wp, emb)
                return {"table": table, "labels": human_labels(wp, table)}

        self._start(Task(work, "pairs"), "Loading pairs for the disagreement list…")

    def _finished(self, out: dict[str, Any]) -> None:
        if "result" in out:
            self._show_result(out["result"], out["cv"], out["run_id"])
        self.table, self.labels = out["table"], out["labels"]
        self._draw_disagreements()

    def closeEvent(self, event: Any) -> None:
        for task in (self.task, self.curve_box.task):
            if task is not None:
                task.cancel()
        self.scheme_page.shutdown()
        super().closeEvent(event)
