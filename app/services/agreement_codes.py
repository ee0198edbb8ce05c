"""Agreement's item tables as integer codes (issue #28): what `app.services.agreement.tables` gives as rows
(sample, unit|item, annotator, category), here as one `CodedItems` per (scheme, kind) and their pool, without a
tuple or a joined string per item (1.7M item rows at 100k violations samples). The figures are the rows' own, bit for
bit: the same label rows in the same order, each scheme's items drawn in bulk through its `label_items_many` when it
has one (else `label_items` per label), samples, annotators and categories numbered once for every table."""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.services.agreement_items import (
    NOT_ITEMS,
    NOT_READ,
    as_category,
    grounded_spans,
    is_span_value,
    record_items,
    split_spans,
)
from calibration.schemes.base import capabilities, registry


def coded_tables(scope: Mapping[str, Any]) -> tuple[dict[tuple[str, str], Any], dict[tuple[str, str], dict]]:
    """((scheme, kind) -> CodedItems of its items, (scheme, kind) -> span sets), as `agreement.tables(scope=scope)`
    gives them as rows and span sets. A table's samples are coded over every table (their names in `samples`)."""
    labels: dict[tuple[str, str], list[tuple[str, str, str, Any]]] = defaultdict(list)  # (sid, unit, kind, value)
    raters: dict[tuple[str, str], list[str]] = defaultdict(list)
    candidates: dict[tuple[str, str], dict[tuple[str, str], Any]] = defaultdict(dict)
    for name, data in scope.items():
        records = data["records"]
        label_kinds = dict(registry().get(name).label_kinds)
        for (sid, unit, annotator), kinds in data["labels"].items():
            if records.get(sid) is None:
                continue
            for kind, value in kinds.items():
                lk = label_kinds.get(kind)
                if lk is not None and lk.per_sample and isinstance(value, list):
                    candidates[(name, kind)][(sid, annotator)] = value
                    continue
                labels[(name, kind)].append((sid, unit, kind, value))
                raters[(name, kind)].append(annotator)
    spans, rest = split_spans(candidates)
    for key, sets in rest.items():
        for (sid, annotator), value in sets.items():  # per-sample kinds that are not spans: items of unit ''
            labels[key].append((sid, "", key[1], value))
            raters[key].append(annotator)
    samples: dict[str, int] = {}
    annotators: dict[str, int] = {}
    tables = {}
    for key, rows in labels.items():
        table = _coded(key[0], scope[key[0]]["records"], rows, raters[key], samples, annotators)
        if table is not None:
            tables[key] = table
    names = list(samples)
    people = list(annotators)
    return {k: _named(t, names, people) for k, t in tables.items()}, spans


def _coded(name: str, records: Mapping[str, Any], rows: list[tuple[str, str, str, Any]], raters: list[str],
           samples: dict[str, int], annotators: dict[str, int]) -> Any:
    """One (scheme, kind)'s CodedItems (its name lists filled in by `_named`), None when no row has an item."""
    import numpy as np
    import pandas as pd

    from calibration.annotators import CodedItems

    scheme = registry().get(name)
    many = capabilities(scheme).label_items_many
    if many is not None:
        row, item, category = many(records, rows)
        row = np.asarray(row, dtype=np.int64)
        item_code = pd.factorize(np.asarray(item), sort=False)[0]
        cat_code, uniques = category_codes(category)  # None or NaN: -1, left out as rows are
        cats = [as_category(c) for c in uniques]
    else:
        row, item_code, cat_l = rows_items(scheme, records, rows)
        cat_code, cats = _typed_factorize(cat_l)
    if not (np.asarray(cat_code) >= 0).any():  # rows: a table only for a kind with an item
        return None
    sid = np.fromiter((samples.setdefault(r[0], len(samples)) for r in rows), dtype=np.int64, count=len(rows))
    unit = pd.factorize(_objects([r[1] for r in rows]), sort=False)[0].astype(np.int64)
    who = np.fromiter((annotators.setdefault(a, len(annotators)) for a in raters), dtype=np.int64, count=len(raters))
    key = unit[row] * (int(item_code.max(initial=0)) + 1) + item_code  # unit|item -> one integer
    return CodedItems(sid[row], key, who[row], np.asarray(cat_code, dtype=np.int64), [], list(cats))


def _named(t: Any, samples: list[str], annotators: list[str]) -> Any:
    from dataclasses import replace

    return replace(t, annotators=annotators, samples=samples)


