"""Backups of a project file, always through SQLite's online backup API.

Why never a file copy: on POSIX, closing any descriptor of the project file drops every SQLite lock this process
holds on it, and a copy of the main file alone misses what is still in the `-wal`. `sqlite3.Connection.backup`
reads a consistent snapshot through the live connection, so it is safe while the app and other processes write.

Automatic backups go beside the project, in `<name>.backups/<stem>-<UTC timestamp>[-<label>].concord`; the newest
`KEEP` are kept. They are made before every schema migration, before every command that rewrites much of the
project (`merge` into an existing file, `labels import`, `calibrate --apply`, `check --repair`) and, by the app, at
most once per hour of use. A command's backup is skipped when the file has not changed since the newest backup
(size and modification time of the file and of its `-wal`, recorded beside the backups in `last-backup.json`).
A file inside a `.backups` folder is never backed up (nor migrated: `Project` opens it read-only).
"""
from __future__ import annotations

import json
import os
import re
import sqlite3
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path

from app.errors import UsageError

KEEP = 5
HOURLY = 3600.0
UNCHANGED_FOR = 24 * 3600.0  # a command skips its backup if the newest is younger and the file unchanged since
_STATE = "last-backup.json"
_STAMP = "%Y%m%dT%H%M%S"
_UNSAFE = re.compile(r"[^\w.-]")
_NAME = re.compile(r"-(\d{8}T\d{6}(?:\.\d{3})?)Z(?:-[\w.-]+)?\.concord$")


def backup_dir(project_path: str | Path) -> Path:
    """`<dir>/<name>.backups/`: next to the project, so it moves and is deleted together with it."""
    p = Path(project_path)
    return p.with_name(p.name + ".backups")


def copy_database(conn: sqlite3.Connection, dest: str | Path) -> Path:
    """Write a consistent snapshot of `conn`'s main database to the new file `dest` (atomically: temp + rename).

    The copy is a single self-contained file (rollback journal mode, no `-wal`) with the same application id and
    schema version, so it opens as a project.
    """
    dest = Path(dest)
    if dest.is_dir():
        raise IsADirectoryError(f"{dest}: is a directory")
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.tmp-{uuid.uuid4().hex[:8]}")
    out = sqlite3.connect(tmp, isolation_level=None)
    try:
        conn.backup(out)
        out.execute("PRAGMA journal_mode = DELETE")
    except BaseException:
        out.close()
        tmp.unlink(missing_ok=True)  # our own temporary file; its only connection is closed
        raise
    out.close()
    os.replace(tmp, dest)  # dest is a new backup file that no connection uses
    return dest


def list_backups(project_path: str | Path) -> list[Path]:
    """The automatic backups of a project, oldest first."""
    folder = backup_dir(project_path)
    if not folder.is_dir():
        return []
    stem = Path(project_path).stem
    found = [p for p in folder.iterdir() if p.name.startswith(stem + "-") and _NAME.search(p.name)]
    return sorted(found, key=lambda p: _NAME.search(p.name).group(1))  # type: ignore[union-attr]


def in_backup_folder(path: str | Path) -> bool:
    """Is `path` a file inside a `<name>.backups/` folder (a backup, to be read as it is)?"""
    return Path(os.path.realpath(path)).parent.name.endswith(".backups")


def never_written(path: str | Path) -> UsageError:
    """The refusal to write a file in a `.backups` folder (a command opened a backup and wants to change it)."""
    p = Path(path)
    return UsageError(f"{p}: is a backup (in {p.parent.name}/), and Concord never writes backups; copy it out of "
                      f"that folder first (e.g. `cp {p} restored.concord`)")


def fingerprint(project_path: str | Path) -> list[int]:
    """Size and modification time (ns) of the project file and of its `-wal` when that holds anything.

    stat() only: it opens no descriptor, so it is safe while this process holds connections to the file. Any
    commit changes the `-wal` (or, once checkpointed, the file); an empty `-wal` is what merely opening it leaves.
    """
    p = Path(project_path)
    st = p.stat()
    out = [st.st_size, st.st_mtime_ns]
    try:
        wal = p.with_name(p.name + "-wal").stat()
    except FileNotFoundError:
        return out
    return out + [wal.st_size, wal.st_mtime_ns] if wal.st_size else out


def _write_state(project_path: Path, backup: Path, print_: list[int]) -> None:
    state = backup.parent / _STATE
    tmp = state.with_name(f".{_STATE}.tmp-{uuid.uuid4().hex[:8]}")
    tmp.write_text(json.dumps({"backup": backup.name, "fingerprint": print_}))
    os.replace(tmp, state)


