"""The addm evaluate fast paths (issue #28) against the plain computations they replace, on generated data."""
from __future__ import annotations

import math
import random
from collections.abc import Sequence

import numpy as np
import pytest

from calibration.grounding import locate
from calibration.schemes.addm.metrics import (
    COUNTS,
    MethodTable,
    method_table,
    method_tables,
    policy_verdict,
    result_counts,
    risk_score,
)
from calibration.schemes.addm.policy import (
    ADDM_V2,
    MODIFIERS,
    Policy,
    canonical_modifier,
    verdict_ordinal,
)
from calibration.schemes.addm.records import (
    AddmSample,
    Incident,
    MethodResult,
    parse_record,
    stored_sample,
)
from calibration.schemes.addm.scheme import SCHEME
from tests.addm_data import random_samples

# points that are not whole numbers: a sum taken in another order would differ in its last bits
ODD = Policy(name="odd", severity_points=(0.1, 0.7, 2.3), modifier_points=(0.2, 0.30000000000000004), critical=1.0,
             high=0.6)


def _reference_counts(sample: AddmSample, result: MethodResult, policy: Policy = ADDM_V2) -> tuple[int, ...]:
    """metrics.result_counts as first written (a call per result, the verdict from policy_verdict)."""
    if result.error is not None:
        return (0,) * len(COUNTS)
    gt_by_review: dict[str, Incident] = {}
    for inc in sample.incidents:
        gt_by_review.setdefault(inc.review_id, inc)
    claimed = {e.review_id for e in result.evidences}
    matched = len(claimed & gt_by_review.keys())
    sev_ok = sev_n = mod_ok = mod_n = snip_ok = snip_n = 0
    for e in result.evidences:
        g = gt_by_review.get(e.review_id)
        if g is not None:
            sev_n += 1
            sev_ok += e.severity == g.severity
            for m in MODIFIERS:
                mod_n += 1
                mod_ok += (m in e.modifiers) == (m in g.modifiers)
        if e.snippet is not None:
            snip_n += 1
            snip_ok += e.start is not None
    sup = sup_n = cons = cons_n = 0
    if result.verdict is not None:
        ok = int(policy_verdict(result.evidences, policy) == result.verdict)
        sup, sup_n = ok, 1
        if result.evidences:
            cons, cons_n = ok, 1
    return (len(claimed), matched, sev_ok, sev_n, mod_ok, mod_n, sup, sup_n, snip_ok, snip_n, cons, cons_n)




def _reference_table(samples: Sequence[AddmSample], method: str, policy: Policy = ADDM_V2) -> MethodTable:
    """metrics.method_table as first written (one method, `_reference_counts` per result)."""
    n = len(samples)
    gt = np.fromiter((s.verdict for s in samples), dtype=np.int8, count=n)
    score = [math.nan] * n
    rows: list[tuple[int, ...]] = [(0,) * len(COUNTS)] * n
    ran = [False] * n
    for i, s in enumerate(samples):
        r = s.methods.get(method)
        if r is None:
            continue
        ran[i] = True
        if r.error is None:
            rs = risk_score(r)
            if rs is not None:
                score[i] = rs
            rows[i] = _reference_counts(s, r, policy)
    counts = np.array(rows, dtype=np.float64).reshape(n, len(COUNTS))
    return MethodTable(method, gt, np.array(score, dtype=np.float64), counts, np.array(ran, dtype=bool))


@pytest.mark.parametrize("policy", [ADDM_V2, ODD])
def test_method_tables_equal_method_table_of_each_method(policy: Policy) -> None:
    samples = random_samples(400, seed=7, methods=("a", "b", "c"))
    fast = method_tables(samples, ["c", "a", "b", "missing"], policy)
    for got in fast:
        want = _reference_table(samples, got.method, policy)
        assert_tables_equal(method_table(samples, got.method, policy), want)
        assert_tables_equal(got, want)


def assert_tables_equal(got: MethodTable, want: MethodTable) -> None:
    assert got.method == want.method
    np.testing.assert_array_equal(got.gt, want.gt)
    np.testing.assert_array_equal(got.score, want.score)  # NaN where left out, in the same places
    np.testing.assert_array_equal(got.counts, want.counts)
    np.testing.assert_array_equal(got.ran, want.ran)