def category_codes(category: Any) -> tuple[Any, list[Any]]:
    """(codes, distinct values as Python objects) of a `label_items_many` category array: an object array's values
    as `_typed_factorize` keeps them apart, a typed one's by value."""
    import numpy as np
    import pandas as pd

    category = np.asarray(category)
    if category.dtype == object:
        return _typed_factorize(category.tolist())
    codes, uniques = pd.factorize(category, sort=False)
    return codes, np.asarray(uniques).tolist()


def _typed_factorize(values: list[Any]) -> tuple[Any, list[Any]]:
    """(codes, distinct values) of categories, kept apart as their names (repr or `kind=value`) keep them apart: True,
    1 and 1.0 (equal, one hash) three categories; values that cannot be hashed (a list) by their repr; None or NaN
    -1."""
    import numpy as np
    import pandas as pd

    types = {type(v) for v in values if v is not None}
    if len(types) <= 1 and not types - {str, int, float, bool}:  # one scalar type: by value
        codes, uniques = pd.factorize(_objects(values), sort=False)
        return codes, list(np.asarray(uniques, dtype=object))
    seen: dict[Any, int] = {}
    distinct: list[Any] = []
    codes = np.empty(len(values), dtype=np.int64)
    for i, v in enumerate(values):
        if v is None or (type(v) is float and math.isnan(v)):
            codes[i] = -1
            continue
        try:
            key: Any = (type(v), v)
            hash(key)
        except TypeError:
            key = ("repr", repr(v))
        code = seen.get(key)
        if code is None:
            code = seen[key] = len(distinct)
            distinct.append(v)
        codes[i] = code
    return codes, distinct


def rows_items(scheme: Any, records: Mapping[str, Any], rows: Sequence[tuple[str, str, str, Any]]
               ) -> tuple[Any, Any, list[Any]]:
    """(row index, item code, category) of every counted item of `rows`, read one row at a time with
    `record_items`: the path of a scheme without `label_items_many` (both coded tables take it)."""
    import numpy as np
    import pandas as pd

    row_l: list[int] = []
    item_l: list[Any] = []
    cat_l: list[Any] = []
    for i, (sid, unit, kind, value) in enumerate(rows):
        for it, cat in record_items(scheme, records.get(sid), unit, kind, value).items():
            if cat is not None:
                row_l.append(i)
                item_l.append(it)
                cat_l.append(as_category(cat))
    return np.asarray(row_l, dtype=np.int64), pd.factorize(_objects(item_l), sort=False)[0], cat_l


def _keys(values: Any) -> Any:
    """An integer array as it is (codes: factorized by value, as their names would be), anything else as objects."""
    import numpy as np

    if isinstance(values, np.ndarray) and values.dtype.kind in "iu":
        return values
    return np.asarray(values, dtype=object)


def _kept(codes: Any, names: Any, keep: Any) -> tuple[Any, Any]:
    """(codes, names) of the kept entries of a coded column, renumbered in order of first appearance among them."""
    import pandas as pd

    local, used = pd.factorize(codes[keep], sort=False)
    return local.astype("int64", copy=False), names[used]


def _objects(values: list[Any]) -> Any:
    import numpy as np

    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def pooled_codes(tables: Mapping[tuple[str, str], Any]) -> Any:
    """Every (scheme, kind) table in one, as `agreement.pooled` joins the rows: samples apart per scheme, items
    per kind, categories `kind=value` (equal names of two schemes' same kind one category)."""
    import numpy as np
    import pandas as pd

    from calibration.item_chunks import KindCodedItems

    keys = sorted(tables)
    schemes = {name: i for i, name in enumerate(sorted({n for n, _ in keys}))}
    n_samples = max(len(t.samples) for t in tables.values()) + 1
    parts = []
    item_base = 0
    names: list[str] = []
    for name, kind in keys:
        t = tables[(name, kind)]
        cat_names = [f"{kind}={c}" for c in t.categories]
        parts.append((t.sample.astype(np.int64) + schemes[name] * n_samples, t.item.astype(np.int64) + item_base,
                      t.annotator, np.where(t.category >= 0, t.category.astype(np.int64) + len(names), -1),
                      np.full(len(t), len(parts), dtype=np.int16)))
        item_base += int(t.item.max(initial=-1)) + 1
        names += cat_names
    cat_code, cats = pd.factorize(_objects(names), sort=False)
    sample, item, annotator, category, kind = (np.concatenate(c) for c in zip(*parts))
    category = np.where(category >= 0, cat_code[np.maximum(category, 0)], -1)
    first = tables[keys[0]]
    # which table each entry came from: the pool's figures then go a window of samples at a time too
    return KindCodedItems(narrow(sample), narrow(item), annotator, narrow(category), first.annotators, list(cats),
                          kind=kind)


