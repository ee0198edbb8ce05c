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


def test_the_panels_know_the_window_only_through_their_host(qtbot, open_window, project_path) -> None:  # type: ignore[no-untyped-def]
    """The calibration, adjudication, agreement and export panels get the PanelsPart (window_context.PanelHost):
    its context and its few services, never the MainWindow; the part keeps one of each and closes them with us."""
    from app.gui.adjudication import AdjudicationPanel
    from app.gui.agreement_panel import AgreementPanel
    from app.gui.calibration_panel import CalibrationPanel
    from app.gui.export_dialog import ExportDialog

    w = open_window(project_path)
    host = w.panels
    panels = [CalibrationPanel.open_for(host), AdjudicationPanel.open_for(host, ("v1", C1)),
              AgreementPanel.open_for(host, run=False), ExportDialog.open_for(host)]
    assert CalibrationPanel.open_for(host) is panels[0] and AgreementPanel.open_for(host, run=False) is panels[2]
    for panel in (*panels, panels[2].plan):
        assert panel.ctx is w.ctx and getattr(panel, "host", host) is host, type(panel).__name__
    pages = [p for p in (*panels[0].own_pages.values(), panels[0].scheme_page) if p is not None]
    assert pages and all(p.panel is panels[0] for p in pages)  # a calibration page asks its panel
    for panel in (*panels, panels[2].plan, *pages):
        held = [k for k, v in vars(panel).items() if v is w]
        assert held == [], (type(panel).__name__, held)
    assert panels[3].parent() is w  # the export dialog is a dialog of the window (a Qt parent, nothing it reads)
    assert list(host.opened) == ["calibration", "adjudication", "agreement"]
    w.close()
    assert not any(p.isVisible() for p in panels[:3])
    panels[3]._run_preview()  # a preview the dialog's timer starts after the window closed its project: nothing
    assert panels[3].preview_task is None
    panels[3].close()
