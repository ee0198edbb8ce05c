"""Validate import records of any registered scheme, collecting every problem with file, line and field.

A record names its scheme (`"scheme": "<name>"`); a record without one is given to the scheme whose `detect`
accepts it (the key-guessing fallback for older files), and one that several schemes accept is an error asking for
`scheme`. The scheme's own pure `parse` checks the record; the rules that need other records or the project
(unique ids here; per scheme, e.g. trait definitions or checker names, in app/schemes/<name>/io.py) run here.
The checks are hand-written rather than driven by the JSON Schemas in resources/schema/ because they must also check
what a schema cannot and be fast enough for 100k records in a few seconds; a test keeps the two in agreement.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from app.io.problems import Location, Problems
from calibration.schemes.base import FieldProblem, Scheme, registry
from calibration.schemes.fields import clip

if TYPE_CHECKING:
    from app.schemes.contracts import IOPart

JSON_COLUMNS = frozenset(("ground_truth", "predictions", "meta", "traits", "buckets"))
T = TypeVar("T")
CHECKER_RE = re.compile(r"^[^@|\s][^@|]*@[^@|\s][^@|]*\|\S.*$")

__all__ = ["JSON_COLUMNS", "CHECKER_RE", "RecordValidator", "Validated", "ValidatorState", "clip", "project_contexts",
           "scheme_of"]


@dataclass
class Validated:
    """Everything a file's valid records hold, ready for the store. A scheme whose io part collects records of its
    own keeps them in `own[scheme]` (whatever its `collect` gathers, handed to its `prepare` and `facts`: see
    app/schemes/<name>/io.py); any other scheme's records go to `records`."""

    own: dict[str, Any] = field(default_factory=dict)  # scheme name -> what its io part's `collect` gathered
    records: dict[str, list[Any]] = field(default_factory=dict)  # scheme name -> records (generic store path)
    schemes: dict[str, str] = field(default_factory=dict)  # sample id -> scheme, for every valid record

    def of(self, scheme: str, make: Callable[[], T]) -> T:
        """The scheme's own collection, made by `make()` when it holds nothing yet."""
        found = self.own.get(scheme)
        if found is None:
            found = self.own[scheme] = make()
        return found  # type: ignore[no-any-return]


@dataclass
class ValidatorState:
    """What cross-record rules need from the records seen so far; workers hand it back to be merged in file order.
    `own`: scheme -> its io part's state of its own rules (e.g. the rubric's trait definitions seen, with where),
    merged by the part's `merge_state`. `ids`: where each id was first used, as RecordValidator keeps it (a line
    number of `home`, else a Location)."""

    ids: dict[str, Location | int]
    unknown: dict[tuple[str, str, str], list[Any]]  # (message, field, code) -> [first location, lines]
    own: dict[str, Any]
    home: tuple[str, str] | None = None  # (file, unit) of the line numbers in `ids`


def _located(home: tuple[str, str] | None, kept: Location | int) -> Location:
    """Where an id was first used, as a validator keeps it: a line number is one of `home` (file, unit)."""
    if type(kept) is int:
        assert home is not None
        return Location(home[0], kept, home[1])
    return kept  # type: ignore[return-value]


def scheme_of(rec: Mapping[str, Any], what: str = "record") -> tuple[Scheme | None, FieldProblem | None]:
    """The scheme a record or label line names, else the one whose `detect` accepts it; else a problem to report."""
    reg = registry()
    name = rec.get("scheme")
    if name is not None:
        if type(name) is not str or name not in reg:
            return None, FieldProblem("scheme", f"unknown scheme {name!r}; known schemes: {', '.join(reg.names())}")
        return reg.get(name), None
    found = reg.detect(rec)
    if len(found) == 1:
        return found[0], None
    if not found:
        hints = "; ".join(f"a {s.name} {what} has {', '.join(repr(k) for k in sorted(s.required_keys))}" for s in reg)
        return None, FieldProblem("", f"cannot tell the {what} kind: add \"scheme\" ({', '.join(reg.names())}); {hints}")
    names = [s.name for s in found]
    return None, FieldProblem("", f"ambiguous {what}: it could be {' or '.join(names)}; add \"scheme\": "
                                  f"one of {', '.join(repr(n) for n in names)}")


_ADAPTERS: dict[str, IOPart] = {}