# -- the tables straight from label columns (issue #28 items 1 and 5) ----------------------------------------------------
@dataclass
class ColumnTables:
    """What `agreement` reads of the labels: the coded item tables and span sets `coded_tables(collect_labels(...))`
    gives, and per annotator how many labels and units (sample, unit) they labeled, and which (annotator, sample,
    unit) of the work log they labeled (`worked`)."""

    items: dict[tuple[str, str], Any]
    spans: dict[tuple[str, str], dict]
    n_labels: dict[str, int]
    n_units: dict[str, int]
    worked: set[tuple[str, str, str]]
    sample_names: list[str] | None = None  # a sample code's name (SpanColumns' samples)
    annotator_names: list[str] | None = None  # an annotator code's name


@dataclass
class ValueColumns:
    """Per (sample, annotator) in label order: its sample and annotator codes (ColumnTables' names) and the number
    of its value in `values` (issue #28 item 5: no dict and no tuple per labelled sample)."""

    sample: Any
    annotator: Any
    value: Any
    values: list[Any]

    def __len__(self) -> int:
        return len(self.sample)


@dataclass
class SpanColumns(ValueColumns):
    """A per-sample kind's span sets as columns: each value's grounded spans are `values[number]` ((n, 2) start,
    end)."""


CHUNK = 20_000  # labels read and coded at a time: their decoded values (a rubric label: 1.5 kB) stay a few tens of MB


def column_tables(project: Any, schemes: Sequence[str] | None = None,
                  samples: Collection[str] | None = None, *, concurrent: bool = False) -> ColumnTables:
    """`coded_tables(collect_labels(project, schemes, samples))` and the annotators' counts, read in chunks of label
    columns (app/store/label_codes.py: a sample's labels in one chunk, each column numbered once), each chunk's items
    drawn at once and kept as integer codes: no dict per labeled unit, no decoded value past its chunk (but those of
    per-sample kinds, which are joined over the whole table as `coded_tables` joins them). The same figures, bit for
    bit. `concurrent` (the CLI): the chunks read ahead in a forked worker where one pays off
    (app/services/agreement_reader.py)."""
    from app.services.agreement_reader import WorkerGone, chunks_ahead
    from app.store.label_codes import UnknownSamples

    present = project.counts.sample_counts()
    names = sorted(s.name for s in registry() if s.name in present and (not schemes or s.name in schemes))
    worked = set(project.decisions.seconds_per_annotator_unit()) if names else set()
    # again, each scheme's samples listed, after a label of no sample (never made by Concord); in the process itself
    # after a worker that died
    for listed, ahead in ((False, concurrent), (True, False)):
        coder = _ColumnCoder(project, worked, samples)
        try:
            with chunks_ahead(project, names, skip=sorted(NOT_ITEMS), size=CHUNK, listed=listed,
                              concurrent=ahead) as chunks:
                for chunk in chunks:
                    coder.add(chunk)
        except (UnknownSamples, WorkerGone):
            continue
        return coder.finish()
    raise AssertionError("unreachable: the listed read in the process checks no sample")


class _Categories:
    """A table's categories numbered over every chunk as `_typed_factorize` numbers them over the whole table (True,
    1 and 1.0 apart; unhashable values by their repr; None or NaN -1), each named by `as_category` of its first value."""

    def __init__(self) -> None:
        self.code: dict[Any, int] = {}
        self.names: list[Any] = []

    def codes(self, values: Sequence[Any]) -> Any:
        import numpy as np

        out = np.empty(len(values), dtype=np.int64)
        for i, v in enumerate(values):
            if v is None or (type(v) is float and math.isnan(v)):
                out[i] = -1
                continue
            try:
                key: Any = (type(v), v)
                hash(key)
            except TypeError:
                key = ("repr", repr(v))
            code = self.code.get(key)
            if code is None:
                code = self.code[key] = len(self.names)
                self.names.append(as_category(v))
            out[i] = code
        return out


@dataclass
class _Listed(ValueColumns):
    """A per-sample kind's list labels that are not spans (items of unit ''): each label's value is `values[number]`."""

    @classmethod
    def empty(cls) -> _Listed:
        import numpy as np

        none = np.zeros(0, dtype=np.int64)
        return cls(none, none, none, [])


@dataclass
class _Parts:
    """A (scheme, kind) table's coded entries, chunk by chunk."""

    sample: list[Any]
    item: list[Any]
    annotator: list[Any]
    category: list[Any]
    categories: _Categories


