"""Agreement between several annotators (issue #15): labelled items and marked spans.

`item_agreement` takes long-form labels (sample, item, annotator, category), e.g. a scheme's `label_items` per
annotator, and gives Cohen's kappa per annotator pair, Fleiss' kappa and Krippendorff's alpha overall, and a
per-annotator table. `span_agreement` takes each annotator's character spans per sample and gives pairwise
precision/recall/F1 under greedy one-to-one matching on character IoU, the micro F1 over pairs, and Krippendorff's
unitizing alpha. Every interval is a percentile bootstrap over samples (a sample's items travel together).

Libraries and where we wrote our own:
- point estimates: Cohen's kappa per pair by scikit-learn's formula on the pair's confusion counts (tested equal to
  `cohen_kappa_score`; importing sklearn.metrics would cost 1-2 s at start-up), the `krippendorff` package's `alpha`;
- Fleiss' kappa is a few numpy lines (statsmodels would be a large dependency for one formula), tested against
  Fleiss' (1971) worked example;
- bootstrap replicates are not library calls: every statistic here is a function of per-sample sums (confusion
  matrices, coincidence matrices, span counts, length histograms), so `agreement.resample_counts` (the project's one
  resampling draw) turns a thousand replicates into a few matrix products instead of a thousand full passes. The
  closed forms are tested to equal the libraries' values on the full data;
- unitizing alpha (calibration/annotator_spans.py with `span_agreement`, both re-exported here): no maintained
  Python package computes it, so it is written there after Krippendorff (1995, 2004) and tested on Krippendorff's (2004) worked example and against a plain loop transcription of the formulas.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any, Literal

import krippendorff
import numpy as np
import pandas as pd

from calibration.agreement import estimate_interval, nan_ratio, resample_counts
from calibration.annotator_spans import span_agreement, unitizing_alpha

__all__ = ["COLUMNS", "KAPPA_WEIGHTS", "Level", "item_agreement", "span_agreement", "unitizing_alpha"]
Level = Literal["nominal", "ordinal", "interval"]
COLUMNS = ("sample", "item", "annotator", "category")
KAPPA_WEIGHTS: dict[str, str | None] = {"nominal": None, "ordinal": "linear", "interval": "quadratic"}


# -- bootstrap of per-sample sums -------------------------------------------------------------------------------------------------
def boot_sums(per_sample: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """(n_boot, D) column sums of `per_sample` (n_samples, D) over bootstrap resamples of the samples."""
    out = np.empty((n_boot, per_sample.shape[1]))
    lo = 0
    for w in resample_counts(per_sample.shape[0], n_boot, seed):
        out[lo:lo + len(w)] = w @ per_sample
        lo += len(w)
    return out


def _sum_by(group: np.ndarray, values: np.ndarray, n_groups: int) -> np.ndarray:
    """(n_groups, D): the rows of `values` (n, D) summed per group, in row order (the additions, so the bits, of the
    sparse group-by-row matrix product this replaces; without importing scipy.sparse, 0.5 s)."""
    out = np.zeros((n_groups, values.shape[1]))
    for j in range(values.shape[1]):
        out[:, j] = np.bincount(group, weights=values[:, j], minlength=n_groups)
    return out


# -- items ----------------------------------------------------------------------------------------------------------
def _table(table: pd.DataFrame | Iterable[Any]) -> pd.DataFrame:
    if isinstance(table, pd.DataFrame):
        df = table
    else:
        rows = list(table)
        if rows and isinstance(rows[0], Mapping):
            df = pd.DataFrame(rows)
        else:
            width = len(rows[0]) if rows else 4
            df = pd.DataFrame.from_records(rows, columns=[*COLUMNS, "seconds"][:width])
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"the label table lacks column(s) {', '.join(missing)}")
    return df[df["category"].notna()]


def _no_twice(df: pd.DataFrame, unit_code: np.ndarray, annot_code: np.ndarray, n_a: int) -> None:
    """Each annotator labels an item once: checked on the integer codes already made (hashing the three string
    columns again took a second at 1.2M rows)."""
    dup = pd.Series(unit_code.astype(np.int64) * n_a + annot_code).duplicated().to_numpy()
    if dup.any():
        r = df.iloc[int(np.argmax(dup))]
        raise ValueError(f"annotator {r['annotator']!r} labels item {r['item']!r} of sample {r['sample']!r} twice")


def kappa_from_confusion(conf: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Cohen's kappa of (..., K, K) confusion counts: 1 - sum(w O) / sum(w E), as scikit-learn defines it."""
    n = conf.sum(axis=(-2, -1), keepdims=True)
    expected = conf.sum(-1, keepdims=True) * conf.sum(-2, keepdims=True) / np.where(n > 0, n, 1)
    return 1.0 - nan_ratio((conf * weights).sum((-2, -1)), (expected * weights).sum((-2, -1)))


