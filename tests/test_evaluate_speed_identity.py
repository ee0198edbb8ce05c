"""Issue #28 items 1 and 5: the faster paths of `concord evaluate` and `concord agreement` give the same figures as
the computations they replace (old formulation next to the new one on generated data, compared exactly)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from calibration.agreement import distinct_rows, percentile_interval, resample_counts


def _old_evaluate(table: pd.DataFrame, base: str, n_boot: int, seed: int) -> pd.DataFrame:
    """calibration.schemes.rgb.metrics.evaluate before issue #28: each group drawing its own replicates."""
    from calibration.schemes.rgb.features import LABELS
    from calibration.schemes.rgb.metrics import FIGURES, _figure

    rows = []
    for key, group in table.groupby(["model", "task"], sort=True, dropna=False):
        x = group[list(LABELS)].to_numpy(dtype=bool).astype(np.int8)
        reps = _old_replicates(x, base, n_boot, seed)
        for j, f in enumerate(FIGURES):
            low, high = percentile_interval(reps[:, j], 0.05)
            rows.append({"model": key[0], "task": key[1], "figure": f, "value": float(_figure(x, f, base)),
                         "low": low, "high": high, "n": int(x.shape[0])})
    return pd.DataFrame(rows, columns=["model", "task", "figure", "value", "low", "high", "n"])


def test_rgb_tables_sharing_draws_equal_each_drawing_alone() -> None:
    """evaluate_many: groups of one size share one pass over the draws; every figure and interval is what each
    table's groups gave drawing alone (old formulation), including groups of different sizes and bases."""
    from calibration.schemes.rgb.features import LABELS
    from calibration.schemes.rgb.metrics import evaluate_many

    rng = np.random.default_rng(12)
    n = 900
    models, tasks = rng.choice(["m1", "m2"], n), rng.choice(["noise", "integration", "rejection"], n)
    jobs = []
    for t in range(4):
        keep = rng.random(n) < (1.0 if t < 2 else 0.7)  # two tables of the same groups, two of others
        table = pd.DataFrame({"model": models, "task": tasks, **{k: rng.random(n) < p for k, p in
                                                               zip(LABELS, (0.6, 0.2, 0.3, 0.5))}})[keep]
        jobs.append((table, "detected" if t % 2 == 0 else "all"))
    got = evaluate_many(jobs, n_boot=150, seed=5)  # type: ignore[arg-type]
    for out, (table, base) in zip(got, jobs):
        pd.testing.assert_frame_equal(out, _old_evaluate(table, base, 150, 5), check_exact=True)


def _old_replicates(x: np.ndarray, base: str, n_boot: int, seed: int) -> np.ndarray:
    """calibration.schemes.rgb.metrics._replicates before issue #28: every unit's draw counts times the columns."""
    n = x.shape[0]
    cols = np.column_stack([x, x[:, 2] & x[:, 3]]).astype(np.float64)
    sums = np.concatenate([w @ cols for w in resample_counts(n, n_boot, seed)])
    out = 100.0 * sums[:, :4] / n
    if base != "all":
        detected = sums[:, 2]
        with np.errstate(invalid="ignore", divide="ignore"):
            out[:, 3] = np.where(detected > 0, 100.0 * sums[:, 4] / detected, 0.0)
    return out


@pytest.mark.parametrize("base", ["detected", "all"])
@pytest.mark.parametrize("n", [1, 64, 4001])
def test_rgb_replicates_equal_the_product_with_every_units_draw_counts(base: str, n: int) -> None:
    from calibration.schemes.rgb.metrics import _replicates

    rng = np.random.default_rng(n)
    x = (rng.random((n, 4)) < np.array([0.6, 0.2, 0.1, 0.5])).astype(np.int8)
    got, want = _replicates(x, base, 300, 11), _old_replicates(x, base, 300, 11)  # type: ignore[arg-type]
    assert np.array_equal(got, want, equal_nan=True)
    for j in range(4):  # and so the intervals
        assert percentile_interval(got[:, j], 0.05) == percentile_interval(want[:, j], 0.05)


def test_distinct_rows_rebuild_the_rows() -> None:
    x = np.random.default_rng(2).integers(0, 2, (500, 5)).astype(float)
    rows, codes = distinct_rows(x)
    assert np.array_equal(rows[codes], x) and len(np.unique(rows, axis=0)) == len(rows)


