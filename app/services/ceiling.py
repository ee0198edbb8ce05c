"""The human ceiling beside the metric (issue #15): on the units two or more people labeled, how far the humans
agree with each other, next to how far the metric agrees with them on the same items, with bootstrap intervals.

Items are the scheme's `label_items` (as in app/services/agreement.py). The metric's items come from its machine
label (the stored one from `concord assign`/imports, else the record's own, `Scheme.machine_label`) turned into
human-like labels by `Scheme.accept`; labels given to a whole sample (per-sample kinds, unit '') are compared with
the machine decision of the sample's first unit that has one (`machine_decision`). Figures (calibration.annotators.item_agreement):
- human_human: Fleiss' kappa and Krippendorff's alpha among the annotators, and their mean pairwise Cohen's kappa;
- metric_human: Cohen's kappa of the metric against the resolved human label, and the mean of the metric's Cohen's
  kappas against each annotator (comparable with the humans' mean pairwise kappa).
A caller that has the metric's decisions passes them (`concord evaluate` collects the violations matcher's matches
under the first config through the evaluate hook's `machine_decisions` option). A stored machine label with a part
not filled in (a None value, e.g. a violations unit's matcher proposal, computed per match config) counts as none;
the scheme then gets the human side only, with a note. Nothing here names a scheme.
Issue #28: the annotators' labels are read as columns (one query per scheme; only the shared units' values are
decoded), a scheme's items are drawn in bulk by its `label_items_many` when it has one, and the comparisons read one
integer-coded table (calibration.annotators.CodedItems): no dict per annotator, no tuple or string per item.
"""
from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from app.figures import fmt_estimate
from app.services.agreement import json_finite, records_by_id
from app.services.agreement_items import NOT_ITEMS, record_items
from calibration.schemes.base import capabilities, registry

if TYPE_CHECKING:
    from app.progress import Progress
    from app.services.evaluation import Evaluated
    from app.store import Project
    from calibration.annotators import CodedItems

METRIC = "\x00metric"  # the metric's rater name in the item tables (no annotator can be called this)
RESOLVED = "\x00resolved"


def own_ceiling(scheme: Any, data: Mapping[str, Any] | None) -> dict[str, float] | None:
    """The per-unit metric side a scheme's evaluate report computes itself, when it does: `data["ceiling"]` with each
    unit's mean Cohen's kappa against each annotator under the unit noun's plural (the judge scheme's
    `ceiling.judges`: every judge is its own metric on per-sample labels, so one "metric" rater would be the first
    judge only). None otherwise."""
    own = (data or {}).get("ceiling")
    per_unit = own.get(f"{scheme.unit_noun}s") if isinstance(own, Mapping) else None
    if not isinstance(per_unit, Mapping) or not all(isinstance(v, (int, float)) for v in per_unit.values()):
        return None
    return {str(k): float(v) for k, v in per_unit.items()}


def ceiling(project: Any, scheme_name: str, *, n_boot: int = 1000, seed: int = 0,
            machine: Mapping[tuple[str, str], Mapping[str, Any]] | None = None,
            per_unit: Mapping[str, float] | None = None) -> dict[str, Any] | None:
    """Human-human next to metric-human agreement on the units labeled by >= 2 people; None when there are none.
    `machine`: the metric's decisions as human-style labels per (sample, unit), when the caller has them (the
    evaluate hook's `machine_decisions`); else the stored machine labels. `per_unit`: the scheme's own metric side
    (`own_ceiling`), shown instead: each unit's mean Cohen's kappa against each annotator."""
    ready = human_side(project, scheme_name)
    return None if ready is None else metric_side(project, ready, n_boot=n_boot, seed=seed, machine=machine,
                                                  per_unit=per_unit)


@dataclass
class Ready:
    """What the ceiling reads before the metric's decisions are known (`human_side`): `concord evaluate` draws it in
    a worker process while the scheme's evaluate hook runs (app/services/ceiling_worker.py). `humans_ahead`: the
    humans' figures, when drawn ahead from a table of their items alone (the same figures as from the table with the
    metric's items first: item_agreement numbers samples, items, annotators and categories afresh)."""

    scheme: Any
    humans: _Shared
    records: Mapping[str, Any]
    resolved: Mapping[tuple[str, str], Mapping[str, Any]]
    has_record: Any
    humans_ahead: dict[str, Any] | None = None
    annotators_ahead: int = 0  # drawn ahead: how many annotators have items (0: no human item, no ceiling)
    unit_codes: Any = None  # per shared unit: its sample's code and its (record, unit) code (`_unit_codes`)
    decided: Any = None  # taken a batch at a time (`keep_decisions`): per shared unit, its decision's code or -1
    decisions: list[Any] = field(default_factory=list)  # the distinct decisions the codes stand for
    by_repr: dict[str, int] = field(default_factory=dict)
    by_unit_name: dict[str, Any] = field(default_factory=dict)  # unit name -> (its shared units' samples, units)


