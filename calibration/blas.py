"""One BLAS thread for the bootstraps' many small matrix products (replicates' draw counts times per-unit columns).

OpenBLAS starts a thread per core for each product; on products of (64, n) by (n, 12) the threads cost more than
they share, and on a busy machine they spin: at 10k businesses `w @ counts` took ten times the CPU and twelve
times the wall time with its threads than without (2 cores, load 8). The figures are the same either way (sums
of whole numbers)."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Within: BLAS (numpy's matrix products) uses one thread; restored afterwards."""
    from threadpoolctl import threadpool_limits  # scikit-learn's own dependency: what it uses for the same

    with threadpool_limits(limits=1, user_api="blas"):
        yield
