"""Calibrator: grid search of any scheme's `SearchProblem` against human decisions, honestly scored.

A scikit-learn estimator (parameters in `__init__`, `fit(problem)` returns self, results in trailing-underscore
attributes; get_params / set_params / `sklearn.base.clone` from estimator.py, which does not import sklearn). Honest means: on each fold the config is chosen on the other folds only and scored on the held-out
one; the held-out score pools those out-of-fold decisions (with a bootstrap interval over CV groups) and sits next
to the scheme's baselines on the same folds. `best_*` is then chosen on all labeled data. The gain over each
baseline is paired on the same bootstrap replicates (gain.py); the verdict and promotion rest on the gain over the
default, the first baseline (the scheme's first preset): `gain_dict()`.

Folds: group_by="group" (or the problem's group noun, e.g. "sample") is grouped k-fold over CV groups, shuffled
with `seed` (scikit-learn's GroupKFold(shuffle=True), as folds.py reproduces it); "stratum" (or e.g. "checker") is
leave-one-stratum-out, one fold per stratum.

Tie-break (issue #19): configs with exactly the best score are tied; `n_tied_` says how many. The chosen one is
the tied config closest to a baseline (the scheme's presets, e.g. the spec's std_match / ha_match: `Space.distance`,
summed per dimension -- total variation for weights, grid positions for thresholds, 0/1 for choices), then the
lowest config id. The same rule picks each fold's config. So among equivalent configs the one nearest the spec's
defaults wins, and `tie_anchor_` names that preset.
"""
from __future__ import annotations

import math
import warnings
from typing import Any, Callable

import numpy as np
import pandas as pd
from calibration.agreement import percentile_interval
from calibration.search import heldout
from calibration.search.engines import ENGINES, make_engine
from calibration.search.estimator import EstimatorParams
from calibration.search.evaluate import Layout, Scores, evaluate
from calibration.search.folds import group_folds
from calibration.search.gain import paired_gain, promoted, verdict
from calibration.search.objectives import Objective, get
from calibration.search.problem import check_problem, dim_words, nouns, options
from calibration.search.progress import ProgressLike, check, report
from calibration.search.report import grouping_words, weights_sentence
from calibration.search.space import Columns, Space


def _num(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def _sorted_codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct values, index of each value among them): np.unique(..., return_inverse=True)'s answer by
    pandas' hash table, which does not sort every value (400k unit names: ~0.5 s less)."""
    codes, uniques = pd.factorize(values, sort=True)
    return np.asarray(uniques), codes.astype(np.int64, copy=False)


def pick(scores: np.ndarray, sign: float, space: Space, anchors: list[dict[str, Any]]) -> tuple[int, int, int]:
    """(config id, number tied at the best score, index of the nearest anchor or -1); id -1 if nothing is finite."""
    s = np.where(np.isfinite(scores), sign * scores, -np.inf)
    best = s.max() if s.size else -np.inf
    if not np.isfinite(best):
        return -1, 0, -1
    tied = np.flatnonzero(s == best)
    if not anchors:
        return int(tied[0]), int(tied.size), -1
    cols = space.take(tied)
    dist = np.stack([space.distance(cols, a) for a in anchors])  # (n_anchors, n_tied)
    i = int(np.argmin(dist.min(axis=0)))  # first minimum = lowest id among equally close configs
    return int(tied[i]), int(tied.size), int(np.argmin(dist[:, i]))


def tie_order(space: Space, ids: np.ndarray, anchors: list[dict[str, Any]]) -> np.ndarray:
    """`ids` in the tie-break's order of preference (`pick`): nearest to a baseline first, then the lowest id; the
    first best in this order is the config `pick` would choose among them."""
    ids = np.asarray(ids)
    if not anchors or ids.size == 0:
        return np.sort(ids)
    cols = space.take(ids)
    dist = np.stack([space.distance(cols, a) for a in anchors]).min(axis=0)
    return ids[np.lexsort((ids, dist))]


def stack_configs(space: Space, dicts: list[dict[str, Any]], ids: np.ndarray) -> Columns:
    """Columns of explicit configs (baselines) followed by grid configs `ids`."""
    grid = space.take(ids)
    out: Columns = {}
    for name, col in grid.items():
        head = np.empty(len(dicts), dtype=col.dtype)
        head[:] = [d[name] for d in dicts]
        out[name] = np.concatenate([head, col])
    return out