def _fleiss(p_sum: np.ndarray, q_sum: np.ndarray, n_units: np.ndarray) -> np.ndarray:
    p_bar = nan_ratio(p_sum, n_units)
    p_e = (nan_ratio(q_sum, n_units[..., None]) ** 2).sum(-1)
    return nan_ratio(p_bar - p_e, 1.0 - p_e)


def _alpha_from_coincidence(o: np.ndarray, level: Level, values: np.ndarray) -> np.ndarray:
    """Krippendorff's alpha from (..., K, K) coincidence matrices: 1 - (n - 1) sum(o d) / sum(n_c n_k d)."""
    n_c = o.sum(-1)
    n = n_c.sum(-1)
    k = o.shape[-1]
    if level == "nominal":
        delta = np.broadcast_to(1.0 - np.eye(k), o.shape)
    elif level == "interval":
        delta = np.broadcast_to((values[:, None] - values[None, :]) ** 2, o.shape)
    else:  # ordinal: (sum of n_g from c to k - (n_c + n_k) / 2)^2, with the marginals of these very data
        cum = np.cumsum(n_c, -1)
        lo = np.minimum.outer(np.arange(k), np.arange(k))
        hi = np.maximum.outer(np.arange(k), np.arange(k))
        between = cum[..., hi] - cum[..., lo] + n_c[..., lo]
        delta = (between - (n_c[..., :, None] + n_c[..., None, :]) / 2) ** 2
    d_o = (o * delta).sum((-2, -1))
    d_e = (n_c[..., :, None] * n_c[..., None, :] * delta).sum((-2, -1))
    return 1.0 - nan_ratio((n - 1) * d_o, d_e)


