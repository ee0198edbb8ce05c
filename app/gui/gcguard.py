"""Cyclic garbage collection only in the GUI thread.

Python's cyclic collector runs in whichever thread happens to allocate when a generation's threshold is crossed.
When that is a worker thread and the garbage holds Qt objects (a closed dialog, a view's signal closures), their
C++ destructors run off the GUI thread and Qt crashes: the segfaults seen "Garbage-collecting" inside workers that
computed the human ceiling. So automatic collection is switched off and a timer in the GUI thread collects
instead, generation by generation with Python's own thresholds (pyqtgraph's GarbageCollector does the same).
Reference counting still frees everything that is not in a cycle at once.
"""
from __future__ import annotations

import gc

from PySide6.QtCore import QCoreApplication, QObject, QThread, QTimer

INTERVAL_MS = 500

_collector: "_Collector | None" = None


class _Collector(QObject):
    def __init__(self, parent: QObject) -> None:
        super().__init__(parent)
        self.threshold = gc.get_threshold()
        self.long_lived = 0  # objects in the oldest generation after the last full collection
        self.timer = QTimer(self)
        self.timer.timeout.connect(self.check)
        self.timer.start(INTERVAL_MS)
        gc.disable()

    def check(self) -> None:
        """Collect as gc itself would have, but here, in the GUI thread."""
        l0, l1, l2 = gc.get_count()
        if l0 > self.threshold[0]:
            gc.collect(0)
            if l1 > self.threshold[1]:
                gc.collect(1)
                if l2 > self.threshold[2] and self._full_due():
                    gc.collect(2)
                    self.long_lived = len(gc.get_objects(2))

    def _full_due(self) -> bool:
        """CPython's own rule for a full collection: only when the objects that reached the oldest generation since
        the last one are more than a quarter of those that survived it (Modules/gcmodule.c, `long_lived_pending`).
        `gc.collect(2)` skips that rule, so the timer ran a full collection every ~11 young ones, about once a minute
        of steady work: a 60 ms pause (a window holds about 100k objects; issue #28). Counting the oldest generation
        costs a list of pointers (about 1 ms per 100k objects), only when the counts say a full collection is due."""
        return len(gc.get_objects(2)) - self.long_lived > self.long_lived // 4


def install() -> bool:
    """Idempotent; needs the application object and must be called from its (GUI) thread. True once installed."""
    global _collector
    app = QCoreApplication.instance()
    if _collector is not None and gc.isenabled() is False:
        return True
    if app is None or QThread.currentThread() is not app.thread():
        return False
    _collector = _Collector(app)
    return True


def collect_now() -> None:
    """A full collection in the calling thread (tests call it between tests, in the GUI thread)."""
    gc.collect()
