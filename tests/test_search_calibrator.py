"""MatchCalibrator: planted truth is recovered, held-out scoring is honest and checkable, errors are clear."""
from __future__ import annotations

import json
import math
import threading

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from calibration.schemes.violations import COMPONENTS, HA_MATCH, STD_MATCH, MatchConfig, PairTable
from calibration.schemes.violations import reference as ref
from calibration.schemes.violations.calibrator import MatchCalibrator
from calibration.schemes.violations.space import SearchSpace
from calibration.schemes.violations.views import disagreements, threshold_curve
from calibration.search import Cancelled, objective_surface
from calibration.schemes.violations.synthetic import human_labels, synthetic_table

SPACE = SearchSpace(rule=(0.01, 0.25, 0.5, 0.75))  # std components; rule grid holds the planted 0.5


@pytest.fixture(scope="module")
def planted() -> tuple[PairTable, set, list[int]]:
    table = synthetic_table(400, seed=11)
    return table, human_labels(table), list(range(len(table.groups)))


@pytest.fixture(scope="module")
def fitted(planted: tuple) -> MatchCalibrator:
    table, human, labeled = planted
    return MatchCalibrator(space=SPACE, n_boot=200).fit(table, human, labeled)


def pair_decisions(table: PairTable, matches: set, labeled: list[int]) -> np.ndarray:
    p = table.pairs
    keep = np.isin(p["group"].to_numpy(), labeled)
    keys = zip(p["group"].to_numpy()[keep].tolist(), p["gt"].to_numpy()[keep].tolist(), p["pred"].to_numpy()[keep].tolist())
    return np.array([k in matches for k in keys])


def test_planted_truth_is_recovered_and_beats_the_spec_defaults(fitted: MatchCalibrator) -> None:
    # humans match iff overlap > 0.3 and rule > 0.5: both thresholds are on the grid, so the planted rule is a
    # config (any weights, t_match 0); equivalent forms (e.g. all weight on overlap, t_match 0.3) tie with it
    cv = fitted.cv_results_
    planted_cfgs = cv[(cv.t_overlap == 0.3) & (cv.t_rule == 0.5) & (cv.t_match == 0.0)]
    assert fitted.best_score_ == pytest.approx(planted_cfgs["score"].max())
    assert fitted.best_params_["thresholds"]["rule"] == 0.5
    assert fitted.heldout_score_ > 0.95
    assert fitted.heldout_score_ > fitted.defaults_["std_match"] + 0.03
    assert fitted.heldout_score_ > fitted.defaults_["ha_match"] + 0.03
    lo, hi = fitted.heldout_ci_
    assert lo <= fitted.heldout_score_ <= hi and hi - lo < 0.05
    assert fitted.warnings_ == []


def test_heldout_score_is_the_pooled_out_of_fold_kappa(planted: tuple, fitted: MatchCalibrator) -> None:
    """Recompute it independently: each fold's chosen config run by the scalar reference on that fold only."""
    table, human, labeled = planted
    folds = fitted.fold_assignment_
    assert sorted(folds.unique().tolist()) == list(range(5))
    samples = table.groups["sample_id"].to_numpy()
    for f in range(5):  # grouped by sample: no sample in two folds
        other = set(samples[folds.index[folds != f]])
        assert not other & set(samples[folds.index[folds == f]])
    machine: set = set()
    for f, cfg in enumerate(fitted.fold_configs_):
        in_fold = set(folds.index[folds == f].tolist())
        machine |= {m for m in ref.match_pair_table(table, MatchConfig.from_dict(cfg)) if m[0] in in_fold}
    y = pair_decisions(table, human, labeled)
    d = pair_decisions(table, machine, labeled)
    assert fitted.heldout_score_ == pytest.approx(cohen_kappa_score(y, d))
    std = pair_decisions(table, ref.match_pair_table(table, STD_MATCH), labeled)
    ha = pair_decisions(table, ref.match_pair_table(table, HA_MATCH), labeled)
    assert fitted.defaults_["std_match"] == pytest.approx(cohen_kappa_score(y, std))
    assert fitted.defaults_["ha_match"] == pytest.approx(cohen_kappa_score(y, ha))
    best = pair_decisions(table, ref.match_pair_table(table, fitted.best_config_), labeled)
    assert fitted.best_score_ == pytest.approx(cohen_kappa_score(y, best))
    assert fitted.best_score_ == fitted.cv_results_["score"].max()


