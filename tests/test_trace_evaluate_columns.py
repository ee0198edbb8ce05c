"""trace evaluate on columns (issue #28 item 1): the report equals, byte for byte, the one the record-per-sample
evaluate gave before (tests/trace_evaluation_before.py), on generated records full of the odd cases (fields not
labeled, keys listed twice or pointing nowhere, null support flags, judges missing scores, subsets or none), under
both references, from records and from a project's stored payloads (app/schemes/trace/store.py)."""
from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from app.store import Change, Project
from calibration.schemes.trace.columns import TraceColumns
from calibration.schemes.trace.evaluation import evaluate
from calibration.schemes.trace.scheme import SCHEME
from tests import trace_evaluation_before as before
from tests.test_trace_data import keyed_record


def _maybe(rng: random.Random, value: Any, p: float = 0.15) -> Any:
    return None if rng.random() < p else value


def generated(n: int, seed: int) -> tuple[list, dict[tuple[str, str], dict[str, Any]]]:
    """n parsed records and a human's labels of about half of them, every field sometimes absent."""
    rng = random.Random(seed)
    recs, labels = [], {}
    for i in range(n):
        sizes = tuple(rng.randint(0, 4) for _ in range(rng.randint(1, 3)))
        n_resp = rng.randint(0, 3)
        docs = [f"{d}{chr(97 + j)}" for d, size in enumerate(sizes) for j in range(size)]
        resp = [chr(97 + j) for j in range(n_resp)]
        pick = lambda keys: [k for k in keys if rng.random() < 0.4] + (["9z"] if rng.random() < 0.1 else [])
        rel = pick(docs)
        if rel and rng.random() < 0.2:
            rel.append(rel[0])  # listed twice: ragbench counts it
        raw: dict[str, Any] = {"all_relevant_sentence_keys": _maybe(rng, rel),
                               "all_utilized_sentence_keys": _maybe(rng, pick(docs))}
        if rng.random() < 0.6:
            raw["sentence_support_information"] = [
                {"response_sentence_key": k, "fully_supported": rng.choice([True, False, None]),
                 **({"supporting_sentence_keys": pick(docs)} if rng.random() < 0.5 else {}),
                 **({"explanation": f"why {k}"} if rng.random() < 0.5 else {})}
                for k in resp if rng.random() < 0.8]
        if rng.random() < 0.6:
            raw["unsupported_response_sentence_keys"] = [k for k in resp if rng.random() < 0.3]
        if rng.random() < 0.4:
            raw["adherence_score"] = rng.random() < 0.6
        judges = {name: {m: round(rng.random(), 3) for m in ("adherence", "relevance", "utilization")
                         if rng.random() < 0.7} for name in ("j1", "j2", "j3") if rng.random() < 0.7}
        meta = {"subset": rng.choice(["a", "b", "c"])} if seed % 2 else ({"x": 1} if i % 2 else None)
        rec = keyed_record(f"s{i}", doc_sizes=sizes, n_response=n_resp,
                           **{k: v for k, v in raw.items() if v is not None},
                           **({"judges": judges} if judges else {}), **({"meta": meta} if meta else {}))
        parsed = SCHEME.parse(rec)
        assert parsed.record is not None, parsed.problems
        recs.append(parsed.record)
        if rng.random() < 0.5:
            human = {"relevant": _maybe(rng, pick(docs), 0.3), "utilized": _maybe(rng, pick(docs), 0.3),
                     "unsupported": _maybe(rng, [k for k in resp if rng.random() < 0.3], 0.4),
                     "adherent": _maybe(rng, rng.random() < 0.5, 0.6)}
            labels[(f"s{i}", "")] = {k: v for k, v in human.items() if v is not None}
        if rng.random() < 0.1:
            labels[(f"s{i}", "j1")] = {"status": "accepted"}  # a unit's label: not the sample's
    labels[("elsewhere", "")] = {"relevant": ["0a"]}  # a sample evaluate is not given
    return recs, labels


def _text(report: Any) -> str:
    return json.dumps([report.data, [(t.title, t.columns, t.rows) for t in report.tables], report.notes],
                      sort_keys=True, default=float)


