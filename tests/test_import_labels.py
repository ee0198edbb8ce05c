"""Human decisions from a file: validated against the stored samples, recorded as events like app decisions."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.schemes.violations.corrections import link
from app.io.imports import import_file
from app.io.labels import import_labels
from app.io.problems import ImportErrors
from app.store import Project
from tests.jsonl_files import write_jsonl as write

A, B = "naive@1.0|gpt-3.5-turbo", "careful@2.0|gpt-4o"
TEXT = "Best price guaranteed! Our cream removes all wrinkles in 3 days. Order now."


def v(quote: str, rule: str) -> dict[str, Any]:
    s = TEXT.index(quote)
    return {"start": s, "end": s + len(quote), "quote": quote, "rule": rule}




@pytest.fixture
def project(tmp_path: Path) -> Project:
    p = Project.create(tmp_path / "l.concord")
    gt = [v("Best price guaranteed", "No guarantees"), v("removes all wrinkles", "No absolute claims"),
          v("in 3 days", "No unverified timing")]
    samples = [{"id": f"s{i}", "text": TEXT, "ground_truth": gt,
                "predictions": {A: [v("removes all wrinkles", "absolute")],
                                B: [v("in 3 days", "timing"), v("Best price", "guarantee")]}} for i in range(3)]
    rubric = {"id": "q1", "question": "Dosage?", "response": "Take two pills daily with water.",
              "traits": [{"name": "dosage", "metrics": ["recall"], "tp_instructions": ["States the dose"]}],
              "buckets": {"dosage": {"tp": ["two pills"], "fn": [], "fp": []}}}
    import_file(p, write(tmp_path / "samples.jsonl", [*samples, rubric]))
    yield p
    p.close()


def test_decisions_become_accepted_import_events(project: Project, tmp_path: Path) -> None:
    lines = [
        {"sample": "s0", "checker": B, "annotator": "ana", "matches": [[2, 0], [0, 1]]},
        {"sample": "s0", "checker": A, "annotator": "ana", "matches": []},
        {"sample": "q1", "trait": "dosage", "annotator": "ben",
         "buckets": {"tp": ["two pills"], "fn": [], "fp": ["with water"], "tn": []}},
    ]
    report = import_labels(project, write(tmp_path / "d.jsonl", lines))
    assert (report.lines, report.applied, report.unchanged, report.events) == (3, 3, 0, 6)
    assert report.annotators == ["ana", "ben"]
    assert project.store("violations").human_matches() == {("s0", B): {(0, 1), (2, 0)}, ("s0", A): set()}
    assert project.decisions.current("s0", B, "matches") == [[0, 1], [2, 0]]
    assert project.decisions.current("s0", B, "status") == "accepted"
    assert project.store("rubric").human_buckets() == {("q1", "dosage"): {"tp": ["two pills"], "fn": [], "fp": ["with water"], "tn": []}}
    events = project.decisions.events()
    assert {e["origin"] for e in events} == {"import"} and len(events) == 6
    assert {(e["annotator"], e["kind"]) for e in events if e["sample_id"] == "q1"} == {("ben", "buckets"), ("ben", "status")}
    counts = {u["unit"]: u for u in project.counts.status_counts()["units"]}
    assert (counts[B]["labeled"], counts[B]["total"]) == (1, 3)


def test_reimport_changes_nothing_and_keeps_later_app_corrections(project: Project, tmp_path: Path) -> None:
    path = write(tmp_path / "d.jsonl", [{"sample": "s1", "checker": B, "annotator": "ana", "matches": [[2, 0]]}])
    import_labels(project, path)
    counts = project.table_counts()
    again = import_labels(project, path)
    assert (again.applied, again.unchanged, again.events, again.changed) == (0, 1, 0, False)
    assert project.table_counts() == counts
    # ana links another pair in the app; importing the old file again must not undo that.
    link("s1", B, [(2, 0)], (0, 1)).apply(project, "ana")
    import_labels(project, path)
    assert project.decisions.current("s1", B, "matches") == [[0, 1], [2, 0]]
    # A changed file is a new decision.
    changed = import_labels(project, write(tmp_path / "d.jsonl", [{"sample": "s1", "checker": B, "annotator": "ana",
                                                                   "matches": []}]))
    assert changed.applied == 1 and project.decisions.current("s1", B, "matches") == []


def test_bad_index_rejects_the_whole_file(project: Project, tmp_path: Path) -> None:
    before = project.table_counts()
    lines: list[Any] = [
        {"sample": "s0", "checker": B, "annotator": "ana", "matches": [[0, 1]]},  # fine, but not recorded
        {"sample": "s1", "checker": A, "annotator": "ana", "matches": [[3, 0], [1, 1]]},  # gt 3 and pred 1 do not exist
        {"sample": "s2", "checker": B, "annotator": "ana", "matches": [[0, 0], [1, 0]]},  # pred 0 twice
        {"sample": "nope", "checker": B, "annotator": "ana", "matches": []},
        {"sample": "s2", "checker": "other@1|m", "annotator": "ana", "matches": []},
        {"sample": "q1", "checker": A, "annotator": "ana", "matches": []},  # a rubric sample
        {"sample": "q1", "trait": "dosage", "annotator": "ana", "buckets": {"tp": [1]}},
        {"sample": "s0", "checker": B, "annotator": "ana", "matches": [[1, 1]]},  # second decision, same unit
        '{"sample": "s0", ',
    ]
    path = write(tmp_path / "bad.jsonl", lines)
    with pytest.raises(ImportErrors) as exc:
        import_labels(project, path)
    got = [(p.location.number, p.field, p.message) for p in exc.value.problems]
    assert [(n, f) for n, f, _ in got] == [
        (2, "matches[0][0]"), (2, "matches[1][1]"), (3, "matches[1][1]"), (4, "sample"), (5, "checker"),
        (6, "checker"), (7, "buckets.tp[0]"), (8, ""), (9, ""),
    ]
    msgs = [m for _, _, m in got]
    assert msgs[0] == "index 3 is out of range: the sample has 3 ground-truth violations (indices 0..2)"
    assert msgs[1] == "index 1 is out of range: the sample has 1 predicted violation (indices 0..0)"
    assert "already matched in matches[0]" in msgs[2]
    assert msgs[3] == "no sample 'nope' in the project (import the samples first)"
    assert msgs[4] == f"sample 's2' has no checker 'other@1|m'; it has {sorted([A, B])}"
    assert "is a rubric sample" in msgs[5]
    assert msgs[7] == f"a second decision by 'ana' on this checker (first at {path}:1)"
    assert str(exc.value).startswith(f"{path}: 9 problems found, nothing was recorded:")
    assert project.table_counts() == before and project.decisions.events() == []


def test_two_annotators_on_one_unit_are_both_kept(project: Project, tmp_path: Path) -> None:
    lines = [{"sample": "s0", "checker": B, "annotator": "ana", "matches": [[2, 0]]},
             {"sample": "s0", "checker": B, "annotator": "ben", "matches": [[2, 0], [0, 1]]}]
    path = write(tmp_path / "two.jsonl", lines)
    report = import_labels(project, path)
    assert report.applied == 2
    assert {e["annotator"] for e in project.decisions.events("s0") if e["kind"] == "matches"} == {"ana", "ben"}
    assert project.decisions.current("s0", B, "matches") == [[0, 1], [2, 0]]  # the newest decision is the current label
    assert import_labels(project, path).events == 0


def test_csv_decisions(project: Project, tmp_path: Path) -> None:
    import pandas as pd

    pd.DataFrame([{"sample": "s2", "checker": A, "annotator": "cy", "matches": "[[1, 0]]"}]).to_csv(
        tmp_path / "d.csv", index=False)
    report = import_labels(project, tmp_path / "d.csv")
    assert report.applied == 1 and project.decisions.current("s2", A, "matches") == [[1, 0]]
