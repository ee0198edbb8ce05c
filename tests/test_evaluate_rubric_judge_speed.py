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


def _old_judge_figures(cols: Any, y: np.ndarray, thresholds: np.ndarray, *, n_boot: int, seed: int, ci: float = 0.95,
                       bins: int = 10) -> dict[str, dict[str, Any]]:
    """calibration.schemes.judge.evaluation.judge_figures before issue #28: per judge and chunk, the draw counts on
    its samples copied, times its per-sample confusion rows, and a weighted AUROC of its own."""
    from calibration.agreement import percentile_interval, resample_counts, weighted_auroc
    from calibration.blas import one_blas_thread
    from calibration.schemes.judge.columns import decisions
    from calibration.schemes.judge.evaluation import _ece, bin_of, confusion_figures, reliability

    class Judge:
        def __init__(self, j: int, threshold: float) -> None:
            s = cols.scores[j]
            self.mask = ~np.isnan(s) & ~np.isnan(y)
            self.y = y[self.mask]
            values, self.code = np.unique(cols.oriented()[j][self.mask], return_inverse=True)
            self.k = values.size
            d = decisions(s[None, self.mask], np.array([threshold]), cols.high_positive[j:j + 1])[0]
            t = self.y == 1
            self.rows = np.column_stack([d * t, d * ~t, (1 - d) * t, (1 - d) * ~t])
            self.probability = bool(cols.probability[j])
            if self.probability:
                p = cols.positive_probability(j)[self.mask]
                onehot = np.zeros((p.size, bins))
                onehot[np.arange(p.size), bin_of(p, bins)] = 1.0
                self.cal_rows = np.hstack([onehot * p[:, None], onehot * self.y[:, None], onehot])

        def figures(self, w: np.ndarray) -> dict[str, np.ndarray]:
            ws = w[:, self.mask]
            with one_blas_thread():
                counts = ws @ self.rows
            out = confusion_figures(counts)
            out["auroc"] = (weighted_auroc(self.y, self.code, self.k, ws) if 0 < self.y.sum() < self.y.size
                            else np.full(w.shape[0], np.nan))
            if self.probability:
                out["ece"] = _ece(ws @ self.cal_rows, bins)
            return out

    n = y.size
    judges = [Judge(j, float(thresholds[j])) for j in range(len(cols.names))]
    est = [jd.figures(np.ones((1, n))) for jd in judges]
    reps: list[dict[str, list[np.ndarray]]] = [{k: [] for k in e} for e in est]
    if n_boot > 0 and n:
        for w in resample_counts(n, n_boot, seed):
            for jd, r in zip(judges, reps):
                for k, v in jd.figures(w).items():
                    r[k].append(v)
    out: dict[str, dict[str, Any]] = {}
    for j, (jd, e, r) in enumerate(zip(judges, est, reps)):
        res: dict[str, Any] = {"n": int(jd.y.size), "positives": int(jd.y.sum()), "threshold": float(thresholds[j]),
                               "high_means_positive": bool(cols.high_positive[j]), "probability": jd.probability}
        for k, v in e.items():
            low, high = percentile_interval(np.concatenate(r[k]), 1 - ci) if r[k] else (math.nan, math.nan)
            res[k] = {"estimate": float(v[0]), "low": low, "high": high}
        if jd.probability:
            res["reliability"] = reliability(cols.positive_probability(j)[jd.mask], jd.y, bins)
        out[cols.names[j]] = res
    return out