def human_side(project: Any, scheme_name: str, *, n_boot: int | None = None, seed: int = 0) -> Ready | None:
    """The ceiling's reads that do not depend on the metric (the shared units' labels, the records' items, the
    resolved labels); None when no unit is shared. With `n_boot`: the humans' figures too (`Ready.humans_ahead`)."""
    import numpy as np

    scheme = registry().get(scheme_name)
    humans = _shared_labels(project, scheme_name)
    if humans is None:
        return None
    # what label_items reads (violations: counts from SQL); whole records only if a machine decision needs them
    records = project.scheme_data.scheme_item_records(scheme_name)
    resolved = project.scheme_data.scheme_labels(scheme_name)
    has_record = np.fromiter((records.get(sid) is not None for sid in humans.unit_sample), dtype=bool,
                             count=humans.n_units)
    ready = Ready(scheme, humans, records, resolved, has_record, unit_codes=_unit_codes(records, humans))
    if n_boot is not None:
        table = _item_table(scheme, records, _no_metric_rows, humans.with_records(has_record), ready.unit_codes).items
        ready.humans_ahead = _humans(table, n_boot, seed) if len(table) else {}
        ready.annotators_ahead = int(np.unique(table.annotator).size)
    return ready


def _no_metric_rows(lo: int, hi: int) -> tuple[list[tuple], list[str], list[int], None]:
    return [], [], [], None


def keep_decisions(ready: Ready, batch: Mapping[tuple[str, str], Any]) -> None:
    """Keep the metric's decisions of `batch` ((sample, unit) -> decision, as `machine`) on `ready`'s shared units
    with a record, as codes of the distinct ones (equal by repr, as `_item_table` draws a label's items once per
    repr): the ceiling worker takes them a batch at a time, never a dict of every unit's (hundreds of bytes a unit,
    half a gigabyte at a million samples; most units' decisions repeat). `metric_side` then reads `ready.decided`
    instead of `machine`; the same figures."""
    import numpy as np
    import pandas as pd

    humans = ready.humans
    if ready.decided is None:
        ready.decided = np.full(humans.n_units, -1, dtype=np.int32)
    if not batch:
        return
    keys = list(batch)
    values = list(batch.values())
    samples = _objects([k[0] for k in keys])
    unit_code, unit_names = pd.factorize(_objects([k[1] for k in keys]), sort=False)
    for c, name in enumerate(unit_names):
        where = ready.by_unit_name.get(name)
        if where is None:  # the samples of the shared units (with a record) of that name: each one once
            units = np.flatnonzero((humans.unit_name == name) & ready.has_record)
            where = ready.by_unit_name[name] = (pd.Index(humans.unit_sample[units]), units)
        at = np.flatnonzero(unit_code == c)
        pos = where[0].get_indexer(samples[at])
        hit = pos >= 0
        for i, j in zip(at[hit].tolist(), where[1][pos[hit]].tolist()):
            value = values[i]
            text = repr(value)
            code = ready.by_repr.get(text)
            if code is None:
                code = ready.by_repr[text] = len(ready.decisions)
                ready.decisions.append(value)
            ready.decided[j] = code


