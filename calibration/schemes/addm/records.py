"""Record types of the `addm` scheme and a parser from raw dicts that reports every problem with its field path.

A record is one business: its reviews, the ground-truth verdict and incidents, and each method's verdict,
risk score and evidences (same shape as incidents). Snippets are located in their review with the project's
grounding (exact, then case-insensitive, then fuzzy); one that cannot be found is kept, flagged ungrounded.
"""
from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from calibration.grounding import DEFAULT_FUZZY_THRESHOLD, How, locate
from calibration.schemes.addm.policy import MODIFIERS, SEVERITIES, VERDICTS, canonical_modifier, verdict_ordinal

SCHEME = "addm"
Level = Literal["error", "warning"]


@dataclass(frozen=True, slots=True)
class Problem:
    path: str  # a field path such as `methods["amos"].evidences[2].severity`; '' for the whole record
    message: str
    level: Level = "error"

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


@dataclass(frozen=True, slots=True)
class Incident:
    """A ground-truth incident or a method's evidence. Offsets locate the snippet in its review (None if not)."""

    review_id: str
    severity: str
    modifiers: tuple[str, ...] = ()
    snippet: str | None = None
    start: int | None = None
    end: int | None = None
    how: How | None = None  # None: no snippet given

    @property
    def grounded(self) -> bool:
        return self.start is not None


@dataclass(frozen=True, slots=True)
class Review:
    review_id: str
    text: str


@dataclass(frozen=True, slots=True)
class MethodResult:
    """One method's output for one business. `verdict` is an ordinal (0 Low, 1 High, 2 Critical) or None."""

    verdict: int | None = None
    risk_score: float | None = None
    evidences: tuple[Incident, ...] = ()
    error: str | None = None


@dataclass(frozen=True, slots=True)
class AddmSample:
    id: str
    reviews: tuple[Review, ...]
    verdict: int  # ground truth, ordinal
    incidents: tuple[Incident, ...] = ()
    methods: Mapping[str, MethodResult] = field(default_factory=dict)
    split: str | None = None
    meta: Mapping[str, Any] | None = None

    def review_text(self, review_id: str) -> str | None:
        for r in self.reviews:
            if r.review_id == review_id:
                return r.text
        return None


def key(name: str) -> str:
    """A mapping key inside a field path: `methods["amos"]`."""
    return "[" + json.dumps(name, ensure_ascii=False) + "]"


