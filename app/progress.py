"""Progress/cancel protocol shared by long work: the CLI shows a rich bar, the GUI a progress bar in a worker."""
from __future__ import annotations

from typing import Protocol

from calibration.search.progress import Cancelled  # one class for app and calibration: `except Cancelled` catches both

__all__ = ["Cancelled", "NullProgress", "Progress", "check"]


class Progress(Protocol):
    def update(self, done: int, total: int, message: str = "") -> None: ...

    def cancelled(self) -> bool: ...


class NullProgress:
    """Progress that shows nothing and never cancels."""

    def update(self, done: int, total: int, message: str = "") -> None:
        pass

    def cancelled(self) -> bool:
        return False


def check(progress: Progress | None) -> None:
    if progress is not None and progress.cancelled():
        raise Cancelled()
