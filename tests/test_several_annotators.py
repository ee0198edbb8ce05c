"""Issue #15, store/CLI half: assignment, adjudication and resolution policies, curated ground truth, agreement
figures against hand computation, merge of annotators' copies."""
from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

import pytest

from app.cli import main
from app.services.agreement import agreement
from app.store import Change, Project
from app.store.merge import MergeError, merge
from app.store.resolution import ADJUDICATION
from calibration.schemes.violations import Violation, ViolationSample

TEXT = "The cat sat on the mat. It was red and tall."


def samples(n: int = 4, checkers: tuple[str, ...] = ("c1@1|m", "c2@1|m")) -> list[ViolationSample]:
    v = (Violation("r", 4, 7), Violation("q", 24, 26))
    return [ViolationSample(f"s{i}", TEXT, v, {c: v for c in checkers}) for i in range(n)]


def make(path: Path, n: int = 4) -> Project:
    p = Project.create(path)
    p.store("violations").write_violation_samples(samples(n))
    return p


def test_assign_work_gives_each_unit_overlap_annotators_stratified(tmp_path: Path) -> None:
    p = make(tmp_path / "p.concord", n=6)  # 12 units: 6 per checker
    assert not p.assignments.blind()
    out = p.assignments.assign_work(["ana", "ben", "cy"], 2, seed=3)
    assert out["units"] == 12 and out["assignments"] == 24 and out["strata"] == 2
    per_unit = Counter((s, u) for a in ("ana", "ben", "cy") for s, u in p.assignments.assigned_units(a))
    assert set(per_unit.values()) == {2} and len(per_unit) == 12
    for checker in ("c1@1|m", "c2@1|m"):  # every annotator gets 4 of the 6 units of each checker
        assert [sum(u == checker for _, u in p.assignments.assigned_units(a)) for a in ("ana", "ben", "cy")] == [4, 4, 4]
    assert p.assignments.blind()  # on once work is assigned
    first, second = p.assignments.assigned_units("ana")[:2]
    p.decisions.record("ana", [Change(*first, "status", "accepted"), Change(*second, "status", "flagged")])
    p.decisions.record("ben", [Change(*first, "status", "flagged")])
    assert p.assignments.annotator_statuses("ana") == {first: "accepted", second: "flagged"}  # hers, not the resolved ones
    assert p.assignments.queue_progress("ana") == (1, 8)
    p.assignments.set_blind(False)
    assert not p.assignments.blind()
    again = p.assignments.assign_work(["ana", "ben", "cy"], 2, seed=3)
    assert again["units"] == 0  # already assigned units keep their annotators
    with pytest.raises(ValueError, match="overlap"):
        p.assignments.assign_work(["ana"], 2)
    p.close()
    assert main(["assign-work", str(tmp_path / "p.concord"), "--annotators", "ana,ben", "--overlap", "2", "--replace",
                 "--json"]) == 0
    with Project.open(tmp_path / "p.concord") as q:
        assert len(q.assignments.assigned_units("ana")) == len(q.assignments.assigned_units("ben")) == 12 and q.assignments.assigned_units("cy") == []


def test_adjudication_resolves_a_disagreement_and_the_policy_is_configurable(tmp_path: Path) -> None:
    p = make(tmp_path / "p.concord")
    target = ("s0", "c1@1|m", "matches")
    p.decisions.record("ana", [Change(*target, [[0, 0]])])
    p.decisions.record("ben", [Change(*target, [[0, 0]])])
    p.decisions.record("cy", [Change(*target, [])])
    assert p.decisions.current(*target) == [[0, 0]]  # majority
    p.decisions.set_resolution_policy("newest")
    assert p.decisions.resolution_policy() == "newest" and p.decisions.current(*target) == []  # cy is the newest
    p.decisions.set_resolution_policy("majority")
    assert p.decisions.current(*target) == [[0, 0]]
    p.decisions.adjudicate("judge", [Change(*target, [])])
    assert p.decisions.current(*target) == []  # the adjudicated label wins over the majority
    assert p.decisions.events("s0")[-1]["origin"] == "adjudication"
    assert p.decisions.annotator_labels(*target)["ana"] == [[0, 0]]  # every annotator's label is kept
    with pytest.raises(ValueError, match="resolution"):
        p.decisions.set_resolution_policy("loudest")
    p.close()
    assert main(["config", str(tmp_path / "p.concord"), "--resolution", "newest"]) == 0
    with Project.open(tmp_path / "p.concord") as q:
        assert q.decisions.resolution_policy() == "newest" and q.decisions.current(*target) == []


