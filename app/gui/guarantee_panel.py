"""Guaranteed agreement in the app (issue #26 item 4): a small window opened from the calibration panel's
"Guaranteed agreement…" button, for the scheme chosen there (it follows the panel's Scheme combo). Target and
delta, a button that runs `calibrate --guarantee` in a worker (app.services.guarantee.guaranteed, with the panel
page's objective, folds and grouping), the sentence ("the machine may decide 41% of units at >= 90% agreement
(95% guarantee)") and the coverage/agreement curve of the calibration split. A scheme's newest guarantee run is
shown when it is chosen. A window of its own, made on demand: the panel builds nothing of it until asked.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPen, QPolygonF
from PySide6.QtWidgets import (QComboBox, QDialog, QGroupBox, QHBoxLayout, QPushButton, QSizePolicy, QVBoxLayout,
                               QWidget)

from app.gui.charts import nice_ticks
from app.gui.plaintext import plain_label
from app.gui.workers import ProgressPanel, SingleTask, Task, TaskProgress
from app.store import Project
from calibration.schemes.base import Scheme

if TYPE_CHECKING:
    from app.gui.calibration_panel import CalibrationPanel


def sentence(g: dict[str, Any]) -> str:
    """The stored guarantee in words: the sentence first, then how it was certified."""
    text = g["sentence"]
    head = text[:1].upper() + text[1:] + "."
    agreement = "–" if g.get("agreement") is None else f"{g['agreement']:.3f}"
    return (f"{head}\nCertified on {g['calibration_samples']} labeled samples the search never saw ({g['n']} "
            f"units): {g['n_decided']} decided, agreement {agreement}; threshold {g['threshold']:.4g}, target "
            f"{g['target']:g}, delta {g['delta']:g}. Queue order 'deferred' lists the units it defers.")


class CoverageChart(QWidget):
    """Agreement on the decided units against the share decided (coverage), one point per candidate cut-off, the
    target as a dashed line and the certified coverage as a red one."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("guarantee_curve")
        self.setMinimumSize(240, 150)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.coverage: list[float] = []
        self.agreement: list[float] = []
        self.target: float | None = None
        self.chosen: float | None = None

    def set_data(self, coverage: Sequence[float], agreement: Sequence[float], target: float | None,
                 chosen: float | None) -> None:
        self.coverage, self.agreement = [float(x) for x in coverage], [float(y) for y in agreement]
        self.target, self.chosen = target, chosen
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.fillRect(self.rect(), self.palette().base())
        text = self.palette().text().color()
        p.setPen(text)
        if not self.coverage:
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "Press 'Guarantee' to certify a band")
            return
        r = QRectF(44, 22, max(10, self.width() - 60), max(10, self.height() - 58))
        low = min([*self.agreement, *([self.target] if self.target is not None else [])])
        ticks = nice_ticks(max(0.0, low - 0.02), 1.0)
        y0, y1 = ticks[0][0], ticks[-1][0]

        def at(x: float, y: float) -> QPointF:
            return QPointF(r.left() + x * r.width(), r.bottom() - (y - y0) / (y1 - y0) * r.height())

        for y, label in ticks:  # grid lines with their labels, then the axes
            p.setPen(QPen(QColor("#e0e0e0"), 1))
            p.drawLine(at(0.0, y), at(1.0, y))
            p.setPen(text)
            p.drawText(QRectF(0, at(0.0, y).y() - 7, r.left() - 4, 14),
                       Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, label)
        p.drawLine(r.bottomLeft(), r.bottomRight())
        p.drawLine(r.bottomLeft(), r.topLeft())
        for x, label in nice_ticks(0.0, 1.0, 6):
            a = at(x, y0)
            p.drawText(QRectF(a.x() - 18, r.bottom() + 2, 36, 14), Qt.AlignmentFlag.AlignCenter, label)
        p.drawText(QRectF(r.left(), r.bottom() + 18, r.width(), 16), Qt.AlignmentFlag.AlignCenter,
                   "coverage: share of units the machine decides")
        p.drawText(QRectF(r.left(), 2, r.width(), 16), Qt.AlignmentFlag.AlignLeft,
                   "agreement with the humans on the decided units (calibration split)")
        if self.target is not None:
            p.setPen(QPen(QColor("#616161"), 1, Qt.PenStyle.DashLine))
            p.drawLine(at(0.0, self.target), at(1.0, self.target))
        if self.chosen:
            p.setPen(QPen(QColor("#d50000"), 1, Qt.PenStyle.DashLine))
            p.drawLine(QPointF(at(self.chosen, y0).x(), r.top()), QPointF(at(self.chosen, y0).x(), r.bottom()))
        p.setPen(QPen(QColor("#0072B2"), 2))
        p.drawPolyline(QPolygonF([at(x, y) for x, y in zip(self.coverage, self.agreement)]))


TARGETS = (0.8, 0.85, 0.9, 0.95, 0.99)
DELTAS = (0.01, 0.05, 0.1)


def _choices(parent: QWidget, name: str, values: Sequence[float], current: float, tip: str) -> QComboBox:
    box = QComboBox(parent)
    box.setObjectName(name)
    for v in values:
        box.addItem(f"{v:g}", v)
    box.setCurrentIndex(box.findData(current))
    box.setToolTip(tip)
    return box


