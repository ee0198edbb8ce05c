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
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from calibration.schemes.base import Report, Table
from calibration.schemes.rgb.config import PRESETS, CheckerConfig
from calibration.schemes.rgb.features import LABELS, Features, compute_features, decide
from calibration.schemes.rgb.metrics import CORRECTION_BASE, FIGURES, CorrectionBase, evaluate_many
from calibration.schemes.rgb.records import DEFAULT_UNIT, RGBRecord

HUMAN = "human"
JUDGE_PREFIX = "llm_judge:"  # machine labels of RGB's LLM-judged checks (app/schemes/rgb/llm.py)
# the decisions each figure reads (humans: a unit counts for a figure when all of these were judged)
NEEDS: dict[str, tuple[str, ...]] = {"accuracy": ("correct",), "rejection_rate": ("rejected",),
                                     "error_detection_rate": ("error_detected",),
                                     "error_correction_rate": ("error_detected", "error_corrected")}
SHORT = {"accuracy": "Accuracy", "rejection_rate": "Rejection", "error_detection_rate": "Detection",
         "error_correction_rate": "Correction"}


@dataclass(frozen=True, eq=False)
class _Units:
    """Every unit's key and what the figures and checkers read of it, as columns in record order (the
    one-response record of each unit, `RGBRecord.for_unit`, as columns: copying a record per unit was a tenth of
    evaluate)."""
    keys: list[tuple[str, str]]
    base: pd.DataFrame  # sample, model, task, noise_rate (the columns of every decisions table)
    responses: list[str]
    record: np.ndarray  # each unit's record's index
    records: Sequence[RGBRecord]

    def features(self, variants: Sequence[str]) -> Features:
        """features_from_records of the one-response records: the record's facts repeated per unit."""
        recs, at = self.records, self.record.tolist()
        elements = [r.elements for r in recs]
        languages = [r.language for r in recs]
        noise = [r.full_noise for r in recs]
        fakes = [r.fake_strings for r in recs]
        return compute_features(self.responses, [elements[i] for i in at], [languages[i] for i in at],
                                [noise[i] for i in at], [fakes[i] for i in at], variants)

    def table(self, cols: Mapping[str, Any], rows: np.ndarray | None = None) -> pd.DataFrame:
        """A decisions table: the base columns (of `rows` only, when given) and `cols`."""
        base = self.base if rows is None else self.base.take(rows).reset_index(drop=True)
        return base.assign(**cols)


def _units(records: Sequence[RGBRecord]) -> _Units:
    keys: list[tuple[str, str]] = []
    responses: list[str] = []
    at: list[int] = []
    for i, r in enumerate(records):
        own = dict(r.responses)
        head = None if r.response is None else (r.model or DEFAULT_UNIT)
        for u in r.units:
            keys.append((r.id, u))
            responses.append(r.response if u == head else own[u])  # as for_unit picks it
            at.append(i)
    index = np.array(at, dtype=np.int64)
    tasks = [r.task for r in records]
    rates = [np.nan if r.noise_rate is None else r.noise_rate for r in records]
    base = pd.DataFrame({"sample": [k[0] for k in keys], "model": [k[1] for k in keys],
                         "task": [tasks[i] for i in at], "noise_rate": [rates[i] for i in at]})
    return _Units(keys, base, responses, index, records)


def _decision_codes(keys: Sequence[tuple[str, str]], labels: Mapping[tuple[str, str], Mapping[str, Any]]
                    ) -> dict[str, np.ndarray]:
    """Per decision, each unit's label as int8: -1 not given (None), else 0/1 (its truth value)."""
    out = {k: np.full(len(keys), -1, dtype=np.int8) for k in LABELS}
    for i, key in enumerate(keys):
        given = labels.get(key)
        if given:
            for k in LABELS:
                v = given.get(k)
                if v is not None:
                    out[k][i] = bool(v)
    return out


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


def _partial_tables(units: _Units, codes: Mapping[str, np.ndarray]) -> dict[str, pd.DataFrame]:
    """Per figure, the decisions table of the units where the humans (or a judge that decides only some of the
    four) gave what the figure needs (`codes`: `_decision_codes` of their labels)."""
    out = {}
    for figure, needs in NEEDS.items():
        rows = np.flatnonzero(np.logical_and.reduce([codes[k] >= 0 for k in needs]))
        out[figure] = units.table({k: codes[k][rows] > 0 for k in LABELS}, rows)
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
    units = _units(records)
    keys = units.keys
    configs = _configs(options)
    jobs: list[tuple[pd.DataFrame, str, CorrectionBase, Sequence[str]]] = []
    decided: dict[str, pd.DataFrame] = {}
    if keys:
        variants = sorted({c.variant for c in configs})
        d = decide(units.features(variants), configs)
        for i, cfg in enumerate(configs):
            table = units.table({k: d.label(k)[i] for k in LABELS})
            decided[cfg.name] = table
            jobs.append((table, cfg.name, CORRECTION_BASE[cfg.variant], FIGURES))
    for source, by_unit in _machine_labels(options).items():
        partial = _partial_tables(units, _decision_codes(keys, by_unit))
        decided[source] = units.table({k: [None if by_unit.get(key) is None else by_unit[key].get(k)
                                           for key in keys] for k in LABELS})
        jobs += [(t, source, "detected", (f,)) for f, t in partial.items() if len(t)]
    human_codes = _decision_codes(keys, labels)
    human = _partial_tables(units, human_codes)
    jobs += [(t, HUMAN, "detected", (f,)) for f, t in human.items() if len(t)]
    parts = _long(jobs, n_boot, seed)
    long = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(
        columns=["source", "model", "task", "figure", "value", "low", "high", "n"])
    tables = [_figures_table(long), _agreement_table(decided, human_codes), _noise_table(decided, human)]
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


def _agreement_table(decided: Mapping[str, pd.DataFrame], human: Mapping[str, np.ndarray]) -> Table:
    """Per source and decision: the units where both the source and the humans decided (`human`: the humans'
    `_decision_codes`; every decided table's rows are the units in order), their agreement and Cohen's kappa."""
    rows = []
    for source, table in decided.items():
        for k in LABELS:
            col = table[k]
            m = col.to_numpy(dtype=np.int8) if col.dtype == bool else np.array(
                [-1 if v is None else bool(v) for v in col.tolist()], dtype=np.int8)
            both = (m >= 0) & (human[k] >= 0)
            if not both.any():
                continue
            a, b = m[both] > 0, human[k][both] > 0
            kappa = _kappa(a, b)
            rows.append((source, k, int(both.sum()), round(100.0 * float((a == b).mean()), 1),
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
