"""Bulk imports: raw line hashes (re-imports skip unchanged lines unparsed) and secondary indexes built after.

A line hash is the first 128 bits of the SHA-256 of LINE_SALT + the raw JSONL line (changing how lines become
samples can invalidate every stored hash by changing the salt; SHA-256 because it is the fastest hash in hashlib on
CPUs with SHA extensions, about twice BLAKE2b's speed here). `samples.line_hash` holds it for samples imported
from JSONL; an import looks the file's hashes up on a read connection of its own (`LineHashReader`): it sees the
committed project, never the import's own uncommitted rows, so worker processes can use one too.
"""
from __future__ import annotations

import hashlib
import sqlite3
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from app.store.parts import ProjectPart

# Rows per INSERT statement in `insert_flat` (fewer when they would pass the connection's limit on values per
# statement: 32,766 since SQLite 3.32, 999 before). Inside a transaction each multi-row
# INSERT copies the pages it changes that existed before it (the B-trees' right edges) to a statement journal, a temp
# file once over 64 KiB: at 32 rows a 100k-sample import made ~300k small writes to it (~100k at 128 rows), a third of
# the writer's system time. 128 rows: 15% less time inserting (1.9 -> 1.6 CPU-s for 100k samples, user + system,
# measured twice against 32 in the same minute on a loaded machine); 256 and 512 gained nothing more.
ROWS_PER_INSERT = 128
LINE_SALT = b"concord-line-1"  # change it when the same line would now give a different sample
BULK_TABLES = ("samples", "units", "machine_labels")  # the generic ones; schemes add theirs (store `bulk_tables`)
_SALTED = hashlib.sha256(LINE_SALT)
# A bulk write's page cache (an upper bound: pages are only held as the write touches them). 256 MB holds a 100k-sample
# import whole (~210 MB of pages), so nothing spills to the WAL before the commit: 5% less CPU than 64 MB at 100k
# (7.3 -> 6.95 CPU-s in one process, measured twice, loaded machine); at 1M it spills either way, and the cache adds
# up to 192 MB to the writer's peak memory (budget: 1 GB, issue #28).
BULK_CACHE_MB = 256


def line_hash(raw: bytes) -> bytes:
    return line_hashes((raw,))[0]


def line_hashes(raws: Iterable[bytes]) -> list[bytes]:
    """`line_hash` of each line (one loop, no call per line: a re-import hashes every line of the file)."""
    copy = _SALTED.copy
    out = []
    for raw in raws:
        h = copy()
        h.update(raw)
        out.append(h.digest()[:16])
    return out


