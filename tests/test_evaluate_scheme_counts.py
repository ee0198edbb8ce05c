"""Issue #28 (rubric, addm and judge `evaluate` from columns): the counting paths give exactly the figures of the
per-unit computations they replace, which stay in the code as the reference (compared with repr, so NaN and the
last bit count)."""
from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import numpy as np
import pytest

from calibration.agreement import cohen_kappa
from calibration.schemes.rubric.agreement import RUBRIC_LABELS, align_excerpts, kappa_from_counts, rubric_agreement
from calibration.schemes.rubric.buckets import BucketError, bucket_keys, compute_trait_metrics, effective_buckets
from calibration.schemes.rubric.evaluation import evaluate_report
from calibration.schemes.rubric.records import RubricSample
from calibration.schemes.rubric.traits import BUCKET_NAMES, MetricTrait

WORDS = ["alpha", "Alpha ", "beta", "BETA", "gamma", " ", "", "delta", "Straße", "STRASSE", "ǅ"]


def _trait(name: str, rng: np.random.Generator) -> MetricTrait:
    full = bool(rng.random() < 0.5)
    metrics = ["precision", "recall", "f1", *(["specificity", "accuracy"] if full else [])]
    picked = [m for m in metrics if rng.random() < 0.7] or ["recall"]
    return MetricTrait(name=name, metrics=list(rng.permutation(picked)), tp_instructions=["x"],
                       evaluation_mode="full_matrix" if full else "tp_only", tn_instructions=["y"] if full else [],
                       repeated_extraction=bool(rng.random() < 0.6))


def _buckets(rng: np.random.Generator) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for b in BUCKET_NAMES:
        r = rng.random()
        if r < 0.1:
            continue  # a missing bucket counts as empty
        out[b] = None if r < 0.15 else [str(w) for w in rng.choice(WORDS, int(rng.integers(0, 6)))]
    return out


def _reference_agreement(pairs: list[tuple[Any, Any, MetricTrait]]) -> dict[str, dict[str, Any]]:
    """rubric_agreement as it was: every pair aligned (align_excerpts), per-unit metric dicts, scikit-learn's kappa."""
    grouped: dict[str, list] = {}
    for p in pairs:
        grouped.setdefault(p[2].name, []).append(p)
    out = {}
    for name, group in grouped.items():
        a, b = [], []
        deltas, llm_s, human_s = defaultdict(list), defaultdict(list), defaultdict(list)
        for llm_b, human_b, trait in group:
            for _, lb, hb in align_excerpts(trait, llm_b, human_b):
                a.append(lb)
                b.append(hb)
            m_llm, m_human = compute_trait_metrics(trait, llm_b), compute_trait_metrics(trait, human_b)
            for m, v in m_llm.items():
                llm_s[m].append(v)
                human_s[m].append(m_human[m])
                deltas[m].append(v - m_human[m])
        n_llm = sum(x != "absent" for x in a)
        kept = sum(x != "absent" and x == y for x, y in zip(a, b))
        out[name] = {"n_samples": len(group), "n_items": len(a), "n_llm_items": n_llm, "n_kept": kept,
                     "kept_share": kept / n_llm if n_llm else math.nan,
                     "kappa": cohen_kappa(a, b, labels=RUBRIC_LABELS) if a else math.nan,
                     "metric_deltas": {m: float(np.mean(v)) for m, v in deltas.items()},
                     "metrics_llm": {m: float(np.mean(v)) for m, v in llm_s.items()},
                     "metrics_human": {m: float(np.mean(v)) for m, v in human_s.items()}}
    return out


@pytest.mark.parametrize("seed", range(4))
def test_rubric_agreement_from_counts_equals_aligning_every_pair(seed: int) -> None:
    """Traits of one name with different definitions (metrics, repeated_extraction) included."""
    rng = np.random.default_rng(seed)
    traits = [_trait(f"t{i % 3}", rng) for i in range(5)]
    pairs = [(_buckets(rng), _buckets(rng), traits[int(rng.integers(len(traits)))]) for _ in range(300)]
    assert repr(rubric_agreement(pairs)) == repr(_reference_agreement(pairs))


