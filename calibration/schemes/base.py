"""The scheme seam: what a metric family provides, and the one registry everything else reads.

A scheme (violations, rubric, trace, rgb, addm, or a plug-in's) is one module that implements `Scheme`. Import,
the store's generic tables, the unit list, evaluation, calibration and export loop over `registry()` and never
name a scheme. Registration is explicit: the built-in list below, plus the `concord.schemes` entry-point group so
a separately installed package can add one (`[project.entry-points."concord.schemes"] binary = "pkg.mod:SCHEME"`,
or the scheme's app manifest, `"pkg.manifest:MANIFEST"`, which names its Scheme: app/schemes/contracts.py), plus
`register()` for tests and notebooks.

Everything here is pure: no Qt, SQL or network. The store keeps records as JSON payloads (`to_json`) and labels
as JSON values, so a scheme's types only need to round-trip through JSON.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from calibration.search.problem import SearchProblem

ENTRY_POINT_GROUP = "concord.schemes"

# The built-in schemes, in the order menus and reports show them: "module:attribute" of a Scheme object.
# Loaded on first use so `concord status` does not import scipy for schemes it never touches.
BUILTIN: tuple[str, ...] = (
    "calibration.schemes.violations.scheme:SCHEME",
    "calibration.schemes.rubric.scheme:SCHEME",
    "calibration.schemes.trace.scheme:SCHEME",
    "calibration.schemes.rgb.scheme:SCHEME",
    "calibration.schemes.addm.scheme:SCHEME",
    "calibration.schemes.judge.scheme:SCHEME",
)


@dataclass(frozen=True)
class FieldProblem:
    """One problem with a record, at a JSON path inside it (`ground_truth[2].start`); the importer adds file and line."""

    field: str
    message: str
    severity: str = "error"  # or "warning": the record is kept
    code: str = ""  # a machine-readable kind, e.g. "unknown_field" (the importer reports those once per file)


@dataclass(slots=True)  # not frozen: an import builds 100k of these, and frozen init is several times slower
class Parsed:
    """What `Scheme.parse` returns: the record and every problem found. A record with errors is never stored (see
    `ok`); a parser may still return what it could build of it (None otherwise), so that cross-record rules, such as
    one definition per trait across a file, also see the parts of a faulty record that were valid."""

    record: Any | None
    problems: tuple[FieldProblem, ...] = ()

    @property
    def ok(self) -> bool:
        return self.record is not None and not any(p.severity == "error" for p in self.problems)


@dataclass(frozen=True)
class Column:
    """A column of the unit list: `key` into `unit_summary`, its header, and whether it sorts numerically."""

    key: str
    header: str
    numeric: bool = True


@dataclass(frozen=True)
class LabelKind:
    """A kind of human label a unit accepts. `validate(value)` returns problems (field paths inside the value)."""

    name: str
    validate: Callable[[Any], Sequence[FieldProblem]]
    per_sample: bool = False  # the label belongs to the sample, not to one unit (unit '')
    description: str = ""


# -- label kinds every scheme shares --------------------------------------------------------------------------------
STATUSES: tuple[str, ...] = ("accepted", "corrected", "skipped", "flagged")


def _validate_status(value: Any) -> list[FieldProblem]:
    if value is None or value in STATUSES:
        return []
    return [FieldProblem("", f"must be one of {', '.join(STATUSES)} or null, got {value!r}")]


def _validate_note(value: Any) -> list[FieldProblem]:
    if value is None or isinstance(value, str):
        return []
    return [FieldProblem("", f"expected a string, got {type(value).__name__}")]


STATUS = LabelKind("status", _validate_status, description="the unit's review state")
NOTE = LabelKind("note", _validate_note, description="free text")
COMMON_KINDS: dict[str, LabelKind] = {"status": STATUS, "note": NOTE}


def label_kinds(*kinds: LabelKind) -> dict[str, LabelKind]:
    """A scheme's kinds: its own plus the shared `status` and `note`."""
    return {**{k.name: k for k in kinds}, **COMMON_KINDS}


@dataclass(frozen=True)
class Table:
    """One table of an evaluation report: the CLI prints it (rich, or TSV when piped), the app shows it."""

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]


