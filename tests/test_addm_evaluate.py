"""Evaluation: scores with paired bootstrap intervals, component tables per method and overall, ranking."""
from __future__ import annotations

import json

import pytest

from calibration.schemes.addm import component_table, evaluate, format_report, ranking
from calibration.schemes.addm import reference as ref
from tests.addm_data import random_samples


def test_evaluate_methods_overall_and_ranking() -> None:
    s = random_samples(200, seed=11, methods=("a", "b", "c"))
    res = evaluate(s, n_boot=200, seed=3)
    json.dumps(res)  # JSON-able
    assert set(res["methods"]) == {"a", "b", "c"}
    for m, r in res["methods"].items():
        want = ref.three_scores(s, m)
        assert r["auprc"] == pytest.approx(want["auprc"]) and r["process_score"] == pytest.approx(want["process_score"])
        for key, ci in (("auprc", "auprc_ci"), ("process_score", "process_ci"), ("consistency_score", "consistency_ci")):
            lo, hi = r[ci]
            assert lo < hi and lo <= r[key] <= hi
    ov = res["overall"]
    assert ov["auprc"] == pytest.approx(sum(r["auprc"] for r in res["methods"].values()) / 3)
    assert ov["counts"]["claimed"] == sum(r["counts"]["claimed"] for r in res["methods"].values())
    rk = res["ranking"]
    assert [r["rank"] for r in rk] == [1, 2, 3] and rk[0]["mean"] >= rk[1]["mean"] >= rk[2]["mean"]
    assert ranking(res) == rk


def test_intervals_are_reproducible_and_paired() -> None:
    s = random_samples(120, seed=5)
    a = evaluate(s, n_boot=100, seed=1)
    b = evaluate(s, n_boot=100, seed=1)
    c = evaluate(s, n_boot=100, seed=2)
    assert a["methods"]["a"]["process_ci"] == b["methods"]["a"]["process_ci"] != c["methods"]["a"]["process_ci"]
    assert evaluate(s, n_boot=0)["methods"]["a"]["auprc_ci"] == [None, None]


def test_component_table_and_report() -> None:
    s = random_samples(80, seed=2)
    res = evaluate(s, n_boot=50)
    t = component_table(res, "a")
    assert list(t.index) == ["incident_precision", "severity_accuracy", "modifier_accuracy", "verdict_support_rate",
                             "snippet_validity"]
    assert t["weight"].tolist() == [0.35, 0.30, 0.15, 0.15, 0.05] and t["used"].all()
    assert component_table(res)["score"].tolist() == [res["overall"]["process_components"][c] for c in t.index]
    text = format_report(res, "a")
    assert "UNIFIED SCORES" in text and "Severity Accuracy" in text and "35%" in text
    assert f"{res['methods']['a']['process_score']:.1f}%" in text


def test_empty_inputs() -> None:
    res = evaluate([], n_boot=10)
    assert res["methods"] == {} and res["overall"] == {} and res["ranking"] == []


def test_vectorised_replicates_equal_the_scores_of_the_resampled_businesses() -> None:
    """Each replicate's figures (from draw counts) equal the scalar scores of the explicitly resampled samples."""
    import numpy as np

    from calibration.agreement import resample_counts
    from calibration.schemes.addm import ADDM_V2, method_table, scores
    from calibration.schemes.addm.evaluation import _auprc_rows, _codes, _consistency_rows, _process_rows

    s = random_samples(150, seed=9)
    t = method_table(s, "a")
    code, k = _codes(t)
    w = next(resample_counts(len(s), 6, seed=4))
    auc = _auprc_rows(w, t.gt, code, k)
    sums = w @ t.counts
    proc, cons = _process_rows(sums, ADDM_V2.process_weights), _consistency_rows(sums)
    for r in range(w.shape[0]):
        drawn = [x for i, x in enumerate(s) for _ in range(int(w[r, i]))]
        want = ref.three_scores(drawn, "a")
        assert auc[r] == pytest.approx(want["auprc"], abs=1e-12)
        assert proc[r] == pytest.approx(want["process_score"], abs=1e-9)
        assert cons[r] == pytest.approx(want["consistency_score"], abs=1e-9)
        assert scores(method_table(drawn, "a"))["process_score"] == pytest.approx(proc[r])
    assert np.all(_auprc_rows(np.zeros((2, len(s))), t.gt, code, k) == 0.0)  # nothing drawn: fewer than 2 samples


