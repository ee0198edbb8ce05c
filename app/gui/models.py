"""Thin Qt item models over store queries and small in-memory records. No SQL here; no second copy of the project.

`UnitListModel` pages the review list from `Project.units.unit_page` (canFetchMore/fetchMore), so opening a project
with 100,000 units costs one page. `RecordTableModel` shows a short list of dicts (the violations of one sample,
its candidate pairs, a metrics table) with declared columns.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor

from app.gui.plaintext import plain_tooltip
from app.store import Project, UnitFilter
from calibration.schemes.base import Scheme, registry

Index = QModelIndex | QPersistentModelIndex
PAGE = 200
# roles and alignment as plain ints: data() runs thousands of times per repaint, enum arithmetic is slow there
DISPLAY = int(Qt.ItemDataRole.DisplayRole)
TOOLTIP = int(Qt.ItemDataRole.ToolTipRole)
BACKGROUND = int(Qt.ItemDataRole.BackgroundRole)
FOREGROUND = int(Qt.ItemDataRole.ForegroundRole)
ALIGNMENT = int(Qt.ItemDataRole.TextAlignmentRole)
USER = int(Qt.ItemDataRole.UserRole)
RIGHT = int((Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter).value)
_ROLES = frozenset((DISPLAY, TOOLTIP, FOREGROUND, ALIGNMENT, USER))  # the roles the review list answers
_BRUSHES: dict[str, QBrush] = {}


def brush(colour: str) -> QBrush:
    b = _BRUSHES.get(colour)
    if b is None:
        b = _BRUSHES[colour] = QBrush(QColor(colour))
    return b


class CellStyle(NamedTuple):
    """A cell as a delegate draws it: its text (None: no text), text and background brushes, right-aligned."""

    text: Any
    foreground: QBrush | None
    background: QBrush | None
    right: bool


STATUS_COLOURS = {"accepted": "#2e7d32", "corrected": "#1565c0", "skipped": "#757575", "flagged": "#c62828",
                  "unlabeled": "#9e9e9e"}


def fmt_score(v: Any, digits: int = 2) -> str:
    if v is None:
        return ""
    try:
        f = float(v)
    except (TypeError, ValueError):
        return str(v)
    return "—" if f != f else f"{f:.{digits}f}"


def distinguishing_digits(values: Sequence[Any], lo: int = 3, hi: int = 6) -> int:
    """The fewest decimals (lo..hi) at which neighbouring distinct scores (in the order shown) read differently:
    at 2 decimals a top-configs table read 0.95 on every row, so its ranking looked arbitrary (QA)."""
    vals = [float(v) for v in values if v is not None and float(v) == float(v)]
    pairs = [(a, b) for a, b in zip(vals, vals[1:]) if a != b]
    for digits in range(lo, hi + 1):
        if all(f"{a:.{digits}f}" != f"{b:.{digits}f}" for a, b in pairs):
            return digits
    return hi


def ranked_score_columns(scores: Sequence[Any], test_scores: Sequence[Any]) -> tuple["Column", "Column"]:
    """A top-configs table's two score columns. Rows are ranked by the objective on all labeled units (the search
    chooses there: calibration/search/engine.py); the cross-validated column is beside it, both named as
    calibration/search/report.py names them. Each shows enough decimals to tell its neighbouring rows apart."""
    d_all, d_cv = distinguishing_digits(scores), distinguishing_digits(test_scores)
    return (Column("score", "All labeled, in-sample", lambda v: fmt_score(v, d_all), True,
                   "Objective on all labeled units, the data the search chose on (optimistic); the rows are ranked by it"),
            Column("mean_test_score", "Cross-validated", lambda v: fmt_score(v, d_cv), True,
                   "Mean objective over the folds' test parts (the config was chosen with every fold in view, so "
                   "this is optimistic too; the held-out score above is the estimate for new data)"))


def fmt_figure(v: Any) -> str:
    """A scheme's figure in the list: floats to 3 decimals (a relevance of 1/3 is "0.333", not 16 digits cut)."""
    return str(round(v, 3)) if isinstance(v, float) else str(v)


