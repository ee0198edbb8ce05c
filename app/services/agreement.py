"""Inter-annotator agreement of a project (issue #15): what `concord agreement` prints and the app's panel shows.

Items come from each scheme's `label_items`, called per annotator, unit and label kind (so every kind a scheme
has is measured on its own), and go to calibration.annotators.item_agreement: Cohen's kappa per annotator pair,
Fleiss' kappa and Krippendorff's alpha, with bootstrap intervals over samples. Label values that are lists of
character spans (a curated ground truth: `[{"start", "end", ...}, ...]`) go to span_agreement: pairwise P/R/F1 with
greedy one-to-one matching on IoU > `iou`, the micro F1 and unitizing alpha. `overall` pools every item (kinds and
schemes kept apart in the categories) and every span kind of the selection.
No scheme is named here: everything loops over the registry and the kinds found in the labels.
`agreement` reads the item tables as integer codes (app/services/agreement_codes.py: the same figures, no tuple per
item); `tables` and `unit_items` keep the rows for the other callers (annotator quality, windows, the planner).
"""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from app.services.agreement_items import (
    NOT_ITEMS,
    NOT_READ,
    as_category,
    record_items,
    split_spans,
)
from calibration.schemes.base import capabilities, registry


def collect_labels(project: Any, schemes: Sequence[str] | None = None,
                   samples: Collection[str] | None = None) -> dict[str, Any]:
    """Per scheme: records by id (what `label_items` reads of them), and (sample, unit, annotator) -> kind -> value of every annotator's label
    (only of `samples` when given: an export's selection)."""
    present = project.counts.sample_counts()
    names = {s.name for s in registry() if s.name in present and (not schemes or s.name in schemes)}
    by_scheme: dict[str, dict[tuple[str, str, str], dict[str, Any]]] = defaultdict(lambda: defaultdict(dict))
    for name, sid, unit, kind, annotator, value in project.decisions.iter_annotator_label_rows(skip=sorted(NOT_ITEMS)):
        if name in names and kind not in NOT_ITEMS and (samples is None or sid in samples):
            by_scheme[name][(sid, unit, annotator)][kind] = value
    return {name: {"records": (project.scheme_data.scheme_item_records(name) if capabilities(registry().get(name)).items_read_record
                               else NOT_READ), "labels": labels}
            for name, labels in by_scheme.items() if labels}


def tables(project: Any, schemes: Sequence[str] | None = None, samples: Collection[str] | None = None,
           scope: Mapping[str, Any] | None = None) -> tuple[dict[tuple[str, str], list[tuple]], dict[tuple[str, str], dict]]:
    """(scheme, kind) -> item rows (sample, unit|item, annotator, category), and (scheme, kind) -> span sets
    {(sample, annotator): [(start, end), ...]} for per-sample kinds whose every value is a span list."""
    scope = collect_labels(project, schemes, samples) if scope is None else scope
    return unit_items(scope, joined=True)


class _Names(dict):  # type: ignore[type-arg]
    """Joined names made once: an item's or a sample's name repeats on every annotator's row (one string for all
    of them, not one per row: 1.7M item rows at 100k violations samples)."""

    def join(self, a: str, sep: str, b: Any) -> str:
        key = (a, sep, b, type(b))  # True and 1 are equal keys but "True" and "1" as names
        got = self.get(key)
        if got is None:
            got = self[key] = f"{a}{sep}{b}"
        return got


