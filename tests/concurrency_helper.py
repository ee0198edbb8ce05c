"""What the embedding helper process runs in tests/test_gui_concurrent_writers.py, in a module without Qt so the
spawned child starts fast."""
from __future__ import annotations

import numpy as np

from app.store import Project

NAMESPACE = "test-helper"


def helper_writes(path: str, tag: str, n: int) -> int:
    """One short write transaction per vector, as the encoder's vector cache does."""
    with Project.open(path) as p:
        for i in range(n):
            p.caches.put_vectors(NAMESPACE, {f"{tag}-{i}": np.full(4, i, dtype=np.float32)})
    return n
