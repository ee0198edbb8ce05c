"""Records, RGB's own files, passage assembly and prompts, on data made here (RGB's data is CC BY-NC-SA: never in
the repository; `benchmarks/bench_rgb.py --rgb-data DIR` runs the parsers and passage assembly on a release)."""
from __future__ import annotations

import copy
import json
import math
import random
from typing import Any

import pytest

from calibration.schemes.rgb import (
    assemble_docs,
    build_messages,
    dataset_name,
    parse_data_file,
    parse_prediction_file,
    parse_prediction_name,
    parse_record,
    prediction_record,
    record_to_json,
)
from calibration.schemes.rgb.prompts import (
    SYSTEM,
    fact_judge_messages,
    parse_fact_judge,
    parse_rejection_judge,
    rejection_judge_messages,
)

GOOD = {"scheme": "rgb", "id": "q1", "task": "counterfactual", "language": "en", "query": "Where?",
        "answer": ["Tampa", ["Florida", "FL"]], "docs": ["d1", "d2"], "response": "Tampa, FL", "noise_rate": 0.4,
        "model": "gpt-x", "fakeanswer": "Glendale", "positive": ["p"], "negative": ["n"], "positive_wrong": ["w"]}


def test_record_round_trip() -> None:
    parsed = parse_record(GOOD)
    assert parsed.ok
    assert record_to_json(parsed.record) == GOOD
    assert parse_record({**GOOD, "id": 7}).record.id == "7"


@pytest.mark.parametrize("change, field, message", [
    ({"answer": ["a", "b", 3]}, "answer[2]", "must be a string or a list of strings"),
    ({"answer": ["a", ["b", 1]]}, "answer[1][1]", "must be a string"),
    ({"answer": 5}, "answer", "must be a string or a list"),
    ({"task": "other"}, "task", "must be one of"),
    ({"language": "de"}, "language", "must be one of"),
    ({"docs": ["a", 2]}, "docs[1]", "must be a string"),
    ({"noise_rate": 1.5}, "noise_rate", "from 0 to 1"),
    ({"response": None}, "response", "is required"),
    ({"colour": "red"}, "colour", "unknown field"),
    ({"scheme": "violations"}, "scheme", "must be 'rgb'"),
    ({"positive": [["a"], 3]}, "positive[1]", "a string or a list of strings"),
    ({"fakeanswer": ["x", 2]}, "fakeanswer[1]", "must be a string"),
    ({"responses": {"m1": "ok", " ": "text"}}, 'responses[" "]', "model name must not be empty"),
    ({"responses": {"m1": "ok", "m2": 3}}, 'responses["m2"]', "must be a string"),
    ({"negative": ["a", None]}, "negative[1]", "must be a string"),
])
def test_record_problems_have_paths(change: dict[str, Any], field: str, message: str) -> None:
    parsed = parse_record({**GOOD, **change})
    assert parsed.record is None
    assert any(p.field == field and message in p.message for p in parsed.problems), parsed.problems


def test_every_problem_is_reported_at_once() -> None:
    parsed = parse_record({"id": "x"})
    assert {p.field for p in parsed.problems} == {"task", "language", "query", "answer", "docs", "response"}


def make_instance(i: int, kind: str = "") -> dict[str, Any]:
    inst: dict[str, Any] = {"id": i, "query": f"q{i}", "answer": ["A", ["B", "b2"]] if i % 2 else "A",
                            "negative": [f"neg{i}-{k}" for k in range(4 + i % 3)]}
    if kind == "int":
        inst["positive"] = [[f"g{g}-{k}" for k in range(1 + (g + i) % 3)] for g in range(2)]
        inst["asnwer1"] = ["A"]  # RGB's own typo, kept as an extra
    else:
        inst["positive"] = [f"pos{i}-{k}" for k in range(2 + i % 4)]
    if kind == "fact":
        inst["positive_wrong"] = [p.replace("pos", "wrong") for p in inst["positive"]]
        inst["fakeanswer"] = "Z" if i % 5 else ["Z1", "Z2"]
    return inst


def processdata(instance: dict[str, Any], noise_rate: float, passage_num: int, filename: str,
                correct_rate: float = 0) -> list[str]:
    """RGB's processdata as evalue.py has it (global random), transcribed for comparison."""
    neg_num = math.ceil(passage_num * noise_rate)
    pos_num = passage_num - neg_num
    if "_int" in filename:
        for i in instance["positive"]:
            random.shuffle(i)
        docs = [i[0] for i in instance["positive"]]
        if len(docs) < pos_num:
            maxnum = max([len(i) for i in instance["positive"]])
            for i in range(1, maxnum):
                for j in instance["positive"]:
                    if len(j) > i:
                        docs.append(j[i])
                        if len(docs) == pos_num:
                            break
                if len(docs) == pos_num:
                    break
        neg_num = passage_num - len(docs)
        if neg_num > 0:
            docs += instance["negative"][:neg_num]
    elif "_fact" in filename:
        correct_num = math.ceil(passage_num * correct_rate)
        pos_num = passage_num - neg_num - correct_num
        indexs = list(range(len(instance["positive"])))
        selected = random.sample(indexs, min(len(indexs), pos_num))
        docs = [instance["positive_wrong"][i] for i in selected]
        remain = [i for i in indexs if i not in selected]
        if correct_num > 0 and len(remain) > 0:
            docs += [instance["positive"][i] for i in random.sample(remain, min(len(remain), correct_num))]
        if neg_num > 0:
            docs += instance["negative"][:neg_num]
    else:
        if noise_rate == 1:
            neg_num = passage_num
            pos_num = 0
        else:
            if neg_num > len(instance["negative"]):
                neg_num = len(instance["negative"])
                pos_num = passage_num - neg_num
            elif pos_num > len(instance["positive"]):
                pos_num = len(instance["positive"])
                neg_num = passage_num - pos_num
        docs = instance["positive"][:pos_num] + instance["negative"][:neg_num]
    random.shuffle(docs)
    return docs


