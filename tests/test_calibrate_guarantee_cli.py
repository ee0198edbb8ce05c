"""`concord calibrate --guarantee` and `--reference`, and `concord queue --order deferred`, end to end on projects
the tests make (issue #26 items 4, 5).

The judge project: 300 samples, judge `a` (a probability) wrong mostly near 0.5, judge `b` noise; 240 samples
labeled by one annotator. The guarantee is recomputed here by hand from the stored run: the same seeded calibration
split, the calibrated threshold, and Learn-then-Test one candidate at a time with scipy's binomial."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.stats import binom

from app.cli import main
from app.errors import UsageError
from app.services.guarantee import calibration_split
from app.services.schemes import check_reference
from app.store import Project
from calibration.guarantee import min_decided
from calibration.schemes.base import get
from tests.test_json_outputs import errors

N, LABELED = 300, 240


def write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def judge(tmp_path: Path) -> tuple[Path, dict[str, float], dict[str, bool]]:
    return make_judge_project(tmp_path)


def make_judge_project(tmp_path: Path) -> tuple[Path, dict[str, float], dict[str, bool]]:
    """The project file, judge a's score per sample, the human label per labeled sample."""
    rng = np.random.default_rng(0)
    recs, labs, scores, human = [], [], {}, {}
    for i in range(N):
        s = float(np.round(rng.uniform(), 4))
        wrong = rng.uniform() < 0.45 * np.exp(-((s - 0.5) / 0.15) ** 2)
        y = bool((s >= 0.5) != wrong)
        sid = f"s{i}"
        scores[sid] = s
        recs.append({"scheme": "judge", "id": sid, "text": f"text {i}",
                     "judges": {"a": {"score": s}, "b": {"score": float(np.round(rng.uniform(), 4))}}})
        if i < LABELED:
            human[sid] = y
            labs.append({"scheme": "judge", "sample": sid, "annotator": "ana", "label": y})
    path = tmp_path / "j.concord"
    assert main(["init", str(path)]) == 0
    assert main(["import", str(path), str(write(tmp_path / "r.jsonl", recs))]) == 0
    assert main(["labels", "import", str(path), str(write(tmp_path / "l.jsonl", labs))]) == 0
    return path, scores, human


def by_hand(conf: list[float], agree: list[bool], target: float, delta: float) -> int:
    """The decided count Learn-then-Test picks: candidates from the most confident down, stop at the first fail."""
    chosen = 0
    for lam in sorted(set(conf), reverse=True):
        decided = [a for c, a in zip(conf, agree) if c >= lam]
        if len(decided) < min_decided(target, delta):
            continue
        if binom.cdf(decided.count(False), len(decided), 1 - target) > delta:
            break
        chosen = len(decided)
    return chosen