def metric_side(project: Any, ready: Ready, *, n_boot: int = 1000, seed: int = 0,
                machine: Mapping[tuple[str, str], Mapping[str, Any]] | None = None,
                per_unit: Mapping[str, float] | None = None) -> dict[str, Any] | None:
    """`ceiling` from what `human_side` read: the metric's items (from `machine`, else the stored machine labels)
    beside the humans', or the scheme's own metric side (`per_unit`). Uses `ready` up: its labels are let go once
    their items are drawn (the peak memory at a million units)."""
    import numpy as np

    scheme, humans, records, resolved, has_record = (ready.scheme, ready.humans, ready.records, ready.resolved,
                                                     ready.has_record)
    looked_up: list[Any] = []  # the stored machine labels, read when a decision is not in `machine`

    coded, decisions = ready.decided, ready.decisions  # the decisions `keep_decisions` took, if it did

    def metric_rows(lo: int, hi: int) -> tuple[list[tuple], list[str], list[int], list[str] | None]:
        """(sample, unit, kind, value) of the metric's and resolved labels of the shared units lo..hi-1, each with
        its rater and unit, and with decisions taken as codes a text per row that is one-to-one with its value and
        kind's (else None: `_item_table` takes each value's repr): made a window of units at a time, not a tuple
        per unit at once."""
        rows: list[tuple] = []
        raters: list[str] = []
        units: list[int] = []
        texts: list[str] | None = None if coded is None else []
        if per_unit:  # the scheme's own metric side: the metric's items are never compared, none drawn
            return rows, raters, units, texts
        add_row, add_rater, add_unit = rows.append, raters.append, units.append
        mine = lo + np.flatnonzero(has_record[lo:hi])
        get = machine.get if machine is not None else (lambda _key: None)
        codes = coded[mine].tolist() if coded is not None else [-1] * len(mine)
        for j, sid, unit, code in zip(mine.tolist(), humans.unit_sample[mine].tolist(),
                                      humans.unit_name[mine].tolist(), codes):
            if coded is None:
                decided = get((sid, unit))
            else:
                decided = decisions[code] if code >= 0 else None
            if decided is None:
                if not looked_up:
                    looked_up.extend([records_by_id(project, scheme.name),
                                      project.samples.newest_machine_values(scheme.name)])
                full, stored = looked_up
                decided = machine_decision(project, scheme, full.get(sid), sid, unit, stored)
            if decided:
                for rater, labels in ((METRIC, decided), (RESOLVED, resolved.get((sid, unit)) or {})):
                    for kind, value in labels.items():
                        if kind not in NOT_ITEMS:
                            add_row((sid, unit, kind, value))
                            add_rater(rater)
                            add_unit(j)
                            if texts is not None:  # a taken decision by its code (no repr starts with \x01)
                                texts.append(f"\x01{code}" if rater == METRIC and code >= 0 else repr(value))
        return rows, raters, units, texts

    n_units = humans.n_units
    drawn = None
    # the humans' items after the metric's, in one table; with the humans' figures drawn ahead, only the units
    # the metric labeled are drawn (the others' items are never compared)
    if ready.humans_ahead is None or not per_unit:
        drawn = _item_table(scheme, records, metric_rows, humans.with_records(has_record), ready.unit_codes,
                            humans_alone=ready.humans_ahead is None)
    table, n_metric = (None, 0) if drawn is None else (drawn.items, drawn.n_metric)
    # their items are in `table` now: let go (the caller's `ready` too: it is drawn once)
    humans = resolved = None  # type: ignore[assignment]
    ready.humans, ready.resolved = None, {}  # type: ignore[assignment]
    shared_item, n_items = (None, 0) if drawn is None or per_unit else (drawn.metric_item, drawn.n_items)
    sides = None
    if ready.humans_ahead is not None:
        if not ready.annotators_ahead:
            return None
        hh, n_annotators = ready.humans_ahead, ready.annotators_ahead
    else:
        if n_metric == len(table):
            return None
        if n_items:  # the humans' figures beside the metric's: one bootstrap draw for both
            sides = _metric_sides(table, shared_item, n_boot, seed, humans=True)
            hh = sides[2]
        else:
            hh = _humans(table, n_boot, seed)
        n_annotators = int(np.unique(table.annotator[table.annotator >= 2]).size)  # raters 2...: annotators
    out: dict[str, Any] = {
        "units": n_units, "annotators": n_annotators,
        "human_human": {"kappa": hh["overall"]["kappa"], "alpha": hh["overall"]["alpha"],
                        "mean_pair_kappa": _mean(p["kappa"]["estimate"] for p in hh["pairs"])},
        "metric_human": None, "note": "",
    }
    if per_unit:
        out["metric_human"] = {"kappa_vs_resolved": None, "mean_kappa_vs_each": None, "items": n_units,
                               "per_unit": dict(per_unit)}
        return json_finite(out)
    if not n_items:
        out["note"] = "the metric's labels carry no items to compare (no stored machine label)"
        return json_finite(out)
    mh, each, _ = sides or _metric_sides(table, shared_item, n_boot, seed)
    metric_pairs = [p["kappa"]["estimate"] for p in each["pairs"] if METRIC in (p["a"], p["b"])]
    out["metric_human"] = {"kappa_vs_resolved": mh["pairs"][0]["kappa"] if mh["pairs"] else None,
                           "mean_kappa_vs_each": _mean(metric_pairs), "items": n_items}
    return json_finite(out)


