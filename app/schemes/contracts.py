"""What a scheme's app package contributes, as typed contracts: the one place that says which hooks exist.

A scheme is two packages: its pure library (`calibration/schemes/<name>/`, the `base.Scheme` protocol: record
parsing, label kinds, units, evaluation, search problem) and its app side (`app/schemes/<name>/`). The app side is
described by a `Manifest`: each contribution is a module named by a string and loaded only when first used (so
`concord --help` and `concord status` import none of them), plus the optional hooks that module provides, DECLARED
in the manifest. The loader (app/schemes/loader.py) checks a loaded module against the contract here -- every
required member and every declared hook present, no undeclared hook defined -- and hands generic code a typed part
(`IOPart`, `StorePart`, ...) whose undeclared hooks are None. Generic code reads those attributes and never probes
a module with getattr.

Contributions (module -> contract):
- io: cross-record import rules (`check`, `collect`; required when a scheme has an io module) and optional hooks:
  what its rules read from the project (`project_context`), what the import summary says of its records (`facts`),
  its own record parsing and ids, its own file formats, a default dataset name, its own store writes for streamed
  import (`prepare` in the worker, `write_prepared` in the writer), label-file lines of its own, ground-truth
  labels, the export of its curated files (`EXPORT`) and extra export datasets.
- store: tables of its own, composed: `part` is a class built with the project (`project.store(name)`, e.g.
  app.store.parts.ProjectPart) holding the scheme's queries; it creates its tables when first built (a built-in
  scheme's come from the released migrations: nothing to create).
  Optional hooks: records and evaluation records read from its tables, counts for `status` and how it prints them
  (`status_counts`, `status_text`), rebuilt counts,
  applied parameters kept in its own table.
- views: the detail view class (`VIEW`, an app.gui.views.base.DetailView; Qt is imported only when loaded).
- llm: `assign_cli(args)`, the scheme's run behind `concord assign --scheme NAME`.
- commands: `register(subparsers)`, commands of the scheme's own (listed in `commands` with their one-line help so
  the top-level help needs no import).
- guideline: `split(text)`, the guideline's parts (rule, trait, category, ...), and optionally `affected(project,
  parts)`, the units a changed part affects (`concord guideline`, the re-queue in `concord queue`, issue #29).
- help: nouns for help texts and reports (`accepts`: what `concord import` takes for this scheme).
"""
from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from app.schemes.manifest import Command, Contribution, ContractError, ImportOption, Manifest

if TYPE_CHECKING:
    import argparse

    from app.io.export_parts import SchemeExport
    from app.io.formats import Source
    from app.io.labelstudio import LabelStudioMapping
    from app.io.problems import Location, Problems
    from app.io.records import RecordValidator, Validated
    from app.store import Project, WriteCounts
    from calibration.schemes.base import Parsed


# -- the hooks, one Protocol each (the signatures generic code calls) ---------------------------------------------
class Check(Protocol):
    def __call__(self, v: RecordValidator, loc: Location, record: Any | None) -> None: ...


class Collect(Protocol):
    def __call__(self, v: RecordValidator, loc: Location, record: Any) -> None: ...


class TableColumns(Protocol):
    # the columns a table (CSV, Parquet) of its records lacks; None when the columns are not those of its records
    def __call__(self, columns: set[str]) -> list[str] | None: ...


class MergeState(Protocol):
    # merge `theirs` (a later part of the file: RecordValidator.state_of) into `mine`, reporting clashes on v.problems
    def __call__(self, v: RecordValidator, mine: Any, theirs: Any) -> None: ...


class Finish(Protocol):
    def __call__(self, v: RecordValidator) -> None: ...


class ParseRecord(Protocol):
    def __call__(self, raw: dict[str, Any]) -> Parsed: ...


class RecordId(Protocol):
    def __call__(self, record: Any) -> str: ...


class SampleId(Protocol):
    def __call__(self, raw: Mapping[str, Any]) -> Any: ...


class ReadFile(Protocol):
    def __call__(self, path: str | Path, problems: Problems, options: Mapping[str, Any],
                 project: Project | None = None) -> Source | None: ...


class DefaultDataset(Protocol):
    def __call__(self, path: str | PurePath) -> str | None: ...


class ExportExtra(Protocol):
    def __call__(self, project: Any, records: list[Any], labels: Mapping[tuple[str, str], Mapping[str, Any]]
                 ) -> dict[str, list[dict[str, Any]]]: ...


class Prepare(Protocol):
    def __call__(self, out: Validated, line_hashes: Mapping[str, bytes]) -> Any: ...


