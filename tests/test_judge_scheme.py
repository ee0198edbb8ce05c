"""The judge scheme through the Scheme protocol and the registry: parsing with field paths, round trips, the JSON
Schema, units, machine labels and per-unit metrics. Also the synthetic data the other judge tests share."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import pytest

from calibration.schemes import base
from calibration.schemes.judge.scheme import SCHEME

SCHEMAS = Path(__file__).resolve().parents[1] / "resources" / "schema"

RECORD: dict[str, Any] = {
    "scheme": "judge", "id": "s1", "text": "The film grossed $181 million.", "context": "Poseidon grossed $181,674,817.",
    "judges": {"hhem": {"score": 0.2, "high_means_positive": False, "probability": True},
               "llm": {"score": 1, "high_means_positive": False, "explanation": "consistent"},
               "risk": 3.5, "silent": None},
    "positive": "hallucinated", "split": "test", "meta": {"batch": "1"},
}


def synthetic(n: int = 400, seed: int = 0, shift: float = 1.0) -> tuple[list[Any], np.ndarray, np.ndarray]:
    """(records, human 0/1, judge "a" scores): judge "a" scores positives ~ N(shift, 1), negatives ~ N(0, 1) (a
    population AUROC of Phi(shift / sqrt 2)); judge "b" is a probability-like consistency score (high = negative)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    a = rng.normal(shift * y, 1.0)
    b = np.clip(1.0 - (0.5 * y + rng.uniform(0, 0.6, n)), 0.0, 1.0).round(2)
    recs = []
    for i in range(n):
        raw = {"scheme": "judge", "id": f"s{i}", "text": f"text {i}",
               "judges": {"a": {"score": float(a[i])}, "b": {"score": float(b[i]), "high_means_positive": False}}}
        recs.append(SCHEME.parse(raw).record)
    return recs, y, a


def labels_of(records: list[Any], y: np.ndarray) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r.id, ""): {"label": bool(v)} for r, v in zip(records, y)}


def test_registered_after_addm_and_implements_the_protocol() -> None:
    names = base.registry().names()
    assert "judge" in names and names.index("judge") == names.index("addm") + 1
    assert isinstance(SCHEME, base.Scheme) and base.get("judge") is SCHEME
    assert SCHEME.unit_noun == "judge" and SCHEME.label_kinds["label"].per_sample
    assert SCHEME.label_kinds["marks"].per_sample


def test_parse_round_trip_and_units() -> None:
    p = SCHEME.parse(RECORD)
    assert p.ok, p.problems
    r = p.record
    assert SCHEME.units(r) == ["hhem", "llm", "risk", "silent"]
    assert SCHEME.parse(SCHEME.to_json(r)).record == r
    assert r.judges["risk"].score == 3.5 and r.judges["risk"].high_means_positive
    assert r.judges["silent"].score is None
    assert "Poseidon" in SCHEME.record_text(r)


def test_schema_accepts_what_the_parser_accepts() -> None:
    schema = json.loads((SCHEMAS / SCHEME.record_schema).read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    v = jsonschema.Draft202012Validator(schema)
    assert not list(v.iter_errors(RECORD))
    assert not list(v.iter_errors(SCHEME.to_json(SCHEME.parse(RECORD).record)))
    bad = {**RECORD, "judges": {"x": {"score": "high"}}}
    assert list(v.iter_errors(bad)) and not SCHEME.parse(bad).ok


@pytest.mark.parametrize("change, path", [
    ({"judges": {"x": {"score": "high"}}}, 'judges["x"].score'),
    ({"judges": {"x": {"score": 1, "high_means_positive": "no"}}}, 'judges["x"].high_means_positive'),
    ({"judges": []}, "judges"),
    ({"text": None}, "text"),
    ({"levels": ["only"]}, "levels"),
    ({"levels": ["none", "minor", "major"], "positive_from": "none"}, "positive_from"),
])
def test_bad_records_name_the_field(change: dict[str, Any], path: str) -> None:
    p = SCHEME.parse({**RECORD, **change})
    assert not p.ok
    assert path in [x.field for x in p.problems if x.severity == "error"]


def test_unknown_keys_and_out_of_range_probability_are_warnings() -> None:
    p = SCHEME.parse({**RECORD, "extra": 1, "judges": {"p": {"score": 1.5, "probability": True}}})
    assert p.ok
    assert {x.field for x in p.problems} == {"extra", 'judges["p"].score'}


def test_machine_label_decision_and_metrics_follow_the_orientation() -> None:
    r = SCHEME.parse(RECORD).record
    # hhem is a consistency score: 0.2 < 0.5 says "hallucinated" (positive)
    assert SCHEME.machine_label(r, "hhem") == {"score": 0.2, "label": True}
    assert SCHEME.machine_label(r, "llm") == {"score": 1.0, "label": False}
    assert SCHEME.unit_summary(r, "hhem") == {"score": 0.2, "decision": "hallucinated"}
    assert SCHEME.accept(SCHEME.machine_label(r, "hhem")) == {"label": True, "status": "accepted"}
    m = SCHEME.metrics(r, "hhem", {"label": False})
    assert m["decision"] == 1.0 and m["human"] == 0.0 and m["correct"] == 0.0
    assert SCHEME.metrics(r, "hhem", {}, {"thresholds": {"hhem": 0.1}})["decision"] == 0.0
    assert SCHEME.label_items(r, "", {"label": True}) == {"label": True}


def test_ordinal_levels_binarise_at_positive_from() -> None:
    r = SCHEME.parse({**RECORD, "levels": ["none", "minor", "major"], "positive_from": "major"}).record
    assert [r.binary(v) for v in ("none", "minor", "major", "other", None)] == [0, 0, 1, None, None]
    assert SCHEME.machine_label(r, "hhem")["label"] == "major"


def test_label_kinds_validate_values() -> None:
    kinds = SCHEME.label_kinds
    assert kinds["label"].validate(True) == [] and kinds["label"].validate("minor") == []
    assert kinds["label"].validate(3)
    assert kinds["marks"].validate([{"start": 0, "end": 4, "label": ["Unwanted"], "note": None}]) == []
    assert kinds["marks"].validate([{"start": 5, "end": 4}])
