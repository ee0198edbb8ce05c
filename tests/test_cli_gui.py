"""`concord gui PROJECT --screenshot FILE.png` opens the real window on an imported project, offscreen."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main

CHECKER = "baseline@1.0|gpt-4o-mini"


def test_gui_screenshot_of_an_imported_project(tmp_path: Path, qapp: object, capsys: pytest.CaptureFixture[str]) -> None:
    from PySide6.QtGui import QImage

    from app.gui.main import SCREENSHOT_SIZE

    proj = str(tmp_path / "g.concord")
    text = "Limited offer: the best serum ever made 🌟, buy now!"
    rows = [{"id": f"s{i}", "text": text,
             "ground_truth": [{"quote": "the best serum ever made", "rule": "No superlatives"}],
             "predictions": {CHECKER: [{"quote": "buy now", "rule": "No pressure"}]}} for i in range(3)]
    data = tmp_path / "g.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    assert main(["init", proj]) == 0
    assert main(["import", proj, str(data)]) == 0
    png = tmp_path / "shots" / "window.png"
    assert main(["gui", proj, "--screenshot", str(png)]) == 0
    image = QImage(str(png))
    assert not image.isNull()
    assert (image.width(), image.height()) == SCREENSHOT_SIZE
    capsys.readouterr()


def test_gui_command_forwards_its_arguments(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import app.gui.main

    calls: list[tuple[object, dict]] = []

    def fake_run_gui(project_path: object, **kw: object) -> int:
        calls.append((project_path, kw))
        return 7

    monkeypatch.setattr(app.gui.main, "run_gui", fake_run_gui)
    proj = str(tmp_path / "f.concord")
    assert main(["init", proj]) == 0
    assert main(["gui", proj, "--annotator", "ana"]) == 7
    assert main(["gui"]) == 7
    assert calls == [(proj, {"screenshot": None, "annotator": "ana"}), (None, {"screenshot": None})]
