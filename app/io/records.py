"""Validate import records (violations and rubric) into the store's record types, collecting every problem.

The checks are hand-written rather than driven by the JSON Schema in resources/schema/ for two reasons: they must
also check what a schema cannot (offsets inside the text, quotes agreeing with offsets, unique ids, traits that
agree with the project), and they must be fast enough for 100k records in a few seconds. A test keeps the two
in agreement.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from app.io.problems import Location, Problems, key, type_name
from app.store import RubricSample
from calibration.grounding import locate
from calibration.schemes.rubric import BucketError, MetricTrait, TraitError, validate_buckets
from calibration.schemes.violations.records import GROUND_TRUTH, Violation, ViolationSample

VIOLATION_KEYS = frozenset(("start", "end", "quote", "rule", "category", "explanation", "correction"))
VIOLATION_RECORD_KEYS = frozenset(("id", "text", "ground_truth", "predictions", "context", "split", "meta"))
RUBRIC_RECORD_KEYS = frozenset(("id", "question", "response", "traits", "buckets", "split", "meta"))
JSON_COLUMNS = frozenset(("ground_truth", "predictions", "meta", "traits", "buckets"))
CHECKER_RE = re.compile(r"^[^@|\s][^@|]*@[^@|\s][^@|]*\|\S.*$")
_OPTIONAL_TEXT = ("quote", "category", "explanation", "correction")


def clip(s: str, limit: int = 60) -> str:
    """A short repr for messages: long texts would drown the line that matters."""
    return repr(s if len(s) <= limit else s[: limit - 1] + "…")


@dataclass
class Validated:
    """Everything a file's valid records hold, ready for the store."""

    violations: list[ViolationSample] = field(default_factory=list)
    groundings: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    metas: dict[str, Mapping[str, Any] | None] = field(default_factory=dict)
    rubric: list[RubricSample] = field(default_factory=list)
    how: Counter[str] = field(default_factory=Counter)  # how each violation was grounded


@dataclass
class ValidatorState:
    """What cross-record rules need from the records seen so far; workers hand it back to be merged in file order."""

    ids: dict[str, Location]
    traits: dict[str, tuple[dict[str, Any], Location, str]]
    unknown: dict[tuple[str, str], list[Any]]
    odd_checkers: dict[str, Location]


