"""The agreement panel's Plan tab (issue #29 item 4): what `concord plan` prints, from the same service
(app.services.planner) in a worker: how many more samples bring the agreement interval's half-width to the target,
and how many units would make each calibration gain's interval exclude 0 if the gain holds."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDoubleSpinBox, QHBoxLayout, QPushButton, QSpinBox, QVBoxLayout, QWidget

from app.gui.banner import MessageBar
from app.gui.plaintext import plain_label
from app.gui.workers import ProgressPanel, SingleTask, Task, TaskProgress
from app.store import Project

if TYPE_CHECKING:
    from app.gui.window_context import WindowContext


class PlanPage(QWidget):
    def __init__(self, ctx: "WindowContext") -> None:
        super().__init__()
        self.ctx = ctx
        self.result: dict[str, Any] | None = None
        lay = QVBoxLayout(self)
        self.messages = MessageBar()
        lay.addWidget(self.messages)
        top = QHBoxLayout()
        self.target = QDoubleSpinBox()
        self.target.setRange(0.005, 1.0)
        self.target.setDecimals(3)
        self.target.setSingleStep(0.01)
        self.target.setValue(0.05)
        self.target.setToolTip("The agreement interval's half-width to reach (Fleiss' kappa, 95%)")
        self.boot = QSpinBox()
        self.boot.setRange(10, 10000)
        self.boot.setValue(1000)
        self.boot.setToolTip("Bootstrap replicates over samples per interval")
        self.run_button = QPushButton("Plan")
        self.run_button.setAutoDefault(False)
        self.run_button.clicked.connect(self.run)
        for w in (plain_label("Target half-width"), self.target, plain_label("Bootstrap draws"), self.boot,
                  self.run_button):
            w.setMaximumWidth(160)
            top.addWidget(w)
        self.progress = ProgressPanel()
        top.addWidget(self.progress, 1)
        self.runs = SingleTask(self.progress, self.run_button.setEnabled)
        lay.addLayout(top)
        self.text = plain_label("Plan: how many more labels until the figures are sure enough.", wrap=True,
                                selectable=True)
        self.text.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        lay.addWidget(self.text, 1)

    def run(self) -> None:
        p = self.ctx.project
        if self.task is not None or p is None:
            return
        path, target, n_boot = str(p.path), float(self.target.value()), int(self.boot.value())

        def work(_progress: TaskProgress) -> dict[str, Any]:
            from app.services.planner import plan

            with Project.open(path) as wp:  # the worker's own connection
                return plan(wp, target, n_boot=n_boot)

        self.text.setText("Planning…")
        self.runs.start(self.ctx.runner, Task(work, "plan"), "Plan…", self.show_result,
                        lambda exc: self.messages.report("task", "Plan failed", exc, project=path))

    @property
    def task(self) -> Task | None:
        return self.runs.current

    def show_result(self, out: dict[str, Any]) -> None:
        from app.services.planner import describe

        self.result = out
        self.text.setText("\n".join(describe(out)))
