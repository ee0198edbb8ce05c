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

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QStyledItemDelegate, QStyleOptionViewItem

_RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter  # the models' RIGHT
_HAS_DISPLAY = QStyleOptionViewItem.ViewItemFeature.HasDisplay
_TEXT = QPalette.ColorRole.Text


class CellDelegate(QStyledItemDelegate):
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
            option.features = option.features | _HAS_DISPLAY
            option.text = cell.text
        if cell.background is not None:
            option.backgroundBrush = cell.background
