"""FaithBench (Bao et al. 2024, vectara/FaithBench) as released: `batch_<N>.json` files `{"samples": [...]}` ->
judge records and each annotator's label lines. Pure: decoded JSON in, dicts out (read_batches reads files).

A sample has `sample_id`, `source` (the article), `summary`, `annotations` (one per marked summary span:
annotator_name, label list such as ["Unwanted", "Unwanted.Intrinsic"], note, summary_start/summary_end offsets) and
`metadata` with the detectors' outputs. Mapping:
- record id `faithbench-b<N>-<sample_id>`; `text` the summary, `context` the source; meta: batch, sample_id,
  raw_sample_id, summarizer;
- one judge per detector in DETECTORS. Their scores are CONSISTENCY scores: 1 (or near 1) = consistent with the
  source, 0 = hallucinated, while the positive class is "hallucinated", so every judge has
  `high_means_positive: false` (a judge says "hallucinated" when score < threshold, default 0.5) and is declared a
  probability. A null score (true_nli on some samples) is no score;
- per annotator and sample a label line {"scheme": "judge", "sample", "annotator", "label", "marks"}: `label` is
  true (hallucinated) when the annotator marked a span with a label starting with one of `counted` (default
  "Unwanted"; add "Questionable" and "Benign" to count those too), `marks` their spans (start, end into the
  summary, the label list, the note), stored by the app as that annotator's `marks` of the judge sample
  (app/schemes/judge/io.py).
Who read a sample is not in the files (an unmarked sample has no annotation at all): an annotator counts as having
read every sample of a batch they marked anything in, so a sample of that batch without their marks is their
"no hallucination". Annotators are identified by `annotator_name` (annotator_id differs between batches).

The same spans as violations ground truth (`span_samples`): a sample belongs to one scheme, so each summary also
becomes a `violations` sample `<judge id>/spans` (the summary as text, the source as context; meta `judge_sample`,
and the judge record's meta `spans_sample`, link the two), and each annotator who read it (the rule above) gets a
ground-truth line `{"sample", "annotator", "spans": [...]}` of the form `concord labels import` and the Label Studio
import use (app/io/labels.py; [] is "no violations"). A span's label list keeps its most specific labels, the most
serious first (["Unwanted", "Unwanted.Intrinsic"] -> rule "Unwanted.Intrinsic", category "Unwanted"); its quote is
`summary_span`. Offsets are code points (all 2,189 spans of the released files match their quote); a span whose
quote is not at its offsets is placed where the quote is found (`locate`: exact, case-insensitive, fuzzy; nearest
to the released offset) and reported as a `Moved`, kept without offsets when the quote is nowhere.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from calibration.grounding import locate

DETECTORS: tuple[str, ...] = ("hhemv1", "hhem-2.1", "hhem-2.1-english", "trueteacher", "true_nli", "gpt-3.5-turbo",
                              "gpt-4-turbo", "gpt_4o")
COUNTED: tuple[str, ...] = ("Unwanted",)
ALL_COUNTED: tuple[str, ...] = ("Unwanted", "Questionable", "Benign")
_BATCH = re.compile(r"batch_(\d+)$")
SEVERITY: tuple[str, ...] = ("Unwanted", "Questionable", "Benign")  # a span's labels, most serious first
SPANS_SUFFIX = "/spans"  # the violations sample of a summary: `<judge sample id>/spans`


class FaithBenchError(ValueError):
    """A batch that is not FaithBench's shape; the message names the batch, sample and field."""


def batch_name(path: Path) -> str:
    m = _BATCH.search(path.stem)
    return m.group(1) if m else path.stem


def read_batches(paths: Iterable[Path]) -> dict[str, Any]:
    """Batch name (N of batch_N.json) -> decoded file, in the order given."""
    return {batch_name(Path(p)): json.loads(Path(p).read_text(encoding="utf-8")) for p in paths}


def sample_id(batch: str, sample: Mapping[str, Any]) -> str:
    return f"faithbench-b{batch}-{sample['sample_id']}"


def spans_id(batch: str, sample: Mapping[str, Any]) -> str:
    return sample_id(batch, sample) + SPANS_SUFFIX