def test_rubric_evaluate_report_equals_the_per_unit_computation() -> None:
    rng = np.random.default_rng(7)
    defs = [_trait(f"trait {i}", rng).to_dict() for i in range(4)]
    records, labels, llm_rows, pairs = [], {}, defaultdict(list), []
    for s in range(400):
        traits = tuple(defs[i] for i in rng.permutation(4)[: int(rng.integers(1, 5))])
        buckets = {t["name"]: _buckets(rng) for t in traits if rng.random() < 0.9}
        records.append(RubricSample(f"s{s}", "q", "r", traits, buckets))
        for t in traits:
            if t["name"] not in buckets:
                continue
            trait = MetricTrait.from_dict(t)
            llm_rows[t["name"]].append(compute_trait_metrics(trait, buckets[t["name"]]))
            if rng.random() < 0.5:
                labels[(f"s{s}", t["name"])] = {"buckets": _buckets(rng)}
                pairs.append((buckets[t["name"]], labels[(f"s{s}", t["name"])]["buckets"], trait))
    data = evaluate_report(records, labels, {}).data
    agreement = _reference_agreement(pairs)
    want = {name: {"samples": len(rows), "llm_metrics": {k: float(np.mean([r[k] for r in rows])) for k in rows[0]},
                   "agreement": agreement.get(name)} for name, rows in llm_rows.items()}
    assert repr(data) == repr(want)


def test_bucket_keys_are_the_effective_buckets_normalised_and_refuse_the_same() -> None:
    rng = np.random.default_rng(3)
    for _ in range(300):
        trait, b = _trait("t", rng), _buckets(rng)
        eff = effective_buckets(trait, b)
        assert bucket_keys(trait, b) == tuple([x.strip().casefold() for x in eff[n]] for n in BUCKET_NAMES)
    trait = _trait("t", rng)
    for bad in ({"tp": ["a", 3]}, {"tp": "a"}, {"xx": []}, ["tp"], {"tp": ("a", None)}):
        with pytest.raises(BucketError) as want:
            effective_buckets(trait, bad)  # type: ignore[arg-type]
        with pytest.raises(BucketError) as got:
            bucket_keys(trait, bad)  # type: ignore[arg-type]
        assert str(got.value) == str(want.value)


@pytest.mark.parametrize("seed", range(6))
def test_kappa_from_counts_is_scikit_learns(seed: int) -> None:
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 6))
    a = list(rng.choice(RUBRIC_LABELS[:k], 50))
    b = list(rng.choice(RUBRIC_LABELS[:k] if seed % 2 else RUBRIC_LABELS, 50))
    conf = np.zeros((5, 5), dtype=np.int64)
    for x, y in zip(a, b):
        conf[RUBRIC_LABELS.index(x), RUBRIC_LABELS.index(y)] += 1
    assert repr(kappa_from_counts(conf)) == repr(cohen_kappa(a, b, labels=RUBRIC_LABELS))


def _addm_variants() -> list[dict[str, Any]]:
    """The demo's ADDM records and variants a stored payload may hold: integer ids, snippets found only fuzzily or
    not at all, an evidence citing no review, a review with an integer id, methods with errors, without scores or verdicts."""
    import copy
    import json
    from pathlib import Path

    demo = Path(__file__).resolve().parents[1] / "resources" / "demo" / "addm.jsonl"
    raws = [json.loads(x) for x in demo.read_text(encoding="utf-8").splitlines() if x.strip()]
    out = []
    for i, raw in enumerate(raws):
        out.append(raw)
        v = copy.deepcopy(raw)
        v["reviews"].append({"review_id": 100 + i, "text": "An integer id."})
        for m in v.get("methods", {}).values():
            for e in m.get("evidences", []):
                e["snippet"] = (e.get("snippet") or "zz").upper() + " x"
                e["modifiers"] = [s.lower() for s in e.get("modifiers", [])] + ["made up"]
            m.pop("risk_score", None)
        v["methods"]["broken"] = {"error": "timeout", "verdict": None, "evidences": []}
        v["methods"]["stray"] = {"verdict": "High Risk", "risk_score": 3,
                                 "evidences": [{"review_id": "nowhere", "severity": " Severe", "snippet": "abc"}]}
        v["id"], v["split"], v["meta"] = f"{raw['id']}-variant", "test", {"k": i}
        out.append(v)
    return out


def test_addm_stored_samples_are_what_the_parser_gives() -> None:
    """stored_sample reads back what to_json wrote exactly as parse_record does (snippets located again)."""
    from calibration.schemes.addm.records import parse_record, stored_sample
    from calibration.schemes.addm.scheme import SCHEME as ADDM

    n = 0
    for raw in _addm_variants():
        parsed, _ = parse_record(raw)
        assert parsed is not None
        stored = ADDM.to_json(parsed)
        assert stored_sample(stored) == parse_record(stored)[0]
        n += sum(e.snippet is not None and e.start is None for m in parsed.methods.values() for e in m.evidences)
    assert n > 0  # ungrounded snippets were among them


