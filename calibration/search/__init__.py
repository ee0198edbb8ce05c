"""The generic calibration engine: search any scheme's parameters so its metric agrees with human decisions.

A scheme hands over a `SearchProblem` (problem.py): a `Space` of named dimensions (space.py), items with human
decisions, and a vectorised `decide`. `Calibrator` (engine.py) cross-validates the whole space chunk by chunk,
scores it with a shared objective (objectives.py), picks configs with a documented tie-break and reports the
held-out score with a bootstrap interval beside the scheme's baselines. See README.md in this folder.

Exports load lazily (PEP 562), so `calibration.search.progress` (imported by app.progress) stays cheap to import.
The violations scheme's front (`MatchCalibrator`, `SearchSpace`, `disagreements`, `threshold_curve`) lives in its
package, calibration.schemes.violations (calibrator.py, space.py, views.py): this generic package names no scheme.
"""
from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {
    "Calibrator": "calibration.search.engine",
    "Categorical": "calibration.search.space", "Grid": "calibration.search.space",
    "Simplex": "calibration.search.space", "Space": "calibration.search.space",
    "SpaceError": "calibration.search.space",
    "SearchProblem": "calibration.search.problem",
    "CHECKER_OBJECTIVES": "calibration.search.objectives", "OBJECTIVES": "calibration.search.objectives",
    "PAIR_OBJECTIVES": "calibration.search.objectives",
    "Cancelled": "calibration.search.progress",
    "objective_surface": "calibration.search.results", "curve": "calibration.search.results",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'calibration.search' has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__