class RecordValidator:
    """Validates records one by one; cross-record rules (unique ids, consistent traits) need the shared state.

    `project_trait(name)` returns the project's stored definition of a trait (or None), so a file cannot redefine
    a trait the project already uses.
    """

    def __init__(self, problems: Problems, project_trait: Callable[[str], Mapping[str, Any] | None] = lambda n: None) -> None:
        self.problems = problems
        self.out = Validated()
        self._ids: dict[str, Location] = {}
        self._traits: dict[str, tuple[dict[str, Any], Location, str]] = {}
        self._project_trait = project_trait
        self._project_traits: dict[str, Mapping[str, Any] | None] = {}
        self._unknown: dict[tuple[str, str], list[Any]] = {}
        self._odd_checkers: dict[str, Location] = {}
        self._good_checkers: set[str] = set()  # names already checked (a file repeats a few checkers everywhere)

    # -- entry point ---------------------------------------------------------------------------------------------
    def add(self, loc: Location, rec: dict[str, Any]) -> None:
        if "text" in rec:
            self._violations_record(loc, rec)
        elif "question" in rec or "response" in rec or "traits" in rec:
            self._rubric_record(loc, rec)
        else:
            self.problems.error(loc, "", "cannot tell the record kind: a violations record has 'text', "
                                         "a rubric record has 'question', 'response' and 'traits'")

    def finish(self) -> Validated:
        """Emit the aggregated warnings (one per unknown field or odd checker name, not one per line)."""
        for (kind, name), (first, count) in sorted(self._unknown.items(), key=lambda kv: kv[1][0].number or 0):
            where = f" (on {count} {first.unit}s)" if count > 1 else ""
            self.problems.warn(first, name, f"unknown field in a {kind} record, ignored{where}")
        for name, first in self._odd_checkers.items():
            self.problems.warn(first, f"predictions{key(name)}",
                               "checker names should look like name@version|model (e.g. baseline@1.0|gpt-4o)")
        return self.out

    def state(self) -> ValidatorState:
        return ValidatorState(self._ids, self._traits, self._unknown, self._odd_checkers)

    def absorb(self, other: ValidatorState) -> None:
        """Merge the state of a later part of the file, reporting what clashes across the parts."""
        for sid, loc in other.ids.items():
            first = self._ids.get(sid)
            if first is not None:
                self.problems.error(loc, "id", f"duplicate id {clip(sid)} (first used at {first})")
            else:
                self._ids[sid] = loc
        for name, (definition, loc, path) in other.traits.items():
            seen = self._traits.get(name)
            if seen is None:
                self._traits[name] = (definition, loc, path)
            elif seen[0] != definition:
                self.problems.error(loc, path, f"trait {clip(name)} is defined differently at {seen[1]}")
        for k, (loc, count) in other.unknown.items():
            entry = self._unknown.get(k)
            if entry is None:
                self._unknown[k] = [loc, count]
            else:
                entry[1] += count
        for name, loc in other.odd_checkers.items():
            self._odd_checkers.setdefault(name, loc)

    def location_of(self, sample_id: str) -> Location:
        return self._ids[sample_id]

    # -- shared fields -------------------------------------------------------------------------------------------
    def _id(self, loc: Location, rec: dict[str, Any]) -> str | None:
        sid = rec.get("id")
        if type(sid) is int:
            sid = str(sid)
        if type(sid) is not str:
            self.problems.error(loc, "id", "is required" if sid is None else f"expected a string, got {type_name(sid)}")
            return None
        if not sid.strip():
            self.problems.error(loc, "id", "must not be empty")
            return None
        first = self._ids.get(sid)
        if first is not None:
            self.problems.error(loc, "id", f"duplicate id {clip(sid)} (first used at {first})")
            return None
        self._ids[sid] = loc
        return sid

    def _str(self, loc: Location, rec: dict[str, Any], name: str, required: bool) -> str | None:
        value = rec.get(name)
        if value is None:
            if required:
                self.problems.error(loc, name, "is required")
            return None
        if type(value) is not str:
            self.problems.error(loc, name, f"expected a string, got {type_name(value)}")
            return None
        return value

    def _meta(self, loc: Location, rec: dict[str, Any]) -> tuple[bool, dict[str, Any] | None]:
        meta = rec.get("meta")
        if meta is not None and type(meta) is not dict:
            self.problems.error(loc, "meta", f"expected an object, got {type_name(meta)}")
            return False, None
        return True, meta

    def _note_unknown(self, loc: Location, kind: str, rec: dict[str, Any], known: frozenset[str]) -> None:
        for name in rec.keys() - known:
            entry = self._unknown.get((kind, name))
            if entry is None:
                self._unknown[(kind, name)] = [loc, 1]
            else:
                entry[1] += 1

    # -- violations ----------------------------------------------------------------------------------------------
    def _violations_record(self, loc: Location, rec: dict[str, Any]) -> None:
        n_errors = len(self.problems.errors)
        if rec.keys() - VIOLATION_RECORD_KEYS:
            self._note_unknown(loc, "violations", rec, VIOLATION_RECORD_KEYS)
        sid = self._id(loc, rec)
        text = self._str(loc, rec, "text", True)
        context = self._str(loc, rec, "context", False)
        split = self._str(loc, rec, "split", False)
        _, meta = self._meta(loc, rec)
        gt_raw, preds_raw = rec.get("ground_truth"), rec.get("predictions")
        if type(gt_raw) is not list:
            self.problems.error(loc, "ground_truth", "is required (use [] for none)" if gt_raw is None
                                else f"expected an array of violations, got {type_name(gt_raw)}")
            gt_raw = None
        if type(preds_raw) is not dict:
            self.problems.error(loc, "predictions", "is required (use {} for none)" if preds_raw is None
                                else f"expected an object mapping checker names to arrays, got {type_name(preds_raw)}")
            preds_raw = None
        if text is None:
            return  # offsets cannot be checked without the text; the other fields were checked above
        hows: dict[str, list[str]] = {}
        gt: list[Violation] = []
        if gt_raw is not None:
            gt = self._violation_list(loc, gt_raw, GROUND_TRUTH, text, hows.setdefault(GROUND_TRUTH, []))
        lists = preds_raw.items() if preds_raw is not None else ()
        preds: dict[str, tuple[Violation, ...]] = {}
        for checker, vs in lists:
            if checker not in self._good_checkers:
                if type(checker) is not str or not checker.strip():
                    self.problems.error(loc, f"predictions{key(str(checker))}", "checker name must not be empty")
                    continue
                if not CHECKER_RE.match(checker):
                    self._odd_checkers.setdefault(checker, loc)
                self._good_checkers.add(checker)
            if type(vs) is not list:
                self.problems.error(loc, f"predictions{key(checker)}", f"expected an array of violations, got {type_name(vs)}")
                continue
            preds[checker] = tuple(self._violation_list(loc, vs, checker, text, hows.setdefault(checker, [])))
        if sid is None or len(self.problems.errors) != n_errors:
            return
        out = self.out
        out.violations.append(ViolationSample(sid, text, tuple(gt), preds, context, split))
        if meta is not None:
            out.metas[sid] = meta
        for hs in hows.values():
            if hs.count("offsets") != len(hs):  # only quotes located in the text need a note for the store
                out.groundings[sid] = hows
                out.how.update(hs)
            elif hs:
                out.how["offsets"] += len(hs)

    def _violation_list(self, loc: Location, items: list[Any], checker: str, text: str, hows: list[str]) -> list[Violation]:
        """`checker` is '' for the ground truth; field paths are only built for problems."""
        out: list[Violation] = []
        n = len(text)
        keys_ok = VIOLATION_KEYS.issuperset
        for i, v in enumerate(items):
            if type(v) is dict:  # fast path: offsets given, quote (if any) agrees, every field well-typed
                rule, start, end, quote = v.get("rule"), v.get("start"), v.get("end"), v.get("quote")
                cat, expl, corr = v.get("category"), v.get("explanation"), v.get("correction")
                if (type(start) is int and type(end) is int and 0 <= start < end <= n and type(rule) is str
                        and (quote is None or (type(quote) is str and text[start:end] == quote))
                        and (cat is None or type(cat) is str) and (expl is None or type(expl) is str)
                        and (corr is None or type(corr) is str) and rule.strip() and keys_ok(v)):
                    out.append(Violation(rule, start, end, quote, cat, expl, corr))
                    hows.append("offsets")
                    continue
            path = "ground_truth" if checker == GROUND_TRUTH else f"predictions{key(checker)}"
            got = self._violation(loc, v, f"{path}[{i}]", text, n)
            if got is not None:
                out.append(got[0])
                hows.append(got[1])
        return out

    def _violation(self, loc: Location, v: Any, path: str, text: str, n: int) -> tuple[Violation, str] | None:
        err = self.problems.error
        if type(v) is not dict:
            err(loc, path, f"expected a violation object, got {type_name(v)}")
            return None
        ok = True
        if v.keys() - VIOLATION_KEYS:
            self._note_unknown(loc, "violation", v, VIOLATION_KEYS)
        rule = v.get("rule")
        if type(rule) is not str:
            err(loc, f"{path}.rule", "is required" if rule is None else f"expected a string, got {type_name(rule)}")
            ok = False
        elif not rule.strip():
            err(loc, f"{path}.rule", "must not be empty")
            ok = False
        for name in _OPTIONAL_TEXT:
            value = v.get(name)
            if value is not None and type(value) is not str:
                err(loc, f"{path}.{name}", f"expected a string, got {type_name(value)}")
                ok = False
        quote = v.get("quote")
        if type(quote) is not str:
            quote = None
        start, end = v.get("start"), v.get("end")
        if start is None and end is None:
            if quote is None:
                if v.get("quote") is None:  # (a quote of the wrong type was reported above)
                    err(loc, path, "needs start and end offsets or a quote")
                return None
            if not quote.strip():
                err(loc, f"{path}.quote", "is empty and there are no offsets: give start/end or a quote")
                return None
            if not ok:
                return None
            found = locate(quote, text)
            if found.start is None:
                self.problems.warn(loc, f"{path}.quote", f"{clip(quote)} was not found in the text; kept as ungrounded")
            return Violation(rule, found.start, found.end, quote, v.get("category"), v.get("explanation"),
                             v.get("correction")), found.how
        start = self._offset(loc, start, f"{path}.start", "end")
        end = self._offset(loc, end, f"{path}.end", "start")
        if start is None or end is None:
            return None
        if start < 0:
            err(loc, f"{path}.start", f"must be >= 0, got {start}")
            ok = False
        if end > n:
            err(loc, f"{path}.end", f"{end} is past the end of the text (its length is {n} code points)")
            ok = False
        if start >= end:
            err(loc, f"{path}.end", f"must be greater than start ({start}), got {end}")
            ok = False
        if not ok:
            return None
        if quote is not None:
            at = text[start:end]
            if at != quote:
                err(loc, f"{path}.quote", self._mismatch(quote, at, start, end, text))
                return None
        return Violation(rule, start, end, quote, v.get("category"), v.get("explanation"), v.get("correction")), "offsets"

    def _offset(self, loc: Location, value: Any, path: str, other: str) -> int | None:
        if type(value) is int:
            return value
        if value is None:
            self.problems.error(loc, path, f"is required when {other} is given")
        elif type(value) is float and value.is_integer():
            return int(value)
        else:
            self.problems.error(loc, path, f"expected an integer code-point offset, got {type_name(value)} {clip(str(value), 20)}")
        return None

    @staticmethod
    def _mismatch(quote: str, at: str, start: int, end: int, text: str) -> str:
        msg = f"{clip(quote)} does not match the text at {start}..{end}, which is {clip(at)}"
        if quote.strip() == at.strip():
            return msg + " (they differ in leading/trailing whitespace)"
        i = text.find(quote)
        if i >= 0:
            return msg + f"; the quote occurs at {i}..{i + len(quote)} (offsets are code points, end exclusive)"
        return msg

    # -- rubric --------------------------------------------------------------------------------------------------
    def _rubric_record(self, loc: Location, rec: dict[str, Any]) -> None:
        n_errors = len(self.problems.errors)
        if rec.keys() - RUBRIC_RECORD_KEYS:
            self._note_unknown(loc, "rubric", rec, RUBRIC_RECORD_KEYS)
        sid = self._id(loc, rec)
        question = self._str(loc, rec, "question", True)
        response = self._str(loc, rec, "response", True)
        split = self._str(loc, rec, "split", False)
        _, meta = self._meta(loc, rec)
        traits = self._traits_of(loc, rec.get("traits"))
        buckets: dict[str, dict[str, list[str]]] = {}
        raw = rec.get("buckets")
        if raw is not None and type(raw) is not dict:
            self.problems.error(loc, "buckets", f"expected an object mapping trait names to buckets, got {type_name(raw)}")
        elif raw is not None:
            names = {t["name"] for t in traits}
            for name, b in raw.items():
                path = f"buckets{key(name)}"
                if traits and name not in names:
                    self.problems.error(loc, path, f"no trait named {clip(name)} in this record's traits")
                    continue
                try:
                    buckets[name] = dict(validate_buckets(b, path))
                except BucketError as exc:
                    self.problems.error(loc, exc.path, exc.message)
        if sid is None or question is None or response is None or len(self.problems.errors) != n_errors:
            return
        self.out.rubric.append(RubricSample(sid, question, response, tuple(traits), buckets, split, meta))

    def _traits_of(self, loc: Location, raw: Any) -> list[dict[str, Any]]:
        if type(raw) is not list or not raw:
            self.problems.error(loc, "traits", "is required: a non-empty array of metric traits" if raw is None or raw == []
                                else f"expected an array of metric traits, got {type_name(raw)}")
            return []
        out: list[dict[str, Any]] = []
        seen: set[str] = set()
        for i, t in enumerate(raw):
            path = f"traits[{i}]"
            try:
                trait = MetricTrait.from_dict(t)
            except TraitError as exc:
                self.problems.error(loc, path if exc.field == "trait" else f"{path}.{exc.field}", exc.message)
                continue
            except TypeError as exc:
                self.problems.error(loc, path, str(exc))
                continue
            name = trait.name
            if name in seen:
                self.problems.error(loc, f"{path}.name", f"trait {clip(name)} appears twice in this record")
                continue
            seen.add(name)
            definition = self._consistent(loc, path, trait)
            if definition is not None:
                out.append(definition)
        return out

    def _consistent(self, loc: Location, path: str, trait: MetricTrait) -> dict[str, Any] | None:
        """The definition to store, or None (with an error) when it disagrees with the file or the project."""
        canonical = trait.to_dict()
        name = trait.name
        if name not in self._project_traits:
            self._project_traits[name] = self._project_trait(name)
        stored = self._project_traits[name]
        if stored is not None:
            try:
                same = MetricTrait.from_dict(stored, strict=False).to_dict() == canonical
            except (TraitError, TypeError):
                same = False
            if not same:
                self.problems.error(loc, path, f"trait {clip(name)} is already defined differently in the project")
                return None
            return dict(stored)  # written verbatim, so the store sees the same definition
        first = self._traits.get(name)
        if first is None:
            self._traits[name] = (canonical, loc, path)
        elif first[0] != canonical:
            self.problems.error(loc, path, f"trait {clip(name)} is defined differently at {first[1]}")
            return None
        return canonical
