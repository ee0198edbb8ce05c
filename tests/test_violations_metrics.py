"""TP/FP/FN, P/R/F1 with the zero-denominator convention, per-category attribution, bootstrap, leaderboard."""
from __future__ import annotations

import json

import numpy as np
import pytest

from calibration.schemes.violations import (
    HA_MATCH,
    NO_CATEGORY,
    STD_MATCH,
    Violation,
    ViolationSample,
    build_pair_table,
    compare_leaderboards,
    count,
    evaluate,
    leaderboard,
    match,
    prf,
    unit_counts,
)
from calibration.schemes.violations import reference as ref
from calibration.schemes.violations.metrics import bootstrap_sums
from calibration.similarity import JaccardSimilarity, token_jaccard


def test_zero_denominator_convention() -> None:
    assert [float(x) for x in prf(0, 0, 0)] == [1.0, 1.0, 1.0]  # clean text, nothing flagged: perfect
    assert [float(x) for x in prf(0, 0, 3)] == [0.0, 0.0, 0.0]  # flagged nothing, missed 3
    assert [float(x) for x in prf(0, 2, 0)] == [0.0, 0.0, 0.0]  # flagged 2 on a clean text
    p, r, f = prf(2, 1, 3)
    assert (float(p), float(r), float(f)) == pytest.approx((2 / 3, 2 / 5, 4 / 8))
    for tp, fp, fn in [(0, 0, 0), (0, 0, 3), (0, 2, 0), (2, 1, 3), (5, 0, 0)]:
        assert tuple(float(x) for x in prf(tp, fp, fn)) == ref.prf(tp, fp, fn)


V = Violation


def dataset() -> list[ViolationSample]:
    minors = V("Do not target minors", 0, 10, category="Audience")
    brand = V("Spell the brand correctly", 20, 30, category="Brand")
    return [
        ViolationSample("s1", "t" * 40, (minors, brand), {
            "good": (V("Do not target minors", 0, 9, category="audience"), V("Spell the brand correctly", 21, 30, category="Brand")),
            "noisy": (V("Do not target minors", 2, 10, category="Safety"), V("Promote safety", 35, 39, category="Safety")),
            "silent": (),
        }),
        ViolationSample("s2", "t" * 40, (), {
            "good": (), "noisy": (V("Spell the brand correctly", 0, 5, category="Brand"),), "silent": (),
        }),
        ViolationSample("s3", "t" * 40, (brand,), {
            "good": (V("Spell the brand correctly", 22, 28),), "noisy": (), "silent": (),
        }),
    ]


@pytest.fixture(scope="module")
def table():  # noqa: ANN201
    return build_pair_table(dataset(), JaccardSimilarity())


def test_counts_agree_with_reference(table) -> None:  # noqa: ANN001
    units = unit_counts(table, STD_MATCH)
    want = ref.counts_samples(dataset(), ref.match_samples(dataset(), STD_MATCH, token_jaccard))
    got = {(s, c): (tp, fp, fn) for s, c, tp, fp, fn in units[["sample_id", "checker", "tp", "fp", "fn"]].itertuples(index=False)}
    assert got == want
    assert got[("s1", "noisy")] == (1, 1, 1) and got[("s2", "noisy")] == (0, 1, 0) and got[("s1", "silent")] == (0, 0, 2)


def test_evaluate_micro_macro_and_categories(table) -> None:  # noqa: ANN001
    res = evaluate(table, STD_MATCH, n_boot=200, seed=1)
    json.dumps(res)  # JSON-able
    c = res["checkers"]
    assert set(c) == {"good", "noisy", "silent"}
    good, noisy, silent = c["good"], c["noisy"], c["silent"]
    assert (good["tp"], good["fp"], good["fn"], good["f1"]) == (3, 0, 0, 1.0)
    assert (noisy["tp"], noisy["fp"], noisy["fn"]) == (1, 2, 2)
    assert noisy["precision"] == pytest.approx(1 / 3) and noisy["recall"] == pytest.approx(1 / 3)
    assert noisy["f1"] == pytest.approx(2 / 6)
    assert (silent["tp"], silent["fp"], silent["fn"], silent["precision"], silent["f1"]) == (0, 0, 3, 0.0, 0.0)
    # TP and FN count under the GT's category, FP under the prediction's
    pc = noisy["per_category"]
    assert (pc["audience"]["tp"], pc["audience"]["fp"], pc["audience"]["fn"]) == (1, 0, 0)
    assert (pc["safety"]["tp"], pc["safety"]["fp"], pc["safety"]["fn"]) == (0, 1, 0)
    assert (pc["brand"]["tp"], pc["brand"]["fp"], pc["brand"]["fn"]) == (0, 1, 2)
    assert noisy["macro_f1"] == pytest.approx((1.0 + 0.0 + 0.0) / 3)
    # sample macro: s1 F1 = 2/4, s2 (clean text, one FP) = 0, s3 (one missed) = 0
    assert noisy["sample_macro_f1"] == pytest.approx((0.5 + 0.0 + 0.0) / 3)
    assert good["sample_macro_f1"] == 1.0  # s2: nothing to find, nothing flagged counts as perfect
    # s3's uncategorised prediction is a TP, so it counts under the GT's "brand", not under "(none)"
    assert {k: v["tp"] for k, v in good["per_category"].items()} == {"audience": 1, "brand": 2}
    for m in c.values():
        lo, hi = m["f1_ci"]
        assert lo <= m["f1"] <= hi
        assert m["n_samples"] == 3
    assert res["config"]["name"] == "std_match" and res["bootstrap"]["replicates"] == 200


