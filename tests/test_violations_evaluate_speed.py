"""Issue #28 (violations `evaluate`): the faster paths give exactly what the computations they replace gave, on
generated data -- the items of many labels at once (`label_items_many`) against `label_items` per label, the human
ceiling drawn through it against the per-label path, the humans' leaderboard against its pandas formulation."""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from app.services.agreement import record_items
from app.store import Change, Project
from calibration.schemes.base import registry
from calibration.schemes.violations import Violation, ViolationSample

TEXT = "The cat sat on the mat. It was red and tall."
CHECKERS = ("c1@1|m", "c2@1|m", "c3@2|m")


def _samples(rng: np.random.Generator, n: int) -> list[ViolationSample]:
    def violations(k: int) -> tuple[Violation, ...]:
        return tuple(Violation(f"r{j}", 4 * j % 40, 4 * j % 40 + 3) for j in range(k))

    return [ViolationSample(f"s{i}", TEXT, violations(int(rng.integers(0, 4))),
                            {c: violations(int(rng.integers(0, 5))) for c in CHECKERS if rng.random() < 0.8})
            for i in range(n)]


def _value(rng: np.random.Generator) -> Any:
    """A matches value: mostly pairs (some out of range, repeated or negative), sometimes one label_items refuses."""
    roll = rng.random()
    if roll < 0.05:
        return [[0]]  # not a pair: no items
    if roll < 0.08:
        return None
    return [[int(rng.integers(-1, 5)), int(rng.integers(-1, 6))] for _ in range(int(rng.integers(0, 4)))]


def test_label_items_many_is_label_items_of_each_row() -> None:
    """Rows in order, items in label_items' order and categories equal; an item's code is one-to-one with its key."""
    from app.schemes.violations.store import SpanCounts
    from calibration.schemes.violations.parse import ViolationRecord

    scheme = registry().get("violations")
    rng = np.random.default_rng(4)
    records = {}
    for i in range(300):
        preds = {c: range(int(rng.integers(0, 5))) for c in CHECKERS if rng.random() < 0.8}
        records[f"s{i}"] = ViolationRecord(SpanCounts(range(int(rng.integers(0, 4))), preds), None, {})
    rows = [(f"s{int(rng.integers(0, 320))}", str(rng.choice([*CHECKERS, ""])),
             "matches" if rng.random() < 0.85 else "gt_wrong", _value(rng)) for _ in range(3000)]
    row, item, category = scheme.label_items_many(records, rows)
    want = [(i, key, cat) for i, (sid, unit, kind, value) in enumerate(rows)
            for key, cat in record_items(scheme, records.get(sid), unit, kind, value).items()]
    assert len(want) > 2000 and list(row) == [w[0] for w in want]
    assert [int(c) for c in category] == [w[2] for w in want]
    code_of: dict[str, int] = {}
    key_of: dict[int, str] = {}
    for code, (_, key, _) in zip(item.tolist(), want):
        assert code_of.setdefault(key, code) == code and key_of.setdefault(code, key) == key


def _project(tmp_path: Path, seed: int) -> Project:
    rng = np.random.default_rng(seed)
    p = Project.create(tmp_path / f"p{seed}.concord")
    samples = _samples(rng, 60)
    p.store("violations").write_violation_samples(samples)
    for s in samples:
        for c in s.predictions:
            for who in ("ana", "ben", "cy"):
                if rng.random() < 0.7:
                    value = [[g, q] for g in range(len(s.ground_truth)) for q in range(len(s.predictions[c]))
                             if rng.random() < 0.3]
                    p.decisions.record(who, [Change(s.id, c, "matches", value)])
            if rng.random() < 0.5:
                p.samples.save_machine_label(s.id, c, "matcher", {"predictions": [], "matches": [[0, 0]]})
    return p


@pytest.mark.parametrize("seed", [1, 2])
def test_the_ceiling_drawn_at_once_equals_the_ceiling_drawn_label_by_label(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """Every figure and interval end of the human ceiling (stored machine labels, and the matcher's decisions as
    `concord evaluate` passes them) is the same through `label_items_many` as through `label_items` per label."""
    import app.services.ceiling as ceiling_module
    from app.services.ceiling import ceiling, machine_decisions

    p = _project(tmp_path, seed)
    machine = machine_decisions(p, "violations", {"embedding": "jaccard"})
    got = [ceiling(p, "violations", n_boot=300, seed=seed), ceiling(p, "violations", n_boot=300, machine=machine)]
    real = ceiling_module.capabilities
    monkeypatch.setattr(ceiling_module, "capabilities",
                        lambda s: dataclasses.replace(real(s), label_items_many=None))
    want = [ceiling(p, "violations", n_boot=300, seed=seed), ceiling(p, "violations", n_boot=300, machine=machine)]
    assert got[0]["metric_human"] is not None and got[1]["metric_human"]["items"] > 50
    assert repr(got) == repr(want)


def _old_human_leaderboard(table: Any, matches: list[tuple[int, int, int]], labeled: list[int]) -> dict[str, Any]:
    """calibration.schemes.violations.evaluation.human_leaderboard before issue #28 (a pandas lookup per unit)."""
    from calibration.schemes.violations.metrics import prf

    groups = table.groups.iloc[list(labeled)]
    matched = pd.Series([g for g, _, _ in matches]).value_counts() if matches else pd.Series(dtype=int)
    out: dict[str, dict[str, float]] = {}
    for checker, grp in groups.groupby("checker"):
        tp = int(sum(matched.get(g, 0) for g in grp.index))
        fp = int(grp["n_pred"].sum()) - tp
        fn = int(grp["n_gt"].sum()) - tp
        p, r, f = prf(tp, fp, fn)
        out[str(checker)] = {"units": len(grp), "tp": tp, "fp": fp, "fn": fn,
                             "precision": float(p), "recall": float(r), "f1": float(f)}
    return out


@pytest.mark.parametrize("share", [0.0, 0.3, 1.0])
def test_human_leaderboard_equals_its_pandas_formulation(share: float) -> None:
    from calibration.schemes.violations.evaluation import human_leaderboard
    from calibration.schemes.violations.pairs import build_pair_table

    rng = np.random.default_rng(int(share * 10))
    table = build_pair_table(_samples(rng, 200), "jaccard")
    labeled = sorted(int(g) for g in np.flatnonzero(rng.random(len(table.groups)) < share))
    matches = sorted((g, int(rng.integers(0, 3)), int(rng.integers(0, 4))) for g in labeled for _ in
                     range(int(rng.integers(0, 3))))
    got = human_leaderboard(table, matches, labeled)
    assert got == _old_human_leaderboard(table, matches, labeled)
    assert (len(got) == 3) == bool(share)
