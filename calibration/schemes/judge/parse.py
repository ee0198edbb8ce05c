"""Validate one raw judge record (a decoded JSON object) into a JudgeRecord, every problem with its field path.

Errors reject the record: missing or mistyped fields, a non-finite score, levels that repeat or a
`positive_from` that is not a level. Warnings keep it: unknown keys (reported once per file by the importer), a
judge declared `probability` whose score lies outside [0, 1].
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from calibration.schemes.base import FieldProblem, Parsed
from calibration.schemes.fields import key, meta_of, record_id, string, type_name, unknown
from calibration.schemes.judge.records import SCHEME, JudgeOutput, JudgeRecord, finite_number

RECORD_KEYS: frozenset[str] = frozenset(("scheme", "id", "text", "context", "judges", "levels", "positive_from",
                                         "positive", "split", "meta"))
REQUIRED_KEYS: frozenset[str] = frozenset(("text", "judges"))
JUDGE_KEYS: frozenset[str] = frozenset(("score", "high_means_positive", "probability", "threshold", "label",
                                        "explanation"))


def _judge(raw: Any, path: str, problems: list[FieldProblem]) -> JudgeOutput | None:
    if isinstance(raw, (int, float)) and not isinstance(raw, bool) or raw is None:
        raw = {"score": raw}  # shorthand: "judges": {"hhem": 0.8}
    if not isinstance(raw, Mapping):
        problems.append(FieldProblem(path, f"expected an object or a number, got {type_name(raw)}"))
        return None
    bad = len(problems)
    for k in raw:
        if k not in JUDGE_KEYS:
            problems.append(unknown("judge output", f"{path}.{k}"))
    score = raw.get("score")
    if score is not None and not finite_number(score):
        problems.append(FieldProblem(f"{path}.score", f"expected a finite number or null, got {score!r}"))
    flags = {}
    for name, default in (("high_means_positive", True), ("probability", None)):
        v = raw.get(name, default)
        if v is not None and not isinstance(v, bool):
            problems.append(FieldProblem(f"{path}.{name}", f"expected true or false, got {type_name(v)}"))
        flags[name] = v if v is not None or default is None else default
    threshold = raw.get("threshold")
    if threshold is not None and not finite_number(threshold):
        problems.append(FieldProblem(f"{path}.threshold", f"expected a finite number or null, got {threshold!r}"))
    explanation = raw.get("explanation")
    if explanation is not None and not isinstance(explanation, str):
        problems.append(FieldProblem(f"{path}.explanation", f"expected a string, got {type_name(explanation)}"))
    if any(p.severity == "error" for p in problems[bad:]):
        return None
    if flags["probability"] and score is not None and not 0.0 <= score <= 1.0:
        problems.append(FieldProblem(f"{path}.score", f"{score!r} is outside [0, 1] though the judge is declared a "
                                     "probability", "warning"))
    return JudgeOutput(None if score is None else float(score), bool(flags["high_means_positive"]),
                       flags["probability"], None if threshold is None else float(threshold), raw.get("label"),
                       explanation)


def _levels(raw: Mapping[str, Any], problems: list[FieldProblem]) -> tuple[tuple[str, ...] | None, str | None]:
    levels = raw.get("levels")
    start = raw.get("positive_from")
    if levels is None:
        if start is not None:
            problems.append(FieldProblem("positive_from", "needs `levels` (binary labels are true/false)"))
        return None, None
    if not isinstance(levels, list) or len(levels) < 2 or not all(isinstance(x, str) and x.strip() for x in levels):
        problems.append(FieldProblem("levels", "expected an array of at least two non-empty strings, "
                                     "from most negative to most positive"))
        return None, None
    if len(set(levels)) != len(levels):
        problems.append(FieldProblem("levels", "a level is listed twice"))
        return None, None
    if start is not None and start not in levels[1:]:
        problems.append(FieldProblem("positive_from", f"expected one of {levels[1:]}, got {start!r}"))
        return None, None
    return tuple(levels), start


def parse_record(raw: Any) -> Parsed:
    problems: list[FieldProblem] = []
    if not isinstance(raw, Mapping):
        return Parsed(None, (FieldProblem("", f"expected a record object, got {type_name(raw)}"),))
    rec = dict(raw)
    if rec.get("scheme", SCHEME) != SCHEME:
        problems.append(FieldProblem("scheme", f"expected {SCHEME!r}, got {rec.get('scheme')!r}"))
    for k in rec:
        if k not in RECORD_KEYS:
            problems.append(unknown(SCHEME, k))
    sid = record_id(rec, problems)
    text = string(rec, "text", True, problems)
    context = string(rec, "context", False, problems)
    positive = string(rec, "positive", False, problems)
    split = string(rec, "split", False, problems)
    meta = meta_of(rec, problems)
    levels, start = _levels(rec, problems)
    judges: dict[str, JudgeOutput] = {}
    raw_judges = rec.get("judges")
    if not isinstance(raw_judges, Mapping):
        problems.append(FieldProblem("judges", "is required" if raw_judges is None
                                     else f"expected an object (judge name -> output), got {type_name(raw_judges)}"))
    else:
        for name, out in raw_judges.items():
            path = f"judges{key(str(name))}"
            if not str(name).strip():
                problems.append(FieldProblem(path, "a judge name must not be empty"))
                continue
            got = _judge(out, path, problems)
            if got is not None:
                judges[str(name)] = got
    if any(p.severity == "error" for p in problems) or sid is None or text is None:
        return Parsed(None, tuple(problems))
    return Parsed(JudgeRecord(sid, text, judges, context, levels, start, positive, split, meta), tuple(problems))


def to_json(record: JudgeRecord) -> dict[str, Any]:
    """The record as import reads it; parse_record(to_json(r)) == r."""
    judges = {}
    for name, j in record.judges.items():
        out: dict[str, Any] = {"score": j.score, "high_means_positive": j.high_means_positive}
        for k in ("probability", "threshold", "label", "explanation"):
            if getattr(j, k) is not None:
                out[k] = getattr(j, k)
        judges[name] = out
    rec: dict[str, Any] = {"scheme": SCHEME, "id": record.id, "text": record.text, "judges": judges}
    for k in ("context", "positive_from", "positive", "split"):
        if getattr(record, k) is not None:
            rec[k] = getattr(record, k)
    if record.levels is not None:
        rec["levels"] = list(record.levels)
    if record.meta is not None:
        rec["meta"] = dict(record.meta)
    return rec


def _text(rec: Mapping[str, Any], name: str) -> str | None:
    value = rec.get(name)
    if value is not None and type(value) is not str:
        raise ValueError(f"{name}: not as to_json writes it")
    return value


def stored_record(rec: Mapping[str, Any]) -> JudgeRecord:
    """The record `parse_record(rec)` gives for a record as `to_json` wrote it (the project's stored payloads),
    without collecting problems: every judge output an object, every field of its written type. Raises ValueError
    (or KeyError, TypeError) on anything else: the caller then asks `parse_record`, which says what is wrong."""
    sid, text = rec["id"], rec["text"]
    if type(sid) is not str or not sid.strip() or type(text) is not str or rec.get("scheme", SCHEME) != SCHEME:
        raise ValueError("not a stored record")
    if not RECORD_KEYS.issuperset(rec) or (rec.get("meta") is not None and type(rec["meta"]) is not dict):
        raise ValueError("not a stored record")
    levels, start = rec.get("levels"), rec.get("positive_from")
    if levels is not None or start is not None:
        problems: list[FieldProblem] = []
        levels, start = _levels(rec, problems)
        if problems:
            raise ValueError("not stored levels")
    judges: dict[str, JudgeOutput] = {}
    for name, out in rec["judges"].items():
        score, threshold = out.get("score"), out.get("threshold")
        high, prob, explanation = out.get("high_means_positive", True), out.get("probability"), out.get("explanation")
        if (type(out) is not dict or not JUDGE_KEYS.issuperset(out) or not str(name).strip()
                or (score is not None and not finite_number(score)) or type(high) is not bool
                or (prob is not None and type(prob) is not bool)
                or (threshold is not None and not finite_number(threshold))
                or (explanation is not None and type(explanation) is not str)
                or (prob and score is not None and not 0.0 <= score <= 1.0)):  # a warning parse_record gives
            raise ValueError("not a stored judge output")
        judges[str(name)] = JudgeOutput(None if score is None else float(score), high, prob,
                                        None if threshold is None else float(threshold), out.get("label"), explanation)
    return JudgeRecord(sid, text, judges, _text(rec, "context"), levels, start, _text(rec, "positive"),
                       _text(rec, "split"), rec.get("meta"))
