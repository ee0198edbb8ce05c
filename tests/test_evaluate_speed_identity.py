"""Issue #28 items 1 and 5: the faster paths of `concord evaluate` and `concord agreement` give the same figures as
the computations they replace (old formulation next to the new one on generated data, compared exactly)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from calibration.agreement import distinct_rows, percentile_interval, resample_counts


def _old_evaluate(table: pd.DataFrame, base: str, n_boot: int, seed: int) -> pd.DataFrame:
    """calibration.schemes.rgb.metrics.evaluate before issue #28: each group drawing its own replicates."""
    from calibration.schemes.rgb.features import LABELS
    from calibration.schemes.rgb.metrics import FIGURES, _figure

    rows = []
    for key, group in table.groupby(["model", "task"], sort=True, dropna=False):
        x = group[list(LABELS)].to_numpy(dtype=bool).astype(np.int8)
        reps = _old_replicates(x, base, n_boot, seed)
        for j, f in enumerate(FIGURES):
            low, high = percentile_interval(reps[:, j], 0.05)
            rows.append({"model": key[0], "task": key[1], "figure": f, "value": float(_figure(x, f, base)),
                         "low": low, "high": high, "n": int(x.shape[0])})
    return pd.DataFrame(rows, columns=["model", "task", "figure", "value", "low", "high", "n"])


def test_rgb_tables_sharing_draws_equal_each_drawing_alone() -> None:
    """evaluate_many: groups of one size share one pass over the draws; every figure and interval is what each
    table's groups gave drawing alone (old formulation), including groups of different sizes and bases."""
    from calibration.schemes.rgb.features import LABELS
    from calibration.schemes.rgb.metrics import evaluate_many

    rng = np.random.default_rng(12)
    n = 900
    models, tasks = rng.choice(["m1", "m2"], n), rng.choice(["noise", "integration", "rejection"], n)
    jobs = []
    for t in range(4):
        keep = rng.random(n) < (1.0 if t < 2 else 0.7)  # two tables of the same groups, two of others
        table = pd.DataFrame({"model": models, "task": tasks, **{k: rng.random(n) < p for k, p in
                                                               zip(LABELS, (0.6, 0.2, 0.3, 0.5))}})[keep]
        jobs.append((table, "detected" if t % 2 == 0 else "all"))
    got = evaluate_many(jobs, n_boot=150, seed=5)  # type: ignore[arg-type]
    for out, (table, base) in zip(got, jobs):
        pd.testing.assert_frame_equal(out, _old_evaluate(table, base, 150, 5), check_exact=True)


def _old_replicates(x: np.ndarray, base: str, n_boot: int, seed: int) -> np.ndarray:
    """calibration.schemes.rgb.metrics._replicates before issue #28: every unit's draw counts times the columns."""
    n = x.shape[0]
    cols = np.column_stack([x, x[:, 2] & x[:, 3]]).astype(np.float64)
    sums = np.concatenate([w @ cols for w in resample_counts(n, n_boot, seed)])
    out = 100.0 * sums[:, :4] / n
    if base != "all":
        detected = sums[:, 2]
        with np.errstate(invalid="ignore", divide="ignore"):
            out[:, 3] = np.where(detected > 0, 100.0 * sums[:, 4] / detected, 0.0)
    return out


@pytest.mark.parametrize("base", ["detected", "all"])
@pytest.mark.parametrize("n", [1, 64, 4001])
def test_rgb_replicates_equal_the_product_with_every_units_draw_counts(base: str, n: int) -> None:
    from calibration.schemes.rgb.metrics import _replicates

    rng = np.random.default_rng(n)
    x = (rng.random((n, 4)) < np.array([0.6, 0.2, 0.1, 0.5])).astype(np.int8)
    got, want = _replicates(x, base, 300, 11), _old_replicates(x, base, 300, 11)  # type: ignore[arg-type]
    assert np.array_equal(got, want, equal_nan=True)
    for j in range(4):  # and so the intervals
        assert percentile_interval(got[:, j], 0.05) == percentile_interval(want[:, j], 0.05)


def test_distinct_rows_rebuild_the_rows() -> None:
    x = np.random.default_rng(2).integers(0, 2, (500, 5)).astype(float)
    rows, codes = distinct_rows(x)
    assert np.array_equal(rows[codes], x) and len(np.unique(rows, axis=0)) == len(rows)


