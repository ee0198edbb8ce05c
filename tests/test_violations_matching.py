"""Spec examples for score, strict thresholds, weight redistribution, greedy and optimal matching."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from calibration.schemes.violations import (
    HA_MATCH,
    STD_MATCH,
    MatchConfig,
    PairTable,
    Thresholds,
    Violation,
    ViolationSample,
    build_pair_table,
    match,
    matched_pairs,
    passing_mask,
    score_pairs,
    unit_counts,
)
from calibration.schemes.violations import reference as ref
from calibration.similarity import JaccardSimilarity, token_jaccard

NAN = math.nan


def table(rows: list[tuple], n_gt: list[int] | None = None, n_pred: list[int] | None = None) -> PairTable:
    """Pair table from rows (group, gt, pred, overlap, rule, category, explanation, correction)."""
    pairs = pd.DataFrame(rows, columns=["group", "gt", "pred", "overlap", "rule", "category", "explanation", "correction"])
    G = int(pairs["group"].max()) + 1 if rows else 0
    if n_gt is None:
        n_gt = [int(pairs.loc[pairs.group == g, "gt"].max()) + 1 for g in range(G)]
    if n_pred is None:
        n_pred = [int(pairs.loc[pairs.group == g, "pred"].max()) + 1 for g in range(G)]
    groups = pd.DataFrame({"sample_id": [f"s{g}" for g in range(len(n_gt))], "checker": "c", "n_gt": n_gt, "n_pred": n_pred})
    return PairTable.from_frames(groups, pairs)


def one(overlap: float, rule: float, category: float = NAN, explanation: float = NAN, correction: float = NAN) -> PairTable:
    return table([(0, 0, 0, overlap, rule, category, explanation, correction)])


def test_std_match_score_is_half_overlap_plus_half_rule() -> None:
    t = one(0.6, 0.5)
    assert score_pairs(t, STD_MATCH)[0] == pytest.approx(0.55)
    assert match(t, STD_MATCH).tolist() == [True]


def test_ha_match_weights_all_components() -> None:
    t = one(0.5, 0.6, 1.0, 0.4, 0.2)
    expected = 0.3 * 0.5 + 0.3 * 0.6 + 0.1 * 1.0 + 0.2 * 0.4 + 0.1 * 0.2
    assert score_pairs(t, HA_MATCH)[0] == pytest.approx(expected)
    assert match(t, HA_MATCH).tolist() == [expected > 0.5]


def test_thresholds_are_strict() -> None:
    # score exactly 0.5 fails the match threshold
    assert score_pairs(one(0.5, 0.5), STD_MATCH)[0] == 0.5
    assert match(one(0.5, 0.5), STD_MATCH).tolist() == [False]
    # overlap exactly 0 fails even when the score is high
    rule_heavy = MatchConfig("rule_heavy", {"overlap": 0.1, "rule": 0.9})
    assert score_pairs(one(0.0, 1.0), rule_heavy)[0] == pytest.approx(0.9)
    assert match(one(0.0, 1.0), rule_heavy).tolist() == [False]
    assert match(one(1e-9, 1.0), rule_heavy).tolist() == [True]  # one shared character is enough
    # rule similarity exactly 0.01 fails
    overlap_heavy = MatchConfig("overlap_heavy", {"overlap": 0.9, "rule": 0.1})
    assert match(one(1.0, 0.01), overlap_heavy).tolist() == [False]
    assert match(one(1.0, 0.0101), overlap_heavy).tolist() == [True]


def test_absent_weights_are_redistributed_in_proportion() -> None:
    t = one(1.0, 0.5, 0.0)  # no explanation, no correction
    got = score_pairs(t, HA_MATCH)[0]
    assert got == pytest.approx((0.3 * 1.0 + 0.3 * 0.5 + 0.1 * 0.0) / 0.7)
    assert match(t, HA_MATCH).tolist() == [True]  # 0.643; without redistribution it would be 0.45
    # std_match ignores fields it does not weight
    assert score_pairs(one(0.6, 0.5, NAN, NAN, NAN), STD_MATCH)[0] == score_pairs(one(0.6, 0.5, 1.0, 0.2, 0.9), STD_MATCH)[0]
    # weights summing to 2 scale the score: W_total * weighted mean
    doubled = MatchConfig("doubled", {"overlap": 1.0, "rule": 1.0})
    assert score_pairs(one(0.6, 0.5), doubled)[0] == pytest.approx(1.1)


def test_missing_rule_fails_unless_rule_threshold_disabled() -> None:
    t = one(1.0, NAN)
    assert math.isclose(score_pairs(t, STD_MATCH)[0], 1.0)  # redistributed onto overlap
    assert match(t, STD_MATCH).tolist() == [False]
    off = STD_MATCH.with_(thresholds=Thresholds(overlap=0.0, rule=-math.inf, match=0.5))
    assert match(t, off).tolist() == [True]
    only_expl = MatchConfig("only_expl", {"explanation": 1.0}, Thresholds(-math.inf, -math.inf, -math.inf))
    assert math.isnan(score_pairs(t, only_expl)[0])  # nothing weighted is present
    assert passing_mask(t, only_expl.with_(thresholds=Thresholds(0.0, 0.01, 0.5))).tolist() == [False]
    # with every check disabled an unscored pair passes: greedy takes it (ranked last), optimal never does
    assert passing_mask(t, only_expl).tolist() == [True]
    two = table([(0, 0, 0, 1.0, NAN, NAN, NAN, NAN), (0, 0, 1, 1.0, 0.5, NAN, 0.2, NAN)])
    assert match(two, only_expl).tolist() == [False, True]
    assert match(two, only_expl, method="optimal").tolist() == [False, True]
    assert match(t, only_expl).tolist() == [True] and match(t, only_expl, method="optimal").tolist() == [False]


def test_greedy_skips_a_failing_pair_instead_of_stopping() -> None:
    cfg = MatchConfig("overlap_heavy", {"overlap": 0.9, "rule": 0.1})
    t = table([(0, 0, 0, 1.0, 0.0, NAN, NAN, NAN),  # highest score 0.9, fails rule > 0.01
               (0, 0, 1, 0.6, 0.5, NAN, NAN, NAN)])  # 0.59, passes
    assert match(t, cfg).tolist() == [False, True]


def test_greedy_ties_by_gt_then_pred() -> None:
    rows = [(0, g, p, 0.8, 0.8, NAN, NAN, NAN) for g in range(2) for p in range(2)]
    t = table(rows)
    assert match(t, STD_MATCH).tolist() == [True, False, False, True]  # (0,0) first, then (1,1)
    t2 = table([(0, 0, 0, 0.6, 0.6, NAN, NAN, NAN), (0, 0, 1, 0.8, 0.8, NAN, NAN, NAN),
                (0, 1, 1, 0.8, 0.8, NAN, NAN, NAN)])
    # tie on p1: gt 0 wins; then gt 1's only pair and gt 0's weaker pair are both skipped
    assert match(t2, STD_MATCH).tolist() == [False, True, False]


def test_greedy_and_optimal_differ_on_the_documented_example() -> None:
    # scores (g0,p0)=0.9, (g0,p1)=0.8, (g1,p0)=0.7, (g1,p1) no overlap
    rows = [(0, 0, 0, 0.9, 0.9, NAN, NAN, NAN), (0, 0, 1, 0.8, 0.8, NAN, NAN, NAN),
            (0, 1, 0, 0.7, 0.7, NAN, NAN, NAN), (0, 1, 1, 0.0, 0.9, NAN, NAN, NAN)]
    t = table(rows)
    assert match(t, STD_MATCH).tolist() == [True, False, False, False]
    assert match(t, STD_MATCH, method="optimal").tolist() == [False, True, True, False]
    assert match(t, STD_MATCH.with_(matching="optimal")).tolist() == [False, True, True, False]
    g = unit_counts(t, STD_MATCH).iloc[0]
    o = unit_counts(t, STD_MATCH, method="optimal").iloc[0]
    assert (g.tp, g.fp, g.fn) == (1, 1, 1) and (o.tp, o.fp, o.fn) == (2, 0, 0)
    assert matched_pairs(t, STD_MATCH, "optimal")["score"].sum() == pytest.approx(1.5)


def test_row_order_of_the_pair_table_does_not_matter() -> None:
    rows = [(0, g, p, 0.8, 0.8, NAN, NAN, NAN) for g in range(3) for p in range(3)] + \
           [(1, 0, 0, 0.7, 0.7, NAN, NAN, NAN), (1, 0, 1, 0.7, 0.7, NAN, NAN, NAN)]
    t = table(rows)
    perm = np.random.default_rng(3).permutation(len(rows))
    shuffled = PairTable.from_frames(t.groups, t.pairs.iloc[perm])
    for method in ("greedy", "optimal"):
        want = match(t, STD_MATCH, method=method)
        assert match(shuffled, STD_MATCH, method=method).tolist() == want[perm].tolist()


def _spec_like_samples() -> list[ViolationSample]:
    text = ("Jägermeister is the perfect drink for your sweet sixteen party. "
            "Jagermeister tastes best ice cold, straight from the freezer.")
    gt = (
        Violation("Do not target minors", 37, 62, category="Audience", explanation="A sixteen year old is a minor",
                  correction="the perfect drink for your birthday party (21+)"),
        Violation("Spell the brand as Jägermeister", 64, 76, category="Brand", explanation="Missing umlaut",
                  correction="Jägermeister"),
    )
    preds = {
        "prompt-baseline@1.1.0|gpt-3.5-turbo-0613": (
            Violation("Do not target minors", 40, 62, category="audience", explanation="Sweet sixteen means minors"),
            Violation("Promote responsible drinking", 100, 124, category="Safety"),
        ),
        "self-consistent-explainer@2.1.3|gpt-3.5-turbo-0613": (
            Violation("Brand must be spelled Jägermeister", 64, 76, category="brand ", explanation="Missing umlaut",
                      correction="Jägermeister"),
            Violation("Do not target minors", 0, 62, category="Audience"),
        ),
    }
    return [ViolationSample("s1", text, gt, preds)]


@pytest.mark.parametrize("config", [STD_MATCH, HA_MATCH])
@pytest.mark.parametrize("method", ["greedy", "optimal"])
def test_end_to_end_agrees_with_reference(config: MatchConfig, method: str) -> None:
    samples = _spec_like_samples()
    t = build_pair_table(samples, JaccardSimilarity())
    got = match(t, config, method=method)
    want = ref.match_samples(samples, config, token_jaccard, method=method)
    p = t.pairs
    fast = {(t.groups.sample_id[g], t.groups.checker[g], gi, pi)
            for g, gi, pi in zip(p["group"][got], p["gt"][got], p["pred"][got])}
    assert fast == {(s, c, gi, pi) for (s, c), m in want.items() for gi, pi in m}
    # the minors violation is found by both checkers; the brand one only by the explainer
    assert ("s1", "prompt-baseline@1.1.0|gpt-3.5-turbo-0613", 0, 0) in fast
    assert ("s1", "self-consistent-explainer@2.1.3|gpt-3.5-turbo-0613", 1, 0) in fast
