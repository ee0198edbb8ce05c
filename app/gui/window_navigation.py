"""The main window's navigation: next/previous unit (fetching further pages of the lazy list), next unlabeled (down
the list, or along the chosen queue order, or to the next disagreement among annotators), and focus keys. It moves
through the review list and the detail pane by their interfaces (window_context.py); the next disagreement is the
adjudication panel's, asked through `next_disagreement`."""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Qt

from app.gui.window_context import DetailPane, ListPane, WindowContext
from app.gui.window_parts import SCAN_PAGES, Part, guarded


class NavigationPart(Part):
    def __init__(self, ctx: WindowContext, units: ListPane, detail: DetailPane,
                 next_disagreement: Callable[[], None], parent: QObject | None = None) -> None:
        super().__init__(ctx, parent)
        self.units = units
        self.detail = detail
        self._next_disagreement = next_disagreement

    def _ensure_loaded(self, row: int) -> bool:
        model = self.units.model
        while row >= model.rowCount() and model.canFetchMore():
            model.fetchMore()
        return row < model.rowCount()

    @guarded("Could not load the next units", "navigate")
    def go_next(self) -> None:
        i = self.units.current_row() + 1
        if self._ensure_loaded(i):
            self.units.select_row(i)
        else:
            self.status_message("End of the list", 3000)

    @guarded("Could not go back", "navigate")
    def go_prev(self) -> None:
        i = self.units.current_row()
        if i > 0:
            self.units.select_row(i - 1)

    @guarded("Could not look for the next unlabeled unit", "navigate")
    def go_next_unlabeled(self) -> None:
        queue, model = self.units.queue, self.units.model
        if queue.order == "annotators":  # disagreements among annotators: adjudicate them (issue #15)
            self._next_disagreement()
            return
        if queue.order != "list":  # the chosen queue order (issue #16)
            key = queue.next_key(self.detail.shown)
            if key is None:
                self.status_message(f"The {queue.order} queue has no unlabeled unit left "
                                    "(or is still being computed)", 5000)
            else:
                self.detail.reveal_unit(*key)
            return
        i, pages = self.units.current_row() + 1, 0
        while True:
            while i < model.rowCount():
                r = model.row(i)
                if r is not None and r["status"] == "unlabeled":
                    self.units.select_row(i)
                    return
                i += 1
            if not model.canFetchMore() or pages >= SCAN_PAGES:
                break
            model.fetchMore()
            pages += 1
        self.status_message("No unlabeled unit further down the list (filter Status: unlabeled to see all)", 5000)

    def focus_list(self) -> None:
        self.units.list.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def focus_search(self) -> None:
        self.units.filters.search.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.units.filters.search.selectAll()