def test_ground_truth_lines_are_validated_and_the_curated_truth_is_what_evaluation_reads(tmp_path: Path) -> None:
    path = tmp_path / "p.concord"
    make(path).close()
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"sample": "s0", "annotator": "ana", "ground_truth": [{"start": 3, "end": 99, "rule": "x"}]})
                   + "\n" + json.dumps({"sample": "nope", "annotator": "ana", "spans": []}) + "\n")
    assert main(["labels", "import", str(path), str(bad)]) == 2
    with Project.open(path) as p:
        assert p.decisions.events() == []  # nothing recorded
    good = tmp_path / "gt.jsonl"
    good.write_text("\n".join(json.dumps(x) for x in [
        {"sample": "s0", "annotator": "ana", "ground_truth": [{"quote": "cat", "rule": "r"}]},
        {"sample": "s0", "annotator": "ben", "spans": [{"start": 4, "end": 7, "label": ["Unwanted.Intrinsic"]}]},
    ]) + "\n")
    assert main(["labels", "import", str(path), str(good)]) == 0
    with Project.open(path) as p:
        assert p.decisions.current("s0", "", "ground_truth", "ana") == [{"start": 4, "end": 7, "quote": "cat", "rule": "r"}]
        assert p.decisions.current("s0", "", "ground_truth", "ben") == [
            {"start": 4, "end": 7, "rule": "Unwanted.Intrinsic", "category": "Unwanted"}]
        curated = {s.id: s for s in p.store("violations").violation_samples(curated=True)}
        assert [v.rule for v in curated["s0"].ground_truth] == ["Unwanted.Intrinsic"]  # ben's is the newest
        assert len(curated["s1"].ground_truth) == 2  # no curation: the file's ground truth
        assert len(p.store("violations").violation_sample("s0").ground_truth) == 2  # the stored samples are untouched


def test_agreement_equals_hand_computed_values(tmp_path: Path) -> None:
    """Two annotators, 4 units x 4 (gt, pred) items of matches; one disagreement. Hand: 16 items, ana has 8 ones,
    ben 7 (one 1 -> 0): p_o = 15/16; p_e = (8*7 + 8*9)/256 = 0.5; kappa = (15/16 - 1/2)/(1/2) = 0.875."""
    p = make(tmp_path / "p.concord", n=5)
    for i in range(4):
        p.decisions.record("ana", [Change(f"s{i}", "c1@1|m", "matches", [[0, 0], [1, 1]])])
        p.decisions.record("ben", [Change(f"s{i}", "c1@1|m", "matches", [[0, 0], [1, 1]] if i else [[0, 0]])])
    # spans (on s4, which has no matches: match indices refer to the curated ground truth where there is one):
    # ana [4,7) and [24,26); ben [4,9) -> IoU 3/5 matches, so F1 = 2*1/(2+1)
    p.decisions.record("ana", [Change("s4", "", "ground_truth", [{"start": 4, "end": 7, "rule": "r"}, {"start": 24, "end": 26, "rule": "q"}])])
    p.decisions.record("ben", [Change("s4", "", "ground_truth", [{"start": 4, "end": 9, "rule": "r"}])])
    p.decisions.log_time("ana", "s0", "c1@1|m", 10.0)
    p.decisions.log_time("ana", "s1", "c1@1|m", 20.0)
    out = agreement(p, n_boot=200, iou=0.0)
    m = out["schemes"]["violations"]["matches"]
    assert m["pairs"][0]["kappa"]["estimate"] == pytest.approx(0.875)
    assert m["overall"]["kappa"]["estimate"] == pytest.approx(1 - (1 / 16) / (1 - (7.5 / 16) ** 2 - (8.5 / 16) ** 2))
    assert out["overall"]["span_f1"]["estimate"] == pytest.approx(2 / 3)
    assert out["pairs"][0]["span_precision"] == pytest.approx(1.0) and out["pairs"][0]["span_recall"] == pytest.approx(0.5)
    assert out["overall"]["span_f1"]["low"] <= 2 / 3 <= out["overall"]["span_f1"]["high"]
    strict = agreement(p, n_boot=0, iou=0.6)  # IoU 0.6 is not > 0.6: nothing matches
    assert strict["overall"]["span_f1"]["estimate"] == 0.0
    ana = next(a for a in out["annotators"] if a["annotator"] == "ana")
    assert ana["seconds_per_unit"] == pytest.approx(15.0) and ana["n_units"] == 5  # 4 checker units + s4
    p.close()
    assert main(["agreement", str(tmp_path / "p.concord"), "--json", "--bootstrap", "50"]) == 0


