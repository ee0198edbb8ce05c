"""Export dialog: live preview counts, problems shown before writing, export in a worker (same code as the CLI)."""
from __future__ import annotations

import json
from pathlib import Path

from app.schemes.violations.corrections import set_matches
from app.gui.export_dialog import ExportDialog
from tests.gui_data import C1, C2, open_window, project_path, settings  # noqa: F401 - fixtures


def test_export_dialog_previews_then_writes(qtbot, qtmodeltester, open_window, project_path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    w = open_window(project_path)
    w.session.do(set_matches("v1", C1, [(0, 0)], "accepted", "accept"))
    w.session.do(set_matches("v1", C2, [(1, 0)], "corrected", "fix"))
    dlg = ExportDialog.open_for(w.panels)
    qtbot.addWidget(dlg)
    qtmodeltester.check(dlg.count_model, force_py=True)
    dlg.out.setText(str(tmp_path / "out"))
    dlg.name.setText("brand_split")
    qtbot.waitUntil(lambda: dlg.preview is not None and dlg.preview_task is None and not dlg._timer.isActive(), timeout=20000)
    rows = {r["what"]: r["value"] for r in dlg.count_model.records()}
    assert rows["violations samples"] == 1 and rows["labels (every annotator's)"] > 0
    assert dlg.export_button.isEnabled() and dlg.problems.text() == ""

    dlg.version.setText("not-a-version")
    qtbot.waitUntil(lambda: "version" in dlg.problems.text().lower(), timeout=20000)
    assert not dlg.export_button.isEnabled()
    dlg.version.setText("0.1.0")
    qtbot.waitUntil(lambda: dlg.export_button.isEnabled(), timeout=20000)

    dlg.export()
    # the export's end too: `result` and `export_task = None` arrive as two queued slots, and an option changed
    # between them is ignored (the export still runs), so no preview would follow (failed once under xdist)
    qtbot.waitUntil(lambda: dlg.result is not None and dlg.export_task is None, timeout=30000)
    target = tmp_path / "out" / "brand_split@0.1.0"
    manifest = json.loads((target / "manifest.json").read_text())
    assert manifest["filters"]["statuses"] == ["accepted", "corrected"]
    assert w.project.artifacts.split_record("brand_split", "0.1.0") is not None
    assert "Wrote" in dlg.status.text()
    assert dlg.heading.text() == "Written: brand_split@0.1.0"
    # the same export again: nothing is written, and the dialog says so (not "Wrote", issue #19)
    dlg.version.setText("0.1.0 ")
    dlg.version.setText("0.1.0")
    qtbot.waitUntil(lambda: dlg.export_button.isEnabled(), timeout=20000)
    dlg.result = None
    dlg.export()
    qtbot.waitUntil(lambda: dlg.result is not None and dlg.export_task is None, timeout=30000)
    assert dlg.result.unchanged
    assert dlg.heading.text() == "Nothing written: identical to brand_split@0.1.0"
    assert "nothing written: identical to brand_split@0.1.0" in dlg.status.text() and "Wrote" not in dlg.status.text()
    # the directory holds this exact export now: exporting it again is a no-op, not a problem; other content is
    (target / "violations.jsonl").write_bytes(b"changed\n")
    dlg.version.setText("0.1.0 ")
    dlg.version.setText("0.1.0")
    qtbot.waitUntil(lambda: "already exists" in dlg.problems.text(), timeout=20000)
    assert not dlg.export_button.isEnabled()
    dlg.close()
