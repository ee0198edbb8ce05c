"""Agreement reads the violations samples' counts from SQL, not whole samples (issue #28): `label_items` of the
counted records equals that of the full records for every sample and checker, curated ground truth included."""
from __future__ import annotations

from pathlib import Path

from app.store import Change, Project
from calibration.schemes.base import registry
from calibration.schemes.violations import Violation, ViolationSample

TEXT = "The cat sat on the mat. It was red and tall."


def test_counted_records_give_the_items_of_full_records(tmp_path: Path) -> None:
    v = (Violation("r", 4, 7), Violation("q", 24, 26), Violation("q", 30, 33))
    rows = [ViolationSample("s0", TEXT, v[:2], {"c1@1|m": v, "c2@1|m": v[:1]}),
            ViolationSample("s1", TEXT, v, {"c1@1|m": v[:2], "c2@1|m": ()}),
            ViolationSample("s2", TEXT, (), {"c1@1|m": v[:1]}),
            ViolationSample("s3", TEXT, v[:1], {"c1@1|m": v[:1], "c2@1|m": v[:1]})]
    with Project.create(tmp_path / "p.concord") as p:
        p.store("violations").write_violation_samples(rows)
        # a curated ground truth of s1 (one violation instead of three): match indices then refer to it
        p.decisions.record("ana", [Change("s1", "", "ground_truth", [{"rule": "r", "start": 4, "end": 7}])])
        scheme = registry().get("violations")
        full = {scheme.record_id(r): r for r in p.scheme_data.scheme_records("violations")}
        counted = p.scheme_data.scheme_item_records("violations")
        assert counted.keys() == full.keys()
        # counted, not built: the store adapter's hook answered (a silent fallback to full records would pass the rest)
        assert all(not hasattr(r.sample, "text") for r in counted.values())
        matches = [[0, 0], [1, 1], [2, 0]]
        for sid, record in full.items():
            for unit in ("c1@1|m", "c2@1|m", "absent@1|m"):
                labels = {"matches": matches}
                assert scheme.label_items(counted[sid], unit, labels) == scheme.label_items(record, unit, labels)
        assert len(full["s1"].sample.ground_truth) == len(counted["s1"].sample.ground_truth) == 1


def test_records_once_parses_once_until_the_project_changes(tmp_path: Path) -> None:
    """`evaluate` reads a scheme's records for its report and again for the human ceiling: within `records_once`
    the second read is the first's records, and a write in between makes it read them again."""
    v = (Violation("r", 4, 7),)
    with Project.create(tmp_path / "p.concord") as p:
        p.store("violations").write_violation_samples([ViolationSample("s0", TEXT, v, {"c1@1|m": v})])
        with p.scheme_data.records_once():
            first = p.scheme_data.scheme_records("violations")
            again = p.scheme_data.scheme_records("violations")
            assert again == first and again[0] is first[0]
            p.store("violations").write_violation_samples([ViolationSample("s1", TEXT, v, {"c1@1|m": v})])
            assert [r.sample.id for r in p.scheme_data.scheme_records("violations")] == ["s0", "s1"]
        assert p.scheme_data.scheme_records("violations")[0] is not first[0]  # outside: read each time


def test_release_format_rows_are_told_apart_as_before() -> None:
    from calibration.schemes.trace.ragbench import _COLUMN_PATH, is_ragbench_row

    judge = next(iter(_COLUMN_PATH))
    base = {"documents_sentences": [], "all_relevant_sentence_keys": []}
    assert not is_ragbench_row(base) and is_ragbench_row({**base, judge: 0.5})
    assert not is_ragbench_row({"documents_sentences": [], judge: 0.5})
    from types import MappingProxyType  # a Mapping that is no dict: the same answers

    assert is_ragbench_row(MappingProxyType({**base, judge: 0.5})) and not is_ragbench_row(MappingProxyType(base))


def test_trace_document_keys_are_each_documents_keys_joined() -> None:
    """`_document_keys` (one loop) gives what `_keys` per document, joined, gave: None when any is malformed."""
    import random

    from app.schemes.trace.store import _document_keys, _keys

    def reference(docs):  # type: ignore[no-untyped-def]
        per_doc = [_keys(d) for d in docs] if isinstance(docs, list) else [None]
        return None if any(k is None for k in per_doc) else [k for keys in per_doc for k in keys]

    rng = random.Random(1)
    odd = [["0a"], ["0a", "s", "t"], ("0a", "s"), ["", "s"], [1, "s"], ["0a", None], "0a", None, {"0a": "s"}]
    cases: list = [None, "x", {}, [], [[]], [[], []], ([["0a", "s"]],)]
    for _ in range(400):
        docs: list = [[[f"{d}{c}", f"sentence {c}"] for c in "abc"[:rng.randrange(4)]] for d in range(rng.randrange(4))]
        if docs and rng.random() < 0.5:
            d = rng.randrange(len(docs))
            if docs[d] and rng.random() < 0.7:
                docs[d][rng.randrange(len(docs[d]))] = rng.choice(odd)
            else:
                docs[d] = rng.choice(odd)
        cases.append(docs)
    assert any(reference(c) is None for c in cases) and any(reference(c) for c in cases)
    for docs in cases:
        assert _document_keys(docs) == reference(docs), docs
