"""Curated split export: selection, human-validated ground truth, determinism, immutability, atomicity, safety."""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from app import corrections
from app.schemes.rubric.corrections import set_buckets
from app.schemes.violations import corrections as violations
from app.errors import UsageError
from app.io import export as export_mod
from app.io.export import export_split, preview_split
from app.io.export_select import allocate, stratified_sample
from app.store import Change, Project
from calibration.schemes.rubric.records import RubricSample
from calibration.schemes.violations.records import Violation, ViolationSample

NAIVE = "naive@1.0|gpt-x"
CAREFUL = "careful@2.0|gpt-y"
TRAIT = {
    "name": "coverage", "description": "covers the facts", "evaluation_mode": "tp_only",
    "metrics": ["precision", "recall", "f1"], "tp_instructions": ["mentions A", "mentions B"],
    "tn_instructions": [], "repeated_extraction": True,
}
T1 = "Buy now!! Our 🍺 is the best beer in the world. Guaranteed results."
T2 = "Ünïcödé text שלום with Guaranteed cure."


def span(text: str, quote: str, rule: str, category: str | None = None, **kw: str) -> Violation:
    start = text.index(quote)
    return Violation(rule, start, start + len(quote), quote, category, kw.get("explanation"), kw.get("correction"))


def build_project(path: Path, n_extra: int = 12) -> Project:
    """A small project made through the store API: two checkers, curated GT edits, rubric units, filler samples."""
    p = Project.create(path)
    s1 = ViolationSample(
        "s1", T1,
        (span(T1, "the best beer in the world", "No superlatives", "brand", explanation="superlative"),
         span(T1, "Guaranteed results", "No guarantees", "compliance", correction="Results may vary")),
        {NAIVE: (span(T1, "best beer", "No superlatives", "brand"),),
         CAREFUL: (span(T1, "the best beer in the world", "no superlative claims", "brand"),
                   span(T1, "Guaranteed results", "guarantee", "compliance"),
                   span(T1, "Buy now!!", "No pressure selling", "brand"))},
        context="beer ad", split="test",
    )
    s2 = ViolationSample(
        "s2", T2,
        (span(T2, "Guaranteed cure", "No guarantees", "compliance"), span(T2, "שלום", "Foreign words", "brand")),
        {NAIVE: (), CAREFUL: (Violation("No guarantees", T2.index("Guaranteed"), T2.index("Guaranteed") + 10,
                                        "GUARANTEED", "compliance"),)},
        split="train",
    )
    s3 = ViolationSample("s3", "Plain text here.", (), {CAREFUL: (Violation("Rule X", None, None, "not in text"),)})
    extra = []
    for i in range(n_extra):
        text = f"Sample {i:02d} is simply the best."
        cat = ("brand", "compliance", "style")[i % 3]
        extra.append(ViolationSample(f"x{i:02d}", text, (span(text, "simply the best", "No superlatives", cat),),
                                     {NAIVE: (span(text, "the best", "No superlatives", cat),)},
                                     split=("train", "test")[i % 2]))
    p.store("violations").write_violation_samples([s1, s2, s3, *extra], metas={"s1": {"source": "web", "lang": "en"}})
    p.store("rubric").write_rubric_samples([
        RubricSample(f"r{i}", f"What about item {i}?", f"Item {i} mentions A and B.", (TRAIT,),
                     {"coverage": {"tp": ["mentions A"], "fn": ["mentions B"], "fp": [], "tn": []}}, split="test")
        for i in (1, 2, 3)
    ])
    # s1: naive accepted as proposed; careful corrected, its third prediction is a violation the GT missed.
    violations.accept_matches("s1", NAIVE, [(0, 0)]).apply(p, "alice")
    violations.set_matches("s1", CAREFUL, [(0, 0), (1, 1)], "corrected", "fix").apply(p, "bob")
    violations.toggle_index("s1", CAREFUL, "missing_gt", [], 2, "missing").apply(p, "bob")
    # s2: the second GT violation is wrong; naive predicted nothing; careful found the guarantee.
    violations.toggle_index("s2", "", "gt_wrong", [], 1, "wrong").apply(p, "alice")
    violations.accept_matches("s2", NAIVE, []).apply(p, "alice")
    violations.accept_matches("s2", CAREFUL, [(0, 0)]).apply(p, "alice")
    # s3: flagged, not curated by default.
    violations.set_matches("s3", CAREFUL, [], "flagged", "flag").apply(p, "bob")
    for i, ex in enumerate(extra):
        if i % 4 == 3:
            corrections.set_status(ex.id, NAIVE, "skipped").apply(p, "alice")
        else:
            violations.accept_matches(ex.id, NAIVE, [(0, 0)] if i % 2 == 0 else []).apply(p, "alice")
    # rubric: r1 corrected buckets, r2 accepted as the LLM gave them, r3 untouched.
    set_buckets("r1", "coverage", {"tp": ["mentions A", "mentions B"], "fn": [], "fp": [], "tn": []}).apply(p, "carol")
    corrections.set_status("r2", "coverage", "accepted").apply(p, "carol")
    p.units.set_machine_scores("std_match@1.0.0", [("s1", NAIVE, 1, 0, 1, 2 / 3), ("s1", CAREFUL, 2, 1, 0, 0.8),
                                              ("s2", CAREFUL, 1, 0, 1, 0.5)])
    return p