@dataclass
class _Shared:
    """The annotators' labels on the units two or more of them labeled, as integer columns in the order the ceiling
    draws them (per unit in sample, unit order; per annotator in order of their first label there; per kind), and
    those units (sample, unit) in that order. A label's sample and unit are its unit's; its kind, annotator and
    value (JSON text) are codes into `kinds`, `annotators` and `texts`: a few bytes a label, not five objects."""

    kind: Any
    kinds: list[str]
    annotator: Any
    annotators: list[str]
    value: Any
    texts: list[str]
    unit_of: Any  # each label's unit, an index into unit_sample / unit_name, ascending
    unit_sample: Any
    unit_name: Any

    @property
    def n_units(self) -> int:
        return len(self.unit_sample)

    def with_records(self, keep_unit: Any) -> _Shared:
        """The labels of the units `keep_unit` marks (those whose sample has a record)."""
        if keep_unit.all():
            return self
        keep = keep_unit[self.unit_of]
        return _Shared(self.kind[keep], self.kinds, self.annotator[keep], self.annotators, self.value[keep],
                       self.texts, self.unit_of[keep], self.unit_sample, self.unit_name)


def _shared_labels(project: Any, scheme_name: str) -> _Shared | None:
    """The scheme's annotator labels (judgement kinds) on units two or more annotators labeled, read in chunks of
    columns (`label_column_chunks`: a unit's labels in one chunk), their values kept as codes of their JSON text
    (`_item_table` decodes each distinct one); None when no unit is shared."""
    import numpy as np
    import pandas as pd

    from app.services import agreement_codes
    from app.services.agreement_codes import first_index, narrow

    people: dict[str, int] = {}
    kinds: dict[str, int] = {}
    texts: dict[str, int] = {}
    kept: list[tuple[Any, ...]] = []
    n_units = 0

    def codes(column: Any, names: dict[str, int]) -> Any:  # the chunk's codes into the growing `names`
        local, distinct = pd.factorize(column, sort=False)
        return np.array([names.setdefault(x, len(names)) for x in distinct], dtype=np.int64)[local]

    for _scheme, sample, unit, kind, annotator, value in project.decisions.label_column_chunks(
            [scheme_name], skip=sorted(NOT_ITEMS), size=agreement_codes.CHUNK):
        a_code = codes(annotator, people)
        # the rows come sorted by (sample, unit, kind, annotator): a (sample, unit) group is contiguous, numbered by
        # comparing each row with the one before (no hashing of the names)
        new = np.ones(len(sample), dtype=bool)
        new[1:] = (sample[1:] != sample[:-1]) | (unit[1:] != unit[:-1])
        su = np.cumsum(new) - 1
        pair = su.astype(np.int64) * len(people) + a_code
        first_of_pair = first_index(pd.factorize(pair, sort=False)[0])
        is_first = first_of_pair == np.arange(len(pair))
        shared_unit = np.bincount(su[is_first], minlength=int(su.max()) + 1) >= 2
        keep = shared_unit[su]
        if not keep.any():
            continue
        # per unit, each annotator's labels together, annotators in order of their first label in the unit
        order = np.flatnonzero(keep)
        order = order[np.argsort(first_of_pair[order], kind="stable")]
        units = np.flatnonzero(shared_unit)
        first_row = np.empty(len(shared_unit), dtype=np.int64)  # each unit's first label
        first_row[su[::-1]] = np.arange(len(su) - 1, -1, -1)
        unit_index = np.full(len(shared_unit), -1, dtype=np.int64)
        unit_index[units] = np.arange(n_units, n_units + len(units))
        n_units += len(units)
        # each chunk's codes narrowed at once: the columns of every chunk are kept until they are joined
        kept.append((narrow(codes(kind[order], kinds)), narrow(a_code[order]), narrow(codes(value[order], texts)),
                     narrow(unit_index[su[order]]), sample[first_row[units]], unit[first_row[units]]))
    if not kept:
        return None
    kind_c, a_c, v_c, unit_of, unit_sample, unit_name = (np.concatenate(c) for c in zip(*kept))
    return _Shared(kind_c, list(kinds), a_c, list(people), v_c, list(texts), unit_of, unit_sample, unit_name)


WINDOW_UNITS = 1 << 14  # shared units whose items `_item_table` draws at a time (cut between samples)


def _unit_codes(records: Mapping[str, Any], humans: _Shared) -> tuple[Any, Any]:
    """(each shared unit's sample code, ascending: units come in sample order; its `record_unit_codes`: the items
    of labels with equal codes, kinds and texts are drawn once)."""
    import pandas as pd

    from app.services.agreement_codes import record_unit_codes

    return (pd.factorize(humans.unit_sample, sort=False)[0],
            record_unit_codes(records, humans.unit_sample, humans.unit_name))


