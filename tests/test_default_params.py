"""app.services.configs: the default parameters of a workflow come from the scheme (its presets, through the
registry) and the store (its applied parameters), for any scheme; the match config default is the violations
scheme's by the registry's order. The demo pins the versioned presets through the same seam (save_params)."""
from __future__ import annotations

from pathlib import Path

import pytest

from app.io.demo import pin_presets
from app.services.configs import config_scheme, default_config_ref, default_params_ref, preset_ref
from app.store import Project
from calibration.schemes.base import get
from calibration.schemes.violations.config import HA_MATCH, STD_MATCH


def test_match_config_default_is_the_newest_applied_else_the_first_preset(tmp_path: Path) -> None:
    with Project.create(tmp_path / "p.concord") as project:
        assert config_scheme().name == "violations"
        assert default_config_ref(project) == STD_MATCH.ref
        tuned = project.scheme_data.save_params("violations", "tuned", {"weights": {"overlap": 0.7, "rule": 0.3},
                                                            "thresholds": {"overlap": 0.0, "rule": 0.01, "match": 0.4}})
        assert tuned == "tuned@1.0.0" == default_config_ref(project)
        project.store("violations").save_match_config(HA_MATCH, origin="user")  # a preset stored later is never the applied default
        assert default_config_ref(project) == "tuned@1.0.0"
        again = project.scheme_data.save_params("violations", "tuned", {"weights": {"overlap": 0.6, "rule": 0.4},
                                                            "thresholds": {"overlap": 0.0, "rule": 0.01, "match": 0.4}})
        assert again == "tuned@1.1.0" == default_config_ref(project)


def test_any_scheme_default_from_its_presets_and_stored_parameters(tmp_path: Path) -> None:
    trace, rubric = get("trace"), get("rubric")
    first = next(iter(trace.presets()))
    with Project.create(tmp_path / "p.concord") as project:
        assert default_params_ref(project, trace) == preset_ref(first, trace.presets()[first]) == first  # unversioned
        assert default_params_ref(project, rubric) is None  # no presets, nothing applied
        ref = project.scheme_data.save_params("trace", "tuned", {"threshold": 0.3, "variant": "trace_guide"})
        assert default_params_ref(project, trace) == ref == "tuned@1.0.0"
        assert default_params_ref(project, rubric) is None  # another scheme's parameters are not its own


def test_pinned_presets_are_the_registry_presets_as_they_are(tmp_path: Path) -> None:
    with Project.create(tmp_path / "p.concord") as project:
        refs = pin_presets(project)
        assert refs == [STD_MATCH.ref, HA_MATCH.ref]  # the only versioned presets: violations' match configs
        assert project.table_counts()["match_configs"] == 2
        assert project.store("violations").match_config(STD_MATCH.ref) == STD_MATCH and project.store("violations").match_config(HA_MATCH.ref) == HA_MATCH
        assert pin_presets(project) == refs and project.table_counts()["match_configs"] == 2  # again: no-op
        assert default_config_ref(project) == STD_MATCH.ref  # pinned presets are not applied parameters


def test_explicit_versions_in_the_generic_store(tmp_path: Path) -> None:
    with Project.create(tmp_path / "p.concord") as project:
        assert project.scheme_data.save_params("trace", "p", {"threshold": 0.2}, version="2.0.0") == "p@2.0.0"
        assert project.scheme_data.save_params("trace", "p", {"threshold": 0.2}, version="2.0.0") == "p@2.0.0"  # same: no-op
        with pytest.raises(ValueError, match="different settings"):
            project.scheme_data.save_params("trace", "p", {"threshold": 0.3}, version="2.0.0")
        with pytest.raises(ValueError, match="dot-separated numbers"):
            project.scheme_data.save_params("trace", "p", {"threshold": 0.3}, version="v2")
        assert project.scheme_data.save_params("trace", "p", {"threshold": 0.3}) == "p@2.1.0"  # the next version after it
        assert project.scheme_data.load_params("trace", "p") == {"threshold": 0.3}
