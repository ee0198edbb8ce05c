"""Judge evaluation: the figures equal scikit-learn's on the data, the vectorised bootstrap equals a plain loop over
the same resampled samples, reliability and ECE by hand, the three human references and the human ceiling."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm
from sklearn.metrics import balanced_accuracy_score, cohen_kappa_score, f1_score, roc_auc_score

from calibration.agreement import percentile_interval, resample_index_chunks
from calibration.schemes.judge.columns import decisions, judge_columns
from calibration.schemes.judge.evaluation import expected_calibration_error, judge_figures, reliability
from calibration.schemes.judge.scheme import SCHEME
from tests.test_judge_scheme import labels_of, synthetic


def test_figures_equal_sklearn_and_auroc_is_near_the_planted_one() -> None:
    records, y, a = synthetic(n=2000, seed=1, shift=1.0)
    rep = SCHEME.evaluate(records, labels_of(records, y), {"n_boot": 0, "reference": "adjudicated"})
    fa = rep.data["judges"]["a"]
    assert fa["auroc"]["estimate"] == pytest.approx(roc_auc_score(y, a), abs=1e-12)
    assert abs(fa["auroc"]["estimate"] - norm.cdf(1 / math.sqrt(2))) < 0.03  # population AUROC 0.760
    cols = judge_columns(records)
    t = fa["threshold"]
    assert t == pytest.approx(float(np.median(a)))  # not a probability: the median is the default threshold
    d = (a >= t).astype(int)
    assert fa["balanced_accuracy"]["estimate"] == pytest.approx(balanced_accuracy_score(y, d))
    assert fa["f1"]["estimate"] == pytest.approx(f1_score(y, d))
    assert fa["kappa"]["estimate"] == pytest.approx(cohen_kappa_score(y, d))
    # b is a consistency score: it ranks positives low, so its AUROC is taken on 1 - score
    fb = rep.data["judges"]["b"]
    b = cols.scores[cols.index("b")]
    assert fb["auroc"]["estimate"] == pytest.approx(roc_auc_score(y, 1 - b)) and fb["auroc"]["estimate"] > 0.8
    assert fb["probability"] and not fa["probability"]
    assert fb["kappa"]["estimate"] == pytest.approx(cohen_kappa_score(y, (b < 0.5).astype(int)))


def test_intervals_equal_a_plain_loop_over_the_same_draws() -> None:
    records, y, a = synthetic(n=150, seed=2)
    cols = judge_columns(records)
    t = cols.default_threshold
    got = judge_figures(cols, y.astype(float), t, n_boot=120, seed=7)
    b = cols.scores[1]
    reps: dict[str, list[float]] = {k: [] for k in ("auroc", "balanced_accuracy", "f1", "kappa", "ece_b")}
    for chunk in resample_index_chunks(y.size, 120, 7):
        for idx in chunk:
            yy, aa, bb = y[idx], a[idx], b[idx]
            d = (aa >= t[0]).astype(int)
            reps["auroc"].append(roc_auc_score(yy, aa) if 0 < yy.sum() < yy.size else np.nan)
            reps["balanced_accuracy"].append(balanced_accuracy_score(yy, d))
            reps["f1"].append(f1_score(yy, d, zero_division=0.0))
            reps["kappa"].append(cohen_kappa_score(yy, d))
            reps["ece_b"].append(expected_calibration_error(1 - bb, yy))
    for k in ("auroc", "balanced_accuracy", "f1", "kappa"):
        lo, hi = percentile_interval(np.array(reps[k]))
        assert got["a"][k]["low"] == pytest.approx(lo) and got["a"][k]["high"] == pytest.approx(hi), k
    lo, hi = percentile_interval(np.array(reps["ece_b"]))
    assert got["b"]["ece"]["low"] == pytest.approx(lo) and got["b"]["ece"]["high"] == pytest.approx(hi)


def test_reliability_and_ece_by_hand() -> None:
    p = np.array([0.05, 0.05, 0.15, 0.95, 0.95, 1.0])
    y = np.array([0, 1, 0, 1, 1, 0])
    rows = reliability(p, y, bins=10)
    assert [(r["low"], r["count"]) for r in rows] == [(0.0, 2), (0.1, 1), (0.9, 3)]
    assert rows[2]["mean_predicted"] == pytest.approx(2.9 / 3) and rows[2]["observed_rate"] == pytest.approx(2 / 3)
    # 2/6 |0.5 - 0.05| + 1/6 |0 - 0.15| + 3/6 |2/3 - 0.9667|
    want = 2 / 6 * 0.45 + 1 / 6 * 0.15 + 3 / 6 * abs(2 / 3 - 2.9 / 3)
    assert expected_calibration_error(p, y, bins=10) == pytest.approx(want)


def _three_annotators(records: list, y: np.ndarray) -> dict:
    """ann1 is y; ann2 flips every 4th; ann3 says positive on every 3rd sample only (and skips every 5th)."""
    out = {"ann1": {}, "ann2": {}, "ann3": {}}
    for i, (r, v) in enumerate(zip(records, y)):
        out["ann1"][(r.id, "")] = {"label": bool(v)}
        out["ann2"][(r.id, "")] = {"label": bool(v) != (i % 4 == 0)}
        if i % 5:
            out["ann3"][(r.id, "")] = {"label": i % 3 == 0}
    return out


def test_references_any_majority_adjudicated() -> None:
    records, y, _ = synthetic(n=60, seed=3)
    ann = _three_annotators(records, y)
    resolved = {(r.id, ""): {"label": False} for r in records}
    cols = judge_columns(records)
    n = len(records)
    per = np.array([[ann[a].get((r.id, ""), {}).get("label", np.nan) for r in records] for a in ann], dtype=float)
    want_any = np.nanmax(per, axis=0)
    seen = ~np.isnan(per)
    want_major = (np.nansum(per, axis=0) > seen.sum(axis=0) / 2).astype(float)
    for ref, want in (("any", want_any), ("majority", want_major), ("adjudicated", np.zeros(n))):
        rep = SCHEME.evaluate(records, resolved, {"reference": ref, "annotator_labels": ann, "n_boot": 0})
        assert rep.data["judges"]["a"]["positives"] == int(want.sum()), ref
        if ref != "adjudicated":
            d = decisions(cols.scores, cols.default_threshold, cols.high_positive)[0]
            assert rep.data["judges"]["a"]["kappa"]["estimate"] == pytest.approx(cohen_kappa_score(want, d)), ref
    no_ann = SCHEME.evaluate(records, resolved, {"reference": "any", "n_boot": 0})
    assert no_ann.data["judges"]["a"]["positives"] == 0 and "no per-annotator labels" in no_ann.notes[0]
    with pytest.raises(ValueError, match="reference"):
        SCHEME.evaluate(records, resolved, {"reference": "loudest"})


def test_ceiling_sits_beside_each_judge() -> None:
    records, y, _ = synthetic(n=80, seed=4)
    ann = _three_annotators(records, y)
    rep = SCHEME.evaluate(records, {}, {"annotator_labels": ann, "n_boot": 50})
    ceil = rep.data["ceiling"]
    pairs = {(p["a"], p["b"]): p["kappa"]["estimate"] for p in ceil["pairs"]}
    a1 = [ann["ann1"][(r.id, "")]["label"] for r in records]
    a2 = [ann["ann2"][(r.id, "")]["label"] for r in records]
    assert pairs[("ann1", "ann2")] == pytest.approx(cohen_kappa_score(a1, a2))
    cols = judge_columns(records)
    d = decisions(cols.scores, cols.default_threshold, cols.high_positive)[1]
    each = []
    for name in ann:
        keep = [i for i, r in enumerate(records) if (r.id, "") in ann[name]]
        each.append(cohen_kappa_score([int(ann[name][(records[i].id, "")]["label"]) for i in keep], d[keep]))
    assert ceil["judges"]["b"] == pytest.approx(np.mean(each))
    assert any(t.title.startswith("Human ceiling") for t in rep.tables)
    assert ceil["fleiss_kappa"]["low"] <= ceil["fleiss_kappa"]["estimate"] <= ceil["fleiss_kappa"]["high"]


def test_vote_parameters_add_a_vote_row_and_guarantee_option_reports_coverage() -> None:
    records, y, _ = synthetic(n=300, seed=5, shift=3.0)
    params = {"thresholds": {"a": 1.5}, "weights": {"a": 0.5, "b": 0.5}, "vote_threshold": 0.5}
    rep = SCHEME.evaluate(records, labels_of(records, y), {"reference": "adjudicated", "params": [params], "n_boot": 0,
                                                            "guarantee": {"target": 0.8, "delta": 0.1}})
    assert rep.data["judges"]["a"]["threshold"] == 1.5
    cols = judge_columns(records)
    votes = decisions(cols.scores, np.array([1.5, 0.5]), cols.high_positive)
    vote = (votes.mean(axis=0) >= 0.5).astype(int)
    assert rep.data["judges"]["vote"]["kappa"]["estimate"] == pytest.approx(cohen_kappa_score(y, vote))
    g = rep.data["guarantee"]["judges"]["a"]
    assert 0 < g["coverage"] <= 1 and g["agreement"] >= 0.8


def test_no_labels_no_figures() -> None:
    records, _, _ = synthetic(n=30, seed=6)
    rep = SCHEME.evaluate(records, {}, {"reference": "adjudicated", "n_boot": 10})
    assert rep.data["n_labeled"] == 0
    assert all(row[5:] == ("–",) * 4 for row in rep.tables[0].rows)
    assert SCHEME.search_problem(records, {}, {"reference": "adjudicated"}) is None
