"""Import rules of the `trace` scheme: the RAGBench subset a record belongs to goes to `meta["subset"]`, and a
RAGBench row's id is namespaced by its subset and generation model.

Why: a RAGBench id names a question, not a response. delucionqa and emanual hold two responses per question (two
generation models, same id), and 24 ids of the seven test subsets repeat across subsets; the store replaces a
sample whose id it already holds. So a row (it has `dataset_name`) is stored as `<subset>/<id>/<generation model>`
(`delucionqa/114/claude-3-haiku-20240307`; without a model `<subset>/<id>`), unique across the release; the id as
released stays in `meta["ragbench_id"]`.

The subset is the row's `dataset_name` without its split suffix (`covidqa_test` -> `covidqa`); for other trace
records, the folder of a file named after a split (`ragbench/covidqa/test.jsonl` -> `covidqa`), unless the record's
meta already names one. `evaluate` reports per subset.

Export (`export_extra`): besides the records and every annotator's labels (the generic export), a split carries
`trace_scores`: per exported sample, the four TRACe scores and their average under both variants for each label
source: `annotator` (the record's own labels), `human` (the annotator's labels as the humans corrected them, field
by field: what evaluate calls the human side; only samples with human trace labels) and every LLM annotator
`llm:<model>`. Default dataset name (`default_dataset`): RAGBench's `<subset>/test.parquet` is `<subset>-test`.
"""
from __future__ import annotations

from dataclasses import replace
from collections.abc import Mapping
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

from app.io.problems import Location
from calibration.schemes.trace.records import TraceLabels, TraceRecord

if TYPE_CHECKING:
    from app.io.records import RecordValidator

SPLITS = ("train", "validation", "dev", "test")


def _strip_split(name: str) -> str:
    for split in SPLITS:
        if name.endswith(f"_{split}"):
            return name[: -len(split) - 1]
    return name


def subset_of(record: TraceRecord, file: str) -> tuple[str | None, bool]:
    """(subset, from RAGBench's dataset_name?) of a record read from `file`."""
    meta = record.meta or {}
    if isinstance(meta.get("subset"), str) and meta["subset"]:
        return meta["subset"], False
    name = meta.get("dataset_name")
    if isinstance(name, str) and name:
        return _strip_split(name), True
    p = PurePath(file)
    if p.stem.lower() in SPLITS and p.parent.name:
        return p.parent.name, False
    return None, False


def _ragbench_id(rid: object, dataset_name: object, model: object) -> str | None:
    if not isinstance(dataset_name, str) or not dataset_name or rid is None:
        return None
    rid = str(rid)
    subset = _strip_split(dataset_name)
    if rid.startswith(f"{subset}/"):  # already namespaced (an export of a Concord project)
        return rid
    return f"{subset}/{rid}" + (f"/{model}" if isinstance(model, str) and model else "")


def sample_id(raw: Mapping[str, Any]) -> Any:
    """The id a raw record is stored under (the validator checks uniqueness on it)."""
    rid = raw.get("id")
    if type(rid) is not str and type(rid) is not int:
        return rid
    meta = raw.get("meta")
    name = raw.get("dataset_name") or (meta.get("dataset_name") if isinstance(meta, dict) else None)
    model = raw.get("generation_model_name") or (meta.get("generation_model_name") if isinstance(meta, dict) else None)
    return _ragbench_id(rid, name, model) or rid


def check(v: "RecordValidator", loc: Location, record: TraceRecord | None) -> None:
    """No cross-record rule: ids are checked by the validator, labels by the parser."""


def collect(v: "RecordValidator", loc: Location, record: TraceRecord) -> None:
    subset, ragbench = subset_of(record, loc.file)
    if subset is not None:
        meta = dict(record.meta or {})
        meta["subset"] = subset
        new_id = _ragbench_id(record.id, meta.get("dataset_name"), meta.get("generation_model_name")) if ragbench else None
        if new_id is not None and new_id != record.id:
            meta["ragbench_id"] = record.id
            v.out.schemes.pop(record.id, None)
            v.out.schemes[new_id] = "trace"
            record = replace(record, id=new_id, meta=meta)
        else:
            record = replace(record, meta=meta)
    v.out.records.setdefault("trace", []).append(record)


def default_dataset(path: str | PurePath) -> str | None:
    """`covidqa/test.parquet` -> `covidqa-test`: a file named after a split says little on its own (every RAGBench
    subset has one), so the folder goes in front; None (the file name) otherwise."""
    p = PurePath(path)
    if p.stem.lower() in SPLITS and p.parent.name not in ("", ".", ".."):
        return f"{p.parent.name}-{p.stem}"
    return None


def _num(v: float) -> float | None:
    return None if v != v else float(v)  # NaN (no labels to score) is no value in JSON


def export_extra(project: Any, records: list[TraceRecord], labels: Mapping[tuple[str, str], Mapping[str, Any]]
                 ) -> dict[str, list[dict[str, Any]]]:
    """`trace_scores`: one row per (sample, label source, variant) with the four scores and their average."""
    from calibration.schemes.trace.annotate import LLM_SOURCE_PREFIX, labels_from_value
    from calibration.schemes.trace.evaluation import human_labels
    from calibration.schemes.trace.metrics import SCORES, VARIANTS
    from calibration.schemes.trace.reference import score_record
    from calibration.schemes.trace.scheme import truth_labels

    llm = project.samples.machine_labels("trace", LLM_SOURCE_PREFIX)
    rows: list[dict[str, Any]] = []
    for record in sorted(records, key=lambda r: r.id):
        sources: list[tuple[str, TraceLabels]] = []
        if not record.labels.empty:
            sources.append(("annotator", record.labels))
        own = labels.get((record.id, ""), {})
        if human_labels(own) is not None:
            sources.append(("human", truth_labels(record, own)))
        for source in sorted(llm):
            value = llm[source].get((record.id, source))
            if value is not None:
                sources.append((source, labels_from_value(value)))
        for source, lab in sources:
            for variant in VARIANTS:
                s = score_record(record, variant, lab)
                rows.append({"scheme": "trace", "sample": record.id, "labels": source, "variant": variant,
                             **{k: _num(s[k]) for k in (*SCORES, "average")}})
    return {"trace_scores": rows}
