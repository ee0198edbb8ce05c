"""Vectorised objectives agree with scikit-learn / scipy (and calibration.agreement's conventions)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import accuracy_score, cohen_kappa_score, f1_score, matthews_corrcoef

from calibration import agreement
from calibration.search.objectives import (
    accuracy, f1, get, kappa, kendall_rows, mcc, score_confusion, spearman_rows, strata_rank,
)


def confusion(y: np.ndarray, d: np.ndarray) -> tuple[int, int, int, int]:
    return int((y & d).sum()), int((~y & d).sum()), int((y & ~d).sum()), int((~y & ~d).sum())


def test_pair_objectives_match_sklearn_on_random_decisions() -> None:
    rng = np.random.default_rng(0)
    rows = []
    for _ in range(200):
        n = int(rng.integers(2, 40))
        y = rng.random(n) < rng.random()
        d = rng.random(n) < rng.random()
        rows.append((y, d, confusion(y, d)))
    c = np.array([r[2] for r in rows]).T  # vectorised over 200 "configs" at once
    k, f, a, m = kappa(*c), f1(*c), accuracy(*c), mcc(*c)
    for i, (y, d, _) in enumerate(rows):
        if len(set(y.tolist()) | set(d.tolist())) < 2:
            assert math.isnan(k[i]) and math.isnan(agreement.cohen_kappa(y.tolist(), d.tolist()))
        else:
            assert k[i] == pytest.approx(cohen_kappa_score(y, d))
        assert f[i] == pytest.approx(f1_score(y, d, labels=[False, True], zero_division=0.0))
        assert a[i] == pytest.approx(accuracy_score(y, d))
        if len(set(y.tolist()) | set(d.tolist())) > 1:
            assert m[i] == pytest.approx(matthews_corrcoef(y, d))
        else:
            assert m[i] == 0.0  # scikit-learn's value when a side is constant


def test_rank_correlations_match_scipy_with_ties() -> None:
    rng = np.random.default_rng(1)
    x = rng.integers(0, 4, size=(300, 5)).astype(float)  # many ties
    y = rng.integers(0, 4, size=5).astype(float)
    s, t = spearman_rows(x, y), kendall_rows(x, y)
    for i in range(len(x)):
        exp_s, exp_t = agreement.spearman(x[i].tolist(), y.tolist()), agreement.kendall(x[i].tolist(), y.tolist())
        if math.isnan(exp_s):
            assert math.isnan(s[i]) and math.isnan(t[i])
        else:
            assert s[i] == pytest.approx(stats.spearmanr(x[i], y).statistic)
            assert t[i] == pytest.approx(stats.kendalltau(x[i], y).statistic)
            assert (s[i], t[i]) == pytest.approx((exp_s, exp_t))


def test_checker_score_ranks_checkers_by_f1() -> None:
    denom = np.array([10.0, 10.0, 10.0, 10.0])
    human = np.array([1.0, 2.0, 3.0, 4.0])
    same_order = np.array([[0.5, 1.0, 1.5, 3.0]])
    reversed_ = np.array([[4.0, 3.0, 2.0, 1.0]])
    assert strata_rank("spearman", same_order, human, denom)[0] == pytest.approx(1.0)
    assert strata_rank("kendall", reversed_, human, denom)[0] == pytest.approx(-1.0)


def test_confusion_and_strata_scores_aggregate_counts() -> None:
    # two strata: stratum 0 all correct (3 matched, 2 rejected), stratum 1 all wrong; cm[human, machine]
    cm = np.array([[[2, 0], [0, 3]], [[0, 2], [2, 0]]])
    assert score_confusion(get("accuracy"), cm[0]) == 1.0
    assert score_confusion(get("accuracy"), cm[1]) == 0.0
    assert score_confusion(get("f1"), cm.sum(axis=0)) == pytest.approx(2 * 3 / (2 * 3 + 2 + 2))
    # machine rates 3/5, 2/4 vs human 3/5, 2/4 (weights = items): same order across the two strata
    assert score_confusion(get("spearman"), cm, np.array([5.0, 4.0])) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="objective"):
        get("auc")


def test_balanced_accuracy_matches_sklearn_with_rare_and_missing_classes() -> None:
    import warnings

    from sklearn.metrics import balanced_accuracy_score

    from calibration.search.objectives import balanced_accuracy_cm

    rng = np.random.default_rng(3)
    for k in (2, 3, 4):
        cms, pairs = [], []
        for _ in range(100):
            n = int(rng.integers(1, 30))
            y = rng.choice(k, n, p=rng.dirichlet(np.ones(k) * 0.5))  # some classes rare or absent
            d = rng.integers(0, k, n)
            cm = np.zeros((k, k))
            np.add.at(cm, (y, d), 1)
            cms.append(cm)
            pairs.append((y, d))
        got = balanced_accuracy_cm(np.array(cms))  # vectorised over 100 "configs"
        for g, (y, d) in zip(got, pairs):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # sklearn warns when the machine uses a class the humans did not
                assert g == pytest.approx(balanced_accuracy_score(y, d))
    assert math.isnan(balanced_accuracy_cm(np.zeros((2, 2))))
    assert get("balanced_accuracy").kind == "confusion"
