"""Record types of the `judge` scheme: one judged output (a text, its context) with every judge's score on it.

A judge is anything whose output per sample is a score or a label (HHEM, an NLI model, an LLM asked yes/no).
Its `score` lives on the judge's own scale; `high_means_positive` says which way it points (FaithBench's
detectors give consistency, 1 = consistent, while the positive class is "hallucinated": False there). Humans
label the sample (per-sample label kinds, see scheme.py): binary (true = positive) or, when the record declares
`levels`, one of those ordered levels, binarised at `positive_from` for the binary figures.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

SCHEME = "judge"


@dataclass(frozen=True, slots=True)
class JudgeOutput:
    """One judge's output on one sample. `score` None: the judge gave none (it is left out of that sample's
    figures). `probability` None: decided from the data (every score of the judge in [0, 1])."""

    score: float | None = None
    high_means_positive: bool = True
    probability: bool | None = None
    threshold: float | None = None  # the judge's own decision threshold, when it declares one
    label: Any = None  # the judge's own label, when it gives one besides the score
    explanation: str | None = None

    def decides_positive(self, threshold: float) -> bool | None:
        """The binary decision at `threshold` on the judge's scale: score >= t when high means positive, else
        score < t (so a consistency of exactly t is "consistent"). None without a score."""
        if self.score is None:
            return None
        return self.score >= threshold if self.high_means_positive else self.score < threshold


@dataclass(frozen=True, slots=True)
class JudgeRecord:
    id: str
    text: str
    judges: Mapping[str, JudgeOutput] = field(default_factory=dict)
    context: str | None = None
    levels: tuple[str, ...] | None = None  # ordinal human labels, from most negative to most positive
    positive_from: str | None = None  # first level counted as positive (default: levels[1])
    positive: str | None = None  # what a positive label means ("hallucinated"), for people
    split: str | None = None
    meta: Mapping[str, Any] | None = None

    @property
    def positive_index(self) -> int:
        """Index in `levels` from which a label counts as positive."""
        if self.levels is None:
            return 1
        return self.levels.index(self.positive_from) if self.positive_from is not None else 1

    def binary(self, value: Any) -> int | None:
        """A human label value as 0/1 (None for no label or a value this record does not know)."""
        level = self.level(value)
        if level is None:
            return None
        return int(level >= self.positive_index)

    def level(self, value: Any) -> int | None:
        """A human label value as its ordinal index (binary: 0 false, 1 true); None when unknown or missing."""
        if value is None:
            return None
        if self.levels is None:
            return int(value) if isinstance(value, bool) else None
        if isinstance(value, str) and value in self.levels:
            return self.levels.index(value)
        return None


def finite_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
