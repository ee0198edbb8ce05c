"""The generic calibration engine on toy problems: it recovers planted parameters, streams chunks without changing
results, breaks ties towards the baseline, and the violations problem's fast `stats` equals its `decide`."""
from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score, matthews_corrcoef

from calibration.schemes.violations.search import ViolationsProblem
from calibration.schemes.violations.space import SearchSpace
from calibration.schemes.violations.synthetic import human_labels, synthetic_table
from calibration.search import Calibrator, Categorical, Grid, Simplex, Space
from calibration.search.objectives import kappa_cm, mcc_cm, weighted_kappa_cm
from calibration.search.problem import SearchProblem, confusion


class ThresholdProblem:
    """Items with a confidence score; humans say yes when score > a hidden threshold (plus label noise)."""

    n_classes = 2
    group_noun = "sample"

    def __init__(self, scores: np.ndarray, human: np.ndarray, items_per_sample: int = 3,
                 grid: tuple[float, ...] = tuple(np.round(np.arange(0, 1.0001, 0.02), 2)),
                 baseline: float | None = 0.5) -> None:
        self.scores, self.human = scores, human.astype(np.int64)
        self.space = Space((Grid("threshold", grid),))
        self.units = pd.DataFrame({"group": [f"s{i // items_per_sample}" for i in range(scores.size)]})
        self.item_unit = np.arange(scores.size)
        self._baseline = baseline

    def decide(self, configs: dict[str, np.ndarray]) -> np.ndarray:
        return (self.scores[None, :] > configs["threshold"][:, None]).astype(np.int64)

    def baselines(self) -> dict[str, dict[str, Any]]:
        return {} if self._baseline is None else {"default": {"threshold": self._baseline}}

    def to_params(self, config: dict[str, Any]) -> dict[str, Any]:
        return {"threshold": float(config["threshold"])}


def planted(n: int = 3000, hidden: float = 0.62, noise: float = 0.05, seed: int = 0) -> ThresholdProblem:
    rng = np.random.default_rng(seed)
    scores = rng.random(n)
    human = (scores > hidden) ^ (rng.random(n) < noise)
    return ThresholdProblem(scores, human)


def test_toy_binary_problem_recovers_the_hidden_threshold_with_a_heldout_interval() -> None:
    problem = planted()
    assert isinstance(problem, SearchProblem)
    cal = Calibrator(objective="kappa", folds=5, n_boot=300).fit(problem)
    assert abs(cal.best_params_["threshold"] - 0.62) <= 0.02
    assert all(abs(c["threshold"] - 0.62) <= 0.04 for c in cal.fold_configs_)
    lo, hi = cal.heldout_ci_
    assert lo <= cal.heldout_score_ <= hi and 0 < hi - lo < 0.1
    assert cal.heldout_score_ > 0.8 > cal.baselines_["default"] + 0.1  # the calibrated threshold beats 0.5
    # held-out = pooled out-of-fold kappa, recomputed by scikit-learn from each fold's own choice
    fold = cal.layout_.fold
    oof = np.empty(problem.scores.size, dtype=int)
    for f, cfg in enumerate(cal.fold_configs_):
        oof[fold == f] = problem.scores[fold == f] > cfg["threshold"]
    assert cal.heldout_score_ == pytest.approx(cohen_kappa_score(problem.human, oof))
    groups = problem.units["group"].to_numpy()
    for f in range(5):  # grouped: a sample's items never straddle folds
        assert not set(groups[fold == f]) & set(groups[fold != f])
    cv = cal.cv_results_
    assert cv.index[0] == cal.best_index_ and len(cv) == problem.space.n_configs
    assert len(cal.baseline_fold_scores_["default"]) == 5
    d = json.loads(json.dumps(cal.to_dict()))  # what a run stores
    assert d["best"]["params"] == cal.best_params_ and d["heldout"]["ci"] == pytest.approx(list(cal.heldout_ci_))


def test_chunked_streaming_gives_the_same_results() -> None:
    problem = planted(n=800, seed=2)
    whole = Calibrator(n_boot=50).fit(problem)
    small = Calibrator(n_boot=50, chunk_size=7).fit(problem)
    pd.testing.assert_frame_equal(whole.cv_results_, small.cv_results_)
    assert (whole.heldout_score_, whole.heldout_ci_) == (small.heldout_score_, small.heldout_ci_)


def test_ties_go_to_the_config_closest_to_the_baseline_and_are_counted() -> None:
    rng = np.random.default_rng(1)
    scores = rng.choice([0.1, 0.9], size=600)  # every threshold in [0.1, 0.9) decides the same
    human = scores > 0.5
    cal = Calibrator(n_boot=0).fit(ThresholdProblem(scores, human, baseline=0.44))
    assert cal.n_tied_ == 40  # thresholds 0.10 .. 0.88
    assert cal.best_params_["threshold"] == 0.44 and cal.tie_anchor_ == "default"
    lowest = Calibrator(n_boot=0).fit(ThresholdProblem(scores, human, baseline=None))
    assert lowest.best_params_["threshold"] == 0.1 and lowest.tie_anchor_ is None


