"""String-level similarities that need no model: character IoU of spans and token Jaccard of texts.

Both are exact rational numbers computed with one float division, so the vectorised and the scalar
(reference) paths produce bit-identical values; the matching tests rely on that.
"""
from __future__ import annotations

import re

import numpy as np

_WORD = re.compile(r"\w+")


def span_iou(a_start: int | None, a_end: int | None, b_start: int | None, b_end: int | None) -> float:
    """Character IoU of two half-open spans; an ungrounded span (any None) or an empty union gives 0.0."""
    if a_start is None or a_end is None or b_start is None or b_end is None:
        return 0.0
    la = max(0, a_end - a_start)
    lb = max(0, b_end - b_start)
    inter = max(0, min(a_end, b_end) - max(a_start, b_start))
    union = la + lb - inter
    return inter / union if union > 0 else 0.0


def span_iou_array(a_start: np.ndarray, a_end: np.ndarray, b_start: np.ndarray, b_end: np.ndarray) -> np.ndarray:
    """Element-wise `span_iou` over float arrays where NaN marks an ungrounded span."""
    a_start, a_end, b_start, b_end = (np.asarray(x, dtype=np.float64) for x in (a_start, a_end, b_start, b_end))
    la = np.maximum(a_end - a_start, 0.0)
    lb = np.maximum(b_end - b_start, 0.0)
    inter = np.maximum(np.minimum(a_end, b_end) - np.maximum(a_start, b_start), 0.0)
    union = la + lb - inter
    with np.errstate(invalid="ignore", divide="ignore"):
        iou = inter / union
    ok = (union > 0) & ~np.isnan(iou)
    return np.where(ok, iou, 0.0)


def word_tokens(text: str) -> frozenset[str]:
    """Lower-cased word tokens (`\\w+`), as a set: Jaccard ignores order and repetition."""
    return frozenset(_WORD.findall(text.lower()))


def token_jaccard(a: str, b: str) -> float:
    """|A∩B| / |A∪B| of word-token sets. Identical strings score 1.0 even without word tokens; else no tokens -> 0.0."""
    ta, tb = word_tokens(a), word_tokens(b)
    return jaccard_of_sets(ta, tb, a == b)


def jaccard_of_sets(ta: frozenset[str], tb: frozenset[str], identical: bool = False) -> float:
    if identical:
        return 1.0
    union = len(ta | tb)
    return len(ta & tb) / union if union else 0.0
