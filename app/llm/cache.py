"""The LLM response-cache protocol and its key: identical requests are answered from the project, never re-sent.

The key covers model, messages and sampling parameters only; credentials and endpoints are deliberately not part
of the request that gets stored, so a project file can be shared without leaking them.
"""
from __future__ import annotations

import copy
import hashlib
import json
import threading
from collections.abc import Mapping, Sequence
from typing import Any, Protocol


class LLMCache(Protocol):
    """Implemented by the project's `project.caches` (persistent) and MemoryLLMCache (tests, dry runs)."""

    def get_llm_response(self, key: str) -> dict | None: ...

    def put_llm_response(self, key: str, model: str, request: dict, response: dict) -> None: ...


def cache_request(model: str, messages: Sequence[Mapping[str, str]], params: Mapping[str, Any]) -> dict[str, Any]:
    """The canonical, credential-free description of a chat request (what is hashed and stored)."""
    return {"model": model, "messages": [dict(m) for m in messages], "params": dict(params)}


def cache_key(model: str, messages: Sequence[Mapping[str, str]], params: Mapping[str, Any]) -> str:
    """sha256 hex of the canonical JSON of (model, messages, params)."""
    blob = json.dumps(cache_request(model, messages, params), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class MemoryLLMCache:
    """A thread-safe in-process cache with the same protocol; `rows` exposes what a store would persist."""

    def __init__(self) -> None:
        self.rows: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def get_llm_response(self, key: str) -> dict | None:
        with self._lock:
            row = self.rows.get(key)
            return None if row is None else copy.deepcopy(row["response"])

    def put_llm_response(self, key: str, model: str, request: dict, response: dict) -> None:
        with self._lock:
            self.rows[key] = {"model": model, "request": copy.deepcopy(request), "response": copy.deepcopy(response)}
