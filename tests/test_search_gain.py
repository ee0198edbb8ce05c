"""The held-out gain over the default (issue #26 item 3): the paired bootstrap equals a plain resampling loop on the
same draws, the promotion rule on hand-made intervals, and the engine's verdict on planted problems."""
from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score, roc_auc_score

from calibration.agreement import percentile_interval, resample_index_chunks
from calibration.search import Calibrator, Grid, Space, heldout
from calibration.search.engine import stack_configs, tie_order
from calibration.search.gain import (
    BETTER,
    NO_BETTER,
    paired_gain,
    promoted,
    sentence,
    verdict,
)
from calibration.search.heldout import BOOT_CHUNK


class Threshold:
    """Items with a score, several per sample (the CV group); humans say yes above a hidden threshold (plus noise);
    the default preset is the threshold `default`."""

    n_classes = 2
    group_noun = "sample"

    def __init__(self, n: int = 600, hidden: float = 0.62, noise: float = 0.1, default: float = 0.5,
                 per_sample: int = 3, seed: int = 0, grid: tuple[float, ...] = (0.3, 0.4, 0.5, 0.6, 0.7)) -> None:
        rng = np.random.default_rng(seed)
        self.scores = rng.random(n)
        self.human = ((self.scores > hidden) ^ (rng.random(n) < noise)).astype(np.int64)
        self.space = Space((Grid("threshold", grid),))
        self.units = pd.DataFrame({"group": [f"s{i // per_sample:04d}" for i in range(n)]})
        self.item_unit = np.arange(n)
        self.default = default

    def decide(self, configs: dict[str, np.ndarray]) -> np.ndarray:
        return (self.scores[None, :] > configs["threshold"][:, None]).astype(np.int64)

    def baselines(self) -> dict[str, dict[str, Any]]:
        return {"default": {"threshold": self.default}, "other": {"threshold": 0.3}}

    def to_params(self, config: dict[str, Any]) -> dict[str, Any]:
        return {"threshold": float(config["threshold"])}


class Scored(Threshold):
    """The same items decided as scores (an item objective): the decision is -|score - centre|, the default centre
    0 (the plain score's ranking)."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(grid=(0.0, 0.3, 0.6, 0.9), default=0.0, **kw)

    def decide(self, configs: dict[str, np.ndarray]) -> np.ndarray:
        return -np.abs(self.scores[None, :] - configs["threshold"][:, None])

    def baselines(self) -> dict[str, dict[str, Any]]:
        return {"default": {"threshold": self.default}}


def _plain_loop(problem: Threshold, cal: Calibrator, score: Any, n_boot: int, seed: int) -> np.ndarray:
    """The gain per replicate, one replicate at a time and from scratch: rebuild the resampled data set from the
    drawn samples (the project's one draw stream, same seed; a drawn sample keeps its fold), choose each fold's
    threshold again on the replicate's other folds with scikit-learn (the grid is smaller
    than the shortlist, so every config competes; ties go to the config nearest a preset, as the engine breaks
    them), and score the out-of-fold decisions minus the default's."""
    order = tie_order(problem.space, np.arange(problem.space.n_configs), list(problem.baselines().values()))
    grid = np.asarray(problem.space.take(order)["threshold"])
    every = problem.decide({"threshold": grid})
    default = problem.decide({"threshold": np.array([problem.default])})[0]
    group, fold = cal.layout_.group, cal.layout_.fold
    members = [np.flatnonzero(group == g) for g in range(cal.layout_.n_groups)]
    out = []
    for idx in resample_index_chunks(cal.layout_.n_groups, n_boot, seed, BOOT_CHUNK):
        for row in idx:
            items = np.concatenate([members[g] for g in row])
            h, oof = problem.human[items], np.empty(items.size, dtype=every.dtype)
            for f in range(cal.n_folds_):
                test = fold[items] == f
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    s = np.array([score(h[~test], d[items][~test]) for d in every], dtype=float)
                s = np.where(np.isfinite(s), s, -np.inf)
                pick = int(np.argmax(s)) if np.isfinite(s.max()) else int(np.flatnonzero(order == cal.fold_best_[f])[0])
                oof[test] = every[pick][items][test]
            out.append(score(h, oof) - score(h, default[items]))
    return np.array(out)


@pytest.mark.parametrize("seed, noise", [(0, 0.1), (3, 0.45)])
def test_paired_bootstrap_equals_a_plain_resampling_loop_confusion_objective(seed: int, noise: float) -> None:
    problem = Threshold(seed=seed, noise=noise, n=300)
    cal = Calibrator(objective="kappa", folds=4, n_boot=80, seed=seed).fit(problem)
    diffs = _plain_loop(problem, cal, cohen_kappa_score, 80, seed)
    estimate, ci = cal.gains_["default"]
    assert estimate == pytest.approx(cal.heldout_score_ - cal.baselines_["default"])
    assert ci == pytest.approx(percentile_interval(diffs), abs=1e-12)
    d = cal.gain_dict()
    assert d["baseline"] == "default" and set(d["baselines"]) == {"default", "other"}
    assert d["promoted"] == (ci[0] > 0) and d["verdict"] == (BETTER if ci[0] > 0 else NO_BETTER)


