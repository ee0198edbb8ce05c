"""The human ceiling drawn in a forked worker process while `concord evaluate` runs the schemes' evaluate hooks
(issue #28): the ceiling's reads and the humans' figures (`ceiling.human_side`, half of its CPU or more) do not
depend on the metric, so on a machine with a core to spare they cost no wall time; the metric's side waits for the
hooks' decisions, which the parent sends when they are done.

Why a process and not a thread: the ceiling is Python objects and pandas hashing that hold the GIL. Why fork: the
worker inherits the imports and the command's state (the labels a guideline version sets aside, the paused GC)
for free. It reads through a connection of its own (query_only), opened after the fork; the parent's inherited one
is never used, closed or freed there (SQLite's rule for fork), and the worker leaves by os._exit. It only reads:
whatever `evaluate` writes stays in the parent's transactions. Its figures come back pickled, the same floats.

A failure in the worker is raised in the parent as the sequential ceiling would raise it; a worker that dies
(killed) is replaced by the sequential ceiling in the parent. The parent ends the worker (SIGTERM, then waits for
it) on any way out, Ctrl-C included: no orphan. Only the CLI asks for it (`evaluate_with_ceilings(concurrent=
True)`): the app evaluates in Qt worker threads, where forking is unsafe; below MIN_SAMPLES samples, on one core
or on a machine whose cores are busy already (`usable`), the ceiling runs after the hooks as before."""
from __future__ import annotations

import os
import pickle
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

MIN_SAMPLES = 20_000  # fewer samples: the fork and the decisions sent over cost more than the overlap saves
BATCH = 50_000  # decisions sent at a time: the worker keeps each batch's as codes (ceiling.keep_decisions)
_KEPT: list[Any] = []  # the worker's inherited connection: never freed there (freeing would close it)


def read_ahead(project: Any, scheme: str) -> None:
    """Read, in the parent and before the fork, what its evaluate reads first and the worker would read again: the
    scheme's records when the ceiling reads them whole (no `item_records` of its store adapter), then its resolved
    labels (`records_once` keeps them for both; records first: reading another scheme's records empties it)."""
    from app.store.samples import store_adapter

    if store_adapter(scheme).item_records is None:
        project.scheme_data.scheme_records(scheme)
    project.scheme_data.scheme_labels(scheme)


def usable(project: Any, schemes: Sequence[str]) -> bool:
    """Whether a worker pays off: two cores or more with one to spare (a 1-minute load average below the core
    count: on a busy machine the other core is taken and the worker only adds its CPU, +10%: at 100k samples and
    load 2.6-4 on 2 cores the wall time was the same or longer), fork available, MIN_SAMPLES samples in the schemes."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if not hasattr(os, "fork") or cores < 2 or os.getloadavg()[0] >= cores or project.conn.in_transaction:
        return False
    counts = project.counts.sample_counts()
    return sum(counts.get(s, 0) for s in schemes) >= MIN_SAMPLES


class Worker:
    """A forked process drawing the human side of each scheme's ceiling at once, then, given the metric's
    decisions (`ceilings`), the rest."""

    def __init__(self, project: Any, schemes: Sequence[str], n_boot: int, seed: int,
                 sides: tuple[Callable[..., Any], ...]) -> None:
        """`sides`: ceiling.py's (human_side, metric_side, keep_decisions), passed in so that this module does not
        import it back."""
        import multiprocessing

        ctx = multiprocessing.get_context("fork")
        self._pipe, child = ctx.Pipe()
        for stream in (sys.stdout, sys.stderr):  # a buffered line would be written twice (once by the worker)
            stream.flush()
        self._proc = ctx.Process(target=_serve, args=(project, list(schemes), n_boot, seed, sides, child, self._pipe),
                                 daemon=True, name="concord-ceiling")
        self._proc.start()
        child.close()

    def ceilings(self, schemes: Sequence[str], machine: Mapping[Any, Any] | None,
                 per_unit: Mapping[str, Any]) -> dict[str, Any] | None:
        """scheme -> its ceiling (as `ceiling.human_ceilings`), of `schemes` (those that have a report; `per_unit`:
        each one's `ceiling.own_ceiling`); None when the worker died without an answer. A failure in the worker is
        raised here."""
        from itertools import islice

        try:
            items = iter((machine or {}).items())
            batches = -(-len(machine or {}) // BATCH)
            self._pipe.send((list(schemes), batches, per_unit))
            for _ in range(batches):  # a batch at a time: neither side holds all of them pickled, nor the worker
                self._pipe.send(dict(islice(items, BATCH)))  # every unit's decision as an object
            status, value = self._pipe.recv()
        except (EOFError, OSError, BrokenPipeError):
            return None
        if status == "error":
            raise value
        return value

    def close(self) -> None:
        """End the worker (done already, or not needed any more) and wait for it."""
        self._pipe.close()
        if self._proc.is_alive():
            self._proc.terminate()
        self._proc.join()


def _serve(project: Any, schemes: list[str], n_boot: int, seed: int,
           sides: tuple[Callable[..., Any], ...], pipe: Any, parent_end: Any) -> None:
    """The worker: its own connection, the human side of every scheme, then the answer to the parent's decisions."""
    parent_end.close()  # so that the parent's death reads as the end of the pipe here
    try:
        _own_connection(project)
    except BaseException:  # noqa: BLE001 - no answer: the parent draws the ceiling itself
        os._exit(1)
    try:
        human_side, metric_side, keep_decisions = sides

        ready: dict[str, Any] = {}
        for name in schemes:
            try:
                ready[name] = human_side(project, name, n_boot=n_boot, seed=seed)
            except Exception as exc:  # noqa: BLE001 - raised only if the scheme's ceiling is asked for
                ready[name] = exc
        wanted, batches, per_unit = pipe.recv()
        for _ in range(batches):
            batch = pipe.recv()
            for r in ready.values():
                if r is not None and not isinstance(r, Exception):
                    keep_decisions(r, batch)
            del batch
        out = {}
        for name in wanted:
            r = ready.get(name)
            if isinstance(r, Exception):
                raise r
            c = None if r is None else metric_side(project, r, n_boot=n_boot, seed=seed, per_unit=per_unit.get(name))
            if c is not None:
                out[name] = c
        pipe.send(("ok", out))
    except (KeyboardInterrupt, EOFError):  # Ctrl-C reaches the parent too, which says so; a parent gone
        os._exit(1)
    except Exception as exc:  # noqa: BLE001 - raised in the parent, as the sequential ceiling raises it
        try:
            pickle.loads(pickle.dumps(exc))  # the parent must be able to read it back
        except Exception:  # noqa: BLE001 - an exception that cannot be pickled: its type and message
            exc = RuntimeError(f"{type(exc).__name__}: {exc}")
        pipe.send(("error", exc))


def _own_connection(project: Any) -> None:
    """Point the inherited project at a connection of the worker's own, read-only. The inherited one is kept
    referenced (freeing it would close it: SQLite must not touch a connection across fork)."""
    project.reconnect_query_only(_KEPT)
    project.scheme_data.rekey_memo()  # the records and labels the parent read before the fork
