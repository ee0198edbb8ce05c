"""The main window's menus, toolbar and status bar: menus built from the action registry (the common actions and
every scheme view's own), the toolbar with the config box, the status bar with progress, and errors shown in the
message bar (never silent: every worker failure too)."""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QToolBar

from app.gui.actions import build_actions
from app.gui.config_box import ConfigBox, window_config_choice
from app.gui.plaintext import ElidedLabel
from app.gui.statusbar import SessionProgress
from app.gui.views import all_actions, menus
from app.gui.workers import ProgressPanel, Task
from app.gui.window_parts import WindowPart


class ChromePart(WindowPart):
    def _build_menus(self) -> None:
        """Menus and shortcuts from the action registry, and the toolbar (with the config box)."""
        self.all_actions = all_actions()  # the common actions and every scheme view's own
        self.actions_by_id = build_actions(self, self, self.all_actions)
        bar = self.menuBar()
        menu_of = {m: bar.addMenu(m if m != "Decide" else "&Decide") for m in menus()}
        for a in self.all_actions:
            menu_of[a.menu].addAction(self.actions_by_id[a.id])
            self.addAction(self.actions_by_id[a.id])  # shortcuts work even when the menu bar is hidden
        self.actions_by_id["auto_advance"].setChecked(self.settings.value("auto_advance", True, type=bool))

        tb = QToolBar("Main")
        tb.setObjectName("main_toolbar")
        tb.setMovable(False)
        for aid in ("prev", "next", "next_unlabeled", "accept", "skip", "flag", "undo", "redo"):
            tb.addAction(self.actions_by_id[aid])
        tb.addSeparator()
        self.configs = ConfigBox(self.settings, window_config_choice(), self)
        self.configs.add_to(tb)
        self.config_box = self.configs.box
        self.config_box.activated.connect(lambda _i: self.set_config(self.config_box.currentData()))
        self.addToolBar(tb)

    def _build_status_bar(self) -> None:
        self.progress = ProgressPanel()
        self.session_progress = SessionProgress(self.runner, lambda: self.session, self,
                                                unit_filter=lambda: self.model.unit_filter)
        self.session_progress.counted.connect(
            lambda n, f: self._update_count(n) if f == self.model.unit_filter else None)
        # transient messages in an eliding label of their own: QStatusBar.showMessage would clip them against the
        # permanent widgets ("…Tools ▸ Compembedding 22 new text(s)")
        self.status_line = ElidedLabel()
        self.status_line.setObjectName("status_line")
        self._status_timer = QTimer(self)
        self._status_timer.setSingleShot(True)
        self._status_timer.timeout.connect(lambda: self.status_line.setText(""))
        self.statusBar().addWidget(self.status_line, 1)
        self.statusBar().addPermanentWidget(self.progress)
        self.statusBar().addPermanentWidget(self.session_progress.label)

    def status_message(self, text: str, msecs: int = 5000) -> None:
        """A transient message at the left of the status bar (elided to the room left by the permanent widgets)."""
        self.status_line.setText(text)
        if msecs > 0:
            self._status_timer.start(msecs)

    # -- errors ---------------------------------------------------------------------------------------------------
    def report_error(self, key: str, what: str, exc: BaseException,
                     action: tuple[str, Callable[[], object]] | None = None) -> None:
        """Show `exc` in the message bar: what failed, the error, and what to do (details in the tooltip)."""
        path = str(self.project.path) if self.project is not None else "PROJECT"
        self.messages.report(key, what, exc, project=path, action=action)

    def _list_failed(self, what: str, exc: BaseException) -> None:
        self.report_error("list", what, exc, action=("Retry", lambda: self._reload_list(keep=True)))
        if self._shown is None or self.model.row_of(*self._shown) < 0:
            self._clear_detail()  # the list lost the unit: the pane must not keep showing it

    def _task_failed(self, task: Task, message: str) -> None:
        exc = task.error if task.error is not None else RuntimeError(message.splitlines()[0] if message else "failed")
        self.report_error(f"task:{task.name}", f"Background work failed ({task.name or 'task'})", exc)
