"""Human vs LLM agreement on rubric buckets (moved here from the generic calibration/agreement.py: it is the rubric
scheme's, and the generic module must not know any scheme)."""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from calibration.agreement import cohen_kappa
from calibration.schemes.rubric.buckets import Buckets, effective_buckets, metrics_from_counts, normalize_excerpt
from calibration.schemes.rubric.traits import BUCKET_NAMES, MetricTrait

ABSENT = "absent"  # bucket of an excerpt that only one side of a rubric comparison contains
RUBRIC_LABELS: tuple[str, ...] = (*BUCKET_NAMES, ABSENT)


def align_excerpts(
    trait: MetricTrait, llm_buckets: Mapping[str, Sequence[str]], human_buckets: Mapping[str, Sequence[str]]
) -> list[tuple[str, str, str]]:
    """Pair up the two sides' items by case-insensitive text: [(text, llm_bucket, human_bucket)].

    Same-bucket occurrences of a text pair first; leftovers pair in bucket order, and an item only one side has
    gets the bucket "absent". The trait's repeated_extraction rule applies before alignment.
    """
    return _align(effective_buckets(trait, llm_buckets), effective_buckets(trait, human_buckets))


def _align(llm_eff: Buckets, human_eff: Buckets) -> list[tuple[str, str, str]]:
    """`align_excerpts` of the two sides' effective buckets (rubric_agreement counts metrics from them too: made
    once per side, not twice)."""
    sides = []
    for eff in (llm_eff, human_eff):
        by_text: dict[str, list[str]] = defaultdict(list)
        first_spelling: dict[str, str] = {}
        for name in BUCKET_NAMES:
            for item in eff[name]:  # type: ignore[literal-required]
                key = normalize_excerpt(item)
                by_text[key].append(name)
                first_spelling.setdefault(key, item.strip())
        sides.append((by_text, first_spelling))
    (llm, llm_text), (human, human_text) = sides
    out: list[tuple[str, str, str]] = []
    for key in list(dict.fromkeys([*llm, *human])):
        left, right = list(llm.get(key, [])), list(human.get(key, []))
        text = llm_text.get(key) or human_text[key]
        for name in list(left):
            if name in right:
                left.remove(name)
                right.remove(name)
                out.append((text, name, name))
        while left or right:
            out.append((text, left.pop(0) if left else ABSENT, right.pop(0) if right else ABSENT))
    return out


def _metrics(trait: MetricTrait, eff: Buckets) -> dict[str, float]:
    """compute_trait_metrics from effective buckets."""
    all_metrics = metrics_from_counts(len(eff["tp"]), len(eff["fn"]), len(eff["fp"]), len(eff["tn"]))
    return {m: all_metrics[m] for m in trait.metrics}


def rubric_agreement(
    pairs: Sequence[tuple[Mapping[str, Sequence[str]], Mapping[str, Sequence[str]], MetricTrait]],
) -> dict[str, dict[str, Any]]:
    """Human vs LLM agreement on rubric buckets, per trait name.

    For each trait: `kept_share` = share of LLM items whose bucket the human kept; `kappa` = Cohen's kappa over the
    aligned items' buckets (labels tp/fn/fp/tn/absent); `metric_deltas` = mean over samples of
    metric(LLM buckets) - metric(human buckets), plus both means. Items of all four buckets are compared by text.
    """
    grouped: dict[str, list[tuple[Mapping[str, Sequence[str]], Mapping[str, Sequence[str]], MetricTrait]]] = {}
    for llm_b, human_b, trait in pairs:
        grouped.setdefault(trait.name, []).append((llm_b, human_b, trait))
    result: dict[str, dict[str, Any]] = {}
    for name, group in grouped.items():
        llm_labels: list[str] = []
        human_labels: list[str] = []
        deltas: dict[str, list[float]] = defaultdict(list)
        llm_scores: dict[str, list[float]] = defaultdict(list)
        human_scores: dict[str, list[float]] = defaultdict(list)
        for llm_b, human_b, trait in group:
            llm_eff, human_eff = effective_buckets(trait, llm_b), effective_buckets(trait, human_b)
            for _, lb, hb in _align(llm_eff, human_eff):
                llm_labels.append(lb)
                human_labels.append(hb)
            m_llm = _metrics(trait, llm_eff)  # compute_trait_metrics(trait, llm_b), from the buckets made above
            m_human = _metrics(trait, human_eff)
            for metric, value in m_llm.items():
                llm_scores[metric].append(value)
                human_scores[metric].append(m_human[metric])
                deltas[metric].append(value - m_human[metric])
        n_llm = sum(1 for lb in llm_labels if lb != ABSENT)
        kept = sum(1 for lb, hb in zip(llm_labels, human_labels) if lb != ABSENT and lb == hb)
        result[name] = {
            "n_samples": len(group),
            "n_items": len(llm_labels),
            "n_llm_items": n_llm,
            "n_kept": kept,
            "kept_share": kept / n_llm if n_llm else math.nan,
            "kappa": cohen_kappa(llm_labels, human_labels, labels=RUBRIC_LABELS) if llm_labels else math.nan,
            "metric_deltas": {m: float(np.mean(v)) for m, v in deltas.items()},
            "metrics_llm": {m: float(np.mean(v)) for m, v in llm_scores.items()},
            "metrics_human": {m: float(np.mean(v)) for m, v in human_scores.items()},
        }
    return result