def test_uncategorised_false_positive_counts_under_none() -> None:
    s = ViolationSample("s", "t" * 20, (), {"c": (V("Some rule", 0, 3),)})
    pc = evaluate(build_pair_table([s], "jaccard"), STD_MATCH, n_boot=10)["checkers"]["c"]["per_category"]
    assert pc == {NO_CATEGORY: {"tp": 0, "fp": 1, "fn": 0, "precision": 0.0, "recall": 0.0, "f1": 0.0, "f1_ci": [0.0, 0.0]}}


def test_bootstrap_is_seeded_and_equals_a_plain_resampling_loop() -> None:
    rng = np.random.default_rng(0)
    per_sample = rng.integers(0, 4, size=(37, 5)).astype(np.float64)
    a = bootstrap_sums(per_sample, 250, seed=11)
    assert np.array_equal(a, bootstrap_sums(per_sample, 250, seed=11))
    assert not np.array_equal(a, bootstrap_sums(per_sample, 250, seed=12))
    loop_rng = np.random.default_rng(11)
    rows = []
    for start in range(0, 250, 100):
        idx = loop_rng.integers(0, 37, size=(min(100, 250 - start), 37))
        for r in idx:
            rows.append(sum((per_sample[i] for i in r), np.zeros(5)))
    assert np.array_equal(a, np.array(rows))
    assert a.mean(axis=0) == pytest.approx(per_sample.sum(axis=0), rel=0.05)


def test_bootstrap_interval_shrinks_with_more_samples() -> None:
    def many(n: int) -> list[ViolationSample]:
        out = []
        for i in range(n):
            gt = (V("Do not target minors", 0, 10),)
            hit = (V("Do not target minors", 0, 10),) if i % 3 else (V("Other", 30, 35),)
            out.append(ViolationSample(f"s{i}", "t" * 40, gt, {"c": hit}))
        return out

    small = evaluate(build_pair_table(many(12), "jaccard"), STD_MATCH, n_boot=500)["checkers"]["c"]
    big = evaluate(build_pair_table(many(300), "jaccard"), STD_MATCH, n_boot=500)["checkers"]["c"]
    assert big["f1"] == pytest.approx(small["f1"], abs=0.05)
    assert big["f1_ci"][1] - big["f1_ci"][0] < (small["f1_ci"][1] - small["f1_ci"][0]) / 2


def test_leaderboard_orders_by_f1_and_compares_configs(table) -> None:  # noqa: ANN001
    lb = leaderboard(table, STD_MATCH, n_boot=50)
    assert lb.index.tolist() == ["good", "noisy", "silent"]
    assert {"tp", "fp", "fn", "precision", "recall", "f1", "f1_lo", "f1_hi", "macro_f1"} <= set(lb.columns)
    both = compare_leaderboards(table, [STD_MATCH, HA_MATCH], n_boot=50)
    assert both.columns.get_level_values(0).unique().tolist() == ["std_match", "ha_match"]
    assert both[("std_match", "f1")].tolist() == lb["f1"].tolist()


def test_count_matches_bincount_of_matches(table) -> None:  # noqa: ANN001
    m = match(table, HA_MATCH)
    c = count(table, m)
    assert c.by_sample.shape == (3, 3, 3)
    assert c.by_sample[..., 0].sum() == m.sum()
    assert c.by_sample_cat[..., 0].sum() == m.sum()
    assert c.by_sample_cat[..., 1].sum() == c.by_sample[..., 1].sum()
    assert c.by_sample_cat[..., 2].sum() == c.by_sample[..., 2].sum()


def test_empty_inputs_evaluate_cleanly() -> None:
    assert evaluate(build_pair_table([], "jaccard"), STD_MATCH)["checkers"] == {}
    assert leaderboard(build_pair_table([], "jaccard"), STD_MATCH).empty
    clean = build_pair_table([ViolationSample("a", "t", (), {"c": ()})], "jaccard")
    m = evaluate(clean, HA_MATCH, n_boot=20)["checkers"]["c"]
    assert (m["tp"], m["fp"], m["fn"], m["f1"], m["f1_ci"]) == (0, 0, 0, 1.0, [1.0, 1.0])
    assert m["macro_f1"] is None and m["per_category"] == {}
    assert evaluate(clean, HA_MATCH, n_boot=0)["checkers"]["c"]["f1_ci"] == [None, None]
    json.dumps(m)
