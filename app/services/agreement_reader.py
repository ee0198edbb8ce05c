"""`concord agreement`'s label chunks (app/store/label_codes.py) read ahead in a forked worker process (issue #28
item 5: agreement at 1M units under 30 s): the read is SQLite's steps and a Python object per cell (a third of the
command's CPU), the coding of the chunks, the scheme's item records (violations: a pass over its index) and the
figures are the rest, so on a machine with a core to spare the two halves overlap.

The worker only reads, through a connection of its own (query_only, opened after the fork: SQLite's rule for
fork), and sends each chunk pickled (integer codes and distinct names: about 30 bytes a label); a thread of the
parent drains the pipe meanwhile, so the worker never waits on the parent. The parent codes the chunks in the order
they were read: the same chunks as the read in the process itself, so the same figures. A failure in the worker is
raised in the parent; a worker that dies (killed) makes `WorkerGone`, after which the caller reads in the process
itself. The parent ends the worker (SIGTERM, then waits for it) on any way out, Ctrl-C included. Only the CLI asks
for it (the app computes agreement in Qt worker threads, where forking is unsafe), and only where
app/services/ceiling_worker.py's `usable` says a worker pays off (two cores, one idle, 20k samples or more)."""
from __future__ import annotations

import os
import pickle
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from app.store.label_codes import UnknownSamples, label_code_chunks

_KEPT: list[Any] = []  # the worker's inherited connection: never freed there (freeing would close it)


class WorkerGone(Exception):
    """The worker ended without its last message (killed): read again in the process itself."""


@contextmanager
def chunks_ahead(project: Any, schemes: Sequence[str], *, skip: Sequence[str], size: int, listed: bool,
                 concurrent: bool) -> Iterator[Iterator[Any]]:
    """`label_code_chunks(project, schemes, skip=skip, size=size, listed=listed)`, read in a forked worker when
    `concurrent` and a worker pays off, else in this process."""
    from app.services.ceiling_worker import usable

    if not (concurrent and schemes and usable(project, schemes)):
        yield label_code_chunks(project, schemes, skip=skip, size=size, listed=listed)
        return
    ahead = _Ahead(project, list(schemes), list(skip), size, listed)
    try:
        yield iter(ahead)
    finally:
        ahead.close()


class _Ahead:
    """The worker and the parent's thread that drains its pipe into a queue."""

    def __init__(self, project: Any, schemes: list[str], skip: list[str], size: int, listed: bool) -> None:
        import multiprocessing
        import queue
        import threading

        ctx = multiprocessing.get_context("fork")
        self._pipe, child = ctx.Pipe(duplex=False)
        for stream in (sys.stdout, sys.stderr):  # a buffered line would be written twice (once by the worker)
            stream.flush()
        self._proc = ctx.Process(target=_serve, args=(project, schemes, skip, size, listed, child, self._pipe),
                                 daemon=True, name="concord-agreement-read")
        self._proc.start()
        child.close()
        self._queue: Any = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._drain, daemon=True, name="concord-agreement-drain")
        self._thread.start()

    def _drain(self) -> None:
        while True:
            try:
                message = self._pipe.recv()
            except (EOFError, OSError):
                self._queue.put(("gone", None))
                return
            self._queue.put(message)
            if message[0] != "chunk":
                return

    def __iter__(self) -> Iterator[Any]:
        while True:
            kind, value = self._queue.get()
            if kind == "chunk":
                yield value
            elif kind == "done":
                return
            elif kind == "unknown":
                raise UnknownSamples
            elif kind == "error":
                raise value
            else:
                raise WorkerGone

    def close(self) -> None:
        """End the worker (done already, or not needed any more) and wait for it and the drain."""
        if self._proc.is_alive():
            self._proc.terminate()
        self._proc.join()
        self._thread.join()  # the worker's end closed its side: the drain has read to the end
        self._pipe.close()


def _serve(project: Any, schemes: list[str], skip: list[str], size: int, listed: bool, pipe: Any,
           parent_end: Any) -> None:
    """The worker: its own connection, every chunk sent as it is read, then how the read ended."""
    parent_end.close()  # so that the parent's death reads as the end of the pipe here
    try:
        project.reconnect_query_only(_KEPT)
    except BaseException:  # noqa: BLE001 - no answer: the parent reads itself
        os._exit(1)
    try:
        for chunk in label_code_chunks(project, schemes, skip=skip, size=size, listed=listed):
            pipe.send(("chunk", chunk))
        pipe.send(("done", None))
    except UnknownSamples:
        pipe.send(("unknown", None))
    except (KeyboardInterrupt, EOFError, BrokenPipeError):  # Ctrl-C reaches the parent too; a parent gone
        os._exit(1)
    except Exception as exc:  # noqa: BLE001 - raised in the parent, as the read in the process raises it
        try:
            pickle.loads(pickle.dumps(exc))  # the parent must be able to read it back
        except Exception:  # noqa: BLE001 - an exception that cannot be pickled: its type and message
            exc = RuntimeError(f"{type(exc).__name__}: {exc}")
        pipe.send(("error", exc))
