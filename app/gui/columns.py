"""Table columns that show real ids readably: sized to their content within limits, long ids elided in the middle
(where ids share a prefix, such as "hotpotqa/5a8b…" or "prompt-baseline@1.1.0|…", the end is what tells them
apart), the full text on hover (the models' plain-text tooltips), and the review list's widths remembered per
scheme (list_columns.py).

Qt's own ElideRight on a column of ids with a common prefix showed the same "hotpotqa/5…" on every row."""
from __future__ import annotations

import os
from collections.abc import Iterable

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QSize, Qt
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import (
    QApplication,
    QHeaderView,
    QStyle,
    QStyleOptionViewItem,
    QTableView,
    QWidget,
)

from app.gui.record_cells import CellDelegate

PAD = 14  # a cell's or header's margins and frame around its text (Fusion: 2 x 4 px margin + focus frame)
SEPARATORS = "/|@:"  # where an id's leading part ends ("hotpotqa/", "prompt-baseline@"): kept when eliding


def shared_suffix(texts: Iterable[str], least: int = 4) -> str:
    """The ending every one of several different texts shares, from a separator on ("|gpt-3.5-turbo-0613": the
    model every checker ran on), or "" (fewer than two texts, or less than `least` characters in common)."""
    distinct = sorted({t for t in texts if t})
    if len(distinct) < 2:
        return ""
    end = os.path.commonprefix([t[::-1] for t in distinct])[::-1]
    cut = min((i for i in (end.find(s) for s in SEPARATORS) if i >= 0), default=-1)
    end = end[cut:] if cut >= 0 else ""
    return end if len(end) >= least and all(len(t) > len(end) for t in distinct) else ""


def elide_id(fm: QFontMetrics, text: str, width: int, suffix: str = "") -> str:
    """`text` in `width` pixels: whole if it fits; else, when it ends with the column's `suffix` (shared_suffix),
    without it ("brute-context-classifier@1.7.5|…", or cut on the right when even that is too long); else its leading part up to the first separator, "…" and as
    much of its end as fits ("hotpotqa/…5542995d1e6f1371"), when that keeps at least 6 characters of the end;
    else Qt's middle elision."""
    if fm.horizontalAdvance(text) <= width:
        return text
    if suffix and text.endswith(suffix):
        own = text[: len(text) - len(suffix) + 1] + "…"  # the separator stays: "name@1.0|…"
        if fm.horizontalAdvance(own) <= width:
            return own
        return fm.elidedText(text, Qt.TextElideMode.ElideRight, width)  # the shared end goes first anyway
    cut = min((i for i in (text.find(s) for s in SEPARATORS) if i > 0), default=-1)
    if 0 < cut < len(text) - 7:
        head = text[: cut + 1] + "…"
        room = width - fm.horizontalAdvance(head)
        tail = len(text) - 1
        if room > 0 and fm.horizontalAdvance(text[tail:]) <= room:
            while tail > cut + 1 and fm.horizontalAdvance(text[tail - 1 :]) <= room:
                tail -= 1
            if len(text) - tail >= 6:
                return head + text[tail:]
    return fm.elidedText(text, Qt.TextElideMode.ElideMiddle, width)


class IdDelegate(CellDelegate):
    """Draws a column's text with `elide_id` (the model's tooltip holds the whole value); sizes stay Qt's, so
    fitting a column to its contents measures the whole text. `suffix`: the column's shared_suffix, dropped first.

    Only the option's text is changed, in `initStyleOption` (after CellDelegate's, app/gui/record_cells.py), and Qt's
    own paint draws it: a Python `paint` that copied the option and called the style cost a fifth of a full repaint
    of the review list (issue #28)."""

    suffix = ""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._elided: dict[tuple[str, int, str], str] = {}
        self._font: QFont | None = None
        self._measuring = False

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        """The whole text's size (Qt's sizeHint calls initStyleOption too: nothing is elided while it measures)."""
        self._measuring = True
        try:
            return super().sizeHint(option, index)
        finally:
            self._measuring = False

    def initStyleOption(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> None:
        super().initStyleOption(option, index)
        text = option.text
        if text and not self._measuring:
            # each visible id is elided again on every repaint of the list (a third of its paint time): remembered
            # per text, cell width and suffix, for the font it was measured with
            font = option.font  # compared, not keyed: QFont.key() built a string per cell (6 us)
            if self._font is None or font != self._font or len(self._elided) > 20_000:
                self._elided, self._font = {}, QFont(font)  # a copy: `font` lives in the option, only for this call
            key = (text, option.rect.width(), self.suffix)
            elided = self._elided.get(key)
            if elided is None:
                elided = self._elided[key] = elide_id(option.fontMetrics, text, text_room(option.widget, key[1]),
                                                      self.suffix)
            option.text = elided


def text_room(widget: QWidget | None, cell_width: int) -> int:
    """Pixels for a cell's text: the style's margins on both sides and 2 px to spare (Qt's own elision measures
    with its text layout and would otherwise cut an id we shortened once more)."""
    style = widget.style() if widget is not None else QApplication.style()
    margin = style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, widget) + 1
    return cell_width - 2 * margin - 2


def text_width(widget: QWidget, text: str) -> int:
    """Pixels a cell or header needs to show `text` whole."""
    return widget.fontMetrics().horizontalAdvance(text) + PAD


def header_width(table: QTableView, col: int) -> int:
    """Pixels the header section of `col` needs to show its title whole."""
    h = table.horizontalHeader()
    title = table.model().headerData(col, Qt.Orientation.Horizontal) or ""
    return h.fontMetrics().horizontalAdvance(str(title)) + PAD


def cap_columns(table: QTableView, limit: int, columns: Iterable[int]) -> None:
    """Size `columns` to their content (header included), at most `limit` pixels each; wider texts are elided
    (the cells' tooltips hold them whole), and the user may still drag a column wider."""
    h = table.horizontalHeader()
    for col in columns:
        h.setSectionResizeMode(col, QHeaderView.ResizeMode.Interactive)
        table.resizeColumnToContents(col)
        if h.sectionSize(col) > limit:
            h.resizeSection(col, max(limit, header_width(table, col)))
