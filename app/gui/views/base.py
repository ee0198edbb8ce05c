"""What every per-scheme detail view offers the window: show a unit, refresh after a decision, say what
"accept" means for it, and handle the scheme's own actions. Views never write to the project directly:
they build app.corrections commands and hand them to the session.

A view also declares what the window composes around it, so that adding a scheme's view is one new module and
no edit elsewhere: its actions and their menu (`action_specs`, `menu`), the filters it adds to the filter bar
(`filters`), how the list names an empty unit, the title of the list's machine-score column, the rows it
adds to the export preview (`export_count_rows`), the versioned config its machine scores follow (`config_choice`:
the window keeps the chosen one as an opaque object and hands it back through `ViewContext.config`) and its own page
in the calibration panel (`calibration_page`).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView, QComboBox, QHBoxLayout, QHeaderView, QLabel, QSizePolicy, QSplitter, QTableView, QVBoxLayout,
    QWidget,
)

from app.corrections import SetLabels
from app.gui.actions import ActionSpec
from app.gui.header_labels import HeaderLabels
from app.gui.models import RecordTableModel
from app.gui.plaintext import ElidedLabel, plain_label
from app.gui.record_cells import CellDelegate
from app.gui.undo import Session
from app.gui.workers import ProgressPanel, TaskRunner

if TYPE_CHECKING:
    from app.gui.calibration_panel import CalibrationPanel


@dataclass
class ViewContext:
    session: Session
    runner: TaskRunner
    progress: ProgressPanel
    # the config chosen in the window's config box (the object the view's `config_choice` loaded; None without one)
    config: Callable[[], Any]
    # blind mode (issue #15): the annotator whose own labels the views show; None: the resolved labels
    blind_as: Callable[[], str | None] = lambda: None


@dataclass(frozen=True)
class FilterSpec:
    """A scheme-specific filter of the filter bar: a combo whose choices `choices(project)` lists (text, data),
    queried when first opened. `key` is a field of app.store.UnitFilter (e.g. `category`), else a key of its
    `extra` dict, which the store's adapter for the scheme interprets."""

    key: str
    label: str
    tip: str
    choices: Callable[[Any], list[tuple[str, Any]]]


class Versioned(Protocol):
    """What the window reads of a chosen config: its `name@version`."""

    @property
    def ref(self) -> str: ...


class ConfigChoice(Protocol):
    """The versioned configs a scheme's machine scores follow, stored in the project (for violations: the match
    configs). The window shows them in its toolbar box and remembers the choice per project under
    `projects/<project_id>/<settings_key>`; what a config holds is the view's business."""

    title: str  # the box's label, e.g. "Match config"
    tip: str
    settings_key: str

    def refs(self, project: Any) -> list[str]:
        """Every config of the project, oldest first."""
        ...

    def default_ref(self, project: Any) -> str:
        """The config to open on when the user chose none for this project."""
        ...

    def load(self, project: Any, ref: str) -> Versioned:
        """The config `ref` (raises app.errors.UsageError if the project has none by that name)."""
        ...

    def fallback(self) -> Versioned:
        """The config to use when the remembered one is gone."""
        ...


def make_table(model: RecordTableModel, stretch: int | tuple[int, ...] = -1) -> QTableView:
    t = QTableView()
    t.setModel(model)
    HeaderLabels(t)  # the titles held by Qt, copied again at a reset before the layout below (header_labels.py)
    t.setItemDelegate(CellDelegate(t))  # one Python call per cell, not seven (app/gui/record_cells.py)
    model.modelReset.connect(lambda: lay_out_now(t))
    t.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    t.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    t.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    t.setAlternatingRowColors(True)
    t.verticalHeader().setVisible(False)
    t.verticalHeader().setDefaultSectionSize(22)
    t.setWordWrap(False)
    h = t.horizontalHeader()
    h.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    for col in (stretch,) if isinstance(stretch, int) else stretch:
        if col >= 0:
            h.setSectionResizeMode(col, QHeaderView.ResizeMode.Stretch)
    t.setTextElideMode(Qt.TextElideMode.ElideRight)
    if not any("\n" in str(model.headerData(c, Qt.Orientation.Horizontal) or "") for c in range(model.columnCount())):
        h.setTextElideMode(Qt.TextElideMode.ElideRight)  # a narrow column's title shortens with "…", whole on hover
        # (not for two-line titles: Qt elides them as one line, and their columns fit them)
    t.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
    return t


