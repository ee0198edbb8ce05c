"""Match configs: the shipped TOML files equal the spec's presets; bad files name the field."""
from __future__ import annotations

from pathlib import Path

import pytest

from calibration.schemes.violations import HA_MATCH, STD_MATCH, ConfigError, MatchConfig

CONFIGS = Path(__file__).resolve().parents[1] / "resources" / "configs"


def test_shipped_presets_equal_spec() -> None:
    assert MatchConfig.from_toml(CONFIGS / "std_match.toml") == STD_MATCH
    assert MatchConfig.from_toml(CONFIGS / "ha_match.toml") == HA_MATCH
    assert STD_MATCH.weight_vector() == [0.5, 0.5, 0.0, 0.0, 0.0]
    assert HA_MATCH.weight_vector() == [0.3, 0.3, 0.1, 0.2, 0.1]
    assert (HA_MATCH.thresholds.overlap, HA_MATCH.thresholds.rule, HA_MATCH.thresholds.match) == (0.0, 0.01, 0.5)


def test_round_trip(tmp_path: Path) -> None:
    cfg = HA_MATCH.with_(name="mine", version="2.1.0", matching="optimal", embedding="jaccard")
    path = tmp_path / "mine.toml"
    path.write_text(cfg.to_toml())
    assert MatchConfig.from_toml(path) == cfg


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ('[weights]\noverlap = -0.5\n', "weights.overlap"),
        ('[weights]\nsyntax = 1\n', "unknown component"),
        ('[weights]\noverlap = 1\n[thresholds]\nmatc = 0.2\n', "thresholds: unknown key"),
        ('name = "x"\n', "missing field 'weights'"),
        ('[weights\n', "not valid TOML"),
        ('matching = "best"\n[weights]\nrule = 1\n', "matching"),
    ],
)
def test_bad_files_name_file_and_field(tmp_path: Path, body: str, needle: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(body)
    with pytest.raises(ConfigError) as info:
        MatchConfig.from_toml(path)
    assert str(path) in str(info.value) and needle in str(info.value)
