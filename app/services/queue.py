"""What to label next (issue #16), for the app's queue combo and `concord queue`: the store's units and labels, the
last calibration run of each scheme, the scheme's search problem built over unlabeled units too
(`options["unlabeled"]`), and the pure orders of calibration/queue.py. Nothing here names a scheme.

A unit is labeled (and never queued) when it has any resolved label other than a note, a status included (the
review list's "unlabeled" means no status; a unit with matches but no status is labeled here too).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from app.errors import UsageError
from app.progress import Progress
from app.services.missing import units_missing
from app.services.schemes import present, scheme_options
from app.store import Project
from calibration import queue as q
from calibration.schemes.base import Scheme, capabilities

MODEL_ORDERS = ("disagreement", "boundary", "metric-vs-llm")


@dataclass
class Entry:
    sample_id: str
    unit: str
    scheme: str
    score: float | None = None
    reason: str | None = None  # why a labeled unit is back: "labeled under v2; rule R7 changed in v3"


@dataclass
class Queue:
    order: str
    entries: list[Entry] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # why an order fell back (no run yet, no machine label, ...)
    n_unlabeled: int = 0
    n_requeued: int = 0  # labeled units whose labels predate a change of the guideline part affecting them

    def keys(self) -> list[tuple[str, str]]:
        return [(e.sample_id, e.unit) for e in self.entries]

    def to_dict(self) -> dict[str, Any]:
        return {"order": self.order, "n_unlabeled": self.n_unlabeled, "n_requeued": self.n_requeued,
                "notes": list(self.notes),
                "units": [asdict(e) for e in self.entries]}


@dataclass
class Units:
    """Every unit of the schemes asked for, in list order (unit id), with its labeled flag."""

    keys: list[tuple[str, str]]
    scheme: list[str]
    labeled: np.ndarray

    def index(self) -> dict[tuple[str, str], int]:
        return {k: i for i, k in enumerate(self.keys)}


def _units(project: Project, schemes: Sequence[Scheme]) -> Units:
    from app.store import UnitFilter

    keys, names, labeled = [], [], []
    for scheme in schemes:
        labels = project.scheme_data.scheme_labels(scheme.name)
        done = {k for k, kinds in labels.items() if any(v is not None for kind, v in kinds.items() if kind != "note")}
        rows = project.units.unit_page(UnitFilter(scheme=scheme.name), 0, 1 << 31)
        for r in rows:
            k = (str(r["sample_id"]), str(r["unit"]))
            keys.append(k)
            names.append(scheme.name)
            labeled.append(k in done or r["status"] != "unlabeled")
    return Units(keys, names, np.asarray(labeled, dtype=bool))


def calibrates(scheme: Scheme) -> bool:
    """Whether a scheme can have a search problem at all (a scheme says `calibrates = False` when its metrics have
    no parameters, e.g. rubric), decided without building anything."""
    can = capabilities(scheme)
    return can.search_problem is not None and can.calibrates


def last_run(project: Project, scheme: str) -> dict[str, Any] | None:
    """The newest stored calibration run of a scheme (runs without a scheme name are the violations panel's older
    runs: they count for the first registered scheme that has a search problem... never guessed: skipped)."""
    for run in reversed(project.artifacts.calibration_runs()):
        name = (run.get("result") or {}).get("scheme") or (run.get("params") or {}).get("scheme")
        if name == scheme:
            return run
    return None


def candidates(project: Project, scheme: Scheme, options: Mapping[str, Any], labels: Mapping[tuple[str, str], Any] | None = None,
               progress: Progress | None = None) -> Any:
    """The scheme's search problem over every unit (`unlabeled`), under a run's options; `labels` default: the
    resolved human labels (metric-vs-llm passes the machine's instead)."""
    opts = scheme_options(project, scheme, {**options, "unlabeled": True}, progress)
    labels = project.scheme_data.scheme_labels(scheme.name) if labels is None else labels
    return scheme.search_problem(project.scheme_data.scheme_records(scheme.name), labels, opts)


def unit_keys(problem: Any) -> list[tuple[str, str]]:
    """(sample_id, unit) of each problem unit: the CV group is the sample and the stratum the unit (checker,
    judge, model, method); a problem without strata decides per sample (unit '')."""
    units = problem.units
    strata = units["stratum"].astype(str).tolist() if "stratum" in units.columns else [""] * len(units)
    return list(zip(units["group"].astype(str).tolist(), strata))


def _spread(problem: Any, unit_score: np.ndarray, index: Mapping[tuple[str, str], int],
            by_sample: Mapping[str, list[int]], out: np.ndarray) -> None:
    """Problem-unit scores onto the store's units (a per-sample problem unit scores every unit of its sample)."""
    for (sid, unit), s in zip(unit_keys(problem), unit_score):
        targets = [index[(sid, unit)]] if (sid, unit) in index else (by_sample.get(sid, []) if unit == "" else [])
        for t in targets:
            out[t] = s if np.isnan(out[t]) else max(out[t], s)


def _model_scores(project: Project, scheme: Scheme, order: str, notes: list[str],
                  progress: Progress | None) -> tuple[Any, np.ndarray, np.ndarray] | None:
    """(problem, primary per problem unit, boundary per problem unit) for the model-based orders, or None with a
    note when the scheme has no run or no problem."""
    run = last_run(project, scheme.name)
    if run is None:
        notes.append(f"{scheme.name}: no calibration run yet; its units follow in random order "
                     f"(run `concord calibrate --scheme {scheme.name}` first)")
        return None
    opts = dict((run.get("params") or {}).get("options") or {})
    # metric-vs-llm reads the machine labels as if a human had given them: the problem is built once, with them
    # (its units and space are the human-labelled build's; only `labeled` and the labels differ)
    labels = machine_labels(project, scheme) if order == "metric-vs-llm" else None
    try:
        problem = candidates(project, scheme, opts, labels=labels or None, progress=progress)
    except (ValueError, KeyError) as exc:
        notes.append(f"{scheme.name}: {exc}")
        return None
    if problem is None:
        notes.append(f"{scheme.name}: the calibrated metric decides none of this project's units (no machine output "
                     "on them to score); its units follow in random order")
        return None
    cv = project.artifacts.calibration_cv_results(run["id"])
    if cv is None or cv.empty or not set(problem.space.columns) <= set(cv.columns):
        notes.append(f"{scheme.name}: the last run (#{run['id']}) does not match the current search space; re-run it")
        return None
    best = {c: v for c, v in (run["result"].get("best") or {}).get("config", {}).items() if c in problem.space.columns}
    if set(best) != set(problem.space.columns):
        best = {c: cv.iloc[0][c] for c in problem.space.columns}
    machine = None
    if order == "metric-vs-llm":  # the machine labels against the metric
        machine = problem if labels else None
        if machine is None or "labeled" not in machine.units.columns or not machine.units["labeled"].any():
            notes.append(f"{scheme.name}: no machine label carries a decision the calibrated metric makes")
            return None
    primary, secondary = q.model_scores(problem, cv, best, order, machine)
    return (machine if machine is not None else problem), primary, secondary


def last_guarantee(project: Project, scheme: str) -> dict[str, Any] | None:
    """The newest calibration run of a scheme that certified a guaranteed band (`calibrate --guarantee`)."""
    for run in reversed(project.artifacts.calibration_runs()):
        result = run.get("result") or {}
        name = result.get("scheme") or (run.get("params") or {}).get("scheme")
        if name == scheme and result.get("guarantee"):
            return run
    return None


def _deferred_scores(project: Project, scheme: Scheme, notes: list[str],
                     progress: Progress | None) -> tuple[Any, np.ndarray] | None:
    """(problem, per problem unit: minus its distance from the threshold where the band defers it, NaN where the
    machine decides it) for the `deferred` order, or None with a note."""
    from app.services.guarantee import deferred
    from calibration.search.problem import ScoredProblem

    run = last_guarantee(project, scheme.name)
    if run is None:
        notes.append(f"{scheme.name}: no guaranteed band yet (run `concord calibrate --scheme {scheme.name} "
                     "--guarantee 0.9` first)")
        return None
    opts = dict((run.get("params") or {}).get("options") or {})
    try:
        problem = candidates(project, scheme, opts, progress=progress)
    except (ValueError, KeyError) as exc:
        notes.append(f"{scheme.name}: {exc}")
        return None
    if problem is None or not isinstance(problem, ScoredProblem):
        notes.append(f"{scheme.name}: no unit has a score the band of run #{run['id']} can defer on")
        return None
    config = (run["result"].get("best") or {}).get("config") or {}
    if set(problem.space.columns) - set(config):
        notes.append(f"{scheme.name}: the guarantee run (#{run['id']}) does not match the current search space; re-run it")
        return None
    from calibration.guarantee import margins

    m = margins(problem, config)
    item = np.where(deferred(problem, run["result"]["guarantee"], config) & m.scored, -m.confidence, np.nan)
    unit = np.full(len(problem.units), np.nan)
    for i, u in enumerate(np.asarray(problem.item_unit)):
        if not np.isnan(item[i]):
            unit[u] = item[i] if np.isnan(unit[u]) else max(unit[u], item[i])
    from app.services.schemes import check_reference

    reference = check_reference(scheme, opts.get("reference"))
    released = reference is not None and reference.released  # "labeled" there: the record carries the reference
    if "labeled" in problem.units.columns and not released:  # a human decided these (per-sample labels included)
        unit[problem.units["labeled"].to_numpy(dtype=bool)] = np.nan
    return problem, unit


def machine_labels(project: Project, scheme: Scheme) -> dict[tuple[str, str], dict[str, Any]]:
    """(sample, unit) -> the human-kind labels accepting the machine's label would record (stored machine labels,
    the first source by name; else the record's own, e.g. a checker's decisions)."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for _source, rows in sorted(project.samples.machine_labels(scheme.name).items()):
        for key, value in rows.items():
            out.setdefault(key, value)
    if not out:
        for rec in project.scheme_data.scheme_records(scheme.name):
            for unit in scheme.units(rec):
                value = scheme.machine_label(rec, unit)
                if value is not None:
                    out[(scheme.record_id(rec), unit)] = value
    accepted = {}
    for key, value in out.items():
        labels = {k: v for k, v in scheme.accept(value).items() if k not in ("status", "note") and v is not None}
        if labels:
            accepted[key] = labels
    return accepted


def annotator_disagreement(project: Project, index: Mapping[tuple[str, str], int], n: int) -> tuple[np.ndarray, set]:
    """Per store unit: how many label kinds its annotators disagree on (0: one annotator or all agree); and the
    units an adjudicator settled."""
    values: dict[tuple[str, str, str], set[str]] = {}
    import json

    for row in project.decisions.annotator_label_rows():
        _scheme, sid, unit, kind, _who, value = row  # (scheme, sample, unit, kind, annotator, value)
        if kind in ("note", "status"):
            continue
        values.setdefault((sid, unit, kind), set()).add(json.dumps(value, sort_keys=True))
    out = np.zeros(n)
    for (sid, unit, _kind), vals in values.items():
        i = index.get((sid, unit))
        if i is not None and len(vals) > 1:
            out[i] += 1
    return out, project.units.adjudicated_units()


def build(project: Project, order: str = "disagreement", *, schemes: Sequence[str] | None = None, seed: int = 0,
          limit: int | None = None, progress: Progress | None = None) -> Queue:
    """The unlabeled units of the project (or of `schemes`) in the named order (calibration.queue.ORDERS)."""
    if order not in q.ORDERS:
        raise UsageError(f"--order: expected one of {', '.join(q.ORDERS)}, got {order!r}")
    chosen = present(project, schemes)
    units = _units(project, chosen)
    n = len(units.keys)
    index = units.index()
    eligible = ~units.labeled
    # labeled units whose labels a guideline change left behind (issue #29) are queued again, with the reason
    from app.services.guidelines import stale_units

    reasons = stale_units(project, [s.name for s in chosen])
    requeued = np.array([units.labeled[i] and k in reasons for i, k in enumerate(units.keys)], dtype=bool)
    eligible = eligible | requeued
    out = Queue(order, n_unlabeled=int((~units.labeled).sum()), n_requeued=int(requeued.sum()))
    missing = {s.name: m for s in chosen if (m := units_missing(project, s))}  # e.g. RGB queries without answers
    out.notes += list(missing.values())
    score = np.full(n, np.nan)
    if order == "list":
        idx = np.flatnonzero(eligible)
    elif order == "random":
        idx = q.random_order(eligible, seed)
    elif order == "stratified":
        strata = [f"{s}:{u}" for s, (_sid, u) in zip(units.scheme, units.keys)]
        idx = q.stratified_order(strata, eligible, seed, units.labeled & ~requeued)
    elif order == "deferred":  # only the units the band defers, nearest the threshold first
        by_sample = {}
        for i, (sid, _u) in enumerate(units.keys):
            by_sample.setdefault(sid, []).append(i)
        for scheme in chosen:
            if not calibrates(scheme) or scheme.name in missing:
                continue
            got = _deferred_scores(project, scheme, out.notes, progress)
            if got is not None:
                _spread(got[0], got[1], index, by_sample, score)
        eligible = eligible & ~np.isnan(score)
        idx = q.order_by(score, eligible, seed)
    elif order == "annotators":
        score, settled = annotator_disagreement(project, index, n)
        eligible = np.array([score[i] > 0 and k not in settled for i, k in enumerate(units.keys)], dtype=bool)
        idx = q.order_by(score, eligible, seed)
        if not eligible.any():
            out.notes.append("no unit where annotators disagree and nobody adjudicated")
    else:
        second = np.full(n, np.nan)
        by_sample: dict[str, list[int]] = {}
        for i, (sid, _u) in enumerate(units.keys):
            by_sample.setdefault(sid, []).append(i)
        for scheme in chosen:
            if not calibrates(scheme) or scheme.name in missing:
                continue
            got = _model_scores(project, scheme, order, out.notes, progress)
            if got is None:
                continue
            problem, primary, secondary = got
            _spread(problem, primary, index, by_sample, score)
            _spread(problem, secondary, index, by_sample, second)
        idx = q.order_by(score, eligible, seed, second)
    out.entries = [Entry(units.keys[i][0], units.keys[i][1], units.scheme[i],
                         None if np.isnan(score[i]) else float(score[i]), reasons.get(units.keys[i]) if requeued[i] else None)
                   for i in idx[: limit or None]]
    return out
