"""The main window's background work and panels: machine scores under the chosen config, and the calibration,
adjudication, agreement and export windows (imported on first use: they pull in the calibration search and the
exporter), and the cheat sheet."""
from __future__ import annotations

from functools import partial

from app.gui.cheatsheet import CheatSheet
from app.gui.views import view_classes
from app.gui.window_parts import WindowPart, guarded
from app.gui.workers import Task


class PanelsPart(WindowPart):
    def compute_machine_scores(self) -> None:
        """Evaluate every unit under the chosen config in a worker (each view whose scores follow the config provides
        the worker, `score_task`); the list's machine-score column follows."""
        p = self.project
        if p is None:
            return
        cfg = self._config
        self.messages.dismiss("hint_scores")
        present = set(self.filters.schemes) | set(p.unit_schemes())
        for view in view_classes():
            if not view.scores_follow_config or view.scheme not in present:
                continue
            task = Task(partial(view.score_task, str(p.path), cfg), "machine scores")  # type: ignore[attr-defined]
            task.signals.finished.connect(lambda ref: (self._reload_list(keep=True),
                                                       self.status_message(f"Machine scores stored for {ref}", 5000)))
            self.progress.track(task, f"Machine scores under {cfg.ref}…")
            self.runner.start(task)

    def _hint_machine_scores(self) -> None:
        """An info row (not a transient status message that the progress widgets would cut)."""
        rows = [self.model.row(i) for i in range(min(self.model.rowCount(), 50))]
        follow = {v.scheme for v in view_classes() if v.scores_follow_config}
        scored = [r for r in rows if r is not None and r["scheme"] in follow]
        if scored and all(r["machine_f1"] is None for r in scored):
            keys = self.actions_by_id["evaluate"].shortcut().toString()
            self.messages.show_message(
                "hint_scores", f"No machine scores for {self.configs.ref} yet: the list's Machine F1 column is empty.",
                f"Tools ▸ Compute machine scores ({keys}) fills it in the background.", level="info",
                action=("Compute now", self.compute_machine_scores))
        else:
            self.messages.dismiss("hint_scores")

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
        key = self._shown
        panel = AdjudicationPanel.open_for(self, key)
        if key is None:
            panel.next_disagreement()

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
        if getattr(self, "cheatsheet", None) is None:
            self.cheatsheet = CheatSheet(self)
        self.cheatsheet.show()
        self.cheatsheet.raise_()
