"""The pair table: every candidate (ground truth, prediction) pair of every (sample, checker) unit, with its
match components. It is the interface between the matching engine and the calibration search: components
depend only on the data and the similarity backend, never on weights or thresholds, so it is built once
and scored under many configs.

Components (float64; NaN = the field is missing on either side, its weight is redistributed):
- overlap:  character IoU of the two spans; an ungrounded span gives 0.0 (never NaN: it fails `overlap > 0`).
- rule:     text similarity of the rules (cosine of embeddings, or token Jaccard).
- category: 1.0 / 0.0, exact match after strip + casefold.
- explanation, correction: text similarity.
Texts are compared after `strip()`; a None or blank field is missing. Every distinct text of the whole
table is encoded in one batched call, and each distinct (text, text) combination is compared once.

Rows of `pairs` are in canonical order: by group, then gt index, then pred index; the matcher relies on it
for tie-breaking and checks it. A unit appears once per checker that has a prediction entry for the sample
(an empty tuple means "ran and found nothing"); a checker without an entry for a sample was not run on it
and gets no unit there. Units with zero GT or zero predictions are kept: they contribute FN / FP.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from calibration.schemes.violations.config import COMPONENTS
from calibration.schemes.violations.columns import ViolationColumns, object_array
from calibration.schemes.violations.records import GROUND_TRUTH, ViolationSample
from calibration.similarity.embeddings import Embedder, VectorCache
from calibration.similarity.overlap import span_iou_array
from calibration.similarity.pairwise import TextSimilarity, as_similarity

TEXT_FIELDS = ("rule", "explanation", "correction")
NO_CATEGORY = "(none)"


@dataclass(frozen=True)
class GroupCodes:
    """What the builder knows as integers of a table read from the store (unique sample ids, coded texts), so the
    counting and the humans' lookup need not factorize 400k sample ids and 1.1M category names again (metrics.table_codes,
    evaluation._groups_of): `samples` the distinct sample ids in group order and `s_idx` each group's index into them;
    `checkers` sorted and `c_idx`; `categories` the items' category names (NO_CATEGORY for none) sorted, `gk` / `pk`
    each GT / predicted item's index into them. The same codes and names as pandas' factorize of the frames gives."""

    samples: np.ndarray
    s_idx: np.ndarray
    checkers: list[str]
    c_idx: np.ndarray
    categories: list[str]
    gk: np.ndarray
    pk: np.ndarray


@dataclass(frozen=True)
class PairTable:
    """`groups`: one row per unit (sample_id, checker, n_gt, n_pred), index 0..G-1.
    `pairs`: one row per candidate pair (group, gt, pred, overlap, rule, category, explanation, correction).
    `gt_items` / `pred_items`: one row per violation of a unit (group, index, category), in unit order, so the
    global id of a unit's i-th GT is `gt_offsets[group] + i` (the same for predictions).
    """

    groups: pd.DataFrame
    pairs: pd.DataFrame
    gt_items: pd.DataFrame
    pred_items: pd.DataFrame
    similarity_key: str = ""
    codes: GroupCodes | None = field(default=None, compare=False, repr=False)

    @classmethod
    def from_frames(cls, groups: pd.DataFrame, pairs: pd.DataFrame, gt_items: pd.DataFrame | None = None,
                    pred_items: pd.DataFrame | None = None, similarity_key: str = "") -> "PairTable":
        """Wrap hand-made frames (e.g. synthetic components); missing item tables get no categories."""
        groups = groups.reset_index(drop=True)
        if gt_items is None:
            gt_items = _items_without_category(groups["n_gt"].to_numpy())
        if pred_items is None:
            pred_items = _items_without_category(groups["n_pred"].to_numpy())
        return cls(groups, pairs.reset_index(drop=True), gt_items, pred_items, similarity_key)

    @property
    def n_groups(self) -> int:
        return len(self.groups)

    @property
    def gt_offsets(self) -> np.ndarray:
        n = self.groups["n_gt"].to_numpy(dtype=np.int64)
        return np.concatenate([[0], np.cumsum(n)[:-1]]).astype(np.int64) if n.size else n

    @property
    def pred_offsets(self) -> np.ndarray:
        n = self.groups["n_pred"].to_numpy(dtype=np.int64)
        return np.concatenate([[0], np.cumsum(n)[:-1]]).astype(np.int64) if n.size else n

    def components(self) -> np.ndarray:
        """(n_pairs, 5) float64 matrix of components in `COMPONENTS` order."""
        return self.pairs.loc[:, list(COMPONENTS)].to_numpy(dtype=np.float64)

    def unit(self, group: int) -> pd.DataFrame:
        """The candidate pairs of one unit (for explaining a match decision)."""
        return self.pairs[self.pairs["group"].to_numpy() == group]


def _items_without_category(counts: np.ndarray) -> pd.DataFrame:
    counts = np.asarray(counts, dtype=np.int64)
    group = np.repeat(np.arange(counts.size, dtype=np.int64), counts)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]) if counts.size else counts
    index = np.arange(group.size, dtype=np.int64) - np.repeat(starts, counts)
    return pd.DataFrame({"group": group, "index": index, "category": pd.Series([None] * group.size, dtype=object)})


def unit_pair_indices(n_gt: np.ndarray, n_pred: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(group, gt, pred) of every candidate pair of every unit, group-major then gt then pred."""
    n_gt = np.asarray(n_gt, dtype=np.int64)
    n_pred = np.asarray(n_pred, dtype=np.int64)
    per = n_gt * n_pred
    group = np.repeat(np.arange(per.size, dtype=np.int64), per)
    starts = np.concatenate([[0], np.cumsum(per)[:-1]]) if per.size else per
    k = np.arange(group.size, dtype=np.int64) - starts[group]
    npg = n_pred[group]
    return group, k // npg, k % npg


