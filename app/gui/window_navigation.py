"""The main window's navigation: next/previous unit (fetching further pages of the lazy list), next unlabeled (down
the list, or along the chosen queue order, or to the next disagreement among annotators), and focus keys."""
from __future__ import annotations

from PySide6.QtCore import Qt

from app.gui.window_parts import SCAN_PAGES, WindowPart, guarded


class NavigationPart(WindowPart):
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
