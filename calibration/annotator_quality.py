"""Annotator quality (issue #29 item 5): each annotator against a reference they are not part of, their drift over
their own time, their time per decision, and flags for patterns worth a look. Plain numbers: nothing is excluded.

The reference of an item for annotator X is the newest adjudicated label by someone else, else the strict plurality
of the other annotators' labels (a tie, or nobody else: no reference, the item is not compared). Leaving X out keeps
a two-annotator project honest: X is not compared with a majority X helped to make.

Intervals are percentile bootstraps over samples (a sample's items travel together) through the project's one draw
(`calibration.annotators._boot_sums` over `agreement.resample_counts`); Cohen's kappa against the reference is
`calibration.annotators._kappa_from_confusion` on the summed confusion counts, as for annotator pairs.
"""
from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np
import pandas as pd

from calibration.agreement import estimate_interval, nan_ratio
from calibration.annotators import boot_sums, kappa_from_confusion

COLUMNS = ("sample", "item", "annotator", "category", "kind", "ts", "adjudicated")


@dataclass(frozen=True, slots=True)
class FlagRules:
    """When a pattern is flagged. Defaults are deliberately loose: a flag asks for a look, it proves nothing."""

    accept_share: float = 0.98  # accepted at least this share of the machine's proposals ...
    min_status: int = 10  # ... over at least this many status decisions
    fast_median: float = 1.0  # median seconds per decision below this
    min_timed: int = 5  # ... over at least this many timed decisions
    outlier_share: float = 0.5  # agrees with the reference on a kind=category at most this share ...
    others_share: float = 0.8  # ... where the others agree with theirs at least this share
    min_items: int = 5  # ... each over at least this many compared items


def references(table: pd.DataFrame) -> pd.DataFrame:
    """`table` (COLUMNS) with a `reference` column: per row, the item's label without its own annotator (rows
    without a reference are dropped)."""
    samples, items, people = table["sample"].tolist(), table["item"].tolist(), table["annotator"].tolist()
    cats, adjudicated, times = table["category"].tolist(), table["adjudicated"].tolist(), table["ts"].tolist()
    by_item: dict[tuple[Any, Any], list[int]] = defaultdict(list)
    for row, key in enumerate(zip(samples, items)):
        by_item[key].append(row)
    refs: list[Any] = [None] * len(samples)
    keep = np.zeros(len(samples), dtype=bool)
    for rows in by_item.values():
        if len(rows) < 2:
            continue  # nobody else labelled the item
        for row in rows:
            others = [(cats[o], bool(adjudicated[o]), float(times[o])) for o in rows if people[o] != people[row]]
            ref = _reference(others)
            if ref is not None:
                refs[row], keep[row] = ref[0], True
    out = table.assign(reference=pd.Series(refs, index=table.index, dtype=object))  # object: None must not make 1 a 1.0
    return out[keep]


def _reference(others: Sequence[tuple[Any, bool, float]]) -> tuple[Any] | None:
    """(value,) of the newest adjudicated label among `others` (value, adjudicated, time), else of their strict
    plurality; None without one. NaN times (unknown) sort first."""
    if not others:
        return None
    adjudicated = [r for r in others if r[1]]
    if adjudicated:
        return (max(adjudicated, key=lambda r: -math.inf if r[2] != r[2] else r[2])[0],)
    if len(others) == 1:
        return (others[0][0],)
    top = Counter(r[0] for r in others).most_common(2)
    if len(top) > 1 and top[0][1] == top[1][1]:
        return None
    return (top[0][0],)


