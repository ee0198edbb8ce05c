"""Two annotators who agree both leave events; the same annotator repeating a value leaves none."""
from __future__ import annotations

from pathlib import Path

from app.store import Change, Project
from app.store.resolution import ADJUDICATION
from calibration.schemes.violations import Violation, ViolationSample


def test_second_annotator_agreeing_is_recorded(tmp_path: Path) -> None:
    p = Project.create(tmp_path / "p.concord")
    p.store("violations").write_violation_samples([ViolationSample("s", "some text", (Violation("r", 0, 4),), {"c": (Violation("r", 0, 4),)})])
    change = [Change("s", "c", "matches", [[0, 0]])]
    assert len(p.decisions.record("alice", change)) == 1
    assert p.decisions.record("alice", change) == []  # same person, same value: nothing new
    assert len(p.decisions.record("bob", change)) == 1  # bob agrees: his judgement is kept
    events = p.decisions.events("s")
    assert [e["annotator"] for e in events] == ["alice", "bob"]
    assert p.decisions.current("s", "c", "matches") == [[0, 0]]
    p.decisions.rebuild_labels()
    assert p.decisions.current("s", "c", "matches") == [[0, 0]]


def test_several_annotators_are_all_kept_and_resolved_by_policy(tmp_path: Path) -> None:
    """Adjudicated, else majority, else newest; every annotator's label survives and a rebuild gives the same."""
    p = Project.create(tmp_path / "p.concord")
    p.store("violations").write_violation_samples([ViolationSample("s", "some text", (Violation("r", 0, 4),), {"c": (Violation("r", 0, 4),)})])
    target = ("s", "c", "matches")
    p.decisions.record("alice", [Change("s", "c", "matches", [[0, 0]])])
    p.decisions.record("bob", [Change("s", "c", "matches", [])])
    assert p.decisions.annotator_labels(*target) == {"alice": [[0, 0]], "bob": []}
    assert p.decisions.current(*target) == []  # one against one: the newest
    p.decisions.record("carol", [Change("s", "c", "matches", [[0, 0]])])
    assert p.decisions.current(*target) == [[0, 0]]  # two against one: the majority
    p.decisions.record("bob", [Change("s", "c", "matches", [[0, 0]])])
    p.decisions.record("alice", [Change("s", "c", "matches", [])])
    assert p.decisions.current(*target) == [[0, 0]]  # bob changed his mind; alice's newer label is outvoted
    assert p.store("violations").human_matches() == {("s", "c"): {(0, 0)}}
    p.decisions.record("judge", [Change("s", "c", "matches", [])], origin=ADJUDICATION)
    assert p.decisions.current(*target) == []  # an adjudicated label wins over any majority
    p.decisions.record("dave", [Change("s", "c", "matches", [[0, 0]])])
    assert p.decisions.current(*target) == []  # ... and over newer labels too
    assert p.decisions.current("s", "c", "matches", annotator="dave") == [[0, 0]]
    assert len(p.decisions.annotator_labels(*target)) == 5
    rows = p.decisions.label_rows(["matches"], every_annotator=True)
    assert len(rows) == 5 and sum(r["resolved"] for r in rows) == 1
    assert p.decisions.label_rows(["matches"]) == [{"sample_id": "s", "unit": "c", "kind": "matches", "value": [], "annotator": "judge"}]
    before = p.query("SELECT * FROM labels ORDER BY annotator")
    p.decisions.rebuild_labels()
    assert p.query("SELECT * FROM labels ORDER BY annotator") == before
    # the unit list's status is the resolved one
    p.decisions.record("alice", [Change("s", "c", "status", "accepted")])
    p.decisions.record("bob", [Change("s", "c", "status", "flagged")])
    assert p.units.unit_page()[0]["status"] == "flagged"
    p.decisions.record("carol", [Change("s", "c", "status", "accepted")])
    assert p.units.unit_page()[0]["status"] == "accepted"


def test_resolution_kept_on_write_equals_resolving_from_the_events(tmp_path: Path) -> None:
    """`record` resolves the written target from the rows it read (no recomputation): after any sequence of writes by
    several annotators (agreeing, disagreeing, clearing, adjudicating, under either policy) the resolved rows equal
    those `rebuild_labels` derives from the events alone, and each target has exactly one."""
    import random

    p = Project.create(tmp_path / "p.concord")
    p.store("violations").write_violation_samples([ViolationSample(f"s{i}", "some text", (Violation("r", 0, 4),), {"c": (Violation("r", 0, 4),)})
                               for i in range(3)])
    rng = random.Random(5)

    def resolved() -> list[tuple]:
        return p.conn.execute("SELECT sample_id, unit, kind, annotator, value FROM labels WHERE resolved = 1 "
                              "ORDER BY sample_id, unit, kind").fetchall()

    for step in range(400):
        if step == 200:
            p.decisions.set_resolution_policy("newest")
        sid = f"s{rng.randrange(3)}"
        who = rng.choice(["alice", "bob", "carol", "judge"])
        value = rng.choice([[[0, 0]], [], None])
        p.decisions.record(who, [Change(sid, "c", "matches", value), Change(sid, "c", "status", rng.choice(["accepted", None]))],
                 origin=ADJUDICATION if who == "judge" and rng.random() < 0.5 else "app")
        kept = resolved()
        targets = p.conn.execute("SELECT COUNT(DISTINCT sample_id || unit || kind) FROM labels").fetchone()[0]
        assert len(kept) == targets
        p.decisions.rebuild_labels()
        assert resolved() == kept, f"step {step}"
