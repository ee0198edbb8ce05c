"""TRACe through the command line: `evaluate --reference`, the split's `trace_scores` (human, annotator and LLM
annotator scores under both variants) and the default dataset name of RAGBench's `<subset>/test.*` files."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from app.cli import main
from app.store import Change, Project
from calibration.schemes.trace.annotate import label_value
from calibration.schemes.trace.reference import score_record
from calibration.schemes.trace.scheme import SCHEME, truth_labels
from tests.test_trace_evaluate import make


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """40 samples with two judges; a human (alice) corrected every third sample's labels; an LLM labeled s1."""
    recs, labels = make()
    path = tmp_path / "p.concord"
    with Project.create(path) as p:
        p.samples.write_samples("trace", recs)
        for (sid, _), kinds in labels.items():
            p.decisions.record("alice", [*(Change(sid, "", k, v) for k, v in kinds.items()),
                               Change(sid, "annotator", "status", "corrected")])
        rec = next(r for r in recs if r.id == "s1")
        llm = truth_labels(rec, {"relevant": ["0c"], "utilized": ["0c"], "unsupported": ["a", "b"]})
        p.samples.save_machine_unit("s1", "llm:m", "llm:m", label_value(llm, {}, "m"), None, {})
        p.decisions.record("alice", [Change("s1", "llm:m", "status", "accepted")])
    return path


def evaluate_json(path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> dict:
    assert main(["evaluate", str(path), "--scheme", "trace", "--bootstrap", "0", "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)["trace"]


def test_evaluate_reference_option_reaches_the_scheme(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    default = evaluate_json(project, capsys)
    ann = evaluate_json(project, capsys, "--reference", "annotator")
    hum = evaluate_json(project, capsys, "--reference", "human")
    assert default["reference"] == ann["reference"] == "annotator" and hum["reference"] == "human"
    assert default["judges"] == ann["judges"]
    j_ann, j_hum = ann["judges"]["ragbench"]["all"]["j1"], hum["judges"]["ragbench"]["all"]["j1"]
    assert j_hum["n"] == 14 < j_ann["n"] == 40  # judged on the human-labeled samples only
    assert j_hum["relevance_rmse"][0] != j_ann["relevance_rmse"][0]
    assert main(["evaluate", str(project), "--scheme", "trace", "--bootstrap", "0", "--reference", "nobody"]) == 2
    assert "reference must be 'annotator' or 'human'" in capsys.readouterr().err


def test_export_carries_the_scores_of_every_label_source(project: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main(["export", str(project), "--name", "tr", "--version", "0.1.0", "--out", str(out)]) == 0
    split = out / "tr@0.1.0"
    rows = [json.loads(line) for line in (split / "trace_scores.jsonl").read_text().splitlines()]
    records = {json.loads(line)["id"] for line in (split / "trace.jsonl").read_text().splitlines()}
    assert records == {f"s{i}" for i in range(0, 40, 3)} | {"s1"}
    by = {(r["sample"], r["labels"], r["variant"]): r for r in rows}
    recs, labels = make()
    for rec in recs:
        if rec.id not in records:
            assert not any(k[0] == rec.id for k in by)
            continue
        for variant in ("ragbench", "trace_guide"):
            expect = {"annotator": score_record(rec, variant)}
            if (rec.id, "") in labels:
                expect["human"] = score_record(rec, variant, truth_labels(rec, labels[(rec.id, "")]))
            for source, scores in expect.items():
                row = by.pop((rec.id, source, variant))
                for k, v in scores.items():
                    assert (row[k] is None and math.isnan(v)) or row[k] == pytest.approx(v), (rec.id, source, k)
    # the LLM annotator's scores: s1 with R = U = [0c], both response sentences unsupported
    llm = by.pop(("s1", "llm:m", "ragbench"))
    assert llm["relevance"] == pytest.approx(1 / 5) and llm["completeness"] == 1.0 and llm["adherence"] == 0.0
    assert by.pop(("s1", "llm:m", "trace_guide"))["utilization"] == 1.0
    assert by == {}
    manifest = json.loads((split / "manifest.json").read_text())
    assert "trace_scores.jsonl" in manifest["files"]
    # the split imports again (the scores file is not a records file, so only trace.jsonl is read back)
    again = tmp_path / "again.concord"
    assert main(["init", str(again)]) == 0
    assert main(["import", str(again), str(split / "trace.jsonl")]) == 0
    with Project.open(again) as p:
        assert {r.id for r in p.samples.records("trace")} == records


def test_default_dataset_name_of_a_split_file_in_a_subset_folder(tmp_path: Path) -> None:
    from tests.test_trace_data import keyed_record

    path = tmp_path / "p.concord"
    assert main(["init", str(path)]) == 0
    files = {}
    for folder, name in (("covidqa", "test.jsonl"), ("hotpotqa", "test.jsonl"), ("mine", "batch7.jsonl"),
                         ("emanual", "test.jsonl")):
        f = tmp_path / folder / name
        f.parent.mkdir()
        f.write_text(json.dumps(keyed_record(f"{folder}-1")) + "\n")
        files[folder] = f
    assert main(["import", str(path), str(files["covidqa"])]) == 0
    assert main(["import", str(path), str(files["hotpotqa"])]) == 0
    assert main(["import", str(path), str(files["mine"])]) == 0
    assert main(["import", str(path), str(files["emanual"]), "--dataset", "chosen"]) == 0  # --dataset wins
    with Project.open(path) as p:
        names = {r["name"] for r in p.query("SELECT name FROM datasets")}
        assert names == {"covidqa-test", "hotpotqa-test", "batch7", "chosen"}
        assert p.samples.sample_row("hotpotqa-1")["dataset_id"] == p.samples.dataset("hotpotqa-test")["id"]
        assert p.samples.sample_row("emanual-1")["dataset_id"] == p.samples.dataset("chosen")["id"]
    from app.schemes.trace.io import default_dataset

    assert default_dataset("test.parquet") is None and default_dataset("data/covidqa/TEST.parquet") == "covidqa-TEST"