class _ColumnCoder:
    """`column_tables`' state between chunks: samples numbered in order of appearance over every chunk, annotators
    by a dict (a few), each table's entries and categories, per-sample kinds' labels kept for the end."""

    def __init__(self, project: Any, worked: set[tuple[str, str, str]], selection: Collection[str] | None) -> None:
        self.project, self.worked_keys, self.selection = project, worked, selection
        self.sample_names: list[str] = []
        self.annotators: dict[str, int] = {}
        self.records: dict[str, Any] = {}
        self.parts: dict[tuple[str, str], _Parts] = {}
        self.deferred: dict[tuple[str, str], list[tuple]] = defaultdict(list)  # (sid, unit, kind, value, s, a)
        # per-sample kinds' list labels as columns (sample code, annotator code, value number) and the values
        self.listed: dict[tuple[str, str], list[tuple[Any, Any, Any]]] = defaultdict(list)
        self.listed_values: dict[tuple[str, str], list[Any]] = defaultdict(list)
        self.n_labels: dict[int, int] = defaultdict(int)
        self.n_units: dict[int, int] = defaultdict(int)
        self.worked: set[tuple[str, str, str]] = set()
        self._record_ids: dict[int, Any] = {}  # id(records) -> each sample code's record identity, numbered

    def _records(self, name: str) -> Any:
        got = self.records.get(name)
        if got is None:

            got = self.records[name] = (self.project.scheme_data.scheme_item_records(name)
                                        if capabilities(registry().get(name)).items_read_record else NOT_READ)
        return got

    def add(self, chunk: Any) -> None:
        """Code one chunk of labels (app/store/label_codes.py's CodedChunk: each column's codes in order of first
        appearance and its distinct values)."""
        import numpy as np
        import pandas as pd

        (s_local, s_names), (u_local, u_names), (k_all, k_names_all), (a_local, a_names), (v_code, v_names) = (
            chunk.sample, chunk.unit, chunk.kind, chunk.annotator, chunk.value)
        if self.selection is not None:
            keep = np.fromiter((s in self.selection for s in s_names.tolist()), dtype=bool, count=len(s_names))[s_local]
            # the kept labels' codes renumbered in order of first appearance among them (as the names would be)
            (s_local, s_names), (u_local, u_names), (k_all, k_names_all), (a_local, a_names), (v_code, v_names) = (
                _kept(c, names, keep) for c, names in ((s_local, s_names), (u_local, u_names), (k_all, k_names_all),
                                                       (a_local, a_names), (v_code, v_names)))
        if not len(s_local):
            return
        sample, unit, annotator, value = s_names[s_local], u_names[u_local], a_names[a_local], v_names[v_code]
        a_code = np.array([self.annotators.setdefault(a, len(self.annotators)) for a in a_names.tolist()],
                          dtype=np.int64)[a_local]
        su = s_local * (int(u_local.max()) + 1) + u_local
        pair, _ = pd.factorize(su * len(self.annotators) + a_code, sort=False)
        first = first_index(pair)
        # the people's counts: labels, and (sample, unit) per annotator, and the work log's entries they labeled
        for a, n in zip(*np.unique(a_code, return_counts=True)):
            self.n_labels[int(a)] += int(n)
        for a, n in zip(*np.unique(a_code[first == np.arange(len(first))], return_counts=True)):
            self.n_units[int(a)] += int(n)
        if self.worked_keys:
            self.worked.update(t for t in zip(annotator.tolist(), sample.tolist(), unit.tolist())
                               if t in self.worked_keys)
        s_code = s_local + len(self.sample_names)
        self.sample_names.extend(s_names.tolist())
        # per unit, each annotator's labels together in order of their first label there: the order the labels
        # reach `collect_labels`' dict (keyed sample, unit, annotator) and so every table
        order = np.argsort(first, kind="stable")
        sample, unit, value, s_code, a_code, s_local, u_local, k_all, v_code = (
            c[order] for c in (sample, unit, value, s_code, a_code, s_local, u_local, k_all, v_code))
        annotator = annotator[order]
        loads = orjson_loads()
        name = chunk.scheme
        records = self._records(name)
        # each sample's record looked up once: whether it has one, and which (equal ones are one object)
        if isinstance(records, dict):
            got = [records.get(s) for s in s_names.tolist()]
            has_record = np.fromiter((r is not None for r in got), dtype=bool, count=len(got))[s_local]
            record = pd.factorize(np.fromiter((id(r) for r in got), dtype=np.uint64, count=len(got)),
                                  sort=False)[0][s_local].astype(np.int64)
        else:  # a scheme whose items read no record
            has_record, record = np.ones(len(sample), dtype=bool), np.zeros(len(sample), dtype=np.int64)
        group = record * (int(u_local.max()) + 1) + u_local  # record and unit: what a label's items depend on
        rows = np.flatnonzero(has_record)
        if not len(rows):
            return
        label_kinds = dict(registry().get(name).label_kinds)
        k_local, k_first = pd.factorize(k_all[rows], sort=False)
        for k, kname in enumerate(k_names_all[k_first].tolist()):
            at = rows[k_local == k]
            lk = label_kinds.get(kname)
            key = (name, kname)
            if lk is not None and lk.per_sample:  # joined over the whole table at the end
                self._per_sample(key, at, sample, unit, value, v_code, v_names, s_code, a_code)
                continue
            combo, reps = distinct_coded(group[at], v_code[at])
            self._code(key, records, [(sample[at[i]], unit[at[i]], kname, loads(value[at[i]])) for i in reps],
                       combo, u_local[at], s_code[at], a_code[at])

    def _per_sample(self, key: tuple[str, str], at: Any, sample: Any, unit: Any, value: Any, v_code: Any,
                    v_names: Any, s_code: Any, a_code: Any) -> None:
        """A per-sample kind's labels (`at` of the chunk): list values are candidate span sets, (sample, annotator)
        -> value as `coded_tables` keeps them (each distinct text decoded once, equal ones one object); the others
        kept as columns for the end."""
        import numpy as np
        import pandas as pd

        loads = orjson_loads()
        t, firsts = pd.factorize(v_code[at], sort=False)
        decoded = [loads(x) for x in v_names[firsts].tolist()]
        is_list = np.fromiter((isinstance(d, list) for d in decoded), dtype=bool, count=len(decoded))[t]
        li = at[is_list]
        if len(li):
            listed = self.listed_values[key]
            number = np.full(len(decoded), -1, dtype=np.int64)
            lists = np.flatnonzero(np.fromiter((isinstance(d, list) for d in decoded), dtype=bool, count=len(decoded)))
            number[lists] = np.arange(len(listed), len(listed) + len(lists))
            listed.extend(decoded[j] for j in lists.tolist())
            self.listed[key].append((narrow(s_code[li]), narrow(a_code[li]), narrow(number[t[is_list]])))
        other = at[~is_list]
        if len(other):
            self.deferred[key].append((sample[other], unit[other], value[other], s_code[other], a_code[other]))

    def _code(self, key: tuple[str, str], records: Any, rows: list[tuple[str, str, str, Any]], combo: Any,
              unit: Any, s_code: Any, a_code: Any) -> None:
        """A table's entries of labels with their units, sample and annotator codes: `_coded` on part of a table,
        each distinct label drawn once (`rows`: (sample, unit, kind, value) of each, `combo`: each label's among
        them). An item is coded one-to-one with (unit, item) within the labels: enough, as no sample's labels are
        in two calls."""
        import numpy as np
        import pandas as pd

        parts = self.parts.get(key)
        if parts is None:
            parts = self.parts[key] = _Parts([], [], [], [], _Categories())
        scheme = registry().get(key[0])
        many = capabilities(scheme).label_items_many
        if many is not None:
            drawn, item, category = many(records, rows)
            drawn = np.asarray(drawn, dtype=np.int64)
            item_code = pd.factorize(np.asarray(item), sort=False)[0]
            local, uniques = category_codes(category)
            glob = parts.categories.codes(uniques)
            cat = np.where(np.asarray(local) >= 0, glob[np.maximum(local, 0)] if len(glob) else -1, -1)
        else:
            drawn, item_code, cat_l = rows_items(scheme, records, rows)
            cat = parts.categories.codes(cat_l)
        row, entry = expand_items(combo, len(rows), drawn)
        if not len(row):
            return
        unit_code = pd.factorize(_keys(unit), sort=False)[0].astype(np.int64)
        item = pd.factorize(unit_code[row] * (int(item_code.max(initial=0)) + 1) + item_code[entry], sort=False)[0]
        # each code in the narrowest integer type its values fit (joined parts take the widest of theirs): an
        # annotator or a category in one byte, the table 10 bytes a label, not 16 (26M labels at 1M rubric samples)
        parts.sample.append(narrow(np.asarray(s_code, dtype=np.int64)[row]))
        parts.item.append(narrow(item))
        parts.annotator.append(narrow(np.asarray(a_code, dtype=np.int64)[row]))
        parts.category.append(narrow(np.asarray(cat, dtype=np.int64)[entry]))

    def finish(self) -> ColumnTables:
        """The tables: per-sample kinds' labels joined (their lists split into span sets and items of unit '' as
        `coded_tables` splits them), every table's parts put together."""
        import numpy as np
        import pandas as pd

        from calibration.annotators import CodedItems

        spans, rest = self._split_listed()
        loads = orjson_loads()
        for key in sorted(set(self.deferred) | set(rest)):
            # the kind's other values in label order, then its lists that are not spans as items of unit ''
            parts = self.deferred.get(key, [])
            listed = rest.get(key, _Listed.empty())
            unit = np.concatenate([p[1] for p in parts] + [_objects([""] * len(listed))])
            n_text = sum(len(p[2]) for p in parts)
            # distinct by JSON text, the lists by their repr (after a NUL: no JSON text starts with one), each
            # distinct text numbered (a list's repr made once per value, not per label)
            texts, by_text = pd.factorize(np.concatenate([p[2] for p in parts] + [_objects([])]), sort=False)
            reprs = pd.factorize(_objects(["\0" + repr(v) for v in listed.values]), sort=False)[0]
            text = np.concatenate([texts.astype(np.int64), reprs[listed.value].astype(np.int64) + len(by_text)])
            s_code = np.concatenate([p[3] for p in parts] + [np.asarray(listed.sample, dtype=np.int64)])
            a_code = np.concatenate([p[4] for p in parts] + [np.asarray(listed.annotator, dtype=np.int64)])
            records = self._records(key[0])
            combo, first = distinct_coded(self._record_unit_codes(records, s_code, unit), text)
            rows = [(self.sample_names[s_code[i]], unit[i], key[1],
                     loads(by_text[texts[i]]) if i < n_text else listed.values[listed.value[i - n_text]])
                    for i in first.tolist()]
            self._code(key, records, rows, combo, unit, s_code, a_code)
        people = list(self.annotators)
        items = {}
        for key, p in self.parts.items():
            if not p.category:
                continue
            category = np.concatenate(p.category)
            if not (category >= 0).any():  # as `coded_tables`: a table only for a kind with an item
                continue
            # each column joined, then its parts let go: one column's parts and join at a time, not the table twice
            items[key] = CodedItems(_joined(p.sample), _joined(p.item), _joined(p.annotator), category, people,
                                    list(p.categories.names), samples=self.sample_names)
            p.category.clear()
        return ColumnTables(items, spans, {people[a]: n for a, n in self.n_labels.items()},
                            {people[a]: n for a, n in self.n_units.items()}, self.worked, self.sample_names, people)

    def _split_listed(self) -> tuple[dict[tuple[str, str], Any], dict[tuple[str, str], _Listed]]:
        """`split_spans` of the per-sample list labels: a kind whose every value is a span list (and some span
        marked) as SpanColumns, each distinct value's grounded spans found once; the others as _Listed columns, in
        the order of `coded_tables`' (sample, annotator) -> value dicts. A (sample, annotator) labelled twice in one
        kind (the dict kept the last value): every kind through the dicts, as before."""
        import numpy as np

        columns = {key: tuple(np.concatenate(c) for c in zip(*parts)) for key, parts in self.listed.items()}
        n_a = max(len(self.annotators), 1)
        if any(len(np.unique(s.astype(np.int64) * n_a + a)) < len(s) for s, a, _v in columns.values()):
            candidates = {key: self._as_dict(key, *c) for key, c in columns.items()}
            spans, rest = split_spans(candidates)
            out: dict[tuple[str, str], _Listed] = {}
            for key, sets in rest.items():
                codes = self._codes_dict(*columns[key][:2])
                pairs = [codes[k] for k in sets]
                out[key] = _Listed(np.asarray([c[0] for c in pairs], dtype=np.int64),
                                   np.asarray([c[1] for c in pairs], dtype=np.int64),
                                   np.arange(len(sets), dtype=np.int64), list(sets.values()))
            return spans, out
        spans: dict[tuple[str, str], Any] = {}
        listed: dict[tuple[str, str], _Listed] = {}
        for key, (s, a, v) in columns.items():
            values = self.listed_values[key]
            used = np.unique(v).tolist()
            if all(is_span_value(values[j]) for j in used) and any(values[j] for j in used):
                grounded = [np.asarray(grounded_spans(x), dtype=np.int64).reshape(-1, 2) for x in values]
                spans[key] = SpanColumns(s, a, v, grounded)
            else:  # no (sample, annotator) twice: the columns in order are the dict's entries
                listed[key] = _Listed(s, a, np.asarray(v, dtype=np.int64), values)
        return spans, listed

    def _record_unit_codes(self, records: Any, s_code: Any, unit: Any) -> Any:
        """`record_unit_codes` of labels given by sample code: each sample's record looked up once for every kind
        (its record's identity numbered over every sample code, kept per records mapping)."""
        import numpy as np
        import pandas as pd

        if isinstance(records, dict):
            rec_of = self._record_ids.get(id(records))
            if rec_of is None or len(rec_of) < len(self.sample_names):
                get = records.get
                ids = np.fromiter((id(get(n)) for n in self.sample_names), dtype=np.uint64, count=len(self.sample_names))
                rec_of = self._record_ids[id(records)] = pd.factorize(ids, sort=False)[0].astype(np.int64)
            rec = rec_of[np.asarray(s_code, dtype=np.int64)]
        else:  # a scheme whose items read no record
            rec = np.zeros(len(s_code), dtype=np.int64)
        u = pd.factorize(np.asarray(unit, dtype=object), sort=False)[0]
        return pd.factorize(rec * (int(u.max(initial=0)) + 1) + u, sort=False)[0]

    def _as_dict(self, key: tuple[str, str], s: Any, a: Any, v: Any) -> dict[tuple[str, str], Any]:
        people = list(self.annotators)
        values = self.listed_values[key]
        out: dict[tuple[str, str], Any] = {}
        for sc, ac, vc in zip(s.tolist(), a.tolist(), v.tolist()):
            out[(self.sample_names[sc], people[ac])] = values[vc]
        return out

    def _codes_dict(self, s: Any, a: Any) -> dict[tuple[str, str], tuple[int, int]]:
        people = list(self.annotators)
        return {(self.sample_names[sc], people[ac]): (sc, ac) for sc, ac in zip(s.tolist(), a.tolist())}


