"""The calibration panel's learning curve, for whichever scheme is chosen (issue #16): held-out score and its
interval against the number of labeled units, and the stopping rule's sentence (app.services.learning, on demand
in a worker)."""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGroupBox, QHBoxLayout, QPushButton, QVBoxLayout

from app.gui.charts import IntervalChart
from app.gui.fitting import FitLabel
from app.gui.workers import ProgressPanel, SingleTask, Task, TaskProgress
from app.store import Project

if TYPE_CHECKING:
    from app.gui.calibration_panel import CalibrationPanel

# what the panel's current page searches: (scheme name, options, objective, folds, group_by, prepare) where
# prepare(path, project, progress) runs first in the worker (the match metric embeds its texts there)
Setup = tuple[str, dict[str, Any], str | None, int, str | None, Callable[[str, Any, Any], None] | None]


class CurveBox(QGroupBox):
    """Button, chart and sentence; `setup()` says what to run, so the curve is the search the page would run."""

    def __init__(self, panel: "CalibrationPanel", setup: Callable[[], Setup | None]) -> None:
        super().__init__("Learning curve")
        self.panel, self.setup = panel, setup
        self.result: dict[str, Any] | None = None
        lay = QVBoxLayout(self)
        row = QHBoxLayout()
        self.button = QPushButton("Learning curve")
        self.button.setAutoDefault(False)
        self.button.setToolTip("Re-run this search on the first n labeled units (labeling order) for growing n: "
                               "how the held-out score and its interval move with more labels")
        self.button.clicked.connect(self.run)
        self.progress = ProgressPanel()
        row.addWidget(self.button)
        row.addWidget(self.progress, 1)
        lay.addLayout(row)
        self.chart = IntervalChart(empty_text="Press 'Learning curve' to re-run the search on growing label counts")
        self.chart.setObjectName("learning_curve")
        lay.addWidget(self.chart, 1)
        self.sentence = FitLabel()  # its height is kept: the chart above shrinks instead (issue #27)
        self.sentence.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.sentence)
        self.runs = SingleTask(self.progress, self.button.setEnabled)

    @property
    def task(self) -> Task | None:
        return self.runs.current

    def clear(self) -> None:
        self.runs.cancel()
        self.result = None
        self.chart.set_data([], [], [], [], "", "")
        self.sentence.setText("")

    def run(self) -> None:
        setup = self.setup()
        if self.task is not None or setup is None:
            return
        name, options, objective, folds, group_by, prepare = setup
        path = str(self.panel.project.path)

        def work(progress: TaskProgress) -> dict[str, Any]:
            from app.services.learning import learning_curve
            from calibration.schemes.base import registry

            with Project.open(path) as wp:
                if prepare is not None:
                    prepare(path, wp, progress)
                return learning_curve(wp, registry().get(name), options, objective=objective, folds=folds,
                                      group_by=group_by, progress=progress)

        self.runs.start(self.panel.ctx.runner, Task(work, "learning curve"), "Learning curve…", self._show,
                        lambda exc: self.panel.messages.report("curve", "Learning curve failed", exc, project=path))

    def _show(self, out: dict[str, Any]) -> None:
        self.result = out
        pts = out["points"]
        self.chart.set_data([p["n"] for p in pts], [p["score"] for p in pts], [p["lo"] for p in pts],
                            [p["hi"] for p in pts], "labeled units (first n, labeling order)",
                            "held-out score with its 95% interval")
        skipped = [f"{p['n']}: {p['note']}" for p in pts if p["score"] is None and p["note"]]
        self.sentence.setText(out["stopping"]["message"] + ("\nNo score at " + "; ".join(skipped) if skipped else ""))
