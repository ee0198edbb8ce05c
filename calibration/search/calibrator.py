"""MatchCalibrator: grid search of match weights and thresholds against human judgement, honestly scored.

A scikit-learn style estimator: parameters in `__init__`, `fit` returns self, results in trailing-underscore
attributes. Honest means: on each fold the config is chosen on the other folds only and scored on the held-out
one; the reported held-out score pools those out-of-fold decisions (with a bootstrap interval over samples)
and sits next to the spec's std_match / ha_match on the same data. The final `best_*` is chosen on all data.
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Iterable
from typing import Any, Callable

import numpy as np
import pandas as pd
from sklearn.model_selection import GroupKFold

from calibration.schemes.violations.config import HA_MATCH, STD_MATCH
from calibration.search.data import PairData, PairTableLike, check_table, human_key_set, labeled_array
from calibration.search.evaluate import evaluate_configs, evaluate_space
from calibration.search.objectives import (
    CHECKER_OBJECTIVES, OBJECTIVES, PAIR_FUNCS, UnitTotals, checker_score, pair_score, score_units,
)
from calibration.search.progress import ProgressLike, check, report
from calibration.search.space import SearchSpace

GROUP_BY = ("sample", "checker")


def _first_best(scores: np.ndarray) -> int:
    """Index of the best finite score; ties go to the lowest config id (deterministic). -1 if none is finite."""
    s = np.where(np.isfinite(scores), scores, -np.inf)
    i = int(np.argmax(s))
    return i if np.isfinite(s[i]) else -1


class MatchCalibrator:
    """Search `space` for the match config whose decisions agree best with the humans' under `objective`.

    group_by="sample": grouped k-fold over samples (shuffled with `seed`); "checker": leave-one-checker-out
    (one fold per checker; `folds` is then ignored). Equal scores go to the lowest config id (space order).
    The held-out score pools every fold's out-of-fold decisions into one objective; `fold_scores_` has each fold's.
    `min_labels` / `min_positives`: below these many labeled units / human matches the result gets a warning.
    """

    def __init__(
        self, space: SearchSpace | None = None, objective: str = "kappa", folds: int = 5,
        group_by: str = "sample", seed: int = 0, n_boot: int = 1000, min_labels: int = 30,
        min_positives: int = 50, n_jobs: int | None = None,
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
        self._validate_params()

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("space", "objective", "folds", "group_by", "seed", "n_boot",
                                              "min_labels", "min_positives", "n_jobs")}

    def set_params(self, **params: Any) -> "MatchCalibrator":
        for k, v in params.items():
            if k not in self.get_params():
                raise ValueError(f"unknown parameter {k!r}; expected one of {list(self.get_params())}")
            setattr(self, k, v)
        self._validate_params()
        return self

    def _validate_params(self) -> None:
        if self.space is not None and not isinstance(self.space, SearchSpace):
            raise TypeError(f"space: expected a SearchSpace, got {type(self.space).__name__}")
        if self.objective not in OBJECTIVES:
            raise ValueError(f"objective: expected one of {list(OBJECTIVES)}, got {self.objective!r}")
        if self.group_by not in GROUP_BY:
            raise ValueError(f"group_by: expected 'sample' or 'checker', got {self.group_by!r}")
        if not isinstance(self.folds, (int, np.integer)) or isinstance(self.folds, bool) or self.folds < 2:
            raise ValueError(f"folds: expected an integer >= 2, got {self.folds!r}")
        if not isinstance(self.n_boot, (int, np.integer)) or self.n_boot < 0:
            raise ValueError(f"n_boot: expected an integer >= 0 (0 = no interval), got {self.n_boot!r}")
        if not isinstance(self.seed, (int, np.integer)):
            raise ValueError(f"seed: expected an integer, got {self.seed!r}")
        for name in ("min_labels", "min_positives"):
            v = getattr(self, name)
            if not isinstance(v, (int, np.integer)) or v < 0:
                raise ValueError(f"{name}: expected an integer >= 0, got {v!r}")
        if self.n_jobs is not None and (not isinstance(self.n_jobs, int) or self.n_jobs < 1):
            raise ValueError(f"n_jobs: expected a positive integer or None, got {self.n_jobs!r}")

    # ------------------------------------------------------------------ fit
    def fit(
        self, pair_table: PairTableLike, human_matches: Iterable[tuple[int, int, int]],
        labeled_groups: Iterable[int], progress: ProgressLike | None = None, cancel: Callable[[], bool] | Any = None,
    ) -> "MatchCalibrator":
        """Cross-validate the grid, pick the final config on all labeled data; returns self."""
        self._validate_params()
        space = self.space or SearchSpace()
        check_table(pair_table)
        labeled = labeled_array(pair_table, labeled_groups)
        human = human_key_set(pair_table, human_matches, labeled)
        check(progress, cancel)
        groups = pair_table.groups.iloc[labeled]
        checkers, checker_idx = np.unique(groups["checker"].astype(str).to_numpy(), return_inverse=True)
        samples, sample_idx = np.unique(groups["sample_id"].astype(str).to_numpy(), return_inverse=True)
        K = checkers.size
        fold = self._fold_of(sample_idx, checker_idx, K)
        F = int(fold.max()) + 1
        unit_of_group = np.full(len(pair_table.groups), -1, dtype=np.int64)
        unit_of_group[labeled] = fold * K + checker_idx
        data = PairData.build(pair_table, human, unit_of_group, F * K)
        totals = UnitTotals(data.unit_pairs, data.unit_positives, data.unit_gt, data.unit_pred,
                            np.arange(F * K) % K, K)
        unit_fold = np.arange(F * K) // K

        counts = evaluate_space(data, space, progress, cancel, self.n_jobs).reshape(len(space), F * K, 2)
        check(progress, cancel)
        obj = self.objective
        train = np.stack([score_units(obj, counts, totals, unit_fold != f) for f in range(F)])
        test = np.stack([score_units(obj, counts, totals, unit_fold == f) for f in range(F)])
        everything = score_units(obj, counts, totals)
        chosen = np.array([_first_best(train[f]) for f in range(F)])
        best = _first_best(everything)
        self.warnings_: list[str] = []
        if best < 0 or (chosen < 0).any():
            self.warnings_.append(f"objective {obj!r} is undefined for every config on some data (e.g. one class only)")
        best = max(best, 0)
        chosen = np.maximum(chosen, 0)
        pooled = counts[chosen[unit_fold], np.arange(F * K)]  # (U, 2): each unit decided by its fold's choice
        self.heldout_score_ = float(score_units(obj, pooled[None], totals)[0])
        self.fold_scores_ = [float(test[f, chosen[f]]) for f in range(F)]
        self.fold_configs_ = [space.config(int(c)).to_dict() for c in chosen]

        # defaults on the same data, and the bootstrap intervals (per-group counts of the few configs involved)
        report(progress, 0, 1, "bootstrap")
        fixed = [STD_MATCH, HA_MATCH] + [space.config(int(c)) for c in np.unique(chosen)]
        per_group = PairData.build(pair_table, human, self._group_units(len(pair_table.groups), labeled), labeled.size)
        gcounts = evaluate_configs(per_group, fixed)  # (n_fixed, n_labeled, 2)
        check(progress, cancel)
        dflt = evaluate_configs(data, fixed[:2])
        self.defaults_ = {name: float(score_units(obj, dflt[i][None], totals)[0])
                          for i, name in enumerate(("std_match", "ha_match"))}
        which = np.searchsorted(np.unique(chosen), chosen[fold]) + 2
        oof = gcounts[which, np.arange(labeled.size)]
        boot = _Bootstrap(per_group, sample_idx, checker_idx, K, obj, self.n_boot, self.seed)
        self.heldout_ci_ = boot.interval(oof)
        self.defaults_ci_ = {name: boot.interval(gcounts[i]) for i, name in enumerate(("std_match", "ha_match"))}
        report(progress, 1, 1, "done")

        self.space_ = space
        self.fold_assignment_ = pd.Series(fold, index=pd.Index(labeled, name="group"), name="fold")
        self.n_configs_ = len(space)
        self.n_folds_ = F
        self.best_index_ = best
        self.best_config_ = space.config(best)
        self.best_score_ = float(everything[best])
        self.best_params_ = {"weights": dict(self.best_config_.weights),
                             "thresholds": {"overlap": self.best_config_.thresholds.overlap,
                                            "rule": self.best_config_.thresholds.rule,
                                            "match": self.best_config_.thresholds.match}}
        self.cv_results_ = self._results(space, train, test, everything)
        self.n_labeled_ = int(labeled.size)
        self.n_human_matches_ = len(human)
        self.n_pairs_ = int(len(data))
        if labeled.size < self.min_labels or len(human) < self.min_positives:
            self.warnings_.append(
                f"too few human labels to trust the result: {labeled.size} labeled (sample, checker) units "
                f"(want >= {self.min_labels}) and {len(human)} human matches (want >= {self.min_positives})")
        return self

    def _fold_of(self, sample_idx: np.ndarray, checker_idx: np.ndarray, K: int) -> np.ndarray:
        if self.group_by == "checker":
            need = 3 if self.objective in CHECKER_OBJECTIVES else 2
            if K < need:
                raise ValueError(f"group_by='checker': leave-one-checker-out needs >= {need} labeled checkers "
                                 f"for objective {self.objective!r}, got {K}")
            return checker_idx.astype(np.int64)
        n_samples = int(sample_idx.max()) + 1
        if n_samples < self.folds:
            raise ValueError(f"folds: {self.folds} folds need at least {self.folds} labeled samples, got {n_samples}")
        if self.objective in CHECKER_OBJECTIVES and K < 2:
            raise ValueError(f"objective {self.objective!r} ranks checkers: needs >= 2 labeled checkers, got {K}")
        fold = np.empty(sample_idx.size, dtype=np.int64)
        splitter = GroupKFold(n_splits=self.folds, shuffle=True, random_state=self.seed)
        for f, (_, test_idx) in enumerate(splitter.split(sample_idx, groups=sample_idx)):
            fold[test_idx] = f
        return fold

    @staticmethod
    def _group_units(n_groups: int, labeled: np.ndarray) -> np.ndarray:
        u = np.full(n_groups, -1, dtype=np.int64)
        u[labeled] = np.arange(labeled.size)
        return u

    def _results(self, space: SearchSpace, train: np.ndarray, test: np.ndarray, everything: np.ndarray) -> pd.DataFrame:
        df = space.table()
        df.index.name = "config"
        df["score"] = everything
        with warnings.catch_warnings():  # all-NaN columns (undefined objective on a fold) stay NaN quietly
            warnings.simplefilter("ignore", RuntimeWarning)
            df["mean_train_score"] = np.nanmean(train, axis=0)
            df["std_train_score"] = np.nanstd(train, axis=0)
            df["mean_test_score"] = np.nanmean(test, axis=0)
            df["std_test_score"] = np.nanstd(test, axis=0)
        for f in range(test.shape[0]):
            df[f"split{f}_test_score"] = test[f]
        df["rank"] = df["score"].rank(ascending=False, method="min", na_option="bottom").astype(np.int64)
        return df.sort_values(["rank"], kind="stable")

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
            "best": {"weights": dict(self.best_params_["weights"]), "thresholds": dict(self.best_params_["thresholds"]),
                     "matching": self.space_.matching, "score": num(self.best_score_)},
            "heldout": {"score": num(self.heldout_score_), "ci": [num(self.heldout_ci_[0]), num(self.heldout_ci_[1])],
                        "folds": [num(s) for s in self.fold_scores_]},
            "defaults": {k: num(v) for k, v in self.defaults_.items()},
            "defaults_ci": {k: [num(v[0]), num(v[1])] for k, v in self.defaults_ci_.items()},
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


class _Bootstrap:
    """Percentile interval of the objective over resampled samples, from per-group counts of one decision set."""

    def __init__(self, data: PairData, sample_idx: np.ndarray, checker_idx: np.ndarray, K: int, objective: str,
                 n_boot: int, seed: int) -> None:
        self.data, self.sample_idx, self.K = data, sample_idx, K
        self.checker_idx, self.objective, self.n_boot, self.seed = checker_idx, objective, n_boot, seed
        self.n_samples = int(sample_idx.max()) + 1

    def interval(self, group_counts: np.ndarray, chunk: int = 64) -> tuple[float, float]:
        """`group_counts`: (n_groups, 2) machine matches by human label, groups in `data` unit order."""
        if self.n_boot == 0:
            return (math.nan, math.nan)
        d = self.data
        stats_ = np.column_stack([group_counts[:, 0], group_counts[:, 1], d.unit_pairs, d.unit_positives,
                                  d.unit_gt + d.unit_pred]).astype(np.float64)
        S = self.n_samples
        cols = 1 if self.objective in PAIR_FUNCS else self.K
        agg = np.zeros((S * cols, stats_.shape[1]))
        key = self.sample_idx * cols + (self.checker_idx if cols > 1 else 0)
        np.add.at(agg, key, stats_)
        agg = agg.reshape(S, cols, -1)
        rng = np.random.default_rng(self.seed)
        out = []
        for lo in range(0, self.n_boot, chunk):
            n = min(chunk, self.n_boot - lo)
            draws = rng.integers(0, S, size=(n, S)) + (np.arange(n) * S)[:, None]
            w = np.bincount(draws.ravel(), minlength=n * S).reshape(n, S).astype(np.float64)  # times drawn
            tot = np.einsum("bs,sck->bck", w, agg)  # (n, cols, 5)
            if cols == 1:
                t = tot[:, 0]
                out.append(pair_score(self.objective, t[:, :2], t[:, 2], t[:, 3]))
            else:
                out.append(checker_score(self.objective, tot[..., 1] + tot[..., 0], tot[..., 3], tot[..., 4]))
        vals = np.concatenate(out)
        vals = vals[np.isfinite(vals)]
        if vals.size == 0:
            return (math.nan, math.nan)
        lo_, hi_ = np.percentile(vals, [2.5, 97.5])
        return (float(lo_), float(hi_))

