"""Recover what can still be read from a damaged project into a NEW file; the original is never written.

What it does (the sqlite3 shell's `.recover` is not reachable from Python: see app/store/pages.py):
1. Read the damaged file's schema with SQLite, read-only; when SQLite refuses even that (a truncated file, a
   damaged page 1), read it from the pages (app/store/pages.py).
2. Create every table of that schema in a new file, with the same application id and schema version.
3. Copy each table through SQLite row by row in rowid order, in chunks. When a chunk cannot be read (a damaged
   page), find the next readable rowid by an exponential then binary search over the lower bound, and go on from
   there. Tables without rowid (the embeddings cache) are copied until the first error.
4. Then walk each table's b-tree page by page and add the rows SQLite could not reach (same rowid: SQLite's copy
   wins), skipping only pages that are missing or unparseable.
5. Create the indexes afresh (a damaged index loses nothing: it is rebuilt from the table).
6. Derive the labels table again from the events (the audit trail). Labels read from the damaged file whose
   events were lost are kept apart, in the table `recovered_labels`, rather than dropped or passed off as derived.
7. Run SQLite's integrity and foreign-key checks on the new file and report, per table, rows recovered against
   rows expected where the file says (AUTOINCREMENT counters, the stored sample counts), and what was lost.
"""
from __future__ import annotations

import os
import sqlite3
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.errors import NotAProjectError, UsageError, os_error_message
from app.files import regular_file
from app.store.health import derived_labels, foreign_key_problems, open_readonly, pragma_list
from app.store.project import is_corrupt, store_error

CHUNK = 500
ORPHAN_LABELS = "recovered_labels"

Schema = list[tuple[str, str, str, str]]  # (type, name, tbl_name, sql)


@dataclass
class TableResult:
    copied: int = 0
    from_pages: int = 0  # of `copied`: rows only the page reader could reach
    unreadable_ranges: int = 0  # runs of rows SQLite could not read
    bad_pages: int = 0  # pages of this table missing from the file or unparseable
    rejected: int = 0  # rows read but refused by the new file's constraints (duplicates)
    expected: int | None = None  # rows the damaged file says it had, where it says (an upper bound)
    note: str = ""


@dataclass
class RecoveryReport:
    source: Path
    dest: Path
    tables: dict[str, TableResult] = field(default_factory=dict)
    integrity: list[str] = field(default_factory=list)
    foreign_keys: list[str] = field(default_factory=list)
    schema_from_pages: bool = False

    def lines(self) -> list[str]:
        out = [f"recovered into {self.dest} (the original {self.source} was not changed)"]
        if self.schema_from_pages:
            out.append("  SQLite could not read the schema: it and the rows were read from the file's pages")
        for name, t in self.tables.items():
            extra = []
            if t.expected is not None and t.expected > t.copied:
                extra.append(f"of at most {t.expected}: up to {t.expected - t.copied} lost")
            if t.from_pages and not self.schema_from_pages:  # (otherwise every row was)
                extra.append(f"{t.from_pages} read from the pages past SQLite's errors")
            if t.unreadable_ranges:
                extra.append(f"{t.unreadable_ranges} unreadable run(s) of rows skipped")
            if t.bad_pages:
                extra.append(f"{t.bad_pages} page(s) missing or unreadable")
            if t.rejected:
                extra.append(f"{t.rejected} row(s) refused by constraints")
            if t.note:
                extra.append(t.note)
            out.append(f"  {name}: {t.copied} rows" + (f" ({'; '.join(extra)})" if extra else ""))
        out.append("  new file integrity check: " + ("ok" if not self.integrity else "; ".join(self.integrity[:5])))
        if self.foreign_keys:
            out.append("  new file foreign keys: " + "; ".join(self.foreign_keys))
        return out


def default_dest(path: str | Path) -> Path:
    p = Path(path)
    return p.with_name(f"{p.stem}-recovered{p.suffix or '.concord'}")