def lay_out_now(table: QTableView) -> None:
    """Lay out a table whose model was just reset now, not on Qt's zero-time timer: a detail view resets its tables
    for every unit shown, and the deferred layout (sections sized to their contents) came after the first paint, so
    every table was painted twice per unit (issue #28 item 6). The result is the deferred layout's."""
    table.horizontalHeader().doItemsLayout()
    table.doItemsLayout()


def title_label() -> QLabel:
    """The bold heading at the top of a detail view (plain text, elided rather than widening the window)."""
    label = ElidedLabel(min_width=80)
    font = label.font()
    font.setBold(True)
    label.setFont(font)
    return label


def view_layout(view: QWidget) -> tuple[QVBoxLayout, QHBoxLayout]:
    """A detail view's outer layout (4 px margins) with its header row already first in it: every view starts so."""
    lay = QVBoxLayout(view)
    lay.setContentsMargins(4, 4, 4, 4)
    head = QHBoxLayout()
    lay.addLayout(head)
    return lay, head


def status_label() -> ElidedLabel:
    """The right-aligned status at the end of a view's header (elided: a long message never widens the window)."""
    label = ElidedLabel()
    label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    return label


def unit_combo(tooltip: str, min_chars: int, on_chosen: Callable[[int], None]) -> QComboBox:
    """The header's box choosing the unit of the sample (checker, method): it shrinks rather than widening the
    window with a long id (the popup shows them whole), and only a click focuses it, so keys stay the view's."""
    box = QComboBox()
    box.setToolTip(tooltip)
    box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    box.setMinimumContentsLength(min_chars)
    box.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
    box.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
    box.activated.connect(on_chosen)
    return box


def column(*items: QWidget | str | tuple[QWidget, int]) -> QWidget:
    """A margin-less vertical stack: a widget, a (widget, stretch) pair, or a string (shown as a plain label)."""
    box = QWidget()
    lay = QVBoxLayout(box)
    lay.setContentsMargins(0, 0, 0, 0)
    for item in items:
        if isinstance(item, str):
            lay.addWidget(plain_label(item))
        elif isinstance(item, tuple):
            lay.addWidget(*item)
        else:
            lay.addWidget(item)
    return box


def side_by_side(left: QWidget, right: QWidget, stretch: tuple[int, int] = (1, 1), *, share: bool = False) -> QSplitter:
    """Two panes in a horizontal splitter, sharing the extra width as `stretch` says; with `share`, the whole
    width from the start (else each pane first gets its size hint: a wide table's pane takes most)."""
    split = _SharedSplitter(stretch if share else None)
    split.addWidget(left)
    split.addWidget(right)
    split.setStretchFactor(0, stretch[0])
    split.setStretchFactor(1, stretch[1])
    return split


class _SharedSplitter(QSplitter):
    """A horizontal splitter that, once first shown at its real width, gives its panes `share` of it."""

    def __init__(self, share: tuple[int, int] | None) -> None:
        super().__init__(Qt.Orientation.Horizontal)
        self._share = share

    def showEvent(self, event: Any) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        if self._share is not None:
            share, self._share = self._share, None
            QTimer.singleShot(0, self, lambda: self.setSizes([self.width() * share[0], self.width() * share[1]]))


