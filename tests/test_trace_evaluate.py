"""The trace scheme's evaluate hook: annotator vs human and judges vs a reference, per subset, with intervals.
Figures on the full data are checked against agreement.py's / scikit-learn's functions on the same items."""
from __future__ import annotations

import math

import numpy as np
from sklearn.metrics import cohen_kappa_score, f1_score, roc_auc_score

from calibration.schemes.trace import judge_report, label_agreement, score_agreement
from calibration.schemes.trace.evaluation import _auroc_codes, _auroc_counts, human_labels
from calibration.schemes.trace.scheme import SCHEME, truth_labels
from tests.test_trace_data import keyed_record


def make(n: int = 40, seed: int = 5):
    rng = np.random.default_rng(seed)
    recs, labels = [], {}
    for i in range(n):
        rel = [k for k in ("0a", "0b", "0c", "1a", "1b") if rng.random() < 0.5]
        utl = [k for k in rel if rng.random() < 0.6]
        unsup = ["b"] if rng.random() < 0.4 else []
        raw = keyed_record(f"s{i}", doc_sizes=(3, 2), n_response=2, all_relevant_sentence_keys=rel,
                           all_utilized_sentence_keys=utl, unsupported_response_sentence_keys=unsup,
                           judges={"j1": {"adherence": float(rng.random()), "relevance": float(rng.random())},
                                   "j2": {"utilization": float(rng.random())}},
                           meta={"subset": "x" if i % 2 else "y"})
        recs.append(SCHEME.parse(raw).record)
        if i % 3 == 0:  # a human checked a third: flips one relevant key and sometimes the support
            flip = "0a" if "0a" not in rel else "0b"
            labels[(f"s{i}", "")] = {"relevant": sorted(set(rel) ^ {flip}), "utilized": utl,
                                     "unsupported": unsup if rng.random() < 0.7 else (["a"] if not unsup else [])}
    return recs, labels


def test_weighted_auroc_equals_roc_auc_score_with_unit_weights() -> None:
    rng = np.random.default_rng(0)
    y = (rng.random(200) < 0.3).astype(float)
    s = np.round(rng.random(200), 1)  # ties
    codes, k = _auroc_codes(y, s)
    assert math.isclose(_auroc_counts(np.bincount(codes, minlength=k)[None, :] * 1.0)[0], roc_auc_score(y, s),
                        rel_tol=1e-12)
    w = np.zeros(200)
    w[:50] = 2
    assert math.isclose(_auroc_counts(np.bincount(codes, w, minlength=k)[None, :])[0],
                        roc_auc_score(y[:50], s[:50]), rel_tol=1e-12)


def test_annotator_vs_human_matches_agreement_functions() -> None:
    recs, labels = make()
    rep = SCHEME.evaluate(recs, labels, {"n_boot": 200})
    checked = [r for r in recs if (r.id, "") in labels]
    hum = [human_labels(labels[(r.id, "")]) for r in checked]
    expected = label_agreement(checked, [r.labels for r in checked], hum)
    for kind in ("relevant", "utilized", "supported"):
        got = rep.data["labels"][kind]
        assert got["items"] == expected.loc[kind, "n"]
        assert math.isclose(got["kappa"][0], expected.loc[kind, "kappa"], rel_tol=1e-9)
        assert math.isclose(got["f1"][0], expected.loc[kind, "f1"], rel_tol=1e-9)
        lo, hi = got["kappa"][1:]
        assert lo <= got["kappa"][0] <= hi
    lo, hi = rep.data["labels"]["relevant"]["kappa"][1:]
    assert lo < rep.data["labels"]["relevant"]["kappa"][0] < hi  # the humans changed relevant keys: a real interval
    assert rep.data["labels"]["utilized"]["kappa"][0] == 1.0  # ... and kept the utilized ones
    for variant in ("ragbench", "trace_guide"):
        sa = score_agreement(checked, [r.labels for r in checked],
                             [truth_labels(r, labels[(r.id, "")]) for r in checked], variant)
        for score in ("relevance", "completeness", "average"):
            got = rep.data["scores"][variant][score]
            assert math.isclose(got["rmse"][0], sa.loc[score, "rmse"], rel_tol=1e-9, abs_tol=1e-12)
            if not math.isnan(sa.loc[score, "spearman"]):
                assert math.isclose(got["spearman"][0], sa.loc[score, "spearman"], rel_tol=1e-9)
    assert rep.tables and all(len(row) == len(t.columns) for t in rep.tables for row in t.rows)


