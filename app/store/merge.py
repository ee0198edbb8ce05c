"""Merge project files (issue #15): annotators label their own copies offline; the merge unions their events.

Rules:
- the samples must be the same: every sample of an input must be in the output with the same content hash
  (a missing or changed sample is an error and nothing is written);
- events are identified by their `uid` (schema v4: a hash of what they say and when), so an event already in the
  output is never added twice and merging the same files again changes nothing;
- after the union the events are numbered again in time order (ts, then their order in the output) and the labels
  are derived from them, so the merged file equals one file in which everybody labeled (event ids are local to a
  file; the uid is what identifies an event across files);
- a conflict (the same annotator's newest label of a target differs between files) is reported, never dropped:
  both events stay in the audit trail and the newer one is that annotator's label. Different annotators who
  disagree are not conflicts: that is what agreement measures and adjudication resolves.
- work log rows and assignments are unioned too.

All or nothing (issue #24): every file is validated first through read-only SQLite connections (a Concord project,
not from a newer Concord, healthy, not the output under another name: same device and inode, so hard links and
symlinks count; the same samples); nothing is written before that. Inputs are only ever read (one of an older
schema is migrated in a temporary copy, never in place). An existing output is backed up, then gets the whole merge
(rows, renumbering, labels) in ONE transaction, so a killed merge leaves it as it was. A new output is built in a
temporary file beside it and renamed into place only when complete. Only SQLite is used on project files (the backup
API for copies), never a file copy.
"""
from __future__ import annotations

import json
import os
import sqlite3
import stat
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.errors import NotAProjectError
from app.store import Project
from app.store import backup as backups
from app.store.health import check_marker, open_readonly, quick_check
from app.store.project import damaged
from app.store.schema import LATEST

# guideline_version: the number as the input recorded it (merged files share their samples; their guidelines are
# not merged)
EVENT_COLUMNS = "ts, annotator, sample_id, unit, kind, before, after, command, origin, guideline_version, machine_visible, uid"
PAUSE_ENV = "CONCORD_MERGE_TEST_PAUSE"  # tests only: seconds to sleep inside the write, where a kill must lose nothing


class MergeError(ValueError):
    """The inputs cannot be merged (different samples); nothing was written."""


@dataclass
class MergeReport:
    out: Path
    inputs: list[Path]
    added_events: dict[str, int] = field(default_factory=dict)  # input -> events new to the output
    conflicts: list[dict[str, Any]] = field(default_factory=list)
    created: bool = False

    @property
    def changed(self) -> bool:
        return any(self.added_events.values())

    def to_json(self) -> dict[str, Any]:
        return {"out": str(self.out), "inputs": [str(p) for p in self.inputs], "created": self.created,
                "added_events": self.added_events, "conflicts": self.conflicts}


def _check_samples(conn: sqlite3.Connection, alias: str, name: str) -> None:
    problems = []
    for sid, main_hash, src_hash in conn.execute(
        f"SELECT s.id, m.content_hash, s.content_hash FROM {alias}.samples s LEFT JOIN main.samples m ON m.id = s.id "
        "WHERE m.content_hash IS NOT s.content_hash LIMIT 11"
    ):
        problems.append(f"sample {sid!r} is not in the output" if main_hash is None
                        else f"sample {sid!r} has different content (hash {src_hash[:12]} vs {main_hash[:12]})")
    if problems:
        more = " (and more)" if len(problems) > 10 else ""
        raise MergeError(f"{name}: cannot merge: " + "; ".join(problems[:10]) + more +
                         "; merge copies of one project (the same samples, imported once)")


def _latest(conn: sqlite3.Connection) -> dict[tuple[str, str, str, str], tuple[str, str | None]]:
    """(sample, unit, kind, annotator) -> (ts, after) of the newest event in a database."""
    return {(s, u, k, a): (ts, after) for s, u, k, a, ts, after in conn.execute(
        "SELECT e.sample_id, e.unit, e.kind, e.annotator, e.ts, e.after FROM events e JOIN "
        "(SELECT MAX(id) AS id FROM events GROUP BY sample_id, unit, kind, annotator) last ON last.id = e.id")}


def _file_id(path: Path) -> tuple[int, int]:
    st = path.stat()  # follows symlinks; opens no descriptor
    return st.st_dev, st.st_ino


