"""A first load into an empty project (issue #28 item 2): written with a rollback journal when no other connection has
the project open (its new pages go to the file once, not through the WAL), WAL again after; the same rows either way,
and a load killed half-way leaves the project as it was."""
from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from app.io.imports import import_file
from app.schemes.violations.store import ViolationsStore
from app.store import Project
from tests.test_import_parallel import _bench_generator, table_digests

ROOT = Path(__file__).resolve().parents[1]


def _modes_seen(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The journal mode each violations write of an import ran under."""
    seen: list[str] = []
    real = ViolationsStore.write_prepared_violation_samples

    def spy(self: Any, *a: Any, **k: Any) -> Any:
        seen.append(self.conn.execute("PRAGMA journal_mode").fetchone()[0])
        return real(self, *a, **k)

    monkeypatch.setattr(ViolationsStore, "write_prepared_violation_samples", spy)
    return seen


@pytest.mark.parametrize("workers", [1, 2])
def test_a_first_load_alone_keeps_a_rollback_journal_and_stores_what_a_wal_load_stores(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int) -> None:
    from app.io import imports, parallel

    monkeypatch.setattr(parallel, "CHUNK_BYTES", 20_000)  # several chunks, so several writes
    monkeypatch.setattr(imports, "REBUILD_MIN", 1)  # a large load (the rollback journal is for those)
    seen = _modes_seen(monkeypatch)
    data = tmp_path / "d.jsonl"
    _bench_generator()(data, 150, seed=5, quote_only=0.3)
    modes = {}
    for other in (False, True):  # alone; with another connection holding the project (e.g. the app's window)
        seen.clear()
        path = tmp_path / f"{other}.concord"
        with Project.create(path) as p:
            held = sqlite3.connect(path) if other else None
            try:
                if held is not None:
                    held.execute("SELECT COUNT(*) FROM samples").fetchone()
                import_file(p, data, dataset="d", workers=workers)
            finally:
                if held is not None:
                    held.close()
            assert p.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"  # WAL again after the load
            assert p.conn.execute("PRAGMA busy_timeout").fetchone()[0] > 0  # (set to 0 only to try the switch)
            assert p.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        modes[other] = set(seen)
        assert len(seen) > 2
    assert modes == {False: {"delete"}, True: {"wal"}}
    assert table_digests(tmp_path / "False.concord") == table_digests(tmp_path / "True.concord")


def test_a_second_import_is_written_in_wal_mode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from app.io import imports

    monkeypatch.setattr(imports, "REBUILD_MIN", 1)
    seen = _modes_seen(monkeypatch)
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    _bench_generator()(first, 20, seed=1)
    _bench_generator()(second, 20, seed=2)
    with Project.create(tmp_path / "p.concord") as p:
        import_file(p, first, dataset="a")
        assert seen == ["delete"]
        import_file(p, _renamed(second, tmp_path), dataset="b")
        assert seen == ["delete", "wal"]  # the project holds samples: no longer a first load


def _renamed(path: Path, tmp_path: Path) -> Path:
    """The file with other sample ids (s000001 -> t000001), so its samples are new ones."""
    out = tmp_path / "renamed.jsonl"
    out.write_text(path.read_text(encoding="utf-8").replace('"id": "s', '"id": "t'), encoding="utf-8")
    return out


KILLED = textwrap.dedent("""
    import sys, time
    from app.io import imports, parallel
    from app.store import Project, bulk
    imports.REBUILD_MIN = 1  # a large load
    parallel.CHUNK_BYTES = 100_000  # many chunks
    bulk.BULK_CACHE_MB = 1  # a small page cache: written pages spill into the file before the commit
    real, n = imports._Stream.add, [0]

    def add(self, r):
        real(self, r)
        n[0] += 1
        if n[0] == 20:
            print("written", flush=True)
            time.sleep(600)

    imports._Stream.add = add
    with Project.open(sys.argv[1]) as p:
        imports.import_file(p, sys.argv[2], dataset="d", workers=int(sys.argv[3]))
""")


@pytest.mark.parametrize("workers", [1, 2])
def test_a_killed_first_load_leaves_the_project_as_it_was(tmp_path: Path, workers: int) -> None:
    data = tmp_path / "d.jsonl"
    _bench_generator()(data, 1500, seed=9)
    path = tmp_path / "p.concord"
    Project.create(path).close()
    size = path.stat().st_size
    child = subprocess.Popen([sys.executable, "-c", KILLED, str(path), str(data), str(workers)], cwd=ROOT,
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "written"
        assert Path(f"{path}-journal").exists()  # a rollback journal, not the WAL, during the first load
        assert path.stat().st_size > size  # written pages in the file itself (the journal holds what they replaced)
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    with Project.open(path) as p:  # the hot journal is rolled back: the project as it was, in WAL mode
        assert p.conn.execute("SELECT COUNT(*) FROM samples").fetchone()[0] == 0
        assert p.conn.execute("SELECT COUNT(*) FROM row_counts WHERE n != 0").fetchone()[0] == 0
        assert p.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert p.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        import_file(p, data, dataset="d", workers=workers)  # and it takes the import again
    with Project.create(tmp_path / "clean.concord") as p:
        import_file(p, data, dataset="d", workers=workers)
    assert table_digests(path) == table_digests(tmp_path / "clean.concord")


def test_rows_packed_by_workers_are_stored_as_the_writer_stores_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                                     ) -> None:
    """A first load's worker sends its rows as one SQLite image the writer copies (store_packed); every table, row ids
    included, is what the row-by-row write of the same file stores (random records: context, meta, quote-only and
    ungrounded violations, checkers with nothing found, rubric samples between them)."""
    import random

    from app.io import imports, parallel
    from app.schemes.violations import store_packed
    from tests.test_import_parallel import rubric, violations

    monkeypatch.setattr(parallel, "CHUNK_BYTES", 6000)
    rng = random.Random(4)
    rows: list[dict[str, Any]] = []
    for i in range(300):
        r = violations(i) if rng.random() < 0.9 else rubric(i)
        if rng.random() < 0.3:
            r["context"] = f"brief {rng.randrange(5)} ✓"
        if rng.random() < 0.3:
            r.pop("meta", None)
        if "predictions" in r and rng.random() < 0.2:
            r["predictions"]["ghost@1.0|x"] = [{"quote": "not in the text", "rule": "r"}]  # ungrounded
        rows.append(r)
    data = tmp_path / "d.jsonl"
    data.write_text("".join(__import__("json").dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    written: list[int] = []
    real = store_packed.write_packed

    def spy(project: Any, packed: Any, dataset_id: Any) -> Any:
        written.append(packed.n_samples)
        return real(project, packed, dataset_id)

    monkeypatch.setattr(store_packed, "write_packed", spy)
    packed_writes = []
    for pack in (True, False):
        monkeypatch.setattr(imports, "CAN_PACK", pack)
        written.clear()
        with Project.create(tmp_path / f"{pack}.concord") as p:
            report = import_file(p, data, dataset="d", workers=2)
        assert report.counts["violations"].added == sum(1 for r in rows if "predictions" in r)
        packed_writes.append(len(written))
    assert packed_writes[0] > 2 and packed_writes[1] == 0  # chunks came packed (the caller writes its own as they are)
    digests = [table_digests(tmp_path / f"{pack}.concord") for pack in (True, False)]
    labels = []  # (the rubric's machine labels carry the time they were written: compared without it)
    for pack in (True, False):
        digests[not pack].pop("machine_labels")
        with sqlite3.connect(tmp_path / f"{pack}.concord") as conn:
            labels.append(conn.execute("SELECT sample_id, unit, source, value, error FROM machine_labels "
                                       "ORDER BY rowid").fetchall())
        conn.close()
    assert digests[0] == digests[1] and labels[0] == labels[1] and labels[0]
    assert len({digests[0]["samples"], digests[0]["violations"], digests[0]["units"], digests[0]["row_counts"]}) == 4


def test_a_small_load_or_one_refused_at_its_first_chunk_keeps_the_wal_and_every_byte(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The rollback journal is for a large first load whose first chunk is valid: switching to it rewrites the file's
    header, so a file refused at its first chunk leaves the project byte for byte as it was."""
    import hashlib

    from app.io import imports
    from app.io.problems import ImportErrors

    seen = _modes_seen(monkeypatch)
    data = tmp_path / "d.jsonl"
    _bench_generator()(data, 30, seed=3)
    with Project.create(tmp_path / "small.concord") as p:
        import_file(p, data, dataset="d")
    assert seen == ["wal"]  # under REBUILD_MIN lines: as before
    monkeypatch.setattr(imports, "REBUILD_MIN", 1)
    lines = data.read_text(encoding="utf-8").splitlines(keepends=True)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(lines[0].replace('"text": "', '"text": 5, "x": "') + "".join(lines[1:]), encoding="utf-8")
    path = tmp_path / "p.concord"
    Project.create(path).close()
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    with Project.open(path) as p:
        with pytest.raises(ImportErrors):
            import_file(p, bad, dataset="d")
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
