"""Karenina compatibility (issue #19 item 6): traits and assigner outputs are accepted as Karenina accepts them."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from app.schemes.rubric.llm_assigner import AssignItem, assign_buckets, parse_buckets
from app.llm.cache import MemoryLLMCache
from app.llm.settings import LLMSettings
from app.store import Project
from calibration.schemes.rubric import MetricTrait, TraitError, compute_trait_metrics, validate_buckets
from calibration.schemes.rubric.karenina import parse_trait_file
from tests.fake_openai import FakeOpenAI, chat_completion

TRAIT = MetricTrait(name="BCL2 Coverage", metrics=["precision", "recall", "f1"],
                    tp_instructions=["Mentions BCL2 gene", "States BCL2 is on chromosome 18"])

# What Karenina writes for MetricRubricTrait(...).model_dump_json() (all seven fields, defaults included).
KARENINA_TP = {"name": "BCL2 Coverage", "description": "Check whether the answer covers the core canonical BCL2 facts.",
               "evaluation_mode": "tp_only", "metrics": ["precision", "recall", "f1"],
               "tp_instructions": ["Mentions BCL2 gene", "States that BCL2 inhibits apoptosis"],
               "tn_instructions": [], "repeated_extraction": True}
KARENINA_FULL = {"name": "BCL2 Accuracy", "description": None, "evaluation_mode": "full_matrix",
                 "metrics": ["precision", "recall", "specificity", "accuracy", "f1"],
                 "tp_instructions": ["Mentions BCL2 gene"], "tn_instructions": ["Claims BCL2 is pro-apoptotic"],
                 "repeated_extraction": True}


# -- empty excerpts ---------------------------------------------------------------------------------------------------
def test_empty_excerpts_are_dropped_and_counted() -> None:
    dropped: list[str] = []
    b = validate_buckets({"tp": ["BCL2 is a gene", "", "   "], "fn": ["\n"], "fp": [], "tn": []}, dropped=dropped)
    assert b == {"tp": ["BCL2 is a gene"], "fn": [], "fp": [], "tn": []}
    assert dropped == ["buckets.tp[1]", "buckets.tp[2]", "buckets.fn[0]"]
    assert compute_trait_metrics(TRAIT, {"tp": ["a", " "], "fn": ["b"], "fp": [""]})["precision"] == 1.0


def test_llm_answer_with_an_empty_excerpt_is_not_rejected() -> None:
    dropped: list[str] = []
    b = parse_buckets(json.dumps({"tp": ["BCL2 is a gene", ""], "fn": [" "], "fp": [], "tn": []}), TRAIT, dropped)
    assert b["tp"] == ["BCL2 is a gene"] and b["fn"] == [] and len(dropped) == 2


def test_assign_run_counts_dropped_excerpts(fake_openai: FakeOpenAI) -> None:
    def answer(request: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        body = {"tp": ["BCL2 is an anti-apoptotic gene", "  "], "fn": [""], "fp": [], "tn": []}
        return 200, chat_completion(json.dumps(body), request["model"])

    fake_openai.default_chat = answer
    results: dict[str, Any] = {}
    settings = LLMSettings(model="fake-model", base_url=fake_openai.base_url, api_key="sk-test-0000000000",
                           backoff_base=0.01, backoff_max=0.05, timeout=5.0, concurrency=1, max_retries=0,
                           malformed_retries=0)
    items = [AssignItem(f"s{i}", "Describe BCL2.", "BCL2 is an anti-apoptotic gene.") for i in range(2)]
    cache = MemoryLLMCache()
    summary = assign_buckets(items, TRAIT, settings, cache, lambda s, t, b, e: results.__setitem__(s, (b, e)))
    assert (summary.succeeded, summary.failed, summary.dropped_empty) == (2, 0, 4)
    assert results["s0"] == ({"tp": ["BCL2 is an anti-apoptotic gene"], "fn": [], "fp": [], "tn": []}, None)
    again = assign_buckets(items, TRAIT, settings, cache, lambda *a: None)  # from the cache: counted the same
    assert (again.from_cache, again.dropped_empty) == (2, 4)


# -- trait validation as Karenina -------------------------------------------------------------------------------------
def test_metric_named_twice_is_accepted_once_with_a_warning() -> None:
    warnings: list[str] = []
    t = MetricTrait.from_dict({**KARENINA_TP, "metrics": ["recall", "f1", "recall"]}, warnings=warnings)
    assert t.metrics == ("recall", "f1")
    assert warnings == ["metrics[2]: metric 'recall' is named more than once; it is computed once"]
    assert list(compute_trait_metrics(t, {"tp": ["a"], "fn": ["b"]})) == ["recall", "f1"]


@pytest.mark.parametrize(("change", "field", "karenina_message"), [
    ({"metrics": ["precision", "f2"]}, "metrics[1]", "invalid metric name: 'f2'; valid metrics are: precision, recall"),
    ({"tp_instructions": []}, "tp_instructions",
     "TP instructions must be provided (define what should be present in the answer)"),
    ({"metrics": ["precision", "specificity"]}, "metrics[1]",
     "not available in tp_only mode. Available metrics: precision, recall, f1. Use full_matrix mode for specificity "
     "and accuracy."),
    ({"evaluation_mode": "full_matrix", "tn_instructions": []}, "tn_instructions",
     "TN instructions must be provided in full_matrix mode (define what should NOT be present in the answer)"),
    ({"metrics": []}, "metrics", "at least one metric must be specified"),
])
def test_messages_carry_karenina_meaning(change: dict[str, Any], field: str, karenina_message: str) -> None:
    with pytest.raises(TraitError) as exc:
        MetricTrait.from_dict({**KARENINA_TP, **change})
    assert exc.value.field == field and karenina_message in exc.value.message


# -- Karenina trait files ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("layout", ["object", "array", "jsonl", "rubric"])
def test_karenina_trait_json_is_read_as_is(layout: str) -> None:
    if layout == "object":
        text = json.dumps(KARENINA_TP, indent=2)
    elif layout == "array":
        text = json.dumps([KARENINA_TP, KARENINA_FULL])
    elif layout == "jsonl":
        text = json.dumps(KARENINA_TP) + "\n" + json.dumps(KARENINA_FULL) + "\n"
    else:
        text = json.dumps({"llm_traits": [{"name": "clarity", "kind": "boolean"}], "regex_traits": [],
                           "callable_traits": [], "metric_traits": [KARENINA_TP, KARENINA_FULL]})
    parsed = parse_trait_file(text)
    assert parsed.problems == []
    assert [t.name for t in parsed.traits] == (["BCL2 Coverage"] if layout == "object" else
                                                ["BCL2 Coverage", "BCL2 Accuracy"])
    assert parsed.traits[0].to_dict() == {**KARENINA_TP, "tn_instructions": []}
    assert any("llm_traits" in w for w in parsed.warnings) == (layout == "rubric")


def test_trait_file_problems_name_line_and_field() -> None:
    bad = {**KARENINA_FULL, "metrics": ["accuracy"], "tn_instructions": []}
    text = json.dumps(KARENINA_TP) + "\n" + json.dumps(bad) + "\n{oops\n"
    parsed = parse_trait_file(text)
    assert parsed.problems[0].startswith("3: invalid JSON")
    assert any(p.startswith("2: tn_instructions: TN instructions must be provided in full_matrix mode")
               for p in parsed.problems)


def test_cli_traits_import(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    proj = tmp_path / "p.concord"
    Project.create(proj).close()
    f = tmp_path / "karenina_traits.json"
    f.write_text(json.dumps([KARENINA_TP, {**KARENINA_FULL, "metrics": ["accuracy", "accuracy"]}]), encoding="utf-8")
    assert main(["traits", "import", str(proj), str(f)]) == 0
    out = capsys.readouterr()
    assert "2 trait(s) added" in out.out and "named more than once" in out.err
    with Project.open(proj) as p:
        assert p.store("rubric").get_trait("BCL2 Accuracy")["metrics"] == ["accuracy"]
    assert main(["traits", "import", str(proj), str(f)]) == 0  # again: nothing new
    assert "0 trait(s) added, 2 already in the project" in capsys.readouterr().out
    # a different definition under a known name, plus a broken trait: exit 2, nothing stored
    g = tmp_path / "changed.jsonl"
    g.write_text(json.dumps({**KARENINA_TP, "metrics": ["recall"]}) + "\n"
                 + json.dumps({**KARENINA_TP, "name": "new one", "tp_instructions": []}) + "\n", encoding="utf-8")
    assert main(["traits", "import", str(proj), str(g)]) == 2
    err = capsys.readouterr().err
    assert f"{g}:2: tp_instructions: TP instructions must be provided" in err
    assert "'BCL2 Coverage' is already defined differently" in err
    with Project.open(proj) as p:
        assert p.store("rubric").get_trait("new one") is None and p.store("rubric").get_trait("BCL2 Coverage")["metrics"] == KARENINA_TP["metrics"]
