"""The store accepts the decision kinds the registered schemes declare (Scheme.label_kinds), and no other: the
generic store keeps no list of scheme kinds (issue #25)."""
from __future__ import annotations

from pathlib import Path

import pytest

from app.store import Change, Project
from calibration.schemes.base import COMMON_KINDS, registry
from calibration.schemes.violations import Violation, ViolationSample


def _project(tmp_path: Path) -> Project:
    p = Project.create(tmp_path / "p.concord")
    p.store("violations").write_violation_samples([ViolationSample("s", "some text", (Violation("r", 0, 4),),
                                                                   {"c": (Violation("r", 0, 4),)})])
    return p


def test_a_kind_no_scheme_declares_is_refused_with_nothing_written(tmp_path: Path) -> None:
    p = _project(tmp_path)
    with pytest.raises(ValueError, match="unknown decision kind 'sparkle'"):
        p.decisions.record("alice", [Change("s", "c", "note", "kept?"), Change("s", "c", "sparkle", 1)])
    assert p.decisions.events("s") == []


def test_the_kinds_come_from_the_registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = _project(tmp_path)
    assert len(p.decisions.record("alice", [Change("s", "c", "matches", [[0, 0]])])) == 1  # the violations scheme's kind
    monkeypatch.setattr(type(registry()), "label_kinds", lambda _self: dict(COMMON_KINDS))  # no scheme's own kinds
    with pytest.raises(ValueError, match="unknown decision kind 'matches'"):
        p.decisions.record("bob", [Change("s", "c", "matches", [[0, 0]])])
    assert len(p.decisions.record("bob", [Change("s", "c", "note", "fine")])) == 1
