"""RGB's four figures per model and task, with bootstrap intervals, and accuracy against noise rate.

Input is a decisions table, one row per response: model, task, noise_rate and the four booleans (correct,
rejected, error_detected, error_corrected), from a checker (`decisions_frame`) or, later, from human labels. All
figures are percentages:
- accuracy = correct / N; rejection rate = rejected / N; error detection rate = detected / N;
- error correction rate: RGB's (`correction_base="detected"`) = corrected / detected, 0 when nothing was
  detected; the seed's extended evaluator (`"all"`) = corrected / N.
Intervals: percentile bootstrap over responses, the replicates of calibration.agreement.bootstrap_ci (same seed, same
draws): every figure is a ratio of sums, so a replicate is its draw counts per pattern of decisions (the
replicates of resample_counts, counted per pattern) times the patterns, not a Python call per replicate; groups of
one size share one pass over the draws (`evaluate_many`).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd

from calibration.agreement import distinct_rows, percentile_interval, resample_index_chunks
from calibration.schemes.rgb.features import LABELS, Decisions
from calibration.schemes.rgb.records import RGBRecord

FIGURES: tuple[str, ...] = ("accuracy", "rejection_rate", "error_detection_rate", "error_correction_rate")
CorrectionBase = Literal["detected", "all"]
CORRECTION_BASE: dict[str, CorrectionBase] = {"rgb_original": "detected", "rgb_extended": "all"}


def decisions_frame(records: Sequence[RGBRecord], decisions: Decisions, row: int = 0) -> pd.DataFrame:
    """Records + one config's decisions (row `row` of the matrices) as a decisions table."""
    return pd.DataFrame({
        "id": [r.id for r in records],
        "model": [r.model or "" for r in records],
        "task": [r.task for r in records],
        "noise_rate": [np.nan if r.noise_rate is None else r.noise_rate for r in records],
        **{k: decisions.label(k)[row] for k in LABELS},
    })


def _figure(x: np.ndarray, name: str, base: CorrectionBase) -> float:
    """x: (n, 4) 0/1 in LABELS order."""
    n = x.shape[0]
    if name == "accuracy":
        return 100.0 * x[:, 0].sum() / n
    if name == "rejection_rate":
        return 100.0 * x[:, 1].sum() / n
    if name == "error_detection_rate":
        return 100.0 * x[:, 2].sum() / n
    if base == "all":
        return 100.0 * x[:, 3].sum() / n
    detected = x[:, 2].sum()
    return 100.0 * (x[:, 2] & x[:, 3]).sum() / detected if detected else 0.0


def figures(table: pd.DataFrame, correction_base: CorrectionBase = "detected") -> dict[str, float]:
    """The four figures (percent) of a set of responses; NaN for an empty set."""
    if len(table) == 0:
        return {f: math.nan for f in FIGURES}
    x = table[list(LABELS)].to_numpy(dtype=bool).astype(np.int8)
    return {f: _figure(x, f, correction_base) for f in FIGURES}


def _replicates(x: np.ndarray, base: CorrectionBase, n_boot: int, seed: int) -> np.ndarray:
    """(n_boot, 4) the figures, in FIGURES order, of bootstrap replicates of the responses x (n, 4): from the draw
    counts' sums, equal to `_figure` of each resample (the same integer sums, divided the same way)."""
    return _replicates_many([(x, base)], n_boot, seed)[0]


def _replicates_many(groups: Sequence[tuple[np.ndarray, CorrectionBase]], n_boot: int, seed: int) -> list[np.ndarray]:
    """`_replicates` of groups of responses of one size n, from one pass over the draws: each group on its own
    drew the very same replicates (same n, seed and chunks), so drawing them once serves all (the draws were most of
    the figures' time: six tables of the same units at 100k units). A unit's pattern across every group (its joint
    pattern: few) is counted once per chunk, in one bincount of the chunk's draws offset per replicate (a Python
    bincount per replicate and group was half of `concord evaluate --scheme rgb`); each group's sums are then the
    joint counts times its columns, integers as before (exact)."""
    n = groups[0][0].shape[0]
    # the sums are integers: counted per pattern of the 0/1 columns, exact as the product with every unit's draw
    # counts was, and without it
    cols = [np.column_stack([x, x[:, 2] & x[:, 3]]).astype(np.float64) for x, _ in groups]
    joint, codes = distinct_rows(np.hstack(cols))
    k = joint.shape[0]
    per_joint = [joint[:, 5 * g:5 * g + 5] for g in range(len(groups))]  # (k, 5) each group's columns
    sums = [np.empty((n_boot, 5)) for _ in groups]
    lo = 0
    for idx in resample_index_chunks(n, n_boot, seed):
        reps = idx.shape[0]
        drawn = codes[idx]  # (reps, n) the drawn units' joint patterns
        drawn += np.arange(0, reps * k, k, dtype=drawn.dtype)[:, None]
        counts = np.bincount(drawn.ravel(), minlength=reps * k).reshape(reps, k).astype(np.float64)
        for rows, out in zip(per_joint, sums):
            out[lo:lo + reps] = counts @ rows
        lo += reps
    return [_from_sums(total, n, base) for total, (_, base) in zip(sums, groups)]


