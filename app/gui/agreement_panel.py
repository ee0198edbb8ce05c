"""Agreement panel (Tools ▸ Annotator agreement, issue #15): the figures `concord agreement` prints, computed by the
same service (app.services.agreement.agreement) in a worker: per scheme and label kind Fleiss' kappa, Krippendorff's
alpha, span F1 and unitizing alpha; Cohen's kappa and span P/R/F1 per annotator pair; the per-annotator table.
Every figure with its 95% bootstrap interval over samples. Two more tabs (issue #29, app/gui/agreement_quality.py):
each annotator's quality figures and flags, agreement per time window as a chart with drops flagged and guideline
version changes marked, and agreement per guideline version (`concord agreement --over version`'s figures)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDoubleSpinBox,
    QHBoxLayout,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.figures import fmt_estimate as fmt
from app.gui.agreement_quality import OverTimePage, QualityPage
from app.gui.banner import MessageBar
from app.gui.models import Column, RecordTableModel
from app.gui.plaintext import plain_label
from app.gui.views.base import make_table
from app.gui.workers import ProgressPanel, SingleTask, Task, TaskProgress
from app.store import Project

if TYPE_CHECKING:
    from app.gui.window_context import PanelHost

KIND_COLUMNS = (
    Column("scheme", "Scheme"), Column("kind", "Label kind"), Column("size", "Items / spans", align_right=True),
    Column("kappa", "Fleiss' kappa", fmt, tip="Fleiss' kappa over the items [95% interval]"),
    Column("alpha", "Krippendorff's alpha", fmt), Column("span_f1", "Span F1", fmt,
                                                          tip="micro F1 over annotator pairs, spans matched on IoU > T"),
    Column("u_alpha", "Unitizing alpha", fmt),
)
PAIR_COLUMNS = (
    Column("a", "A"), Column("b", "B"), Column("n_items", "Items", align_right=True), Column("kappa", "Cohen's kappa", fmt),
    Column("span_precision", "Span P", fmt), Column("span_recall", "Span R", fmt), Column("span_f1", "Span F1", fmt),
)
PEOPLE_COLUMNS = (
    Column("annotator", "Annotator"), Column("n_labels", "Labels", align_right=True),
    Column("n_units", "Units", align_right=True), Column("mean_kappa", "Mean kappa with others", fmt),
    Column("span_f1_with_others", "Span F1 with others", fmt), Column("seconds_per_unit", "Seconds per unit", fmt),
)


def kind_rows(out: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for scheme, kinds in out["schemes"].items():
        for kind, r in kinds.items():
            ov = r.get("overall", {})
            rows.append({"scheme": scheme, "kind": kind, "size": r.get("n_items", r.get("n_spans", r.get("n_labels", 0))),
                         "kappa": ov.get("kappa"), "alpha": ov.get("alpha"), "span_f1": ov.get("span_f1"),
                         "u_alpha": ov.get("u_alpha"), "_tip": r.get("note") or None})
    ov = out["overall"]
    if rows:
        rows.append({"scheme": "all", "kind": "pooled", "size": "", "kappa": ov.get("kappa"), "alpha": ov.get("alpha"),
                     "span_f1": ov.get("span_f1"), "u_alpha": ov.get("u_alpha"), "_bg": "#eceff1"})
    return rows


class AgreementPanel(QDialog):
    def __init__(self, host: "PanelHost") -> None:
        super().__init__(None)
        self.host = host
        self.ctx = host.ctx
        self.setWindowTitle("Annotator agreement")
        self.setWindowFlag(Qt.WindowType.Window)
        self.result: dict[str, Any] | None = None
        lay = QVBoxLayout(self)
        self.messages = MessageBar()
        lay.addWidget(self.messages)
        top = QHBoxLayout()
        self.iou = QDoubleSpinBox()
        self.iou.setRange(0.0, 0.99)
        self.iou.setSingleStep(0.1)
        self.iou.setToolTip("Spans match when their character IoU is above this")
        self.boot = QSpinBox()
        self.boot.setRange(0, 10000)
        self.boot.setValue(1000)
        self.boot.setToolTip("Bootstrap replicates over samples for the 95% intervals (0: none)")
        self.window_box = QComboBox()
        for text, value in (("per day", "day"), ("per week", "week"), ("per 50 units", 50)):
            self.window_box.addItem(text, value)
        self.window_box.setToolTip("The time windows of 'Over time': a UTC day or ISO week, or 50 labelled units")
        self.run_button = QPushButton("Compute")
        self.run_button.setAutoDefault(False)
        self.run_button.clicked.connect(self.run)
        for w in (plain_label("Span IoU >"), self.iou, plain_label("Bootstrap draws"), self.boot, self.window_box,
                  self.run_button):
            w.setMaximumWidth(160)
            top.addWidget(w)
        self.progress = ProgressPanel()
        top.addWidget(self.progress, 1)
        self.runs = SingleTask(self.progress, self.run_button.setEnabled)
        lay.addLayout(top)
        self.summary = plain_label(wrap=True)
        lay.addWidget(self.summary)
        self.tabs = QTabWidget()
        lay.addWidget(self.tabs, 1)
        figures = QWidget()
        figures_lay = QVBoxLayout(figures)
        self.tables: dict[str, tuple[RecordTableModel, Any]] = {}
        for key, title, cols in (("kinds", "Per scheme and label kind", KIND_COLUMNS),
                                 ("pairs", "Annotator pairs (pooled over kinds)", PAIR_COLUMNS),
                                 ("annotators", "Annotators", PEOPLE_COLUMNS)):
            model = RecordTableModel(cols, self)
            table = make_table(model)
            table.setObjectName(f"agreement_{key}")
            table.horizontalHeader().setStretchLastSection(True)
            figures_lay.addWidget(plain_label(title))
            figures_lay.addWidget(table, 1)
            self.tables[key] = (model, table)
        self.tabs.addTab(figures, "Agreement")
        self.quality = QualityPage()
        self.tabs.addTab(self.quality, "Annotator quality")
        self.over_time = OverTimePage()
        self.tabs.addTab(self.over_time, "Over time")
        self.by_version = OverTimePage(by_version=True)
        self.tabs.addTab(self.by_version, "By guideline version")
        from app.gui.plan_page import PlanPage  # the sample-size planner (issue #29 item 4)

        self.plan = PlanPage(host.ctx)
        self.tabs.addTab(self.plan, "Plan")
        self.resize(1100, 720)

    @classmethod
    def open_for(cls, host: "PanelHost", *, run: bool = True) -> "AgreementPanel":
        panel = host.opened.get("agreement")
        if panel is None:
            panel = host.opened["agreement"] = cls(host)
        panel.show()
        panel.raise_()
        if run and panel.result is None:
            panel.run()
        return panel

    def run(self) -> None:
        p = self.ctx.project
        if self.task is not None or p is None:
            return
        path, iou, n_boot = str(p.path), float(self.iou.value()), int(self.boot.value())
        window = self.window_box.currentData()

        def work(_progress: TaskProgress) -> dict[str, Any]:
            from app.services.agreement import agreement, agreement_over_time, annotator_quality, collect_labels

            with Project.open(path) as wp:  # the worker's own connection
                out = agreement(wp, iou=iou, n_boot=n_boot)
                scope = collect_labels(wp)
                res = {**out, "annotator_quality": annotator_quality(wp, n_boot=n_boot, scope=scope),
                       "over_time": agreement_over_time(wp, window=window, iou=iou, n_boot=n_boot, scope=scope),
                       "guideline_history": {s: wp.guidelines.guideline_history(s) for s in wp.guidelines.guideline_schemes()}}
                with wp.guidelines.every_label():  # each label under the version it was given under, as --over version
                    res["over_version"] = agreement_over_time(wp, iou=iou, n_boot=n_boot, over="version",
                                                              scope=collect_labels(wp))
                return res

        self.summary.setText("Computing…")
        self.runs.start(self.ctx.runner, Task(work, "agreement"), "Agreement…", self.show_result,
                        lambda exc: self.messages.report("task", "Agreement failed", exc, project=path))

    @property
    def task(self) -> Task | None:
        return self.runs.current

    def show_result(self, out: dict[str, Any]) -> None:
        out = dict(out)  # the --annotators and --over time figures go to their tabs; `result` is `agreement`'s
        self.quality.set_rows(out.pop("annotator_quality", None))
        history = out.pop("guideline_history", None)
        self.over_time.set_windows(out.pop("over_time", None), history)
        self.by_version.set_windows(out.pop("over_version", None))
        self.result = out
        rows = kind_rows(out)
        self.tables["kinds"][0].set_records(rows)
        self.tables["pairs"][0].set_records(out["pairs"])
        self.tables["annotators"][0].set_records(out["annotators"])
        if not rows:
            self.summary.setText("No labels by two or more annotators to compare yet.")
        else:
            self.summary.setText(f"95% bootstrap intervals over samples ({out['n_boot']} draws) · spans match on "
                                 f"IoU > {out['iou']:g} · same figures as `concord agreement`")
