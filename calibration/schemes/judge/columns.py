"""Judges' scores as arrays (judges x samples) and their decisions under thresholds or a weighted vote.

A judge's orientation, probability flag and default threshold are read once over all records: the first record
that declares them wins (a judge keeps one meaning across a data set). Probability-like: declared so, or every
score of the judge in [0, 1]. Default threshold: the judge's declared one, else 0.5 for a probability, else the
median of its scores (label-free, so it may anchor calibration and the guaranteed band).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from calibration.schemes.judge.records import JudgeRecord


@dataclass(frozen=True)
class JudgeColumns:
    names: tuple[str, ...]
    scores: np.ndarray  # (J, n) raw scores, NaN where the judge gave none
    high_positive: np.ndarray  # (J,) bool
    probability: np.ndarray  # (J,) bool
    default_threshold: np.ndarray  # (J,)

    def index(self, name: str) -> int:
        try:
            return self.names.index(name)
        except ValueError:
            raise ValueError(f"judge: no judge named {name!r}; known: {', '.join(self.names) or 'none'}") from None

    def oriented(self) -> np.ndarray:
        """(J, n) scores where higher always means "more positive" (negated for judges where high is negative)."""
        return np.where(self.high_positive[:, None], self.scores, -self.scores)

    def positive_probability(self, j: int) -> np.ndarray:
        """(n,) the judge's score read as P(positive): score, or 1 - score when high means negative."""
        s = self.scores[j]
        return s if self.high_positive[j] else 1.0 - s

    def thresholds(self, given: Mapping[str, float] | None = None) -> np.ndarray:
        """(J,) defaults with the given ones replacing them (unknown judges refused)."""
        t = self.default_threshold.copy()
        for name, v in (given or {}).items():
            t[self.index(name)] = float(v)
        return t


def judge_columns(records: Sequence[JudgeRecord], names: Sequence[str] | None = None) -> JudgeColumns:
    names = tuple(names) if names is not None else tuple(dict.fromkeys(j for r in records for j in r.judges))
    n = len(records)
    scores = np.full((len(names), n), np.nan)
    high = np.ones(len(names), dtype=bool)
    declared: list[bool | None] = [None] * len(names)
    thresholds: list[float | None] = [None] * len(names)
    seen = [False] * len(names)
    pos = {name: j for j, name in enumerate(names)}
    where: list[list[int]] = [[] for _ in names]  # per judge, the records it scored and the scores
    given: list[list[float]] = [[] for _ in names]
    open_ = set(range(len(names)))  # judges whose orientation, probability flag or threshold is still unread
    for i, r in enumerate(records):
        for name, out in r.judges.items():
            j = pos.get(name)
            if j is None:
                continue
            if out.score is not None:
                where[j].append(i)
                given[j].append(out.score)
            if j in open_:
                if not seen[j]:
                    seen[j], high[j] = True, out.high_means_positive
                if declared[j] is None and out.probability is not None:
                    declared[j] = out.probability
                if thresholds[j] is None and out.threshold is not None:
                    thresholds[j] = out.threshold
                if declared[j] is not None and thresholds[j] is not None:
                    open_.discard(j)
    for j in range(len(names)):
        scores[j, where[j]] = given[j]
    prob = np.zeros(len(names), dtype=bool)
    default = np.full(len(names), np.nan)
    for j in range(len(names)):
        s = scores[j][~np.isnan(scores[j])]
        prob[j] = declared[j] if declared[j] is not None else bool(s.size and s.min() >= 0.0 and s.max() <= 1.0)
        default[j] = (thresholds[j] if thresholds[j] is not None else 0.5 if prob[j]
                      else float(np.median(s)) if s.size else 0.0)
    return JudgeColumns(names, scores, high, prob, default)


def decisions(scores: np.ndarray, thresholds: np.ndarray, high_positive: np.ndarray) -> np.ndarray:
    """(..., J, n) 1.0 positive / 0.0 negative / NaN (no score): score >= t, or score < t where high is negative.
    `thresholds` broadcasts against (..., J, 1)."""
    t = np.asarray(thresholds, dtype=np.float64)[..., None]
    hp = np.asarray(high_positive, dtype=bool)[:, None]
    d = np.where(hp, scores >= t, scores < t).astype(np.float64)
    return np.where(np.isnan(scores), np.nan, d)


def vote_share(votes: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """(P, n) weighted share of positive votes of (J, n) 0/1/NaN votes under (P, J) weights; a judge without a
    vote on a sample drops its weight there (NaN where no weighted judge voted)."""
    present = ~np.isnan(votes)
    w = np.asarray(weights, dtype=np.float64)
    num = w @ np.where(present, votes, 0.0)
    den = w @ present.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def params_thresholds(params: Mapping[str, Any] | None) -> dict[str, float]:
    return {str(k): float(v) for k, v in ((params or {}).get("thresholds") or {}).items()}