def unit_items(scope: Mapping[str, Any], *, joined: bool = False
               ) -> tuple[dict[tuple[str, str], list[tuple]], dict[tuple[str, str], dict]]:
    """`tables` with the unit apart from the item: (scheme, kind) -> rows (sample, unit, item, annotator, category)
    (annotator quality needs the unit to find when each label was given), and the span sets; `joined`: rows
    (sample, unit|item, annotator, category), as `tables` gives them (made once, not converted from the others)."""
    items: dict[tuple[str, str], list[tuple]] = defaultdict(list)
    names = _Names()

    def row(sid: str, unit: str, item: Any, annotator: str, category: Any) -> tuple:
        if joined:
            return (sid, names.join(unit, "|", item), annotator, as_category(category))
        return (sid, unit, item, annotator, as_category(category))

    candidates: dict[tuple[str, str], dict[tuple[str, str], Any]] = defaultdict(dict)
    for name, data in scope.items():
        scheme = registry().get(name)
        records = data["records"]
        label_kinds = dict(scheme.label_kinds)  # a property on some schemes: read once
        for (sid, unit, annotator), kinds in data["labels"].items():
            record = records.get(sid)
            if record is None:
                continue
            for kind, value in kinds.items():
                lk = label_kinds.get(kind)
                if lk is not None and lk.per_sample and isinstance(value, list):
                    candidates[(name, kind)][(sid, annotator)] = value
                    continue
                for item, category in record_items(scheme, record, unit, kind, value).items():
                    if category is not None:
                        items[(name, kind)].append(row(sid, unit, item, annotator, category))
    spans, rest = split_spans(candidates)
    for key, sets in rest.items():
        scheme = registry().get(key[0])
        # per-sample kinds that are not spans are items of unit ''
        for (sid, annotator), value in sets.items():
            rec = scope[key[0]]["records"].get(sid)
            for item, category in record_items(scheme, rec, "", key[1], value).items():
                if category is not None:
                    items[key].append(row(sid, "", item, annotator, category))
    return dict(items), spans


def records_by_id(project: Any, name: str) -> dict[str, Any]:
    """A scheme's records by id (read once per call of `agreement` or `ceiling`: the labels change between calls)."""
    scheme = registry().get(name)
    return {scheme.record_id(r): r for r in project.scheme_data.scheme_records(name)}


def agreement(project: Any, *, schemes: Sequence[str] | None = None, iou: float = 0.0, n_boot: int = 1000,
              seed: int = 0, samples: Collection[str] | None = None, concurrent: bool = False) -> dict[str, Any]:
    """Every figure of `concord agreement --json`: per scheme and kind, then overall, pairs and annotators
    (over `samples` only when given; `concurrent`, the CLI: the labels read ahead in a forked worker where one
    pays off)."""
    import numpy as np

    from app.services.agreement_codes import column_tables, pooled_codes, span_figures
    from app.services.evaluation import gc_paused
    from calibration.item_chunks import item_agreements_bounded

    with gc_paused():  # the label rows and names read are many small acyclic objects: no full collection rescans
        # `tables` as integer codes, read in chunks of columns
        read = column_tables(project, schemes, samples, concurrent=concurrent)
    items, spans = read.items, read.spans
    per: dict[str, dict[str, Any]] = defaultdict(dict)
    raters: set[str] = set()
    compared: list[tuple[str, str]] = []
    for (name, kind), table in sorted(items.items()):
        who = {table.annotators[a] for a in np.unique(table.annotator).tolist()}
        raters |= who
        if len(who) < 2:
            per[name][kind] = {"n_labels": len(table), "note": "fewer than two annotators"}
        else:
            compared.append((name, kind))
    # one kind: the pooled figures are that kind's (same items, categories only renamed), so not computed twice;
    # every table in one call: tables of the same samples share the bootstrap's draw
    pool = len(raters) >= 2 and len(items) > 1
    # a window of samples at a time: memory bounded by the coded tables plus a few bytes per sample (1M samples)
    figures = item_agreements_bounded([items[key] for key in compared] + ([pooled_codes(items)] if pool else []),
                                      n_boot=n_boot, seed=seed)
    for (name, kind), res in zip(compared, figures):
        per[name][kind] = json_finite(res)
    by_kind, pooled_span = span_figures(project, read, iou, n_boot, seed)  # a window of samples at a time
    for (name, kind), res in by_kind.items():
        per[name][kind] = json_finite(res)
    out: dict[str, Any] = {"iou": iou, "n_boot": n_boot, "schemes": dict(per),
                           "overall": {"kappa": None, "alpha": None, "span_f1": None, "u_alpha": None}}
    pairs: dict[tuple[str, str], dict[str, Any]] = {}
    people: dict[str, dict[str, Any]] = {}
    if len(raters) >= 2:
        single = per[next(iter(items))[0]][next(iter(items))[1]] if len(items) == 1 else {}
        res = json_finite(figures[-1]) if pool else single
        out["overall"].update(kappa=res["overall"]["kappa"], alpha=res["overall"]["alpha"],
                              n_items_pairable=res["overall"]["n_items_pairable"])
        for p in res["pairs"]:
            pairs.setdefault((p["a"], p["b"]), {"a": p["a"], "b": p["b"]}).update(
                kappa=p["kappa"], n_items=p["n_items"], observed_agreement=p["observed_agreement"])
        for p in res["annotators"]:
            people.setdefault(p["annotator"], {}).update(mean_kappa=p["mean_kappa"])
    if any(spans.values()):
        if pooled_span is None:
            res = per[next(iter(spans))[0]][next(iter(spans))[1]]
        else:
            res = json_finite(pooled_span)
        out["overall"].update(span_f1=res["overall"]["span_f1"], u_alpha=res["overall"]["u_alpha"],
                              matched=res["overall"]["matched"], spans_compared=res["overall"]["spans_compared"])
        for p in res["pairs"]:
            pairs.setdefault((p["a"], p["b"]), {"a": p["a"], "b": p["b"]}).update(
                span_precision=p["precision"], span_recall=p["recall"], span_f1=p["f1"], span_samples=p["n_samples"])
        for p in res["annotators"]:
            people.setdefault(p["annotator"], {}).update(span_f1_with_others=p["f1_with_others"], n_spans=p["n_spans"])
    out["pairs"] = [pairs[k] for k in sorted(pairs)]
    out["annotators"] = _people(project, people, read)
    return out


