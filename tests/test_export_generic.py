"""Export of schemes read through the registry (issue #11): the label lines export writes import again (same labels
per annotator in a fresh project), --scheme keeps only the named schemes, --sample/--seed/--stratify draw from
their samples too. Uses the toy `binary` scheme of tests/test_scheme_plugin.py."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.io.export import export_split, preview_split
from app.io.imports import import_file
from app.io.labels import import_labels
from app.store import Change, Project
from tests.test_scheme_plugin import NAME, SCHEME, UNIT, _records, binary  # noqa: F401  (fixture)

CHECKER = "c@1|m"


def _project(tmp_path: Path, with_violations: bool = False) -> tuple[Path, list[dict[str, Any]]]:
    records = _records(30)
    src = tmp_path / "binary.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in records))
    path = tmp_path / "p.concord"
    with Project.create(path) as project:
        import_file(project, src)
        for i, r in enumerate(records):
            project.decisions.record("ana", [Change(r["id"], UNIT, "answer", r["confidence"] >= 0.5),
                                   Change(r["id"], UNIT, "status", "accepted")])
            if i % 3 == 0:  # a second annotator disagrees on a third of them, with a note on some
                changes = [Change(r["id"], UNIT, "answer", r["confidence"] < 0.5)]
                if i % 2 == 0:
                    changes.append(Change(r["id"], UNIT, "note", f"unsure {i}"))
                project.decisions.record("bo", changes)
        if with_violations:
            v = tmp_path / "v.jsonl"
            v.write_text(json.dumps({"scheme": "violations", "id": "v1", "text": "Drink it daily.",
                                     "ground_truth": [], "predictions": {CHECKER: []}}) + "\n")
            import_file(project, v)
            lab = tmp_path / "vl.jsonl"
            lab.write_text(json.dumps({"sample": "v1", "checker": CHECKER, "annotator": "ana", "matches": []}) + "\n")
            import_labels(project, lab)
    return path, records


def _per_annotator(project: Project) -> set[tuple[str, str, str, str, str]]:
    rows = project.decisions.label_rows(list(SCHEME.label_kinds), every_annotator=True)
    return {(r["sample_id"], r["unit"], r["kind"], r["annotator"], json.dumps(r["value"])) for r in rows}


def test_generic_label_lines_round_trip(binary: Any, tmp_path: Path) -> None:
    path, _ = _project(tmp_path)
    with Project.open(path) as project:
        res = export_split(project, "toy", "0.1.0", tmp_path / "out", statuses=None)
        before = _per_annotator(project)
    assert {a for *_, a, _v in before} == {"ana", "bo"} and any(k == "note" for _s, _u, k, _a, _v in before)
    fresh = Project.create(tmp_path / "fresh.concord")
    import_file(fresh, res.path / f"{NAME}.jsonl")
    report = import_labels(fresh, res.path / f"{NAME}_labels.jsonl")
    assert report.annotators == ["ana", "bo"]
    assert _per_annotator(fresh) == before
    again = import_labels(fresh, res.path / f"{NAME}_labels.jsonl")  # importing twice changes nothing
    assert again.events == 0
    fresh.close()


def test_label_line_with_kind_and_keys_is_refused(binary: Any, tmp_path: Path) -> None:
    path, records = _project(tmp_path)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"scheme": NAME, "sample": records[0]["id"], "unit": UNIT, "annotator": "cy",
                               "kind": "answer", "value": True, "status": "accepted"}) + "\n"
                   + json.dumps({"scheme": NAME, "sample": records[1]["id"], "unit": UNIT, "annotator": "cy",
                                 "kind": "colour", "value": 1}) + "\n")
    with Project.open(path) as project, pytest.raises(Exception) as err:
        import_labels(project, bad)
    assert "not both" in str(err.value) and "unknown binary label kind 'colour'" in str(err.value)


def test_scheme_filter(binary: Any, tmp_path: Path) -> None:
    path, records = _project(tmp_path, with_violations=True)
    with Project.open(path) as project:
        both = export_split(project, "all", "0.1.0", tmp_path / "out", statuses=None)
        only_toy = export_split(project, "toy", "0.1.0", tmp_path / "out", statuses=None, schemes=[NAME])
        only_v = export_split(project, "v", "0.1.0", tmp_path / "out", statuses=None, schemes=["violations"])
        with pytest.raises(Exception, match="--scheme: unknown scheme 'nope'"):
            preview_split(project, statuses=None, schemes=["nope"])
    assert {"violations.jsonl", "labels.jsonl", f"{NAME}.jsonl"} <= set(both.files)
    assert set(only_toy.files) == {f"{NAME}.jsonl", f"{NAME}_labels.jsonl"}
    assert set(only_v.files) == {"violations.jsonl", "labels.jsonl"}
    assert only_toy.manifest["filters"]["schemes"] == [NAME] and "schemes" not in both.manifest["filters"]
    assert (only_toy.path / f"{NAME}.jsonl").read_bytes() == (both.path / f"{NAME}.jsonl").read_bytes()


def _ids(res: Any) -> list[str]:
    return [json.loads(line)["id"] for line in (res.path / f"{NAME}.jsonl").read_text().splitlines()]


def test_sample_and_stratify_draw_from_registry_schemes(binary: Any, tmp_path: Path) -> None:
    path, records = _project(tmp_path)
    split_of = {r["id"]: r["split"] for r in records}  # 10 test, 20 train
    with Project.open(path) as project:
        a = export_split(project, "a", "0.1.0", tmp_path / "out", statuses=None, sample=9, seed=4, stratify="split")
        b = export_split(project, "b", "0.1.0", tmp_path / "out", statuses=None, sample=9, seed=4, stratify="split")
        c = export_split(project, "c", "0.1.0", tmp_path / "out", statuses=None, sample=9, seed=5, stratify="split")
        u = export_split(project, "u", "0.1.0", tmp_path / "out", statuses=None, sample=5, seed=0, stratify="unit")
    assert _ids(a) == _ids(b) and a.content_sha256 == b.content_sha256  # reproducible with the seed
    assert _ids(a) != _ids(c)
    assert sorted(split_of[i] for i in _ids(a)) == ["test"] * 3 + ["train"] * 6  # proportional: 10/30 and 20/30
    assert a.counts["strata"] == {"test": {"available": 10, "selected": 3}, "train": {"available": 20, "selected": 6}}
    assert a.counts["schemes"][NAME]["samples"] == 9 and a.counts["schemes"][NAME]["units"] == 9
    labels = [json.loads(x) for x in (a.path / f"{NAME}_labels.jsonl").read_text().splitlines()]
    assert {r["sample"] for r in labels} == set(_ids(a))  # only the drawn samples' labels
    assert len(_ids(u)) == 5 and u.counts["strata"] == {UNIT: {"available": 30, "selected": 5}}
