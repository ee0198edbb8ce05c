"""Issue #19: the app opens on the same default match config as `concord export` documents a split with, by the one
rule in app.services.configs.default_config_ref (the window no longer works it out itself)."""
from __future__ import annotations

from pathlib import Path

import pytest

from app.store import Project
from calibration.schemes.violations.config import STD_MATCH, MatchConfig
from tests.gui_data import open_window, settings  # noqa: F401 - fixtures
from tests.test_export_split import build_project


def _calibrated(version: str, overlap: float) -> MatchConfig:
    return MatchConfig.from_dict({"name": "calibrated", "version": version, "matching": "greedy",
                                  "embedding": STD_MATCH.embedding, "weights": {"overlap": overlap, "rule": 1 - overlap},
                                  "thresholds": {"overlap": 0.0, "rule": 0.01, "match": 0.5}})


@pytest.fixture
def path(tmp_path: Path) -> Path:
    p = tmp_path / "p.concord"
    with build_project(p) as project:
        project.save_match_config(_calibrated("1.0.0", 0.4), origin="calibration")
        project.save_match_config(_calibrated("1.1.0", 0.3), origin="calibration")
    return p


def test_window_opens_on_the_latest_applied_config(open_window, path: Path) -> None:  # type: ignore[no-untyped-def]
    w = open_window(path)
    assert w._config.ref == "calibrated@1.1.0" == w.config_box.currentData()


def test_window_takes_the_default_from_the_shared_rule(open_window, path: Path,  # type: ignore[no-untyped-def]
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Project] = []

    def rule(project: Project) -> str:
        seen.append(project)
        return "calibrated@1.0.0"

    monkeypatch.setattr("app.services.configs.default_config_ref", rule)  # read by the violations view's MATCH_CONFIGS
    w = open_window(path)
    assert seen and w._config.ref == "calibrated@1.0.0"
