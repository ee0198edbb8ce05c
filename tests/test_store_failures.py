"""Files in odd states and places a command cannot write (issue #24, items 4 and 5): a truncated project, a hot
rollback journal, a newer schema, a FIFO, a full disk, a read-only place, a busy project. Each ends in exit 2 and
one sentence naming the cause and what to do (never a traceback), the project unchanged; `check --repair`
recovers every row still on the file's pages."""
from __future__ import annotations

import errno
import hashlib
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from app.cli import main
from app.cli import explain
from app.errors import busy_seconds
from app.store import Change, Project
from app.store.project import ProjectBase, store_error
from app.store.schema import LATEST
from tests.gui_data import C1, make_project
from tests.jsonl_files import write_jsonl

ROOT = Path(__file__).resolve().parents[1]
TEXT = "Act now: the only cream that works, guaranteed!"


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def project_with_events(path: Path, n: int = 300) -> Path:
    make_project(path)
    with Project.open(path) as p:
        for i in range(n):
            p.decisions.record(f"annotator-{i % 3}", [Change("v1", C1, "note", f"note number {i} " + "x" * 80),
                                             Change("v2", C1, "status", "accepted" if i % 2 else "flagged")])
    return path


def samples_file(path: Path, n: int, prefix: str = "s") -> Path:
    return write_jsonl(path, [{"id": f"{prefix}{i}", "text": f"{TEXT} {i} " + "y" * 400,
                               "ground_truth": [{"quote": "guaranteed", "rule": "No guarantees"}], "predictions": {}}
                               for i in range(n)])


def refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run the command; it must exit 2 with one message line and no traceback. Returns that line."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


# -- item 4: check tells the truth, --repair recovers what the pages hold ---------------------------------------------

def rows_on_pages(path: Path, cut_pages: int) -> dict[str, int]:
    """The reference: per table, the rows on its b-tree leaf pages that lie inside the first `cut_pages` pages,
    from SQLite's own page map (dbstat) of the intact file. No recovery can read a page that is not in the file
    (the sqlite3 shell's `.recover` included), so this is the most any of them can recover."""
    conn = sqlite3.connect(path)
    rows = conn.execute("SELECT d.name, SUM(d.ncell) FROM dbstat d JOIN sqlite_master m ON m.name = d.name "
                        "AND m.type = 'table' WHERE d.pagetype = 'leaf' AND d.pageno <= ? GROUP BY d.name",
                        (cut_pages,)).fetchall()
    conn.close()
    return dict(rows)


def test_truncated_file_recovers_every_row_left_on_its_pages(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    intact = project_with_events(tmp_path / "intact.concord")
    conn = sqlite3.connect(intact)
    page_size, pages = conn.execute("PRAGMA page_size").fetchone()[0], conn.execute("PRAGMA page_count").fetchone()[0]
    counts = {t: conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in ("events", "samples", "labels")}
    conn.close()
    cut = int(pages * 0.8)
    expected = rows_on_pages(intact, cut)
    assert expected.get("events", 0) < counts["events"]  # the cut does lose events (else the test proves nothing)
    path = tmp_path / "cut.concord"
    path.write_bytes(intact.read_bytes()[: cut * page_size + 100])  # mid-page, like a copy that stopped
    before = sha(path)

    assert main(["check", str(path)]) == 2
    assert "SQLite cannot read the schema" in capsys.readouterr().err  # SQLite itself gives up on this file

    out = tmp_path / "recovered.concord"
    assert main(["check", str(path), "--repair", "--out", str(out)]) == 2
    printed = capsys.readouterr().out
    assert f"recovered into {out}" in printed and "read from the file's pages" in printed
    assert f"events: {expected['events']} rows (of at most {counts['events']}" in printed  # recovered vs expected
    assert sha(path) == before and not Path(f"{path}-journal").exists()  # the original is never written

    got = sqlite3.connect(out)
    for table, n in expected.items():
        if table in ("labels", "row_counts", "sqlite_sequence"):  # derived again / recounted / internal
            continue
        assert got.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0] >= n, table
    assert got.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert got.execute("PRAGMA user_version").fetchone()[0] == LATEST
    # labels: derived from the recovered events; those whose events were lost are kept apart, not dropped
    derived = got.execute("SELECT count(*) FROM labels").fetchone()[0]
    apart = got.execute("SELECT count(*) FROM recovered_labels").fetchone()[0] if got.execute(
        "SELECT 1 FROM sqlite_master WHERE name = 'recovered_labels'").fetchone() else 0
    assert derived + apart >= expected.get("labels", 0)
    got.close()
    with Project.open(out) as p:  # a project again
        assert len(p.decisions.events()) == expected["events"]


