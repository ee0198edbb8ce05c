"""Human vs LLM agreement on rubric buckets (moved here from the generic calibration/agreement.py: it is the rubric
scheme's, and the generic module must not know any scheme)."""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from calibration.schemes.rubric.buckets import (Buckets, bucket_keys, effective_buckets, metric_columns,
                                                normalize_excerpt)
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


_ABSENT = len(BUCKET_NAMES)  # ABSENT's index in RUBRIC_LABELS (the buckets' own indices come first)
LABEL_COUNT = len(RUBRIC_LABELS)


def _by_key(keys: Sequence[list[str]]) -> dict[str, list[int]]:
    """Normalised excerpt -> the indices of the buckets it is in (bucket order), as `_align` groups one side."""
    by: dict[str, list[int]] = {}
    for b, ks in enumerate(keys):
        for k in ks:
            got = by.get(k)
            if got is None:
                by[k] = [b]
            else:
                got.append(b)
    return by


def add_pairs(llm_keys: Sequence[list[str]], human_keys: Sequence[list[str]], conf: list[int]) -> None:
    """Count `_align`'s pairs of one unit into `conf` (flat RUBRIC_LABELS x RUBRIC_LABELS, LLM side first): the
    figures read only how often each (LLM bucket, human bucket) pair occurs, not the texts or their order."""
    if llm_keys == human_keys:  # the human kept every bucket as it was: every item pairs with itself
        for b, keys in enumerate(llm_keys):
            conf[b * LABEL_COUNT + b] += len(keys)
        return
    llm, human = _by_key(llm_keys), _by_key(human_keys)
    for key, left in llm.items():
        right = human.get(key)
        if right is None:
            for b in left:
                conf[b * LABEL_COUNT + _ABSENT] += 1
        elif len(left) == 1 and len(right) == 1:  # paired whether or not the buckets agree
            conf[left[0] * LABEL_COUNT + right[0]] += 1
        else:  # `_align`'s rule: same-bucket occurrences first, leftovers in bucket order
            left, right = list(left), list(right)
            for b in list(left):
                if b in right:
                    left.remove(b)
                    right.remove(b)
                    conf[b * LABEL_COUNT + b] += 1
            while left or right:
                conf[(left.pop(0) if left else _ABSENT) * LABEL_COUNT + (right.pop(0) if right else _ABSENT)] += 1
    for key, right in human.items():
        if key not in llm:
            for b in right:
                conf[_ABSENT * LABEL_COUNT + b] += 1


def kappa_from_counts(conf: np.ndarray) -> float:
    """`cohen_kappa(llm_labels, human_labels, labels=RUBRIC_LABELS)` from the labels' (K, K) confusion counts:
    scikit-learn's cohen_kappa_score operations on its confusion matrix, so the same float (without importing it);
    NaN when fewer than two labels occur."""
    conf = np.asarray(conf, dtype=np.float64)
    if int(((conf.sum(0) + conf.sum(1)) > 0).sum()) < 2:
        return math.nan
    sum0, sum1 = np.sum(conf, axis=0), np.sum(conf, axis=1)
    expected = np.outer(sum0, sum1) / np.sum(sum0)
    w_mat = np.ones(conf.shape)
    np.fill_diagonal(w_mat, 0)
    denominator = np.sum(w_mat * expected)
    return math.nan if denominator == 0 else float(1 - np.sum(w_mat * conf) / denominator)