def hallucinated(labels: Sequence[str], counted: Sequence[str] = COUNTED) -> bool:
    """A span's label list counts when one of its labels starts with a counted category."""
    return any(str(x).startswith(tuple(counted)) for x in labels)


def _samples(batch: str, data: Any) -> list[Mapping[str, Any]]:
    if not isinstance(data, Mapping) or not isinstance(data.get("samples"), list):
        raise FaithBenchError(f"batch {batch}: expected an object with a 'samples' array")
    for i, s in enumerate(data["samples"]):
        where = f"batch {batch}: samples[{i}]"
        if not isinstance(s, Mapping):
            raise FaithBenchError(f"{where}: expected an object")
        for k, t in (("sample_id", (int, str)), ("summary", str), ("annotations", list), ("metadata", dict)):
            if not isinstance(s.get(k), t):
                raise FaithBenchError(f"{where}.{k}: is required (a {k} of type {getattr(t, '__name__', 'string or integer')})")
        for j, a in enumerate(s["annotations"]):
            if not isinstance(a, Mapping) or not isinstance(a.get("annotator_name"), str):
                raise FaithBenchError(f"{where}.annotations[{j}].annotator_name: is required (string)")
            if a.get("summary_span") is not None and not isinstance(a["summary_span"], str):
                raise FaithBenchError(f"{where}.annotations[{j}].summary_span: expected a string (the span's text)")
            st, en = a.get("summary_start"), a.get("summary_end")
            if type(st) is not int or type(en) is not int or not 0 <= st <= en <= len(s["summary"]):
                raise FaithBenchError(f"{where}.annotations[{j}]: summary_start/summary_end must be offsets into "
                                      f"the summary, got {st!r}, {en!r}")
    return data["samples"]


def record(batch: str, s: Mapping[str, Any]) -> dict[str, Any]:
    """One judge record (raw, as import reads it) of a FaithBench sample."""
    meta = s["metadata"]
    judges = {}
    for d in DETECTORS:
        if d in meta:
            judges[d] = {"score": meta[d], "high_means_positive": False, "probability": True}
    rec: dict[str, Any] = {"scheme": "judge", "id": sample_id(batch, s), "text": s["summary"], "judges": judges,
                           "positive": "hallucinated",
                           "meta": {"batch": batch, "sample_id": s["sample_id"],
                                    **{k: meta[k] for k in ("raw_sample_id", "summarizer") if k in meta},
                                    "spans_sample": spans_id(batch, s)}}
    if isinstance(s.get("source"), str):
        rec["context"] = s["source"]
    return rec


def _readers(samples: Sequence[Mapping[str, Any]]) -> list[str]:
    """Who read the batch: everyone who marked anything in it."""
    return sorted({a["annotator_name"] for s in samples for a in s["annotations"]})


def convert(batches: Mapping[str, Any], counted: Sequence[str] = COUNTED
            ) -> tuple[list[dict[str, Any]], dict[str, list[dict[str, Any]]]]:
    """(records, annotator -> label lines) of decoded batches (batch name -> `{"samples": [...]}`)."""
    records: list[dict[str, Any]] = []
    lines: dict[str, list[dict[str, Any]]] = {}
    for batch, data in batches.items():
        samples = _samples(str(batch), data)
        readers = _readers(samples)
        for s in samples:
            rec = record(str(batch), s)
            records.append(rec)
            for name in readers:
                mine = [a for a in s["annotations"] if a["annotator_name"] == name]
                marks = [{"start": a["summary_start"], "end": a["summary_end"], "label": list(a.get("label") or []),
                          "note": a.get("note")} for a in mine]
                lines.setdefault(name, []).append({
                    "scheme": "judge", "sample": rec["id"], "annotator": name,
                    "label": any(hallucinated(m["label"], counted) for m in marks), "marks": marks})
    return records, lines


