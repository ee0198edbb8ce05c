"""Filter bar over the review list: scheme, status, checker/trait, category and a debounced text search."""
from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QComboBox, QGridLayout, QLabel, QLineEdit, QWidget

from app.store import STATUSES, Project, UnitFilter

ALL = "(all)"


class SearchEdit(QLineEdit):
    """Keeps Return/Enter/Escape (also window shortcuts) while typing; Escape clears."""

    def event(self, e: QEvent) -> bool:
        if e.type() == QEvent.Type.ShortcutOverride and isinstance(e, QKeyEvent) and e.key() in (
            Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Escape
        ):
            e.accept()
            return True
        if e.type() == QEvent.Type.KeyPress and isinstance(e, QKeyEvent) and e.key() == Qt.Key.Key_Escape:
            self.clear()
            self.clearFocus()
            return True
        return super().event(e)


def _combo(tip: str) -> QComboBox:
    c = QComboBox()
    c.setToolTip(tip)
    c.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
    c.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    c.setMinimumContentsLength(8)
    return c


class FilterBar(QWidget):
    changed = Signal(object)  # UnitFilter

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.scheme = _combo("Scheme")
        self.status = _combo("Human status")
        self.unit = _combo("Checker (violations) or trait (rubric)")
        self.category = _combo("Samples with a violation of this category")
        self.search = SearchEdit()
        self.search.setObjectName("search")
        self.search.setPlaceholderText("Search text or id (Ctrl+F)")
        self.search.setClearButtonEnabled(True)
        lay = QGridLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        for col, (label, w) in enumerate((("Scheme", self.scheme), ("Status", self.status))):
            lay.addWidget(QLabel(label), 0, col * 2)
            lay.addWidget(w, 0, col * 2 + 1)
        for col, (label, w) in enumerate((("Checker", self.unit), ("Category", self.category))):
            lay.addWidget(QLabel(label), 1, col * 2)
            lay.addWidget(w, 1, col * 2 + 1)
        lay.addWidget(self.search, 2, 0, 1, 4)
        lay.setColumnStretch(1, 1)
        lay.setColumnStretch(3, 1)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(250)
        self._timer.timeout.connect(self._emit)
        for c in (self.scheme, self.status, self.unit, self.category):
            c.currentIndexChanged.connect(self._emit)
        self.search.textChanged.connect(lambda _t: self._timer.start())
        self.config_ref = "std_match@1.0.0"
        self._loading = False

    def load(self, project: Project | None) -> None:
        """Fill the choices from the project (without emitting)."""
        self._loading = True
        try:
            self.scheme.clear()
            self.scheme.addItem(ALL, None)
            for s in ("violations", "rubric"):
                self.scheme.addItem(s, s)
            self.status.clear()
            self.status.addItem(ALL, None)
            for s in ("unlabeled", *STATUSES):
                self.status.addItem(s, s)
            self.unit.clear()
            self.unit.addItem(ALL, None)
            self.category.clear()
            self.category.addItem(ALL, None)
            if project is not None:
                for c in project.checkers():
                    self.unit.addItem(c, c)
                for t in project.traits():
                    self.unit.addItem(f"trait: {t['name']}", t["name"])
                for c in project.categories():
                    self.category.addItem(c, c)
            self.search.clear()
        finally:
            self._loading = False

    def current(self) -> UnitFilter:
        status, unit = self.status.currentData(), self.unit.currentData()
        return UnitFilter(
            statuses=(status,) if status else (), units=(unit,) if unit else (), scheme=self.scheme.currentData(),
            category=self.category.currentData(), search=self.search.text(), config_ref=self.config_ref,
        )

    def set_status(self, status: str | None) -> None:
        self.status.setCurrentIndex(max(0, self.status.findData(status)))

    def _emit(self) -> None:
        if not self._loading:
            self.changed.emit(self.current())
