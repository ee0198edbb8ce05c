"""The `rubric` scheme's LLM bucket assigner: one chat request per (sample, trait), validated JSON buckets, cached
and resumable.

A run is a plain function (`assign_buckets`) so the CLI and a GUI worker drive it the same way. The requests go
through the one chat engine (engine.run_chat: bounded concurrency, retries, cache, the sink on the calling thread);
this module only says what to ask (rubric_prompts.build_messages), how to check an answer (`parse_buckets`) and
what to count (grounding of the excerpts, empty excerpts dropped).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import openai

from app.llm.cache import LLMCache
from app.llm.engine import ChatJob, make_client, run_chat
from app.schemes.rubric.llm_prompts import build_messages
from app.llm.settings import LLMSettings
from app.progress import Progress
from calibration.schemes.answers import answer_json
from calibration.schemes.rubric import BucketError, Buckets, MetricTrait, ground_buckets, validate_buckets

__all__ = ["AssignItem", "MalformedOutput", "RunSummary", "assign_buckets", "make_client", "parse_buckets"]

Sink = Callable[[str, str, Buckets | None, str | None], None]


class MalformedOutput(ValueError):
    """The model answered, but not with valid bucket JSON for this trait."""


@dataclass(frozen=True, slots=True)
class AssignItem:
    sample_id: str
    question: str
    response: str


@dataclass
class RunSummary:
    total: int = 0
    succeeded: int = 0
    failed: int = 0
    from_cache: int = 0  # results answered by the cache without a request
    requests: int = 0  # HTTP requests sent, retries included
    not_started: int = 0  # items never attempted because the run was cancelled or aborted
    cancelled: bool = False
    aborted: str | None = None  # a fatal endpoint error (auth, unknown model) that stopped the run
    excerpts: int = 0  # TP/FP excerpts checked against their response
    dropped_empty: int = 0  # empty or whitespace-only excerpts dropped from answers (as Karenina's dedupe does)
    ungrounded: int = 0  # of those, how many could not be located
    failures: dict[str, str] = field(default_factory=dict)  # sample_id -> error
    ungrounded_by_sample: dict[str, int] = field(default_factory=dict)

    @property
    def snippet_validity(self) -> float | None:
        return None if not self.excerpts else 1.0 - self.ungrounded / self.excerpts


def _as_item(obj: AssignItem | Mapping[str, Any], i: int) -> AssignItem:
    if isinstance(obj, AssignItem):
        return obj
    try:
        return AssignItem(str(obj["sample_id"]), str(obj.get("question") or ""), str(obj["response"]))
    except (KeyError, TypeError) as exc:
        raise ValueError(f"items[{i}]: needs sample_id and response ({exc!r})") from None


def parse_buckets(content: str | None, trait: MetricTrait, dropped: list[str] | None = None) -> Buckets:
    """Parse and validate a model answer; raise MalformedOutput saying what is wrong.

    Empty or whitespace-only excerpts are dropped, not a reason to reject the answer (Karenina drops them while
    deduplicating); their paths are appended to `dropped` when given."""
    obj = answer_json(content, MalformedOutput)
    if isinstance(obj, dict) and len(obj) == 1 and isinstance(obj.get(trait.name), dict):
        obj = obj[trait.name]  # the spec's own examples key buckets by trait name
    try:
        buckets = validate_buckets(obj, dropped=dropped)
    except BucketError as exc:
        raise MalformedOutput(str(exc)) from None
    if trait.evaluation_mode == "tp_only" and buckets["tn"]:
        raise MalformedOutput("buckets.tn: must be empty in tp_only mode")
    return buckets


def assign_buckets(
    items: Iterable[AssignItem | Mapping[str, Any]],
    trait: MetricTrait,
    settings: LLMSettings,
    cache: LLMCache | None,
    sink: Sink,
    progress: Progress | None = None,
    cancel: Any = None,
    *,
    client: openai.OpenAI | None = None,
) -> RunSummary:
    """Assign buckets for every item; `sink(sample_id, trait_name, buckets, error)` persists each result.

    `cancel` may be a threading.Event, an object with `cancelled()`, or a callable; `progress.cancelled()` also
    stops the run. On cancel no new request starts; requests in flight finish and are sunk. Items whose request
    is answered by `cache` cost nothing, which is what makes re-runs free. The caller skips items it already has.
    """
    todo = [_as_item(x, i) for i, x in enumerate(items)]
    units = {u.sample_id: u for u in todo}
    summary = RunSummary(total=len(todo))

    def parse(content: str | None) -> tuple[Buckets, int]:
        dropped: list[str] = []
        return parse_buckets(content, trait, dropped), len(dropped)

    def on_result(sample_id: str, value: tuple[Buckets, int] | None, error: str | None) -> None:
        item = units[sample_id]
        if value is None:
            sink(sample_id, trait.name, None, error)
            summary.failed += 1
            summary.failures[sample_id] = error or "unknown error"
            return
        buckets, dropped = value
        sink(sample_id, trait.name, buckets, None)
        summary.succeeded += 1
        summary.dropped_empty += dropped
        report = ground_buckets(item.response, buckets)
        summary.excerpts += report.total
        summary.ungrounded += report.ungrounded
        if report.ungrounded:
            summary.ungrounded_by_sample[sample_id] = report.ungrounded

    jobs = [ChatJob(u.sample_id, build_messages(trait, u.question, u.response)) for u in todo]
    chat = run_chat(jobs, parse, settings, cache, on_result, progress, cancel, client=client,
                    label=f"assigning buckets for {trait.name}", reject_truncated=True, thread_name="bucket-assigner")
    summary.from_cache, summary.requests = chat.from_cache, chat.requests
    summary.not_started, summary.cancelled, summary.aborted = chat.not_started, chat.cancelled, chat.aborted
    return summary