def test_judges_per_subset_against_either_reference() -> None:
    recs, labels = make()
    ann = SCHEME.evaluate(recs, labels, {"n_boot": 0})
    hum = SCHEME.evaluate(recs, labels, {"n_boot": 0, "reference": "human"})
    for subset in ("x", "y", "all"):
        part = [r for r in recs if subset == "all" or r.meta["subset"] == subset]
        exp = judge_report(part, variant="ragbench")
        got = ann.data["judges"]["ragbench"][subset]
        assert math.isclose(got["j1"]["hallucination_auroc"][0], exp.loc["j1", "hallucination_auroc"], rel_tol=1e-12)
        assert math.isclose(got["j2"]["utilization_rmse"][0], exp.loc["j2", "utilization_rmse"], rel_tol=1e-12)
    # against the humans: only the checked samples, the annotator's labels as corrected
    checked = [r for r in recs if (r.id, "") in labels]
    from calibration.schemes.trace import score_records
    ref = score_records(checked, "ragbench", [truth_labels(r, labels[(r.id, "")]) for r in checked])
    exp = judge_report(checked, ref)
    got = hum.data["judges"]["ragbench"]["all"]["j1"]
    assert got["n"] == len(checked)
    assert math.isclose(got["relevance_rmse"][0], exp.loc["j1", "relevance_rmse"], rel_tol=1e-12)
    assert got["relevance_rmse"][0] != ann.data["judges"]["ragbench"]["all"]["j1"]["relevance_rmse"][0]


def test_kappa_on_sentences_by_hand() -> None:
    recs, labels = make(6)
    rep = SCHEME.evaluate(recs, labels, {"n_boot": 0})
    a, h = [], []
    for r in recs:
        if (r.id, "") in labels:
            hr = set(labels[(r.id, "")]["relevant"])
            a += [k in set(r.labels.relevant) for k in r.document_keys]
            h += [k in hr for k in r.document_keys]
    assert math.isclose(rep.data["labels"]["relevant"]["kappa"][0], cohen_kappa_score(h, a), rel_tol=1e-12)
    assert math.isclose(rep.data["labels"]["relevant"]["f1"][0], f1_score(h, a), rel_tol=1e-12)


def test_mean_scores_per_subset_and_variant_as_score_records_gives_them() -> None:
    """The headline table: each score's mean (adherence: the share adherent) over the samples that have it, per
    subset and variant, under either reference, with a bootstrap interval around it."""
    from calibration.schemes.trace.metrics import SCORES, score_records

    recs, labels = make()
    for reference in ("annotator", "human"):
        rep = SCHEME.evaluate(recs, labels, {"n_boot": 200, "reference": reference})
        for variant in ("trace_guide", "ragbench"):
            for subset in ("x", "y", "all"):
                part = [r for r in recs if subset == "all" or r.meta["subset"] == subset]
                ref = [r.labels for r in part] if reference == "annotator" else [
                    truth_labels(r, labels[(r.id, "")]) if (r.id, "") in labels else None for r in part]
                expected = score_records(part, variant, ref)
                got = rep.data["means"][variant][subset]
                assert got["n"] == int(expected[list(SCORES)].notna().any(axis=1).sum())
                for name in SCORES:
                    est, lo, hi = got[name]
                    assert math.isclose(est, expected[name].mean(), rel_tol=1e-12)
                    assert lo <= est <= hi
        title = f"Mean scores (ragbench, {reference} labels)"
        table = next(t for t in rep.tables if t.title.startswith(title))
        assert [row[0] for row in table.rows] == ["all", "x", "y"]
        assert rep.tables[0].title.startswith("Mean scores")  # the headline comes first
    adherence = rep.data["means"]["ragbench"]["all"]["adherence"][0]
    assert 0 < adherence < 1  # a rate, and the data has both kinds


def test_coded_intervals_counted_per_joint_code_equal_counted_one_by_one(monkeypatch) -> None:
    """The Spearman and AUROC intervals from draws counted once per joint code are the very floats counted per
    statistic (every estimate and interval end), on records whose codes share few joint codes and on ones that do
    not (then each is counted alone)."""
    import json

    from calibration.schemes.trace import evaluation

    for n, seed in ((60, 1), (90, 2), (300, 3)):
        recs, labels = make(n, seed)
        runs = {}
        for share in (0, 10**9):  # 0: always joint; 10**9: never
            monkeypatch.setattr(evaluation, "JOINT_SHARE", share)
            report = evaluation.evaluate(recs, labels, {"n_boot": 200, "seed": seed})
            runs[share] = json.dumps(report.data, sort_keys=True, default=str)
        assert runs[0] == runs[10**9]
        assert '"spearman"' in runs[0] and "hallucination_auroc" in runs[0]
