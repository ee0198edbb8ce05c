"""A table's column titles held by Qt, not asked of the Python model at every layout and paint.

A QHeaderView asks its model's `headerData` for seven roles per section painted and five more per section sized to
its contents, each a call from C++ into Python with the role converted to a Python enum. The detail views' tables
are reset and laid out for every unit shown (22 sections in the violations view: about 360 calls per unit, issue
#28 item 6). Their titles do not change with the rows, so the header reads them from a QStandardItemModel (the
titles and tooltips the table's model gives, copied again when they change at a reset); the cells still come from
the table's own model.
"""
from __future__ import annotations

from PySide6.QtCore import QAbstractItemModel, Qt
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QTableView

_H = Qt.Orientation.Horizontal
_ROLES = (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole)


def _titles(model: QAbstractItemModel) -> list[tuple[object, ...]]:
    return [tuple(model.headerData(c, _H, role) for role in _ROLES) for c in range(model.columnCount())]


class HeaderLabels(QStandardItemModel):
    """The horizontal titles (display text and tooltip) of `table`'s model, for its header to read."""

    def __init__(self, table: QTableView) -> None:
        super().__init__(0, 0, table)
        self._source = table.model()
        self._shown: list[tuple[object, ...]] = []
        self._columns: object = None  # the model's `columns` when its titles were last read (RecordTableModel)
        self.sync()
        header = table.horizontalHeader()
        modes = [header.sectionResizeMode(c) for c in range(header.count())]
        header.setModel(self)
        for c, mode in enumerate(modes):  # the modes the table was given (a new model resets them)
            header.setSectionResizeMode(c, mode)
        # before the table's other slots on a reset (make_table's layout): the header counts the right sections
        self._source.modelReset.connect(self.sync)

    def sync(self) -> None:
        """Copy the titles again if the model's changed (a reset with other columns). A model that declares its
        `columns` changes its titles only with them: the same object, nothing to read."""
        columns = getattr(self._source, "columns", None)
        if columns is not None and columns is self._columns:
            return
        self._columns = columns
        titles = _titles(self._source)
        if titles == self._shown:
            return
        if self.columnCount() != len(titles):
            self.setColumnCount(len(titles))
        for c, (text, tip) in enumerate(titles):
            item = QStandardItem()
            if text is not None:
                item.setData(text, Qt.ItemDataRole.DisplayRole)
            if tip is not None:
                item.setData(tip, Qt.ItemDataRole.ToolTipRole)
            self.setHorizontalHeaderItem(c, item)
        self._shown = titles