def _labels(p: Project) -> list[tuple]:
    return sorted((r["sample_id"], r["unit"], r["kind"], r["annotator"], r["value"], r["resolved"])
                  for r in p.query("SELECT * FROM labels"))


def test_merge_of_two_files_equals_labeling_both_in_one_file(tmp_path: Path) -> None:
    base = make(tmp_path / "base.concord")
    base.backup_to(tmp_path / "a.concord")
    base.backup_to(tmp_path / "b.concord")
    base.backup_to(tmp_path / "one.concord")
    base.close()
    a, b, one = (Project.open(tmp_path / f"{n}.concord") for n in ("a", "b", "one"))
    steps = [("ana", a, "s0", [[0, 0]]), ("ben", b, "s0", []), ("ana", a, "s1", [[1, 1]]), ("ben", b, "s1", [[1, 1]]),
             ("cy", b, "s0", [[0, 0]]), ("ana", a, "s0", [])]
    for who, proj, sid, value in steps:  # the same decisions, in the same order, in copies and in one file
        proj.decisions.record(who, [Change(sid, "c1@1|m", "matches", value)])
        one.decisions.record(who, [Change(sid, "c1@1|m", "matches", value)])
        # merge orders events by their millisecond timestamps (ties: input file order), so the steps must be at
        # least a millisecond apart for "the same order" to be well defined; without this the test was flaky
        time.sleep(0.003)
    a.decisions.log_time("ana", "s0", "c1@1|m", 5.0)
    for proj in (a, b):
        proj.close()
    report = merge(tmp_path / "out.concord", [tmp_path / "a.concord", tmp_path / "b.concord"])
    assert report.created and report.conflicts == []
    with Project.open(tmp_path / "out.concord") as out:
        assert _labels(out) == _labels(one)
        assert [(e["annotator"], e["after"]) for e in out.decisions.events()] == [(e["annotator"], e["after"]) for e in one.decisions.events()]
        assert out.decisions.current("s0", "c1@1|m", "matches") == one.decisions.current("s0", "c1@1|m", "matches")
        events = out.query("SELECT * FROM events ORDER BY id")
        labels = _labels(out)
        assert out.decisions.time_spent() == 5.0
    again = merge(tmp_path / "out.concord", [tmp_path / "a.concord", tmp_path / "b.concord"])
    assert not again.changed
    with Project.open(tmp_path / "out.concord") as out:  # merging twice changes nothing
        assert out.query("SELECT * FROM events ORDER BY id") == events and _labels(out) == labels
        assert out.decisions.time_spent() == 5.0
    one.close()


def test_merge_reports_conflicts_and_refuses_different_samples(tmp_path: Path) -> None:
    base = make(tmp_path / "base.concord")
    base.backup_to(tmp_path / "a.concord")
    base.backup_to(tmp_path / "b.concord")
    base.close()
    with Project.open(tmp_path / "a.concord") as a:
        a.decisions.record("ana", [Change("s0", "c1@1|m", "matches", [[0, 0]])])
    with Project.open(tmp_path / "b.concord") as b:
        b.decisions.record("ana", [Change("s0", "c1@1|m", "matches", [])])  # the same annotator, differently, later
    report = merge(tmp_path / "out.concord", [tmp_path / "a.concord", tmp_path / "b.concord"])
    assert [(c["annotator"], c["output"], c["input_value"], c["kept"]) for c in report.conflicts] == [
        ("ana", [[0, 0]], [], "input")]
    with Project.open(tmp_path / "out.concord") as out:
        assert len([e for e in out.decisions.events() if e["kind"] == "matches"]) == 2  # both kept
        assert out.decisions.current("s0", "c1@1|m", "matches", "ana") == []
    other = Project.create(tmp_path / "other.concord")
    other.store("violations").write_violation_samples([ViolationSample("s0", "a different text", (), {"c1@1|m": ()})])
    other.close()
    with Project.open(tmp_path / "out.concord") as out:
        before = out.query("SELECT * FROM events ORDER BY id")
    with pytest.raises(MergeError, match="different content"):
        merge(tmp_path / "out.concord", [tmp_path / "other.concord"])
    assert main(["merge", str(tmp_path / "out.concord"), str(tmp_path / "other.concord")]) == 2
    with Project.open(tmp_path / "out.concord") as out:
        assert out.query("SELECT * FROM events ORDER BY id") == before and len(before) == 2  # nothing written


