"""The `violations` scheme: match predicted violations to ground truth (std_match / ha_match) and score checkers."""
from calibration.schemes.violations.config import (
    COMPONENTS,
    HA_MATCH,
    PRESETS,
    STD_MATCH,
    ConfigError,
    MatchConfig,
    Thresholds,
)
from calibration.schemes.violations.records import GROUND_TRUTH, Violation, ViolationSample

__all__ = [
    "COMPONENTS", "HA_MATCH", "PRESETS", "STD_MATCH", "ConfigError", "MatchConfig", "Thresholds",
    "GROUND_TRUTH", "Violation", "ViolationSample",
]