def span_figures(project: Any, read: ColumnTables, iou: float, n_boot: int, seed: int
                 ) -> tuple[dict[tuple[str, str], dict[str, Any]], dict[str, Any] | None]:
    """`span_agreement` of each span kind of `read` and, with more than one, of their pool (kinds and schemes kept
    apart in the samples), from SpanColumns a window of samples at a time (`calibration.span_chunks`); span sets
    given as dicts (the reference of the tests) through `span_agreement` itself. The same figures either way."""
    from calibration.annotators import span_agreement

    spans = read.spans
    if not spans:
        return {}, None
    keys = sorted(spans)
    if not all(isinstance(spans[k], SpanColumns) for k in keys):
        lengths = project.decisions.text_lengths()
        per = {k: span_agreement(spans[k], iou, lengths=lengths, n_boot=n_boot, seed=seed) for k in keys}
        if len(spans) == 1:
            return per, None
        pooled = {(f"{n}:{k}:{s}", a): v for n, k in keys for (s, a), v in spans[(n, k)].items()}
        pooled_lengths = {f"{n}:{k}:{s}": lengths[s] for n, k in keys for (s, _) in spans[(n, k)]}
        return per, span_agreement(pooled, iou, lengths=pooled_lengths, n_boot=n_boot, seed=seed)
    import numpy as np

    from calibration.span_chunks import span_agreement_columns

    names, people = read.sample_names or [], read.annotator_names or []
    by_code = _span_lengths(project, names, np.unique(np.concatenate([spans[k].sample for k in keys])))
    per = {k: span_agreement_columns(spans[k].sample, spans[k].annotator, spans[k].value, spans[k].values, people,
                                     iou, lengths=by_code, n_boot=n_boot, seed=seed) for k in keys}
    if len(spans) == 1:
        return per, None
    # the pool: each kind's samples after the previous kinds' (numbered anew), values numbered after theirs
    sample, annotator, value, values, pooled_lengths = [], [], [], [], []
    base = 0
    for k in keys:
        c = spans[k]
        first = np.r_[True, c.sample[1:] != c.sample[:-1]]
        sample.append(base + np.cumsum(first) - 1)
        pooled_lengths.append(by_code[c.sample[first]])
        base += int(first.sum())
        annotator.append(c.annotator)
        value.append(np.asarray(c.value, dtype=np.int64) + len(values))
        values.extend(c.values)
    return per, span_agreement_columns(np.concatenate(sample), np.concatenate(annotator), np.concatenate(value),
                                       values, people, iou, lengths=np.concatenate(pooled_lengths), n_boot=n_boot,
                                       seed=seed)


