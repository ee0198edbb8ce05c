"""The `judge` scheme as a `base.Scheme`. A unit is (sample, judge); the machine label is the judge's score and
its decision at the default threshold.

Human labels belong to the sample (unit ''): `label` (true/false, or one of the record's `levels`) and `marks`
(spans of the text: start/end offsets, a label, a note). Parameters: `{"thresholds": {judge: t}}`, and for a
weighted vote also `{"weights": {judge: w}, "vote_threshold": v}` (search.py). Preset `default`: every judge at its
default threshold (columns.py).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from calibration.schemes import base
from calibration.schemes.base import Column, FieldProblem, LabelKind, Parsed, Reference
from calibration.schemes.fields import type_name
from calibration.schemes.judge import parse as _parse
from calibration.schemes.judge.manifest import MANIFEST
from calibration.schemes.judge.records import SCHEME as NAME
from calibration.schemes.judge.records import JudgeRecord
from calibration.schemes.judge.truth import LABEL, MARKS

if TYPE_CHECKING:
    from calibration.search.problem import SearchProblem

PRESETS: dict[str, dict[str, Any]] = {"default": {"thresholds": {}}}


def _validate_label(value: Any) -> list[FieldProblem]:
    if value is None or isinstance(value, bool) or (isinstance(value, str) and value.strip()):
        return []
    return [FieldProblem("", f"expected true, false, a level name or null, got {type_name(value)}")]


def _validate_marks(value: Any) -> list[FieldProblem]:
    if value is None:
        return []
    if not isinstance(value, list):
        return [FieldProblem("", f"expected an array of spans, got {type_name(value)}")]
    out = []
    for i, m in enumerate(value):
        if not isinstance(m, Mapping):
            out.append(FieldProblem(f"[{i}]", f"expected a span object, got {type_name(m)}"))
            continue
        s, e = m.get("start"), m.get("end")
        if type(s) is not int or type(e) is not int or not 0 <= s <= e:
            out.append(FieldProblem(f"[{i}]", f"expected integer offsets 0 <= start <= end, got {s!r}, {e!r}"))
        lab = m.get("label")
        if lab is not None and not isinstance(lab, str) and not (
                isinstance(lab, list) and all(isinstance(x, str) for x in lab)):
            out.append(FieldProblem(f"[{i}].label", f"expected a string or an array of strings, got {type_name(lab)}"))
        if m.get("note") is not None and not isinstance(m.get("note"), str):
            out.append(FieldProblem(f"[{i}].note", f"expected a string, got {type_name(m.get('note'))}"))
    return out


LABEL_KIND = LabelKind(LABEL, _validate_label, per_sample=True,
                       description="the sample's human label: true/false (true = positive) or one of its levels")
MARKS_KIND = LabelKind(MARKS, _validate_marks, per_sample=True,
                       description="spans of the text a human marked: start, end (code points), label, note")


@dataclass(frozen=True)
class JudgeScheme:
    name: str = NAME
    title: str = MANIFEST.title
    record_keys: frozenset[str] = _parse.RECORD_KEYS
    required_keys: frozenset[str] = _parse.REQUIRED_KEYS
    unit_noun: str = MANIFEST.unit_noun
    accepts: str = MANIFEST.accepts
    file_suffixes: tuple[str, ...] = MANIFEST.file_suffixes
    llm_run: str = MANIFEST.llm_run
    references: tuple[Reference, ...] = MANIFEST.references
    columns: tuple[Column, ...] = (Column("score", "Judge score"), Column("decision", "Says", numeric=False))
    record_schema: str | None = "judge-record.schema.json"
    label_schema: str | None = None

    @property
    def label_kinds(self) -> Mapping[str, LabelKind]:
        return base.label_kinds(LABEL_KIND, MARKS_KIND)

    def detect(self, raw: Mapping[str, Any]) -> bool:
        return "judges" in raw and "text" in raw

    def parse(self, raw: Mapping[str, Any]) -> Parsed:
        return _parse.parse_record(raw)

    def to_json(self, record: JudgeRecord) -> dict[str, Any]:
        return _parse.to_json(record)

    def record_id(self, record: JudgeRecord) -> str:
        return record.id

    def record_text(self, record: JudgeRecord) -> str:
        return record.text if record.context is None else f"{record.text}\n\n{record.context}"

    def units(self, record: JudgeRecord) -> list[str]:
        return list(record.judges)

    def _decision(self, record: JudgeRecord, unit: str, params: Mapping[str, Any] | None = None) -> bool | None:
        out = record.judges.get(unit)
        if out is None or out.score is None:
            return None
        t = ((params or {}).get("thresholds") or {}).get(unit)
        if t is None:
            t = out.threshold if out.threshold is not None else 0.5 if (
                out.probability or (out.probability is None and 0.0 <= out.score <= 1.0)) else None
        return None if t is None else out.decides_positive(float(t))

    def _label_value(self, record: JudgeRecord, positive: bool | None) -> Any:
        if positive is None:
            return None
        if record.levels is None:
            return positive
        return record.levels[record.positive_index] if positive else record.levels[0]

    def unit_summary(self, record: JudgeRecord, unit: str) -> dict[str, Any]:
        out = record.judges.get(unit)
        d = self._decision(record, unit)
        return {"score": None if out is None else out.score,
                "decision": None if d is None else (record.positive or "positive") if d
                else f"not {record.positive}" if record.positive else "negative"}  # "not hallucinated", not "negative"

    def machine_label(self, record: JudgeRecord, unit: str) -> Any:
        out = record.judges.get(unit)
        if out is None or out.score is None:
            return None
        return {"score": out.score, LABEL: self._label_value(record, self._decision(record, unit))}

    def accept(self, machine_label: Any) -> dict[str, Any]:
        m = machine_label or {}
        return {**({LABEL: m[LABEL]} if m.get(LABEL) is not None else {}), "status": "accepted"}

    def metrics(self, record: JudgeRecord, unit: str, labels: Mapping[str, Any],
                params: Mapping[str, Any] | None = None) -> dict[str, float]:
        """The unit's score, its decision under the parameters (default threshold otherwise), the human's binary
        label and whether they agree (NaN where a side is missing)."""
        out = record.judges.get(unit)
        if out is None:
            return {}
        nan = float("nan")
        d = self._decision(record, unit, params)
        h = record.binary(labels.get(LABEL))
        return {"score": nan if out.score is None else out.score, "decision": nan if d is None else float(d),
                "human": nan if h is None else float(h),
                "correct": nan if d is None or h is None else float(int(d) == h)}

    items_read_record = False  # label_items reads the labels only: agreement parses no record

    def label_items(self, record: JudgeRecord, unit: str, labels: Mapping[str, Any]) -> dict[str, Any]:
        """`label` -> the human label (what two labelers agree on; marks are compared as spans elsewhere)."""
        v = labels.get(LABEL)
        return {} if v is None else {LABEL: v}

    def label_items_many(self, records: Mapping[str, Any], rows: Sequence[tuple[str, str, str, Any]]
                         ) -> tuple[Any, Any, Any]:
        """`label_items` of many (sample, unit, kind, value) rows (one kind each) at once, as arrays
        (base.Capabilities): each `label` row's one item (code 0), its value the category (an object array: the
        values as given), without a dict per row; a row without a record has none, as agreement.record_items has it."""
        import numpy as np

        row = [i for i, (sid, _u, kind, value) in enumerate(rows)
               if kind == LABEL and value is not None and records.get(sid) is not None]
        category = np.empty(len(row), dtype=object)
        category[:] = [rows[i][3] for i in row]
        return np.asarray(row, dtype=np.int64), np.zeros(len(row), dtype=np.int64), category

    def presets(self) -> dict[str, dict[str, Any]]:
        return {k: dict(v) for k, v in PRESETS.items()}

    def search_problem(self, records: Sequence[Any], labels: Mapping[tuple[str, str], Mapping[str, Any]],
                       options: Mapping[str, Any]) -> "SearchProblem | None":
        """search.search_problem: a judge's threshold (`target` "threshold", `judge`), or a weighted vote of several
        judges ("vote"), against the sample reference `reference` (any | majority | adjudicated)."""
        from calibration.schemes.judge.search import search_problem

        return search_problem(records, labels, options)  # type: ignore[return-value]

    def evaluate(self, records: Sequence[Any], labels: Mapping[tuple[str, str], Mapping[str, Any]],
                 options: Mapping[str, Any]) -> base.Report:
        """report.report: per judge AUROC, balanced accuracy, F1 and Cohen's kappa with paired bootstrap intervals,
        reliability and ECE for probability-like judges, the human ceiling, optionally the guaranteed band."""
        from calibration.schemes.judge.report import report

        return report(records, labels, options, self.presets())


SCHEME = JudgeScheme()
