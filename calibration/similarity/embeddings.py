"""Embedding backends behind one small interface, plus a content-addressed vector cache in front of them.

Why a cache keyed by sha256(text) under a namespace = the embedder's `cache_key`: the same rule or
explanation text recurs across samples, checkers and evaluations; re-encoding it is the slowest part of
an evaluation. A second evaluation with the same backend encodes nothing.

Backends are looked up in a registry (`register_backend`) so that calibration never imports `openai`:
`app.llm.openai_embedder` registers the "openai" backend when imported.
"""
from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from calibration.similarity.bundled import BUNDLED_ALIASES, BUNDLED_MINILM, resolve_sentence_transformer


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 rows; `cache_key` names backend+model so caches never mix them."""

    cache_key: str

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


@runtime_checkable
class VectorCache(Protocol):
    """Implemented by the project's `project.caches` (sqlite, app/store/caches.py) and `MemoryVectorCache` (tests)."""

    def get_vectors(self, namespace: str, keys: Sequence[str]) -> dict[str, np.ndarray]: ...

    def put_vectors(self, namespace: str, items: Mapping[str, np.ndarray]) -> None: ...


Progress = Callable[[int, int], None]  # (done, total) of texts to encode


def text_key(text: str) -> str:
    """Cache key of a text: sha256 hex of its UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def l2_normalise(x: np.ndarray) -> np.ndarray:
    """Row-normalise to unit length as float32; zero rows stay zero (cosine with them is 0)."""
    x = np.asarray(x, dtype=np.float32)
    if x.ndim != 2:
        raise ValueError(f"expected a 2-D array of embeddings, got shape {x.shape}")
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)


class MemoryVectorCache:
    """A dict-backed vector cache: the same protocol as the project file, for tests and benchmarks."""

    def __init__(self) -> None:
        self._data: dict[tuple[str, str], np.ndarray] = {}

    def get_vectors(self, namespace: str, keys: Sequence[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for k in keys:
            v = self._data.get((namespace, k))
            if v is not None:
                out[k] = v
        return out

    def put_vectors(self, namespace: str, items: Mapping[str, np.ndarray]) -> None:
        for k, v in items.items():
            self._data[(namespace, k)] = np.array(v, dtype=np.float32, copy=True)

    def __len__(self) -> int:
        return len(self._data)


class SentenceTransformerEmbedder:
    """sentence-transformers on CPU; the bundled all-MiniLM-L6-v2 loads offline from its package.

    The import and the model load happen on first `encode` so that importing calibration stays cheap.
    """

    def __init__(self, model: str = BUNDLED_MINILM, batch_size: int = 64) -> None:
        self.model = model
        self.batch_size = int(batch_size)
        self.path = resolve_sentence_transformer(model)
        name = BUNDLED_MINILM if model in BUNDLED_ALIASES else model
        self.cache_key = f"sentence-transformers:{name}"
        self._model: Any = None

    def _load(self) -> Any:
        if self._model is None:
            from sentence_transformers import SentenceTransformer  # heavy: import lazily

            self._model = SentenceTransformer(self.path, device="cpu")
        return self._model

    @property
    def dimension(self) -> int:
        return int(self._load().get_sentence_embedding_dimension())

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        model = self._load()
        if len(texts) == 0:
            return np.zeros((0, self.dimension), dtype=np.float32)
        vecs = model.encode(
            list(texts), batch_size=self.batch_size, convert_to_numpy=True,
            normalize_embeddings=True, show_progress_bar=False,
        )
        return l2_normalise(vecs)

    def __repr__(self) -> str:
        return f"SentenceTransformerEmbedder({self.model!r})"


class CachedEmbedder:
    """Dedupe, look up sha256(text) in a vector cache, encode only misses in batches, store them.

    `encoded` and `hits` count distinct texts over the embedder's lifetime, so callers (and tests) can
    see that a second run encoded nothing.
    """

    def __init__(self, embedder: Embedder, cache: VectorCache, batch_size: int = 1024,
                 progress: Progress | None = None) -> None:
        self.embedder = embedder
        self.cache = cache
        self.batch_size = int(batch_size)
        self.progress = progress
        self.cache_key: str = embedder.cache_key
        self.encoded = 0
        self.hits = 0

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        unique = list(dict.fromkeys(texts))
        keys = [text_key(t) for t in unique]
        found = self.cache.get_vectors(self.cache_key, keys) if keys else {}
        vecs: dict[str, np.ndarray] = {k: np.asarray(found[k], dtype=np.float32) for k in keys if k in found}
        misses = [(t, k) for t, k in zip(unique, keys) if k not in vecs]
        self.hits += len(unique) - len(misses)
        for i in range(0, len(misses), self.batch_size):
            chunk = misses[i : i + self.batch_size]
            out = l2_normalise(self.embedder.encode([t for t, _ in chunk]))
            if out.shape[0] != len(chunk):
                raise RuntimeError(f"{self.cache_key}: embedder returned {out.shape[0]} rows for {len(chunk)} texts")
            new = {k: out[j] for j, (_, k) in enumerate(chunk)}
            self.cache.put_vectors(self.cache_key, new)
            vecs.update(new)
            self.encoded += len(chunk)
            if self.progress is not None:
                self.progress(min(i + self.batch_size, len(misses)), len(misses))
        if not texts:
            dim = next(iter(vecs.values())).shape[0] if vecs else 0
            return np.zeros((0, dim), dtype=np.float32)
        index = {t: vecs[k] for t, k in zip(unique, keys)}
        return np.stack([index[t] for t in texts]).astype(np.float32, copy=False)

    def __repr__(self) -> str:
        return f"CachedEmbedder({self.embedder!r})"


# --- backend registry --------------------------------------------------------------------------------

BackendFactory = Callable[..., Embedder]  # factory(model_or_path, **kwargs) -> Embedder
_BACKENDS: dict[str, BackendFactory] = {}


def register_backend(name: str, factory: BackendFactory) -> None:
    """Make `"<name>:<model>"` specs resolvable; app modules register backends calibration cannot import."""
    _BACKENDS[name] = factory


def registered_backends() -> list[str]:
    return sorted(_BACKENDS)


def _sentence_transformers(model: str, **kw: Any) -> Embedder:
    """`sentence-transformers:<model>`: the bundled model runs on ONNX Runtime (identical vectors, no torch),
    unless CONCORD_EMBEDDINGS=torch; any other model on sentence-transformers itself."""
    if model in BUNDLED_ALIASES and os.environ.get("CONCORD_EMBEDDINGS", "").strip().lower() != "torch":
        return _onnx(model, **kw)
    return SentenceTransformerEmbedder(model, **kw)


def _onnx(model: str, **kw: Any) -> Embedder:
    from calibration.similarity.onnx_backend import OnnxEmbedder  # onnxruntime: imported on first encode only

    return OnnxEmbedder(model, **kw)


# spec -> embedder -> cache key (vectors of different backends never share a cache namespace):
#   sentence-transformers:all-MiniLM-L6-v2 -> ONNX fp32        -> "onnx:all-MiniLM-L6-v2"
#   sentence-transformers:<other model>    -> sentence-transformers (torch) -> "sentence-transformers:<model>"
#   torch:<model>                          -> sentence-transformers (torch) -> "sentence-transformers:<model>"
#   onnx:<model, directory or .onnx file>  -> ONNX fp32        -> "onnx:<model>"
#   onnx-int8:<model>                      -> ONNX int8 weights -> "onnx-int8:<model>" (warns: recalibrate)
register_backend("sentence-transformers", _sentence_transformers)
register_backend("torch", lambda model, **kw: SentenceTransformerEmbedder(model, **kw))
register_backend("onnx", _onnx)
register_backend("onnx-int8", lambda model, **kw: _onnx(model, int8=True, **kw))


def parse_spec(spec: str) -> tuple[str, str]:
    """Split `"backend:model"`; "jaccard" has no model. Raises ValueError naming the bad part."""
    spec = spec.strip()
    if spec == "jaccard":
        return "jaccard", ""
    backend, sep, model = spec.partition(":")
    if not sep or not backend or not model:
        raise ValueError(
            f"embedding: {spec!r} is not 'jaccard' or '<backend>:<model>' "
            "(e.g. 'sentence-transformers:all-MiniLM-L6-v2', 'openai:text-embedding-3-small')"
        )
    return backend, model


def make_embedder(spec: str, cache: VectorCache | None = None, **backend_kwargs: Any) -> Embedder:
    """Build the embedder a config's `embedding` spec names, wrapped in a `CachedEmbedder` when given a cache.

    "jaccard" is string similarity, not an embedding: use `make_similarity` for specs that may be it.
    """
    backend, model = parse_spec(spec)
    if backend == "jaccard":
        raise ValueError("embedding: 'jaccard' needs no embedder; use calibration.similarity.make_similarity")
    factory = _BACKENDS.get(backend)
    if factory is None:
        hint = " (import app.llm.openai_embedder to register it)" if backend == "openai" else ""
        raise ValueError(f"embedding: unknown backend {backend!r}{hint}; registered: {registered_backends()}")
    embedder = factory(model, **backend_kwargs)
    return CachedEmbedder(embedder, cache) if cache is not None else embedder
