"""The calibration panel's generic page, for every scheme whose view brings no page of its own
(DetailView.calibration_page; the violations view brings the match metric's): the generic search,
app.services.schemes.calibrate (what `concord calibrate --scheme NAME` runs), in a worker, shown the same way for
any scheme: first the verdict (is the calibrated config better than the default on held-out data, in words), the
held-out score with its 95% interval next to each preset's on the same folds, the tie-break, the top
configs with the search space's dimensions as columns, and Apply (NAME@next version, the service behind
`concord calibrate --apply`). Nothing here names a scheme.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import pandas as pd
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtWidgets import (
    QComboBox, QFormLayout, QGroupBox, QHBoxLayout, QLineEdit, QPushButton, QSpinBox, QVBoxLayout,
    QWidget,
)

from app.gui.calibration_curve import Setup
from app.gui import calibration_verdict as verdict
from app.gui.calibration_result import RunSummary, top_columns, top_records
from app.gui.models import Column, RecordTableModel
from app.gui.plaintext import plain_label
from app.gui.views.base import make_table
from app.gui.workers import ProgressPanel, SingleTask, Task, TaskProgress
from app.store import Project
from calibration.schemes.base import Scheme, registry
from calibration.search import report

if TYPE_CHECKING:
    from app.gui.calibration_panel import CalibrationPanel

TOP = 200
STATS = ("score", "mean_train_score", "std_train_score", "mean_test_score", "std_test_score", "rank")


def fmt_value(v: Any) -> str:
    """A config value for the table: numbers short, booleans yes/no, anything else as text."""
    if v is None:
        return ""
    if isinstance(v, bool) or type(v).__name__ == "bool_":
        return "yes" if v else "no"
    if isinstance(v, (int, float)) or hasattr(v, "dtype"):
        f = float(v)
        return "" if math.isnan(f) else f"{f:.4g}"
    return str(v)


def fmt_ci(ci: Any) -> str:
    lo, hi = (list(ci) + [None, None])[:2] if ci else (None, None)
    return "–" if lo is None or hi is None else f"[{lo:.3f}, {hi:.3f}]"


def dims_of(cv: pd.DataFrame) -> list[str]:
    """The search space's dimensions: the cv_results columns that are not scores."""
    return [c for c in cv.columns if c not in STATS and not (c.startswith("split") and c.endswith("_test_score"))]


def inspect_problem(path: str, name: str, progress: TaskProgress | None = None) -> dict[str, Any]:
    """Build the scheme's search problem once (in a worker) for what the controls offer: the suggested objective
    first, then every objective the problem's shape allows; the fold groupings; or why there is nothing to search."""
    from app.errors import UsageError
    from app.services.schemes import scheme_options
    from calibration.search.objectives import REGISTRY
    from calibration.search.problem import nouns, suggested_objective

    scheme = registry().get(name)
    with Project.open(path) as wp:
        try:
            opts = scheme_options(wp, scheme, {}, progress)
            problem = scheme.search_problem(wp.scheme_data.scheme_records(name), wp.scheme_data.scheme_labels(name), opts)
        except (ValueError, UsageError) as exc:
            return {"message": f"{scheme.title}: {exc}"}
    if problem is None:
        return {"message": f"{scheme.title}: nothing to calibrate yet (no search problem for the labels in this "
                           "project: label some units, then open the panel again)"}
    has_strata = "stratum" in problem.units.columns
    allowed = []
    for obj in REGISTRY.values():
        try:
            obj.check(int(problem.n_classes), has_strata)
        except ValueError:
            continue
        allowed.append(obj.name)
    suggested = suggested_objective(problem)
    g, s = nouns(problem)
    return {"objectives": [suggested] + [o for o in allowed if o != suggested], "suggested": suggested,
            "groupings": [(f"folds grouped by {g}", g)] + ([(f"leave one {s} out", s)] if has_strata else []),
            "n_configs": int(problem.space.n_configs), "message": ""}


def calibrated_schemes(project: Project) -> list[Scheme]:
    """The project's schemes that can have a search problem (a scheme with `calibrates = False`, e.g. rubric, is
    left out without building anything; one whose problem turns out None says so on its page)."""
    from app.errors import UsageError
    from app.services.queue import calibrates
    from app.services.schemes import present

    try:
        schemes = present(project)
    except UsageError:  # samples of an unregistered scheme: list the registered ones
        counts = project.counts.sample_counts()
        schemes = [s for s in registry() if counts.get(s.name)]
    return [s for s in schemes if calibrates(s)]


