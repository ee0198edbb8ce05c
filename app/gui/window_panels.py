"""The main window's background work and panels: machine scores under the chosen config, and the calibration,
adjudication, agreement and export windows (imported on first use: they pull in the calibration search and the
exporter), and the cheat sheet. The panels are windows of their own over the main window; this part is their host
(window_context.PanelHost): they read the project, runner and settings through its context, reveal units and choose
a config through it, and it keeps the open ones (`opened`)."""
from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QWidget

from app.gui.cheatsheet import CheatSheet
from app.gui.config_box import ConfigBox
from app.gui.views import view_classes
from app.gui.window_context import DetailPane, ListPane, WindowContext
from app.gui.window_parts import Part, guarded
from app.gui.workers import Task


class PanelsPart(Part):
    def __init__(self, ctx: WindowContext, host: QWidget, units: ListPane, detail: DetailPane, configs: ConfigBox,
                 evaluate: QAction, choose_config: Callable[[str], None], parent: QObject | None = None) -> None:
        super().__init__(ctx, parent)
        self.parent_widget = host  # the window the panels open over
        self.units = units
        self.detail = detail
        self.configs = configs
        self.evaluate = evaluate
        self._choose_config = choose_config
        self.cheatsheet: CheatSheet | None = None
        self.opened: dict[str, Any] = {}

    # -- what the panels ask (window_context.PanelHost) -----------------------------------------------------------
    def reveal_unit(self, sample_id: str, unit: str, pair: tuple[int, int] | None = None) -> bool:
        return self.detail.reveal_unit(sample_id, unit, pair)

    def choose_config(self, ref: str) -> None:
        self._choose_config(ref)

    def close_panels(self) -> None:
        """The panels are top-level windows of their own (see CalibrationPanel): closed with the main window."""
        for panel in self.opened.values():
            panel.close()

    def compute_machine_scores(self) -> None:
        """Evaluate every unit under the chosen config in a worker (each view whose scores follow the config provides
        the worker, `score_task`); the list's machine-score column follows."""
        p = self.project
        if p is None:
            return
        cfg = self.ctx.config()
        self.ctx.messages.dismiss("hint_scores")
        present = set(self.units.filters.schemes) | set(p.units.unit_schemes())
        for view in view_classes():
            if not view.scores_follow_config or view.scheme not in present:
                continue
            task = Task(partial(view.score_task, str(p.path), cfg), "machine scores")  # type: ignore[attr-defined]
            task.signals.finished.connect(lambda ref: (self.units.reload_list(keep=True),
                                                       self.status_message(f"Machine scores stored for {ref}", 5000)))
            self.ctx.progress.track(task, f"Machine scores under {cfg.ref}…")
            self.ctx.runner.start(task)

    def hint_machine_scores(self) -> None:
        """An info row (not a transient status message that the progress widgets would cut)."""
        model = self.units.model
        rows = [model.row(i) for i in range(min(model.rowCount(), 50))]
        follow = {v.scheme for v in view_classes() if v.scores_follow_config}
        scored = [r for r in rows if r is not None and r["scheme"] in follow]
        if scored and all(r["machine_f1"] is None for r in scored):
            keys = self.evaluate.shortcut().toString()
            self.ctx.messages.show_message(
                "hint_scores", f"No machine scores for {self.configs.ref} yet: the list's Machine F1 column is empty.",
                f"Tools ▸ Compute machine scores ({keys}) fills it in the background.", level="info",
                action=("Compute now", self.compute_machine_scores))
        else:
            self.ctx.messages.dismiss("hint_scores")

    # -- panels -------------------------------------------------------------------------------------------------
    @guarded("Could not open the calibration panel", "panel")
    def open_calibration(self) -> None:
        from app.gui.calibration_panel import CalibrationPanel

        if self.session is not None:
            CalibrationPanel.open_for(self)

    @guarded("Could not open the adjudication view", "panel")
    def open_adjudication(self) -> None:
        """Every annotator's label of the shown unit side by side (issue #15)."""
        from app.gui.adjudication import AdjudicationPanel

        if self.session is None:
            return
        key = self.detail.shown
        panel = AdjudicationPanel.open_for(self, key)
        if key is None:
            panel.next_disagreement()

    def next_disagreement(self) -> None:
        """The next unit whose annotators disagree, in the adjudication panel (N with the 'annotators' order)."""
        from app.gui.adjudication import AdjudicationPanel

        AdjudicationPanel.open_for(self).next_disagreement()

    @guarded("Could not open the agreement panel", "panel")
    def open_agreement(self) -> None:
        from app.gui.agreement_panel import AgreementPanel

        if self.session is not None:
            AgreementPanel.open_for(self)

    @guarded("Could not open the export dialog", "panel")
    def open_export_dialog(self) -> None:
        from app.gui.export_dialog import ExportDialog

        if self.session is not None:
            ExportDialog.open_for(self)

    def show_cheatsheet(self) -> None:
        if self.cheatsheet is None:
            self.cheatsheet = CheatSheet(self.parent_widget)
        self.cheatsheet.show()
        self.cheatsheet.raise_()