def test_cv_results_and_json(fitted: MatchCalibrator) -> None:
    cv = fitted.cv_results_
    assert len(cv) == len(SPACE) == fitted.to_dict()["n_configs"]
    assert cv["score"].is_monotonic_decreasing
    assert cv.index[0] == fitted.best_index_
    for col in ("mean_train_score", "std_train_score", "mean_test_score", "split4_test_score", "rank", *[f"w_{c}" for c in COMPONENTS]):
        assert col in cv.columns
    d = json.loads(json.dumps(fitted.to_dict()))
    assert d["best"]["weights"] == fitted.best_params_["weights"]
    assert d["best"]["thresholds"] == fitted.best_params_["thresholds"]
    assert d["heldout"]["score"] == pytest.approx(fitted.heldout_score_)
    assert d["heldout"]["ci"] == pytest.approx(list(fitted.heldout_ci_))
    assert set(d["defaults"]) == {"std_match", "ha_match"}
    assert (d["objective"], d["folds"], d["warnings"]) == ("kappa", 5, [])
    cfg = fitted.best_config_
    assert [cfg.weights[c] for c in COMPONENTS] == [cv.iloc[0][f"w_{c}"] for c in COMPONENTS]


def test_same_seed_same_result_other_seed_other_folds(planted: tuple, fitted: MatchCalibrator) -> None:
    table, human, labeled = planted
    again = MatchCalibrator(space=SPACE, n_boot=200).fit(table, human, labeled)
    assert again.to_dict() == fitted.to_dict()
    other = MatchCalibrator(space=SPACE, n_boot=200, seed=1).fit(table, human, labeled)
    assert not other.fold_assignment_.equals(fitted.fold_assignment_)


def test_views_for_the_panel(planted: tuple, fitted: MatchCalibrator) -> None:
    table, human, labeled = planted
    cv = fitted.cv_results_
    surf = objective_surface(cv, "t_overlap", "t_match")
    assert surf.shape == (len(SPACE.match), len(SPACE.overlap))
    cell = cv[(cv.t_overlap == 0.1) & (cv.t_match == 0.4)]["score"].max()
    assert surf.loc[0.4, 0.1] == cell
    assert surf.to_numpy().max() == fitted.best_score_
    curve = threshold_curve(cv)
    assert curve["t_match"].tolist() == list(SPACE.match)
    assert curve["score"].max() == fitted.best_score_
    with pytest.raises(ValueError, match="dimension"):
        objective_surface(cv, "t_overlap", "colour")
    dis = disagreements(table, fitted.best_config_, human, labeled)
    machine = ref.match_pair_table(table, fitted.best_config_)
    expected = {k for k in (machine ^ human)}
    assert set(zip(dis["group"], dis["gt"], dis["pred"])) == expected
    assert (dis.machine != dis.human).all()
    assert list(dis.columns) == ["group", "sample_id", "checker", "gt", "pred", "score", "machine", "human"]
    assert dis.sample_id.tolist() == table.groups.sample_id.to_numpy()[dis.group].tolist()


def test_other_objectives_and_leave_one_checker_out(planted: tuple) -> None:
    table, human, labeled = planted
    small = SearchSpace(overlap=(0.0, 0.3), rule=(0.01, 0.5), match=(0.0, 0.5))
    for objective in ("f1", "accuracy", "mcc", "spearman", "kendall"):
        cal = MatchCalibrator(space=small, objective=objective, n_boot=50).fit(table, human, labeled)
        assert math.isfinite(cal.best_score_), objective
        assert cal.best_score_ == cal.cv_results_["score"].max()
    loco = MatchCalibrator(space=small, group_by="checker", n_boot=50).fit(table, human, labeled)
    assert loco.n_folds_ == 4
    checkers = table.groups["checker"].to_numpy()
    folds = loco.fold_assignment_
    for f in range(4):
        assert len(set(checkers[folds.index[folds == f]])) == 1
    assert loco.heldout_score_ > 0.9


