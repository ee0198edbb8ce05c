"""Label Studio in and out through the real CLI (issue #27 item 9): `concord import P export.json` reads a Label Studio
JSON export (span labels -> each annotator's violations ground truth, choices -> judge labels, predictions ->
checkers or judges), `concord export P --format labelstudio --out tasks.json` writes them back, and importing that
file into a fresh project gives the same labels and records. Files are written here, in Label Studio's shape."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from app.store import Project
from calibration.schemes.base import get

TEXT = "Our serum is clinically proven to erase wrinkles 🌟 forever. Buy now, only 3 left!"


def _span(text: str, quote: str, labels: list[str], *, utf16: bool = False, control: str = "label") -> dict[str, Any]:
    start = text.index(quote)
    if utf16:  # what Label Studio wrote before 2022: JavaScript string indices
        start = len(text[:start].encode("utf-16-le")) // 2
    return {"from_name": control, "to_name": "review", "type": "labels",
            "value": {"start": start, "end": start + len(quote), "text": quote, "labels": labels}}


def _choice(choice: str) -> dict[str, Any]:
    return {"from_name": "verdict", "to_name": "summary", "type": "choices", "value": {"choices": [choice]}}


def _spans_export() -> list[dict[str, Any]]:
    """Two tasks, three annotators (an email object, a numeric id, a cancelled one), a checker's predictions."""
    return [
        {"id": 41, "project": 3, "data": {"source": "instagram", "review": TEXT, "market": "DE"},
         "annotations": [
             {"id": 1, "completed_by": {"id": 1, "email": "ana@example.com", "first_name": ""}, "was_cancelled": False,
              "result": [_span(TEXT, "clinically proven", ["Claim"]), _span(TEXT, "only 3 left", ["Scarcity"])]},
             {"id": 2, "completed_by": 7, "lead_time": 4.2,
              "result": [_span(TEXT, "only 3 left", ["Scarcity", "Urgency"], utf16=True),
                         {"from_name": "mood", "to_name": "review", "type": "rating", "value": {"rating": 4}}]},
             {"id": 3, "completed_by": 9, "was_cancelled": True, "result": []}],
         "predictions": [{"model_version": "baseline@1.0.0|gpt-4o-mini", "score": 0.8,
                          "result": [_span(TEXT, "erase wrinkles 🌟", ["Claim"])]}]},
        {"id": 42, "project": 3, "data": {"source": "web", "review": "A calm, honest ad."},
         "annotations": [{"completed_by": 7, "result": []}], "predictions": []},
    ]


def _judge_export() -> list[dict[str, Any]]:
    return [
        {"id": 1, "data": {"summary": "The council approved 40 homes.", "article": "It approved 14 homes."},
         "annotations": [{"completed_by": 3, "result": [_choice("Hallucinated")]},
                         {"completed_by": {"email": "bo@example.org"}, "result": [_choice("Faithful")]}],
         "predictions": [{"model_version": "hhem-2.1", "score": 0.9, "result": [_choice("Faithful")]},
                         {"model_version": "gpt-4o", "result": [_choice("Hallucinated")]}]},
        {"id": 2, "data": {"summary": "It rained on Monday.", "article": "Monday was wet."},
         "annotations": [{"completed_by": 3, "result": [_choice("Faithful")]}],
         "predictions": [{"model_version": "hhem-2.1", "score": 0.7, "result": [_choice("Hallucinated")]}]},
    ]


def _write(path: Path, tasks: Any) -> Path:
    path.write_text(json.dumps(tasks, ensure_ascii=False), encoding="utf-8")
    return path


def _new(path: Path) -> Path:
    Project.create(path).close()
    return path


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _state(project: Path, scheme: str) -> tuple[list[Any], list[dict[str, Any]]]:
    """Every annotator's labels and the records (as import reads them) of a scheme."""
    with Project.open(project) as p:
        labels = [row for row in p.decisions.annotator_label_rows() if row[0] == scheme]
        records = [get(scheme).to_json(r) for r in p.scheme_data.scheme_records(scheme)]
    return labels, records


