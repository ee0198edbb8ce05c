"""Issue #15 item 1 through the app's session (no window): each annotator's decisions and undo are their own."""
from __future__ import annotations

from pathlib import Path

from app.schemes.violations.corrections import set_matches
from app.gui.undo import Session
from app.store import Project
from calibration.schemes.violations import Violation, ViolationSample


def project(tmp_path: Path) -> Project:
    p = Project.create(tmp_path / "p.concord")
    p.store("violations").write_violation_samples([ViolationSample("s", "some text", (Violation("r", 0, 4),), {"c": (Violation("r", 0, 4),)})])
    return p


def test_second_annotator_who_agrees_records_an_event(qapp, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    p = project(tmp_path)
    alice, bob = Session(p, "alice", record_time=False), Session(p, "bob", record_time=False)
    cmd = set_matches("s", "c", [(0, 0)], "accepted", "accept")
    assert alice.do(cmd) is True
    assert alice.do(cmd) is False  # alice repeating herself: nothing new
    assert bob.do(cmd) is True  # bob agrees with the resolved label: his judgement is kept
    assert [e["annotator"] for e in p.decisions.events("s")] == ["alice", "alice", "bob", "bob"]
    assert p.decisions.annotator_labels("s", "c", "matches") == {"alice": [[0, 0]], "bob": [[0, 0]]}
    assert bob.stack.count() == 1


def test_undo_restores_the_annotators_own_label(qapp, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    p = project(tmp_path)
    alice, bob = Session(p, "alice", record_time=False), Session(p, "bob", record_time=False)
    assert alice.do(set_matches("s", "c", [(0, 0)], "accepted", "accept"))
    assert bob.do(set_matches("s", "c", [], "corrected", "unlink"))
    assert p.decisions.current("s", "c", "matches", "bob") == []
    bob.stack.undo()
    # bob had no label before: undo clears his, it never writes alice's [[0, 0]] as bob's
    assert p.decisions.current("s", "c", "matches", "bob") is None
    assert p.decisions.current("s", "c", "status", "bob") is None
    assert p.decisions.current("s", "c", "matches", "alice") == [[0, 0]]
    bob_events = [e for e in p.decisions.events("s") if e["annotator"] == "bob"]
    assert [e["after"] for e in bob_events if e["kind"] == "matches"] == ["[]", None]
    assert p.decisions.current("s", "c", "matches") == [[0, 0]]  # alice's label resolves again
    bob.stack.redo()
    assert p.decisions.current("s", "c", "matches", "bob") == [] and p.decisions.current("s", "c", "matches", "alice") == [[0, 0]]
    # alice undoes her own step: back to nothing for her, bob's label stays
    alice.stack.undo()
    assert p.decisions.current("s", "c", "matches", "alice") is None and p.decisions.current("s", "c", "matches", "bob") == []
