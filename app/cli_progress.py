"""A rich progress bar that implements app.progress.Progress for CLI commands (stderr, so --json stays clean)."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


class RichBar:
    def __init__(self, bar: Progress) -> None:
        self._bar = bar
        self._task = bar.add_task("working", total=None, message="")

    def update(self, done: int, total: int, message: str = "") -> None:
        self._bar.update(self._task, completed=done, total=total or None, message=message)

    def cancelled(self) -> bool:
        return False  # Ctrl-C raises KeyboardInterrupt, which the CLI reports


@contextmanager
def rich_progress(enabled: bool = True) -> Iterator[RichBar | None]:
    if not enabled:
        yield None
        return
    console = Console(stderr=True)
    with Progress(TextColumn("[bold]{task.fields[message]}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=True) as bar:
        yield RichBar(bar)
