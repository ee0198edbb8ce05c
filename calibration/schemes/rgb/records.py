"""Record type of the `rgb` scheme: one model's response to one RGB query, and its validation.

A record is `{"scheme": "rgb", "id", "task", "language", "query", "answer", "docs", "response"}` plus optional
`noise_rate`, `model`, `fakeanswer` and the passage pools `positive`/`negative`/`positive_wrong`. Several models'
responses to the same query can share one record: `responses: {model: text}` instead of (or beside) the single
`response` + `model`; each model is a unit (the single response's unit is its `model`, or "response" without one),
and `for_unit(model)` gives the one-response record the checkers see. `answer` is a
string or a list whose elements are strings or lists of alternatives (any alternative counts), as in RGB's data.
Problems are collected, never raised, each at a JSON path, so an importer can report every one at once.
"""
from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from calibration.schemes.base import FieldProblem, Parsed

Task = Literal["noise", "rejection", "integration", "counterfactual"]
Language = Literal["en", "zh"]
TASKS: tuple[str, ...] = ("noise", "rejection", "integration", "counterfactual")
LANGUAGES: tuple[str, ...] = ("en", "zh")
# An answer element: a string, or a tuple of alternative strings.
Element = str | tuple[str, ...]
Answer = str | tuple[Element, ...]

REQUIRED_KEYS: frozenset[str] = frozenset({"id", "task", "language", "query", "answer", "docs", "response"})
OPTIONAL_KEYS: frozenset[str] = frozenset({"scheme", "noise_rate", "model", "fakeanswer", "positive", "negative",
                                           "positive_wrong", "responses"})
DEFAULT_UNIT = "response"  # the unit of a single `response` given without `model`
RECORD_KEYS: frozenset[str] = REQUIRED_KEYS | OPTIONAL_KEYS


@dataclass(frozen=True, slots=True)
class RGBRecord:
    """One response of one model (the unit) to one RGB query. Lists are tuples so a parsed record stays valid."""

    id: str
    task: Task
    language: Language
    query: str
    answer: Answer
    docs: tuple[str, ...]
    response: str | None  # None when only `responses` is given
    noise_rate: float | None = None
    model: str | None = None
    fakeanswer: Answer | None = None  # shaped like `answer` (zh_fact has a list one)
    positive: tuple[Any, ...] | None = None  # strings, or (integration data) lists of strings
    negative: tuple[str, ...] | None = None
    positive_wrong: tuple[str, ...] | None = None
    responses: tuple[tuple[str, str], ...] = ()  # (model, text) of further models, in the file's order

    @property
    def units(self) -> tuple[str, ...]:
        """The models answering: the single response's (its model, or DEFAULT_UNIT), then those of `responses`."""
        head = () if self.response is None else (self.model or DEFAULT_UNIT,)
        return head + tuple(m for m, _ in self.responses)

    def for_unit(self, unit: str) -> "RGBRecord":
        """The one-response record of model `unit` (what the checkers and figures read); KeyError if absent."""
        if self.response is not None and unit == (self.model or DEFAULT_UNIT):
            return self if not self.responses else replace(self, responses=())
        for m, text in self.responses:
            if m == unit:
                return replace(self, response=text, model=unit, responses=())
        raise KeyError(f"record {self.id!r} has no response of {unit!r}")

    @property
    def elements(self) -> tuple[Element, ...]:
        """The answer as RGB's checkanswer sees it: a bare string is one element."""
        return (self.answer,) if isinstance(self.answer, str) else self.answer

    @property
    def fake_strings(self) -> tuple[str, ...]:
        """Every string of the fake answer (one for the usual string; all alternatives of a list)."""
        return answer_strings(self.fakeanswer)

    @property
    def full_noise(self) -> bool:
        """Noise rate 1 (every passage is noise), or a rejection-task record without a noise rate (RGB's rejection
        task *is* noise rate 1), where RGB counts a rejection as the right response."""
        return self.noise_rate == 1.0 if self.noise_rate is not None else self.task == "rejection"


def answer_strings(answer: Answer | None) -> tuple[str, ...]:
    """All strings of an answer-shaped value, flattened in order; () for None."""
    if answer is None:
        return ()
    if isinstance(answer, str):
        return (answer,)
    return tuple(s for el in answer for s in ((el,) if isinstance(el, str) else el))


