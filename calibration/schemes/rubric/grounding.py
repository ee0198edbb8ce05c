"""Ground TP/FP excerpts in the response so the GUI can highlight them and unfindable ones get flagged.

An excerpt the LLM claims to have quoted but which is not in the response is a sign of hallucinated evidence;
the per-trait count of those is the "snippet validity" signal of the ADDM spec.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from calibration.grounding import DEFAULT_FUZZY_THRESHOLD, How, locate
from calibration.schemes.rubric.buckets import validate_buckets

EXCERPT_BUCKETS: tuple[str, ...] = ("tp", "fp")  # fn/tn hold instruction-derived items, which are not quotes


@dataclass(frozen=True, slots=True)
class GroundedExcerpt:
    bucket: str
    index: int  # position in the bucket list as given (before any dedupe)
    text: str
    start: int | None  # code-point offsets into the response, end exclusive; None when ungrounded
    end: int | None
    how: How
    score: float

    @property
    def grounded(self) -> bool:
        return self.start is not None


@dataclass(frozen=True, slots=True)
class GroundingReport:
    excerpts: tuple[GroundedExcerpt, ...]

    @property
    def total(self) -> int:
        return len(self.excerpts)

    @property
    def ungrounded(self) -> int:
        return sum(1 for e in self.excerpts if not e.grounded)

    @property
    def snippet_validity(self) -> float | None:
        """Share of excerpts found in the response; None when there is nothing to check (so it can be skipped)."""
        return None if not self.excerpts else (self.total - self.ungrounded) / self.total

    def ungrounded_excerpts(self) -> list[GroundedExcerpt]:
        return [e for e in self.excerpts if not e.grounded]


def ground_buckets(
    response: str,
    buckets: Mapping[str, Sequence[str]],
    fuzzy_threshold: float = DEFAULT_FUZZY_THRESHOLD,
) -> GroundingReport:
    """Locate every TP and FP excerpt in `response` (exact, then case-insensitive, then fuzzy above the threshold)."""
    valid = validate_buckets(buckets)
    out: list[GroundedExcerpt] = []
    for bucket in EXCERPT_BUCKETS:
        for i, text in enumerate(valid[bucket]):  # type: ignore[literal-required]
            loc = locate(text, response, fuzzy_threshold=fuzzy_threshold)
            out.append(GroundedExcerpt(bucket, i, text, loc.start, loc.end, loc.how, loc.score))
    return GroundingReport(tuple(out))
