"""The rgb scheme through the Scheme protocol, and its search problem through the generic Calibrator."""
from __future__ import annotations

import math
import random
from typing import Any

import numpy as np
import pytest

from calibration.schemes import base
from calibration.schemes.rgb.calibrate import make_config, search_problem
from calibration.schemes.rgb.checkers import check
from calibration.schemes.rgb.config import RGB_EXTENDED, RGB_ORIGINAL, CheckerConfig
from calibration.schemes.rgb.scheme import SCHEME
from calibration.search import Calibrator
from calibration.search.problem import check_problem

RECORD: dict[str, Any] = {
    "scheme": "rgb", "id": "q1", "task": "noise", "language": "en", "query": "Where is the Eiffel Tower?",
    "answer": ["Paris"], "docs": ["The Eiffel Tower is in Paris."], "noise_rate": 0.4,
    "response": "It is in Paris.", "model": "gpt",
    "responses": {"llama": "I can not answer the question because of the insufficient information in documents.",
                  "qwen": "It is in Lyon."},
}


def test_registered_protocol_and_detect() -> None:
    assert isinstance(SCHEME, base.Scheme) and base.get("rgb") is SCHEME
    bare = {k: v for k, v in RECORD.items() if k != "scheme"}
    assert SCHEME.detect(bare) and SCHEME.detect({"query": "q", "answer": "a", "responses": {}})
    assert "rgb" in [s.name for s in base.registry().detect(bare)]
    # (rubric's detect also claims any record with "response"; a bare multi-model record is rgb's alone)
    multi = {k: v for k, v in bare.items() if k not in ("response", "model")}
    assert [s.name for s in base.registry().detect(multi)] == ["rgb"]
    for other in ({"text": "x", "ground_truth": []}, {"question": "q", "response": "r", "traits": []},
                  {"question": "q", "documents": ["d"], "response": "r"}, {"reviews": [], "ground_truth": {}},
                  {"query": "q", "response": "r"}):
        assert not SCHEME.detect(other)
    assert set(SCHEME.label_kinds) == {"correct", "rejected", "error_detected", "error_corrected", "status", "note"}
    assert set(SCHEME.presets()) == {"rgb_original", "rgb_extended"}
    assert CheckerConfig.from_dict(SCHEME.presets()["rgb_extended"]) == RGB_EXTENDED


def test_parse_round_trip_units_and_machine_labels() -> None:
    parsed = SCHEME.parse(RECORD)
    assert parsed.ok
    rec = parsed.record
    assert SCHEME.parse(SCHEME.to_json(rec)).record == rec
    assert SCHEME.units(rec) == ["gpt", "llama", "qwen"] and SCHEME.record_id(rec) == "q1"
    assert "Lyon" in SCHEME.record_text(rec) and "Eiffel" in SCHEME.record_text(rec)
    assert SCHEME.machine_label(rec, "gpt") == {"correct": True, "rejected": False, "error_detected": False,
                                                "error_corrected": False}
    assert SCHEME.machine_label(rec, "llama")["rejected"] is True and SCHEME.machine_label(rec, "nobody") is None
    assert SCHEME.unit_summary(rec, "qwen") == {"task": "noise", "language": "en", "noise_rate": 0.4,
                                                "correct": False, "rejected": False}
    acc = SCHEME.accept(SCHEME.machine_label(rec, "llama"))
    assert acc == {"correct": False, "rejected": True, "error_detected": False, "error_corrected": False,
                   "status": "accepted"}
    assert all(not SCHEME.label_kinds[k].validate(v) for k, v in acc.items())
    assert SCHEME.label_kinds["correct"].validate("yes")[0].message.startswith("expected true")
    # the single-response form: its unit is the model, or "response" without one
    single = {k: v for k, v in RECORD.items() if k not in ("responses", "model")}
    assert SCHEME.units(SCHEME.parse(single).record) == ["response"]
    only = {k: v for k, v in RECORD.items() if k not in ("response", "model")}
    rec2 = SCHEME.parse(only).record
    assert rec2.response is None and SCHEME.units(rec2) == ["llama", "qwen"]
    assert "response" not in SCHEME.to_json(rec2) and SCHEME.parse(SCHEME.to_json(rec2)).record == rec2