class Pack(Protocol):
    """A first load's prepared rows in the form that crosses from an import worker cheapest to write (made in the
    worker; `write_prepared` takes either form)."""

    def __call__(self, prepared: Any) -> Any: ...


class WritePrepared(Protocol):
    def __call__(self, project: Project, prepared: Any, dataset_id: int | None,
                 line_hashes: Mapping[str, bytes]) -> WriteCounts: ...


class ImportFacts(Protocol):
    """What a scheme says about the records of one import beyond the samples written (the violations: how many
    violations from how many checkers, how their quotes were placed). Made per chunk (perhaps in a worker process:
    picklable), merged in file order; the import summary prints `note()` after the scheme's counts line and
    `lines()` below it."""

    def merge(self, other: Any) -> None: ...

    def note(self) -> str: ...

    def lines(self) -> list[str]: ...


class Facts(Protocol):
    def __call__(self, collected: Any | None) -> ImportFacts: ...  # None: the scheme collected nothing (empty facts)


class GroundTruthLabel(Protocol):
    def __call__(self, sample_id: str, text: str, rec: dict[str, Any]) -> tuple[str, list[Any] | None, list[Any]]: ...


class LabelCommand(Protocol):
    def __call__(self, problems: Problems, loc: Location, rec: dict[str, Any], sid: str | None, unit: str | None,
                 unit_row: dict[str, Any] | None, ok: bool, status: str) -> Any: ...


# The columns of the labels file that schemes with curated files of their own (an io `EXPORT`, an
# app.io.export_parts.SchemeExport) share: one file for all of them.
LABELS_COLUMNS = ("sample", "checker", "trait", "annotator", "matches", "buckets")


class ProjectHook(Protocol):
    def __call__(self, project: Any) -> Any: ...


class WriteRecords(Protocol):
    def __call__(self, project: Any, records: list[Any]) -> None: ...  # inside the samples' write transaction


@dataclass(frozen=True)
class StatusText:
    """How `concord status` shows a scheme's own counts (its store part's `status_counts`): `note` follows the samples
    line; `predicted` (unit -> machine items) fills the units table's "predicted" column."""

    note: str = ""
    predicted: Mapping[str, int] = field(default_factory=dict)


class StatusTextHook(Protocol):
    def __call__(self, counts: Mapping[str, Any]) -> StatusText: ...


class RebuildCounts(Protocol):
    def __call__(self, conn: Any) -> None: ...  # the project's sqlite3 connection (SQL stays in store modules)


class SaveParams(Protocol):
    def __call__(self, project: Any, name: str, version: str, params: Mapping[str, Any], origin: str) -> str: ...


class LoadParams(Protocol):
    def __call__(self, project: Any, ref: str) -> dict[str, Any]: ...


class StoreTables(Protocol):
    """A store part (composition): built with the project, creates its own tables when first used (outside a write
    transaction: CREATE TABLE IF NOT EXISTS, one statement per table, or its own `project.transaction()`)."""

    def __init__(self, project: Any) -> None: ...

    def create_tables(self) -> None: ...


class SplitGuideline(Protocol):
    def __call__(self, text: str) -> dict[str, str]: ...  # part -> its text, in order; ValueError naming the line


class AffectedUnits(Protocol):
    def __call__(self, project: Any, parts: Collection[str]) -> set[tuple[str, str]]: ...  # (sample, unit)


class AssignCli(Protocol):
    def __call__(self, args: argparse.Namespace) -> int: ...


class RegisterCommands(Protocol):
    def __call__(self, subparsers: Any) -> None: ...


# -- the parts generic code receives -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Part:
    """A loaded contribution: `module` and its hooks. Subclasses list their members as fields: those in `REQUIRED`
    must exist in a contributed module; the others are optional, DECLARED in the manifest, and None otherwise.
    `ATTRS` maps a field to its module attribute when the names differ (constants are upper case)."""

    scheme: str
    module: Any = None  # the contributed module (or "module:attr" object); None for the default, empty part
    REQUIRED: ClassVar[frozenset[str]] = frozenset()
    ATTRS: ClassVar[Mapping[str, str]] = {}
    PAIRS: ClassVar[tuple[tuple[str, str], ...]] = ()  # hooks declared together or not at all

    @classmethod
    def hooks(cls) -> list[str]:
        return [f.name for f in fields(cls) if f.name not in ("scheme", "module")]

    @classmethod
    def optional(cls) -> frozenset[str]:
        return frozenset(cls.hooks()) - cls.REQUIRED

    @classmethod
    def attr(cls, hook: str) -> str:
        return cls.ATTRS.get(hook, hook)