def io_adapter(name: str) -> IOPart:
    """The scheme's import rules (app/schemes/<name>/io.py: cross-record rules, its own store writes, ...) as a
    typed part; a scheme without any gets a part whose hooks are all None (imported generically)."""
    if name not in _ADAPTERS:
        from app.schemes import loader

        _ADAPTERS[name] = loader.io(name)
    return _ADAPTERS[name]


def project_contexts(project: Any) -> dict[str, Any]:
    """Per scheme whose io part reads the project for its import rules (`project_context`): what it read, for
    `RecordValidator(problems, contexts)`."""
    out: dict[str, Any] = {}
    for name in registry().names():
        hook = io_adapter(name).project_context
        if hook is not None:
            out[name] = hook(project)
    return out


@dataclass(frozen=True)
class _Hooks:
    """How records of one scheme are validated: its io adapter (or None) and the adapter's `sample_id`, `parse` and
    `record_id` where it has them (app/schemes/contracts.py), else the scheme's own."""

    adapter: IOPart
    sample_id: Callable[[dict[str, Any]], Any] | None
    parse: Callable[[Any], Any]
    record_id: Callable[[Any], str]

    @classmethod
    def of(cls, scheme: Scheme) -> "_Hooks":
        adapter = io_adapter(scheme.name)
        return cls(adapter, adapter.sample_id, adapter.parse or scheme.parse, adapter.record_id or scheme.record_id)