def _pooled(items: Mapping[tuple[str, str], Sequence[tuple]]) -> list[tuple]:
    """Every kind's item rows in one table, kinds and schemes kept apart in the names and categories (built only
    when there is more than one kind: with one, the pooled figures are that kind's)."""
    names = _Names()
    return [(names.join(name, ":", s), names.join(kind, "|", i), a, names.join(kind, "=", c))
            for (name, kind), rows in sorted(items.items()) for s, i, a, c in rows]


pooled = _pooled  # public name for the sample-size planner (app/services/planner.py)


def _people(project: Any, agree: Mapping[str, Mapping[str, Any]], read: Any) -> list[dict[str, Any]]:
    """Labels, units, agreement with the others and seconds per unit (work_log) per annotator (`read`: the
    ColumnTables of the labels)."""
    seconds: dict[str, list[float]] = defaultdict(list)
    for key, secs in project.decisions.seconds_per_annotator_unit().items():
        if key in read.worked:
            seconds[key[0]].append(secs)
    rows = []
    for name in sorted(set(read.n_labels) | set(agree)):
        secs = seconds.get(name, [])
        rows.append({"annotator": name, "n_labels": read.n_labels.get(name, 0), "n_units": read.n_units.get(name, 0),
                     "mean_kappa": agree.get(name, {}).get("mean_kappa"),
                     "span_f1_with_others": agree.get(name, {}).get("span_f1_with_others"),
                     "n_spans": agree.get(name, {}).get("n_spans"),
                     "seconds_per_unit": sum(secs) / len(secs) if secs else None})
    return rows


