"""RGB end to end through the CLI: import RGB's own files, `concord generate` against the loopback endpoint (passages
as RGB's processdata assembles them, cached, resumable, key never stored), `concord assign --scheme rgb --judge`
(RGB's judged checks as machine labels), and the evaluate hook over the result."""
from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from app.errors import UsageError
from app.io.imports import import_file
from app.store import Project
from calibration.schemes.base import get
from calibration.schemes.rgb.prompts import INSTRUCTION, SYSTEM
from tests.fake_openai import FakeOpenAI, chat_completion
from tests.test_rgb_files import make_instance, processdata

KEY = "sk-SENTINEL-rgb-7f3e-do-not-leak"


def _docs_of(request: dict[str, Any]) -> tuple[str, list[str]]:
    """The query and docs a generation request carries (RGB's instruction format)."""
    user = request["messages"][-1]["content"]
    lang = "zh" if user.startswith("文档") else "en"
    head, query = user.rsplit("\n\n问题：\n" if lang == "zh" else "\n\nQuestion:\n", 1)
    docs = head.split("\n", 1)[1].removesuffix(" ")
    return query, (docs.split("\n") if docs else [])


def _answer(request: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """A model that answers with the first doc's first words, or refuses when it is noise."""
    query, docs = _docs_of(request)
    if not docs or docs[0].startswith("neg"):
        return 200, chat_completion("I can not answer the question because of the insufficient information in documents.")
    return 200, chat_completion(f"Answer to {query}: {docs[0][:40]}")


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def generate(project: Path, server: FakeOpenAI, *extra: str) -> int:
    return main(["generate", str(project), "--model", "fake-model", "--base-url", server.base_url, *extra])


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "rgb.concord"
    Project.create(path).close()
    return path


@pytest.mark.parametrize("dataset, kind, noise, passages, correct", [
    ("en", "", 0.4, 5, 0.0), ("en", "", 1.0, 5, 0.0), ("en_int", "int", 0.2, 4, 0.0),
    ("zh_fact", "fact", 0.2, 5, 0.4), ("en_refine", "", 0.6, 3, 0.0)])
def test_generate_assembles_passages_as_processdata(project: Path, tmp_path: Path, fake_openai: FakeOpenAI,
                                                    monkeypatch: pytest.MonkeyPatch, dataset: str, kind: str,
                                                    noise: float, passages: int, correct: float) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    raw = [make_instance(i, kind) for i in range(8)]
    if dataset.startswith("zh"):
        for r in raw:
            r["query"] = f"问题{r['id']}"
    assert main(["import", str(project), str(_write(tmp_path / f"{dataset}.json", raw))]) == 0
    fake_openai.default_chat = _answer
    extra = ["--noise-rate", str(noise), "--passages", str(passages), "--correct-rate", str(correct)]
    assert generate(project, fake_openai, *extra) == 0
    requests = fake_openai.chat_requests()
    assert len(requests) == len(raw)
    by_query = {_docs_of(r)[0]: r for r in requests}
    lang = "zh" if dataset.startswith("zh") else "en"
    for r in raw:
        random.seed(2333)  # what evalue.py does before each instance
        want = processdata(copy.deepcopy(r), noise, passages, dataset, correct)
        req = by_query[r["query"]]
        assert _docs_of(req)[1] == want, r["id"]
        assert req["messages"][0] == {"role": "system", "content": SYSTEM[lang]}
        assert req["messages"][1]["content"] == INSTRUCTION[lang].format(DOCS="\n".join(want), QUERY=r["query"])
        assert "response_format" not in req  # free text, not the bucket assigner's JSON mode
    with Project.open(project) as p:
        recs = {r.id: r for r in p.samples.records("rgb")}
        suffix = f"/noise{noise:g}" + (f"/passage{passages}" if passages != 5 else "") + (f"/correct{correct:g}" if correct else "")
        for r in raw:
            target = recs[f"{dataset}/{r['id']}{suffix}"]
            assert target.units == ("fake-model",) and target.noise_rate == noise
            assert target.task == ("rejection" if noise == 1 and not kind else
                                   {"int": "integration", "fact": "counterfactual"}.get(kind, "noise"))
            assert recs[f"{dataset}/{r['id']}"].units == ()  # the query itself still awaits responses
        units = {(u["sample_id"], u["unit"]) for u in p.units.unit_rows("rgb")}
        assert len(units) == len(raw)


def test_generate_resumes_caches_adds_models_and_never_stores_the_key(
        project: Path, tmp_path: Path, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    raw = [make_instance(i) for i in range(6)]
    assert main(["import", str(project), str(_write(tmp_path / "en.json", raw))]) == 0
    fake_openai.default_chat = _answer
    fake_openai.chat_replies.append((500, {"error": {"message": f"boom {KEY}"}}))  # retried
    assert generate(project, fake_openai, "--limit", "2") == 0
    assert len(fake_openai.chat_requests()) == 3
    assert generate(project, fake_openai) == 0  # resumes: the first two are done
    assert len(fake_openai.chat_requests()) == 3 + 4
    assert "2 already done" in capsys.readouterr().err
    assert generate(project, fake_openai) == 0  # nothing left
    assert len(fake_openai.chat_requests()) == 7
    # a second model on the same samples: a new unit beside the first, on the same docs
    assert main(["generate", str(project), "--model", "other", "--base-url", fake_openai.base_url]) == 0
    with Project.open(project) as p:
        recs = [r for r in p.samples.records("rgb") if r.units]
        assert len(recs) == 6 and all(r.units == ("fake-model", "other") for r in recs)
        assert all(r.for_unit("fake-model").docs == r.for_unit("other").docs for r in recs)
    # the same model again after the samples were removed is answered from the project's cache
    n = len(fake_openai.chat_requests())
    with Project.open(project) as p:
        p.conn.execute("DELETE FROM units")
        p.conn.execute("DELETE FROM samples WHERE id LIKE '%/noise%'")
        p.conn.commit()
    assert generate(project, fake_openai) == 0
    assert len(fake_openai.chat_requests()) == n
    assert KEY.encode() not in project.read_bytes()


def test_generate_needs_queries(project: Path, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch,
                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    assert generate(project, fake_openai) == 2
    assert "import RGB data files first" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:  # argparse refuses it before any work
        main(["generate", str(project), "--model", "m", "--noise-rate", "1.5"])
    assert exc.value.code == 2 and "--noise-rate: must be from 0 to 1" in capsys.readouterr().err


def test_import_prediction_file_model_from_name_or_option(project: Path, tmp_path: Path) -> None:
    raw = [make_instance(i, "fact") for i in range(3)]
    assert main(["import", str(project), str(_write(tmp_path / "en_fact.json", raw))]) == 0
    lines = [{"id": r["id"], "query": r["query"], "ans": r["answer"], "label": [1], "docs": ["d"], "noise_rate": 0.2,
              "factlabel": 1, "prediction": "There are factual errors in the provided documents. A"} for r in raw]
    named = _write(tmp_path / "prediction_en_fact_gpt-x_temp0.7_noise0.2_passage5_correct0.0.json", lines)
    assert main(["import", str(project), str(named)]) == 0
    odd = _write(tmp_path / "run_en_fact.json", lines)
    with Project.open(project) as p, pytest.raises(UsageError, match="--model"):
        import_file(p, odd)
    assert main(["import", str(project), str(odd), "--model", "mine"]) == 0
    with Project.open(project) as p:
        recs = {r.id: r for r in p.samples.records("rgb")}
        got = recs["en_fact/1/noise0.2/gpt-x"]
        assert got.units == ("gpt-x",) and got.task == "counterfactual"
        assert got.fakeanswer == raw[1]["fakeanswer"]  # joined from the imported data file
        assert recs["en_fact/1/noise0.2/mine"].units == ("mine",)


def check_release_files(project: Path, fake_openai: FakeOpenAI, data_dir: Path) -> int:
    """RGB's files in `data_dir` import unchanged and `concord generate` assembles passages as processdata does.

    Shared by the test (files in RGB's format that the test writes) and benchmarks/check_rgb_release.py (RGB's
    released files, which are never copied into this repository). Returns the number of instances checked.
    """
    files = sorted(data_dir.glob("*.json"))
    assert files, f"no RGB files in {data_dir}"
    raw: dict[str, dict[str, Any]] = {}
    for f in files:
        assert main(["import", str(project), str(f)]) == 0
        for line in f.read_text(encoding="utf-8").splitlines():
            if line.strip():
                obj = json.loads(line)
                raw[f"{f.stem}/{obj['id']}"] = obj
    with Project.open(project) as p:
        recs = p.samples.records("rgb")
        assert len(recs) == len(raw)
        for r in recs:  # as they are: query, answer, pools unchanged
            src = raw[r.id]
            assert r.query == src["query"] and r.docs == () and r.units == ()
            assert get("rgb").to_json(r)["answer"] == src["answer"]
            assert [list(x) if isinstance(x, tuple) else x for x in r.positive] == src["positive"]
            assert list(r.negative) == src["negative"]
    fake_openai.default_chat = _answer
    assert generate(project, fake_openai, "--noise-rate", "0.4") == 0
    sent = sorted(req["messages"][-1]["content"] for req in fake_openai.chat_requests())
    want = []
    with Project.open(project) as p:
        generated = {r.id: r for r in p.samples.records("rgb") if r.units}
    assert len(generated) == len(raw)
    for rid, src in raw.items():
        dataset = rid.split("/")[0]
        random.seed(2333)
        docs = processdata(copy.deepcopy(src), 0.4, 5, dataset + ".json")
        assert list(generated[f"{rid}/noise0.4"].docs) == docs, rid
        lang = "zh" if dataset.startswith("zh") else "en"
        want.append(INSTRUCTION[lang].format(DOCS="\n".join(docs), QUERY=src["query"]))
    assert sent == sorted(want)
    return len(raw)


def test_rgb_format_files_import_unchanged_and_generate_as_processdata(
        project: Path, tmp_path: Path, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    """Files shaped like RGB's release (en_fact, zh_int, zh_refine: lists of alternatives, RGB's own typo keys)."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    data = tmp_path / "rgb"
    data.mkdir()
    for name, kind in (("en_fact", "fact"), ("zh_int", "int"), ("zh_refine", "")):
        _write(data / f"{name}.json", [make_instance(i, kind) for i in range(6)])
    assert check_release_files(project, fake_openai, data) == 18


def _judge(request: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """A judge that reads the response in RGB's judge prompts the way a careful model would."""
    prompt = request["messages"][-1]["content"]
    answer = prompt.rsplit("Answer: ", 1)[1]
    if "Please determine whether the model can identify factual errors" in prompt:
        found = "wrong" in answer or "factual errors" in answer
        return 200, chat_completion("Yes, the model has identified the factual errors." if found
                                    else "NO, the model fail to identify the factual errors.")
    refused = "can not answer" in answer or "no idea" in answer
    return 200, chat_completion("No, the question is not addressed by the documents." if refused
                                else "Yes, the question is addressed by the documents.")


def test_judge_stores_machine_labels_resumes_and_is_evaluated(
        project: Path, tmp_path: Path, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    rows = [{"scheme": "rgb", "id": f"r{i}", "task": "rejection", "language": "en", "query": f"q{i}", "answer": "A",
             "docs": ["neg"], "noise_rate": 1.0, "responses": {"m1": ["I have no idea.", "A it is.", "I can not answer."][i]}}
            for i in range(3)]
    rows += [{"scheme": "rgb", "id": f"c{i}", "task": "counterfactual", "language": "en", "query": f"q{i}",
              "answer": "Tampa", "fakeanswer": "Glendale", "docs": ["Glendale is it"], "noise_rate": 0.0,
              "responses": {"m1": ["Glendale.", "The documents are wrong: Tampa.", "The documents are wrong: Boston."][i]}}
             for i in range(3)]
    rows.append({"scheme": "rgb", "id": "n0", "task": "noise", "language": "en", "query": "q", "answer": "A",
                 "docs": ["A"], "noise_rate": 0.2, "responses": {"m1": "A"}})  # not judged in the paper
    assert main(["import", str(project), str(_write(tmp_path / "recs.jsonl", rows))]) == 0
    fake_openai.default_chat = _judge
    base = ["assign", str(project), "--scheme", "rgb", "--model", "judge-x", "--base-url", fake_openai.base_url]
    assert main(base) == 2  # --judge is the rgb run
    assert main([*base, "--judge", "--limit", "2"]) == 0
    assert main([*base, "--judge"]) == 0
    assert len(fake_openai.chat_requests()) == 6
    assert "2 already done" in capsys.readouterr().err
    with Project.open(project) as p:
        labels = p.samples.machine_labels("rgb", "llm_judge:")
        got = labels["llm_judge:judge-x"]
        assert got == {
            ("r0", "m1"): {"rejected": True}, ("r1", "m1"): {"rejected": False}, ("r2", "m1"): {"rejected": True},
            ("c0", "m1"): {"error_detected": False, "error_corrected": False},
            ("c1", "m1"): {"error_detected": True, "error_corrected": True},
            ("c2", "m1"): {"error_detected": True, "error_corrected": False},
        }
        # the string checker misses "I have no idea" and the paraphrased error flags; the judge does not
        stored = {"n_boot": 50, "machine_labels_of": p.samples.machine_labels}  # judges read from the project
        report = get("rgb").evaluate(p.samples.records("rgb"), {}, stored)
        assert report.data == get("rgb").evaluate(p.samples.records("rgb"), {}, {"n_boot": 50, "machine_labels": labels}).data
        figures = {(f["source"], f["task"], f["figure"]): f["value"] for f in report.data["figures"]}
        assert figures[("llm_judge:judge-x", "rejection", "rejection_rate")] == pytest.approx(200 / 3)
        assert figures[("rgb_original", "rejection", "rejection_rate")] == pytest.approx(0.0)
        assert figures[("llm_judge:judge-x", "counterfactual", "error_detection_rate")] == pytest.approx(200 / 3)
        assert figures[("llm_judge:judge-x", "counterfactual", "error_correction_rate")] == pytest.approx(50.0)
        assert figures[("rgb_original", "counterfactual", "error_detection_rate")] == pytest.approx(0.0)
        assert ("llm_judge:judge-x", "counterfactual", "accuracy") not in figures  # the judge does not decide it
    assert KEY.encode() not in project.read_bytes()
