"""The main window's detail pane: the scheme's view of the selected unit (one view per scheme, built on first use),
what is shown when rendering fails, showing a unit asked for from elsewhere, and which decisions are on.

The detail pane and the list stay in step: `shown` is the unit the detail pane rendered successfully; if rendering
the selected unit fails, the pane says so and every decision is disabled until a unit is shown again. The pane asks
the review list through its interface (window_context.ListPane) and tells the window by signals: which decisions
are on (`decisions_changed`), and that a unit asked for from elsewhere wants the window in front.
"""
from __future__ import annotations

import time
from typing import Any

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import QStackedWidget

from app.errors import UsageError
from app.gui.fitting import wrap_long_labels
from app.gui.plaintext import plain_label
from app.gui.views import DetailView, ViewContext, view_class
from app.gui.window_context import ListPane, WindowContext
from app.gui.window_parts import Part, guarded, last_unit_key

RESUME_WRITE_MS = 2000
OPEN_PREFETCH_MS = 150


class DetailPanePart(Part):
    decisions_changed = Signal(object)  # the view a decision may act on (None: none), after every change of it
    front_requested = Signal()  # a unit asked for from elsewhere is shown: bring the window to the front

    def __init__(self, ctx: WindowContext, units: ListPane, parent: QObject | None = None) -> None:
        super().__init__(ctx, parent)
        self.units = units
        self.views: dict[str, DetailView] = {}
        self.shown: tuple[str, str] | None = None  # the unit the pane rendered (None: nothing or failed)
        self._shown_at = 0.0
        # the unit to resume at (settings key, unit), written a moment after the last move, not on every move:
        # QSettings rewrites and syncs its whole file on each change, in the GUI thread (issue #28 item 6)
        self._resume: tuple[str, list[str]] | None = None
        self._resume_timer = QTimer(self)
        self._resume_timer.setSingleShot(True)
        self._resume_timer.setInterval(RESUME_WRITE_MS)
        self._resume_timer.timeout.connect(self.remember_now)
        # the first unit of a project prefetches after the window's first paint: the scoring batch's thread, started
        # at once, ran Python beside the first layout and paint and held up the window's opening
        self._prefetch_delay = OPEN_PREFETCH_MS

    def build(self) -> QStackedWidget:
        """The stack of pages on the right: a placeholder, the failure page, then each scheme's view."""
        self.stack = QStackedWidget()
        self.placeholder = plain_label("Open a project (Ctrl+O) or create one (Ctrl+N), or pick a unit in the list.")
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.stack.addWidget(self.placeholder)
        self.failed_page = plain_label(wrap=True)  # the selected unit could not be shown: say so, never a stale unit
        self.failed_page.setObjectName("failed_page")
        self.failed_page.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.failed_page.setStyleSheet("color:#b71c1c;")
        self.stack.addWidget(self.failed_page)
        return self.stack

    def _view(self, scheme: str) -> DetailView | None:
        if scheme not in self.views:
            cls = view_class(scheme)  # the scheme's own view, else the generic one
            if self.session is None:
                return None
            ctx = self.ctx
            view = cls(ViewContext(self.session, ctx.runner, ctx.progress, ctx.config, lambda: ctx.blind_as))
            view.request_unit.connect(self.show_unit_by_key)
            view.message.connect(lambda m: self.status_message(m, 6000))
            wrap_long_labels(view)  # a long instruction wraps rather than squeezing the list (app/gui/fitting.py)
            self.views[scheme] = view
            self.stack.addWidget(view)
        return self.views[scheme]

    @property
    def current_view(self) -> DetailView | None:
        w = self.stack.currentWidget()
        return w if isinstance(w, DetailView) else None

    def show_unit(self, row: dict[str, Any]) -> bool:
        """Render `row` in the detail pane; True on success. On failure the pane says which unit failed and every
        decision is disabled until a unit renders, so no key acts on a unit the user does not see."""
        key = (row["sample_id"], row["unit"])
        if key != self.shown:
            self.leave_unit()
        view = self._view(row["scheme"])
        if view is None:
            self.show_failed(row, UsageError(f"no view for scheme {row['scheme']!r}"))
            return False
        try:
            view.show_unit(row)
        except Exception as exc:  # noqa: BLE001 - the store failed under us: say so, never keep a stale pane
            self.show_failed(row, exc)
            return False
        self.stack.setCurrentWidget(view)
        self.ctx.messages.dismiss("show")
        if key != self.shown:
            self.shown, self._shown_at = key, time.monotonic()
        self._update_action_state()
        QTimer.singleShot(self._prefetch_delay, self, self._prefetch)
        self._prefetch_delay = 0
        return True

    def show_failed(self, row: dict[str, Any], exc: BaseException) -> None:
        self.leave_unit()  # shown = None: decisions are off until a unit renders
        for v in self.views.values():
            v.reset()
        unit = row.get("unit") or "(ground truth only)"
        self.failed_page.setText(f"Could not show sample {row['sample_id']} · {unit}.\n\nDecisions are off until a "
                                 "unit is shown: press J or K, click a unit in the list, or Retry.")
        self.stack.setCurrentWidget(self.failed_page)
        self._update_action_state()
        self.report_error("show", f"Could not show sample {row['sample_id']} · {unit}", exc,
                          action=("Retry", self.retry_show))

    def retry_show(self) -> None:
        row = self.units.model.row(self.units.current_row())
        if row is not None:
            self.show_unit(row)

    @guarded("Could not show the unit")
    def show_unit_by_key(self, sample_id: str, unit: str) -> None:
        i = self.units.model.row_of(sample_id, unit)
        if i >= 0:
            self.units.select_row(i)
            return
        if self.project is None:
            return
        for u in self.project.units.units_for_sample(sample_id):
            if u["unit"] == unit:
                self.units.clear_selection()
                self.show_unit({**u, "status": self.project.decisions.current(sample_id, unit, "status", self.ctx.blind_as)
                                or "unlabeled"})
                return

    @guarded("Could not open the unit", "reveal")
    def reveal_unit(self, sample_id: str, unit: str, pair: tuple[int, int] | None = None) -> bool:
        """Show a unit asked for from elsewhere (the calibration panel's disagreements): clear the filters that
        would hide it, select it in the list, select `pair` in its detail view, and bring this window to the front."""
        p = self.project
        if p is None:
            return False
        info = {u["unit"]: u for u in p.units.units_for_sample(sample_id)}.get(unit)
        if info is None:
            self.status_message(f"{sample_id} · {unit}: not in this project", 6000)
            return False
        filters = self.units.filters
        f = filters.current()
        status = p.decisions.current(sample_id, unit, "status", self.ctx.blind_as) or "unlabeled"
        hiding = [name for name, hides in (("scheme", bool(f.scheme) and f.scheme != info["scheme"]),
                                           ("status", bool(f.statuses) and status not in f.statuses),
                                           ("unit", bool(f.units) and unit not in f.units)) if hides]
        cleared = filters.clear(tuple(hiding)) if hiding else []
        row = self.units.find_row(sample_id, unit)
        if row < 0:  # the views' filters and search are decided by the store: clear them if still not listed
            cleared += filters.clear((*filters.extra, "search"))
            row = self.units.find_row(sample_id, unit)
        if row >= 0:
            self.units.select_row(row)
        else:
            self.show_unit_by_key(sample_id, unit)
        if cleared:
            self.status_message(f"Cleared the filter(s) that hid {sample_id}: {', '.join(cleared)}", 6000)
        view = self.shown_view()
        if pair is not None and view is not None and view.current() == (sample_id, unit) and hasattr(view, "select_pair"):
            view.select_pair(*pair)
        self.front_requested.emit()
        return view is not None and view.current() == (sample_id, unit)

    @guarded("Could not prefetch scores for the next units", "prefetch")
    def _prefetch(self) -> None:
        view, i = self.current_view, self.units.current_row()
        if view is None or i < 0 or self.session is None:
            return
        rows = [r for r in (self.units.model.row(j) for j in range(i + 1, i + 17)) if r is not None]
        view.prefetch(rows)

    def leave_unit(self) -> None:
        """Record the time spent on the unit being left, and remember it to resume there next time (written to the
        settings by `remember_now`, soon after; the window's close writes it at once)."""
        key = last_unit_key(self.project)
        if self.shown is not None and self.session is not None and key is not None:
            self.session.log_time(self.shown[0], self.shown[1], time.monotonic() - self._shown_at)
            self._resume = (key, list(self.shown))
            if not self._resume_timer.isActive():
                self._resume_timer.start()
        self.shown = None

    def remember_now(self) -> None:
        """Write the unit to resume at, if a move since the last write left one."""
        self._resume_timer.stop()
        if self._resume is not None:
            (key, unit), self._resume = self._resume, None
            self.ctx.settings.setValue(key, unit)

    def shown_view(self) -> DetailView | None:
        """The detail view, if it shows the unit it rendered last (the only unit a decision may act on)."""
        view = self.current_view
        if view is None or self.shown is None or view.current() != self.shown:
            return None
        return view

    def _update_action_state(self) -> None:
        self.decisions_changed.emit(self.shown_view())

    def clear(self) -> None:
        """Nothing selected: the placeholder, and no decision can act on a unit."""
        self.leave_unit()
        self.stack.setCurrentWidget(self.placeholder)
        self._update_action_state()

    def drop_views(self) -> None:
        """Another project: every view goes (each is built again for the new session on first use)."""
        self.leave_unit()
        self._prefetch_delay = OPEN_PREFETCH_MS
        for v in self.views.values():
            v.shutdown()
            self.stack.removeWidget(v)
            v.deleteLater()
        self.views = {}

    def shutdown(self) -> None:
        for v in self.views.values():
            v.shutdown()