def _check_paths(out: Path, paths: list[Path]) -> bool:
    """Every input an existing regular file, none of them the output or another input under a second name (hard
    link, symlink, other spelling). Returns whether the output exists (a non-empty file)."""
    if not paths:
        raise MergeError("give at least one input project")
    for p in paths:
        if p.is_dir():
            raise MergeError(f"{p}: is a directory, not a project file (give the path of a .concord file)")
        if not p.exists():
            raise MergeError(f"{p}: no such project file")
        if not stat.S_ISREG(p.stat().st_mode):
            raise MergeError(f"{p}: not a regular file (give the path of a .concord file)")
    if out.is_dir():
        raise MergeError(f"{out}: is a directory; give the path of the merged .concord file")
    if out.exists() and not stat.S_ISREG(out.stat().st_mode):
        raise MergeError(f"{out}: not a regular file (give the path of a .concord file)")
    if backups.in_backup_folder(out):
        raise MergeError(f"{out}: is in a .backups folder, which Concord never writes; give an output outside it")
    out_exists = out.exists() and out.stat().st_size > 0
    seen: dict[tuple[int, int], str] = {_file_id(out): "the output"} if out_exists else {}
    for p in paths:
        other = seen.setdefault(_file_id(p), str(p))
        if other != str(p):
            raise MergeError(f"{p}: is {other} itself (the same file under another name); "
                             + ("give another output file" if other == "the output" else "give each input once"))
    if not out_exists and Path(f"{out}-wal").exists():
        raise MergeError(f"{out}-wal: a write-ahead log without its project file {out}; move it away first")
    return out_exists


def _validate(p: Path) -> tuple[sqlite3.Connection, int]:
    """A read-only connection to a healthy Concord project and its schema version (refused: anything else)."""
    conn = open_readonly(p)
    try:
        version = check_marker(conn, p)
        if version > LATEST:
            raise NotAProjectError(f"{p}: made by a newer Concord (schema {version}, this version knows {LATEST}); "
                                   "upgrade Concord")
        problems = ["SQLite cannot read its schema"] if version < 0 else quick_check(conn, 1)
        if problems:  # one line: SQLite's first finding, without its "*** in database main ***" heading
            raise damaged(p, "; ".join(ln for ln in problems[0].splitlines() if not ln.startswith("***")))
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise NotAProjectError(f"{p}: cannot be read as a Concord project ({exc})") from None
    except BaseException:
        conn.close()
        raise
    return conn, version


def _readable(p: Path, work: Path) -> Path:
    """Validate an input; the file to read it from: itself, or a migrated temporary copy when its schema is older
    (opening it as a project would migrate the input itself)."""
    conn, version = _validate(p)
    try:
        if version == LATEST:
            return p
        copy = backups.copy_database(conn, work / f"{uuid.uuid4().hex[:8]}-{p.name}")
    finally:
        conn.close()
    Project.open(copy).close()  # migrates the copy (its pre-migration backup goes to the temporary folder too)
    return copy


def _check_all_samples(base: Path, sources: list[tuple[str, Path]]) -> None:
    """Every input's samples are in `base` (the output, or the first input for a new one), read-only."""
    conn = open_readonly(base)
    try:
        for name, src in sources:
            conn.execute("ATTACH DATABASE ? AS src", (f"{src.resolve().as_uri()}?mode=ro",))
            try:
                _check_samples(conn, "src", name)
            finally:
                conn.execute("DETACH DATABASE src")
    finally:
        conn.close()


def _columns(conn: sqlite3.Connection, table: str) -> str:
    return ", ".join(r[1] for r in conn.execute(f"PRAGMA table_info({table})"))


def _add_rows(c: sqlite3.Connection, src: sqlite3.Connection) -> int:
    """Insert what `src` holds and the output does not (inside the caller's transaction); the events added."""
    for table in ("annotators", "assignments", "reveals"):
        cols = _columns(src, table)
        marks = ", ".join("?" for _ in cols.split(", "))
        c.executemany(f"INSERT OR IGNORE INTO {table} ({cols}) VALUES ({marks})",
                      src.execute(f"SELECT {cols} FROM {table}"))
    n = len(EVENT_COLUMNS.split(", "))  # the uid is the last one: looked up in the index, not held in memory
    cur = c.executemany(f"INSERT INTO events ({EVENT_COLUMNS}) SELECT {', '.join(f'?{i}' for i in range(1, n + 1))} "
                        f"WHERE ?{n} IS NULL OR NOT EXISTS (SELECT 1 FROM events WHERE uid = ?{n})",
                        src.execute(f"SELECT {EVENT_COLUMNS} FROM events ORDER BY ts, id"))
    added = max(cur.rowcount, 0)
    c.executemany("INSERT INTO work_log (annotator, sample_id, unit, seconds, ts) SELECT ?1, ?2, ?3, ?4, ?5 "
                  "WHERE NOT EXISTS (SELECT 1 FROM work_log m WHERE m.annotator = ?1 AND m.sample_id = ?2 "
                  "AND m.unit = ?3 AND m.seconds = ?4 AND m.ts = ?5)",
                  src.execute("SELECT annotator, sample_id, unit, seconds, ts FROM work_log"))
    return added


