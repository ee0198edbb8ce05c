"""The main window. It only composes: review list + filters on the left, the scheme's detail view on the right,
menus built from the action registry, a status bar with progress. Decisions go through the Session.

Never silent: every slot that touches the store is `guarded` (an exception becomes a message in the window's
message bar, naming what failed and what to do), and so is every worker failure (`TaskRunner.failed`). The detail
pane and the list stay in step: `_shown` is the unit the detail pane rendered successfully; if rendering the
selected unit fails, the pane says so and every decision is disabled until a unit is shown again.
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from PySide6.QtCore import QEvent, QItemSelectionModel, QModelIndex, QSettings, Qt, QTimer
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QAbstractItemView, QFileDialog, QHeaderView, QLabel, QMainWindow, QSplitter, QStackedWidget, QTableView,
    QToolBar, QVBoxLayout, QWidget,
)

from app.corrections import SetLabels, set_note, set_status
from app.errors import UsageError
from app.gui.actions import build_actions
from app.gui.banner import MessageBar
from app.gui.cheatsheet import CheatSheet
from app.gui.config_box import ConfigBox, window_config_choice
from app.gui.filters import FilterBar
from app.gui.main import quiet_model_loading
from app.gui.models import SUMMARY, UnitListModel
from app.gui.plaintext import ElidedLabel, ask_text, plain_label
from app.gui.safety import ProjectSafety
from app.gui.statusbar import SessionProgress
from app.gui.undo import Session
from app.gui.views import DetailView, ViewContext, all_actions, menus, view_class, view_classes
from app.gui.workers import ProgressPanel, Task, TaskProgress, TaskRunner
from app.store import Project, UnitFilter
from calibration.schemes.base import registry

SCAN_PAGES = 50  # "next unlabeled" fetches at most this many pages before giving up
DECIDE = ("accept", "skip", "flag", "note", "clear_status")
# widths of the review list's common columns; the unit (checker/trait) column stretches; a scheme's own columns
# get their header's width (at least SCHEME_WIDTH, or SUMMARY_WIDTH for the several-schemes summary)
LIST_WIDTHS = {"sample_id": 90, "scheme": 68, "unit": 0, "machine_f1": 44, "status": 76}
SCHEME_WIDTH, TEXT_WIDTH, SUMMARY_WIDTH, SUMMARY_MAX = 44, 76, 96, 280
UNIT_COLUMN, UNIT_WIDTH, UNIT_MIN = 2, 260, 140
DEFAULT_SIZE = (1500, 940)
F = TypeVar("F", bound=Callable[..., Any])


def guarded(what: str, key: str = "") -> Callable[[F], F]:
    """Wrap a window slot: an exception is shown in the message bar ("<what>: <error>" and what to do) instead of
    vanishing into the terminal (Qt only prints exceptions raised in slots)."""

    def deco(fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(self: "MainWindow", *args: Any, **kwargs: Any) -> Any:
            try:
                return fn(self, *args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - shown to the user
                self.report_error(key or fn.__name__, what, exc)
                return None

        return wrapper  # type: ignore[return-value]

    return deco


def settings_key(path: str | Path) -> str:
    """Per-file settings key: two copies of a project share a project_id but not a path."""
    return hashlib.sha1(str(Path(path).resolve()).encode()).hexdigest()[:16]


class MainWindow(QMainWindow):
    def __init__(self, project: Project | None, annotator: str, settings: QSettings | None = None,
                 owns_project: bool = True, record_time: bool = True) -> None:
        super().__init__()
        quiet_model_loading()  # before any worker starts the embedding helper process
        self.settings = settings or QSettings()
        self.annotator = annotator
        self._owns_project = owns_project
        self._record_time = record_time
        self.session: Session | None = None
        self.runner = TaskRunner(self)
        self.views: dict[str, DetailView] = {}
        self._shown: tuple[str, str] | None = None  # the unit the detail pane rendered (None: nothing or failed)
        self._shown_at = 0.0
        self.blind_as: str | None = None  # blind mode: whose labels the app shows (None: the resolved ones)
        self._queue_of: str | None = None  # blind mode with work assigned to this annotator: only their units
        self.setWindowTitle("Concord")
        self._build()
        self.set_project(project)

    # -- composition -----------------------------------------------------------------------------------------------
    def _build(self) -> None:
        self.model = UnitListModel(None, self)
        self.list = QTableView()
        self.list.setObjectName("unit_list")
        self.list.setModel(self.model)
        self.list.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.list.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)  # project order until a click
        self.list.setSortingEnabled(True)
        self.list.verticalHeader().setVisible(False)
        self.list.verticalHeader().setDefaultSectionSize(22)
        self.list.setAlternatingRowColors(True)
        self.list.setWordWrap(False)
        h = self.list.horizontalHeader()
        h.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        h.setStretchLastSection(False)
        self._summary_wanted = SUMMARY_WIDTH
        self.model.modelReset.connect(self._size_columns)  # the columns follow the schemes shown
        self.list.viewport().installEventFilter(self)
        self._size_columns()
        self._panes_fitted = False
        self.list.selectionModel().currentRowChanged.connect(self._row_changed)

        self.all_actions = all_actions()  # the common actions and every scheme view's own
        self.filters = FilterBar(extra=[(v.scheme, f) for v in view_classes() for f in v.filters])
        self.filters.changed.connect(self._filter_changed)
        left = QWidget()
        ll = QVBoxLayout(left)
        ll.setContentsMargins(4, 4, 0, 4)
        ll.addWidget(self.filters)
        from app.gui.queue_combo import QueueOrder

        self.queue = QueueOrder(self)  # issue #16: what N follows
        ll.addWidget(self.queue.widget)
        ll.addWidget(self.list, 1)
        self.count_label = QLabel()
        self.count_label.setTextFormat(Qt.TextFormat.PlainText)
        ll.addWidget(self.count_label)

        self.stack = QStackedWidget()
        self.placeholder = plain_label("Open a project (Ctrl+O), or pick a unit in the list.")
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.stack.addWidget(self.placeholder)
        self.failed_page = plain_label(wrap=True)  # the selected unit could not be shown: say so, never a stale unit
        self.failed_page.setObjectName("failed_page")
        self.failed_page.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.failed_page.setStyleSheet("color:#b71c1c;")
        self.stack.addWidget(self.failed_page)

        self.split = QSplitter(Qt.Orientation.Horizontal)
        self.split.addWidget(left)
        self.split.addWidget(self.stack)
        self.split.setStretchFactor(0, 0)
        self.split.setStretchFactor(1, 1)
        self.split.setSizes([600, 1000])
        self.messages = MessageBar()
        central = QWidget()
        cl = QVBoxLayout(central)
        cl.setContentsMargins(0, 0, 0, 0)
        cl.setSpacing(0)
        cl.addWidget(self.messages)
        cl.addWidget(self.split, 1)
        self.setCentralWidget(central)
        self.runner.failed.connect(self._task_failed)
        self.safety = ProjectSafety(self.runner, self.messages, lambda m: self.status_message(m, 6000), self)
        self.model.failed.connect(self._list_failed)

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

    def _view(self, scheme: str) -> DetailView | None:
        if scheme not in self.views:
            cls = view_class(scheme)  # the scheme's own view, else the generic one
            if self.session is None:
                return None
            view = cls(ViewContext(self.session, self.runner, self.progress, lambda: self.configs.current,
                                   lambda: self.blind_as))
            view.request_unit.connect(self.show_unit_by_key)
            view.message.connect(lambda m: self.status_message(m, 6000))
            self.views[scheme] = view
            self.stack.addWidget(view)
        return self.views[scheme]

    def _set_list_schemes(self) -> None:
        """The list's columns: the common ones and those of the schemes the scheme filter lets through."""
        names = self.filters.schemes
        schemes = [registry().get(n) for n in names if n in registry()]
        views = [view_class(n) for n in names]
        titles = {v.score_title for v in views}
        follow = [v for v in views if v.scores_follow_config]
        tip = ("The machine's headline figure for the unit"
               + (" (under the chosen config: Tools ▸ Compute machine scores)" if follow else ""))
        self.model.set_schemes(schemes, score_title=titles.pop() if len(titles) == 1 else "Score", score_tip=tip,
                               empty_unit={n: view_class(n).empty_unit for n in names})

    def _column_width(self, col: int) -> int:
        c = self.model.columns[col]
        if c.key in LIST_WIDTHS:
            return LIST_WIDTHS[c.key]
        if c.summary:
            return self._summary_wanted
        least = SCHEME_WIDTH if c.numeric else TEXT_WIDTH
        return max(least, self.list.fontMetrics().horizontalAdvance(c.header) + 16)

    def _size_columns(self) -> None:
        h = self.list.horizontalHeader()
        summary = self.model.column_of(SUMMARY)
        fm = self.list.fontMetrics()
        texts = [self.model.data(self.model.index(r, summary)) or "" for r in range(self.model.rowCount())] if summary >= 0 else []
        self._summary_wanted = max([SUMMARY_WIDTH, *(min(SUMMARY_MAX, fm.horizontalAdvance(t) + 16) for t in texts)])
        for col in range(self.model.columnCount()):
            if col != UNIT_COLUMN:
                h.setSectionResizeMode(col, QHeaderView.ResizeMode.Interactive)
                self.list.setColumnWidth(col, self._column_width(col))
        h.setSectionResizeMode(UNIT_COLUMN, QHeaderView.ResizeMode.Stretch)  # long checker ids take what is left
        self._fit_summary()

    def _fit_summary(self) -> None:
        """The several-schemes summary column takes what its texts need, as long as the unit column keeps
        UNIT_MIN pixels (it shrinks back to SUMMARY_WIDTH in a narrow list; its tooltip has the whole text)."""
        col = self.model.column_of(SUMMARY)
        if col < 0:
            return
        others = sum(self._column_width(c) for c in range(self.model.columnCount()) if c not in (col, UNIT_COLUMN))
        room = self.list.viewport().width() - others - UNIT_MIN
        self.list.setColumnWidth(col, max(SUMMARY_WIDTH, min(self._summary_wanted, room)))

    def eventFilter(self, obj: Any, event: Any) -> bool:  # noqa: N802 - Qt's name
        if obj is self.list.viewport() and event.type() == QEvent.Type.Resize:
            self._fit_summary()
        return super().eventFilter(obj, event)

    def list_width_needed(self) -> int:
        """Width of the left pane that shows every list column (the checker/trait one at UNIT_WIDTH)."""
        fixed = sum(self._column_width(c) for c in range(self.model.columnCount()) if c != UNIT_COLUMN)
        frame = 2 * self.list.frameWidth() + self.list.verticalScrollBar().sizeHint().width()
        return fixed + UNIT_WIDTH + frame + 8

    def fit_panes(self) -> None:
        """Give the list the width its columns need (at most half the window, at least 420 px)."""
        total = sum(self.split.sizes()) or self.split.width()
        left = min(self.list_width_needed(), max(int(total * 0.5), 420))
        self.split.setSizes([left, max(0, total - left)])
        self._panes_fitted = True

    def showEvent(self, event: Any) -> None:  # noqa: N802
        super().showEvent(event)
        if not self._panes_fitted:
            QTimer.singleShot(0, self.fit_panes)  # once the splitter has its real width

    def status_message(self, text: str, msecs: int = 5000) -> None:
        """A transient message at the left of the status bar (elided to the room left by the permanent widgets)."""
        self.status_line.setText(text)
        if msecs > 0:
            self._status_timer.start(msecs)

    @property
    def _config(self) -> Any:
        """The config chosen in the toolbar's box: opaque here, the views that declared the choice read it."""
        return self.configs.current

    @property
    def project(self) -> Project | None:
        return None if self.session is None else self.session.project

    @property
    def current_view(self) -> DetailView | None:
        w = self.stack.currentWidget()
        return w if isinstance(w, DetailView) else None

    # -- errors ----------------------------------------------------------------------------------------------------
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

    # -- project ---------------------------------------------------------------------------------------------------
    @guarded("Could not open the project", "project")
    def set_project(self, project: Project | None) -> None:
        self._leave_unit()
        for v in self.views.values():
            v.shutdown()
            self.stack.removeWidget(v)
            v.deleteLater()
        self.views = {}
        if self.session is not None and self._owns_project:
            self.session.flush_time()
            self.runner.wait_all(10000)
            self.session.project.close()
        self.session = None
        self.blind_as, self._queue_of = None, None
        if project is not None:
            # blind mode (issue #15): this annotator sees only their own labels and, if work was assigned to them,
            # only their queue; the list status is theirs
            if project.blind():
                self.blind_as = self.annotator
                self._queue_of = self.annotator if project.assignment_counts().get(self.annotator) else None
            self.session = Session(project, self.annotator, self, record_time=self._record_time)
            self.session.changed.connect(self._changed)
            self.session.changed.connect(lambda *_a: self.safety.committed())
            self.session.failed.connect(lambda m: self.messages.show_message(
                "write", m, "Nothing was recorded for it. Try again; if it keeps failing, close Concord and run "
                f"`concord check {project.path}`."))
            self.session.stack.canUndoChanged.connect(self.actions_by_id["undo"].setEnabled)
            self.session.stack.canRedoChanged.connect(self.actions_by_id["redo"].setEnabled)
            self.setWindowTitle(f"Concord — {project.path.name} — {self.annotator}"
                                + (" (blind: only your labels)" if self.blind_as else ""))
        self.actions_by_id["undo"].setEnabled(False)
        self.actions_by_id["redo"].setEnabled(False)
        self.messages.clear()
        self.safety.start(None if project is None else str(project.path))
        self._load_configs()
        self.filters.load(project)
        follow = {v.scheme for v in view_classes() if v.scores_follow_config}
        # the config only matters to schemes whose scores follow it
        self.configs.set_visible(project is None or bool(follow & set(self.filters.schemes)))
        self.filters.config_ref = self.configs.ref
        self.stack.setCurrentWidget(self.placeholder)
        self._update_action_state()
        self._set_list_schemes()
        self.model.set_project(project, self.unit_filter())
        self._update_count()
        self.session_progress.refresh()
        if self.model.rowCount():
            last = self._last_unit()
            self.select_row(max(0, self.model.row_of(*last)) if last else 0)
        self.list.setFocus(Qt.FocusReason.OtherFocusReason)
        self._hint_machine_scores()

    def _last_unit_key(self) -> str | None:
        p = self.project
        return None if p is None else f"files/{settings_key(p.path)}/last_unit"

    def _last_unit(self) -> tuple[str, str] | None:
        """The unit shown when this project file was last closed (restored if it is on the first page)."""
        key = self._last_unit_key()
        value = None if key is None else self.settings.value(key, None)
        if isinstance(value, (list, tuple)) and len(value) == 2:
            return str(value[0]), str(value[1])
        return None

    def _load_configs(self) -> None:
        self.configs.load(self.project)

    @guarded("Could not switch the match config", "config")
    def set_config(self, ref: str) -> None:
        p = self.project
        if p is None or not ref:
            return
        self.configs.choose(p, ref)
        self.filters.config_ref = self.configs.ref
        self._reload_list(keep=True)

    def open_project_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open Concord project", "", "Concord projects (*.concord);;All files (*)")
        if path:
            self.open_project(path)

    def open_project(self, path: str) -> None:
        try:
            project = Project.open(path)
        except Exception as exc:  # noqa: BLE001 - not a project, damaged, unreadable: say so in the window
            self.report_error("open", f"Could not open {path}", exc)
            return
        self.messages.dismiss("open")
        self.set_project(project)

    # -- list ------------------------------------------------------------------------------------------------------
    def _filter_changed(self, f: UnitFilter) -> None:
        self._load_list(self.unit_filter(f), None)
        if self.queue.order != "list":  # the queue covers the schemes the list shows
            self.queue.refresh()

    def unit_filter(self, f: UnitFilter | None = None) -> UnitFilter:
        """The filter bar's filter, scoped to this annotator in blind mode (their status, their queue)."""
        f = self.filters.current() if f is None else f
        if self.blind_as is None:
            return f
        return dataclasses.replace(f, annotator=self.blind_as, assigned_to=self._queue_of)

    def _reload_list(self, keep: bool) -> None:
        self._load_list(self.unit_filter(), self._shown if keep else None)

    def _load_list(self, f: UnitFilter, shown: tuple[str, str] | None) -> None:
        try:
            self._set_list_schemes()
            self.model.set_filter(f)  # on failure the model is left empty
        except Exception as exc:  # noqa: BLE001
            self._clear_detail()
            self._update_count()
            self.report_error("list", "Could not load the review list", exc,
                              action=("Retry", lambda: self._reload_list(keep=False)))
            return
        self.messages.dismiss("list")
        self._after_reload(shown)

    def _after_reload(self, shown: tuple[str, str] | None) -> None:
        self._update_count()
        if shown is not None and self.model.row_of(*shown) >= 0:
            self.select_row(self.model.row_of(*shown))
        elif self.model.rowCount():
            self.select_row(0)
        else:
            self._clear_detail()

    def _clear_detail(self) -> None:
        """Nothing selected: the placeholder, and no decision can act on a unit."""
        self._leave_unit()
        self.stack.setCurrentWidget(self.placeholder)
        self._update_action_state()

    def _update_count(self, matching: int | None = None) -> None:
        """Units matching the filters: the model's count at load time, then the store's after each commit."""
        n = self.model.total if matching is None else matching
        text = f"{n:,} unit(s) match the filters"
        if matching is not None and matching != self.model.total:
            text += f" (the list keeps {self.model.total:,} row(s) until the filters change)"
        self.count_label.setText(text)

    def select_row(self, row: int) -> None:
        idx = self.model.index(row, 0)
        if idx.isValid():
            self.list.selectionModel().setCurrentIndex(
                idx, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
            )
            self.list.scrollTo(idx)

    def current_row(self) -> int:
        return self.list.selectionModel().currentIndex().row()

    def _row_changed(self, cur: QModelIndex, _prev: QModelIndex) -> None:
        row = self.model.row(cur.row())
        if row is not None:
            self.show_unit(row)

    # -- showing units ---------------------------------------------------------------------------------------------
    def show_unit(self, row: dict[str, Any]) -> bool:
        """Render `row` in the detail pane; True on success. On failure the pane says which unit failed and every
        decision is disabled until a unit renders, so no key acts on a unit the user does not see."""
        key = (row["sample_id"], row["unit"])
        if key != self._shown:
            self._leave_unit()
        view = self._view(row["scheme"])
        if view is None:
            self._show_failed(row, UsageError(f"no view for scheme {row['scheme']!r}"))
            return False
        try:
            view.show_unit(row)
        except Exception as exc:  # noqa: BLE001 - the store failed under us: say so, never keep a stale pane
            self._show_failed(row, exc)
            return False
        self.stack.setCurrentWidget(view)
        self.messages.dismiss("show")
        if key != self._shown:
            self._shown, self._shown_at = key, time.monotonic()
        self._update_action_state()
        QTimer.singleShot(0, self._prefetch)
        return True

    def _show_failed(self, row: dict[str, Any], exc: BaseException) -> None:
        self._leave_unit()  # _shown = None: decisions are off until a unit renders
        for v in self.views.values():
            v.reset()
        unit = row.get("unit") or "(ground truth only)"
        self.failed_page.setText(f"Could not show sample {row['sample_id']} · {unit}.\n\nDecisions are off until a "
                                 "unit is shown: press J or K, click a unit in the list, or Retry.")
        self.stack.setCurrentWidget(self.failed_page)
        self._update_action_state()
        self.report_error("show", f"Could not show sample {row['sample_id']} · {unit}", exc,
                          action=("Retry", self.retry_show))

    def retry_show(self) -> None:
        row = self.model.row(self.current_row())
        if row is not None:
            self.show_unit(row)

    @guarded("Could not show the unit")
    def show_unit_by_key(self, sample_id: str, unit: str) -> None:
        i = self.model.row_of(sample_id, unit)
        if i >= 0:
            self.select_row(i)
            return
        if self.project is None:
            return
        for u in self.project.units_for_sample(sample_id):
            if u["unit"] == unit:
                self.list.selectionModel().clearSelection()
                self.show_unit({**u, "status": self.project.current(sample_id, unit, "status", self.blind_as) or "unlabeled"})
                return

    @guarded("Could not open the unit", "reveal")
    def reveal_unit(self, sample_id: str, unit: str, pair: tuple[int, int] | None = None) -> bool:
        """Show a unit asked for from elsewhere (the calibration panel's disagreements): clear the filters that
        would hide it, select it in the list, select `pair` in its detail view, and bring this window to the front."""
        p = self.project
        if p is None:
            return False
        info = {u["unit"]: u for u in p.units_for_sample(sample_id)}.get(unit)
        if info is None:
            self.status_message(f"{sample_id} · {unit}: not in this project", 6000)
            return False
        f = self.filters.current()
        status = p.current(sample_id, unit, "status", self.blind_as) or "unlabeled"
        hiding = [name for name, hides in (("scheme", bool(f.scheme) and f.scheme != info["scheme"]),
                                           ("status", bool(f.statuses) and status not in f.statuses),
                                           ("unit", bool(f.units) and unit not in f.units)) if hides]
        cleared = self.filters.clear(tuple(hiding)) if hiding else []
        row = self._find_row(sample_id, unit)
        if row < 0:  # the views' filters and search are decided by the store: clear them if still not listed
            cleared += self.filters.clear((*self.filters.extra, "search"))
            row = self._find_row(sample_id, unit)
        if row >= 0:
            self.select_row(row)
        else:
            self.show_unit_by_key(sample_id, unit)
        if cleared:
            self.status_message(f"Cleared the filter(s) that hid {sample_id}: {', '.join(cleared)}", 6000)
        view = self.shown_view()
        if pair is not None and view is not None and view.current() == (sample_id, unit) and hasattr(view, "select_pair"):
            view.select_pair(*pair)
        if self.isMinimized():
            self.showNormal()
        self.raise_()
        self.activateWindow()
        return view is not None and view.current() == (sample_id, unit)

    def _find_row(self, sample_id: str, unit: str) -> int:
        """The unit's row in the list, fetching further pages (at most SCAN_PAGES) if needed; -1 if not listed."""
        pages = 0
        while self.model.row_of(sample_id, unit) < 0 and self.model.canFetchMore() and pages < SCAN_PAGES:
            self.model.fetchMore()
            pages += 1
        return self.model.row_of(sample_id, unit)

    @guarded("Could not prefetch scores for the next units", "prefetch")
    def _prefetch(self) -> None:
        view, i = self.current_view, self.current_row()
        if view is None or i < 0 or self.session is None:
            return
        rows = [r for r in (self.model.row(j) for j in range(i + 1, i + 17)) if r is not None]
        view.prefetch(rows)

    def _leave_unit(self) -> None:
        """Record the time spent on the unit being left, and remember it to resume there next time."""
        key = self._last_unit_key()
        if self._shown is not None and self.session is not None and key is not None:
            self.session.log_time(self._shown[0], self._shown[1], time.monotonic() - self._shown_at)
            self.settings.setValue(key, list(self._shown))
        self._shown = None

    def shown_view(self) -> DetailView | None:
        """The detail view, if it shows the unit it rendered last (the only unit a decision may act on)."""
        view = self.current_view
        if view is None or self._shown is None or view.current() != self._shown:
            return None
        return view

    def _update_action_state(self) -> None:
        view = self.shown_view()
        supported = view.actions if view is not None else frozenset()
        for a in self.all_actions:
            if a.handler == "view":
                self.actions_by_id[a.id].setEnabled(a.id in supported)
        for aid in DECIDE:
            self.actions_by_id[aid].setEnabled(view is not None)

    # -- decisions -------------------------------------------------------------------------------------------------
    @guarded("Could not update the window after a decision (the decision itself was saved)", "changed")
    def _changed(self, sample_id: str, unit: str, replay: bool) -> None:
        p = self.project
        if p is None:
            return
        self.session_progress.schedule()  # the counts are read from the store after every commit
        if unit:
            self.model.set_status(sample_id, unit, p.current(sample_id, unit, "status", self.blind_as))
        view = self.current_view
        cur = None if view is None else view.current()
        if replay and cur is not None:  # undo/redo: show the unit the decision belongs to
            target = unit or (cur[1] if cur[0] == sample_id else self._any_unit(sample_id))
            if (sample_id, target) != cur:
                self.show_unit_by_key(sample_id, target)
                return
        if view is not None and cur is not None and cur[0] == sample_id and self.shown_view() is view:
            try:
                view.refresh()
            except Exception as exc:  # noqa: BLE001 - the pane would show stale decisions: treat as not shown
                assert view.row is not None
                self._show_failed(dict(view.row), exc)

    def _any_unit(self, sample_id: str) -> str:
        units = self.project.units_for_sample(sample_id) if self.project is not None else []
        return units[0]["unit"] if units else ""

    def _decide(self, cmd: SetLabels | None, advance: bool) -> None:
        if cmd is None or self.session is None:
            return
        if not self.session.do(cmd) and self.session.last_error is not None:
            return  # the write failed (the message bar says so): stay on the unit
        if advance and self.actions_by_id["auto_advance"].isChecked():
            self.go_next()

    def _current_key(self) -> tuple[str, str] | None:
        view = self.shown_view()
        if view is None:
            self.status_message("No unit is shown: nothing to decide on", 4000)
            return None
        return view.current()

    @guarded("Could not accept the unit", "decide")
    def accept(self) -> None:
        view = self.shown_view()
        if view is None:
            self.status_message("No unit is shown: nothing to accept", 4000)
            return
        self._decide(view.accept_command(), advance=True)

    @guarded("Could not set the unit's status", "decide")
    def _status(self, status: str | None, advance: bool) -> None:
        key = self._current_key()
        if key is not None:
            self._decide(set_status(key[0], key[1], status), advance)

    def skip(self) -> None:
        self._status("skipped", True)

    def flag(self) -> None:
        self._status("flagged", True)

    def clear_status(self) -> None:
        self._status(None, False)

    @guarded("Could not save the note", "decide")
    def edit_note(self) -> None:
        key = self._current_key()
        if key is None or self.project is None:
            return
        old = self.project.current(key[0], key[1], "note") or ""
        text, ok = ask_text(self, "Note", f"Note on {key[0]} / {key[1] or 'ground truth'}:", old, multiline=True)
        if ok and self.shown_view() is not None and self._current_key() == key:
            self._decide(set_note(key[0], key[1], text.strip()), advance=False)

    @guarded("Could not undo", "undo")
    def undo(self) -> None:
        if self.session is not None:
            self.session.stack.undo()

    @guarded("Could not redo", "undo")
    def redo(self) -> None:
        if self.session is not None:
            self.session.stack.redo()

    @guarded("The action failed", "decide")
    def view_action(self, action_id: str) -> None:
        view = self.shown_view()
        if view is None:
            self.status_message("No unit is shown: nothing to act on", 4000)
        elif not view.handle(action_id):
            self.status_message("Not available for this unit", 3000)

    def cancel_tasks(self) -> None:
        running = self.runner.running()
        for t in running:
            t.cancel()
        if running:
            self.status_message(f"Cancelling {len(running)} background task(s)…", 3000)

    def set_auto_advance(self, on: bool) -> None:
        self.settings.setValue("auto_advance", bool(on))

    # -- navigation ------------------------------------------------------------------------------------------------
    def _ensure_loaded(self, row: int) -> bool:
        while row >= self.model.rowCount() and self.model.canFetchMore():
            self.model.fetchMore()
        return row < self.model.rowCount()

    @guarded("Could not load the next units", "navigate")
    def go_next(self) -> None:
        i = self.current_row() + 1
        if self._ensure_loaded(i):
            self.select_row(i)
        else:
            self.status_message("End of the list", 3000)

    @guarded("Could not go back", "navigate")
    def go_prev(self) -> None:
        i = self.current_row()
        if i > 0:
            self.select_row(i - 1)

    @guarded("Could not look for the next unlabeled unit", "navigate")
    def go_next_unlabeled(self) -> None:
        if self.queue.order == "annotators":  # disagreements among annotators: adjudicate them (issue #15)
            from app.gui.adjudication import AdjudicationPanel

            AdjudicationPanel.open_for(self).next_disagreement()
            return
        if self.queue.order != "list":  # the chosen queue order (issue #16)
            key = self.queue.next_key(self._shown)
            if key is None:
                self.status_message(f"The {self.queue.order} queue has no unlabeled unit left "
                                    "(or is still being computed)", 5000)
            else:
                self.reveal_unit(*key)
            return
        i, pages = self.current_row() + 1, 0
        while True:
            while i < self.model.rowCount():
                r = self.model.row(i)
                if r is not None and r["status"] == "unlabeled":
                    self.select_row(i)
                    return
                i += 1
            if not self.model.canFetchMore() or pages >= SCAN_PAGES:
                break
            self.model.fetchMore()
            pages += 1
        self.status_message("No unlabeled unit further down the list (filter Status: unlabeled to see all)", 5000)

    def focus_list(self) -> None:
        self.list.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def focus_search(self) -> None:
        self.filters.search.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.filters.search.selectAll()

    # -- status ----------------------------------------------------------------------------------------------------
    # -- background work -------------------------------------------------------------------------------------------
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

    # -- panels (imported on first use: they pull in the calibration search and the exporter) -----------------------
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

    # -- lifecycle -------------------------------------------------------------------------------------------------
    def closeEvent(self, event: QCloseEvent) -> None:
        self._leave_unit()
        if self.session is not None:
            self.session.flush_time()
        for name in ("_calibration_panel", "_adjudication_panel", "_agreement_panel"):
            panel = getattr(self, name, None)
            if panel is not None:  # a top-level window of its own (see CalibrationPanel): close it with us
                panel.close()
        for v in self.views.values():
            v.shutdown()
        self.runner.cancel_all()
        self.runner.wait_all(15000)
        from app.gui.embedproc import shutdown

        shutdown()
        if self._record_time:  # a screenshot run (offscreen, fixed size) records nothing, its geometry included
            self.settings.setValue("geometry", self.saveGeometry())
        if self.session is not None and self._owns_project:
            self.session.project.close()
            self.session = None
        super().closeEvent(event)
