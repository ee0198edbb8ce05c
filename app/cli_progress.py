"""One rich progress bar implementing app.progress.Progress for every CLI command (on stderr, so --json stays
clean). Cancellation comes from an optional threading.Event, set by `sigint_cancels` (Ctrl-C) in a command or in a
scheme's LLM run, which is why this lives here and not in app/commands: schemes import it without importing a
command."""
from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn


class RichBar:
    def __init__(self, console: Console | None = None, label: str = "working", cancel: threading.Event | None = None,
                 transient: bool = True) -> None:
        self._cancel = cancel
        console = console or Console(stderr=True)
        self._bar = Progress(
            TextColumn(f"[bold]{label}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn(),
            TextColumn("{task.fields[message]}"), console=console, transient=transient,
            disable=not console.is_terminal,  # no bar control codes in logs, pipes or tests
        )
        self._task = self._bar.add_task(label, total=None, message="")

    def __enter__(self) -> "RichBar":
        self._bar.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._bar.stop()

    def update(self, done: int, total: int, message: str = "") -> None:
        self._bar.update(self._task, completed=done, total=total or None, message=message)

    def cancelled(self) -> bool:
        return self._cancel is not None and self._cancel.is_set()


@contextmanager
def rich_progress(enabled: bool = True, label: str = "working") -> Iterator[RichBar | None]:
    """A bar when `enabled` (usually: stderr is a terminal), else None so the work runs silently."""
    if not enabled:
        yield None
        return
    with RichBar(label=label) as bar:
        yield bar


@contextmanager
def sigint_cancels(console: Console) -> Iterator[threading.Event]:
    """First Ctrl-C: stop starting requests and let those in flight be saved. Second Ctrl-C: abort at once."""
    event = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield event
        return

    def handler(signum: int, frame: Any) -> None:
        if event.is_set():
            raise KeyboardInterrupt
        event.set()
        console.print("[yellow]stopping after the requests in flight (Ctrl-C again to abort)[/]")

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield event
    finally:
        signal.signal(signal.SIGINT, previous)
