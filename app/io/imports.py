"""Import samples (records of any registered scheme) from JSONL, CSV, Parquet or a scheme's own format into a project.

All or nothing, in one transaction. A JSONL file is streamed (issue #18: a million samples in bounded memory): chunk
by chunk it is validated and, while no problem has been found, written inside one open transaction; after the first
problem the rest is still validated (every problem is reported) but nothing more is written, and the transaction is
rolled back. A line the project already holds verbatim (raw line hash, app.store.bulk) is not even parsed, and the
store skips samples whose content hash is unchanged, so importing the same file again changes nothing. CSV, Parquet
and schemes' own formats are read whole, validated, then written. The formats are documented in README.md
("Data formats") and resources/schema/.
"""
from __future__ import annotations

import gc
import hashlib
import time
from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from itertools import chain
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.errors import UsageError
from app.files import regular_file
from app.io import labelstudio
from app.io.formats import Source, detect_format, read_source
from app.io.parallel import (MIN_PARALLEL_BYTES, SPANNING_LIMIT, Part, PartResult, Pipeline, chunks, default_workers,
                             import_facts, prepared_rows)
from app.io.problems import Location, Problem, Problems
from app.io.records import JSON_COLUMNS, RecordValidator, Validated, io_adapter, project_contexts
from app.progress import Progress, check
from app.schemes.loader import import_options
from app.store import Project, WriteCounts
from app.store.bulk import CAN_PACK, LineHashReader
from calibration import jsontext
from calibration.schemes.base import registry
from calibration.schemes.fields import WARNING_KINDS

PROGRESS_EVERY = 2000
# Secondary indexes are dropped and built again after the import when it brings at least this many times the
# samples the project holds (and at least REBUILD_MIN): one sorted build beats updating them row by row then.
REBUILD_RATIO = 2
REBUILD_MIN = 20_000
# The caller reads every line hash the project holds at once (app.store.bulk.LineHashReader) when the file has at
# least 1/PRELOAD_RATIO the project's samples: one pass over them then costs less than looking the file's up.
PRELOAD_RATIO = 2


@dataclass
class ImportReport:
    """What an import did. `changed` is False for a re-import of the same file."""

    path: Path
    format: str
    dataset: str
    records: int
    counts: dict[str, WriteCounts] = field(default_factory=dict)  # scheme -> samples added, updated, unchanged
    facts: dict[str, Any] = field(default_factory=dict)  # scheme -> what its io part says of the records (`facts`)
    warnings: list[Problem] = field(default_factory=list)
    seconds: float = 0.0
    labels: tuple[int, int, int] = (0, 0, 0)  # decisions the file carries (Source.labels): applied, unchanged, events
    annotators: list[str] = field(default_factory=list)  # whose decisions those are

    @property
    def changed(self) -> bool:
        return bool(self.labels[2] or any(c.added or c.updated for c in self.counts.values()))

    def summary(self) -> str:
        lines = [f"{self.path}: {self.records} records into dataset {self.dataset!r} in {self.seconds:.1f} s"]
        order = {name: i for i, name in enumerate(registry().names())}
        for name in sorted(self.counts, key=lambda n: order.get(n, len(order))):  # the registry's order
            c = self.counts[name]
            if not (c.added or c.updated or c.unchanged):
                continue
            facts = self.facts.get(name)
            if facts is None:
                hook = io_adapter(name).facts
                facts = hook(None) if hook is not None else None  # (every record skipped unparsed: no facts made)
            lines.append(f"  {name} samples: {c.added} added, {c.updated} updated, {c.unchanged} unchanged"
                         + (facts.note() if facts is not None else ""))
            if facts is not None:
                lines += facts.lines()
        if any(self.labels):
            lines.append(f"  human labels: {self.labels[0] + self.labels[1]} decisions by {len(self.annotators)} "
                         f"annotator(s): {self.labels[0]} recorded ({self.labels[2]} events), {self.labels[1]} already "
                         "in the project")
        if not self.changed:
            lines.append("  nothing changed (the project already holds these records)")
        if self.warnings:
            lines.append(f"  {len(self.warnings)} warning(s) (listed above)" + "".join(
                f"; {n} {WARNING_KINDS[code]}" for code, n in self.warning_counts().items() if code in WARNING_KINDS))
        return "\n".join(lines)

    def warning_counts(self) -> dict[str, int]:
        """Lines per kind of coded warning (an empty excerpt dropped, a metric named twice, an unknown field)."""
        out: dict[str, int] = {}
        for w in self.warnings:
            if w.code:
                out[w.code] = out.get(w.code, 0) + w.count
        return out