def test_rgb_agreement_table_reads_the_rows_by_key() -> None:
    """The agreement table pairs each decided row with the labels of its own (sample, unit)."""
    from calibration.schemes.rgb.evaluation import _agreement_table, _decision_codes
    from calibration.schemes.rgb.features import LABELS

    rng = np.random.default_rng(4)
    keys = [(f"s{i // 3}", f"m{i % 3}") for i in range(300)]
    labels = {k: {d: bool(rng.random() < 0.5) for d in LABELS if rng.random() < 0.8} for k in keys
              if rng.random() < 0.9}
    checker = {d: rng.random(len(keys)) < 0.5 for d in LABELS}
    judge = {d: [None if rng.random() < 0.3 else bool(rng.random() < 0.5) for _ in keys] for d in LABELS}
    decided = {name: pd.DataFrame({"sample": [k[0] for k in keys], "model": [k[1] for k in keys], **cols})
               for name, cols in (("checker", checker), ("judge", judge))}
    want = []
    for source, cols in (("checker", checker), ("judge", judge)):
        for d in LABELS:
            pairs = [(bool(m), labels[key][d]) for key, m in zip(keys, cols[d])
                     if m is not None and d in labels.get(key, {})]
            a, b = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
            pa, pb = a.mean(), b.mean()
            pe = pa * pb + (1 - pa) * (1 - pb)
            kappa = ((a == b).mean() - pe) / (1 - pe)
            want.append((source, d, len(pairs), round(100.0 * float((a == b).mean()), 1), round(float(kappa), 3)))
    assert list(_agreement_table(decided, _decision_codes(keys, labels)).rows) == want


def test_ceiling_reads_stored_machine_labels_in_bulk_as_one_at_a_time(tmp_path: Path) -> None:
    """`newest_machine_values` gives `machine_decision` what `machine_label` gives it unit by unit: no label, a
    failed one, one label, and two sources (the newest chosen by machine_label itself)."""
    from app.services.ceiling import machine_decision
    from app.store import Project
    from calibration.schemes.base import registry
    from calibration.schemes.violations import Violation, ViolationSample

    text = "The cat sat on the mat. It was red and tall."
    v = (Violation("r", 4, 7), Violation("q", 24, 26))
    p = Project.create(tmp_path / "p.concord")
    p.store("violations").write_violation_samples([ViolationSample(f"s{i}", text, v, {"c1@1|m": v}) for i in range(4)])
    p.samples.save_machine_label("s1", "c1@1|m", "matcher", None, error="down")
    p.samples.save_machine_label("s2", "c1@1|m", "matcher", {"predictions": [], "matches": [[0, 0], [1, 1]]})
    p.samples.save_machine_label("s3", "c1@1|m", "matcher", {"predictions": [], "matches": [[0, 0]]})
    p.samples.save_machine_label("s3", "c1@1|m", "other", {"predictions": [], "matches": [[1, 1]]})
    stored = p.samples.newest_machine_values("violations")
    assert set(stored) == {("s2", "c1@1|m"), ("s3", "c1@1|m")} and stored[("s3", "c1@1|m")] is None
    scheme = registry().get("violations")
    records = {scheme.record_id(r): r for r in p.scheme_data.scheme_records("violations")}
    decided = []
    for sid in ("s0", "s1", "s2", "s3"):
        for unit in ("c1@1|m", ""):
            one = machine_decision(p, scheme, records[sid], sid, unit)
            assert machine_decision(p, scheme, records[sid], sid, unit, stored) == one
            decided.append(one)
    assert any(d for d in decided)


def test_item_agreement_and_evaluate_skip_scipy_sparse() -> None:
    """Item agreement (the ceiling of `concord evaluate`, `concord agreement` on items) imports no scipy.sparse."""
    import subprocess
    import sys

    code = ("import sys\nfrom calibration.annotators import item_agreement\n"
            "rows = [(f's{i // 4}', i, r, (i * (r + 1)) % 3) for i in range(40) for r in range(3)]\n"
            "assert item_agreement(rows, n_boot=20)['overall']['kappa']['estimate'] is not None\n"
            "print('scipy.sparse' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[1], capture_output=True,
                         text=True, timeout=120, check=True)
    assert out.stdout.strip() == "False"


def test_trace_evaluation_imports_no_sklearn() -> None:
    """The trace scheme's evaluate hook reads no F1 or AUROC from scikit-learn (1-2 s to import)."""
    import subprocess
    import sys

    code = ("import sys\nimport calibration.schemes.trace.evaluation, calibration.schemes.trace.agreement\n"
            "print('sklearn' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[1], capture_output=True,
                         text=True, timeout=120, check=True)
    assert out.stdout.strip() == "False"


