"""Records and label lines may name their scheme; key guessing is only the fallback, and ambiguity is an error."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.io.imports import import_file
from app.io.labels import import_labels
from app.io.problems import ImportErrors
from app.store import Project
from calibration.schemes.base import Parsed, registry

TRAIT = {"name": "t", "metrics": ["recall"], "tp_instructions": ["a"]}


def write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project.create(tmp_path / "p.concord")


def test_records_naming_their_scheme_import_like_guessed_ones(project: Project, tmp_path: Path) -> None:
    path = write(tmp_path / "a.jsonl", [
        {"scheme": "violations", "id": "v", "text": "Buy now", "ground_truth": [], "predictions": {"c@1|m": []}},
        {"scheme": "rubric", "id": "r", "question": "q", "response": "x", "traits": [TRAIT]},
    ])
    report = import_file(project, path)
    assert report.counts["violations"].added == 1 and report.counts["rubric"].added == 1 and not report.warnings
    assert project.samples.sample_schemes(["v", "r"]) == {"v": "violations", "r": "rubric"}


def test_unknown_and_ambiguous_schemes_are_errors(project: Project, tmp_path: Path) -> None:
    path = write(tmp_path / "b.jsonl", [
        {"scheme": "nope", "id": "a", "text": "x"},
        {"id": "b", "text": "x", "question": "q"},  # violations by its text; rubric's detect declines records with text
        {"id": "c"},
    ])
    with pytest.raises(ImportErrors) as exc:
        import_file(project, path)
    msgs = {p.location.number: (p.field, p.message) for p in exc.value.problems}
    assert msgs[1][0] == "scheme" and "unknown scheme 'nope'" in msgs[1][1] and "violations" in msgs[1][1]
    assert "cannot tell the record kind" in msgs[3][1] and 'add "scheme"' in msgs[3][1]
    assert project.units.count_units() == 0


def test_a_record_two_schemes_accept_must_name_one(project: Project, tmp_path: Path) -> None:
    class Echo:  # a plug-in scheme whose detect also accepts violations-like records
        name = "echo"
        def detect(self, raw):  # noqa: ANN001, ANN202
            return "text" in raw
        def parse(self, raw):  # noqa: ANN001, ANN202
            return Parsed(None)
        label_kinds: dict = {}
        required_keys = frozenset({"text"})

    registry().register(Echo())  # type: ignore[arg-type]
    try:
        path = write(tmp_path / "c.jsonl", [{"id": "a", "text": "x", "ground_truth": [], "predictions": {}}])
        with pytest.raises(ImportErrors) as exc:
            import_file(project, path)
        p = exc.value.problems[0]
        assert p.location.number == 1 and "ambiguous" in p.message and 'add "scheme"' in p.message
        assert "'violations'" in p.message and "'echo'" in p.message
        # naming the scheme settles it
        path = write(tmp_path / "d.jsonl", [{"scheme": "violations", "id": "a", "text": "x", "ground_truth": [],
                                             "predictions": {}}])
        assert import_file(project, path).counts["violations"].added == 1
    finally:
        registry().unregister("echo")


def test_label_lines_may_name_their_scheme(project: Project, tmp_path: Path) -> None:
    import_file(project, write(tmp_path / "s.jsonl", [
        {"id": "v", "text": "Buy now", "ground_truth": [{"rule": "r", "start": 0, "end": 3}],
         "predictions": {"c@1|m": [{"rule": "r", "start": 0, "end": 3}]}}]))
    good = write(tmp_path / "l.jsonl", [{"scheme": "violations", "sample": "v", "checker": "c@1|m", "annotator": "ann",
                                         "matches": [[0, 0]]}])
    assert import_labels(project, good).events == 2
    bad = write(tmp_path / "m.jsonl", [{"scheme": "trace", "sample": "v", "annotator": "ann"},
                                       {"sample": "v", "annotator": "ann"}])
    with pytest.raises(ImportErrors) as exc:
        import_labels(project, bad)
    fields = [(p.location.number, p.field) for p in exc.value.problems]
    assert (1, "scheme") in fields and any(n == 2 and 'add "scheme"' in p.message
                                           for p, (n, _) in zip(exc.value.problems, fields))


def test_schemes_round_trip_their_records() -> None:
    reg = registry()
    v = reg.get("violations").parse({"id": 7, "text": "Buy now, best price", "context": "ad",
                                     "ground_truth": [{"rule": "r", "quote": "best price"}],
                                     "predictions": {"c@1|m": [{"rule": "q", "start": 0, "end": 3, "category": "x"}]}})
    assert v.ok
    again = reg.get("violations").parse(reg.get("violations").to_json(v.record))
    assert again.record.sample == v.record.sample and again.record.meta == v.record.meta  # (now placed by offsets)
    assert reg.get("violations").unit_summary(v.record, "c@1|m") == {"n_gt": 1, "n_pred": 1}
    kinds = reg.get("violations").label_kinds
    assert kinds["matches"].validate([[0, 1], [0, 2]])[0].field == "[1][0]"
    assert kinds["status"].validate("maybe") and not kinds["status"].validate("accepted")
    scheme = reg.get("violations")
    labels = scheme.accept({"matches": [[0, 0]]})
    assert labels == {"matches": [[0, 0]], "status": "accepted"}
    assert scheme.metrics(v.record, "c@1|m", labels)["f1"] == 1.0
    assert scheme.label_items(v.record, "c@1|m", labels) == {"0,0": 1}
    assert set(scheme.presets()) == {"std_match", "ha_match"}
    r = reg.get("rubric")
    rec = r.parse({"id": "r", "question": "q", "response": "x y", "traits": [TRAIT], "buckets": {"t": {"tp": ["x"]}}})
    assert rec.ok and r.parse(r.to_json(rec.record)).record == rec.record
    accepted = r.accept(r.machine_label(rec.record, "t"))
    assert accepted["buckets"]["tp"] == ["x"] and r.metrics(rec.record, "t", accepted)["recall"] == 1.0
    bad = r.parse({"id": "r", "question": "q", "response": "x", "traits": [{"name": "t"}]})
    assert not bad.ok and bad.problems[0].field.startswith("traits[0]")


def test_records_of_the_new_schemes_are_not_claimed_by_rubric() -> None:
    """A RAG row (question, documents, response) and an answer check (query, answer, response) each have one owner."""
    from calibration.schemes.base import registry

    trace_row = {"id": "t", "question": "q?", "documents": ["A doc."], "response": "An answer."}
    rgb_row = {"id": "g", "query": "q?", "answer": "x", "docs": [], "response": "x", "task": "noise", "language": "en"}
    assert [s.name for s in registry().detect(trace_row)] == ["trace"]
    assert [s.name for s in registry().detect(rgb_row)] == ["rgb"]
