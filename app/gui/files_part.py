"""The window's slots for File ▸ New project…, File ▸ Import… (app/gui/import_dialog.py) and Decide ▸ Hide machine
labels until my decision (app/gui/blind.py): a part holding thin handlers the action registry calls by name. The
dialogs act on the host window (they open projects on it and read its list and session through its views)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject

from app.gui import blind
from app.gui import import_dialog as importing
from app.gui.window_parts import Part, guarded

if TYPE_CHECKING:
    from app.gui.window import MainWindow
    from app.gui.window_context import WindowContext


class FilesPart(Part):
    def __init__(self, ctx: "WindowContext", host: "MainWindow", parent: QObject | None = None) -> None:
        super().__init__(ctx, parent)
        self.host = host

    @guarded("Could not create the project", "new_project")
    def new_project_dialog(self) -> None:
        importing.new_project(self.host)

    @guarded("Could not import", "import")
    def import_dialog(self) -> None:
        importing.import_into(self.host)

    @guarded("Could not change the setting", "hide_machine")
    def set_hide_machine(self, on: bool) -> None:
        blind.set_hiding(self.host, bool(on))
