"""Cyclic garbage is collected in the GUI thread only (Qt objects destroyed by a worker's collection crash)."""
from __future__ import annotations

import gc
import threading

from pytestqt.qtbot import QtBot

from app.gui import gcguard
from app.gui.workers import Task, TaskRunner


class _Cycle:
    def __init__(self) -> None:
        self.me = self
        self.thread = ""

    def __del__(self) -> None:
        _Cycle.freed_in.append(threading.current_thread().name)


_Cycle.freed_in = []  # type: ignore[attr-defined]


def test_workers_never_run_the_cyclic_collector(qtbot: QtBot) -> None:
    runner = TaskRunner()
    assert not gc.isenabled()  # installed with the first runner

    def work(_progress: object) -> int:
        for _ in range(5000):  # cyclic garbage made in the worker, past every generation's threshold
            _Cycle()
        return 1

    task = runner.start(Task(work, "garbage"))
    assert task.done.wait(30)
    assert _Cycle.freed_in == []  # nothing collected in the worker thread
    qtbot.waitUntil(lambda: len(_Cycle.freed_in) > 0, timeout=5000)  # the GUI thread's timer collects
    assert set(_Cycle.freed_in) == {threading.main_thread().name}
    _Cycle.freed_in.clear()
    assert gcguard.install()  # idempotent


def test_a_full_collection_follows_cpythons_long_lived_rule(qtbot: QtBot) -> None:
    """The oldest generation is collected only when it grew by more than a quarter since the last full collection
    (CPython's rule; `gc.collect(2)` on every 11th young collection cost a 60 ms frame every minute)."""
    assert gcguard.install()
    collector = gcguard._collector
    assert collector is not None
    saved = collector.threshold, collector.long_lived
    try:
        collector.threshold = (-1, -1, -1)  # every check is due by the counts: only the rule decides
        gc.collect()
        collector.long_lived = len(gc.get_objects(2))
        _Cycle.freed_in.clear()
        cycle = _Cycle()
        gc.collect(1)
        gc.collect(1)  # the cycle now sits in the oldest generation, which grew by far less than a quarter
        del cycle
        collector.check()
        assert _Cycle.freed_in == []  # no full collection: the cycle waits
        keep = [[[]] for _ in range(collector.long_lived // 4 + 1000)]  # the oldest generation grows by a quarter
        gc.collect(1)
        gc.collect(1)
        collector.check()
        assert _Cycle.freed_in == [threading.main_thread().name]  # a full collection ran: the cycle is freed
        assert collector.long_lived >= len(keep)  # and the survivors were counted again
        del keep
    finally:
        collector.threshold, collector.long_lived = saved
        _Cycle.freed_in.clear()