def test_few_labels_warn(planted: tuple) -> None:
    table, human, _ = planted
    labeled = list(range(20))
    few = {h for h in human if h[0] < 20}
    cal = MatchCalibrator(space=SearchSpace(overlap=(0.0,), rule=(0.01,)), n_boot=20).fit(table, few, labeled)
    assert any("too few human labels" in w for w in cal.warnings_)
    assert any("too few human labels" in w for w in cal.to_dict()["warnings"])


class Recorder:
    def __init__(self, stop_after: int | None) -> None:
        self.calls: list[tuple[int, int, str]] = []
        self.stop_after = stop_after

    def update(self, done: int, total: int, message: str = "") -> None:
        self.calls.append((done, total, message))

    def cancelled(self) -> bool:
        return self.stop_after is not None and len(self.calls) > self.stop_after


def test_progress_reports_and_cancel_stops(planted: tuple) -> None:
    table, human, labeled = planted
    rec = Recorder(None)
    MatchCalibrator(space=SPACE, n_boot=10).fit(table, human, labeled, progress=rec)
    evals = [c for c in rec.calls if c[2].startswith("evaluating")]
    assert evals[0][0] == 0 and evals[-1][0] == evals[-1][1] > 0
    assert [c[0] for c in evals] == sorted(c[0] for c in evals)
    with pytest.raises(Cancelled):
        MatchCalibrator(space=SPACE).fit(table, human, labeled, progress=Recorder(stop_after=1))
    with pytest.raises(Cancelled):
        MatchCalibrator(space=SPACE).fit(table, human, labeled, cancel=lambda: True)
    stop = threading.Event()
    stop.set()
    with pytest.raises(Cancelled):
        MatchCalibrator(space=SPACE).fit(table, human, labeled, cancel=stop)


@pytest.mark.parametrize("kwargs, message", [
    ({"objective": "auc"}, "objective"),
    ({"folds": 1}, "folds"),
    ({"folds": 2.5}, "folds"),
    ({"group_by": "rater"}, "group_by"),
    ({"n_boot": -1}, "n_boot"),
    ({"min_labels": -3}, "min_labels"),
    ({"space": {"step": 0.1}}, "space"),
])
def test_parameter_validation(kwargs: dict, message: str) -> None:
    with pytest.raises((ValueError, TypeError), match=message):
        MatchCalibrator(**kwargs)


def test_input_validation(planted: tuple) -> None:
    table, human, labeled = planted
    cal = MatchCalibrator(space=SearchSpace(overlap=(0.0,), rule=(0.01,)))
    with pytest.raises(RuntimeError, match="not fitted"):
        cal.to_dict()
    with pytest.raises(ValueError, match="labeled_groups: no labeled"):
        cal.fit(table, set(), [])
    with pytest.raises(ValueError, match="unknown group id"):
        cal.fit(table, set(), [10**6])
    with pytest.raises(ValueError, match="not in labeled_groups"):
        cal.fit(table, {(5, 0, 0)}, [0, 1, 2])
    with pytest.raises(ValueError, match="not candidate pair"):
        cal.fit(table, {(0, 99, 0)}, labeled)
    with pytest.raises(ValueError, match="triples"):
        cal.fit(table, {(0, 1)}, labeled)
    with pytest.raises(ValueError, match="at least 5 labeled samples"):
        cal.fit(table, set(), [0, 1, 2, 3])  # 4 units of one sample
    broken = PairTable.from_frames(table.groups, table.pairs.drop(columns=["rule"]))
    with pytest.raises(ValueError, match=r"pairs: missing column\(s\) \['rule'\]"):
        cal.fit(broken, set(), labeled)
    one_checker = [g for g in labeled if table.groups.checker[g] == table.groups.checker[0]]
    with pytest.raises(ValueError, match="leave-one-checker-out"):
        MatchCalibrator(group_by="checker").fit(table, set(), one_checker)
