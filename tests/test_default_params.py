"""app.services.configs: the default parameters of a workflow come from the scheme (its presets, through the
registry) and the store (its applied parameters), for any scheme; the match config default is the violations
scheme's by the registry's order."""
from __future__ import annotations

from pathlib import Path

from app.services.configs import config_scheme, default_config_ref, default_params_ref, preset_ref
from app.store import Project
from calibration.schemes.base import get
from calibration.schemes.violations.config import HA_MATCH, STD_MATCH


def test_match_config_default_is_the_newest_applied_else_the_first_preset(tmp_path: Path) -> None:
    with Project.create(tmp_path / "p.concord") as project:
        assert config_scheme().name == "violations"
        assert default_config_ref(project) == STD_MATCH.ref
        tuned = project.save_params("violations", "tuned", {"weights": {"overlap": 0.7, "rule": 0.3},
                                                            "thresholds": {"overlap": 0.0, "rule": 0.01, "match": 0.4}})
        assert tuned == "tuned@1.0.0" == default_config_ref(project)
        project.save_match_config(HA_MATCH, origin="user")  # a preset stored later is never the applied default
        assert default_config_ref(project) == "tuned@1.0.0"
        again = project.save_params("violations", "tuned", {"weights": {"overlap": 0.6, "rule": 0.4},
                                                            "thresholds": {"overlap": 0.0, "rule": 0.01, "match": 0.4}})
        assert again == "tuned@1.1.0" == default_config_ref(project)


def test_any_scheme_default_from_its_presets_and_stored_parameters(tmp_path: Path) -> None:
    trace, rubric = get("trace"), get("rubric")
    first = next(iter(trace.presets()))
    with Project.create(tmp_path / "p.concord") as project:
        assert default_params_ref(project, trace) == preset_ref(first, trace.presets()[first]) == first  # unversioned
        assert default_params_ref(project, rubric) is None  # no presets, nothing applied
        ref = project.save_params("trace", "tuned", {"threshold": 0.3, "variant": "trace_guide"})
        assert default_params_ref(project, trace) == ref == "tuned@1.0.0"
        assert default_params_ref(project, rubric) is None  # another scheme's parameters are not its own
