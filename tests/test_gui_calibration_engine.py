"""Calibration panel on a Dask scheduler from the settings (issue #17): the address shows in the panel, the run goes
to the cluster and stores exactly what the local run stored."""
from __future__ import annotations

import distributed
import pytest

from app.gui.calibration_panel import SCHEDULER_KEY, CalibrationPanel
from tests.gui_data import open_window, project_path, settings  # noqa: F401 - fixtures
from tests.test_gui_calibration import _label


@pytest.mark.timeout(300)
def test_panel_runs_on_the_scheduler_from_the_settings(qtbot, open_window, project_path, settings) -> None:  # type: ignore[no-untyped-def]
    w = open_window(project_path)
    _label(w)
    panel = CalibrationPanel.open_for(w.panels)
    qtbot.addWidget(panel)
    assert "Runs on: this machine" in panel.page.embedding.text()
    panel.page.folds.setValue(2)
    panel.page.step.setCurrentText("0.25")
    panel.page.run()
    qtbot.waitUntil(lambda: panel.task is None, timeout=120000)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, host="127.0.0.1",
                                  protocol="tcp://", dashboard_address=None) as cluster:
        settings.setValue(SCHEDULER_KEY, cluster.scheduler_address)
        panel.refresh_engine()
        assert f"Runs on: {cluster.scheduler_address}" in panel.page.embedding.text()
        with distributed.Client(cluster, set_as_default=False) as client:
            panel.page.run()
            qtbot.waitUntil(lambda: panel.task is None, timeout=120000)
            prefixes = client.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.task_prefixes))
            assert any(str(p).startswith("concord") for p in prefixes), prefixes  # the chunks ran on this cluster
    runs = w.project.artifacts.calibration_runs()
    assert len(runs) == 2
    a, b = (w.project.artifacts.calibration_cv_results(r["id"]) for r in runs)
    assert a.equals(b) and len(a) > 10
    assert runs[0]["result"]["heldout"] == runs[1]["result"]["heldout"]
    panel.close()
