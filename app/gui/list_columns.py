"""The review list's column widths (issue #27 item 1): each column as wide as its header and its loaded texts need,
within limits; when the list is narrower than that, the id columns (sample, unit, text figures) give way first
(their ids elided in the middle by columns.IdDelegate, whole in the tooltip), then the figures (their headers
elided, whole in the header's tooltip); Status always keeps its width and comes right after the unit, so it stays
in view. A column the user drags
keeps that width, remembered per scheme in QSettings (`list_columns/<schemes>/<column>`).

The window calls `fit()` nowhere: the sizer follows the model's resets (new columns, new rows) and the viewport's
resizes itself; the window asks `needed()` for the pane width that shows every column whole."""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QObject, QSettings, Qt
from PySide6.QtWidgets import QHeaderView, QTableView

from app.gui.columns import PAD, IdDelegate, shared_suffix

UNIT_COLUMN = 2  # sample, scheme, unit, ...: the unit (checker, trait, judge, method, model) column
ID_KEYS = ("sample_id", "unit")
ID_MAX, SUMMARY_MAX, SORT_ARROW = 210, 280, 12  # pixels
MIN = {"sample_id": 90, "unit": 110}  # the id columns' least width when the list is narrow (text columns: TEXT_MIN)
TEXT_MIN, FIGURE_MIN, LAST_MIN = 60, 36, 44
LIST_SHARE = 0.42  # of the window's width, at most, for the list (the detail pane keeps room for its tables)
MEASURED_ROWS = 200  # rows measured for the content width (the first page)


