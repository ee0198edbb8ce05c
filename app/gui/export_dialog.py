"""Export dialog: the options of `concord export`, a live preview of the counts (and of anything that would make
the export fail) before writing, and the export itself in a worker. Both call app.io.export, like the CLI.

Two states: previewing (heading "Preview (nothing written yet)", problems in red) and written (heading names what
was written, the counts are those written, no problems: the same NAME@VERSION now existing is not one). Changing
any option goes back to previewing."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QCheckBox, QComboBox, QDialog, QFileDialog, QFormLayout, QHBoxLayout, QLineEdit, QListWidget, QListWidgetItem,
    QPushButton, QSpinBox, QVBoxLayout, QWidget,
)

from app.gui.models import Column, RecordTableModel
from app.gui.plaintext import plain_label
from app.gui.views.base import make_table
from app.gui.window_context import config_ref
from app.gui.workers import ProgressPanel, Task, TaskProgress, when_done
from app.store import STATUSES, Project
from calibration.schemes.base import registry

if TYPE_CHECKING:
    from app.gui.window_context import PanelHost

COUNT_COLUMNS = (Column("what", "What"), Column("value", "Count", align_right=True))
PREVIEW_HEADING = "Preview (nothing written yet)"
LABEL_ROWS = "labels (every annotator's)"


def _scheme_names(keys: Any) -> list[str]:
    """Scheme names among `keys`, registered ones in the registry's order, then others (a plug-in's)."""
    present = [k for k in keys if k != "total"]
    known = [n for n in registry().names() if n in present]
    return known + sorted(set(present) - set(known))


def _title(name: str) -> str:
    return registry().get(name).title if name in registry() else name


def count_rows(counts: dict[str, Any]) -> list[dict[str, Any]]:
    """The preview's counts as (what, value) rows, grouped like the CLI's tables: the split's samples per scheme,
    per split, each scheme's units, labeled units and labels, then what each scheme's view adds
    (`DetailView.export_count_rows`)."""
    from app.gui.views import view_classes

    rows: list[dict[str, Any]] = []

    def head(title: str) -> None:
        rows.append({"what": title, "value": "", "_bg": "#eceff1"})

    samples = counts.get("samples", {})
    names = _scheme_names(samples)
    head("Split")
    rows += [{"what": f"{n} samples", "value": samples.get(n, 0)} for n in names]
    if len(names) > 1 and "total" in samples:
        rows.append({"what": "samples in all", "value": samples["total"]})
    rows.append({"what": LABEL_ROWS, "value": counts.get("labels", 0)})
    rows += [{"what": f"units skipped: {k}", "value": v, "_fg": "#757575"} for k, v in counts.get("skipped_units", {}).items()]
    by_split = counts.get("by_split") or {}
    if by_split:
        in_split = _scheme_names({k for v in by_split.values() for k in v})
        head(f"Per split ({' / '.join(_title(n) for n in in_split)})")
        rows += [{"what": k, "value": " / ".join(str(v.get(n, 0)) for n in in_split)} for k, v in by_split.items()]
    schemes = counts.get("schemes") or {}
    for n in _scheme_names(schemes):  # the same figures for every scheme (app/io/export_manifest.counts)
        v = schemes[n]
        head(f"{_title(n)}")
        rows += [{"what": f"{n} units", "value": v.get("units", 0)},
                 {"what": f"{n} labeled units", "value": v.get("labeled", 0)},
                 {"what": f"{n} labels", "value": v.get("labels", 0)}]
    for view in view_classes():
        rows += view.export_count_rows(counts)
    return rows


class ExportDialog(QDialog):
    def __init__(self, host: "PanelHost") -> None:
        super().__init__(host.parent_widget)
        self.host = host
        self.ctx = host.ctx
        self.setWindowTitle("Export a curated split")
        self.preview: dict[str, Any] | None = None
        self.preview_task: Task | None = None
        self.export_task: Task | None = None
        self._dirty = False
        self.result: Any = None
        self._build()
        self.resize(980, 640)
        self.schedule_preview()

    @classmethod
    def open_for(cls, host: "PanelHost") -> "ExportDialog":
        dlg = cls(host)
        dlg.show()
        return dlg

    @property
    def project(self) -> Project:
        assert self.ctx.project is not None
        return self.ctx.project

    def _build(self) -> None:
        from app.io.export import next_version
        from app.io.export_write import FORMATS

        p = self.project
        form = QFormLayout()
        self.name = QLineEdit("curated_split")
        self.version = QLineEdit(next_version(p, "curated_split"))
        self.version.setToolTip("X.Y.Z; a recorded version never changes content (bump it)")
        self.out = QLineEdit(str(Path(p.path).parent / "splits"))
        browse = QPushButton("Browse…")
        browse.setAutoDefault(False)
        browse.clicked.connect(self._browse)
        out_row = QHBoxLayout()
        out_row.addWidget(self.out, 1)
        out_row.addWidget(browse)
        self.fmt = QComboBox()
        self.fmt.addItems(list(FORMATS))
        self.status_boxes = {s: QCheckBox(s) for s in STATUSES}
        status_row = QHBoxLayout()
        for s, box in self.status_boxes.items():
            box.setChecked(s in ("accepted", "corrected"))
            status_row.addWidget(box)
        self.units = QListWidget()
        self.units.setMaximumHeight(110)
        for u in dict.fromkeys(u for _scheme, u in p.units.unit_names() if u):
            item = QListWidgetItem(u)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Unchecked)
            self.units.addItem(item)
        self.units.setToolTip("Only these units: checkers, traits, ... (none checked = all)")
        self.stratify = QComboBox()
        self.stratify.addItem("no stratification", None)
        self.stratify.addItem("by category", "category")
        self.stratify.addItem("by split", "split")
        self.sample = QSpinBox()
        self.sample.setRange(0, 10_000_000)
        self.sample.setSpecialValueText("all")
        self.seed = QSpinBox()
        self.seed.setRange(0, 2**31 - 1)
        sample_row = QHBoxLayout()
        sample_row.addWidget(self.sample, 1)
        sample_row.addWidget(plain_label("seed"))
        sample_row.addWidget(self.seed)
        # the parameters the split is documented with, of the scheme the app's config box names (as `--config`)
        from app.io.export_select import export_adapters
        from app.services.configs import config_scheme

        named = config_scheme().name
        params_name = next((a.params_name for a in export_adapters(p) if a.scheme == named and a.params_name), None)
        self.config = QComboBox()
        self.config.addItems(p.scheme_data.param_refs(named))
        self.config.setCurrentText(config_ref(self.ctx))
        self.force = QCheckBox("replace an existing NAME@VERSION directory")
        for label, w in (("Name", self.name), ("Version", self.version)):
            form.addRow(label, w)
        form.addRow("Output directory", out_row)
        form.addRow("Format", self.fmt)
        form.addRow("Statuses", status_row)
        form.addRow("Units", self.units)
        form.addRow("Stratify", self.stratify)
        form.addRow("Sample N", sample_row)
        form.addRow((params_name or "config").capitalize(), self.config)
        form.addRow("", self.force)
        left = QWidget()
        left.setLayout(form)
        self.form_widget = left  # disabled while exporting: the result describes the options it started with

        self.count_model = RecordTableModel(COUNT_COLUMNS, self)
        self.count_table = make_table(self.count_model, 0)
        self.count_table.setObjectName("export_counts")
        self.problems = plain_label(wrap=True)
        self.problems.setStyleSheet("color:#b71c1c;")
        right = QWidget()
        rl = QVBoxLayout(right)
        rl.setContentsMargins(0, 0, 0, 0)
        self.heading = plain_label(PREVIEW_HEADING)
        self.heading.setObjectName("export_heading")
        rl.addWidget(self.heading)
        rl.addWidget(self.count_table, 1)
        rl.addWidget(self.problems)

        top = QHBoxLayout()
        top.addWidget(left, 3)
        top.addWidget(right, 2)
        self.progress = ProgressPanel()
        self.export_button = QPushButton("Export")
        self.export_button.setAutoDefault(False)
        self.export_button.clicked.connect(self.export)
        close = QPushButton("Close")
        close.setAutoDefault(False)
        close.clicked.connect(self.close)
        self.status = plain_label(wrap=True, selectable=True)
        bottom = QHBoxLayout()
        bottom.addWidget(self.status, 1)
        bottom.addWidget(self.progress)
        bottom.addWidget(self.export_button)
        bottom.addWidget(close)
        lay = QVBoxLayout(self)
        lay.addLayout(top, 1)
        lay.addLayout(bottom)

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(300)
        self._timer.timeout.connect(self._run_preview)
        for e in (self.name, self.version, self.out):
            e.textChanged.connect(self.schedule_preview)
        for c in (self.fmt, self.stratify, self.config):
            c.currentIndexChanged.connect(self.schedule_preview)
        for b in (*self.status_boxes.values(), self.force):
            b.toggled.connect(self.schedule_preview)
        for sp in (self.sample, self.seed):
            sp.valueChanged.connect(self.schedule_preview)
        self.units.itemChanged.connect(self.schedule_preview)

    def _browse(self) -> None:
        d = QFileDialog.getExistingDirectory(self, "Output directory", self.out.text())
        if d:
            self.out.setText(d)

    def options(self) -> dict[str, Any]:
        """The filters exactly as `concord export` passes them to app.io.export."""
        statuses = [s for s, b in self.status_boxes.items() if b.isChecked()]
        checked = [self.units.item(i).text() for i in range(self.units.count())
                   if self.units.item(i).checkState() == Qt.CheckState.Checked]
        return {"statuses": statuses or None, "checkers": checked or None, "stratify": self.stratify.currentData(),
                "sample": self.sample.value() or None, "seed": self.seed.value(), "config_ref": self.config.currentText()}

    # -- preview ---------------------------------------------------------------------------------------------------
    def schedule_preview(self, *_args: Any) -> None:
        """An option changed: back to previewing (a "Wrote …" from before no longer describes these options)."""
        if self.export_task is not None:
            return  # the options are read when the export starts; the result describes those
        if self.result is not None:
            self.result = None
            self.status.setText("")
            self.heading.setText(PREVIEW_HEADING)
        self.export_button.setEnabled(False)
        self._timer.start()

    def _run_preview(self) -> None:
        if self.ctx.project is None:
            return  # the window closed its project meanwhile (the dialog outlives it until closed)
        if self.preview_task is not None:
            self._dirty = True
            return
        path, opts = str(self.project.path), self.options()
        target = {"name": self.name.text().strip(), "version": self.version.text().strip(),
                  "out_dir": self.out.text().strip() or None, "force": self.force.isChecked()}

        def work(progress: TaskProgress) -> dict[str, Any]:
            from app.io.export import preview_split

            with Project.open(path) as wp:
                return preview_split(wp, progress=progress, **opts, **target)

        task = Task(work, "preview")
        task.signals.finished.connect(self._show_preview)
        task.signals.failed.connect(lambda m: self._show_problems([m.splitlines()[0].removeprefix("preview failed: ")]))
        when_done(task, self._preview_ended)
        self.preview_task = task
        self.ctx.runner.start(task)

    def _preview_ended(self) -> None:
        self.preview_task = None
        if self._dirty:
            self._dirty = False
            self._run_preview()

    def _show_preview(self, pv: dict[str, Any]) -> None:
        if self.result is not None or self.export_task is not None:
            return  # a preview started before the export finished: it would call the written split a problem
        self.preview = pv
        self.count_model.set_records(count_rows(pv.get("counts", {})))
        self._show_problems(pv.get("problems", []))

    def _show_problems(self, problems: list[str]) -> None:
        if self.result is not None:
            return
        self.problems.setText("\n".join(problems))
        self.export_button.setEnabled(not problems and self.export_task is None and self.preview is not None)

    # -- export ----------------------------------------------------------------------------------------------------
    def export(self) -> None:
        if self.export_task is not None:
            return
        path, opts = str(self.project.path), self.options()
        name, version, out, fmt, force = (self.name.text().strip(), self.version.text().strip(), self.out.text().strip(),
                                          self.fmt.currentText(), self.force.isChecked())

        def work(progress: TaskProgress) -> Any:
            from app.io.export import export_split

            with Project.open(path) as wp:
                return export_split(wp, name, version, out, fmt=fmt, force=force, progress=progress, **opts)

        task = Task(work, "export")
        task.signals.finished.connect(lambda r, ref=f"{name}@{version}": self._exported(r, ref))
        task.signals.failed.connect(lambda m: self.status.setText(m.splitlines()[0]))
        when_done(task, self._export_ended)
        self.export_task = task
        self.export_button.setEnabled(False)
        self.form_widget.setEnabled(False)
        self.progress.track(task, "Exporting…")
        self.ctx.runner.start(task)

    def _export_ended(self) -> None:
        self.export_task = None
        self.form_widget.setEnabled(True)
        if self.result is None:  # failed or cancelled: the preview decides again whether Export is possible
            self.schedule_preview()

    def _exported(self, result: Any, ref: str) -> None:
        self.result = result
        self._timer.stop()
        again = getattr(result, "already_recorded", False)
        self.problems.setText("")
        self.export_button.setEnabled(False)  # change an option (e.g. bump the version) to export again
        if getattr(result, "unchanged", False):  # the directory already held this exact export (as the CLI says)
            self.heading.setText(f"Nothing written: identical to {ref}")
            self.status.setText(f"nothing written: identical to {ref} in {result.path}")
            return
        self.heading.setText(f"Written: {ref} (already recorded with the same content)" if again else f"Written: {ref}")
        self.status.setText(f"Wrote {result.path}{' (already recorded with the same content)' if again else ''}: "
                            f"{len(result.files)} data file(s), manifest.json, README.md")