def test_the_human_ceiling_beside_the_metric(tmp_path: Path) -> None:
    """ana and ben as in the hand-computed case (kappa 0.875); the stored machine label agrees with ana on every item,
    and ben's labels resolve (one against one: the newest), so metric vs resolved = 0.875 and vs each = (1 + 0.875)/2."""
    from app.services.ceiling import ceiling

    p = make(tmp_path / "p.concord", n=5)
    assert ceiling(p, "violations", n_boot=0) is None  # nobody labeled a unit twice
    for i in range(4):
        p.decisions.record("ana", [Change(f"s{i}", "c1@1|m", "matches", [[0, 0], [1, 1]])])
        p.decisions.record("ben", [Change(f"s{i}", "c1@1|m", "matches", [[0, 0], [1, 1]] if i else [[0, 0]])])
    p.decisions.record("ana", [Change("s4", "c1@1|m", "matches", [[0, 0]])])  # one annotator only: not in the ceiling
    human_only = ceiling(p, "violations", n_boot=100)
    assert human_only["units"] == 4 and human_only["metric_human"] is None and human_only["note"]
    assert human_only["human_human"]["mean_pair_kappa"] == pytest.approx(0.875)
    for i in range(5):
        p.samples.save_machine_label(f"s{i}", "c1@1|m", "matcher", {"predictions": [], "matches": [[0, 0], [1, 1]]})
    c = ceiling(p, "violations", n_boot=200)
    assert c["metric_human"]["items"] == 16
    assert c["metric_human"]["kappa_vs_resolved"]["estimate"] == pytest.approx(0.875)
    assert c["metric_human"]["mean_kappa_vs_each"] == pytest.approx((1 + 0.875) / 2)
    k = c["human_human"]["kappa"]
    assert k["low"] <= k["estimate"] <= k["high"]


def test_export_carries_every_annotators_labels_agreement_and_the_curated_ground_truth(tmp_path: Path) -> None:
    path = tmp_path / "p.concord"
    p = make(path)
    p.decisions.record("ana", [Change("s3", "", "ground_truth", [{"start": 4, "end": 7, "rule": "r", "quote": "cat"}])])
    for i in range(4):  # on s3 the match indices refer to ana's curated ground truth (one violation)
        both = [[0, 0], [1, 1]] if i < 3 else [[0, 0]]
        for who, value in (("ana", both), ("ben", both if i else [[0, 0]])):
            p.decisions.record(who, [Change(f"s{i}", "c1@1|m", "matches", value), Change(f"s{i}", "c1@1|m", "status", "accepted")])
    p.decisions.record("judge", [Change("s0", "c1@1|m", "matches", [[0, 0], [1, 1]])], origin=ADJUDICATION)
    p.close()
    out = tmp_path / "out"
    assert main(["export", str(path), "--name", "team", "--version", "1.0.0", "--out", str(out), "--format", "jsonl"]) == 0
    d = out / "team@1.0.0"
    m = json.loads((d / "manifest.json").read_text())
    ia = m["inter_annotator"]
    assert ia["annotators"] == ["ana", "ben", "judge"] and ia["resolution"].startswith("adjudicated, else majority")
    mine = {(x["sample"], x["annotator"]): x["value"] for x in ia["labels"] if x["kind"] == "matches"}
    assert mine[("s0", "ben")] == [[0, 0]] and mine[("s0", "judge")] == [[0, 0], [1, 1]]
    assert [x["annotator"] for x in ia["labels"] if x["kind"] == "matches" and x["sample"] == "s0" and x["resolved"]] == ["judge"]
    assert ia["agreement"]["overall"]["kappa"]["estimate"] is not None
    assert "## Annotators" in (d / "README.md").read_text() and "Fleiss' kappa" in (d / "README.md").read_text()
    records = {json.loads(line)["id"]: json.loads(line) for line in (d / "violations.jsonl").read_text().splitlines()}
    assert [v["rule"] for v in records["s3"]["ground_truth"]] == ["r"]  # the curated ground truth
    assert [v["rule"] for v in records["s1"]["ground_truth"]] == ["r", "q"]  # no curation: the file's