def insert_flat(conn: sqlite3.Connection, head: str, row: str, flat: Sequence[Any], tail: str = "") -> None:
    """Insert rows given flat, value after value (as many per row as `row` has placeholders), in order, ROWS_PER_INSERT
    rows per statement: a multi-row VALUES keeps the table's and indexes' cursors open across its rows, a third less
    time than one statement per row (a million-sample import inserts 8M rows). `head`: "INSERT INTO t
    (columns) VALUES ", `row`: "(?, ?, ...)", `tail`: what follows the values (e.g. an ON CONFLICT clause)."""
    width = row.count("?")
    per = max(1, min(ROWS_PER_INSERT, conn.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER) // width))
    step = width * per
    whole = len(flat) - len(flat) % step
    conn.executemany(head + ",".join([row] * per) + tail, [flat[i : i + step] for i in range(0, whole, step)])
    conn.executemany(head + row + tail, [flat[i : i + width] for i in range(whole, len(flat), width)])


# The schema under which a first load's packed rows (`pack_tables`) are attached to the writer's connection
PACKED = "concord_packed"
CAN_PACK = hasattr(sqlite3.Connection, "serialize")  # (Python 3.11+ on an SQLite built with it, as is usual)


def pack_tables(tables: Sequence[tuple[str, Sequence[str], Sequence[Any]]]) -> bytes:
    """Rows as one SQLite database image (`Connection.serialize`): per table (name, columns, the rows' values flat,
    row after row). An import worker packs a first load's rows so (issue #28 item 2): the writer then copies them
    with one INSERT ... SELECT per table (`BulkPart.packed`), in C, instead of unpickling millions of values and
    binding each to a statement. Binding moves to the worker, the writer's own path gets shorter (at 100k
    samples: unpickling and inserting 1.6 -> 0.65 CPU-s; the worker pays ~0.6 more)."""
    ddl = [f'CREATE TABLE "{name}" ({", ".join(columns)})' for name, columns, _ in tables]
    conn = sqlite3.connect(":memory:", isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode = OFF")  # (a new in-memory database: nothing to undo)
        conn.execute("BEGIN")
        # Every table created before any row, so each table's root page follows from the DDL alone; and the schema
        # cookie is the DDL's checksum. Replacing the attached image (`deserialize`) does not reload its schema: a
        # statement prepared on the previous image is run again as it is while the cookie matches, reading the same
        # root pages. So images of the same tables share a cookie and their pages agree; other tables, another cookie
        # (the statement is prepared again).
        for sql in ddl:
            conn.execute(sql)
        for name, columns, flat in tables:
            insert_flat(conn, f'INSERT INTO "{name}" VALUES ', "(" + ", ".join("?" * len(columns)) + ")", flat)
        conn.execute(f"PRAGMA schema_version = {1 + zlib.crc32(';'.join(ddl).encode()) % 0x7FFFFFFE}")
        conn.execute("COMMIT")
        return conn.serialize()
    finally:
        conn.close()


class LineHashReader:
    """Which line hashes a project already holds: hash -> (sample id, scheme).

    `preload`: read every stored hash in one query per scheme (one scheme string shared by its rows) on the first
    lookup, for a file about as large as the project (a re-import): one pass over the covering index costs half of
    looking the same hashes up 4,000 at a time, but it holds them all in memory, so the importer asks for it only
    then."""

    def __init__(self, path: str | Path, preload: bool = False) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None, timeout=30.0)
        self.conn.execute("PRAGMA query_only = 1")
        self.preload = preload
        self._stored: dict[bytes, tuple[str, str]] | None = None  # every stored hash, once preloaded

    def known(self, hashes: Sequence[bytes]) -> Mapping[bytes, tuple[str, str]]:
        """The stored ones among `hashes` (preloaded: every stored hash, a superset the caller only looks into)."""
        if self.preload:
            if self._stored is None:
                self._stored = {}
                for (scheme,) in self.conn.execute(
                        "SELECT scheme FROM row_counts WHERE tbl = 'samples' AND n > 0 ORDER BY scheme").fetchall():
                    self._stored.update((h, (sid, scheme)) for h, sid in self.conn.execute(
                        "SELECT line_hash, id FROM samples WHERE line_hash IS NOT NULL AND scheme = ?", (scheme,)))
            return self._stored
        out: dict[bytes, tuple[str, str]] = {}
        for i in range(0, len(hashes), 4000):  # SQLite takes up to 32,766 parameters per statement
            chunk = hashes[i : i + 4000]
            for h, sid, scheme in self.conn.execute(
                f"SELECT line_hash, id, scheme FROM samples WHERE line_hash IN ({','.join('?' * len(chunk))})", chunk):
                out[h] = (sid, scheme)
        return out

    def close(self) -> None:
        self.conn.close()


class BulkPart(ProjectPart):
    """`project.bulk`: what a large import needs of the project (line hashes, the sample total, bulk writes)."""

    # Inside `first_load` of a project that held no sample: an import's writes then meet no stored id (it writes a
    # chunk only while no problem is found, and the validator reports an id seen twice in the file before that
    # chunk is written), so a store need not look its ids up (`existing_hashes`: 1M index probes at 1M samples).
    into_empty = False

    def has_line_hashes(self) -> bool:
        return self.conn.execute("SELECT 1 FROM samples WHERE line_hash IS NOT NULL LIMIT 1").fetchone() is not None

    def n_samples(self) -> int:
        return int(self.scalar("SELECT COALESCE(SUM(n), 0) FROM row_counts WHERE tbl = 'samples'"))

    def loads_first(self) -> bool:
        """Whether `first_load` here, now, would be one (no transaction open, foreign keys on, no sample held)."""
        return (not self.conn.in_transaction and self.scalar("PRAGMA foreign_keys") == 1
                and self.scalar("SELECT 1 FROM samples LIMIT 1") is None)

    @contextmanager
    def first_load(self, rollback_journal: bool = True) -> Iterator[None]:
        """Around (outside) the transaction of a bulk write: when the project holds no sample yet, foreign keys are not
        checked for its duration. Such a write adds samples
        with their own rows after them and deletes nothing, so every reference it makes is to a row it wrote just
        before and no cascade can fire: the checks cannot fail. Unchecked, a multi-row INSERT needs no statement
        journal either (with OR FAIL: the store's inserts of new rows), and no lookup of its sample per violation or
        unit row: 10% of the writer's CPU at 100k samples. A no-op inside a transaction (SQLite ignores the pragma).

        And with `rollback_journal` (the importer's choice: a large load), while no other connection has the project
        open, the write keeps a rollback journal instead of the WAL (`_rollback_journal`); rows packed by import
        workers are read from an in-memory database attached meanwhile (`packed`)."""
        switch = self.loads_first()
        if switch:
            self.conn.execute("PRAGMA foreign_keys = OFF")
            self.into_empty = True
            self.conn.execute(f"ATTACH ':memory:' AS {PACKED}")
        try:
            with self._rollback_journal(switch and rollback_journal):
                yield
        finally:
            if switch:
                self.into_empty = False
                self.conn.execute("PRAGMA foreign_keys = ON")
                self.conn.execute(f"DETACH {PACKED}")

    @contextmanager
    def _rollback_journal(self, wanted: bool) -> Iterator[None]:
        """A first load in rollback-journal mode (journal_mode DELETE, synchronous still FULL), WAL again after it.

        In WAL mode every page the load writes goes to the `-wal` first and is copied into the file by the checkpoint
        at its commit: the pages of a new project are written twice (at 300k samples, 1.9 of the writer's 8.5 CPU-s).
        With a rollback journal the new pages go to the file once and only the few pages the project held before are
        journaled; a killed load leaves a hot `-journal` that the next connection rolls back (the project as it
        was), and every open sets WAL again (`ProjectBase`). SQLite leaves WAL only while no other connection has the
        file open: then (e.g. the app's window holds it) the load stays in WAL, as it was. While the load runs, another
        process waits for it (the busy timeout) instead of reading the empty project it held before. Switching
        modes rewrites the file's header (its change counter): a load refused after the switch leaves the project's
        content as it was, not every byte (the importer switches only once the file's first chunk is valid)."""
        if not wanted or self.conn.in_transaction:
            yield
            return
        switched = self._journal_mode("DELETE") == "delete"
        try:
            yield
        finally:
            if switched:
                self._journal_mode("WAL")  # (if another process opened the file meanwhile, its open set WAL already)

    def _journal_mode(self, mode: str) -> str | None:
        """Set the journal mode now or not at all (never wait for another connection's locks); the mode it is in."""
        busy = self.scalar("PRAGMA busy_timeout")
        self.conn.execute("PRAGMA busy_timeout = 0")
        try:
            return str(self.scalar(f"PRAGMA journal_mode = {mode}")).lower()
        except sqlite3.OperationalError:  # locked: another connection has the project open
            return None
        finally:
            self.conn.execute(f"PRAGMA busy_timeout = {int(busy)}")

    def packed(self, image: bytes) -> str:
        """Load rows `pack_tables` packed (inside `first_load`, perhaps inside its transaction: only the attached
        in-memory database is replaced); the schema to read them from."""
        if not self.into_empty:
            raise RuntimeError("packed(): packed rows are written by a first load only (bulk.first_load)")
        self.conn.deserialize(image, name=PACKED)
        return PACKED

    @contextmanager
    def bulk_write(self, rebuild_indexes: bool) -> Iterator[None]:
        """A large write inside the caller's transaction: a BULK_CACHE_MB page cache for its duration (the default 2 MB
        makes every index insert of a million-row table go to the file), and with `rebuild_indexes`, drop the secondary (non-unique) indexes of the sample tables, and create them again
        after the block, inside the caller's transaction: building an index once over sorted keys costs a fraction
        of updating it row by row. Worth it only when the rows written are many compared with the rows there
        (the import's rule: app.io.imports.REBUILD_RATIO); unique indexes are constraints and stay."""
        if not self.conn.in_transaction:
            raise RuntimeError("bulk_write(): call it inside a transaction")
        cache = self.conn.execute("PRAGMA cache_size").fetchone()[0]
        self.conn.execute(f"PRAGMA cache_size = -{BULK_CACHE_MB * 1024}")
        try:
            with self._rebuilt_indexes(rebuild_indexes):
                yield
        finally:
            self.conn.execute(f"PRAGMA cache_size = {int(cache)}")

    @contextmanager
    def _rebuilt_indexes(self, rebuild: bool) -> Iterator[None]:
        if not rebuild:
            yield
            return
        from app.schemes.loader import bulk_tables

        names = BULK_TABLES + bulk_tables()
        tables = ",".join("?" * len(names))
        indexes = self.conn.execute(
            f"SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN ({tables}) "
            "AND upper(sql) NOT LIKE 'CREATE UNIQUE%' ORDER BY name", names).fetchall()
        for name, _ in indexes:
            self.conn.execute(f'DROP INDEX "{name}"')
        yield
        for _, sql in indexes:
            self.conn.execute(sql)
