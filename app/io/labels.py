"""Import human decisions made outside Concord, stored as events exactly like decisions made in the app.

One line per annotator and unit:
  violations: {"sample", "checker", "annotator", "matches": [[gt_index, pred_index], ...]}
              (the pairs the human says are the same violation; every other pair of that sample and checker is a
              human "not a match"; [] says nothing matches)
  rubric:     {"sample", "trait", "annotator", "buckets": {"tp": [...], "fn": [...], "fp": [...], "tn": [...]}}
  ground truth (a scheme whose io adapter has `ground_truth_label`, e.g. violations):
              {"sample", "annotator", "ground_truth": [V, ...]} or {"sample", "annotator", "spans": [{"start",
              "end", "label"[, "quote", "note"]}, ...]}: the annotator's curated ground truth of the sample
              (per-sample label, unit '')
  any other registered scheme: {"scheme", "sample", "unit" ('' or absent for the sample's own labels),
              "annotator", "<label kind>": value, ...} with the scheme's label kinds (e.g. addm's verdict and
              incidents per sample, quality per method), recorded as given; or one label per line, as export
              writes them: {"scheme", "sample", "unit", "annotator", "kind", "value"} ("resolved" is ignored)
Each line becomes the same changes the app's "accept" / "edit buckets" commands make (app.corrections): the
matches (or buckets) plus status 'accepted', recorded with origin 'import'. All or nothing, like sample import.
Re-importing a file changes nothing: a line is skipped when its annotator's newest imported decision for that
unit already says the same (so a later correction made in the app is not overwritten by importing the file again).
"""
from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.corrections import SetLabels
from app.io.formats import RawRecord, read_source
from app.io.problems import Location, Problem, Problems, type_name
from app.io.records import clip, io_adapter
from app.names import BadNameError, annotator_name, case_twins, case_warning
from app.progress import Progress, check
from app.store import Change, Project
from calibration.schemes.base import Scheme, registry

if TYPE_CHECKING:
    from app.schemes.contracts import IOPart

GENERIC_LABEL_KEYS = frozenset(("scheme", "sample", "unit", "annotator"))
KIND_FORM_KEYS = frozenset(("kind", "value", "resolved"))  # one label per line, as export writes them
STATUS = "accepted"  # what an imported decision says about its unit: a human has decided it


@dataclass
class LabelsReport:
    path: Path
    lines: int
    applied: int  # lines that changed something
    unchanged: int  # lines already imported with the same decision
    events: int
    annotators: list[str] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def changed(self) -> bool:
        return self.events > 0

    def summary(self) -> str:
        s = (f"{self.path}: {self.lines} decisions by {len(self.annotators)} annotator(s) in {self.seconds:.1f} s: "
             f"{self.applied} recorded ({self.events} events), {self.unchanged} already in the project")
        return s if self.changed else s + "\n  nothing changed"


@dataclass(frozen=True)
class _Line:
    location: Location
    annotator: str
    command: SetLabels


