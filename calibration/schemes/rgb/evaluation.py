"""The `rgb` scheme's evaluation hook: RGB's four figures per model and task under each checker and under the human
labels, with bootstrap intervals, the checkers' agreement with the humans, and accuracy against noise rate.

Sources compared (one row group each):
- each checker config (the presets rgb_original and rgb_extended by default, plus `options["configs"]`, name ->
  CheckerConfig dict, and `options["params"]`, stored config dicts, e.g. calibrated ones), decided for every response in one vectorised pass (features.decide);
- machine labels stored per unit (`options["machine_labels"]`: source -> (sample, unit) -> decisions, e.g.
  `llm_judge:<model>`, which decides rejection and error detection only; by default read from the project through
  `options["machine_labels_of"]`), each figure over the units that carry what it needs, like the humans';
- the humans' decisions: each figure over the units where the decisions it needs were judged (accuracy needs
  `correct`; RGB's correction rate needs `error_detected` and `error_corrected`), so a partly labelled project
  still gets every figure it can support.
Correction rate base: RGB's (corrected / detected) for rgb_original and for humans and judges, the seed's (/ N)
for rgb_extended, as each was defined (metrics.CORRECTION_BASE).
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from calibration.schemes.base import Report, Table
from calibration.schemes.rgb.config import PRESETS, CheckerConfig
from calibration.schemes.rgb.features import LABELS, decide, features_from_records
from calibration.schemes.rgb.metrics import CORRECTION_BASE, FIGURES, CorrectionBase, evaluate_many
from calibration.schemes.rgb.records import RGBRecord

HUMAN = "human"
JUDGE_PREFIX = "llm_judge:"  # machine labels of RGB's LLM-judged checks (app/schemes/rgb/llm.py)
# the decisions each figure reads (humans: a unit counts for a figure when all of these were judged)
NEEDS: dict[str, tuple[str, ...]] = {"accuracy": ("correct",), "rejection_rate": ("rejected",),
                                     "error_detection_rate": ("error_detected",),
                                     "error_correction_rate": ("error_detected", "error_corrected")}
SHORT = {"accuracy": "Accuracy", "rejection_rate": "Rejection", "error_detection_rate": "Detection",
         "error_correction_rate": "Correction"}


def unit_records(records: Sequence[RGBRecord]) -> tuple[list[tuple[str, str]], list[RGBRecord]]:
    """(sample id, unit) keys and one-response records, one per unit, in record order."""
    keys: list[tuple[str, str]] = []
    out: list[RGBRecord] = []
    for r in records:
        for u in r.units:
            keys.append((r.id, u))
            out.append(r.for_unit(u))
    return keys, out


def _frame(keys: Sequence[tuple[str, str]], recs: Sequence[RGBRecord], cols: Mapping[str, Any]) -> pd.DataFrame:
    return pd.DataFrame({
        "sample": [k[0] for k in keys], "model": [k[1] for k in keys], "task": [r.task for r in recs],
        "noise_rate": [np.nan if r.noise_rate is None else r.noise_rate for r in recs], **cols,
    })


def _configs(options: Mapping[str, Any]) -> list[CheckerConfig]:
    names = options.get("presets") or list(PRESETS)
    configs = []
    for name in names:
        if name not in PRESETS:
            raise ValueError(f"presets: unknown rgb checker {name!r}; known: {', '.join(PRESETS)}")
        configs.append(PRESETS[name])
    for name, data in (options.get("configs") or {}).items():
        cfg = data if isinstance(data, CheckerConfig) else CheckerConfig.from_dict({**dict(data), "name": name})
        configs.append(cfg)
    for data in options.get("params") or ():  # stored parameters (`concord evaluate --use`), each a config dict
        configs.append(data if isinstance(data, CheckerConfig) else CheckerConfig.from_dict(data))
    return configs


def _machine_labels(options: Mapping[str, Any]) -> Mapping[str, Mapping[tuple[str, str], Any]]:
    """`options["machine_labels"]`, else the judges stored in the project, read with the caller's
    `machine_labels_of(scheme, source_prefix)`."""
    if options.get("machine_labels") is not None:
        return options["machine_labels"]
    read = options.get("machine_labels_of")
    return read("rgb", JUDGE_PREFIX) if callable(read) else {}


def _long(jobs: Sequence[tuple[pd.DataFrame, str, CorrectionBase, Sequence[str]]], n_boot: int,
          seed: int) -> list[pd.DataFrame]:
    """Per (decisions table, source, correction base, figures kept): its figures per model and task, all tables'
    intervals from one pass over the draws per group size (metrics.evaluate_many)."""
    outs = evaluate_many([(t, base) for t, _, base, _ in jobs], by=("model", "task"), n_boot=n_boot, seed=seed)
    parts = []
    for out, (_, source, _, figures) in zip(outs, jobs):
        out = out[out["figure"].isin(figures)]
        out.insert(0, "source", source)
        parts.append(out)
    return parts


def _partial_tables(keys: Sequence[tuple[str, str]], recs: Sequence[RGBRecord],
                    labels: Mapping[tuple[str, str], Mapping[str, Any]]) -> dict[str, pd.DataFrame]:
    """Per figure, the decisions table of the units where the humans (or a judge that decides only some of the
    four) gave what the figure needs."""
    values = {k: [None if labels.get(key) is None else labels[key].get(k) for key in keys] for k in LABELS}
    out = {}
    for figure, needs in NEEDS.items():
        rows = [i for i in range(len(keys)) if all(values[k][i] is not None for k in needs)]
        cols = {k: [bool(values[k][i]) if values[k][i] is not None else False for i in rows] for k in LABELS}
        out[figure] = _frame([keys[i] for i in rows], [recs[i] for i in rows], cols)
    return out


def _kappa(a: np.ndarray, b: np.ndarray) -> float:
    """Cohen's kappa of two boolean vectors; NaN when chance agreement is 1 (both constant and equal)."""
    if len(a) == 0:
        return math.nan
    po = float((a == b).mean())
    pa, pb = float(a.mean()), float(b.mean())
    pe = pa * pb + (1 - pa) * (1 - pb)
    return math.nan if pe >= 1.0 else (po - pe) / (1 - pe)


