"""Issue #29 item 3 in `concord agreement`: adaptive overlap records the signals each choice rested on (schema v8), and
the agreement report weights the pairs to all units (post-stratified) beside the plain kappa over the units as
labeled. On a project where the rounds give a second annotator to the units whose first label the machine contradicts
(and a random 40% of the others), the weighted kappa is closer than the plain one to what a full overlap of 2
gives."""
from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path

import pytest

from app.cli import main
from app.store import Change, Project
from calibration.schemes.rubric import RubricSample
from tests.test_annotator_quality import Clock, clock  # noqa: F401 - clock is a fixture

TRAIT = {"name": "coverage", "evaluation_mode": "tp_only", "metrics": ["recall"], "tp_instructions": ["mentions A"]}
TP = {"tp": ["mentions A"], "fn": [], "fp": [], "tn": []}
FN = {"tp": [], "fn": ["mentions A"], "fp": [], "tn": []}
N_SURE, N_UNSURE = 60, 24


def _plan(seed: int = 3) -> list[tuple[dict, dict, dict]]:
    """(machine's buckets, first label, second label) per unit. The machine puts the excerpt in tp on half the units,
    in fn on the others. The first annotator agrees with the machine on N_SURE units (the second agrees with the first
    on 54 of them) and contradicts it on N_UNSURE units (the second agrees with the first on half of them). Every
    label and flip is balanced between tp and fn, so chance agreement is 1/2 whichever units are counted: kappa moves
    with the observed agreement alone."""
    rng = random.Random(seed)
    plan = []
    for machine, other in ((TP, FN), (FN, TP)):
        sure = [machine] * 27 + [other] * 3
        unsure = [other] * 6 + [machine] * 6
        rng.shuffle(sure)
        rng.shuffle(unsure)
        plan += [(machine, machine, x) for x in sure] + [(machine, other, x) for x in unsure]
    order = list(range(len(plan)))
    rng.shuffle(order)  # the strata mixed over the sample ids
    return [plan[i] for i in order]


def _project(path: Path, plan: list[tuple[dict, dict, dict]]) -> None:
    with Project.create(path) as p:
        p.store("rubric").write_rubric_samples([
            RubricSample(f"r{i:03d}", f"Question {i}?", f"Answer {i} mentions A.", (TRAIT,), {"coverage": machine})
            for i, (machine, _first, _second) in enumerate(plan)])


def _label(path: Path, which: int, plan: list[tuple[dict, dict, dict]]) -> None:
    """Every annotator labels the units of their queue they have not labeled with the plan's first or second label."""
    with Project.open(path) as p:
        done = {(s, a) for _, s, _u, _k, a, _v in p.decisions.annotator_label_rows(["buckets"])}
        for a in ("ana", "ben", "cy"):
            todo = [s for s, _u in p.assignments.assigned_units(a) if (s, a) not in done]
            if todo:
                p.decisions.record(a, [Change(s, "coverage", "buckets", plan[int(s[1:])][1 + which]) for s in todo])


