"""Issue #28: rubric `evaluate` reads its units as columns (the store's SQL, or records in Python) and each distinct
(trait, LLM buckets, human buckets) once. Its figures are those of the per-unit loop it replaced (kept here), on
generated data whose buckets repeat, as a project's do, compared exactly."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from calibration.schemes.rubric.agreement import TraitCounts
from calibration.schemes.rubric.buckets import Normalised, bucket_keys
from calibration.schemes.rubric.columns import rubric_columns
from calibration.schemes.rubric.evaluation import evaluate_report
from calibration.schemes.rubric.records import RubricSample
from calibration.schemes.rubric.traits import MetricTrait

WORDS = ["since 1878", "Thirty-three herbs", "thirty-three herbs ", "ice-cold", "35% vol.", "  ", "a secret recipe"]


def _old_data(records: list[RubricSample], labels: dict[tuple[str, str], Any]) -> dict[str, Any]:
    """evaluate_report's figures before issue #28: every unit's buckets normalised and aligned in turn."""
    counts: dict[str, TraitCounts] = {}
    built: dict[int, tuple[Any, MetricTrait]] = {}
    normal = Normalised()
    for record in records:
        for t in record.traits:
            buckets = record.buckets.get(t["name"])
            if buckets is None:
                continue
            got = built.get(id(t))
            if got is None:
                got = built[id(t)] = (t, MetricTrait.from_dict(t, strict=False))
            trait = got[1]
            tally = counts.get(trait.name)
            if tally is None:
                tally = counts[trait.name] = TraitCounts()
            llm = bucket_keys(trait, buckets, normal)
            tally.add(trait, llm)
            human = (labels.get((record.id, trait.name)) or {}).get("buckets")
            if human is not None:
                tally.check(trait, llm, bucket_keys(trait, human, normal))
    return {name: {"samples": len(tally.llm), "llm_metrics": tally.llm_means(),
                   "agreement": tally.agreement() if tally.checked else None} for name, tally in counts.items()}


def _pool(rng: np.random.Generator, size: int) -> list[dict[str, list[str]]]:
    """A few distinct buckets (a project's repeat): excerpts repeated within and across buckets, in other
    spellings, blank ones (dropped)."""
    out = []
    for _ in range(size):
        b = {name: [str(w) for w in rng.choice(WORDS, int(rng.integers(0, 4)))] for name in ("tp", "fn", "fp", "tn")
             if rng.random() < 0.9}
        out.append(b)
    return out


def _trait(name: str, metrics: list[str], repeated: bool) -> dict[str, Any]:
    return MetricTrait(name=name, metrics=metrics, tp_instructions=["x"], evaluation_mode="full_matrix",
                       tn_instructions=["y"], repeated_extraction=repeated).to_dict()


def _copy(value: dict[str, list[str]], rng: np.random.Generator) -> dict[str, list[str]]:
    """An equal value as another object, its keys sometimes in another order (another JSON text, same buckets)."""
    keys = list(value)
    if rng.random() < 0.3:
        keys.reverse()
    return {k: list(value[k]) for k in keys}


@pytest.mark.parametrize("seed", range(4))
def test_columns_of_records_give_the_per_unit_loops_figures(seed: int) -> None:
    """Records whose buckets repeat (copies, reordered keys), a trait name defined two ways (other metrics, other
    repeated_extraction), units without LLM buckets, humans who keep, change or never check the LLM's buckets."""
    rng = np.random.default_rng(seed)
    defs = [_trait("facts", ["precision", "recall", "f1"], True), _trait("facts", ["f1", "accuracy"], False),
            _trait("tone", ["precision", "specificity", "accuracy", "recall", "f1"], True),
            _trait("legal", ["recall"], False)]
    llm_pool, human_pool = _pool(rng, 6), _pool(rng, 5)
    records, labels = [], {}
    for s in range(400):
        traits = tuple({t["name"]: t for t in (defs[i] for i in rng.permutation(4)[:int(rng.integers(1, 4))])}.values())
        buckets = {t["name"]: _copy(llm_pool[int(rng.integers(len(llm_pool)))], rng) for t in traits
                   if rng.random() < 0.9}
        records.append(RubricSample(f"s{s}", "q", "r", traits, buckets))
        for t in traits:
            r = rng.random()
            if r < 0.3 and t["name"] in buckets:
                labels[(f"s{s}", t["name"])] = {"buckets": _copy(buckets[t["name"]], rng), "status": "accepted"}
            elif r < 0.6:
                labels[(f"s{s}", t["name"])] = {"buckets": _copy(human_pool[int(rng.integers(5))], rng)}
            elif r < 0.65:
                labels[(f"s{s}", t["name"])] = {"status": "skipped"}
    want = _old_data(records, labels)
    assert any(v["agreement"] for v in want.values()) and len(want) == 3
    assert repr(evaluate_report(records, labels, {}).data) == repr(want)
    assert repr(evaluate_report(rubric_columns(records), labels, {}).data) == repr(want)


def test_no_units_and_no_human_give_what_the_loop_gives() -> None:
    records = [RubricSample("a", "q", "r", (_trait("t", ["recall"], True),), {})]
    assert evaluate_report(records, {}, {}).data == _old_data(records, {}) == {}
    records = [RubricSample("a", "q", "r", (_trait("t", ["recall"], True),), {"t": {"tp": ["x"]}})]
    assert repr(evaluate_report(records, {}, {}).data) == repr(_old_data(records, {}))
    assert evaluate_report(records, {}, {}).data["t"]["agreement"] is None


def test_a_malformed_bucket_raises_as_the_loop_did() -> None:
    from calibration.schemes.rubric.buckets import BucketError

    records = [RubricSample("a", "q", "r", (_trait("t", ["recall"], True),), {"t": {"tp": ["x"]}}),
               RubricSample("b", "q", "r", (_trait("t", ["recall"], True),), {"t": {"tp": ["x", 3]}})]
    with pytest.raises(BucketError) as new:
        evaluate_report(records, {}, {})
    with pytest.raises(BucketError) as old:
        _old_data(records, {})
    assert str(new.value) == str(old.value)


def test_the_stores_columns_give_the_loops_figures_on_its_records(tmp_path: Path, monkeypatch: Any) -> None:
    """A project: units whose newest machine label replaced the imported one (later, or on a tie of timestamps the
    later row), a failed run (no value), samples in import order; resolved labels of two annotators. The store's
    columns give the per-unit loop's figures over the records load_records reads."""
    import app.store.samples as samples_module
    from app.io.imports import import_file
    from app.io.labels import import_labels
    from app.schemes.rubric.store import load_records, store_of
    from app.store import Project
    from tests.jsonl_files import write_jsonl

    rng = np.random.default_rng(7)
    defs = [_trait("facts", ["precision", "recall", "f1"], True), _trait("tone", ["f1", "accuracy"], False)]
    pool = _pool(rng, 4)
    lines = []
    for s in rng.permutation(60):  # import order is not id order
        traits = [defs[i] for i in rng.permutation(2)[:int(rng.integers(1, 3))]]
        lines.append({"id": f"q{s:02d}", "question": "?", "response": "r", "traits": traits,
                      "buckets": {t["name"]: pool[int(rng.integers(4))] for t in traits if rng.random() < 0.8}})
    project = Project.create(tmp_path / "r.concord")
    try:
        import_file(project, write_jsonl(tmp_path / "r.jsonl", lines))
        store = store_of(project)
        for line in lines[:40]:
            for t in line["traits"]:
                r = rng.random()
                if r < 0.3:
                    store.save_bucket_assignment(line["id"], t["name"], "llm-a", pool[int(rng.integers(4))])
                elif r < 0.5:  # two runs in the same millisecond: the later row is the newest
                    monkeypatch.setattr(samples_module, "now", lambda: "2030-01-01T00:00:00.000+00:00")
                    first, then = rng.permutation(4)[:2]  # the later row's source is named after the earlier's
                    store.save_bucket_assignment(line["id"], t["name"], "llm-a", pool[first])
                    store.save_bucket_assignment(line["id"], t["name"], "llm-b", pool[then])
                    monkeypatch.undo()
                elif r < 0.6:
                    store.save_bucket_assignment(line["id"], t["name"], "llm-c", None, error="timeout")
        decisions = [{"sample": line["id"], "trait": t["name"], "annotator": who, "buckets": pool[int(rng.integers(4))]}
                     for line in lines for t in line["traits"] for who in ("ana", "ben") if rng.random() < 0.5]
        import_labels(project, write_jsonl(tmp_path / "d.jsonl", decisions))
        labels = project.scheme_data.scheme_labels("rubric")
        want = _old_data(load_records(project), labels)
        assert any(v["agreement"] for v in want.values())
        assert repr(evaluate_report(store.evaluation_columns(), labels, {}).data) == repr(want)
    finally:
        project.close()


def test_the_records_read_after_the_labels_keep_them(tmp_path: Path, monkeypatch: Any) -> None:
    """`concord evaluate` without its ceiling worker: the rubric hook reads its columns and the resolved labels, the
    human ceiling then the records and the labels again; within `records_once` the labels are read once (reading the
    records emptied the memo: the labels were read twice, 1.4 s at 100k), and a write reads both again."""
    from app.io.imports import import_file
    from app.store import Project
    from app.store.samples import SchemeDataPart
    from tests.jsonl_files import write_jsonl

    reads: list[str] = []
    def counted(name: str) -> Any:
        real = getattr(SchemeDataPart, name)

        def read(self: Any, *args: Any) -> Any:
            reads.append(name)
            return real(self, *args)
        return read

    for name in ("_scheme_labels", "_scheme_records"):
        monkeypatch.setattr(SchemeDataPart, name, counted(name))
    trait = _trait("t", ["recall"], True)
    lines = [{"id": f"q{i}", "question": "?", "response": "r", "traits": [trait], "buckets": {"t": {"tp": ["x"]}}}
             for i in range(3)]
    project = Project.create(tmp_path / "m.concord")
    try:
        import_file(project, write_jsonl(tmp_path / "m.jsonl", lines))
        data = project.scheme_data
        with data.records_once():
            first = data.scheme_labels("rubric")
            data.scheme_records("rubric")
            assert data.scheme_labels("rubric") == first and reads == ["_scheme_labels", "_scheme_records"]
            project.store("rubric").save_bucket_assignment("q0", "t", "llm", {"tp": ["y"]})
            data.scheme_records("rubric")
            data.scheme_labels("rubric")
            assert reads == ["_scheme_labels", "_scheme_records", "_scheme_records", "_scheme_labels"]
    finally:
        project.close()
