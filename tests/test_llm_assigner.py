"""The bucket assigner against a real loopback OpenAI-compatible server, with the real openai client."""
from __future__ import annotations

import json
import logging
import threading
import time
from typing import Any

import pytest

from app.schemes.rubric.llm_assigner import AssignItem, RunSummary, assign_buckets, parse_buckets, MalformedOutput
from app.llm.cache import MemoryLLMCache, cache_key
from app.schemes.rubric.llm_prompts import build_messages
from app.llm.settings import LLMSettings
from calibration.schemes.rubric import MetricTrait, ground_buckets
from tests.fake_openai import FakeOpenAI, chat_completion

SENTINEL_KEY = "sk-SENTINEL-7f3a9c-do-not-leak"
TRAIT = MetricTrait(
    name="BCL2 Coverage",
    description="Core BCL2 facts.",
    metrics=["precision", "recall", "f1"],
    tp_instructions=["Mentions BCL2 gene", "States BCL2 is on chromosome 18"],
)
FULL = MetricTrait(
    name="BCL2 Accuracy",
    evaluation_mode="full_matrix",
    metrics=["specificity", "accuracy"],
    tp_instructions=["Mentions BCL2 gene"],
    tn_instructions=["Claims BCL2 is pro-apoptotic"],
)


def items(n: int) -> list[AssignItem]:
    return [AssignItem(f"s{i}", "Describe BCL2.", f"Sample {i}: BCL2 is an anti-apoptotic gene.") for i in range(n)]


def response_of(request: dict[str, Any]) -> str:
    user = request["messages"][1]["content"]
    return user.split("Response:\n<<<\n", 1)[1].split("\n>>>", 1)[0]