def _fmt(v: float, low: float, high: float) -> str:
    if v != v:
        return "—"
    return f"{v:.1f}" if low != low else f"{v:.1f} [{low:.1f}, {high:.1f}]"


def evaluate(records: Sequence[RGBRecord], labels: Mapping[tuple[str, str], Mapping[str, Any]],
             options: Mapping[str, Any]) -> Report:
    n_boot = int(options.get("n_boot", 1000))
    seed = int(options.get("seed", 0))
    keys, recs = unit_records(records)
    configs = _configs(options)
    jobs: list[tuple[pd.DataFrame, str, CorrectionBase, Sequence[str]]] = []
    decided: dict[str, pd.DataFrame] = {}
    if recs:
        variants = sorted({c.variant for c in configs})
        d = decide(features_from_records(recs, variants), configs)
        for i, cfg in enumerate(configs):
            table = _frame(keys, recs, {k: d.label(k)[i] for k in LABELS})
            decided[cfg.name] = table
            jobs.append((table, cfg.name, CORRECTION_BASE[cfg.variant], FIGURES))
    for source, by_unit in _machine_labels(options).items():
        partial = _partial_tables(keys, recs, by_unit)
        decided[source] = _frame(keys, recs, {k: [None if by_unit.get(key) is None else by_unit[key].get(k)
                                                  for key in keys] for k in LABELS})
        jobs += [(t, source, "detected", (f,)) for f, t in partial.items() if len(t)]
    human = _partial_tables(keys, recs, labels)
    jobs += [(t, HUMAN, "detected", (f,)) for f, t in human.items() if len(t)]
    parts = _long(jobs, n_boot, seed)
    long = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(
        columns=["source", "model", "task", "figure", "value", "low", "high", "n"])
    tables = [_figures_table(long), _agreement_table(decided, keys, labels), _noise_table(decided, human)]
    notes = (
        "Figures are percentages with 95% percentile-bootstrap intervals over responses.",
        "Correction rate: rgb_original, humans and judges divide by the detected responses (RGB's evalue.py); "
        "rgb_extended by all responses (the seed's evaluator).",
        "Human figures count the units where the decisions a figure needs were judged.",
    )
    data = {"figures": long.replace({np.nan: None}).to_dict("records"),
            "agreement": [dict(zip(tables[1].columns, r)) for r in tables[1].rows],
            "noise": [dict(zip(tables[2].columns, r)) for r in tables[2].rows],
            "units": len(keys), "labeled_units": sum(1 for k in keys if labels.get(k))}
    return Report("rgb", tuple(tables), data, notes)