def _codes(values: np.ndarray | None, normalise: Callable[[str], str], coded: tuple[np.ndarray, np.ndarray] | None = None
           ) -> tuple[np.ndarray, list[str]]:
    """Ids of `normalise`d values in order of first appearance (-1: None, or blank once normalised), and the
    distinct normalised values. Each distinct raw value is normalised once (pandas' hash table finds them).
    `coded`: (the same values as codes, -1 for None; the strings of the codes) when the reader has them: the
    distinct values are then found among integers, in the same order of first appearance."""
    if coded is not None:
        ids, strings = coded
        raw_codes, raw_ids = pd.factorize(ids)  # -1 (None) is one of them here: normalised to None below
        raw = np.append(strings, None)[raw_ids]
    else:
        raw_codes, raw = pd.factorize(values, use_na_sentinel=True)
    norm = object_array([None if v is None else normalise(v) or None for v in raw])
    # raw values come in order of first appearance, so their normalised forms do too
    norm_codes, distinct = pd.factorize(norm, use_na_sentinel=True)
    lookup = np.append(norm_codes, -1).astype(np.int64)  # raw code -1 (None) -> -1
    return lookup[raw_codes], list(distinct)


def _category_key(value: str) -> str:
    return value.strip().casefold()


def build_pair_table(samples: Sequence[ViolationSample] | ViolationColumns,
                     similarity: TextSimilarity | Embedder | str = "sentence-transformers:all-MiniLM-L6-v2",
                     checkers: Sequence[str] | None = None, cache: VectorCache | None = None) -> PairTable:
    """Compute every candidate pair's components for every (sample, checker) unit.

    `samples`: records, or the same violations as columns (columns.py; what the store reads for evaluate).
    `similarity` is a `TextSimilarity`, a bare `Embedder`, or a config `embedding` spec (then `cache`, if
    given, is the vector cache in front of the embedder). `checkers`: these units only, in this order within a
    sample (default: every checker, sorted).
    """
    cols = samples if isinstance(samples, ViolationColumns) else ViolationColumns.from_samples(samples)
    sim = as_similarity(similarity, cache)
    n_samples = len(cols.sample_ids)
    coded = cols.codes  # the text columns as integers, when the reader has them (the same ids either way)
    if coded is not None and not all((coded.columns[f] >= 0).all() for f in ("unit_checker", "checker")):
        coded = None  # a checker None (the schema forbids it) is no checker below, as pandas' NA sentinel makes it

    # Checkers as codes; `slot` is a checker's place within a sample's units (-1: not wanted).
    if coded is not None:
        checker_codes, checker_ids = pd.factorize(np.concatenate([coded.columns["unit_checker"], coded.columns["checker"]]))
        checker_names = coded.values[checker_ids]
    else:
        checker_codes, checker_names = pd.factorize(np.concatenate([cols.unit_checker, cols.checker]))
    names = [str(c) for c in checker_names]
    wanted = list(checkers) if checkers is not None else sorted({c for c in names if c != GROUND_TRUTH})
    place = {c: i for i, c in enumerate(wanted)}
    slot_of = np.array([place.get(c, -1) for c in names] + [-1], dtype=np.int64)
    unit_slot, row_slot = np.split(slot_of[checker_codes], [len(cols.unit_checker)])
    if coded is not None:  # the ground truth's code (none: -2, no row's)
        gt_code = next((i for i, v in enumerate(coded.values.tolist()) if v == GROUND_TRUTH), -2)
        is_gt = coded.columns["checker"] == gt_code
    else:
        is_gt = cols.checker == GROUND_TRUTH
    n_wanted = max(len(wanted), 1)

    # Units: every wanted (sample, checker) with a prediction entry or a predicted violation, sample-major then
    # in `wanted` order -- as the pair table has always listed them.
    pred_rows = ~is_gt & (row_slot >= 0)
    present = np.zeros(n_samples * n_wanted, dtype=bool)  # keys are < n_samples * n_wanted: sorted unique by a mask
    present[cols.unit_sample[unit_slot >= 0] * n_wanted + unit_slot[unit_slot >= 0]] = True
    present[cols.sample[pred_rows] * n_wanted + row_slot[pred_rows]] = True
    unit_keys = np.flatnonzero(present).astype(np.int64, copy=False)
    unit_sample, unit_checker = np.divmod(unit_keys, n_wanted)

    # Violations in build order: per sample its ground truth, then each unit's predictions (stable: list order kept).
    row_key = cols.sample * (n_wanted + 1) + np.where(is_gt, 0, row_slot + 1)
    keep = is_gt | pred_rows
    order = np.flatnonzero(keep)[np.argsort(row_key[keep], kind="stable")]
    gt_rows, pred_rows_ordered = order[is_gt[order]], order[~is_gt[order]]

    n_gt_of_sample = np.bincount(cols.sample[gt_rows], minlength=n_samples).astype(np.int64, copy=False)
    pred_unit = np.searchsorted(unit_keys, cols.sample[pred_rows_ordered] * n_wanted + row_slot[pred_rows_ordered])
    n_pred = np.bincount(pred_unit, minlength=unit_keys.size).astype(np.int64, copy=False)
    n_gt = n_gt_of_sample[unit_sample]
    sample_gt_base = np.concatenate([[0], np.cumsum(n_gt_of_sample)[:-1]]).astype(np.int64)
    unit_pred_base = np.concatenate([[0], np.cumsum(n_pred)[:-1]]).astype(np.int64)

    groups = pd.DataFrame({"sample_id": pd.Series(cols.sample_ids[unit_sample], dtype=object),
                           "checker": pd.Series(object_array(wanted)[unit_checker] if wanted else [], dtype=object),
                           "n_gt": n_gt, "n_pred": n_pred})
    group, gi, pi = unit_pair_indices(n_gt, n_pred)
    g_src = sample_gt_base[unit_sample][group] + gi
    p_src = unit_pred_base[group] + pi

    # Texts (rule, explanation, correction of each violation in build order) interned once, stripped, blank =
    # missing; categories compared after strip + casefold.
    if coded is not None:
        stacked = np.stack([coded.columns[f][order] for f in TEXT_FIELDS], axis=1).ravel()
        text_ids, texts = _codes(None, str.strip, (stacked, coded.values))
        cat_ids, cat_keys = _codes(None, _category_key, (coded.columns["category"][order], coded.values))
    else:
        text_ids, texts = _codes(np.stack([getattr(cols, f)[order] for f in TEXT_FIELDS], axis=1).ravel(), str.strip)
        cat_ids, cat_keys = _codes(cols.category[order], _category_key)
    text_ids = text_ids.reshape(-1, len(TEXT_FIELDS))
    is_gt_ordered = is_gt[order]
    ga, pa = ({"start": cols.start[rows], "end": cols.end[rows], "category": cat_ids[part],
               **{f: text_ids[part, k] for k, f in enumerate(TEXT_FIELDS)}}
              for rows, part in ((gt_rows, is_gt_ordered), (pred_rows_ordered, ~is_gt_ordered)))

    cols_out: dict[str, Any] = {"group": group, "gt": gi, "pred": pi}
    cols_out["overlap"] = span_iou_array(ga["start"][g_src], ga["end"][g_src], pa["start"][p_src], pa["end"][p_src])
    cols_out.update(_text_components(sim, texts, ga, pa, g_src, p_src))
    gc, pc = ga["category"][g_src], pa["category"][p_src]
    cols_out["category"] = np.where((gc >= 0) & (pc >= 0), (gc == pc).astype(np.float64), np.nan)
    # its columns as they are (no copy into one block: 66 MB and 0.14 s at 1M pairs; pandas copies on write)
    pairs = pd.DataFrame({k: cols_out[k] for k in ("group", "gt", "pred", *COMPONENTS)}, copy=False)

    labels = np.append(object_array(cat_keys), None)  # id -1 -> None (not NaN)
    gt_items = _items_without_category(n_gt)
    if len(gt_items):
        gt_index = np.repeat(sample_gt_base[unit_sample], n_gt) + gt_items["index"].to_numpy()
        gt_items["category"] = pd.Series(labels[ga["category"][gt_index]], dtype=object)
    pred_items = _items_without_category(n_pred)
    pred_items["category"] = pd.Series(labels[pa["category"]], dtype=object)
    codes = None
    if coded is not None:  # the store's columns: sample ids are its primary key, so unique
        gk = ga["category"][gt_index] if len(gt_items) else np.zeros(0, dtype=np.int64)
        codes = _group_codes(cols.sample_ids, unit_sample, wanted, unit_checker, cat_keys, gk, pa["category"])
    return PairTable(groups, pairs, gt_items, pred_items, sim.cache_key, codes)