def test_ceiling_comparisons_from_one_table_equal_the_row_lists() -> None:
    """The ceiling's three item_agreement calls read parts of one coded table: the figures are those of the row lists
    it passed before (humans; metric and resolved on the metric's items; metric and humans on them)."""
    from app.services.ceiling import METRIC, RESOLVED, _humans, _metric_sides
    from calibration.annotators import CodedItems, item_agreement

    rng = np.random.default_rng(9)
    humans, metric_rows = [], []
    for s in range(150):
        for item in range(int(rng.integers(1, 4))):
            key = (f"s{s}", f"u|k|{item}")
            for who in ("ana", "ben", "cy"):
                if rng.random() < 0.8:
                    humans.append((*key, who, repr(bool(rng.random() < 0.6))))
            if rng.random() < 0.7:
                metric_rows.append((*key, METRIC, repr(bool(rng.random() < 0.5))))
            if rng.random() < 0.9:
                metric_rows.append((*key, RESOLVED, repr(bool(rng.random() < 0.6))))
    items = {(r[0], r[1]) for r in metric_rows if r[2] == METRIC}
    rows = [r for r in metric_rows if (r[0], r[1]) in items] + [r for r in humans if (r[0], r[1]) in items]
    want = [item_agreement(humans, n_boot=200, seed=3),
            item_agreement([r for r in rows if r[2] in (METRIC, RESOLVED)], n_boot=200, seed=3),
            item_agreement([r for r in rows if r[2] != RESOLVED], n_boot=0)]
    entries = metric_rows + humans
    names = [sorted({r[c] for r in entries}) for c in range(4)]
    names[2] = [METRIC, RESOLVED, "ana", "ben", "cy"]  # the ceiling's rater codes: the metric 0, resolved 1
    codes = [np.array([names[c].index(r[c]) for r in entries]) for c in range(4)]
    table = CodedItems(*codes, names[2], names[3])
    shared_item = np.array([(r[0], r[1]) in items for r in entries])  # the items the metric labeled
    got = [_humans(table, 200, 3), *_metric_sides(table, shared_item, 200, 3)[:2]]
    assert repr(got) == repr(want)
    mh, each, hh = _metric_sides(table, shared_item, 200, 3, humans=True)  # one draw for the humans' and the metric's
    got = [hh, mh, each]
    assert repr(got) == repr(want)


@pytest.mark.parametrize("repeated", [True, False])
def test_rubric_agreement_makes_each_sides_buckets_once_with_the_same_result(repeated: bool) -> None:
    """align_excerpts aligns effective buckets made once per side: the same alignments as on the raw buckets."""
    from calibration.schemes.rubric.agreement import _align, align_excerpts
    from calibration.schemes.rubric.buckets import effective_buckets
    from calibration.schemes.rubric.traits import MetricTrait

    trait = MetricTrait(name="cov", metrics=["precision", "recall", "f1", "specificity", "accuracy"],
                        evaluation_mode="full_matrix", tp_instructions=["x"], tn_instructions=["y"],
                        repeated_extraction=repeated)
    rng = np.random.default_rng(int(repeated))
    words = ["alpha", "Alpha ", "beta", "BETA", "gamma", " ", "delta"]
    for _ in range(200):
        sides = [{b: [str(w) for w in rng.choice(words, int(rng.integers(0, 5)))] for b in ("tp", "fn", "fp", "tn")}
                 for _ in range(2)]
        llm, human = effective_buckets(trait, sides[0]), effective_buckets(trait, sides[1])
        assert _align(llm, human) == align_excerpts(trait, sides[0], sides[1])


