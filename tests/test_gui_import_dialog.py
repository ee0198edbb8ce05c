"""Issue #27 item 6: File ▸ New project… and File ▸ Import… through the real window (dialogs driven by patching
QFileDialog): the CLI's importer in a worker with progress, its summary (the counts `concord import` prints), and a
refused file shown with the CLI's message (file, line, field) with the project unchanged."""
from __future__ import annotations

import re
from pathlib import Path

from PySide6.QtWidgets import QFileDialog

from app.cli import main
from app.store import Project
from tests.gui_data import make_project, open_window, settings  # noqa: F401 - fixtures
from tests.jsonl_files import write_jsonl

GOOD = [
    {"id": "n1", "text": "Buy now, best price ever!", "ground_truth": [{"rule": "No pressure", "quote": "Buy now"}],
     "predictions": {"naive@1.0|m": [{"rule": "Pressure", "quote": "Buy now"},
                                     {"rule": "Superlative", "quote": "best price ever"}]}},
    {"id": "n2", "text": "Calm words <b>only</b>.", "ground_truth": [], "predictions": {"naive@1.0|m": []}},
]


def _patch_dialogs(monkeypatch, save: Path | None = None, open_: Path | None = None) -> None:  # type: ignore[no-untyped-def]
    if save is not None:
        monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(save), "")))
    if open_ is not None:
        monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(open_), "")))


def _empty_window(qtbot, settings):  # type: ignore[no-untyped-def]
    """The app started without a project (`concord gui` with no PROJECT)."""
    from app.gui.window import MainWindow

    w = MainWindow(None, "tester", settings=settings)
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    return w


def _wait_summary(qtbot, w):  # type: ignore[no-untyped-def]
    qtbot.waitUntil(lambda: w.import_summary is not None, timeout=60000)
    return w.import_summary


def _cli_import(tmp_path: Path, file: Path, capsys) -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    other = tmp_path / "cli.concord"
    if not other.exists():
        Project.create(other).close()
    capsys.readouterr()
    code = main(["import", str(other), str(file)])
    out = capsys.readouterr()
    return code, out.out, out.err


def _no_timing(text: str) -> str:
    return re.sub(r" in \d+\.\d s", " in _ s", text).strip()


def test_new_project_then_import_shows_the_cli_summary(qtbot, settings, tmp_path, monkeypatch, capsys):  # type: ignore[no-untyped-def]
    data = write_jsonl(tmp_path / "checks.jsonl", GOOD)
    target = tmp_path / "fresh"  # the .concord ending is added
    _patch_dialogs(monkeypatch, save=target, open_=data)
    w = _empty_window(qtbot, settings)
    tracked: list[str] = []
    track = w.progress.track
    monkeypatch.setattr(w.progress, "track", lambda task, title: (tracked.append(title), track(task, title)))
    w.actions_by_id["new_project"].trigger()  # File ▸ New project…, which goes on to File ▸ Import…
    summary = _wait_summary(qtbot, w)
    assert summary.ok and "Imported checks.jsonl" in summary.headline.text()
    w.runner.wait_all(10000)
    assert w.project is not None and w.project.path == tmp_path / "fresh.concord"
    assert w.model.rowCount() > 0 and {w.model.row(i)["sample_id"] for i in range(w.model.rowCount())} == {"n1", "n2"}
    assert tracked[0] == "Importing checks.jsonl…"  # the status bar's progress and cancel button ran for it
    qtbot.waitUntil(lambda: not w.progress.isVisible())
    code, out, _err = _cli_import(tmp_path, data, capsys)
    assert code == 0
    shown = summary.details.toPlainText()
    assert _no_timing(shown).replace(str(data), "FILE") == _no_timing(out).replace(str(data), "FILE")
    assert "2 added" in shown and "project now:" in shown


def test_refused_file_shows_the_cli_message_and_leaves_the_project_unchanged(qtbot, open_window, tmp_path, monkeypatch,  # type: ignore[no-untyped-def]
                                                                              capsys):
    path = make_project(tmp_path / "p.concord")
    bad = write_jsonl(tmp_path / "bad.jsonl", [GOOD[0], {"id": "n2", "text": "no ground truth key", "predictions": {}}])
    _patch_dialogs(monkeypatch, open_=bad)
    w = open_window(path)

    def state() -> tuple:
        p = w.project
        return (p.table_counts(), [r["id"] for r in p.query("SELECT id FROM samples ORDER BY id")])

    before = state()
    w.actions_by_id["import"].trigger()
    summary = _wait_summary(qtbot, w)
    assert not summary.ok and "not imported; the project is unchanged" in summary.headline.text()
    assert state() == before
    code, _out, err = _cli_import(tmp_path, bad, capsys)
    assert code == 2
    shown = summary.details.toPlainText()
    assert err.strip() == f"concord import: {shown}"  # the CLI's own message, word for word
    assert f"{bad}:2" in shown and "ground_truth" in shown  # names the file, the line and the field


def test_import_needs_an_open_project(qtbot, settings, monkeypatch):  # type: ignore[no-untyped-def]
    asked: list[int] = []
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: asked.append(1) or ("", "")))
    w = _empty_window(qtbot, settings)
    w.actions_by_id["import"].trigger()
    assert not asked and w.import_summary is None


def test_new_project_never_writes_over_an_existing_file(qtbot, settings, tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    existing = tmp_path / "notes.concord"
    existing.write_text("my own notes\n", encoding="utf-8")
    _patch_dialogs(monkeypatch, save=existing)
    w = _empty_window(qtbot, settings)
    w.actions_by_id["new_project"].trigger()
    assert w.import_summary is not None and not w.import_summary.ok
    assert "the file exists" in w.import_summary.details.toPlainText()
    assert existing.read_text(encoding="utf-8") == "my own notes\n" and w.project is None