def test_guarantee_json_matches_a_hand_computation_and_the_queue_lists_what_it_defers(
        judge: tuple[Path, dict[str, float], dict[str, bool]], capsys: pytest.CaptureFixture[str]) -> None:
    path, scores, human = judge
    capsys.readouterr()
    argv = ["calibrate", str(path), "--scheme", "judge", "--judge", "a", "--guarantee", "0.9", "--delta", "0.05",
            "--bootstrap", "50", "--seed", "4", "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert errors("calibrate", out) == []
    g = out["guarantee"]
    held = calibration_split(sorted(human), 0.5, 4)
    assert g["calibration_samples"] == len(held) == 120 and g["n"] == 120
    assert out["n_units"] == LABELED - 120  # the search never saw the calibration split
    t = out["best"]["config"]["threshold"]
    assert g["threshold"] == t
    conf = [abs(scores[s] - t) for s in sorted(held)]
    agree = [(scores[s] >= t) == human[s] for s in sorted(held)]
    want = by_hand(conf, agree, 0.9, 0.05)
    assert want > 0 and g["certified"] and g["n_decided"] == want
    assert g["coverage"] == pytest.approx(want / 120) and g["agreement"] >= 0.9
    lo, hi = g["band"]
    assert lo == pytest.approx(t - g["lam"]) and hi == pytest.approx(t + g["lam"])
    assert f"the machine may decide {want / 120:.0%} of units at >= 90% agreement (95% guarantee)" == g["sentence"]
    # the queue: exactly the unlabeled units inside the band, nearest the threshold first
    assert main(["queue", str(path), "--order", "deferred", "--limit", "1000", "--json"]) == 0
    q = json.loads(capsys.readouterr().out)
    listed = [(u["sample_id"], u["unit"]) for u in q["units"]]
    inside = {(s, "a") for s in scores if s not in human and lo < scores[s] < hi}
    assert set(listed) == inside and len(listed) == len(inside) > 0
    dist = [abs(scores[s] - t) for s, _ in listed]
    assert dist == sorted(dist)


def test_guarantee_sentence_printed_and_refusals(judge: tuple[Path, dict[str, float], dict[str, bool]],
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    path = judge[0]
    capsys.readouterr()
    assert main(["calibrate", str(path), "--scheme", "judge", "--judge", "a", "--guarantee", "0.9",
                 "--bootstrap", "20"]) == 0
    text = capsys.readouterr().out
    assert "The machine may decide " in text and "% of units at >= 90% agreement (95% guarantee)." in text
    assert "calibration split of 120 labeled samples" in text
    # a vote of judges decides by no single score: no band to defer on (exit 2, nothing stored)
    with Project.open(path) as p:
        runs = len(p.artifacts.calibration_runs())
    assert main(["calibrate", str(path), "--scheme", "judge", "--target", "vote", "--guarantee", "0.9",
                 "--bootstrap", "0"]) == 2
    assert "no band of scores to defer on" in capsys.readouterr().err
    with Project.open(path) as p:
        assert len(p.artifacts.calibration_runs()) == runs
    assert main(["calibrate", str(path), "--scheme", "judge", "--delta", "0.1"]) == 2
    assert "--delta: only with --guarantee" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:  # the parser refuses a target outside (0, 1)
        main(["calibrate", str(path), "--scheme", "judge", "--guarantee", "1.5"])
    assert exc.value.code == 2 and "--guarantee: expected a number in (0, 1)" in capsys.readouterr().err
    # the judge scheme's references: a known one passes, an unknown one is named with the choices
    assert main(["calibrate", str(path), "--scheme", "judge", "--judge", "a", "--reference", "majority",
                 "--bootstrap", "0", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["reference"] == "majority"
    assert main(["calibrate", str(path), "--scheme", "judge", "--reference", "annotator"]) == 2
    err = capsys.readouterr().err
    assert "--reference annotator" in err and "any (" in err and "adjudicated (" in err


def test_reference_refused_for_a_scheme_without_a_choice() -> None:
    with pytest.raises(UsageError, match="offers no choice of reference"):
        check_reference(get("violations"), "annotator")
    assert check_reference(get("violations"), None) is None
    assert check_reference(get("trace"), "annotator").released


def test_reference_refused_by_the_cli_for_violations(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "v.concord"
    assert main(["init", str(path)]) == 0
    rows = [{"id": f"v{i}", "text": "Act now: the only cream that works, guaranteed!",
             "ground_truth": [{"quote": "guaranteed", "rule": "No guarantees"}],
             "predictions": {"chk@1|m": [{"quote": "Act now", "rule": "No pressure"}]}} for i in range(3)]
    assert main(["import", str(path), str(write(tmp_path / "v.jsonl", rows))]) == 0
    capsys.readouterr()
    assert main(["calibrate", str(path), "--scheme", "violations", "--reference", "annotator"]) == 2
    assert "offers no choice of reference" in capsys.readouterr().err


def test_trace_calibrated_against_released_annotator_labels_without_human_labels(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """RAGBench-like records: the annotator's unsupported sentences decide adherence; judge j1's adherence score
    is high when the response is adherent (noisy), j2 is noise. No human label in the project."""
    from tests.test_trace_data import keyed_record

    rng = np.random.default_rng(2)
    rows, truth, j1 = [], {}, {}
    for i in range(80):
        unsup = ["b"] if rng.random() < 0.4 else []
        adherent = not unsup
        s = float(np.clip((0.75 if adherent else 0.3) + rng.normal(0, 0.12), 0, 1))
        rows.append(keyed_record(f"t{i}", doc_sizes=(2,), n_response=2, all_relevant_sentence_keys=["0a"],
                                 all_utilized_sentence_keys=["0a"], unsupported_response_sentence_keys=unsup,
                                 judges={"j1": {"adherence": s}, "j2": {"adherence": float(rng.random())}}))
        truth[f"t{i}"], j1[f"t{i}"] = adherent, s
    path = tmp_path / "t.concord"
    assert main(["init", str(path)]) == 0
    assert main(["import", str(path), str(write(tmp_path / "t.jsonl", rows))]) == 0
    capsys.readouterr()
    assert main(["calibrate", str(path), "--scheme", "trace", "--bootstrap", "0"]) == 2  # human reference: none
    assert "no human decisions yet" in capsys.readouterr().err
    assert main(["calibrate", str(path), "--scheme", "trace", "--reference", "annotator", "--judge", "j1",
                 "--bootstrap", "50", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert errors("calibrate", out) == [] and out["reference"] == "annotator"
    assert out["n_units"] == 80 and out["n_items"] == 80  # every sample's j1 against its released verdict
    t = out["best"]["params"]["threshold"]
    assert out["best"]["params"]["variant"] == "ragbench"
    acc = np.mean([(j1[s] >= t) == truth[s] for s in truth])
    best_acc = max(np.mean([(j1[s] >= c) == truth[s] for s in truth]) for c in np.linspace(0, 1, 101))
    assert acc >= best_acc - 0.05 and acc > 0.85  # the threshold separates the released verdicts
    # guaranteed against the released labels: the queue lists the units nobody labeled that the band defers
    assert main(["calibrate", str(path), "--scheme", "trace", "--reference", "annotator", "--judge", "j1",
                 "--guarantee", "0.8", "--bootstrap", "0", "--folds", "3", "--json"]) == 0
    g = json.loads(capsys.readouterr().out)["guarantee"]
    assert g["calibration_samples"] == 40 and g["n"] == 40 and g["certified"]
    assert main(["queue", str(path), "--order", "deferred", "--limit", "1000", "--json"]) == 0
    listed = {(u["sample_id"], u["unit"]) for u in json.loads(capsys.readouterr().out)["units"]}
    t, lam = g["threshold"], g["lam"]
    want = {(s, "j1") for s in truth if abs(j1[s] - t) < lam}
    assert listed == want and 0 < len(want) < 80
    assert main(["calibrate", str(path), "--scheme", "trace", "--reference", "annotator", "--judge", "annotator",
                 "--bootstrap", "0"]) == 2
    assert "the annotator is the reference" in capsys.readouterr().err
