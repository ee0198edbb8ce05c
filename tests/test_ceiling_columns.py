"""The human ceiling from label columns and integer-coded items (issue #28) gives every figure and interval end the
ceiling gave from per-annotator dicts and a DataFrame of item rows (kept below as the reference), on projects of
every scheme generated from the demo data (three annotators who disagree, as benchmarks/bench_evaluate_schemes.py
makes them), with the metric's decisions as `concord evaluate` passes them and from the stored machine labels."""
from __future__ import annotations

import importlib.util
import random
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from app.cli import main
from app.services.agreement import NOT_ITEMS, json_finite, record_items, records_by_id
from app.services.ceiling import (
    METRIC,
    RESOLVED,
    _mean,
    _run_evaluate,
    ceiling,
    machine_decision,
    own_ceiling,
)
from app.store import Project
from calibration.annotators import item_agreement
from calibration.schemes.base import registry

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
SCHEMES = ("violations", "rubric", "trace", "rgb", "addm", "judge")


def _bench() -> Any:
    sys.path.insert(0, str(BENCH))  # benchmarks/ is not a package: its modules import each other by name
    try:
        spec = importlib.util.spec_from_file_location("bench_evaluate_schemes", BENCH / "bench_evaluate_schemes.py")
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        spec.loader.exec_module(module)  # type: ignore[union-attr]
        return module
    finally:
        sys.path.remove(str(BENCH))


def _project(tmp_path: Path, scheme: str, n: int, seed: int) -> Path:
    records, labels = _bench().write_inputs(scheme, n, tmp_path, seed)
    rng = random.Random(seed)  # ben and cy leave some units out: some units have one annotator, some two
    lines = labels.read_text(encoding="utf-8").splitlines()
    labels.write_text("".join(f"{x}\n" for x in lines if '"annotator": "ana"' in x or rng.random() < 0.6),
                      encoding="utf-8")
    path = tmp_path / f"{scheme}.concord"
    assert main(["init", str(path)]) == 0
    assert main(["import", str(path), str(records)]) == 0
    assert main(["labels", "import", str(path), str(labels)]) == 0
    return path


# -- the ceiling before the columns (dicts per annotator, a DataFrame of item rows, label_items per row) -------------
def _old_ceiling(project: Any, scheme_name: str, *, n_boot: int, seed: int, machine: Any, per_unit: Any) -> Any:
    scheme = registry().get(scheme_name)
    by_unit: dict[tuple[str, str], dict[str, dict[str, Any]]] = defaultdict(dict)
    for name, sid, unit, kind, annotator, value in project.decisions.annotator_label_rows(skip=sorted(NOT_ITEMS)):
        if name == scheme_name and kind not in NOT_ITEMS:
            by_unit[(sid, unit)].setdefault(annotator, {})[kind] = value
    shared = {k: v for k, v in by_unit.items() if len(v) >= 2}
    if not shared:
        return None
    records = project.scheme_data.scheme_item_records(scheme_name)
    full, stored = None, {}
    resolved = project.scheme_data.scheme_labels(scheme_name)
    humans, metric_rows = [], []
    for (sid, unit), by_annotator in shared.items():
        if records.get(sid) is None:
            continue
        for annotator, kinds in by_annotator.items():
            humans += [(sid, unit, kind, value, annotator) for kind, value in kinds.items()]
        decided = machine.get((sid, unit)) if machine is not None else None
        if decided is None:
            if full is None:
                full, stored = records_by_id(project, scheme_name), project.samples.newest_machine_values(scheme_name)
            decided = machine_decision(project, scheme, full.get(sid), sid, unit, stored)
        if decided:
            metric_rows += [(sid, unit, k, v, METRIC) for k, v in decided.items() if k not in NOT_ITEMS]
            metric_rows += [(sid, unit, k, v, RESOLVED) for k, v in (resolved.get((sid, unit)) or {}).items()
                            if k not in NOT_ITEMS]
    items = [(sid, f"{unit}|{kind}|{it}", who, repr(cat)) for sid, unit, kind, value, who in metric_rows + humans
             for it, cat in record_items(scheme, records.get(sid), unit, kind, value).items()]
    n_metric = sum(len(record_items(scheme, records.get(r[0]), r[1], r[2], r[3])) for r in metric_rows)
    table = pd.DataFrame.from_records(items, columns=["sample", "item", "annotator", "category"])
    if n_metric == len(table):
        return None
    hh = item_agreement(table.iloc[n_metric:], n_boot=n_boot, seed=seed)
    out: dict[str, Any] = {
        "units": len(shared), "annotators": int(table["annotator"].iloc[n_metric:].nunique()),
        "human_human": {"kappa": hh["overall"]["kappa"], "alpha": hh["overall"]["alpha"],
                        "mean_pair_kappa": _mean(p["kappa"]["estimate"] for p in hh["pairs"])},
        "metric_human": None, "note": "",
    }
    if per_unit:
        out["metric_human"] = {"kappa_vs_resolved": None, "mean_kappa_vs_each": None, "items": len(shared),
                               "per_unit": dict(per_unit)}
        return json_finite(out)
    pair = table.groupby(["sample", "item"], sort=False).ngroup().to_numpy()
    labeled = np.zeros(int(pair.max()) + 1, dtype=bool)
    labeled[pair[:n_metric][table["annotator"].to_numpy()[:n_metric] == METRIC]] = True
    shared_item = labeled[pair]
    if not labeled.any():
        out["note"] = "the metric's labels carry no items to compare (no stored machine label)"
        return json_finite(out)
    metric_side = np.arange(len(table)) < n_metric
    mh = item_agreement(table[shared_item & metric_side], n_boot=n_boot, seed=seed)
    each = item_agreement(table[shared_item & (table["annotator"].to_numpy() != RESOLVED)], n_boot=0)
    out["metric_human"] = {"kappa_vs_resolved": mh["pairs"][0]["kappa"] if mh["pairs"] else None,
                           "mean_kappa_vs_each": _mean(p["kappa"]["estimate"] for p in each["pairs"]
                                                       if METRIC in (p["a"], p["b"])),
                           "items": int(labeled.sum())}
    return json_finite(out)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_the_ceiling_from_columns_equals_the_ceiling_from_rows(tmp_path: Path, scheme: str) -> None:
    path = _project(tmp_path, scheme, 40, seed=SCHEMES.index(scheme))
    with Project.open(path) as p:
        machine, data = _run_evaluate(p, scheme)
        per_unit = own_ceiling(registry().get(scheme), data)
        for decided, own in ((machine or None, per_unit), (None, None)):  # as `concord evaluate`; stored labels only
            got = ceiling(p, scheme, n_boot=200, seed=5, machine=decided, per_unit=own)
            want = _old_ceiling(p, scheme, n_boot=200, seed=5, machine=decided, per_unit=own)
            labeled = {(r[1], r[2]) for r in p.decisions.annotator_label_rows(skip=sorted(NOT_ITEMS))}
            assert got is not None and 10 < got["units"] < len(labeled)
            assert repr(got) == repr(want)
