"""Issue #29 item 1: guideline versions. Each scheme's guideline is stored as numbered versions of its parts; every
human event records the version in force; a change re-queues exactly the units whose relevant part changed; older
projects migrate with nothing lost; `--guideline-version` limits figures to the labels valid under a version."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from app.cli import main
from app.services import guidelines
from app.services.queue import build
from app.store import Change, Project
from calibration.schemes.base import registry
from calibration.schemes.violations import Violation, ViolationSample
from tests.gui_data import open_window, project_path, settings  # noqa: F401 - fixtures

TEXT = "The cat sat on the mat. It was red and tall."
C1, C2 = "c1@1|m", "c2@1|m"
GOOD = [[0, 0]]

V1 = "Judge the text.\n\n## rule R1\nA first rule.\n## rule R7\nPrices need a source.\n## category Style\nTone.\n"
V2 = V1.replace("Prices need a source.", "Prices and dates need a source.")  # R7 changed, nothing else


def samples() -> list[ViolationSample]:
    """s0-s5: s0 and s1's ground truth cites R1 (s1 in category Style), the others' R2; checker c1 predicts R7 on
    s4 only (else the ground truth's rule), c2 always the ground truth's rule."""
    out = []
    for i in range(6):
        gt = Violation("R1" if i < 2 else "R2", 4, 7, category="Style" if i == 1 else None)
        c1 = Violation("R7", 4, 7) if i == 4 else gt
        out.append(ViolationSample(f"s{i}", TEXT, (gt,), {C1: (c1,), C2: (gt,)}))
    return out


def make(path: Path) -> Project:
    p = Project.create(path)
    p.store("violations").write_violation_samples(samples())
    return p


def label_all(p: Project, who: str = "ana") -> None:
    for i in range(6):
        for c in (C1, C2):
            p.decisions.record(who, [Change(f"s{i}", c, "matches", GOOD), Change(f"s{i}", c, "status", "accepted")])


def test_split_names_parts_and_refuses_bad_headings() -> None:
    parts = guidelines.split("violations", V1)
    assert list(parts) == ["preamble", "rule R1", "rule R7", "category Style"]
    assert "".join(parts.values()) == V1  # the parts give the text back
    assert guidelines.split_sections("## a\nx\n## b  c\ny\n") == {"a": "## a\nx\n", "b c": "## b  c\ny\n"}
    with pytest.raises(ValueError, match=r"line 2: a heading must be `## rule ID` or `## category NAME`"):
        guidelines.split("violations", "x\n## trait clarity\n")
    with pytest.raises(ValueError, match="line 3: part 'rule R1' appears twice"):
        guidelines.split("violations", "## rule R1\na\n## rule R1\nb\n")
    with pytest.raises(ValueError, match="empty"):
        guidelines.split("rubric", " \n")
    assert list(guidelines.split("rubric", "## trait clarity\nx\n")) == ["trait clarity"]


def test_versions_events_and_a_change_requeues_only_the_affected_units(tmp_path: Path) -> None:
    p = make(tmp_path / "p.concord")
    p.decisions.record("ana", [Change("s0", C1, "status", "accepted")])  # before any guideline: version NULL
    assert p.guidelines.add_guideline_version("violations", guidelines.split("violations", V1)) == 1
    assert p.guidelines.add_guideline_version("violations", guidelines.split("violations", V1)) is None  # same text: no version
    label_all(p)
    versions = {(e["sample_id"], e["unit"], e["kind"]): e["guideline_version"] for e in p.decisions.events()}
    assert versions[("s0", C1, "matches")] == 1 and p.decisions.events()[0]["guideline_version"] is None
    assert build(p, "list", limit=None).n_requeued == 0
    assert p.guidelines.add_guideline_version("violations", guidelines.split("violations", V2)) == 2
    q = build(p, "list", limit=None)
    requeued = {(e.sample_id, e.unit): e.reason for e in q.entries if e.reason}
    # R7 changed: only c1 on s4 cites it (its prediction); no ground truth cites it
    assert requeued == {("s4", C1): "labeled under v1; rule R7 changed in v2"}
    assert q.n_requeued == 1 and q.n_unlabeled == 0
    # confirmed under v2 with the same values: recorded (not a no-op), and no longer queued
    n = len(p.decisions.events())
    p.decisions.record("ana", [Change("s4", C1, "matches", GOOD), Change("s4", C1, "status", "accepted")])
    assert len(p.decisions.events()) == n + 2 and p.decisions.events()[-1]["guideline_version"] == 2
    assert build(p, "list", limit=None).n_requeued == 0
    p.decisions.record("ana", [Change("s4", C1, "status", "accepted")])  # and repeating it now is a no-op again
    assert len(p.decisions.events()) == n + 2
    p.decisions.record("ana", [Change("s5", C1, "status", "accepted")], origin="import")  # an import confirms nothing
    assert len(p.decisions.events()) == n + 2
    # a category change reaches the units of the sample whose ground truth is in it: both checkers of s1
    v3 = V2.replace("Tone.", "Tone and register.")
    assert p.guidelines.add_guideline_version("violations", guidelines.split("violations", v3)) == 3
    assert {(e.sample_id, e.unit) for e in build(p, "list", limit=None).entries if e.reason} == {("s1", C1), ("s1", C2)}
    # the preamble concerns every unit; the label made before versioning is compared with v1
    assert p.guidelines.add_guideline_version("violations", guidelines.split("violations", "Judge it all.\n" + v3[16:])) == 4
    q = build(p, "list", limit=None)
    assert q.n_requeued == 12
    reasons = {(e.sample_id, e.unit): e.reason for e in q.entries}
    assert reasons[("s4", C1)] == "labeled under v2; preamble changed in v4"
    assert reasons[("s1", C2)] == "labeled under v1; category Style changed in v3"
    history = p.guidelines.guideline_history("violations")
    assert [h["version"] for h in history] == [1, 2, 3, 4] and guidelines.changes(history)[2] == ["rule R7"]
    p.close()


def test_rubric_trait_change_requeues_that_traits_units(tmp_path: Path) -> None:
    from calibration.schemes.rubric.records import RubricSample

    traits = [{"name": n, "description": n, "evaluation_mode": "tp_only", "metrics": ["precision"],
               "tp_instructions": ["mentions A"]} for n in ("coverage", "clarity")]
    buckets = {"tp": ["mentions A"], "fn": [], "fp": [], "tn": []}
    p = Project.create(tmp_path / "p.concord")
    p.store("rubric").write_rubric_samples([RubricSample("r1", "Q?", "A and B.", tuple(traits), {t["name"]: buckets for t in traits}),
                            RubricSample("r2", "Q?", "A.", (traits[0],), {"coverage": buckets})])
    guide = "## trait coverage\nA first.\n## trait clarity\nPlain words.\n"
    assert p.guidelines.add_guideline_version("rubric", guidelines.split("rubric", guide)) == 1
    for sid, trait in (("r1", "coverage"), ("r1", "clarity"), ("r2", "coverage")):
        p.decisions.record("ana", [Change(sid, trait, "buckets", buckets), Change(sid, trait, "status", "accepted")])
    assert p.guidelines.add_guideline_version("rubric", guidelines.split("rubric", guide.replace("Plain", "Short"))) == 2
    q = build(p, "list", limit=None)
    assert [(e.sample_id, e.unit, e.reason) for e in q.entries] == [
        ("r1", "clarity", "labeled under v1; trait clarity changed in v2")]
    p.close()


@pytest.mark.parametrize("scheme", registry().names())
def test_every_scheme_splits_a_guideline_into_parts_that_give_the_text_back(scheme: str) -> None:
    text = "Label carefully.\n\nEvery unit.\n"
    assert guidelines.split(scheme, text) == {"preamble": text}


def test_an_older_project_migrates_with_nothing_lost(tmp_path: Path) -> None:
    path = tmp_path / "old.concord"
    p = Project(path, create=True, migrate_to=5)
    p.store("violations").write_violation_samples(samples())
    conn = p.conn
    conn.execute("INSERT INTO annotators VALUES ('ana', '2026-01-01T00:00:00+00:00')")
    conn.execute("INSERT INTO events (ts, annotator, sample_id, unit, kind, before, after, command, origin, uid) "
                 "VALUES ('2026-01-01T00:00:00+00:00', 'ana', 's0', ?, 'status', NULL, '\"accepted\"', 'c', 'app', 'u1')",
                 (C1,))
    p.close()
    before = sqlite3.connect(path).execute("SELECT * FROM events").fetchall()
    with Project.open(path) as p:
        assert p.schema_version >= 6
        after = p.conn.execute("SELECT id, ts, annotator, sample_id, unit, kind, before, after, command, origin, uid, "
                               "guideline_version FROM events").fetchall()
        assert [r[:-1] for r in after] == before and after[0][-1] is None  # kept; "before versioning"
        assert p.guidelines.guideline_history("violations") == [] and p.guidelines.guideline_version("violations") is None
        p.decisions.record("ben", [Change("s1", C1, "status", "accepted")])
        assert p.decisions.events()[-1]["guideline_version"] is None  # still no guideline


def test_cli_set_show_history_and_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = make(tmp_path / "p.concord")
    label_all(p)
    p.close()
    path = str(tmp_path / "p.concord")
    g1, g2, bad = tmp_path / "g1.md", tmp_path / "g2.md", tmp_path / "bad.md"
    g1.write_text(V1, encoding="utf-8")
    g2.write_text(V2, encoding="utf-8")
    bad.write_text("ok\n## R7\n", encoding="utf-8")
    assert main(["guideline", path, "--scheme", "violations", "set", str(g1)]) == 0
    assert "guideline v1 stored (4 parts)" in capsys.readouterr().out
    assert main(["guideline", path, "--scheme", "violations", "set", str(g2)]) == 0
    out = capsys.readouterr().out
    assert "v2 stored" in out and "changed: rule R7" in out and "1 labeled units back" in out
    assert main(["guideline", path, "--scheme", "violations", "show", "--version", "1"]) == 0
    assert "Prices need a source." in capsys.readouterr().out
    assert main(["guideline", path, "--scheme", "violations", "history"]) == 0
    assert "~rule R7" in capsys.readouterr().out
    assert main(["queue", path, "--order", "list", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    from tests.test_json_outputs import errors

    assert errors("queue", data) == [] and data["n_requeued"] == 1
    assert data["units"][0]["reason"] == "labeled before versioning; rule R7 changed in v2"  # labeled before v1
    mtime = Path(path).stat().st_mtime_ns
    for args, message in ((["set", str(bad)], "bad.md: line 2: a heading must be"), (["set"], "set needs FILE"),
                          (["show", "--version", "9"], "versions 1 to 2, not 9"),
                          (["set", str(tmp_path / "missing.md")], "no such guideline file")):
        assert main(["guideline", path, "--scheme", "violations", *args]) == 2
        assert message in capsys.readouterr().err
    assert Path(path).stat().st_mtime_ns == mtime
    with Project.open(path) as p:
        assert p.guidelines.guideline_version("violations") == 2


# -- agreement per guideline version, and --guideline-version -----------------------------------------------------------
def _two_versions(path: Path, swap_v2: float) -> None:
    """ana and ben label s0-s11 (both checkers) in agreement under v1; v2 changes the preamble (every unit); they
    label s12-s23 under v2, ben swapping a unit's matches with probability `swap_v2`."""
    import random

    from tests.test_several_annotators import make as make_pairs

    rng = random.Random(4)
    good, swapped = [[0, 0], [1, 1]], [[0, 1], [1, 0]]
    p = make_pairs(path, n=24)
    p.guidelines.add_guideline_version("violations", {"preamble": "Match what means the same.\n"})
    for version, samples_ in ((1, range(12)), (2, range(12, 24))):
        if version == 2:
            p.guidelines.add_guideline_version("violations", {"preamble": "Match what states the same claim.\n"})
        for i in samples_:
            for c in ("c1@1|m", "c2@1|m"):
                p.decisions.record("ana", [Change(f"s{i}", c, "matches", good)])
                bad = version == 2 and rng.random() < swap_v2
                p.decisions.record("ben", [Change(f"s{i}", c, "matches", swapped if bad else good)])
    p.close()


def test_agreement_over_version_flags_a_drop_and_guideline_version_selects_labels(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from app.services.agreement import agreement, agreement_over_time
    from tests.test_json_outputs import errors

    path = tmp_path / "p.concord"
    _two_versions(path, 0.8)
    with Project.open(path) as p:
        out = agreement_over_time(p, over="version", n_boot=300)
        assert [(w["window"], w["version"]) for w in out["windows"]] == [("violations v1", 1), ("violations v2", 2)]
        assert [w["drops"] for w in out["windows"]] == [[], ["kappa", "alpha"]]
        assert [w["n_items"] for w in out["windows"]] == [12 * 2 * 4] * 2  # 4 (gt, pred) pairs per unit
        # each version's figures are those of its samples' labels alone
        plain = agreement(p, samples={f"s{i}" for i in range(12, 24)}, n_boot=300)
        assert out["windows"][1]["kappa"] == plain["overall"]["kappa"]
        with guidelines.valid_labels(p, None, None) as guide:  # current: v1's labels were left behind by the preamble
            assert {s for _scheme, s, *_ in p.decisions.annotator_label_rows()} == {f"s{i}" for i in range(12, 24)}
        assert guide["violations"]["n_set_aside"] == 12 * 2 * 2
        assert guide["violations"]["set_aside"] == {"labeled under v1; preamble changed in v2": 48}
        with guidelines.valid_labels(p, None, 1):  # v1: the labels given under v2 are later than it
            assert {s for _scheme, s, *_ in p.decisions.annotator_label_rows()} == {f"s{i}" for i in range(12)}
        assert len(p.decisions.annotator_label_rows()) == 96  # outside the block every label again
    assert main(["agreement", str(path), "--over", "version", "--bootstrap", "200", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["schema_version"] == 5 and errors("agreement", data) == []
    assert [w["drops"] for w in data["over_version"]["windows"]] == [[], ["kappa", "alpha"]]
    assert data["guideline"]["violations"]["version"] == 2 and data["overall"]["kappa"]["estimate"] < 0.5
    assert main(["agreement", str(path), "--guideline-version", "1", "--bootstrap", "0", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["overall"]["kappa"]["estimate"] == 1.0 and data["guideline"]["violations"]["version"] == 1
    assert main(["agreement", str(path), "--over", "version", "--bootstrap", "200"]) == 0
    text = capsys.readouterr().out
    assert "agreement per guideline version" in text and "DROP: kappa, alpha" in text
    assert "labels valid under guideline v2 (current); set aside 48" in text
    for bad, message in ((["--guideline-version", "3"], "versions 1 to 2, not 3"),
                         (["--over", "version", "--window", "day"], "--window goes with --over time")):
        assert main(["agreement", str(path), *bad]) == 2
        assert message in capsys.readouterr().err


def test_a_steady_series_of_versions_is_not_flagged(tmp_path: Path) -> None:
    from app.services.agreement import agreement_over_time

    _two_versions(tmp_path / "p.concord", 0.0)
    with Project.open(tmp_path / "p.concord") as p:
        out = agreement_over_time(p, over="version", n_boot=200)
        assert [w["drops"] for w in out["windows"]] == [[], []]


def test_evaluate_calibrate_and_export_take_the_guideline_version(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from tests.test_json_outputs import errors

    path = tmp_path / "p.concord"
    _two_versions(path, 0.8)
    with Project.open(path) as p:
        for i in range(24):  # ana's statuses under v2: the export's default status filter selects the units
            p.decisions.record("ana", [Change(f"s{i}", "c1@1|m", "status", "accepted")])
    project = str(path)
    assert main(["evaluate", project, "--bootstrap", "0", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["schema_version"] == 4 and errors("evaluate", data) == []
    assert data["violations"]["guideline"]["version"] == 2 and data["violations"]["guideline"]["n_set_aside"] == 48
    assert main(["evaluate", project, "--bootstrap", "0", "--json", "--guideline-version", "1"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["violations"]["guideline"]["version"] == 1 and data["violations"]["guideline"]["label_versions"] == ["v1"]
    assert main(["calibrate", project, "--step", "0.5", "--folds", "2", "--bootstrap", "0", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["schema_version"] == 5 and errors("calibrate", data) == [] and data["guideline"]["version"] == 2
    with Project.open(path) as p:  # the stored run says so too
        assert p.artifacts.calibration_runs()[-1]["result"]["guideline"] == data["guideline"]
    counts = {}
    for version in ("1", "2"):
        assert main(["export", project, "--name", "g", "--version", "1.0.0", "--dry-run", "--json", "--status", "any",
                     "--guideline-version", version]) == 0
        data = json.loads(capsys.readouterr().out)
        assert data["schema_version"] == 2 and errors("export", data) == []
        assert data["guideline"]["violations"]["version"] == int(version)
        counts[version] = data
    # each version's own labels: v1's on s0-s11, v2's on s12-s23 (as many, so the counts agree and the content not)
    assert counts["1"]["content_sha256"] != counts["2"]["content_sha256"]
    assert counts["1"]["counts"]["labels"] == counts["2"]["counts"]["labels"] == 24
    assert main(["export", project, "--name", "g", "--version", "1.0.0", "--out", str(tmp_path / "out")]) == 0
    capsys.readouterr()
    card = (tmp_path / "out" / "g@1.0.0" / "README.md").read_text(encoding="utf-8")
    assert "- violations guideline: labels valid under v2 (the current one); its labels were given under: v2" in card
    manifest = json.loads((tmp_path / "out" / "g@1.0.0" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["guideline"]["violations"]["n_set_aside"] == 48


def test_a_per_sample_label_is_set_aside_when_a_part_affects_its_sample(tmp_path: Path) -> None:
    p = make(tmp_path / "p.concord")
    p.guidelines.add_guideline_version("violations", guidelines.split("violations", V1))
    truth = [{"start": 4, "end": 7, "rule": "R7"}]
    p.decisions.record("ana", [Change("s4", "", "ground_truth", truth), Change("s0", "", "ground_truth", truth)])
    p.guidelines.add_guideline_version("violations", guidelines.split("violations", V2))  # R7: cited on s4 only
    assert set(guidelines.stale_labels(p, "violations")) == {("s4", "", "ana")}
    assert set(p.store("violations").curated_ground_truth()) == {"s0", "s4"}
    with guidelines.valid_labels(p, ["violations"], None):
        assert set(p.store("violations").curated_ground_truth()) == {"s0"}
        assert ("s4", "") not in p.scheme_data.scheme_labels("violations")
    # s4's units labeled under v2: the stale ground truth of s4 still brings back the unit of s4 the rule affects
    # (c1 cites R7 there), not c2's
    p.decisions.record("ana", [Change("s4", C1, "matches", GOOD), Change("s4", C2, "matches", GOOD)])
    q = build(p, "list", limit=None)
    assert {(e.sample_id, e.unit): e.reason for e in q.entries if e.reason} == {
        ("s4", C1): "labeled under v1; rule R7 changed in v2"}
    p.close()


def test_n_in_the_app_visits_the_units_a_guideline_change_sent_back(qtbot, open_window, project_path) -> None:  # noqa: F811
    from PySide6.QtCore import Qt

    from tests.gui_data import C1 as G1
    from tests.gui_data import C2 as G2

    with Project.open(project_path) as p:  # v3's ground truth cites "no medical claims": both its checkers' units
        part = "rule no medical claims"
        p.guidelines.add_guideline_version("violations", {part: f"## {part}\nAny cure.\n"})
        for sid in ("v1", "v2", "v3"):
            for c in (G1, G2):
                p.decisions.record("ana", [Change(sid, c, "status", "accepted")])
        p.guidelines.add_guideline_version("violations", {part: f"## {part}\nAny cure or relief.\n"})
    w = open_window(project_path)
    w.queue.set_order("random")
    qtbot.waitUntil(lambda: bool(w.queue.requeued), timeout=20000)
    assert set(w.queue.requeued) == {("v3", G1), ("v3", G2)}
    seen = []
    w.list.setFocus()
    for _ in range(len(w.queue.keys)):
        qtbot.keyClick(w.list, Qt.Key.Key_N)
        seen.append(w._shown)
    assert {("v3", G1), ("v3", G2)} <= set(seen)  # visited although both have a status
    assert not w.queue.requeued  # each once: passed over or confirmed, N moves on


def test_a_judge_level_change_requeues_the_samples_labeled_with_it(tmp_path: Path) -> None:
    record = {"scheme": "judge", "text": "The film grossed $181 million.", "context": "It grossed $181,674,817.",
              "judges": {"llm": {"score": 1, "high_means_positive": False}}, "levels": ["none", "minor", "major"]}
    data = tmp_path / "judge.jsonl"
    data.write_text("".join(json.dumps({**record, "id": f"j{i}"}) + "\n" for i in range(3)), encoding="utf-8")
    path = tmp_path / "p.concord"
    assert main(["init", str(path)]) == 0 and main(["import", str(path), str(data)]) == 0
    guide = "## level none\nNothing wrong.\n## level minor\nA small slip.\n## level major\nA false claim.\n"
    with Project.open(path) as p:
        p.guidelines.add_guideline_version("judge", guidelines.split("judge", guide))
        for sid, level in (("j0", "minor"), ("j1", "major"), ("j2", "minor")):
            p.decisions.record("ana", [Change(sid, "", "label", level)])
        p.guidelines.add_guideline_version("judge", guidelines.split("judge", guide.replace("A small slip.", "Any slip.")))
        assert {k[0] for k in guidelines.stale_labels(p, "judge")} == {"j0", "j2"}
        reasons = guidelines.stale_units(p, ["judge"])
        assert {s for s, _u in reasons} == {"j0", "j2"}
        assert set(reasons.values()) == {"labeled under v1; level minor changed in v2"}
