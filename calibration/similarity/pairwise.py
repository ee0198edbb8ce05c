"""Pairwise text similarity (rule, explanation, correction) behind one interface: embeddings or token Jaccard.

`pair_similarities(texts, a, b)` takes the *distinct* texts once and index arrays of the pairs to compare
(`pair_similarities_many` does several fields at once), so a whole evaluation encodes every distinct text in
one batched call and computes each distinct (a, b) combination once. Cosines come from blocked matrix
products when few distinct texts meet often (rules), else from gathering the two vectors of each pair. Identical texts always score exactly 1.0, whatever the backend (float32
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
_DENSE_FACTOR = 64  # a cell of a block product (BLAS) costs ~1/100 of gathering two vectors for one pair
_DENSE_BLOCK_CELLS = 1 << 22


def _cosines(vecs: np.ndarray, ra: np.ndarray, rb: np.ndarray) -> np.ndarray:
    """Cosine of rows ra[k], rb[k] of unit vectors: dense block products when few texts meet often, else gather."""
    left, right = np.unique(ra), np.unique(rb)
    if left.size * right.size <= _DENSE_FACTOR * ra.size:
        return _dense_cosines(vecs, ra, rb, left, right)
    out = np.empty(ra.size, dtype=np.float64)
    for s in range(0, ra.size, _CHUNK):
        out[s : s + _CHUNK] = np.einsum("ij,ij->i", vecs[ra[s : s + _CHUNK]], vecs[rb[s : s + _CHUNK]])
    return out


def _dense_cosines(vecs: np.ndarray, ra: np.ndarray, rb: np.ndarray, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Cosines of pairs (ra, rb) via blocked matrix products over the distinct left x right texts.

    When few distinct texts meet many times (rules, categories of explanations), one BLAS product per
    block beats gathering two vectors for every pair by an order of magnitude.
    """
    ia = np.searchsorted(left, ra)
    ib = np.searchsorted(right, rb)
    order = np.argsort(ia, kind="stable")
    ia_s = ia[order]
    vb_t = np.ascontiguousarray(vecs[right].T)
    block = max(1, _DENSE_BLOCK_CELLS // max(1, right.size))
    out = np.empty(ra.size, dtype=np.float64)
    for s in range(0, left.size, block):
        lo, hi = np.searchsorted(ia_s, [s, s + block])
        if lo == hi:
            continue
        prod = vecs[left[s : s + block]] @ vb_t
        sel = order[lo:hi]
        out[sel] = prod[ia_s[lo:hi] - s, ib[sel]]
    return out


class TextSimilarity(ABC):
    """Similarity in [-1, 1] (cosine) or [0, 1] (Jaccard) between texts; `cache_key` names the method."""

    cache_key: str

    def pair_similarities(self, texts: Sequence[str], a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Similarity of texts[a[k]] and texts[b[k]] for every k, as float64. `texts` should be distinct."""
        return self.pair_similarities_many(texts, [(a, b)])[0]

    def pair_similarities_many(self, texts: Sequence[str], parts: Sequence[tuple[np.ndarray, np.ndarray]]) -> list[np.ndarray]:
        """`pair_similarities` for several index-array pairs (e.g. one per field) with one encode of all texts."""
        import pandas as pd  # its hash factorize: np.unique's argsort was a fifth of a 100k-sample pair table

        n = max(len(texts), 1)
        uniq: list[tuple[np.ndarray, np.ndarray]] = []
        inverses: list[np.ndarray] = []
        for a, b in parts:
            a = np.asarray(a, dtype=np.int64)
            b = np.asarray(b, dtype=np.int64)
            if a.shape != b.shape:
                raise ValueError(f"index arrays differ in shape: {a.shape} vs {b.shape}")
            inverse, codes = pd.factorize(a * n + b, sort=True)  # np.unique's codes and inverse, hashed
            uniq.append((codes // n, codes % n))
            inverses.append(inverse.reshape(-1))
        live = [i for i, (ua, _) in enumerate(uniq) if ua.size]
        sims = self._similarities_many(texts, [uniq[i] for i in live]) if live else []
        out = [np.zeros(0, dtype=np.float64) for _ in parts]
        for i, s in zip(live, sims):
            ua, ub = uniq[i]
            s = np.asarray(s, dtype=np.float64)
            s[ua == ub] = 1.0
            out[i] = s[inverses[i]]
        return out

    def _similarities_many(self, texts: Sequence[str], parts: Sequence[tuple[np.ndarray, np.ndarray]]) -> list[np.ndarray]:
        return [self._similarities(texts, a, b) for a, b in parts]

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
        return self._similarities_many(texts, [(a, b)])[0]

    def _similarities_many(self, texts: Sequence[str], parts: Sequence[tuple[np.ndarray, np.ndarray]]) -> list[np.ndarray]:
        used = np.unique(np.concatenate([x for a, b in parts for x in (a, b)]))
        vecs = self.embedder.encode([texts[i] for i in used.tolist()])  # the one batched call
        remap = np.full(len(texts), -1, dtype=np.int64)
        remap[used] = np.arange(used.size)
        return [np.clip(_cosines(vecs, remap[a], remap[b]), -1.0, 1.0) for a, b in parts]

    def __repr__(self) -> str:
        return f"EmbeddingSimilarity({self.embedder!r})"


def make_similarity(spec: str, cache: VectorCache | None = None, **backend_kwargs: Any) -> TextSimilarity:
    """Similarity for a config's `embedding` spec: "jaccard", "sentence-transformers:<name|path>", "torch:<name|path>",
    "onnx:<name|path|file.onnx>", "onnx-int8:<name|path>", "openai:<model>" (mapping to cache keys: embeddings.py)."""
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
