"""`concord calibrate --engine dask`: a LocalCluster started for the run (loopback, no dashboard) stores and prints
exactly what the local engine does; bad engine choices are refused before any work, Dask missing says how to
install it (issue #17)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from app.cli import main
from tests.test_services_evaluate_calibrate import _project

ARGS = ["--components", "std", "--embedding", "jaccard", "--folds", "4", "--bootstrap", "100", "--json",
        "--match", "0.2,0.3,0.4,0.5,0.6"]


@pytest.fixture
def project_path(tmp_path: Path) -> Path:
    path = tmp_path / "p.concord"
    _project(path).close()
    return path


@pytest.mark.timeout(300)
def test_dask_engine_prints_and_stores_the_local_result(project_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from app.store import Project

    assert main(["calibrate", str(project_path), *ARGS]) == 0
    local = json.loads(capsys.readouterr().out)
    assert main(["calibrate", str(project_path), *ARGS, "--engine", "dask"]) == 0
    remote = json.loads(capsys.readouterr().out)
    assert (local.pop("run_id"), remote.pop("run_id")) == (1, 2)
    assert remote == local and local["n_configs"] == 11 * 4 * 4 * 5
    with Project.open(project_path) as p:
        a, b = (p.artifacts.calibration_cv_results(i) for i in (1, 2))
        assert a.equals(b) and len(a) == local["n_configs"]


def test_bad_engine_choices_exit_2_before_any_work(project_path: Path, capsys: pytest.CaptureFixture[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    assert main(["calibrate", str(project_path), *ARGS, "--scheduler", "tcp://127.0.0.1:8786"]) == 2
    assert "--scheduler only applies to --engine dask" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if the dask extra were not installed
    assert main(["calibrate", str(project_path), *ARGS, "--engine", "dask"]) == 2
    assert "pip install 'concord[dask]'" in capsys.readouterr().err
    from app.store import Project

    with Project.open(project_path) as p:
        assert p.artifacts.calibration_runs() == []  # project unchanged
