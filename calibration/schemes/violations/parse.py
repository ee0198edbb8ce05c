"""Validate one raw `violations` record into a `ViolationRecord`, collecting every problem with its field path.

Pure (no file, line or project): the importer adds the location, and the rules that need other records or the
project (unique ids, checker-name warnings once per file) live in app/schemes/violations/io.py. Valid records take a
fast path; field paths are only built for problems, so 100k records validate in a few seconds. `plain_record` is
the importer's shortcut for a record valid as it stands: its values as given, no `Violation` objects (the store
writes their fields; at a million records building them was ~5 CPU-s), None when `parse_record` must look closer.
"""
from __future__ import annotations

from dataclasses import dataclass
from operator import itemgetter
from typing import Any, NamedTuple

from calibration.grounding import locate
from calibration.schemes.base import FieldProblem, Parsed
from calibration.schemes.fields import clip, key, meta_of, record_id, string, type_name, unknown
from calibration.schemes.violations.records import GROUND_TRUTH, VIOLATION_FIELDS, Violation, ViolationSample

VIOLATION_KEYS = frozenset(VIOLATION_FIELDS)
_KEYS_OK = VIOLATION_KEYS.issuperset
_N_FIELDS = len(VIOLATION_FIELDS)
_ALL_FIELDS = itemgetter(*VIOLATION_FIELDS)  # a violation with every field: its values in VIOLATION_FIELDS order
RECORD_KEYS = frozenset(("scheme", "id", "text", "ground_truth", "predictions", "context", "split", "meta"))
_OPTIONAL_TEXT = ("quote", "category", "explanation", "correction")


@dataclass(slots=True)  # not frozen: built once per imported record, and frozen init is several times slower
class ViolationRecord:
    """A validated record: the sample, its free-form meta, and how each violation was placed in the text
    ('offsets', 'exact', 'casefold', 'fuzzy', 'ungrounded'), parallel to the lists (ground truth under '')."""

    sample: ViolationSample
    meta: dict[str, Any] | None
    hows: dict[str, list[str]]


class PlainSample(NamedTuple):
    """A record `plain_record` accepted: what `parse_record` would make of it with no problem and every violation
    placed by its offsets, as plain values. Violations are tuples of their fields in VIOLATION_FIELDS order;
    `predictions` keeps the file's order of checkers. Named like ViolationSample's fields, so counts read either."""

    id: str
    text: str
    ground_truth: list[tuple[Any, ...]]
    predictions: dict[str, list[tuple[Any, ...]]]
    context: str | None
    split: str | None
    meta: dict[str, Any] | None


def plain_record(rec: dict[str, Any]) -> PlainSample | None:
    """The record as plain values when it is valid as it stands (known keys only, every field well-typed, every
    violation given by offsets that agree with its quote), else None: `parse_record` then reports what is wrong or
    locates the quotes. Never accepts what `parse_record` would complain about (a test holds the two together)."""
    if not RECORD_KEYS.issuperset(rec):
        return None
    sid, text, context, split, meta = rec.get("id"), rec.get("text"), rec.get("context"), rec.get("split"), rec.get("meta")
    gt_raw, preds_raw = rec.get("ground_truth"), rec.get("predictions")
    if not (type(sid) is str and sid.strip() and type(text) is str and (context is None or type(context) is str)
            and (split is None or type(split) is str) and (meta is None or type(meta) is dict)
            and type(gt_raw) is list and type(preds_raw) is dict):
        return None
    gt = _plain_violations(gt_raw, text)
    if gt is None:
        return None
    preds: dict[str, list[tuple[Any, ...]]] = {}
    for checker, vs in preds_raw.items():
        if not (type(checker) is str and checker.strip() and type(vs) is list):
            return None
        got = _plain_violations(vs, text)
        if got is None:
            return None
        preds[checker] = got
    return PlainSample(sid, text, gt, preds, context, split, meta)


def _plain_violations(items: list[Any], text: str) -> list[tuple[Any, ...]] | None:
    """Every item's fields when each is a violation valid as given (`_plain_violation`), else None."""
    out = []
    n = len(text)
    for v in items:
        t = _plain_violation(v, text, n)
        if t is None:
            return None
        out.append(t)
    return out