def _span_lengths(project: Any, names: Sequence[str], codes: Any) -> Any:
    """Each span sample's text length by its sample code (the others 0), read from the samples a chunk at a time
    and found through an index of the span samples' names: no dict of every sample's length."""
    import numpy as np
    import pandas as pd

    index = pd.Index(_objects([names[c] for c in codes.tolist()]))
    by_code = np.zeros(len(names), dtype=np.int64)
    found = 0
    for ids, lengths in project.decisions.text_length_chunks():
        pos = index.get_indexer(_objects(list(ids)))
        hit = pos >= 0
        by_code[codes[pos[hit]]] = np.asarray(lengths, dtype=np.int64)[hit]
        found += int(hit.sum())
    if found < len(codes):
        raise ValueError("a sample with span labels has no text in the project")
    return by_code


def narrow(codes: Any) -> Any:
    """Integer codes (-1 for none) in the narrowest of int8, int16, int32 that holds them."""
    import numpy as np

    codes = np.asarray(codes)
    low, high = (int(codes.min()), int(codes.max())) if len(codes) else (0, 0)
    for t in (np.int8, np.int16, np.int32):
        if np.iinfo(t).min <= low and high <= np.iinfo(t).max:
            return codes.astype(t)
    return codes.astype(np.int64)


def _joined(parts: list[Any]) -> Any:
    """The parts of a column in one array, the list emptied (its arrays freed as soon as nothing else holds them)."""
    import numpy as np

    out = np.concatenate(parts)
    parts.clear()
    return out


