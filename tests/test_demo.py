"""The bundled demo project: it builds through the real importers, has the promised shape, and its data is exact."""
from __future__ import annotations

import json
import runpy
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from app.cli import main as cli_main
from app.errors import UsageError
from app.io.demo import create_demo, demo_dir, import_demo
from app.store import Project
from calibration.schemes.violations.config import STD_MATCH, Thresholds
from calibration.schemes.violations.matching import match
from calibration.schemes.violations.pairs import build_pair_table
from calibration.schemes.violations.records import Violation

CHECKERS = {
    "prompt-baseline@1.1.0|gpt-3.5-turbo-0613",
    "brute-context-classifier@1.7.5|gpt-3.5-turbo-0613",
    "zeroshot-index@2.2.5|gpt-3.5-turbo-0613",
    "self-consistent-explainer@2.1.3|gpt-3.5-turbo-0613",
}


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Project]:
    project = create_demo(tmp_path_factory.mktemp("demo") / "demo.concord")
    yield project
    project.close()


def _jsonl(name: str) -> list[dict]:
    return [json.loads(line) for line in (demo_dir() / name).read_text(encoding="utf-8").splitlines()]


def test_demo_has_the_promised_shape(demo: Project) -> None:
    samples = demo.store("violations").violation_samples()
    assert 55 <= len(samples) <= 65
    assert set(demo.store("violations").checkers()) == CHECKERS
    assert {s.split for s in samples} == {"train", "test"}
    assert 0.2 <= sum(s.split == "test" for s in samples) / len(samples) <= 0.4
    assert sum(not s.ground_truth for s in samples) >= 3  # a few texts with nothing wrong
    n_gt = sum(len(s.ground_truth) for s in samples)
    assert 60 <= n_gt <= 120
    assert {v.category for s in samples for v in s.ground_truth} >= {"compliance", "brand", "legal", "tone"}
    # every checker behaves differently: the over-flagger predicts most, the baseline least
    n_pred = {c: sum(len(s.predictions.get(c, ())) for s in samples) for c in CHECKERS}
    assert n_pred["brute-context-classifier@1.7.5|gpt-3.5-turbo-0613"] > n_gt > n_pred["prompt-baseline@1.1.0|gpt-3.5-turbo-0613"]

    rubric_ids = {u["sample_id"] for u in demo.store("rubric").rubric_units()}
    assert 18 <= len(rubric_ids) <= 22
    modes = {t["evaluation_mode"] for t in demo.store("rubric").traits()}
    assert modes == {"tp_only", "full_matrix"}
    assert demo.table_counts()["match_configs"] == 2
    assert {"std_match@1.0.0", "ha_match@1.0.0"} <= set(demo.store("violations").match_config_refs())


def test_about_half_is_labeled_by_two_annotators(demo: Project) -> None:
    human = demo.store("violations").human_matches()
    labeled = {sid for sid, _ in human}
    assert 25 <= len(labeled) <= 35
    assert {c for _, c in human} == CHECKERS
    assert {"alice", "bob"} <= set(demo.decisions.annotators())
    assert sum(len(pairs) for pairs in human.values()) >= 60
    buckets = demo.store("rubric").human_buckets()
    assert 8 <= len({sid for sid, _ in buckets}) <= 12
    # the human corrections really differ from the LLM's buckets somewhere, and are verbatim in the response
    changed = 0
    for (sid, trait), b in buckets.items():
        response = demo.store("rubric").rubric_sample(sid)["response"]
        assert all(x in response for x in b["tp"] + b["fp"]), (sid, trait)
        changed += b != demo.store("rubric").bucket_assignment(sid, trait, source="import")["buckets"]
    assert changed >= 5


def test_offsets_agree_with_quotes(demo: Project) -> None:
    records = _jsonl("violations.jsonl")
    seen = 0
    for rec in records:
        for v in rec["ground_truth"] + [v for vs in rec["predictions"].values() for v in vs]:
            if "start" in v and "quote" in v:
                assert rec["text"][v["start"]:v["end"]] == v["quote"], (rec["id"], v)
                seen += 1
    assert seen > 300
    # in the project too, including quotes placed by grounding (exact or case-insensitive)
    by_id = {s.id: s for s in demo.store("violations").violation_samples()}
    hows = set()
    for sid, s in by_id.items():
        groundings = demo.store("violations").violation_groundings(sid)
        lists = [("", s.ground_truth)] + sorted(s.predictions.items())
        for checker, vs in lists:
            for v, how in zip(vs, groundings.get(checker, [])):
                hows.add(how)
                if how in ("offsets", "exact") and v.quote is not None:
                    assert s.text[v.start:v.end] == v.quote
                elif how == "casefold":
                    assert s.text[v.start:v.end].casefold() == v.quote.casefold()
    assert {"offsets", "exact", "casefold", "fuzzy", "ungrounded"} <= hows
    # the texts really exercise code-point offsets (emoji outside the BMP, a right-to-left word)
    texts = "".join(s.text for s in by_id.values())
    assert any(ord(ch) > 0xFFFF for ch in texts) and "\u05d7" in texts