@dataclass
class _Drawn:
    """`_item_table`'s table: the metric's entries (`n_metric`: raters 0 and 1) and the humans' (raters 2...) in
    order of their samples, each sample's metric entries first (each side's entries in its own order: the same
    figures as from the metric's table and the humans' one); `metric_item`: each entry's item is one the metric
    labeled (`n_items` of them)."""

    items: CodedItems
    n_metric: int
    metric_item: Any
    n_items: int


def _item_table(scheme: Any, records: Mapping[str, Any],
                metric_rows: Callable[[int, int], tuple[list[tuple], list[str], list[int], list[str] | None]],
                humans: _Shared, unit_codes: tuple[Any, Any], *, humans_alone: bool = True) -> _Drawn:
    """The items of the metric's rows and of the humans' labels as integer codes (`_Drawn`), drawn a window of whole
    samples' shared units at a time: `metric_rows(lo, hi)` gives the metric's rows of units lo..hi-1 ((sample,
    unit, kind, value), their raters, their units, in unit order, and a text per row one-to-one with its value or
    None: their reprs), drawn with the humans' labels of those units. `humans_alone`: False when only items the metric labeled are wanted (the
    humans' figures were drawn ahead): a window without a metric row then draws none of the humans'.
    Each window's codes are kept in the narrowest integer type; an item is coded one-to-one with its (unit, kind,
    item) within its window (item_agreement only groups by it within a sample, and no sample is in two windows);
    a category is its repr, as the per-row tables had it; a sample is its code in order of appearance."""
    import numpy as np

    from calibration.annotators import CodedItems

    sample_of_unit, group_of_unit = unit_codes
    categories: dict[str, int] = {}
    parts: list[Any] = []  # each window's columns
    lo = 0
    while lo < humans.n_units:
        hi = min(lo + WINDOW_UNITS, humans.n_units)
        if hi < humans.n_units:  # on to the end of the sample the cut falls in
            hi = int(np.searchsorted(sample_of_unit, sample_of_unit[hi - 1], side="right"))
        rows, raters, units, texts = metric_rows(lo, hi)
        h_lo, h_hi = np.searchsorted(humans.unit_of, [lo, hi])
        if not humans_alone and not rows:
            h_lo = h_hi
        got = _window_items(scheme, records, rows, raters, units, texts, humans, int(h_lo), int(h_hi), lo,
                            sample_of_unit, group_of_unit, categories)
        parts.append(got)
        lo = hi
    sample, key, rater, category, metric_item = (np.concatenate([p[i] for p in parts]) for i in range(5))
    rater_names = [METRIC, RESOLVED, *humans.annotators]
    return _Drawn(CodedItems(sample, key, rater, category, rater_names, list(categories)),
                  sum(p[5] for p in parts), metric_item, sum(p[6] for p in parts))