def _type(v: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", int: "integer", float: "number",
            type(None): "null"}.get(type(v), type(v).__name__)


def parse_answer(value: Any, path: str = "answer") -> tuple[Answer | None, list[FieldProblem]]:
    """A string, or a list of strings / lists of strings (alternatives); lists become tuples."""
    if isinstance(value, str):
        return value, []
    if not isinstance(value, list):
        return None, [FieldProblem(path, f"must be a string or a list, got {_type(value)}")]
    problems: list[FieldProblem] = []
    out: list[Element] = []
    for i, el in enumerate(value):
        if isinstance(el, str):
            out.append(el)
        elif isinstance(el, list):
            bad = [j for j, alt in enumerate(el) if not isinstance(alt, str)]
            for j in bad:
                problems.append(FieldProblem(f"{path}[{i}][{j}]", f"must be a string, got {_type(el[j])}"))
            if not bad:
                out.append(tuple(el))
        else:
            problems.append(FieldProblem(f"{path}[{i}]", f"must be a string or a list of strings, got {_type(el)}"))
    return (None if problems else tuple(out)), problems


def answer_to_json(answer: Answer) -> str | list[Any]:
    return answer if isinstance(answer, str) else [e if isinstance(e, str) else list(e) for e in answer]


def str_list(value: Any, path: str, nested: bool = False) -> tuple[tuple[Any, ...] | None, list[FieldProblem]]:
    """A list of strings (or, with `nested`, of strings or lists of strings: integration data's passage groups)."""
    if not isinstance(value, list):
        return None, [FieldProblem(path, f"must be a list of strings, got {_type(value)}")]
    if all(type(item) is str for item in value):  # the common case, read back on every evaluate: no checks to make
        return tuple(value), []
    problems: list[FieldProblem] = []
    out: list[Any] = []
    for i, item in enumerate(value):
        if isinstance(item, str):
            out.append(item)
        elif nested and isinstance(item, list) and all(isinstance(s, str) for s in item):
            out.append(tuple(item))
        else:
            want = "a string or a list of strings" if nested else "a string"
            problems.append(FieldProblem(f"{path}[{i}]", f"must be {want}, got {_type(item)}"))
    return (None if problems else tuple(out)), problems


def _text(raw: Mapping[str, Any], key: str, problems: list[FieldProblem], required: bool = True) -> str | None:
    if key not in raw or raw[key] is None:
        if required:
            problems.append(FieldProblem(key, "is required"))
        return None
    v = raw[key]
    if not isinstance(v, str):
        problems.append(FieldProblem(key, f"must be a string, got {_type(v)}"))
        return None
    return v


def _choice(raw: Mapping[str, Any], key: str, allowed: tuple[str, ...], problems: list[FieldProblem]) -> str | None:
    v = _text(raw, key, problems)
    if v is not None and v not in allowed:
        problems.append(FieldProblem(key, f"must be one of {', '.join(allowed)}; got {v!r}"))
        return None
    return v


def _responses(raw: Mapping[str, Any]) -> tuple[tuple[tuple[str, str], ...], list[FieldProblem]]:
    """`responses`: a non-empty object of model name -> response text (absent or null: none)."""
    value = raw.get("responses")
    if value is None:
        return (), []
    if not isinstance(value, Mapping):
        return (), [FieldProblem("responses", f"must be an object of model -> response text, got {_type(value)}")]
    if not value:
        return (), [FieldProblem("responses", "must name at least one model")]
    problems: list[FieldProblem] = []
    out: list[tuple[str, str]] = []
    for model, text in value.items():
        name = str(model)
        if name.strip() and type(text) is str:  # the common case: no path to spell out
            out.append((name, text))
            continue
        path = f"responses[{json.dumps(model, ensure_ascii=False)}]"
        if not name.strip():
            problems.append(FieldProblem(path, "model name must not be empty"))
        elif not isinstance(text, str):
            problems.append(FieldProblem(path, f"must be a string, got {_type(text)}"))
        else:
            out.append((name, text))
    return tuple(out), problems