def test_method_tables_rows_are_result_counts() -> None:
    samples = random_samples(200, seed=3)
    (table,) = method_tables(samples, ["a"], ODD)
    for i, s in enumerate(samples):
        r = s.methods.get("a")
        want = (0,) * table.counts.shape[1] if r is None or r.error else _reference_counts(s, r, ODD)
        assert tuple(table.counts[i]) == want
        if r is not None:
            assert result_counts(s, r, ODD) == (want if not r.error else (0,) * len(COUNTS))


def test_cached_spellings_read_as_before() -> None:
    for v in ("High Risk", " 'critical risk' ", "LOW_RISK", "high", "nope", "", "Critical  Risk"):
        key = " ".join(v.strip().strip("'\"`").replace("_", " ").split()).casefold()
        assert verdict_ordinal(v) == {"low risk": 0, "low": 0, "high risk": 1, "high": 1, "critical risk": 2,
                                      "critical": 2}.get(key)
        assert verdict_ordinal(v) == verdict_ordinal(v)  # a second (cached) call
    assert verdict_ordinal(None) is None and verdict_ordinal(2) is None
    assert canonical_modifier(" false  ASSURANCE ") == MODIFIERS[0]
    assert canonical_modifier(" Other one ") == "Other one"


def _raw(rng: random.Random, i: int) -> dict:
    """A stored-looking business whose snippets hit exactly (several times), case-insensitively, fuzzily or not."""
    texts = [f"the soup was cold, The Soup was COLD and the soup was cold again {j}; staff shrugged." for j in range(3)]
    snippets = ["the soup was cold", "soup was COLD", "The Soup was COLD", "soup was cld again", "nothing like it",
                "   ", None, "shrugged.", 7]

    def incident() -> dict:
        return {"review_id": f"r{rng.randrange(3)}", "severity": rng.choice(["mild", " Severe", "MODERATE"]),
                "modifiers": rng.sample(["false assurance", "Dismissive Staff"], rng.randrange(3)),
                "snippet": rng.choice(snippets)}

    return {"id": f"b{i}", "reviews": [{"review_id": f"r{j}", "text": t} for j, t in enumerate(texts)],
            "ground_truth": {"verdict": rng.choice(["Low Risk", "high", "CRITICAL_RISK"]),
                             "incidents": [incident() for _ in range(rng.randrange(3))]},
            "methods": {"m": {"verdict": "High Risk", "risk_score": 1.5,
                              "evidences": [incident() for _ in range(rng.randrange(4))]}}}


def test_stored_sample_locates_snippets_as_the_parser_does() -> None:
    rng = random.Random(5)
    seen = set()
    for i in range(300):
        raw = _raw(rng, i)
        got = stored_sample(raw)
        want = SCHEME.parse(raw).record
        assert got == want
        for inc in (*got.incidents, *got.methods["m"].evidences):
            seen.add(inc.how)
            if inc.snippet is not None:
                loc = locate(inc.snippet, got.review_text(inc.review_id) or "")
                assert (inc.start, inc.end, inc.how) == (loc.start, loc.end, loc.how)
    assert {"exact", "casefold", "fuzzy", "ungrounded", None} <= seen  # every path of the location was taken
    assert parse_record(_raw(random.Random(1), 0))[0] is not None


