"""Pairwise text similarity (rule, explanation, correction) behind one interface: embeddings or token Jaccard.

`pair_similarities(texts, a, b)` takes the *distinct* texts once and index arrays of the pairs to compare,
so a whole evaluation encodes every distinct text in one batched call and computes each distinct
(a, b) combination once. Identical texts always score exactly 1.0, whatever the backend (float32
cosine of a vector with itself is not always 1.0, and "same text" must not depend on rounding).
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

import numpy as np

from calibration.similarity.embeddings import Embedder, VectorCache, make_embedder, parse_spec
from calibration.similarity.overlap import jaccard_of_sets, word_tokens

_CHUNK = 1 << 16


class TextSimilarity(ABC):
    """Similarity in [-1, 1] (cosine) or [0, 1] (Jaccard) between texts; `cache_key` names the method."""

    cache_key: str

    def pair_similarities(self, texts: Sequence[str], a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Similarity of texts[a[k]] and texts[b[k]] for every k, as float64. `texts` should be distinct."""
        a = np.asarray(a, dtype=np.int64)
        b = np.asarray(b, dtype=np.int64)
        if a.shape != b.shape:
            raise ValueError(f"index arrays differ in shape: {a.shape} vs {b.shape}")
        if a.size == 0:
            return np.zeros(0, dtype=np.float64)
        n = max(len(texts), 1)
        codes, inverse = np.unique(a * n + b, return_inverse=True)
        ua, ub = codes // n, codes % n
        sims = self._similarities(texts, ua, ub)
        sims[ua == ub] = 1.0
        return sims[inverse.reshape(-1)]

    @abstractmethod
    def _similarities(self, texts: Sequence[str], a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Similarity for distinct (a, b) index pairs; float64."""

    def matrix(self, left: Sequence[str], right: Sequence[str]) -> np.ndarray:
        """Full len(left) x len(right) similarity matrix (for explaining one unit, or ad-hoc use)."""
        texts = list(dict.fromkeys([*left, *right]))
        pos = {t: i for i, t in enumerate(texts)}
        li = np.array([pos[t] for t in left], dtype=np.int64)
        ri = np.array([pos[t] for t in right], dtype=np.int64)
        a = np.repeat(li, len(ri))
        b = np.tile(ri, len(li))
        return self.pair_similarities(texts, a, b).reshape(len(left), len(right))

    def similarity(self, x: str, y: str) -> float:
        return float(self.matrix([x], [y])[0, 0])


class JaccardSimilarity(TextSimilarity):
    """Token Jaccard (the spec's string baseline); exact, so scalar and vectorised paths agree bit for bit."""

    cache_key = "jaccard"

    def _similarities(self, texts: Sequence[str], a: np.ndarray, b: np.ndarray) -> np.ndarray:
        toks: dict[int, frozenset[str]] = {}
        out = np.empty(a.shape[0], dtype=np.float64)
        for k, (i, j) in enumerate(zip(a.tolist(), b.tolist())):
            ti = toks.get(i)
            if ti is None:
                ti = toks[i] = word_tokens(texts[i])
            tj = toks.get(j)
            if tj is None:
                tj = toks[j] = word_tokens(texts[j])
            out[k] = jaccard_of_sets(ti, tj, texts[i] == texts[j])
        return out


class EmbeddingSimilarity(TextSimilarity):
    """Cosine of L2-normalised embeddings; every distinct text is encoded in one `encode` call."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self.cache_key = embedder.cache_key

    def _similarities(self, texts: Sequence[str], a: np.ndarray, b: np.ndarray) -> np.ndarray:
        used = np.unique(np.concatenate([a, b]))
        vecs = self.embedder.encode([texts[i] for i in used.tolist()])
        remap = np.full(len(texts), -1, dtype=np.int64)
        remap[used] = np.arange(used.size)
        ra, rb = remap[a], remap[b]
        out = np.empty(a.shape[0], dtype=np.float64)
        for s in range(0, a.shape[0], _CHUNK):
            va, vb = vecs[ra[s : s + _CHUNK]], vecs[rb[s : s + _CHUNK]]
            out[s : s + _CHUNK] = np.einsum("ij,ij->i", va, vb)
        return np.clip(out, -1.0, 1.0)

    def __repr__(self) -> str:
        return f"EmbeddingSimilarity({self.embedder!r})"


def make_similarity(spec: str, cache: VectorCache | None = None, **backend_kwargs: Any) -> TextSimilarity:
    """Similarity for a config's `embedding` spec: "jaccard", "sentence-transformers:<name|path>", "openai:<model>"."""
    backend, _ = parse_spec(spec)
    if backend == "jaccard":
        return JaccardSimilarity()
    return EmbeddingSimilarity(make_embedder(spec, cache, **backend_kwargs))


def as_similarity(obj: TextSimilarity | Embedder | str, cache: VectorCache | None = None) -> TextSimilarity:
    """Accept a similarity, a bare embedder, or a spec string wherever a similarity is needed."""
    if isinstance(obj, TextSimilarity):
        return obj
    if isinstance(obj, str):
        return make_similarity(obj, cache)
    if isinstance(obj, Embedder):
        return EmbeddingSimilarity(obj)
    raise TypeError(f"expected a TextSimilarity, an Embedder or a spec string, got {type(obj).__name__}")