def _conflicts(c: sqlite3.Connection, src: sqlite3.Connection, name: str, report: MergeReport) -> None:
    mine, theirs = _latest(c), _latest(src)
    for key in sorted(mine.keys() & theirs.keys()):
        (ts_a, a), (ts_b, b) = mine[key], theirs[key]
        if a != b:
            report.conflicts.append({"input": name, "sample": key[0], "unit": key[1], "kind": key[2],
                                     "annotator": key[3], "output": None if a is None else json.loads(a),
                                     "input_value": None if b is None else json.loads(b),
                                     "kept": "input" if ts_b > ts_a else "output"})


def _renumber_events(project: Project) -> None:
    """Number the events in time order (ts, then current id) and derive the labels again."""
    with project.transaction() as c:
        c.execute("CREATE TEMP TABLE merge_events AS SELECT * FROM main.events")
        c.execute("DELETE FROM main.events")
        c.execute(f"INSERT INTO main.events (id, {EVENT_COLUMNS}) SELECT ROW_NUMBER() OVER (ORDER BY ts, id), "
                  f"{EVENT_COLUMNS} FROM temp.merge_events ORDER BY ts, id")
        c.execute("DROP TABLE temp.merge_events")
        project.decisions.rebuild_labels()


def _pause() -> None:
    """A window for the kill test (PAUSE_ENV): the merge is mid-transaction here."""
    seconds = float(os.environ.get(PAUSE_ENV) or 0)
    if seconds > 0:
        time.sleep(seconds)


def _merge_into(project: Project, sources: list[tuple[str, Path]], report: MergeReport) -> None:
    """Every input's new rows, the renumbering and the labels they derive: one transaction."""
    added = 0
    with project.transaction() as c:
        for name, src in sources:
            conn = open_readonly(src)
            try:
                _conflicts(c, conn, name, report)
                report.added_events[name] = n = _add_rows(c, conn)
            finally:
                conn.close()
            added += n
            _pause()
        if added:
            _renumber_events(project)
            _pause()


def _create(out: Path, first: tuple[str, Path], rest: list[tuple[str, Path]], report: MergeReport) -> None:
    """Build a new output in a temporary file beside it; rename it into place only when complete."""
    tmp = out.with_name(f".{out.name}.merge-{uuid.uuid4().hex[:8]}")
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        conn = open_readonly(first[1])
        try:
            backups.copy_database(conn, tmp)  # SQLite's backup API: a consistent snapshot of the first input
        finally:
            conn.close()
        with Project.open(tmp) as project:
            report.added_events[first[0]] = int(project.scalar("SELECT COUNT(*) FROM events") or 0)
            _merge_into(project, rest, report)
        os.replace(tmp, out)  # every connection to tmp is closed (its -wal checkpointed away); out did not exist
    finally:
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(f"{tmp}{suffix}").unlink(missing_ok=True)  # our own temporary file, closed; gone after the rename


def merge(out: str | Path, inputs: list[str | Path]) -> MergeReport:
    """Merge `inputs` into `out` (created from the first input when it does not exist). All or nothing."""
    out = Path(out)
    paths = [Path(p) for p in inputs]
    out_exists = _check_paths(out, paths)
    report = MergeReport(out, paths)
    with tempfile.TemporaryDirectory(prefix="concord-merge-") as work:
        if out_exists:
            _validate(out)[0].close()
        sources = [(str(p), _readable(p, Path(work))) for p in paths]
        base = out if out_exists else sources[0][1]
        _check_all_samples(base, sources if out_exists else sources[1:])
        if not out_exists:
            report.created = True
            _create(out, sources[0], sources[1:], report)
            return report
        with Project.open(out) as project:
            project.backup_before("before-merge")
            _merge_into(project, sources, report)
    return report