def _unchanged_since_newest(project_path: str | Path, within: float) -> bool:
    """Is the newest backup younger than `within` seconds, and the file as it was when that backup was taken?"""
    backups = list_backups(project_path)
    age = last_backup_age(project_path)
    if not backups or age is None or age >= within:
        return False
    try:
        state = json.loads((backup_dir(project_path) / _STATE).read_text())
    except (OSError, ValueError):
        return False
    return isinstance(state, dict) and state.get("backup") == backups[-1].name and \
        state.get("fingerprint") == fingerprint(project_path)


def make_backup(conn: sqlite3.Connection, project_path: str | Path, label: str = "", keep: int = KEEP) -> Path:
    """Back up into the project's backup folder and prune it to the newest `keep` files."""
    if in_backup_folder(project_path):
        raise ValueError(f"{project_path}: is a backup itself; backups are not backed up (no nested .backups)")
    before = fingerprint(project_path)  # taken before the copy: a write during it makes the next check differ
    now = datetime.now(timezone.utc)
    stamp = now.strftime(_STAMP) + f".{now.microsecond // 1000:03d}Z"
    suffix = "-" + _UNSAFE.sub("_", label) if label else ""
    dest = backup_dir(project_path) / f"{Path(project_path).stem}-{stamp}{suffix}.concord"
    copy_database(conn, dest)
    _write_state(Path(project_path), dest, before)
    for old in list_backups(project_path)[:-keep] if keep > 0 else []:
        old.unlink(missing_ok=True)  # an old backup: no connection of ours is open on it
    return dest


def backup_before_change(conn: sqlite3.Connection, project_path: str | Path, label: str, keep: int = KEEP,
                         unchanged_for: float = UNCHANGED_FOR) -> Path | None:
    """A backup before a command rewrites the project; None when skipped: the file is a backup itself, or it has not
    changed since the newest backup, taken less than `unchanged_for` seconds ago (a second copy would add nothing
    and prune an older one)."""
    if in_backup_folder(project_path) or _unchanged_since_newest(project_path, unchanged_for):
        return None
    return make_backup(conn, project_path, label, keep)


def backup_file(path: str | Path, label: str) -> Path | None:
    """`backup_before_change` for a file no connection of this process has open (`check --repair`), read through a
    read-only SQLite connection. Best effort: None when SQLite cannot read it (the repair never writes it anyway)."""
    if in_backup_folder(path):
        return None
    try:
        conn = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True, isolation_level=None,
                               timeout=10.0)
    except sqlite3.Error:
        return None
    try:  # keep=0: a copy of a damaged file never prunes an older, perhaps healthy, backup
        return backup_before_change(conn, path, label, keep=0)
    except (sqlite3.Error, OSError):
        return None
    finally:
        conn.close()


def last_backup_age(project_path: str | Path) -> float | None:
    """Seconds since the newest automatic backup was written (None: there is none)."""
    backups = list_backups(project_path)
    if not backups:
        return None
    stamp = _NAME.search(backups[-1].name).group(1)  # type: ignore[union-attr]
    then = datetime.strptime(stamp[:15], _STAMP).replace(tzinfo=timezone.utc).timestamp()
    return max(0.0, time.time() - then)


def backup_if_due(conn: sqlite3.Connection, project_path: str | Path, every: float = HOURLY,
                  keep: int = KEEP) -> Path | None:
    """Back up when the newest backup is older than `every` seconds (or there is none); else do nothing."""
    age = last_backup_age(project_path)
    if (age is not None and age < every) or in_backup_folder(project_path):
        return None
    return make_backup(conn, project_path, keep=keep)


def install_database(source: str | Path, dest: str | Path) -> None:
    """Make `dest` hold the closed database `source`, then delete `source` (for `concord demo --force`).

    An existing database at `dest` is overwritten page by page through the backup API, under SQLite's locks, so a
    connection that has it open sees the new content instead of writing on into a deleted file. A new `dest`, or
    one that is not a database (no SQLite connection can be using it), is simply replaced by a rename.
    """
    source, dest = Path(source), Path(dest)
    if dest.exists():
        src = sqlite3.connect(source)
        out = sqlite3.connect(dest, timeout=10.0)
        try:
            src.backup(out)
            return_after = True
        except sqlite3.DatabaseError as exc:
            if getattr(exc, "sqlite_errorname", "") != "SQLITE_NOTADB":
                raise
            return_after = False
        finally:
            out.close()
            src.close()
        if return_after:
            for p in (source, source.with_name(source.name + "-wal"), source.with_name(source.name + "-shm")):
                p.unlink(missing_ok=True)  # our own closed build file
            return
    os.replace(source, dest)