def type_name(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    return {str: "string", list: "array", dict: "object"}.get(type(v), type(v).__name__)


class Parser:
    """Collects every field problem of one record (not just the first), so the user fixes a file in one pass."""

    def __init__(self, fuzzy_threshold: float) -> None:
        self.problems: list[Problem] = []
        self.fuzzy = fuzzy_threshold

    def err(self, path: str, msg: str) -> None:
        self.problems.append(Problem(path, msg, "error"))

    def warn(self, path: str, msg: str) -> None:
        self.problems.append(Problem(path, msg, "warning"))

    def string(self, d: Mapping[str, Any], name: str, path: str, required: bool = True) -> str | None:
        v = d.get(name)
        if v is None:
            if required:
                self.err(path, "is required")
            return None
        if isinstance(v, int) and not isinstance(v, bool):
            return str(v)  # integer ids are read as their decimal string
        if not isinstance(v, str):
            self.err(path, f"expected a string, got {type_name(v)}")
            return None
        if required and not v.strip():
            self.err(path, "must not be empty")
            return None
        return v

    def reviews(self, raw: Any) -> dict[str, str] | None:
        if not isinstance(raw, list):
            self.err("reviews", "is required" if raw is None else f"expected an array of reviews, got {type_name(raw)}")
            return None
        out: dict[str, str] = {}
        for i, r in enumerate(raw):
            path = f"reviews[{i}]"
            if not isinstance(r, dict):
                self.err(path, f"expected a review object, got {type_name(r)}")
                continue
            rid = self.string(r, "review_id", f"{path}.review_id")
            text = self.string(r, "text", f"{path}.text", required=False)
            if "text" not in r or r.get("text") is None:
                self.err(f"{path}.text", "is required")
            if rid is None or text is None:
                continue
            if rid in out:
                self.err(f"{path}.review_id", f"duplicate review id {rid!r}")
                continue
            out[rid] = text
        return out

    def incident(self, raw: Any, path: str, texts: Mapping[str, str], gt: bool) -> Incident | None:
        if not isinstance(raw, dict):
            self.err(path, f"expected an incident object, got {type_name(raw)}")
            return None
        rid = self.string(raw, "review_id", f"{path}.review_id")
        sev = raw.get("severity")
        severity = sev.strip().casefold() if isinstance(sev, str) else None
        if severity not in SEVERITIES:
            self.err(f"{path}.severity", "is required" if sev is None
                     else f"expected one of {list(SEVERITIES)}, got {sev!r}" if isinstance(sev, str)
                     else f"expected a string, got {type_name(sev)}")
            severity = None
        mods_raw = raw.get("modifiers", [])
        modifiers: list[str] = []
        if mods_raw is None:
            mods_raw = []
        if not isinstance(mods_raw, list):
            self.err(f"{path}.modifiers", f"expected an array of strings, got {type_name(mods_raw)}")
        else:
            for j, m in enumerate(mods_raw):
                if not isinstance(m, str) or not m.strip():
                    self.err(f"{path}.modifiers[{j}]", f"expected a non-empty string, got {type_name(m) if not isinstance(m, str) else 'an empty one'}")
                    continue
                name = canonical_modifier(m)
                if name not in MODIFIERS:
                    self.warn(f"{path}.modifiers[{j}]", f"unknown modifier {m!r} (known: {list(MODIFIERS)}); it earns no points")
                if name in modifiers:
                    self.warn(f"{path}.modifiers[{j}]", f"modifier {name!r} listed twice; counted once")
                    continue
                modifiers.append(name)
        snippet = self.string(raw, "snippet", f"{path}.snippet", required=False)
        if rid is None or severity is None:
            return None
        text = texts.get(rid)
        if text is None:
            msg = f"review {rid!r} is not among the record's reviews"
            if gt:
                self.err(f"{path}.review_id", msg)
                return None
            self.warn(f"{path}.review_id", msg)
        if snippet is None or not snippet.strip():
            return Incident(rid, severity, tuple(modifiers), None)
        loc = locate(snippet, text or "", fuzzy_threshold=self.fuzzy)
        if not loc.grounded and text is not None:
            self.warn(f"{path}.snippet", f"{snippet[:60]!r} was not found in review {rid!r}; kept as ungrounded")
        return Incident(rid, severity, tuple(modifiers), snippet, loc.start, loc.end, loc.how)

    def incidents(self, raw: Any, path: str, texts: Mapping[str, str], gt: bool) -> tuple[Incident, ...]:
        if raw is None:
            raw = []
        if not isinstance(raw, list):
            self.err(path, f"expected an array, got {type_name(raw)}")
            return ()
        got = (self.incident(x, f"{path}[{i}]", texts, gt) for i, x in enumerate(raw))
        return tuple(x for x in got if x is not None)

    def method(self, raw: Any, path: str, texts: Mapping[str, str]) -> MethodResult | None:
        if not isinstance(raw, dict):
            self.err(path, f"expected a method result object, got {type_name(raw)}")
            return None
        error = raw.get("error")
        if error is not None and not isinstance(error, str):
            error = json.dumps(error, ensure_ascii=False)
        verdict = None
        v = raw.get("verdict")
        if v is not None:
            verdict = verdict_ordinal(v)
            if verdict is None:
                self.err(f"{path}.verdict", f"expected one of {list(VERDICTS)}, got {v!r}")
        score = raw.get("risk_score")
        if score is not None and not (isinstance(score, (int, float)) and not isinstance(score, bool) and math.isfinite(score)):
            self.err(f"{path}.risk_score", f"expected a finite number, got {score!r}")
            score = None
        evidences = self.incidents(raw.get("evidences"), f"{path}.evidences", texts, gt=False)
        return MethodResult(verdict, None if score is None else float(score), evidences, error or None)


def parse_record(raw: Any, fuzzy_threshold: float = DEFAULT_FUZZY_THRESHOLD) -> tuple[AddmSample | None, list[Problem]]:
    """Validate one raw record. Returns the sample (None if any error) and every problem found."""
    p = Parser(fuzzy_threshold)
    if not isinstance(raw, dict):
        p.err("", f"expected a record object, got {type_name(raw)}")
        return None, p.problems
    scheme = raw.get("scheme", SCHEME)
    if scheme != SCHEME:
        p.err("scheme", f"expected {SCHEME!r}, got {scheme!r}")
    sid = p.string(raw, "id", "id")
    texts = p.reviews(raw.get("reviews")) or {}
    gt = raw.get("ground_truth")
    verdict: int | None = None
    incidents: tuple[Incident, ...] = ()
    if not isinstance(gt, dict):
        p.err("ground_truth", "is required" if gt is None else f"expected an object, got {type_name(gt)}")
    else:
        verdict = verdict_ordinal(gt.get("verdict"))
        if verdict is None:
            p.err("ground_truth.verdict", "is required" if gt.get("verdict") is None
                  else f"expected one of {list(VERDICTS)}, got {gt.get('verdict')!r}")
        incidents = p.incidents(gt.get("incidents"), "ground_truth.incidents", texts, gt=True)
    methods_raw = raw.get("methods", {})
    methods: dict[str, MethodResult] = {}
    if not isinstance(methods_raw, dict):
        p.err("methods", f"expected an object mapping method names to results, got {type_name(methods_raw)}")
    else:
        for name, m in methods_raw.items():
            if not str(name).strip():
                p.err(f"methods{key(str(name))}", "method name must not be empty")
                continue
            got = p.method(m, f"methods{key(str(name))}", texts)
            if got is not None:
                methods[str(name)] = got
    split = p.string(raw, "split", "split", required=False)
    meta = raw.get("meta")
    if meta is not None and not isinstance(meta, dict):
        p.err("meta", f"expected an object, got {type_name(meta)}")
    if any(x.level == "error" for x in p.problems) or sid is None or verdict is None:
        return None, p.problems
    reviews = tuple(Review(r, t) for r, t in texts.items())
    return AddmSample(sid, reviews, verdict, incidents, methods, split, meta), p.problems


def parse_records(raws: list[Any], fuzzy_threshold: float = DEFAULT_FUZZY_THRESHOLD) -> tuple[list[AddmSample], list[tuple[int, Problem]]]:
    """Parse many records; problems come with the record's index. Duplicate ids are errors."""
    samples: list[AddmSample] = []
    problems: list[tuple[int, Problem]] = []
    seen: dict[str, int] = {}
    for i, raw in enumerate(raws):
        s, probs = parse_record(raw, fuzzy_threshold)
        problems.extend((i, pr) for pr in probs)
        if s is None:
            continue
        if s.id in seen:
            problems.append((i, Problem("id", f"duplicate id {s.id!r} (first used by record {seen[s.id]})")))
            continue
        seen[s.id] = i
        samples.append(s)
    return samples, problems


def _stored_incident(x: Mapping[str, Any], texts: Mapping[str, str], fuzzy: float) -> Incident:
    """`Parser.incident` of an incident as `scheme.to_json` wrote it (validated): the same normalisations and the
    same snippet location, without the checks."""
    rid = x["review_id"]
    rid = rid if type(rid) is str else str(rid) if type(rid) is int else None
    severity, mods, snippet = x["severity"].strip().casefold(), x.get("modifiers") or [], x.get("snippet")
    if rid is None or not rid.strip() or severity not in SEVERITIES or type(mods) is not list:
        raise ValueError("not a stored incident")
    modifiers: list[str] = []
    for m in mods:
        name = canonical_modifier(m) if type(m) is str and m.strip() else None
        if name is None:
            raise ValueError("not a stored incident")
        if name not in modifiers:
            modifiers.append(name)
    if type(snippet) is int:
        snippet = str(snippet)
    elif snippet is not None and type(snippet) is not str:
        raise ValueError("not a stored incident")
    if snippet is None:
        return Incident(rid, severity, tuple(modifiers), None)
    q = snippet.strip()
    if not q:
        return Incident(rid, severity, tuple(modifiers), None)
    text = texts.get(rid) or ""
    at = text.find(q)  # locate's first step: its first exact hit (no hint), without listing every hit
    if at >= 0:
        return Incident(rid, severity, tuple(modifiers), snippet, at, at + len(q), "exact")
    loc = locate(snippet, text, fuzzy_threshold=fuzzy)
    return Incident(rid, severity, tuple(modifiers), snippet, loc.start, loc.end, loc.how)


def _list(value: Any) -> list[Any]:
    if value is None:
        return []
    if type(value) is not list:
        raise ValueError("not a stored list")
    return value


def stored_sample(raw: Mapping[str, Any], fuzzy_threshold: float = DEFAULT_FUZZY_THRESHOLD) -> AddmSample:
    """The sample `parse_record(raw)` gives for a record as `scheme.to_json` wrote it (the project's stored
    payloads), read without collecting problems: reading every stored business back was most of `concord evaluate
    --scheme addm`. Raises ValueError (or KeyError, TypeError) on anything a stored record does not hold: the
    caller then asks `parse_record`, which says what is wrong."""
    texts: dict[str, str] = {}
    for r in raw["reviews"]:
        rid, text = r["review_id"], r["text"]
        rid = rid if type(rid) is str else str(rid) if type(rid) is int else None
        if rid is None or not rid.strip() or type(text) is not str or rid in texts:
            raise ValueError("not a stored review")
        texts[rid] = text
    gt = raw["ground_truth"]
    verdict = verdict_ordinal(gt["verdict"])
    incidents = tuple(_stored_incident(x, texts, fuzzy_threshold) for x in _list(gt.get("incidents")))
    if verdict is None or any(i.review_id not in texts for i in incidents):
        raise ValueError("not a stored ground truth")
    methods: dict[str, MethodResult] = {}
    methods_raw = raw.get("methods", {})
    if type(methods_raw) is not dict or type(raw["id"]) is not str or not raw["id"].strip():
        raise ValueError("not a stored record")
    for name, m in methods_raw.items():
        v, score, error = m.get("verdict"), m.get("risk_score"), m.get("error")
        ordinal = None if v is None else verdict_ordinal(v)
        if (v is not None and ordinal is None) or not str(name).strip() or (error is not None and type(error) is not str):
            raise ValueError("not a stored method result")
        if score is not None and not (type(score) in (int, float) and math.isfinite(score)):
            raise ValueError("not a stored method result")
        evidences = tuple(_stored_incident(x, texts, fuzzy_threshold) for x in _list(m.get("evidences")))
        methods[str(name)] = MethodResult(ordinal, None if score is None else float(score), evidences, error or None)
    split, meta = raw.get("split"), raw.get("meta")
    if (split is not None and type(split) is not str) or (meta is not None and type(meta) is not dict):
        raise ValueError("not a stored split or meta")
    return AddmSample(raw["id"], tuple(Review(r, t) for r, t in texts.items()), verdict, incidents, methods, split,
                      meta)
