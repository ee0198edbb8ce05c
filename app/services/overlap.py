"""`concord assign-work --overlap adaptive` (issue #29 item 3): which units get one more annotator, from what the
project holds. The decision rule is calibration/overlap.py's; this module only gathers each unit's evidence:

- the humans' labels: each annotator's label items of the unit (the scheme's `label_items`, every label kind, as
  `concord agreement` reads them), one hashable per annotator;
- pending: annotators assigned to the unit who have not labeled it yet (a unit waits for them);
- the machine: the scheme's `machine_label` of the unit, read through `accept` and `label_items` as the labels a
  human accepting it would give, on the items the humans' majority labeled (None when the scheme has no machine
  label for the unit, when accepting it gives what accepting nothing gives (a machine label without the decision
  itself, e.g. predictions whose matches a matcher has not proposed), or when it cannot be read as items).
Each unit given one more annotator carries its signals (`overlap.stratum`, confidence, reasons) into the store, so
`post_stratified` can weight the pairs by what the choices rested on (calibration.overlap.stratified_kappa): after
adaptive rounds the units with two labels over-represent the uncertain ones, and the plain kappa leans low.
The decision boundary signal of the library (a machine score near its threshold) is not read here: no scheme
contract exposes a score's distance to its threshold yet. No scheme is named here.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

from calibration import overlap
from calibration.schemes.base import registry

Key = tuple[str, str, str]  # (scheme, sample_id, unit)


def _given(project: Any, schemes: Sequence[str] | None) -> dict[Key, dict[str, tuple]]:
    """Every labeled unit -> annotator -> their label as one hashable (their label items, sorted)."""
    from app.services.agreement import collect_labels, unit_items

    items, _ = unit_items(collect_labels(project, schemes))
    given: dict[Key, dict[str, list[tuple]]] = defaultdict(lambda: defaultdict(list))
    for (name, kind), rows in items.items():
        for sid, unit, item, annotator, category in rows:
            given[(name, sid, unit)][annotator].append((kind, item, category))
    return {k: {a: tuple(sorted(v, key=repr)) for a, v in per.items()} for k, per in given.items()}


def evidence(project: Any, schemes: Sequence[str] | None = None) -> dict[Key, overlap.Evidence]:
    """Every labeled or assigned unit's evidence (module docstring)."""
    from app.services.agreement_items import record_items

    given = _given(project, schemes)
    scheme_of: dict[tuple[str, str], str] = {}
    assigned: dict[tuple[str, str], set[str]] = defaultdict(set)
    for sid, unit, a, name in project.assignments.assignment_rows():
        assigned[(sid, unit)].add(a)
        scheme_of[(sid, unit)] = name
    by_unit = {(sid, unit): name for name, sid, unit in given}
    records: dict[str, dict[str, Any]] = {}
    out: dict[Key, overlap.Evidence] = {}
    for key, per in given.items():
        name, sid, unit = key
        labels = tuple(v for _, v in sorted(per.items()))
        waiting = len(assigned.get((sid, unit), set()) - set(per))
        if name not in records:
            scheme = registry().get(name)
            records[name] = {scheme.record_id(r): r for r in project.scheme_data.scheme_records(name)}
        machine = _machine(registry().get(name), records[name].get(sid), unit,
                           overlap.Evidence(labels).majority, record_items)
        out[key] = overlap.Evidence(labels, waiting, machine)
    wanted = None if not schemes else set(schemes)
    for (sid, unit), who in assigned.items():
        if (sid, unit) in by_unit:
            continue
        name = scheme_of.get((sid, unit), "")
        if wanted is None or name in wanted:
            out[(name, sid, unit)] = overlap.Evidence((), len(who))
    return out


def _machine(scheme: Any, record: Any, unit: str, majority: Any, record_items: Any) -> tuple | None:
    """The machine's label items on the keys of the humans' majority label; None when it has none of them."""
    if record is None or majority is None:
        return None
    try:
        value = scheme.machine_label(record, unit)
        accepted = scheme.accept(value) if value is not None else {}
        if accepted == scheme.accept(None):  # accepting it says no more than accepting nothing: no machine label
            return None
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    keys = {(kind, item) for kind, item, _ in majority}
    mine = []
    for kind, v in accepted.items():
        for item, category in record_items(scheme, record, unit, kind, v).items():
            if (kind, item) in keys and category is not None:
                mine.append((kind, item, category if isinstance(category, (str, int, float, bool)) else repr(category)))
    if len(mine) != len(keys):
        return None
    return tuple(sorted(mine, key=repr))


def signals(e: overlap.Evidence) -> dict[str, Any]:
    """What a choice rested on, as stored with the assignment (JSON: the label tuples become lists)."""
    return {"stratum": list(overlap.stratum(e)), "confidence": overlap.confidence(e), "labels": len(e.labels),
            "reasons": overlap.reasons(e)}