class SchemePage(QWidget):
    """Controls and results of the generic search for one scheme at a time (`set_scheme`)."""

    def __init__(self, panel: "CalibrationPanel") -> None:
        super().__init__()
        self.panel = panel
        self.scheme: Scheme | None = None
        self.result: dict[str, Any] | None = None
        self.cv: pd.DataFrame | None = None
        self.run_id: int | None = None
        self.selected: dict[str, Any] | None = None
        self.info: dict[str, Any] = {}
        self._build()

    def _build(self) -> None:
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        box = QGroupBox("Search")
        form = QHBoxLayout(box)
        self.objective = QComboBox()
        self.objective.setToolTip("What to maximise: the scheme's suggestion first, then the objectives its "
                                  "decisions allow (calibration/search/objectives.py)")
        self.folds = QSpinBox()
        self.folds.setRange(2, 20)
        self.folds.setValue(5)
        self.group_by = QComboBox()
        for combo in (self.objective, self.group_by):
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
            combo.setMinimumContentsLength(16)
        sub = QFormLayout()
        sub.addRow("Objective", self.objective)
        sub2 = QFormLayout()
        sub2.addRow("Folds", self.folds)
        sub2.addRow("Grouping", self.group_by)
        form.addLayout(sub)
        form.addLayout(sub2)
        right = QVBoxLayout()
        self.space_label = plain_label(wrap=True)
        self.runs_on = plain_label()  # "Runs on: ..." (the panel's engine settings)
        self.run_button = QPushButton("Run calibration")
        self.run_button.setAutoDefault(False)
        self.run_button.clicked.connect(self.run)
        self.progress = ProgressPanel()
        for w in (self.space_label, self.runs_on, self.run_button, self.progress):
            right.addWidget(w)
        right.addStretch(1)
        form.addLayout(right, 1)
        lay.addWidget(box)

        self.results = RunSummary()  # the verdict, the held-out score first, every other figure named (issue #27)
        lay.addWidget(self.results)
        r = self.results
        self.verdict, self.summary, self.warnings, self.tie = r.verdict, r.summary, r.warnings, r.tie
        self.base_model, self.base_table = r.base_model, r.base_table

        self.top_model = RecordTableModel((), self)
        self.top_table = make_table(self.top_model)
        self.top_table.setObjectName("scheme_top_configs")
        self.top_table.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.apply_name = QLineEdit("calibrated")
        self.apply_name.setToolTip("Saved as NAME@version (the next free version), as `concord calibrate --apply NAME`")
        self.apply_button = QPushButton("Apply selected config")
        self.apply_button.setAutoDefault(False)
        self.apply_button.clicked.connect(self.apply_selected)
        apply_row = QHBoxLayout()
        apply_row.addWidget(plain_label("Name"))
        apply_row.addWidget(self.apply_name, 1)
        apply_row.addWidget(self.apply_button)
        self.runs = SingleTask(self.progress, self._enable)
        self.top_title = plain_label(f"Top configs (best {TOP}, ranked on {report.IN_SAMPLE}; select one to apply)")
        lay.addWidget(self.top_title)
        lay.addWidget(self.tie)
        lay.addWidget(self.top_table, 1)
        lay.addLayout(apply_row)

    # -- scheme ----------------------------------------------------------------------------------------------------
    def set_scheme(self, scheme: Scheme) -> None:
        """Show the scheme's newest stored run, and build its problem in a worker for the objective list."""
        self.runs.cancel()
        self.scheme = scheme
        self.info = {}
        self.result = self.cv = self.selected = None
        self.objective.clear()
        self.group_by.clear()
        self.space_label.setText("Reading the labels…")
        self.run_button.setEnabled(False)
        self.results.clear()
        self.top_model.set_records([])
        from app.services.queue import last_run

        run = last_run(self.panel.project, scheme.name)
        if run is None:
            self.summary.setText(f"No {scheme.title} calibration run yet: choose the objective and folds, then Run.")
        else:
            self.show_result(run["result"], self.panel.project.artifacts.calibration_cv_results(run["id"]), run["id"])
        path, name = str(self.panel.project.path), scheme.name
        self._start(Task(lambda progress: {"inspect": inspect_problem(path, name, progress)}, "inspect"),
                    "Building the search problem…")

    def _show_info(self, info: dict[str, Any]) -> None:
        self.info = info
        if info.get("message"):
            self.space_label.setText(info["message"])
            self.run_button.setEnabled(False)
            return
        current = (self.result or {}).get("objective")
        self.objective.clear()
        self.objective.addItems(info["objectives"])
        self.objective.setCurrentText(current if current in info["objectives"] else info["suggested"])
        self.group_by.clear()
        for title, noun in info["groupings"]:
            self.group_by.addItem(title, noun)
        self.space_label.setText(f"{info['n_configs']:,} configs in the search space · suggested objective "
                                 f"{info['suggested']}")
        self.run_button.setEnabled(True)

    # -- running ---------------------------------------------------------------------------------------------------
    def run(self) -> None:
        if self.task is not None or self.scheme is None or not self.objective.currentText():
            return
        path, name = str(self.panel.project.path), self.scheme.name
        kw = {"objective": self.objective.currentText(), "folds": self.folds.value(),
              "group_by": self.group_by.currentData(), **self.panel.engine_options()}

        def work(progress: TaskProgress) -> dict[str, Any]:
            from app.services.schemes import calibrate, labeled_units

            with Project.open(path) as wp:
                cal, run_id = calibrate(wp, registry().get(name), {}, progress=progress, **kw)
                counted = labeled_units(wp, registry().get(name))  # as status counts them (issue #25)
            return {"result": cal.to_dict() | {"labeled_units": counted, "grouping": cal.grouping_,
                                               "weights_meaning": cal.weights_meaning_},
                    "cv": cal.cv_results_, "run_id": run_id}

        self._start(Task(work, "calibration"), "Calibrating…")

    @property
    def task(self) -> Task | None:
        return self.runs.current

    def _start(self, task: Task, title: str) -> None:
        self.runs.start(self.panel.ctx.runner, task, title, self._finished,
                        lambda exc: self.panel.messages.report("task", f"{title.rstrip('…')} failed", exc,
                                                               project=str(self.panel.project.path)))

    def _enable(self, on: bool) -> None:
        self.run_button.setEnabled(on and bool(self.info) and not self.info.get("message"))
        self.apply_button.setEnabled(on)

    def _finished(self, out: dict[str, Any]) -> None:
        if "inspect" in out:
            self._show_info(out["inspect"])
        if "result" in out:
            self.show_result(out["result"], out["cv"], out["run_id"])
        if "applied" in out:
            self.panel.messages.dismiss("apply")
            how = " (forced: no better than the default)" if out.get("forced") else ""
            self.summary.setText(self.summary.text() + f"\nApplied as {out['applied']}{how}: "
                                 f"`concord evaluate --scheme {self.scheme.name if self.scheme else ''} "
                                 f"--use {out['applied']}` scores with it.")

    # -- results ---------------------------------------------------------------------------------------------------
    def show_result(self, result: dict[str, Any], cv: pd.DataFrame | None, run_id: int) -> None:
        self.result, self.cv, self.run_id = result, cv, run_id
        title = self.scheme.title if self.scheme else result.get("scheme")
        noun = self.scheme.unit_noun if self.scheme else "unit"
        self.results.show_run(result, cv, (
            f"{title} · run {run_id} · objective {result.get('objective')} · {result.get('n_configs', 0):,} configs · "
            f"{report.grouping_of(result)} · {result.get('labeled_units', '?')} labeled {noun}s "
            f"({result.get('n_units')} search units), {result.get('n_items')} human decisions"))
        best = result.get("best") or {}
        dims = dims_of(cv) if cv is not None else list((best.get("config") or {}))
        recs = top_records(cv, TOP)
        cols = top_columns(recs, [Column(d, d, fmt_value, True) for d in dims])
        self.top_model = RecordTableModel(cols, self)
        self.top_table.setModel(self.top_model)
        self.top_table.selectionModel().currentRowChanged.connect(self._row_selected)
        self.top_model.set_records(recs)
        self.selected = recs[0] if recs else None
        if recs:
            self.top_table.selectRow(0)

    def _row_selected(self, cur: QModelIndex, _prev: QModelIndex) -> None:
        rec = self.top_model.record(cur.row())
        if rec is not None:
            self.selected = rec

    def apply_selected(self) -> None:
        """Save the selected config's parameters as NAME@next version (the best one's are stored with the run;
        another row's are the problem's `to_params`, built in a worker)."""
        name = self.apply_name.text().strip()
        if self.selected is None or self.result is None or self.scheme is None or not name or self.task is not None:
            return
        forced = verdict.needs_force(self.result)
        if forced and not verdict.confirm_force(self, self.result):
            return
        origin = verdict.FORCED_ORIGIN if forced else "calibration"
        best = self.result.get("best") or {}
        config_id = self.selected.get("_id")
        same = self.cv is not None and config_id == int(self.cv.index[0])
        path, scheme_name = str(self.panel.project.path), self.scheme.name
        params = best.get("params") if same else None

        def work(progress: TaskProgress) -> dict[str, Any]:
            from app.services.schemes import apply_params, scheme_options

            with Project.open(path) as wp:
                scheme = registry().get(scheme_name)
                p = params
                if p is None:
                    opts = scheme_options(wp, scheme, {}, progress)
                    problem = scheme.search_problem(wp.scheme_data.scheme_records(scheme_name), wp.scheme_data.scheme_labels(scheme_name), opts)
                    if problem is None:
                        raise ValueError("no search problem for the current labels")
                    p = problem.to_params(problem.space.config(int(config_id)))
                return {"applied": apply_params(wp, scheme, name, p, origin=origin), "forced": forced}

        self._start(Task(work, "apply"), "Saving the parameters…")

    def refresh_engine(self, where: str) -> None:
        self.runs_on.setText(f"Runs on: {where}")

    def curve_setup(self) -> Setup | None:
        """The learning curve re-runs this page's search (None until the problem offers an objective)."""
        if self.scheme is None or not self.objective.currentText():
            return None
        return (self.scheme.name, {}, self.objective.currentText(), self.folds.value(), self.group_by.currentData(), None)

    def shutdown(self) -> None:
        self.runs.cancel()
