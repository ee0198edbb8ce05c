"""The JSON Schemas in resources/schema/ accept every valid example and agree with the importer on invalid ones."""
from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from app.io.imports import import_file
from app.io.labels import import_labels
from app.io.problems import ImportErrors
from app.store import Project
from tests.jsonl_files import write_jsonl

SCHEMAS = Path(__file__).resolve().parents[1] / "resources" / "schema"
TEXT = "Save 50% today only! Doctors agree: it cures everything 💊."
CHECKER = "strict@3.1.0|gpt-4o"


def schema(name: str) -> jsonschema.Draft202012Validator:
    s = json.loads((SCHEMAS / name).read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(s)
    return jsonschema.Draft202012Validator(s)


RECORD = schema("import-record.schema.json")
LABEL = schema("label-line.schema.json")


def at(span: str, **kw: Any) -> dict[str, Any]:
    start = TEXT.index(span)
    return {"start": start, "end": start + len(span), **kw}


VALID_RECORDS: list[dict[str, Any]] = [
    {"id": "v1", "text": TEXT, "ground_truth": [], "predictions": {}},
    {"id": 2, "text": TEXT,
     "ground_truth": [at("today only", quote="today only", rule="No fake urgency", category="pressure",
                         explanation="Invented deadline", correction="Save 50% this week")],
     "predictions": {CHECKER: [{"quote": "cures everything", "rule": "No medical claims"},
                               at("Doctors agree", rule="No unverified endorsements", quote=None)],
                     "naive checker": []},
     "context": "newsletter", "split": "train", "meta": {"source": "crm", "score": 0.5}},
    {"id": "v3", "text": TEXT, "ground_truth": [{"start": 0, "end": 4.0, "rule": "r", "start_note": "extra"}],
     "predictions": {CHECKER: [{"start": None, "end": None, "quote": "zzz not there", "rule": "ungrounded is fine"}]},
     "context": None, "split": None, "meta": None, "extra_field": "ignored with a warning"},
    {"id": "r1", "question": "Is it safe?", "response": "It cures everything and has no side effects.",
     "traits": [{"name": "safety claims", "description": None, "evaluation_mode": "full_matrix",
                 "metrics": ["precision", "recall", "f1", "specificity", "accuracy"],
                 "tp_instructions": ["Mentions side effects"], "tn_instructions": ["Claims it cures everything"],
                 "repeated_extraction": False}],
     "buckets": {"safety claims": {"tp": ["no side effects"], "fn": [], "fp": [], "tn": None}}},
    {"id": "r2", "question": "Price?", "response": "50% off.",
     "traits": [{"name": "price", "metrics": ["recall"], "tp_instructions": ["States the discount"],
                 "tn_instructions": None}], "split": "test"},
]

# (record, a fragment of the importer's message); each must be rejected by the schema too.
INVALID_RECORDS: list[tuple[dict[str, Any], str]] = [
    ({"id": "x1", "text": TEXT, "ground_truth": [{"start": 0, "end": 4}], "predictions": {}}, "rule: is required"),
    ({"id": "x2", "text": TEXT, "ground_truth": [{"start": 0, "end": 4, "rule": " "}], "predictions": {}}, "must not be empty"),
    ({"id": "x3", "text": TEXT, "ground_truth": [{"start": "0", "end": 4, "rule": "r"}], "predictions": {}}, "integer"),
    ({"id": "x4", "text": TEXT, "ground_truth": [{"start": -1, "end": 4, "rule": "r"}], "predictions": {}}, ">= 0"),
    ({"id": "x5", "text": TEXT, "ground_truth": [{"rule": "r"}], "predictions": {}}, "needs start and end offsets or a quote"),
    ({"id": "x6", "text": TEXT, "ground_truth": [{"start": 3, "quote": "e 5", "rule": "r"}], "predictions": {}},
     "end: is required when start is given"),
    ({"id": "x7", "text": TEXT, "ground_truth": [], "predictions": {"": []}}, "checker name must not be empty"),
    ({"id": "x8", "text": TEXT, "ground_truth": [], "predictions": {CHECKER: {"quote": "x"}}}, "expected an array"),
    ({"id": "x9", "text": TEXT, "predictions": {}}, "ground_truth: is required"),
    ({"id": "", "text": TEXT, "ground_truth": [], "predictions": {}}, "id: must not be empty"),
    ({"id": "x10", "text": TEXT, "ground_truth": [], "predictions": {}, "meta": "m"}, "meta: expected an object"),
    ({"id": "x11", "text": TEXT, "ground_truth": [{"quote": "", "rule": "r"}], "predictions": {}}, "quote: is empty"),
    ({"id": "x12", "text": TEXT, "ground_truth": [{"quote": "x", "rule": "r", "category": 3}], "predictions": {}},
     "category: expected a string"),
    ({"id": "y1", "question": "q", "response": "r", "traits": []}, "traits: is required"),
    ({"id": "y2", "question": "q", "response": "r",
      "traits": [{"name": "t", "metrics": ["specificity"], "tp_instructions": ["a"]}]}, "not available in tp_only mode"),
    ({"id": "y3", "question": "q", "response": "r",
      "traits": [{"name": "t", "evaluation_mode": "full_matrix", "metrics": ["recall"], "tp_instructions": ["a"]}]},
     "TN instructions must be provided in full_matrix mode"),
    ({"id": "y4", "question": "q", "response": "r",
      "traits": [{"name": "t", "metrics": ["recall"], "tp_instructions": ["a"], "weight": 2}]}, "unknown field"),
    ({"id": "y5", "question": "q", "response": "r",
      "traits": [{"name": "t", "metrics": ["recall"], "tp_instructions": ["a"]}],
      "buckets": {"t": {"tp": ["x"], "maybe": []}}}, "unknown bucket"),
    ({"id": "y7", "question": "q", "response": "r",
      "traits": [{"name": "t", "metrics": ["recall"], "tp_instructions": [""]}]}, "must not be empty"),
    ({"id": "y8", "question": 5, "response": "r",
      "traits": [{"name": "t", "metrics": ["recall"], "tp_instructions": ["a"]}]}, "question: expected a string"),
]


def write(path: Path, rows: list[Any]) -> Path:
    return write_jsonl(path, rows, ensure_ascii=False)  # non-ASCII text as UTF-8, not escapes


@pytest.fixture
def project(tmp_path: Path) -> Project:
    p = Project.create(tmp_path / "s.concord")
    yield p
    p.close()


def test_valid_records_validate_and_import(project: Project, tmp_path: Path) -> None:
    for rec in VALID_RECORDS:
        RECORD.validate(rec)
    report = import_file(project, write(tmp_path / "valid.jsonl", VALID_RECORDS))
    assert (report.counts["violations"].added, report.counts["rubric"].added) == (3, 2)


@pytest.mark.parametrize("rec,fragment", INVALID_RECORDS, ids=[r["id"] or "empty-id" for r, _ in INVALID_RECORDS])
def test_schema_and_importer_reject_the_same_records(project: Project, tmp_path: Path, rec: dict[str, Any],
                                                     fragment: str) -> None:
    assert not RECORD.is_valid(rec)
    with pytest.raises(ImportErrors) as exc:
        import_file(project, write(tmp_path / "bad.jsonl", [rec]))
    assert any(fragment in str(p) for p in exc.value.problems), [str(p) for p in exc.value.problems]


def test_required_fields_are_required_by_both(project: Project, tmp_path: Path) -> None:
    """Dropping any required field of a valid record: the schema and the importer both reject it, on that field."""
    base = copy.deepcopy(VALID_RECORDS[1])
    assert RECORD.is_valid(base)
    for field in ("id", "text", "ground_truth", "predictions"):
        broken = {k: v for k, v in base.items() if k != field}
        assert not RECORD.is_valid(broken), field
        with pytest.raises(ImportErrors) as exc:
            import_file(project, write(tmp_path / "bad.jsonl", [broken]))
        if field == "text":  # without text it is not recognisably a violations record at all
            assert "cannot tell the record kind" in exc.value.problems[0].message
        else:
            assert [p.field for p in exc.value.problems] == [field]


VALID_LABELS = [
    {"sample": "v2", "checker": CHECKER, "annotator": "ana", "matches": [[0, 0]]},
    {"sample": "v2", "checker": CHECKER, "annotator": "ben", "matches": []},
    {"sample": "r1", "trait": "safety claims", "annotator": "ana",
     "buckets": {"tp": ["no side effects"], "fn": ["Mentions side effects"], "fp": [], "tn": []}},
]
INVALID_LABELS: list[tuple[dict[str, Any], str]] = [
    ({"sample": "v2", "checker": CHECKER, "annotator": "ana", "matches": [[0]]}, "expected a pair"),
    ({"sample": "v2", "checker": CHECKER, "annotator": "ana", "matches": [[0, -1]]}, "out of range"),
    ({"sample": "v2", "checker": CHECKER, "annotator": "", "matches": []}, "annotator: must not be empty"),
    ({"sample": "v2", "checker": CHECKER, "matches": []}, "annotator: is required"),
    ({"sample": "v2", "checker": CHECKER, "annotator": "ana"}, "matches: is required"),
    ({"sample": "r1", "trait": "safety claims", "annotator": "ana", "buckets": {"yes": []}}, "unknown bucket"),
    ({"sample": "r1", "trait": "safety claims", "checker": CHECKER, "annotator": "ana", "buckets": {}}, "either"),
]


def test_label_lines_schema_agrees_with_the_importer(project: Project, tmp_path: Path) -> None:
    import_file(project, write(tmp_path / "valid.jsonl", [dict(VALID_RECORDS[1], id="v2"), VALID_RECORDS[3]]))
    for line in VALID_LABELS:
        LABEL.validate(line)
    report = import_labels(project, write(tmp_path / "labels.jsonl", VALID_LABELS))
    assert report.applied == 3
    for line, fragment in INVALID_LABELS:
        assert not LABEL.is_valid(line), line
        with pytest.raises(ImportErrors) as exc:
            import_labels(project, write(tmp_path / "bad.jsonl", [line]))
        assert any(fragment in str(p) for p in exc.value.problems), (line, [str(p) for p in exc.value.problems])


def documented_blocks() -> list[str]:
    """```json blocks of the "Data formats" section (docs/formats.md, or README.md once it is merged there)."""
    root = SCHEMAS.parents[1]
    for doc in (root / "docs" / "formats.md", root / "README.md"):
        if doc.is_file() and "## Data formats" in (text := doc.read_text(encoding="utf-8")):
            section = text.split("## Data formats", 1)[1].split("\n## ", 1)[0]
            return [b.split("```", 1)[0] for b in section.split("```json\n")[1:]]
    raise AssertionError("no 'Data formats' section found")


def test_documented_examples_validate_and_import(project: Project, tmp_path: Path) -> None:
    blocks = documented_blocks()
    assert len(blocks) == 3
    records = [json.loads(blocks[0]), json.loads(blocks[1])]
    for rec in records:
        RECORD.validate(rec)
    report = import_file(project, write(tmp_path / "doc.jsonl", records))
    assert report.facts["violations"].grounding == {"offsets": 1, "exact": 3}
    labels = [json.loads(line) for line in blocks[2].replace("\n ", " ").splitlines() if line.strip()]
    for line in labels:
        LABEL.validate(line)
    import_file(project, write(tmp_path / "doc2.jsonl", [dict(records[0], id="ad-018")]))  # the 2nd line's sample
    assert import_labels(project, write(tmp_path / "doc-labels.jsonl", labels)).applied == 3