@pytest.mark.parametrize("seed", range(8))
def test_addm_average_precision_is_scikit_learns(seed: int) -> None:
    """Ties (few distinct scores), continuous scores, negative and zero scores (-0.0 too)."""
    from sklearn.metrics import average_precision_score

    from calibration.schemes.addm.metrics import average_precision

    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 3000))
    s = rng.normal(size=n) if seed % 2 else rng.integers(-3, 4, size=n) * 5.0
    if seed == 2:
        s[: n // 2] = -0.0
    y = (rng.random(n) < rng.uniform(0.05, 0.9)).astype(np.int64)
    y[0], y[1] = 0, 1
    assert repr(average_precision(y, s)) == repr(float(average_precision_score(y, s)))


def _judge_variants() -> list[dict[str, Any]]:
    """The demo's judge records and variants: levels with positive_from, numeric shorthand, thresholds, labels and
    explanations, a probability judge scoring outside [0, 1] (a warning), null scores, integer ids."""
    import copy
    import json
    from pathlib import Path

    demo = Path(__file__).resolve().parents[1] / "resources" / "demo" / "judge.jsonl"
    raws = [json.loads(x) for x in demo.read_text(encoding="utf-8").splitlines() if x.strip()]
    out = []
    for i, raw in enumerate(raws):
        out.append(raw)
        v = copy.deepcopy(raw)
        v["id"] = 9000 + i
        v["levels"], v["positive_from"] = ["none", "minor", "major"], "major" if i % 2 else None
        v["judges"]["short"] = 3.5 if i % 3 else None
        v["judges"]["told"] = {"score": 1.4 if i % 4 == 0 else 0.2, "probability": True, "threshold": 0.3,
                               "label": {"x": i}, "explanation": "why", "high_means_positive": False}
        v.pop("context", None)
        out.append(v)
    return out


def test_judge_stored_records_are_what_the_parser_gives() -> None:
    """stored_record reads back what to_json wrote as parse_record does, and refuses what parse_record warns about."""
    from calibration.schemes.judge.parse import parse_record, stored_record, to_json

    read = refused = 0
    for raw in _judge_variants():
        parsed = parse_record(raw).record
        assert parsed is not None
        stored = to_json(parsed)
        try:
            got = stored_record(stored)
        except ValueError:  # a probability outside [0, 1]: the parser's warning, so the store asks the parser
            refused += 1
            continue
        assert got == parse_record(stored).record == parsed
        read += 1
    assert read > refused > 0


@pytest.mark.parametrize("scheme", ["judge", "addm"])
def test_store_hooks_read_what_the_generic_records_give(tmp_path: Any, scheme: str) -> None:
    """A project's records through the scheme's store hook equal `project.samples.records` (the parser on every payload),
    including payloads the hook does not recognise (read by the parser)."""
    import json

    from app.io.imports import import_file
    from app.store import Project

    variants = _judge_variants() if scheme == "judge" else _addm_variants()
    path = tmp_path / f"{scheme}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in variants), encoding="utf-8")
    project = Project(tmp_path / "p.concord", create=True)
    import_file(project, path)
    with project.transaction() as c:  # payloads as another version may have written them
        rows = c.execute("SELECT id, payload FROM samples WHERE scheme = ? LIMIT 2", (scheme,)).fetchall()
        for sid, payload in rows:
            data = json.loads(payload)
            if scheme == "judge":
                data["judges"] = {k: (j["score"] if j["score"] is not None else j) for k, j in data["judges"].items()}
            else:
                data["methods"]["odd"] = {"error": {"code": 1}}  # parse_record writes it as its JSON text
            c.execute("UPDATE samples SET payload = ? WHERE id = ?", (json.dumps(data), sid))
    got = project.scheme_data.scheme_records(scheme)
    assert got == project.samples.records(scheme) and len(got) == len(variants)


def test_rubric_and_addm_evaluate_import_no_sklearn() -> None:
    """Their kappa and average precision are computed from counts (1-2 s of scikit-learn import otherwise)."""
    import subprocess
    import sys
    from pathlib import Path

    code = ("import sys\n"
            "from calibration.schemes.rubric.records import RubricSample\n"
            "from calibration.schemes.rubric.scheme import SCHEME as R\n"
            "t = {'name': 't', 'metrics': ['precision', 'recall'], 'tp_instructions': ['x']}\n"
            "recs = [RubricSample(f's{i}', 'q', 'r', (t,), {'t': {'tp': ['a', 'b'][:i % 3], 'fp': ['c']}})\n"
            "        for i in range(30)]\n"
            "labels = {(f's{i}', 't'): {'buckets': {'tp': ['a'], 'fn': ['b']}} for i in range(0, 30, 2)}\n"
            "assert R.evaluate(recs, labels, {}).data['t']['agreement']['kappa'] is not None\n"
            "from calibration.schemes.addm.metrics import ordinal_auprc\n"
            "assert ordinal_auprc([0, 1, 2, 1, 0], [0.1, 0.5, 0.9, 0.4, 0.3])['ordinal_auprc'] > 0\n"
            "print('sklearn' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[1], capture_output=True,
                         text=True, timeout=120, check=True)
    assert out.stdout.strip() == "False"
