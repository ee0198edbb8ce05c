"""OpenAIEmbedder against the loopback fake server, through the real openai client."""
from __future__ import annotations

import numpy as np
import pytest

from app.llm.openai_embedder import OpenAIEmbedder
from app.llm.settings import LLMConfigError
from calibration.schemes.violations import STD_MATCH, Violation, ViolationSample, build_pair_table, match
from calibration.similarity import CachedEmbedder, MemoryVectorCache, make_embedder, make_similarity, registered_backends
from tests.fake_openai import FakeOpenAI, fake_embedding


def _embed_requests(server: FakeOpenAI) -> list[dict]:
    return [b for p, b in server.requests if p.endswith("/embeddings")]


def test_vectors_are_the_servers_normalised_in_order_and_batched(fake_openai: FakeOpenAI) -> None:
    emb = OpenAIEmbedder(model="text-embedding-3-small", base_url=fake_openai.base_url, api_key="sk-test-secret", batch_size=2)
    texts = ["alpha", "beta", "gamma", "", "alpha"]
    out = emb.encode(texts)
    assert out.dtype == np.float32 and out.shape == (5, fake_openai.embedding_dim)
    for row, t in zip(out, ["alpha", "beta", "gamma", " ", "alpha"]):
        np.testing.assert_allclose(row, np.asarray(fake_embedding(t), dtype=np.float32), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, rtol=1e-6)
    reqs = _embed_requests(fake_openai)
    assert [len(r["input"]) for r in reqs] == [2, 2, 1]
    assert all(r["model"] == "text-embedding-3-small" for r in reqs)


def test_registered_backend_with_cache_encodes_each_text_once(fake_openai: FakeOpenAI) -> None:
    assert "openai" in registered_backends()
    cache = MemoryVectorCache()
    emb = make_embedder("openai:text-embedding-3-small", cache, base_url=fake_openai.base_url, api_key="k-123")
    assert isinstance(emb, CachedEmbedder)
    assert emb.cache_key == f"openai:text-embedding-3-small@{fake_openai.base_url}"
    emb.encode(["a rule", "another rule", "a rule"])
    emb.encode(["a rule", "another rule"])
    sent = [t for r in _embed_requests(fake_openai) for t in r["input"]]
    assert sorted(sent) == ["a rule", "another rule"]
    assert (emb.encoded, emb.hits) == (2, 2)


def test_pair_table_through_openai_backend(fake_openai: FakeOpenAI) -> None:
    sim = make_similarity("openai:text-embedding-3-small", None, base_url=fake_openai.base_url, api_key="k-123")
    gt = (Violation("Never target minors", 0, 10),)
    s = ViolationSample("s", "x" * 20, gt, {"c": (Violation("Never target minors", 2, 10), Violation("Other rule", 0, 10))})
    table = build_pair_table([s], sim)
    rule = table.pairs["rule"].to_numpy()
    assert rule[0] == 1.0  # identical text
    expected = float(np.dot(fake_embedding("Never target minors"), fake_embedding("Other rule")))
    assert rule[1] == pytest.approx(expected, abs=1e-6)
    assert len(_embed_requests(fake_openai)) == 1  # one batched call for all distinct texts
    assert match(table, STD_MATCH).tolist() == [True, False]


def test_missing_key_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(LLMConfigError, match="api_key"):
        OpenAIEmbedder()


def test_key_from_environment_is_not_in_repr_or_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-very-secret-value"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    emb = OpenAIEmbedder(base_url="http://127.0.0.1:9/v1", max_retries=0, timeout=2.0)  # nothing listens on port 9
    assert secret not in repr(emb)
    with pytest.raises(Exception) as info:
        emb.encode(["x"])
    assert secret not in str(info.value)
    assert "embedding request failed" in str(info.value)
