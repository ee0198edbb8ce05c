"""Validate one raw trace record (a decoded JSON object) into a TraceRecord, reporting every problem with its path.

Errors (the record is rejected): missing or mistyped fields, duplicate sentence keys (labels would be
ambiguous), documents_sentences not matching documents. Warnings (the record is kept, labels stay as given): label
keys that point nowhere, keys listed twice, empty lists, support flags that contradict the unsupported list;
unknown keys are ignored with a warning (code `unknown_field`, which the importer reports once per file).
Without `documents_sentences` / `response_sentences`, the texts are split with pySBD and keyed 0a, 0b, ... / a, b.
"""
from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from calibration.schemes.base import FieldProblem, Parsed
from calibration.schemes.fields import unknown
from calibration.schemes.trace.records import JUDGE_METRICS, SUPPORT_MARKERS, SupportInfo, TraceLabels, TraceRecord
from calibration.schemes.trace.sentences import Sentence, sentencize_documents, sentencize_response

RECORD_KEYS: frozenset[str] = frozenset({
    "scheme", "id", "question", "documents", "response", "documents_sentences", "response_sentences",
    "all_relevant_sentence_keys", "all_utilized_sentence_keys", "sentence_support_information",
    "unsupported_response_sentence_keys", "adherence_score", "judges", "split", "meta",
})
REQUIRED_KEYS: frozenset[str] = frozenset({"id", "question", "documents", "response"})
_SUPPORT_KEYS = frozenset({"response_sentence_key", "fully_supported", "supporting_sentence_keys", "explanation"})


def _tname(v: object) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, (list, tuple)):
        return "array"
    if isinstance(v, Mapping):
        return "object"
    return type(v).__name__


def _key(name: str) -> str:
    return "[" + json.dumps(name, ensure_ascii=False) + "]"


class _Collector:
    __slots__ = ("problems",)

    def __init__(self) -> None:
        self.problems: list[FieldProblem] = []

    def error(self, path: str, message: str) -> None:
        self.problems.append(FieldProblem(path, message, "error"))

    def warn(self, path: str, message: str) -> None:
        self.problems.append(FieldProblem(path, message, "warning"))

    @property
    def failed(self) -> bool:
        return any(p.severity == "error" for p in self.problems)


def _string(raw: Mapping[str, Any], name: str, c: _Collector, required: bool = True) -> str | None:
    v = raw.get(name)
    if v is None:
        if required:
            c.error(name, "is required" if name not in raw else "must be a string, got null")
        return None
    if not isinstance(v, str):
        c.error(name, f"must be a string, got {_tname(v)}")
        return None
    return v


def _string_list(v: Any, path: str, c: _Collector) -> tuple[str, ...] | None:
    if not isinstance(v, (list, tuple)):
        c.error(path, f"must be an array of strings, got {_tname(v)}")
        return None
    bad = [i for i, s in enumerate(v) if not isinstance(s, str)]
    for i in bad:
        c.error(f"{path}[{i}]", f"must be a string, got {_tname(v[i])}")
    return None if bad else tuple(v)


def _keyed(v: Any, path: str, c: _Collector) -> tuple[Sentence, ...] | None:
    """[["a", "text"], ...] -> (("a", "text"), ...)."""
    if not isinstance(v, (list, tuple)):
        c.error(path, f"must be an array of [key, sentence] pairs, got {_tname(v)}")
        return None
    try:  # fast path: well-formed pairs (nearly every row); a bad one falls through to the reporting loop
        fast = tuple([(k, s) for k, s in v])
        if all(type(p) is list or type(p) is tuple for p in v) and all(
                type(k) is str and k and type(s) is str for k, s in fast):
            return fast
    except (TypeError, ValueError):
        pass
    out: list[Sentence] = []
    ok = True
    for i, pair in enumerate(v):
        if (isinstance(pair, (list, tuple)) and len(pair) == 2 and isinstance(pair[0], str) and pair[0]
                and isinstance(pair[1], str)):
            out.append((pair[0], pair[1]))
        else:
            c.error(f"{path}[{i}]", f"must be a [key, sentence] pair of a non-empty string and a string, got {json.dumps(pair, default=str)[:80]}")
            ok = False
    return tuple(out) if ok else None


def _check_unique(keys: list[tuple[str, str]], what: str, c: _Collector) -> None:
    """keys: (path, key). A sentence key used twice makes every label naming it ambiguous: an error."""
    first: dict[str, str] = {}
    for path, k in keys:
        if k in first:
            c.error(path, f"{what} key {k!r} is used twice (first at {first[k]})")
        else:
            first[k] = path