@pytest.mark.parametrize("change, field", [
    ({"response": None, "responses": None}, "response"),
    ({"responses": {"gpt": "again"}}, 'responses["gpt"]'),
    ({"responses": {"m": 3}}, 'responses["m"]'),
    ({"responses": []}, "responses"),
    ({"responses": {}}, "responses"),
])
def test_parse_rejects_bad_responses(change: dict[str, Any], field: str) -> None:
    raw = {k: v for k, v in {**RECORD, **change}.items() if v is not None}
    parsed = SCHEME.parse(raw)
    assert not parsed.ok and field in {p.field for p in parsed.problems}


def test_metrics_and_label_items() -> None:
    rec = SCHEME.parse(RECORD).record
    m = SCHEME.metrics(rec, "gpt", {"correct": False})
    assert m["accuracy"] == 100.0 and m["human_accuracy"] == 0.0 and m["correct_agree"] == 0.0
    assert m["rejection_rate"] == 0.0 and math.isnan(m["human_rejection_rate"]) and math.isnan(m["rejected_agree"])
    # parameters: a checker config whose rejection list lacks the response's phrase
    off = RGB_ORIGINAL.with_(rejection_phrases=("信息不足",)).to_dict()
    assert SCHEME.metrics(rec, "llama", {})["rejection_rate"] == 100.0
    assert SCHEME.metrics(rec, "llama", {}, off)["rejection_rate"] == 0.0
    assert SCHEME.metrics(rec, "nobody", {}) == {}
    assert SCHEME.label_items(rec, "gpt", {"correct": True, "rejected": None, "note": "x"}) == {"correct": True}


# -- calibration ----------------------------------------------------------------------------------------------------
WORDS = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima".split()
PHRASES = ("insufficient information", "i don't know", "unclear", "cannot answer", "not mentioned", "", "")
HIDDEN = CheckerConfig("rgb_extended", 0.6, tuple(p for p in RGB_EXTENDED.rejection_phrases
                                                   if p not in ("unclear", "not mentioned")), rejection_wins=True)