HOT_CHILD = textwrap.dedent("""
    import sqlite3, sys, time
    conn = sqlite3.connect(sys.argv[1], isolation_level=None)
    conn.execute("PRAGMA journal_mode = DELETE")  # a rollback journal, as an older tool or a migration would use
    conn.execute("PRAGMA cache_size = 2")  # spill changed pages into the file before the commit
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("DELETE FROM events")
    conn.execute("UPDATE meta SET value = 'half-written' WHERE key = 'project_id'")
    print("open", flush=True)
    time.sleep(600)
""")


def test_hot_journal_of_a_killed_writer_is_rolled_back_by_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = project_with_events(tmp_path / "hot.concord", n=100)
    with Project.open(path) as p:
        n_events, project_id = len(p.decisions.events()), p.project_id
    child = subprocess.Popen([sys.executable, "-c", HOT_CHILD, str(path)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "open"
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    assert Path(f"{path}-journal").stat().st_size > 0  # the hot journal a killed writer leaves

    assert main(["check", str(path)]) == 0  # rolled back to the last commit, then checked: healthy
    assert f"{path}: ok" in capsys.readouterr().out
    assert main(["merge", str(tmp_path / "merged.concord"), str(path)]) == 0  # not "damaged"
    capsys.readouterr()
    with Project.open(path) as p:
        assert len(p.decisions.events()) == n_events and p.project_id == project_id


def test_hot_journal_in_a_read_only_place_says_what_to_do() -> None:
    exc = sqlite3.OperationalError("attempt to write a readonly database")
    exc.sqlite_errorname = "SQLITE_READONLY_ROLLBACK"
    message = str(store_error(exc, "p.concord"))
    assert "p.concord-journal" in message and "write access" in message and "not a Concord project" not in message


def test_check_refuses_a_file_from_a_newer_concord(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = make_project(tmp_path / "future.concord")
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {LATEST + 1}")
    conn.close()
    for command in ("check", "status"):  # check refuses as every other command does
        err = refused([command, str(path)], capsys)
        assert f"made by a newer Concord (schema {LATEST + 1}, this version knows {LATEST}); upgrade Concord" in err


def test_a_fifo_is_refused_at_once_everywhere(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p.concord")
    fifos = {name: tmp_path / name for name in ("f.concord", "f.jsonl", "f.json", "f.toml")}
    for f in fifos.values():
        os.mkfifo(f)
    commands = [["check", fifos["f.concord"]], ["check", fifos["f.concord"], "--repair"], ["status", fifos["f.concord"]],
                ["import", project, fifos["f.jsonl"]], ["import", project, fifos["f.json"]],
                ["import", fifos["f.concord"], tmp_path / "x.jsonl"], ["labels", "import", project, fifos["f.jsonl"]],
                ["traits", "import", project, fifos["f.json"]], ["evaluate", project, "--config", fifos["f.toml"]],
                ["merge", tmp_path / "out.concord", project, fifos["f.concord"]]]
    for argv in commands:  # each in a child: a hang must fail this test, not freeze the suite
        t0 = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "app.cli", *map(str, argv)], cwd=ROOT, capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 2 and "Traceback" not in done.stderr, (argv, done.stderr)
        assert time.monotonic() - t0 < 30, argv
        if argv[0] != "merge":  # (merge's own input check says "no such project file": app/store/merge.py)
            assert "is a named pipe (FIFO)" in done.stderr, (argv, done.stderr)


# -- item 5: full disks, read-only places and busy files: one sentence ----------------------------------------------

def test_import_on_a_full_disk_is_one_sentence_and_changes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    path = make_project(tmp_path / "full.concord")
    data = samples_file(tmp_path / "big.jsonl", 400)
    before = Project.open(path)
    n_before = before.bulk.n_samples()
    before.close()
    real_init = ProjectBase.__init__

    def tiny_disk(self: ProjectBase, *args: object, **kwargs: object) -> None:  # SQLITE_FULL past a few pages
        real_init(self, *args, **kwargs)  # type: ignore[arg-type]
        pages = self.conn.execute("PRAGMA page_count").fetchone()[0]
        self.conn.execute(f"PRAGMA max_page_count = {pages + 3}")

    monkeypatch.setattr(ProjectBase, "__init__", tiny_disk)
    err = refused(["import", str(path), str(data)], capsys)
    assert f"{path}: the disk is full" in err and "free some space" in err and "no transaction" not in err
    monkeypatch.undo()
    with Project.open(path) as p:
        assert p.bulk.n_samples() == n_before


def test_busy_project_is_retried_then_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    path = make_project(tmp_path / "busy.concord")
    data = samples_file(tmp_path / "new.jsonl", 5, prefix="new")
    monkeypatch.setenv("CONCORD_BUSY_SECONDS", "0.5")
    assert busy_seconds() == 0.5
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process mid-write, for longer than the budget
    try:
        t0 = time.monotonic()
        err = refused(["import", str(path), str(data)], capsys)
        waited = time.monotonic() - t0
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert f"another Concord process is writing to {path} (waited 0.5 s for it)" in err
    assert 0.4 <= waited < 8  # it did wait (with retries), then gave up within its budget
    assert main(["import", str(path), str(data)]) == 0  # free again: the same command works
    capsys.readouterr()


def test_repair_into_a_read_only_place_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    from app.store import recover as recover_mod

    path = project_with_events(tmp_path / "labels.concord", n=10)
    conn = sqlite3.connect(path)
    conn.execute("DELETE FROM labels WHERE rowid IN (SELECT rowid FROM labels LIMIT 1)")  # a problem to repair
    conn.commit()
    conn.close()
    out = tmp_path / "ro" / "fixed.concord"
    out.parent.mkdir()

    def read_only(src: object, dst: object) -> None:  # tests run as root, whom chmod does not stop
        raise OSError(errno.EROFS, "Read-only file system", str(dst))

    monkeypatch.setattr(recover_mod.os, "replace", read_only)
    err = refused(["check", str(path), "--repair", "--out", str(out)], capsys)
    assert f"{out}: is on a read-only file system; choose a writable place" in err
    assert list(out.parent.iterdir()) == []  # no temp file, no journal left behind
    monkeypatch.undo()
    nowhere = tmp_path / "no-such-folder" / "fixed.concord"  # SQLite cannot create it: said of the new file
    err = refused(["check", str(path), "--repair", "--out", str(nowhere)], capsys)
    assert f"{nowhere}: cannot create the recovered file there" in err and "choose a writable place" in err


def test_export_to_a_read_only_place_is_one_sentence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from app.io import export as export_mod

    path = tmp_path / "demo.concord"
    assert main(["demo", str(path)]) == 0
    capsys.readouterr()
    out = tmp_path / "splits" / "deep"

    def read_only(target: Path, data: bytes) -> None:
        raise OSError(errno.EROFS, "Read-only file system", str(target))

    monkeypatch.setattr(export_mod, "_write_file", read_only)
    err = refused(["export", str(path), "--name", "s", "--version", "1.0.0", "--out", str(out)], capsys)
    assert "s@1.0.0: is on a read-only file system; choose a writable place" in err
    assert not (tmp_path / "splits").exists()  # the folders it made are gone again


@pytest.mark.parametrize(("code", "words"), [(errno.ENOSPC, "no space left on the device"),
                                             (errno.EROFS, "read-only file system"),
                                             (errno.EACCES, "permission denied")])
def test_file_system_errors_map_to_one_sentence(code: int, words: str) -> None:
    message = explain(OSError(code, os.strerror(code), "/x/out.jsonl"))
    assert message is not None and message.startswith("/x/out.jsonl: ") and words in message


@pytest.mark.parametrize(("name", "text", "words"), [
    ("SQLITE_FULL", "database or disk is full", "the disk is full"),
    ("SQLITE_BUSY", "database is locked", "another Concord process is writing to p.concord"),
    ("SQLITE_READONLY", "attempt to write a readonly database", "read-only"),
    ("SQLITE_CANTOPEN", "unable to open database file", "cannot open it"),
    ("SQLITE_CORRUPT", "database disk image is malformed", "damaged"),
])
def test_database_errors_map_to_one_sentence(name: str, text: str, words: str) -> None:
    exc = sqlite3.OperationalError(text)
    exc.sqlite_errorname = name
    message = explain(exc, "p.concord")
    assert message is not None and "p.concord" in message and words in message
    assert explain(sqlite3.OperationalError("no such table: x")) is None  # a bug keeps its traceback
