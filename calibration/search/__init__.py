"""Search match weights and thresholds so the violations metric agrees with human judgement (held-out)."""
from calibration.search.calibrator import MatchCalibrator
from calibration.search.objectives import CHECKER_OBJECTIVES, OBJECTIVES, PAIR_OBJECTIVES
from calibration.search.progress import Cancelled
from calibration.search.results import disagreements, objective_surface, threshold_curve
from calibration.search.space import DIMS, SearchSpace, SpaceError

__all__ = [
    "CHECKER_OBJECTIVES", "DIMS", "OBJECTIVES", "PAIR_OBJECTIVES", "Cancelled", "MatchCalibrator", "SearchSpace",
    "SpaceError", "disagreements", "objective_surface", "threshold_curve",
]
