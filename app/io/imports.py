"""Import samples (violations and rubric records) from JSONL, CSV or Parquet into a project.

All or nothing: every record is read and validated first, every problem is collected, and only a clean file is
written, in one transaction. The store skips samples whose content hash is unchanged, so importing the same
file again changes nothing. The formats are documented in docs/formats.md and resources/schema/.
"""
from __future__ import annotations

import gc
import hashlib
import time
from dataclasses import dataclass, field
from pathlib import Path

from app.errors import UsageError
from app.io.formats import Source, read_source
from app.io.problems import ImportErrors, Location, Problem, Problems
from app.io.records import JSON_COLUMNS, RecordValidator, Validated
from app.progress import Progress, check
from app.store import Project, WriteCounts

RUBRIC_COLUMNS = ("question", "response", "traits")
PROGRESS_EVERY = 2000


@dataclass
class ImportReport:
    """What an import did. `changed` is False for a re-import of the same file."""

    path: Path
    format: str
    dataset: str
    records: int
    violation_samples: WriteCounts
    rubric_samples: WriteCounts
    violations: int  # ground-truth plus predicted violations in the file
    grounding: dict[str, int]  # how violations were placed: offsets, exact, casefold, fuzzy, ungrounded
    checkers: list[str]
    warnings: list[Problem] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def changed(self) -> bool:
        v, r = self.violation_samples, self.rubric_samples
        return bool(v.added or v.updated or r.added or r.updated)

    @property
    def ungrounded(self) -> int:
        return self.grounding.get("ungrounded", 0)

    def summary(self) -> str:
        v, r = self.violation_samples, self.rubric_samples
        lines = [f"{self.path}: {self.records} records into dataset {self.dataset!r} in {self.seconds:.1f} s"]
        if v.added or v.updated or v.unchanged:
            lines.append(f"  violations samples: {v.added} added, {v.updated} updated, {v.unchanged} unchanged; "
                         f"{self.violations} violations from {len(self.checkers)} checker(s)")
            located = {k: n for k, n in self.grounding.items() if k != "offsets" and n}
            if located:
                lines.append("  placed by quote: " + ", ".join(f"{n} {k}" for k, n in sorted(located.items())))
        if r.added or r.updated or r.unchanged:
            lines.append(f"  rubric samples: {r.added} added, {r.updated} updated, {r.unchanged} unchanged")
        if not self.changed:
            lines.append("  nothing changed (the project already holds these records)")
        return "\n".join(lines)


def import_file(project: Project, path: str | Path, *, dataset: str | None = None,
                progress: Progress | None = None) -> ImportReport:
    """Validate `path` completely, then write it in one transaction. Raises ImportErrors listing every problem."""
    # Millions of short-lived containers make the cyclic GC rescan everything again and again (a third of the
    # time at 100k samples); nothing here builds cycles, so pause it for the duration.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _import_file(project, Path(path), dataset, progress)
    finally:
        if was_enabled:
            gc.enable()


def _import_file(project: Project, path: Path, dataset: str | None, progress: Progress | None) -> ImportReport:
    t0 = time.perf_counter()
    problems = Problems()
    if progress is not None:
        progress.update(0, 0, f"reading {path.name}")
    src = read_source(path, problems, JSON_COLUMNS)
    if src.columns is not None:
        n_errors = len(problems.errors)
        _check_columns(src, problems)
        if len(problems.errors) > n_errors:  # a missing column: don't repeat it for every row
            problems.raise_if_any(path)
    out = _validate(project, src, problems, progress)
    if not src.n_lines:
        raise UsageError(f"{path}: the file holds no records")
    problems.raise_if_any(path)
    name = dataset or path.stem
    total = len(src.records)
    if progress is not None:
        progress.update(total, total, "writing")
    sha = _sha256(path)
    try:
        with project.transaction():
            known = project.dataset(name)
            if known is not None and known["sha256"] == sha:
                dataset_id = int(known["id"])  # the same file again: leave its row (and import time) alone
            else:
                dataset_id = project.add_dataset(name, str(path.resolve()), sha, total)
            vc = project.write_violation_samples(out.violations, out.groundings, out.metas, dataset_id)
            rc = project.write_rubric_samples(out.rubric, dataset_id)
    except ValueError as exc:  # the store's own consistency checks; validation should have caught these first
        raise UsageError(f"{path}: {exc}") from None
    checkers = sorted({c for s in out.violations for c in s.predictions})
    n_viol = sum(len(s.ground_truth) + sum(len(v) for v in s.predictions.values()) for s in out.violations)
    return ImportReport(path, src.format, name, total, vc, rc, n_viol, dict(out.how), checkers,
                        problems.warnings, time.perf_counter() - t0)


def _validate(project: Project, src: Source, problems: Problems, progress: Progress | None) -> Validated:
    validator = RecordValidator(problems, project.get_trait)
    records = src.records
    total = len(records)
    add = validator.add
    for i, rec in enumerate(records):
        if i % PROGRESS_EVERY == 0 and progress is not None:
            check(progress)
            progress.update(i, total, "validating")
        add(rec.location, rec.data)
    out = validator.finish()
    # An id may not switch scheme: a violations sample cannot be replaced by a rubric one (or vice versa).
    wanted = {s.id: "violations" for s in out.violations} | {s.id: "rubric" for s in out.rubric}
    for sid, scheme in project.sample_schemes(wanted).items():
        if scheme != wanted[sid]:
            problems.error(validator.location_of(sid), "id",
                           f"{sid!r} already exists in the project as a {scheme} sample")
    return out


def _check_columns(src: Source, problems: Problems) -> None:
    """A missing column is one problem for the file, not one per row."""
    cols = set(src.columns or ())
    whole = Location(str(src.path), None)
    missing: list[str] = []
    if "id" not in cols:
        missing.append("id")
    if "text" in cols:
        missing += [c for c in ("ground_truth", "predictions") if c not in cols]
    if cols.intersection(RUBRIC_COLUMNS):
        missing += [c for c in RUBRIC_COLUMNS if c not in cols]
    if "text" not in cols and not cols.intersection(RUBRIC_COLUMNS):
        problems.error(whole, "", "needs a 'text' column (violations records) or 'question', 'response' and "
                                  f"'traits' columns (rubric records); found {sorted(cols)}")
    for c in missing:
        problems.error(whole, c, "missing column")


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
