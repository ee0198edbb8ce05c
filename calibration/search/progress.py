"""Progress/cancel for long searches, duck-typed so the CLI bar and the GUI worker can both drive it.

Mirrors app.progress (calibration may not import app): a progress object has `update(done, total, message)`
and may have `cancelled() -> bool`; a separate `cancel` may be a callable returning bool or an object with
`cancelled()` (or a threading.Event).
"""
from __future__ import annotations

from typing import Any, Protocol


class Cancelled(Exception):
    """Raised when the caller's progress/cancel object asks the search to stop."""


class ProgressLike(Protocol):
    def update(self, done: int, total: int, message: str = "") -> None: ...


def report(progress: ProgressLike | None, done: int, total: int, message: str) -> None:
    if progress is not None:
        progress.update(int(done), int(total), message)


def is_cancelled(progress: Any, cancel: Any) -> bool:
    """True when either the progress object or the cancel hook says stop."""
    for src in (cancel, progress):
        if src is None:
            continue
        probe = getattr(src, "cancelled", None) or getattr(src, "is_set", None)  # is_set: a threading.Event
        if callable(probe):
            if probe():
                return True
        elif src is cancel and callable(src) and src():
            return True
    return False


def check(progress: Any, cancel: Any) -> None:
    if is_cancelled(progress, cancel):
        raise Cancelled("calibration cancelled")