@dataclass(frozen=True)
class IOPart(Part):
    """Import rules of one scheme (a scheme without an io module is imported generically: every field None)."""

    check: Check | None = None
    collect: Collect | None = None
    finish: Finish | None = None
    merge_state: MergeState | None = None  # its cross-record state (RecordValidator.state_of) across a file's parts
    parse: ParseRecord | None = None  # None: the scheme's own `parse`
    record_id: RecordId | None = None  # None: the scheme's own `record_id`
    sample_id: SampleId | None = None  # None: the record's "id"
    read_file: ReadFile | None = None
    table_columns: TableColumns | None = None  # a table's missing columns, reported once per file
    default_dataset: DefaultDataset | None = None
    export_extra: ExportExtra | None = None
    prepare: Prepare | None = None
    pack: Pack | None = None  # (only with prepare) what a worker sends for a load into an empty project
    write_prepared: WritePrepared | None = None
    project_context: ProjectHook | None = None  # what its rules read from the project (RecordValidator.context)
    facts: Facts | None = None  # what the import summary says of its records (over `Validated.own[scheme]`)
    export: SchemeExport | None = None  # curated files of its own (app/io/export_parts.py)
    ground_truth_label: GroundTruthLabel | None = None
    ground_truth_label_keys: frozenset[str] = frozenset()
    label_command: LabelCommand | None = None
    label_keys: frozenset[str] = frozenset()
    label_unit_key: str | None = None
    label_value_key: str | None = None
    labelstudio: LabelStudioMapping | None = None  # its samples as Label Studio tasks (app/io/labelstudio.py)
    REQUIRED: ClassVar[frozenset[str]] = frozenset(("check", "collect"))
    ATTRS: ClassVar[Mapping[str, str]] = {"export": "EXPORT",
                                          "ground_truth_label_keys": "GROUND_TRUTH_LABEL_KEYS",
                                          "label_keys": "LABEL_KEYS", "label_unit_key": "LABEL_UNIT_KEY",
                                          "label_value_key": "LABEL_VALUE_KEY", "labelstudio": "LABELSTUDIO"}
    PAIRS: ClassVar[tuple[tuple[str, str], ...]] = (("prepare", "write_prepared"), ("label_command", "label_keys"),
                                                    ("label_command", "label_unit_key"),
                                                    ("label_command", "label_value_key"),
                                                    ("ground_truth_label", "ground_truth_label_keys"))


@dataclass(frozen=True)
class StorePart(Part):
    """Tables of one scheme's own and what generic code reads from them (every field None: the generic tables)."""

    part: type[StoreTables] | None = None  # composed: `project.store(name)` (PART)
    write_records: WriteRecords | None = None  # rows of its own for records the generic write stores or replaces
    load_records: ProjectHook | None = None
    evaluation_records: ProjectHook | None = None
    item_records: ProjectHook | None = None  # record id -> what label_items reads, counted in SQL (agreement)
    status_counts: ProjectHook | None = None  # counts of its own tables: `concord status --json`'s scheme_counts[name]
    status_text: StatusTextHook | None = None  # how `concord status` prints those counts
    rebuild_counts: RebuildCounts | None = None
    param_refs: ProjectHook | None = None
    save_params: SaveParams | None = None
    load_params: LoadParams | None = None
    bulk_tables: tuple[str, ...] = ()  # its tables a bulk import fills (their indexes are rebuilt after it: BULK_TABLES)
    ATTRS: ClassVar[Mapping[str, str]] = {"part": "PART", "bulk_tables": "BULK_TABLES"}
    PAIRS: ClassVar[tuple[tuple[str, str], ...]] = (("save_params", "load_params"), ("save_params", "param_refs"))


@dataclass(frozen=True)
class ViewPart(Part):
    view: type | None = None  # an app.gui.views.base.DetailView subclass whose `scheme` is the scheme's name
    REQUIRED: ClassVar[frozenset[str]] = frozenset(("view",))
    ATTRS: ClassVar[Mapping[str, str]] = {"view": "VIEW"}


@dataclass(frozen=True)
class LLMPart(Part):
    assign_cli: AssignCli | None = None
    REQUIRED: ClassVar[frozenset[str]] = frozenset(("assign_cli",))


@dataclass(frozen=True)
class CommandsPart(Part):
    register: RegisterCommands | None = None
    REQUIRED: ClassVar[frozenset[str]] = frozenset(("register",))


@dataclass(frozen=True)
class GuidelinePart(Part):
    """How a scheme's guideline splits into parts (the unit of change: a rule, a trait, a category) and which units
    a changed part affects. A scheme without one gets the generic split (app/services/guidelines.py: `## ` headings)
    and every part affects all its units."""

    split: SplitGuideline | None = None
    affected: AffectedUnits | None = None  # None: a change of any part affects every unit of the scheme
    REQUIRED: ClassVar[frozenset[str]] = frozenset(("split",))


