"""Locate quoted text in a sample: exact, then case-insensitive, then fuzzy. Offsets are code-point indices.

Quotes are data: they are searched literally (str.find), never compiled into a regular expression, so a quote of
any size costs time linear in the text; the fuzzy fallback runs only within FUZZY_BUDGET (quote length times text
length) and on quotes up to FUZZY_MAX_QUOTE characters, so it is bounded too.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from rapidfuzz import fuzz
from rapidfuzz.distance import Levenshtein

How = Literal["exact", "casefold", "fuzzy", "ungrounded"]
DEFAULT_FUZZY_THRESHOLD = 85.0
# rapidfuzz's alignment costs about max(len(quote), 64) x len(text) (one machine word per 64 quote characters);
# refine_alignment about len(quote)^2 per boundary tried. Within these bounds one search takes at most ~0.1 s.
FUZZY_MAX_QUOTE = 1_000  # characters: longer quotes are located exactly or case-insensitively only
FUZZY_BUDGET = 20_000_000  # max(len(quote), 64) * len(text) above this: no fuzzy search


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


def _mid_word(text: str, start: int, end: int) -> int:
    """How many of the span's two boundaries cut through a word (0 is best)."""
    cut_start = 0 < start < len(text) and text[start - 1].isalnum() and text[start].isalnum()
    cut_end = 0 < end < len(text) and text[end - 1].isalnum() and text[end].isalnum()
    return int(cut_start) + int(cut_end)


def refine_alignment(quote: str, text: str, start: int, end: int) -> tuple[int, int]:
    """The span of `text` near [start, end) that best aligns with all of `quote`.

    rapidfuzz's partial_ratio_alignment returns a window exactly as long as the quote, so a quote with a letter
    missing ("natue's own") is placed one character short ("ature's own"), and one with an extra letter one
    character long. Each boundary is moved within a few characters to minimise the (case-insensitive) Levenshtein
    distance between the quote and the span; ties go to boundaries that do not cut a word, then to edges that are
    not spaces or punctuation (unless the quote's are), then to the length nearest the quote's, then to the
    original window.
    """
    q = quote.casefold()
    lower = text.casefold() if len(text.casefold()) == len(text) else text.lower()
    slack = max(3, len(q) // 8)

    def cost(s: int, e: int) -> tuple[int, int, int, int, int]:
        # a span edge on a space or punctuation mark where the quote has a letter is a worse fit
        loose = int(not text[s].isalnum() and q[0].isalnum()) + int(not text[e - 1].isalnum() and q[-1].isalnum())
        return (Levenshtein.distance(q, lower[s:e]), _mid_word(text, s, e), loose, abs((e - s) - len(q)),
                abs(s - start) + abs(e - end))

    best = (start, end)
    for _ in range(2):  # start with the end fixed, then the end with the start fixed; twice settles both
        s_lo, s_hi = max(0, best[0] - slack), min(best[1] - 1, best[0] + slack)
        s = min(range(s_lo, s_hi + 1), key=lambda s: cost(s, best[1]))
        e_lo, e_hi = max(s + 1, best[1] - slack), min(len(text), best[1] + slack)
        e = min(range(e_lo, e_hi + 1), key=lambda e: cost(s, e))
        if (s, e) == best:
            break
        best = (s, e)
    return best


def find_all(needle: str, text: str) -> list[int]:
    """Every start of `needle` in `text` (overlapping hits included), by literal search."""
    starts, at = [], text.find(needle)
    while at >= 0:
        starts.append(at)
        at = text.find(needle, at + 1)
    return starts


def _lowered(text: str) -> tuple[str, list[int] | None]:
    """`text` lower-cased per character, and where each lowered character came from (None when lowering keeps every
    character's length, the usual case: offsets are then the same)."""
    low = text.lower().replace("ς", "σ")  # (str.lower writes a word-final sigma as ς: one sigma for matching)
    if len(low) == len(text):
        return low, None
    pieces, origin = [], []
    for i, ch in enumerate(text):
        lc = ch.lower()
        pieces.append(lc)
        origin.extend([i] * len(lc))
    origin.append(len(text))
    return "".join(pieces).replace("ς", "σ"), origin


def find_all_casefold(needle: str, text: str) -> list[tuple[int, int]]:
    """Case-insensitive occurrences of `needle` as (start, end) offsets into `text` itself (literal search on
    per-character lower case, mapped back where lowering changes a character's length, e.g. 'İ')."""
    low, origin = _lowered(text)
    q = needle.lower().replace("ς", "σ")  # (per character but for the final sigma, which the replace undoes)
    if not q:
        return []
    hits = []
    for a in find_all(q, low):
        b = a + len(q)
        if origin is None:
            hits.append((a, b))
        elif (a == 0 or origin[a - 1] != origin[a]) and origin[b - 1] != origin[b]:  # whole characters only
            hits.append((origin[a], origin[b - 1] + 1))
    return hits


def locate(quote: str, text: str, hint: int | None = None, fuzzy_threshold: float = DEFAULT_FUZZY_THRESHOLD) -> Located:
    """Find `quote` in `text`. With several hits, the one nearest `hint` (else the first) wins."""
    q = quote.strip()
    if not q:
        return Located(None, None, "ungrounded", 0.0)
    starts = find_all(q, text)
    if starts:
        s = _nearest(starts, hint)
        return Located(s, s + len(q), "exact", 100.0)
    hits = find_all_casefold(q, text)
    if hits:
        s = _nearest([h[0] for h in hits], hint)
        e = next(h[1] for h in hits if h[0] == s)
        return Located(s, e, "casefold", 100.0)
    if 4 <= len(q) <= FUZZY_MAX_QUOTE and text and max(len(q), 64) * len(text) <= FUZZY_BUDGET:
        al = fuzz.partial_ratio_alignment(q, text, processor=str.lower, score_cutoff=fuzzy_threshold)
        if al is not None and al.dest_end > al.dest_start:
            s, e = refine_alignment(q, text, al.dest_start, al.dest_end)
            return Located(s, e, "fuzzy", float(fuzz.ratio(q, text[s:e], processor=str.lower)))
    return Located(None, None, "ungrounded", 0.0)