def recover(source: str | Path, dest: str | Path | None = None) -> RecoveryReport:
    """Copy every readable row of `source` into the new file `dest` (refused if it exists)."""
    src_path = regular_file(source, "project file", error=NotAProjectError)
    assert src_path is not None
    out_path = Path(dest) if dest is not None else default_dest(src_path)
    if out_path.exists():
        raise UsageError(f"{out_path}: already exists; give another --out file (recovery never overwrites)")
    if out_path.resolve() == src_path.resolve():
        raise UsageError(f"{out_path}: is the damaged file itself; recovery writes a new file")
    report = RecoveryReport(src_path, out_path)
    src = open_readonly(src_path)
    try:
        schema, app_id, version = _sqlite_schema(src)
    except BaseException:
        src.close()
        raise
    if schema is None:
        src.close()  # SQLite cannot read it: the pages may still hold the schema
        schema, app_id, version = _page_schema(src_path)
        report.schema_from_pages = True
        if not schema:
            raise UsageError(f"{src_path}: SQLite cannot read the schema, nor can a page-by-page read; nothing can be "
                             "recovered (restore a backup from the .backups folder beside it)")
    tmp = out_path.with_name(f".{out_path.name}.tmp-{uuid.uuid4().hex[:8]}")
    try:
        out = sqlite3.connect(tmp, isolation_level=None)
        try:
            out.execute(f"PRAGMA application_id = {int(app_id)}")
            out.execute(f"PRAGMA user_version = {int(version)}")
            tables = [(name, sql) for kind, name, _, sql in schema if kind == "table"]
            for name, sql in tables:
                out.execute(sql)
                report.tables[name] = TableResult()
            if not report.schema_from_pages:
                try:
                    for name, _ in tables:
                        _copy_table(src, out, name, report.tables[name])
                finally:
                    src.close()
            # No SQLite connection of ours is open on the source any more: the page reader may open it.
            _copy_from_pages(src_path, out, [n for n, _ in tables], report)
            names = {n for n, _ in tables}
            if {"labels", "events"} <= names:
                _rebuild_labels(out, report.tables["labels"])
            for kind, name, _, sql in schema:
                if kind != "table":
                    try:
                        out.execute(sql)
                    except sqlite3.IntegrityError as exc:  # a UNIQUE index over rows that now repeat
                        report.integrity.append(f"index {name} not created: {exc}")
            if "row_counts" in names:  # the counts `concord status` reads: recount what was recovered
                from app.store.counts import rebuild_counts

                rebuild_counts(out)
                report.tables["row_counts"].copied = int(out.execute("SELECT count(*) FROM row_counts").fetchone()[0])
                report.tables["row_counts"].note = "recounted"
            report.integrity += pragma_list(out, "PRAGMA integrity_check(100)")
            report.foreign_keys = foreign_key_problems(out)
        finally:
            out.close()
        os.replace(tmp, out_path)  # a new file: no connection of ours is open on it
    except sqlite3.Error as exc:  # the source is only read: a full disk or a read-only place is the new file's
        _discard(src, tmp)
        if not _writing_error(exc):
            raise
        if (getattr(exc, "sqlite_errorname", "") or "").startswith(("SQLITE_CANTOPEN", "SQLITE_READONLY")):
            raise UsageError(f"{out_path}: cannot create the recovered file there (a read-only place, or no "
                             "permission); choose a writable place with --out") from None
        raise store_error(exc, out_path) or exc from None
    except OSError as exc:  # a read-only place, a full disk: name the file asked for, not the temp file
        _discard(src, tmp)
        bare = OSError(exc.errno, exc.strerror)
        raise UsageError(os_error_message(bare, out_path) or f"{out_path}: cannot write it: {exc}") from None
    except BaseException:
        _discard(src, tmp)
        raise
    return report


def _writing_error(exc: sqlite3.Error) -> bool:
    return (getattr(exc, "sqlite_errorname", "") or "").startswith(
        ("SQLITE_FULL", "SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_IOERR"))


def _discard(src: sqlite3.Connection, tmp: Path) -> None:
    """A failed recovery leaves nothing behind: no half-written file, no journal."""
    src.close()  # (closing twice is harmless)
    for suffix in ("", "-journal", "-wal", "-shm"):
        try:
            Path(f"{tmp}{suffix}").unlink(missing_ok=True)
        except OSError:  # a read-only place, where nothing was written either
            pass


def _sqlite_schema(src: sqlite3.Connection) -> tuple[Schema | None, int, int]:
    try:
        schema = src.execute("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL "
                             "AND name NOT LIKE 'sqlite_%'").fetchall()
        app_id = int(src.execute("PRAGMA application_id").fetchone()[0])
        version = int(src.execute("PRAGMA user_version").fetchone()[0])
    except sqlite3.DatabaseError as exc:
        if not is_corrupt(exc):
            raise
        return None, 0, 0
    return schema, app_id, version


def _page_schema(path: Path) -> tuple[Schema, int, int]:
    from app.store.pages import PageReader

    try:
        with PageReader(path) as reader:
            rows = reader.schema()
            return ([(t, n, tbl, sql) for t, n, tbl, _, sql in rows if sql and not n.startswith("sqlite_")],
                    reader.application_id, reader.user_version)
    except Exception:  # noqa: BLE001 - not even the file header parses: nothing to recover
        return [], 0, 0


