"""Blind mode without anchoring in the window (issue #27): while the machine's labels of a unit are hidden from the
annotator (app/store/reveals.py; `Session.machine_hidden`), the views start the human's labels empty instead of from
the machine's, hide the widgets that show machine labels or scores, and "accept" (A) commits the annotator's own
labels (app.corrections.commit), which reveals the machine's for comparison. While the setting is on, the unit
list shows only sample, scheme, unit and status: its machine score and the schemes' own columns (which carry
machine figures such as TRACe judges' scores or a judge's verdict) are hidden. The window title says so.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QWidget

if TYPE_CHECKING:
    from app.gui.window import MainWindow

HIDDEN_NOTE = "machine labels hidden until you commit yours (A)"
TITLE_NOTE = " (machine labels after your decision)"
KEPT_COLUMNS = frozenset({"sample_id", "scheme", "unit", "status"})  # the unit list's columns without machine figures


def show_machine(hidden: bool, *widgets: QWidget) -> None:
    """Hide the widgets that show machine labels while they are hidden, show them again once revealed."""
    for w in widgets:
        w.setHidden(hidden)


def apply_to_window(window: "MainWindow") -> None:
    """After a project is set: hide the list's machine scores while the setting is on, and say so in the title and
    in the Decide menu's check box."""
    title = window.windowTitle().removesuffix(TITLE_NOTE)
    window.setWindowTitle(title + TITLE_NOTE if hiding(window) else title)
    action = window.actions_by_id.get("hide_machine")
    if action is not None:
        action.blockSignals(True)
        action.setChecked(hiding(window))
        action.setEnabled(window.session is not None)
        action.blockSignals(False)
    if not getattr(window.model, "_blind_sync", False):  # the columns change with the schemes shown: every reset
        window.model.modelReset.connect(lambda: apply_columns(window))
        window.model._blind_sync = True  # type: ignore[attr-defined]
    apply_columns(window)


def hiding(window: "MainWindow") -> bool:
    return window.session is not None and window.session.hide_machine


def apply_columns(window: "MainWindow") -> None:
    """Hide the list's columns that may carry machine figures while machine labels are hidden (app/gui/models.py
    list_columns: the machine score and the schemes' own columns); shown again when the setting is off."""
    hide = hiding(window)
    for i, c in enumerate(window.model.columns):
        window.list.setColumnHidden(i, hide and c.key not in KEPT_COLUMNS)


def set_hiding(window: "MainWindow", on: bool) -> None:
    """The Decide menu's check box: store the project setting (as `concord config --hide-machine`), then show or
    hide the machine's labels at once."""
    session = window.session
    if session is None:
        return
    session.project.reveals.set_hide_machine(on)
    session.hide_machine = on
    apply_to_window(window)
    view = window.shown_view()
    if view is not None:
        view.refresh()
    window.status_message("Machine labels: hidden until your own decision (A commits it)" if on
                          else "Machine labels: shown at once", 6000)
