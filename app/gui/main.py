"""Entry point of the desktop app: `concord gui [PROJECT] [--screenshot FILE.png]` calls `run_gui`."""
from __future__ import annotations

import os
import sys
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QSettings, QTimer
from PySide6.QtWidgets import QApplication, QInputDialog, QMessageBox, QWidget

from app.errors import UsageError
from app.gui import gcguard
from app.gui.compat import guard_none_refcount
from app.gui.environment import quiet_model_loading
from app.gui.plaintext import plain_message
from app.names import BadNameError, annotator_name
from app.store import Project

ORG, APP = "Concord", "Concord"
SCREENSHOT_SIZE = (1500, 940)


GIL_SWITCH_SECONDS = 0.001


def application() -> QApplication:
    """The running QApplication, created on first use (tests and benchmarks share it)."""
    quiet_model_loading()
    responsive_gil()
    app = QApplication.instance()
    if app is None:
        QCoreApplication.setOrganizationName(ORG)
        QCoreApplication.setApplicationName(APP)
        app = QApplication(sys.argv[:1])
        guard_none_refcount()
    gcguard.install()
    assert isinstance(app, QApplication)
    return app


def responsive_gil() -> None:
    """Let the GUI thread take the GIL back within 1 ms of asking, not Python's default 5 ms. A Python callback from
    Qt (a model's `data`, a delegate) needs the GIL; while a worker thread runs Python (the next units' scoring batch,
    ~6 ms of work every 16 units) each hand-over waited up to the switch interval, several times per frame: a repaint
    of 2.5 ms CPU took 23 ms beside a busy worker thread at 5 ms and 7 ms at 1 ms (issue #28 item 6). Workers lose
    a little throughput only while the GUI thread wants the GIL."""
    sys.setswitchinterval(min(sys.getswitchinterval(), GIL_SWITCH_SECONDS))


def resolve_annotator(explicit: str | None, settings: QSettings, *, ask: bool, parent: QWidget | None = None) -> str | None:
    """Who is labeling: explicit argument, then $CONCORD_ANNOTATOR, then the remembered name, else ask once.

    Every name goes through app.names.annotator_name (NFC, no control characters): a bad explicit or environment
    name raises BadNameError naming its source; a bad remembered one is forgotten; a bad typed one is asked again."""
    for candidate, source in ((explicit, "--annotator"), (os.environ.get("CONCORD_ANNOTATOR"), "$CONCORD_ANNOTATOR")):
        if candidate and candidate.strip():
            name = annotator_name(candidate, source)
            settings.setValue("annotator", name)
            return name
    remembered = settings.value("annotator", "", type=str)
    if remembered and remembered.strip():
        try:
            return annotator_name(remembered, "remembered name")
        except BadNameError:
            settings.remove("annotator")
    if not ask:
        return None
    prompt = "Your name (recorded with every decision):"
    while True:
        name, ok = QInputDialog.getText(parent, "Concord", prompt)
        if not ok:
            return None
        if not name.strip():
            continue
        try:
            name = annotator_name(name, "name")
        except BadNameError:  # the label is not plain text: it names the rule, never the typed text
            prompt = ("A name is plain text, without control or formatting characters.\n\n"
                      "Your name (recorded with every decision):")
            continue
        settings.setValue("annotator", name)
        return name


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


def place_window(window: QWidget, settings: QSettings) -> None:
    """The last session's geometry, else the default size fitted to the screen's available area."""
    from app.gui.window import DEFAULT_SIZE

    geometry = settings.value("geometry")
    if geometry is not None and window.restoreGeometry(geometry):
        return
    screen = window.screen() or QApplication.primaryScreen()
    avail = screen.availableGeometry()
    window.resize(min(DEFAULT_SIZE[0], avail.width()), min(DEFAULT_SIZE[1], avail.height()))


def install_excepthook(window: QWidget) -> None:
    """The last resort for an exception no guard caught (Qt only prints those): it is shown in the window too."""
    previous = sys.excepthook

    def hook(kind: type[BaseException], exc: BaseException, tb: object) -> None:
        previous(kind, exc, tb)  # type: ignore[arg-type]
        messages = getattr(window, "messages", None)
        if messages is not None and isinstance(exc, Exception):
            try:
                messages.report("unexpected", "Unexpected error", exc, echo=False)
            except Exception:  # noqa: BLE001 - never fail inside the hook
                pass

    sys.excepthook = hook


def refuse_damaged(project: Project) -> None:
    """A screenshot is taken unattended (docs, smoke tests): of a damaged file it would show banners over what could
    be read, print the tracebacks of what could not and exit 0. Checked first instead (app.store.health, seconds),
    and refused as every other command refuses a damaged file: exit 2, `concord check --repair`."""
    from app.store import health
    from app.store.project import damaged

    problems = health.quick_check(project.conn)
    if problems:
        project.close()
        raise damaged(project.path, problems[0].strip())


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
            plain_message(None, "Concord", str(exc), QMessageBox.Icon.Critical).exec()
            return 2
    try:
        who = resolve_annotator(annotator, settings, ask=not screenshot)
    except BadNameError as exc:
        if project is not None:
            project.close()
        if screenshot:
            raise
        plain_message(None, "Concord", str(exc), QMessageBox.Icon.Critical).exec()
        return 2
    if who is None:
        if not screenshot:
            if project is not None:
                project.close()
            return 1
        who = "screenshot"
    if screenshot and project is not None:
        refuse_damaged(project)
    window = MainWindow(project, who, settings=settings, record_time=not screenshot)
    if screenshot:
        window.resize(*SCREENSHOT_SIZE)
        window.show()
        grab(window, screenshot)
        window.close()
        return 0
    place_window(window, settings)
    install_excepthook(window)
    window.show()
    QTimer.singleShot(0, window.list.setFocus)
    return int(app.exec())


if __name__ == "__main__":
    sys.exit(run_gui(sys.argv[1] if len(sys.argv) > 1 else None))