@pytest.fixture
def project(tmp_path: Path) -> Project:
    p = build_project(tmp_path / "src.concord")
    yield p
    p.close()


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def data_files(d: Path) -> dict[str, bytes]:
    return {f.name: f.read_bytes() for f in sorted(d.iterdir()) if f.stem in ("violations", "labels", "rubric")}


# -- content ---------------------------------------------------------------------------------------------------------
def test_curated_ground_truth_and_remapped_matches(project: Project, tmp_path: Path) -> None:
    res = export_split(project, "curated", "0.1.0", tmp_path / "out")
    assert res.path == tmp_path / "out" / "curated@0.1.0"
    viol = {r["id"]: r for r in read_jsonl(res.path / "violations.jsonl")}
    labels = {(r["sample"], r.get("checker") or r.get("trait")): r for r in read_jsonl(res.path / "labels.jsonl")}
    # s1: the careful checker's "Buy now!!" became ground truth, matched to the prediction it came from.
    gt1 = viol["s1"]["ground_truth"]
    assert [v["quote"] for v in gt1] == ["the best beer in the world", "Guaranteed results", "Buy now!!"]
    assert gt1[2]["rule"] == "No pressure selling"
    assert labels[("s1", CAREFUL)]["matches"] == [[0, 0], [1, 1], [2, 2]]
    assert labels[("s1", CAREFUL)]["annotator"] == "bob"
    assert labels[("s1", NAIVE)] == {"sample": "s1", "checker": NAIVE, "annotator": "alice", "matches": [[0, 0]]}
    assert viol["s1"]["meta"] == {"lang": "en", "source": "web"} and viol["s1"]["context"] == "beer ad"
    # s2: the wrong GT violation is gone; naive's empty prediction list is kept (a human said it found nothing).
    assert [v["quote"] for v in viol["s2"]["ground_truth"]] == ["Guaranteed cure"]
    assert viol["s2"]["predictions"][NAIVE] == []
    assert labels[("s2", NAIVE)]["matches"] == []
    # a loose quote located case-insensitively keeps its span, not the quote that disagrees with the text
    p = viol["s2"]["predictions"][CAREFUL][0]
    assert p["quote"] is None and T2[p["start"]:p["end"]] == "Guaranteed"
    # s3 is flagged and the skipped filler units are out; r3 has no decision
    assert "s3" not in viol and "x03" not in viol and "x01" in viol
    rubric = {r["id"]: r for r in read_jsonl(res.path / "rubric.jsonl")}
    assert sorted(rubric) == ["r1", "r2"]
    assert rubric["r1"]["buckets"]["coverage"]["tp"] == ["mentions A", "mentions B"]
    assert rubric["r1"]["metrics"]["coverage"] == {"precision": 1.0, "recall": 1.0, "f1": 1.0}
    assert rubric["r2"]["buckets"]["coverage"] == {"tp": ["mentions A"], "fn": ["mentions B"], "fp": [], "tn": []}
    assert rubric["r2"]["metrics"]["coverage"]["recall"] == pytest.approx(0.5)
    assert labels[("r2", "coverage")]["annotator"] == "carol"
    c = res.counts
    assert c["ground_truth"]["dropped_gt_wrong"] == 1 and c["ground_truth"]["added_missing_gt"] == 1
    assert c["samples"] == {"violations": 11, "rubric": 2, "total": 13}
    assert c["by_checker"][CAREFUL]["units"] == 2 and c["by_checker"][CAREFUL]["human_matches"] == 4


