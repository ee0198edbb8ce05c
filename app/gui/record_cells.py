"""Table cells styled from the model's `cell_style` in one Python call per cell (the review list, the detail tables).

Qt's QStyledItemDelegate asks the model for seven roles per cell (font, alignment, colour, check state, icon, text,
background), each a call from C++ into Python, and does it for every cell painted and again for every cell measured
by a column sized to its contents. A detail view resets its tables for every unit shown (with nine candidate pairs,
1,500 calls per unit) and the review list repaints 200 cells when it scrolls (issue #28 item 6). `CellDelegate`
sets the same option fields from `model.cell_style(row, column)` (app/gui/models.py: what `data` answers for those
roles); a model without it, or a cell whose text is not a string (Qt formats other values with the locale), goes the
standard way.
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QSize, Qt
from PySide6.QtGui import QFont, QPalette
from PySide6.QtWidgets import QStyledItemDelegate, QStyleOptionViewItem, QWidget

_RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter  # the models' RIGHT
_HAS_DISPLAY = QStyleOptionViewItem.ViewItemFeature.HasDisplay
_TEXT = QPalette.ColorRole.Text
# an option's features -> the same with HasDisplay: `features | HasDisplay` is Python enum arithmetic in PySide6
# (3.4 us a cell, a list repaint paints 250 cells); the view hands in a few distinct feature sets (alternate row or not)
_WITH_DISPLAY: dict[QStyleOptionViewItem.ViewItemFeature, QStyleOptionViewItem.ViewItemFeature] = {}


SIZES_KEPT = 20_000  # texts whose sizes a delegate remembers before it starts again


class CellDelegate(QStyledItemDelegate):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._sizes: dict[Any, QSize] = {}  # a cell's text -> Qt's size hint for it, in `_size_font`
        self._size_font: QFont | None = None

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        """Qt's size hint, measured once per text and font. A table sized to its contents measures every cell of
        every unit shown (each a `data(SizeHintRole)` call, the style option and a text layout); the same texts
        come back unit after unit (figures, rules, marks). Without wrapping, the hint of a cell drawn from
        `cell_style` depends on its text and font only (such models answer no SizeHintRole); other cells are
        measured every time."""
        style = getattr(index.model(), "cell_style", None)
        cell = None if style is None else style(index.row(), index.column())
        view = option.widget
        if (cell is None or not (cell.text is None or isinstance(cell.text, str))
                or (view is not None and getattr(view, "wordWrap", bool)())):
            return super().sizeHint(option, index)
        font = option.font
        if self._size_font is None or font != self._size_font or len(self._sizes) > SIZES_KEPT:
            self._sizes, self._size_font = {}, QFont(font)  # a copy: `font` lives in the option, only for this call
        size = self._sizes.get(cell.text)
        if size is None:
            size = self._sizes[cell.text] = super().sizeHint(option, index)
        return size

    def initStyleOption(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> None:
        style = getattr(index.model(), "cell_style", None)
        cell = None if style is None else style(index.row(), index.column())
        if cell is None or not (cell.text is None or isinstance(cell.text, str)):
            super().initStyleOption(option, index)
            return
        option.index = index
        if cell.right:
            option.displayAlignment = _RIGHT
        if cell.foreground is not None:
            option.palette.setBrush(_TEXT, cell.foreground)
        if cell.text is not None:
            features = option.features
            with_display = _WITH_DISPLAY.get(features)
            if with_display is None:
                with_display = _WITH_DISPLAY[features] = features | _HAS_DISPLAY
            option.features = with_display
            option.text = cell.text
        if cell.background is not None:
            option.backgroundBrush = cell.background
