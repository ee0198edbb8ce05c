"""FaithBench's released batch files through the real CLI (issue #26 item 2): `concord import P batch_1.json`
stores the summaries as judge samples and every annotator's label and spans in one all-or-nothing import, and
`concord evaluate --scheme judge --json` gives each detector's AUROC equal to scikit-learn's on the same data
(any-annotator reference; detector scores are consistency, so the hallucination score is 1 - score).
The files are made here: a few samples in FaithBench's shape, never the real data."""
from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path
from typing import Any

import pytest
from sklearn.metrics import roc_auc_score

from app.cli import main
from app.store import Project

DETECTORS = ("hhem-2.1", "gpt_4o", "true_nli")
ANNOTATORS = ("ana", "bo")


def _batch(seed: int, n: int = 16) -> dict[str, Any]:
    """FaithBench's shape: samples with a summary, the annotators' spans and the detectors' scores in metadata."""
    rng = random.Random(seed)
    samples = []
    for i in range(n):
        summary = f"Summary {i}: the council approved {rng.randint(2, 90)} new homes on {rng.choice(['Monday', 'Friday'])}."
        annotations = []
        for name in ANNOTATORS:
            if rng.random() < 0.45:
                start = rng.randint(0, 10)
                annotations.append({"annotator_name": name, "annotator_id": 7, "label": [rng.choice(
                    ["Unwanted.Intrinsic", "Unwanted.Extrinsic", "Questionable", "Benign"])], "note": "checked",
                    "summary_start": start, "summary_end": start + 5, "summary_span": summary[start:start + 5]})
        meta = {"summarizer": "some-model", "raw_sample_id": i,
                "hhem-2.1": round(rng.random(), 4), "gpt_4o": rng.choice([0, 1]),
                "true_nli": None if i == 2 else rng.choice([0, 1])}
        samples.append({"sample_id": i, "source": f"Article {i} about the council.", "summary": summary,
                        "annotations": annotations, "metadata": meta})
    return {"samples": samples}


def _expected(batch: dict[str, Any]) -> dict[str, float]:
    """Each detector's AUROC computed directly: a summary is hallucinated when anyone marked an Unwanted* span."""
    y = [int(any(x.startswith("Unwanted") for a in s["annotations"] for x in a["label"])) for s in batch["samples"]]
    out = {}
    for d in DETECTORS:
        keep = [(yy, s["metadata"][d]) for yy, s in zip(y, batch["samples"]) if s["metadata"][d] is not None]
        out[d] = roc_auc_score([k[0] for k in keep], [1 - k[1] for k in keep])
    return out


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    path = tmp_path / "fb.concord"
    Project.create(path).close()
    return path


def test_import_then_evaluate_gives_sklearns_auroc(project: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    batch = _batch(3)
    f = tmp_path / "batch_1.json"
    f.write_text(json.dumps(batch), encoding="utf-8")
    assert main(["import", str(project), str(f)]) == 0
    out = capsys.readouterr().out
    assert "judge samples: 16 added" in out and "decisions by 2 annotator(s)" in out
    with Project.open(project) as p:
        for name in ANNOTATORS:  # each annotator read every sample of the batch: unmarked ones are their "no"
            labels = p.scheme_data.scheme_labels("judge", annotator=name)
            assert len(labels) == 16
            for s in batch["samples"]:
                mine = [a for a in s["annotations"] if a["annotator_name"] == name]
                got = labels[(f"faithbench-b1-{s['sample_id']}", "")]
                assert got["label"] == any(x.startswith("Unwanted") for a in mine for x in a["label"])
                assert [(m["start"], m["end"]) for m in got["marks"]] == [
                    (a["summary_start"], a["summary_end"]) for a in mine]
    assert main(["evaluate", str(project), "--scheme", "judge", "--bootstrap", "50", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)["judge"]
    expected = _expected(batch)
    assert 0 < sum(1 for s in batch["samples"] if any(
        x.startswith("Unwanted") for a in s["annotations"] for x in a["label"])) < 16  # both classes present
    for d in DETECTORS:
        assert data["judges"][d]["auroc"]["estimate"] == pytest.approx(expected[d], abs=1e-12), d
    assert data["judges"]["true_nli"]["n"] == 15  # the null score is no score
    # the human ceiling shows each detector beside the humans (the scheme's own per-judge figures), not one "metric"
    per_unit = data["human_ceiling"]["metric_human"]["per_unit"]
    assert set(per_unit) == set(DETECTORS) and per_unit == pytest.approx(data["ceiling"]["judges"])


def test_reimport_changes_nothing_and_a_bad_batch_changes_nothing(project: Path, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "batch_2.json"
    f.write_text(json.dumps(_batch(4, n=6)), encoding="utf-8")
    assert main(["import", str(project), str(f)]) == 0
    capsys.readouterr()
    assert main(["import", str(project), str(f)]) == 0
    assert "nothing changed" in capsys.readouterr().out
    before = _sha(project)
    # an annotator name the store refuses (a control character): the samples were valid, so the import fails at
    # the labels, inside the same transaction -- nothing of the file is kept
    bad = _batch(5, n=6)
    bad["samples"][0]["annotations"] = [{"annotator_name": "eve\x07", "label": ["Unwanted"], "note": None,
                                         "summary_start": 0, "summary_end": 3}]
    g = tmp_path / "batch_3.json"
    g.write_text(json.dumps(bad), encoding="utf-8")
    assert main(["import", str(project), str(g)]) == 2
    err = capsys.readouterr().err
    assert f"{g}:sample 1: annotator:" in err
    with Project.open(project) as p:
        assert not [s for s in p.samples.sample_rows("judge") if s.startswith("faithbench-b3-")]
    # a span outside its summary: refused before anything is written, naming the sample and field
    bad = _batch(6, n=3)
    bad["samples"][1]["annotations"] = [{"annotator_name": "ana", "label": ["Unwanted"], "summary_start": 2,
                                         "summary_end": 10_000}]
    h = tmp_path / "batch_4.json"
    h.write_text(json.dumps(bad), encoding="utf-8")
    assert main(["import", str(project), str(h)]) == 2
    err = capsys.readouterr().err
    assert "samples[1].annotations[0]" in err and "Traceback" not in err
    assert _sha(project) == before  # neither refused file left a trace
    assert main(["import", str(project), str(f)]) == 0  # (the project still opens and holds batch 2 unchanged)
    assert "nothing changed" in capsys.readouterr().out


def test_count_all_counts_questionable_and_benign(project: Path, tmp_path: Path) -> None:
    batch = _batch(3)
    f = tmp_path / "batch_1.json"
    f.write_text(json.dumps(batch), encoding="utf-8")
    assert main(["import", str(project), str(f), "--count-all"]) == 0
    with Project.open(project) as p:
        labels = p.scheme_data.scheme_labels("judge", annotator="ana")
    for s in batch["samples"]:
        marked = any(a["annotator_name"] == "ana" for a in s["annotations"])
        assert labels[(f"faithbench-b1-{s['sample_id']}", "")]["label"] == marked
