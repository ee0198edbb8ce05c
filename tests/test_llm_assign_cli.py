"""`concord assign` end to end: a real project file, the real openai client and the loopback server."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from app.schemes.rubric.llm import default_source
from app.store import Project
from calibration.schemes.rubric.records import RubricSample
from calibration.schemes.rubric import MetricTrait
from tests.fake_openai import FakeOpenAI, chat_completion

SENTINEL_KEY = "sk-SENTINEL-cli-4b1d-do-not-leak"
TRAIT = MetricTrait(name="BCL2 Coverage", metrics=["precision", "recall", "f1"],
                    tp_instructions=["Mentions BCL2 gene", "States BCL2 is on chromosome 18"])
SOURCE = default_source("fake-model")


def good_reply(request: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    user = request["messages"][1]["content"]
    response = user.split("Response:\n<<<\n", 1)[1].split("\n>>>", 1)[0]
    if "broken" in response:
        return 200, chat_completion("no json here")
    body = {"tp": [response.split(":", 1)[1].strip().rstrip(".")], "fn": ["States BCL2 is on chromosome 18"], "fp": []}
    return 200, chat_completion(json.dumps(body))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "p.concord"
    with Project.create(path) as p:
        samples = [
            RubricSample(f"s{i}", "Describe BCL2.", f"Sample {i}: BCL2 is an anti-apoptotic gene.", (TRAIT.to_dict(),), {})
            for i in range(4)
        ]
        samples.append(RubricSample("s9", "Describe BCL2.", "Sample broken: nothing.", (TRAIT.to_dict(),), {}))
        p.store("rubric").write_rubric_samples(samples)
    return path


def assign(path: Path, server: FakeOpenAI, *extra: str) -> int:
    return main(["assign", str(path), "--trait", TRAIT.name, "--model", "fake-model", "--base-url", server.base_url, *extra])


def test_assign_saves_resumes_and_never_stores_the_key(
    project: Path, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SENTINEL_KEY)
    fake_openai.default_chat = good_reply
    assert assign(project, fake_openai, "--limit", "2") == 0
    assert len(fake_openai.chat_requests()) == 2
    assert assign(project, fake_openai, "--concurrency", "2") == 1  # s9 always malformed -> exit 1, others saved
    err = capsys.readouterr().err
    assert "failed s9" in err and "malformed" in err
    # 2 new good samples + s9 asked 3 times (2 malformed retries)
    assert len(fake_openai.chat_requests()) == 2 + 2 + 3
    with Project.open(project) as p:
        a = p.store("rubric").bucket_assignment("s3", TRAIT.name, SOURCE)
        assert a is not None and a["buckets"]["tp"] == ["BCL2 is an anti-apoptotic gene"] and a["error"] is None
        bad = p.store("rubric").bucket_assignment("s9", TRAIT.name, SOURCE)
        assert bad is not None and bad["buckets"] is None and "malformed" in bad["error"]
    # re-run: finished units are skipped, only the failure is retried
    before = len(fake_openai.chat_requests())
    assert assign(project, fake_openai) == 1
    assert len(fake_openai.chat_requests()) == before + 3
    for f in project.parent.iterdir():  # the project file, its WAL and anything else written beside it
        assert SENTINEL_KEY.encode() not in f.read_bytes(), f


def test_assign_bad_input_exits_2(project: Path, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SENTINEL_KEY)
    assert main(["assign", str(project), "--trait", "Nope", "--base-url", fake_openai.base_url]) == 2
    err = capsys.readouterr().err
    assert "--trait" in err and "'Nope'" in err and "'BCL2 Coverage'" in err
    with pytest.raises(SystemExit) as exc:  # refused by argparse, before any work
        assign(project, fake_openai, "--limit", "0")
    assert exc.value.code == 2
    assert "--limit" in capsys.readouterr().err
    assert main(["assign", str(project.parent / "missing.concord"), "--trait", TRAIT.name]) == 2
    monkeypatch.delenv("OPENAI_API_KEY")
    assert assign(project, fake_openai) == 2
    assert "OPENAI_API_KEY" in capsys.readouterr().err
    assert fake_openai.chat_requests() == []