class _Checker:
    """Validates label lines against the project's samples; caches each sample's units."""

    def __init__(self, project: Project, problems: Problems) -> None:
        self.project = project
        self.problems = problems
        self._units: dict[str, dict[str, dict[str, Any]]] = {}
        self._seen: dict[tuple[str, str, str], Location] = {}
        self._unknown: dict[str, list[Any]] = {}
        self._schemes: dict[str, str] = {}  # sample id -> scheme (generic lines)
        self._own: dict[str, IOPart] | None = None
        self._names: dict[str, Location] = {}  # annotator -> first line naming them (the case check in `finish`)

    def units(self, sample_id: str) -> dict[str, dict[str, Any]]:
        if sample_id not in self._units:
            self._units[sample_id] = {u["unit"]: u for u in self.project.units.units_for_sample(sample_id)}
        return self._units[sample_id]

    def line(self, loc: Location, rec: dict[str, Any]) -> _Line | None:
        err = self.problems.error
        n_errors = len(self.problems.errors)
        if "ground_truth" in rec or "spans" in rec:
            return self._ground_truth(loc, rec)
        own = self.own_lines()
        named = rec.get("scheme")
        if named is not None:  # the line says its scheme; key guessing is only the fallback for older files
            if type(named) is not str or named not in own:
                if type(named) is str and named in registry():
                    return self.generic_line(loc, rec, registry().get(named))
                err(loc, "scheme", f"unknown scheme {named!r}; known: {', '.join(registry().names())}")
                return None
        else:
            hits = [n for n, a in own.items() if rec.keys() & {a.label_unit_key, a.label_value_key}]
            if len(hits) != 1:
                err(loc, "", "a decision line has either " + " or ".join(
                    f"'{a.label_unit_key}' and '{a.label_value_key}' ({n})" for n, a in own.items())
                    + "; when it is ambiguous, add \"scheme\"")
                return None
            named = hits[0]
        adapter = own[named]
        for name in rec.keys() - adapter.label_keys:
            self._unknown.setdefault(name, [loc, 0])[1] += 1
        annotator = self._annotator(loc, rec)
        sid = rec.get("sample")
        sid = str(sid) if type(sid) is int else sid
        sid = self._text(loc, {"sample": sid}, "sample")
        unit_key = str(adapter.label_unit_key)
        unit = self._text(loc, rec, unit_key)
        units = self.units(sid) if sid is not None else {}
        if sid is not None and not units:
            err(loc, "sample", f"no sample {clip(sid)} in the project (import the samples first)")
        elif sid is not None and unit is not None:
            scheme = next(iter(units.values()))["scheme"]
            if scheme != named:
                other = own.get(scheme)
                err(loc, unit_key, f"sample {clip(sid)} is a {scheme} sample; "
                                   + (f"use '{other.label_unit_key}' and '{other.label_value_key}'" if other is not None
                                      else f"give \"scheme\": \"{scheme}\" and its label kinds"))
            elif unit not in units:
                have = sorted(u for u in units if u)
                err(loc, unit_key, f"sample {clip(sid)} has no {unit_key} {clip(unit)}; it has {have}")
        if sid is not None and unit is not None and annotator is not None:
            target = (sid, unit, annotator)
            first = self._seen.get(target)
            if first is not None:
                err(loc, "", f"a second decision by {clip(annotator)} on this {unit_key} (first at {first})")
            else:
                self._seen[target] = loc
        ok = len(self.problems.errors) == n_errors
        assert adapter.label_command is not None  # own_lines holds only the schemes that declare it
        command = adapter.label_command(self.problems, loc, rec, sid, unit, units.get(unit) if ok else None, ok, STATUS)
        if command is None or not ok:
            return None
        assert annotator is not None
        return _Line(loc, annotator, command)

    def own_lines(self) -> dict[str, IOPart]:
        """Scheme name -> io part, for schemes whose label lines have a form of their own (their io contribution
        declares `label_command` with its keys: app/schemes/contracts.py), in registry order."""
        if self._own is None:
            self._own = {}
            for s in registry():
                adapter = io_adapter(s.name)
                if adapter.label_command is not None:
                    self._own[s.name] = adapter
        return self._own

    def generic_line(self, loc: Location, rec: dict[str, Any], scheme: Scheme) -> _Line | None:
        """A line of any other registered scheme: {"scheme", "sample", "unit" (default ''), "annotator", and values of
        the scheme's label kinds}; each value is checked by its kind and recorded as it is (no implied status)."""
        err = self.problems.error
        n_errors = len(self.problems.errors)
        kinds = scheme.label_kinds
        one_kind = "kind" in rec  # the form export writes: {"kind": name, "value": v} (and "resolved", ignored)
        for name in rec.keys() - GENERIC_LABEL_KEYS - kinds.keys() - (KIND_FORM_KEYS if one_kind else frozenset()):
            self._unknown.setdefault(name, [loc, 0])[1] += 1
        annotator = self._annotator(loc, rec)
        sid = rec.get("sample")
        sid = self._text(loc, {"sample": str(sid) if type(sid) is int else sid}, "sample")
        unit = rec.get("unit", "")
        if type(unit) is not str:
            err(loc, "unit", f"expected a string, got {type_name(unit)}")
            unit = None
        if sid is not None:
            if sid not in self._schemes:
                self._schemes.update(self.project.samples.sample_schemes([sid]))
            have = self._schemes.get(sid)
            if have is None:
                err(loc, "sample", f"no sample {clip(sid)} in the project (import the samples first)")
            elif have != scheme.name:
                err(loc, "scheme", f"sample {clip(sid)} is a {have} sample, not {scheme.name}")
            elif unit and unit not in self.units(sid):
                err(loc, "unit", f"sample {clip(sid)} has no {scheme.unit_noun} {clip(unit)}; it has "
                                 f"{sorted(u for u in self.units(sid) if u)}")
        changes = []
        given = {name: rec[name] for name in sorted(rec.keys() & kinds.keys())}
        if one_kind:
            name = rec["kind"]
            if type(name) is not str or name not in kinds:
                err(loc, "kind", f"unknown {scheme.name} label kind {name!r}; known: {', '.join(sorted(kinds))}")
                given = {}
            elif given:
                err(loc, "kind", "a line has either \"kind\" and \"value\" or label kinds as keys, not both")
                given = {}
            else:
                given = {name: rec.get("value")}
        for name, value in given.items():
            kind = kinds[name]
            if unit is not None and bool(unit) == kind.per_sample:
                err(loc, name, f"{name} belongs to the {'sample (leave out unit)' if kind.per_sample else scheme.unit_noun + ' (give unit)'}")
                continue
            where = "value" if one_kind else name
            for p in kind.validate(value):
                err(loc, f"{where}{'.' + p.field if p.field and not p.field.startswith('[') else p.field}", p.message)
            changes.append(Change(sid or "", unit or "", name, value))
        if not changes and len(self.problems.errors) == n_errors:
            err(loc, "", f"no label in the line; {scheme.name} labels: {', '.join(sorted(kinds))}")
        if sid is not None and unit is not None and annotator is not None:
            target = (sid, unit + "\x00" + str(rec["kind"]) if one_kind else unit, annotator)
            first = self._seen.get(target)
            if first is not None:
                err(loc, "", f"a second decision by {clip(annotator)} on this unit (first at {first})")
            else:
                self._seen[target] = loc
        if len(self.problems.errors) != n_errors or annotator is None:
            return None
        return _Line(loc, annotator, SetLabels(tuple(changes), f"import {scheme.name} labels"))

    def _ground_truth(self, loc: Location, rec: dict[str, Any]) -> _Line | None:
        """{"sample", "annotator", "ground_truth": [V, ...]} or "spans": the annotator's curated ground truth of the
        sample, validated by the sample's scheme (its io adapter's `ground_truth_label`) as sample import would."""
        err = self.problems.error
        n_errors = len(self.problems.errors)
        annotator = self._annotator(loc, rec)
        sid = rec.get("sample")
        sid = self._text(loc, {"sample": str(sid) if type(sid) is int else sid}, "sample")
        if sid is None:
            return None
        units = self.units(sid)
        if not units:
            err(loc, "sample", f"no sample {clip(sid)} in the project (import the samples first)")
            return None
        scheme = next(iter(units.values()))["scheme"]
        hook = io_adapter(scheme).ground_truth_label
        allowed = io_adapter(scheme).ground_truth_label_keys
        if hook is None:
            err(loc, "ground_truth" if "ground_truth" in rec else "spans",
                f"sample {clip(sid)} is a {scheme} sample, which has no ground truth to curate")
            return None
        if rec.get("scheme") not in (None, scheme):
            err(loc, "scheme", f"sample {clip(sid)} is a {scheme} sample, not {rec.get('scheme')!r}")
        for name in rec.keys() - allowed:
            self._unknown.setdefault(name, [loc, 0])[1] += 1
        row = self.project.samples.sample_row(sid) or {}
        kind, value, problems = hook(sid, str(row.get("text", "")), rec)
        for pr in problems:
            (err if pr.severity == "error" else self.problems.warn)(loc, pr.field, pr.message)
        if annotator is not None:
            target = (sid, "\x00" + kind, annotator)
            first = self._seen.get(target)
            if first is not None:
                err(loc, "", f"a second ground truth by {clip(annotator)} for this sample (first at {first})")
            else:
                self._seen[target] = loc
        if value is None or annotator is None or len(self.problems.errors) != n_errors:
            return None
        return _Line(loc, annotator, SetLabels((Change(sid, "", kind, value),), "import ground truth"))

    def _text(self, loc: Location, rec: dict[str, Any], name: str) -> str | None:
        value = rec.get(name)
        if type(value) is not str:
            self.problems.error(loc, name, "is required" if value is None else f"expected a string, got {type_name(value)}")
            return None
        if not value.strip():
            self.problems.error(loc, name, "must not be empty")
            return None
        return value

    def _annotator(self, loc: Location, rec: dict[str, Any]) -> str | None:
        """The line's annotator as the store keeps it (app.names: NFC, no control characters), or None (an error)."""
        value = self._text(loc, rec, "annotator")
        if value is None:
            return None
        try:
            name = annotator_name(value, "annotator")
        except BadNameError as exc:
            self.problems.error(loc, "annotator", str(exc).removeprefix("annotator: "))
            return None
        self._names.setdefault(name, loc)
        return name

    def finish(self) -> None:
        for a, b in case_twins(sorted(self._names), self.project.decisions.annotators()):  # said once per pair, where first seen
            where = self._names[b] if b in self._names else self._names[a]
            self.problems.warn(where, "annotator", case_warning([(a, b)]) or "")
        for name, (first, count) in self._unknown.items():
            where = f" (on {count} {first.unit}s)" if count > 1 else ""
            self.problems.warn(first, name, f"unknown field in a decision line, ignored{where}")


