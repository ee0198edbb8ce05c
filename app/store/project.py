"""The project file: one SQLite database (WAL, foreign keys, busy timeout), migrated on open.

A `Project` owns one connection and must stay on the thread that opened it; worker threads open their own.
Writes are short transactions (`with project.transaction():`), so a crash loses nothing that was committed.
"""
from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from app.errors import NotAProjectError, busy_seconds
from app.files import regular_file
from app.store import backup as backups
from app.store.failures import (damaged, hot_journal, is_corrupt, is_store_error, newer_schema, store_error,  # noqa: F401
                                 store_error_message)  # re-exported: the names callers have used
from app.store.health import quick_check
from app.store.schema import APPLICATION_ID, LATEST, MIGRATIONS

if TYPE_CHECKING:
    import sqlite_utils

def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


class ProjectBase:
    """Connection, transactions, migrations and metadata. The queries are the project's parts (app/store/assembled.py)."""

    def __init__(self, path: str | Path, *, create: bool = False, migrate_to: int = LATEST) -> None:
        self.path = Path(path)
        # stat() opens no descriptor, so it is safe while this process holds connections to the file; a FIFO, a
        # device or a directory is refused at once (SQLite would block on a FIFO).
        found = regular_file(self.path, "project file", missing_ok=True, error=NotAProjectError)
        exists = found is not None and self.path.stat().st_size > 0
        if not exists and not create:
            raise NotAProjectError(f"{self.path}: no such project file (create one with `concord init {self.path}`)")
        # A file in a `<name>.backups/` folder is a backup: read as it is (query_only), never migrated, switched to
        # WAL or backed up in place (that changed its bytes and nested a `.backups` folder inside the backups).
        self.readonly = exists and backups.in_backup_folder(self.path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # A writer waits up to busy_seconds() for another's write lock, SQLite's busy handler retrying with backoff;
        # then the command stops with "another Concord process is writing" (store_error).
        wait = busy_seconds()
        conn = sqlite3.connect(self.path, isolation_level=None, timeout=wait)
        self.conn = conn
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(wait * 1000)}")
            if exists:
                # The header is checked by SQLite itself, never with Python's open(): on POSIX, closing any other
                # descriptor of the file drops every SQLite lock this process holds on it (other connections in
                # other threads included), and another process may then delete the WAL under them.
                self._check_header()
            conn.execute("PRAGMA foreign_keys = ON")
            if exists:
                self._check_is_project()
            if self.readonly:
                conn.execute("PRAGMA query_only = ON")
                self._refuse_old_backup()
            else:
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = FULL")
                self._migrate(fresh=not exists, target=migrate_to)
        except sqlite3.DatabaseError as exc:
            conn.close()
            known = store_error(exc, self.path)
            if known is not None:  # damaged, hot journal on a read-only place, busy, full, unopenable
                raise known from None
            raise NotAProjectError(f"{self.path}: not a Concord project ({exc})") from None
        except Exception:
            conn.close()
            raise
        self._depth = 0

    @cached_property
    def db(self) -> "sqlite_utils.Database":
        """sqlite-utils over the same connection; imported on first use (it loads pandas: slow for `concord status`)."""
        import sqlite_utils

        return sqlite_utils.Database(self.conn)

    # -- lifecycle -------------------------------------------------------------------------------------------------
    @classmethod
    def open(cls, path: str | Path) -> Self:
        return cls(path)

    @classmethod
    def create(cls, path: str | Path) -> Self:
        return cls(path, create=True)

    def close(self) -> None:
        self.conn.close()

    def reconnect_query_only(self, keep: list[Any]) -> None:
        """A forked child's own read-only connection (app/services/ceiling_worker.py). The inherited connection and
        its sqlite-utils wrapper go to `keep`, never freed in the child: freeing would close it, and SQLite must not
        touch a connection across fork."""
        keep.append(self.conn)
        keep.append(self.__dict__.pop("db", None))
        conn = sqlite3.connect(self.path, isolation_level=None)
        conn.execute("PRAGMA query_only = ON")
        self.conn = conn

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- transactions ----------------------------------------------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One atomic write; nested calls join the outer transaction (savepoints)."""
        if self.readonly:
            raise backups.never_written(self.path)
        name = f"sp{self._depth}"
        if self._depth == 0:
            self.conn.execute("BEGIN IMMEDIATE")
        else:
            self.conn.execute(f"SAVEPOINT {name}")
        self._depth += 1
        try:
            yield self.conn
        except BaseException:
            self._depth -= 1
            # SQLite itself rolls the whole transaction back on some errors (SQLITE_FULL, I/O errors): then there
            # is nothing left to roll back, and trying would hide the real error behind "no transaction is active".
            if self.conn.in_transaction:
                if self._depth == 0:
                    self.conn.execute("ROLLBACK")
                else:
                    self.conn.execute(f"ROLLBACK TO {name}")
                    self.conn.execute(f"RELEASE {name}")
            raise
        self._depth -= 1
        if self._depth == 0:
            self.conn.execute("COMMIT")
        else:
            self.conn.execute(f"RELEASE {name}")

    def query(self, sql: str, params: tuple | dict = ()) -> list[sqlite3.Row]:
        cur = self.conn.execute(sql, params)
        cols = [d[0] for d in cur.description or ()]
        return [dict(zip(cols, row)) for row in cur.fetchall()]  # type: ignore[misc]

    def scalar(self, sql: str, params: tuple | dict = ()) -> Any:
        row = self.conn.execute(sql, params).fetchone()
        return None if row is None else row[0]

    # -- schema ----------------------------------------------------------------------------------------------------
    def _check_header(self) -> None:
        """SQLite reads page 1 on the first statement; a file that is not a database fails with SQLITE_NOTADB.

        Reading the schema table too is the cheap part of a health check (a few pages, whatever the file's size):
        a damaged page 1 or schema fails here with SQLITE_CORRUPT. Damage elsewhere shows up when it is read, and
        `concord check` finds it all.
        """
        try:
            self.conn.execute("PRAGMA schema_version").fetchone()
            self.conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.DatabaseError as exc:
            if "not a database" in str(exc):
                raise NotAProjectError(f"{self.path}: not a Concord project (the file is not an SQLite database)") from None
            raise

    def _check_is_project(self) -> None:
        app_id = self.conn.execute("PRAGMA application_id").fetchone()[0]
        if app_id != APPLICATION_ID:
            tables = [r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
            raise NotAProjectError(
                f"{self.path}: not a Concord project (an SQLite database with tables {sorted(tables)[:5]}, "
                "but no Concord marker)"
            )

    @property
    def schema_version(self) -> int:
        return int(self.conn.execute("PRAGMA user_version").fetchone()[0])

    def _refuse_old_backup(self) -> None:
        """A backup is read as it is: one from a newer or an older schema is refused (migrating it would change it)."""
        current = self.schema_version
        if current != LATEST:
            newer = current > LATEST
            raise NotAProjectError(
                f"{self.path}: a backup made by {'a newer' if newer else 'an older'} Concord (schema {current}, this "
                f"version knows {LATEST}); backups are never changed in place: "
                + ("upgrade Concord" if newer else f"copy it out of {self.path.parent.name}/ first (e.g. "
                   f"`cp {self.path} restored.concord`) and open the copy, which is then upgraded"))

    def _migrate(self, *, fresh: bool, target: int) -> None:
        current = int(self.conn.execute("PRAGMA user_version").fetchone()[0])
        if current > LATEST:
            raise newer_schema(self.path, current)
        if fresh:
            self.conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        if current == 0:
            self.conn.execute(
                "CREATE TABLE IF NOT EXISTS migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
            )
        if not fresh and any(current < version <= target for version, _, _ in MIGRATIONS):
            # A damaged file is neither migrated nor backed up: every attempt to open it would add a copy of the
            # damage and prune an older, perhaps healthy, backup (only the newest few are kept).

            problems = quick_check(self.conn, 1)
            if problems:  # one line: SQLite's first finding, without its "*** in database main ***" heading
                raise damaged(self.path, "; ".join(ln for ln in problems[0].splitlines() if not ln.startswith("***")))
            backups.make_backup(self.conn, self.path, label=f"before-v{target}")
        # Migrations may rebuild tables (create, copy, drop, rename): with foreign keys on, dropping the old table
        # would cascade-delete the rows that refer to it. So they run with foreign keys off (the pragma cannot change
        # inside a transaction) and each is checked with foreign_key_check before it commits.
        self.conn.execute("PRAGMA foreign_keys = OFF")
        try:
            for version, name, run in MIGRATIONS:
                if current < version <= target:
                    self.conn.execute("BEGIN IMMEDIATE")
                    try:
                        run(self.conn)
                        if version == 1:
                            self.conn.execute(
                                "INSERT INTO meta VALUES ('project_id', ?), ('created_at', ?)", (uuid.uuid4().hex, now())
                            )
                        broken = self.conn.execute("PRAGMA foreign_key_check").fetchmany(3)
                        if broken:
                            raise sqlite3.IntegrityError(f"migration {version} broke foreign keys: {broken}")
                        self.conn.execute("INSERT INTO migrations VALUES (?, ?, ?)", (version, name, now()))
                        self.conn.execute(f"PRAGMA user_version = {version}")
                        self.conn.execute("COMMIT")
                    except BaseException:
                        if self.conn.in_transaction:  # SQLite may have rolled it back itself (a full disk)
                            self.conn.execute("ROLLBACK")
                        raise
        finally:
            self.conn.execute("PRAGMA foreign_keys = ON")

    # -- backups (SQLite's backup API only: see app/store/backup.py) ---------------------------------------------
    def backup_to(self, dest: str | Path) -> Path:
        """A consistent copy of the project in the new file `dest`, safe while anyone writes."""
        if Path(dest).resolve() == self.path.resolve():
            raise ValueError(f"{dest}: is the project itself; give another file name")
        return backups.copy_database(self.conn, dest)

    def backup(self, label: str = "") -> Path:
        """An automatic backup in `<name>.backups/` (the newest few are kept)."""
        return backups.make_backup(self.conn, self.path, label)

    def backup_before(self, label: str) -> Path | None:
        """A backup before a command that rewrites much of the project (merge, labels import, calibrate --apply),
        skipped when the file has not changed since the newest backup (see `backups.backup_before_change`)."""
        return backups.backup_before_change(self.conn, self.path, label)

    def backup_if_due(self, every: float = backups.HOURLY) -> Path | None:
        """Back up unless the newest backup is younger than `every` seconds; the app calls it once per hour of use."""
        return backups.backup_if_due(self.conn, self.path, every)

    # -- metadata --------------------------------------------------------------------------------------------------
    @property
    def project_id(self) -> str:
        return str(self.scalar("SELECT value FROM meta WHERE key = 'project_id'"))

    def get_meta(self, key: str, default: str | None = None) -> str | None:
        value = self.scalar("SELECT value FROM meta WHERE key = ?", (key,))
        return default if value is None else str(value)

    def set_meta(self, key: str, value: str) -> None:
        with self.transaction() as c:
            c.execute("INSERT INTO meta VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", (key, value))

    def table_counts(self) -> dict[str, int]:
        return {name: self.db[name].count for name in self.db.table_names()}