def _check_keys(keys: tuple[str, ...], path: str, universe: set[str], what: str, c: _Collector,
                allowed: frozenset[str] = frozenset()) -> None:
    """Warn for keys that point nowhere and keys listed twice (both are kept: the ragbench variant counts them)."""
    seen: dict[str, int] = {}
    for i, k in enumerate(keys):
        if k not in universe and k not in allowed:
            hint = ""
            fixed = k.strip().rstrip(".")
            if fixed != k and fixed in universe:
                hint = f" (did you mean {fixed!r}?)"
            c.warn(f"{path}[{i}]", f"key {k!r} is not a {what} sentence{hint}")
        if k in seen:
            c.warn(f"{path}[{i}]", f"key {k!r} is listed twice (first at [{seen[k]}])")
        else:
            seen[k] = i


def _sentences(raw: Mapping[str, Any], documents: tuple[str, ...] | None, response: str | None, c: _Collector
               ) -> tuple[tuple[tuple[Sentence, ...], ...] | None, tuple[Sentence, ...] | None]:
    docs_s: tuple[tuple[Sentence, ...], ...] | None = None
    v = raw.get("documents_sentences")
    if v is not None:
        if not isinstance(v, (list, tuple)):
            c.error("documents_sentences", f"must be an array (one array of [key, sentence] pairs per document), got {_tname(v)}")
        else:
            parts = [_keyed(d, f"documents_sentences[{i}]", c) for i, d in enumerate(v)]
            if all(p is not None for p in parts):
                docs_s = tuple(parts)  # type: ignore[arg-type]
            if documents is not None and len(v) != len(documents):
                c.error("documents_sentences", f"has {len(v)} documents, documents has {len(documents)}")
    elif documents is not None:
        docs_s = sentencize_documents(documents)
    resp_s: tuple[Sentence, ...] | None = None
    v = raw.get("response_sentences")
    if v is not None:
        resp_s = _keyed(v, "response_sentences", c)
    elif response is not None:
        resp_s = sentencize_response(response)
    if docs_s is not None:
        keys = [k for d in docs_s for k, _ in d]
        if len(set(keys)) != len(keys):  # paths are built only when needed: most records have no duplicate
            _check_unique([(f"documents_sentences[{i}][{j}][0]", k) for i, d in enumerate(docs_s) for j, (k, _) in enumerate(d)],
                          "document sentence", c)
        for i, d in enumerate(docs_s):
            if not d:
                c.warn(f"documents_sentences[{i}]", f"empty list: document {i} has no sentences")
    if resp_s is not None:
        if len({k for k, _ in resp_s}) != len(resp_s):
            _check_unique([(f"response_sentences[{j}][0]", k) for j, (k, _) in enumerate(resp_s)], "response sentence", c)
        if not resp_s:
            c.warn("response_sentences", "empty list: the response has no sentences")
    return docs_s, resp_s


def _support(v: Any, c: _Collector) -> tuple[SupportInfo, ...] | None:
    path = "sentence_support_information"
    if not isinstance(v, (list, tuple)):
        c.error(path, f"must be an array of objects, got {_tname(v)}")
        return None
    out: list[SupportInfo] = []
    ok = True
    for i, e in enumerate(v):
        p = f"{path}[{i}]"
        if not isinstance(e, Mapping):
            c.error(p, f"must be an object, got {_tname(e)}")
            ok = False
            continue
        for extra in sorted(set(e) - _SUPPORT_KEYS, key=str):
            c.problems.append(unknown("trace", f"{p}.{extra}"))
        key = e.get("response_sentence_key")
        if not isinstance(key, str):
            c.error(f"{p}.response_sentence_key", "is required" if key is None else f"must be a string, got {_tname(key)}")
            ok = False
        fs = e.get("fully_supported")
        if fs is not None and not isinstance(fs, bool):
            c.error(f"{p}.fully_supported", f"must be true, false or null, got {_tname(fs)}")
            ok = False
        sk = e.get("supporting_sentence_keys")
        keys = None if sk is None else _string_list(sk, f"{p}.supporting_sentence_keys", c)
        if sk is not None and keys is None:
            ok = False
        ex = e.get("explanation")
        if ex is not None and not isinstance(ex, str):
            c.error(f"{p}.explanation", f"must be a string or null, got {_tname(ex)}")
            ok = False
        if ok:
            out.append(SupportInfo(key, fs, keys, ex))
    return tuple(out) if ok else None