def _awaiting(raw: Mapping[str, Any]) -> bool:
    """An RGB data-file line imported before any model answered: passage pools, no docs assembled yet. It has no
    units until `concord generate` assembles docs (passages.py) and stores responses."""
    return raw.get("positive") is not None and raw.get("docs") == []


def parse_record(raw: Mapping[str, Any]) -> Parsed:
    """Validate one decoded JSON object into an `RGBRecord`; every problem is reported with its field path."""
    problems: list[FieldProblem] = []
    if not isinstance(raw, Mapping):
        return Parsed(None, (FieldProblem("", f"must be a JSON object, got {_type(raw)}"),))
    for key in sorted(set(raw) - RECORD_KEYS):
        problems.append(FieldProblem(key, f"unknown field; an rgb record has {', '.join(sorted(RECORD_KEYS))}"))
    if "scheme" in raw and raw["scheme"] != "rgb":
        problems.append(FieldProblem("scheme", f"must be 'rgb', got {raw['scheme']!r}"))
    rid = raw.get("id")
    if rid is None:
        problems.append(FieldProblem("id", "is required"))
    elif isinstance(rid, bool) or not isinstance(rid, (str, int)):
        problems.append(FieldProblem("id", f"must be a string or an integer, got {_type(rid)}"))
    elif isinstance(rid, str) and not rid.strip():
        problems.append(FieldProblem("id", "must not be empty"))
    task = _choice(raw, "task", TASKS, problems)
    language = _choice(raw, "language", LANGUAGES, problems)
    query = _text(raw, "query", problems)
    responses, p = _responses(raw)
    problems += p
    response = _text(raw, "response", problems, required=False)
    if response is None and raw.get("response") is None and raw.get("responses") is None and not _awaiting(raw):
        problems.append(FieldProblem("response", "is required (or `responses`: an object of model -> response text; "
                                                 "only a query with `positive` passages and no `docs` yet may have none)"))
    answer: Answer | None = None
    if "answer" not in raw:
        problems.append(FieldProblem("answer", "is required"))
    else:
        answer, p = parse_answer(raw["answer"])
        problems += p
    docs: tuple[Any, ...] | None = None
    if "docs" not in raw:
        problems.append(FieldProblem("docs", "is required"))
    else:
        docs, p = str_list(raw["docs"], "docs")
        problems += p
    noise_rate = raw.get("noise_rate")
    if noise_rate is not None:
        if isinstance(noise_rate, bool) or not isinstance(noise_rate, (int, float)) or math.isnan(noise_rate) \
                or not 0 <= noise_rate <= 1:
            problems.append(FieldProblem("noise_rate", f"must be a number from 0 to 1, got {noise_rate!r}"))
            noise_rate = None
        else:
            noise_rate = float(noise_rate)
    model = _text(raw, "model", problems, required=False)
    if response is not None and responses and (model or DEFAULT_UNIT) in dict(responses):
        problems.append(FieldProblem(f"responses[{json.dumps(model or DEFAULT_UNIT, ensure_ascii=False)}]",
                                     f"model {model or DEFAULT_UNIT!r} is also the single response's; give it once"))
    fakeanswer: Answer | None = None
    if raw.get("fakeanswer") is not None:
        fakeanswer, p = parse_answer(raw["fakeanswer"], "fakeanswer")
        problems += p
    pools: dict[str, tuple[Any, ...] | None] = {}
    for key in ("positive", "negative", "positive_wrong"):
        if raw.get(key) is not None:
            pools[key], p = str_list(raw[key], key, nested=key == "positive")
            problems += p
    if problems:
        return Parsed(None, tuple(problems))
    record = RGBRecord(
        id=str(rid), task=task, language=language, query=query, answer=answer,  # type: ignore[arg-type]
        docs=docs, response=response, noise_rate=noise_rate, model=model, fakeanswer=fakeanswer,  # type: ignore[arg-type]
        positive=pools.get("positive"), negative=pools.get("negative"), positive_wrong=pools.get("positive_wrong"),
        responses=responses,
    )
    return Parsed(record, ())


