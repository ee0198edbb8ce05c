"""TP/FP/FN, precision, recall and F1 of each checker, with bootstrap intervals; the checker leaderboard.

Counting. Per unit (sample, checker): TP = matched pairs, FP = predictions left unmatched, FN = GT left
unmatched. Per category: TP and FN count under the GT's category, FP under the prediction's (categories
compared after strip + casefold; a missing category counts as "(none)").

Aggregates. Micro: sum TP/FP/FN over the checker's units, then P/R/F1 (F1 = 2tp / (2tp + fp + fn)).
`macro_f1`: mean of the per-category F1 over the categories seen for that checker. `sample_macro_f1`:
mean of the per-unit F1 over the samples the checker was run on.

Zero denominators, one convention everywhere: when a ratio's denominator is 0 the value is 1.0 if the
counts are all zero (nothing to find and nothing claimed: perfect agreement) and 0.0 otherwise. So a
checker that flags nothing on a text with violations has precision 0.0 (and recall 0.0, F1 0.0), one that
flags something on a clean text has recall 0.0, and one that flags nothing on a clean text scores 1.0.

Intervals: percentile bootstrap over samples (the unit of independent data: all checkers of a resampled
sample come along, so comparisons between checkers are paired), seeded, default 1000 replicates,
computed as one matrix product of resample counts with per-sample counts. In a replicate where a
category does not occur its F1 is left out of the macro mean.
"""
from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from calibration.schemes.violations.config import MatchConfig
from calibration.schemes.violations.matching import Method, match
from calibration.schemes.violations.pairs import NO_CATEGORY, PairTable

DEFAULT_BOOT = 1000
BOOT_CHUNK = 100


