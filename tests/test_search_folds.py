"""calibration.search without sklearn at start-up: its folds equal GroupKFold's, its estimator API works with clone."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GroupKFold

from calibration.search import Calibrator
from calibration.search.folds import group_folds


@pytest.mark.parametrize("n_groups,n_splits,seed", [(5, 5, 0), (17, 5, 0), (17, 5, 3), (60, 3, 42), (1000, 10, 7),
                                                     (8, 2, np.int64(5))])
def test_group_folds_equal_sklearn_group_kfold_shuffled(n_groups: int, n_splits: int, seed: int) -> None:
    rng = np.random.default_rng(n_groups)
    groups = rng.integers(0, n_groups, size=n_groups * 4)
    groups[:n_groups] = np.arange(n_groups)  # every group present
    rng.shuffle(groups)
    want = np.full(groups.size, -1)
    for f, (_, test) in enumerate(GroupKFold(n_splits=n_splits, shuffle=True, random_state=seed).split(groups, groups=groups)):
        want[test] = f
    np.testing.assert_array_equal(group_folds(groups, n_splits, seed), want)


def test_group_folds_refuse_more_folds_than_groups() -> None:
    with pytest.raises(ValueError, match="n_splits=4 greater than the number of groups: 3"):
        group_folds(np.array([0, 1, 2, 2]), 4, 0)


def test_calibrator_params_follow_the_sklearn_estimator_api() -> None:
    cal = Calibrator(objective="f1", folds=3, n_boot=10)
    params = cal.get_params()
    assert params["objective"] == "f1" and params["folds"] == 3 and params["seed"] == 0
    assert sorted(params) == sorted(Calibrator._get_param_names())
    twin = clone(cal)
    assert type(twin) is Calibrator and twin is not cal and twin.get_params() == params
    assert cal.set_params(seed=4, folds=5) is cal and cal.seed == 4 and cal.folds == 5
    assert twin.seed == 0  # the clone is independent
    with pytest.raises(ValueError, match="Invalid parameter 'nope'"):
        cal.set_params(nope=1)
    assert repr(Calibrator()) == "Calibrator()" and repr(cal) == "Calibrator(n_boot=10, objective='f1', seed=4)"  # folds=5 is the default
