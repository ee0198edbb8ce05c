"""The window's slots for File ▸ New project…, File ▸ Import… (app/gui/import_dialog.py) and Decide ▸ Hide machine
labels until my decision (app/gui/blind.py): thin handlers the action registry calls by name on the window."""
from __future__ import annotations

from typing import TYPE_CHECKING

from app.gui import blind
from app.gui import import_dialog as importing
from app.gui.window_parts import WindowPart, guarded

if TYPE_CHECKING:
    from app.gui.import_dialog import ImportSummary


class FilesPart(WindowPart):
    import_summary: "ImportSummary | None" = None  # the latest import's summary dialog

    @guarded("Could not create the project", "new_project")
    def new_project_dialog(self) -> None:
        importing.new_project(self)  # type: ignore[arg-type]

    @guarded("Could not import", "import")
    def import_dialog(self) -> None:
        importing.import_into(self)  # type: ignore[arg-type]

    @guarded("Could not change the setting", "hide_machine")
    def set_hide_machine(self, on: bool) -> None:
        blind.set_hiding(self, bool(on))  # type: ignore[arg-type]
