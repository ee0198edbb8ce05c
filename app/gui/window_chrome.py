"""The main window's menus, toolbar and status bar: menus built from the action registry (the common actions and
every scheme view's own), the toolbar with the config box, the status bar with progress, and errors shown in the
message bar (never silent: every worker failure too).

Built on the host window (its menu bar, toolbar and status bar); each action calls `controller.<handler>()`, the
slots MainWindow maps to its parts. The chosen config is announced by `config_chosen`; which decisions are on
follows the detail pane (`enable_decisions`)."""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QMainWindow, QToolBar

from app.gui.actions import build_actions
from app.gui.config_box import ConfigBox, window_config_choice
from app.gui.plaintext import ElidedLabel
from app.gui.statusbar import SessionProgress
from app.gui.views import DetailView, all_actions, menus
from app.gui.workers import Task
from app.gui.window_context import WindowContext
from app.gui.window_parts import DECIDE, Part
from app.store import UnitFilter


class ChromePart(Part):
    config_chosen = Signal(str)  # a config ref picked in the toolbar's box

    def __init__(self, ctx: WindowContext, host: QMainWindow, parent: QObject | None = None) -> None:
        super().__init__(ctx, parent)
        self.host = host
        self._decisions_state: tuple[frozenset[str], bool] | None = None  # what enable_decisions last set
        ctx.status.connect(self.status_message_shown)
        ctx.runner.failed.connect(self._task_failed)

    def build_menus(self, controller: object) -> None:
        """Menus and shortcuts from the action registry, and the toolbar (with the config box)."""
        host = self.host
        self.all_actions = all_actions()  # the common actions and every scheme view's own
        self.actions_by_id = build_actions(host, controller, self.all_actions)
        bar = host.menuBar()
        menu_of = {m: bar.addMenu(m if m != "Decide" else "&Decide") for m in menus()}
        for a in self.all_actions:
            menu_of[a.menu].addAction(self.actions_by_id[a.id])
            host.addAction(self.actions_by_id[a.id])  # shortcuts work even when the menu bar is hidden
        self.actions_by_id["auto_advance"].setChecked(self.ctx.settings.value("auto_advance", True, type=bool))

        tb = QToolBar("Main")
        tb.setObjectName("main_toolbar")
        tb.setMovable(False)
        for aid in ("prev", "next", "next_unlabeled", "accept", "skip", "flag", "undo", "redo"):
            tb.addAction(self.actions_by_id[aid])
        tb.addSeparator()
        self.configs = ConfigBox(self.ctx.settings, window_config_choice(), host)
        self.configs.add_to(tb)
        self.config_box = self.configs.box
        self.config_box.activated.connect(lambda _i: self.config_chosen.emit(self.config_box.currentData()))
        self.ctx.config = lambda: self.configs.current  # the views read the chosen config through the context
        host.addToolBar(tb)

    def build_status_bar(self, unit_filter: Callable[[], UnitFilter]) -> None:
        """`unit_filter`: the filter the review list shows (the progress counts follow it)."""
        self.progress = self.ctx.progress
        self.session_progress = SessionProgress(self.ctx.runner, lambda: self.ctx.session, self,
                                                unit_filter=unit_filter)
        # transient messages in an eliding label of their own: QStatusBar.showMessage would clip them against the
        # permanent widgets ("…Tools ▸ Compembedding 22 new text(s)")
        self.status_line = ElidedLabel()
        self.status_line.setObjectName("status_line")
        self._status_timer = QTimer(self)
        self._status_timer.setSingleShot(True)
        self._status_timer.timeout.connect(lambda: self.status_line.setText(""))
        bar = self.host.statusBar()
        bar.addWidget(self.status_line, 1)
        bar.addPermanentWidget(self.progress)
        bar.addPermanentWidget(self.session_progress.label)

    def enable_decisions(self, view: DetailView | None) -> None:
        """The view's own actions and the decisions are on only while a view shows the unit it rendered. Asked on
        every unit shown: the 50 actions are set only when what is on changes (nothing else enables them)."""
        supported = view.actions if view is not None else frozenset()
        state = (supported, view is not None)
        if state == self._decisions_state:
            return
        self._decisions_state = state
        for a in self.all_actions:
            if a.handler == "view":
                self.actions_by_id[a.id].setEnabled(a.id in supported)
        for aid in DECIDE:
            self.actions_by_id[aid].setEnabled(view is not None)

    def status_message_shown(self, text: str, msecs: int = 5000) -> None:
        """A transient message at the left of the status bar (elided to the room left by the permanent widgets)."""
        self.status_line.setText(text)
        if msecs > 0:
            self._status_timer.start(msecs)

    # -- errors ---------------------------------------------------------------------------------------------------
    def _task_failed(self, task: Task, message: str) -> None:
        exc = task.error if task.error is not None else RuntimeError(message.splitlines()[0] if message else "failed")
        self.report_error(f"task:{task.name}", f"Background work failed ({task.name or 'task'})", exc)