def good_reply(request: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """Quote the first clause of the response as TP, like a well-behaved model."""
    tp = response_of(request).split(":", 1)[1].strip().rstrip(".")
    body = {"tp": [tp], "fn": ["States BCL2 is on chromosome 18"], "fp": [], "tn": []}
    return 200, chat_completion(json.dumps(body), request["model"])


def reply(content: str) -> tuple[int, dict[str, Any]]:
    return 200, chat_completion(content)


class Recorder:
    """A sink that keeps every result, like the store would."""

    def __init__(self) -> None:
        self.results: dict[str, tuple[Any, str | None]] = {}
        self.order: list[str] = []

    def __call__(self, sample_id: str, trait: str, buckets: Any, error: str | None) -> None:
        assert trait in (TRAIT.name, FULL.name)
        self.results[sample_id] = (buckets, error)
        self.order.append(sample_id)


def settings(server: FakeOpenAI, **kw: Any) -> LLMSettings:
    base: dict[str, Any] = dict(model="fake-model", base_url=server.base_url, api_key=SENTINEL_KEY, backoff_base=0.01,
                                backoff_max=0.05, timeout=5.0, concurrency=1, max_retries=2, malformed_retries=2)
    base.update(kw)
    return LLMSettings(**base)


def run(server: FakeOpenAI, its: list[AssignItem], cache: MemoryLLMCache | None = None, trait: MetricTrait = TRAIT,
        sink: Recorder | None = None, **kw: Any) -> tuple[RunSummary, Recorder]:
    sink = sink or Recorder()
    cancel = kw.pop("cancel", None)
    progress = kw.pop("progress", None)
    summary = assign_buckets(its, trait, settings(server, **kw), cache, sink, progress=progress, cancel=cancel)
    return summary, sink


def test_good_output_is_sunk_cached_and_free_on_rerun(fake_openai: FakeOpenAI) -> None:
    fake_openai.default_chat = good_reply
    cache = MemoryLLMCache()
    summary, sink = run(fake_openai, items(3), cache, concurrency=2)
    assert (summary.succeeded, summary.failed, summary.requests, summary.from_cache) == (3, 0, 3, 0)
    buckets, error = sink.results["s1"]
    assert error is None and buckets["tp"] == ["BCL2 is an anti-apoptotic gene"] and buckets["tn"] == []
    assert summary.excerpts == 3 and summary.ungrounded == 0 and summary.snippet_validity == 1.0
    request = next(r for r in fake_openai.chat_requests() if "Sample 0:" in r["messages"][1]["content"])
    assert request["model"] == "fake-model" and request["temperature"] == 0.0
    assert request["response_format"] == {"type": "json_object"}
    system, user = request["messages"]
    assert system["role"] == "system" and "evaluator" in system["content"]
    for needle in ("Describe BCL2.", "Sample 0: BCL2", "1. Mentions BCL2 gene", "2. States BCL2 is on chromosome 18", "Core BCL2 facts."):
        assert needle in user["content"]
    assert len(cache.rows) == 3
    # a re-run is answered from the cache: no request, identical buckets
    again, sink2 = run(fake_openai, items(3), cache)
    assert (again.requests, again.from_cache, again.succeeded) == (0, 3, 3)
    assert len(fake_openai.chat_requests()) == 3
    assert sink2.results == sink.results
    # a different temperature is a different request
    changed, _ = run(fake_openai, items(1), cache, temperature=0.5)
    assert changed.requests == 1 and changed.from_cache == 0


def test_full_matrix_prompt_lists_tn_instructions(fake_openai: FakeOpenAI) -> None:
    body = {"tp": ["BCL2 is an anti-apoptotic gene"], "fn": [], "fp": [], "tn": ["Claims BCL2 is pro-apoptotic"]}
    fake_openai.default_chat = lambda req: reply(json.dumps(body))
    summary, sink = run(fake_openai, items(1), trait=FULL)
    assert summary.succeeded == 1 and sink.results["s0"][0]["tn"] == ["Claims BCL2 is pro-apoptotic"]
    user = fake_openai.chat_requests()[0]["messages"][1]["content"]
    assert "TN instructions" in user and "1. Claims BCL2 is pro-apoptotic" in user
    assert "TN instructions" not in build_messages(TRAIT, "q", "r")[1]["content"]


def test_malformed_then_good(fake_openai: FakeOpenAI) -> None:
    fake_openai.default_chat = good_reply
    fake_openai.chat_replies.extend([reply("Sure! Here are the buckets: {tp: [..."), reply('{"tp": "not a list"}')])
    summary, sink = run(fake_openai, items(1))
    assert summary.succeeded == 1 and summary.requests == 3
    assert sink.results["s0"][1] is None


def test_truncated_answer_is_asked_again(fake_openai: FakeOpenAI) -> None:
    """A valid-looking answer cut at the token limit is malformed: the run asks again (the engine's reject_truncated)."""
    cut = chat_completion(json.dumps({"tp": [], "fn": [], "fp": [], "tn": []}))
    cut["choices"][0]["finish_reason"] = "length"
    fake_openai.default_chat = good_reply
    fake_openai.chat_replies.append((200, cut))
    summary, sink = run(fake_openai, items(1))
    assert summary.succeeded == 1 and summary.requests == 2
    assert sink.results["s0"][0]["tp"] == ["BCL2 is an anti-apoptotic gene"]


def test_always_malformed_is_recorded_and_run_continues(fake_openai: FakeOpenAI) -> None:
    def answer(req: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if "Sample 1:" in response_of(req):  # tp_only answers must keep tn empty
            return reply(json.dumps({"tp": [], "fn": [], "fp": [], "tn": ["x"]}))
        return good_reply(req)

    fake_openai.default_chat = answer
    cache = MemoryLLMCache()
    summary, sink = run(fake_openai, items(3), cache, malformed_retries=1)
    assert (summary.succeeded, summary.failed) == (2, 1)
    assert summary.requests == 2 + 2  # the bad sample was asked twice (1 retry)
    buckets, error = sink.results["s1"]
    assert buckets is None and "malformed output after 2 attempts" in error and "tn" in error
    assert summary.failures == {"s1": error}
    assert sink.order == ["s0", "s1", "s2"]
    assert len(cache.rows) == 2  # malformed answers are never cached


@pytest.mark.parametrize("status", [429, 500, 503])
def test_transient_status_then_success(fake_openai: FakeOpenAI, status: int) -> None:
    fake_openai.default_chat = good_reply
    fake_openai.chat_replies.append((status, {"error": {"message": "busy", "type": "server_error"}}))
    summary, sink = run(fake_openai, items(2))
    assert (summary.succeeded, summary.failed, summary.requests) == (2, 0, 3)


def test_persistent_500_fails_that_sample_only(fake_openai: FakeOpenAI) -> None:
    fake_openai.default_chat = good_reply
    fake_openai.chat_replies.extend([(500, {"error": {"message": "down"}})] * 3)
    summary, sink = run(fake_openai, items(2), max_retries=2)
    assert summary.failed == 1 and summary.succeeded == 1 and summary.requests == 4
    assert "gave up after 3 attempts" in sink.results["s0"][1] and "500" in sink.results["s0"][1]


def test_bad_request_is_not_retried(fake_openai: FakeOpenAI) -> None:
    fake_openai.default_chat = good_reply
    fake_openai.chat_replies.append((400, {"error": {"message": "context length exceeded"}}))
    summary, sink = run(fake_openai, items(2))
    assert summary.requests == 2 and summary.failed == 1 and "context length" in sink.results["s0"][1]


@pytest.mark.xdist_group("timing")  # a wall-clock bound: not beside another such test (make test: --dist loadgroup)
def test_timeout_then_success(fake_openai: FakeOpenAI) -> None:
    fake_openai.default_chat = good_reply
    fake_openai.chat_replies.append({"sleep": 1.5})
    start = time.monotonic()
    summary, sink = run(fake_openai, items(1), timeout=0.3)
    assert summary.succeeded == 1 and summary.requests == 2
    assert len(fake_openai.chat_requests()) == 2
    assert time.monotonic() - start < 1.4  # the client gave up on the slow request instead of waiting for it


def test_fatal_status_aborts_without_blaming_samples(fake_openai: FakeOpenAI) -> None:
    fake_openai.chat_replies.append((401, {"error": {"message": "Incorrect API key provided"}}))
    summary, sink = run(fake_openai, items(3))
    assert summary.aborted is not None and "401" in summary.aborted
    assert sink.results == {} and summary.not_started == 3 and summary.requests == 1


def test_ungrounded_excerpts_are_flagged(fake_openai: FakeOpenAI) -> None:
    body = {"tp": ["BCL2 is an anti-apoptotic gene", "BCL2 cures baldness"], "fn": [], "fp": ["chromosome 7"], "tn": []}
    fake_openai.default_chat = lambda req: reply(json.dumps(body))
    its = items(2)
    summary, sink = run(fake_openai, its)
    assert summary.excerpts == 6 and summary.ungrounded == 4
    assert summary.ungrounded_by_sample == {"s0": 2, "s1": 2}
    assert summary.snippet_validity == pytest.approx(2 / 6)
    report = ground_buckets(its[0].response, sink.results["s0"][0])
    assert [e.text for e in report.ungrounded_excerpts()] == ["BCL2 cures baldness", "chromosome 7"]


def test_interrupted_run_resumes_without_repeating_calls(fake_openai: FakeOpenAI) -> None:
    fake_openai.default_chat = good_reply
    cache = MemoryLLMCache()
    sink = Recorder()
    its = items(6)
    first, _ = run(fake_openai, its, cache, sink=sink, cancel=lambda: len(sink.results) >= 2)
    assert first.cancelled and first.succeeded == 2 and first.not_started == 4
    assert len(fake_openai.chat_requests()) == 2
    # resume, the caller skipping what the store already has
    todo = [it for it in its if it.sample_id not in sink.results]
    second, _ = run(fake_openai, todo, cache, sink=sink)
    assert second.succeeded == 4 and not second.cancelled
    assert len(fake_openai.chat_requests()) == 6 and set(sink.results) == {it.sample_id for it in its}
    # or resume without skipping: finished items come from the cache, still no repeated call
    third, _ = run(fake_openai, its, cache, sink=Recorder())
    assert third.from_cache == 6 and len(fake_openai.chat_requests()) == 6


def test_cancel_via_event_and_progress(fake_openai: FakeOpenAI) -> None:
    fake_openai.default_chat = good_reply

    class Prog:
        def __init__(self) -> None:
            self.updates: list[tuple[int, int]] = []

        def update(self, done: int, total: int, message: str = "") -> None:
            self.updates.append((done, total))

        def cancelled(self) -> bool:
            return len(self.updates) > 3  # the initial update plus three results

    prog = Prog()
    summary, _ = run(fake_openai, items(5), progress=prog)
    assert summary.cancelled and summary.succeeded == 3 and prog.updates[0] == (0, 5) and prog.updates[-1] == (3, 5)
    event = threading.Event()
    event.set()
    summary, sink = run(fake_openai, items(2), cancel=event)
    assert summary.cancelled and summary.requests == 0 and sink.results == {}


def test_concurrency_is_bounded(fake_openai: FakeOpenAI) -> None:
    lock = threading.Lock()
    active = [0, 0]  # current, max

    def slow(req: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with lock:
            active[0] += 1
            active[1] = max(active[1], active[0])
        time.sleep(0.15)
        with lock:
            active[0] -= 1
        return good_reply(req)

    fake_openai.default_chat = slow
    summary, _ = run(fake_openai, items(8), concurrency=3)
    assert summary.succeeded == 8 and active[1] == 3


def test_api_key_never_reaches_cache_errors_or_logs(fake_openai: FakeOpenAI, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    # a misbehaving endpoint that echoes the credential back in its error bodies and answers
    echo = {"error": {"message": f"bad things with Authorization: Bearer {SENTINEL_KEY}"}}
    fake_openai.default_chat = good_reply
    fake_openai.chat_replies.extend([(500, echo)] * 3 + [(400, echo)] + [reply(f"nonsense {SENTINEL_KEY}")] * 3)
    cache = MemoryLLMCache()
    summary, sink = run(fake_openai, items(4), cache, max_retries=2, malformed_retries=2)
    assert summary.failed == 3 and summary.succeeded == 1
    errors = [e for _, e in sink.results.values() if e]
    assert len(errors) == 3 and sum("Bearer [REDACTED]" in e for e in errors) == 2  # the 500 and the 400 bodies
    blob = json.dumps(cache.rows) + json.dumps(errors) + repr(summary) + repr(settings(fake_openai)) + caplog.text
    assert SENTINEL_KEY not in blob
    assert "Authorization: Bearer [REDACTED]" in blob


def test_cache_key_and_parse_rules() -> None:
    msgs = build_messages(TRAIT, "q", "r")
    k = cache_key("m", msgs, {"temperature": 0.0})
    assert len(k) == 64 and k == cache_key("m", [dict(m) for m in msgs], {"temperature": 0.0})
    assert k != cache_key("m2", msgs, {"temperature": 0.0}) and k != cache_key("m", msgs, {"temperature": 0.1})
    assert parse_buckets('```json\n{"tp": ["a"]}\n```', TRAIT)["tp"] == ["a"]
    assert parse_buckets(json.dumps({TRAIT.name: {"fp": ["b"]}}), TRAIT)["fp"] == ["b"]
    for bad in ("", "[1, 2]", '{"tp": ["a"], "maybe": []}', '{"tn": ["x"]}'):
        with pytest.raises(MalformedOutput):
            parse_buckets(bad, TRAIT)
    assert parse_buckets('{"tn": ["x"]}', FULL)["tn"] == ["x"]


def test_settings_read_env_and_hide_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SENTINEL_KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    s = LLMSettings()
    assert s.resolved_api_key() == SENTINEL_KEY and s.resolved_base_url() == "http://127.0.0.1:9/v1"
    assert SENTINEL_KEY not in repr(s) and s.redact(f"x {SENTINEL_KEY} y") == "x [REDACTED] y"
    monkeypatch.delenv("OPENAI_API_KEY")
    from app.llm.settings import LLMConfigError

    with pytest.raises(LLMConfigError, match="OPENAI_API_KEY"):
        LLMSettings().resolved_api_key()
    with pytest.raises(LLMConfigError, match="concurrency"):
        LLMSettings(concurrency=0)