class DetailView(QWidget):
    """Base class; subclasses set `scheme` and `actions` and implement the hooks."""

    scheme: ClassVar[str] = ""
    actions: ClassVar[frozenset[str]] = frozenset()  # ids of "view" actions it handles (its own and common ones)
    action_specs: ClassVar[tuple[ActionSpec, ...]] = ()  # its own actions, shown in its menu
    menu: ClassVar[str] = ""  # the title of that menu (the scheme's title when empty)
    filters: ClassVar[tuple[FilterSpec, ...]] = ()
    empty_unit: ClassVar[str] = "(whole sample)"  # the list's text for a unit named '' (a per-sample unit)
    score_title: ClassVar[str] = "Score"  # the list's machine-score column (machine_scores.score)
    scores_follow_config: ClassVar[bool] = False  # Tools ▸ Compute machine scores fills that column for it
    config_choice: ClassVar[ConfigChoice | None] = None  # the configs those scores follow (the window's config box)

    @staticmethod
    def export_count_rows(counts: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Rows ({what, value}) the export preview adds for this scheme, read from the preview's counts."""
        return []

    @staticmethod
    def describe_label(project: Any, sample_id: str, unit: str, kind: str, value: Any) -> list[str] | None:
        """A label value in the words this view uses (one line per item, e.g. "GT 1 “…” ↔ P 2 “…”"), for panels
        that show raw values (adjudication); None: shown as JSON."""
        return None

    @staticmethod
    def calibration_page(panel: "CalibrationPanel") -> QWidget | None:
        """The scheme's own page in the calibration panel, or None for the generic one (calibration_scheme.SchemePage).
        A page offers `set_scheme(scheme)`, `run()`, `curve_setup()`, `refresh_engine(where)`, `shutdown()` and the
        `task` it runs (None when idle). Import the page's module inside the hook: the panel is opened on demand."""
        return None

    request_unit = Signal(str, str)  # ask the window to show another unit (e.g. another checker)
    message = Signal(str)  # a transient status-bar message

    def __init__(self, ctx: ViewContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.row: dict[str, Any] | None = None

    @property
    def project(self) -> Any:
        return self.ctx.session.project

    def current(self) -> tuple[str, str] | None:
        return None if self.row is None else (self.row["sample_id"], self.row["unit"])

    def sample_labels(self, sample_id: str) -> dict[tuple[str, str], Any]:
        """(unit, kind) -> label of the sample as this view may show it: the resolved labels, or in blind mode only
        the session annotator's own (never another annotator's)."""
        return self.project.decisions.sample_labels(sample_id, self.ctx.blind_as())

    def machine_hidden(self) -> bool:
        """Blind mode without anchoring (issue #27, app/gui/blind.py): the machine's labels of the shown unit stay
        hidden until the annotator commits their own (A); the view starts the human's labels empty meanwhile."""
        return self.row is not None and self.ctx.session.machine_hidden(self.row["sample_id"], self.row["unit"])

    def show_unit(self, row: dict[str, Any]) -> None:
        raise NotImplementedError

    def reset(self) -> None:
        """Forget the shown unit (after a failed render), so the next `show_unit` starts from scratch."""
        self.row = None

    def refresh(self) -> None:
        """Re-read the human's decisions for the shown unit (after do/undo/redo)."""
        if self.row is not None:
            self.show_unit(self.row)

    def accept_command(self) -> SetLabels | None:
        """The command "accept" means for the shown unit, or None when there is nothing to accept."""
        return None

    def handle(self, action_id: str) -> bool:
        """Run a scheme-specific action; False if this view does not support it."""
        return False

    def units_of_sample(self) -> list[str]:
        """Other units of the shown sample (for 'next checker')."""
        return []

    def prefetch(self, rows: list[dict[str, Any]]) -> None:
        """Warm caches for units the user is likely to open next (called after a unit is shown)."""

    def shutdown(self) -> None:
        """Cancel background work before the window closes."""
