"""The `rubric` scheme's LLM run behind `concord assign PROJECT --trait NAME`: an LLM fills a trait's TP/FN/FP/TN
buckets for every rubric sample (app/schemes/rubric/llm_assigner.py, its prompts in app/schemes/rubric/llm_prompts.py), saved one by
one so an interrupted run continues where it stopped; answers are cached in the project. `concord assign` finds this
module as app/schemes/<scheme>/llm.py."""
from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console

from app.schemes.rubric.llm_assigner import RunSummary

ASSIGNER_VERSION = "1.0.0"  # bump when the prompt changes meaningfully: it is part of the source id


def default_source(model: str) -> str:
    """Checker-style id `name@version|model`, so assignments by different models/prompts never overwrite each other."""
    return f"bucket-assigner@{ASSIGNER_VERSION}|{model}"


def _print_summary(console: Console, summary: RunSummary, skipped: int, source: str) -> None:
    console.print(
        f"saved as [bold]{source}[/]: {summary.succeeded} assigned ({summary.from_cache} from cache), "
        f"{summary.failed} failed, {skipped} already done, {summary.requests} requests"
    )
    if summary.excerpts:
        console.print(
            f"grounding: {summary.ungrounded} of {summary.excerpts} TP/FP excerpts not found in their response "
            f"(snippet validity {summary.snippet_validity:.1%})"
        )
    if summary.dropped_empty:
        console.print(f"dropped {summary.dropped_empty} empty or whitespace-only excerpt(s) from the answers "
                      "(as Karenina's deduplication does)")


def assign_cli(args: argparse.Namespace) -> int:
    """Buckets for --trait from the chat model; exit 130 when interrupted, 1 when some unit failed."""
    from app.cli_progress import RichBar, sigint_cancels
    from app.errors import UsageError
    from app.schemes.rubric.llm_assigner import assign_buckets
    from app.llm.report import finish_run
    from app.llm.settings import DEFAULT_MODEL, LLMConfigError, LLMSettings
    from app.schemes.rubric.store import store_of
    from app.store import Project  # the store pulls in sqlite; keep `concord --help` light
    from calibration.schemes.rubric import MetricTrait, TraitError

    if not args.trait:
        raise UsageError("--trait: required (the metric trait whose buckets to assign)")
    console = Console(stderr=True)
    try:
        settings = LLMSettings(
            model=args.model or DEFAULT_MODEL, base_url=args.base_url, temperature=args.temperature,
            concurrency=args.concurrency, timeout=args.timeout,
        )
    except LLMConfigError as exc:
        raise UsageError(str(exc)) from None
    source = args.source or default_source(settings.model)
    with Project.open(args.project) as project:
        store = store_of(project)
        definition = store.get_trait(args.trait)
        if definition is None:
            known = ", ".join(repr(t["name"]) for t in store.traits()) or "none"
            raise UsageError(f"{args.project}: --trait: no trait named {args.trait!r} (traits in this project: {known})")
        try:
            trait = MetricTrait.from_dict(definition, strict=False)
        except TraitError as exc:
            raise UsageError(f"{args.project}: trait {args.trait!r}: {exc}") from None
        units = store.rubric_units(trait=trait.name)
        if args.limit is not None:
            units = units[: args.limit]
        todo = []
        for unit in units:
            existing = store.bucket_assignment(unit["sample_id"], trait.name, source)
            if existing is None or existing.get("buckets") is None:  # failures are retried
                todo.append(unit)
        skipped = len(units) - len(todo)

        def sink(sample_id: str, trait_name: str, buckets: Any, error: str | None) -> None:
            store.save_bucket_assignment(sample_id, trait_name, source, buckets, error)

        with sigint_cancels(console) as cancel, RichBar(console, label="assigning", cancel=cancel, transient=False) as progress:
            try:
                summary = assign_buckets(todo, trait, settings, project.caches, sink, progress=progress)
            except LLMConfigError as exc:
                raise UsageError(str(exc)) from None
        _print_summary(console, summary, skipped, source)
    return finish_run(console, summary)