def json_finite(obj: Any) -> Any:
    """NaN -> None, so --json is valid JSON and the tables print '-'."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: json_finite(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [json_finite(v) for v in obj]
    return obj


# -- annotator quality and agreement over time (issue #29) --------------------------------------------------------------
def _epoch(ts: str) -> float:
    """Seconds since the epoch of a stored ISO timestamp (UTC when it names no zone)."""
    from datetime import UTC, datetime

    t = datetime.fromisoformat(ts)
    return (t if t.tzinfo else t.replace(tzinfo=UTC)).timestamp()


epoch = _epoch  # public name for the adaptive-overlap weighting (app/services/overlap.py) and the version markers


def _timed_items(project: Any, scope: Mapping[str, Any]) -> list[tuple]:
    """Every item label of `scope` as (sample, item, annotator, category, kind, ts, adjudicated, target, imported):
    the calibration.annotator_quality columns plus the target (scheme, sample, unit, kind) it belongs to and whether
    the label came from an import."""
    items, _ = unit_items(scope)
    times = project.decisions.label_times()
    rows = []
    for (name, kind), found in items.items():
        for sid, unit, item, annotator, category in found:
            ts, adjudicated, imported = times.get((sid, unit, kind, annotator), (None, False, False))
            if ts is None:
                continue
            rows.append((f"{name}:{sid}", f"{kind}|{unit}|{item}", annotator, category, f"{name}:{kind}", _epoch(ts),
                         adjudicated, (name, sid, unit, kind), imported))
    return rows


def _decision_seconds(project: Any, scope: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """annotator -> spread of seconds per decision: the app's work log (seconds per unit) where the annotator has
    one, else the gaps between their decisions' event timestamps."""
    from calibration.annotator_quality import decision_gaps, spread

    units = {(sid, unit) for data in scope.values() for (sid, unit, _a) in data["labels"]}
    logged: dict[str, list[float]] = defaultdict(list)
    for (annotator, sid, unit), secs in project.decisions.seconds_per_annotator_unit().items():
        if (sid, unit) in units:
            logged[annotator].append(secs)
    out = {a: {"source": "work_log", **spread(v)} for a, v in logged.items()}
    for annotator, stamps in project.decisions.decision_times().items():
        if annotator not in out:
            out[annotator] = {"source": "events", **spread(decision_gaps(_epoch(t) for t in stamps))}
    return out


def _statuses(project: Any, scope: Mapping[str, Any], samples: Collection[str] | None) -> dict[str, dict[str, int]]:
    """annotator -> status -> count of their current status labels in the schemes of `scope` (imports left out)."""
    out: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for name, sid, annotator, value in project.decisions.decided_statuses():
        if name in scope and (samples is None or sid in samples) and isinstance(value, str):
            out[annotator][value] += 1
    return {a: dict(v) for a, v in out.items()}


def annotator_quality(project: Any, *, schemes: Sequence[str] | None = None, n_boot: int = 1000, seed: int = 0,
                      samples: Collection[str] | None = None, scope: Mapping[str, Any] | None = None
                      ) -> list[dict[str, Any]]:
    """Per annotator: agreement and kappa with the adjudicated or majority label of the others, drift between the
    first and last half of their decisions, seconds per decision, and flags (calibration.annotator_quality)."""
    import pandas as pd

    from calibration.annotator_quality import COLUMNS
    from calibration.annotator_quality import annotator_quality as quality

    scope = collect_labels(project, schemes, samples) if scope is None else scope
    # an imported label's time is when the file was read, not when its annotator decided: it has no place in drift
    table = pd.DataFrame([(*r[:5], math.nan if r[8] else r[5], r[6]) for r in _timed_items(project, scope)],
                         columns=list(COLUMNS))
    people = {a for data in scope.values() for (_s, _u, a) in data["labels"]}
    seconds = {a: v for a, v in _decision_seconds(project, scope).items() if a in people}
    statuses = _statuses(project, scope, samples)
    return json_finite(quality(table, statuses=statuses, seconds=seconds, n_boot=n_boot, seed=seed))