def make_records(n: int, seed: int = 0) -> list[Any]:
    """Queries whose 2-5 token answers two models echo in part (token overlaps 0..1), with rejection phrases mixed in."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        k = rng.choice((2, 3, 4, 5))
        answer = " ".join(rng.sample(WORDS, k))
        responses = {}
        for model in ("m1", "m2"):
            j = rng.randint(0, k)
            part = answer if j == k else " ".join(rng.sample(answer.split(), j))
            responses[model] = f"Maybe {part}. {rng.choice(PHRASES)}".strip()
        raw = {"id": f"s{i}", "task": "noise", "language": "en", "query": "q?", "answer": answer, "docs": ["d"],
               "noise_rate": 0.2, "responses": responses}
        out.append(SCHEME.parse(raw).record)
    return out


def planted(records: list[Any], config: CheckerConfig, label: str) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r.id, u): {label: getattr(check(r.for_unit(u), config), label)} for r in records for u in r.units}


def test_search_problem_contract() -> None:
    recs = make_records(30)
    p = SCHEME.search_problem(recs, planted(recs, HIDDEN, "correct"), {})
    check_problem(p)
    assert len(p.units) == 60 and set(p.units["stratum"]) == {"m1", "m2"} and p.scheme == "rgb"
    assert p.space.columns[:3] == ("variant", "overlap_threshold", "rejection_wins")
    assert all(s.startswith("rejection:") for s in p.switches) and 0 < len(p.switches) <= 8
    assert p.space.n_configs == 2 * 6 * 2 * 2 ** len(p.switches)
    # every baseline point decides exactly as its preset
    for name, preset in (("rgb_original", RGB_ORIGINAL), ("rgb_extended", RGB_EXTENDED)):
        point = p.baselines()[name]
        d = p.decide({k: np.array([v], dtype=object) for k, v in point.items()})[0]
        units = [r.for_unit(u) for r in recs for u in r.units]
        assert d.tolist() == [int(check(x, preset).correct) for x in units]
        assert make_config(point, p.switches).to_dict() == {**preset.to_dict(), "name": "calibrated"}
    assert SCHEME.search_problem(recs, {}, {}) is None
    with pytest.raises(ValueError, match="label"):
        SCHEME.search_problem(recs, {}, {"label": "fluent"})


def test_switch_choice_explicit_and_greedy() -> None:
    recs = make_records(40)
    labels = planted(recs, HIDDEN, "rejected")
    p = search_problem(recs, labels, {"label": "rejected", "phrases": ["unclear", "not mentioned"]})
    assert p.switches == ("rejection:unclear", "rejection:not mentioned") and p.space.n_configs == 2 * 6 * 4
    with pytest.raises(ValueError, match="phrases"):
        search_problem(recs, labels, {"label": "rejected", "phrases": ["no such phrase"]})
    g = search_problem(recs, labels, {"label": "rejected", "switches": "greedy"})
    assert set(g.switches) == {"rejection:unclear", "rejection:not mentioned"} and g.warnings
    e = search_problem(recs, planted(recs, HIDDEN, "error_detected"), {"label": "error_detected"})
    assert "counterfactual_rule" in e.space.columns and all(s.startswith("error:") for s in e.switches)


@pytest.mark.parametrize("label", ["correct", "rejected"])
def test_planted_checker_is_recovered_through_the_generic_calibrator(label: str) -> None:
    recs = make_records(150)
    labels = planted(recs, HIDDEN, label)
    p = SCHEME.search_problem(recs, labels, {"label": label})
    cal = Calibrator(objective="kappa", folds=5, seed=0, n_boot=200).fit(p)
    best = CheckerConfig.from_dict(cal.best_params_)
    units = [r.for_unit(u) for r in recs for u in r.units]
    assert [getattr(check(x, best), label) for x in units] == [getattr(check(x, HIDDEN), label) for x in units]
    assert set(best.rejection_phrases) == set(HIDDEN.rejection_phrases)
    if label == "correct":
        assert best.variant == "rgb_extended" and best.overlap_threshold == 0.6 and best.rejection_wins
    assert cal.heldout_score_ >= 0.95
    lo, hi = cal.heldout_ci_
    assert lo <= cal.heldout_score_ <= hi
    assert set(cal.baselines_) == {"rgb_original", "rgb_extended"}
    assert all(cal.heldout_score_ > v for v in cal.baselines_.values())
    assert cal.to_dict()["scheme"] == "rgb"


def test_unit_decisions_repeated_or_interleaved_are_each_units_own() -> None:
    """The scheme keeps its last decision (import asks twice per unit): each answer is still the checkers' own for
    that record and unit, whatever was asked before, and a caller changing the dict it got changes nothing."""
    import json
    from pathlib import Path

    from calibration.schemes.rgb.checkers import check
    from calibration.schemes.rgb.config import PRESETS
    from calibration.schemes.rgb.scheme import RGBScheme

    scheme = RGBScheme()
    demo = Path(__file__).resolve().parents[1] / "resources" / "demo" / "rgb.jsonl"
    records = [scheme.parse(json.loads(x)).record for x in demo.read_text(encoding="utf-8").splitlines() if x.strip()]
    asked = [(r, u) for r in records for u in r.units]
    assert len({u for _, u in asked}) > 1
    for r, u in asked + asked[::-1] + [x for pair in zip(asked, asked[1:]) for x in pair]:
        want = check(r.for_unit(u), PRESETS["rgb_original"]).as_dict()
        got = scheme.machine_label(r, u)
        assert got == want
        got["correct"] = not got["correct"]
        summary = scheme.unit_summary(r, u)
        assert (summary["correct"], summary["rejected"]) == (want["correct"], want["rejected"])