def test_evaluate_reports_the_ceiling_with_the_matchers_decisions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The violations matcher links identical violations (its decisions equal ana's labels), so on the units ana
    and ben both labeled: metric vs each = (1 + 0.875) / 2, metric vs the resolved label (ben's, the newest) = 0.875."""
    path = tmp_path / "p.concord"
    p = make(path, n=5)
    for i in range(4):
        p.decisions.record("ana", [Change(f"s{i}", "c1@1|m", "matches", [[0, 0], [1, 1]])])
        p.decisions.record("ben", [Change(f"s{i}", "c1@1|m", "matches", [[0, 0], [1, 1]] if i else [[0, 0]])])
    p.close()
    assert main(["evaluate", str(path), "--scheme", "violations", "--embedding", "jaccard", "--bootstrap", "50",
                 "--json"]) == 0
    ceiling = json.loads(capsys.readouterr().out)["violations"]["human_ceiling"]
    assert ceiling["units"] == 4 and ceiling["human_human"]["mean_pair_kappa"] == pytest.approx(0.875)
    mh = ceiling["metric_human"]
    assert mh["items"] == 16
    assert mh["mean_kappa_vs_each"] == pytest.approx((1 + 0.875) / 2)
    assert mh["kappa_vs_resolved"]["estimate"] == pytest.approx(0.875)


def test_new_commands_refuse_bad_input_with_exit_2_and_change_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "p.concord"
    make(path).close()
    assert main(["assign-work", str(path), "--annotators", "ana,ben", "--overlap", "3"]) == 2
    assert "--overlap 3: more than the 2 annotator(s)" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:  # the option's type refuses it (app.cli_options.annotators)
        main(["assign-work", str(path), "--annotators", "ana,ana", "--overlap", "1"])
    assert exc.value.code == 2 and "listed twice" in capsys.readouterr().err
    with Project.open(path) as p:
        assert not p.assignments.has_assignments() and not p.assignments.blind()
    with pytest.raises(SystemExit) as exc:
        main(["agreement", str(path), "--iou", "1"])
    assert exc.value.code == 2 and "must be in [0, 1)" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["agreement", str(path), "--scheme", "nope"])
    assert exc.value.code == 2 and "unknown scheme 'nope'; valid: violations" in capsys.readouterr().err
    assert main(["agreement", str(path)]) == 0  # no labels yet: says so
    assert "no labels by two or more annotators" in capsys.readouterr().out
    assert main(["merge", str(tmp_path / "out.concord"), str(tmp_path / "missing.concord")]) == 2
    assert not (tmp_path / "out.concord").exists()
    with pytest.raises(SystemExit) as exc:
        main(["config", str(path), "--resolution", "loudest"])
    assert exc.value.code == 2
    assert main(["config", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"schema_version": 2, "resolution": "majority", "blind": False,
                                                   "hide_machine": False}


def test_merge_projects_that_imported_the_same_samples_separately(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name, who in (("ana", "ana"), ("ben", "ben")):  # each annotator builds their own project from the same data
        with make(tmp_path / f"{name}.concord") as p:
            p.decisions.record(who, [Change("s0", "c1@1|m", "matches", [[0, 0]] if who == "ana" else [])])
            p.decisions.log_time(who, "s0", "c1@1|m", 3.0)
    out = tmp_path / "team.concord"
    assert main(["merge", str(out), str(tmp_path / "ana.concord"), str(tmp_path / "ben.concord"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["created"] and report["conflicts"] == [] and report["added_events"][str(tmp_path / "ben.concord")] == 1
    with Project.open(out) as p:
        assert p.decisions.annotator_labels("s0", "c1@1|m", "matches") == {"ana": [[0, 0]], "ben": []}
        assert p.decisions.time_spent() == 6.0
        assert agreement(p, n_boot=0)["pairs"][0]["n_items"] == 4
    assert main(["merge", str(out), str(tmp_path / "ben.concord")]) == 0
    assert "nothing changed" in capsys.readouterr().out