@pytest.mark.parametrize(("threads", "few"), [(1, False), (2, False), (4, False), (1, True), (4, True)])
def test_judge_class_counts_at_once_equal_the_per_judge_rows(threads: int, few: bool) -> None:
    """judge_figures' class counts of every judge at once (per sample, or per pattern of keys when samples share
    few: `few` rounds every score to a whole number) and the ECE's draw counts taken once per set of samples: every
    figure and interval end the per-judge products gave, whatever BLAS's thread count (at 3000 samples, several
    chunks of 64 replicates; unlabeled samples, a judge without scores on some, tied scores, a judge with one class
    only on its samples)."""
    from threadpoolctl import threadpool_limits

    from calibration.schemes.judge.columns import JudgeColumns
    from calibration.schemes.judge.evaluation import ClassCounts, _Judge, judge_figures

    rng = np.random.default_rng(threads)
    n = 3000
    y = (rng.random(n) < 0.3).astype(float)
    y[::7] = np.nan  # unlabeled samples: each judge's own mask
    scores = np.vstack([rng.normal(size=n) + np.nan_to_num(y), rng.random(n), np.round(rng.random(n), 1),
                        rng.integers(0, 2, n).astype(float), rng.random(n)])
    scores[1, ::11] = np.nan  # a judge without a score on some samples
    scores[4, ~(y == 0)] = np.nan  # scores only where the reference is negative: one class, no AUROC
    if few:
        scores = np.round(scores)
    cols = JudgeColumns(("a", "b", "c", "d", "e"), scores, np.array([True, False, True, False, True]),
                        np.array([False, True, True, True, True]), np.array([0.2, 0.5, 0.5, 0.5, 0.4]))
    with threadpool_limits(limits=threads, user_api="blas"):
        new = judge_figures(cols, y, cols.default_threshold, n_boot=200, seed=4)
        old = _old_judge_figures(cols, y, cols.default_threshold, n_boot=200, seed=4)
    assert repr(new) == repr(old)
    assert math.isnan(new["e"]["auroc"]["estimate"]) and not math.isnan(new["a"]["auroc"]["low"])
    assert ClassCounts([_Judge(cols, j, y, 0.5, 10) for j in range(5)], n).by_pattern == few


@pytest.mark.parametrize("seed", range(3))
def test_rubric_evaluate_with_shared_keys_equals_aligning_every_pair(seed: int) -> None:
    """evaluate_report normalises each distinct excerpt once (one cache for every unit), pairs a unit whose human
    kept every bucket as it was without aligning it, and looks a unit's trait definition up by identity: the figures
    of aligning every pair (the per-unit reference), with humans who keep the LLM's buckets (copies, in other
    spellings too), change them, and definitions of one trait name that differ."""
    from calibration.schemes.rubric.buckets import compute_trait_metrics
    from calibration.schemes.rubric.evaluation import evaluate_report
    from calibration.schemes.rubric.records import RubricSample
    from calibration.schemes.rubric.traits import MetricTrait
    from tests.test_evaluate_scheme_counts import _buckets, _reference_agreement, _trait

    rng = np.random.default_rng(seed)
    defs = [_trait(f"trait {i % 3}", rng).to_dict() for i in range(5)]
    records, labels, llm_rows, pairs = [], {}, {}, []
    for s in range(300):
        traits = tuple(defs[i] for i in rng.permutation(5)[: int(rng.integers(1, 4))])
        traits = tuple({t["name"]: t for t in traits}.values())  # one definition per name in a record
        buckets = {t["name"]: _buckets(rng) for t in traits if rng.random() < 0.9}
        records.append(RubricSample(f"s{s}", "q", "r", traits, buckets))
        for t in traits:
            if t["name"] not in buckets:
                continue
            trait = MetricTrait.from_dict(t)
            llm_rows.setdefault(t["name"], []).append(compute_trait_metrics(trait, buckets[t["name"]]))
            r = rng.random()
            if r < 0.3:
                human = {k: list(v) for k, v in buckets[t["name"]].items() if v is not None}  # kept as it was
            elif r < 0.4:
                human = {k: [x.upper() for x in v] for k, v in buckets[t["name"]].items() if v is not None}
            elif r < 0.7:
                human = _buckets(rng)
            else:
                continue
            labels[(f"s{s}", t["name"])] = {"buckets": human}
            pairs.append((buckets[t["name"]], human, trait))
    data = evaluate_report(records, labels, {}).data
    agreement = _reference_agreement(pairs)
    want = {name: {"samples": len(rows), "llm_metrics": _means(rows), "agreement": agreement.get(name)}
            for name, rows in llm_rows.items()}
    assert repr(data) == repr(want)