def test_rgb_agreement_table_reads_the_rows_by_key() -> None:
    """The agreement table pairs each decided row with the labels of its own (sample, unit)."""
    from calibration.schemes.rgb.evaluation import _agreement_table
    from calibration.schemes.rgb.features import LABELS

    rng = np.random.default_rng(4)
    keys = [(f"s{i // 3}", f"m{i % 3}") for i in range(300)]
    labels = {k: {d: bool(rng.random() < 0.5) for d in LABELS if rng.random() < 0.8} for k in keys
              if rng.random() < 0.9}
    checker = {d: rng.random(len(keys)) < 0.5 for d in LABELS}
    judge = {d: [None if rng.random() < 0.3 else bool(rng.random() < 0.5) for _ in keys] for d in LABELS}
    decided = {name: pd.DataFrame({"sample": [k[0] for k in keys], "model": [k[1] for k in keys], **cols})
               for name, cols in (("checker", checker), ("judge", judge))}
    want = []
    for source, cols in (("checker", checker), ("judge", judge)):
        for d in LABELS:
            pairs = [(bool(m), labels[key][d]) for key, m in zip(keys, cols[d])
                     if m is not None and d in labels.get(key, {})]
            a, b = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
            pa, pb = a.mean(), b.mean()
            pe = pa * pb + (1 - pa) * (1 - pb)
            kappa = ((a == b).mean() - pe) / (1 - pe)
            want.append((source, d, len(pairs), round(100.0 * float((a == b).mean()), 1), round(float(kappa), 3)))
    assert list(_agreement_table(decided, keys, labels).rows) == want


def test_ceiling_reads_stored_machine_labels_in_bulk_as_one_at_a_time(tmp_path: Path) -> None:
    """`newest_machine_values` gives `machine_decision` what `machine_label` gives it unit by unit: no label, a
    failed one, one label, and two sources (the newest chosen by machine_label itself)."""
    from app.services.ceiling import machine_decision
    from app.store import Project
    from calibration.schemes.base import registry
    from calibration.schemes.violations import Violation, ViolationSample

    text = "The cat sat on the mat. It was red and tall."
    v = (Violation("r", 4, 7), Violation("q", 24, 26))
    p = Project.create(tmp_path / "p.concord")
    p.store("violations").write_violation_samples([ViolationSample(f"s{i}", text, v, {"c1@1|m": v}) for i in range(4)])
    p.save_machine_label("s1", "c1@1|m", "matcher", None, error="down")
    p.save_machine_label("s2", "c1@1|m", "matcher", {"predictions": [], "matches": [[0, 0], [1, 1]]})
    p.save_machine_label("s3", "c1@1|m", "matcher", {"predictions": [], "matches": [[0, 0]]})
    p.save_machine_label("s3", "c1@1|m", "other", {"predictions": [], "matches": [[1, 1]]})
    stored = p.newest_machine_values("violations")
    assert set(stored) == {("s2", "c1@1|m"), ("s3", "c1@1|m")} and stored[("s3", "c1@1|m")] is None
    scheme = registry().get("violations")
    records = {scheme.record_id(r): r for r in p.scheme_records("violations")}
    decided = []
    for sid in ("s0", "s1", "s2", "s3"):
        for unit in ("c1@1|m", ""):
            one = machine_decision(p, scheme, records[sid], sid, unit)
            assert machine_decision(p, scheme, records[sid], sid, unit, stored) == one
            decided.append(one)
    assert any(d for d in decided)


@pytest.mark.parametrize(("n", "groups", "width"), [(1, 1, 1), (500, 40, 4), (20000, 3000, 9)])
def test_sum_by_group_is_the_sparse_product_bit_for_bit(n: int, groups: int, width: int) -> None:
    """item_agreement sums units' statistics per sample with bincount instead of a scipy.sparse product (0.5 s to
    import): the same additions in the same order, so the same bits."""
    from scipy import sparse

    from calibration.annotators import _sum_by

    rng = np.random.default_rng(n)
    group = np.sort(rng.integers(0, groups, n)) if n % 2 else rng.integers(0, groups, n)
    values = rng.random((n, width)) / rng.integers(1, 7, (n, width))
    values[rng.random((n, width)) < 0.3] = 0.0
    old = sparse.csr_matrix((np.ones(n), (group, np.arange(n))), shape=(groups, n))
    assert np.array_equal(_sum_by(group, values, groups), np.asarray(old @ values))