def _window_items(scheme: Any, records: Mapping[str, Any], metric_rows: list[tuple], metric_raters: list[str],
                  metric_units: list[int], metric_texts: list[str] | None, humans: _Shared, h_lo: int, h_hi: int, first_unit: int,
                  sample_of_unit: Any, group_of_unit: Any, categories: dict[str, int]
                  ) -> tuple[Any, ...]:
    """`_item_table`'s columns (sample, item, rater, category, whether the metric labeled the item) of one window,
    of the metric's rows and the humans' labels h_lo..h_hi-1 (their units from `first_unit` on), in order of their
    samples (stable: the metric's first), then how many entries and items the metric's rows gave. The scheme's `label_items_many` draws the items
    at once when it has one, else `label_items` per row. Categories are coded into `categories` (repr -> code)."""
    import numpy as np
    import orjson
    import pandas as pd

    from app.services.agreement_codes import category_codes, distinct_coded, expand_items, narrow

    n_first = len(metric_rows)
    if not n_first and h_lo == h_hi:
        return (*(np.zeros(0, dtype=np.int8),) * 4, np.zeros(0, dtype=bool), 0, 0)
    # each distinct label's items drawn once (`distinct_coded`): the metric's by their values' repr, the humans'
    # by their JSON text (decoded once each); records and units, samples too, coded per shared unit, not per label
    h_unit = humans.unit_of[h_lo:h_hi].astype(np.int64)
    unit_of = np.concatenate([np.asarray(metric_units, dtype=np.int64), h_unit])
    group = group_of_unit[unit_of]
    kind_names = _objects(humans.kinds)
    kinds = np.concatenate([_objects([r[2] for r in metric_rows]), kind_names[humans.kind[h_lo:h_hi]]])
    m_texts = metric_texts if metric_texts is not None else [repr(r[3]) for r in metric_rows]
    m_combo, m_first = distinct_coded(group[:n_first], _objects(m_texts), kinds[:n_first])
    h_combo, h_first = distinct_coded(group[n_first:], humans.value[h_lo:h_hi], kinds[n_first:])
    loads, texts = orjson.loads, humans.texts
    rows = [metric_rows[i] for i in m_first.tolist()] + [
        (humans.unit_sample[u], humans.unit_name[u], k, loads(texts[v]))
        for u, k, v in zip(h_unit[h_first].tolist(), kinds[n_first:][h_first].tolist(),
                           humans.value[h_lo:h_hi][h_first].tolist())]
    combo = np.concatenate([m_combo, h_combo + len(m_first)]).astype(np.int64)
    many = capabilities(scheme).label_items_many
    if many is not None:
        drawn, item, category = many(records, rows)
        item_code, _ = pd.factorize(np.asarray(item), sort=False)
        cat_code, cats = category_codes(category)  # True and 1 two categories, as their reprs are
        names = [repr(c) for c in cats]
    else:
        row_l: list[int] = []
        item_l: list[Any] = []
        cat_l: list[str] = []
        for i, (sid, unit, kind, value) in enumerate(rows):
            for it, cat in record_items(scheme, records.get(sid), unit, kind, value).items():
                row_l.append(i)
                item_l.append(it)
                cat_l.append(repr(cat))
        item_code, _ = pd.factorize(_objects(item_l), sort=False)
        cat_code, names = pd.factorize(_objects(cat_l), sort=False)
        drawn = row_l
    del rows
    row, entry = expand_items(combo, len(m_first) + len(h_first), drawn)
    item_code, cat_code = np.asarray(item_code)[entry], np.asarray(cat_code, dtype=np.int64)[entry]
    glob = np.array([categories.setdefault(n, len(categories)) for n in names] + [-1], dtype=np.int64)
    category = glob[cat_code]  # a code -1 (no category) stays -1: the appended last entry
    kind_code = pd.factorize(kinds, sort=False)[0]
    unit_kind = (unit_of - first_unit) * (int(kind_code.max(initial=0)) + 1) + kind_code
    key = unit_kind[row] * (int(item_code.max(initial=-1)) + 1) + item_code  # (unit, kind, item) -> one integer
    rater = np.concatenate([np.where(np.asarray(metric_raters, dtype=object) == METRIC, 0, 1).astype(np.int64),
                            humans.annotator[h_lo:h_hi].astype(np.int64) + 2])
    cut = int(np.searchsorted(row, n_first))
    # the items the metric labeled: a key is one (unit, kind, item), so one item of one sample
    labeled = np.unique(key[:cut][rater[row[:cut]] == 0])  # rater 0: METRIC
    sample = sample_of_unit[unit_of][row]
    order = np.argsort(sample, kind="stable")  # each side's entries come in sample order: merged, not sorted
    columns = (narrow(sample), narrow(key), narrow(rater[row]), narrow(category), np.isin(key, labeled))
    return (*(c[order] for c in columns), cut, len(labeled))


def _objects(values: Any) -> Any:
    """An object array of `values` (a pandas Series of str would be converted to Arrow strings first)."""
    import numpy as np

    values = list(values)
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _humans(table: CodedItems, n_boot: int, seed: int) -> dict[str, Any]:
    """item_agreement among the humans: the entries of `table` of raters 2... (the annotators)."""
    return _figures([table.take(table.annotator >= 2)], n_boot, seed)[0]


def _figures(tables: Sequence[CodedItems], n_boot: int, seed: int) -> list[dict[str, Any]]:
    """item_agreement of each table, a window of samples at a time (calibration.item_chunks: the same figures, bit
    for bit, in memory of the tables plus a few bytes per sample; item_agreement's whole-table arrays were 1.5-2 kB
    per sample); tables over as many samples share one bootstrap draw, each the replicates its own call would draw.
    The ceiling's tables come grouped by sample (`_item_table`), as it needs them."""
    from calibration.item_chunks import item_agreements_bounded  # pandas and krippendorff: only when drawn

    return item_agreements_bounded(tables, n_boot=n_boot, seed=seed)


def _metric_sides(table: CodedItems, shared_item: Any, n_boot: int, seed: int, *, humans: bool = False
                  ) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any] | None]:
    """(metric vs resolved, metric and humans, with `humans` the humans' own figures too) on the shared items: the
    parts of `table` each comparison had as lists (the metric's and resolved entries; the metric's and the humans';
    every human entry), each in its order (the same figures)."""
    import numpy as np

    rater = np.asarray(table.annotator)
    parts = [table.take(shared_item & (rater <= 1))]  # raters 0 and 1: METRIC and RESOLVED
    if humans:
        parts.append(table.take(rater >= 2))
    drawn = _figures(parts, n_boot, seed)
    del parts
    each = _figures([table.take(shared_item & (rater != 1))], 0, seed)[0]
    return drawn[0], each, drawn[1] if humans else None


