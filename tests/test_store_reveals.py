"""Issue #27 item 5 in the store: schema v7 (events' machine visibility, reveals) migrates an older project with
nothing lost; the hide setting follows blind mode unless set; merges keep both."""
from __future__ import annotations

import sqlite3
from pathlib import Path

from app.corrections import commit
from app.store import Change, Project
from tests.gui_data import C1, make_project


def _v5_project(path: Path) -> list[tuple]:
    """A project as Concord wrote it before v7 (schema 5), with decisions; its events as rows."""
    make_project(path)
    with Project.open(path) as p:
        p.decisions.record("ana", [Change("v1", C1, "matches", [[0, 0]]), Change("v1", C1, "status", "corrected")])
        p.decisions.record("ben", [Change("v1", C1, "status", "flagged")])
        p.assignments.assign_work(["ana", "ben"], overlap=2, schemes=["violations"])
    conn = sqlite3.connect(path)
    with conn:  # back to schema 5: drop what v6 and v7 added (SQLite >= 3.35 drops columns)
        conn.execute("DROP TABLE reveals")
        conn.execute("ALTER TABLE events DROP COLUMN machine_visible")
        conn.execute("DROP TABLE guidelines")
        conn.execute("ALTER TABLE events DROP COLUMN guideline_version")
        conn.execute("DELETE FROM migrations WHERE version > 5")
        conn.execute("PRAGMA user_version = 5")
    rows = conn.execute("SELECT * FROM events ORDER BY id").fetchall()
    conn.close()
    return rows


def test_an_older_project_migrates_to_v7_with_nothing_lost(tmp_path: Path) -> None:
    path = tmp_path / "old.concord"
    old_events = _v5_project(path)
    with Project.open(path) as p:
        assert p.schema_version >= 7  # later migrations (v8: adaptive strata) leave v7's content as it was
        events = p.decisions.events()
        assert [tuple(v for k, v in e.items() if k not in ("machine_visible", "guideline_version"))
                for e in events] == old_events
        assert all(e["machine_visible"] is None for e in events)  # not recorded before v7: unknown, not "hidden"
        assert p.decisions.current("v1", C1, "matches", "ana") == [[0, 0]] and p.decisions.current("v1", C1, "status", "ben") == "flagged"
        assert p.reveals.hide_machine()  # blind mode (work assigned) turns it on by default
        assert not p.reveals.revealed("ana", "v1", C1)
        p.reveals.set_hide_machine(False)
        assert not p.reveals.hide_machine() and p.assignments.blind()
    assert len(list(tmp_path.glob("old.concord.backups/*.concord"))) == 1  # the migration backed the old file up first


def test_commit_records_visibility_and_reveals_in_one_transaction(tmp_path: Path) -> None:
    path = make_project(tmp_path / "p.concord")
    with Project.open(path) as p:
        assert not p.assignments.blind() and not p.reveals.hide_machine()  # no blind mode: off by default
        p.assignments.set_blind(True)
        assert p.reveals.hide_machine()
        cmd = commit("v1", C1, (Change("v1", C1, "matches", []),), agrees=False)
        inverse = cmd.apply(p, "ana", machine_visible=False)
        assert p.reveals.revealed("ana", "v1", C1) and not p.reveals.revealed("ben", "v1", C1)
        assert [(e["kind"], e["machine_visible"]) for e in p.decisions.events()] == [("matches", 0), ("status", 0)]
        assert p.decisions.current("v1", C1, "status", "ana") == "corrected"
        inverse.apply(p, "ana", machine_visible=True)  # undo: labels back, the reveal stays (it was seen)
        assert p.decisions.current("v1", C1, "status", "ana") is None and p.reveals.revealed("ana", "v1", C1)
        assert [e["machine_visible"] for e in p.decisions.events()][-2:] == [1, 1]
        p.decisions.record("ana", [Change("v2", C1, "status", "skipped")])
        assert p.decisions.events()[-1]["machine_visible"] is None  # a caller that does not say: not recorded


def test_merge_keeps_visibility_and_reveals(tmp_path: Path) -> None:
    from app.store.merge import merge

    a = make_project(tmp_path / "a.concord")
    b = tmp_path / "b.concord"
    with Project.open(a) as p:
        p.backup_to(b)
    with Project.open(b) as p:
        commit("v1", C1, (Change("v1", C1, "matches", [[0, 0]]),), agrees=False).apply(p, "ben", machine_visible=False)
    out = tmp_path / "out.concord"
    merge(out, [a, b])
    with Project.open(out) as p:
        assert p.reveals.revealed("ben", "v1", C1)
        assert [e["machine_visible"] for e in p.decisions.events() if e["annotator"] == "ben"] == [0, 0]


def test_config_sets_and_prints_the_hide_setting(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    from app.cli import main

    path = make_project(tmp_path / "p.concord")
    assert main(["config", str(path)]) == 0
    assert "hide_machine\toff" in capsys.readouterr().out  # not blind: off
    assert main(["config", str(path), "--blind", "on"]) == 0
    assert "hide_machine\ton" in capsys.readouterr().out  # follows blind mode unless set
    assert main(["config", str(path), "--hide-machine", "off"]) == 0
    out = capsys.readouterr().out
    assert "blind\ton" in out and "hide_machine\toff" in out
    with Project.open(path) as p:
        assert p.assignments.blind() and not p.reveals.hide_machine()
