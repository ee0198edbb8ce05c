"""Is a project file healthy? SQLite's integrity and foreign-key checks, plus the derived labels table compared
with a fresh derivation from the events (the audit trail is the source of truth).

Checks read the file through SQLite only, on a read-only connection, so they change nothing and are safe while
the app or another process has the project open. Opening a project stays fast because it does only the cheap
part (page 1 and the schema, see `ProjectBase._check_header`); the full check is here, for `concord check` and
for the app to run in the background.
"""
from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.errors import NotAProjectError, busy_seconds
from app.files import regular_file
from app.store.failures import hot_journal, is_corrupt, newer_schema, store_error
from app.store.schema import APPLICATION_ID, LATEST

MAX_ERRORS = 100
EXAMPLES = 5

DERIVED_LABELS = (  # schema 2: one label per target, the newest event's
    "SELECT e.sample_id, e.unit, e.kind, e.after AS value, e.id AS event_id FROM events e "
    "WHERE e.id = (SELECT MAX(id) FROM events x WHERE x.sample_id = e.sample_id AND x.unit = e.unit AND x.kind = e.kind)"
)
DERIVED_PER_ANNOTATOR = (  # schema 3 on: one label per target and annotator, plus the resolved mark
    "SELECT e.sample_id, e.unit, e.kind, e.annotator, e.after AS value, e.id AS event_id FROM events e "
    "JOIN (SELECT MAX(id) AS id FROM events GROUP BY sample_id, unit, kind, annotator) last ON last.id = e.id"
)


def per_annotator(conn: sqlite3.Connection) -> bool:
    """Does this file keep a label per annotator (schema 3 on) rather than one per target?"""
    return "resolved" in {r[1] for r in conn.execute("PRAGMA table_info(labels)")}


def derived_labels(conn: sqlite3.Connection) -> tuple[str, list[str]]:
    """The SQL deriving the labels table from the events, and its key columns, for this file's schema."""
    if per_annotator(conn):
        return DERIVED_PER_ANNOTATOR, ["sample_id", "unit", "kind", "annotator"]
    return DERIVED_LABELS, ["sample_id", "unit", "kind"]


@dataclass
class HealthReport:
    """What `integrity_report` found; `ok` when nothing at all."""

    path: Path
    schema_version: int | None = None
    integrity: list[str] = field(default_factory=list)  # SQLite's messages; [] = "ok"
    foreign_keys: list[str] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)  # differences between the labels table and the events
    counts: dict[str, int] = field(default_factory=dict)  # rows per table (what could be counted)
    errors: list[str] = field(default_factory=list)  # checks that could not run (SQLite refused to read)

    @property
    def ok(self) -> bool:
        return not (self.integrity or self.foreign_keys or self.labels or self.errors)

    @property
    def problems(self) -> list[str]:
        return ([f"integrity: {m}" for m in self.integrity] + [f"foreign key: {m}" for m in self.foreign_keys]
                + [f"labels: {m}" for m in self.labels] + self.errors)

    def to_dict(self) -> dict[str, Any]:
        return {"path": str(self.path), "ok": self.ok, "schema_version": self.schema_version,
                "integrity": self.integrity, "foreign_keys": self.foreign_keys, "labels": self.labels,
                "errors": self.errors, "counts": self.counts}


def open_readonly(path: str | Path) -> sqlite3.Connection:
    """A read-only SQLite connection (it never writes the file, nor checkpoints its WAL into it).

    Two states a read-only connection cannot read by itself are handled here, for every reader (check, repair,
    merge inputs): a hot rollback journal left by a writer killed mid-transaction is rolled back first, as any
    read-write open would do (the file returns to its last commit), or refused with what to do when the folder is
    read-only; and a project on a read-only medium, where SQLite cannot create the -shm file that WAL readers
    share, is read as immutable (nobody can write it there) when it has no unmerged -wal.
    """
    p = regular_file(path, "project file", error=NotAProjectError)
    assert p is not None
    conn = _connect(p, "mode=ro")
    try:
        conn.execute("PRAGMA schema_version").fetchone()
    except sqlite3.DatabaseError as exc:
        name = getattr(exc, "sqlite_errorname", "")
        if name == "SQLITE_READONLY_ROLLBACK":
            conn.close()
            _roll_back(p)
            return _connect(p, "mode=ro")
        if name.startswith("SQLITE_CANTOPEN") and not os.access(p.parent, os.W_OK) and not _has_wal(p):
            conn.close()
            return _connect(p, "mode=ro&immutable=1")
        # anything else (not a database, damaged, busy) is met again, and reported, by the caller's first query
    return conn


def _connect(p: Path, params: str) -> sqlite3.Connection:
    wait = busy_seconds()
    conn = sqlite3.connect(f"{p.resolve().as_uri()}?{params}", uri=True, isolation_level=None, timeout=wait)
    conn.execute(f"PRAGMA busy_timeout = {int(wait * 1000)}")
    return conn


def _has_wal(p: Path) -> bool:
    wal = p.with_name(p.name + "-wal")
    return wal.exists() and wal.stat().st_size > 0


def _roll_back(p: Path) -> None:
    """Let SQLite roll back a hot journal: a read-write connection does it on its first read."""
    conn = sqlite3.connect(p, isolation_level=None, timeout=busy_seconds())
    try:
        conn.execute("PRAGMA schema_version").fetchone()
    except sqlite3.DatabaseError as exc:
        if getattr(exc, "sqlite_errorname", "").startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN")):
            raise hot_journal(p) from None
        known = store_error(exc, p)
        raise (known or exc) from None
    finally:
        conn.close()