def test_span_labels_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = _new(tmp_path / "a.concord")
    src = _write(tmp_path / "project-3-at-2026.json", _spans_export())
    assert main(["import", str(first), str(src), "--text-field", "review"]) == 0  # (`source` comes first)
    captured = capsys.readouterr()
    assert "violations samples: 2 added" in captured.out and "decisions by 2 annotator(s)" in captured.out
    assert "'rating' ignored" in captured.err  # other result types are named, not silently dropped
    labels, records = _state(first, "violations")
    got = {(sid, who): value for _, sid, unit, kind, who, value in labels if kind == "ground_truth"}
    # the cancelled annotation is no label; ids name Label Studio's project and task
    assert set(got) == {("p3-task-41", "ana@example.com"), ("p3-task-41", "user-7"), ("p3-task-42", "user-7")}
    start = TEXT.index("only 3 left")  # the UTF-16 offsets (after the emoji) are read as code points
    assert [(v["start"], v["end"], v["rule"]) for v in got[("p3-task-41", "user-7")]] == [
        (start, start + 11, "Scarcity|Urgency")]
    assert [TEXT[v["start"]:v["end"]] for v in got[("p3-task-41", "ana@example.com")]] == [
        "clinically proven", "only 3 left"]
    assert got[("p3-task-42", "user-7")] == []  # an empty result says "no violations"
    by_id = {r["id"]: r for r in records}
    assert by_id["p3-task-41"]["text"] == TEXT
    assert [v["quote"] for v in by_id["p3-task-41"]["predictions"]["baseline@1.0.0|gpt-4o-mini"]] == [
        "erase wrinkles 🌟"]

    out = tmp_path / "tasks.json"
    assert main(["export", str(first), "--format", "labelstudio", "--out", str(out)]) == 0
    assert "2 Label Studio tasks" in capsys.readouterr().out
    tasks = json.loads(out.read_text(encoding="utf-8"))
    task = tasks[0]
    assert task["id"] == 41 and task["data"] == {"review": TEXT, "source": "instagram", "market": "DE",
                                                 "concord_id": "p3-task-41"}
    by_user = {json.dumps(a["completed_by"]): a["result"] for a in task["annotations"]}
    assert set(by_user) == {'{"email": "ana@example.com"}', "7"}
    assert by_user["7"] == [{"from_name": "label", "to_name": "review", "type": "labels", "value": {
        "start": start, "end": start + 11, "text": "only 3 left", "labels": ["Scarcity", "Urgency"]}}]
    assert task["predictions"][0]["model_version"] == "baseline@1.0.0|gpt-4o-mini"
    assert task["predictions"][0]["score"] == 0.8

    second = _new(tmp_path / "b.concord")
    assert main(["import", str(second), str(out)]) == 0  # the export put the text field first: no --text-field
    assert _state(second, "violations") == (labels, records)
    capsys.readouterr()
    assert main(["import", str(second), str(out)]) == 0  # importing it again changes nothing
    assert "nothing changed" in capsys.readouterr().out
    again = tmp_path / "again.json"
    assert main(["export", str(second), "--format", "labelstudio", "--out", str(again)]) == 0
    assert again.read_bytes() == out.read_bytes()  # deterministic