def item_agreement(
    table: pd.DataFrame | Iterable[Any], *, level: Level = "nominal", n_boot: int = 1000, seed: int = 0,
    ci: float = 0.95,
) -> dict[str, Any]:
    """Agreement of several annotators on categorical (or ordinal/interval) labels of items.

    `table`: long form, one row per (sample, item, annotator) with its `category` (a DataFrame with those columns,
    or rows as tuples/mappings; an optional `seconds` column gives time per unit). An item is (sample, item).
    - pairs: Cohen's kappa per annotator pair on the items both labelled (weights: none for nominal, linear for
      ordinal, quadratic for interval), with raw agreement;
    - overall.kappa: Fleiss' kappa over items with >= 2 ratings. With unequal numbers of raters per item it is the
      usual generalisation (each item's agreement n_c(n_c-1) / (m(m-1)) and category shares n_c / m averaged over
      items), which is Fleiss' own formula when every item has the same number of raters. Always nominal;
    - overall.alpha: Krippendorff's alpha at `level` (units with a single rating are not pairable and drop out);
    - annotators: labels, samples, mean kappa with the others, mean seconds per unit when given.
    Each statistic comes with a percentile bootstrap interval over samples (`n_boot=0`: no interval).
    """
    if level not in KAPPA_WEIGHTS:
        raise ValueError(f"level must be nominal, ordinal or interval, got {level!r}")
    df = _table(table)
    if df.empty:
        raise ValueError("no labels to compare")
    sample_code, samples = pd.factorize(df["sample"], sort=False)
    unit_code = df.groupby(["sample", "item"], sort=False).ngroup().to_numpy()
    annot_code, annotators = pd.factorize(df["annotator"], sort=True)
    _no_twice(df, unit_code, annot_code, len(annotators))
    raw_values = pd.unique(df["category"])
    try:
        values = np.array(sorted(raw_values))
    except TypeError:
        values = np.array(sorted(raw_values, key=lambda v: (str(type(v)), str(v))), dtype=object)
    if level == "interval":
        try:
            numeric = values.astype(float)
        except (TypeError, ValueError):
            raise ValueError("interval level needs numeric categories") from None
    else:
        numeric = np.arange(len(values), dtype=float)
    cat_code = pd.Index(values).get_indexer(df["category"])
    n_s, n_u, n_a, k = len(samples), int(unit_code.max()) + 1, len(annotators), len(values)
    unit_sample = np.zeros(n_u, dtype=np.int64)
    unit_sample[unit_code] = sample_code
    ratings = np.full((n_a, n_u), -1, dtype=np.int64)
    ratings[annot_code, unit_code] = cat_code
    counts = np.bincount(unit_code * k + cat_code, minlength=n_u * k).reshape(n_u, k).astype(float)
    m_u = counts.sum(1)
    pairable = m_u >= 2

    # per-sample sufficient statistics: [pair confusions..., fleiss (sum P, n units, sum q_c), coincidences]
    blocks: list[np.ndarray] = []
    idx = np.arange(k)
    weights = {None: 1.0 - np.eye(k), "linear": np.abs(idx[:, None] - idx[None, :]).astype(float),
               "quadratic": ((idx[:, None] - idx[None, :]) ** 2).astype(float)}[KAPPA_WEIGHTS[level]]
    pairs = [(a, b) for a in range(n_a) for b in range(a + 1, n_a)]
    pair_rows: list[dict[str, Any]] = []
    shared = (ratings >= 0).astype(np.int64)
    shared = shared @ shared.T  # items each two annotators both labelled
    pairs = [(a, b) for a, b in pairs if shared[a, b] > 0]  # annotators who never met form no pair
    for a, b in pairs:
        both = (ratings[a] >= 0) & (ratings[b] >= 0)
        flat = unit_sample[both] * k * k + ratings[a][both] * k + ratings[b][both]
        blocks.append(np.bincount(flat, minlength=n_s * k * k).reshape(n_s, k * k).astype(float))
        ra, rb = ratings[a][both], ratings[b][both]
        # the pair's confusion counts through sklearn's formula (tested equal to cohen_kappa_score): importing
        # sklearn.metrics costs 1-2 s, a large part of a first `concord calibrate` that shows the human ceiling
        kappa = float(kappa_from_confusion(blocks[-1].sum(axis=0).reshape(k, k), weights)) if both.any() else math.nan
        pair_rows.append({"a": annotators[a], "b": annotators[b], "n_items": int(both.sum()),
                          "observed_agreement": float((ra == rb).mean()) if both.any() else math.nan,
                          "kappa": kappa})
    with np.errstate(divide="ignore", invalid="ignore"):
        p_u = np.where(pairable, (counts * (counts - 1)).sum(1) / (m_u * (m_u - 1)), 0.0)
        q_u = np.where(pairable[:, None], counts / m_u[:, None], 0.0)
    fleiss_unit = np.column_stack([p_u, pairable.astype(float), q_u])
    blocks.append(_sum_by(unit_sample, fleiss_unit, n_s))
    coinc_unit = np.where(pairable[:, None, None], (counts[:, :, None] * counts[:, None, :]
                                                   - counts[:, :, None] * np.eye(k)), 0.0)
    coinc_unit /= np.where(pairable, m_u - 1, 1)[:, None, None]
    blocks.append(_sum_by(unit_sample, coinc_unit.reshape(n_u, k * k), n_s))
    per_sample = np.hstack(blocks)

    def stats(sums: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(pair kappas (..., P), fleiss (...), alpha (...)) from summed statistics (..., D)."""
        off = len(pairs) * k * k
        conf = sums[..., :off].reshape(*sums.shape[:-1], len(pairs), k, k)
        fl = sums[..., off:off + 2 + k]
        o = sums[..., off + 2 + k:].reshape(*sums.shape[:-1], k, k)
        return kappa_from_confusion(conf, weights), _fleiss(fl[..., 0], fl[..., 2:], fl[..., 1]), \
            _alpha_from_coincidence(o, level, numeric)

    _, fleiss_est, _ = stats(per_sample.sum(0))
    alpha_est = (float(krippendorff.alpha(value_counts=counts[pairable], value_domain=numeric,
                                          level_of_measurement=level))
                 if pairable.any() and (counts[pairable].sum(0) > 0).sum() > 1 else math.nan)
    reps = stats(boot_sums(per_sample, n_boot, seed)) if n_boot > 0 else None
    for p, row in enumerate(pair_rows):
        row["kappa"] = estimate_interval(row["kappa"], None if reps is None else reps[0][:, p], ci)
    overall = {"kappa": estimate_interval(float(fleiss_est), None if reps is None else reps[1], ci),
               "alpha": estimate_interval(alpha_est, None if reps is None else reps[2], ci),
               "n_items_pairable": int(pairable.sum())}
    people = []
    for a, name in enumerate(annotators):
        mine = [r["kappa"]["estimate"] for r in pair_rows if name in (r["a"], r["b"])]
        finite = [x for x in mine if math.isfinite(x)]
        rows = annot_code == a
        row = {"annotator": name, "n_labels": int(rows.sum()), "n_samples": int(np.unique(sample_code[rows]).size),
               "mean_kappa": float(np.mean(finite)) if finite else math.nan}
        if "seconds" in df.columns:
            secs = pd.to_numeric(df["seconds"][rows], errors="coerce").dropna()
            row["seconds_per_unit"] = float(secs.mean()) if len(secs) else math.nan
        people.append(row)
    return {"level": level, "n_samples": n_s, "n_items": n_u, "n_labels": len(df), "n_boot": n_boot,
            "categories": values.tolist(), "overall": overall, "pairs": pair_rows, "annotators": people}