@dataclass(frozen=True, slots=True)
class Moved:
    """A span whose quote is not at its released offsets: where it was placed instead (None: nowhere)."""

    batch: str
    sample: int  # index in the batch's samples
    annotation: int  # index in the sample's annotations
    quote: str
    released: tuple[int, int]
    placed: tuple[int, int] | None
    how: str  # locate's: exact, casefold, fuzzy, ungrounded

    def message(self) -> str:
        if not self.quote.strip():
            return (f"an empty span at {self.released[0]}..{self.released[1]} with no quote to locate: skipped")
        where = (f"placed at {self.placed[0]}..{self.placed[1]} ({self.how} match)" if self.placed
                 else "not found in the summary: kept without offsets (ungrounded)")
        return (f"the quote {self.quote[:60]!r} is not at its offsets {self.released[0]}..{self.released[1]} "
                f"(code points); {where}")


def span_labels(labels: Sequence[Any]) -> list[str]:
    """A span's label list as the violation's rule parts: the most specific labels (a parent such as "Unwanted" is
    dropped beside "Unwanted.Intrinsic"), the most serious category first (SEVERITY), else in the released order."""
    names = [str(x) for x in labels]
    specific = [x for x in dict.fromkeys(names) if not any(y.startswith(x + ".") for y in names)]
    rank = {c: i for i, c in enumerate(SEVERITY)}
    return sorted(specific, key=lambda x: rank.get(x.split(".", 1)[0], len(SEVERITY)))


def _span(batch: str, i: int, j: int, summary: str, a: Mapping[str, Any]) -> tuple[dict[str, Any] | None, Moved | None]:
    """One annotation as a bare span of a ground-truth line (None: an empty span without a quote)."""
    st, en = a["summary_start"], a["summary_end"]
    quote = a.get("summary_span")
    quote = summary[st:en] if quote is None else quote
    span: dict[str, Any] = {"label": span_labels(a.get("label") or [])}
    if isinstance(a.get("note"), str) and a["note"]:
        span["note"] = a["note"]
    if st < en and summary[st:en] == quote:
        return {"start": st, "end": en, "quote": quote, **span}, None
    if not quote.strip():
        return None, Moved(batch, i, j, quote, (st, en), None, "ungrounded")
    found = locate(quote, summary, hint=st)
    if found.start is None or found.end is None:
        return {"quote": quote, **span}, Moved(batch, i, j, quote, (st, en), None, found.how)
    placed = (found.start, found.end)
    return {"start": found.start, "end": found.end, "quote": summary[found.start:found.end], **span}, \
        Moved(batch, i, j, quote, (st, en), placed, found.how)


def span_samples(batches: Mapping[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[Moved]]:
    """(violations records, ground-truth lines, moved spans) of decoded batches: each summary as a violations sample
    whose ground truth per annotator who read its batch is that annotator's spans (see the module's docstring)."""
    records: list[dict[str, Any]] = []
    lines: list[dict[str, Any]] = []
    moved: list[Moved] = []
    for batch, data in batches.items():
        samples = _samples(str(batch), data)
        readers = _readers(samples)
        for i, s in enumerate(samples):
            sid = spans_id(str(batch), s)
            rec: dict[str, Any] = {"scheme": "violations", "id": sid, "text": s["summary"], "ground_truth": [],
                                   "predictions": {}, "meta": {"batch": str(batch), "sample_id": s["sample_id"],
                                                               "judge_sample": sample_id(str(batch), s)}}
            if isinstance(s.get("source"), str):
                rec["context"] = s["source"]
            records.append(rec)
            mine: dict[str, list[dict[str, Any]]] = {name: [] for name in readers}
            for j, a in enumerate(s["annotations"]):
                span, note = _span(str(batch), i, j, s["summary"], a)
                if note is not None:
                    moved.append(note)
                if span is not None:
                    mine[a["annotator_name"]].append(span)
            lines.extend({"sample": sid, "annotator": name, "spans": spans} for name, spans in mine.items())
    return records, lines, moved


def load(directory: Path, counted: Sequence[str] = COUNTED) -> tuple[list[dict[str, Any]], dict[str, list[dict[str, Any]]]]:
    """`convert` of every batch_*.json in `directory`, in batch number order."""
    paths = sorted(Path(directory).glob("batch_*.json"), key=lambda p: (len(batch_name(p)), batch_name(p)))
    if not paths:
        raise FaithBenchError(f"{directory}: no batch_*.json files")
    return convert(read_batches(paths), counted)