def _plain_violation(v: Any, text: str, n: int) -> tuple[Any, ...] | None:
    """The violation's fields (VIOLATION_FIELDS order) when it is valid as given: offsets inside the text (n code
    points), the quote (if any) the text at them, every field well-typed, no unknown key; else None. The one
    definition of a violation that needs no closer look, for `plain_record` and `_violation_list`."""
    if type(v) is not dict or not _KEYS_OK(v):
        return None
    if len(v) == _N_FIELDS:  # every field given (as exports write them): read in one call, already in order
        got = _ALL_FIELDS(v)
        start, end, quote, rule, cat, expl, corr = got
    else:
        rule, start, end, quote = v.get("rule"), v.get("start"), v.get("end"), v.get("quote")
        cat, expl, corr = v.get("category"), v.get("explanation"), v.get("correction")
        got = None
    if (type(start) is int and type(end) is int and 0 <= start < end <= n and type(rule) is str
            and (quote is None or (type(quote) is str and text[start:end] == quote))
            and (cat is None or type(cat) is str) and (expl is None or type(expl) is str)
            and (corr is None or type(corr) is str) and rule.strip()):
        return got if got is not None else (start, end, quote, rule, cat, expl, corr)
    return None


def parse_record(rec: dict[str, Any]) -> Parsed:
    """Validate one record; `Parsed.record` is a ViolationRecord, or None when any error was found."""
    problems: list[FieldProblem] = []
    if rec.keys() - RECORD_KEYS:
        problems.extend(unknown("violations", n) for n in rec.keys() - RECORD_KEYS)
    sid = record_id(rec, problems)
    text = string(rec, "text", True, problems)
    context = string(rec, "context", False, problems)
    split = string(rec, "split", False, problems)
    meta = meta_of(rec, problems)
    gt_raw, preds_raw = rec.get("ground_truth"), rec.get("predictions")
    if type(gt_raw) is not list:
        problems.append(FieldProblem("ground_truth", "is required (use [] for none)" if gt_raw is None
                                     else f"expected an array of violations, got {type_name(gt_raw)}"))
        gt_raw = None
    if type(preds_raw) is not dict:
        problems.append(FieldProblem("predictions", "is required (use {} for none)" if preds_raw is None
                                     else f"expected an object mapping checker names to arrays, got {type_name(preds_raw)}"))
        preds_raw = None
    if text is None:
        return Parsed(None, tuple(problems))  # offsets cannot be checked without the text
    hows: dict[str, list[str]] = {}
    gt: list[Violation] = []
    if gt_raw is not None:
        gt = _violation_list(gt_raw, GROUND_TRUTH, text, hows.setdefault(GROUND_TRUTH, []), problems)
    preds: dict[str, tuple[Violation, ...]] = {}
    if preds_raw is not None:
        for checker, vs in preds_raw.items():
            if type(checker) is not str or not checker.strip():
                problems.append(FieldProblem(f"predictions{key(str(checker))}", "checker name must not be empty"))
                continue
            if type(vs) is not list:
                problems.append(FieldProblem(f"predictions{key(checker)}",
                                             f"expected an array of violations, got {type_name(vs)}"))
                continue
            preds[checker] = tuple(_violation_list(vs, checker, text, hows.setdefault(checker, []), problems))
    if problems:
        if sid is None or any(p.severity == "error" for p in problems):
            return Parsed(None, tuple(problems))
        return Parsed(ViolationRecord(ViolationSample(sid, text, tuple(gt), preds, context, split), meta, hows),
                      tuple(problems))
    if sid is None:
        return Parsed(None)
    return Parsed(ViolationRecord(ViolationSample(sid, text, tuple(gt), preds, context, split), meta, hows))


def _violation_list(items: list[Any], checker: str, text: str, hows: list[str],
                    problems: list[FieldProblem]) -> list[Violation]:
    """`checker` is '' for the ground truth; field paths are only built for problems."""
    out: list[Violation] = []
    n = len(text)
    for i, v in enumerate(items):
        plain = _plain_violation(v, text, n)
        if plain is not None:  # fast path: given by offsets, valid as it stands
            start, end, quote, rule, cat, expl, corr = plain
            out.append(Violation(rule, start, end, quote, cat, expl, corr))
            hows.append("offsets")
            continue
        path = "ground_truth" if checker == GROUND_TRUTH else f"predictions{key(checker)}"
        got = _violation(v, f"{path}[{i}]", text, n, problems)
        if got is not None:
            out.append(got[0])
            hows.append(got[1])
    return out