def _agreement(path: Path, capsys: pytest.CaptureFixture[str]) -> dict:
    capsys.readouterr()
    assert main(["agreement", str(path), "--bootstrap", "300", "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_weighted_kappa_is_closer_to_the_full_overlap_than_the_plain_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], clock: Clock) -> None:  # noqa: F811
    from tests.test_json_outputs import errors

    plan = _plan()
    adaptive, full = tmp_path / "adaptive.concord", tmp_path / "full.concord"
    _project(adaptive, plan)
    assert main(["assign-work", str(adaptive), "--annotators", "ana,ben,cy", "--overlap", "adaptive"]) == 0
    clock.at(0)
    _label(adaptive, 0, plan)
    assert main(["assign-work", str(adaptive), "--annotators", "ana,ben,cy", "--overlap", "adaptive",
                 "--audit", "0.4", "--seed", "1"]) == 0
    clock.at(1)
    _label(adaptive, 1, plan)
    with Project.open(adaptive) as p:
        strata = p.assignments.adaptive_strata()
    unsure = {f"r{i:03d}" for i, (machine, first, _) in enumerate(plan) if machine != first}
    assert unsure <= {s for s, _u, _a in strata}  # every unit the machine contradicts got a second annotator
    audited = {s for s, _u, _a in strata} - unsure
    assert 12 <= len(audited) <= 36  # and a random 40% of the confident ones
    sig = strata[next(k for k in strata if k[0] in unsure)]
    assert sig["confidence"] == pytest.approx(0.5) and sig["reasons"] == ["the machine disagrees"]
    assert sig["stratum"][1] is False and strata[next(k for k in strata if k[0] in audited)]["stratum"][1] is True
    assert len({json.dumps(v["stratum"]) for v in strata.values()}) == 4  # first label tp/fn x machine agrees or not

    _project(full, plan)  # the same units with both planned labels on every one: a fixed overlap of 2
    assert main(["assign-work", str(full), "--annotators", "ana,ben", "--overlap", "2"]) == 0
    with Project.open(full) as p:
        for i, (_machine, first, second) in enumerate(plan):
            p.decisions.record("ana", [Change(f"r{i:03d}", "coverage", "buckets", first)])
            p.decisions.record("ben", [Change(f"r{i:03d}", "coverage", "buckets", second)])

    out = _agreement(adaptive, capsys)
    assert out["schema_version"] == 5 and errors("agreement", out) == []
    res = out["adaptive_overlap"]
    assert res["units"] == N_SURE + N_UNSURE and res["pairs"] == N_UNSURE + len(audited)
    assert res["pairs_chosen_adaptively"] == res["pairs"] and res["strata"] == 4 and res["strata_unobserved"] == 0
    assert res["kappa_as_labeled"] == out["overall"]["kappa"]
    weighted, plain = res["kappa_weighted"]["estimate"], res["kappa_as_labeled"]["estimate"]
    assert res["kappa_weighted"]["low"] < weighted < res["kappa_weighted"]["high"]
    truth = _agreement(full, capsys)
    assert truth["adaptive_overlap"] is None and errors("agreement", truth) == []  # no adaptive round: no weighting
    want = truth["overall"]["kappa"]["estimate"]
    assert plain < want - 0.1  # the uncertain units over-represented: the plain kappa leans low
    assert abs(weighted - want) < abs(plain - want) / 2

    assert main(["agreement", str(adaptive), "--bootstrap", "50"]) == 0
    text = capsys.readouterr().out
    assert "kappa weighted to all units" in text and "kappa over the units as labeled" in text


def test_a_v7_project_migrates_to_v8_with_nothing_lost(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "old.concord"
    plan = _plan()
    _project(path, plan)
    assert main(["assign-work", str(path), "--annotators", "ana,ben", "--overlap", "adaptive"]) == 0
    _label(path, 0, plan)
    assert main(["assign-work", str(path), "--annotators", "ana,ben", "--overlap", "adaptive", "--audit", "0"]) == 0
    conn = sqlite3.connect(path)
    with conn:  # back to schema 7: drop what v8 added (SQLite >= 3.35 drops columns)
        conn.execute("ALTER TABLE assignments DROP COLUMN stratum")
        conn.execute("DELETE FROM migrations WHERE version > 7")
        conn.execute("PRAGMA user_version = 7")
    assignments = conn.execute("SELECT * FROM assignments ORDER BY annotator, sample_id, unit").fetchall()
    events = conn.execute("SELECT * FROM events ORDER BY id").fetchall()
    conn.close()
    assert len(assignments) == N_SURE + 2 * N_UNSURE and len(events) == N_SURE + N_UNSURE
    with Project.open(path) as p:
        assert p.schema_version == 8
        assert p.assignments.adaptive_strata() == {}  # the signals were not kept before v8: none invented
        rows = p.conn.execute("SELECT * FROM assignments ORDER BY annotator, sample_id, unit").fetchall()
        assert [tuple(r)[:-1] for r in rows] == assignments and all(r[-1] is None for r in rows)
        assert [tuple(r) for r in p.conn.execute("SELECT * FROM events ORDER BY id")] == events
    assert _agreement(path, capsys)["adaptive_overlap"] is None  # no recorded round: nothing to weight by
    assert len(list(tmp_path.glob("old.concord.backups/*.concord"))) == 1  # the migration backed the old file up