def import_file(project: Project, path: str | Path, *, dataset: str | None = None,
                progress: Progress | None = None, workers: int | None = None,
                options: Mapping[str, Any] | None = None) -> ImportReport:
    """Validate `path` completely, then write it in one transaction. Raises ImportErrors listing every problem.

    `workers`: processes for a JSONL file (None: all cores for files over 16 MB, else 1); see app.io.parallel.
    `options`: what a scheme's own file reader needs (e.g. `model` for an RGB prediction file).
    """
    path = Path(path)
    if not path.is_dir():  # (a directory gets read_source's own advice)
        regular_file(path, "data file", missing_ok=True)  # a FIFO would block the readers: refused at once
    options = dict(options or {})
    problems = Problems()
    own = labelstudio.read_file(path, problems, options, project)
    if own is not None:
        _refuse_options(path, options, labelstudio.OPTIONS)
    else:
        _refuse_options(path, {k: v for k, v in options.items() if k in labelstudio.OPTIONS}, ())  # before reading
        reader, own = _scheme_source(project, path, problems, options)
        _refuse_options(path, options, import_options([reader] if reader else []))
    if own is not None:
        return _import_file(project, path, dataset, progress, own, problems)
    if path.suffix.lower() == ".json" and path.is_file():  # the schemes' own .json files were tried above
        broken = _json_problem(path)
        what = (f"{broken}; a .json file must be one of RGB's data or prediction files, an ADDM run file or a "
                "FaithBench batch file or a Label Studio export" if broken
                else "this .json file is not one of RGB's data or prediction files, an ADDM run file nor a FaithBench "
                     "batch file (nor a Label Studio export: an array of tasks with `data`)")
        raise UsageError(f"{path}: {what}; other records go in .jsonl (one object per line; a JSON array converts with "
                         "`jq -c '.[]' FILE > FILE.jsonl`), .csv or .parquet")
    if workers is None:
        big = path.suffix.lower() in (".jsonl", ".ndjson") and path.is_file() and path.stat().st_size >= MIN_PARALLEL_BYTES
        workers = default_workers() if big else 1
    jsonl = detect_format(path) == "jsonl" and path.is_file()
    parallel = workers > 1 and jsonl and not project.conn.in_transaction
    # Millions of short-lived containers make the cyclic GC rescan everything again and again (a third of the
    # time at 100k samples); nothing here builds cycles, so pause it for the duration.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        if jsonl:
            return _import_jsonl(project, path, dataset, progress, workers if parallel else 1)
        return _import_file(project, path, dataset, progress)
    finally:
        if was_enabled:
            gc.enable()


def _json_problem(path: Path) -> str | None:
    """What keeps a .json file from being read as one JSON document (truncated, NaN, UTF-16, ...), with the line and
    column; None when it is one, or when it is JSON lines (one object per line: the schemes' readers judged it)."""
    if path.stat().st_size > SPANNING_LIMIT:
        return None  # (not read whole again just to word the message)
    data = path.read_bytes()
    try:
        jsontext.loads(data)
    except jsontext.JSONTextError as exc:
        if exc.message.endswith("unexpected content after document") and exc.line and exc.line > 1:
            return None  # several documents, one per line: JSON lines, not a truncated document
        return str(exc)
    return None


def _scheme_source(project: Project, path: Path, problems: Problems,
                   options: Mapping[str, Any]) -> tuple[str | None, Source | None]:
    """A scheme's own file format (e.g. RGB's data and prediction files), read by its io adapter's `read_file`
    (app/schemes/<name>/io.py), which returns None for a file that is not one of its formats; with the scheme."""
    for name in registry().names():
        read = io_adapter(name).read_file
        if read is not None:
            src = read(path, problems, options, project)
            if src is not None:
                return name, src
    return None, None


