"""One BLAS thread for the bootstraps' many small matrix products (replicates' draw counts times per-unit columns).

OpenBLAS starts a thread per core for each product; on products of (64, n) by (n, 12) the threads cost more than
they share, and on a busy machine they spin: at 10k businesses `w @ counts` took ten times the CPU and twelve
times the wall time with its threads than without (2 cores, load 8). The figures are the same either way (sums
of whole numbers)."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any


@cache
def _controller() -> Any:
    """The process's thread pools, found once (0.3 ms a time otherwise: a bootstrap may switch per chunk)."""
    from threadpoolctl import (
        ThreadpoolController,  # scikit-learn's own dependency: what it uses for the same
    )

    return ThreadpoolController()


SMALL_WORK = 1_000_000  # multiply-adds below which switching (about 2 ms to enter and leave) is not worth it


@contextmanager
def one_blas_thread(work: int | None = None) -> Iterator[None]:
    """Within: BLAS (numpy's matrix products) uses one thread; restored afterwards. For products whose sums are
    whole numbers (draw counts times 0/1 or count columns): their figures do not depend on how BLAS splits the
    work. Products of fractions may differ in the last bit with the threads (their split changes the order of
    the additions), so those stay as they were. `work`: the products' multiply-adds, when known; below SMALL_WORK
    nothing is switched (the planner calls the agreement bootstraps in loops on tiny tables). Measured: 16 products
    of (64, 566) by (566, 99) took 0.38 CPU-s on two threads of a loaded machine, 0.007 s on one."""
    if work is not None and work < SMALL_WORK:
        yield
        return
    with _controller().limit(limits=1, user_api="blas"):
        yield
