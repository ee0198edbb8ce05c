"""The review list's "Next" order (issue #16): a combo beside the filters choosing what `N` (next unlabeled)
follows -- the list order, or a queue from app.services.queue (disagreement, boundary, metric-vs-llm, annotators,
random, stratified) computed in a worker for the schemes the list shows."""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QWidget

from app.gui.workers import Task, TaskProgress
from app.store import Project
from calibration.queue import ORDERS

if TYPE_CHECKING:
    from app.gui.window_context import WindowContext

TIPS = {
    "list": "N: the next unlabeled unit further down the list",
    "disagreement": "N: where the best calibrated configs disagree most (then nearest the threshold)",
    "boundary": "N: decisions nearest the chosen config's thresholds",
    "metric-vs-llm": "N: where the machine label and the calibrated metric disagree",
    "annotators": "N: units whose annotators disagree and nobody adjudicated",
    "deferred": "N: the units the guaranteed-agreement band defers to a human (calibrate --guarantee), nearest "
                "the threshold first",
    "random": "N: a seeded random order (honest estimates)",
    "stratified": "N: balanced over checkers / traits / judges and schemes",
}


class QueueOrder(QObject):
    """Holds the chosen order and its computed queue; `next_key` gives N's target."""

    ready = Signal(str)  # the order whose queue was computed

    def __init__(self, ctx: "WindowContext", schemes: Callable[[], Any], parent: QObject | None = None,
                 seed: int = 0) -> None:
        """`schemes`: the schemes the review list shows (the queue covers them)."""
        super().__init__(parent)
        self.ctx = ctx
        self._schemes = schemes
        self.seed = seed
        self.keys: list[tuple[str, str]] = []
        self.notes: list[str] = []
        self.requeued: dict[tuple[str, str], str] = {}  # labeled units back after a guideline change -> why
        self.task: Task | None = None
        self.widget = QWidget()
        lay = QHBoxLayout(self.widget)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(QLabel("Next (N)"))
        self.combo = QComboBox()
        self.combo.setObjectName("queue_order")
        self.combo.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        for order in ORDERS:
            self.combo.addItem(order, order)
            self.combo.setItemData(self.combo.count() - 1, TIPS[order], Qt.ItemDataRole.ToolTipRole)
        self.combo.setToolTip("What N (next unlabeled) follows")
        lay.addWidget(self.combo, 1)
        self.combo.currentIndexChanged.connect(lambda _i: self.refresh())

    @property
    def order(self) -> str:
        return str(self.combo.currentData())

    def set_order(self, order: str) -> None:
        self.combo.setCurrentIndex(max(0, self.combo.findData(order)))

    def refresh(self) -> None:
        """Recompute the queue in a worker (the list order needs none)."""
        self.keys, self.notes, self.requeued = [], [], {}
        project = self.ctx.project
        if self.order == "list" or project is None:
            self.ready.emit(self.order)
            return
        path, order, seed = str(project.path), self.order, self.seed
        schemes = list(self._schemes())

        def work(_progress: TaskProgress) -> dict[str, Any]:
            from app.services.queue import build

            with Project.open(path) as wp:
                q = build(wp, order, schemes=[s for s in schemes if s in set(wp.units.unit_schemes())] or None, seed=seed)
            return {"order": order, "keys": q.keys(), "notes": q.notes,
                    "requeued": {(e.sample_id, e.unit): e.reason for e in q.entries if e.reason}}

        task = Task(work, "queue")
        task.signals.finished.connect(self._finished)
        self.task = task
        self.ctx.progress.track(task, f"Ordering the queue ({order})…")
        self.ctx.runner.start(task)

    def _finished(self, out: dict[str, Any]) -> None:
        if out["order"] != self.order:
            return
        self.keys, self.notes = list(out["keys"]), list(out["notes"])
        self.requeued = dict(out.get("requeued") or {})
        if self.notes:
            self.ctx.status_message("; ".join(self.notes), 8000)
        self.ready.emit(self.order)

    def next_key(self, current: tuple[str, str] | None) -> tuple[str, str] | None:
        """The first queued unit that is not the current one and still has no status (labeled since the queue was
        computed: skipped), or is back after a guideline change and not visited since (its reason goes to the
        status bar)."""
        project = self.ctx.project
        self.requeued.pop(current, None)  # seen: confirmed or changed under the current guideline, or passed over
        for key in self.keys:
            if key == current or project is None:
                continue
            if key in self.requeued:
                self.ctx.status_message(self.requeued[key], 8000)
                return key
            if project.decisions.current(key[0], key[1], "status") is None:
                return key
        return None
