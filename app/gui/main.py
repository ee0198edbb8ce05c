"""Entry point of the desktop app: `concord gui [PROJECT] [--screenshot FILE.png]` calls `run_gui`."""
from __future__ import annotations

import os
import sys
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QSettings, QTimer
from PySide6.QtWidgets import QApplication, QInputDialog, QMessageBox, QWidget

from app.errors import UsageError
from app.gui.compat import guard_none_refcount
from app.store import Project

ORG, APP = "Concord", "Concord"
SCREENSHOT_SIZE = (1500, 940)


def application() -> QApplication:
    """The running QApplication, created on first use (tests and benchmarks share it)."""
    app = QApplication.instance()
    if app is None:
        QCoreApplication.setOrganizationName(ORG)
        QCoreApplication.setApplicationName(APP)
        app = QApplication(sys.argv[:1])
        guard_none_refcount()
    assert isinstance(app, QApplication)
    return app


def resolve_annotator(explicit: str | None, settings: QSettings, *, ask: bool, parent: QWidget | None = None) -> str | None:
    """Who is labeling: explicit argument, then $CONCORD_ANNOTATOR, then the remembered name, else ask once."""
    for candidate in (explicit, os.environ.get("CONCORD_ANNOTATOR"), settings.value("annotator", "", type=str)):
        if candidate and candidate.strip():
            name = candidate.strip()
            settings.setValue("annotator", name)
            return name
    if not ask:
        return None
    while True:
        name, ok = QInputDialog.getText(parent, "Concord", "Your name (recorded with every decision):")
        if not ok:
            return None
        if name.strip():
            settings.setValue("annotator", name.strip())
            return name.strip()


def grab(widget: QWidget, path: str | Path, *, wait_ms: int = 20000) -> None:
    """Render `widget` to a PNG once background work settles (offscreen works too)."""
    from app.gui.window import MainWindow

    app = application()
    if isinstance(widget, MainWindow):
        widget.runner.wait_all(wait_ms)
    for _ in range(5):
        app.processEvents()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    if not widget.grab().save(str(path)):
        raise UsageError(f"{path}: could not write the screenshot")


def run_gui(project_path: str | None, screenshot: str | None = None, *, annotator: str | None = None,
            settings: QSettings | None = None) -> int:
    """Open the main window on `project_path` (or empty); with `screenshot`, render it to the PNG and exit 0."""
    from app.gui.window import MainWindow

    app = application()
    settings = settings or QSettings(ORG, APP)
    project = None
    if project_path:
        try:
            project = Project.open(project_path)
        except UsageError as exc:
            if screenshot:
                raise
            QMessageBox.critical(None, "Concord", str(exc))
            return 2
    who = resolve_annotator(annotator, settings, ask=not screenshot)
    if who is None:
        if not screenshot:
            if project is not None:
                project.close()
            return 1
        who = "screenshot"
    window = MainWindow(project, who, settings=settings, record_time=not screenshot)
    if screenshot:
        window.resize(*SCREENSHOT_SIZE)
        window.show()
        grab(window, screenshot)
        window.close()
        return 0
    geometry = settings.value("geometry")
    if geometry is not None:
        window.restoreGeometry(geometry)
    else:
        window.resize(1500, 940)
    window.show()
    QTimer.singleShot(0, window.list.setFocus)
    return int(app.exec())


if __name__ == "__main__":
    sys.exit(run_gui(sys.argv[1] if len(sys.argv) > 1 else None))
