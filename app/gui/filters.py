"""Filter bar over the review list: scheme, status, unit (checker, trait, ...), the filters scheme views add
(e.g. a violation category) and a debounced text search.

The scheme combo offers the registered schemes that have units in the project; a view's own filters
(`DetailView.filters`) are shown while its scheme can be in the list and reset when another scheme is picked.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QComboBox, QGridLayout, QLabel, QLineEdit, QWidget

from app.store import STATUSES, Project, UnitFilter
from calibration.schemes.base import registry

if TYPE_CHECKING:
    from app.gui.views.base import FilterSpec

ALL = "(all)"
FILTER_FIELDS = {f.name for f in dataclasses.fields(UnitFilter)}


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


class LazyCombo(QComboBox):
    """A filter combo whose choices are queried when first opened (distinct values over 100k rows cost time)."""

    def __init__(self) -> None:
        super().__init__()
        self.loader: Callable[[], list[tuple[str, str]]] | None = None

    def ensure_loaded(self) -> None:
        if self.loader is not None:
            loader, self.loader = self.loader, None
            self.blockSignals(True)
            for text, data in loader():
                self.addItem(text, data)
            self.blockSignals(False)

    def showPopup(self) -> None:
        self.ensure_loaded()
        super().showPopup()

    def select_data(self, data: str | None) -> None:
        self.ensure_loaded()
        self.setCurrentIndex(max(0, self.findData(data)))


def _combo(tip: str, lazy: bool = False) -> QComboBox:
    c = LazyCombo() if lazy else QComboBox()
    c.setToolTip(tip)
    c.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
    c.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    c.setMinimumContentsLength(8)
    return c


class FilterBar(QWidget):
    changed = Signal(object)  # UnitFilter

    def __init__(self, parent: QWidget | None = None, extra: Sequence[tuple[str, "FilterSpec"]] = ()) -> None:
        """`extra`: (scheme name, filter) pairs from the scheme views."""
        super().__init__(parent)
        self.scheme = _combo("Scheme")
        self.status = _combo("Human status")
        self.unit: LazyCombo = _combo("The unit reviewed: checker, trait, judge, model, ...", lazy=True)  # type: ignore[assignment]
        self.extra: dict[str, tuple[str, FilterSpec, LazyCombo]] = {}
        for scheme, spec in extra:
            if spec.key in self.extra:
                raise ValueError(f"filter {spec.key!r} is declared by two views")
            combo: LazyCombo = _combo(spec.tip, lazy=True)  # type: ignore[assignment]
            self.extra[spec.key] = (scheme, spec, combo)
            if not hasattr(self, spec.key):
                setattr(self, spec.key, combo)  # w.filters.category, as tests and callers name it
        self.search = SearchEdit()
        self.search.setObjectName("search")
        self.search.setPlaceholderText("Search text or id (Ctrl+F)")
        self.search.setClearButtonEnabled(True)
        lay = QGridLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        cells: list[tuple[QLabel, QComboBox]] = [(QLabel("Scheme"), self.scheme), (QLabel("Status"), self.status),
                                                 (QLabel("Unit"), self.unit)]
        self._extra_labels: dict[str, QLabel] = {}
        for key, (_scheme, spec, combo) in self.extra.items():
            self._extra_labels[key] = QLabel(spec.label)
            cells.append((self._extra_labels[key], combo))
        self.unit_label = cells[2][0]
        for i, (label, w) in enumerate(cells):
            lay.addWidget(label, i // 2, (i % 2) * 2)
            lay.addWidget(w, i // 2, (i % 2) * 2 + 1)
        lay.addWidget(self.search, (len(cells) + 1) // 2, 0, 1, 4)
        lay.setColumnStretch(1, 1)
        lay.setColumnStretch(3, 1)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(250)
        self._timer.timeout.connect(self._emit)
        self.scheme.currentIndexChanged.connect(self._scheme_changed)
        for c in (self.status, self.unit, *(c for _s, _f, c in self.extra.values())):
            c.currentIndexChanged.connect(self._emit)
        self.search.textChanged.connect(lambda _t: self._timer.start())
        self.config_ref = ""  # the window sets its config box's ref
        self._loading = False
        self._project: Project | None = None
        self._present: list[str] = []

    @property
    def schemes(self) -> list[str]:
        """The schemes the list can show under the current scheme filter."""
        chosen = self.scheme.currentData()
        return [chosen] if chosen else list(self._present)

    def load(self, project: Project | None) -> None:
        """Fill the choices from the project (without emitting)."""
        self._loading = True
        try:
            self._project = project
            present = set(project.units.unit_schemes()) if project is not None else set()
            known = registry().names()
            self._present = [n for n in known if n in present] + sorted(present - set(known))
            self.scheme.clear()
            self.scheme.addItem(ALL, None)
            for name in self._present:
                self.scheme.addItem(registry().get(name).title if name in registry() else name, name)
            self.status.clear()
            self.status.addItem(ALL, None)
            for s in ("unlabeled", *STATUSES):
                self.status.addItem(s, s)
            self._load_scheme_filters()
            self.search.clear()
        finally:
            self._loading = False

    def _load_scheme_filters(self) -> None:
        """Unit choices of the schemes shown; the views' filters of those schemes, the others hidden and reset."""
        project, shown = self._project, self.schemes
        nouns = {registry().get(n).unit_noun if n in registry() else "unit" for n in shown}
        self.unit_label.setText(" / ".join(sorted(n.capitalize() for n in nouns)) if len(nouns) == 1 else "Unit")
        self.unit.clear()
        self.unit.addItem(ALL, None)
        self.unit.loader = None
        if project is not None:
            one = len(shown) == 1

            def units() -> list[tuple[str, str]]:
                rows = project.units.unit_names(shown[0]) if one else project.units.unit_names()
                noun = {n: registry().get(n).unit_noun if n in registry() else "unit" for n, _u in rows}
                return [(u if one else f"{noun[s]}: {u}", u) for s, u in rows if u and s in shown]

            self.unit.loader = units
        for key, (scheme, spec, combo) in self.extra.items():
            visible = scheme in shown
            combo.clear()
            combo.addItem(ALL, None)
            combo.loader = None
            if project is not None and visible:
                combo.loader = lambda spec=spec: spec.choices(project)
            combo.setVisible(visible)
            self._extra_labels[key].setVisible(visible)

    def _scheme_changed(self, _index: int) -> None:
        was, self._loading = self._loading, True
        try:
            self._load_scheme_filters()
        finally:
            self._loading = was
        self._emit()

    def current(self) -> UnitFilter:
        status, unit = self.status.currentData(), self.unit.currentData()
        fields: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for key, (_scheme, _spec, combo) in self.extra.items():
            value = combo.currentData()
            if value is not None:
                (fields if key in FILTER_FIELDS and key != "extra" else extra)[key] = value
        return UnitFilter(
            statuses=(status,) if status else (), units=(unit,) if unit else (), scheme=self.scheme.currentData(),
            search=self.search.text(), config_ref=self.config_ref, extra=extra, **fields,
        )

    def names(self) -> tuple[str, ...]:
        """Every filter's name, for `clear`."""
        return ("scheme", "status", "unit", *self.extra, "search")

    def clear(self, names: tuple[str, ...] | None = None) -> list[str]:
        """Reset the named filters to "(all)" (search: empty) and emit `changed` once; returns those that were set."""
        names = self.names() if names is None else tuple(n for n in names if n in self.names())
        cur = {"scheme": self.scheme.currentData(), "status": self.status.currentData(),
               "unit": self.unit.currentData(), "search": self.search.text(),
               **{k: c.currentData() for k, (_s, _f, c) in self.extra.items()}}
        cleared = [n for n in names if cur.get(n)]
        if not cleared:
            return []
        self._loading = True
        try:
            for n in cleared:
                if n == "search":
                    self.search.clear()
                elif n in self.extra:
                    self.extra[n][2].setCurrentIndex(0)
                else:
                    getattr(self, n).setCurrentIndex(0)  # the scheme: its slot reloads the unit and view filters
        finally:
            self._loading = False
        self._timer.stop()  # the search's debounce would reload the list a second time
        self._emit()
        return cleared

    def set_status(self, status: str | None) -> None:
        self.status.setCurrentIndex(max(0, self.status.findData(status)))

    def _emit(self) -> None:
        if not self._loading:
            self.changed.emit(self.current())
