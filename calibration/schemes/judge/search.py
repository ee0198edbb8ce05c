"""The judge calibration problems for the generic engine, chosen by `options["target"]`.

Items are samples with a human reference (truth.py, `options["reference"]`); class 1 = positive. Groups are
samples, so grouped cross-validation keeps a sample's units in one fold; the engine reports held-out figures and
intervals as for every scheme.

"threshold" (default): the decision threshold on the judge's own scale. `options["judge"]` names the judge
(else every judge shares one threshold and each judge is a stratum, as trace does; the app calibrates judges one
by one). A unit is (sample, judge); the decision is `columns.decisions` (score >= t, or score < t where high means
negative). Candidates: `options["thresholds"]`, else 0, 0.01, ..., 1 for probability-like judges, else the
judge's distinct scores (at most 201 of their quantiles) and one value above the largest. All are read from the
scores only, never from labels. Baseline: the default threshold (columns.py).

"vote": a weighted vote of several judges: each judge votes by its threshold (`options["thresholds"]` per judge,
else its default), the weights lie on a simplex of step `options["step"]` (default 0.1) over `options["judges"]`
(default all), and the sample is positive when the weighted share of positive votes (judges without a score on it
drop out) reaches `vote_threshold` (grid `options["vote_thresholds"]`, default 0.3, 0.4, 0.5, 0.6, 0.7).
Baseline: equal weights at 0.5 (a plain majority). Suggested objective: kappa.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from calibration.schemes.judge.columns import JudgeColumns, decisions, judge_columns, vote_share
from calibration.schemes.judge.records import JudgeRecord
from calibration.schemes.judge.truth import binary_reference, reference_levels
from calibration.search.space import Columns, Grid, Simplex, Space

TARGETS: tuple[str, ...] = ("threshold", "vote")
PROBABILITY_THRESHOLDS: tuple[float, ...] = tuple(round(i / 100, 2) for i in range(101))
VOTE_THRESHOLDS: tuple[float, ...] = (0.3, 0.4, 0.5, 0.6, 0.7)
MAX_CANDIDATES = 201


def candidate_thresholds(scores: np.ndarray, probability: bool) -> tuple[float, ...]:
    """Label-free threshold candidates for one judge's (finite) scores."""
    if probability:
        return PROBABILITY_THRESHOLDS
    s = np.unique(scores[np.isfinite(scores)])
    if s.size == 0:
        return (0.0,)
    if s.size > MAX_CANDIDATES:
        s = np.unique(np.quantile(s, np.linspace(0, 1, MAX_CANDIDATES)))
    top = float(s[-1]) + max(1.0, abs(float(s[-1]))) * 1e-6
    return tuple(float(x) for x in (*s, top))


@dataclass
class ThresholdProblem:
    space: Space
    units: pd.DataFrame
    item_unit: np.ndarray
    human: np.ndarray
    scores: np.ndarray  # (n_items,) each item's judge score
    high_positive: np.ndarray  # (n_items,) bool: that judge's orientation
    default: float
    judge: str | None = None
    objective: str = "kappa"
    n_classes: int = 2
    scheme: str = "judge"
    group_noun: str = "sample"
    stratum_noun: str = "judge"
    threshold_dim: ClassVar[str] = "threshold"  # a ScoredProblem: the guaranteed band defers near it

    def item_scores(self) -> tuple[np.ndarray, np.ndarray]:
        return self.scores, self.high_positive

    def decide(self, configs: Columns) -> np.ndarray:
        t = np.asarray(configs["threshold"], dtype=np.float64)[:, None]
        return np.where(self.high_positive[None, :], self.scores[None, :] >= t,
                        self.scores[None, :] < t).astype(np.int8)

    def baselines(self) -> dict[str, dict[str, Any]]:
        return {"default": {"threshold": self.default}}

    def to_params(self, config: Mapping[str, Any]) -> dict[str, Any]:
        t = float(config["threshold"])
        if self.judge is None:
            return {"threshold": t}
        return {"thresholds": {self.judge: t}}


@dataclass
class VoteProblem:
    space: Space
    units: pd.DataFrame
    item_unit: np.ndarray
    human: np.ndarray
    votes: np.ndarray  # (J, n_items) 0/1/NaN
    judges: tuple[str, ...]
    thresholds: dict[str, float]
    objective: str = "kappa"
    n_classes: int = 2
    scheme: str = "judge"
    group_noun: str = "sample"

    def decide(self, configs: Columns) -> np.ndarray:
        w = np.stack([np.asarray(configs[j], dtype=np.float64) for j in self.judges], axis=1)  # (P, J)
        share = vote_share(self.votes, w)
        t = np.asarray(configs["vote_threshold"], dtype=np.float64)[:, None]
        return (np.nan_to_num(share, nan=-1.0) >= t - 1e-12).astype(np.int8)

    def baselines(self) -> dict[str, dict[str, Any]]:
        return {"majority": {**{j: 1.0 / len(self.judges) for j in self.judges}, "vote_threshold": 0.5}}

    def to_params(self, config: Mapping[str, Any]) -> dict[str, Any]:
        return {"thresholds": dict(self.thresholds), "weights": {j: float(config[j]) for j in self.judges},
                "vote_threshold": float(config["vote_threshold"])}