def ceiling_with_machine(project: Any, scheme_name: str, *, n_boot: int = 1000, seed: int = 0,
                         machine: Mapping[tuple[str, str], Mapping[str, Any]] | None = None,
                         options: Mapping[str, Any] | None = None,
                         data: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
    """`ceiling` with the metric's decisions as `concord evaluate` has them, for the CLI and the GUI alike:
    `machine` when the caller already ran the scheme's evaluate hook (collecting `machine_decisions`), else the
    hook is run here under `options` (default: the scheme's default configs) to collect them; `data`: its report's
    data when the caller ran it (for `own_ceiling`). A stored machine label with a part not filled in (a matcher proposal, computed per config) would leave the metric side empty."""
    if machine is None:
        machine, data = _run_evaluate(project, scheme_name, options)
    per_unit = own_ceiling(registry().get(scheme_name), data)
    return ceiling(project, scheme_name, n_boot=n_boot, seed=seed, machine=machine or None, per_unit=per_unit)


def machine_decisions(project: Any, scheme_name: str,
                      options: Mapping[str, Any] | None = None) -> dict[tuple[str, str], dict[str, Any]]:
    """(sample, unit) -> the metric's decisions as labels, from the scheme's evaluate hook (its first config), when
    it offers them; empty when it has no hook or no unit is labeled by two or more people (no ceiling to draw).
    Nothing is saved: the hook's `save_scores` is a no-op and no bootstrap runs (decisions do not depend on it)."""
    return _run_evaluate(project, scheme_name, options)[0]


def _run_evaluate(project: Any, scheme_name: str, options: Mapping[str, Any] | None = None
                  ) -> tuple[dict[tuple[str, str], dict[str, Any]], Mapping[str, Any] | None]:
    """`machine_decisions` and the report's data (for `own_ceiling`); ({}, None) when nothing is shared."""
    from app.services.schemes import scheme_options

    scheme = registry().get(scheme_name)
    hook = capabilities(scheme).evaluate
    if hook is None or _shared_labels(project, scheme_name) is None:
        return {}, None
    decided: dict[tuple[str, str], dict[str, Any]] = {}
    opts = scheme_options(project, scheme, {**(options or {}), "n_boot": 0})
    opts.update(save_scores=lambda *_: None, machine_decisions=lambda _ref, labels: decided.update(labels))
    from app.services.evaluation import evaluation_records  # the scheme's lightest form (violations: columns)

    report = hook(evaluation_records(project, scheme), project.scheme_data.scheme_labels(scheme_name), opts)
    return decided, report.data if report is not None else None


def machine_decision(project: Any, scheme: Any, record: Any, sid: str, unit: str,
                     stored: Mapping[tuple[str, str], str | None] | None = None) -> dict[str, Any] | None:
    """The metric's decision on what humans labeled at (sid, unit), asked from the scheme: a unit's own machine label;
    for per-sample labels (unit '', LabelKind.per_sample) the per-sample kinds of the first of the sample's units
    (`Scheme.units` order: the record's own machine source first) that has a machine decision. `stored`: the
    scheme's `newest_machine_values`, when the caller read them (else one query per unit)."""
    if unit:
        return _machine(project, scheme, record, sid, unit, stored)
    per_sample = {name for name, kind in scheme.label_kinds.items() if kind.per_sample}
    for source in scheme.units(record):
        decided = _machine(project, scheme, record, sid, source, stored)
        own = {k: v for k, v in (decided or {}).items() if k in per_sample}
        if own:
            return own
    return None


def _machine(project: Any, scheme: Any, record: Any, sid: str, unit: str,
             stored: Mapping[tuple[str, str], str | None] | None = None) -> dict[str, Any] | None:
    if stored is not None and (sid, unit) not in stored:
        value = None  # no successful machine label stored for the unit
    elif stored is not None and stored[(sid, unit)] is not None:
        value = json.loads(stored[(sid, unit)])
    else:  # not read in bulk, or several labels: the newest, as machine_label chooses it
        row = project.samples.machine_label(sid, unit)
        value = row.get("value") if row else None
    if value is None:
        value = scheme.machine_label(record, unit)
    if value is None or (isinstance(value, dict) and any(v is None for v in value.values())):
        return None  # nothing yet, or a part the machine has not filled in (a violations unit's unscored proposal)
    try:
        return dict(scheme.accept(value))
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def _mean(values: Any) -> float | None:
    finite = [v for v in values if v is not None and math.isfinite(v)]
    return sum(finite) / len(finite) if finite else None


def ceiling_figures(result: dict[str, Any]) -> list[tuple[str, Any, str]]:
    """(figure, value, on what) of a ceiling: the value an interval dict ({estimate, low, high}) or a number. The
    CLI table, the calibration panel and the report all name the figures this way."""
    hh, mh = result["human_human"], result.get("metric_human") or {}
    n = f"{result['units']} units, {result['annotators']} annotators"
    rows = [("human-human Fleiss' kappa", hh["kappa"], n),
            ("human-human Krippendorff's alpha", hh["alpha"], n),
            ("human-human mean pairwise Cohen's kappa", hh["mean_pair_kappa"], n)]
    if mh.get("per_unit"):
        return rows + [(f"{unit} vs each annotator, mean Cohen's kappa", k, f"{mh['items']} units")
                       for unit, k in mh["per_unit"].items()]
    if mh:
        items = f"{mh['items']} items"
        rows += [("metric vs resolved human label, Cohen's kappa", mh["kappa_vs_resolved"], items),
                 ("metric vs each annotator, mean Cohen's kappa", mh["mean_kappa_vs_each"], items)]
    return rows


def ceiling_rows(result: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(figure, estimate [interval], n) rows for a CLI table or the calibration panel."""
    return [(name, fmt_estimate(value), on) for name, value, on in ceiling_figures(result)]


def human_ceilings(project: Any, schemes: list[str], n_boot: int, seed: int,
                   machine: dict[str, Any] | None = None, data: dict[str, Any] | None = None) -> dict[str, Any]:
    """Per scheme with units labeled by two or more people: human-human next to metric-human agreement
    (`machine`: (sample, unit) -> the metric's decisions as labels, collected while the evaluate hooks ran; None:
    each scheme's hook is run for them, as the GUI's chart does; `data`: scheme -> its report's data, for a scheme
    that computes its own metric side, app.services.ceiling.own_ceiling)."""
    out = {}
    for name in schemes:
        c = ceiling_with_machine(project, name, n_boot=n_boot, seed=seed, machine=machine,
                                 data=(data or {}).get(name))
        if c is not None:
            out[name] = c
    return out


def evaluate_with_ceilings(project: Project, schemes: Sequence[Any], options: dict[str, Any],
                           progress: Progress | None = None, *, concurrent: bool = False
                           ) -> tuple[list[Evaluated], dict[str, Any]]:
    """Each scheme's evaluation and its human ceiling, as `concord evaluate` computes them: the metric's decisions
    are collected while the hooks run (for the ceiling's metric side) and the records are read once. `concurrent`
    (the CLI; never the app's Qt threads): the ceiling's human side drawn in a forked worker meanwhile, on a large
    enough project and two cores (app/services/ceiling_worker.py); the same figures."""
    from app.services import ceiling_worker
    from app.services.evaluation import evaluate, gc_paused

    decided: dict[Any, Any] = {}
    several = project.decisions.several_annotators()
    if several:  # else no unit is shared: no ceiling, no decisions to collect
        options = {**options, "machine_decisions": lambda ref, labels: decided.update(labels)}
    n_boot, seed = int(options.get("n_boot", 1000)), int(options.get("seed", 0))
    names = [s.name for s in schemes]
    # the cyclic GC paused for the ceiling too: its item rows are many small acyclic objects beside every record
    # (full collections rescanning them were a tenth of the trace ceiling at 10k samples)
    with project.scheme_data.records_once(), gc_paused():
        worker = None
        if concurrent and several and ceiling_worker.usable(project, names):
            ceiling_worker.read_ahead(project, names[0])  # the first scheme's: the worker inherits them
            worker = ceiling_worker.Worker(project, names, n_boot, seed, (human_side, metric_side, keep_decisions))
        try:
            results = evaluate(project, schemes, options, progress)
            reported = [r.scheme.name for r in results if r.report is not None]
            data = {r.scheme.name: r.report.data for r in results if r.report}
            ceilings = None if worker is None else worker.ceilings(
                reported, decided, {name: own_ceiling(registry().get(name), data.get(name)) for name in reported})
            if ceilings is None:  # no worker, or it died without an answer
                ceilings = human_ceilings(project, reported, n_boot, seed, decided, data)
        finally:
            if worker is not None:
                worker.close()
    return results, ceilings