def _means(rows: list[dict[str, float]]) -> dict[str, float]:
    """Each metric's mean over the units whose definition asks for it (metrics in order of first appearance)."""
    names = dict.fromkeys(k for r in rows for k in r)
    return {k: float(np.mean([r[k] for r in rows if k in r])) for k in names}


def test_bucket_keys_with_a_shared_cache_are_those_without_and_refuse_the_same() -> None:
    """bucket_keys with one Normalised cache across calls: the keys of each call alone; a bucket holding a
    non-string (hashable or not) still raises the validation's BucketError."""
    from calibration.schemes.rubric.buckets import BucketError, Normalised, bucket_keys
    from tests.test_evaluate_scheme_counts import _buckets, _trait

    rng = np.random.default_rng(3)
    normal = Normalised()
    for _ in range(200):
        trait, b = _trait("t", rng), _buckets(rng)
        assert bucket_keys(trait, b, normal) == bucket_keys(trait, b)
    for bad in ({"tp": ["a", 3]}, {"tp": ["a", ["b"]]}, {"fn": [b"x"]}):
        with pytest.raises(BucketError) as shared:
            bucket_keys(trait, bad, normal)
        with pytest.raises(BucketError) as alone:
            bucket_keys(trait, bad)
        assert str(shared.value) == str(alone.value)


def _old_judge_columns(records: list[Any]) -> Any:
    """calibration.schemes.judge.columns.judge_columns before issue #28: every field checked per record."""
    from calibration.schemes.judge.columns import JudgeColumns

    names = tuple(dict.fromkeys(j for r in records for j in r.judges))
    scores = np.full((len(names), len(records)), np.nan)
    high = np.ones(len(names), dtype=bool)
    declared: list[Any] = [None] * len(names)
    thresholds: list[Any] = [None] * len(names)
    seen = [False] * len(names)
    pos = {name: j for j, name in enumerate(names)}
    for i, r in enumerate(records):
        for name, out in r.judges.items():
            j = pos[name]
            if out.score is not None:
                scores[j, i] = out.score
            if not seen[j]:
                seen[j], high[j] = True, out.high_means_positive
            if declared[j] is None and out.probability is not None:
                declared[j] = out.probability
            if thresholds[j] is None and out.threshold is not None:
                thresholds[j] = out.threshold
    prob = np.zeros(len(names), dtype=bool)
    default = np.full(len(names), np.nan)
    for j in range(len(names)):
        s = scores[j][~np.isnan(scores[j])]
        prob[j] = declared[j] if declared[j] is not None else bool(s.size and s.min() >= 0.0 and s.max() <= 1.0)
        default[j] = (thresholds[j] if thresholds[j] is not None else 0.5 if prob[j]
                      else float(np.median(s)) if s.size else 0.0)
    return JudgeColumns(names, scores, high, prob, default)


