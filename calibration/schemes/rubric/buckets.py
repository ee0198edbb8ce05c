"""Confusion-list buckets and the deterministic metrics computed from them.

The LLM only fills the buckets; everything here is pure arithmetic, so the same buckets always give the same numbers.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypedDict

from calibration.schemes.rubric.traits import BUCKET_NAMES, MetricTrait

if TYPE_CHECKING:
    import numpy as np


class Buckets(TypedDict):
    """TP/TN hold answer excerpts (tp, fp) or instruction-derived items (fn, tn), as in the spec."""

    tp: list[str]
    fn: list[str]
    fp: list[str]
    tn: list[str]


class BucketError(ValueError):
    """Malformed buckets; `path` is the offending location (e.g. `buckets.tp[2]`)."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


def empty_buckets() -> Buckets:
    return {"tp": [], "fn": [], "fp": [], "tn": []}


def validate_buckets(obj: Any, path: str = "buckets", dropped: list[str] | None = None) -> Buckets:
    """Check `obj` is {tp, fn, fp, tn: [str, ...]} and return a fresh copy without empty excerpts.

    Missing buckets count as empty (the spec's default for tn); unknown keys are errors because they usually mean
    the producer (LLM or import file) misunderstood the schema. An empty or whitespace-only excerpt is dropped, as
    Karenina's deduplication drops it, rather than rejecting the whole answer; its path (e.g. `buckets.tp[2]`) is
    appended to `dropped` when given, so callers can count and report it. (Karenina keeps such an excerpt when
    repeated_extraction is false; Concord always drops it: an empty excerpt can be neither shown nor reviewed.)
    """
    if not isinstance(obj, Mapping):
        raise BucketError(path, f"expected an object with keys {', '.join(BUCKET_NAMES)}, got {type(obj).__name__}")
    unknown = sorted(str(k) for k in obj if k not in BUCKET_NAMES)
    if unknown:
        raise BucketError(f"{path}.{unknown[0]}", f"unknown bucket; valid buckets: {', '.join(BUCKET_NAMES)}")
    out = empty_buckets()
    for name in BUCKET_NAMES:
        value = obj.get(name, [])
        if value is None:
            value = []
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
            raise BucketError(f"{path}.{name}", f"expected a list of strings, got {type(value).__name__}")
        for i, item in enumerate(value):
            if not isinstance(item, str):
                raise BucketError(f"{path}.{name}[{i}]", f"expected a string, got {type(item).__name__}")
            if not item.strip():
                if dropped is not None:
                    dropped.append(f"{path}.{name}[{i}]")
                continue
            out[name].append(item)  # type: ignore[literal-required]
    return out


def normalize_excerpt(text: str) -> str:
    """The key used for "case-insensitive exact" comparison (outer whitespace is not part of an excerpt)."""
    return text.strip().casefold()


def dedupe(items: Sequence[str]) -> list[str]:
    """Drop case-insensitive repeats, keeping the first spelling and the original order."""
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        key = normalize_excerpt(item)
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


def effective_buckets(trait: MetricTrait, buckets: Mapping[str, Sequence[str]]) -> Buckets:
    """Validated buckets after the trait's repeated_extraction rule (the lists metrics are counted from)."""
    valid = validate_buckets(buckets)
    if trait.repeated_extraction:
        return {name: dedupe(valid[name]) for name in BUCKET_NAMES}  # type: ignore[return-value]
    return valid


_KNOWN = frozenset(BUCKET_NAMES)


class Normalised(dict):
    """Excerpt -> its key (`normalize_excerpt`), each distinct excerpt normalised once: a unit's LLM and human
    buckets, and the units of a trait, repeat the same excerpts. A miss normalises (str methods: an item that is not
    a string raises AttributeError, an unhashable one TypeError)."""

    def __missing__(self, text: str) -> str:
        key = self[text] = text.strip().casefold()
        return key


def bucket_keys(trait: MetricTrait, buckets: Mapping[str, Sequence[str]],
                normal: Normalised | None = None) -> tuple[list[str], ...]:
    """Per bucket (BUCKET_NAMES order), the normalised excerpts of `effective_buckets` (what counts and alignments
    read): a plain dict of lists of strings is read in one pass, without the copy validation makes; anything else
    goes through `effective_buckets`, so a malformed bucket raises the same BucketError. `normal`: a cache of the
    keys shared between calls (the evaluation's many units)."""
    if type(buckets) is dict and _KNOWN.issuperset(buckets):
        key_of = (Normalised() if normal is None else normal).__getitem__
        out = []
        try:
            for name in BUCKET_NAMES:
                items = buckets.get(name)
                if items is None:
                    out.append([])
                    continue
                if type(items) is not list:
                    break
                keys = list(map(key_of, items))
                if "" in keys:  # a blank excerpt is dropped (validate_buckets); casefold never empties a non-blank one
                    keys = [k for k in keys if k]
                out.append(list(dict.fromkeys(keys)) if trait.repeated_extraction else keys)
            else:
                return tuple(out)
        except (AttributeError, TypeError):  # an item that is not a string: the full validation says where
            pass
    eff = effective_buckets(trait, buckets)
    return tuple([normalize_excerpt(x) for x in eff[name]] for name in BUCKET_NAMES)  # type: ignore[literal-required]


def bucket_counts(trait: MetricTrait, buckets: Mapping[str, Sequence[str]]) -> dict[str, int]:
    eff = effective_buckets(trait, buckets)
    return {name: len(eff[name]) for name in BUCKET_NAMES}  # type: ignore[literal-required]


def _ratio(num: float, den: float) -> float:
    return num / den if den else 0.0


def metrics_from_counts(tp: int, fn: int, fp: int, tn: int) -> dict[str, float]:
    """All five metrics; a zero denominator gives 0.0 rather than NaN so scores stay comparable and sortable."""
    precision = _ratio(tp, tp + fp)
    recall = _ratio(tp, tp + fn)
    return {
        "precision": precision,
        "recall": recall,
        "f1": _ratio(2 * precision * recall, precision + recall),
        "specificity": _ratio(tn, tn + fp),
        "accuracy": _ratio(tp + tn, tp + tn + fp + fn),
    }


def metric_columns(tp: np.ndarray, fn: np.ndarray, fp: np.ndarray, tn: np.ndarray) -> dict[str, np.ndarray]:
    """`metrics_from_counts` of many units at once (1-D integer count arrays): the same operations in the same
    order, so each value is the float `metrics_from_counts` gives."""
    import numpy as np  # here: the registry imports this module for every command

    def ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
        return np.divide(num, den, out=np.zeros(num.shape), where=den != 0)

    precision, recall = ratio(tp, tp + fp), ratio(tp, tp + fn)
    return {"precision": precision, "recall": recall, "f1": ratio(2 * precision * recall, precision + recall),
            "specificity": ratio(tn, tn + fp), "accuracy": ratio(tp + tn, tp + tn + fp + fn)}


def compute_trait_metrics(trait: MetricTrait, buckets: Mapping[str, Sequence[str]]) -> dict[str, float]:
    """The trait's requested metrics, in the trait's order, from its buckets."""
    c = bucket_counts(trait, buckets)
    all_metrics = metrics_from_counts(c["tp"], c["fn"], c["fp"], c["tn"])
    return {m: all_metrics[m] for m in trait.metrics}
