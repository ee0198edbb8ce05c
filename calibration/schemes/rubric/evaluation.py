"""The rubric scheme's evaluation hook (`concord evaluate`): per trait, the metrics from the LLM's buckets and,
where humans checked them, agreement with the humans (rubric_agreement)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from calibration.schemes.base import Report, Table
from calibration.schemes.rubric.agreement import LABEL_COUNT, TraitCounts, add_pairs
from calibration.schemes.rubric.buckets import Normalised, bucket_keys
from calibration.schemes.rubric.columns import RubricColumns, ValueCodes, rubric_columns
from calibration.schemes.rubric.records import RubricSample
from calibration.schemes.rubric.traits import BUCKET_NAMES, MetricTrait


def _fmt(x: Any) -> str:
    return "–" if x is None else f"{x:.3f}"


def evaluate_report(records: Sequence[RubricSample] | RubricColumns,
                    labels: Mapping[tuple[str, str], Mapping[str, Any]], options: Mapping[str, Any]) -> Report:
    """`data`: {trait: {"samples", "llm_metrics" (means), "agreement" (or None)}}. `records`: the records, or the
    units as columns (what the store reads for evaluate); TraitCounts computes every figure from count columns
    (`trait_counts`)."""
    counts = trait_counts(records if isinstance(records, RubricColumns) else rubric_columns(records), labels)
    data: dict[str, Any] = {}
    for name, tally in counts.items():
        data[name] = {"samples": len(tally.llm), "llm_metrics": tally.llm_means(),
                      "agreement": tally.agreement() if len(tally.checked) else None}
    cols = ("trait", "samples", "precision", "recall", "f1", "checked", "kept", "kappa", "ΔF1 LLM−human")
    rows_out = []
    for name, r in data.items():
        a = r["agreement"] or {}
        m = r["llm_metrics"]
        rows_out.append((name, str(r["samples"]), _fmt(m.get("precision")), _fmt(m.get("recall")), _fmt(m.get("f1")),
                         str(a.get("n_samples", 0)), _fmt(a.get("kept_share")), _fmt(a.get("kappa")),
                         _fmt(a.get("metric_deltas", {}).get("f1"))))
    table = Table("Rubric traits: metrics from the LLM's buckets, and agreement where humans checked them", cols,
                  tuple(rows_out))
    return Report("rubric", (table,) if rows_out else (), data)


def trait_counts(cols: RubricColumns, labels: Mapping[tuple[str, str], Mapping[str, Any]]) -> dict[str, TraitCounts]:
    """Trait name -> its TraitCounts (in order of the units' first mention), the columns the per-unit loop added
    unit by unit: each distinct (definition, LLM buckets, human buckets) is read once, in order of first appearance
    (a malformed one raises as the loop did), its bucket sizes and aligned pairs counted once; the units take
    their group's row by array indexing, in unit order (the metric means add up the same floats in the same order),
    and a trait's confusion counts are its groups' times how many checked units each has (whole numbers)."""
    import numpy as np

    n = len(cols)
    human = ValueCodes()
    human_of = np.full(n, -1, dtype=np.int64)
    present = cols.trait[np.sort(np.unique(cols.trait, return_index=True)[1])].tolist()  # in order of first use
    built = {t: MetricTrait.from_dict(cols.traits[t], strict=False) for t in present}  # each definition once
    names = {t: trait.name for t, trait in built.items()}
    get = labels.get
    for i, (sid, t) in enumerate(zip(cols.sample, cols.trait.tolist())):
        h = (get((sid, names[t])) or {}).get("buckets")
        if h is not None:
            human_of[i] = human(h)
    key = (cols.trait * max(len(cols.values), 1) + cols.value) * (len(human.values) + 1) + human_of + 1
    _, first, group = np.unique(key, return_index=True, return_inverse=True)
    group = group.reshape(-1)
    order = np.argsort(first, kind="stable")  # the groups in order of first appearance
    n_groups = len(first)
    sizes = np.zeros((n_groups, 2 * len(BUCKET_NAMES)), dtype=np.int64)  # LLM tp..tn, human tp..tn
    confs = np.zeros((n_groups, LABEL_COUNT * LABEL_COUNT), dtype=np.int64)
    normal = Normalised()  # each distinct excerpt normalised once
    decode = _decoder(cols.encoded)
    llm_keys: dict[tuple[int, int], tuple[list[str], ...]] = {}
    for g in order.tolist():
        i = int(first[g])
        t, v, h = int(cols.trait[i]), int(cols.value[i]), int(human_of[i])
        trait = built[t]
        llm = llm_keys.get((t, v))
        if llm is None:
            llm = llm_keys[(t, v)] = bucket_keys(trait, decode(cols.values[v]), normal)
        sizes[g, :len(BUCKET_NAMES)] = [len(k) for k in llm]
        if h >= 0:
            hk = bucket_keys(trait, human.values[h], normal)
            sizes[g, len(BUCKET_NAMES):] = [len(k) for k in hk]
            conf = [0] * (LABEL_COUNT * LABEL_COUNT)
            add_pairs(llm, hk, conf)
            confs[g] = conf
    out: dict[str, TraitCounts] = {}
    by_name: dict[str, list[int]] = {}  # trait name -> its definitions' codes, in order of first appearance
    for t in present:
        by_name.setdefault(names[t], []).append(t)
    for name, defs in by_name.items():
        units = np.flatnonzero(np.isin(cols.trait, defs))
        tally = out[name] = TraitCounts()
        pos_of = np.zeros(max(defs) + 1, dtype=np.int64)
        for t in defs:  # each definition's position, in order of first appearance (equal definitions share one)
            pos_of[t] = tally.position(built[t])
        g, pos = group[units], pos_of[cols.trait[units]][:, None]
        checked = human_of[units] >= 0
        tally.llm = np.hstack([sizes[g, :len(BUCKET_NAMES)], pos])
        tally.checked = np.hstack([sizes[g[checked]], pos[checked]])
        tally.conf = np.bincount(g[checked], minlength=n_groups) @ confs
    return out


def _decoder(encoded: bool) -> Any:
    """How a distinct LLM value is read: JSON text by orjson (as the records were loaded), else as given."""
    if not encoded:
        return lambda value: value
    import orjson

    return orjson.loads