def _refuse_options(path: Path, options: Mapping[str, Any], allowed: Collection[str]) -> None:
    """Refuse an import option the reader of this file does not take (a scheme's reader takes the options its io
    contribution declares; a Label Studio export, labelstudio.OPTIONS), naming who takes it."""
    declared = import_options()
    for name, value in options.items():
        if not value or name in allowed:
            continue
        flag = "--" + name.replace("_", "-")
        if name in labelstudio.OPTIONS:
            why = "only a Label Studio export takes it"
        elif name in declared:
            why = declared[name].refused
        else:
            why = "no reader of a registered scheme takes it"
        raise UsageError(f"{path}: {flag}: {why} (this is not one)")


def _import_file(project: Project, path: Path, dataset: str | None, progress: Progress | None,
                 own: Source | None = None, problems: Problems | None = None) -> ImportReport:
    t0 = time.perf_counter()
    problems = problems if problems is not None else Problems()
    if progress is not None:
        progress.update(0, 0, f"reading {path.name}")
    src = own if own is not None else read_source(path, problems, JSON_COLUMNS)
    if src.columns is not None:
        n_errors = len(problems.errors)
        _check_columns(src, problems)
        if len(problems.errors) > n_errors:  # a missing column: don't repeat it for every row
            problems.raise_if_any(path)
    out = _validate(project, src, problems, progress)
    problems.raise_if_any(path)  # (first: a file-wide problem, e.g. UTF-16, is why no record was read)
    if not src.n_lines:
        raise UsageError(f"{path}: the file holds no records")
    name = dataset or default_dataset(path, out.records)
    total = len(src.records)
    if progress is not None:
        progress.update(total, total, "writing")
    sha = _sha256(path)
    try:
        with project.transaction():
            dataset_id = _dataset_id(project, name, path, sha, total)
            own = {scheme: _write_prepared(project, scheme, rows, dataset_id, {})
                   for scheme, rows in prepared_rows(out, {}).items()}  # schemes with store writes of their own
            counts = {scheme: project.samples.write_samples(scheme, recs, dataset_id) for scheme, recs in out.records.items()}
            labeled = _record_labels(project, src, problems, path)
    except ValueError as exc:  # the store's own consistency checks; validation should have caught these first
        raise UsageError(f"{path}: {exc}") from None
    report = ImportReport(path, src.format, name, total, {}, import_facts(out), problems.warnings,
                          time.perf_counter() - t0, *labeled)
    for scheme, c in [*own.items(), *counts.items()]:
        counts_of(report, scheme).add(c)
    return report


def _record_labels(project: Project, src: Source, problems: Problems, path: Path
                   ) -> tuple[tuple[int, int, int], list[str]]:
    """The human decisions the file carries (Source.labels), checked against the samples just written and recorded
    in the import's transaction: a bad one raises (the whole import is rolled back)."""
    if not src.labels:
        return (0, 0, 0), []
    from app.io.labels import check_lines, record_lines

    lines = check_lines(project, src.labels, problems)
    problems.raise_if_any(path)
    return record_lines(project, lines), sorted({line.annotator for line in lines})


