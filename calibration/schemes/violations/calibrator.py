"""MatchCalibrator: the violations front of the generic calibration engine, with its historical API.

`MatchCalibrator(space=SearchSpace(...), objective=..., folds=..., group_by="sample"|"checker", ...)
.fit(pair_table, human_matches, labeled_groups)` builds a `ViolationsProblem` and fits a
`calibration.search.Calibrator` on it, then exposes the results in violations terms: `best_config_` is a
MatchConfig, `best_params_` {"weights", "thresholds"}, `defaults_` the std_match / ha_match scores, `cv_results_`
has the w_<component> and t_overlap / t_rule / t_match columns. Everything generic (folds, objectives,
held-out score, bootstrap, tie-break) is the engine's; see calibration/search/README.md.
"""
from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, Callable

import numpy as np
import pandas as pd

from calibration.schemes.violations.pairdata import PairTableLike
from calibration.schemes.violations.search import ViolationsProblem, match_config
from calibration.schemes.violations.space import DIMS, SearchSpace
from calibration.search.engine import Calibrator
from calibration.search.objectives import OBJECTIVES
from calibration.search.progress import ProgressLike

GROUP_BY = ("sample", "checker")


class MatchCalibrator:
    """Search `space` for the match config whose decisions agree best with the humans' under `objective`.

    group_by="sample": grouped k-fold over samples (shuffled with `seed`); "checker": leave-one-checker-out
    (one fold per checker; `folds` is then ignored). Tied configs: the one closest to std_match / ha_match, then the
    lowest config id (`n_tied_`, `tie_anchor_`). The held-out score pools every fold's out-of-fold decisions into
    one objective; `fold_scores_` has each fold's.
    `min_labels` / `min_positives`: below these many labeled units / human matches the result gets a warning.
    """

    def __init__(
        self, space: SearchSpace | None = None, objective: str = "kappa", folds: int = 5,
        group_by: str = "sample", seed: int = 0, n_boot: int = 1000, min_labels: int = 30,
        min_positives: int = 50, n_jobs: int | None = None, engine: Any = "local", scheduler: str | None = None,
        workers: int | None = None,
    ) -> None:
        self.space = space
        self.objective = objective
        self.folds = folds
        self.group_by = group_by
        self.seed = seed
        self.n_boot = n_boot
        self.min_labels = min_labels
        self.min_positives = min_positives
        self.n_jobs = n_jobs
        self.engine = engine  # where the grid's chunks run: "local", "dask" (calibration.search.engines)
        self.scheduler = scheduler
        self.workers = workers
        self._validate_params()

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("space", "objective", "folds", "group_by", "seed", "n_boot",
                                              "min_labels", "min_positives", "n_jobs", "engine", "scheduler", "workers")}

    def set_params(self, **params: Any) -> "MatchCalibrator":
        for k, v in params.items():
            if k not in self.get_params():
                raise ValueError(f"unknown parameter {k!r}; expected one of {list(self.get_params())}")
            setattr(self, k, v)
        self._validate_params()
        return self

    def _engine(self) -> Calibrator:
        return Calibrator(objective=self.objective, folds=self.folds, group_by=self.group_by, seed=self.seed,
                          n_boot=self.n_boot, min_units=self.min_labels, min_positives=self.min_positives,
                          engine=self.engine, scheduler=self.scheduler, workers=self.workers)

    def _validate_params(self) -> None:
        if self.space is not None and not isinstance(self.space, SearchSpace):
            raise TypeError(f"space: expected a SearchSpace, got {type(self.space).__name__}")
        if self.objective not in OBJECTIVES:
            raise ValueError(f"objective: expected one of {list(OBJECTIVES)}, got {self.objective!r}")
        if self.group_by not in GROUP_BY:
            raise ValueError(f"group_by: expected 'sample' or 'checker', got {self.group_by!r}")
        if self.n_jobs is not None and (not isinstance(self.n_jobs, int) or self.n_jobs < 1):
            raise ValueError(f"n_jobs: expected a positive integer or None, got {self.n_jobs!r}")
        for name in ("min_labels", "min_positives"):
            v = getattr(self, name)
            if not isinstance(v, (int, np.integer)) or v < 0:
                raise ValueError(f"{name}: expected an integer >= 0, got {v!r}")
        self._engine()._validate_params()

    # ------------------------------------------------------------------ fit
    def fit(
        self, pair_table: PairTableLike, human_matches: Iterable[tuple[int, int, int]],
        labeled_groups: Iterable[int], progress: ProgressLike | None = None, cancel: Callable[[], bool] | Any = None,
    ) -> "MatchCalibrator":
        """Cross-validate the grid, pick the final config on all labeled data; returns self."""
        self._validate_params()
        space = self.space or SearchSpace()
        problem = ViolationsProblem(pair_table, human_matches, labeled_groups, space, self.n_jobs)
        eng = self._engine().fit(problem, progress=progress, cancel=cancel)
        self.engine_ = eng
        self.space_ = space
        self.warnings_ = list(eng.warnings_)
        self.heldout_score_ = eng.heldout_score_
        self.heldout_ci_ = eng.heldout_ci_
        self.fold_scores_ = eng.fold_scores_
        self.fold_configs_ = [match_config(c).to_dict() for c in eng.fold_configs_]
        self.defaults_ = dict(eng.baselines_)
        self.defaults_ci_ = dict(eng.baseline_cis_)
        self.fold_assignment_ = pd.Series(eng.layout_.fold, index=pd.Index(problem.labeled, name="group"), name="fold")
        self.n_configs_ = eng.n_configs_
        self.n_folds_ = eng.n_folds_
        self.best_index_ = eng.best_index_
        self.best_config_ = space.config(eng.best_index_)
        self.best_score_ = eng.best_score_
        self.best_params_ = {k: eng.best_params_[k] for k in ("weights", "thresholds")}
        self.n_tied_ = eng.n_tied_
        self.tie_anchor_ = eng.tie_anchor_
        cv = eng.cv_results_
        self.cv_results_ = cv[list(DIMS) + [c for c in cv.columns if c not in DIMS and c != "matching"]]
        self.n_labeled_ = int(problem.labeled.size)
        self.n_human_matches_ = int(problem.human_rows.sum())
        self.n_pairs_ = int(len(problem.data))
        return self

    # ------------------------------------------------------------------ results
    def _check_fitted(self) -> None:
        if not hasattr(self, "best_config_"):
            raise RuntimeError("MatchCalibrator is not fitted yet; call fit(pair_table, human_matches, labeled_groups)")

    def to_dict(self) -> dict[str, Any]:
        """JSON-able summary (what `concord calibrate --json` prints and the store keeps)."""
        self._check_fitted()

        def num(x: float) -> float | None:
            return None if x is None or not math.isfinite(x) else float(x)

        return {
            "scheme": "violations",
            "best": {"weights": dict(self.best_params_["weights"]), "thresholds": dict(self.best_params_["thresholds"]),
                     "matching": self.space_.matching, "score": num(self.best_score_),
                     "n_tied": self.n_tied_, "tie_anchor": self.tie_anchor_},
            "heldout": {"score": num(self.heldout_score_), "ci": [num(self.heldout_ci_[0]), num(self.heldout_ci_[1])],
                        "folds": [num(s) for s in self.fold_scores_]},
            "defaults": {k: num(v) for k, v in self.defaults_.items()},
            "defaults_ci": {k: [num(v[0]), num(v[1])] for k, v in self.defaults_ci_.items()},
            "defaults_folds": {k: [num(x) for x in v] for k, v in self.engine_.baseline_fold_scores_.items()},
            "gain": self.engine_.gain_dict(),  # over std_match (the first preset), paired interval and verdict
            "objective": self.objective,
            "folds": self.n_folds_,
            "group_by": self.group_by,
            "seed": int(self.seed),
            "n_configs": self.n_configs_,
            "n_labeled_units": self.n_labeled_,
            "n_human_matches": self.n_human_matches_,
            "space": self.space_.to_dict(),
            "warnings": list(self.warnings_),
        }
