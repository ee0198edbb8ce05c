"""Database and file-system failures as one sentence the user can act on (damaged, newer schema, hot journal, full,
busy, read-only, unopenable). Its own module so that both the project (opening, transactions) and the health
checks (read-only opening, repair) use it without importing each other."""
from __future__ import annotations

import sqlite3
from pathlib import Path

from app.errors import BUSY_ENV, BusyProjectError, DamagedProjectError, NotAProjectError, UsageError, busy_seconds
from app.store.schema import LATEST


def is_corrupt(exc: BaseException) -> bool:
    """SQLite says the file is damaged (SQLITE_CORRUPT), as opposed to not being a database at all."""
    return isinstance(exc, sqlite3.DatabaseError) and (
        getattr(exc, "sqlite_errorname", "") == "SQLITE_CORRUPT" or "malformed" in str(exc))


def is_store_error(exc: BaseException) -> bool:
    """Any error the database raised (locked, read-only, damaged, I/O), so the GUI can advise on it without
    importing sqlite3 (SQL lives only in app/store)."""
    return isinstance(exc, sqlite3.DatabaseError)


def damaged(path: str | Path, exc: BaseException | str) -> DamagedProjectError:
    return DamagedProjectError(f"{path}: damaged: {exc}; run `concord check --repair {path}`")


def newer_schema(path: str | Path, version: int) -> NotAProjectError:
    """Every command refuses a file made by a newer Concord: this one cannot read (or check) its schema."""
    return NotAProjectError(f"{path}: made by a newer Concord (schema {version}, this version knows {LATEST}); "
                            "upgrade Concord")


def hot_journal(path: str | Path) -> UsageError:
    """A writer stopped mid-transaction and left a hot rollback journal that this connection may not roll back."""
    return UsageError(f"{path}: a process stopped in the middle of a write and left {path}-journal; rolling it back "
                      "needs write access to the file and its folder: make them writable (or copy both files to a "
                      "writable folder) and run the command again")


def store_error(exc: BaseException, path: str | Path | None) -> UsageError | None:
    """The user-facing error for a database error the user can act on (damaged, full disk, busy, read-only place,
    unopenable), naming the project and what to do; None for anything else (a bug: keep the traceback).

    SQLite's extended result codes say which (Python 3.11+ puts the name on the exception); the messages are the
    fallback for errors raised without one."""
    if not isinstance(exc, sqlite3.Error):
        return None
    p = path or "the project"
    name = getattr(exc, "sqlite_errorname", "") or ""
    text = str(exc)
    if is_corrupt(exc):
        return damaged(p, exc)
    if name.startswith("SQLITE_FULL") or "database or disk is full" in text:
        return UsageError(f"{p}: the disk is full (SQLite could not grow the file or its journal); free some space "
                          "and run the command again: nothing was written")
    if name.startswith("SQLITE_BUSY") or "database is locked" in text:
        return BusyProjectError(f"another Concord process is writing to {p} (waited {busy_seconds():g} s for it); "
                                f"run the command again when it has finished, or set {BUSY_ENV} to wait longer")
    if name == "SQLITE_READONLY_ROLLBACK":
        return hot_journal(p)
    if name.startswith("SQLITE_READONLY") or "readonly database" in text:
        return UsageError(f"{p}: cannot be written: the file, its folder or the medium is read-only; make it "
                          "writable (or copy the project to a writable folder) and run the command again")
    if name.startswith("SQLITE_CANTOPEN") or "unable to open database file" in text:
        return UsageError(f"{p}: SQLite cannot open it or create its -wal and -shm files beside it (a read-only "
                          "medium or folder?); copy the project to a writable folder, or read it with "
                          f"`concord check {p}`")
    if name.startswith("SQLITE_IOERR") or "disk I/O error" in text:
        return UsageError(f"{p}: disk I/O error ({text}): the disk may be full or failing; free some space or check "
                          f"the device, then run `concord check {p}`")
    return None


def store_error_message(exc: BaseException, path: object = None) -> str | None:
    """`store_error` as one sentence (for app.errors.explain)."""
    err = store_error(exc, None if path is None else str(path))
    return None if err is None else str(err)