def distinct_labels(records: Any, sample: Any, unit: Any, text: Any, kind: Any = None) -> tuple[Any, Any]:
    """(each label's number among the distinct ones, the first label of each) of labels given as their sample, unit,
    value's JSON text (or another text one-to-one with the value) and kind (None: all of one kind): a label's items
    depend on its record, unit, kind and value only (`Scheme.label_items`), so labels with the same record object
    (the store shares equal ones), unit, kind and text have the same items and are drawn once (annotators who agree
    give the same text; violations' small match lists repeat across samples)."""
    return distinct_coded(record_unit_codes(records, sample, unit), text, kind)


def record_unit_codes(records: Any, sample: Any, unit: Any) -> Any:
    """A code per label, equal for labels of the same record object and unit name (`distinct_labels`)."""
    import numpy as np
    import pandas as pd

    n = len(sample)
    if isinstance(records, dict):
        get = records.get
        rec = pd.factorize(np.fromiter((id(get(s)) for s in sample), dtype=np.uint64, count=n), sort=False)[0]
    else:  # a scheme whose items read no record
        rec = np.zeros(n, dtype=np.int64)
    u = pd.factorize(np.asarray(unit, dtype=object), sort=False)[0]
    return pd.factorize(rec.astype(np.int64) * (int(u.max(initial=0)) + 1) + u, sort=False)[0]


