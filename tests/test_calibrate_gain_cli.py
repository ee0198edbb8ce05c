"""`concord calibrate --apply` of a config that is no better than the default (issue #26 item 3): refused with a
sentence naming --force and the project unchanged; applied with --force and recorded as forced."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main
from app.io.demo import create_demo
from app.store import Project
from app.store.backup import list_backups

# the demo's TRACe judges: 20 labeled samples, where the calibrated threshold does not beat the ragbench preset
ARGS = ["--scheme", "trace", "--folds", "3", "--bootstrap", "200"]


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    path = tmp_path / "demo.concord"
    create_demo(path).close()
    return path


def _state(path: Path) -> tuple[int, list[str]]:
    with Project.open(path) as p:
        return len(p.artifacts.calibration_runs()), p.scheme_data.param_refs("trace")


def test_an_unpromoted_apply_needs_force(demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calibrate", str(demo), *ARGS, "--json"]) == 0
    gain = json.loads(capsys.readouterr().out)["gain"]
    assert gain["ci"][0] <= 0 < gain["ci"][1] and not gain["promoted"]  # the interval straddles 0 on this data
    assert gain["verdict"] == "no better than the default on held-out data"
    before = _state(demo)

    assert main(["calibrate", str(demo), *ARGS, "--apply", "tuned"]) == 2
    err = capsys.readouterr().err
    assert "--force" in err and "no better than the default (ragbench) on held-out data" in err
    assert _state(demo) == before and list_backups(demo) == []  # nothing stored, not even the run

    assert main(["calibrate", str(demo), *ARGS, "--apply", "tuned", "--force", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["applied"] == "tuned@1.0.0" and out["forced"] is True
    with Project.open(demo) as p:
        assert p.artifacts.calibration_runs()[-1]["result"]["forced"] is True  # the run records that it was forced
        assert "tuned@1.0.0" in p.scheme_data.param_refs("trace")


def test_the_verdict_is_printed_first(demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calibrate", str(demo), *ARGS]) == 0
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.strip()]
    head = next(i for i, ln in enumerate(lines) if ln.startswith("TRACe: objective"))  # after warnings, if any
    assert lines[head + 1].startswith("The calibrated config is no better than the default (ragbench) on held-out data")
    assert lines.index(next(ln for ln in lines if "Held-out score" in ln)) > head + 1  # before the tables


def test_force_without_apply_is_refused(demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calibrate", str(demo), "--force"]) == 2
    assert "--force: only with --apply" in capsys.readouterr().err