def import_labels(project: Project, path: str | Path, *, progress: Progress | None = None) -> LabelsReport:
    """Validate every line, then record all decisions in one transaction. Raises ImportErrors listing every problem."""
    t0 = time.perf_counter()
    path = Path(path)
    problems = Problems()
    src = read_source(path, problems, ("matches", "buckets", "ground_truth", "spans"))
    lines = check_lines(project, src.records, problems, progress)
    if not src.n_lines:
        problems.error(Location(str(path), None), "", "the file holds no decisions")
    problems.raise_if_any(path, "nothing was recorded")
    with project.transaction():
        applied, unchanged, events = record_lines(project, lines, progress)
    annotators = sorted({line.annotator for line in lines})
    return LabelsReport(path, len(lines), applied, unchanged, events, annotators, problems.warnings,
                        time.perf_counter() - t0)


def check_lines(project: Project, records: Sequence[RawRecord], problems: Problems,
                progress: Progress | None = None) -> list[_Line]:
    """The decisions of label lines (any form above) checked against the project's samples; bad ones go to
    `problems`. Also used by sample import for a file that carries its annotators' labels (FaithBench's batches),
    inside its transaction, after its samples are written."""
    checker = _Checker(project, problems)
    lines: list[_Line] = []
    total = len(records)
    for i, rec in enumerate(records):
        if i % 500 == 0 and progress is not None:
            check(progress)
            progress.update(i, total, "validating")
        line = checker.line(rec.location, rec.data)
        if line is not None:
            lines.append(line)
    checker.finish()
    return lines