def _labels(raw: Mapping[str, Any], doc_keys: set[str] | None, resp_keys: list[str] | None, c: _Collector) -> TraceLabels:
    rel = utl = unsup = None
    for name in ("all_relevant_sentence_keys", "all_utilized_sentence_keys"):
        v = raw.get(name)
        if v is None:
            continue
        keys = _string_list(v, name, c)
        if keys is None:
            continue
        if not keys:
            c.warn(name, "empty list: no document sentence is " + ("relevant" if "relevant" in name else "utilized"))
        if doc_keys is not None:
            _check_keys(keys, name, doc_keys, "document", c)
        if name == "all_relevant_sentence_keys":
            rel = keys
        else:
            utl = keys
    rset = None if resp_keys is None else set(resp_keys)
    support = None
    v = raw.get("sentence_support_information")
    if v is not None:
        support = _support(v, c)
        if support is not None and rset is not None:
            _check_keys(tuple(s.response_sentence_key for s in support), "sentence_support_information", rset, "response", c)
            given = {s.response_sentence_key for s in support}
            missing = [k for k in resp_keys or () if k not in given]
            if missing:
                c.warn("sentence_support_information", f"no entry for response sentence(s) {', '.join(map(repr, missing))}")
            if doc_keys is not None:
                for i, s in enumerate(support):
                    if s.supporting_sentence_keys:
                        _check_keys(s.supporting_sentence_keys, f"sentence_support_information[{i}].supporting_sentence_keys",
                                    doc_keys, "document", c, allowed=SUPPORT_MARKERS)
    v = raw.get("unsupported_response_sentence_keys")
    if v is not None:
        unsup = _string_list(v, "unsupported_response_sentence_keys", c)
        if unsup is not None and rset is not None:
            _check_keys(unsup, "unsupported_response_sentence_keys", rset, "response", c)
    adh = raw.get("adherence_score")
    if adh is not None and not isinstance(adh, bool):
        c.error("adherence_score", f"must be true, false or null, got {_tname(adh)}")
        adh = None
    labels = TraceLabels(rel, utl, support, unsup, adh)
    if unsup is not None:
        listed = set(unsup)
        if adh is not None and adh != (not listed):
            c.warn("adherence_score", f"is {str(adh).lower()} but unsupported_response_sentence_keys "
                   + (f"lists {', '.join(map(repr, unsup))}" if listed else "is empty"))
        for i, s in enumerate(support or ()):
            if s.fully_supported is not None and s.fully_supported == (s.response_sentence_key in listed):
                c.warn(f"sentence_support_information[{i}].fully_supported",
                       f"is {str(s.fully_supported).lower()} but sentence {s.response_sentence_key!r} is "
                       + ("" if s.response_sentence_key in listed else "not ") + "in unsupported_response_sentence_keys")
    return labels


def _judges(v: Any, c: _Collector) -> dict[str, dict[str, float]]:
    if not isinstance(v, Mapping):
        c.error("judges", f"must be an object (judge name -> scores), got {_tname(v)}")
        return {}
    out: dict[str, dict[str, float]] = {}
    for name, scores in v.items():
        p = f"judges{_key(str(name))}"
        if not isinstance(name, str) or not name.strip():
            c.error(p, "a judge name must be a non-empty string")
            continue
        if not isinstance(scores, Mapping):
            c.error(p, f"must be an object of scores ({', '.join(JUDGE_METRICS)}), got {_tname(scores)}")
            continue
        got: dict[str, float] = {}
        for metric, x in scores.items():
            if metric not in JUDGE_METRICS:
                c.error(f"{p}.{metric}", f"unknown score; a judge scores {', '.join(JUDGE_METRICS)}")
            elif x is None:
                continue  # no score from this judge
            elif isinstance(x, bool) or not isinstance(x, (int, float)):
                c.error(f"{p}.{metric}", f"must be a number or null, got {_tname(x)}")
            elif math.isnan(x):
                continue
            else:
                if not 0.0 <= x <= 1.0:
                    c.warn(f"{p}.{metric}", f"{x} is outside [0, 1]")
                got[metric] = float(x)
        out[name] = got
    return out


def parse_record(raw: Mapping[str, Any]) -> Parsed:
    """One raw trace record -> Parsed(record or None, problems). Never raises on bad data."""
    c = _Collector()
    if not isinstance(raw, Mapping):
        return Parsed(None, (FieldProblem("", f"a record must be an object, got {_tname(raw)}"),))
    for extra in sorted(set(raw) - RECORD_KEYS, key=str):
        c.problems.append(unknown("trace", str(extra)))  # ignored, reported once per file by the importer
    scheme = raw.get("scheme")
    if scheme is not None and scheme != "trace":
        c.error("scheme", f"expected 'trace', got {scheme!r}")
    rid = raw.get("id")
    if isinstance(rid, int) and not isinstance(rid, bool):
        rid = str(rid)
    if not isinstance(rid, str) or not rid.strip():
        c.error("id", "is required" if rid is None else "must be a non-empty string")
        rid = None
    question = _string(raw, "question", c)
    response = _string(raw, "response", c)
    documents = None
    if raw.get("documents") is None:
        c.error("documents", "is required")
    else:
        documents = _string_list(raw["documents"], "documents", c)
        if documents is not None and not documents:
            c.warn("documents", "empty list: no document was retrieved")
    docs_s, resp_s = _sentences(raw, documents, response, c)
    doc_keys = None if docs_s is None else {k for d in docs_s for k, _ in d}
    resp_keys = None if resp_s is None else [k for k, _ in resp_s]
    labels = _labels(raw, doc_keys, resp_keys, c)
    judges = _judges(raw["judges"], c) if raw.get("judges") is not None else {}
    split = _string(raw, "split", c, required=False)
    meta = raw.get("meta")
    if meta is not None and not isinstance(meta, Mapping):
        c.error("meta", f"must be an object, got {_tname(meta)}")
    if c.failed:
        return Parsed(None, tuple(c.problems))
    record = TraceRecord(rid, question, documents, response, docs_s, resp_s, labels, judges, split,  # type: ignore[arg-type]
                         None if meta is None else dict(meta))
    return Parsed(record, tuple(c.problems))