def agreement_over_time(project: Any, *, window: str | int = "day", schemes: Sequence[str] | None = None,
                        iou: float = 0.0, n_boot: int = 1000, seed: int = 0, samples: Collection[str] | None = None,
                        scope: Mapping[str, Any] | None = None, over: str = "time") -> dict[str, Any]:
    """Pooled kappa, alpha and span F1 per time window (or, `over="version"`, per scheme and guideline version),
    with intervals and drops flagged (calibration.agreement_windows). A target (one unit's label kind, or one
    sample's spans) belongs to the window of its newest label, when its comparison became possible, or to the
    guideline version that label was given under; targets labelled by one annotator only are left out."""
    from calibration.agreement_windows import drops, versions_of, window_of
    from calibration.annotators import item_agreement, span_agreement

    scope = collect_labels(project, schemes, samples) if scope is None else scope
    by_target: dict[tuple, list[tuple]] = defaultdict(list)
    for row in _timed_items(project, scope):
        by_target[row[7]].append(row)
    _, spans = unit_items(scope)
    times = project.decisions.label_times()
    span_targets: dict[tuple, dict[tuple[str, str], list[tuple[int, int]]]] = defaultdict(dict)
    for (name, kind), sets in spans.items():
        for (sid, annotator), value in sets.items():
            span_targets[(name, sid, "", kind)][(sid, annotator)] = value
    when: dict[tuple, float] = {}
    newest: dict[tuple, tuple[str, str, str, str]] = {}  # target -> its newest label's (sample, unit, kind, annotator)
    for target, rows in by_target.items():
        if len({r[2] for r in rows}) >= 2:
            last = max(rows, key=lambda r: (r[5], r[2]))
            when[target] = last[5]
            newest[target] = (target[1], target[2], target[3], last[2])
    for target, sets in span_targets.items():
        stamps = {a: times.get((target[1], "", target[3], a)) for (_s, a) in sets}
        if len(sets) >= 2 and all(stamps.values()):
            last_a = max(stamps, key=lambda a: (_epoch(stamps[a][0]), a))  # type: ignore[index]
            when[("spans", *target)] = _epoch(stamps[last_a][0])  # type: ignore[index]
            newest[("spans", *target)] = (target[1], "", target[3], last_a)
    keys = sorted(when, key=lambda k: (when[k], k))
    if over == "version":
        given = project.guidelines.label_versions()
        keys = sorted(when, key=lambda k: (k[1] if k[0] == "spans" else k[0], when[k], k))
        assigned = versions_of([((k[1] if k[0] == "spans" else k[0]), given.get(newest[k])) for k in keys])
    else:
        assigned = window_of([when[k] for k in keys], window)
    lengths = project.decisions.text_lengths() if span_targets else {}
    windows: list[dict[str, Any]] = []
    for number in sorted({w for w, _ in assigned}):
        mine = [k for k, (w, _) in zip(keys, assigned) if w == number]
        label = next(lab for w, lab in assigned if w == number)
        pooled = [(s, i, a, f"{kind}={c}") for k in mine if k[0] != "spans" for s, i, a, c, kind, *_ in by_target[k]]
        sets, pooled_lengths = {}, {}
        for k in (k for k in mine if k[0] == "spans"):
            for (s, a), v in span_targets[k[1:]].items():
                sets[(f"{k[1]}:{k[4]}:{s}", a)] = v
                pooled_lengths[f"{k[1]}:{k[4]}:{s}"] = lengths[s]
        row: dict[str, Any] = {"window": label, "first": _iso(min(when[k] for k in mine)),
                               "last": _iso(max(when[k] for k in mine)), "n_items": None, "n_span_samples": None,
                               "kappa": None, "alpha": None, "span_f1": None}
        if pooled:
            res = item_agreement(pooled, n_boot=n_boot, seed=seed)
            row.update(n_items=res["n_items"], kappa=res["overall"]["kappa"], alpha=res["overall"]["alpha"])
        if sets:
            res = span_agreement(sets, iou, lengths=pooled_lengths, n_boot=n_boot, seed=seed)
            row.update(n_span_samples=len({key[0] for key in sets}), span_f1=res["overall"]["span_f1"])
        if over == "version":
            scheme, _, named = label.partition(" ")  # scheme names are identifiers: no space in them
            row = {"window": label, "scheme": scheme,
                   "version": None if named == "before versioning" else int(named.removeprefix("v")), **row}
        windows.append(json_finite(row))
    # a drop is judged against the previous window of the same series: over versions, the same scheme's
    series: dict[str, list[int]] = defaultdict(list)
    for i, w in enumerate(windows):
        series[w.get("scheme", "")].append(i)
    for members in series.values():
        flagged = {stat: drops([windows[i][stat] for i in members]) for stat in ("kappa", "alpha", "span_f1")}
        for j, i in enumerate(members):
            windows[i]["drops"] = [stat for stat, marks in flagged.items() if marks[j]]
    if over == "version":
        return {"over": "version", "n_boot": n_boot, "windows": windows}
    return {"over": "time", "window": str(window), "n_boot": n_boot, "windows": windows}


def _iso(epoch: float) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(epoch, tz=UTC).isoformat(timespec="seconds")