def _group_codes(sample_ids: np.ndarray, unit_sample: np.ndarray, wanted: Sequence[str], unit_checker: np.ndarray,
                 cat_keys: Sequence[str], gt_cat: np.ndarray, pred_cat: np.ndarray) -> GroupCodes:
    """`GroupCodes` from the builder's integers: groups come sample-major (unit_sample never decreases), so a sample's
    code is its rank; checkers and categories are few, named and sorted here."""
    first = np.ones(unit_sample.size, dtype=bool)
    first[1:] = unit_sample[1:] != unit_sample[:-1]
    s_idx = np.cumsum(first) - 1
    slots = np.unique(unit_checker).tolist()
    checkers = sorted({wanted[i] for i in slots})
    slot_code = np.zeros(max(len(wanted), 1), dtype=np.int64)
    slot_code[slots] = [checkers.index(wanted[i]) for i in slots]
    ids = np.unique(np.concatenate([gt_cat, pred_cat])).tolist()  # -1: no category
    named = {i: cat_keys[i] if i >= 0 else NO_CATEGORY for i in ids}
    categories = sorted(set(named.values()))
    cat_code = np.zeros(len(cat_keys) + 1, dtype=np.int64)  # at id + 1
    for i, name in named.items():
        cat_code[i + 1] = categories.index(name)
    return GroupCodes(sample_ids[unit_sample[first]], s_idx, checkers, slot_code[unit_checker], categories,
                      cat_code[gt_cat + 1], cat_code[pred_cat + 1])


def _text_components(sim: TextSimilarity, texts: list[str], ga: dict[str, np.ndarray], pa: dict[str, np.ndarray],
                     g_src: np.ndarray, p_src: np.ndarray) -> dict[str, np.ndarray]:
    """Similarity of rule/explanation/correction for all pairs with one call (one batched encode)."""
    n = g_src.size
    masks, parts = {}, []
    for f in TEXT_FIELDS:
        a, b = ga[f][g_src], pa[f][p_src]
        m = (a >= 0) & (b >= 0)
        masks[f] = m
        parts.append((a[m], b[m]))
    sims = sim.pair_similarities_many(texts, parts)
    out = {}
    for f, values in zip(TEXT_FIELDS, sims):
        col = np.full(n, np.nan)
        col[masks[f]] = values
        out[f] = col
    return out