def prf(tp: np.ndarray | float, fp: np.ndarray | float, fn: np.ndarray | float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Vectorised precision, recall, F1 with the zero-denominator convention above."""
    tp, fp, fn = (np.asarray(x, dtype=np.float64) for x in (tp, fp, fn))
    empty = (tp == 0) & (fp == 0) & (fn == 0)
    fallback = np.where(empty, 1.0, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(tp + fp > 0, tp / (tp + fp), fallback)
        r = np.where(tp + fn > 0, tp / (tp + fn), fallback)
        f = np.where(2 * tp + fp + fn > 0, 2 * tp / (2 * tp + fp + fn), 1.0)
    return p, r, f


@dataclass(frozen=True)
class Counts:
    """Counts of one matching: per unit, and per (sample, checker[, category]) for aggregation."""

    units: pd.DataFrame  # groups + tp, fp, fn
    samples: list[str]
    checkers: list[str]
    categories: list[str]
    by_sample: np.ndarray  # (S, C, 3) tp, fp, fn
    by_sample_cat: np.ndarray  # (S, C, K, 3)
    run_on: np.ndarray  # (S, C) bool: checker has a unit for the sample


@dataclass(frozen=True)
class TableCodes:
    """What `count` needs of a pair table whatever the matching: each group's sample and checker as codes (and its
    (sample, checker) cell), each GT / predicted item's group and category code. Made once per table when several
    configs are counted on it (evaluate_many): factorizing 400k sample ids and 1.1M categories per config was a
    third of the counting at 100k samples."""

    samples: list[str]
    checkers: list[str]
    categories: list[str]
    cell: np.ndarray  # per group: sample code * C + checker code
    s_idx: np.ndarray
    c_idx: np.ndarray
    gg: np.ndarray  # per GT item: its group
    pg: np.ndarray  # per predicted item: its group
    gk: np.ndarray  # per GT item: its category code
    pk: np.ndarray  # per predicted item: its category code


def table_codes(pair_table: PairTable) -> TableCodes:
    groups = pair_table.groups
    known = pair_table.codes  # the builder's own integers (a table built from the store's columns)
    if known is not None:
        checkers = list(known.checkers)
        return TableCodes([str(s) for s in known.samples.tolist()], checkers, list(known.categories),
                          known.s_idx * len(checkers) + known.c_idx, known.s_idx, known.c_idx,
                          pair_table.gt_items["group"].to_numpy(dtype=np.int64),
                          pair_table.pred_items["group"].to_numpy(dtype=np.int64), known.gk, known.pk)
    s_idx, samples = pd.factorize(groups["sample_id"], sort=False)
    c_idx, checkers = pd.factorize(groups["checker"], sort=True)
    gcat, pcat = (_category_names(pair_table.gt_items["category"]), _category_names(pair_table.pred_items["category"]))
    codes, categories = pd.factorize(np.concatenate([gcat, pcat]), sort=True)
    return TableCodes([str(s) for s in samples], [str(c) for c in checkers], [str(k) for k in categories],
                      s_idx.astype(np.int64) * len(checkers) + c_idx, s_idx, c_idx,
                      pair_table.gt_items["group"].to_numpy(dtype=np.int64),
                      pair_table.pred_items["group"].to_numpy(dtype=np.int64), codes[: gcat.size], codes[gcat.size :])


def count(pair_table: PairTable, matched: np.ndarray, codes: TableCodes | None = None) -> Counts:
    """TP/FP/FN per unit and per category from a boolean match mask over the pair table (`codes`: its
    `table_codes`, when the caller counts several masks on it)."""
    groups, pairs = pair_table.groups, pair_table.pairs
    k = table_codes(pair_table) if codes is None else codes
    G = len(groups)
    matched = np.asarray(matched, dtype=bool)
    mg = pairs["group"].to_numpy(dtype=np.int64)[matched]
    tp = np.bincount(mg, minlength=G).astype(np.int64, copy=False)
    n_gt = groups["n_gt"].to_numpy(dtype=np.int64)
    n_pred = groups["n_pred"].to_numpy(dtype=np.int64)
    units = groups.copy()
    units["tp"], units["fp"], units["fn"] = tp, n_pred - tp, n_gt - tp

    S, C, K = len(k.samples), len(k.checkers), len(k.categories)
    by_sample = np.zeros((S, C, 3), dtype=np.int64)
    run_on = np.zeros((S, C), dtype=bool)
    if G:  # a unit is one (sample, checker): each cell is written once, so assigned (np.add.at was 5x slower)
        by_sample[k.s_idx, k.c_idx] = np.column_stack([tp, n_pred - tp, n_gt - tp])
        run_on[k.s_idx, k.c_idx] = True

    gt_hit = np.zeros(len(pair_table.gt_items), dtype=bool)
    pred_hit = np.zeros(len(pair_table.pred_items), dtype=bool)
    gt_hit[pair_table.gt_offsets[mg] + pairs["gt"].to_numpy(dtype=np.int64)[matched]] = True
    pred_hit[pair_table.pred_offsets[mg] + pairs["pred"].to_numpy(dtype=np.int64)[matched]] = True
    cell, gg, pg, gk, pk = k.cell, k.gg, k.pg, k.gk, k.pk
    # every item counted into its (sample, checker, category, tp/fp/fn) cell by one bincount of flat cell numbers
    flat = np.concatenate([(cell[gg[gt_hit]] * K + gk[gt_hit]) * 3,
                           (cell[pg[~pred_hit]] * K + pk[~pred_hit]) * 3 + 1,
                           (cell[gg[~gt_hit]] * K + gk[~gt_hit]) * 3 + 2])
    by_cat = np.bincount(flat, minlength=S * C * K * 3).astype(np.int64, copy=False).reshape(S, C, K, 3)
    return Counts(units, list(k.samples), list(k.checkers), list(k.categories), by_sample, by_cat, run_on)


def _category_names(categories: pd.Series) -> np.ndarray:
    """Each item's category (a str: the pair table's normalised keys) as an object array, NO_CATEGORY for a missing
    one. Not `.fillna().astype(str)`: pandas infers its Arrow string dtype there and converts back, 0.1 s per config
    at 100k samples."""
    values = categories.to_numpy(dtype=object, copy=True)
    values[pd.isna(values)] = NO_CATEGORY
    return values


def unit_counts(pair_table: PairTable, config: MatchConfig, method: Method | None = None) -> pd.DataFrame:
    """One row per unit: sample_id, checker, n_gt, n_pred, tp, fp, fn."""
    return count(pair_table, match(pair_table, config, method=method)).units


def bootstrap_sums_blocks(blocks: Sequence[np.ndarray], n_boot: int = DEFAULT_BOOT, seed: int = 0) -> np.ndarray:
    """`bootstrap_sums` of the blocks side by side (agreement.resample_sums_blocks: the same sums, no joined copy)."""
    from calibration.agreement import resample_sums_blocks

    return resample_sums_blocks(blocks, n_boot, seed, BOOT_CHUNK)


def bootstrap_sums(per_sample: np.ndarray, n_boot: int = DEFAULT_BOOT, seed: int = 0) -> np.ndarray:
    """Column sums of `per_sample` (S, M) over `n_boot` resamples of its rows: (n_boot, M).

    Drawn by calibration.agreement's `resample_sums` (per-sample counts take few distinct values, so a replicate
    draws how many samples of each kind it holds; else the project's one bootstrap stream, chunks of BOOT_CHUNK);
    imported here, not at the top, because agreement pulls in scikit-learn and this module is on the
    CLI's path."""
    from calibration.agreement import resample_sums

    return resample_sums(per_sample, n_boot, seed, BOOT_CHUNK)


