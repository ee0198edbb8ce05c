"""The main window composes parts (issue #25 item 3): it is a plain QMainWindow, its parts hold their own state and
talk through the context, the interfaces handed to them and signals -- not through the window's attributes."""
from __future__ import annotations

from PySide6.QtWidgets import QMainWindow

from app.gui.window import MainWindow
from app.gui.window_context import WindowContext
from app.gui.window_parts import Part
from tests.gui_data import C1, open_window, project_path, settings  # noqa: F401 - fixtures


def test_the_window_is_no_mixin_and_its_parts_do_not_hold_it(qtbot, open_window, project_path) -> None:  # type: ignore[no-untyped-def]
    assert MainWindow.__bases__ == (QMainWindow,)
    w = open_window(project_path)
    parts = {name: getattr(w, name) for name in ("units", "detail", "navigation", "decisions", "chrome",
                                                 "project_part", "panels")}
    for name, part in parts.items():
        assert isinstance(part, Part) and part.ctx is w.ctx, name
    assert isinstance(w.ctx, WindowContext) and w.ctx.project is w.project
    # the list, the pane, navigation and decisions know the window only through the context and their interfaces
    for name in ("units", "detail", "navigation", "decisions"):
        held = [k for k, v in vars(parts[name]).items() if v is w and k != "_dialog_parent"]  # the note dialog's
        assert held == [], (name, held)


def test_parts_talk_by_signals(qtbot, open_window, project_path) -> None:  # type: ignore[no-untyped-def]
    w = open_window(project_path)
    units, detail = w.units, w.detail
    units.select_row(units.model.row_of("v1", C1) + 1)
    with qtbot.waitSignal(units.row_selected) as sel:
        units.select_row(units.model.row_of("v1", C1))
    assert (sel.args[0]["sample_id"], sel.args[0]["unit"]) == ("v1", C1)
    assert detail.shown == ("v1", C1) and w.actions_by_id["accept"].isEnabled()  # the pane showed it: decisions on
    with qtbot.waitSignal(detail.decisions_changed) as dec:
        units.cleared.emit()  # e.g. the list failed to load
    assert dec.args == [None] and detail.shown is None and not w.actions_by_id["accept"].isEnabled()
    w.ctx.status_message("a message from any part", 0)
    assert w.status_line.text() == "a message from any part"
