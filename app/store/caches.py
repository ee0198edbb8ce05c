"""Embedding vectors and LLM responses, cached in the project so re-runs cost nothing and are reproducible."""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from app.store.parts import ProjectPart
from app.store.project import dumps, now


if TYPE_CHECKING:
    import numpy as np


class CachesPart(ProjectPart):
    """`project.caches`: the embedding and LLM response caches (what calibration's `VectorCache` and the LLM engine
    take as their cache)."""

    # numpy is imported where vectors are read or written, not with the store: `concord status` never needs it.
    def get_vectors(self, namespace: str, keys: Sequence[str]) -> dict[str, np.ndarray]:
        import numpy as np

        out: dict[str, np.ndarray] = {}
        keys = list(dict.fromkeys(keys))
        for i in range(0, len(keys), 900):
            chunk = keys[i : i + 900]
            q = ",".join("?" * len(chunk))
            for key, vec in self.conn.execute(
                f"SELECT key, vector FROM embeddings WHERE namespace = ? AND key IN ({q})", [namespace, *chunk]
            ):
                out[key] = np.frombuffer(vec, dtype=np.float32)
        return out

    def put_vectors(self, namespace: str, items: Mapping[str, np.ndarray]) -> None:
        import numpy as np

        rows = [(namespace, k, int(v.shape[-1]), np.ascontiguousarray(v, dtype=np.float32).tobytes()) for k, v in items.items()]
        with self.transaction() as c:
            c.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?)", rows)

    def count_vectors(self, namespace: str | None = None) -> int:
        if namespace is None:
            return int(self.scalar("SELECT COUNT(*) FROM embeddings"))
        return int(self.scalar("SELECT COUNT(*) FROM embeddings WHERE namespace = ?", (namespace,)))

    def get_llm_response(self, key: str) -> dict[str, Any] | None:
        v = self.scalar("SELECT response FROM llm_cache WHERE key = ?", (key,))
        return None if v is None else json.loads(v)

    def put_llm_response(self, key: str, model: str, request: dict[str, Any], response: dict[str, Any]) -> None:
        with self.transaction() as c:
            c.execute(
                "INSERT OR REPLACE INTO llm_cache VALUES (?, ?, ?, ?, ?)", (key, model, dumps(request), dumps(response), now())
            )