def test_paired_bootstrap_equals_a_plain_resampling_loop_item_objective() -> None:
    problem = Scored(seed=3)
    cal = Calibrator(objective="auroc", folds=3, n_boot=80, seed=5).fit(problem)
    diffs = _plain_loop(problem, cal, roc_auc_score, 80, 5)
    assert cal.gains_["default"][1] == pytest.approx(percentile_interval(diffs), abs=1e-12)


def test_replicates_rerun_the_selection() -> None:
    """Near the null (labels mostly noise) the folds' choices vary with the data: holding them fixed (the held-out
    score's replicates) gives a narrower gain interval than re-choosing them on every replicate."""
    problem = Threshold(n=600, noise=0.45, seed=4)
    cal = Calibrator(objective="kappa", folds=4, n_boot=300, seed=4).fit(problem)
    sets = heldout.decide_sets(problem, stack_configs(problem.space, [{"threshold": 0.5}],
                                                      np.unique(cal.fold_best_)), cal.layout_, cal.objective_)
    which = 1 + np.searchsorted(np.unique(cal.fold_best_), np.asarray(cal.fold_best_)[cal.layout_.fold])
    a, b = heldout.replicates(problem, cal.objective_, cal.layout_, sets, [which, np.zeros_like(which)], 300, 4)
    f_lo, f_hi = percentile_interval(a - b)
    lo, hi = cal.gains_["default"][1]
    assert hi - lo > 1.1 * (f_hi - f_lo)


def test_the_gain_is_paired_not_two_intervals() -> None:
    """Pairing matters: the gain's interval is narrower than the difference of the two marginal intervals."""
    problem = Threshold(n=900, hidden=0.55, noise=0.15, seed=1)
    cal = Calibrator(objective="kappa", folds=5, n_boot=300, seed=1).fit(problem)
    lo, hi = cal.gains_["default"][1]
    (a_lo, a_hi), (b_lo, b_hi) = cal.heldout_ci_, cal.baseline_cis_["default"]
    assert hi - lo < (a_hi - a_lo) + (b_hi - b_lo)


def test_a_planted_improvement_is_promoted_and_an_equal_default_is_not() -> None:
    better = Calibrator(objective="kappa", folds=5, n_boot=300).fit(Threshold(n=1500, hidden=0.7, default=0.3))
    assert better.gain_dict()["promoted"] and better.gain_dict()["verdict"] == BETTER
    assert better.gain_dict()["ci"][0] > 0
    # the default is already the hidden threshold: the calibrated config cannot do better, the interval holds 0
    same = Calibrator(objective="kappa", folds=5, n_boot=300).fit(Threshold(n=1500, hidden=0.5, default=0.5))
    g = same.gain_dict()
    assert g["ci"][0] <= 0 and not g["promoted"] and g["verdict"] == NO_BETTER


def test_lower_is_better_objectives_gain_when_the_error_falls() -> None:
    estimate, ci = paired_gain(0.2, 0.5, np.array([0.1, 0.2, 0.3]), np.array([0.5, 0.6, 0.4]), sign=-1.0)
    assert estimate == pytest.approx(0.3) and ci[0] > 0


@pytest.mark.parametrize("ci, expected", [
    ((0.01, 0.2), True), ((1e-9, 1e-8), True),
    ((0.0, 0.2), False), ((-0.01, 0.2), False), ((-0.3, -0.1), False),
    ((math.nan, math.nan), False), ((None, None), False), ([None, 0.4], False),
])
def test_the_promotion_rule_is_the_lower_bound_above_zero(ci: Any, expected: bool) -> None:
    assert promoted(ci) is expected
    assert verdict(ci) == (BETTER if expected else NO_BETTER)


def test_undefined_replicates_are_dropped_and_none_give_no_interval() -> None:
    _, ci = paired_gain(0.5, 0.4, np.array([0.5, math.nan, 0.6]), np.array([0.4, 0.4, math.nan]))
    assert ci == (pytest.approx(0.1), pytest.approx(0.1))
    _, none = paired_gain(0.5, 0.4, np.empty(0), np.empty(0))
    assert all(math.isnan(x) for x in none) and not promoted(none)


def test_the_sentence_says_the_verdict_first_in_words() -> None:
    g = {"estimate": 0.05, "ci": [0.01, 0.09], "baseline": "std_match", "verdict": BETTER, "promoted": True}
    s = sentence(g, "kappa")
    assert s.startswith("The calibrated config is better than the default (std_match) on held-out data")
    assert "+0.050" in s and "[0.010, 0.090]" in s
    s = sentence(g | {"ci": [-0.01, 0.09], "verdict": NO_BETTER, "promoted": False})
    assert s.startswith("The calibrated config is no better than the default (std_match) on held-out data")
    assert "no interval" in sentence(g | {"ci": [None, None], "verdict": NO_BETTER})
    assert "No default" in sentence(None)