def _rowid_columns(out: sqlite3.Connection, name: str) -> tuple[list[str], int | None]:
    """The table's columns and the index of its INTEGER PRIMARY KEY (the rowid itself), if it has one."""
    info = out.execute(f'PRAGMA table_info("{name}")').fetchall()
    cols = [r[1] for r in info]
    pks = [r for r in info if r[5]]
    ipk = cols.index(pks[0][1]) if len(pks) == 1 and str(pks[0][2]).upper() == "INTEGER" else None
    return cols, ipk


def _copy_from_pages(path: Path, out: sqlite3.Connection, names: list[str], report: RecoveryReport) -> None:
    """Add, per rowid table, the rows its b-tree pages still hold that SQLite did not copy; fill in `expected`."""
    from app.store.pages import PageReader, PageWalk

    try:
        reader = PageReader(path)
    except Exception as exc:  # noqa: BLE001 - the header itself is unreadable: SQLite's copy is all there is
        for t in report.tables.values():
            t.note = (t.note + "; " if t.note else "") + f"pages not readable ({exc})"
        return
    with reader:
        roots = {n: root for kind, n, _, root, _ in reader.schema() if kind == "table"}
        for name in names:
            result = report.tables[name]
            complete = not (report.schema_from_pages or result.unreadable_ranges)
            if complete or name not in roots or _without_rowid(out, name):  # SQLite read it all (or cannot help)
                continue
            walk = PageWalk()
            cols, ipk = _rowid_columns(out, name)
            have = {r[0] for r in out.execute(f'SELECT rowid FROM "{name}"')}
            out.execute("BEGIN")
            try:
                for rowid, values in reader.iter_rows(roots[name], walk):
                    if rowid in have or len(values) > len(cols):
                        continue
                    if ipk is not None and ipk < len(values):
                        values[ipk] = rowid
                    used = cols[: len(values)]  # a row older than an ADD COLUMN: the new columns take defaults
                    head = "" if ipk is not None else "rowid, "
                    row = values if ipk is not None else [rowid, *values]
                    sql = (f'INSERT INTO "{name}" ({head}{", ".join(f"{chr(34)}{c}{chr(34)}" for c in used)}) '
                           f"VALUES ({', '.join('?' * len(row))})")
                    try:
                        out.execute(sql, row)
                        result.copied += 1
                        result.from_pages += 1
                        have.add(rowid)
                    except sqlite3.IntegrityError:
                        result.rejected += 1
            finally:
                out.execute("COMMIT")
            result.bad_pages = walk.bad_pages
            if walk.bad_rows:
                result.note = f"{walk.bad_rows} row(s) on readable pages could not be decoded"
        for name, seq in _sequences(reader, roots).items():  # AUTOINCREMENT: ids up to seq were handed out
            if name in report.tables:
                report.tables[name].expected = seq
        if "samples" in report.tables and "row_counts" in roots:  # the stored per-scheme sample counts
            counted = [v for _, v in reader.table_rows(roots["row_counts"]).rows
                       if len(v) >= 4 and v[0] == "samples" and isinstance(v[3], int)]
            if counted:
                report.tables["samples"].expected = sum(v[3] for v in counted)


def _sequences(reader: Any, roots: dict[str, int]) -> dict[str, int]:
    if "sqlite_sequence" not in roots:
        return {}
    return {v[0]: v[1] for _, v in reader.table_rows(roots["sqlite_sequence"]).rows
            if len(v) >= 2 and isinstance(v[0], str) and isinstance(v[1], int)}


def _rebuild_labels(out: sqlite3.Connection, result: TableResult) -> None:
    """Derive the labels table from the events in the new file (per target, or per annotator with the resolved
    mark). The label rows read from the damaged file whose events were lost stay in ORPHAN_LABELS: what a human
    decided is kept, but not presented as derivable from the audit trail."""
    derived, keys = derived_labels(out)
    read = result.copied
    out.execute("BEGIN")
    out.execute(f"CREATE TABLE {ORPHAN_LABELS} AS SELECT * FROM labels")
    out.execute("DELETE FROM labels")
    if len(keys) == 4:
        from app.store.resolution import ADJUDICATED_SQL, resolve_all

        out.execute("INSERT INTO labels (sample_id, unit, kind, annotator, value, event_id, ts, adjudicated) "
                    f"SELECT d.sample_id, d.unit, d.kind, d.annotator, d.value, d.event_id, e.ts, e.origin {ADJUDICATED_SQL} "
                    f"FROM ({derived}) d JOIN events e ON e.id = d.event_id")
        resolve_all(out)
    else:
        out.execute("INSERT INTO labels (sample_id, unit, kind, value, event_id, annotator, ts) "
                    "SELECT d.sample_id, d.unit, d.kind, d.value, d.event_id, e.annotator, e.ts "
                    f"FROM ({derived}) d JOIN events e ON e.id = d.event_id")
    out.execute(f"DELETE FROM {ORPHAN_LABELS} WHERE event_id IN (SELECT id FROM events)")
    kept = int(out.execute(f"SELECT count(*) FROM {ORPHAN_LABELS}").fetchone()[0])
    if not kept:
        out.execute(f"DROP TABLE {ORPHAN_LABELS}")
    out.execute("COMMIT")
    result.copied = int(out.execute("SELECT count(*) FROM labels").fetchone()[0])
    result.from_pages = 0
    result.note = (f"derived again from the recovered events; {read} were read from the damaged file"
                   + (f", {kept} of them, whose events were lost, kept in table {ORPHAN_LABELS}" if kept else ""))