def _interval(values: np.ndarray, ci: float) -> np.ndarray:
    """Percentile interval along axis 0, ignoring NaN (all-NaN columns give NaN); (2, ...)."""
    a = (1.0 - ci) / 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN slices are expected (unseen categories)
        return np.nanquantile(values, [a, 1.0 - a], axis=0)


def _nanmean_last(values: np.ndarray) -> np.ndarray:
    """Mean over the last axis ignoring NaN; NaN where nothing is left."""
    ok = ~np.isnan(values)
    n = ok.sum(axis=-1)
    total = np.where(ok, values, 0.0).sum(axis=-1)
    return np.divide(total, n, out=np.full(total.shape, np.nan), where=n > 0)


def _num(x: Any) -> float | int | None:
    if isinstance(x, (np.integer, int)):
        return int(x)
    v = float(x)
    return None if np.isnan(v) else v


def _flat(counts: Counts) -> np.ndarray:
    """(S, C*3 + C*K*3): the per-sample counts the bootstrap sums."""
    return np.concatenate(_flat_blocks(counts), axis=1)


def _flat_width(counts: Counts) -> int:
    C, K = len(counts.checkers), len(counts.categories)
    return C * 3 + C * K * 3


def _flat_blocks(counts: Counts) -> tuple[np.ndarray, np.ndarray]:
    """`_flat(counts)` as its two blocks (views, not joined)."""
    S, C, K = len(counts.samples), len(counts.checkers), len(counts.categories)
    return counts.by_sample.reshape(S, C * 3), counts.by_sample_cat.reshape(S, C * K * 3)


def evaluate_counts(counts: Counts, n_boot: int = DEFAULT_BOOT, seed: int = 0, ci: float = 0.95,
                    boots: np.ndarray | None = None) -> dict[str, Any]:
    """JSON-able metrics per checker (micro, macro, per category, bootstrap intervals).

    `boots`: bootstrap_sums(_flat(counts), n_boot, seed) when the caller already has it (evaluate_many)."""
    C = len(counts.checkers)
    if C == 0:
        return {}
    if boots is None:
        flat = _flat(counts)
        boots = bootstrap_sums(flat, n_boot, seed) if n_boot > 0 else np.zeros((0, flat.shape[1]))
    _, _, uf = prf(counts.by_sample[..., 0], counts.by_sample[..., 1], counts.by_sample[..., 2])
    return checker_figures(counts.checkers, counts.categories, counts.by_sample.sum(axis=0),
                           counts.by_sample_cat.sum(axis=0), [uf[counts.run_on[:, c], c] for c in range(C)], boots, ci)


