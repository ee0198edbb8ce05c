"""Answer normalisation and token overlap for the `rgb_extended` checker.

The seed names `normalize_answer` and an "80%+ token overlap" but does not show them, so they are defined here
(our choice, written out so results are reproducible):
- normalize_answer: lower-case; delete punctuation (ASCII `string.punctuation` and every Unicode P* character,
  so "U.S." -> "us" and Chinese ，。 go too); drop the English articles a/an/the; collapse whitespace. This is
  SQuAD's normalisation extended to Unicode punctuation.
- tokens: the normalised text's whitespace-separated runs, except that every CJK ideograph is a token of its own
  (Chinese has no spaces; one ideograph is the nearest thing to a word that needs no segmenter).
- token overlap: share of the truth's distinct tokens found among the response's tokens (recall of the truth);
  0 when the truth has no tokens.
"""
from __future__ import annotations

import re
import string
import unicodedata
from functools import lru_cache

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN = re.compile(rf"[{_CJK}]|[^\s{_CJK}]+")


# str.translate's table: ASCII punctuation and Unicode P* code points -> deleted, filled in as characters are first
# met (`_SEEN`: every character looked at). Scanning all 1.1M code points up front cost 1.4 s per command; the texts
# use a few hundred distinct characters. A plain dict (not a dict with __missing__: 3x slower in translate), where
# an absent character is kept.
_DELETE: dict[int, None] = {ord(c): None for c in string.punctuation}
_SEEN: set[str] = set(string.punctuation)


def _punct_table(text: str) -> dict[int, None]:
    """The table, covering every character of `text`."""
    if not _SEEN.issuperset(text):
        for ch in set(text) - _SEEN:
            if unicodedata.category(ch)[0] == "P":
                _DELETE[ord(ch)] = None
            _SEEN.add(ch)
    return _DELETE


def normalize_answer(text: str) -> str:
    """Lower-case, no punctuation, no articles, single spaces (see the module docstring)."""
    s = text.lower()
    s = s.translate(_punct_table(s))
    s = _ARTICLES.sub(" ", s)
    return " ".join(s.split())


def tokens(normalised: str) -> frozenset[str]:
    """Distinct tokens of already normalised text (CJK ideographs one by one)."""
    return frozenset(_TOKEN.findall(normalised))


@lru_cache(maxsize=65536)
def truth_tokens(truth: str) -> frozenset[str]:
    """Tokens of a ground-truth string (cached: the same answers recur across models and noise rates)."""
    return tokens(normalize_answer(truth))


@lru_cache(maxsize=65536)
def truth_normal(truth: str) -> str:
    return normalize_answer(truth)


def token_overlap(truth_toks: frozenset[str], response_toks: frozenset[str]) -> float:
    """|truth ∩ response| / |truth|, 0.0 for a truth without tokens."""
    if not truth_toks:
        return 0.0
    return len(truth_toks & response_toks) / len(truth_toks)