def _copy_table(src: sqlite3.Connection, out: sqlite3.Connection, name: str, result: TableResult) -> None:
    """Copy what SQLite can read of table `name`, keeping rowids (the page reader adds the rest by rowid)."""
    q = f'"{name}"'
    cols = [r[1] for r in src.execute(f"PRAGMA table_info({q})")]
    col_list = ", ".join(f'"{c}"' for c in cols)
    out.execute("BEGIN")
    try:
        if _without_rowid(src, name):
            insert = f"INSERT INTO {q} ({col_list}) VALUES ({', '.join('?' * len(cols))})"
            try:
                for row in src.execute(f"SELECT {col_list} FROM {q}"):
                    _insert(out, insert, [row], result)
            except sqlite3.DatabaseError as exc:
                result.note = f"stopped at the first damaged page ({exc})"
            return
        _, ipk = _rowid_columns(out, name)
        keep = 1 if ipk is not None else 0  # with an INTEGER PRIMARY KEY the rowid is among the columns already
        head = "" if keep else "rowid, "
        insert = f"INSERT INTO {q} ({head}{col_list}) VALUES ({', '.join('?' * (len(cols) + 1 - keep))})"
        lower = 0  # rows with rowid > lower are still to be read (Concord's rowids are positive)
        size = CHUNK  # a chunk that fails is read again row by row, up to the damaged page
        while True:
            try:
                rows = src.execute(f"SELECT rowid, {col_list} FROM {q} WHERE rowid > {lower} "
                                   f"ORDER BY rowid LIMIT {size}").fetchall()
            except sqlite3.DatabaseError as exc:
                if not is_corrupt(exc):
                    raise
                if size > 1:
                    size = 1
                    continue
                result.unreadable_ranges += 1
                nxt = _next_readable(src, q, lower)
                if nxt is None:
                    break
                lower, size = nxt, CHUNK
                continue
            if not rows:
                break
            _insert(out, insert, [r[keep:] for r in rows], result)
            lower, size = rows[-1][0], CHUNK
    finally:
        out.execute("COMMIT")


def _insert(out: sqlite3.Connection, insert: str, rows: list[tuple], result: TableResult) -> None:
    try:
        out.execute("SAVEPOINT chunk")
        out.executemany(insert, rows)
        out.execute("RELEASE chunk")
        result.copied += len(rows)
    except sqlite3.IntegrityError:
        out.execute("ROLLBACK TO chunk")
        out.execute("RELEASE chunk")
        for row in rows:
            try:
                out.execute(insert, row)
                result.copied += 1
            except sqlite3.IntegrityError:
                result.rejected += 1


def _readable_from(src: sqlite3.Connection, q: str, lower: int) -> bool:
    try:
        src.execute(f"SELECT rowid FROM {q} WHERE rowid > {lower} ORDER BY rowid LIMIT 1").fetchall()
        return True
    except sqlite3.DatabaseError:
        return False


def _next_readable(src: sqlite3.Connection, q: str, bad: int) -> int | None:
    """The smallest lower bound above `bad` from which the next rows can be read (None: nothing more is readable).

    Reading from bound x fails while the rows right after x sit on a damaged page, and succeeds from the end of
    that page on: the predicate is monotone, so an exponential then binary search finds the edge.
    """
    top = 2 ** 63 - 1
    step = 1
    while bad + step < top and not _readable_from(src, q, bad + step):
        step *= 2
    good = min(bad + step, top)
    if not _readable_from(src, q, good):
        return None
    lo = bad + step // 2 if step > 1 else bad  # known unreadable (or the start)
    while good - lo > 1:
        mid = (lo + good) // 2
        if _readable_from(src, q, mid):
            good = mid
        else:
            lo = mid
    return good


def _without_rowid(src: sqlite3.Connection, name: str) -> bool:
    sql = src.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone()
    return bool(sql and "WITHOUT ROWID" in sql[0].upper())
