"""Local-model embeddings for the app (ONNX Runtime by default, sentence-transformers/torch when asked), computed
in a separate process.

The model holds CPU threads and memory (ONNX Runtime ~150 MB; torch ~550 MB when a `torch:` spec asks for it); the
window must stay small and responsive for hours. So texts missing from the project's vector cache are encoded by a
child process that writes them to the project (its own connection; SQLite WAL) and exits after a minute of
idleness. In the app process every lookup is then a cache hit and the model is never loaded there. The default
spec (the bundled MiniLM) runs on ONNX Runtime in the child, so neither process imports torch. No Qt here:
workers call this.
"""
from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor, TimeoutError as FutureTimeout
from typing import Any

from app.progress import Cancelled
from calibration.similarity.embeddings import CachedEmbedder, VectorCache, make_embedder, parse_spec, text_key

IDLE_SECONDS = 60.0
LOCAL_BACKENDS = frozenset({"sentence-transformers", "torch", "onnx", "onnx-int8"})
CHUNK = 512
_lock = threading.Lock()
_executor: ProcessPoolExecutor | None = None
_idle: threading.Timer | None = None


_child_embedders: dict[str, Any] = {}  # in the child: one loaded model per spec for its lifetime, not per chunk


def _child_encode(project_path: str, spec: str, texts: list[str]) -> int:
    """Runs in the child: encode `texts` with the cache in front, so they land in the project."""
    from app.store import Project

    if spec not in _child_embedders:
        _child_embedders[spec] = make_embedder(spec)
    with Project.open(project_path) as p:
        CachedEmbedder(_child_embedders[spec], p.caches).encode(texts)
    return len(texts)


def heavy_modules() -> list[str]:
    """torch-side modules loaded in this process (submitted to the helper by the tests: none on the default path)."""
    import sys

    return sorted(m for m in sys.modules if m.split(".")[0] in {"torch", "sentence_transformers", "transformers"})


def _pool() -> ProcessPoolExecutor:
    global _executor, _idle
    with _lock:
        if _idle is not None:
            _idle.cancel()
            _idle = None
        if _executor is None:
            _executor = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
        return _executor


def _arm_idle_shutdown() -> None:
    global _idle
    with _lock:
        if _idle is not None:
            _idle.cancel()
        _idle = threading.Timer(IDLE_SECONDS, shutdown)
        _idle.daemon = True
        _idle.start()


def shutdown() -> None:
    """Stop the child process (the app calls this on exit; it also happens after a minute of idleness)."""
    global _executor, _idle
    with _lock:
        ex, _executor = _executor, None
        if _idle is not None:
            _idle.cancel()
            _idle = None
    if ex is not None:
        ex.shutdown(wait=True, cancel_futures=True)


def child_pids() -> list[int]:
    with _lock:
        return [] if _executor is None else [p.pid for p in getattr(_executor, "_processes", {}).values() if p.pid]


def cache_namespace(spec: str) -> str:
    return make_embedder(spec).cache_key  # constructing the embedder does not load the model


def missing_texts(cache: VectorCache, spec: str, texts: Sequence[str]) -> list[str]:
    ns = cache_namespace(spec)
    keys = {text_key(t): t for t in texts}
    found = cache.get_vectors(ns, list(keys))
    return [t for k, t in keys.items() if k not in found]


def ensure_vectors(project_path: str, cache: VectorCache, spec: str, texts: Iterable[str],
                   progress: Any = None) -> int:
    """Fill the project's vector cache for `texts` under `spec`; returns how many texts were encoded.

    Which texts a scheme compares is the scheme's business (its view's adapter lists them, e.g.
    app.schemes.violations.views_scoring.ensure_sample_vectors). Only local-model backends go to the child process
    (others are light or remote)."""
    if parse_spec(spec)[0] not in LOCAL_BACKENDS:
        return 0
    todo = missing_texts(cache, spec, list(dict.fromkeys(texts)))
    if not todo:
        return 0
    pool = _pool()
    done = 0
    try:
        for i in range(0, len(todo), CHUNK):
            chunk = todo[i : i + CHUNK]
            if progress is not None:
                progress.update(done, len(todo), f"embedding {len(todo)} new text(s) in a helper process")
            future = pool.submit(_child_encode, project_path, spec, chunk)
            while True:
                try:
                    done += future.result(timeout=0.2)
                    break
                except FutureTimeout:
                    if progress is not None and progress.cancelled():
                        raise Cancelled() from None
    finally:
        _arm_idle_shutdown()
    if progress is not None:
        progress.update(done, len(todo), "embedded")
    return done