def distinct_coded(group: Any, text: Any, kind: Any = None) -> tuple[Any, Any]:
    """`distinct_labels` of labels whose record and unit are given as one integer code each (`record_unit_codes`)."""
    import numpy as np
    import pandas as pd

    ru = np.asarray(group, dtype=np.int64)
    if kind is not None:
        k = pd.factorize(np.asarray(kind, dtype=object), sort=False)[0]
        ru = pd.factorize(ru * (int(k.max(initial=0)) + 1) + k, sort=False)[0].astype(np.int64)
    t, distinct = pd.factorize(_keys(text), sort=False)
    combo, _ = pd.factorize(ru * max(len(distinct), 1) + t, sort=False)
    first = np.empty(int(combo.max(initial=-1)) + 1, dtype=np.int64)
    first[combo[::-1]] = np.arange(len(combo) - 1, -1, -1)
    return combo, first


def expand_items(combo: Any, n_drawn: int, drawn_row: Any) -> tuple[Any, Any]:
    """(label of each entry, the drawn item entry it copies) when the distinct labels' items were drawn once:
    `drawn_row` the drawn label of each drawn entry (ascending, as `label_items_many` gives them), `combo` each
    label's distinct label; entries in label order, each label's items in the order drawn."""
    import numpy as np

    drawn_row = np.asarray(drawn_row, dtype=np.int64)
    per = np.bincount(drawn_row, minlength=n_drawn)
    start = np.concatenate([[0], np.cumsum(per)])
    n_of = per[combo]
    row = np.repeat(np.arange(len(combo), dtype=np.int64), n_of)
    within = np.arange(len(row), dtype=np.int64) - np.repeat(np.cumsum(n_of) - n_of, n_of)
    return row, start[combo[row]] + within


def first_index(codes: Any) -> Any:
    """Per entry, the index of the first entry with its code."""
    import numpy as np

    first = np.empty(int(codes.max(initial=-1)) + 1, dtype=np.int64)
    first[codes[::-1]] = np.arange(len(codes) - 1, -1, -1)  # the last write of each code is its first entry
    return first[codes]


def orjson_loads() -> Any:
    import orjson  # several times faster than json on the many small values

    return orjson.loads
