"""Violations labels in the words the review view uses, for views that show a raw label value (the adjudication
panel): pairs as "GT 1 “quote” ↔ P 2 “quote”" numbered from 1, never the stored 0-based `[[0, 1]]`."""
from __future__ import annotations

from typing import Any

from app.schemes.violations.store import store_of
from app.schemes.violations.views_tables import quote_of
from calibration.schemes.violations.curation import KIND as CURATED, with_ground_truth
from calibration.schemes.violations.records import Violation

QUOTE = 32  # characters of a quote in one line of a pair list


def _item(prefix: str, n: int, items: tuple[Violation, ...] | list[Violation], text: str) -> str:
    """`GT 1 “quote”`; an index the sample does not have reads as the number alone with "(not in the sample)"."""
    if not 0 <= n < len(items):
        return f"{prefix} {n + 1} (not in the sample)"
    return f"{prefix} {n + 1} “{quote_of(text, items[n], QUOTE) or '(ungrounded)'}”"


def describe_label(project: Any, sample_id: str, unit: str, kind: str, value: Any) -> list[str] | None:
    """One line per pair or index of a `matches`, `gt_wrong` or `missing_gt` value (GT numbered in the resolved
    curated ground truth when there is one, as the review view shows it); None for other kinds (shown as JSON)."""
    if kind not in ("matches", "gt_wrong", "missing_gt") or not isinstance(value, list):
        return None
    sample = store_of(project).violation_sample(sample_id)
    if sample is None:
        return None
    sample = with_ground_truth(sample, project.decisions.sample_labels(sample_id).get(("", CURATED)))
    gt, preds = sample.ground_truth, sample.predictions.get(unit, ())
    try:
        if kind == "matches":
            return [f"{_item('GT', int(g), gt, sample.text)} ↔ {_item('P', int(p), preds, sample.text)}"
                    for g, p in value]
        prefix, items = ("GT", gt) if kind == "gt_wrong" else ("P", preds)
        return [_item(prefix, int(i), items, sample.text) for i in value]
    except (TypeError, ValueError):
        return None  # not the shape the kind validates: shown as JSON
