"""Round trip: a split imported into a new project (import_file + import_labels) exports to identical data files."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from app import corrections
from app.schemes.violations.corrections import set_matches
from app.io.export import export_split
from app.io.imports import import_file
from app.io.labels import import_labels
from app.store import Project
from calibration.schemes.violations.records import Violation, ViolationSample
from tests.test_export_split import CAREFUL, NAIVE, build_project, data_files


def import_split(split_dir: Path, target: Path) -> Project:
    """Load a split the documented way: data files first, then the human decisions."""
    project = Project.create(target)
    fmt = json.loads((split_dir / "manifest.json").read_text())["format"]
    for name in ("violations", "rubric"):
        if (split_dir / f"{name}.{fmt}").exists():
            import_file(project, split_dir / f"{name}.{fmt}")
    import_labels(project, split_dir / f"labels.{fmt}")
    return project


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Project:
    p = build_project(tmp_path_factory.mktemp("src") / "src.concord")
    # harder cases: an ungrounded quote, a case-insensitive quote, a checker flagging one violation twice,
    # two checkers marking the same missing violation, and a unit accepted without any matches
    text = "Act fast: the cheapest offer ever, act fast!"
    s = ViolationSample(
        "hard", text, (Violation("No superlatives", text.index("cheapest"), text.index("cheapest") + 8, "Cheapest",
                                 "brand"),),
        {NAIVE: (Violation("Urgency", None, None, "limited time only"),
                 Violation("Urgency", 0, 8, "Act fast", "pressure"), Violation("Urgency", 0, 8, "Act fast", "pressure")),
         CAREFUL: (Violation("Urgency", 0, 8, "Act fast", "pressure"),
                   Violation("No superlatives", text.index("cheapest"), text.index("cheapest") + 8, None, "brand"))},
        split="test")
    p.store("violations").write_violation_samples([s], metas={"hard": {"n": 1, "tags": ["a", "b"]}})
    set_matches("hard", NAIVE, [], "corrected", "x").apply(p, "dave")
    p.decisions.record("dave", [corrections.Change("hard", NAIVE, "missing_gt", [1, 2])])
    set_matches("hard", CAREFUL, [(0, 1)], "corrected", "x").apply(p, "erin")
    p.decisions.record("erin", [corrections.Change("hard", CAREFUL, "missing_gt", [0])])
    return p


@pytest.mark.parametrize("fmt, statuses", [("jsonl", ("accepted", "corrected")), ("csv", ("accepted", "corrected")),
                                           ("parquet", ("accepted", "corrected")), ("jsonl", None)])
def test_split_round_trips(source: Project, tmp_path: Path, fmt: str, statuses: tuple[str, ...] | None) -> None:
    name = f"rt_{fmt}_{'any' if statuses is None else 'default'}"  # the source project is shared by the cases
    first = export_split(source, name, "1.0.0", tmp_path / "a", fmt=fmt, statuses=statuses)
    again = import_split(first.path, tmp_path / "imported.concord")
    second = export_split(again, name, "1.0.0", tmp_path / "b", fmt=fmt, statuses=statuses)
    assert set(data_files(first.path)) == {f"violations.{fmt}", f"labels.{fmt}", f"rubric.{fmt}"}
    assert data_files(second.path) == data_files(first.path)
    assert second.content_sha256 == first.content_sha256
    assert second.counts["samples"] == first.counts["samples"]
    # the imported project holds no gt_wrong/missing_gt marks: the curated GT is now plain ground truth
    assert second.counts["ground_truth"]["added_missing_gt"] == 0 and second.counts["ground_truth"]["dropped_gt_wrong"] == 0
    again.close()


def test_hard_cases_are_curated_consistently(source: Project, tmp_path: Path) -> None:
    res = export_split(source, "hard", "1.0.0", tmp_path)
    rec = next(json.loads(line) for line in (res.path / "violations.jsonl").read_text().splitlines()
               if json.loads(line)["id"] == "hard")
    labels = {(r["sample"], r["checker"]): r["matches"] for r in map(json.loads, (res.path / "labels.jsonl").read_text().splitlines())
              if r["sample"] == "hard"}
    # GT: the original (its quote differs in case, so only the span is kept) plus one "Act fast" violation,
    # added once although naive flagged it twice and careful flagged it too
    cheapest = rec["text"].index("cheapest")
    assert [(v["start"], v["end"], v["quote"]) for v in rec["ground_truth"]] == [
        (cheapest, cheapest + 8, None), (0, 8, "Act fast")]
    assert labels[("hard", NAIVE)] == [[1, 1]]  # the duplicate prediction stays unmatched (one-to-one)
    assert labels[("hard", CAREFUL)] == [[0, 1], [1, 0]]
    assert rec["predictions"][NAIVE][0] == {"start": None, "end": None, "quote": "limited time only", "rule": "Urgency",
                                            "category": None, "explanation": None, "correction": None}
    assert rec["meta"] == {"n": 1, "tags": ["a", "b"]}
    assert res.counts["ground_truth"]["ignored_missing_gt"] == 1
