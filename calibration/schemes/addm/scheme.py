"""The `addm` scheme as a `base.Scheme`. A unit is (business, method); the machine label is the method's output.

Human labels belong to the business (per sample): `verdict` (Low/High/Critical Risk) and `incidents` (the
ground-truth incidents, same shape as in records); they replace the record's ground truth in `metrics`. Per unit,
`quality` (1-5) rates a method's output for the business; it calibrates the process weights (search.py).
Parameters are a policy (`Policy.to_dict()` shape; preset `addm_v2`).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from calibration.schemes import base
from calibration.schemes.base import Column, FieldProblem, LabelKind, Parsed
from calibration.schemes.addm.manifest import MANIFEST
from calibration.schemes.addm.metrics import COUNTS, policy_verdict, result_counts, risk_score
from calibration.schemes.addm.policy import ADDM_V2, PRESETS, VERDICTS, Policy, verdict_ordinal
from calibration.schemes.addm.records import SCHEME as NAME
from calibration.schemes.addm.records import AddmSample, Incident, Parser, parse_record

if TYPE_CHECKING:
    from calibration.search.problem import SearchProblem

RECORD_KEYS = frozenset(("scheme", "id", "reviews", "ground_truth", "methods", "split", "meta"))


def _validate_verdict(value: Any) -> list[FieldProblem]:
    if value is None or verdict_ordinal(value) is not None:
        return []
    return [FieldProblem("", f"expected one of {list(VERDICTS)} or null, got {value!r}")]


def _validate_incidents(value: Any) -> list[FieldProblem]:
    if value is None:
        return []
    p = Parser(85.0)
    p.incidents(value, "", {}, gt=False)
    return [FieldProblem(x.path.lstrip("."), x.message) for x in p.problems if x.level == "error"]


VERDICT = LabelKind("verdict", _validate_verdict, per_sample=True, description="the business's risk verdict")
INCIDENTS = LabelKind("incidents", _validate_incidents, per_sample=True, description="the business's incidents")


def _validate_quality(value: Any) -> list[FieldProblem]:
    if value is None or (type(value) is int and 1 <= value <= 5):
        return []
    return [FieldProblem("", f"expected an integer rating 1-5 or null, got {value!r}")]


# Per unit: how good this method's incident report for this business is (calibrates the process weights).
QUALITY = LabelKind("quality", _validate_quality, description="the method's output quality for the business, 1-5")


def incident_json(i: Incident) -> dict[str, Any]:
    out: dict[str, Any] = {"review_id": i.review_id, "severity": i.severity, "modifiers": list(i.modifiers)}
    if i.snippet is not None:
        out["snippet"] = i.snippet
    return out


def _incidents(value: Any) -> tuple[Incident, ...]:
    return tuple(Incident(str(x["review_id"]), str(x["severity"]).casefold(), tuple(x.get("modifiers") or ()),
                          x.get("snippet")) for x in value or ())


def _incident_items(value: Any) -> dict[str, str]:
    """`label_items`' items of an `incidents` value: review:<id> -> the severity of its first incident, read as
    `_incidents` reads them (its errors too), without an Incident each."""
    out: dict[str, str] = {}
    for x in value or ():
        key, severity = f"review:{x['review_id']!s}", str(x["severity"]).casefold()
        tuple(x.get("modifiers") or ())  # as _incidents: a value it cannot read gives no items
        out.setdefault(key, severity)
    return out


@dataclass(frozen=True)
class AddmScheme:
    name: str = NAME
    title: str = MANIFEST.title
    record_keys: frozenset[str] = RECORD_KEYS
    required_keys: frozenset[str] = frozenset(("reviews", "ground_truth"))
    unit_noun: str = MANIFEST.unit_noun
    accepts: str = MANIFEST.accepts
    file_suffixes: tuple[str, ...] = MANIFEST.file_suffixes
    llm_run: str = MANIFEST.llm_run
    columns: tuple[Column, ...] = (Column("verdict", "Verdict", numeric=False), Column("risk_score", "Risk"),
                                   Column("n_evidences", "#Evidence"), Column("consistent", "Consistent", numeric=False))
    record_schema: str | None = "addm-record.schema.json"
    label_schema: str | None = None

    @property
    def label_kinds(self) -> Mapping[str, LabelKind]:
        return base.label_kinds(VERDICT, INCIDENTS, QUALITY)

    def detect(self, raw: Mapping[str, Any]) -> bool:
        return "reviews" in raw and "ground_truth" in raw

    def parse(self, raw: Mapping[str, Any]) -> Parsed:
        record, problems = parse_record(raw if isinstance(raw, dict) else dict(raw))
        return Parsed(record, tuple(FieldProblem(p.path, p.message, p.level) for p in problems))

    def to_json(self, record: AddmSample) -> dict[str, Any]:
        out: dict[str, Any] = {
            "scheme": NAME, "id": record.id,
            "reviews": [{"review_id": r.review_id, "text": r.text} for r in record.reviews],
            "ground_truth": {"verdict": VERDICTS[record.verdict], "incidents": [incident_json(i) for i in record.incidents]},
            "methods": {},
        }
        for name, r in record.methods.items():
            m: dict[str, Any] = {"verdict": None if r.verdict is None else VERDICTS[r.verdict], "risk_score": r.risk_score,
                                 "evidences": [incident_json(e) for e in r.evidences]}
            if r.error is not None:
                m["error"] = r.error
            out["methods"][name] = m
        if record.split is not None:
            out["split"] = record.split
        if record.meta is not None:
            out["meta"] = dict(record.meta)
        return out

    def record_id(self, record: AddmSample) -> str:
        return record.id

    def record_text(self, record: AddmSample) -> str:
        return "\n\n".join(r.text for r in record.reviews)

    def units(self, record: AddmSample) -> list[str]:
        return list(record.methods)

    def unit_summary(self, record: AddmSample, unit: str) -> dict[str, Any]:
        r = record.methods.get(unit)
        if r is None:
            return {"verdict": None, "risk_score": None, "n_evidences": 0, "consistent": None}
        consistent = None if r.error or r.verdict is None or not r.evidences else policy_verdict(r.evidences) == r.verdict
        return {"verdict": "error" if r.error else None if r.verdict is None else VERDICTS[r.verdict],
                "risk_score": risk_score(r), "n_evidences": len(r.evidences), "consistent": consistent}

    def machine_label(self, record: AddmSample, unit: str) -> Any:
        r = record.methods.get(unit)
        if r is None or r.error is not None:
            return None
        return {"verdict": None if r.verdict is None else VERDICTS[r.verdict],
                "incidents": [incident_json(e) for e in r.evidences]}

    def accept(self, machine_label: Any) -> dict[str, Any]:
        m = machine_label or {}
        return {"verdict": m.get("verdict"), "incidents": list(m.get("incidents") or []), "status": "accepted"}

    def metrics(self, record: AddmSample, unit: str, labels: Mapping[str, Any],
                params: Mapping[str, Any] | None = None) -> dict[str, float]:
        """Per-business figures of one method: verdict right, consistency and the process counts, against the
        human labels when given (else the record's ground truth)."""
        r = record.methods.get(unit)
        if r is None or r.error is not None:
            return {}
        policy = Policy.from_dict(params) if params else ADDM_V2
        truth = record
        if labels.get("verdict") is not None:
            truth = replace(truth, verdict=verdict_ordinal(labels["verdict"]))
        if labels.get("incidents") is not None:
            truth = replace(truth, incidents=_incidents(labels["incidents"]))
        c = result_counts(truth, r, policy)
        out: dict[str, float] = {"verdict_correct": float(r.verdict == truth.verdict) if r.verdict is not None else float("nan")}
        out["risk_score"] = risk_score(r) if risk_score(r) is not None else float("nan")
        out.update({k: float(v) for k, v in zip(COUNTS, c)})
        return out

    items_read_record = False  # label_items reads the labels only: agreement parses no record

    def label_items(self, record: AddmSample, unit: str, labels: Mapping[str, Any]) -> dict[str, Any]:
        """`verdict` -> the verdict, and each incident's review id -> its severity (what two labelers agree on)."""
        out: dict[str, Any] = {}
        if labels.get("verdict") is not None:
            out["verdict"] = VERDICTS[verdict_ordinal(labels["verdict"])]  # type: ignore[index]
        for i in _incidents(labels.get("incidents")):
            out.setdefault(f"review:{i.review_id}", i.severity)
        return out

    def label_items_many(self, records: Mapping[str, Any], rows: Sequence[tuple[str, str, str, Any]]
                         ) -> tuple[Any, Any, Any]:
        """`label_items` of many (sample, unit, kind, value) rows (one kind each) at once, as arrays
        (base.Capabilities): no dict and no Incident per row (a call per row was a fifth of the human ceiling at
        100k businesses). A row without a record, or whose value `label_items` cannot read, has no item, as
        agreement.record_items has it."""
        import numpy as np

        row: list[int] = []
        item: list[str] = []
        category: list[str] = []
        for i, (sid, _unit, kind, value) in enumerate(rows):
            if value is None or records.get(sid) is None:
                continue
            if kind == "verdict":
                ordinal = verdict_ordinal(value)
                if ordinal is not None:  # else VERDICTS[None]: no item
                    row.append(i)
                    item.append("verdict")
                    category.append(VERDICTS[ordinal])
            elif kind == "incidents":
                try:
                    found = _incident_items(value)
                except (KeyError, TypeError, ValueError, IndexError, AttributeError):
                    continue
                row += [i] * len(found)
                item += found.keys()
                category += found.values()
        objects = np.empty(len(item), dtype=object), np.empty(len(category), dtype=object)
        objects[0][:], objects[1][:] = item, category
        return np.asarray(row, dtype=np.int64), objects[0], objects[1]

    def presets(self) -> dict[str, dict[str, Any]]:
        return {name: p.to_dict() for name, p in PRESETS.items()}

    def search_problem(self, records: Sequence[Any], labels: Mapping[tuple[str, str], Mapping[str, Any]],
                       options: Mapping[str, Any]) -> "SearchProblem | None":
        """search.search_problem: the policy's points and thresholds against the human verdicts
        (options["target"] = "verdict", default), or the process weights against the quality ratings
        ("process_weights")."""
        from calibration.schemes.addm.search import search_problem

        return search_problem(records, labels, options)  # type: ignore[return-value]

    def evaluate(self, records: Sequence[Any], labels: Mapping[tuple[str, str], Mapping[str, Any]],
                 options: Mapping[str, Any]) -> base.Report:
        """report.report: per policy preset, each method's three scores with intervals, the component table and a
        ranking; the same on the human-labeled businesses under the human labels, and verdict agreement."""
        from calibration.schemes.addm.report import report

        return report(records, labels, options)


SCHEME = AddmScheme()
