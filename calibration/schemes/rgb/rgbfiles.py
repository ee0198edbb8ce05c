"""Pure parsers for RGB's own files, read as they are: its data files and evalue.py's prediction files.

Data files (`en.json`, `en_int.json`, `en_fact.json`, `zh*.json`, `*_refine.json`) are JSON lines with id, query,
answer, positive, negative and (counterfactual) positive_wrong, fakeanswer; keys RGB itself never reads (zh_int's
`asnwer1`/`answer2`) are kept in `extra`. Prediction files are what evalue.py writes, one line per query:
id, query, ans, label, prediction, docs, noise_rate, factlabel, under the name
`prediction_{dataset}_{model}_temp{t}_noise{r}_passage{n}_correct{c}.json`, which is where the model comes from
unless the caller names it. The functions take the file's text (or lines) and return values plus problems;
reading the file is the caller's business.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from calibration.jsontext import JSONTextError, loads
from calibration.schemes.base import FieldProblem
from calibration.schemes.rgb.records import Answer, RGBRecord, str_list, parse_answer

DATA_KEYS = ("id", "query", "answer", "positive", "negative", "positive_wrong", "fakeanswer")
PREDICTION_KEYS = ("id", "query", "ans", "label", "prediction", "docs", "noise_rate", "factlabel")
_DATASETS = ("en_refine", "zh_refine", "en_fact", "zh_fact", "en_int", "zh_int", "en", "zh")  # longest first
PREDICTION_NAME = re.compile(
    r"^prediction_(?P<dataset>" + "|".join(_DATASETS) + r")_(?P<model>.+)_temp(?P<temperature>[^_]+)"
    r"_noise(?P<noise_rate>[^_]+)_passage(?P<passage_num>\d+)_correct(?P<correct_rate>[0-9.]+)"
    r"(?P<suffix>_result|_chatgpt|_chatgptresult)?\.json$")


@dataclass(frozen=True)
class LineProblem:
    """A problem on line `line` (1-based) of a file, at a field path inside that line's object."""

    line: int
    field: str
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.field + ': ' if self.field else ''}{self.message}"


@dataclass(frozen=True)
class RGBInstance:
    """One line of an RGB data file."""

    id: Any  # as in the file (an int in RGB's releases)
    query: str
    answer: Answer
    positive: tuple[Any, ...]  # strings; integration data: tuples of strings (passage groups)
    negative: tuple[str, ...]
    positive_wrong: tuple[str, ...] | None = None
    fakeanswer: Answer | None = None  # a string; zh_fact line 14 has a list
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PredictionLine:
    """One line of an evalue.py prediction file. `label` is RGB's per-element list ([-1] = rejection)."""

    id: Any
    query: str
    ans: Answer
    label: tuple[int, ...]
    prediction: str
    docs: tuple[str, ...]
    noise_rate: float
    factlabel: int
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class DatasetName:
    """What a dataset name says: `zh_int` -> language zh, integration."""

    dataset: str
    language: str
    kind: str  # "int", "fact", "refine" or "" (the plain noise/rejection data)

    @property
    def task(self) -> str:
        return {"int": "integration", "fact": "counterfactual"}.get(self.kind, "noise")

    def task_at(self, noise_rate: float) -> str:
        """RGB's rejection task is the plain data at noise rate 1."""
        return "rejection" if self.task == "noise" and noise_rate == 1 else self.task


def dataset_name(name: str) -> DatasetName:
    """`en`, `zh_fact`, `en_int.json`, `data/zh_refine.json` -> its language and kind (RGB tests substrings)."""
    stem = name.replace("\\", "/").rsplit("/", 1)[-1].removesuffix(".json")
    lang = "zh" if "zh" in stem else "en" if "en" in stem else ""
    if not lang:
        raise ValueError(f"{name!r}: not an RGB dataset name (expected en, zh, en_int, zh_fact, ...)")
    kind = "int" if "_int" in stem else "fact" if "_fact" in stem else "refine" if "_refine" in stem else ""
    return DatasetName(stem, lang, kind)


def parse_prediction_name(name: str) -> dict[str, Any] | None:
    """The parts of an evalue.py output file name, or None when the name does not follow its pattern."""
    m = PREDICTION_NAME.match(name.replace("\\", "/").rsplit("/", 1)[-1])
    if not m:
        return None
    d = m.groupdict()
    try:
        return {"dataset": d["dataset"], "model": d["model"], "temperature": float(d["temperature"]),
                "noise_rate": float(d["noise_rate"]), "passage_num": int(d["passage_num"]),
                "correct_rate": float(d["correct_rate"]), "suffix": d["suffix"] or ""}
    except ValueError:
        return None


def _lines(text: str | bytes | Iterable[str]) -> Iterable[tuple[int, str]]:
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    if isinstance(text, str):
        text = text.splitlines()
    for number, line in enumerate(text, start=1):
        if line.strip():
            yield number, line


def _objects(text: str | bytes | Iterable[str], problems: list[LineProblem]) -> Iterable[tuple[int, dict[str, Any]]]:
    for number, line in _lines(text):
        try:
            obj = loads(line, bom=number == 1)  # strict JSON within the limits (depth, field size)
        except JSONTextError as exc:
            message = f"{exc.message} (column {exc.column})" if exc.column is not None else exc.message
            problems.append(LineProblem(number, exc.field, message))
            continue
        if not isinstance(obj, dict):
            problems.append(LineProblem(number, "", "expected a JSON object"))
            continue
        yield number, obj


