"""The violations view's page in the calibration panel (ViolationsView.calibration_page): the match metric's own
search form (objective, std/ha weights, step, folds, grouping, matching) run by the generic search,
app.services.schemes.calibrate (what `concord calibrate` runs: the same objective, folds, grouping and results), in
a worker, and what a run found, said as every page says it (app/gui/calibration_result.py): the verdict, the
held-out score first, every other figure named, what the chosen weights mean; the top configs (select one to inspect
or apply), the objective over two chosen dimensions with the selected config marked, the curve over the match
threshold, and the pairs where the selected config and the humans still disagree (double-click opens one in the
review window).

The panel (app/gui/calibration_panel.py) is generic: it offers the scheme combo, the engine settings, the learning
curve and the human ceiling, and shows this page when the violations scheme is chosen.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtWidgets import (
    QComboBox, QFormLayout, QGroupBox, QHBoxLayout, QLineEdit, QPushButton, QSpinBox, QSplitter, QVBoxLayout, QWidget,
)

from app.gui.calibration_curve import Setup
from app.gui.charts import Heatmap, LineChart
from app.gui.calibration_result import RunSummary, top_columns, top_records
from app.gui.models import Column, RecordTableModel, fmt_score
from app.gui.plaintext import plain_label
from app.gui.views.base import make_table
from app.gui.workers import ProgressPanel, Task, TaskProgress, when_done
from app.schemes.violations.store import store_of
from app.store import Project
from calibration.schemes.base import Scheme
from calibration.schemes.violations.config import COMPONENTS, MatchConfig, Thresholds
from calibration.schemes.violations.scheme import SCHEME
from calibration.schemes.violations.search import ViolationsProblem
from calibration.search import report

if TYPE_CHECKING:
    from app.gui.banner import MessageBar
    from app.gui.calibration_panel import CalibrationPanel

DIM_TITLES = {"w_overlap": "weight IoU", "w_rule": "weight rule", "w_category": "weight category",
              "w_explanation": "weight explanation", "w_correction": "weight correction",
              "t_overlap": "threshold IoU", "t_rule": "threshold rule", "t_match": "threshold score"}
TOP = 200
OBJECTIVES = ("kappa", "f1", "accuracy", "mcc", "spearman", "kendall")
STEPS = ("0.5", "0.25", "0.2", "0.1", "0.05")


def _w(v: Any) -> str:
    return "" if v is None else f"{float(v):.2f}"


SHORT = {"overlap": "IoU", "rule": "rule", "category": "cat", "explanation": "expl", "correction": "corr"}
CONFIG_COLUMNS = (
    *(Column(f"w_{c}", f"w·{SHORT[c]}", _w, True, f"weight of {c}") for c in COMPONENTS),
    Column("t_overlap", "t·IoU", _w, True, "IoU threshold (strict >)"), Column("t_rule", "t·rule", _w, True, "rule threshold"),
    Column("t_match", "t·score", _w, True, "match threshold on the weighted score"),
)
TOP_COLUMNS = top_columns([], CONFIG_COLUMNS)  # decimals of the scores set per run (set_records below)
WEIGHT_TITLES = ViolationsProblem.dim_titles  # the weights' names in the sentence on the chosen ones
DIS_COLUMNS = (
    Column("sample_id", "Sample"), Column("checker", "Checker"), Column("gt_n", "GT"), Column("pred_n", "Pred"),
    Column("score", "Score", fmt_score, True), Column("machine", "Metric"), Column("human", "Human"),
)


def config_of(row: pd.Series | dict[str, Any], name: str, matching: str, embedding: str) -> MatchConfig:
    """The MatchConfig of one cv_results row."""
    return MatchConfig(
        name=name, weights={c: float(row[f"w_{c}"]) for c in COMPONENTS},
        thresholds=Thresholds(float(row["t_overlap"]), float(row["t_rule"]), float(row["t_match"])),
        matching=matching, embedding=embedding,  # type: ignore[arg-type]
    )


class MatchPage(QWidget):
    """The match metric's search form and results (see the module's docstring)."""

    def __init__(self, panel: "CalibrationPanel") -> None:
        super().__init__()
        self.panel = panel
        self.cv: pd.DataFrame | None = None
        self.result: dict[str, Any] | None = None
        self.table: Any = None
        self.labels: Any = None
        self.selected: dict[str, Any] | None = None
        self.task: Task | None = None
        self._build()

    @property
    def project(self) -> Project:
        return self.panel.project

    @property
    def messages(self) -> "MessageBar":
        return self.panel.messages

    def _window_config(self) -> MatchConfig:
        """The match config chosen in the review window (the violations view's MATCH_CONFIGS loaded it)."""
        return self.panel.ctx.config()

    # -- layout ----------------------------------------------------------------------------------------------------
    def _build(self) -> None:
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
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

        self.results = RunSummary()  # the verdict, the held-out score first, every other figure named (issue #27)
        lay.addWidget(self.results)
        r = self.results
        self.verdict, self.summary, self.warnings, self.tie = r.verdict, r.summary, r.warnings, r.tie
        self.base_model, self.base_table = r.base_model, r.base_table
        self._build_results(lay)

    def refresh_engine(self, where: str) -> None:
        """Say which similarity the search uses and where it runs (the panel's engine settings)."""
        cfg = self._window_config()
        self.embedding.setText(f"Similarity: {cfg.embedding} (from {cfg.ref})\nRuns on: {where}")

    def _build_results(self, lay: QVBoxLayout) -> None:
        """The top configs with Apply, the heatmap and threshold curve, and the disagreements, side by side."""
        self.top_model = RecordTableModel(TOP_COLUMNS, self)
        self.top_table = make_table(self.top_model)
        self.top_table.setObjectName("top_configs")
        self.top_table.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.top_table.horizontalHeader().setStretchLastSection(True)
        self.top_table.selectionModel().currentRowChanged.connect(self._row_selected)
        apply_row = QHBoxLayout()
        self.apply_name = QLineEdit("calibrated")
        self.apply_name.setToolTip("Saved as NAME@version; the version is bumped automatically")
        self.apply_button = QPushButton("Apply selected config")
        self.apply_button.setAutoDefault(False)
        self.apply_button.clicked.connect(self.apply_selected)
        apply_row.addWidget(plain_label("Name"))
        apply_row.addWidget(self.apply_name, 1)
        apply_row.addWidget(self.apply_button)
        left = QWidget()
        ll = QVBoxLayout(left)
        ll.setContentsMargins(0, 0, 0, 0)
        ll.addWidget(plain_label(f"Top configs (best {TOP}, ranked on all labeled units; select one to inspect or apply)"))
        ll.addWidget(self.tie)
        ll.addWidget(self.top_table, 1)
        ll.addLayout(apply_row)

        self.dim_x, self.dim_y = QComboBox(), QComboBox()
        for box in (self.dim_x, self.dim_y):
            for d, title in DIM_TITLES.items():
                box.addItem(title, d)
            box.currentIndexChanged.connect(self._draw_surface)
        self.dim_x.setCurrentIndex(self.dim_x.findData("w_overlap"))
        self.dim_y.setCurrentIndex(self.dim_y.findData("t_match"))
        self.heatmap = Heatmap()
        self.heatmap.setObjectName("heatmap")
        self.curve = LineChart()
        self.curve.setObjectName("threshold_curve")
        dims = QHBoxLayout()
        dims.addWidget(plain_label("Heatmap: x"))
        dims.addWidget(self.dim_x)
        dims.addWidget(plain_label("y"))
        dims.addWidget(self.dim_y)
        dims.addStretch(1)
        key = plain_label("red: best cell · dashed: selected config", wrap=True)  # a line of its own, never cut
        key.setStyleSheet("color:#616161;")
        charts = QWidget()
        cl = QVBoxLayout(charts)
        cl.setContentsMargins(0, 0, 0, 0)
        cl.addLayout(dims)
        cl.addWidget(key)
        cl.addWidget(self.heatmap, 3)
        cl.addWidget(plain_label("Objective over the match threshold (other dimensions at the selected config)"))
        cl.addWidget(self.curve, 2)

        self.dis_model = RecordTableModel(DIS_COLUMNS, self)
        self.dis_table = make_table(self.dis_model, 1)
        self.dis_table.setObjectName("disagreements")
        self.dis_table.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.dis_table.activated.connect(self.open_disagreement)
        self.dis_title = plain_label("Disagreements")
        right_box = QWidget()
        rl = QVBoxLayout(right_box)
        rl.setContentsMargins(0, 0, 0, 0)
        rl.addWidget(self.dis_title)
        rl.addWidget(self.dis_table, 1)

        split = QSplitter(Qt.Orientation.Horizontal)
        for w in (left, charts, right_box):
            split.addWidget(w)
        split.setSizes([520, 480, 400])
        lay.addWidget(split, 1)

    # -- results ---------------------------------------------------------------------------------------------------
    def _show_result(self, result: dict[str, Any], cv: pd.DataFrame | None, run_id: int) -> None:
        self.result, self.cv = result, cv
        labeled = result.get("labeled_units", result.get("n_labeled_units", result.get("n_units")))  # older runs
        decisions = result.get("n_items", result.get("n_human_matches"))
        self.results.show_run(result, cv, (
            f"Run {run_id} · objective {result.get('objective')} · {result.get('n_configs', 0):,} configs · "
            f"{report.grouping_of(result)} · {labeled} labeled checkers, {decisions} human decisions"
            + ("" if result.get("embedding") in (None, self._window_config().embedding)
               else f" · similarity {result['embedding']}")), WEIGHT_TITLES, "the match")
        self.selected = None
        rows = top_records(cv, TOP)
        self.top_model.set_records(rows, top_columns(rows, CONFIG_COLUMNS))
        for i, col in enumerate(TOP_COLUMNS):  # weights the search kept at 0 (e.g. std: only IoU and rule) are hidden
            self.top_table.setColumnHidden(i, col.key.startswith("w_") and bool(rows) and all(not r[col.key] for r in rows))
        if rows:
            self.top_table.selectRow(0)
            self.selected = rows[0]
        self._draw_surface()
        self._draw_curve()

    def _row_selected(self, cur: QModelIndex, _prev: QModelIndex) -> None:
        rec = self.top_model.record(cur.row())
        if rec is not None:
            self.selected = rec
            self._draw_marker()
            self._draw_curve()
            self._draw_disagreements()

    def _draw_surface(self) -> None:
        if self.cv is None or self.cv.empty:
            return
        x, y = self.dim_x.currentData(), self.dim_y.currentData()
        if x == y:
            return
        from calibration.search import objective_surface

        surf = objective_surface(self.cv, x, y)
        self.heatmap.set_data(surf.columns.tolist(), surf.index.tolist(), surf.to_numpy().tolist(),
                              DIM_TITLES[x], DIM_TITLES[y])
        self._draw_marker()

    def _draw_marker(self) -> None:
        """The heatmap marks the cell of the selected config (the red outline stays on the best cell)."""
        x, y = self.dim_x.currentData(), self.dim_y.currentData()
        sel = self.selected
        self.heatmap.set_marker(None if sel is None else sel.get(x), None if sel is None else sel.get(y))

    def _draw_curve(self) -> None:
        if self.cv is None or self.cv.empty or self.selected is None:
            return
        same = self.cv
        for d in DIM_TITLES:
            if d != "t_match":
                same = same[same[d] == self.selected[d]]
        curve = same.sort_values("t_match")
        self.curve.set_data(curve["t_match"].tolist(), curve["score"].tolist(), "match threshold",
                            f"{(self.result or {}).get('objective', 'score')} (all labeled units)", self.selected["t_match"])

    def selected_config(self, name: str = "candidate") -> MatchConfig | None:
        if self.selected is None or self.result is None:
            return None
        best = self.result.get("best") or {}
        matching = (self.selected.get("matching") or (best.get("params") or {}).get("matching")
                    or best.get("matching") or "greedy")  # the last: runs stored by the older front
        return config_of(self.selected, name, matching, self.result.get("embedding") or self._window_config().embedding)

    def _draw_disagreements(self) -> None:
        cfg = self.selected_config()
        if cfg is None or self.table is None or self.labels is None or not self.labels.labeled_groups:
            self.dis_model.set_records([])
            return
        from calibration.schemes.violations.views import disagreements

        df = disagreements(self.table, cfg, self.labels.matches, self.labels.labeled_groups)
        recs = [{"sample_id": r["sample_id"], "checker": r["checker"], "gt": int(r["gt"]), "pred": int(r["pred"]),
                 "gt_n": int(r["gt"]) + 1, "pred_n": int(r["pred"]) + 1, "score": r["score"],
                 "machine": "match" if r["machine"] else "no", "human": "match" if r["human"] else "no",
                 "_tip": "Double-click or Enter: open this pair in the review window"}
                for r in df.to_dict("records")]
        self.dis_model.set_records(recs)
        self.dis_title.setText(f"Disagreements with the humans under the selected config: {len(recs)} pair(s)")

    def open_disagreement(self, index: QModelIndex) -> None:
        rec = self.dis_model.record(index.row())
        if rec is None:
            return
        self.panel.host.reveal_unit(rec["sample_id"], rec["checker"], pair=(rec["gt"], rec["pred"]))

    def apply_selected(self) -> None:
        cfg = self.selected_config()
        name = self.apply_name.text().strip()
        if cfg is None or not name:
            return
        from app.errors import UsageError
        from app.gui import calibration_verdict as verdict
        from app.services.schemes import apply_params

        forced = verdict.needs_force(self.result)
        if forced and not verdict.confirm_force(self, self.result or {}):
            return

        params = {"weights": dict(cfg.weights), "thresholds": {"overlap": cfg.thresholds.overlap,
                                                               "rule": cfg.thresholds.rule, "match": cfg.thresholds.match},
                  "matching": cfg.matching, "embedding": cfg.embedding}
        try:  # the service behind `concord calibrate --apply` (the scheme's store saves a match config)
            ref = apply_params(self.project, SCHEME, name, params,
                               origin=verdict.FORCED_ORIGIN if forced else "calibration")
        except UsageError as exc:
            self.messages.report("apply", "Could not apply the config", exc)
            return
        self.messages.dismiss("apply")
        self.panel.host.choose_config(ref)
        how = " (forced: no better than the default)" if forced else ""
        self.summary.setText(self.summary.text() + f"\nApplied as {ref}{how}: the review window now uses it.")

    # -- running ---------------------------------------------------------------------------------------------------
    def set_scheme(self, scheme: Scheme) -> None:
        """Shown for the violations scheme: the newest stored run, unless this page already shows one."""
        if self.result is None and self.task is None:
            self.load_latest()

    def run(self) -> None:
        if self.task is not None:
            return
        path, emb = str(self.project.path), self._window_config().embedding
        opts = {"objective": self.objective.currentText(), "folds": self.folds.value(),
                "group_by": self.group_by.currentData(), **self.panel.engine_options()}
        components, step, matching = self.components.currentData(), float(self.step.currentText()), self.matching.currentText()

        options = {"components": components, "step": step, "matching": matching, "embedding": emb}

        def work(progress: TaskProgress) -> dict[str, Any]:
            from app.schemes.violations.services import human_labels, pair_table
            from app.schemes.violations.views_scoring import ensure_sample_vectors
            from app.services.schemes import calibrate, labeled_units

            with Project.open(path) as wp:
                ensure_sample_vectors(path, wp.caches, emb, store_of(wp).violation_samples(), progress)  # the model stays out of the app
                cal, run_id = calibrate(wp, SCHEME, options, progress=progress, **opts)  # as `concord calibrate`
                counted = labeled_units(wp, SCHEME)  # as `concord status` counts them
                table = pair_table(wp, emb)  # vectors are cached now: cheap, and needed for the disagreements
                labels = human_labels(wp, table)
            result = cal.to_dict() | {"embedding": emb, "labeled_units": counted, "grouping": cal.grouping_,
                                      "weights_meaning": cal.weights_meaning_}
            return {"result": result, "cv": cal.cv_results_, "table": table, "labels": labels, "run_id": run_id}

        self._start(Task(work, "calibration"), "Calibrating…")

    def curve_setup(self) -> Setup | None:
        """The learning curve runs the search this page would run (its objective, folds, grouping and space)."""
        emb = self._window_config().embedding
        opts = {"components": self.components.currentData(), "step": float(self.step.currentText()),
                "matching": self.matching.currentText(), "embedding": emb}

        def prepare(path: str, wp: Project, progress: Any) -> None:
            from app.schemes.violations.views_scoring import ensure_sample_vectors

            ensure_sample_vectors(path, wp.caches, emb, store_of(wp).violation_samples(), progress)  # the model stays out of the app

        return (SCHEME.name, opts, self.objective.currentText(), self.folds.value(), self.group_by.currentData(), prepare)

    def _start(self, task: Task, title: str) -> None:
        self.task = task
        self.run_button.setEnabled(False)
        task.signals.finished.connect(self._finished)
        task.signals.failed.connect(lambda _m, t=task: self.messages.report(
            "task", f"{title.rstrip('…')} failed", t.error or RuntimeError(_m.splitlines()[0]),
            project=str(self.project.path)))
        when_done(task, self._ended)
        self.progress.track(task, title)
        self.panel.ctx.runner.start(task)

    def _ended(self) -> None:
        self.task = None
        self.run_button.setEnabled(True)

    def load_latest(self) -> None:
        """Show the project's newest stored run; the pair table for its disagreements is built in a worker."""
        runs = [r for r in (self.project.artifacts.calibration_runs() if self.panel.ctx.project is not None else [])
                if ((r.get("result") or {}).get("scheme") or (r.get("params") or {}).get("scheme") or SCHEME.name)
                == SCHEME.name]  # the match metric's own runs (older ones carry no scheme name)
        if not runs:
            self.summary.setText("No calibration run yet. Label some units (accept or fix matches), then Run.")
            return
        run = runs[-1]
        best = (run["result"].get("best") or {}).get("params") or {}
        emb = (run["params"].get("embedding") or (run["params"].get("options") or {}).get("embedding")
               or run["result"].get("embedding") or best.get("embedding") or self._window_config().embedding)
        self._show_result(run["result"] | {"embedding": emb}, self.project.artifacts.calibration_cv_results(run["id"]), run["id"])
        path = str(self.project.path)

        def work(progress: TaskProgress) -> dict[str, Any]:
            from app.schemes.violations.views_scoring import ensure_sample_vectors
            from app.schemes.violations.services import human_labels, pair_table

            with Project.open(path) as wp:
                ensure_sample_vectors(path, wp.caches, emb, store_of(wp).violation_samples(), progress)
                table = pair_table(wp, emb)
                return {"table": table, "labels": human_labels(wp, table)}

        self._start(Task(work, "pairs"), "Loading pairs for the disagreement list…")

    def _finished(self, out: dict[str, Any]) -> None:
        if "result" in out:
            self._show_result(out["result"], out["cv"], out["run_id"])
        self.table, self.labels = out["table"], out["labels"]
        self._draw_disagreements()

    def shutdown(self) -> None:
        if self.task is not None:
            self.task.cancel()