def _figures_table(long: pd.DataFrame) -> Table:
    rows = []
    if len(long):
        for (model, task, source), g in long.groupby(["model", "task", "source"], sort=True):
            by = {r.figure: r for r in g.itertuples()}
            cells = [_fmt(by[f].value, by[f].low, by[f].high) if f in by else "—" for f in FIGURES]
            n = max(int(r.n) for r in g.itertuples())
            rows.append((model, task, source, n, *cells))
    return Table("RGB figures per model and task (percent, 95% CI)",
                 ("Model", "Task", "Source", "N", *(SHORT[f] for f in FIGURES)), tuple(rows))


def _agreement_table(decided: Mapping[str, pd.DataFrame], keys: Sequence[tuple[str, str]],
                     labels: Mapping[tuple[str, str], Mapping[str, Any]]) -> Table:
    rows = []
    for source, table in decided.items():
        for k in LABELS:
            # every decided table is _frame(keys, ...): its rows are `keys`, in order (iterating its string
            # columns cost as much as the figures)
            pairs = [(bool(m), bool(labels[key][k])) for key, m in zip(keys, table[k].tolist())
                     if m is not None and labels.get(key) is not None and labels[key].get(k) is not None]
            if not pairs:
                continue
            a = np.array([p[0] for p in pairs])
            b = np.array([p[1] for p in pairs])
            kappa = _kappa(a, b)
            rows.append((source, k, len(pairs), round(100.0 * float((a == b).mean()), 1),
                         None if kappa != kappa else round(kappa, 3)))
    return Table("Agreement with the human decisions", ("Source", "Decision", "N", "Agree %", "Kappa"), tuple(rows))


def _noise_table(decided: Mapping[str, pd.DataFrame], human: Mapping[str, pd.DataFrame]) -> Table:
    """Accuracy (percent) by noise rate: one row per source, model and ability, one column per noise rate. RGB's
    rejection task is its noise data at rate 1, so the two share a row ("noise"); the others keep their task."""
    sources = dict(decided)
    sources[HUMAN] = human["accuracy"]
    rates = sorted({float(x) for t in sources.values() for x in t["noise_rate"].dropna()})
    rows = []
    for source, table in sources.items():
        known = table[table["noise_rate"].notna() & table["correct"].notna()]
        known = known.assign(ability=known["task"].replace({"rejection": "noise"}))
        for (model, ability), g in known.groupby(["model", "ability"], sort=True):
            acc = g.groupby("noise_rate")["correct"].apply(lambda c: 100.0 * float(np.mean([bool(x) for x in c])))
            rows.append((source, model, ability, *(round(float(acc[r]), 1) if r in acc.index else None for r in rates)))
    return Table("Accuracy (percent) against noise rate", ("Source", "Model", "Task", *(f"{r:g}" for r in rates)),
                 tuple(rows))
