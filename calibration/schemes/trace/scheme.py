"""The `trace` scheme as a `base.Scheme`. A unit is (sample, judge), plus (sample, "annotator") for the record's
own sentence labels; RAGBench rows are accepted as they are (parse routes them through ragbench.py).

Human labels belong to the sample (unit ''): `relevant` and `utilized` (document sentence keys), `unsupported`
(response sentence keys) and `adherent` (the verdict; without it, "no unsupported sentence"). In `metrics` they
replace the record's labels field by field, so the truth is the annotator's labels as the humans corrected them.
Parameters: `{"variant": "ragbench" | "trace_guide", "threshold": t}` (a judge is adherent when its score >= t).
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from calibration.schemes import base
from calibration.schemes.base import Column, FieldProblem, LabelKind, Parsed, Reference
from calibration.schemes.trace.manifest import MANIFEST
from calibration.schemes.trace.metrics import SCORES, VARIANTS, ragbench_adherent, score_records
from calibration.schemes.trace.parse import RECORD_KEYS, parse_record
from calibration.schemes.trace.ragbench import JUDGE_COLUMNS, is_ragbench_row, parse_ragbench_row
from calibration.schemes.trace.records import ANNOTATOR, JUDGE_METRICS, TraceLabels, TraceRecord, human_adherent, truth_labels

if TYPE_CHECKING:
    from calibration.search.problem import SearchProblem

NAME = "trace"
# RAGBench's own columns, so its rows pass the importer's key check as they are
RAGBENCH_KEYS = frozenset({c for cols in JUDGE_COLUMNS.values() for c in cols.values()} | {
    "generation_model_name", "annotating_model_name", "dataset_name", "overall_supported_explanation",
    "relevance_explanation", "relevance_score", "utilization_score", "completeness_score"})
PRESETS: dict[str, dict[str, Any]] = {v: {"variant": v, "threshold": 0.5} for v in VARIANTS}


def _validate_keys(value: Any) -> list[FieldProblem]:
    if value is None:
        return []
    if not isinstance(value, (list, tuple)):
        return [FieldProblem("", f"expected an array of sentence keys or null, got {type(value).__name__}")]
    return [FieldProblem(f"[{i}]", f"expected a sentence key (string), got {type(k).__name__}")
            for i, k in enumerate(value) if not isinstance(k, str)]


def _validate_bool(value: Any) -> list[FieldProblem]:
    return [] if value is None or isinstance(value, bool) else [FieldProblem("", f"expected true, false or null, got {value!r}")]


RELEVANT = LabelKind("relevant", _validate_keys, per_sample=True, description="document sentences relevant to the question")
UTILIZED = LabelKind("utilized", _validate_keys, per_sample=True, description="document sentences the response uses")
UNSUPPORTED = LabelKind("unsupported", _validate_keys, per_sample=True, description="response sentences the documents do not support")
ADHERENT = LabelKind("adherent", _validate_bool, per_sample=True, description="the response is fully supported")


def _validate_support(value: Any) -> list[FieldProblem]:
    if value is None:
        return []
    if not isinstance(value, Mapping):
        return [FieldProblem("", f"expected an object (response sentence key -> document sentence keys), got {type(value).__name__}")]
    return [p for k, v in value.items() for p in
            (FieldProblem(f"[{k!r}]{q.field}", q.message) for q in _validate_keys(v))]


SUPPORT = LabelKind("support", _validate_support, per_sample=True,
                    description="supporting document sentence keys per response sentence")
_KINDS = ("relevant", "utilized", "unsupported", "adherent", "support")


def _scores(record: TraceRecord, labels: TraceLabels, variant: str) -> dict[str, float]:
    return {k: float(v) for k, v in score_records([record], variant, [labels]).iloc[0].items()}  # type: ignore[arg-type]


def _num(v: float | None) -> float | None:
    return None if v is None or math.isnan(v) else v


@dataclass(frozen=True)
class TraceScheme:
    name: str = NAME
    title: str = MANIFEST.title
    record_keys: frozenset[str] = RECORD_KEYS | RAGBENCH_KEYS
    required_keys: frozenset[str] = frozenset(("question", "documents", "response"))
    unit_noun: str = MANIFEST.unit_noun
    accepts: str = MANIFEST.accepts
    file_suffixes: tuple[str, ...] = MANIFEST.file_suffixes
    llm_run: str = MANIFEST.llm_run
    references: tuple[Reference, ...] = MANIFEST.references
    columns: tuple[Column, ...] = (Column("adherence", "Adherence"), Column("relevance", "Relevance"),
                                   Column("utilization", "Utilization"), Column("completeness", "Completeness"))
    record_schema: str | None = None
    label_schema: str | None = None

    @property
    def label_kinds(self) -> Mapping[str, LabelKind]:
        return base.label_kinds(RELEVANT, UTILIZED, UNSUPPORTED, ADHERENT, SUPPORT)

    def detect(self, raw: Mapping[str, Any]) -> bool:
        return "documents" in raw and "response" in raw and "text" not in raw

    def parse(self, raw: Mapping[str, Any]) -> Parsed:
        return parse_ragbench_row(raw) if is_ragbench_row(raw) else parse_record(raw)

    def to_json(self, record: TraceRecord) -> dict[str, Any]:
        return record.to_json()

    def record_id(self, record: TraceRecord) -> str:
        return record.id

    def record_text(self, record: TraceRecord) -> str:
        return "\n\n".join([record.question, record.response, *record.documents])

    def units(self, record: TraceRecord) -> list[str]:
        return ([ANNOTATOR] if not record.labels.empty else []) + [j for j in record.judges if j != ANNOTATOR]

    def unit_summary(self, record: TraceRecord, unit: str) -> dict[str, Any]:
        if unit == ANNOTATOR:
            s = _scores(record, record.labels, "ragbench")
            return {k: _num(s[k]) for k in SCORES}
        scores = record.judges.get(unit, {})
        return {"adherence": scores.get("adherence"), "relevance": scores.get("relevance"),
                "utilization": scores.get("utilization"), "completeness": None}

    def machine_label(self, record: TraceRecord, unit: str) -> Any:
        if unit == ANNOTATOR:
            lab = record.labels
            unsup = lab.unsupported
            if unsup is None and lab.support is not None:
                unsup = tuple(s.response_sentence_key for s in lab.support if s.fully_supported is False)
            adh = ragbench_adherent(lab)
            support = None if lab.support is None else {
                s.response_sentence_key: list(s.supporting_sentence_keys or ()) for s in lab.support}
            return {"relevant": None if lab.relevant is None else list(lab.relevant),
                    "utilized": None if lab.utilized is None else list(lab.utilized),
                    "unsupported": None if unsup is None else list(unsup),
                    "adherent": None if math.isnan(adh) else adh == 1.0, "support": support}
        scores = record.judges.get(unit)
        if scores is None:
            return None
        a = scores.get("adherence")
        return {"adherent": None if a is None else a >= PRESETS["ragbench"]["threshold"], **dict(scores)}

    def accept(self, machine_label: Any) -> dict[str, Any]:
        m = machine_label or {}
        return {**{k: m[k] for k in _KINDS if m.get(k) is not None}, "status": "accepted"}

    def metrics(self, record: TraceRecord, unit: str, labels: Mapping[str, Any],
                params: Mapping[str, Any] | None = None) -> dict[str, float]:
        """The unit's scores beside the truth's (record labels as the humans corrected them) under the variant:
        for the annotator its four scores, `human_*` and `*_error`; for a judge its scores, errors against the
        truth's relevance/utilization, and its adherence verdict at the threshold against the truth's."""
        p = {**PRESETS["ragbench"], **(params or {})}
        variant, threshold = str(p["variant"]), float(p["threshold"])
        truth = _scores(record, truth_labels(record, labels), variant)
        out: dict[str, float] = {}
        if unit == ANNOTATOR:
            mine = _scores(record, record.labels, variant)
            for k in SCORES:
                out[k], out[f"human_{k}"], out[f"{k}_error"] = mine[k], truth[k], mine[k] - truth[k]
            return out
        scores = record.judges.get(unit)
        if scores is None:
            return {}
        for k in JUDGE_METRICS:
            out[k] = scores.get(k, math.nan)
            out[f"human_{k}"] = truth[k]
        for k in ("relevance", "utilization"):
            out[f"{k}_error"] = out[k] - truth[k]
        adh = scores.get("adherence")
        out["adherent"] = math.nan if adh is None else float(adh >= threshold)
        out["adherent_correct"] = (math.nan if adh is None or math.isnan(truth["adherence"])
                                   else float(out["adherent"] == truth["adherence"]))
        return out

    def label_items(self, record: TraceRecord, unit: str, labels: Mapping[str, Any]) -> dict[str, Any]:
        """`relevant:0a` / `utilized:0a` per document sentence, `unsupported:a` per response sentence (for the
        kinds labeled), and `adherent`: what two labelers can agree on."""
        out: dict[str, Any] = {}
        for kind in ("relevant", "utilized", "unsupported"):
            chosen = labels.get(kind)
            if chosen is not None:  # the record's keys only for a kind labeled (the ceiling asks one kind at a time)
                s = set(chosen)
                keys = record.response_keys if kind == "unsupported" else record.document_keys
                out.update({f"{kind}:{k}": k in s for k in keys})
        verdict = human_adherent(labels)
        if verdict is not None:
            out["adherent"] = verdict
        return out

    def label_items_many(self, records: Mapping[str, Any], rows: Sequence[tuple[str, str, str, Any]]
                         ) -> tuple[Any, Any, Any]:
        """`label_items` of many (sample, unit, kind, value) rows (one kind each) at once, as arrays
        (base.Capabilities): the ceiling's sentence items are millions at 100k samples, a string and a dict entry
        each through `label_items`. Item `kind:key` is coded (kind index) * M + (key's number), `adherent` 3 * M;
        a row label_items cannot read (a value that is no set of keys, no record) has no items, as
        app.services.agreement.record_items has it."""
        import numpy as np

        key_code: dict[str, int] = {}
        side_keys: dict[tuple[str, bool], Any] = {}  # (sample, response side) -> its distinct keys' numbers, in order
        layouts: dict[tuple[str, ...], Any] = {}  # a side's keys -> their distinct keys' numbers, in order
        parts: list[tuple[int, int, Any]] = []  # (row, kind index, key numbers) per labeled kind
        chosen_row: list[int] = []
        chosen_key: list[int] = []
        adherent_row: list[int] = []
        adherent: list[bool] = []
        kinds = ("relevant", "utilized", "unsupported")
        for i, (sid, _unit, kind, value) in enumerate(rows):
            if value is None or (kind not in kinds and kind != "adherent"):
                continue
            record = records.get(sid)
            if record is None:
                continue
            if kind == "adherent":
                adherent_row.append(i)
                adherent.append(bool(value))
                continue
            try:
                picked = set(value)
                side = kind == "unsupported"
                keys = side_keys.get((sid, side))
                if keys is None:
                    names = tuple(record.response_keys if side else record.document_keys)
                    keys = layouts.get(names)  # samples share a few layouts (0a, 0b, ..., 1a, ...): coded once each
                    if keys is None:
                        keys = layouts[names] = np.fromiter(
                            (key_code.setdefault(k, len(key_code)) for k in dict.fromkeys(names)), dtype=np.int64)
                    side_keys[(sid, side)] = keys
            except (KeyError, TypeError, ValueError, IndexError, AttributeError):
                continue
            parts.append((i, kinds.index(kind), keys))
            got = [key_code[k] for k in picked if type(k) is str and k in key_code]
            chosen_row.extend([i] * len(got))
            chosen_key.extend(got)
            if side:  # an unsupported label also says whether the response adheres (records.human_adherent)
                adherent_row.append(i)
                adherent.append(not value)
        m = len(key_code) + 1
        sizes = np.array([len(k) for _, _, k in parts], dtype=np.int64)
        row = np.repeat(np.array([r for r, _, _ in parts], dtype=np.int64), sizes)
        key = np.concatenate([k for _, _, k in parts]) if parts else np.zeros(0, dtype=np.int64)
        item = np.repeat(np.array([k for _, k, _ in parts], dtype=np.int64), sizes) * m + key
        category = np.isin(row * m + key, np.asarray(chosen_row, dtype=np.int64) * m + np.asarray(chosen_key, dtype=np.int64))
        # the adherent item comes after the row's sentence items: a stable sort by row keeps that order
        row = np.concatenate([row, np.asarray(adherent_row, dtype=np.int64)])
        order = np.argsort(row, kind="stable")
        item = np.concatenate([item, np.full(len(adherent_row), 3 * m, dtype=np.int64)])[order]
        category = np.concatenate([category, np.asarray(adherent, dtype=bool)])[order]
        return row[order], item, category

    def presets(self) -> dict[str, dict[str, Any]]:
        return {k: dict(v) for k, v in PRESETS.items()}

    def search_problem(self, records: Sequence[Any], labels: Mapping[tuple[str, str], Mapping[str, Any]],
                       options: Mapping[str, Any]) -> "SearchProblem | None":
        from calibration.schemes.trace.calibrate import search_problem

        return search_problem(records, labels, options)  # type: ignore[return-value]

    def evaluate(self, records: Sequence[Any], labels: Mapping[tuple[str, str], Mapping[str, Any]],
                 options: Mapping[str, Any]) -> base.Report:
        """Annotator vs human per label type (kappa, F1) and per score (RMSE, Spearman); every judge's hallucination
        AUROC and relevance/utilization RMSE against `options["reference"]` ("annotator" or "human"), per RAGBench
        subset; both variants; bootstrap intervals over samples (`n_boot`, `seed`). See evaluation.py."""
        from calibration.schemes.trace.evaluation import evaluate

        return evaluate(records, labels, options)


SCHEME = TraceScheme()