class _Stream:
    """What a streamed import has seen and written so far (chunks arrive in file order)."""

    def __init__(self, project: Project, path: Path, dataset: str | None, contexts: Mapping[str, Any]) -> None:
        self.project, self.path, self.dataset = project, path, dataset
        self.problems = Problems()
        self.validator = RecordValidator(self.problems, contexts)
        self.records = self.lines = 0
        self.facts: dict[str, Any] = {}  # scheme -> its io part's facts, merged in file order
        self.counts: dict[str, WriteCounts] = {}
        self.unchanged: Counter[str] = Counter()
        self.generic: dict[str, None] = {}  # generic schemes in order of appearance (the default dataset name)
        self.dataset_id: int | None = None
        self.spanning = False

    def add(self, r: PartResult) -> None:
        problems = self.problems
        if self.spanning:
            return  # the file is one JSON document: its first chunk said so, the rest is noise
        self.spanning = r.spanning
        problems.errors.extend(r.errors)
        problems.warnings.extend(r.warnings)
        self.validator.absorb(r.state)
        self.records += r.records
        self.lines += r.lines
        for scheme, facts in r.facts.items():
            if scheme in self.facts:
                self.facts[scheme].merge(facts)
            else:
                self.facts[scheme] = facts
        self.unchanged.update(r.unchanged)
        self.generic.update(dict.fromkeys(r.generic))
        _check_schemes(self.project, r.schemes, self.validator, problems)  # listed with every other problem
        if problems.errors:
            return  # keep validating, stop writing: the transaction will be rolled back
        project = self.project
        if self.dataset_id is None:
            name = self.dataset or default_dataset(self.path, self.generic)
            known = project.samples.dataset(name)
            self.dataset_id = int(known["id"]) if known is not None else project.samples.add_dataset(name, str(self.path.resolve()), None, 0)
        try:
            for scheme, prepared in r.prepared.items():
                counts_of(self, scheme).add(_write_prepared(project, scheme, prepared, self.dataset_id, r.line_hashes))
            for scheme, recs in r.generic.items():
                counts_of(self, scheme).add(project.samples.write_samples(scheme, recs, self.dataset_id, r.line_hashes))
        except ValueError as exc:  # the store's own consistency checks; validation should have caught these first
            raise UsageError(f"{self.path}: {exc}") from None

    def finish(self, sha: str) -> str:
        """The dataset row (as a whole-file import leaves it); the lines skipped unparsed join the counts."""
        self.validator.finish()
        if not self.lines:
            raise UsageError(f"{self.path}: the file holds no records")
        self.problems.raise_if_any(self.path)
        name = self.dataset or default_dataset(self.path, self.generic)
        _dataset_id(self.project, name, self.path, sha, self.records)
        for scheme, n in self.unchanged.items():
            counts_of(self, scheme).unchanged += n
        return name


def _write_prepared(project: Project, scheme: str, prepared: Any, dataset_id: int | None,
                    line_hashes: Mapping[str, bytes]) -> WriteCounts:
    """Write what the scheme's io adapter prepared (`prepare`, in a worker or here) with its `write_prepared`."""
    write = io_adapter(scheme).write_prepared
    assert write is not None  # a scheme that prepares declares both (app/schemes/contracts.py)
    return write(project, prepared, dataset_id, line_hashes)


def counts_of(report: ImportReport | _Stream, scheme: str) -> WriteCounts:
    """Where a scheme's samples are counted (made on first use)."""
    return report.counts.setdefault(scheme, WriteCounts())


def _import_jsonl(project: Project, path: Path, dataset: str | None, progress: Progress | None,
                  workers: int) -> ImportReport:
    """Stream a JSONL file in chunks (see the module's docstring); `workers` > 1 validates them in processes."""
    t0 = time.perf_counter()
    size = path.stat().st_size
    if progress is not None:
        progress.update(0, size, f"reading {path.name}" + (f" ({workers} processes)" if workers > 1 else ""))
    contexts = project_contexts(project)
    lookup = str(project.path) if project.bulk.has_line_hashes() else None
    stream = _Stream(project, path, dataset, contexts)
    sha = hashlib.sha256()
    bulk = project.bulk
    # a first load's workers send their rows packed (app.io.parallel.packed): read as each chunk is cut, so only chunks
    # cut inside first_load below are (the writer takes packed rows only there; the first few are cut before it)
    parts = (Part(str(path), a, b, line, lookup, contexts, data, None, CAN_PACK and bulk.into_empty)
             if type(data) is bytes
             else Part(str(path), a, b, line, lookup, contexts, b"", data.field)  # an Overlong line
             for a, b, line, data in chunks(path, hasher=sha))
    expected, held = _expected_lines(path, size), project.bulk.n_samples()
    reader = LineHashReader(lookup, preload=held <= PRELOAD_RATIO * expected) if lookup is not None else None
    pipeline = Pipeline(parts, workers - 1, reader)
    rebuild = expected >= REBUILD_MIN and expected >= REBUILD_RATIO * held
    try:
        results = iter(pipeline)
        # The first chunk is validated before the transaction begins: a large first load is written with a rollback
        # journal (bulk.first_load), and switching to it rewrites the file's header, so a file refused at its first
        # chunk (a wrong format, an encoding, a broken first line) is refused before: the project stays byte for byte.
        head = next(results, None)
        journal = rebuild and head is not None and not head.errors
        with bulk.first_load(journal), project.transaction(), bulk.bulk_write(rebuild):
            for result in chain(() if head is None else (head,), results):
                check(progress)
                stream.add(result)
                if progress is not None:
                    progress.update(result.end, size, "importing")
            name = stream.finish(sha.hexdigest())
    finally:
        pipeline.close()
        if reader is not None:
            reader.close()
    return ImportReport(path, "jsonl", name, stream.records, stream.counts, stream.facts, stream.problems.warnings,
                        time.perf_counter() - t0)