class ListColumnSizer(QObject):
    def __init__(self, table: QTableView, settings: QSettings) -> None:
        super().__init__(table)
        self.table = table
        self.settings = settings
        self._fitting = False
        self._wanted: list[int] = []
        self._content: dict[int, int] = {}
        self.delegates = {col: IdDelegate(table) for col in (0, UNIT_COLUMN)}
        for col, delegate in self.delegates.items():  # sample and unit ids elided in the middle; words on the right
            table.setItemDelegateForColumn(col, delegate)
        h = table.horizontalHeader()
        h.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        h.setStretchLastSection(False)
        h.setTextElideMode(Qt.TextElideMode.ElideRight)
        h.sectionResized.connect(self._resized)
        self._viewport, self._header_viewport = table.viewport(), h.viewport()  # (compared, never called, in events)
        h.viewport().installEventFilter(self)  # a press on the header starts a drag: its resizes are the user's
        self._dragging = False
        table.model().modelReset.connect(self.refit)
        table.viewport().installEventFilter(self)
        self.refit()

    # -- what each column wants ------------------------------------------------------------------------------------
    @property
    def columns(self) -> tuple[Any, ...]:
        return self.table.model().columns  # type: ignore[no-any-return]

    def scope(self) -> str:
        """The settings group of the widths: the schemes whose columns the list shows ('all' for common ones)."""
        names = sorted({s for c in self.columns for s in c.schemes})
        return "+".join(names) or "all"

    def _remembered(self, key: str) -> int | None:
        v = self.settings.value(f"list_columns/{self.scope()}/{key}")
        try:
            return int(v) if v is not None else None
        except (TypeError, ValueError):
            return None

    def _header_need(self, col: int) -> int:
        h = self.table.horizontalHeader()
        arrow = SORT_ARROW if h.isSortIndicatorShown() and h.sortIndicatorSection() == col else 0
        return h.fontMetrics().horizontalAdvance(self.columns[col].header) + PAD + arrow

    def _content_need(self, col: int) -> int:
        """Pixels the column's loaded texts need (measured once per reset: resizes only read it)."""
        if col not in self._content:
            self._content[col] = self._measure(col)
        return self._content[col]

    def _texts(self, col: int) -> list[Any]:
        """The display texts of the column's first MEASURED_ROWS rows (the review list's model hands them over
        without a QModelIndex per cell)."""
        model = self.table.model()
        if hasattr(model, "display_texts"):
            return model.display_texts(col, MEASURED_ROWS)  # type: ignore[no-any-return]
        return [model.data(model.index(r, col)) for r in range(min(model.rowCount(), MEASURED_ROWS))]

    def _measure(self, col: int) -> int:
        fm = self.table.fontMetrics()
        texts = {t or "" for t in self._texts(col)}
        return max((fm.horizontalAdvance(str(t)) for t in texts), default=0) + PAD

    def _limits(self, col: int) -> tuple[int, int]:
        """(least, most) width of a column before the user drags it."""
        c = self.columns[col]
        header = self._header_need(col)
        content = self._content_need(col)
        if c.key in ID_KEYS:
            return min(MIN[c.key], max(header, content)), ID_MAX
        if c.summary:
            return min(TEXT_MIN * 2, max(header, content)), SUMMARY_MAX
        if not c.numeric and c.key != "status":
            return min(TEXT_MIN, max(header, content)), ID_MAX
        return FIGURE_MIN, 10_000

    def wanted(self, col: int) -> int:
        """The width that shows the header and the loaded texts whole (within the column's most), or the user's."""
        c = self.columns[col]
        remembered = self._remembered(c.key)
        if remembered is not None:
            return remembered
        least, most = self._limits(col)
        return max(least, min(most, max(self._header_need(col), self._content_need(col))))

    def needed(self) -> int:
        """The list's width that shows every column as wanted (frame and scroll bar included)."""
        t = self.table
        frame = 2 * t.frameWidth() + t.verticalScrollBar().sizeHint().width()
        return sum(self._wanted or [self.wanted(c) for c in range(len(self.columns))]) + frame + 2

    # -- fitting ---------------------------------------------------------------------------------------------------
    def refit(self) -> None:
        """Measure every column again (after the columns or the rows changed) and fit them to the list. Status is
        shown right after the unit (Qt's visual order; the model's columns keep theirs), so the scheme's figures
        are what scrolls in a narrow list; the Scheme column hides while the list shows one scheme (it would
        repeat one word on every row)."""
        self._content = {}
        for col, delegate in self.delegates.items():  # e.g. the model every checker ran on: elided first
            delegate.suffix = shared_suffix(str(t or "") for t in self._texts(col))
        h = self.table.horizontalHeader()
        keys = [c.key for c in self.columns]
        for logical in range(h.count()):  # the model's order first: a reset may keep another column set's moves
            if h.visualIndex(logical) != logical:
                h.moveSection(h.visualIndex(logical), logical)
        if "status" in keys and UNIT_COLUMN < len(keys):
            h.moveSection(h.visualIndex(keys.index("status")), UNIT_COLUMN + 1)
        if "scheme" in keys:
            self.table.setColumnHidden(keys.index("scheme"), self.scope() != "all" and "+" not in self.scope())
        self._wanted = [0 if self.table.isColumnHidden(c) else self.wanted(c) for c in range(len(self.columns))]
        self.fit()

    def fit(self) -> None:
        widths = list(self._wanted)
        if len(widths) != len(self.columns):
            return
        room = self.table.viewport().width()
        user = {c for c in range(len(widths)) if self._remembered(self.columns[c].key) is not None}
        user |= {c for c in range(len(widths)) if self.table.isColumnHidden(c)}
        over = sum(widths) - room
        for floor in (self._text_floor, self._figure_floor, self._last_floor):
            if over <= 0:
                break
            over = _shrink(widths, {c: floor(c) for c in range(len(widths)) if c not in user}, over)
        lead_over = sum(widths[c] for c in self._leading()) - room  # the figures after Status may scroll; the ids
        if lead_over > 0:  # before it give way only when Status would leave the list
            over -= lead_over - _shrink(widths, {c: self._id_floor(c) for c in self._leading() if c not in user},
                                        lead_over)
        if over < 0 and UNIT_COLUMN < len(widths) and UNIT_COLUMN not in user:
            widths[UNIT_COLUMN] += -over  # the room left over goes to the unit column (long checker ids)
        self._fitting = True
        try:
            for c, w in enumerate(widths):
                if not self.table.isColumnHidden(c):
                    self.table.setColumnWidth(c, w)
        finally:
            self._fitting = False

    def _text_floor(self, col: int) -> int | None:
        """Phase one: id and text columns shrink down to their least width; the others keep theirs."""
        c = self.columns[col]
        if c.numeric or c.key == "status":
            return None
        return self._limits(col)[0]

    def _figure_floor(self, col: int) -> int | None:
        """Phase two: figure columns shrink to their numbers (headers elided, whole in the tooltip); Status never."""
        c = self.columns[col]
        return None if c.key == "status" or not c.numeric else max(FIGURE_MIN, self._content_need(col))

    def _last_floor(self, col: int) -> int | None:
        """Phase three, a narrow list: the scheme's text columns (and the summary) down to a few characters; ids,
        figures and Status keep theirs."""
        c = self.columns[col]
        return None if c.numeric or c.key in ("status", *ID_KEYS) else LAST_MIN

    def _id_floor(self, col: int) -> int | None:
        """The last resort, when even the columns up to Status do not fit: the ids down to a few characters."""
        return LAST_MIN if self.columns[col].key in ID_KEYS else None

    def _leading(self) -> list[int]:
        """The shown columns from the first to Status, in the order shown."""
        h = self.table.horizontalHeader()
        keys = [c.key for c in self.columns]
        last = h.visualIndex(keys.index("status")) if "status" in keys else h.count() - 1
        return [c for c in range(len(keys)) if h.visualIndex(c) <= last and not self.table.isColumnHidden(c)]

    def _resized(self, col: int, _old: int, new: int) -> None:
        """A drag by the user: that column keeps its width, for this set of schemes."""
        if self._fitting or not self._dragging or not 0 <= col < len(self.columns):
            return
        self.settings.setValue(f"list_columns/{self.scope()}/{self.columns[col].key}", new)
        if col < len(self._wanted):
            self._wanted[col] = new

    def eventFilter(self, obj: Any, event: Any) -> bool:
        kind = event.type()
        if obj is self._viewport and kind == QEvent.Type.Resize:
            self.fit()
        elif obj is self._header_viewport and kind in (QEvent.Type.MouseButtonPress, QEvent.Type.MouseButtonRelease):
            self._dragging = kind == QEvent.Type.MouseButtonPress
        return False


def _shrink(widths: list[int], floors: dict[int, int | None], over: int) -> int:
    """Take `over` pixels from the columns with a floor, in proportion to what each can give; returns what is still
    over (negative: room to spare)."""
    give = {c: widths[c] - f for c, f in floors.items() if f is not None and widths[c] > f}
    total = sum(give.values())
    if total <= 0:
        return over
    take = min(over, total)
    for c, g in give.items():
        cut = min(g, -(-take * g // total))  # ceiling: the sum of cuts reaches `take`
        widths[c] -= cut
        over -= cut
    return over
