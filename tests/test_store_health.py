"""A damaged project file: an honest "damaged" message (never "not a Concord project"), `concord check` finds the
damage and the labels that disagree with the events, and `--repair` recovers the readable rows into a new file."""
from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from app.cli import main
from app.errors import DamagedProjectError
from app.store import Change, Project
from app.store.health import integrity_report, quick_check
from tests.gui_data import C1, make_project

N_EVENTS = 600


def project_with_events(path: Path) -> Path:
    make_project(path)
    with Project.open(path) as p:
        for i in range(N_EVENTS // 2):  # two events per round: ~20 leaf pages of events
            p.decisions.record(f"annotator-{i % 3}", [Change("v1", C1, "note", f"note number {i} " + "x" * 80),
                                             Change("v2", C1, "status", "accepted" if i % 2 else "flagged")])
    return path


def damage_events_pages(path: Path) -> None:
    """Overwrite a leaf page of the events table and one of its index in the middle of the closed file."""
    conn = sqlite3.connect(path)
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    try:
        pages = [[r[0] for r in conn.execute("SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' "
                                             "ORDER BY pageno", (name,))] for name in ("events", "events_target", "events_uid")]
    except sqlite3.OperationalError:  # SQLite built without dbstat: a page in the middle of the file
        pages = [[conn.execute("PRAGMA page_count").fetchone()[0] // 2]]
    conn.close()
    with open(path, "r+b") as fh:  # no connection is open: writing the file directly is safe here
        for found in pages:
            fh.seek((found[len(found) // 2] - 1) * size)
            fh.write(b"\xee" * 64)


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_healthy_project_checks_ok(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = project_with_events(tmp_path / "ok.concord")
    assert main(["check", str(path)]) == 0
    assert f"{path}: ok (schema" in capsys.readouterr().out
    with Project.open(path) as p:
        assert quick_check(p.conn) == []
    assert integrity_report(path).ok


def test_damaged_file_is_reported_as_damaged_and_repaired_into_a_new_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = project_with_events(tmp_path / "hurt.concord")
    with Project.open(path) as p:
        n_events = len(p.decisions.events())
    damage_events_pages(path)
    before = sha(path)

    # a command that reads the damaged page says what happened and what to do: exit 2, no traceback
    assert main(["status", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}: damaged: database disk image is malformed; run `concord check --repair {path}`" in err
    assert "not a Concord project" not in err and "Traceback" not in err

    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert "problem(s) found" in err and "integrity:" in err and f"concord check --repair {path}" in err

    out = tmp_path / "fixed.concord"
    assert main(["check", str(path), "--repair", "--out", str(out)]) == 2  # problems were found
    printed = capsys.readouterr().out
    assert f"recovered into {out}" in printed and "events:" in printed and "unreadable run(s)" in printed
    assert sha(path) == before  # the original is never written
    assert not Path(f"{path}-wal").exists() or Path(f"{path}-wal").stat().st_size == 0

    assert main(["check", str(out)]) == 0  # the recovered file is healthy, labels derived from its events
    capsys.readouterr()
    with Project.open(out) as p:
        events = p.decisions.events()
        assert 0 < len(events) < n_events  # the rows of the damaged page are lost, the others kept
        assert p.decisions.sample_labels("v1")  # labels rebuilt from the surviving events
        assert len(p.store("violations").violation_samples()) == 3

    # recovery never overwrites
    assert main(["check", str(path), "--repair", "--out", str(out)]) == 2
    assert "already exists" in capsys.readouterr().err


def test_damaged_first_page_is_refused_on_open_as_damaged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = make_project(tmp_path / "head.concord")
    with open(path, "r+b") as fh:  # the b-tree header of page 1 (the schema table), after the 100-byte file header
        fh.seek(100)
        fh.write(b"\xff" * 60)
    with pytest.raises(DamagedProjectError, match=r"head.concord: damaged: .*malformed.*concord check --repair"):
        Project.open(path)
    assert main(["status", str(path)]) == 2
    err = capsys.readouterr().err
    assert "damaged" in err and "not a Concord project" not in err and "Traceback" not in err
    assert main(["check", str(path), "--repair"]) == 2
    err = capsys.readouterr().err
    assert "SQLite cannot read the schema" in err and "Traceback" not in err


def test_labels_that_disagree_with_the_events_are_found(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = project_with_events(tmp_path / "labels.concord")
    conn = sqlite3.connect(path)
    conn.execute("DELETE FROM labels WHERE sample_id = 'v1' AND kind = 'note' AND annotator = 'annotator-0'")
    conn.execute("UPDATE labels SET value = '\"skipped\"' WHERE sample_id = 'v2' AND kind = 'status' AND annotator = 'annotator-0'")
    conn.commit()
    conn.close()
    report = integrity_report(path)
    assert report.integrity == [] and report.foreign_keys == []
    assert any("1 label(s) derived from the events but missing" in m and "'v1'" in m for m in report.labels)
    assert any("1 label(s) in the labels table differ from the newest event" in m for m in report.labels)
    assert main(["check", str(path)]) == 2
    assert "labels: 1 label(s) derived from the events but missing" in capsys.readouterr().err
    out = tmp_path / "labels-fixed.concord"
    assert main(["check", str(path), "--repair", "--out", str(out), "--json"]) == 2
    capsys.readouterr()
    assert integrity_report(out).ok


def test_check_refuses_non_projects_cleanly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err
    bogus = tmp_path / "notes.concord"
    bogus.write_text("not a database\n" * 100)
    assert main(["check", str(bogus)]) == 2
    assert "not a Concord project" in capsys.readouterr().err