def _expected_lines(path: Path, size: int) -> float:
    """About how many lines the file holds (from its first megabyte)."""
    with open(path, "rb") as fh:
        head = fh.read(1 << 20)
    return size / max(1.0, len(head) / max(1, head.count(b"\n")))


def default_dataset(path: Path, schemes: Iterable[str]) -> str:
    """The dataset name without --dataset: the first `default_dataset(path)` of the file's schemes' io adapters
    that names one (e.g. `covidqa/test.parquet` -> `covidqa-test`), else the file name without extension."""
    for scheme in schemes:
        hook = io_adapter(scheme).default_dataset
        name = hook(path) if hook is not None else None
        if name:
            return str(name)
    return path.stem


def _dataset_id(project: Project, name: str, path: Path, sha: str, total: int) -> int:
    known = project.samples.dataset(name)
    if known is not None and known["sha256"] == sha:
        return int(known["id"])  # the same file again: leave its row (and import time) alone
    return project.samples.add_dataset(name, str(path.resolve()), sha, total)


def _check_schemes(project: Project, wanted: dict[str, str], validator: RecordValidator, problems: Problems) -> None:
    """An id may not switch scheme: a violations sample cannot be replaced by a rubric one (or vice versa)."""
    for sid, scheme in project.samples.sample_schemes(wanted).items():
        if scheme != wanted[sid]:
            problems.error(validator.location_of(sid), "id", f"{sid!r} already exists in the project as a {scheme} sample")


def _validate(project: Project, src: Source, problems: Problems, progress: Progress | None) -> Validated:
    validator = RecordValidator(problems, project_contexts(project))
    records = src.records
    total = len(records)
    add = validator.add
    for i, rec in enumerate(records):
        if i % PROGRESS_EVERY == 0 and progress is not None:
            check(progress)
            progress.update(i, total, "validating")
        add(rec.location, rec.data)
    out = validator.finish()
    _check_schemes(project, out.schemes, validator, problems)
    return out


def _check_columns(src: Source, problems: Problems) -> None:
    """A missing column is one problem for the file, not one per row. Whose table it is: the one scheme whose
    required keys are all columns, else the schemes whose io part's `table_columns` claims it (e.g. the rubric's
    table from any one of its columns); each names the columns it lacks."""
    cols = set(src.columns or ())
    whole = Location(str(src.path), None)
    missing: list[str] = [] if "id" in cols else ["id"]
    if "scheme" not in cols:  # (else each row names its scheme: its parser reports what a row lacks)
        found = [s for s in registry().detect(dict.fromkeys(cols)) if s.required_keys <= cols]
        names = [found[0].name] if len(found) == 1 else registry().names()
        claims = [(name, hook(cols)) for name in names if (hook := io_adapter(name).table_columns) is not None]
        claimed = [m for _, m in claims if m is not None]
        if not found and not claimed:
            wanted = "; ".join(f"{', '.join(repr(k) for k in sorted(s.required_keys))} ({s.name} records)"
                               for s in registry())
            problems.error(whole, "", f"needs the columns of one scheme's records: {wanted}; or a 'scheme' "
                                      f"column; found {sorted(cols)}")
        for more in claimed:
            missing += [c for c in more if c not in missing]
    for c in missing:
        problems.error(whole, c, "missing column")


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
