"""Judge calibration through the generic engine: a planted threshold is recovered per judge (either orientation),
the weighted vote finds the informative judge, held-out figures come with intervals, and bad options are refused."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from calibration.schemes.judge.scheme import SCHEME
from calibration.search.engine import Calibrator
from calibration.search.problem import check_problem


def planted(n: int = 300, seed: int = 0) -> tuple[list[Any], dict]:
    """Human positive exactly when judge "c" (a consistency score, high = negative) is below 0.3, and when judge
    "r" (a risk score on 0..10, high = positive) is at least 6; judge "noise" is random."""
    rng = np.random.default_rng(seed)
    c = rng.uniform(0, 1, n).round(3)
    y = (c < 0.3).astype(int)
    r = np.where(y == 1, rng.uniform(6, 10, n), rng.uniform(0, 5.99, n)).round(2)
    noise = rng.uniform(0, 1, n).round(3)
    recs, labels = [], {}
    for i in range(n):
        raw = {"scheme": "judge", "id": f"s{i}", "text": "t",
               "judges": {"c": {"score": float(c[i]), "high_means_positive": False},
                          "r": {"score": float(r[i])}, "noise": {"score": float(noise[i])}}}
        recs.append(SCHEME.parse(raw).record)
        labels[(f"s{i}", "")] = {"label": bool(y[i])}
    return recs, labels


@pytest.mark.parametrize("judge", ["c", "r"])
def test_threshold_is_recovered_with_heldout_figures(judge: str) -> None:
    records, labels = planted()
    problem = SCHEME.search_problem(records, labels, {"target": "threshold", "judge": judge, "reference": "adjudicated"})
    check_problem(problem)
    cal = Calibrator(objective="kappa", folds=5, seed=0, n_boot=100).fit(problem)
    t = cal.best_params_["thresholds"][judge]
    scores = np.array([r.judges[judge].score for r in records])
    human = np.array([labels[(r.id, "")]["label"] for r in records])
    if judge == "c":  # a consistency score: positive below t; any t in (max positive score, min negative score]
        assert t == 0.3 and scores[human].max() < t <= scores[~human].min()
    else:  # the candidates are the scores' quantiles: any t in (max negative, min positive] separates them
        assert scores[~human].max() < t <= scores[human].min()
    assert cal.best_score_ == pytest.approx(1.0)
    assert cal.heldout_score_ > 0.9 and cal.heldout_ci_[0] <= cal.heldout_score_ <= cal.heldout_ci_[1]
    assert "default" in cal.baselines_
    evaluated = SCHEME.evaluate(records, labels, {"reference": "adjudicated", "params": [cal.best_params_], "n_boot": 0})
    assert evaluated.data["judges"][judge]["kappa"]["estimate"] == pytest.approx(1.0)


def test_grouped_units_one_per_judge_and_sample_without_a_judge_option() -> None:
    records, labels = planted(n=40)
    problem = SCHEME.search_problem(records, labels, {"reference": "adjudicated"})
    assert len(problem.units) == 120 and set(problem.units["stratum"]) == {"c", "r", "noise"}
    assert problem.units["group"].nunique() == 40


def test_weighted_vote_puts_its_weight_on_informative_judges() -> None:
    records, labels = planted()
    problem = SCHEME.search_problem(records, labels, {"target": "vote", "reference": "adjudicated", "step": 0.25,
                                                      "thresholds": {"r": 6.0, "c": 0.3, "noise": 0.5}})
    check_problem(problem)
    cal = Calibrator(objective="kappa", folds=4, seed=1, n_boot=50).fit(problem)
    w = cal.best_params_["weights"]
    assert cal.best_score_ == pytest.approx(1.0) and w["noise"] < w["c"] + w["r"]
    assert set(cal.baselines_) == {"majority"} and cal.best_params_["thresholds"]["r"] == 6.0


def test_unlabeled_option_and_refusals() -> None:
    records, labels = planted(n=20)
    some = dict(list(labels.items())[:5])
    assert SCHEME.search_problem(records, some, {"judge": "c", "reference": "adjudicated"}).units.shape[0] == 5
    every = SCHEME.search_problem(records, some, {"judge": "c", "reference": "adjudicated", "unlabeled": True})
    assert every.units["labeled"].sum() == 5 and len(every.units) == 20
    assert SCHEME.search_problem(records, {}, {"reference": "adjudicated"}) is None
    with pytest.raises(ValueError, match="judge"):
        SCHEME.search_problem(records, labels, {"judge": "nobody"})
    with pytest.raises(ValueError, match="target"):
        SCHEME.search_problem(records, labels, {"target": "everything"})