def check_marker(conn: sqlite3.Connection, path: Path) -> int:
    """The schema version of a Concord project; NotAProjectError for other files (damage is left to the checks)."""
    try:
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        if is_corrupt(exc):
            return -1
        raise NotAProjectError(f"{path}: not a Concord project ({exc})") from None
    if app_id != APPLICATION_ID:
        raise NotAProjectError(f"{path}: not a Concord project (no Concord marker)")
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if version > LATEST:  # its tables may mean something else: checking them against this schema would mislead
        raise newer_schema(path, version)
    return version


def quick_check(conn: sqlite3.Connection, max_errors: int = MAX_ERRORS) -> list[str]:
    """SQLite's `quick_check` (pages, records, no index-content cross-check): [] when healthy. Seconds, not minutes.

    For the app's background check: pass `project.conn` of a connection owned by the calling thread.
    """
    return pragma_list(conn, f"PRAGMA quick_check({int(max_errors)})")


def pragma_list(conn: sqlite3.Connection, sql: str) -> list[str]:
    try:
        rows = [str(r[0]) for r in conn.execute(sql)]
    except sqlite3.DatabaseError as exc:
        return [f"SQLite cannot read the file: {exc}"]
    return [] if rows == ["ok"] else rows


def foreign_key_problems(conn: sqlite3.Connection) -> list[str]:
    try:
        rows = conn.execute("PRAGMA foreign_key_check").fetchall()
    except sqlite3.DatabaseError as exc:
        return [f"cannot run the foreign key check: {exc}"]
    by_table: dict[tuple[str, str], int] = {}
    for table, _rowid, parent, _fk in rows:
        by_table[(table, parent)] = by_table.get((table, parent), 0) + 1
    return [f"{n} row(s) of {table} point to a missing {parent} row" for (table, parent), n in sorted(by_table.items())]


def _tables(conn: sqlite3.Connection) -> list[str]:
    return [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]


def labels_differences(conn: sqlite3.Connection) -> list[str]:
    """The labels table against the labels derived from the events alone: what is missing, extra or different
    (and, with labels per annotator, whether each target has exactly one resolved label)."""
    if not {"labels", "events"} <= set(_tables(conn)):
        return []
    derived, keys = derived_labels(conn)
    on = " AND ".join(f"l.{k} = d.{k}" for k in keys)
    cols = ", ".join(f"d.{k}" for k in keys)
    queries = {
        "missing": f"SELECT {cols} FROM ({derived}) d LEFT JOIN labels l ON {on} WHERE l.sample_id IS NULL",
        "extra": f"SELECT {cols.replace('d.', 'l.')} FROM labels l LEFT JOIN ({derived}) d ON {on} WHERE d.sample_id IS NULL",
        "different": f"SELECT {cols} FROM ({derived}) d JOIN labels l ON {on} "
                     "WHERE l.value IS NOT d.value OR l.event_id IS NOT d.event_id",
    }
    what = {"missing": "derived from the events but missing from the labels table",
            "extra": "in the labels table without any event",
            "different": "in the labels table differ from the newest event"}
    out: list[str] = []
    for name, sql in queries.items():
        rows = conn.execute(sql).fetchall()
        if rows:
            out.append(f"{len(rows)} label(s) {what[name]}: {_examples(rows)}")
    if len(keys) == 4:
        rows = conn.execute("SELECT sample_id, unit, kind FROM labels GROUP BY sample_id, unit, kind "
                            "HAVING SUM(resolved = 1) != 1").fetchall()
        if rows:
            out.append(f"{len(rows)} target(s) without exactly one resolved label: {_examples(rows)}")
    return out


def _examples(rows: list[tuple]) -> str:
    shown = ", ".join("(" + ", ".join(repr(v) for v in r) + ")" for r in rows[:EXAMPLES])
    return shown + (f" and {len(rows) - EXAMPLES} more" if len(rows) > EXAMPLES else "")


def integrity_report(path: str | Path, *, full: bool = True) -> HealthReport:
    """Every check on the file at `path` (read-only): integrity (or quick) check, foreign keys, derived labels."""
    p = Path(path)
    conn = open_readonly(p)
    report = HealthReport(p)
    try:
        try:
            conn.execute("PRAGMA schema_version").fetchone()
        except sqlite3.DatabaseError as exc:
            if not is_corrupt(exc):
                if "not a database" in str(exc):
                    raise NotAProjectError(f"{p}: not a Concord project (the file is not an SQLite database)") from None
                raise store_error(exc, p) or exc from None  # busy, unopenable, I/O: say which, not "not a project"
            report.errors.append(f"SQLite cannot read the schema: {exc}")
            return report
        version = check_marker(conn, p)
        report.schema_version = version if version >= 0 else None
        report.integrity = pragma_list(conn, f"PRAGMA {'integrity_check' if full else 'quick_check'}({MAX_ERRORS})")
        report.foreign_keys = foreign_key_problems(conn)
        try:
            report.labels = labels_differences(conn)
        except sqlite3.DatabaseError as exc:
            report.errors.append(f"cannot compare the labels with the events: {exc}")
        try:
            tables = _tables(conn)
        except sqlite3.DatabaseError as exc:
            report.errors.append(f"SQLite cannot read the schema: {exc}")
            tables = []
        for table in tables:
            try:
                report.counts[table] = int(conn.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0])
            except sqlite3.DatabaseError as exc:
                report.errors.append(f"cannot count the rows of {table}: {exc}")
    finally:
        conn.close()
    return report