def test_item_agreement_and_evaluate_skip_scipy_sparse() -> None:
    """Item agreement (the ceiling of `concord evaluate`, `concord agreement` on items) imports no scipy.sparse."""
    import subprocess
    import sys

    code = ("import sys\nfrom calibration.annotators import item_agreement\n"
            "rows = [(f's{i // 4}', i, r, (i * (r + 1)) % 3) for i in range(40) for r in range(3)]\n"
            "assert item_agreement(rows, n_boot=20)['overall']['kappa']['estimate'] is not None\n"
            "print('scipy.sparse' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[1], capture_output=True,
                         text=True, timeout=120, check=True)
    assert out.stdout.strip() == "False"


def test_trace_evaluation_imports_no_sklearn() -> None:
    """The trace scheme's evaluate hook reads no F1 or AUROC from scikit-learn (1-2 s to import)."""
    import subprocess
    import sys

    code = ("import sys\nimport calibration.schemes.trace.evaluation, calibration.schemes.trace.agreement\n"
            "print('sklearn' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[1], capture_output=True,
                         text=True, timeout=120, check=True)
    assert out.stdout.strip() == "False"


def test_ceiling_comparisons_from_one_table_equal_the_row_lists() -> None:
    """The ceiling's three item_agreement calls read parts of one DataFrame: the figures are those of the row lists
    it passed before (humans; metric and resolved on the metric's items; metric and humans on them)."""
    from app.services.ceiling import METRIC, RESOLVED, _humans, _metric_sides
    from calibration.annotators import item_agreement

    rng = np.random.default_rng(9)
    humans, metric_rows = [], []
    for s in range(150):
        for item in range(int(rng.integers(1, 4))):
            key = (f"s{s}", f"u|k|{item}")
            for who in ("ana", "ben", "cy"):
                if rng.random() < 0.8:
                    humans.append((*key, who, repr(bool(rng.random() < 0.6))))
            if rng.random() < 0.7:
                metric_rows.append((*key, METRIC, repr(bool(rng.random() < 0.5))))
            if rng.random() < 0.9:
                metric_rows.append((*key, RESOLVED, repr(bool(rng.random() < 0.6))))
    items = {(r[0], r[1]) for r in metric_rows if r[2] == METRIC}
    rows = [r for r in metric_rows if (r[0], r[1]) in items] + [r for r in humans if (r[0], r[1]) in items]
    want = [item_agreement(humans, n_boot=200, seed=3),
            item_agreement([r for r in rows if r[2] in (METRIC, RESOLVED)], n_boot=200, seed=3),
            item_agreement([r for r in rows if r[2] != RESOLVED], n_boot=0)]
    hh = _humans(humans, metric_rows, 200, 3)
    table = hh.pop("table")
    got = [hh, *_metric_sides(humans, metric_rows, items, table, 200, 3)]
    assert repr(got) == repr(want)


@pytest.mark.parametrize("repeated", [True, False])
def test_rubric_agreement_makes_each_sides_buckets_once_with_the_same_result(repeated: bool) -> None:
    """align_excerpts aligns effective buckets made once per side: the same alignments as on the raw buckets."""
    from calibration.schemes.rubric.agreement import _align, align_excerpts
    from calibration.schemes.rubric.buckets import effective_buckets
    from calibration.schemes.rubric.traits import MetricTrait

    trait = MetricTrait(name="cov", metrics=["precision", "recall", "f1", "specificity", "accuracy"],
                        evaluation_mode="full_matrix", tp_instructions=["x"], tn_instructions=["y"],
                        repeated_extraction=repeated)
    rng = np.random.default_rng(int(repeated))
    words = ["alpha", "Alpha ", "beta", "BETA", "gamma", " ", "delta"]
    for _ in range(200):
        sides = [{b: [str(w) for w in rng.choice(words, int(rng.integers(0, 5)))] for b in ("tp", "fn", "fp", "tn")}
                 for _ in range(2)]
        llm, human = effective_buckets(trait, sides[0]), effective_buckets(trait, sides[1])
        assert _align(llm, human) == align_excerpts(trait, sides[0], sides[1])
