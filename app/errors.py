"""Errors the user can act on: printed without a traceback (exit status 2 on the CLI, a dialog in the GUI)."""
from __future__ import annotations


class UsageError(Exception):
    """Bad input or a refused operation; the message names the file, line and field where it can."""


class NotAProjectError(UsageError):
    """The path is not a Concord project file."""


class DamagedProjectError(UsageError):
    """The path is a Concord project (or an SQLite file) that SQLite reports as corrupt; `concord check --repair`."""


class BusyProjectError(UsageError):
    """Another connection held the project's write lock for longer than the busy budget (`busy_seconds`)."""


BUSY_ENV = "CONCORD_BUSY_SECONDS"
BUSY_DEFAULT = 30.0


def busy_seconds() -> float:
    """How long a writer waits for another process's write lock (SQLite's busy handler retries with backoff):
    30 s, or the number of seconds in the environment variable CONCORD_BUSY_SECONDS (tests shorten it)."""
    import os

    try:
        return max(0.0, float(os.environ.get(BUSY_ENV, BUSY_DEFAULT)))
    except ValueError:
        return BUSY_DEFAULT


def os_error_message(exc: OSError, path: object = None) -> str | None:
    """One sentence for a file-system error the user can fix (full disk, read-only place, no permission), naming
    the file and what to do; None for other errors (a bug: the traceback is wanted)."""
    import errno

    where = exc.filename or path or "a file"
    advice = {
        errno.ENOSPC: "no space left on the device; free some space (or choose another place) and run the command "
                      "again: nothing was left half-written",
        errno.EDQUOT: "the disk quota is exhausted; free some space and run the command again",
        errno.EROFS: "is on a read-only file system; choose a writable place (for example with --out)",
        errno.EACCES: "permission denied; choose a place you may write to, or change its permissions",
        errno.EPERM: "operation not permitted; choose a place you may write to, or change its permissions",
        errno.ENOENT: "no such file or directory",
        errno.ENOTDIR: "a part of the path is not a directory",
        errno.EISDIR: "is a directory; give a file name",
        errno.EIO: "input/output error from the device; check the disk (and `concord check` the project)",
        errno.ENAMETOOLONG: "the file name is too long",
    }.get(exc.errno or 0)
    return None if advice is None else f"{where}: {advice}"
