"""The human ceiling beside the metric (issue #15), drawn in the calibration panel: per scheme, on the units two or
more people labeled, the humans' agreement with each other (Fleiss' kappa) next to the metric's agreement with the
resolved human label (Cohen's kappa), each with its 95% bootstrap interval. Figures from app.services.ceiling
(the same as `concord calibrate`/`evaluate` print), computed in a worker."""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QWidget

from app.gui.workers import Task, TaskProgress, TaskRunner
from app.store import Project

HUMAN, METRIC = QColor("#5c6bc0"), QColor("#ef6c00")


def bars(results: dict[str, dict[str, Any] | None]) -> list[tuple[str, str, dict[str, Any] | None]]:
    """(scheme, 'humans'|'metric'|'metric: UNIT', {estimate, low, high} or None) for every scheme with a ceiling.
    A scheme whose machine side is per unit (several judges each deciding the sample: `metric_human.per_unit`, each
    unit's mean Cohen's kappa against each annotator, as `concord evaluate` prints it) gets a bar per unit."""
    out = []
    for scheme, r in results.items():
        if r is None:
            continue
        out.append((scheme, "humans", r["human_human"]["kappa"]))
        mh = r.get("metric_human") or {}
        if mh.get("per_unit"):
            for unit, k in mh["per_unit"].items():
                out.append((scheme, f"metric: {unit}", k if isinstance(k, dict) or k is None else {"estimate": k}))
        else:
            out.append((scheme, "metric", mh.get("kappa_vs_resolved")))
    return out


TITLE = "kappa on the units labeled by 2+ people: humans with each other (blue) · metric vs humans (orange)"


class CeilingChart(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ceiling_chart")
        self.setToolTip(TITLE)  # the title, whole (a narrow chart elides it)
        self.setMinimumHeight(150)
        self.results: dict[str, dict[str, Any] | None] = {}
        self.message = "Human ceiling: computing…"

    def compute(self, runner: TaskRunner, path: str, n_boot: int = 500, seed: int = 0) -> Task:
        def work(_progress: TaskProgress) -> dict[str, Any]:
            from app.services.ceiling import ceiling_with_machine  # the metric's decisions as `evaluate` has them

            with Project.open(path) as wp:
                return {s: ceiling_with_machine(wp, s, n_boot=n_boot, seed=seed) for s in wp.units.unit_schemes()}

        task = Task(work, "human ceiling")
        task.signals.finished.connect(self.set_results)
        task.signals.failed.connect(lambda m: self._say(f"Human ceiling: failed ({m.splitlines()[0] if m else ''})"))
        runner.start(task)
        return task

    def _say(self, text: str) -> None:
        self.message = text
        self.update()

    def set_results(self, results: dict[str, dict[str, Any] | None]) -> None:
        self.results = results
        self.message = "" if bars(results) else "Human ceiling: no unit is labeled by two or more people yet"
        notes = [f"{s}: {r['note']}" for s, r in results.items() if r and r.get("note")]
        self.setToolTip("\n".join(notes))
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt's name
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.fillRect(self.rect(), QColor("white"))
        items = bars(self.results)
        if not items:
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, self.message)
            return
        fm = p.fontMetrics()
        labels = [f"{scheme} · {who.removeprefix('metric: ')}" for scheme, who, _ in items]
        # the labels' width, within a third of the chart; a longer one (a judge's id) is elided in the middle
        left = min(max(150, max(fm.horizontalAdvance(t) for t in labels) + 12), max(150, self.width() // 3))
        right, top, bottom = 170, 22, 20
        plot = QRectF(left, top, max(10, self.width() - left - right), max(10, self.height() - top - bottom))
        title = p.fontMetrics().elidedText(TITLE, Qt.TextElideMode.ElideRight, self.width() - 8)  # never cut at both ends
        p.drawText(QRectF(0, 2, self.width(), 18), Qt.AlignmentFlag.AlignCenter, title)

        def x(v: float) -> float:  # kappa in [-1, 1] -> pixels (0 marked)
            return plot.left() + (max(-1.0, min(1.0, v)) + 1) / 2 * plot.width()

        p.setPen(QPen(QColor("#9e9e9e"), 1, Qt.PenStyle.DashLine))
        for tick in (-1.0, 0.0, 0.5, 1.0):
            p.drawLine(QPointF(x(tick), plot.top()), QPointF(x(tick), plot.bottom()))
            p.drawText(QPointF(x(tick) - 8, plot.bottom() + 14), f"{tick:g}")
        h = plot.height() / len(items)
        for i, (scheme, who, ci) in enumerate(items):
            y = plot.top() + i * h
            p.setPen(QColor("black"))
            p.drawText(QRectF(4, y, left - 8, h), Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                       fm.elidedText(labels[i], Qt.TextElideMode.ElideMiddle, int(left - 8)))
            est = None if ci is None else ci.get("estimate")
            if est is None:
                p.drawText(QRectF(plot.left() + 4, y, plot.width(), h), Qt.AlignmentFlag.AlignVCenter,
                           "no figure (no machine decision)" if who.startswith("metric") else "undefined")
                continue
            colour = HUMAN if who == "humans" else METRIC
            bar = QRectF(x(0.0), y + h * 0.2, x(est) - x(0.0), h * 0.6).normalized()
            p.fillRect(bar, colour)
            lo, hi = ci.get("low"), ci.get("high")
            if lo is not None and hi is not None:
                p.setPen(QPen(QColor("black"), 1.5))
                mid = y + h / 2
                p.drawLine(QPointF(x(lo), mid), QPointF(x(hi), mid))
                for end in (lo, hi):
                    p.drawLine(QPointF(x(end), mid - 4), QPointF(x(end), mid + 4))
            p.setPen(QColor("black"))
            text = f"{est:.3f}" + ("" if lo is None or hi is None else f" [{lo:.2f}, {hi:.2f}]")
            p.drawText(QRectF(plot.right() + 8, y, right - 8, h), Qt.AlignmentFlag.AlignVCenter, text)
