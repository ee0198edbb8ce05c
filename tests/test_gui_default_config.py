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
        project.store("violations").save_match_config(_calibrated("1.0.0", 0.4), origin="calibration")
        project.store("violations").save_match_config(_calibrated("1.1.0", 0.3), origin="calibration")
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


def test_window_remembers_the_chosen_config_and_falls_back_when_it_is_gone(open_window, path: Path,  # type: ignore[no-untyped-def]
                                                                          settings) -> None:
    """The config box (app/gui/config_box.py) keeps the choice per project under the view's settings key; a
    remembered config the project no longer has falls back to the view's fallback (std_match), not an error."""
    w = open_window(path)
    w.set_config("calibrated@1.0.0")
    key = f"projects/{w.project.project_id}/match_config"
    assert settings.value(key) == "calibrated@1.0.0" and w.filters.config_ref == "calibrated@1.0.0"
    w.close()
    again = open_window(path)
    assert again._config.ref == "calibrated@1.0.0" == again.config_box.currentData()
    again.close()
    settings.setValue(key, "gone@9.9.9")
    last = open_window(path)
    assert last._config == STD_MATCH and last.configs.ref == STD_MATCH.ref
