"""The `rgb` scheme as a `base.Scheme`. A unit is (sample, model): one model's response to one RGB query.

Records (records.py, issue #13) carry one `response` (+ optional `model`) and/or `responses: {model: text}`, so
several models' answers to the same query share the query, answer and passages; each model is a unit (a lone
`response` without `model` is the unit "response"). Human labels belong to the unit: `correct`, `rejected`,
`error_detected`, `error_corrected` (booleans, null = not judged), plus the shared `status` and `note`.
The machine label is rgb_original's four decisions (RGB's own evalue.py); parameters are a checker config
(`CheckerConfig.to_dict()`; presets rgb_original and rgb_extended), searched by calibrate.py.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from calibration.schemes import base
from calibration.schemes.base import Column, FieldProblem, LabelKind, Parsed
from calibration.schemes.rgb.manifest import MANIFEST
from calibration.schemes.rgb.records import RECORD_KEYS, RGBRecord, parse_record, record_to_json

if TYPE_CHECKING:
    from calibration.search.problem import SearchProblem

NAME = "rgb"
DECISIONS: tuple[str, ...] = ("correct", "rejected", "error_detected", "error_corrected")  # = features.LABELS
FIGURE_OF: dict[str, str] = {"correct": "accuracy", "rejected": "rejection_rate",
                             "error_detected": "error_detection_rate", "error_corrected": "error_correction_rate"}


def _validate_bool(value: Any) -> list[FieldProblem]:
    return [] if value is None or isinstance(value, bool) else [FieldProblem("", f"expected true, false or null, got {value!r}")]


CORRECT = LabelKind("correct", _validate_bool, description="the response answers the question correctly")
REJECTED = LabelKind("rejected", _validate_bool, description="the response declines for lack of information")
ERROR_DETECTED = LabelKind("error_detected", _validate_bool, description="the response flags factual errors in the documents")
ERROR_CORRECTED = LabelKind("error_corrected", _validate_bool, description="the response flags the error and gives the right answer")


def _config(params: Mapping[str, Any] | None) -> Any:
    from calibration.schemes.rgb.config import PRESETS, CheckerConfig

    return CheckerConfig.from_dict(params) if params else PRESETS["rgb_original"]


# (record, unit, decision) of the last rgb_original decision: sample import asks for a unit's summary and then its
# machine label, the same decision twice (each one runs the checkers: half of importing 100k records). One tuple,
# swapped whole, so threads never see a record with another's decision.
_last: list[tuple[Any, str, dict[str, bool]] | None] = [None]


def _decision(record: RGBRecord, unit: str, params: Mapping[str, Any] | None = None) -> dict[str, bool]:
    from calibration.schemes.rgb.checkers import check

    last = _last[0]
    if params is None and last is not None and last[0] is record and last[1] == unit:
        return dict(last[2])
    d = check(record.for_unit(unit), _config(params)).as_dict()
    if params is None:
        _last[0] = (record, unit, d)
        return dict(d)
    return d


@dataclass(frozen=True)
class RGBScheme:
    name: str = NAME
    title: str = MANIFEST.title
    record_keys: frozenset[str] = RECORD_KEYS
    required_keys: frozenset[str] = frozenset(("query", "answer", "response"))
    unit_noun: str = MANIFEST.unit_noun
    accepts: str = MANIFEST.accepts
    file_suffixes: tuple[str, ...] = MANIFEST.file_suffixes
    llm_run: str = MANIFEST.llm_run
    no_units: str = MANIFEST.no_units
    columns: tuple[Column, ...] = (Column("task", "Task", numeric=False), Column("language", "Lang", numeric=False),
                                   Column("noise_rate", "Noise"), Column("correct", "Correct", numeric=False),
                                   Column("rejected", "Rejected", numeric=False))
    record_schema: str | None = "rgb-record.schema.json"
    label_schema: str | None = None

    @property
    def label_kinds(self) -> Mapping[str, LabelKind]:
        return base.label_kinds(CORRECT, REJECTED, ERROR_DETECTED, ERROR_CORRECTED)

    def detect(self, raw: Mapping[str, Any]) -> bool:
        return "query" in raw and "answer" in raw and ("response" in raw or "responses" in raw)

    def parse(self, raw: Mapping[str, Any]) -> Parsed:
        return parse_record(raw)

    def to_json(self, record: RGBRecord) -> dict[str, Any]:
        return record_to_json(record)

    def record_id(self, record: RGBRecord) -> str:
        return record.id

    def record_text(self, record: RGBRecord) -> str:
        texts = [record.response] if record.response is not None else []
        return "\n\n".join([record.query, *texts, *(t for _, t in record.responses), *record.docs])

    def units(self, record: RGBRecord) -> list[str]:
        return list(record.units)

    def unit_summary(self, record: RGBRecord, unit: str) -> dict[str, Any]:
        d = _decision(record, unit)
        return {"task": record.task, "language": record.language, "noise_rate": record.noise_rate,
                "correct": d["correct"], "rejected": d["rejected"]}

    def machine_label(self, record: RGBRecord, unit: str) -> Any:
        """rgb_original's four decisions for the unit's response; None for a model the record lacks."""
        return _decision(record, unit) if unit in record.units else None

    def accept(self, machine_label: Any) -> dict[str, Any]:
        m = machine_label or {}
        return {**{k: bool(m[k]) for k in DECISIONS if m.get(k) is not None}, "status": "accepted"}

    def metrics(self, record: RGBRecord, unit: str, labels: Mapping[str, Any],
                params: Mapping[str, Any] | None = None) -> dict[str, float]:
        """The unit's share of RGB's four figures (percent: 100 or 0; averaging units gives the figure) under the
        checker config (rgb_original by default), the humans' (`human_*`) where they judged, and per decision
        whether checker and human agree (`*_agree`). Error correction is per response (the extended base "all");
        RGB's "detected" base needs the set of responses (metrics.figures)."""
        if unit not in record.units:
            return {}
        d = _decision(record, unit, params)
        out: dict[str, float] = {}
        for k in DECISIONS:
            out[FIGURE_OF[k]] = 100.0 * d[k]
            h = labels.get(k)
            out[f"human_{FIGURE_OF[k]}"] = math.nan if h is None else 100.0 * bool(h)
            out[f"{k}_agree"] = math.nan if h is None else float(d[k] == bool(h))
        return out

    items_read_record = False  # label_items reads the labels only: agreement parses no record

    def label_items(self, record: RGBRecord, unit: str, labels: Mapping[str, Any]) -> dict[str, Any]:
        """The four decisions the humans gave (what two labelers agree on)."""
        if len(labels) == 1:  # the ceiling and agreement ask one kind at a time: no scan of the four
            ((kind, value),) = labels.items()
            return {kind: bool(value)} if value is not None and kind in FIGURE_OF else {}
        return {k: bool(labels[k]) for k in DECISIONS if labels.get(k) is not None}

    def label_items_many(self, records: Mapping[str, Any], rows: Sequence[tuple[str, str, str, Any]]
                         ) -> tuple[Any, Any, Any]:
        """`label_items` of many (sample, unit, kind, value) rows (one kind each) at once, as arrays
        (base.Capabilities): each row's one decision, its item coded by the kind's place in FIGURE_OF, without a
        dict per row; a row without a record or with another kind has none, as agreement.record_items has it."""
        import numpy as np

        place = {kind: i for i, kind in enumerate(FIGURE_OF)}
        row = [i for i, (sid, _u, kind, value) in enumerate(rows)
               if value is not None and kind in place and records.get(sid) is not None]
        item = [place[rows[i][2]] for i in row]
        category = [bool(rows[i][3]) for i in row]
        return np.asarray(row, dtype=np.int64), np.asarray(item, dtype=np.int64), np.asarray(category, dtype=bool)

    def presets(self) -> dict[str, dict[str, Any]]:
        from calibration.schemes.rgb.config import PRESETS

        return {name: cfg.to_dict() for name, cfg in PRESETS.items()}

    def search_problem(self, records: Sequence[Any], labels: Mapping[tuple[str, str], Mapping[str, Any]],
                       options: Mapping[str, Any]) -> "SearchProblem | None":
        """calibrate.search_problem: variant x overlap threshold x phrase switches for `options["label"]`."""
        from calibration.schemes.rgb.calibrate import search_problem

        return search_problem(records, labels, options)  # type: ignore[return-value]

    def evaluate(self, records: Sequence[Any], labels: Mapping[tuple[str, str], Mapping[str, Any]],
                 options: Mapping[str, Any]) -> base.Report:
        """evaluation.evaluate: the four figures per model and task under each checker (presets, `configs`, stored
        `machine_labels` such as llm_judge's) and the humans', with intervals; agreement; accuracy vs noise rate."""
        from calibration.schemes.rgb.evaluation import evaluate

        return evaluate(records, labels, options)


SCHEME = RGBScheme()
