"""The main window's review list: the lazy unit table with its filters, queue order and count, its columns (they
follow the schemes the scheme filter lets through) and their widths, loading it under the filters, and selecting
rows (selecting one emits `row_selected`: MainWindow hands it to the detail pane, window_units.py)."""
from __future__ import annotations

import dataclasses
from collections.abc import Callable

from PySide6.QtCore import QItemSelectionModel, QModelIndex, QObject, Qt, Signal
from PySide6.QtWidgets import QAbstractItemView, QLabel, QSplitter, QTableView, QVBoxLayout, QWidget

from app.gui.filters import FilterBar
from app.gui.list_columns import LIST_SHARE, UNIT_COLUMN, ListColumnSizer  # noqa: F401 - UNIT_COLUMN: tests
from app.gui.models import UnitListModel
from app.gui.record_cells import CellDelegate
from app.gui.views import view_class, view_classes
from app.gui.window_context import WindowContext
from app.gui.window_parts import SCAN_PAGES, Part
from app.store import UnitFilter
from calibration.schemes.base import registry


class UnitListPart(Part):
    """The review list. It asks the detail pane only which unit it shows (`shown`), and the toolbar only to show or
    hide the config box (`show_config_box`); it tells the window by signals."""

    row_selected = Signal(object)  # a unit row (dict) was selected: show it
    cleared = Signal()  # the list shows no unit it could show (empty, failed, lost the shown one): clear the pane

    def __init__(self, ctx: WindowContext, shown: Callable[[], tuple[str, str] | None],
                 show_config_box: Callable[[bool], None], parent: QObject | None = None) -> None:
        super().__init__(ctx, parent)
        self._shown = shown
        self._show_config_box = show_config_box

    def build(self) -> QWidget:
        """The list with the filter bar and queue order above it and the count below: the window's left pane."""
        self.model = UnitListModel(None, self)
        self.list = QTableView()
        self.list.setObjectName("unit_list")
        self.list.setModel(self.model)
        self.list.setItemDelegate(CellDelegate(self.list))  # one Python call per cell, not seven (record_cells.py)
        self.list.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.list.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)  # project order until a click
        self.list.setSortingEnabled(True)
        self.list.verticalHeader().setVisible(False)
        self.list.verticalHeader().setDefaultSectionSize(22)
        self.list.setAlternatingRowColors(True)
        self.list.setWordWrap(False)
        self.list_columns = ListColumnSizer(self.list, self.ctx.settings)  # widths follow the columns, rows and list
        self.panes_fitted = False
        self.list.selectionModel().currentRowChanged.connect(self._row_changed)
        self.model.failed.connect(self._list_failed)

        self.filters = FilterBar(extra=[(v.scheme, f) for v in view_classes() for f in v.filters])
        self.filters.changed.connect(self._filter_changed)
        left = QWidget()
        ll = QVBoxLayout(left)
        ll.setContentsMargins(4, 4, 0, 4)
        ll.addWidget(self.filters)
        from app.gui.queue_combo import QueueOrder

        self.queue = QueueOrder(self.ctx, lambda: self.filters.schemes, self)  # issue #16: what N follows
        ll.addWidget(self.queue.widget)
        ll.addWidget(self.list, 1)
        self.count_label = QLabel()
        self.count_label.setTextFormat(Qt.TextFormat.PlainText)
        ll.addWidget(self.count_label)
        return left

    def set_list_schemes(self) -> None:
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
        # the config box and its "no machine scores" hint only where the shown schemes' scores follow a config
        self._show_config_box(self.project is None or bool(follow))
        if not follow:
            self.ctx.messages.dismiss("hint_scores")

    def list_width_needed(self) -> int:
        """Width of the left pane that shows every list column whole (app/gui/list_columns.py)."""
        return self.list_columns.needed()

    def fit_panes(self, split: QSplitter) -> None:
        """Give the list the width its columns need (at most LIST_SHARE of the window, at least 420 px)."""
        total = sum(split.sizes()) or split.width()
        left = min(self.list_width_needed(), max(int(total * LIST_SHARE), 420))
        split.setSizes([left, max(0, total - left)])
        self.panes_fitted = True

    # -- loading ------------------------------------------------------------------------------------------------
    def _filter_changed(self, f: UnitFilter) -> None:
        self._load_list(self.unit_filter(f), None)
        if self.queue.order != "list":  # the queue covers the schemes the list shows
            self.queue.refresh()

    def unit_filter(self, f: UnitFilter | None = None) -> UnitFilter:
        """The filter bar's filter, scoped to this annotator in blind mode (their status, their queue)."""
        f = self.filters.current() if f is None else f
        if self.ctx.blind_as is None:
            return f
        return dataclasses.replace(f, annotator=self.ctx.blind_as, assigned_to=self.ctx.queue_of)

    def reload_list(self, keep: bool) -> None:
        self._load_list(self.unit_filter(), self._shown() if keep else None)

    def _load_list(self, f: UnitFilter, shown: tuple[str, str] | None) -> None:
        try:
            self.set_list_schemes()
            self.model.set_filter(f)  # on failure the model is left empty
        except Exception as exc:  # noqa: BLE001
            self.cleared.emit()
            self.update_count()
            self.report_error("list", "Could not load the review list", exc,
                              action=("Retry", lambda: self.reload_list(keep=False)))
            return
        self.ctx.messages.dismiss("list")
        self._after_reload(shown)

    def _after_reload(self, shown: tuple[str, str] | None) -> None:
        self.update_count()
        if shown is not None and self.model.row_of(*shown) >= 0:
            self.select_row(self.model.row_of(*shown))
        elif self.model.rowCount():
            self.select_row(0)
        else:
            self.cleared.emit()

    def update_count(self, matching: int | None = None) -> None:
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

    def clear_selection(self) -> None:
        self.list.selectionModel().clearSelection()

    def _row_changed(self, cur: QModelIndex, _prev: QModelIndex) -> None:
        row = self.model.row(cur.row())
        if row is not None:
            self.row_selected.emit(row)

    def _list_failed(self, what: str, exc: BaseException) -> None:
        self.report_error("list", what, exc, action=("Retry", lambda: self.reload_list(keep=True)))
        shown = self._shown()
        if shown is None or self.model.row_of(*shown) < 0:
            self.cleared.emit()  # the list lost the unit: the pane must not keep showing it

    def find_row(self, sample_id: str, unit: str) -> int:
        """The unit's row in the list, fetching further pages (at most SCAN_PAGES) if needed; -1 if not listed."""
        pages = 0
        while self.model.row_of(sample_id, unit) < 0 and self.model.canFetchMore() and pages < SCAN_PAGES:
            self.model.fetchMore()
            pages += 1
        return self.model.row_of(sample_id, unit)