def decide(project: Any, *, target: float = overlap.TARGET, max_overlap: int = overlap.MAX_OVERLAP,
           budget: int | None = None, audit: float = 0.0, seed: int = 0, schemes: Sequence[str] | None = None
           ) -> tuple[list[tuple[str, str]], dict[str, Any], dict[tuple[str, str], dict[str, Any]]]:
    """((sample_id, unit) to give one more annotator, a summary for the output, each chosen unit's `signals`).
    `budget`: annotators beyond the first per unit over all runs (those already assigned or labeling count),
    None: no limit."""
    ev = evidence(project, schemes)
    keys = sorted(ev)
    units = [ev[k] for k in keys]
    extra = 0
    assigned: dict[tuple[str, str], set[str]] = defaultdict(set)
    for sid, unit, a, _ in project.assignments.assignment_rows():
        assigned[(sid, unit)].add(a)
    for (_, sid, unit), e in zip(keys, units):
        extra += max(0, max(len(e.labels) + e.pending, len(assigned.get((sid, unit), ()))) - 1)
    left = None if budget is None else max(0, budget - extra)
    chosen = overlap.next_round(units, target=target, max_overlap=max_overlap, budget=left, audit=audit, seed=seed)
    ready = [i for i, e in enumerate(units) if e.labels and not e.pending and len(e.labels) < max_overlap]
    uncertain = [i for i in ready if overlap.confidence(units[i]) < target]
    reasons: Counter[str] = Counter(r for i in uncertain for r in overlap.reasons(units[i]) or ["one label"])
    summary = {"target": target, "max_overlap": max_overlap, "audit": audit, "budget": budget,
               "extra_before": extra, "uncertain": len(uncertain), "chosen": len(chosen),
               "waiting": sum(1 for e in units if e.pending),
               "reasons": dict(sorted(reasons.items())),
               "budget_left": None if left is None else left - len(chosen)}
    return ([(keys[i][1], keys[i][2]) for i in chosen], summary,
            {(keys[i][1], keys[i][2]): signals(units[i]) for i in chosen})


def _key(stratum: Any) -> str:
    """A stratum as one hashable: its JSON (a recorded stratum and one computed now compare equal)."""
    import json

    return json.dumps(stratum, sort_keys=True, default=repr)


def post_stratified(project: Any, *, schemes: Sequence[str] | None = None, n_boot: int = 1000,
                    seed: int = 0) -> dict[str, Any] | None:
    """Kappa between each unit's first two annotators (by the time of their first label), weighted to all labeled
    units by the strata adaptive overlap chose on (calibration.overlap.stratified_kappa). A pair's stratum is the
    one recorded when its second annotator was added; a unit with one label (or a pair without a record: not an
    adaptive choice) is in the stratum its first label and the machine give now, which for one label is what an
    adaptive round would see. None when no adaptive round recorded its signals."""
    from app.services.agreement import epoch, json_finite
    from app.services.agreement_items import record_items

    recorded = project.assignments.adaptive_strata()
    if not recorded:
        return None
    given = _given(project, schemes)
    if not given:
        return None
    first_at: dict[tuple[str, str, str], float] = {}
    for (sid, unit, _kind, annotator), (ts, *_rest) in project.decisions.label_times().items():
        t = epoch(ts)
        first_at[(sid, unit, annotator)] = min(t, first_at.get((sid, unit, annotator), t))
    records: dict[str, dict[str, Any]] = {}
    first, second, strata, recorded_pairs = [], [], [], 0
    for (name, sid, unit), per in sorted(given.items()):
        order = sorted(per, key=lambda a: (first_at.get((sid, unit, a), float("inf")), a))
        a1 = per[order[0]]
        stratum = recorded.get((sid, unit, order[1]), {}).get("stratum") if len(order) > 1 else None
        if stratum is None:
            if name not in records:
                scheme = registry().get(name)
                records[name] = {scheme.record_id(r): r for r in project.scheme_data.scheme_records(name)}
            machine = _machine(registry().get(name), records[name].get(sid), unit, a1, record_items)
            stratum = list(overlap.stratum(overlap.Evidence((a1,), machine=machine)))
        else:
            recorded_pairs += 1
        first.append(a1)
        second.append(per[order[1]] if len(order) > 1 else None)
        strata.append(_key(stratum))
    res = overlap.stratified_kappa(first, second, strata, n_boot=n_boot, seed=seed)
    return json_finite({"kappa": {k: res[k] for k in ("estimate", "low", "high", "n_valid")}, "units": len(first),
                        "pairs": res["pairs"], "pairs_chosen_adaptively": recorded_pairs,
                        "strata": len(set(strata)), "strata_unobserved": res["strata_unobserved"]})