def test_importing_again_changes_nothing(demo: Project) -> None:
    before = demo.table_counts()
    events = len(demo.decisions.events())
    import_demo(demo)
    assert demo.table_counts() == before
    assert len(demo.decisions.events()) == events


def _rule_only(v: Violation) -> Violation:
    return replace(v, explanation=None, correction=None)


def test_human_judgement_differs_from_std_match(demo: Project) -> None:
    """Calibration has something to find: std_match defaults disagree with the humans in both directions,
    and a stricter rule threshold removes the wrong-rule matches humans reject."""
    human = demo.store("violations").human_matches()
    # std_match reads only overlap and rule: drop the other text fields so only the rules are embedded (fast)
    samples = [
        replace(s, ground_truth=tuple(map(_rule_only, s.ground_truth)),
                predictions={c: tuple(map(_rule_only, vs)) for c, vs in s.predictions.items()})
        for s in demo.store("violations").violation_samples(sorted({sid for sid, _ in human}))
    ]
    table = build_pair_table(samples, STD_MATCH.embedding, cache=demo.caches)
    g = table.groups
    keys = list(zip(g["sample_id"], g["checker"]))
    p = table.pairs
    labeled = np.array([keys[i] in human for i in p["group"]])
    truth = np.array([(int(gt), int(pr)) in human.get(keys[gi], set())
                      for gi, gt, pr in zip(p["group"], p["gt"], p["pred"])])

    def confusion(config) -> tuple[int, int, int]:
        m = match(table, config)[labeled]
        t = truth[labeled]
        return int((m & t).sum()), int((m & ~t).sum()), int((~m & t).sum())

    agree, machine_only, human_only = confusion(STD_MATCH)
    assert machine_only > 0 and human_only > 0
    assert agree > 4 * (machine_only + human_only)  # mostly agree: the labels are not noise
    # humans never accept a different rule but accept paraphrases with little overlap: a rule threshold instead
    # of a score threshold agrees with them better
    calibrated = STD_MATCH.with_(thresholds=Thresholds(overlap=0.0, rule=0.4, match=0.0))
    _, c_machine_only, c_human_only = confusion(calibrated)
    assert c_machine_only < machine_only and c_human_only < human_only


def test_generator_reproduces_the_committed_files(tmp_path: Path) -> None:
    module = runpy.run_path(str(demo_dir() / "make_demo_data.py"), run_name="demo_generator")
    module["main"](tmp_path)
    for name in ("violations.jsonl", "rubric.jsonl", "labels.jsonl"):
        assert (tmp_path / name).read_bytes() == (demo_dir() / name).read_bytes(), name


