"""Guards against known PySide6 defects, checked at start-up.

PySide6 6.12.0 returns None from every void method without taking a reference. On Python >= 3.12 None is
immortal and nothing happens; on 3.11 each call lowers None's refcount by one and, after some thousands of
calls, the interpreter aborts with "deallocating None" (a lost labeling session). pyproject excludes that
release; if it is installed anyway, we give None the effectively infinite refcount that 3.12 gives it.
"""
from __future__ import annotations

import ctypes
import sys
import warnings

_GUARD = 1 << 40  # references added once: more than any session can drop


def none_refs_dropped(calls: int = 200) -> int:
    """How many references to None `calls` void PySide calls drop (0 on a healthy build)."""
    from PySide6.QtCore import QObject

    probe = QObject()
    before = sys.getrefcount(None)
    for _ in range(calls):
        probe.setObjectName("probe")
    return before - sys.getrefcount(None)


def guard_none_refcount() -> bool:
    """Apply the guard if this PySide build leaks None references on this Python; True if applied."""
    if sys.version_info >= (3, 12) or none_refs_dropped() < 100:
        return False
    ctypes.c_ssize_t.from_address(id(None)).value += _GUARD
    warnings.warn("this PySide6 build drops references to None (PySide6 6.12.0 on Python 3.11); "
                  "Concord applied a workaround, but please install PySide6<6.12", RuntimeWarning, stacklevel=2)
    return True
