"""Two annotators who agree both leave events; the same annotator repeating a value leaves none."""
from __future__ import annotations

from pathlib import Path

from app.store import Change, Project
from calibration.schemes.violations import Violation, ViolationSample


def test_second_annotator_agreeing_is_recorded(tmp_path: Path) -> None:
    p = Project.create(tmp_path / "p.concord")
    p.write_violation_samples([ViolationSample("s", "some text", (Violation("r", 0, 4),), {"c": (Violation("r", 0, 4),)})])
    change = [Change("s", "c", "matches", [[0, 0]])]
    assert len(p.record("alice", change)) == 1
    assert p.record("alice", change) == []  # same person, same value: nothing new
    assert len(p.record("bob", change)) == 1  # bob agrees: his judgement is kept
    events = p.events("s")
    assert [e["annotator"] for e in events] == ["alice", "bob"]
    assert p.current("s", "c", "matches") == [[0, 0]]
    p.rebuild_labels()
    assert p.current("s", "c", "matches") == [[0, 0]]