def record_lines(project: Project, lines: Sequence[_Line], progress: Progress | None = None) -> tuple[int, int, int]:
    """Record checked decisions (inside the caller's transaction): (lines applied, lines unchanged, events). A line
    whose annotator's newest imported decision already says the same is skipped. A chunk of lines at a time, each
    chunk's decisions recorded together (`DecisionsPart.record_many`: the rows one `record` per line would write)."""
    from app.store.decision_batches import CHUNK

    applied = unchanged = events = 0
    imported: dict[str, dict[tuple[str, str, str], Any]] = {}
    for lo in range(0, len(lines), CHUNK):
        if progress is not None:
            progress.update(lo, len(lines), "recording")
        part = lines[lo:lo + CHUNK]
        new = [sid for sid in dict.fromkeys(line.command.changes[0].sample_id for line in part) if sid not in imported]
        imported.update(project.decisions.latest_imported(new))
        todo: list[tuple[str, Sequence[Change]]] = []
        for line in part:
            latest = imported[line.command.changes[0].sample_id]
            if all(latest.get((line.annotator, c.unit, c.kind), _MISSING) == c.after for c in line.command.changes):
                unchanged += 1
                continue
            todo.append((line.annotator, line.command.changes))
            for c in line.command.changes:
                latest[(line.annotator, c.unit, c.kind)] = c.after
        for ids in project.decisions.record_many(todo, origin="import"):
            applied += 1
            events += len(ids)
    return applied, unchanged, events


_MISSING = object()