def _labeled(records: Sequence[JudgeRecord], labels: Any, options: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """(n,) binary reference (0 where unlabeled when options['unlabeled']) and (n,) labeled mask."""
    levels, _ = reference_levels(records, labels, options)
    y = binary_reference(records, levels)
    return y, ~np.isnan(y)


def threshold_problem(records: Sequence[JudgeRecord], labels: Any, options: Mapping[str, Any]) -> ThresholdProblem | None:
    cols = judge_columns(records)
    only = options.get("judge")
    idx = [cols.index(str(only))] if only is not None else list(range(len(cols.names)))
    y, labeled = _labeled(records, labels, options)
    every = bool(options.get("unlabeled"))
    rows: list[tuple[str, str]] = []
    item_j: list[int] = []
    item_i: list[int] = []
    for i, r in enumerate(records):
        if not labeled[i] and not every:
            continue
        for j in idx:
            if not np.isnan(cols.scores[j, i]):
                rows.append((r.id, cols.names[j]))
                item_j.append(j)
                item_i.append(i)
    if not rows:
        return None
    jj, ii = np.asarray(item_j), np.asarray(item_i)
    if options.get("thresholds") is not None and not isinstance(options["thresholds"], Mapping):
        values = tuple(float(x) for x in options["thresholds"])
    else:
        values = candidate_thresholds(cols.scores[idx].ravel(), bool(cols.probability[idx].all()))
    units = pd.DataFrame(rows, columns=["group", "stratum"])
    if every:
        units["labeled"] = labeled[ii]
    default = float(cols.default_threshold[idx[0]]) if len(idx) == 1 else 0.5
    return ThresholdProblem(Space((Grid("threshold", values),)), units, np.arange(len(rows)),
                            np.nan_to_num(y[ii], nan=0.0).astype(np.int64), cols.scores[jj, ii],
                            cols.high_positive[jj], default, None if only is None else str(only),
                            str(options.get("objective") or "kappa"))


def vote_problem(records: Sequence[JudgeRecord], labels: Any, options: Mapping[str, Any]) -> VoteProblem | None:
    cols: JudgeColumns = judge_columns(records, options.get("judges"))
    if len(cols.names) < 2:
        raise ValueError("target vote: needs at least two judges")
    if "vote_threshold" in cols.names:
        raise ValueError("target vote: a judge named 'vote_threshold' clashes with the vote's own threshold")
    given = options.get("thresholds") if isinstance(options.get("thresholds"), Mapping) else {}
    t = cols.thresholds(given)
    votes = decisions(cols.scores, t, cols.high_positive)
    y, labeled = _labeled(records, labels, options)
    every = bool(options.get("unlabeled"))
    keep = (labeled | every) & (~np.isnan(votes)).any(axis=0)
    if not keep.any():
        return None
    ids = [r.id for r, k in zip(records, keep) if k]
    units = pd.DataFrame({"group": ids})
    if every:
        units["labeled"] = labeled[keep]
    step = float(options.get("step", 0.1))
    vt = tuple(options.get("vote_thresholds") or VOTE_THRESHOLDS)
    space = Space((Simplex(cols.names, step), Grid("vote_threshold", vt)))
    return VoteProblem(space, units, np.arange(len(ids)), np.nan_to_num(y[keep], nan=0.0).astype(np.int64),
                       votes[:, keep], cols.names, dict(zip(cols.names, map(float, t))),
                       str(options.get("objective") or "kappa"))


def search_problem(records: Sequence[JudgeRecord], labels: Any, options: Mapping[str, Any]
                   ) -> ThresholdProblem | VoteProblem | None:
    """The problem `options["target"]` names ("threshold" by default); None when no sample has a reference.
    `options["unlabeled"]` (the queue): every unit, with a boolean `labeled` column (never fit such a problem)."""
    target = options.get("target") or "threshold"
    if target == "threshold":
        return threshold_problem(records, labels, options)
    if target == "vote":
        return vote_problem(records, labels, options)
    raise ValueError(f"target: expected one of {', '.join(TARGETS)}, got {target!r}")
