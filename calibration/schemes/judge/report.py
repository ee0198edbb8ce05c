"""The judge scheme's evaluation hook: `concord evaluate --scheme judge` as a `base.Report`.

Options: `reference` (any | majority | adjudicated, truth.py), `annotator_labels` (annotator -> labels, for `any`
and `majority` and for the human ceiling), `params` / `preset` (parameter dicts: `thresholds` per judge, and a
weighted vote's `weights` + `vote_threshold`, which then appears as one more row named `vote`), `n_boot`, `seed`,
`ci`, `bins` (reliability bins, default 10), `guarantee` ({"target": 0.9, "delta": 0.05, "sides": ["both"]}: each
judge's guaranteed-agreement band on the labeled samples, calibration/guarantee.py).
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from calibration.schemes.base import Report, Table
from calibration.schemes.judge.columns import JudgeColumns, decisions, judge_columns, params_thresholds, vote_share
from calibration.schemes.judge.evaluation import DEFAULT_BINS, ceiling, judge_figures
from calibration.schemes.judge.records import JudgeRecord
from calibration.schemes.judge.truth import annotator_levels, binary_reference, positive_starts, reference_levels

SCHEME = "judge"
VOTE = "vote"


def chosen_params(options: Mapping[str, Any], presets: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The parameters to evaluate: the last of `params` (stored, --use) or the `preset` / first of `presets`."""
    params = options.get("params") or []
    if isinstance(params, Mapping):
        params = [params]
    if params:
        return dict(params[-1])
    wanted = options.get("presets") or ([options["preset"]] if options.get("preset") else [])
    if isinstance(wanted, str):
        wanted = [wanted]
    for p in wanted:
        if isinstance(p, Mapping):
            return dict(p)
        if p not in presets:
            raise ValueError(f"preset: unknown judge preset {p!r}; known: {', '.join(presets)}")
        return dict(presets[p])
    return {}


def with_vote(cols: JudgeColumns, params: Mapping[str, Any], thresholds: np.ndarray) -> tuple[JudgeColumns, np.ndarray]:
    """The columns plus a `vote` judge: the weighted share of positive votes (high = positive), decided at
    `vote_threshold`, when the parameters carry `weights`."""
    weights = params.get("weights")
    if not weights:
        return cols, thresholds
    w = np.array([[float(weights.get(n, 0.0)) for n in cols.names]])
    votes = decisions(cols.scores, thresholds, cols.high_positive)
    share = vote_share(votes, w)
    cols = replace(cols, names=(*cols.names, VOTE), scores=np.vstack([cols.scores, share]),
                   high_positive=np.append(cols.high_positive, True), probability=np.append(cols.probability, False),
                   default_threshold=np.append(cols.default_threshold, float(params.get("vote_threshold", 0.5))))
    return cols, np.append(thresholds, float(params.get("vote_threshold", 0.5)))


def _fmt(f: Mapping[str, float]) -> str:
    est, lo, hi = f["estimate"], f["low"], f["high"]
    if est is None or math.isnan(est):
        return "–"
    return f"{est:.3f}" + ("" if math.isnan(lo) else f" [{lo:.3f}, {hi:.3f}]")