def test_choices_round_trip_as_judge_samples(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = _new(tmp_path / "a.concord")
    src = _write(tmp_path / "verdicts.json", _judge_export())
    assert main(["import", str(first), str(src), "--levels", "Faithful,Hallucinated"]) == 0
    assert "judge samples: 2 added" in capsys.readouterr().out
    labels, records = _state(first, "judge")
    assert sorted((sid, who, value) for _, sid, _, kind, who, value in labels if kind == "label") == [
        ("task-1", "bo@example.org", "Faithful"), ("task-1", "user-3", "Hallucinated"), ("task-2", "user-3", "Faithful")]
    one, two = records
    assert one["levels"] == ["Faithful", "Hallucinated"] and one["text"] == "The council approved 40 homes."
    # a judge's score is P(positive): the prediction's score when it chose the positive level, else 1 - score
    assert one["judges"]["hhem-2.1"]["score"] == pytest.approx(0.1) and two["judges"]["hhem-2.1"]["score"] == 0.7
    assert one["judges"]["gpt-4o"]["score"] == 1.0 and one["judges"]["gpt-4o"]["label"] == "Hallucinated"

    out = tmp_path / "tasks.json"
    assert main(["export", str(first), "--format", "labelstudio", "--out", str(out)]) == 0
    tasks = json.loads(out.read_text(encoding="utf-8"))
    assert tasks[0]["meta"] == {"concord_levels": ["Faithful", "Hallucinated"]}
    assert {p["model_version"]: (p["result"][0]["value"]["choices"], p.get("score"))
            for p in tasks[0]["predictions"]} == {"hhem-2.1": (["Faithful"], 0.9), "gpt-4o": (["Hallucinated"], None)}
    second = _new(tmp_path / "b.concord")
    assert main(["import", str(second), str(out)]) == 0  # no --levels: the export kept their order
    assert "--levels" not in capsys.readouterr().err
    assert _state(second, "judge") == (labels, records)


def test_text_field_and_true_false_choices(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = _new(tmp_path / "p.concord")
    tasks = [{"data": {"question": "Is it safe?", "answer": "Yes, entirely."},
              "annotations": [{"completed_by": 5, "result": [_choice("true")]}]},
             {"data": {"question": "Is it red?", "answer": "No."},  # Label Studio before 1.0 said "completions"
              "completions": [{"completed_by": 5, "result": [_choice("false")]}]}]
    src = _write(tmp_path / "qa.json", tasks)
    assert main(["import", str(project), str(src), "--text-field", "answer"]) == 0
    labels, records = _state(project, "judge")
    assert [r["text"] for r in records] == ["Yes, entirely.", "No."]
    assert [r["id"] for r in records] == ["qa-1", "qa-2"]  # no ids in the file: its name and the task's place
    assert "levels" not in records[0]
    assert [(sid, value) for _, sid, _, kind, _, value in labels if kind == "label"] == [("qa-1", True), ("qa-2", False)]
    other = _new(tmp_path / "q.concord")
    assert main(["import", str(other), str(src)]) == 0  # default: the first string field
    assert [r["text"] for r in _state(other, "judge")[1]] == ["Is it safe?", "Is it red?"]


def _no_annotator(t: list[Any]) -> None:
    t[1]["annotations"].append({"result": []})


def _moved_span(t: list[Any]) -> None:
    t[0]["annotations"][0]["result"][1]["value"]["start"] = 3


def _word_score(t: list[Any]) -> None:
    t[0]["predictions"][0]["score"] = "high"


def _no_text(t: list[Any]) -> None:
    del t[1]["data"]["review"]


def _twice(t: list[Any]) -> None:
    t[1]["annotations"].append({"completed_by": 7, "result": []})


@pytest.mark.parametrize("breaks, where", [
    (_no_annotator, "task 2: annotations[1].completed_by: is required"),
    (_moved_span, "task 1: annotations[0].result[1].value.text: 'only 3 left' is not at 3..80"),
    (_word_score, "task 1: predictions[0].score: expected a finite number"),
    (_no_text, "task 2: data: no field 'review' (--text-field)"),
    (_twice, "task 2: annotations[1].completed_by: a second annotation by 'user-7'"),
])
def test_bad_input_names_file_task_and_field_and_changes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                 breaks: Any, where: str) -> None:
    project = _new(tmp_path / "p.concord")
    before = _sha(project)
    tasks = _spans_export()
    breaks(tasks)
    src = _write(tmp_path / "ls.json", tasks)
    assert main(["import", str(project), str(src), "--text-field", "review"]) == 2
    err = capsys.readouterr().err
    assert f"{src}:{where}" in err and "Traceback" not in err
    assert _sha(project) == before


def test_options_only_for_label_studio_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = _new(tmp_path / "p.concord")
    records = tmp_path / "r.jsonl"
    records.write_text(json.dumps({"id": "a", "text": "x", "ground_truth": [], "predictions": {}}) + "\n")
    assert main(["import", str(project), str(records), "--text-field", "body"]) == 2
    assert "--text-field: only a Label Studio export takes it" in capsys.readouterr().err
    src = _write(tmp_path / "ls.json", _judge_export())
    assert main(["import", str(project), str(src), "--levels", "Faithful,Wrong"]) == 2
    assert "'Hallucinated' is not one of the levels ['Faithful', 'Wrong']" in capsys.readouterr().err
    assert main(["export", str(project), "--format", "labelstudio", "--out", str(tmp_path / "t.json")]) == 2
    assert "no violations or judge samples" in capsys.readouterr().err
    assert main(["export", str(project), "--out", str(tmp_path)]) == 2  # a split still needs its name and version
    assert "--name, --version" in capsys.readouterr().err