def test_checker_and_status_filters(project: Project, tmp_path: Path) -> None:
    res = export_split(project, "careful_only", "1.0.0", tmp_path, checkers=[CAREFUL], statuses=["corrected", "flagged"])
    viol = read_jsonl(res.path / "violations.jsonl")
    assert [r["id"] for r in viol] == ["s1", "s3"]
    assert all(list(r["predictions"]) == [CAREFUL] for r in viol)
    assert not (res.path / "rubric.jsonl").exists()
    assert res.manifest["filters"]["checkers"] == [CAREFUL]
    # any decision, rubric trait only
    res2 = export_split(project, "rubric_only", "1.0.0", tmp_path, checkers=["coverage"], statuses=None)
    assert [r["id"] for r in read_jsonl(res2.path / "rubric.jsonl")] == ["r1", "r2"]
    assert not (res2.path / "violations.jsonl").exists()


def test_manifest_and_data_card(project: Project, tmp_path: Path) -> None:
    res = export_split(project, "curated", "0.1.0", tmp_path)
    m = json.loads((res.path / "manifest.json").read_text())
    assert m["split"] == "curated@0.1.0" and m["source_project_id"] == project.project_id
    assert m["match_config"]["ref"] == "std_match@1.0.0" and m["match_config"]["settings"]["weights"]["overlap"] == 0.5
    assert m["annotators"] == ["alice", "bob", "carol"]
    for name, info in m["files"].items():
        assert hashlib.sha256((res.path / name).read_bytes()).hexdigest() == info["sha256"]
    assert set(m["files"]) == {"violations.jsonl", "labels.jsonl", "rubric.jsonl"}
    assert m["counts"]["by_split"]["test"]["rubric"] == 2
    assert m["counts"]["by_category"]["compliance"] >= 2
    machine = m["agreement"]["violations"]["machine_vs_human_unit_f1"]["per_checker"]
    assert machine[CAREFUL]["n_units_with_machine_scores"] == 2
    # human unit F1 on the original GT: s1 2 matches, 3 predictions, 2 GT -> 0.8 (machine 0.8);
    # s2 1 match, 1 prediction, 2 GT -> 2/3 (machine 0.5)
    assert machine[CAREFUL]["human_f1_mean"] == pytest.approx((0.8 + 2 / 3) / 2)
    assert machine[CAREFUL]["mean_abs_diff"] == pytest.approx((0 + 1 / 6) / 2)
    assert machine[NAIVE]["n_units_with_machine_scores"] == 1
    assert m["agreement"]["rubric_llm_vs_human"]["coverage"]["n_samples"] == 2
    card = (res.path / "README.md").read_text()
    assert "curated@0.1.0" in card and m["files"]["violations.jsonl"]["sha256"] in card