PARTS: dict[str, type[Part]] = {"io": IOPart, "store": StorePart, "views": ViewPart, "llm": LLMPart,
                                "commands": CommandsPart, "guideline": GuidelinePart}


# -- checking a manifest and its contributions against the contracts -----------------------------------------------
# What a manifest's `inputs` may name: options the generic option builder adds for a scheme that declares them.
# "annotator_labels": annotator -> their own labels of the scheme ((sample, unit) -> kind -> value).
INPUTS = frozenset(("annotator_labels",))


def problems_of(manifest: Manifest) -> list[str]:
    """What is wrong with a manifest as declared (before anything is imported): unknown kinds or hooks, unpaired
    hooks, commands without a commands module."""
    out = []
    if not manifest.name.isidentifier():
        out.append(f"scheme {manifest.name!r}: a name must be a Python identifier")
    if ":" not in manifest.scheme:
        out.append(f"scheme {manifest.name}: `scheme` must be \"module:attr\", got {manifest.scheme!r}")
    for kind, c in manifest.contributions.items():
        cls = PARTS.get(kind)
        if cls is None:
            out.append(f"scheme {manifest.name}: unknown contribution {kind!r} (known: {', '.join(PARTS)})")
            continue
        unknown = sorted(c.provides - cls.optional())
        if unknown:
            out.append(f"scheme {manifest.name}: {kind} contribution declares unknown hooks "
                       f"{', '.join(f'`{u}`' for u in unknown)} (optional: {', '.join(sorted(cls.optional()))})")
        if c.options and (kind != "io" or "read_file" not in c.provides):
            out.append(f"scheme {manifest.name}: {kind} contribution declares import options without reading files "
                       "(only an io contribution that provides `read_file` takes them)")
        for o in c.options:
            if not o.name.isidentifier() or not o.refused:
                out.append(f"scheme {manifest.name}: import option {o.name!r} needs an identifier name and a "
                           "`refused` text")
        for a, b in cls.PAIRS:
            if (a in c.provides) != (b in c.provides):
                out.append(f"scheme {manifest.name}: {kind} contribution declares `{a if a in c.provides else b}` "
                           f"without `{b if a in c.provides else a}`")
    unknown_inputs = sorted(manifest.inputs - INPUTS)
    if unknown_inputs:
        out.append(f"scheme {manifest.name}: unknown inputs {', '.join(unknown_inputs)} (known: {', '.join(sorted(INPUTS))})")
    if manifest.commands and "commands" not in manifest.contributions:
        out.append(f"scheme {manifest.name}: lists commands but has no commands contribution")
    return out


def build_part(manifest: Manifest, kind: str, found: Any) -> Part:
    """The typed part of a loaded contribution (a module, or for "module:attr" any object with the members as
    attributes, e.g. a SimpleNamespace), checked against its contract (ContractError otherwise)."""
    cls = PARTS[kind]
    spec = manifest.contributions[kind].module
    declared = manifest.contributions[kind].provides
    members = vars(found)
    values: dict[str, Any] = {}
    for hook in cls.hooks():
        name = cls.attr(hook)
        wanted = hook in cls.REQUIRED or hook in declared
        if wanted and name not in members:
            raise ContractError(f"scheme {manifest.name}: {kind} contribution ({spec}) lacks `{name}`")
        if not wanted and name in members:
            raise ContractError(f"scheme {manifest.name}: {kind} contribution ({spec}) defines `{name}` "
                                f"but its manifest does not declare it (add {hook!r} to `provides`)")
        if wanted:
            value = members[name]
            if hook not in cls.ATTRS and not callable(value):
                raise ContractError(f"scheme {manifest.name}: {kind} contribution's `{name}` is not callable")
            values[hook] = frozenset(value) if isinstance(value, (set, frozenset)) else value
    part = cls(manifest.name, found, **values)
    if isinstance(part, ViewPart) and part.view is not None and part.view.scheme != manifest.name:
        raise ContractError(f"scheme {manifest.name}: views contribution's VIEW.scheme is {part.view.scheme!r}, "
                            f"not {manifest.name!r}")
    return part


__all__ = ["LABELS_COLUMNS", "PARTS", "Command", "CommandsPart", "ContractError", "Contribution", "GuidelinePart", "IOPart", "ImportOption", "LLMPart",
           "Manifest", "Part", "StatusText", "StorePart", "ViewPart", "build_part", "problems_of"]