class SlopeProblem:
    """Continuous decisions: humans give 2 x + noise; the machine predicts slope * x."""

    n_classes = 0

    def __init__(self, n: int = 500, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        self.x = rng.random(n)
        self.human = 2 * self.x + rng.normal(0, 0.1, n)
        self.space = Space((Grid("slope", tuple(np.round(np.arange(0, 4.01, 0.25), 2))),))
        self.units = pd.DataFrame({"group": np.arange(n) // 2})
        self.item_unit = np.arange(n)

    def decide(self, configs: dict[str, np.ndarray]) -> np.ndarray:
        return configs["slope"][:, None] * self.x[None, :]

    def baselines(self) -> dict[str, dict[str, Any]]:
        return {"identity": {"slope": 1.0}}

    def to_params(self, config: dict[str, Any]) -> dict[str, Any]:
        return dict(config)


def test_item_objectives_on_continuous_decisions_minimise_rmse() -> None:
    cal = Calibrator(objective="rmse", n_boot=100).fit(SlopeProblem())
    assert cal.best_params_["slope"] == 2.0
    assert cal.heldout_score_ < cal.baselines_["identity"]  # lower is better
    lo, hi = cal.heldout_ci_
    assert lo <= cal.heldout_score_ <= hi
    assert cal.cv_results_["rank"].iloc[0] == 1 and cal.cv_results_["score"].is_monotonic_increasing
    with pytest.raises(ValueError, match="class decisions"):
        Calibrator(objective="kappa").fit(SlopeProblem())


def test_weighted_and_multiclass_objectives_match_scikit_learn() -> None:
    rng = np.random.default_rng(0)
    for _ in range(100):
        k = int(rng.integers(2, 6))
        n = int(rng.integers(5, 60))
        y, d = rng.integers(0, k, n), np.clip(rng.integers(0, k, n) + rng.integers(-1, 2, n), 0, k - 1)
        cm = confusion(d[None], y, np.zeros(n, dtype=int), 1, k)[0, 0]
        labels = list(range(k))
        if len(set(y) | set(d)) > 1:
            assert weighted_kappa_cm(cm) == pytest.approx(cohen_kappa_score(y, d, labels=labels, weights="quadratic"))
            assert kappa_cm(cm) == pytest.approx(cohen_kappa_score(y, d, labels=labels))
            assert mcc_cm(cm) == pytest.approx(matthews_corrcoef(y, d), abs=1e-12)


def test_space_ids_chunks_and_distance() -> None:
    space = Space((Categorical("variant", ("a", "b")), Grid("t", (0.0, 0.5, 1.0)),
                   Simplex(("w1", "w2", "w3"), 0.5, fixed={"w3": 0.0})))
    assert space.shape == (2, 3, 3) and space.n_configs == 18
    assert space.config(0) == {"variant": "a", "t": 0.0, "w1": 1.0, "w2": 0.0, "w3": 0.0}
    assert space.config(17) == {"variant": "b", "t": 1.0, "w1": 0.0, "w2": 1.0, "w3": 0.0}
    frame = space.frame()
    streamed = pd.concat([pd.DataFrame(c, index=range(lo, hi)) for lo, hi, c in space.chunks(5)])
    pd.testing.assert_frame_equal(frame, streamed.rename_axis("config"), check_dtype=False)
    d = space.distance(space.take([0, 1, 17]), {"variant": "a", "t": 0.25, "w1": 1.0, "w2": 0.0, "w3": 0.0})
    np.testing.assert_allclose(d, [0.25, 0.25 + 0.5, 1 + 0.75 + 1.0])


@pytest.mark.parametrize("matching", ["greedy", "optimal"])
def test_violations_fast_stats_equal_the_counted_decisions(matching: str) -> None:
    table = synthetic_table(120, seed=4)
    labeled = [g for g in range(len(table.groups)) if g % 5]
    human = {h for h in human_labels(table, noise=0.1, seed=2) if h[0] % 5}
    space = SearchSpace.preset("ha", step=0.5, overlap=(-np.inf, 0.0, 0.2), rule=(0.01, 0.4), matching=matching)
    problem = ViolationsProblem(table, human, labeled, space)
    rng = np.random.default_rng(0)
    ids = np.sort(rng.choice(problem.space.n_configs, 40, replace=False))
    cols = problem.space.take(ids)
    for name, value in problem.baselines()["ha_match"].items():  # an off-grid config too (greedy, spec thresholds)
        cols[name] = np.append(cols[name], value)
    n_cells = 7
    cell = rng.integers(0, n_cells, problem.item_unit.size)
    fast = problem.stats(cols, cell, n_cells)
    counted = confusion(problem.decide(cols), problem.human, cell, n_cells, 2)
    np.testing.assert_array_equal(fast, counted)
    assert fast[..., 1, :].sum() > 0 and fast[..., :, 1].sum() > 0


def test_the_scheme_hook_builds_the_violations_problem_the_calibrator_fits() -> None:
    from calibration.schemes.violations.search import search_problem
    from calibration.schemes.violations.calibrator import MatchCalibrator

    table = synthetic_table(60, seed=9)
    human = human_labels(table, noise=0.05, seed=3)
    labeled = [g for g in range(len(table.groups)) if g % 3]
    labels = {(table.groups.sample_id[g], table.groups.checker[g]):
              {"matches": [[a, b] for (h, a, b) in sorted(human) if h == g]} for g in labeled}
    space = SearchSpace(step=0.25, overlap=(0.0, 0.3), rule=(0.01, 0.5), match=(0.0, 0.25, 0.5))
    problem = search_problem([], labels, {"pair_table": table, "space": space})
    assert isinstance(problem, ViolationsProblem) and problem.labeled.tolist() == labeled
    generic = Calibrator(objective="mcc", group_by="checker", n_boot=100).fit(problem)
    front = MatchCalibrator(space=space, objective="mcc", group_by="checker", n_boot=100).fit(
        table, {h for h in human if h[0] in set(labeled)}, labeled)
    assert generic.best_index_ == front.best_index_ and generic.heldout_ci_ == front.heldout_ci_
    assert generic.best_params_["weights"] == front.best_params_["weights"]
    assert generic.best_params_["scheme"] == "violations"
    assert search_problem([], {}, {"pair_table": table}) is None
