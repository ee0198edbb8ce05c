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
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

DETECTORS: tuple[str, ...] = ("hhemv1", "hhem-2.1", "hhem-2.1-english", "trueteacher", "true_nli", "gpt-3.5-turbo",
                              "gpt-4-turbo", "gpt_4o")
COUNTED: tuple[str, ...] = ("Unwanted",)
ALL_COUNTED: tuple[str, ...] = ("Unwanted", "Questionable", "Benign")
_BATCH = re.compile(r"batch_(\d+)$")


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
                                    **{k: meta[k] for k in ("raw_sample_id", "summarizer") if k in meta}}}
    if isinstance(s.get("source"), str):
        rec["context"] = s["source"]
    return rec


def convert(batches: Mapping[str, Any], counted: Sequence[str] = COUNTED
            ) -> tuple[list[dict[str, Any]], dict[str, list[dict[str, Any]]]]:
    """(records, annotator -> label lines) of decoded batches (batch name -> `{"samples": [...]}`)."""
    records: list[dict[str, Any]] = []
    lines: dict[str, list[dict[str, Any]]] = {}
    for batch, data in batches.items():
        samples = _samples(str(batch), data)
        readers = sorted({a["annotator_name"] for s in samples for a in s["annotations"]})
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


def load(directory: Path, counted: Sequence[str] = COUNTED) -> tuple[list[dict[str, Any]], dict[str, list[dict[str, Any]]]]:
    """`convert` of every batch_*.json in `directory`, in batch number order."""
    paths = sorted(Path(directory).glob("batch_*.json"), key=lambda p: (len(batch_name(p)), batch_name(p)))
    if not paths:
        raise FaithBenchError(f"{directory}: no batch_*.json files")
    return convert(read_batches(paths), counted)