@pytest.mark.parametrize("dataset, kind", [("en", ""), ("zh_refine", "refine"), ("en_int", "int"), ("zh_fact", "fact")])
def test_assemble_docs_equals_processdata(dataset: str, kind: str) -> None:
    raw = [make_instance(i, "int" if kind == "int" else "fact" if kind == "fact" else "") for i in range(12)]
    text = "\n".join(json.dumps(r) for r in raw)
    instances, problems = parse_data_file(text, dataset)
    assert not problems and len(instances) == 12
    compared = 0
    for noise in (0.0, 0.2, 0.4, 0.6, 0.8, 1.0):
        for passages in (0, 1, 3, 5, 10):
            for correct in ((0.0, 0.2, 0.6) if kind == "fact" else (0.0,)):
                for r, inst in zip(raw, instances):
                    r_copy = copy.deepcopy(r)
                    random.seed(2333)
                    try:
                        want: Any = processdata(r_copy, noise, passages, dataset, correct) if passages else []
                    except ValueError:
                        want = ValueError
                    try:
                        got: Any = assemble_docs(inst, noise, passages, dataset, correct)
                        assert got == assemble_docs(r, noise, passages, dataset, correct)  # dicts work too
                    except ValueError:
                        got = ValueError
                    assert got == want, (dataset, noise, passages, correct, r["id"])
                    compared += 1
    assert compared > 100
    assert raw == [make_instance(i, "int" if kind == "int" else "fact" if kind == "fact" else "") for i in range(12)]


def test_data_file_problems_name_line_and_field() -> None:
    lines = [json.dumps(make_instance(0)), "not json", json.dumps({"id": 2, "query": "q", "answer": [1],
                                                                  "positive": [], "negative": "x"}), "[1]"]
    instances, problems = parse_data_file("\n".join(lines), "en")
    assert len(instances) == 1
    text = [str(p) for p in problems]
    assert any(t.startswith("line 2: invalid JSON") for t in text)
    assert "line 3: answer[0]: must be a string or a list of strings, got integer" in text
    assert "line 3: negative: must be a list of strings, got string" in text
    assert "line 4: expected a JSON object" in text
    _, fact_problems = parse_data_file(json.dumps(make_instance(0)), "en_fact")
    assert {p.field for p in fact_problems} == {"positive_wrong", "fakeanswer"}


def test_integration_extras_kept() -> None:
    instances, _ = parse_data_file(json.dumps(make_instance(1, "int")), "zh_int")
    assert instances[0].extra == {"asnwer1": ["A"]}
    assert isinstance(instances[0].positive[0], tuple)


def test_prediction_names_and_records() -> None:
    name = "result-zh/prediction_zh_fact_Qwen_7B_temp0.7_noise1.0_passage5_correct0.0.json"
    assert parse_prediction_name(name) == {"dataset": "zh_fact", "model": "Qwen_7B", "temperature": 0.7,
                                           "noise_rate": 1.0, "passage_num": 5, "correct_rate": 0.0, "suffix": ""}
    assert parse_prediction_name("prediction_en_chatgpt_temp0.2_noise0.4_passage5_correct0.0_result.json")["suffix"] == "_result"
    assert parse_prediction_name("scores.json") is None
    assert dataset_name("data/zh_int.json").task == "integration"
    assert dataset_name("en").task_at(1.0) == "rejection"
    assert dataset_name("en_refine").task_at(0.4) == "noise"
    line = {"id": 3, "query": "q", "ans": ["A"], "label": [1], "prediction": "A", "docs": ["d"], "noise_rate": 1.0,
            "factlabel": 0}
    preds, problems = parse_prediction_file(json.dumps(line) + "\n" + json.dumps({**line, "label": [2]}))
    assert len(preds) == 1 and [str(p) for p in problems] == ["line 2: label: must be a list of -1, 0 or 1"]
    rec = prediction_record(preds[0], "en", "chatgpt")
    assert (rec.id, rec.task, rec.language, rec.model, rec.noise_rate) == ("en/3/noise1/chatgpt", "rejection", "en",
                                                                           "chatgpt", 1.0)
    assert parse_record(record_to_json(rec)).record == rec


def test_prompts_are_rgbs() -> None:
    msgs = build_messages("Who?", ["d1", "d2"], "en")
    assert msgs == [{"role": "system", "content": SYSTEM["en"]},
                    {"role": "user", "content": "Document:\nd1\nd2 \n\nQuestion:\nWho?"}]
    assert build_messages("谁？", ["文"], "zh")[1]["content"] == "文档：\n文 \n\n问题：\n谁？"
    assert "insufficient information in documents" in SYSTEM["en"] and "信息不足" in SYSTEM["zh"]
    # evalue.py sends no system prompt when there are no docs
    assert build_messages("Who?", [], "en") == [{"role": "user", "content": "Document:\n \n\nQuestion:\nWho?"}]
    assert build_messages("Who?", [], "en", system_without_docs=True)[0]["role"] == "system"
    with pytest.raises(ValueError):
        build_messages("q", [], "fr")
    assert rejection_judge_messages("Q?", "A.")[0]["content"].endswith("Question: Q?\nAnswer: A.\n    ")
    assert "Answer: resp" in fact_judge_messages("resp")[0]["content"]
    assert parse_rejection_judge("No, the question is not addressed by the documents.")
    assert not parse_rejection_judge("Yes, the question is addressed by the documents.")
    assert parse_fact_judge("Yes, the model has identified the factual errors.")
    assert not parse_fact_judge("NO, the model fail to identify the factual errors.")