@pytest.mark.parametrize("n,seed", [(0, 0), (1, 1), (30, 2), (120, 3), (400, 5)])
@pytest.mark.parametrize("reference", ["annotator", "human"])
def test_columns_report_equals_the_record_report(n: int, seed: int, reference: str) -> None:
    recs, labels = generated(n, seed)
    options = {"n_boot": 100, "seed": seed, "reference": reference}
    want = _text(before.evaluate(recs, labels, options))
    assert _text(evaluate(recs, labels, options)) == want
    assert _text(evaluate(TraceColumns.from_records(recs), labels, options)) == want
    if n >= 120:
        assert '"hallucination_auroc": [0.' in want and '"spearman": [0.' in want  # figures, not only NaNs


def test_stored_payloads_read_as_the_parsed_records(tmp_path: Path) -> None:
    """The project's columns (payload fields extracted by SQLite, a sample stored without keyed sentences parsed)
    give the report the records parsed from the same project give the old evaluate."""
    from app.schemes.trace.store import evaluation_records

    recs, labels = generated(150, 7)
    unkeyed = SCHEME.parse({"scheme": "trace", "id": "plain", "question": "Q?", "documents": ["One. Two."],
                            "response": "One.", "all_relevant_sentence_keys": ["0a"], "meta": {"subset": "b"},
                            "judges": {"j1": {"adherence": 0.25}}}).record
    path = tmp_path / "p.concord"
    with Project.create(path) as p:
        p.samples.write_samples("trace", [*recs[:70], unkeyed, *recs[70:]])
        for (sid, unit), kinds in labels.items():
            if sid != "elsewhere":
                p.decisions.record("alice", [Change(sid, unit, k, v) for k, v in kinds.items()])
        p.conn.execute("UPDATE samples SET payload = json_remove(payload, '$.documents_sentences', "
                       "'$.response_sentences') WHERE id = 'plain'")
        records = p.samples.records("trace")
        assert [r.id for r in records][69:72] == ["s69", "plain", "s70"]
        cols = evaluation_records(p)
        stored = p.scheme_data.scheme_labels("trace")
    assert cols.ids == [r.id for r in records]
    assert cols.document_keys == [r.document_keys for r in records]
    from calibration.schemes.trace.agreement import judge_scores
    from calibration.schemes.trace.evaluation import _judge_arrays

    frames, arrays = judge_scores(records), _judge_arrays(cols)
    assert list(arrays) == list(frames) and len(frames) == 3
    for name, frame in frames.items():
        for metric, column in arrays[name].items():
            assert np.array_equal(column, frame[metric].to_numpy(), equal_nan=True)
    for options in ({"n_boot": 50, "seed": 3}, {"n_boot": 50, "seed": 3, "reference": "human"}):
        assert _text(evaluate(cols, stored, options)) == _text(before.evaluate(records, stored, options))


@pytest.mark.parametrize("n,k", [(1, 1), (50, 3), (3000, 40)])
def test_code_counts_from_draw_counts_equal_those_of_the_drawn_indices(n: int, k: int) -> None:
    import numpy as np

    from calibration.agreement import draw_counts, resample_index_chunks
    from calibration.schemes.trace.evaluation import _code_counts, _weighted_code_counts

    codes = np.random.default_rng(n).integers(0, k, n)
    for idx in resample_index_chunks(n, 130, seed=k):
        want = _code_counts(codes, k, idx)
        got = _weighted_code_counts(codes, k, draw_counts(idx, n))
        assert got.dtype == want.dtype and np.array_equal(got, want)


def test_stored_records_equal_the_parsed_ones(tmp_path: Path) -> None:
    """`load_records` (payloads read by `stored_record`) gives the very records the parser gives for the same
    project, a sample stored without keyed sentences and one with an odd field parsed in their places; a payload
    `to_json` never writes is refused by `stored_record` (the parser then answers)."""
    from app.schemes.trace.store import load_records
    from calibration.schemes.trace.parse import stored_record

    recs, _ = generated(200, 9)
    for r in recs:  # every written record reads back as itself
        assert stored_record(r.to_json()) == SCHEME.parse(r.to_json()).record
    odd = [{**recs[0].to_json(), "unknown": 1}, {**recs[0].to_json(), "adherence_score": 1},
           {**recs[0].to_json(), "judges": {"j": {"adherence": True}}},
           {**recs[0].to_json(), "response_sentences": [["a", "x"], ["a", "y"]]}]
    for raw in odd:
        with pytest.raises((ValueError, KeyError, TypeError, AttributeError)):
            stored_record(raw)
    path = tmp_path / "p.concord"
    with Project.create(path) as p:
        p.samples.write_samples("trace", recs)
        p.conn.execute("UPDATE samples SET payload = json_remove(payload, '$.documents_sentences') WHERE id = 's5'")
        p.conn.execute("UPDATE samples SET payload = json_set(payload, '$.extra', 1) WHERE id = 's7'")
        p.conn.execute("UPDATE samples SET split = 'test' WHERE id = 's8'")
        got, want = load_records(p), p.samples.records("trace")
    assert [r.id for r in want] == [r.id for r in recs] and want[8].split == "test"
    assert got == want