class RecordValidator:
    """Validates records one by one; cross-record rules (unique ids, a scheme's own rules) need the shared state.

    `contexts`: scheme -> what its io part's `project_context(project)` read from the project for its rules (e.g. the
    rubric's stored trait definitions, so a file cannot redefine a trait the project already uses); picklable, as
    it travels to the import's worker processes. A scheme reads its own with `context(name)`.
    """

    def __init__(self, problems: Problems, contexts: Mapping[str, Any] | None = None, file: str | None = None) -> None:
        self.problems = problems
        self.out = Validated()
        # id -> where it was first used: a line number of `_home` (the file's lines: most ids), else its Location. An
        # int, not a Location per id: a chunk's ids cross a pipe from a worker and are merged here, 100k per 100k
        # samples, and building, pickling and merging that many objects cost the importer ~5% of its time.
        self._ids: dict[str, Location | int] = {}
        self._home: tuple[str, str] | None = (file, "line") if file is not None else None  # (file, unit)
        self._contexts: Mapping[str, Any] = contexts or {}
        self._own: dict[str, Any] = {}  # scheme -> the state of its own cross-record rules (`state_of`)
        self._unknown: dict[tuple[str, str, str], list[Any]] = {}
        self._schemes: dict[Any, Scheme] = {}
        self._hooks: dict[str, _Hooks] = {}  # per scheme: looked up once, not once per record

    # -- entry point ---------------------------------------------------------------------------------------------
    def add(self, loc: Location, rec: dict[str, Any]) -> None:
        named = rec.get("scheme")
        # A scheme by name, or by the record's keys (detect decides on keys only), looked up once per file.
        cache_key = named if type(named) is str else tuple(rec)
        scheme = self._schemes.get(cache_key)
        if scheme is None:
            scheme, problem = scheme_of(rec)
            if scheme is None:
                assert problem is not None
                self.problems.error(loc, problem.field, problem.message)
                return
            if named is None or type(named) is str:
                self._schemes[cache_key] = scheme
        n_errors = len(self.problems.errors)
        hooks = self._hooks.get(scheme.name) or self._hooks.setdefault(scheme.name, _Hooks.of(scheme))
        adapter = hooks.adapter
        # the id the record will be stored under (an adapter may namespace it, e.g. RAGBench rows by subset)
        sid = hooks.sample_id(rec) if hooks.sample_id is not None else rec.get("id")
        if type(sid) is int:
            sid = str(sid)
        if type(sid) is str and sid.strip():
            first = self._ids.get(sid)
            if first is not None:
                self.problems.error(loc, "id", f"duplicate id {clip(sid)} (first used at {self._where(first)})")
            else:
                self._ids[sid] = self._key(loc)
        parsed = hooks.parse(rec)
        for p in parsed.problems if parsed.problems else ():
            if p.code and p.severity != "error":  # reported once per file and field, with how many lines
                entry = self._unknown.get((p.message, p.field, p.code))
                if entry is None:
                    self._unknown[(p.message, p.field, p.code)] = [loc, 1]
                else:
                    entry[1] += 1
            elif p.severity == "error":
                self.problems.error(loc, p.field, p.message)
            else:
                self.problems.warn(loc, p.field, p.message)
        if adapter.check is not None:
            adapter.check(self, loc, parsed.record)  # cross-record rules, even on a record with errors
        if parsed.record is None or len(self.problems.errors) != n_errors:
            return  # (an error in `parsed.problems` was added to self.problems above)
        self.out.schemes[hooks.record_id(parsed.record)] = scheme.name
        if adapter.collect is not None:
            adapter.collect(self, loc, parsed.record)
        else:
            self.out.records.setdefault(scheme.name, []).append(parsed.record)

    def add_unchanged(self, number: int, sid: str) -> None:
        """Line `number` of the validator's file (`file`), which the project already holds verbatim (same raw line
        hash): only its id joins the cross-record rules."""
        first = self._ids.get(sid)
        if first is not None:
            assert self._home is not None
            self.problems.error(Location(self._home[0], number, self._home[1]), "id",
                                f"duplicate id {clip(sid)} (first used at {self._where(first)})")
        else:
            self._ids[sid] = number

    def _key(self, loc: Location) -> Location | int:
        """How `_ids` keeps `loc`: its number when it is a line (row, ...) of the home file (the first one seen)."""
        home = self._home
        if home is None:
            home = self._home = (loc.file, loc.unit)
        return loc.number if loc.number is not None and loc.file == home[0] and loc.unit == home[1] else loc

    def _where(self, kept: Location | int) -> Location:
        return _located(self._home, kept)

    def finish(self) -> Validated:
        """Emit the aggregated warnings (one per unknown field or odd checker name, not one per line)."""
        for (message, name, code), (first, count) in sorted(self._unknown.items(), key=lambda kv: kv[1][0].number or 0):
            where = f" (on {count} {first.unit}s)" if count > 1 else ""
            self.problems.warn(first, name, f"{message}{where}", code=code, count=count)
        for name in registry().names():
            finish = io_adapter(name).finish
            if finish is not None:
                finish(self)
        return self.out

    def state(self) -> ValidatorState:
        return ValidatorState(self._ids, self._unknown, self._own, self._home)

    def state_of(self, scheme: str, make: Callable[[], T]) -> T:
        """The state of a scheme's own cross-record rules (made by `make()` on first use): kept with the validator's,
        handed back by a worker and merged by the scheme's io `merge_state` (picklable)."""
        found = self._own.get(scheme)
        if found is None:
            found = self._own[scheme] = make()
        return found  # type: ignore[no-any-return]

    def absorb(self, other: ValidatorState) -> None:
        """Merge the state of a later part of the file, reporting what clashes across the parts."""
        ids, theirs = self._ids, other.ids
        if theirs and other.home != self._home:
            if self._home is None and not ids:
                self._home = other.home
            else:  # (numbers of another file: as this validator keeps them)
                theirs = {sid: self._key(_located(other.home, kept)) for sid, kept in theirs.items()}
        clash = theirs.keys() & ids.keys() if ids else ()
        if not clash:
            ids.update(theirs)  # (the common case, in C: no id seen twice)
        else:
            for sid, kept in theirs.items():
                if sid in clash:
                    self.problems.error(self._where(kept), "id",
                                        f"duplicate id {clip(sid)} (first used at {self._where(ids[sid])})")
                else:
                    ids[sid] = kept
        for k, (loc, count) in other.unknown.items():
            entry = self._unknown.get(k)
            if entry is None:
                self._unknown[k] = [loc, count]
            else:
                entry[1] += count
        for scheme, theirs in other.own.items():
            mine = self._own.get(scheme)
            if mine is None:
                self._own[scheme] = theirs
                continue
            merge = io_adapter(scheme).merge_state
            assert merge is not None  # a scheme keeping state declares how it merges (app/schemes/contracts.py)
            merge(self, mine, theirs)

    def context(self, scheme: str) -> Any:
        """What the scheme's io part read from the project for its rules (`project_context`), or None."""
        return self._contexts.get(scheme)

    def location_of(self, sample_id: str) -> Location:
        return self._where(self._ids[sample_id])