def record_to_json(record: RGBRecord) -> dict[str, Any]:
    """The record as `parse_record` reads it (with "scheme"); optional fields only when set."""
    out: dict[str, Any] = {
        "scheme": "rgb", "id": record.id, "task": record.task, "language": record.language, "query": record.query,
        "answer": answer_to_json(record.answer), "docs": list(record.docs),
    }
    if record.response is not None:
        out["response"] = record.response
    for key in ("noise_rate", "model"):
        if getattr(record, key) is not None:
            out[key] = getattr(record, key)
    if record.fakeanswer is not None:
        out["fakeanswer"] = answer_to_json(record.fakeanswer)
    for key in ("positive", "negative", "positive_wrong"):
        pool = getattr(record, key)
        if pool is not None:
            out[key] = [list(x) if isinstance(x, tuple) else x for x in pool]
    if record.responses:
        out["responses"] = dict(record.responses)
    return out


def _stored_answer(value: Any) -> Answer:
    """`parse_answer` of an answer that has no problem; ValueError otherwise."""
    if type(value) is str:
        return value
    if type(value) is not list:
        raise ValueError("not a stored answer")
    out: list[Element] = []
    for el in value:
        if type(el) is str:
            out.append(el)
        elif type(el) is list and all(type(alt) is str for alt in el):
            out.append(tuple(el))
        else:
            raise ValueError("not a stored answer")
    return tuple(out)


def _stored_strings(value: Any, nested: bool = False) -> tuple[Any, ...]:
    """`str_list` of a list that has no problem; ValueError otherwise."""
    if type(value) is not list:
        raise ValueError("not a stored list")
    if all(type(item) is str for item in value):
        return tuple(value)
    if nested and all(type(item) is str or (type(item) is list and all(type(s) is str for s in item))
                      for item in value):
        return tuple(item if type(item) is str else tuple(item) for item in value)
    raise ValueError("not a stored list")


def _optional_text(raw: Mapping[str, Any], key: str) -> str | None:
    value = raw.get(key)
    if value is not None and type(value) is not str:
        raise ValueError(f"not a stored {key}")
    return value


def stored_record(raw: Mapping[str, Any]) -> RGBRecord:
    """The record `parse_record(raw)` gives for a payload it finds no problem in (the project's stored records, as
    `record_to_json` wrote them), read without collecting problems: validating every stored record again was a
    fifth of `concord evaluate --scheme rgb`. Raises ValueError (or KeyError) on anything else: the caller then asks
    `parse_record`, which says what is wrong (and gives no record)."""
    if not RECORD_KEYS.issuperset(raw) or raw.get("scheme", "rgb") != "rgb":
        raise ValueError("not a stored record")
    rid, task, language, query = raw["id"], raw["task"], raw["language"], raw["query"]
    if type(rid) is not str or not rid.strip() or type(task) is not str or task not in TASKS \
            or type(language) is not str or language not in LANGUAGES or type(query) is not str:
        raise ValueError("not a stored record")
    response, model = _optional_text(raw, "response"), _optional_text(raw, "model")
    value = raw.get("responses")
    responses: tuple[tuple[str, str], ...] = ()
    if value is not None:
        if type(value) is not dict or not value or not all(type(m) is str and m.strip() and type(t) is str
                                                           for m, t in value.items()):
            raise ValueError("not stored responses")
        responses = tuple(value.items())
        if response is not None and (model or DEFAULT_UNIT) in value:
            raise ValueError("not stored responses")
    elif response is None and not _awaiting(raw):
        raise ValueError("no response")
    noise_rate = raw.get("noise_rate")
    if noise_rate is not None:
        if type(noise_rate) not in (int, float) or math.isnan(noise_rate) or not 0 <= noise_rate <= 1:
            raise ValueError("not a stored noise rate")
        noise_rate = float(noise_rate)
    fake = raw.get("fakeanswer")
    pools = {key: None if raw.get(key) is None else _stored_strings(raw[key], nested=key == "positive")
             for key in ("positive", "negative", "positive_wrong")}
    return RGBRecord(id=rid, task=task, language=language, query=query,  # type: ignore[arg-type]
                     answer=_stored_answer(raw["answer"]), docs=_stored_strings(raw["docs"]), response=response,
                     noise_rate=noise_rate, model=model, fakeanswer=None if fake is None else _stored_answer(fake),
                     positive=pools["positive"], negative=pools["negative"], positive_wrong=pools["positive_wrong"],
                     responses=responses)