def test_cli_refuses_to_overwrite_without_force(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "d" / "demo.concord"
    target.parent.mkdir()
    target.write_bytes(b"precious")
    assert cli_main(["demo", str(target)]) == 2
    assert "--force" in capsys.readouterr().err
    assert target.read_bytes() == b"precious"
    assert cli_main(["demo", str(target), "--force"]) == 0
    n = len(_jsonl("violations.jsonl"))
    out = capsys.readouterr().out
    assert f"violations: {n} samples, {n * len(CHECKERS)} units" in out  # every scheme counted as status counts
    with Project.open(target) as project:
        assert len(project.store("violations").violation_samples()) == n
    with pytest.raises(UsageError):
        create_demo(target)


def test_a_failed_build_leaves_no_half_built_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    broken = tmp_path / "data"
    broken.mkdir()
    for name in ("violations.jsonl", "rubric.jsonl", "labels.jsonl"):
        (broken / name).write_bytes((demo_dir() / name).read_bytes())
    lines = (broken / "labels.jsonl").read_text(encoding="utf-8").splitlines()
    bad = json.loads(lines[3])
    bad["matches"] = [[99, 0]]  # out of range: the labels import must refuse the whole file
    lines[3] = json.dumps(bad)
    (broken / "labels.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.setattr("app.io.demo.demo_dir", lambda: broken)
    target = tmp_path / "demo.concord"
    with pytest.raises(UsageError, match=r"labels.jsonl:4: matches\[0\]\[0\]"):
        create_demo(target)
    assert not target.exists()


def test_addm_demo_businesses_methods_and_human_decisions(demo: Project) -> None:
    from calibration.schemes.addm.scheme import SCHEME as ADDM

    records = demo.samples.records("addm")
    assert len(records) == 15
    assert {m for r in records for m in r.methods} == {"amos|demo-model", "direct|demo-model"}
    assert {r.verdict for r in records} == {0, 1, 2}  # every verdict occurs
    labeled = {r.id for r in records if demo.decisions.sample_labels(r.id).get(("", "verdict")) is not None}
    assert len(labeled) == 8
    # the humans differ from the record's ground truth somewhere (verdicts and incidents), so calibration has work
    differ = [r.id for r in records if r.id in labeled and demo.decisions.sample_labels(r.id)[("", "verdict")] != ADDM.to_json(r)["ground_truth"]["verdict"]]
    assert differ
    assert any(demo.decisions.sample_labels(r.id)[("", "incidents")] != ADDM.to_json(r)["ground_truth"]["incidents"] for r in records if r.id in labeled)
    quality = [v for r in records for (u, k), v in demo.decisions.sample_labels(r.id).items() if k == "quality"]
    assert len(quality) >= 12 and set(quality) <= {1, 2, 3, 4, 5} and len(set(quality)) >= 3
    # the amos method is consistent by construction, direct is not; snippets of direct that were paraphrased are ungrounded
    ev = ADDM.evaluate(records, {}, {"n_boot": 0}).data["policies"]["addm_v2"]["methods"]
    assert ev["amos|demo-model"]["consistency_score"] == 100.0 > ev["direct|demo-model"]["consistency_score"]
    assert ev["direct|demo-model"]["process_components"]["snippet_validity"] < 1.0


def test_addm_generator_reproduces_the_committed_files(tmp_path: Path) -> None:
    module = runpy.run_path(str(demo_dir() / "demo_addm.py"), run_name="demo_addm_generator")
    module["main"](tmp_path)
    for name in ("addm.jsonl", "addm_labels.jsonl"):
        assert (tmp_path / name).read_bytes() == (demo_dir() / name).read_bytes(), name


def test_rgb_demo_two_models_four_tasks_and_human_decisions(demo: Project) -> None:
    from calibration.schemes.rgb.scheme import SCHEME as RGB

    records = demo.samples.records("rgb")
    assert len(records) == 12
    assert {r.task for r in records} == {"noise", "rejection", "integration", "counterfactual"}
    assert {r.language for r in records} == {"en", "zh"}
    assert all(r.units == ("atlas-7b", "borealis-13b") for r in records)
    units = [(r.id, u) for r in records for u in r.units]
    labels = {k: {kind: demo.decisions.sample_labels(k[0]).get((k[1], kind)) for kind in RGB.label_kinds} for k in units}
    judged = [k for k, v in labels.items() if v["correct"] is not None]
    assert 0.4 <= len(judged) / len(units) <= 0.6  # about half
    # both checkers disagree with the human somewhere, and not in the same places
    report = RGB.evaluate(records, {k: v for k, v in labels.items() if v["correct"] is not None}, {"n_boot": 0})
    agree = {(row["Source"], row["Decision"]): row["Agree %"] for row in report.data["agreement"]}
    assert agree[("rgb_original", "correct")] < 100 and agree[("rgb_original", "rejected")] < 100
    assert agree[("rgb_extended", "rejected")] < 100
    noise = {(row["Source"], row["Model"], row["Task"]) for row in report.data["noise"]}
    assert {("rgb_original", "atlas-7b", "noise"), ("human", "borealis-13b", "noise")} <= noise


def test_rgb_generator_reproduces_the_committed_files(tmp_path: Path) -> None:
    module = runpy.run_path(str(demo_dir() / "demo_rgb.py"), run_name="demo_rgb_generator")
    module["main"](tmp_path)
    for name in ("rgb.jsonl", "rgb_labels.jsonl"):
        assert (tmp_path / name).read_bytes() == (demo_dir() / name).read_bytes(), name


def test_trace_demo_annotator_mistakes_two_judges_and_human_decisions(demo: Project) -> None:
    from calibration.schemes.trace.scheme import SCHEME as TRACE

    records = demo.samples.records("trace")
    assert len(records) == 20
    assert all(set(r.judges) == {"lumen-judge", "quill-judge"} for r in records)
    labels = {(r.id, ""): {k: demo.decisions.sample_labels(r.id).get(("", k)) for k in TRACE.label_kinds} for r in records}
    labels = {k: v for k, v in labels.items() if v["relevant"] is not None}
    assert len(labels) == 10  # about half
    statuses = {demo.decisions.sample_labels(sid).get(("annotator", "status")) for sid, _ in labels}
    assert statuses == {"accepted", "corrected"}
    data = TRACE.evaluate(records, labels, {"n_boot": 0}).data
    assert data["human_samples"] == 10
    for kind in ("relevant", "utilized", "supported"):  # the annotator's mistakes show as disagreement
        assert data["labels"][kind]["kappa"][0] < 1.0
    judges = data["judges"]["ragbench"]["all"]
    assert judges["lumen-judge"]["hallucination_auroc"][0] > judges["quill-judge"]["hallucination_auroc"][0]


def test_trace_generator_reproduces_the_committed_files(tmp_path: Path) -> None:
    module = runpy.run_path(str(demo_dir() / "demo_trace.py"), run_name="demo_trace_generator")
    module["main"](tmp_path)
    for name in ("trace.jsonl", "trace_labels.jsonl"):
        assert (tmp_path / name).read_bytes() == (demo_dir() / name).read_bytes(), name
