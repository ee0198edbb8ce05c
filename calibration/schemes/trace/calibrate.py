"""The trace calibration problem: the adherence threshold per judge, and the formula variant, that agree best with
the humans' adherence verdicts.

Units are (sample, judge) pairs with a human verdict, plus (sample, "annotator") when the record carries the
annotator's labels. One item per unit, human class 1 = adherent. A judge's decision at threshold t is
`adherence score >= t` (adherence_decisions; no score = not adherent); the annotator's decision is its labels'
adherence under the config's variant (trace_guide reads the support flags, ragbench the unsupported list), so the
variant dimension is what tells the two definitions apart. `options["judge"]` restricts the units to one judge
(or "annotator"); without it all judges share one threshold and each judge is a stratum.

`options["reference"]`: "human" (default: the humans' adherence verdicts) or "annotator": the record's own
released annotator labels are the reference (RAGBench's definition, no unsupported response sentence), so judges'
thresholds can be calibrated on a data set nobody has labeled in Concord; the annotator is then the truth, not a
unit, and the variant dimension holds only "ragbench".
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from calibration.schemes.trace.agreement import adherence_decisions
from calibration.schemes.trace.metrics import VARIANTS, guide_adherent, ragbench_adherent
from calibration.schemes.trace.records import ANNOTATOR, TraceRecord, human_adherent
from calibration.search.space import Categorical, Columns, Grid, Space

REFERENCES: tuple[str, ...] = ("human", "annotator")  # what calibrate may measure the judges against
DEFAULT_THRESHOLDS: tuple[float, ...] = tuple(round(i / 100, 2) for i in range(101))


@dataclass
class TraceAdherenceProblem:
    space: Space
    units: pd.DataFrame
    item_unit: np.ndarray
    human: np.ndarray
    scores: np.ndarray  # judge adherence score per item (NaN for the annotator's items)
    annotator: dict[str, np.ndarray]  # variant -> the annotator's adherence per item (NaN for judge items)
    variant: str = "ragbench"
    n_classes: int = 2
    group_noun: str = "sample"
    stratum_noun: str = "judge"
    _is_annotator: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    presets: tuple[str, ...] = ("ragbench", "trace_guide")  # the baselines, default first (annotator: ragbench)
    threshold_dim: ClassVar[str] = "threshold"  # a ScoredProblem: the guaranteed band defers near it

    def item_scores(self) -> tuple[np.ndarray, np.ndarray]:
        return self.scores, np.ones(self.scores.size, dtype=bool)

    def __post_init__(self) -> None:
        self._is_annotator = (self.units["stratum"] == ANNOTATOR).to_numpy()[self.item_unit]

    def decide(self, configs: Columns) -> np.ndarray:
        """(n_configs, n_items) 0/1 decisions: judges by threshold, the annotator by the config's variant."""
        out = adherence_decisions(self.scores, configs["threshold"]).astype(np.int8)
        if self._is_annotator.any():
            for i, variant in enumerate(configs["variant"]):
                out[i, self._is_annotator] = (self.annotator[str(variant)][self._is_annotator] == 1.0)
        return out

    def baselines(self) -> dict[str, dict[str, Any]]:
        return {name: {"threshold": 0.5, "variant": name} for name in self.presets}

    def to_params(self, config: Mapping[str, Any]) -> dict[str, Any]:
        return {"variant": str(config["variant"]), "threshold": float(config["threshold"])}


def search_problem(records: Sequence[TraceRecord], labels: Mapping[tuple[str, str], Mapping[str, Any]],
                   options: Mapping[str, Any]) -> TraceAdherenceProblem | None:
    """The problem over every labeled (sample, judge); None when no sample has a human adherence verdict.
    `options["unlabeled"]` (issue #16, the queue): every (sample, judge) instead, human 0 where nobody judged, and
    a boolean column `labeled` in `units` (decide over unlabeled units; never fit such a problem)."""
    only = options.get("judge")
    every = bool(options.get("unlabeled"))
    reference = str(options.get("reference") or "human")
    if reference not in REFERENCES:
        raise ValueError(f"reference: expected one of {', '.join(REFERENCES)}, got {reference!r}")
    released = reference == "annotator"
    if released and only == ANNOTATOR:
        raise ValueError("judge: the annotator is the reference (reference annotator); name a judge")
    labeled: list[bool] = []
    thresholds = tuple(options.get("thresholds") or DEFAULT_THRESHOLDS)
    rows: list[tuple[str, str]] = []
    human: list[int] = []
    scores: list[float] = []
    ann: dict[str, list[float]] = {v: [] for v in VARIANTS}
    for rec in records:
        own = ragbench_adherent(rec.labels) if released and not rec.labels.empty else np.nan
        for unit in ([ANNOTATOR] if not rec.labels.empty and not released else []) + list(rec.judges):
            if only is not None and unit != only:
                continue
            if released:
                verdict = None if np.isnan(own) else bool(own == 1.0)
            else:
                verdict = human_adherent({**labels.get((rec.id, ""), {}), **labels.get((rec.id, unit), {})})
            if verdict is None and not every:
                continue
            rows.append((rec.id, unit))
            human.append(int(verdict or 0))
            labeled.append(verdict is not None)
            if unit == ANNOTATOR:
                scores.append(np.nan)
                ann["trace_guide"].append(guide_adherent(rec.labels))
                ann["ragbench"].append(ragbench_adherent(rec.labels))
            else:
                scores.append(rec.judges[unit].get("adherence", np.nan))
                for v in VARIANTS:
                    ann[v].append(np.nan)
    if not rows:
        return None
    units = pd.DataFrame(rows, columns=["group", "stratum"])
    if every:
        units["labeled"] = labeled
    space = Space((Grid("threshold", thresholds), Categorical("variant", ("ragbench",) if released else VARIANTS)))
    return TraceAdherenceProblem(space, units, np.arange(len(rows)), np.asarray(human, dtype=np.int64),
                                 np.asarray(scores, dtype=np.float64), {v: np.asarray(a) for v, a in ann.items()},
                                 presets=("ragbench",) if released else ("ragbench", "trace_guide"))
