"""addm through `concord import`: records (units per method), ADDM results.json run files attached to stored
businesses, and label lines of the generic kind (verdict, incidents, quality)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main
from app.io.demo import demo_dir
from app.store import Project


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "p.concord"
    assert main(["init", str(path)]) == 0
    assert main(["import", str(path), str(demo_dir() / "addm.jsonl")]) == 0
    return path


def _run(bids: list[str]) -> dict:
    """A results.json in ADDM's own shape: field/judgement evidence items, one business the project lacks."""
    results = []
    for bid in bids:
        results.append({"business_id": bid, "verdict": "High Risk", "risk_score": 6.5, "parsed": {"evidences": [
            {"review_id": f"{bid}-r1", "field": "INCIDENT_SEVERITY", "judgement": "moderate", "snippet": "WAITER"},
            {"review_id": f"{bid}-r1", "field": "STAFF_RESPONSE", "judgement": "dismissive"},
        ]}})
    results.append({"business_id": "nowhere", "verdict": "Low Risk", "parsed": {"evidences": []}})
    return {"run_id": "G1_allergy_V2", "method": "rlm", "model": "gpt-5-nano", "results": results}


def test_records_import_as_units_per_method(project: Path) -> None:
    with Project.open(project) as p:
        units = p.units.units_for_sample("tr-002")
        assert sorted(u["unit"] for u in units) == ["amos|demo-model", "direct|demo-model"]
        assert len(p.samples.records("addm")) == 15
        ml = p.samples.machine_label("tr-003", "amos|demo-model")
        assert ml is not None and ml["value"]["verdict"] in ("High Risk", "Critical Risk")


def test_results_json_attaches_a_method(project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "results.json"
    run.write_text(json.dumps(_run(["tr-003", "tr-008"]), indent=2), encoding="utf-8")
    with Project.open(project) as p:
        before = {r.id: r for r in p.samples.records("addm")}
    assert main(["import", str(project), str(run), "--method", "rlm-try"]) == 0
    err = capsys.readouterr().err
    assert "'nowhere' is not among the samples" in err
    with Project.open(project) as p:
        after = {r.id: r for r in p.samples.records("addm")}
        assert set(after["tr-003"].methods) == set(before["tr-003"].methods) | {"rlm-try"}
        assert after["tr-001"] == before["tr-001"]  # not in the run: untouched
        ev = after["tr-008"].methods["rlm-try"].evidences
        assert len(ev) == 1 and ev[0].severity == "moderate" and ev[0].modifiers == ("Dismissive staff",)
        assert "rlm-try" in {u["unit"] for u in p.units.units_for_sample("tr-008")}
    # the method name defaults to the file's method|model
    assert main(["import", str(project), str(run)]) == 0
    with Project.open(project) as p:
        assert "rlm|gpt-5-nano" in p.samples.records("addm", ["tr-003"])[0].methods


def test_results_json_without_known_businesses_is_refused(project: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "results.json"
    run.write_text(json.dumps({"run_id": "x", "method": "rlm", "results": [{"business_id": "nowhere"}]}), encoding="utf-8")
    with Project.open(project) as p:
        before = p.table_counts()
    assert main(["import", str(project), str(run)]) == 2
    assert "none of the run's 1 businesses is an addm sample" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"run_id": "x", "results": [{"business_id": "tr-001", "risk_score": "high"}]}), encoding="utf-8")
    assert main(["import", str(project), str(bad)]) == 2
    assert "method: is required" in capsys.readouterr().err
    assert main(["import", str(project), str(demo_dir() / "addm.jsonl"), "--method", "m"]) == 2
    assert "--method: only a run file" in capsys.readouterr().err
    with Project.open(project) as p:
        assert p.table_counts() == before


def test_generic_label_lines(project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.jsonl"
    lines = [
        {"scheme": "addm", "sample": "tr-002", "annotator": "ann", "verdict": "Extreme"},
        {"scheme": "addm", "sample": "tr-002", "unit": "amos|demo-model", "annotator": "ann", "verdict": "Low Risk"},
        {"scheme": "addm", "sample": "tr-002", "unit": "gpt", "annotator": "ann", "quality": 3},
        {"scheme": "addm", "sample": "tr-004", "annotator": "ann", "incidents": [{"review_id": "tr-004-r1", "severity": "huge"}]},
        {"scheme": "addm", "sample": "nope", "annotator": "ann", "verdict": "Low Risk"},
        {"scheme": "addm", "sample": "tr-006", "unit": "amos|demo-model", "annotator": "ann", "quality": 9},
    ]
    bad.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    assert main(["labels", "import", str(project), str(bad)]) == 2
    err = capsys.readouterr().err
    for want in (":1: verdict:", ":2: verdict: verdict belongs to the sample", ":3: unit: sample 'tr-002' has no method 'gpt'",
                 ":4: incidents[0].severity:", ":5: sample: no sample 'nope'", ":6: quality:"):
        assert want in err, want
    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps({"scheme": "addm", "sample": "tr-002", "annotator": "ann", "verdict": "High Risk",
                                "incidents": [{"review_id": "tr-002-r1", "severity": "mild"}]}) + "\n"
                    + json.dumps({"scheme": "addm", "sample": "tr-002", "unit": "amos|demo-model", "annotator": "ann",
                                  "quality": 2, "status": "corrected"}) + "\n", encoding="utf-8")
    assert main(["labels", "import", str(project), str(good)]) == 0
    with Project.open(project) as p:
        labels = p.decisions.sample_labels("tr-002")
        assert labels[("", "verdict")] == "High Risk" and labels[("amos|demo-model", "quality")] == 2
        assert labels[("", "incidents")][0]["severity"] == "mild" and labels[("amos|demo-model", "status")] == "corrected"
