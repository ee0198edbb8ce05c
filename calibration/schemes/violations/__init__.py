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
from calibration.schemes.violations.matching import (
    match,
    match_arrays,
    matched_pairs,
    passing_mask,
    score_pairs,
    weighted_score,
)
from calibration.schemes.violations.metrics import (
    Counts,
    compare_leaderboards,
    count,
    evaluate,
    evaluate_counts,
    leaderboard,
    prf,
    unit_counts,
)
from calibration.schemes.violations.pairs import NO_CATEGORY, PairTable, build_pair_table
from calibration.schemes.violations.records import GROUND_TRUTH, Violation, ViolationSample

__all__ = [
    "COMPONENTS", "HA_MATCH", "PRESETS", "STD_MATCH", "ConfigError", "MatchConfig", "Thresholds",
    "GROUND_TRUTH", "Violation", "ViolationSample",
    "NO_CATEGORY", "PairTable", "build_pair_table",
    "match", "match_arrays", "matched_pairs", "passing_mask", "score_pairs", "weighted_score",
    "Counts", "compare_leaderboards", "count", "evaluate", "evaluate_counts", "leaderboard", "prf", "unit_counts",
]