def checker_figures(checkers: Sequence[str], categories: Sequence[str], totals: np.ndarray, cat_tot: np.ndarray,
                    run_f1: Sequence[np.ndarray], boots: np.ndarray, ci: float = 0.95) -> dict[str, Any]:
    """`evaluate_counts` from what it sums: each checker's TP/FP/FN (C, 3) and per category (C, K, 3) over the
    samples, each checker's per-sample F1 on the samples it ran on (in sample order), the bootstrap sums `boots`
    (reps, C*3 + C*K*3). Windowed evaluation (tally.py) keeps only these of each window's counts."""
    C, K = len(checkers), len(categories)
    reps = boots.shape[0]
    b_main = boots[:, : C * 3].reshape(reps, C, 3)
    b_cat = boots[:, C * 3 :].reshape(reps, C, K, 3)
    bp, br, bf = prf(b_main[..., 0], b_main[..., 1], b_main[..., 2])
    cat_seen_b = b_cat.sum(axis=-1) > 0
    _, _, bcf = prf(b_cat[..., 0], b_cat[..., 1], b_cat[..., 2])
    bcf_masked = np.where(cat_seen_b, bcf, np.nan)
    b_macro = _nanmean_last(bcf_masked) if K else np.full((boots.shape[0], C), np.nan)
    iv = lambda arr: _interval(arr, ci) if arr.shape[0] else np.full((2, *arr.shape[1:]), np.nan)  # noqa: E731
    p_ci, r_ci, f_ci, m_ci, cf_ci = iv(bp), iv(br), iv(bf), iv(b_macro), iv(bcf_masked)

    p, r, f = prf(totals[:, 0], totals[:, 1], totals[:, 2])
    cp, cr, cf = prf(cat_tot[..., 0], cat_tot[..., 1], cat_tot[..., 2])
    out: dict[str, Any] = {}
    for c, name in enumerate(checkers):
        seen = cat_tot[c].sum(axis=-1) > 0
        per_cat = {
            categories[k]: {
                "tp": _num(cat_tot[c, k, 0]), "fp": _num(cat_tot[c, k, 1]), "fn": _num(cat_tot[c, k, 2]),
                "precision": _num(cp[c, k]), "recall": _num(cr[c, k]), "f1": _num(cf[c, k]),
                "f1_ci": [_num(cf_ci[0, c, k]), _num(cf_ci[1, c, k])],
            }
            for k in range(K) if seen[k]
        }
        run = run_f1[c]
        out[name] = {
            "n_samples": int(run.size),
            "tp": _num(totals[c, 0]), "fp": _num(totals[c, 1]), "fn": _num(totals[c, 2]),
            "precision": _num(p[c]), "recall": _num(r[c]), "f1": _num(f[c]),
            "precision_ci": [_num(p_ci[0, c]), _num(p_ci[1, c])],
            "recall_ci": [_num(r_ci[0, c]), _num(r_ci[1, c])],
            "f1_ci": [_num(f_ci[0, c]), _num(f_ci[1, c])],
            "macro_f1": _num(cf[c][seen].mean()) if seen.any() else None,
            "macro_f1_ci": [_num(m_ci[0, c]), _num(m_ci[1, c])],
            "sample_macro_f1": _num(run.mean()) if run.size else None,
            "per_category": per_cat,
        }
    return out


def evaluate(pair_table: PairTable, config: MatchConfig, method: Method | None = None, n_boot: int = DEFAULT_BOOT,
             seed: int = 0, ci: float = 0.95) -> dict[str, Any]:
    """Match under `config` and report `{"config", "matching", "bootstrap", "checkers": {...}}` (JSON-able)."""
    method = method or config.matching
    counts = count(pair_table, match(pair_table, config, method=method))
    return {
        "config": config.to_dict() | {"matching": method},
        "similarity": pair_table.similarity_key,
        "bootstrap": {"replicates": n_boot, "seed": seed, "ci": ci, "unit": "sample"},
        "checkers": evaluate_counts(counts, n_boot, seed, ci),
    }