@dataclass(frozen=True)
class ListColumn:
    """A column of the review list: `key` of a unit row; `schemes` = the schemes whose rows it applies to (blank on
    others), empty for the common columns; `summary` = show every scheme column of the row as one text (the list
    of several schemes at once: each row labelled with its own headers, never another scheme's)."""

    key: str
    header: str
    numeric: bool = False
    schemes: frozenset[str] = frozenset()
    tip: str = ""
    summary: bool = False


SUMMARY = "_summary"


def list_columns(schemes: Sequence[Scheme], score_title: str = "Score", score_tip: str = "") -> tuple[ListColumn, ...]:
    """Sample, scheme, unit, the schemes' own columns (`Scheme.columns`, values from `unit_summary`), machine score,
    status. One scheme: its columns, typed and sortable. Several: one "Summary" column, so the list keeps its width
    and a rubric row never shows a violations header."""
    nouns = list(dict.fromkeys(s.unit_noun for s in schemes)) or ["unit"]
    unit_header = " / ".join(n.capitalize() for n in nouns)
    own: list[ListColumn] = []
    if len(schemes) == 1:
        s = schemes[0]
        own = [ListColumn(c.key, c.header, c.numeric, frozenset((s.name,))) for c in s.columns]
    elif any(s.columns for s in schemes):
        own = [ListColumn(SUMMARY, "Summary", False, frozenset(s.name for s in schemes),
                          "Each scheme's own figures for the unit (pick a scheme in the filter for sortable columns)",
                          summary=True)]
    return (ListColumn("sample_id", "Sample"), ListColumn("scheme", "Scheme"), ListColumn("unit", unit_header),
            *own, ListColumn("machine_f1", score_title, True, tip=score_tip),
            ListColumn("status", "Status", tip="Human status"))