def test_auprc_histograms_equal_the_weighted_bincount_exactly() -> None:
    """The replicates' AUPRC from a weighted bincount per replicate are the very floats the weighted bincount of offset
    cells gave (integer sums), with businesses left out (no score) and scores tied."""
    import numpy as np

    from calibration.schemes.addm.evaluation import _ap_rows, _auprc_rows

    def by_bincount(w: np.ndarray, gt: np.ndarray, code: np.ndarray, k: int) -> np.ndarray:  # the former path
        reps, keep = w.shape[0], code >= 0
        cell = code[keep] * 3 + gt[keep].astype(np.int64)
        flat = (np.arange(reps, dtype=np.int64)[:, None] * (3 * k) + cell[None, :]).ravel()
        hist = np.bincount(flat, weights=w[:, keep].ravel(), minlength=reps * 3 * k).reshape(reps, k, 3)
        vals = np.stack([_ap_rows(hist[:, :, 1] + hist[:, :, 2], hist[:, :, 0]),
                         _ap_rows(hist[:, :, 2], hist[:, :, 0] + hist[:, :, 1])], axis=1)
        n_valid = np.isfinite(vals).sum(axis=1)
        mean = np.where(n_valid > 0, np.nansum(vals, axis=1) / np.maximum(n_valid, 1), 0.0)
        return np.where(hist.sum(axis=(1, 2)) >= 2, mean, 0.0)

    rng = np.random.default_rng(3)
    for n, k in ((5, 2), (200, 7), (3000, 40)):
        code = rng.integers(-1, k, n)
        gt = rng.integers(0, 3, n)
        w = np.stack([np.bincount(rng.integers(0, n, n), minlength=n) for _ in range(9)]).astype(np.float64)
        got, want = _auprc_rows(w, gt, code, k), by_bincount(w, gt, code, k)
        assert got.tobytes() == want.tobytes()


def test_verdict_agreement_one_pass_over_the_draws_equals_the_list_of_draws() -> None:
    """Verdict agreement's intervals, drawn a chunk at a time for every method, are the very floats of the former
    path that kept every replicate's weights in a list and went over it per method."""
    import math

    import numpy as np

    from calibration.agreement import percentile_interval, resample_counts
    from calibration.schemes.addm.calibrate import N_CLASSES, quadratic_kappa_from_confusion
    from calibration.schemes.addm.metrics import policy_verdict
    from calibration.schemes.addm.policy import ADDM_V2
    from calibration.schemes.addm.report import POLICY_VERDICT, verdict_agreement

    def former(truth, policy, n_boot, seed, ci):  # the path before, its intervals only
        n = len(truth)
        rows = {m: np.array([-1 if (r := s.methods.get(m)) is None or r.error or r.verdict is None else r.verdict
                             for s in truth], dtype=np.int64) for m in sorted({m for s in truth for m in s.methods})}
        rows[POLICY_VERDICT] = np.array([policy_verdict(s.incidents, policy) for s in truth], dtype=np.int64)
        human = np.array([s.verdict for s in truth], dtype=np.int64)
        draws = list(resample_counts(n, n_boot, seed))
        out = {}
        for name, pred in rows.items():
            keep = pred >= 0
            onehot = np.zeros((n, N_CLASSES * N_CLASSES))
            onehot[np.flatnonzero(keep), human[keep] * N_CLASSES + pred[keep]] = 1.0
            confs = np.concatenate([w @ onehot for w in draws]).reshape(-1, N_CLASSES, N_CLASSES)
            tot = confs.sum(axis=(1, 2))
            accs = np.divide(np.trace(confs, axis1=1, axis2=2), tot, out=np.full(tot.shape, np.nan), where=tot > 0)
            out[name] = {key: list(percentile_interval(vals, 1.0 - ci)) for key, vals in
                         (("accuracy_ci", accs), ("weighted_kappa_ci", quadratic_kappa_from_confusion(confs)))}
        return out

    for n, seed in ((40, 1), (300, 2)):
        truth = random_samples(n, seed=seed, methods=("a", "b", "c"))
        got = verdict_agreement(truth, ADDM_V2, 150, seed, 0.9)
        want = former(truth, ADDM_V2, 150, seed, 0.9)
        assert got.keys() == want.keys() and len(got) == 4
        for name, res in want.items():
            for key, (lo, hi) in res.items():
                assert got[name][key] == [None if math.isnan(lo) else lo, None if math.isnan(hi) else hi]