@pytest.mark.parametrize("n", [7, 300, 2000])
def test_trace_intervals_from_code_counts_equal_the_weighted_forms(n: int) -> None:
    """trace evaluate's AUROC, Spearman and mean intervals: counted per code from the drawn indices (no dense
    weights) and divided by n, every estimate and interval end equal to the weighted forms they replace
    (agreement.weighted_auroc / resampled_spearman of resample_counts' weights, the mean over the weights' sum)."""
    from calibration.agreement import resampled_spearman, spearman_codes, weighted_auroc
    from calibration.schemes.trace.evaluation import (_auroc_codes, _auroc_counts, _Intervals, _mean_w, _rmse_sums,
                                                      _spearman)

    rng = np.random.default_rng(n)
    y = (rng.random(n) < 0.3).astype(float)
    y[:2] = [0.0, 1.0]
    s = np.round(rng.random(n), 1)  # ties
    a, h = rng.random(n).round(2), np.round(rng.random(n) * 3) / 3
    x = rng.random(n)
    values, inv = np.unique(s, return_inverse=True)
    old = [lambda w: weighted_auroc(y, inv, values.size, w), lambda w: resampled_spearman(a, h, w),
           lambda w: (w @ x) / w.sum(axis=1)]
    batch = _Intervals(200, 3, 0.05)
    codes, k = _auroc_codes(y, s)
    sp = spearman_codes(a, h)
    slots = [batch.add(_auroc_counts, n, codes=codes, k=k), batch.add(_spearman(sp), n, codes=sp.pair, k=sp.px.size),
             batch.add(lambda w: _mean_w(x, w), n), batch.add(_rmse_sums, n, np.column_stack([x, np.ones(n)]))]
    # a column-sums statistic beside them still gets its own interval
    batch.run()
    for stat, slot in zip(old, slots):
        reps = np.concatenate([stat(w) for w in resample_counts(n, 200, 3)])
        want = [float(stat(np.ones((1, n)))[0]), *percentile_interval(reps, 0.05)]
        assert np.array_equal(slot, want, equal_nan=True)


def _rgb_records(n: int, seed: int) -> list:
    """Generated rgb records: single responses with and without a model, `responses` of several models, both,
    counterfactual ones with a fake answer, noise rates and none."""
    import random

    from calibration.schemes.rgb.scheme import SCHEME

    rng = random.Random(seed)
    texts = ["Paris.", "I can not answer the question because of the insufficient information in documents.",
             "There are factual errors in the provided documents. Tampa.", "Lyon", "not Glendale, Tampa", "oslo!"]
    out = []
    for i in range(n):
        raw = {"scheme": "rgb", "id": f"s{i}", "task": rng.choice(["noise", "rejection", "counterfactual"]),
               "language": rng.choice(["en", "zh"]), "query": "q", "answer": rng.choice(["Paris", ["Tampa", "Oslo"]]),
               "docs": ["d"], "noise_rate": rng.choice([None, 0.0, 0.4, 1.0])}
        if rng.random() < 0.5:
            raw["response"] = rng.choice(texts)
            if rng.random() < 0.5:
                raw["model"] = rng.choice(["m0", "m9"])
        if rng.random() < 0.7 or "response" not in raw:
            raw["responses"] = {m: rng.choice(texts) for m in rng.sample(["m1", "m2", "m3"], rng.randint(1, 3))}
        if raw["task"] == "counterfactual":
            raw["fakeanswer"] = "Glendale"
        parsed = SCHEME.parse(raw)
        assert parsed.ok, parsed.problems
        out.append(parsed.record)
    return out


def test_rgb_unit_columns_equal_the_one_response_records() -> None:
    """rgb evaluate's per-unit columns and features equal those of each unit's one-response record (for_unit), the
    records the figures and checkers read before issue #28."""
    from calibration.schemes.rgb.evaluation import _units
    from calibration.schemes.rgb.features import features_from_records

    records = _rgb_records(300, 1)
    keys, recs = [], []
    for r in records:
        for u in r.units:
            keys.append((r.id, u))
            recs.append(r.for_unit(u))
    units = _units(records)
    assert units.keys == keys
    want = pd.DataFrame({"sample": [k[0] for k in keys], "model": [k[1] for k in keys], "task": [r.task for r in recs],
                         "noise_rate": [np.nan if r.noise_rate is None else r.noise_rate for r in recs]})
    pd.testing.assert_frame_equal(units.base, want, check_exact=True)
    got, old = units.features(["rgb_original", "rgb_extended"]), features_from_records(recs)
    for field in ("full_noise", "orig_rejection", "orig_error", "orig_found", "orig_nozero", "ext_rejection",
                  "ext_error", "ext_need", "ext_cf_rejects", "ext_cf_vetoed"):
        assert np.array_equal(getattr(got, field), getattr(old, field)), field