class UnitListModel(QAbstractTableModel):
    """The review list: one row per unit (sample x checker, trait, judge, ...), fetched lazily in pages. Its columns
    come from the schemes shown (`set_schemes`, called before a reload; the reset re-reads them).

    `reload` raises store errors to its caller (leaving the list empty, never half-reset); errors in the calls Qt
    makes itself (fetchMore while scrolling, sort on a header click) are emitted as `failed(what, exception)`."""

    failed = Signal(str, object)

    def __init__(self, project: Project | None = None, parent: Any = None, page: int = PAGE) -> None:
        super().__init__(parent)
        self._project = project
        self._page = page
        self._filter = UnitFilter()
        self._order_by = "id"
        self._descending = False
        self._rows: list[dict[str, Any]] = []
        # each loaded row's cells (display text, colours, alignment), made on its first paint (None: not yet, or changed
        # since): a repaint asks for ~250 cells, and formatting the same rows again was a third of the list's paint time
        self._cells: list[tuple[CellStyle, ...] | None] = []
        self._where: dict[tuple[str, str], int] = {}
        self._total = 0
        self._fetching = False
        self.columns: tuple[ListColumn, ...] = list_columns(())
        self._schemes: dict[str, Scheme] = {}
        self._empty_unit: Mapping[str, str] = {}
        self._pending_columns: tuple[ListColumn, ...] | None = None  # None: the project's schemes, at each reload
        self.reload()

    def set_schemes(self, schemes: Sequence[Scheme], *, score_title: str = "Score", score_tip: str = "",
                    empty_unit: Mapping[str, str] | None = None) -> None:
        """The schemes whose units the list shows next (columns follow at the next reload)."""
        self._pending_columns = list_columns(schemes, score_title, score_tip)
        self._schemes = {s.name: s for s in schemes}
        self._empty_unit = dict(empty_unit or {})
        self._cells = [None] * len(self._rows)  # texts read the schemes (summary, empty unit): made again

    # -- state -----------------------------------------------------------------------------------------------------
    @property
    def total(self) -> int:
        """Rows matching the filter in the project (loaded or not)."""
        return self._total

    @property
    def unit_filter(self) -> UnitFilter:
        return self._filter

    def set_project(self, project: Project | None, f: UnitFilter | None = None) -> None:
        self._project = project
        if f is not None:
            self._filter = f
        self.reload()

    def set_filter(self, f: UnitFilter) -> None:
        self._filter = f
        self.reload()

    def reload(self) -> None:
        """Drop loaded rows and fetch the first page again (after a filter, sort or project change)."""
        self._fetching = True  # no fetchMore from slots reacting to the reset
        try:
            self.beginResetModel()
            self._rows, self._cells, self._where, self._total = [], [], {}, 0
            try:
                self.columns = self._pending_columns or self._project_columns()
                self._total = 0 if self._project is None else self._project.units.count_units(self._filter)
                self._append(self._fetch(0))
            except Exception:
                self._rows, self._cells, self._where, self._total = [], [], {}, 0
                raise
            finally:
                self.endResetModel()
        finally:
            self._fetching = False

    def _fetch(self, offset: int) -> list[dict[str, Any]]:
        if self._project is None or offset >= self._total:
            return []
        # in list order the next page starts after the last row read (keyset): a page deep in a 1M-unit list costs
        # what the first one does
        after = self._rows[-1]["id"] if offset and offset == len(self._rows) else None
        return self._project.units.unit_page(self._filter, offset, self._page, self._order_by, self._descending, after=after,
                                       matching=self._total)

    def _append(self, rows: list[dict[str, Any]]) -> None:
        base = len(self._rows)
        for i, r in enumerate(rows):
            self._where[(r["sample_id"], r["unit"])] = base + i
        self._rows.extend(rows)
        self._cells.extend([None] * len(rows))

    def row(self, i: int) -> dict[str, Any] | None:
        return self._rows[i] if 0 <= i < len(self._rows) else None

    def row_of(self, sample_id: str, unit: str) -> int:
        return self._where.get((sample_id, unit), -1)

    def set_status(self, sample_id: str, unit: str, status: str | None) -> None:
        """Reflect a decision in a loaded row; the row stays put until the next reload (no rows vanish under the cursor)."""
        i = self.row_of(sample_id, unit)
        if i < 0:
            return
        self._rows[i]["status"] = status or "unlabeled"
        self._cells[i] = None
        col = self.column_of("status")
        idx = self.index(i, col)
        self.dataChanged.emit(idx, idx)

    def _project_columns(self) -> tuple[ListColumn, ...]:
        """Without `set_schemes` (a model used on its own): the columns of the schemes present in the project."""
        if self._project is None:
            return list_columns(())
        reg = registry()
        self._schemes = {n: reg.get(n) for n in self._project.units.unit_schemes() if n in reg}
        return list_columns(list(self._schemes.values()))

    def column_of(self, key: str) -> int:
        return next((i for i, c in enumerate(self.columns) if c.key == key), -1)

    def _summary(self, r: dict[str, Any]) -> str:
        s = self._schemes.get(r.get("scheme") or "")
        if s is None:
            return ""
        return " · ".join(f"{c.header} {fmt_figure(r[c.key])}" for c in s.columns if r.get(c.key) is not None)

    # -- Qt model --------------------------------------------------------------------------------------------------
    def rowCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.columns)

    def canFetchMore(self, parent: Index = QModelIndex()) -> bool:
        return not parent.isValid() and not self._fetching and len(self._rows) < self._total

    def fetchMore(self, parent: Index = QModelIndex()) -> None:
        if parent.isValid() or self._fetching:
            return  # views may ask again from inside our own insert signals
        self._fetching = True
        try:
            try:
                rows = self._fetch(len(self._rows))
            except Exception as exc:  # noqa: BLE001 - Qt calls this while scrolling: report, keep the loaded rows
                self.failed.emit("Could not load more of the review list", exc)
                return
            if not rows:
                self._total = len(self._rows)  # the project shrank under us; stop asking
                return
            self.beginInsertRows(QModelIndex(), len(self._rows), len(self._rows) + len(rows) - 1)
            self._append(rows)
            self.endInsertRows()
        finally:
            self._fetching = False

    def _display(self, r: dict[str, Any]) -> tuple[Any, ...]:
        """The display texts of a row, one per column (None: another scheme's column, left blank)."""
        scheme = r.get("scheme")
        out: list[Any] = []
        for c in self.columns:
            if c.schemes and scheme not in c.schemes:
                out.append(None)
                continue
            v = self._summary(r) if c.summary else r.get(c.key)
            if c.key == "machine_f1":
                out.append(fmt_score(v))
            elif c.key == "unit" and not v:
                out.append(self._empty_unit.get(scheme or "", "(whole sample)"))
            else:
                out.append("" if v is None else fmt_figure(v))
        return tuple(out)

    def display_texts(self, col: int, rows: int) -> list[Any]:
        """The display texts of column `col` in the first `rows` rows, as `data` gives them (the column sizer
        measures the first page: through `index` and `data` that was 1,400 Python calls per reload)."""
        out: list[Any] = []
        if not 0 <= col < len(self.columns):
            return out
        for i in range(min(rows, len(self._rows))):
            out.append(self._row_cells(i)[col].text)
        return out

    def _row_cells(self, row: int) -> tuple[CellStyle, ...]:
        """The cells of loaded row `row`, made once (until the row or the columns change)."""
        cells = self._cells[row]
        if cells is None:
            cells = self._cells[row] = self._styled(self._rows[row])
        return cells

    def _styled(self, r: dict[str, Any]) -> tuple[CellStyle, ...]:
        """A row's cells as `data` answers them: another scheme's column blank and plain, the status in its colour,
        numbers right-aligned."""
        scheme = r.get("scheme")
        status = brush(STATUS_COLOURS.get(str(r.get("status")), "#000000"))
        return tuple(CellStyle(text, None, None, False) if c.schemes and scheme not in c.schemes
                     else CellStyle(text, status if c.key == "status" else None, None, c.numeric)
                     for c, text in zip(self.columns, self._display(r)))

    def cell_style(self, row: int, col: int) -> CellStyle | None:
        """What `data` answers for the display, foreground, background and alignment roles of a cell, in one call
        (app/gui/record_cells.py); None: ask `data`."""
        if not (0 <= row < len(self._rows) and 0 <= col < len(self.columns)):
            return None
        return self._row_cells(row)[col]

    def data(self, index: Index, role: int = DISPLAY) -> Any:
        role = int(role)
        if role not in _ROLES:
            return None
        row, col = index.row(), index.column()
        if not (0 <= row < len(self._rows) and 0 <= col < len(self.columns)):  # an invalid index has row -1
            return None
        if role == DISPLAY:
            return self._row_cells(row)[col].text
        r = self._rows[row]
        c = self.columns[col]
        if c.schemes and r.get("scheme") not in c.schemes:
            return None if role != USER else r  # another scheme's column: blank
        if role == FOREGROUND:
            return brush(STATUS_COLOURS.get(str(r.get("status")), "#000000")) if c.key == "status" else None
        if role == ALIGNMENT:
            return RIGHT if c.numeric else None
        if role == TOOLTIP:
            v = self._summary(r) if c.summary else r.get(c.key)
            if c.summary:
                return plain_tooltip(str(v).replace(" · ", "\n")) or None
            # ids and other texts may be elided in a narrow column (app/gui/columns.py): whole on hover
            return None if c.numeric or c.key in ("scheme", "status") or v is None else plain_tooltip(str(v))
        return r

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = DISPLAY) -> Any:
        role = int(role)
        if orientation == Qt.Orientation.Horizontal and 0 <= section < len(self.columns):
            if role == DISPLAY:
                return self.columns[section].header
            if role == TOOLTIP:  # the whole title too: a narrow list elides it
                c = self.columns[section]
                return plain_tooltip(f"{c.header}: {c.tip}" if c.tip else c.header)
            return None
        return section + 1 if role == DISPLAY and orientation == Qt.Orientation.Vertical else None

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Sorting is done by the store (ORDER BY over the whole filtered list); column -1 = project order."""
        if not 0 <= column < len(self.columns) or self.columns[column].summary:
            order_by, desc = "id", False  # the summary mixes schemes' figures: project order
        else:
            order_by, desc = self.columns[column].key, order == Qt.SortOrder.DescendingOrder
        if (order_by, desc) == (self._order_by, self._descending):
            return
        self._order_by, self._descending = order_by, desc
        try:
            self.reload()
        except Exception as exc:  # noqa: BLE001 - Qt calls this on a header click
            self.failed.emit("Could not sort the review list", exc)


@dataclass(frozen=True)
class Column:
    key: str
    title: str
    fmt: Callable[[Any], str] = field(default=lambda v: "" if v is None else str(v))
    align_right: bool = False
    tip: str = ""


class RecordTableModel(QAbstractTableModel):
    """A few records (dicts) with declared columns; `_bg`/`_fg`/`_tip`/`_bold` keys style a whole row."""

    def __init__(self, columns: Sequence[Column], parent: Any = None) -> None:
        super().__init__(parent)
        self._columns = tuple(columns)
        self._records: list[dict[str, Any]] = []
        # (row, column) -> its cell, made once per records set: a table sized to its contents asks for every cell
        # twice per unit shown (measured, then painted) and again on every repaint
        self._styles: dict[tuple[int, int], CellStyle] = {}

    def set_records(self, records: Sequence[dict[str, Any]], columns: Sequence[Column] | None = None) -> None:
        """New rows (and, when given, new columns: e.g. decimals that depend on the rows)."""
        self.beginResetModel()
        self._records = list(records)
        self._styles = {}
        if columns is not None:
            self._columns = tuple(columns)
        self.endResetModel()

    def update_records(self, records: Sequence[dict[str, Any]]) -> None:
        """The same rows again after a decision, some values changed: only the changed rows are redrawn (a reset
        makes a ResizeToContents table re-measure every cell and repaint it all); other row counts reset."""
        new = list(records)
        if len(new) != len(self._records):
            self.set_records(new)
            return
        changed = [i for i, (old, rec) in enumerate(zip(self._records, new)) if old != rec]
        self._records = new
        if changed:
            self._styles = {}
            self.dataChanged.emit(self.index(changed[0], 0), self.index(changed[-1], len(self._columns) - 1))

    def record(self, row: int) -> dict[str, Any] | None:
        return self._records[row] if 0 <= row < len(self._records) else None

    def cell_style(self, row: int, col: int) -> CellStyle | None:
        """What `data` answers for the display, foreground, background and alignment roles of a cell, in one call
        (app/gui/record_cells.py); None: ask `data`."""
        cell = self._styles.get((row, col))
        if cell is None:
            if not (0 <= row < len(self._records) and 0 <= col < len(self._columns)):
                return None
            rec, c = self._records[row], self._columns[col]
            fg, bg = rec.get("_fg"), rec.get("_bg")
            cell = self._styles[(row, col)] = CellStyle(c.fmt(rec.get(c.key)), brush(fg) if fg else None,
                                                        brush(bg) if bg else None, c.align_right)
        return cell

    @property
    def columns(self) -> tuple[Column, ...]:
        """The declared columns (a new tuple only when `set_records` is given other columns)."""
        return self._columns

    def records(self) -> list[dict[str, Any]]:
        return list(self._records)

    def rowCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._records)

    def columnCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._columns)

    def data(self, index: Index, role: int = DISPLAY) -> Any:
        role = int(role)
        if role not in (DISPLAY, TOOLTIP, BACKGROUND, FOREGROUND, ALIGNMENT, USER):
            return None
        row, c = index.row(), index.column()
        if not index.isValid() or row >= len(self._records) or c >= len(self._columns):
            return None
        rec = self._records[row]
        col = self._columns[c]
        if role == DISPLAY:
            return col.fmt(rec.get(col.key))
        if role == TOOLTIP:
            tip = rec.get(f"_tip_{col.key}", rec.get("_tip"))
            return None if tip is None else plain_tooltip(str(tip))
        if role == BACKGROUND:
            return brush(rec["_bg"]) if rec.get("_bg") else None
        if role == FOREGROUND:
            return brush(rec["_fg"]) if rec.get("_fg") else None
        if role == ALIGNMENT:
            return RIGHT if col.align_right else None
        return rec

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = DISPLAY) -> Any:
        role = int(role)
        if role not in (DISPLAY, TOOLTIP):
            return None
        if orientation == Qt.Orientation.Horizontal and 0 <= section < len(self._columns):
            c = self._columns[section]
            if role == DISPLAY:
                return c.title
            title = " ".join(c.title.split())  # the whole title too: a narrow table elides it
            return plain_tooltip(f"{title}: {c.tip}" if c.tip else title)
        if orientation == Qt.Orientation.Vertical and role == DISPLAY:
            return section + 1
        return None