@dataclass(frozen=True)
class Report:
    """What `Scheme.evaluate` returns: tables for people, `data` for `--json`, export manifests and data cards."""

    scheme: str
    tables: tuple[Table, ...] = ()
    data: Mapping[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


GENERIC_SUFFIXES: tuple[str, ...] = (".jsonl", ".csv", ".parquet")  # what the generic importer reads


@dataclass(frozen=True)
class Reference:
    """A reference a scheme's judges can be measured and calibrated against (`--reference NAME`). `released`: read
    from the records themselves (a data set's own annotator labels), so it needs no human label in the project."""

    name: str
    description: str
    released: bool = False


@dataclass(frozen=True)
class SchemeInfo:
    """What help texts and other generic surfaces say about a scheme, readable without loading its code: a built-in
    scheme declares it in its package's `manifest.py` (no numpy, pandas or scipy there), and its Scheme takes the
    same values from it; a plug-in's Scheme object is its own declaration (see `scheme_infos`)."""

    name: str
    title: str
    unit_noun: str
    accepts: str  # one line: the records and files `concord import` reads for this scheme
    file_suffixes: tuple[str, ...] = GENERIC_SUFFIXES  # the file name endings those come in
    llm_run: str = ""  # one line: what `concord assign --scheme NAME` assigns; "" when the scheme has no LLM run
    # for a scheme that has nothing to score while its samples have no units: why, and how to get them, a clause after
    # "N samples, but" (RGB's data files hold queries without answers); "": its samples alone can be worked on
    no_units: str = ""
    # the references `--reference` may name for this scheme's evaluate and calibrate, the calibration default first;
    # empty: the scheme measures against the resolved human labels only (calibrate refuses --reference)
    references: tuple[Reference, ...] = ()


@runtime_checkable
class Scheme(Protocol):
    """A metric family. Implementations are plain objects (often a frozen dataclass or a module-level instance).
    `evaluate`, `search_problem` and the members `calibrates` and `check_options` are optional: `Capabilities` lists
    them with their defaults, and generic code reads them through `capabilities(scheme)`."""

    name: str  # the value of a record's "scheme" key, and of samples.scheme in the store
    title: str  # for menus and reports ("Violations", "TRACe")
    record_keys: frozenset[str]  # top-level keys a record may carry (import rejects others)
    required_keys: frozenset[str]  # keys whose presence identifies the scheme when a record has no "scheme"
    unit_noun: str  # what a unit is named after: "checker", "trait", "judge", "model", "method"
    accepts: str  # for help texts (SchemeInfo): the records and files import reads for this scheme
    file_suffixes: tuple[str, ...]  # for help texts: the file name endings they come in
    llm_run: str  # for help texts: what `concord assign` assigns for this scheme ("" : no LLM run)
    columns: tuple[Column, ...]  # the unit list's scheme columns
    label_kinds: Mapping[str, LabelKind]
    record_schema: str | None  # path of the JSON Schema of a record, relative to resources/schema/
    label_schema: str | None

    def detect(self, raw: Mapping[str, Any]) -> bool:
        """True when a record without "scheme" looks like this scheme's (the key-guessing fallback). Decide on the
        record's keys only: the importer caches the answer per set of keys."""

    def parse(self, raw: Mapping[str, Any]) -> Parsed:
        """Validate one raw record (a decoded JSON object) into this scheme's record type."""

    def to_json(self, record: Any) -> dict[str, Any]:
        """The record as import reads it (with "scheme"), so an export can be imported again unchanged."""

    def record_id(self, record: Any) -> str: ...

    def record_text(self, record: Any) -> str:
        """The searchable text of a record (the list's search box matches it)."""

    def units(self, record: Any) -> list[str]:
        """The units humans review in this record: checkers, traits, judges, models, methods."""

    def unit_summary(self, record: Any, unit: str) -> dict[str, Any]:
        """Values for `columns`, stored with the unit so the list needs no record to draw a row."""

    def machine_label(self, record: Any, unit: str) -> Any:
        """What the machine (checker, LLM, judge) assigned for this unit, as a label value; None when nothing yet."""

    def accept(self, machine_label: Any) -> dict[str, Any]:
        """The human labels (kind -> value) that accepting the machine's label records."""

    def metrics(self, record: Any, unit: str, labels: Mapping[str, Any], params: Mapping[str, Any] | None = None) -> dict[str, float]:
        """The scheme's metric figures for one unit under `labels` (human kinds) and parameters (a preset's)."""

    def label_items(self, record: Any, unit: str, labels: Mapping[str, Any]) -> dict[str, Any]:
        """Item -> category: the pieces two labelers can agree on (pairs, excerpts, sentences) for kappa/alpha."""

    def presets(self) -> dict[str, dict[str, Any]]:
        """Named parameter sets (std_match, ha_match, trace_guide, addm_v2, ...)."""

    def search_problem(self, records: Sequence[Any], labels: Mapping[tuple[str, str], Mapping[str, Any]],
                       options: Mapping[str, Any]) -> "SearchProblem | None":
        """The calibration hook: records and current human labels ((sample, unit) -> kind -> value) as a search
        problem for the generic engine, or None when the scheme has nothing to calibrate."""

    def evaluate(self, records: Sequence[Any], labels: Mapping[tuple[str, str], Mapping[str, Any]],
                 options: Mapping[str, Any]) -> Report:
        """The evaluation hook behind `concord evaluate --scheme NAME`: the machine's figures per unit source
        (checker, judge, model, method) under the scheme's presets, next to the same figures from the human labels
        and the machine-human agreement, with intervals. `options` carries what the CLI/app passes (preset names,
        `reference`, `n_boot`, `seed`, and side-effect services such as an embedding backend)."""


@runtime_checkable
class SchemeSource(Protocol):
    """What an entry point may name instead of a Scheme: a scheme's app manifest, which knows its Scheme."""

    def load_scheme(self) -> Scheme: ...


class SchemeError(ValueError):
    """An unknown scheme name, or two schemes with the same name."""


@dataclass
class Registry:
    """Name -> Scheme, in registration order. Loaded lazily from BUILTIN and the entry-point group."""

    _schemes: dict[str, Scheme] = field(default_factory=dict)
    _loaded: bool = False

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        for spec in BUILTIN:
            module, _, attr = spec.partition(":")
            try:
                scheme = getattr(importlib.import_module(module), attr)
            except ModuleNotFoundError as exc:
                if exc.name and module.startswith(exc.name):  # a built-in scheme not written yet
                    continue
                raise
            self._add(scheme, replace=False)
        for ep in _entry_points():
            obj = ep.load()
            self._add(obj.load_scheme() if isinstance(obj, SchemeSource) else obj, replace=False)

    def _add(self, scheme: Scheme, *, replace: bool) -> None:
        name = getattr(scheme, "name", None)
        if not isinstance(name, str) or not name:
            raise SchemeError(f"a scheme needs a non-empty name, got {name!r}")
        if name in self._schemes and not replace and self._schemes[name] is not scheme:
            raise SchemeError(f"scheme {name!r} is registered twice")
        capabilities(scheme)  # its optional members checked once, here
        self._schemes[name] = scheme

    def register(self, scheme: Scheme, *, replace: bool = False) -> Scheme:
        self._load()
        self._add(scheme, replace=replace)
        return scheme

    def unregister(self, name: str) -> None:
        self._load()
        self._schemes.pop(name, None)

    def get(self, name: str) -> Scheme:
        self._load()
        try:
            return self._schemes[name]
        except KeyError:
            raise SchemeError(f"unknown scheme {name!r}; known: {', '.join(self._schemes) or 'none'}") from None

    def names(self) -> list[str]:
        self._load()
        return list(self._schemes)

    def __iter__(self) -> Iterable[Scheme]:  # type: ignore[override]
        self._load()
        return iter(list(self._schemes.values()))

    def __contains__(self, name: object) -> bool:
        self._load()
        return name in self._schemes

    def detect(self, raw: Mapping[str, Any]) -> list[Scheme]:
        """Schemes whose `detect` accepts a record without "scheme" (one: use it; several: ambiguous; none: unknown)."""
        self._load()
        return [s for s in self._schemes.values() if s.detect(raw)]

    def label_kinds(self) -> dict[str, LabelKind]:
        """Every kind of human label any registered scheme accepts (the store validates event kinds against it)."""
        self._load()
        out: dict[str, LabelKind] = {}
        for s in self._schemes.values():
            for name, kind in s.label_kinds.items():
                out.setdefault(name, kind)
        return out


def _entry_points() -> list[Any]:
    from importlib.metadata import entry_points

    return list(entry_points(group=ENTRY_POINT_GROUP))


_REGISTRY = Registry()


def registry() -> Registry:
    return _REGISTRY


def get(name: str) -> Scheme:
    return _REGISTRY.get(name)


def register(scheme: Scheme, *, replace: bool = False) -> Scheme:
    return _REGISTRY.register(scheme, replace=replace)


def info(scheme: Scheme) -> SchemeInfo:
    """A registered scheme's SchemeInfo. A scheme written before `accepts`, `file_suffixes` and `llm_run` were
    declared is described from its title and the generic formats."""
    return SchemeInfo(scheme.name, scheme.title, scheme.unit_noun,
                      accepts=getattr(scheme, "accepts", "") or f"{scheme.title} records",
                      file_suffixes=tuple(getattr(scheme, "file_suffixes", GENERIC_SUFFIXES)),
                      llm_run=getattr(scheme, "llm_run", ""), no_units=getattr(scheme, "no_units", ""),
                      references=tuple(getattr(scheme, "references", ())))


@dataclass(frozen=True)
class Capabilities:
    """What a scheme may offer beyond the members every scheme has, declared here with their defaults: generic code
    (evaluate, calibrate, the queue, the ceiling) reads these fields from `capabilities(scheme)` and never probes a
    scheme for a hook. A scheme declares one by defining the member of that name; registering a scheme checks them."""

    evaluate: Callable[..., Report] | None = None  # `Scheme.evaluate`; None: `concord evaluate` skips it with a note
    search_problem: Callable[..., Any] | None = None  # `Scheme.search_problem`; None: nothing to calibrate
    calibrates: bool = True  # False: its metrics have no parameters to fit (rubric), decided without building anything
    # False: `label_items` reads only the labels, never the record (agreement then parses no record: rgb's parsing
    # was a fifth of `concord agreement`)
    items_read_record: bool = True
    # check_options(options): raises ValueError for calibration options it refuses, before any label is read
    check_options: Callable[[Mapping[str, Any]], None] | None = None
    # label_items_many(records, [(sample, unit, kind, value), ...]) -> (row, item, category) arrays: `label_items` of
    # every row at once, rows in order, items in label_items' order, each item a code one-to-one with its key, the
    # categories label_items gives (an object array keeps True, 1 and 1.0 apart); None: generic code (the human
    # ceiling, agreement's tables) calls label_items per row (at 100k samples that is millions of items)
    label_items_many: Callable[..., tuple[Any, Any, Any]] | None = None


OPTIONAL_MEMBERS: tuple[str, ...] = ("evaluate", "search_problem", "calibrates", "check_options", "items_read_record",
                                     "label_items_many")
_FLAGS = ("calibrates", "items_read_record")  # the optional members that are True or False


def capabilities(scheme: Scheme) -> Capabilities:
    """The scheme's optional members (Capabilities): the one place they are read, with their declared defaults. A
    SchemeError names a member of the wrong type (`calibrates` not a bool, a hook not callable)."""
    found = {m: getattr(scheme, m) for m in OPTIONAL_MEMBERS if hasattr(scheme, m)}
    name = getattr(scheme, "name", "?")
    for m, value in found.items():
        if m in _FLAGS and not isinstance(value, bool):
            raise SchemeError(f"scheme {name!r}: `{m}` must be True or False, got {value!r}")
        if m not in _FLAGS and value is not None and not callable(value):
            raise SchemeError(f"scheme {name!r}: `{m}` must be callable")
    return Capabilities(**found)


def scheme_infos() -> list[SchemeInfo]:
    """Every registered scheme's SchemeInfo in registry order, cheaply: once the registry is loaded, from the
    schemes themselves; before that, from the built-ins' `manifest.py` (the package of each BUILTIN module) and the
    entry-point schemes, so `concord import --help` does not import numpy, pandas or scipy."""
    if _REGISTRY._loaded:
        return [info(s) for s in _REGISTRY]
    out: list[SchemeInfo] = []
    for spec in BUILTIN:
        package = spec.partition(":")[0].rpartition(".")[0]
        try:
            out.append(importlib.import_module(f"{package}.manifest").MANIFEST)
        except ModuleNotFoundError as exc:
            if exc.name and f"{package}.manifest".startswith(exc.name):  # a built-in scheme not written yet
                continue
            raise
    out.extend(info(ep.load()) for ep in _entry_points())
    return out