class GuaranteeBox(QGroupBox):
    def __init__(self, panel: "CalibrationPanel", parent: QWidget | None = None) -> None:
        # every widget gets its Qt parent when made: Qt owns them, and the GC never deletes one (a crash otherwise)
        super().__init__("Guaranteed agreement", parent)
        self.panel = panel
        self.scheme: Scheme | None = None
        self.result: dict[str, Any] | None = None
        lay = QVBoxLayout(self)
        row = QHBoxLayout()
        lay.addLayout(row)  # installed first: every widget below gets its Qt parent as it is added
        self.target_label, self.delta_label = plain_label("Target"), plain_label("δ")
        for label in (self.target_label, self.delta_label):
            label.setParent(self)
        self.target = _choices(self, "guarantee_target", TARGETS, 0.9,
                               "The agreement with the humans the machine must reach on the units it decides")
        self.delta = _choices(self, "guarantee_delta", DELTAS, 0.05, "The risk that the bound fails (1 - delta: the guarantee)")
        self.button = QPushButton("Guarantee", self)
        self.button.setAutoDefault(False)
        self.button.setToolTip("Calibrate on half the labeled samples and certify, on the other half, the band of "
                               "scores where the machine must defer to a human (Learn-then-Test)")
        self.button.clicked.connect(self.run)
        self.progress = ProgressPanel(self)
        for w in (self.target_label, self.target, self.delta_label, self.delta, self.button):
            row.addWidget(w)
        row.addWidget(self.progress, 1)
        self.chart = CoverageChart(self)
        lay.addWidget(self.chart, 1)
        self.sentence = plain_label(wrap=True, selectable=True)
        self.sentence.setParent(self)
        self.sentence.setObjectName("guarantee_sentence")
        lay.addWidget(self.sentence)
        self.runs = SingleTask(self.progress, self.button.setEnabled)

    @property
    def task(self) -> Task | None:
        return self.runs.current

    def set_scheme(self, scheme: Scheme) -> None:
        """Show the scheme's newest guarantee run (if any)."""
        self.runs.cancel()
        self.scheme = scheme
        from app.services.queue import last_guarantee

        run = last_guarantee(self.panel.project, scheme.name)
        self.show_guarantee(None if run is None else run["result"]["guarantee"])

    def show_guarantee(self, g: dict[str, Any] | None) -> None:
        self.result = g
        if g is None:
            self.chart.set_data([], [], None, None)
            self.sentence.setText("")
            return
        curve = g.get("curve") or []
        self.chart.set_data([c["coverage"] for c in curve], [c["agreement"] for c in curve], g["target"],
                            g["coverage"] if g["certified"] else None)
        self.sentence.setText(sentence(g))

    def run(self) -> None:
        setup = self.panel.curve_setup()
        if self.task is not None or self.scheme is None or setup is None:
            return
        name, options, objective, folds, group_by, prepare = setup
        path, target, delta = str(self.panel.project.path), self.target.currentData(), self.delta.currentData()
        engine = self.panel.engine_options()

        def work(progress: TaskProgress) -> dict[str, Any]:
            from app.errors import UsageError
            from app.services.guarantee import guaranteed
            from calibration.schemes.base import registry

            with Project.open(path) as wp:
                if prepare is not None:
                    prepare(path, wp, progress)
                try:
                    _cal, _run, g = guaranteed(wp, registry().get(name), options, target=target, delta=delta,
                                               objective=objective, folds=folds, group_by=group_by,
                                               progress=progress, **engine)
                except UsageError as exc:  # e.g. a scheme that decides by no score: said in the box
                    return {"refused": str(exc)}
            return {"guarantee": g}

        self.runs.start(self.panel.ctx.runner, Task(work, "guarantee"), "Certifying the band…", self._show,
                        lambda exc: self.panel.messages.report("guarantee", "Guaranteed agreement failed", exc,
                                                               project=path))

    def _show(self, out: dict[str, Any]) -> None:
        if "refused" in out:
            self.show_guarantee(None)
            self.sentence.setText(out["refused"])
            return
        self.show_guarantee(out["guarantee"])

    def shutdown(self) -> None:
        self.runs.cancel()


class GuaranteeWindow(QDialog):
    """The box in a window of its own, a child of the calibration panel (closed with it, owned by Qt)."""

    def __init__(self, panel: "CalibrationPanel") -> None:
        super().__init__(panel)
        self.setWindowFlag(Qt.WindowType.Window)
        self.setWindowTitle("Guaranteed agreement")
        self.box = GuaranteeBox(panel, self)
        QVBoxLayout(self).addWidget(self.box)
        self.resize(640, 460)
        panel.scheme_box.currentIndexChanged.connect(self.follow)
        panel.finished.connect(self.close)  # the panel closed
        self.follow()

    def follow(self, *_args: Any) -> None:
        scheme = self.box.panel.current_scheme()
        if scheme is not None:
            self.box.set_scheme(scheme)

    def closeEvent(self, event: Any) -> None:
        self.box.shutdown()
        super().closeEvent(event)


def open_for(panel: "CalibrationPanel") -> GuaranteeWindow:
    window = panel.findChild(GuaranteeWindow)
    if window is None:
        window = GuaranteeWindow(panel)
    else:
        window.follow()  # the scheme's newest stored band, as the CLI may have made one meanwhile
    window.show()
    window.raise_()
    return window


def guarantee_button(panel: "CalibrationPanel") -> QPushButton:
    """The panel's button that opens the window."""
    button = QPushButton("Guaranteed agreement…", panel)
    button.setObjectName("open_guarantee")
    button.setAutoDefault(False)
    button.setToolTip("Where must the machine defer to a human so that it agrees with the humans on the units it "
                      "decides at least a target share of the time, with a guarantee? (calibrate --guarantee)")
    button.clicked.connect(lambda: open_for(panel))
    return button
