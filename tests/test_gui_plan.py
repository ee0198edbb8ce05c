"""Issue #29 item 4 in the app: the agreement panel's Plan tab shows `concord plan`'s figures (the same service)."""
from __future__ import annotations

from pathlib import Path

from app.services.planner import describe, plan
from app.store import Project
from tests.gui_data import open_window, settings  # noqa: F401 - fixtures
from tests.test_planner import _project


def test_plan_tab_shows_the_services_plan(qtbot, open_window, tmp_path: Path) -> None:  # noqa: F811
    path = tmp_path / "p.concord"
    _project(path)
    with Project.open(path) as p:
        want = plan(p, 0.04, n_boot=60)
    w = open_window(path, "cy")
    w.actions_by_id["agreement"].trigger()
    panel = w.panels.opened["agreement"]
    qtbot.waitUntil(lambda: panel.task is None, timeout=20000)
    page = panel.plan
    panel.tabs.setCurrentWidget(page)
    page.target.setValue(0.04)
    page.boot.setValue(60)
    page.run()
    qtbot.waitUntil(lambda: page.task is None and page.result is not None, timeout=20000)
    assert page.result == want
    assert page.text.text() == "\n".join(describe(want))
    assert "226 units (126 more)" in page.text.text() and "more samples" in page.text.text()
    panel.grab().save(str(tmp_path / "plan.png"))