def _stored_keys(v: Any) -> tuple[str, ...] | None:
    if v is None:
        return None
    if type(v) is not list or not all(type(k) is str for k in v):
        raise ValueError("not stored sentence keys")
    return tuple(v)


def _stored_pairs(v: Any) -> tuple[Sentence, ...]:
    out = tuple([(k, s) for k, s in v])
    if type(v) is not list or not all(type(p) is list for p in v) or not all(
            type(k) is str and k and type(s) is str for k, s in out):
        raise ValueError("not stored keyed sentences")
    return out


def _stored_support(v: Any) -> tuple[SupportInfo, ...] | None:
    if v is None:
        return None
    out = []
    for e in v:
        key, fs, sk, ex = (e.get("response_sentence_key"), e.get("fully_supported"), e.get("supporting_sentence_keys"),
                           e.get("explanation"))
        if (type(e) is not dict or not _SUPPORT_KEYS.issuperset(e) or type(key) is not str
                or (fs is not None and type(fs) is not bool) or (ex is not None and type(ex) is not str)):
            raise ValueError("not a stored support entry")
        out.append(SupportInfo(key, fs, _stored_keys(sk), ex))
    return tuple(out)


def _stored_judges(v: Any) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for name, scores in (v or {}).items():
        if type(name) is not str or not name.strip() or type(scores) is not dict:
            raise ValueError("not stored judges")
        got: dict[str, float] = {}
        for metric, x in scores.items():
            if x is None:
                continue
            if metric not in JUDGE_METRICS or type(x) not in (int, float) or not 0.0 <= x <= 1.0:
                raise ValueError("not a stored judge score")  # the parser says what (or warns, out of [0, 1])
            got[metric] = float(x)
        out[name] = got
    return out


def stored_record(raw: Mapping[str, Any]) -> TraceRecord:
    """The record `parse_record(raw)` gives for a record as `TraceRecord.to_json` wrote it (a project's stored
    payloads), without collecting problems: keyed sentences given, every field of its written type, no key that parsing
    would warn about the shape of. Raises ValueError (or KeyError, TypeError) on anything else: the caller then asks
    `parse_record`, which splits sentences or says what is wrong. Parsing every sample was most of reading a project's
    trace records (the human ceiling's, calibrate's)."""
    sid, question, response = raw["id"], raw["question"], raw["response"]
    if (type(sid) is not str or not sid.strip() or type(question) is not str or type(response) is not str
            or raw.get("scheme", "trace") != "trace" or not RECORD_KEYS.issuperset(raw)):
        raise ValueError("not a stored record")
    documents = _stored_keys(raw["documents"])
    docs_s = tuple([_stored_pairs(d) for d in raw["documents_sentences"]])
    resp_s = _stored_pairs(raw["response_sentences"])
    doc_keys = [k for d in docs_s for k, _ in d]
    if (documents is None or len(docs_s) != len(documents) or len(set(doc_keys)) != len(doc_keys)
            or len({k for k, _ in resp_s}) != len(resp_s)):
        raise ValueError("not stored sentences")
    adherence, split, meta = raw.get("adherence_score"), raw.get("split"), raw.get("meta")
    if ((adherence is not None and type(adherence) is not bool) or (split is not None and type(split) is not str)
            or (meta is not None and type(meta) is not dict)):
        raise ValueError("not a stored record")
    labels = TraceLabels(_stored_keys(raw.get("all_relevant_sentence_keys")),
                         _stored_keys(raw.get("all_utilized_sentence_keys")),
                         _stored_support(raw.get("sentence_support_information")),
                         _stored_keys(raw.get("unsupported_response_sentence_keys")), adherence)
    return TraceRecord(sid, question, documents, response, docs_s, resp_s, labels, _stored_judges(raw.get("judges")),
                       split, None if meta is None else dict(meta))
