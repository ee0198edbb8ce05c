"""TRACe's LLM annotator (`concord assign --scheme trace`): RAGBench's sentence labeling asked of a chat model.

Every trace sample is sent once (calibration/schemes/trace/annotate.py: keyed document and response sentences in,
the dataset's label JSON out), on the chat engine the bucket assigner uses (engine.run_chat: bounded concurrency,
retries of 429/5xx/timeouts, malformed answers asked again, every valid answer cached in the project, the key read
from OPENAI_API_KEY and scrubbed from every stored error). An answer whose keys are not the sample's, or that leaves
a response sentence without an entry, is malformed; after the retries the sample's failure is recorded (machine
label without value, with the error) and a re-run tries it again.

Results are machine labels of source `llm:<model>` (or --source), and each labeled sample gets a unit of that
name beside the dataset's `annotator`: the list shows its four ragbench scores, the review view shows its labels
against the human's, and Accept takes them. Samples that already carry the source's labels are skipped (resume).
"""
from __future__ import annotations

from functools import partial
from typing import Any

from app.llm.engine import ChatJob, ChatSummary, run_chat
from app.llm.settings import LLMSettings
from app.progress import Progress
from calibration.schemes.trace.annotate import LLM_SOURCE_PREFIX, annotation_messages, label_value, labels_from_value, parse_annotation
from calibration.schemes.trace.metrics import SCORES
from calibration.schemes.trace.records import TraceLabels, TraceRecord
from calibration.schemes.trace.reference import score_record
from calibration.schemes.trace.scheme import NAME

SCHEME = NAME  # the scheme this adapter serves, named once in calibration/schemes/trace
SOURCE_PREFIX = LLM_SOURCE_PREFIX


def default_source(model: str) -> str:
    return f"{SOURCE_PREFIX}{model}"


def unit_summary(record: TraceRecord, labels: TraceLabels) -> dict[str, float | None]:
    """The unit list's figures, as for the dataset's annotator unit (ragbench variant)."""
    s = score_record(record, "ragbench", labels)
    return {k: (None if s[k] != s[k] else float(s[k])) for k in SCORES}


def _relist(project: Any, by_id: dict[str, TraceRecord], source: str, labeled: set[str]) -> None:
    """A re-import that changed a sample replaces its units; its LLM labels stay: list their unit again."""
    listed = {row["sample_id"] for row in project.units.unit_rows(SCHEME) if row["unit"] == source}
    for sid in sorted(labeled - listed):
        row = project.samples.machine_label(sid, source, source)
        if row is not None and row.get("value") is not None and sid in by_id:
            project.samples.save_machine_unit(sid, source, source, row["value"], None,
                                      unit_summary(by_id[sid], labels_from_value(row["value"])))


def annotate(project: Any, settings: LLMSettings, *, limit: int | None = None, source: str | None = None,
             progress: Progress | None = None, cancel: Any = None, client: Any = None) -> tuple[ChatSummary, int, str]:
    """Label every trace sample not labeled by `source` yet; returns (summary, samples already done, source)."""
    source = source or default_source(settings.model)
    records: list[TraceRecord] = project.samples.records(SCHEME)
    by_id = {r.id: r for r in records}
    labeled = {sid for sid, unit in project.samples.machine_labels(SCHEME, source).get(source, {}) if unit == source}
    _relist(project, by_id, source, labeled)
    todo = [r for r in records if r.id not in labeled]
    skipped = len(records) - len(todo)
    if limit is not None:
        todo = todo[:limit]
    # each answer is checked against its own sample's keys: a per-job parse
    jobs = [ChatJob(r.id, annotation_messages(r), partial(parse_annotation, record=r)) for r in todo]

    def sink(sid: str, parsed: Any, error: str | None) -> None:
        if parsed is None:
            project.samples.save_machine_unit(sid, source, source, None, error)
            return
        labels, explanations = parsed
        project.samples.save_machine_unit(sid, source, source, label_value(labels, explanations, settings.model), None,
                                  unit_summary(by_id[sid], labels))

    summary = run_chat(jobs, _no_parse, settings, project.caches, sink, progress, cancel, client=client,
                       label=f"annotating with {settings.model}")
    return summary, skipped, source


def _no_parse(content: str | None) -> Any:
    raise AssertionError("every trace job carries its own parse")


def assign_cli(args: Any) -> int:
    """`concord assign PROJECT --scheme trace [--model M] [--limit N]`: the LLM annotator, saved as it answers."""
    from rich.console import Console

    from app.cli_progress import RichBar, sigint_cancels
    from app.errors import UsageError
    from app.llm.report import finish_run
    from app.llm.settings import DEFAULT_MODEL, LLMConfigError
    from app.store import Project

    if getattr(args, "judge", False):
        raise UsageError("--judge: only for --scheme rgb; the trace annotator labels sentences (no --judge)")
    if getattr(args, "trait", None):
        raise UsageError("--trait: only for --scheme rubric")
    console = Console(stderr=True)
    try:
        settings = LLMSettings(model=args.model or DEFAULT_MODEL, base_url=args.base_url, temperature=args.temperature,
                               concurrency=args.concurrency, timeout=args.timeout)
    except LLMConfigError as exc:
        raise UsageError(str(exc)) from None
    with Project.open(args.project) as project:
        if not project.counts.sample_counts().get(SCHEME):
            raise UsageError(f"{args.project}: the project has no trace samples (import some first)")
        with sigint_cancels(console) as cancel, RichBar(console, label="annotating", cancel=cancel, transient=False) as bar:
            try:
                summary, skipped, source = annotate(project, settings, limit=args.limit, source=args.source,
                                                    progress=bar, cancel=cancel)
            except LLMConfigError as exc:
                raise UsageError(str(exc)) from None
    console.print(f"saved as {source}: {summary.succeeded} annotated ({summary.from_cache} from cache), "
                  f"{summary.failed} failed, {skipped} already done, {summary.requests} requests",
                  markup=False, soft_wrap=True)
    return finish_run(console, summary, unit="samples")
