"""File ▸ New project… and File ▸ Import… (issue #27 item 6): a user with their own file never needs the terminal.

Both reuse the CLI's services, never copies of them: a new project is `Project(path, create=True)` as `concord init`
makes it, and an import is `app.io.imports.import_file` (validate everything, then one transaction) run in a worker
thread with the window's progress bar and cancel button. At the end a summary dialog shows what `concord import`
prints (its warnings, `ImportReport.summary()` and the project's counts: app.commands.importing.summary_text); a
refused file shows the CLI's message (file, line, field), and the project is unchanged.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QFileDialog, QPlainTextEdit, QVBoxLayout, QWidget

from app.gui.plaintext import plain_label
from app.gui.workers import Task, TaskProgress

if TYPE_CHECKING:
    from app.gui.window import MainWindow

SUFFIX = ".concord"


class ImportSummary(QDialog):
    """The end of an import (or of a refused one): a title line and the CLI's text, plain text by construction."""

    def __init__(self, parent: QWidget, title: str, headline: str, text: str, ok: bool) -> None:
        super().__init__(parent)
        self.setObjectName("import_summary")
        self.setWindowTitle(title)
        self.ok = ok
        lay = QVBoxLayout(self)
        self.headline = plain_label(headline, wrap=True)
        self.headline.setStyleSheet("" if ok else "color:#b71c1c;")
        lay.addWidget(self.headline)
        self.details = QPlainTextEdit()  # file names and field values are shown as typed, never as markup
        self.details.setObjectName("import_details")
        self.details.setReadOnly(True)
        self.details.setPlainText(text)
        self.details.setMinimumSize(560, 180)
        lay.addWidget(self.details, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok)
        buttons.accepted.connect(self.accept)
        lay.addWidget(buttons)


def _show(window: "MainWindow", title: str, headline: str, text: str, ok: bool) -> ImportSummary:
    dialog = ImportSummary(window, title, headline, text, ok)
    window.import_summary = dialog  # the latest one (tests read it; a new import replaces it)
    dialog.open()  # window-modal, without a nested event loop
    return dialog


def new_project(window: "MainWindow") -> None:
    """Ask for a new file, create an empty project there (as `concord init` does), open it, then offer an import."""
    path, _ = QFileDialog.getSaveFileName(window, "New Concord project", "", f"Concord projects (*{SUFFIX})")
    if not path:
        return
    target = Path(path) if Path(path).suffix else Path(path + SUFFIX)
    if target.exists() and target.stat().st_size > 0:  # never over an existing file, project or not
        _show(window, "New project", "Not created", f"{target}: the file exists; choose a new name (File ▸ Open… opens "
              "an existing project)", ok=False)
        return
    from app.store import Project

    try:
        project = Project(target, create=True)
    except Exception as exc:  # noqa: BLE001 - a read-only folder, a full disk: said in the window
        _show(window, "New project", "Not created", _message(exc, target), ok=False)
        return
    window.set_project(project)
    window.status_message(f"created {target} (schema {project.schema_version}); next: File ▸ Import…", 8000)
    import_into(window)


def import_into(window: "MainWindow") -> Task | None:
    """Ask for a file and import it into the open project in a worker; the summary dialog shows at the end."""
    project = window.project
    if project is None:
        window.status_message("Open or create a project first (File ▸ Open… or File ▸ New project…)", 6000)
        return None
    from calibration.schemes.base import scheme_infos

    pattern = " ".join(dict.fromkeys(f"*{s}" for i in scheme_infos() for s in i.file_suffixes))  # what import reads
    path, _ = QFileDialog.getOpenFileName(window, f"Import into {project.path.name}", "",
                                          f"Records ({pattern});;All files (*)")
    if not path:
        return None
    return start_import(window, Path(path))


def start_import(window: "MainWindow", source: Path) -> Task:
    """Run `import_file` for `source` on its own connection (one per thread) and report the outcome."""
    assert window.project is not None
    project_path = window.project.path

    def work(progress: TaskProgress) -> tuple[str, Any]:
        from app.errors import UsageError
        from app.io.import_summary import summary_text, warning_lines
        from app.io.imports import import_file
        from app.store import Project

        try:
            with Project.open(project_path) as p:
                report = import_file(p, source, progress=progress)
                counts = p.counts.unit_counts()["schemes"]
        except UsageError as exc:  # a refused file (every problem listed), a wrong option: nothing was written
            return "refused", str(exc)
        except OSError as exc:
            return "refused", _message(exc, project_path)
        return "done", "\n".join([*warning_lines(report.warnings), summary_text(report, counts)])

    task = Task(work, "import")
    task.signals.finished.connect(lambda result: _finished(window, source, project_path, result))
    task.signals.cancelled.connect(lambda: _show(window, "Import", f"Import of {source.name} cancelled",
                                                 "Nothing was imported; the project is unchanged.", ok=False))
    window.progress.track(task, f"Importing {source.name}…")
    window.runner.start(task)
    return task


def _finished(window: "MainWindow", source: Path, project_path: Path, result: tuple[str, Any]) -> None:
    outcome, text = result
    if outcome != "done":
        _show(window, "Import", f"{source.name} was not imported; the project is unchanged", text, ok=False)
        return
    if window.project is not None and window.project.path == project_path:
        window.open_project(str(project_path))  # list, filters and counts read the new samples
    _show(window, "Import", f"Imported {source.name}", text, ok=True)


def _message(exc: BaseException, project: Any) -> str:
    """The CLI's sentence for a file-system or database error (the services app.cli.explain uses), else the error."""
    from app.errors import os_error_message
    from app.store.failures import store_error_message

    found = os_error_message(exc, project) if isinstance(exc, OSError) else store_error_message(exc, project)
    return found or str(exc)