def report(records: Sequence[JudgeRecord], labels: Mapping[tuple[str, str], Mapping[str, Any]],
           options: Mapping[str, Any], presets: Mapping[str, Mapping[str, Any]]) -> Report:
    records = list(records)
    n_boot, seed = int(options.get("n_boot", options.get("bootstrap", 1000))), int(options.get("seed", 0))
    ci, bins = float(options.get("ci", 0.95)), int(options.get("bins", DEFAULT_BINS))
    per = options.get("annotator_labels")
    ann = annotator_levels(records, per) if per else None  # each annotator's levels: the reference and the ceiling
    levels, ref_note = reference_levels(records, labels, options, ann)
    start = positive_starts(records)  # each record's first positive level, read once
    y = binary_reference(start, levels)
    params = chosen_params(options, presets)
    cols = judge_columns(records)
    thresholds = cols.thresholds(params_thresholds(params))
    cols, thresholds = with_vote(cols, params, thresholds)
    figs = judge_figures(cols, y, thresholds, n_boot=n_boot, seed=seed, ci=ci, bins=bins)
    labeled = int((~np.isnan(y)).sum())
    data: dict[str, Any] = {"reference": str(options.get("reference") or "any"), "n_samples": len(records),
                            "n_labeled": labeled, "n_boot": n_boot, "seed": seed, "judges": figs}
    rows = tuple((name, f["n"], f["positives"], "high" if f["high_means_positive"] else "low", f"{f['threshold']:g}",
                  _fmt(f["auroc"]), _fmt(f["balanced_accuracy"]), _fmt(f["f1"]), _fmt(f["kappa"]))
                 for name, f in figs.items())
    ci_h = f"{round(100 * ci)}% CI"
    tables = [Table(f"Judges vs the humans (reference {data['reference']}, {labeled} labeled samples)",
                    ("judge", "samples", "positives", "positive when score is", "threshold", f"AUROC [{ci_h}]",
                     f"balanced accuracy [{ci_h}]", f"F1 [{ci_h}]", f"Cohen's kappa [{ci_h}]"), rows)]
    cal = [(name, f["n"], _fmt(f["ece"])) for name, f in figs.items() if f["probability"]]
    if cal:
        tables.append(Table(f"Calibration of probability-like judges (expected calibration error, {bins} bins)",
                            ("judge", "samples", f"ECE [{ci_h}]"), tuple(cal)))
        tables.append(Table("Reliability diagrams (predicted P(positive) per bin vs the observed positive rate)",
                            ("judge", "bin", "mean predicted", "observed rate", "samples"),
                            tuple((name, f"[{b['low']:.1f}, {b['high']:.1f}" + ("]" if b["high"] >= 1 else ")"),
                                   f"{b['mean_predicted']:.3f}", f"{b['observed_rate']:.3f}", b["count"])
                                  for name, f in figs.items() if f["probability"] for b in f["reliability"])))
    notes = [ref_note, f"intervals: percentile bootstrap over samples, {n_boot} replicates, seed {seed}, the same "
             "draws for every judge (paired)", "a judge decides positive when score >= threshold (high means "
             "positive) or score < threshold (high means negative, e.g. a consistency score); AUROC ranks the "
             "scores in the positive direction"]
    if ann is not None:
        ann_bin = {a: binary_reference(start, lv) for a, lv in ann.items()}
        votes = decisions(cols.scores, thresholds, cols.high_positive)
        ceil = ceiling([r.id for r in records], ann_bin, dict(zip(cols.names, votes)), n_boot=n_boot, seed=seed, ci=ci)
        if ceil is not None:
            data["ceiling"] = ceil
            hum = (f"humans: Fleiss kappa {_fmt(ceil['fleiss_kappa'])}, mean pairwise kappa "
                   f"{ceil['mean_pair_kappa']:.3f}")
            tables.append(Table(f"Human ceiling ({ceil['annotators']} annotators, {ceil['samples']} samples; "
                                f"{hum})", ("judge", "mean kappa vs each annotator", "humans' mean pairwise kappa"),
                                tuple((j, f"{k:.3f}", f"{ceil['mean_pair_kappa']:.3f}")
                                      for j, k in ceil["judges"].items())))
    g = options.get("guarantee")
    if g:
        tables.append(_guarantee_table(cols, y, thresholds, g, data))
    return Report(SCHEME, tuple(tables), data, tuple(notes))


def _guarantee_table(cols: JudgeColumns, y: np.ndarray, thresholds: np.ndarray, g: Mapping[str, Any],
                     data: dict[str, Any]) -> Table:
    from calibration.guarantee import score_band

    target, delta = float(g.get("target", 0.9)), float(g.get("delta", 0.05))
    sides = tuple(g.get("sides") or ("both",))
    rows, out = [], {}
    for j, name in enumerate(cols.names):
        ok = ~np.isnan(cols.scores[j]) & ~np.isnan(y)
        if not ok.any():
            continue
        band = score_band(cols.scores[j][ok], y[ok], threshold=float(thresholds[j]),
                          high_means_positive=bool(cols.high_positive[j]), target=target, delta=delta,
                          sides=sides)
        out[name] = band.to_dict()
        rows.append((name, int(ok.sum()), band.sentence(), f"{band.coverage:.3f}",
                     "–" if band.agreement is None else f"{band.agreement:.3f}"))
    data["guarantee"] = {"target": target, "delta": delta, "judges": out}
    return Table(f"Guaranteed agreement (target {target:g}, delta {delta:g}; the labeled samples as the calibration "
                 "split)", ("judge", "samples", "the machine may decide", "coverage", "agreement on decided"),
                 tuple(rows))