def evaluate_many(items: Sequence[tuple[PairTable, MatchConfig, Method | None]], n_boot: int = DEFAULT_BOOT,
                  seed: int = 0, ci: float = 0.95) -> list[tuple[dict[str, Any], np.ndarray, Counts]]:
    """evaluate() of several (table, config, method), with the bootstrap draws shared: configs over the same
    samples get the same replicates anyway (same seed), so their per-sample counts are stacked side by side and
    resampled in one pass (the draws dominate the cost at 100k samples). Results are identical to evaluate()'s.
    Returns (report, match mask, counts) per item, so callers reuse the matching (unit scores, proposed matches)."""
    done = []
    codes: dict[int, TableCodes] = {}  # per table (by identity: the items hold them, so ids stay theirs)
    for table, config, method in items:
        method = method or config.matching
        mask = match(table, config, method=method)
        if id(table) not in codes:
            codes[id(table)] = table_codes(table)
        done.append((table, config, method, mask, count(table, mask, codes[id(table)])))
    boots: list[np.ndarray | None] = [None] * len(done)
    by_samples: dict[tuple[str, ...], list[int]] = {}
    for i, d in enumerate(done):
        if d[4].checkers and n_boot > 0:
            by_samples.setdefault(tuple(d[4].samples), []).append(i)
    for idx in by_samples.values():
        # every config's `_flat` counts as blocks side by side, never joined into one float matrix (115 MB at 100k
        # samples): the bootstrap gathers only their distinct rows (agreement.resample_sums_blocks)
        blocks = [block for i in idx for block in _flat_blocks(done[i][4])]
        both = bootstrap_sums_blocks(blocks, n_boot, seed)
        edges = np.cumsum([0, *(_flat_width(done[i][4]) for i in idx)])
        for j, i in enumerate(idx):
            boots[i] = both[:, edges[j] : edges[j + 1]]
    out = []
    for (table, config, method, mask, counts), b in zip(done, boots):
        report = {
            "config": config.to_dict() | {"matching": method},
            "similarity": table.similarity_key,
            "bootstrap": {"replicates": n_boot, "seed": seed, "ci": ci, "unit": "sample"},
            "checkers": evaluate_counts(counts, n_boot, seed, ci, boots=b),
        }
        out.append((report, mask, counts))
    return out


LEADERBOARD_COLUMNS = ["n_samples", "tp", "fp", "fn", "precision", "recall", "f1", "f1_lo", "f1_hi", "macro_f1"]


def leaderboard(pair_table: PairTable, config: MatchConfig, method: Method | None = None,
                n_boot: int = DEFAULT_BOOT, seed: int = 0, ci: float = 0.95) -> pd.DataFrame:
    """One row per checker, best micro F1 first (ties by name)."""
    res = evaluate(pair_table, config, method, n_boot, seed, ci)["checkers"]
    rows = [{"checker": name, **{k: m[k] for k in LEADERBOARD_COLUMNS if k in m},
             "f1_lo": m["f1_ci"][0], "f1_hi": m["f1_ci"][1]} for name, m in res.items()]
    df = pd.DataFrame(rows, columns=["checker", *LEADERBOARD_COLUMNS])
    df = df.sort_values(["f1", "checker"], ascending=[False, True], kind="stable")
    return df.set_index("checker")


def compare_leaderboards(pair_table: PairTable, configs: Sequence[MatchConfig], method: Method | None = None,
                         n_boot: int = DEFAULT_BOOT, seed: int = 0, ci: float = 0.95) -> pd.DataFrame:
    """Leaderboards of several configs side by side (columns: (config name, metric)); rows by the first's F1."""
    boards = [leaderboard(pair_table, c, method, n_boot, seed, ci) for c in configs]
    if not boards:
        return pd.DataFrame()
    df = pd.concat(boards, axis=1, keys=[c.name for c in configs])
    return df.loc[boards[0].index]
