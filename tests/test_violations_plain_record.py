"""`plain_record` (import's shortcut: a record valid as it stands, as plain values) never accepts a record that
`parse_record` has anything to say about, and when it accepts one it holds exactly what `parse_record` makes of it."""
from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calibration.schemes.violations.parse import PlainSample, parse_record, plain_record
from calibration.schemes.violations.records import VIOLATION_FIELDS, Violation

TEXT = "Limited stock! Our tea cures colds 🙂 and costs less."
PROPS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# values a field may take in a file: right and wrong types, in and out of range, blank strings
ODD = st.sampled_from([None, "", "  ", "x", 3, 3.0, -1, 0, 100, True, [], {}, {"k": 1}, "Limited", TEXT[:5]])


@st.composite
def violations(draw: Any) -> dict[str, Any]:
    """A violation valid as given by offsets (optional fields present or not)."""
    start = draw(st.integers(0, len(TEXT) - 1))
    end = draw(st.integers(start + 1, len(TEXT)))
    v: dict[str, Any] = {"start": start, "end": end, "rule": "No claims"}
    if draw(st.booleans()):
        v["quote"] = TEXT[start:end]
    for name in ("category", "explanation", "correction"):
        if draw(st.booleans()):
            v[name] = draw(st.sampled_from(["text", None]))
    return v


@st.composite
def records(draw: Any) -> dict[str, Any]:
    """A valid record, then up to two slips anywhere in it (a field of any type or value, one missing, one unknown,
    a list that is not one, a quote that disagrees, a blank checker name)."""
    rec: dict[str, Any] = {"id": "s1", "text": TEXT, "ground_truth": draw(st.lists(violations(), max_size=3)),
                           "predictions": draw(st.dictionaries(st.sampled_from(["a@1|m", "b@2|m", "odd name"]),
                                                               st.lists(violations(), max_size=3), max_size=2))}
    for name, value in (("context", "ad"), ("split", "test"), ("meta", {"k": [1]}), ("scheme", "violations")):
        if draw(st.booleans()):
            rec[name] = value
    for _ in range(draw(st.integers(0, 2))):
        preds = rec.get("predictions")
        lists = [rec.get("ground_truth"), *(preds.values() if type(preds) is dict else ())]
        lists = [vs for vs in lists if type(vs) is list and any(type(v) is dict for v in vs)]
        target = draw(st.sampled_from(["record", "violation"])) if lists else "record"
        if target == "record":
            name = draw(st.sampled_from(["id", "text", "ground_truth", "predictions", "context", "split", "meta",
                                         "notes", "checker"]))
            if name == "checker":
                if type(rec.get("predictions")) is dict:
                    rec["predictions"][draw(st.sampled_from(["", " "]))] = []
            elif draw(st.integers(0, 4)) == 0:
                rec.pop(name, None)
            else:
                rec[name] = draw(ODD)
        else:
            vs = draw(st.sampled_from(lists))
            i = draw(st.sampled_from([j for j, v in enumerate(vs) if type(v) is dict]))
            v = vs[i]
            slip = draw(st.sampled_from(["field", "drop", "unknown", "quote", "not an object"]))
            if slip == "field":
                v[draw(st.sampled_from(["start", "end", "rule", "quote", "category", "explanation", "correction"]))] = draw(ODD)
            elif slip == "drop":
                v.pop(draw(st.sampled_from(["start", "end", "rule"])), None)
            elif slip == "unknown":
                v["severity"] = "high"
            elif slip == "quote":
                v["quote"] = v["quote"] + "!" if type(v.get("quote")) is str else "cures"
            else:
                vs[i] = draw(ODD)
    return rec


def _fields(v: Violation) -> tuple[Any, ...]:
    return tuple(getattr(v, name) for name in VIOLATION_FIELDS)


@PROPS
@given(records())
def test_plain_record_accepts_only_what_parse_record_finds_nothing_wrong_with(rec: dict[str, Any]) -> None:
    plain = plain_record(rec)
    if plain is None:
        return
    parsed = parse_record(rec)
    assert parsed.problems == () and parsed.record is not None
    assert all(h == "offsets" for hs in parsed.record.hows.values() for h in hs)
    s = parsed.record.sample
    assert (plain.id, plain.text, plain.context, plain.split, plain.meta) == (s.id, s.text, s.context, s.split,
                                                                             parsed.record.meta)
    assert plain.ground_truth == [_fields(v) for v in s.ground_truth]
    assert list(plain.predictions) == list(s.predictions)  # the file's order of checkers
    assert {k: [_fields(v) for v in vs] for k, vs in s.predictions.items()} == plain.predictions


def test_a_valid_record_given_by_offsets_takes_the_shortcut() -> None:
    at = TEXT.index("cures colds")
    v = {"start": at, "end": at + 11, "quote": "cures colds", "rule": "Medical", "category": "health",
         "explanation": None, "correction": "Drop it"}
    rec = {"scheme": "violations", "id": "s1", "text": TEXT, "ground_truth": [v], "predictions": {"a@1|m": [v, v], "b@1|m": []},
           "context": "ad", "split": "test", "meta": {"k": [1]}}
    fields = (at, at + 11, "cures colds", "Medical", "health", None, "Drop it")
    assert plain_record(rec) == PlainSample("s1", TEXT, [fields], {"a@1|m": [fields, fields], "b@1|m": []}, "ad", "test",
                                            {"k": [1]})
    # what needs a closer look goes to parse_record: a quote to locate, an integer id, an unknown field
    for odd in ({"ground_truth": [{"quote": "cures colds", "rule": "Medical"}]}, {"id": 7}, {"notes": "x"},
                {"predictions": {"a@1|m": [dict(v, severity="high")]}}):
        assert plain_record({**rec, **odd}) is None
