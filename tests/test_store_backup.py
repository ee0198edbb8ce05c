"""Backups go through SQLite's backup API: they hold what is still in the WAL, never touch the project's locks,
are made before every migration and at most once per `every` seconds, and only the newest few are kept."""
from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from app.store import SCHEMA_VERSION, Change, Project
from app.store.backup import KEEP, backup_dir, list_backups
from tests.gui_data import C1, make_project
from tests.test_store_migration import v1_project


def _events(path: Path) -> int:
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return int(conn.execute("SELECT count(*) FROM events").fetchone()[0])
    finally:
        conn.close()


def test_backup_holds_what_is_still_in_the_wal_and_is_one_file(tmp_path: Path) -> None:
    path = make_project(tmp_path / "live.concord")
    with Project.open(path) as p, Project.open(path) as reader:
        reader.conn.execute("BEGIN")
        reader.scalar("SELECT count(*) FROM events")  # an open read transaction: no checkpoint can finish
        for i in range(50):
            p.decisions.record("ana", [Change("v1", C1, "note", f"n{i}")])
        assert Path(f"{path}-wal").stat().st_size > 0
        dest = p.backup_to(tmp_path / "copy.concord")
        reader.conn.execute("COMMIT")
        p.decisions.record("ana", [Change("v1", C1, "note", "after the backup")])
        with pytest.raises(ValueError, match="is the project itself"):
            p.backup_to(path)
    assert _events(dest) == 50
    assert not Path(f"{dest}-wal").exists()
    conn = sqlite3.connect(dest)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    conn.close()
    with Project.open(dest) as copy:
        assert copy.decisions.current("v1", C1, "note") == "n49"


def test_migration_is_preceded_by_a_backup_of_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "old.concord"
    v1_project(path)
    assert list_backups(path) == []
    Project.open(path).close()
    backups = list_backups(path)
    assert len(backups) == 1 and backups[0].parent == backup_dir(path) == tmp_path / "old.concord.backups"
    assert backups[0].name.startswith("old-") and backups[0].name.endswith(f"Z-before-v{SCHEMA_VERSION}.concord")
    conn = sqlite3.connect(f"{backups[0].resolve().as_uri()}?mode=ro", uri=True)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 1  # the file as it was before the migration
    conn.close()
    assert _events(backups[0]) == 4
    Project.open(path).close()  # nothing to migrate: no new backup
    assert len(list_backups(path)) == 1
    with Project.create(tmp_path / "new.concord"):
        pass
    assert list_backups(tmp_path / "new.concord") == []  # a new file has nothing to lose


def test_backup_if_due_at_most_once_per_interval_and_keeps_the_newest(tmp_path: Path) -> None:
    path = make_project(tmp_path / "hourly.concord")
    with Project.open(path) as p:
        first = p.backup_if_due()
        assert first is not None and first.exists()
        assert p.backup_if_due() is None  # within the hour: nothing
        made = [first]
        for i in range(KEEP + 2):
            time.sleep(0.002)  # distinct millisecond time stamps
            p.decisions.record("ana", [Change("v1", C1, "note", f"n{i}")])
            made.append(p.backup_if_due(every=0))  # type: ignore[arg-type]
    kept = list_backups(path)
    assert kept == made[-KEEP:]  # oldest pruned, order by time stamp
    assert _events(kept[-1]) == KEEP + 2 and _events(kept[0]) == 3  # made after 3 of the 7 notes


def test_demo_force_overwrites_an_open_project_through_sqlite(tmp_path: Path) -> None:
    """`concord demo --force` over a project this process has open: the connection sees the demo (it was not
    deleted and recreated under it), can still write, and nothing half-built is left beside it."""
    from app.io.demo import create_demo

    target = make_project(tmp_path / "demo.concord")
    other = Project.open(target)
    try:
        n_before = other.scalar("SELECT count(*) FROM samples")
        create_demo(target, force=True).close()
        assert other.scalar("SELECT count(*) FROM samples") > n_before
        other.set_meta("still", "writable")
    finally:
        other.close()
    with Project.open(target) as p:
        assert p.get_meta("still") == "writable" and p.scalar("PRAGMA integrity_check") == "ok"
    assert sorted(f.name for f in tmp_path.iterdir()) == ["demo.concord"]


def test_a_damaged_old_file_is_neither_migrated_nor_backed_up(tmp_path: Path) -> None:
    """Opening a damaged file that needs a migration made a `before-vN` copy of the damage on every attempt, and
    pruning to the newest KEEP then deleted the older, healthy backups. Now: quick_check first, "damaged", no copy."""
    from app.errors import DamagedProjectError

    path = tmp_path / "old.concord"
    v1_project(path)
    conn = sqlite3.connect(path)
    with conn:
        conn.executemany("INSERT INTO meta VALUES (?, ?)", [(f"filler-{i}", "x" * 400) for i in range(400)])
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    leaves = [r[0] for r in conn.execute("SELECT pageno FROM dbstat WHERE name = 'sqlite_autoindex_meta_1' "
                                         "AND pagetype = 'leaf' ORDER BY pageno")]
    conn.close()
    with open(path, "r+b") as fh:  # no connection is open: writing the closed file directly is safe here
        fh.seek((leaves[len(leaves) // 2] - 1) * page_size)
        fh.write(b"\xee" * 64)
    before = path.read_bytes()
    for _ in range(KEEP + 1):
        with pytest.raises(DamagedProjectError, match=r"damaged: .*concord check --repair"):
            Project.open(path)
    assert list_backups(path) == []
    assert path.read_bytes() == before