def _violation(v: Any, path: str, text: str, n: int, problems: list[FieldProblem]) -> tuple[Violation, str] | None:
    def err(field: str, message: str) -> None:
        problems.append(FieldProblem(field, message))

    if type(v) is not dict:
        err(path, f"expected a violation object, got {type_name(v)}")
        return None
    ok = True
    if v.keys() - VIOLATION_KEYS:
        problems.extend(unknown("violation", name) for name in v.keys() - VIOLATION_KEYS)
    rule = v.get("rule")
    if type(rule) is not str:
        err(f"{path}.rule", "is required" if rule is None else f"expected a string, got {type_name(rule)}")
        ok = False
    elif not rule.strip():
        err(f"{path}.rule", "must not be empty")
        ok = False
    for name in _OPTIONAL_TEXT:
        value = v.get(name)
        if value is not None and type(value) is not str:
            err(f"{path}.{name}", f"expected a string, got {type_name(value)}")
            ok = False
    quote = v.get("quote")
    if type(quote) is not str:
        quote = None
    start, end = v.get("start"), v.get("end")
    if start is None and end is None:
        if quote is None:
            if v.get("quote") is None:  # (a quote of the wrong type was reported above)
                err(path, "needs start and end offsets or a quote")
            return None
        if not quote.strip():
            err(f"{path}.quote", "is empty and there are no offsets: give start/end or a quote")
            return None
        if not ok:
            return None
        found = locate(quote, text)
        if found.start is None:
            problems.append(FieldProblem(f"{path}.quote", f"{clip(quote)} was not found in the text; kept as ungrounded",
                                         "warning"))
        return Violation(rule, found.start, found.end, quote, v.get("category"), v.get("explanation"),
                         v.get("correction")), found.how
    start = _offset(start, f"{path}.start", "end", problems)
    end = _offset(end, f"{path}.end", "start", problems)
    if start is None or end is None:
        return None
    if start < 0:
        err(f"{path}.start", f"must be >= 0, got {start}")
        ok = False
    if end > n:
        err(f"{path}.end", f"{end} is past the end of the text (its length is {n} code points)")
        ok = False
    if start >= end:
        err(f"{path}.end", f"must be greater than start ({start}), got {end}")
        ok = False
    if not ok:
        return None
    if quote is not None:
        at = text[start:end]
        if at != quote:
            err(f"{path}.quote", _mismatch(quote, at, start, end, text))
            return None
    return Violation(rule, start, end, quote, v.get("category"), v.get("explanation"), v.get("correction")), "offsets"


def _offset(value: Any, path: str, other: str, problems: list[FieldProblem]) -> int | None:
    if type(value) is int:
        return value
    if value is None:
        problems.append(FieldProblem(path, f"is required when {other} is given"))
    elif type(value) is float and value.is_integer():
        return int(value)
    else:
        problems.append(FieldProblem(path, f"expected an integer code-point offset, got {type_name(value)} {clip(str(value), 20)}"))
    return None


def _mismatch(quote: str, at: str, start: int, end: int, text: str) -> str:
    msg = f"{clip(quote)} does not match the text at {start}..{end}, which is {clip(at)}"
    if quote.strip() == at.strip():
        return msg + " (they differ in leading/trailing whitespace)"
    i = text.find(quote)
    if i >= 0:
        return msg + f"; the quote occurs at {i}..{i + len(quote)} (offsets are code points, end exclusive)"
    return msg


def violation_json(v: Violation) -> dict[str, Any]:
    """A violation as import reads it: offsets when grounded, else only its quote (import locates it again)."""
    out: dict[str, Any] = {}
    if v.start is not None and v.end is not None:
        out["start"], out["end"] = v.start, v.end
    for name in ("quote", "rule", "category", "explanation", "correction"):
        value = getattr(v, name)
        if value is not None:
            out[name] = value
    return out
