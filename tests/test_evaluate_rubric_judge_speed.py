"""Issue #28 items 1 and 5 for the rubric and judge schemes' `evaluate`: each faster path gives the figures of the
computation it replaced (the old formulation, kept here, next to the new one on generated data, compared exactly)."""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from calibration.schemes.judge.evaluation import ceiling


def _old_judge_ceiling(records_ids: list[str], levels: dict[str, np.ndarray], judge_votes: dict[str, np.ndarray],
                       *, n_boot: int, seed: int, ci: float) -> dict[str, Any] | None:
    """calibration.schemes.judge.evaluation.ceiling before issue #28: a tuple per label."""
    from calibration.annotators import item_agreement

    if len(levels) < 2:
        return None
    humans = [(sid, "label", name, int(v)) for name, row in levels.items()
              for sid, v in zip(records_ids, row) if not np.isnan(v)]
    hh = item_agreement(humans, n_boot=n_boot, seed=seed, ci=ci)
    if not hh["pairs"]:
        return None
    pair_kappas = [p["kappa"]["estimate"] for p in hh["pairs"] if math.isfinite(p["kappa"]["estimate"])]
    out: dict[str, Any] = {"annotators": len(levels), "samples": hh["n_items"], "fleiss_kappa": hh["overall"]["kappa"],
                           "alpha": hh["overall"]["alpha"],
                           "mean_pair_kappa": float(np.mean(pair_kappas)) if pair_kappas else math.nan,
                           "pairs": [{"a": p["a"], "b": p["b"], "n": p["n_items"], "kappa": p["kappa"]}
                                     for p in hh["pairs"]], "judges": {}}
    for judge, votes in judge_votes.items():
        rows = humans + [(sid, "label", "\x00judge", int(v)) for sid, v in zip(records_ids, votes) if not np.isnan(v)]
        each = item_agreement(rows, n_boot=0)
        ks = [p["kappa"]["estimate"] for p in each["pairs"] if "\x00judge" in (p["a"], p["b"])
              and math.isfinite(p["kappa"]["estimate"])]
        out["judges"][judge] = float(np.mean(ks)) if ks else math.nan
    return out


def _same(a: Any, b: Any) -> bool:
    """Equal structure and values, NaN equal to NaN (floats compared exactly)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_judge_ceiling_from_codes_equals_the_tuple_rows(seed: int) -> None:
    """The ceiling's labels as integer codes: every figure and interval end of the tuple rows it replaced, with
    annotators who skip samples (the first annotator too, so samples first appear out of record order), a judge
    without a score on some samples, and annotator names out of sorted order."""
    rng = np.random.default_rng(seed)
    n = 400
    ids = [f"s{i:04d}" for i in rng.permutation(n)]
    truth = rng.random(n) < 0.4
    levels = {}
    for name, flip, skip in (("zoe", 0.1, 0.3), ("al", 0.2, 0.1), ("mo", 0.3, 0.5)):
        row = np.where(rng.random(n) < flip, ~truth, truth).astype(float)
        row[rng.random(n) < skip] = np.nan
        levels[name] = row
    votes = {}
    for j in range(2):
        v = np.where(rng.random(n) < 0.25, ~truth, truth).astype(float)
        v[rng.random(n) < 0.05 * j] = np.nan
        votes[f"judge{j}"] = v
    got = ceiling(ids, levels, votes, n_boot=80, seed=seed, ci=0.9)
    want = _old_judge_ceiling(ids, levels, votes, n_boot=80, seed=seed, ci=0.9)
    assert got is not None and _same(got, want)