class TraitCounts:
    """One trait's bucket sizes per unit (the LLM's; beside them the human's where a human checked the unit) and
    the aligned items' confusion counts: the trait's figures come from these columns, not from a metric dict and
    label lists per unit."""

    def __init__(self) -> None:
        self.traits: dict[MetricTrait, int] = {}  # each definition seen (in order) -> its position
        # rows appended unit by unit, or set at once as arrays (evaluation.trait_counts)
        self.llm: list[tuple[int, ...]] | np.ndarray = []  # (tp, fn, fp, tn, trait position) per unit
        self.checked: list[tuple[int, ...]] | np.ndarray = []  # (LLM tp..tn, human tp..tn, trait pos.) per checked
        self.conf: list[int] | np.ndarray = [0] * (LABEL_COUNT * LABEL_COUNT)
        self._by_id: dict[int, tuple[MetricTrait, int]] = {}  # id(trait) -> (it, kept alive; its position)

    def position(self, trait: MetricTrait) -> int:
        """Its definition's position; by the object's id first (a project's units share one MetricTrait per
        definition; hashing the dataclass per unit was a tenth of the evaluation)."""
        got = self._by_id.get(id(trait))
        if got is not None:
            return got[1]
        pos = self.traits.get(trait)
        if pos is None:
            pos = self.traits[trait] = len(self.traits)
        self._by_id[id(trait)] = (trait, pos)
        return pos

    def add(self, trait: MetricTrait, llm_keys: Sequence[list[str]]) -> None:
        self.llm.append((*map(len, llm_keys), self.position(trait)))

    def check(self, trait: MetricTrait, llm_keys: Sequence[list[str]], human_keys: Sequence[list[str]]) -> None:
        self.checked.append((*map(len, llm_keys), *map(len, human_keys), self.position(trait)))
        add_pairs(llm_keys, human_keys, self.conf)

    def _metrics(self, rows: list[tuple[int, ...]], first: int) -> dict[str, np.ndarray]:
        """Each metric a definition asks for -> its values on the rows whose definition asks for it (row order)."""
        table = np.array(rows, dtype=np.int64).reshape(len(rows), -1)
        cols = metric_columns(*(np.ascontiguousarray(table[:, first + i]) for i in range(len(BUCKET_NAMES))))
        pos = table[:, -1]
        present, first_row = np.unique(pos, return_index=True)
        every = list(self.traits)
        traits = {int(p): every[p] for p in present[np.argsort(first_row)]}  # as the rows first name them
        out = {}
        for m in dict.fromkeys(m for t in traits.values() for m in t.metrics):
            with_m = [p for p, t in traits.items() if m in t.metrics]
            out[m] = cols[m] if len(with_m) == len(traits) else cols[m][np.isin(pos, with_m)]
        return out

    def llm_means(self) -> dict[str, float]:
        """The mean of each metric over the units (compute_trait_metrics per unit, then np.mean)."""
        return {m: float(np.mean(v)) for m, v in self._metrics(self.llm, 0).items()}

    def agreement(self) -> dict[str, Any]:
        """`rubric_agreement`'s figures of the checked units."""
        llm, human = self._metrics(self.checked, 0), self._metrics(self.checked, len(BUCKET_NAMES))
        conf = np.array(self.conf, dtype=np.int64).reshape(LABEL_COUNT, LABEL_COUNT)
        n_llm, kept = int(conf[:_ABSENT].sum()), int(np.trace(conf[:_ABSENT, :_ABSENT]))
        return {
            "n_samples": len(self.checked),
            "n_items": int(conf.sum()),
            "n_llm_items": n_llm,
            "n_kept": kept,
            "kept_share": kept / n_llm if n_llm else math.nan,
            "kappa": kappa_from_counts(conf) if conf.sum() else math.nan,
            "metric_deltas": {m: float(np.mean(v - human[m])) for m, v in llm.items()},
            "metrics_llm": {m: float(np.mean(v)) for m, v in llm.items()},
            "metrics_human": {m: float(np.mean(v)) for m, v in human.items()},
        }


def rubric_agreement(
    pairs: Sequence[tuple[Mapping[str, Sequence[str]], Mapping[str, Sequence[str]], MetricTrait]],
) -> dict[str, dict[str, Any]]:
    """Human vs LLM agreement on rubric buckets, per trait name.

    For each trait: `kept_share` = share of LLM items whose bucket the human kept; `kappa` = Cohen's kappa over the
    aligned items' buckets (labels tp/fn/fp/tn/absent); `metric_deltas` = mean over samples of
    metric(LLM buckets) - metric(human buckets), plus both means. Items of all four buckets are compared by text.
    Computed from counts (TraitCounts): the figures of aligning every pair (align_excerpts) and averaging
    compute_trait_metrics, without the per-item lists.
    """
    grouped: dict[str, TraitCounts] = {}
    for llm_b, human_b, trait in pairs:
        counts = grouped.get(trait.name)
        if counts is None:
            counts = grouped[trait.name] = TraitCounts()
        counts.check(trait, bucket_keys(trait, llm_b), bucket_keys(trait, human_b))
    return {name: counts.agreement() for name, counts in grouped.items()}
