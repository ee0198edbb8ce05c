"""The pair table: units, canonical pair order, components, missing fields, one batched encode."""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pytest

from calibration.schemes.violations import Violation, ViolationSample, build_pair_table
from calibration.similarity import CachedEmbedder, EmbeddingSimilarity, JaccardSimilarity, MemoryVectorCache, text_key


class FakeEmbedder:
    cache_key = "fake:pairs"

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        v = np.asarray([np.random.default_rng(int(text_key(t)[:8], 16)).normal(size=6) for t in texts], dtype=np.float32)
        return v.reshape(len(texts), 6) / np.linalg.norm(v, axis=1, keepdims=True).reshape(len(texts), 1)


def samples() -> list[ViolationSample]:
    g0 = Violation("Do not target minors", 0, 10, category=" Audience", explanation="kids", correction="adults")
    g1 = Violation("Use the trademark", None, None, category=None, explanation="  ")
    return [
        ViolationSample("s1", "x" * 40, (g0, g1), {
            "a": (Violation("do not target minors", 5, 15, category="audience", explanation="kids "),),
            "b": (),
        }),
        ViolationSample("s2", "y" * 40, (), {"a": (Violation("Use the trademark", 0, 4),), "b": ()}),
        ViolationSample("s3", "z" * 40, (g0,), {"b": (Violation("Do not target minors", 0, 10), g1)}),
    ]


def test_units_and_pair_layout() -> None:
    t = build_pair_table(samples(), JaccardSimilarity())
    g = t.groups
    assert list(zip(g.sample_id, g.checker, g.n_gt, g.n_pred)) == [
        ("s1", "a", 2, 1), ("s1", "b", 2, 0), ("s2", "a", 0, 1), ("s2", "b", 0, 0), ("s3", "b", 1, 2),
    ]  # s3 has no unit for "a": the checker was not run on it
    assert len(t.pairs) == int((g.n_gt * g.n_pred).sum()) == 4
    assert t.pairs[["group", "gt", "pred"]].values.tolist() == [[0, 0, 0], [0, 1, 0], [4, 0, 0], [4, 0, 1]]
    assert t.pairs.dtypes[["overlap", "rule", "category", "explanation", "correction"]].eq(np.float64).all()
    assert t.gt_items["category"].tolist() == ["audience", None, "audience", None, "audience"]
    assert t.pred_items["group"].tolist() == [0, 2, 4, 4]
    assert list(t.gt_offsets) == [0, 2, 4, 4, 4] and list(t.pred_offsets) == [0, 1, 1, 2, 2]
    only_b = build_pair_table(samples(), JaccardSimilarity(), checkers=["b"])
    assert only_b.groups.checker.tolist() == ["b", "b", "b"]


def test_components_and_missing_fields() -> None:
    t = build_pair_table(samples(), JaccardSimilarity())
    r = t.pairs
    first = r.iloc[0]
    assert first.overlap == 5 / 15
    assert first.rule == 1.0  # same tokens after lowercasing
    assert first.category == 1.0  # " Audience" vs "audience": strip + casefold
    assert first.explanation == 1.0  # "kids" vs "kids " after strip
    assert math.isnan(first.correction)  # prediction has none
    second = r.iloc[1]  # ungrounded GT with a blank explanation
    assert second.overlap == 0.0
    assert math.isnan(second.category) and math.isnan(second.explanation)
    last = r.iloc[3]  # s3: same violation object on both sides, but GT grounded and pred ungrounded
    assert last.overlap == 0.0 and last.rule == 0.0  # no shared token


def test_every_distinct_text_is_encoded_once_in_one_call() -> None:
    fake = FakeEmbedder()
    many = samples() * 5  # the same texts again and again
    t = build_pair_table(many, EmbeddingSimilarity(fake))
    assert len(fake.calls) == 1
    assert len(fake.calls[0]) == len(set(fake.calls[0]))
    assert set(fake.calls[0]) == {"Do not target minors", "do not target minors", "Use the trademark", "kids"}
    assert t.pairs["explanation"].iloc[0] == 1.0
    assert t.similarity_key == "fake:pairs"
    cache = MemoryVectorCache()
    cached = CachedEmbedder(fake, cache)
    build_pair_table(many, cached)
    build_pair_table(many, cached)
    assert cached.encoded == 4 and cached.hits == 4


def test_spec_string_with_cache() -> None:
    t = build_pair_table(samples(), "jaccard")
    assert t.similarity_key == "jaccard"
    assert build_pair_table([], "jaccard").pairs.shape[0] == 0