# -- determinism -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_byte_identical_exports(project: Project, tmp_path: Path, fmt: str) -> None:
    a = export_split(project, "det", "1.0.0", tmp_path / "a", fmt=fmt, stratify="category", sample=7, seed=3)
    b = export_split(project, "det", "1.0.0", tmp_path / "b", fmt=fmt, stratify="category", sample=7, seed=3)
    assert data_files(a.path) == data_files(b.path)
    assert a.content_sha256 == b.content_sha256 and b.already_recorded
    assert set(data_files(a.path)) == {f"violations.{fmt}", f"labels.{fmt}", f"rubric.{fmt}"}


def test_tabular_formats_hold_the_same_records(project: Project, tmp_path: Path) -> None:
    j = export_split(project, "fmt", "1.0.0", tmp_path / "j")
    c = export_split(project, "fmt", "1.0.0", tmp_path / "c", fmt="csv")
    q = export_split(project, "fmt", "1.0.0", tmp_path / "q", fmt="parquet")
    assert j.content_sha256 == c.content_sha256 == q.content_sha256  # the same split in three formats
    expected = read_jsonl(j.path / "violations.jsonl")
    frame = pd.read_csv(c.path / "violations.csv", dtype=str, keep_default_na=False)
    assert list(frame.columns) == ["id", "text", "ground_truth", "predictions", "split", "context", "meta"]
    assert [json.loads(x) for x in frame["ground_truth"]] == [r["ground_truth"] for r in expected]
    assert list(frame["text"]) == [r["text"] for r in expected]
    table = pq.read_table(q.path / "violations.parquet").to_pylist()
    assert [json.loads(r["predictions"]) for r in table] == [r["predictions"] for r in expected]
    assert [r["context"] for r in table] == [r["context"] for r in expected]


def test_stratified_sampling_is_deterministic_and_proportional(project: Project, tmp_path: Path) -> None:
    kw = dict(stratify="category", sample=6)
    p1 = preview_split(project, seed=1, **kw)
    assert p1 == preview_split(project, seed=1, **kw)
    assert p1["counts"]["samples"]["total"] == 6
    strata = p1["counts"]["strata"]
    assert sum(s["available"] for s in strata.values()) == 13
    for s in strata.values():  # proportional: within one of the exact quota
        assert abs(s["selected"] - 6 * s["available"] / 13) < 1
    ids = {
        seed: [r["id"] for r in read_jsonl(export_split(project, f"s{seed}", "1.0.0", tmp_path, seed=seed, **kw).path
                                           / "violations.jsonl")]
        for seed in (1, 2, 3, 4)
    }
    assert len({tuple(v) for v in ids.values()}) > 1  # different seeds draw different samples


def test_allocation_and_sampling_units() -> None:
    assert allocate({"a": 10, "b": 5, "c": 1}, 8) == {"a": 5, "b": 3, "c": 0}
    assert sum(allocate({"a": 3, "b": 3, "c": 3}, 4).values()) == 4
    assert allocate({"a": 2, "b": 1}, 10) == {"a": 2, "b": 1}
    strata = {"b": [f"b{i}" for i in range(20)], "a": [f"a{i}" for i in range(10)]}
    first = stratified_sample(strata, 9, seed=5)
    assert first == stratified_sample(strata, 9, seed=5)
    assert len(first["a"]) == 3 and len(first["b"]) == 6 and first["a"] == sorted(first["a"])
    assert stratified_sample(strata, None, 0) == {"a": sorted(strata["a"]), "b": sorted(strata["b"])}


