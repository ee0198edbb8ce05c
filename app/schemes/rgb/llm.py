"""RGB's two LLM runs on the chat engine (engine.run_chat): generating responses and the paper's judged checks.

Generation (`concord generate`): for every RGB data-file query in the project (passage pools, no docs yet: what
`concord import en.json` stores), the docs are assembled exactly as RGB's processdata does (passages.assemble_docs,
seeded) and the model is asked RGB's own prompt (prompts.build_messages). The response is stored in the sample
`<query id>/noise<r>` (plus `/passage<n>` and `/correct<c>` when those differ from RGB's defaults 5 and 0), which
holds the docs, the pools and one unit per model: a second model, or a re-run, adds to it. Queries whose sample
already has the model's response are skipped (resume); every answer is cached in the project.

Judging (`concord assign --scheme rgb --judge`): RGB's reject_evalue.py asks "is the question addressed by the
documents?" of the rejection-task responses, fact_evalue.py "has the model identified the factual errors?" of
the counterfactual ones, with their prompts and reply parsers (prompts.py). Stored as machine labels of source
`llm_judge:<judge model>`: `rejected`, or `error_detected` and `error_corrected` (fact_evalue.py counts a
correction when the judge saw the error and no answer element is missing from the response, as rgb_original's
"no 0 label").
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from app.llm.engine import ChatJob, ChatSummary, nonempty_text, run_chat
from app.llm.settings import LLMSettings
from app.progress import Progress
from calibration.schemes.rgb.features import original_labels, original_view
from calibration.schemes.rgb.passages import RGB_SEED, assemble_docs
from calibration.schemes.rgb.prompts import (
    build_messages, fact_judge_messages, parse_fact_judge, parse_rejection_judge, rejection_judge_messages,
)
from calibration.schemes.rgb.records import RGBRecord
from calibration.schemes.rgb.scheme import NAME

SCHEME = NAME  # the scheme this adapter serves, named once in calibration/schemes/rgb
JUDGE_PREFIX = "llm_judge:"
DEFAULT_PASSAGES = 5  # evalue.py's --passage_num default


def judge_source(model: str) -> str:
    return f"{JUDGE_PREFIX}{model}"


def awaiting(record: RGBRecord) -> bool:
    """An RGB data-file query: passage pools, no docs and no response yet."""
    return record.positive is not None and not record.docs and not record.units


def target_id(base_id: str, noise_rate: float, passages: int = DEFAULT_PASSAGES, correct_rate: float = 0.0) -> str:
    out = f"{base_id}/noise{noise_rate:g}"
    if passages != DEFAULT_PASSAGES:
        out += f"/passage{passages}"
    if correct_rate:
        out += f"/correct{correct_rate:g}"
    return out


def dataset_for(record: RGBRecord) -> str:
    """The name processdata tests ("_int" / "_fact" in it) for the record's task."""
    return {"integration": f"{record.language}_int", "counterfactual": f"{record.language}_fact"}.get(
        record.task, record.language)


def task_at(record: RGBRecord, noise_rate: float) -> str:
    """RGB's rejection task is its plain data at noise rate 1."""
    if record.task in ("noise", "rejection"):
        return "rejection" if noise_rate == 1 else "noise"
    return record.task


def docs_for(record: RGBRecord, noise_rate: float, passages: int, seed: int | None = RGB_SEED,
             correct_rate: float = 0.0) -> list[str]:
    return assemble_docs(record, noise_rate, passages, dataset_for(record), correct_rate, seed)


def generate(project: Any, settings: LLMSettings, *, noise_rate: float = 0.0, passages: int = DEFAULT_PASSAGES,
             seed: int | None = RGB_SEED, correct_rate: float = 0.0, limit: int | None = None,
             progress: Progress | None = None, cancel: Any = None, client: Any = None) -> tuple[ChatSummary, int]:
    """Generate the responses of `settings.model`; returns the run's summary and how many were already there."""
    model = settings.model
    records = project.samples.records(SCHEME)
    current = {r.id: r for r in records}
    bases = [r for r in records if awaiting(r)]
    if limit is not None:
        bases = bases[:limit]
    jobs: list[ChatJob] = []
    skipped = 0
    for base in bases:
        tid = target_id(base.id, noise_rate, passages, correct_rate)
        target = current.get(tid)
        if target is not None and model in target.units:
            skipped += 1
            continue
        docs = list(target.docs) if target is not None else docs_for(base, noise_rate, passages, seed, correct_rate)
        jobs.append(ChatJob((base.id, tid, tuple(docs)), build_messages(base.query, docs, base.language)))
    by_id = {b.id: b for b in bases}
    datasets: dict[str, Any] = {}

    def sink(key: tuple[str, str, tuple[str, ...]], text: str | None, error: str | None) -> None:
        if text is None:
            return
        base_id, tid, docs = key
        base = by_id[base_id]
        target = current.get(tid)
        if target is None:
            target = replace(base, id=tid, task=task_at(base, noise_rate), docs=docs, response=None, model=None,  # type: ignore[arg-type]
                             noise_rate=float(noise_rate), responses=())
        target = replace(target, responses=(*((m, t) for m, t in target.responses if m != model), (model, text)))
        if base_id not in datasets:
            row = project.samples.sample_row(base_id)
            datasets[base_id] = None if row is None else row.get("dataset_id")
        project.samples.write_samples(SCHEME, [target], datasets[base_id])
        current[tid] = target

    summary = run_chat(jobs, nonempty_text, settings, project.caches, sink, progress, cancel, client=client,
                       label=f"generating responses of {model}")
    return summary, skipped