def _id(obj: Mapping[str, Any], fp: list[FieldProblem]) -> Any:
    if "id" not in obj:
        fp.append(FieldProblem("id", "is required"))
    elif isinstance(obj["id"], bool) or not isinstance(obj["id"], (int, str)):
        fp.append(FieldProblem("id", "must be an integer or a string"))
    return obj.get("id")


def _string(obj: Mapping[str, Any], key: str, fp: list[FieldProblem], required: bool = True) -> str | None:
    v = obj.get(key)
    if v is None:
        if required:
            fp.append(FieldProblem(key, "is required"))
        return None
    if not isinstance(v, str):
        fp.append(FieldProblem(key, "must be a string"))
    return v


def _pool(obj: Mapping[str, Any], key: str, fp: list[FieldProblem], nested: bool = False,
          required: bool = True) -> tuple[Any, ...] | None:
    if obj.get(key) is None:
        if required:
            fp.append(FieldProblem(key, "is required"))
        return None
    values, p = str_list(obj[key], key, nested=nested)
    fp += p
    return values


def parse_data_file(text: str | bytes | Iterable[str], dataset: str = "en") -> tuple[list[RGBInstance], list[LineProblem]]:
    """RGB data lines -> instances. `dataset` (a name like `zh_fact`) says which pools a line must carry."""
    kind = dataset_name(dataset).kind
    problems: list[LineProblem] = []
    out: list[RGBInstance] = []
    for number, obj in _objects(text, problems):
        fp: list[FieldProblem] = []
        rid = _id(obj, fp)
        query = _string(obj, "query", fp)
        answer: Answer | None = None
        if "answer" in obj:
            answer, p = parse_answer(obj["answer"])
            fp += p
        else:
            fp.append(FieldProblem("answer", "is required"))
        positive = _pool(obj, "positive", fp, nested=kind == "int")
        if kind == "int" and positive is not None:
            for i, group in enumerate(positive):
                if not isinstance(group, tuple) or not group:
                    fp.append(FieldProblem(f"positive[{i}]", "must be a non-empty list of strings (a passage group)"))
        negative = _pool(obj, "negative", fp)
        positive_wrong = _pool(obj, "positive_wrong", fp, required=kind == "fact")
        fakeanswer: Answer | None = None
        if obj.get("fakeanswer") is not None:
            fakeanswer, p = parse_answer(obj["fakeanswer"], "fakeanswer")
            fp += p
        elif kind == "fact":
            fp.append(FieldProblem("fakeanswer", "is required"))
        if fp:
            problems += [LineProblem(number, p.field, p.message) for p in fp]
            continue
        extra = {k: v for k, v in obj.items() if k not in DATA_KEYS}
        out.append(RGBInstance(rid, query, answer, positive, negative, positive_wrong, fakeanswer, extra))  # type: ignore[arg-type]
    return out, problems


def parse_prediction_file(text: str | bytes | Iterable[str]) -> tuple[list[PredictionLine], list[LineProblem]]:
    """evalue.py output lines -> prediction lines (every field RGB writes is required)."""
    problems: list[LineProblem] = []
    out: list[PredictionLine] = []
    for number, obj in _objects(text, problems):
        fp: list[FieldProblem] = []
        rid = _id(obj, fp)
        query = _string(obj, "query", fp)
        prediction = _string(obj, "prediction", fp)
        ans: Answer | None = None
        if "ans" in obj:
            ans, p = parse_answer(obj["ans"], "ans")
            fp += p
        else:
            fp.append(FieldProblem("ans", "is required"))
        label = obj.get("label")
        if not isinstance(label, list) or any(isinstance(x, bool) or x not in (-1, 0, 1) for x in label):
            fp.append(FieldProblem("label", "must be a list of -1, 0 or 1"))
        docs = _pool(obj, "docs", fp)
        noise = obj.get("noise_rate")
        if isinstance(noise, bool) or not isinstance(noise, (int, float)) or not 0 <= noise <= 1:
            fp.append(FieldProblem("noise_rate", "must be a number from 0 to 1"))
        fact = obj.get("factlabel")
        if isinstance(fact, bool) or fact not in (0, 1):
            fp.append(FieldProblem("factlabel", "must be 0 or 1"))
        if fp:
            problems += [LineProblem(number, p.field, p.message) for p in fp]
            continue
        extra = {k: v for k, v in obj.items() if k not in PREDICTION_KEYS}
        out.append(PredictionLine(rid, query, ans, tuple(label), prediction, docs, float(noise), int(fact), extra))  # type: ignore[arg-type]
    return out, problems


def prediction_record(line: PredictionLine, dataset: str, model: str, instance: RGBInstance | None = None) -> RGBRecord:
    """A prediction line as an rgb record (one unit: this model). The id joins dataset, RGB id, noise rate and model
    so several models' and noise rates' runs of the same query are distinct samples; `instance` adds the fake
    answer and passage pools."""
    name = dataset_name(dataset)
    return RGBRecord(
        id=f"{name.dataset}/{line.id}/noise{line.noise_rate:g}/{model}", task=name.task_at(line.noise_rate),  # type: ignore[arg-type]
        language=name.language, query=line.query, answer=line.ans, docs=line.docs,  # type: ignore[arg-type]
        response=line.prediction, noise_rate=line.noise_rate, model=model,
        fakeanswer=instance.fakeanswer if instance else None,
        positive=instance.positive if instance else None, negative=instance.negative if instance else None,
        positive_wrong=instance.positive_wrong if instance else None,
    )
