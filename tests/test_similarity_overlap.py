"""Character IoU of spans and token Jaccard of strings."""
from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from calibration.similarity import JaccardSimilarity, span_iou, span_iou_array, token_jaccard, word_tokens


def test_iou_examples() -> None:
    assert span_iou(0, 10, 0, 10) == 1.0
    assert span_iou(0, 10, 5, 15) == 5 / 15
    assert span_iou(0, 10, 10, 20) == 0.0  # half-open: touching spans share no character
    assert span_iou(0, 10, 9, 20) == 1 / 20  # one shared character is enough for IoU > 0
    assert span_iou(2, 4, 0, 10) == 2 / 10
    assert span_iou(None, None, 0, 10) == 0.0  # ungrounded
    assert span_iou(0, 10, 3, None) == 0.0
    assert span_iou(3, 3, 3, 3) == 0.0  # empty union


spans = st.one_of(st.none(), st.tuples(st.integers(0, 40), st.integers(0, 15)).map(lambda t: (t[0], t[0] + t[1])))


@given(st.lists(st.tuples(spans, spans), min_size=1, max_size=30))
def test_vectorised_iou_equals_scalar_bit_for_bit(pairs: list) -> None:
    def col(which: int, k: int) -> np.ndarray:
        return np.array([np.nan if p[which] is None else p[which][k] for p in pairs], dtype=np.float64)

    got = span_iou_array(col(0, 0), col(0, 1), col(1, 0), col(1, 1))
    want = [span_iou(*(a or (None, None)), *(b or (None, None))) for a, b in pairs]
    assert got.tolist() == want
    assert all(0.0 <= v <= 1.0 for v in want)


def test_token_jaccard() -> None:
    assert word_tokens("Do NOT mention, alcohol!") == {"do", "not", "mention", "alcohol"}
    assert token_jaccard("Do not mention alcohol", "do not MENTION alcohol.") == 1.0
    assert token_jaccard("no minors", "no alcohol to minors") == 2 / 4
    assert token_jaccard("abc", "xyz") == 0.0
    assert token_jaccard("!!!", "???") == 0.0  # no word tokens, different strings
    assert token_jaccard("!!!", "!!!") == 1.0  # identical strings always 1.0


def test_jaccard_similarity_matrix_matches_scalar() -> None:
    left = ["never target minors", "use the trademark symbol", "never target minors"]
    right = ["do not target minors", "trademark symbol missing"]
    m = JaccardSimilarity().matrix(left, right)
    assert m.shape == (3, 2)
    assert m.tolist() == [[token_jaccard(a, b) for b in right] for a in left]