def _from_sums(sums: np.ndarray, n: int, base: CorrectionBase) -> np.ndarray:
    """(reps, 4) figures from (reps, 5) sums of the four decisions and detected-and-corrected."""
    out = 100.0 * sums[:, :4] / n
    if base != "all":
        detected = sums[:, 2]
        with np.errstate(invalid="ignore", divide="ignore"):
            out[:, 3] = np.where(detected > 0, 100.0 * sums[:, 4] / detected, 0.0)
    return out


def _check(table: pd.DataFrame, by: Sequence[str], correction_base: str) -> None:
    missing = [c for c in (*by, *LABELS) if c not in table.columns]
    if missing:
        raise ValueError(f"decisions table lacks column(s) {missing}")
    if correction_base not in ("detected", "all"):
        raise ValueError(f"correction_base must be 'detected' or 'all', got {correction_base!r}")


def evaluate(table: pd.DataFrame, correction_base: CorrectionBase = "detected", by: Sequence[str] = ("model", "task"),
             n_boot: int = 1000, seed: int = 0, alpha: float = 0.05) -> pd.DataFrame:
    """One row per group and figure: the groups' keys, figure, value, low, high, n (responses)."""
    return evaluate_many([(table, correction_base)], by, n_boot, seed, alpha)[0]


def evaluate_many(jobs: Sequence[tuple[pd.DataFrame, CorrectionBase]], by: Sequence[str] = ("model", "task"),
                  n_boot: int = 1000, seed: int = 0, alpha: float = 0.05) -> list[pd.DataFrame]:
    """`evaluate` of each (table, correction base), the groups of one size sharing one pass over the draws (the
    same replicates each drew alone)."""
    groups: list[tuple[int, tuple, np.ndarray, CorrectionBase]] = []
    for j, (table, correction_base) in enumerate(jobs):
        _check(table, by, correction_base)
        if len(table):
            for key, group in table.groupby(list(by), sort=True, dropna=False):
                key = key if isinstance(key, tuple) else (key,)
                groups.append((j, key, group[list(LABELS)].to_numpy(dtype=bool).astype(np.int8), correction_base))
    reps: list[np.ndarray | None] = [None] * len(groups)
    if n_boot > 0:
        by_size: dict[int, list[int]] = {}
        for i, g in enumerate(groups):
            by_size.setdefault(g[2].shape[0], []).append(i)
        for members in by_size.values():
            drawn = _replicates_many([(groups[i][2], groups[i][3]) for i in members], n_boot, seed)
            for i, r in zip(members, drawn):
                reps[i] = r
    rows: list[list[dict]] = [[] for _ in jobs]
    for (j, key, x, correction_base), rep in zip(groups, reps):
        for f_i, f in enumerate(FIGURES):
            value = float(_figure(x, f, correction_base))
            low, high = (math.nan, math.nan) if rep is None else percentile_interval(rep[:, f_i], alpha)
            rows[j].append({**dict(zip(by, key)), "figure": f, "value": value, "low": low, "high": high,
                            "n": int(x.shape[0])})
    return [pd.DataFrame(r, columns=[*by, "figure", "value", "low", "high", "n"]) for r in rows]


def noise_table(table: pd.DataFrame, by: Sequence[str] = ("model",), n_boot: int = 0, seed: int = 0,
                alpha: float = 0.05, wide: bool = True) -> pd.DataFrame:
    """Accuracy (percent) against noise rate. Wide: rows = `by` groups, columns = noise rates. Long (wide=False):
    one row per group and noise rate with value, low, high, n. Responses without a noise rate are left out."""
    _check(table, (*by, "noise_rate"), "detected")
    known = table[table["noise_rate"].notna()]
    long = evaluate(known, by=(*by, "noise_rate"), n_boot=n_boot, seed=seed, alpha=alpha)
    long = long[long["figure"] == "accuracy"].drop(columns="figure").reset_index(drop=True)
    if not wide:
        return long
    if long.empty:
        return pd.DataFrame(index=pd.Index([], name=by[0] if len(by) == 1 else None))
    return long.pivot_table(index=list(by), columns="noise_rate", values="value", aggfunc="first")