# -- immutability ----------------------------------------------------------------------------------------------------
def test_same_version_with_other_content_is_refused(project: Project, tmp_path: Path) -> None:
    first = export_split(project, "curated", "0.3.2", tmp_path / "a")
    again = export_split(project, "curated", "0.3.2", tmp_path / "b")  # same content: fine
    assert again.content_sha256 == first.content_sha256
    violations.accept_matches("x05", NAIVE, [(0, 0)]).apply(project, "alice")  # the content changes
    with pytest.raises(UsageError, match=r"curated@0\.3\.2 .*different content.*bump the version.*0\.3\.3"):
        export_split(project, "curated", "0.3.2", tmp_path / "c")
    assert not (tmp_path / "c" / "curated@0.3.2").exists()
    assert "bump the version" in preview_split(project, name="curated", version="0.3.2")["problems"][0]
    assert export_mod.next_version(project, "curated") == "0.3.3"
    assert export_mod.next_version(project, "brand_new") == "0.1.0"
    bumped = export_split(project, "curated", "0.3.3", tmp_path / "c")
    assert export_mod.next_version(project, "curated") == "0.3.4"
    assert [(s["name"], s["version"]) for s in project.artifacts.splits()] == [("curated", "0.3.2"), ("curated", "0.3.3")]
    assert project.artifacts.split_record("curated", "0.3.3")["content_sha256"] == bumped.content_sha256


@pytest.mark.parametrize("name", ["", "a/b", "../up", "x@1", "has space", "-lead", "é"])
def test_bad_names_are_usage_errors(project: Project, tmp_path: Path, name: str) -> None:
    with pytest.raises(UsageError, match="--name"):
        export_split(project, name, "1.0.0", tmp_path)


@pytest.mark.parametrize("version", ["1.0", "v1.0.0", "1.0.0-rc1", "01.0.0", "1.0.0.0", ""])
def test_bad_versions_are_usage_errors(project: Project, tmp_path: Path, version: str) -> None:
    with pytest.raises(UsageError, match="semantic version"):
        export_split(project, "ok", version, tmp_path)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(("ok", "."))]


