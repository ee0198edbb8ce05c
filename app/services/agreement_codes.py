"""Agreement's item tables as integer codes (issue #28): what `app.services.agreement.tables` gives as rows
(sample, unit|item, annotator, category), here as one `CodedItems` per (scheme, kind) and their pool, without a
tuple or a joined string per item (1.7M item rows at 100k violations samples). The figures are the rows' own, bit for
bit: the same label rows in the same order, each scheme's items drawn in bulk through its `label_items_many` when it
has one (else `label_items` per label), samples, annotators and categories numbered once for every table."""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from app.services.agreement_items import as_category, record_items, split_spans
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
        row_l: list[int] = []
        item_l: list[Any] = []
        cat_l: list[Any] = []
        for i, (sid, unit, kind, value) in enumerate(rows):
            for it, cat in record_items(scheme, records.get(sid), unit, kind, value).items():
                if cat is not None:
                    row_l.append(i)
                    item_l.append(it)
                    cat_l.append(as_category(cat))
        row = np.asarray(row_l, dtype=np.int64)
        item_code = pd.factorize(_objects(item_l), sort=False)[0]
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

    from calibration.annotators import CodedItems

    keys = sorted(tables)
    schemes = {name: i for i, name in enumerate(sorted({n for n, _ in keys}))}
    n_samples = max(len(t.samples) for t in tables.values()) + 1
    parts = []
    item_base = 0
    names: list[str] = []
    for name, kind in keys:
        t = tables[(name, kind)]
        cat_names = [f"{kind}={c}" for c in t.categories]
        parts.append((t.sample + schemes[name] * n_samples, t.item + item_base, t.annotator,
                      np.where(t.category >= 0, t.category + len(names), -1)))
        item_base += int(t.item.max(initial=-1)) + 1
        names += cat_names
    cat_code, cats = pd.factorize(_objects(names), sort=False)
    sample, item, annotator, category = (np.concatenate(c) for c in zip(*parts))
    category = np.where(category >= 0, cat_code[np.maximum(category, 0)], -1)
    first = tables[keys[0]]
    return CodedItems(sample, item, annotator, category, first.annotators, list(cats))