class Calibrator(EstimatorParams):
    """Search a problem's space for the config whose decisions agree best with the humans' under `objective`.

    min_units / min_positives: below these many labeled units / positive human decisions (class >= 1) the result
    carries a warning. chunk_size: configs evaluated at a time (memory bound).
    engine: where the chunks run (engines.py): "local" (this machine's cores), "dask" (a Dask cluster at
    `scheduler`, or a LocalCluster started for the run when it is None) or an engine object; every engine gives
    identical results. workers: local threads / LocalCluster processes (default: the cores).
    """

    def __init__(self, objective: str = "kappa", folds: int = 5, group_by: str = "group", seed: int = 0,
                 n_boot: int = 1000, min_units: int = 30, min_positives: int = 50, chunk_size: int = 1 << 16,
                 engine: Any = "local", scheduler: str | None = None, workers: int | None = None) -> None:
        self.objective = objective
        self.folds = folds
        self.group_by = group_by
        self.seed = seed
        self.n_boot = n_boot
        self.min_units = min_units
        self.min_positives = min_positives
        self.chunk_size = chunk_size
        self.engine = engine
        self.scheduler = scheduler
        self.workers = workers

    def _validate_params(self) -> Objective:
        obj = get(self.objective)
        if not isinstance(self.folds, (int, np.integer)) or isinstance(self.folds, bool) or self.folds < 2:
            raise ValueError(f"folds: expected an integer >= 2, got {self.folds!r}")
        if not isinstance(self.n_boot, (int, np.integer)) or self.n_boot < 0:
            raise ValueError(f"n_boot: expected an integer >= 0 (0 = no interval), got {self.n_boot!r}")
        if not isinstance(self.seed, (int, np.integer)):
            raise ValueError(f"seed: expected an integer, got {self.seed!r}")
        for name in ("min_units", "min_positives", "chunk_size"):
            v = getattr(self, name)
            if not isinstance(v, (int, np.integer)) or v < (1 if name == "chunk_size" else 0):
                raise ValueError(f"{name}: expected a non-negative integer, got {v!r}")
        if isinstance(self.engine, str) and self.engine not in ENGINES:
            raise ValueError(f"engine: expected one of {list(ENGINES)} or an engine object, got {self.engine!r}")
        if self.scheduler is not None and not isinstance(self.scheduler, str):
            raise ValueError(f"scheduler: expected an address such as 'tcp://host:8786' or None, got {self.scheduler!r}")
        if self.workers is not None and (not isinstance(self.workers, (int, np.integer)) or self.workers < 1):
            raise ValueError(f"workers: expected a positive integer or None, got {self.workers!r}")
        return obj

    # ------------------------------------------------------------------ folds
    def _layout(self, problem: Any, obj: Objective) -> Layout:
        units = problem.units
        g_noun, s_noun = nouns(problem)
        groups, group = _sorted_codes(units["group"].astype(str).to_numpy())
        has_strata = "stratum" in units.columns
        strata = units["stratum"].astype(str).to_numpy() if has_strata else np.zeros(len(units), dtype=str)
        _, stratum = _sorted_codes(strata)
        K = int(stratum.max()) + 1
        obj.check(int(problem.n_classes), has_strata)
        by = {"group": "group", g_noun: "group", "stratum": "stratum", s_noun: "stratum"}.get(self.group_by)
        if by is None:
            raise ValueError(f"group_by: expected {g_noun!r} (grouped k-fold) or {s_noun!r} (leave-one-{s_noun}-out), "
                             f"got {self.group_by!r}")
        if by == "stratum":
            need = 3 if obj.kind == "strata" else 2
            if K < need:
                raise ValueError(f"group_by={self.group_by!r}: leave-one-{s_noun}-out needs >= {need} labeled "
                                 f"{s_noun}s for objective {self.objective!r}, got {K}")
            fold = stratum.astype(np.int64)
        else:
            if groups.size < self.folds:
                raise ValueError(f"folds: {self.folds} folds need at least {self.folds} labeled {g_noun}s, "
                                 f"got {groups.size}")
            if obj.kind == "strata" and K < 2:
                raise ValueError(f"objective {self.objective!r} ranks {s_noun}s: needs >= 2 labeled {s_noun}s, got {K}")
            fold = group_folds(group, int(self.folds), self.seed)
        n_items = np.bincount(np.asarray(problem.item_unit), minlength=len(units)).astype(np.float64)
        weight = units["rank_weight"].to_numpy(dtype=np.float64) if "rank_weight" in units.columns else n_items
        return Layout(fold=fold, stratum=stratum.astype(np.int64), group=group.astype(np.int64),
                      n_folds=int(fold.max()) + 1, n_strata=K, n_groups=int(groups.size),
                      item_unit=np.asarray(problem.item_unit, dtype=np.int64), rank_weight=weight)

    # ------------------------------------------------------------------ fit
    def fit(self, problem: Any, y: None = None, progress: ProgressLike | None = None,
            cancel: Callable[[], bool] | Any = None) -> "Calibrator":
        """Cross-validate the grid, pick the final config on all labeled data; returns self."""
        obj = self._validate_params()
        check_problem(problem)
        layout = self._layout(problem, obj)
        check(progress, cancel)
        space: Space = problem.space
        workers = self.workers
        if workers is None and self.engine == "local" and options(problem).threaded:
            workers = 1  # the problem already spreads one chunk over the cores: two chunks would only double memory
        engine = make_engine(self.engine, self.scheduler, workers)
        try:
            scores = evaluate(problem, obj, layout, int(self.chunk_size), progress, cancel, engine)
        finally:
            if engine is not self.engine:  # started for this run (a LocalCluster, a client): stop it
                engine.close()
        check(progress, cancel)
        baselines = dict(problem.baselines())
        anchors = list(baselines.values())
        F = layout.n_folds
        picks = [pick(scores.train[f], obj.sign, space, anchors) for f in range(F)]
        best, n_tied, anchor = pick(scores.whole, obj.sign, space, anchors)
        self.warnings_: list[str] = []
        if best < 0 or any(p[0] < 0 for p in picks):
            self.warnings_.append(f"objective {self.objective!r} is undefined for every config on some data "
                                  "(e.g. one class only)")
        best = max(best, 0)
        chosen = np.array([max(p[0], 0) for p in picks])

        report(progress, 0, 1, "bootstrap")
        self._heldout(problem, obj, layout, baselines, chosen, scores)
        check(progress, cancel)
        report(progress, 1, 1, "done")

        names = list(baselines)
        self.scheme_ = options(problem).scheme  # stored with the run so --apply knows whose params these are
        self.space_ = space
        self.objective_ = obj
        self.layout_ = layout
        self.n_configs_ = space.n_configs
        self.n_folds_ = F
        self.grouping_ = grouping_words(F, self.group_by, *nouns(problem))  # the folds in the problem's words
        self.fold_best_ = chosen.tolist()
        self.fold_configs_ = [space.config(int(c)) for c in chosen]
        self.fold_scores_ = [float(scores.test[f, chosen[f]]) for f in range(F)]
        self.best_index_ = int(best)
        self.best_config_ = space.config(int(best))
        self.weights_meaning_ = weights_sentence(self.best_config_, space.to_dict(), *dim_words(problem))
        self.best_params_ = problem.to_params(self.best_config_)
        self.best_score_ = float(scores.whole[best])
        self.n_tied_ = int(n_tied)
        self.tie_anchor_ = names[anchor] if n_tied > 1 and anchor >= 0 else None
        self.cv_results_ = self._results(space, scores, obj, best)
        self.n_units_ = int(len(problem.units))
        self.n_items_ = int(layout.item_unit.size)
        h = np.asarray(problem.human)
        self.n_positives_ = int((h >= 1).sum()) if int(problem.n_classes) else int(h.size)
        if self.n_units_ < self.min_units or self.n_positives_ < self.min_positives:
            self.warnings_.append(
                f"too few human labels to trust the result: {self.n_units_} labeled units (want >= {self.min_units}) "
                f"and {self.n_positives_} positive human decisions (want >= {self.min_positives})")
        return self

    def _heldout(self, problem: Any, obj: Objective, layout: Layout, baselines: dict[str, dict[str, Any]],
                 chosen: np.ndarray, scores: Scores) -> None:
        """Pooled out-of-fold score, the baselines' scores (all data and per fold), bootstrap intervals."""
        nb = len(baselines)
        fixed = np.unique(chosen)
        sets = heldout.decide_sets(problem, stack_configs(problem.space, list(baselines.values()), fixed), layout, obj)
        which = nb + np.searchsorted(fixed, chosen[layout.fold])  # decision set of each unit: its fold's choice
        F, h = layout.n_folds, np.asarray(problem.human)
        if obj.kind == "items":
            item = np.arange(layout.item_unit.size)
            oof = sets.decisions[which[layout.item_unit], item]
            self.heldout_score_ = heldout.score_items(obj, oof, h)
            self.baselines_ = {n: heldout.score_items(obj, sets.decisions[i], h) for i, n in enumerate(baselines)}
            self.baseline_fold_scores_ = {
                n: [heldout.score_items(obj, sets.decisions[i], h, layout.item_fold == f) for f in range(F)]
                for i, n in enumerate(baselines)}
        else:
            units = np.arange(layout.fold.size)
            self.heldout_score_ = heldout.score_units(obj, sets.unit_cm[which, units], layout)
            self.baselines_ = {n: heldout.score_units(obj, sets.unit_cm[i], layout) for i, n in enumerate(baselines)}
            self.baseline_fold_scores_ = {
                n: [heldout.score_units(obj, sets.unit_cm[i], layout, layout.fold == f) for f in range(F)]
                for i, n in enumerate(baselines)}
        reps = heldout.replicates(problem, obj, layout, sets, [which] + [np.full(layout.fold.size, i) for i in range(nb)],
                                  int(self.n_boot), int(self.seed))  # one set of replicates for all of them
        self.heldout_ci_ = percentile_interval(reps[0])
        self.baseline_cis_ = {n: percentile_interval(reps[1 + i]) for i, n in enumerate(baselines)}
        # the gain over each preset, paired on the same replicates, each replicate re-running the folds' selection
        # (among a shortlist of each fold's best configs); the verdict rests on the default (the first preset)
        self.gains_ = {}
        if nb:
            ids = tie_order(problem.space, heldout.shortlist(scores.train, chosen, obj.sign), list(baselines.values()))
            cal_reps, base_reps = heldout.gain_replicates(
                problem, obj, layout, stack_configs(problem.space, list(baselines.values()), ids), nb,
                np.argsort(ids)[np.searchsorted(np.sort(ids), chosen)], int(self.n_boot), int(self.seed))
            self.gains_ = {n: paired_gain(self.heldout_score_, self.baselines_[n], cal_reps, base_reps[i], obj.sign)
                           for i, n in enumerate(baselines)}
        self.default_baseline_ = next(iter(baselines), None)

    def _results(self, space: Space, scores: Scores, obj: Objective, best: int) -> pd.DataFrame:
        """One row per config, sorted by rank with the chosen config first in its rank. The order is computed
        first and every column is written once in that order: a 10^6-config grid costs its ~20 columns, with no
        sorted copy of the whole frame beside the unsorted one."""
        whole = scores.whole
        rank = pd.Series(whole).rank(ascending=obj.sign < 0, method="min", na_option="bottom").to_numpy(np.int64)
        first = np.ones(whole.size, dtype=np.int8)
        first[best] = 0  # the tie-break's choice leads its rank
        order = np.lexsort((first, rank))  # stable: then by config id
        del first
        df = pd.DataFrame(space.take(order), index=pd.Index(order, name="config"))
        df["score"] = whole[order]
        with warnings.catch_warnings():  # all-NaN columns (undefined objective on a fold) stay NaN quietly
            warnings.simplefilter("ignore", RuntimeWarning)
            for name, fn, part in (("mean_train_score", np.nanmean, scores.train), ("std_train_score", np.nanstd, scores.train),
                                   ("mean_test_score", np.nanmean, scores.test), ("std_test_score", np.nanstd, scores.test)):
                df[name] = fn(part, axis=0)[order]
        for f in range(scores.test.shape[0]):
            df[f"split{f}_test_score"] = scores.test[f][order]
        df["rank"] = rank[order]
        return df

    # ------------------------------------------------------------------ results
    def _check_fitted(self) -> None:
        if not hasattr(self, "best_config_"):
            raise RuntimeError(f"{type(self).__name__} is not fitted yet; call fit(problem)")

    def to_dict(self) -> dict[str, Any]:
        """JSON-able summary: what the CLI prints with --json and the store keeps."""
        self._check_fitted()
        return {
            "scheme": self.scheme_,
            "best": {"config": dict(self.best_config_), "params": self.best_params_, "score": _num(self.best_score_),
                     "n_tied": self.n_tied_, "tie_anchor": self.tie_anchor_},
            "heldout": {"score": _num(self.heldout_score_), "ci": [_num(x) for x in self.heldout_ci_],
                        "folds": [_num(s) for s in self.fold_scores_]},
            "baselines": {k: _num(v) for k, v in self.baselines_.items()},
            "baselines_ci": {k: [_num(v[0]), _num(v[1])] for k, v in self.baseline_cis_.items()},
            "baselines_folds": {k: [_num(x) for x in v] for k, v in self.baseline_fold_scores_.items()},
            "gain": self.gain_dict(),
            "objective": self.objective, "folds": self.n_folds_, "group_by": self.group_by, "seed": int(self.seed),
            "n_configs": self.n_configs_, "n_units": self.n_units_, "n_items": self.n_items_,
            "space": self.space_.to_dict(), "warnings": list(self.warnings_),
        }

    def gain_dict(self) -> dict[str, Any] | None:
        """The held-out gain over the default preset (the problem's first baseline) with its paired 95% interval,
        the verdict and whether the config is promoted (lower bound > 0); `baselines` has the gain over each
        preset. None when the problem has no baseline to compare with."""
        self._check_fitted()
        name = self.default_baseline_
        if name is None:
            return None
        estimate, ci = self.gains_[name]
        return {"estimate": _num(estimate), "ci": [_num(ci[0]), _num(ci[1])], "baseline": name,
                "verdict": verdict(ci), "promoted": promoted(ci),
                "baselines": {n: {"estimate": _num(e), "ci": [_num(c[0]), _num(c[1])]} for n, (e, c) in self.gains_.items()}}