def compare(rows: pd.DataFrame, n_boot: int, seed: int, ci: float = 0.95) -> dict[str, Any]:
    """One annotator's rows with their `reference`: the share of items equal to it and Cohen's kappa with it, and
    their drift: that share in the first and the last half of their items by time, and late minus early. Every
    interval is a percentile bootstrap over samples from one draw (the drift's is paired: a sample's items in both
    halves move together). Drift leaves out items without a time (NaN: imported) and is None below 4 timed items or
    when all carry one time."""
    kind = rows["kind"].astype(str) + "="  # kinds keep their categories apart, as the pooled overall figures do
    given, ref = kind + rows["category"].astype(str), kind + rows["reference"].astype(str)
    cats = pd.Index(pd.unique(pd.concat([given, ref])))
    k = len(cats)
    s_code, samples = pd.factorize(rows["sample"], sort=False)
    a_code, r_code = cats.get_indexer(given), cats.get_indexer(ref)
    confusion = np.bincount(s_code * k * k + a_code * k + r_code, minlength=len(samples) * k * k)
    halves = _halves(rows["ts"].to_numpy(dtype=float), (a_code == r_code).astype(float), s_code, len(samples))
    per_sample = np.hstack([confusion.reshape(len(samples), k * k).astype(float), halves])
    weights = 1.0 - np.eye(k)

    def stats(sums: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        conf = sums[..., :k * k].reshape(*sums.shape[:-1], k, k)
        h = sums[..., k * k:]
        return (nan_ratio(np.trace(conf, axis1=-2, axis2=-1), conf.sum((-2, -1))), kappa_from_confusion(conf, weights),
                nan_ratio(h[..., 2], h[..., 3]) - nan_ratio(h[..., 0], h[..., 1]))

    total = per_sample.sum(0)
    est = stats(total)
    reps = stats(boot_sums(per_sample, n_boot, seed)) if n_boot > 0 else (None, None, None)
    h = total[k * k:]
    timed = rows["ts"].to_numpy(dtype=float)
    timed = timed[np.isfinite(timed)]
    drift = None
    if len(timed) >= 4 and np.ptp(timed) > 0:
        drift = {"n_early": int(h[1]), "n_late": int(h[3]), "early": float(h[0] / h[1]), "late": float(h[2] / h[3]),
                 "change": estimate_interval(float(est[2]), reps[2], ci)}
    return {"n_compared": len(rows), "n_samples": len(samples),
            "agreement": estimate_interval(float(est[0]), reps[0], ci),
            "kappa": estimate_interval(float(est[1]), reps[1], ci), "drift": drift}


def _halves(ts: np.ndarray, agree: np.ndarray, s_code: np.ndarray, n_samples: int) -> np.ndarray:
    """(n_samples, 4) per-sample sums [agreeing early, early, agreeing late, late]: the first and the last half of
    the timed items in time order (the odd middle one counts as early; untimed items in neither)."""
    timed = np.flatnonzero(np.isfinite(ts))
    order = timed[np.argsort(ts[timed], kind="stable")]
    late = np.zeros(len(ts), dtype=bool)
    late[order[len(order) - len(order) // 2:]] = True
    early = np.zeros(len(ts), dtype=bool)
    early[order] = True
    early &= ~late
    out = np.zeros((n_samples, 4))
    for col, values in enumerate((agree * early, early, agree * late, late)):
        np.add.at(out[:, col], s_code, values.astype(float))
    return out


def by_kind_category(rows: pd.DataFrame) -> dict[tuple[str, Any], tuple[int, float]]:
    """(kind, reference category) -> (compared items, share agreeing) of one annotator."""
    agree = rows["category"].astype(object).to_numpy() == rows["reference"].astype(object).to_numpy()
    out: dict[tuple[str, Any], tuple[int, float]] = {}
    for key, idx in rows.groupby(["kind", "reference"], sort=False).indices.items():  # categories of mixed types
        out[(str(key[0]), key[1])] = (len(idx), float(agree[idx].mean()))
    return out


def decision_gaps(times: Iterable[float], break_after: float = 1800.0) -> list[float]:
    """Seconds between consecutive decisions (sorted epoch seconds); a gap longer than `break_after` is a pause,
    not a decision's time, and is left out. The first decision has no gap."""
    t = sorted(times)
    return [b - a for a, b in pairwise(t) if b - a <= break_after]


def spread(values: Sequence[float]) -> dict[str, float | int | None]:
    """n, median, p10 and p90 of `values` (None when there are none)."""
    if not len(values):
        return {"n": 0, "median": None, "p10": None, "p90": None}
    p10, median, p90 = np.percentile(np.asarray(values, dtype=float), [10, 50, 90])
    return {"n": len(values), "median": float(median), "p10": float(p10), "p90": float(p90)}


def flags(me: Mapping[str, Any], mine: Mapping[tuple[str, Any], tuple[int, float]],
          others: Mapping[tuple[str, Any], Sequence[tuple[int, float]]], rules: FlagRules = FlagRules()
          ) -> list[dict[str, Any]]:
    """Patterns worth a look in one annotator's figures: `me` holds `n_status`, `accept_share` and `seconds`
    (spread); `mine` is their by_kind_category, `others` every other annotator's figures per (kind, category)."""
    out: list[dict[str, Any]] = []
    share, n_status = me.get("accept_share"), me.get("n_status") or 0
    if share is not None and n_status >= rules.min_status and share >= rules.accept_share:
        out.append({"flag": "accepts_all", "detail": f"accepted {share:.0%} of {n_status} machine proposals"})
    secs = me.get("seconds") or {}
    if secs.get("median") is not None and secs["n"] >= rules.min_timed and secs["median"] < rules.fast_median:
        out.append({"flag": "fast", "detail": f"median {secs['median']:.2f} s per decision over {secs['n']}"})
    for (kind, category), (n, agree) in sorted(mine.items(), key=lambda kv: (kv[0][0], str(kv[0][1]))):
        theirs = [s for m, s in others.get((kind, category), ()) if m >= rules.min_items]
        if n >= rules.min_items and agree <= rules.outlier_share and theirs and min(theirs) >= rules.others_share:
            out.append({"flag": "disagrees", "kind": kind, "category": category,
                        "detail": f"{kind}={category}: agrees on {agree:.0%} of {n} items, the others on "
                                  f"{min(theirs):.0%} or more"})
    return out


def annotator_quality(table: pd.DataFrame | Iterable[Any], *, statuses: Mapping[str, Mapping[str, int]] | None = None,
                      seconds: Mapping[str, Mapping[str, Any]] | None = None, n_boot: int = 1000, seed: int = 0,
                      rules: FlagRules = FlagRules()) -> list[dict[str, Any]]:
    """One row per annotator of `table` (COLUMNS; ts in epoch seconds, NaN: unknown): agreement and kappa with the reference,
    drift, the status decisions they made (`statuses`: annotator -> status -> count), their time per decision
    (`seconds`: annotator -> spread, with its source) and flags. Sorted by annotator."""
    df = table if isinstance(table, pd.DataFrame) else pd.DataFrame(list(table), columns=list(COLUMNS))
    compared = references(df) if len(df) else df.assign(reference=[])
    figures: dict[str, dict[str, Any]] = {}
    groups: dict[str, dict[tuple[str, Any], tuple[int, float]]] = {}
    names = sorted(set(df["annotator"]) | set(statuses or {}) | set(seconds or {}))
    for name in names:
        rows = compared[compared["annotator"] == name]
        row: dict[str, Any] = {"annotator": name, "n_labels": int((df["annotator"] == name).sum())}
        if len(rows):
            row.update(compare(rows, n_boot, seed))
            groups[name] = by_kind_category(rows)
        else:
            row.update(n_compared=0, n_samples=0, agreement=None, kappa=None, drift=None)
        mine = (statuses or {}).get(name, {})
        n_status = sum(mine.values())
        row["n_status"] = n_status
        row["accept_share"] = mine.get("accepted", 0) / n_status if n_status else None
        row["seconds"] = (seconds or {}).get(name) or {"source": None, **spread([])}
        figures[name] = row
    for name, row in figures.items():
        others: dict[tuple[str, Any], list[tuple[int, float]]] = defaultdict(list)
        for other, g in groups.items():
            if other != name:
                for key, value in g.items():
                    others[key].append(value)
        row["flags"] = flags(row, groups.get(name, {}), others, rules)
    return [figures[n] for n in names]