def test_intervals_from_the_stacked_product_equal_the_product_per_method() -> None:
    """One product with every method's counts side by side (pooled: their sums) gives the very interval ends of a
    product per method and one with the pooled counts (the former path)."""
    from calibration.agreement import percentile_interval, resample_counts
    from calibration.schemes.addm.evaluation import (
        _auprc_rows,
        _codes,
        _consistency_rows,
        _intervals,
        _process_rows,
    )

    samples = random_samples(900, seed=11, methods=("a", "b", "c"))
    tables = method_tables(samples, ["a", "b", "c"], ODD)
    codes = [_codes(t) for t in tables]
    got = _intervals(tables, [c for c, _ in codes], [k for _, k in codes], ODD.process_weights, 200, 5, 0.9)
    vals: dict[str, dict[str, list[np.ndarray]]] = {}
    pooled = np.sum([t.counts for t in tables], axis=0)
    for w in resample_counts(len(samples), 200, 5, chunk=64):
        aucs = []
        for t, (code, k) in zip(tables, codes):
            sums = w @ t.counts
            aucs.append(_auprc_rows(w, t.gt, code, k))
            v = vals.setdefault(t.method, {"auprc_ci": [], "process_ci": [], "consistency_ci": []})
            v["auprc_ci"].append(aucs[-1])
            v["process_ci"].append(_process_rows(sums, ODD.process_weights))
            v["consistency_ci"].append(_consistency_rows(sums))
        sums = w @ pooled
        v = vals.setdefault("overall", {"auprc_ci": [], "process_ci": [], "consistency_ci": []})
        v["auprc_ci"].append(np.mean(aucs, axis=0))
        v["process_ci"].append(_process_rows(sums, ODD.process_weights))
        v["consistency_ci"].append(_consistency_rows(sums))
    want = {m: {key: list(percentile_interval(np.concatenate(x), 0.1)) for key, x in v.items()} for m, v in vals.items()}
    assert got == want


def test_verdict_agreement_fed_the_evaluations_draws_equals_its_own_draws() -> None:
    """The human evaluation hands its draws to the verdict agreement (same businesses, seed and chunks): the
    agreement's figures are the very floats of its own draw; fed only part of them, it draws its own."""
    from calibration.agreement import resample_counts
    from calibration.schemes.addm.evaluation import evaluate
    from calibration.schemes.addm.report import VerdictDraws, verdict_agreement

    truth = random_samples(700, seed=13, methods=("a", "b"))
    want = verdict_agreement(truth, ODD, 150, 3, 0.95)
    assert want["a"]["accuracy_ci"][0] is not None
    draws = VerdictDraws(truth, ODD)
    res = evaluate(truth, ODD, n_boot=150, seed=3, on_draws=(draws.CHUNK, draws.add))
    assert draws.fed == 150 and res == evaluate(truth, ODD, n_boot=150, seed=3)
    assert draws.finish(150, 3, 0.95) == want
    other = VerdictDraws(truth, ODD)
    evaluate(truth, ODD, n_boot=150, seed=3, on_draws=(32, other.add))  # another chunk size: not these draws
    assert other.fed == 0
    other.add(next(resample_counts(len(truth), 150, 3)))  # a part only: drawn again
    assert other.finish(150, 3, 0.95) == want


def test_label_items_many_equals_label_items_per_row() -> None:
    """The items and categories of every row, as agreement.record_items draws them one row at a time (a row without
    a record or with a value label_items cannot read: none)."""
    from app.services.agreement_items import record_items

    rng = random.Random(17)
    records = {f"b{i}": object() for i in range(30)}
    values = {"verdict": ["High Risk", "low", "CRITICAL_RISK", "nope", None, 3, ["High Risk"]],
              "incidents": [[], None, [{"review_id": "r1", "severity": " Severe"}],
                            [{"review_id": 2, "severity": "mild", "modifiers": ["False assurance"]},
                             {"review_id": "2", "severity": "MODERATE"}, {"review_id": "r3", "severity": "mild"}],
                            [{"severity": "mild"}], [{"review_id": "r1", "severity": "mild", "modifiers": 5}], "r1",
                            [["r1"]], {"review_id": "r1"}],
              "quality": [4, None], "status": ["accepted"]}
    rows = []
    for _ in range(500):
        kind = rng.choice(list(values))
        rows.append((f"b{rng.randrange(35)}", rng.choice(["", "amos|m"]), kind, rng.choice(values[kind])))
    want = [(i, it, cat) for i, (sid, unit, kind, value) in enumerate(rows)
            for it, cat in record_items(SCHEME, records.get(sid), unit, kind, value).items()]
    row, item, category = SCHEME.label_items_many(records, rows)
    assert list(zip(row.tolist(), item.tolist(), category.tolist())) == want
    assert item.dtype == object and category.dtype == object and len(want) > 50
