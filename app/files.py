"""The one check every path that opens a project or an input file goes through first: is it a regular file?

Opening a FIFO blocks until a writer appears (`concord check` on one hung forever), and a device or a socket is
never a project or a data file. `os.stat` opens no descriptor, so this is safe while SQLite holds the file (see
DESIGN.md: closing any descriptor of a project file drops SQLite's locks) and answers at once for a FIFO.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

from app.errors import UsageError

KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a character device"),
         (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def regular_file(path: str | Path, what: str = "file", *, missing_ok: bool = False,
                 error: type[UsageError] = UsageError) -> Path | None:
    """`path` when it is a regular file (symlinks followed); None when it does not exist and `missing_ok`;
    otherwise `error` naming what it is instead (`what`: "project file", "input file", ...)."""
    p = Path(path)
    try:
        mode = os.stat(p).st_mode
    except FileNotFoundError:
        if missing_ok:
            return None
        raise error(f"{p}: no such {what}") from None
    except OSError as exc:
        raise error(f"{p}: cannot read it ({exc.strerror or exc})") from None
    if stat.S_ISREG(mode):
        return p
    kind = next((name for test, name in KINDS if test(mode)), "not a regular file")
    raise error(f"{p}: is {kind}, not a {what}")


def write_text_atomically(path: str | Path, text: str) -> None:
    """Write a whole output file or nothing: a temp file beside it, flushed to disk, renamed over the target (an
    interrupted write leaves the old file, never half a new one). The target must not be a FIFO or a device."""
    path = Path(path)
    regular_file(path, "output file", missing_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
