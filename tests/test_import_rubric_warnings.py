"""Issue #19 (Karenina compatibility): `concord import` keeps rubric records with an empty excerpt or a metric named
twice, and reports both as warnings, counted in the import summary (not silently, not as errors)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from app.io.imports import import_file
from app.store import Project
from tests.jsonl_files import write_jsonl as write


def rubric_record(i: int, metrics: list[str], tp: list[str]) -> dict[str, Any]:
    return {
        "id": f"q{i}",
        "question": "What does BCL2 do?",
        "response": "BCL2 is an anti-apoptotic gene that helps cells survive.",
        "traits": [{"name": "BCL2 coverage", "metrics": metrics, "tp_instructions": ["Mentions BCL2"]}],
        "buckets": {"BCL2 coverage": {"tp": tp, "fn": [], "fp": [], "tn": []}},
    }




@pytest.fixture
def rows() -> list[dict[str, Any]]:
    twice = ["precision", "recall", "recall"]
    return [rubric_record(1, twice, ["BCL2 is an anti-apoptotic gene", "  "]),
            rubric_record(2, twice, ["BCL2 is an anti-apoptotic gene"]),
            rubric_record(3, twice, ["", "\n", "BCL2 is an anti-apoptotic gene"])]


def test_empty_excerpts_and_repeated_metrics_are_warnings_counted_in_the_summary(tmp_path: Path,
                                                                                 rows: list[dict[str, Any]]) -> None:
    with Project.create(tmp_path / "p.concord") as project:
        report = import_file(project, write(tmp_path / "r.jsonl", rows))
        assert report.counts["rubric"].added == 3
        # one warning per field, with how many lines had it (a slip repeated on every record is one line)
        got = sorted((w.location.number, w.field, w.code, w.count) for w in report.warnings)
        assert got == [(1, 'buckets["BCL2 coverage"].tp[1]', "empty_dropped", 2),
                       (1, "traits[0].metrics[2]", "repeated", 3),
                       (3, 'buckets["BCL2 coverage"].tp[0]', "empty_dropped", 1)]
        repeated = next(w for w in report.warnings if w.code == "repeated")
        assert "'recall' is named more than once" in repeated.message and "on 3 lines" in repeated.message
        assert report.warning_counts() == {"empty_dropped": 3, "repeated": 3}
        summary = report.summary()
        assert "3 warning(s)" in summary and "3 empty or whitespace-only excerpts dropped" in summary
        assert "3 repeated metrics counted once" in summary
        # the excerpts were dropped, the rest kept; the metric is counted once
        assert project.store("rubric").bucket_assignment("q3", "BCL2 coverage", "import")["buckets"]["tp"] == [  # type: ignore[index]
            "BCL2 is an anti-apoptotic gene"]
        assert project.store("rubric").get_trait("BCL2 coverage")["metrics"] == ["precision", "recall"]  # type: ignore[index]


def test_cli_import_prints_the_warnings_and_the_count(tmp_path: Path, rows: list[dict[str, Any]],
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    project = tmp_path / "p.concord"
    assert main(["init", str(project)]) == 0
    capsys.readouterr()
    assert main(["import", str(project), str(write(tmp_path / "r.jsonl", rows))]) == 0
    out, err = capsys.readouterr()
    assert "warning:" in err and "tp[1]: empty or whitespace-only excerpt dropped" in err
    assert "traits[0].metrics[2]: metric 'recall' is named more than once" in err
    assert "3 warning(s)" in out and "3 empty or whitespace-only excerpts dropped" in out
