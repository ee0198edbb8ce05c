"""Sample import from JSONL: all-or-nothing validation, every problem reported, idempotent re-import."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.errors import UsageError
from app.io.imports import import_file
from app.io.problems import ImportErrors
from app.store import Project

TEXT = "Our serum is clinically proven to erase wrinkles forever. Buy now, only 3 left!"
CHECKER = "baseline@1.0.0|gpt-4o-mini"


def span(text: str, quote: str, rule: str = "No absolute claims", **extra: Any) -> dict[str, Any]:
    start = text.index(quote)
    return {"start": start, "end": start + len(quote), "quote": quote, "rule": rule, **extra}


def record(i: int, text: str = TEXT, **over: Any) -> dict[str, Any]:
    rec = {
        "id": f"s{i}",
        "text": text,
        "ground_truth": [span(text, "clinically proven", category="compliance", explanation="unverified",
                              correction="tested"), span(text, "only 3 left", rule="No fake scarcity")],
        "predictions": {CHECKER: [span(text, "erase wrinkles forever"), span(text, "only 3 left", rule="Scarcity")]},
        "split": "train",
    }
    rec.update(over)
    return rec


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    with open(path, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write((row if isinstance(row, str) else json.dumps(row, ensure_ascii=False)) + "\n")
    return path


@pytest.fixture
def project(tmp_path: Path) -> Project:
    p = Project.create(tmp_path / "p.concord")
    yield p
    p.close()


def problems_of(exc: pytest.ExceptionInfo[ImportErrors]) -> list[str]:
    return [str(p) for p in exc.value.problems]


def test_bad_lines_3_and_7_rejected_with_both_reported_and_nothing_written(project: Project, tmp_path: Path) -> None:
    import_file(project, write_jsonl(tmp_path / "first.jsonl", [record(100), record(101)]))
    before = project.table_counts()
    rows: list[Any] = [record(i) for i in range(1, 11)]
    rows[2] = '{"id": "s3", "text": "broken line", '  # line 3: malformed JSON
    bad = record(7)
    bad["predictions"][CHECKER][1] = {"start": 70, "end": 500, "rule": "Scarcity"}  # line 7: span past the end
    rows[6] = bad
    path = write_jsonl(tmp_path / "bad.jsonl", rows)
    with pytest.raises(ImportErrors) as exc:
        import_file(project, path)
    assert exc.value.numbers == [3, 7]
    msgs = problems_of(exc)
    assert msgs[0].startswith(f"{path}:3: invalid JSON")
    assert msgs[1] == (f'{path}:7: predictions["{CHECKER}"][1].end: 500 is past the end of the text '
                       f"(its length is {len(TEXT)} code points)")
    assert isinstance(exc.value, UsageError)
    assert project.table_counts() == before
    assert {s.id for s in project.store("violations").violation_samples()} == {"s100", "s101"}


def test_good_file_twice_leaves_the_same_samples_and_violations(project: Project, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "good.jsonl", [record(i) for i in range(5)])
    first = import_file(project, path)
    facts = first.facts["violations"]
    assert (first.counts["violations"].added, facts.violations, sorted(facts.checkers)) == (5, 20, [CHECKER])
    assert first.changed
    samples, counts, dataset = project.store("violations").violation_samples(), project.table_counts(), project.samples.dataset("good")
    second = import_file(project, path)
    assert not second.changed
    assert (second.counts["violations"].unchanged, second.counts["violations"].added) == (5, 0)
    assert project.store("violations").violation_samples() == samples
    assert project.table_counts() == counts
    assert project.samples.dataset("good") == dataset  # not even the import time moves


def test_stored_sample_equals_the_file(project: Project, tmp_path: Path) -> None:
    rec = record(1, context="Instagram caption", meta={"brand": "Lumen", "n": 3})
    import_file(project, write_jsonl(tmp_path / "one.jsonl", [rec]), dataset="launch")
    s = project.store("violations").violation_sample("s1")
    assert s is not None and s.text == TEXT and s.context == "Instagram caption" and s.split == "train"
    gt0 = s.ground_truth[0]
    assert (gt0.start, gt0.end, gt0.quote, gt0.rule, gt0.category, gt0.explanation, gt0.correction) == (
        TEXT.index("clinically"), TEXT.index("clinically") + 17, "clinically proven", "No absolute claims",
        "compliance", "unverified", "tested")
    assert [v.quote for v in s.predictions[CHECKER]] == ["erase wrinkles forever", "only 3 left"]
    row = project.samples.sample_row("s1")
    assert row is not None and row["meta"] == {"brand": "Lumen", "n": 3}
    assert project.samples.dataset("launch")["n_records"] == 1  # type: ignore[index]
    assert project.store("violations").violation_groundings("s1") == {"": ["offsets", "offsets"], CHECKER: ["offsets", "offsets"]}


def test_changed_record_updates_the_sample(project: Project, tmp_path: Path) -> None:
    import_file(project, write_jsonl(tmp_path / "a.jsonl", [record(1), record(2)]))
    changed = record(2)
    changed["predictions"][CHECKER] = changed["predictions"][CHECKER][:1]
    report = import_file(project, write_jsonl(tmp_path / "a.jsonl", [record(1), changed]))
    assert (report.counts["violations"].unchanged, report.counts["violations"].updated) == (1, 1)
    s2 = project.store("violations").violation_sample("s2")
    assert s2 is not None and len(s2.predictions[CHECKER]) == 1


def test_every_problem_is_reported_with_its_field(project: Project, tmp_path: Path) -> None:
    r1 = record(1)
    r1["ground_truth"][0]["rule"] = "  "
    r1["ground_truth"][1]["start"] = "3"
    r1["predictions"][CHECKER][0]["quote"] = "erase wrinkles"  # disagrees with its offsets
    r2 = record(2)
    del r2["ground_truth"][0]["start"], r2["ground_truth"][0]["end"], r2["ground_truth"][0]["quote"]
    r2["predictions"][CHECKER][1] = {"start": 10, "end": 10, "rule": "x"}
    r3 = record(1)  # duplicate id
    r4 = {"id": "s4", "text": 17, "ground_truth": {}, "split": 3}
    r5 = record(5, predictions={"": [], "odd checker": "nope"}, meta=[1])
    r6 = ["not", "an", "object"]
    path = write_jsonl(tmp_path / "many.jsonl", [r1, r2, r3, r4, r5, r6])
    with pytest.raises(ImportErrors) as exc:
        import_file(project, path)
    got = [(p.location.number, p.field, p.message) for p in exc.value.problems]
    fields = [(n, f) for n, f, _ in got]
    assert fields == [
        (1, "ground_truth[0].rule"), (1, "ground_truth[1].start"), (1, f'predictions["{CHECKER}"][0].quote'),
        (2, "ground_truth[0]"), (2, f'predictions["{CHECKER}"][1].end'),
        (3, "id"),
        (4, "text"), (4, "split"), (4, "ground_truth"), (4, "predictions"),
        (5, "meta"), (5, 'predictions[""]'), (5, 'predictions["odd checker"]'),
        (6, ""),
    ]
    messages = dict(((n, f), m) for n, f, m in got)
    assert messages[(1, "ground_truth[0].rule")] == "must not be empty"
    quote_msg = messages[(1, f'predictions["{CHECKER}"][0].quote')]
    assert "'erase wrinkles' does not match the text at" in quote_msg and "'erase wrinkles forever'" in quote_msg
    assert f"occurs at {TEXT.index('erase')}..{TEXT.index('erase') + 14}" in quote_msg
    assert messages[(2, "ground_truth[0]")] == "needs start and end offsets or a quote"
    assert messages[(2, f'predictions["{CHECKER}"][1].end')] == "must be greater than start (10), got 10"
    assert messages[(3, "id")] == f"duplicate id 's1' (first used at {path}:1)"
    assert messages[(4, "predictions")] == "is required (use {} for none)"
    assert messages[(6, "")] == "expected a JSON object, got array"
    assert project.table_counts()["samples"] == 0


def test_offsets_must_match_the_quote_exactly(project: Project, tmp_path: Path) -> None:
    rec = record(1)
    gt = rec["ground_truth"][0]
    gt["end"] += 1  # the text now includes the following space
    with pytest.raises(ImportErrors) as exc:
        import_file(project, write_jsonl(tmp_path / "ws.jsonl", [rec]))
    (problem,) = exc.value.problems
    assert problem.field == "ground_truth[0].quote"
    assert "differ in leading/trailing whitespace" in problem.message


def test_quotes_without_offsets_are_located_and_ungrounded_ones_kept(project: Project, tmp_path: Path) -> None:
    rec = record(1)
    rec["predictions"][CHECKER] = [
        {"quote": "Buy now", "rule": "No pressure"},  # exact
        {"quote": "CLINICALLY PROVEN", "rule": "No absolute claims"},  # case-insensitive
        {"quote": "erase wrinkels forever", "rule": "No absolute claims"},  # typo: fuzzy
        {"quote": "free shipping worldwide", "rule": "Disclose conditions"},  # not in the text
    ]
    report = import_file(project, write_jsonl(tmp_path / "q.jsonl", [rec]))
    assert report.facts["violations"].grounding == {"offsets": 2, "exact": 1, "casefold": 1, "fuzzy": 1, "ungrounded": 1}
    assert [str(w) for w in report.warnings] == [
        f"{tmp_path / 'q.jsonl'}:1: predictions[\"{CHECKER}\"][3].quote: 'free shipping worldwide' was not found in "
        "the text; kept as ungrounded"]
    preds = project.store("violations").violation_sample("s1").predictions[CHECKER]  # type: ignore[union-attr]
    assert TEXT[preds[0].start:preds[0].end] == "Buy now"
    assert TEXT[preds[1].start:preds[1].end] == "clinically proven"
    assert "wrinkles forever" in TEXT[preds[2].start:preds[2].end]
    assert (preds[3].start, preds[3].end, preds[3].quote) == (None, None, "free shipping worldwide")
    assert project.store("violations").violation_groundings("s1")[CHECKER] == ["exact", "casefold", "fuzzy", "ungrounded"]
    assert project.counts.status_counts()["scheme_counts"]["violations"]["ungrounded_violations"] == 1


def test_odd_checker_names_and_unknown_fields_warn_once(project: Project, tmp_path: Path) -> None:
    rows = [record(i, predictions={"my checker": []}, severity="high") for i in range(3)]
    report = import_file(project, write_jsonl(tmp_path / "w.jsonl", rows))
    assert report.counts["violations"].added == 3
    assert sorted((w.location.number, w.field) for w in report.warnings) == [(1, "predictions[\"my checker\"]"),
                                                                           (1, "severity")]
    assert any("on 3 lines" in w.message for w in report.warnings)


def rubric_record(i: int, **over: Any) -> dict[str, Any]:
    rec = {
        "id": f"q{i}",
        "question": "What does BCL2 do?",
        "response": "BCL2 is an anti-apoptotic gene that helps cells survive; it matters in cancer.",
        "traits": [{"name": "BCL2 coverage", "metrics": ["precision", "recall", "f1"],
                    "tp_instructions": ["Mentions BCL2", "States BCL2 inhibits apoptosis"]}],
        "buckets": {"BCL2 coverage": {"tp": ["BCL2 is an anti-apoptotic gene"], "fn": [], "fp": [], "tn": []}},
    }
    rec.update(over)
    return rec


def test_rubric_records_store_traits_and_llm_buckets(project: Project, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "r.jsonl", [rubric_record(1), rubric_record(2, buckets=None), record(3)])
    report = import_file(project, path)
    assert (report.counts["rubric"].added, report.counts["violations"].added) == (2, 1)
    assert [t["name"] for t in project.store("rubric").traits()] == ["BCL2 coverage"]
    assert project.store("rubric").get_trait("BCL2 coverage")["evaluation_mode"] == "tp_only"  # type: ignore[index]
    got = project.store("rubric").bucket_assignment("q1", "BCL2 coverage", "import")
    assert got is not None and got["buckets"]["tp"] == ["BCL2 is an anti-apoptotic gene"]
    assert project.store("rubric").bucket_assignment("q2", "BCL2 coverage") is None
    assert len(project.store("rubric").rubric_units("BCL2 coverage")) == 2
    again = import_file(project, path)
    assert not again.changed and again.counts["rubric"].unchanged == 2


def test_rubric_problems(project: Project, tmp_path: Path) -> None:
    bad_metric = rubric_record(1)
    bad_metric["traits"][0]["metrics"] = ["recall", "specificity"]
    unknown_bucket = rubric_record(2, buckets={"other": {"tp": []}, "BCL2 coverage": {"tp": [""], "maybe": []}})
    redefined = rubric_record(3)
    redefined["traits"][0]["tp_instructions"] = ["Mentions BCL2"]
    no_traits = rubric_record(4, traits=[])
    path = write_jsonl(tmp_path / "r.jsonl", [bad_metric, unknown_bucket, redefined, no_traits,
                                              {"id": "x", "foo": 1}])
    with pytest.raises(ImportErrors) as exc:
        import_file(project, path)
    got = [(p.location.number, p.field) for p in exc.value.problems]
    assert got == [(1, "traits[0].metrics[1]"), (2, 'buckets["other"]'), (2, 'buckets["BCL2 coverage"].maybe'),
                   (3, "traits[0]"), (4, "traits"), (5, "")]
    msgs = problems_of(exc)
    assert "'specificity' is not available in tp_only mode" in msgs[0]  # Karenina's wording
    assert f"defined differently at {path}:2" in msgs[3]
    assert "cannot tell the record kind" in msgs[5]


def test_trait_must_agree_with_the_project(project: Project, tmp_path: Path) -> None:
    import_file(project, write_jsonl(tmp_path / "a.jsonl", [rubric_record(1)]))
    other = rubric_record(2)
    other["traits"][0]["description"] = "now with a description"
    with pytest.raises(ImportErrors) as exc:
        import_file(project, write_jsonl(tmp_path / "b.jsonl", [other]))
    assert problems_of(exc) == [f"{tmp_path / 'b.jsonl'}:1: traits[0]: trait 'BCL2 coverage' is already defined "
                                "differently in the project"]
    same = import_file(project, write_jsonl(tmp_path / "c.jsonl", [rubric_record(3)]))
    assert same.counts["rubric"].added == 1


def test_an_id_cannot_change_scheme(project: Project, tmp_path: Path) -> None:
    import_file(project, write_jsonl(tmp_path / "a.jsonl", [record(1)]))
    with pytest.raises(ImportErrors) as exc:
        import_file(project, write_jsonl(tmp_path / "b.jsonl", [rubric_record(9, id="s1")]))
    assert problems_of(exc) == [f"{tmp_path / 'b.jsonl'}:1: id: 's1' already exists in the project as a violations sample"]


def test_unusable_files(project: Project, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="holds no records"):
        import_file(project, write_jsonl(tmp_path / "empty.jsonl", ["", "  "]))
    with pytest.raises(UsageError, match="unknown file type '.txt'"):
        import_file(project, tmp_path / "data.txt")
    with pytest.raises(UsageError, match="no such file"):
        import_file(project, tmp_path / "missing.jsonl")
    (tmp_path / "latin1.jsonl").write_bytes(b'{"id": "a", "text": "caf\xe9"}\n')
    with pytest.raises(ImportErrors) as exc:
        import_file(project, tmp_path / "latin1.jsonl")
    assert exc.value.numbers == [1] and "UTF-8" in exc.value.problems[0].message
    (tmp_path / "nan.jsonl").write_text('{"id": "a", "text": "x", "ground_truth": [], "predictions": {}, "meta": {"x": NaN}}\n')
    with pytest.raises(ImportErrors):
        import_file(project, tmp_path / "nan.jsonl")


def test_progress_is_reported_and_cancel_leaves_the_project_unchanged(project: Project, tmp_path: Path) -> None:
    from app.progress import Cancelled

    class Recorder:
        def __init__(self, cancel: bool) -> None:
            self.calls: list[tuple[int, int, str]] = []
            self.cancel = cancel

        def update(self, done: int, total: int, message: str = "") -> None:
            self.calls.append((done, total, message))

        def cancelled(self) -> bool:
            return self.cancel

    path = write_jsonl(tmp_path / "p.jsonl", [record(i) for i in range(3)])
    with pytest.raises(Cancelled):
        import_file(project, path, progress=Recorder(cancel=True))
    assert project.table_counts()["samples"] == 0
    rec = Recorder(cancel=False)
    import_file(project, path, progress=rec)
    # a JSONL file is streamed: progress counts its bytes, validated and written chunk by chunk
    assert rec.calls[-1] == (path.stat().st_size, path.stat().st_size, "importing")
