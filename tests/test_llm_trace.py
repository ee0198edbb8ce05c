"""TRACe's LLM annotator against the loopback OpenAI-compatible server with the real openai client: the prompt
carries the keyed sentences, answers are checked against the sample, results are machine labels `llm:<model>`
listed as a unit, runs resume from the project, failures are recorded, the key is never stored."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from app.store import Project
from calibration.schemes.trace.annotate import AnnotationError, labels_from_value, parse_annotation, user_prompt
from calibration.schemes.trace.scheme import SCHEME
from tests.fake_openai import FakeOpenAI, chat_completion
from tests.test_trace_data import keyed_record, record

SENTINEL_KEY = "sk-SENTINEL-trace-91c2-do-not-leak"
SOURCE = "llm:fake-model"


def good_answer(prompt: str, *, bad_key: bool = False, drop_last: bool = False) -> dict[str, Any]:
    """A well-behaved model: the first document sentence is relevant and used, response sentence a is supported by
    it, the others are not. Keys are read back from the prompt, as a model would."""
    doc_block = prompt.split("'0b.' to refer to it:\n```\n", 1)[1].split("\n```", 1)[0]
    resp_block = prompt.split("unrelated to the document keys):\n```\n", 1)[1].split("\n```", 1)[0]
    docs = [line.split(". ", 1)[0] for line in doc_block.splitlines() if ". " in line and not line.startswith("Document")]
    resp = [line.split(". ", 1)[0] for line in resp_block.splitlines()]
    if drop_last:
        resp = resp[:-1]
    entries = [{"response_sentence_key": k, "explanation": f"why {k}", "fully_supported": i == 0,
                "supporting_sentence_keys": [docs[0]] if i == 0 else []} for i, k in enumerate(resp)]
    return {"relevance_explanation": "doc 0 answers it", "all_relevant_sentence_keys": [docs[0], "9z" if bad_key else docs[1]],
            "overall_supported_explanation": "b is not in the documents", "overall_supported": len(resp) == 1,
            "sentence_support_information": entries, "all_utilized_sentence_keys": [docs[0], docs[0]]}


def reply_with(**kw: Any) -> Any:
    def reply(request: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        prompt = request["messages"][-1]["content"]
        return 200, chat_completion("```json\n" + json.dumps(good_answer(prompt, **kw)) + "\n```", request["model"])
    return reply


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "p.concord"
    recs = [keyed_record("t1", doc_sizes=(3, 2), n_response=2, all_relevant_sentence_keys=["0a"],
                         all_utilized_sentence_keys=["0a"], unsupported_response_sentence_keys=[]),
            keyed_record("t2", doc_sizes=(2,), n_response=3),
            keyed_record("t3", doc_sizes=(4,), n_response=1)]
    recs[1]["question"], recs[2]["question"] = "Second?", "Third?"
    with Project.create(path) as p:
        p.samples.write_samples("trace", [SCHEME.parse(r).record for r in recs])
    return path


def assign(path: Path, server: FakeOpenAI, *extra: str) -> int:
    return main(["assign", str(path), "--scheme", "trace", "--model", "fake-model", "--base-url", server.base_url, *extra])


def test_prompt_carries_keyed_sentences_and_the_dataset_fields() -> None:
    rec = record(keyed_record("x", doc_sizes=(2, 1), n_response=2))
    p = user_prompt(rec)
    assert "0a. Sentence 0 of document 0.\n0b. Sentence 1 of document 0." in p
    assert "Document 1:\n1a. Sentence 0 of document 1." in p
    assert "a. Response sentence 0.\nb. Response sentence 1." in p
    for field in ("all_relevant_sentence_keys", "all_utilized_sentence_keys", "sentence_support_information",
                  "overall_supported", "supporting_sentence_keys", "fully_supported"):
        assert field in p


def test_parse_checks_keys_against_the_sample() -> None:
    rec = record(keyed_record("x", doc_sizes=(2, 1), n_response=2))
    good = good_answer(user_prompt(rec))
    labels, expl = parse_annotation(json.dumps(good), rec)
    assert labels.relevant == ("0a", "0b") and labels.utilized == ("0a",)  # a repeated key kept once
    assert labels.unsupported == ("b",) and labels.adherence is False
    assert [s.supporting_sentence_keys for s in labels.support] == [("0a",), ()]
    assert expl == {"relevance_explanation": "doc 0 answers it", "overall_supported_explanation": "b is not in the documents"}
    # RAGBench's "0b." spelling and its support markers are accepted
    odd = {**json.loads(json.dumps(good)), "all_relevant_sentence_keys": ["0b."]}
    odd["sentence_support_information"][1] = {"response_sentence_key": "b", "fully_supported": True,
                                              "supporting_sentence_keys": ["general"]}
    labels, _ = parse_annotation(json.dumps(odd), rec)
    assert labels.relevant == ("0b",) and labels.unsupported == ()
    bad_cases = {
        "'9z' is not a document sentence key": {**good, "all_relevant_sentence_keys": ["0a", "9z"]},
        "no entry for response sentence(s) b": {**good, "sentence_support_information": good["sentence_support_information"][:1]},
        "'c' is not a response sentence key": {**good, "sentence_support_information": [
            *good["sentence_support_information"], {"response_sentence_key": "c", "fully_supported": False}]},
        "supporting_sentence_keys is empty": {**good, "sentence_support_information": [
            {"response_sentence_key": "a", "fully_supported": True, "supporting_sentence_keys": []},
            good["sentence_support_information"][1]]},
        "all_utilized_sentence_keys: expected an array": {k: v for k, v in good.items() if k != "all_utilized_sentence_keys"},
    }
    for message, answer in bad_cases.items():
        with pytest.raises(AnnotationError, match=message.replace("(", r"\(").replace(")", r"\)")):
            parse_annotation(json.dumps(answer), rec)
    for content in (None, "", "not json", "[1, 2]"):
        with pytest.raises(AnnotationError):
            parse_annotation(content, rec)


def test_assign_saves_lists_the_unit_resumes_and_never_stores_the_key(
        project: Path, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SENTINEL_KEY)
    fake_openai.default_chat = reply_with()
    assert assign(project, fake_openai, "--limit", "2") == 0
    assert len(fake_openai.chat_requests()) == 2
    assert assign(project, fake_openai, "--concurrency", "2") == 0
    assert len(fake_openai.chat_requests()) == 3  # only t3 was left
    assert "1 annotated (0 from cache), 0 failed, 2 already done" in capsys.readouterr().err
    assert assign(project, fake_openai) == 0  # everything done: no request at all
    assert len(fake_openai.chat_requests()) == 3
    with Project.open(project) as p:
        row = p.samples.machine_label("t2", SOURCE, SOURCE)
        assert row is not None and row["error"] is None
        value = row["value"]
        assert value["relevant"] == ["0a", "0b"] and value["utilized"] == ["0a"]
        assert value["unsupported"] == ["b", "c"] and value["adherent"] is False
        assert value["support"] == {"a": ["0a"], "b": [], "c": []}
        assert value["explanations"]["relevance_explanation"] == "doc 0 answers it"
        labels = labels_from_value(value)
        assert labels.support[0].explanation == "why a" and labels.unsupported == ("b", "c")
        # a unit of its own beside the dataset's annotator, with its ragbench scores
        units = {u["unit"]: u for u in p.units.units_for_sample("t1")}
        assert set(units) == {"annotator", SOURCE}
        s = units[SOURCE]  # the summary's figures are the row's columns
        assert s["relevance"] == pytest.approx(2 / 5) and s["utilization"] == pytest.approx(1 / 5)
        assert s["completeness"] == pytest.approx(1 / 2) and s["adherence"] == 0.0
        assert SOURCE in {u for _, u in p.units.unit_names("trace")}
        # Accept takes the LLM's labels as the human's
        accepted = SCHEME.accept(p.samples.machine_label("t1", SOURCE)["value"])
        assert accepted["relevant"] == ["0a", "0b"] and accepted["unsupported"] == ["b"] and accepted["adherent"] is False
    for f in project.parent.iterdir():
        assert SENTINEL_KEY.encode() not in f.read_bytes(), f


def test_invalid_keys_are_rejected_then_asked_again(project: Path, fake_openai: FakeOpenAI,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SENTINEL_KEY)
    fake_openai.chat_replies.append(reply_with(bad_key=True))  # the first answer names a key t1 does not have
    fake_openai.default_chat = reply_with()
    assert assign(project, fake_openai, "--limit", "1") == 0
    assert len(fake_openai.chat_requests()) == 2  # the same prompt twice
    first, second = fake_openai.chat_requests()
    assert first["messages"] == second["messages"]
    with Project.open(project) as p:
        value = p.samples.machine_label("t1", SOURCE, SOURCE)["value"]
        assert "9z" not in value["relevant"] and value["relevant"] == ["0a", "0b"]


def test_a_sample_that_stays_malformed_is_recorded_as_a_failure_and_retried_next_run(
        project: Path, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SENTINEL_KEY)

    def reply(request: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        prompt = request["messages"][-1]["content"]
        broken = "Second?" in prompt  # t2's answers always leave out its last response sentence
        return 200, chat_completion(json.dumps(good_answer(prompt, drop_last=broken)))

    fake_openai.default_chat = reply
    assert assign(project, fake_openai) == 1
    err = capsys.readouterr().err
    assert "failed t2" in err and "no entry for response sentence(s) c" in err
    assert len(fake_openai.chat_requests()) == 2 + 3  # t1, t3 once; t2 asked 1 + 2 malformed retries
    with Project.open(project) as p:
        row = p.samples.machine_label("t2", SOURCE, SOURCE)
        assert row["value"] is None and "malformed output after 3 attempts" in row["error"]
        assert SOURCE not in {u["unit"] for u in p.units.units_for_sample("t2")}  # no unit without labels
        assert SOURCE in {u["unit"] for u in p.units.units_for_sample("t1")}
    before = len(fake_openai.chat_requests())
    assert assign(project, fake_openai) == 1  # only the failure is asked again
    assert len(fake_openai.chat_requests()) == before + 3


def test_a_reimport_that_replaces_the_units_gets_the_llm_unit_back_without_a_request(
        project: Path, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SENTINEL_KEY)
    fake_openai.default_chat = reply_with()
    assert assign(project, fake_openai, "--limit", "1") == 0
    with Project.open(project) as p:
        changed = keyed_record("t1", doc_sizes=(3, 2), n_response=2, all_relevant_sentence_keys=["0b"])
        p.samples.write_samples("trace", [SCHEME.parse(changed).record])
        assert SOURCE not in {u["unit"] for u in p.units.units_for_sample("t1")}
    monkeypatch.delenv("OPENAI_API_KEY")  # nothing to send: t1 is done (and --limit 0 is refused, so use a source)
    with Project.open(project) as p:
        from app.llm.settings import LLMSettings
        from app.schemes.trace.llm import annotate

        summary, skipped, _ = annotate(p, LLMSettings(model="fake-model", base_url=fake_openai.base_url, api_key="x"),
                                       limit=0)
        assert summary.total == 0 and skipped == 1
        assert SOURCE in {u["unit"] for u in p.units.units_for_sample("t1")}
    assert len(fake_openai.chat_requests()) == 1


def test_assign_trace_refuses_rubric_and_rgb_options(project: Path, fake_openai: FakeOpenAI,
                                                     monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SENTINEL_KEY)
    assert assign(project, fake_openai, "--judge") == 2
    assert "--judge" in capsys.readouterr().err
    monkeypatch.delenv("OPENAI_API_KEY")
    assert assign(project, fake_openai) == 2
    assert "OPENAI_API_KEY" in capsys.readouterr().err
    assert fake_openai.chat_requests() == []
