"""Locate quoted text in a sample: exact, then case-insensitive, then fuzzy. Offsets are code-point indices."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from rapidfuzz import fuzz

How = Literal["exact", "casefold", "fuzzy", "ungrounded"]
DEFAULT_FUZZY_THRESHOLD = 85.0


@dataclass(frozen=True, slots=True)
class Located:
    start: int | None
    end: int | None
    how: How
    score: float  # 100 for exact and case-insensitive hits, the fuzzy ratio otherwise, 0 when ungrounded

    @property
    def grounded(self) -> bool:
        return self.start is not None


def _nearest(starts: list[int], hint: int | None) -> int:
    return starts[0] if hint is None else min(starts, key=lambda s: (abs(s - hint), s))


def locate(quote: str, text: str, hint: int | None = None, fuzzy_threshold: float = DEFAULT_FUZZY_THRESHOLD) -> Located:
    """Find `quote` in `text`. With several hits, the one nearest `hint` (else the first) wins."""
    q = quote.strip()
    if not q:
        return Located(None, None, "ungrounded", 0.0)
    starts = [m.start() for m in re.finditer(re.escape(q), text)]
    if starts:
        s = _nearest(starts, hint)
        return Located(s, s + len(q), "exact", 100.0)
    # re.IGNORECASE matches in the original string, so offsets stay valid even where lower() changes lengths.
    hits = [(m.start(), m.end()) for m in re.finditer(re.escape(q), text, flags=re.IGNORECASE)]
    if hits:
        s = _nearest([h[0] for h in hits], hint)
        e = next(h[1] for h in hits if h[0] == s)
        return Located(s, e, "casefold", 100.0)
    if len(q) >= 4 and text:
        al = fuzz.partial_ratio_alignment(q, text, processor=str.lower, score_cutoff=fuzzy_threshold)
        if al is not None and al.dest_end > al.dest_start:
            return Located(al.dest_start, al.dest_end, "fuzzy", float(al.score))
    return Located(None, None, "ungrounded", 0.0)