def test_judge_columns_levels_and_references_equal_the_per_record_reads() -> None:
    """judge_columns (scores gathered per judge, declarations read until known), annotator_levels (binary labels
    read inline) and binary_reference from starts made once: what the per-record reads gave, on the demo's judge
    records and variants (levels with positive_from, null scores, thresholds, judges declared late), with labels of
    every kind (bools, level names, unknown values, none)."""
    from calibration.schemes.judge.columns import judge_columns
    from calibration.schemes.judge.parse import parse_record
    from calibration.schemes.judge.truth import annotator_levels, binary_reference, positive_starts
    from tests.test_evaluate_scheme_counts import _judge_variants

    records = [parse_record(raw).record for raw in _judge_variants()]
    records = [r for r in records if r is not None]
    got, want = judge_columns(records), _old_judge_columns(records)
    assert repr(got) == repr(want) and got.names == want.names
    rng = np.random.default_rng(0)
    values = [True, False, None, "minor", "major", "none", 1, "other"]
    labels = {a: {(r.id, ""): {"label": values[int(rng.integers(len(values)))]} for r in records if rng.random() < 0.8}
              for a in ("b", "a")}
    levels = annotator_levels(records, labels)
    for a, row in levels.items():
        want_row = [r.level((labels[a].get((r.id, "")) or {}).get("label")) for r in records]
        assert repr(row.tolist()) == repr([np.nan if v is None else float(v) for v in want_row])
        start = np.array([r.positive_index for r in records], dtype=np.float64)
        old = np.where(np.isnan(row), np.nan, (row >= start).astype(np.float64))
        got = binary_reference(positive_starts(records), row)
        assert repr(got) == repr(old) == repr(binary_reference(records, row))
    assert list(levels) == ["a", "b"] and not np.isnan(levels["a"]).all()


def _old_rubric_label_items_many(records: Any, rows: list[tuple[str, str, str, Any]]) -> tuple[Any, Any, Any]:
    """RubricScheme.label_items_many before issue #28: a dict lookup and a store per excerpt."""
    from calibration.schemes.rubric.buckets import normalize_excerpt
    from calibration.schemes.rubric.traits import BUCKET_NAMES

    key_code: dict[str, int] = {}
    code_of: dict[str, int] = {}
    bucket_of = {name: b for b, name in enumerate(BUCKET_NAMES)}
    row: list[int] = []
    item: list[int] = []
    bucket: list[int] = []
    for i, (sid, _unit, kind, value) in enumerate(rows):
        if kind != "buckets" or records.get(sid) is None:
            continue
        out: dict[int, str] = {}
        try:
            buckets = value or {}
            for name in BUCKET_NAMES:
                for e in buckets.get(name, []):
                    code = code_of.get(e)
                    if code is None:
                        code = key_code.setdefault(normalize_excerpt(e), len(key_code))
                        code_of[e] = code
                    out[code] = name
        except (KeyError, TypeError, ValueError, IndexError, AttributeError):
            continue
        row.extend([i] * len(out))
        item.extend(out)
        bucket.extend(bucket_of[name] for name in out.values())
    names = np.empty(len(BUCKET_NAMES), dtype=object)
    names[:] = list(BUCKET_NAMES)
    return (np.asarray(row, dtype=np.int64), np.asarray(item, dtype=np.int64),
            names[np.asarray(bucket, dtype=np.int64)])


def test_rubric_label_items_many_equals_one_store_per_excerpt() -> None:
    """The rubric's label_items_many with excerpts coded through one dict (map and update per bucket): the rows,
    item codes and buckets of the per-excerpt loop, on buckets with repeats across buckets, other spellings,
    values it cannot read (a non-string or unhashable excerpt after good ones, a string bucket, a list value) and
    rows without a record or of another kind."""
    from calibration.schemes.rubric.scheme import SCHEME
    from tests.test_evaluate_scheme_counts import _buckets

    rng = np.random.default_rng(5)
    odd = [{"tp": ["alpha", 3]}, {"fn": ["beta", ["x"]]}, {"fp": "gamma"}, [["tp"]], None, {"tn": {"delta": 1}}]
    records = {f"s{i}": object() for i in range(40)}
    rows = []
    for _ in range(2000):
        sid = f"s{int(rng.integers(45))}"
        r = rng.random()
        value = odd[int(rng.integers(len(odd)))] if r < 0.15 else _buckets(rng)
        rows.append((sid, "t", "buckets" if rng.random() < 0.9 else "status", value))
    got, want = SCHEME.label_items_many(records, rows), _old_rubric_label_items_many(records, rows)
    assert all(np.array_equal(a, b) for a, b in zip(got, want)) and len(got[0]) > 1000