def test_rgb_partial_tables_keep_the_units_that_have_what_each_figure_needs() -> None:
    """The human (and judge) tables per figure: the units whose labels give every decision the figure needs, each
    decision as its truth value (not given: False), in unit order, as the list-built tables before issue #28."""
    from calibration.schemes.rgb.evaluation import NEEDS, _decision_codes, _partial_tables, _units
    from calibration.schemes.rgb.features import LABELS

    rng = np.random.default_rng(3)
    records = _rgb_records(200, 2)
    units = _units(records)
    labels = {k: {d: [None, True, False, 1, 0][int(rng.integers(5))] for d in LABELS if rng.random() < 0.7}
              for k in units.keys if rng.random() < 0.8}
    got = _partial_tables(units, _decision_codes(units.keys, labels))
    values = {k: [None if labels.get(key) is None else labels[key].get(k) for key in units.keys] for k in LABELS}
    for figure, needs in NEEDS.items():
        rows = [i for i in range(len(units.keys)) if all(values[k][i] is not None for k in needs)]
        want = units.base.iloc[rows].reset_index(drop=True).assign(
            **{k: [bool(values[k][i]) if values[k][i] is not None else False for i in rows] for k in LABELS})
        pd.testing.assert_frame_equal(got[figure], want, check_exact=True)


@pytest.mark.parametrize("text", ['{"a": [1, 2.5, -0.0, "x\\u00e9"], "b": null, "c": true}', '{"n": NaN}',
                                  '{"big": 123456789012345678901234567890}', '[1e400]', '"\\ud800"', '{"a":1,"a":2}',
                                  '{"f": 0.1, "g": 1.7976931348623157e308, "h": 5e-324, "k": 9223372036854775807}'])
def test_store_loads_reads_what_json_loads_reads(text: str) -> None:
    """The store's JSON reader (orjson where it reads the same values) gives json.loads' values, types included."""
    import json

    from app.store.samples import loads

    got, want = loads(text), json.loads(text)
    assert repr(got) == repr(want)
    assert json.dumps(got) == json.dumps(want)


def test_rgb_label_items_of_one_kind_equal_the_scan_of_the_four() -> None:
    """rgb label_items: asked one kind at a time (the ceiling, agreement), the same items as the scan of the four
    decisions gives, for every kind (decisions, status, note) and value (booleans, null, truthy others)."""
    from calibration.schemes.rgb.scheme import DECISIONS, SCHEME

    for kind in (*DECISIONS, "status", "note", "other"):
        for value in (True, False, None, 0, 1, "yes", "", [], ["x"]):
            want = {k: bool({kind: value}[k]) for k in DECISIONS if {kind: value}.get(k) is not None}
            assert SCHEME.label_items(None, "m", {kind: value}) == want  # type: ignore[arg-type]


def test_trace_human_labels_built_at_once_equal_the_replaced_ones() -> None:
    """trace's human_labels, built in one call, equals the TraceLabels made by one replace() per kind (before
    issue #28) for every mix of kinds given, null or absent."""
    import itertools
    from dataclasses import replace

    from calibration.schemes.trace.evaluation import human_labels
    from calibration.schemes.trace.records import TraceLabels, human_adherent

    options = {"relevant": [None, [], ["0a", "1b", "0a"]], "utilized": [None, ["0b"]], "unsupported": [None, [], ["a"]],
               "adherent": [None, True, False]}
    for values in itertools.product(*options.values()):
        labels = {k: v for k, v in zip(options, values) if v is not None or k == "relevant"}
        want: TraceLabels | None = None
        if any(labels.get(k) is not None for k in options):
            want = TraceLabels()
            for kind in ("relevant", "utilized", "unsupported"):
                if labels.get(kind) is not None:
                    want = replace(want, **{kind: tuple(labels[kind])})
            verdict = human_adherent(labels)
            want = replace(want, adherence=verdict) if verdict is not None else want
        assert human_labels(labels) == want


def test_evaluate_with_ceilings_pauses_the_gc_for_the_ceiling_and_restores_it(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The human ceiling is drawn with the cyclic GC paused (as the records and the hook are), and the GC is on
    again afterwards."""
    import gc

    from app.services import ceiling
    from app.store import Project
    from calibration.schemes.base import registry

    seen = []
    monkeypatch.setattr(ceiling, "human_ceilings", lambda *a, **k: seen.append(gc.isenabled()) or {})
    p = Project.create(tmp_path / "p.concord")
    # A GUI test earlier in this worker process may have handed collection to app.gui.gcguard (GC off): start from
    # a known state and give the process back the one it had.
    was_enabled = gc.isenabled()
    try:
        gc.enable()
        ceiling.evaluate_with_ceilings(p, [registry().get("rgb")], {"n_boot": 0})
        assert seen == [False] and gc.isenabled()
        gc.disable()  # and a GC that was off (the app's guard) stays off
        ceiling.evaluate_with_ceilings(p, [registry().get("rgb")], {"n_boot": 0})
        assert seen == [False, False] and not gc.isenabled()
    finally:
        gc.enable() if was_enabled else gc.disable()
