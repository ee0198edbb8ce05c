"""Search match weights and thresholds so the violations metric agrees with human judgement (held-out).

Exports load lazily, so `calibration.search.progress` (imported by app.progress) stays cheap to import.
"""
from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {
    "MatchCalibrator": "calibrator",
    "CHECKER_OBJECTIVES": "objectives", "OBJECTIVES": "objectives", "PAIR_OBJECTIVES": "objectives",
    "Cancelled": "progress",
    "disagreements": "results", "objective_surface": "results", "threshold_curve": "results",
    "DIMS": "space", "SearchSpace": "space", "SpaceError": "space",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(f"calibration.search.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module 'calibration.search' has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__