def test_label_items_many_with_layouts_coded_once_is_label_items_of_each_row() -> None:
    """trace's label_items_many codes each layout of sentence keys once: on generated records whose layouts differ
    while as long (documents of 2 + 1 and 1 + 2 sentences), rows, items and categories are label_items' own, each
    item's code one-to-one with its key."""
    from app.services.agreement import record_items

    recs, labels = generated(300, 11)
    records = {r.id: r for r in recs}
    rows = [(sid, unit, kind, value) for (sid, unit), kinds in labels.items() for kind, value in kinds.items()]
    row, item, category = SCHEME.label_items_many(records, rows)
    want = [(i, key, cat) for i, (sid, unit, kind, value) in enumerate(rows)
            for key, cat in record_items(SCHEME, records.get(sid), unit, kind, value).items()]
    assert len({tuple(r.document_keys) for r in recs}) > 20 and len(want) > 500
    assert [int(r) for r in row] == [w[0] for w in want]
    assert [bool(c) for c in category] == [bool(w[2]) for w in want]
    code_of: dict[Any, Any] = {}
    key_of: dict[Any, Any] = {}
    for code, (_, key, _) in zip(item.tolist(), want):
        assert code_of.setdefault(key, code) == code and key_of.setdefault(code, key) == key


@pytest.mark.parametrize("ks", [(1, 1), (3, 7, 2), (40, 36, 34, 10, 18), (2**40, 2**30)])
def test_distinct_code_rows_equal_a_row_wise_unique(ks: tuple[int, ...]) -> None:
    """The joint codes of trace's coded statistics: rows of codes read as mixed-radix numbers (or, past int64, a
    row-wise unique) give np.unique(axis=0)'s sorted rows and inverse."""
    import numpy as np

    from calibration.schemes.trace.evaluation import _distinct_code_rows

    rng = np.random.default_rng(len(ks))
    codes = [rng.integers(0, min(k, 5), 500) * (k // min(k, 5)) for k in ks]  # values spread over 0..k-1
    want_rows, want_inverse = np.unique(np.column_stack(codes), axis=0, return_inverse=True)
    rows, inverse = _distinct_code_rows(codes, ks)
    assert np.array_equal(rows, want_rows) and np.array_equal(inverse, want_inverse.ravel())


def test_a_placeholder_filled_or_dropped_gives_the_columns_of_the_records() -> None:
    """`evaluation_records`' placeholders (a sample parsed after the others were read): filled by `put`, or dropped
    when its parser refuses it, the columns (judge scores too) are those of the records in order."""
    from calibration.schemes.trace.evaluation import _judge_arrays

    recs, _ = generated(12, 1)
    assert recs[4].judges and any(r.judges for r in recs[5:])  # a score to put in place, later ones to move

    def with_placeholder() -> TraceColumns:
        cols = TraceColumns()
        for i, r in enumerate(recs):
            if i == 4:
                cols.add_stored(r.id, None, [], [], [None] * 5, None, {})
            else:
                cols.add_record(r)
        return cols

    def same(a: TraceColumns, b: TraceColumns) -> None:
        assert a._columns() == b._columns() and set(a.judges) == set(b.judges)
        got, want = _judge_arrays(a), _judge_arrays(b)
        assert list(got) == list(want)
        for name in want:
            for metric in want[name]:
                assert np.array_equal(got[name][metric], want[name][metric], equal_nan=True)

    filled = with_placeholder()
    filled.put(4, TraceColumns.from_records([recs[4]]), 0)
    same(filled, TraceColumns.from_records(recs))
    dropped = with_placeholder()
    dropped.drop(4)
    same(dropped, TraceColumns.from_records(recs[:4] + recs[5:]))