def test_bad_filters_are_usage_errors(project: Project, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--status: unknown status bogus"):
        export_split(project, "ok", "1.0.0", tmp_path, statuses=["accepted", "bogus"])
    with pytest.raises(UsageError, match="--checker: no checker or trait named 'nope'"):
        preview_split(project, checkers=["nope"])
    with pytest.raises(UsageError, match="--stratify"):
        preview_split(project, stratify="colour")
    with pytest.raises(UsageError, match="--sample"):
        preview_split(project, sample=0)
    with pytest.raises(UsageError, match="no match config"):
        preview_split(project, config_ref="nope@9.9.9")
    with pytest.raises(UsageError, match="--format"):
        export_split(project, "ok", "1.0.0", tmp_path, fmt="xlsx")
    with pytest.raises(UsageError, match="nothing to export"):
        export_split(project, "ok", "1.0.0", tmp_path, statuses=["skipped"], checkers=[CAREFUL])
    assert project.artifacts.splits() == []


# -- safety ----------------------------------------------------------------------------------------------------------
def test_existing_directory_needs_force(project: Project, tmp_path: Path) -> None:
    res = export_split(project, "curated", "1.0.0", tmp_path)
    (res.path / "notes.txt").write_text("mine")
    with (res.path / "violations.jsonl").open("ab") as fh:
        fh.write(b"\n")  # the directory no longer holds this exact export
    with pytest.raises(UsageError, match="already exists with other content"):
        export_split(project, "curated", "1.0.0", tmp_path)
    assert (res.path / "notes.txt").exists()
    assert preview_split(project, name="curated", version="1.0.0", out_dir=tmp_path)["problems"]
    again = export_split(project, "curated", "1.0.0", tmp_path, force=True)
    assert not (again.path / "notes.txt").exists() and (again.path / "manifest.json").exists()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


@pytest.mark.parametrize("existing", [False, True])
def test_failure_midway_leaves_no_half_written_split(project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     existing: bool) -> None:
    if existing:
        old = export_split(project, "curated", "1.0.0", tmp_path)
        before = {f.name: f.read_bytes() for f in old.path.iterdir()}
    real = export_mod._write_file
    calls = []

    def failing(path: Path, data: bytes) -> None:
        calls.append(path.name)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real(path, data)

    monkeypatch.setattr(export_mod, "_write_file", failing)
    version = "1.0.0" if existing else "2.0.0"
    with pytest.raises(UsageError, match=f"curated@{version}: no space left on the device; free some space"):
        export_split(project, "curated", version, tmp_path, force=True)  # one sentence, not an OSError traceback
    assert len(calls) == 2  # it did fail midway, after writing a file
    target = tmp_path / f"curated@{version}"
    if existing:  # the old split is untouched, byte for byte
        assert {f.name: f.read_bytes() for f in target.iterdir()} == before
        assert project.artifacts.split_record("curated", "1.0.0")["content_sha256"] == old.content_sha256
    else:
        assert not target.exists() and project.artifacts.split_record("curated", version) is None
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp dir left behind


def test_failure_recording_the_split_removes_the_directory(project: Project, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*a: object, **k: object) -> None:
        raise RuntimeError("disk I/O error")

    monkeypatch.setattr(project.artifacts, "record_split", boom)
    with pytest.raises(RuntimeError):
        export_split(project, "curated", "1.0.0", tmp_path)
    assert not (tmp_path / "curated@1.0.0").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_never_writes_secrets(project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sentinel = "sk-SENTINEL-4f9a1c2b7d"
    monkeypatch.setenv("OPENAI_API_KEY", sentinel)
    for fmt in ("jsonl", "csv", "parquet"):
        res = export_split(project, f"safe_{fmt}", "1.0.0", tmp_path, fmt=fmt)
        for f in res.path.iterdir():
            assert sentinel.encode() not in f.read_bytes(), f.name
    # a secret that reached the project data is caught before anything is written
    project.store("violations").write_violation_samples([ViolationSample("leak", "Leaky text.", (), {NAIVE: ()}, None, None)],
                                    metas={"leak": {"note": f"key={sentinel}"}})
    project.decisions.record("alice", [Change("leak", NAIVE, "matches", []), Change("leak", NAIVE, "status", "accepted")])
    with pytest.raises(UsageError, match="OPENAI_API_KEY") as exc:
        export_split(project, "leaky", "1.0.0", tmp_path, fmt="parquet")
    assert sentinel not in str(exc.value)
    assert not (tmp_path / "leaky@1.0.0").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_preview_matches_export_and_writes_nothing(project: Project, tmp_path: Path) -> None:
    events, files = len(project.decisions.events()), sorted(os.listdir(tmp_path))
    pv = preview_split(project, name="curated", version="1.0.0", out_dir=tmp_path / "out")
    assert pv["problems"] == [] and sorted(os.listdir(tmp_path)) == files and len(project.decisions.events()) == events
    assert project.artifacts.splits() == []
    res = export_split(project, "curated", "1.0.0", tmp_path / "out")
    assert pv["counts"] == res.counts and pv["content_sha256"] == res.content_sha256
    bad = preview_split(project, name="bad name", version="1.0")
    assert len(bad["problems"]) == 2


def test_cancel_from_progress_writes_nothing(project: Project, tmp_path: Path) -> None:
    from app.progress import Cancelled

    class CancelWhileWriting:
        def __init__(self) -> None:
            self.messages: list[str] = []

        def update(self, done: int, total: int, message: str = "") -> None:
            self.messages.append(message)

        def cancelled(self) -> bool:
            return "serialising rubric" in self.messages

    progress = CancelWhileWriting()
    with pytest.raises(Cancelled):
        export_split(project, "curated", "1.0.0", tmp_path, progress=progress)
    assert progress.messages[:2] == ["selecting samples", "serialising violations"]
    assert not [p for p in tmp_path.iterdir() if "curated" in p.name or p.name.startswith(".")]
    assert project.artifacts.splits() == []