def _judged_kind(record: RGBRecord) -> str | None:
    if record.task == "counterfactual":
        return "fact"
    if record.full_noise:
        return "reject"
    return None


def judge_jobs(records: Sequence[RGBRecord], done: Callable[[str, str], bool]) -> tuple[list[ChatJob], int]:
    """One job per unit the paper judges (rejection-task and counterfactual responses) not judged yet."""
    jobs: list[ChatJob] = []
    skipped = 0
    for r in records:
        kind = _judged_kind(r)
        if kind is None:
            continue
        for unit in r.units:
            if done(r.id, unit):
                skipped += 1
                continue
            response = r.for_unit(unit).response or ""
            messages = rejection_judge_messages(r.query, response) if kind == "reject" else fact_judge_messages(response)
            jobs.append(ChatJob((r.id, unit, kind), messages))
    return jobs, skipped


def judge_value(record: RGBRecord, unit: str, kind: str, evaluation: str) -> dict[str, bool]:
    """The machine label of one judged unit."""
    if kind == "reject":
        return {"rejected": parse_rejection_judge(evaluation)}
    detected = parse_fact_judge(evaluation)
    one = record.for_unit(unit)
    nozero = 0 not in original_labels(original_view(one.response or "", one.language), one.elements)
    return {"error_detected": detected, "error_corrected": detected and nozero}


def judge(project: Any, settings: LLMSettings, *, limit: int | None = None, source: str | None = None,
          progress: Progress | None = None, cancel: Any = None, client: Any = None) -> tuple[ChatSummary, int, str]:
    """Judge every unit the paper judges; returns (summary, units already judged, source)."""
    source = source or judge_source(settings.model)
    records = project.samples.records(SCHEME)
    by_id = {r.id: r for r in records}

    def done(sid: str, unit: str) -> bool:
        row = project.samples.machine_label(sid, unit, source)
        return row is not None and row.get("value") is not None

    jobs, skipped = judge_jobs(records, done)
    if limit is not None:
        jobs = jobs[:limit]

    def sink(key: tuple[str, str, str], evaluation: str | None, error: str | None) -> None:
        sid, unit, kind = key
        value = None if evaluation is None else judge_value(by_id[sid], unit, kind, evaluation)
        project.samples.save_machine_label(sid, unit, source, value, error)

    summary = run_chat(jobs, nonempty_text, settings, project.caches, sink, progress, cancel, client=client,
                       label=f"judging with {settings.model}")
    return summary, skipped, source


def assign_cli(args: Any) -> int:
    """`concord assign PROJECT --scheme rgb --judge [--model M]`: the judged checks, saved as they arrive."""
    from rich.console import Console

    from app.cli_progress import RichBar, sigint_cancels
    from app.errors import UsageError
    from app.llm.report import finish_run
    from app.llm.settings import DEFAULT_MODEL, LLMConfigError
    from app.store import Project

    if not getattr(args, "judge", False):
        raise UsageError("--scheme rgb: add --judge (RGB's LLM-judged rejection and factual-error checks)")
    console = Console(stderr=True)
    try:
        settings = LLMSettings(model=args.model or DEFAULT_MODEL, base_url=args.base_url, temperature=args.temperature,
                               concurrency=args.concurrency, timeout=args.timeout, json_output=False)
    except LLMConfigError as exc:
        raise UsageError(str(exc)) from None
    with Project.open(args.project) as project:
        with sigint_cancels(console) as cancel, RichBar(console, label="judging", cancel=cancel, transient=False) as bar:
            try:
                summary, skipped, source = judge(project, settings, limit=args.limit, source=args.source,
                                                 progress=bar, cancel=cancel)
            except LLMConfigError as exc:
                raise UsageError(str(exc)) from None
    console.print(f"saved as {source}: {summary.succeeded} judged ({summary.from_cache} from cache), "
                  f"{summary.failed} failed, {skipped} already done, {summary.requests} requests",
                  markup=False, soft_wrap=True)
    return finish_run(console, summary, name=lambda key: f"{key[0]} / {key[1]}")
