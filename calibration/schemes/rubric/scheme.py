"""The `rubric` scheme as a `base.Scheme`. A unit is (sample, trait); the machine label is the LLM's buckets.

Human label kinds: `buckets` ({tp, fn, fp, tn: [excerpt, ...]}) plus the shared `status` and `note`.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from calibration.schemes import base
from calibration.schemes.base import Column, FieldProblem, LabelKind, Parsed
from calibration.schemes.rubric.manifest import MANIFEST
from calibration.schemes.rubric.buckets import BucketError, compute_trait_metrics, normalize_excerpt, validate_buckets
from calibration.schemes.rubric.parse import RECORD_KEYS, parse_record
from calibration.schemes.rubric.records import RubricSample
from calibration.schemes.rubric.traits import BUCKET_NAMES, MetricTrait

if TYPE_CHECKING:
    from calibration.search.problem import SearchProblem

NAME = "rubric"


def _validate_buckets(value: Any) -> list[FieldProblem]:
    if value is None:
        return []
    try:
        validate_buckets(value, "")
    except BucketError as exc:
        return [FieldProblem(exc.path.lstrip("."), exc.message)]
    return []


BUCKETS = LabelKind("buckets", _validate_buckets, description="the excerpts of each confusion bucket")


def _trait(record: RubricSample, unit: str) -> Mapping[str, Any] | None:
    return next((t for t in record.traits if t["name"] == unit), None)


@dataclass(frozen=True)
class RubricScheme:
    name: str = NAME
    title: str = MANIFEST.title
    record_keys: frozenset[str] = RECORD_KEYS
    required_keys: frozenset[str] = frozenset(("question", "response", "traits"))
    unit_noun: str = MANIFEST.unit_noun
    accepts: str = MANIFEST.accepts
    file_suffixes: tuple[str, ...] = MANIFEST.file_suffixes
    llm_run: str = MANIFEST.llm_run
    columns: tuple[Column, ...] = (Column("n_gt", "#TP instr."), Column("n_pred", "#Excerpts"),
                                   Column("mode", "Mode", numeric=False))
    record_schema: str | None = "import-record.schema.json"
    label_schema: str | None = "label-line.schema.json"

    @property
    def label_kinds(self) -> Mapping[str, LabelKind]:
        return base.label_kinds(BUCKETS)

    def detect(self, raw: Mapping[str, Any]) -> bool:
        # RAG (documents), answer-check (query) and review (reviews) records also carry a question or response
        if "text" in raw or "documents" in raw or "query" in raw or "reviews" in raw:
            return False
        return "question" in raw or "response" in raw or "traits" in raw

    def parse(self, raw: Mapping[str, Any]) -> Parsed:
        return parse_record(raw if isinstance(raw, dict) else dict(raw))

    def to_json(self, record: RubricSample) -> dict[str, Any]:
        out: dict[str, Any] = {"scheme": NAME, "id": record.id, "question": record.question,
                               "response": record.response, "traits": [dict(t) for t in record.traits]}
        if record.buckets:
            out["buckets"] = {k: dict(v) for k, v in record.buckets.items()}
        if record.split is not None:
            out["split"] = record.split
        if record.meta is not None:
            out["meta"] = dict(record.meta)
        return out

    def record_id(self, record: RubricSample) -> str:
        return record.id

    def record_text(self, record: RubricSample) -> str:
        return record.response

    def units(self, record: RubricSample) -> list[str]:
        return [t["name"] for t in record.traits]

    def unit_summary(self, record: RubricSample, unit: str) -> dict[str, Any]:
        t = _trait(record, unit) or {}
        b = record.buckets.get(unit)
        return {"n_gt": len(t.get("tp_instructions") or ()),
                "n_pred": 0 if b is None else len(b.get("tp", [])) + len(b.get("fp", [])),
                "mode": t.get("evaluation_mode", "tp_only")}

    def machine_label(self, record: RubricSample, unit: str) -> Any:
        b = record.buckets.get(unit)
        return None if b is None else {k: list(b.get(k, [])) for k in BUCKET_NAMES}

    def accept(self, machine_label: Any) -> dict[str, Any]:
        b = machine_label or {}
        return {"buckets": {k: list(b.get(k, [])) for k in BUCKET_NAMES}, "status": "accepted"}

    def metrics(self, record: RubricSample, unit: str, labels: Mapping[str, Any],
                params: Mapping[str, Any] | None = None) -> dict[str, float]:
        t = _trait(record, unit)
        buckets = labels.get("buckets")
        if t is None or buckets is None:
            return {}
        return compute_trait_metrics(MetricTrait.from_dict(t, strict=False), buckets)

    items_read_record = False  # label_items reads the labels only: agreement parses no record

    def label_items(self, record: RubricSample, unit: str, labels: Mapping[str, Any]) -> dict[str, Any]:
        """Each excerpt (normalised) -> the bucket it was put in."""
        buckets = labels.get("buckets") or {}
        return {normalize_excerpt(e): name for name in BUCKET_NAMES for e in buckets.get(name, [])}

    def label_items_many(self, records: Mapping[str, Any], rows: Sequence[tuple[str, str, str, Any]]
                         ) -> tuple[Any, Any, Any]:
        """`label_items` of many (sample, unit, kind, value) rows at once, as arrays (base.Capabilities): an item
        coded by its normalised text's number, a category its bucket's name; a row label_items cannot read has no
        items, as app.services.agreement.record_items has it. Array work, each distinct excerpt normalised once
        (items.py: the human ceiling draws every distinct label of a shared unit)."""
        from calibration.schemes.rubric.items import bucket_items_many

        return bucket_items_many(records, rows)

    def presets(self) -> dict[str, dict[str, Any]]:
        return {}

    calibrates = False  # read by the calibration panel and the queue (issue #16) without building anything

    def search_problem(self, records: Sequence[Any], labels: Mapping[tuple[str, str], Mapping[str, Any]],
                       options: Mapping[str, Any]) -> "SearchProblem | None":
        return None  # the rubric metrics are deterministic: nothing to calibrate

    def evaluate(self, records: Sequence[Any], labels: Mapping[tuple[str, str], Mapping[str, Any]],
                 options: Mapping[str, Any]) -> base.Report:
        """Per trait: metrics from the LLM's buckets, agreement with the humans' (evaluation.py)."""
        from calibration.schemes.rubric.evaluation import evaluate_report

        return evaluate_report(records, labels, options)


SCHEME = RubricScheme()
