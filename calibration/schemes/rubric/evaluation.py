"""The rubric scheme's evaluation hook (`concord evaluate`): per trait, the metrics from the LLM's buckets and,
where humans checked them, agreement with the humans (rubric_agreement)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from calibration.schemes.base import Report, Table
from calibration.schemes.rubric.agreement import TraitCounts
from calibration.schemes.rubric.buckets import Normalised, bucket_keys
from calibration.schemes.rubric.records import RubricSample
from calibration.schemes.rubric.traits import MetricTrait


def _fmt(x: Any) -> str:
    return "–" if x is None else f"{x:.3f}"


def evaluate_report(records: Sequence[RubricSample], labels: Mapping[tuple[str, str], Mapping[str, Any]],
                    options: Mapping[str, Any]) -> Report:
    """`data`: {trait: {"samples", "llm_metrics" (means), "agreement" (or None)}}. Each unit's LLM buckets are
    normalised once (bucket_keys) for both its metrics and its alignment with the human's, and each trait
    definition is built once (records of a project share one definition dict per trait): TraitCounts then
    computes every figure from count columns."""
    counts: dict[str, TraitCounts] = {}
    built: dict[int, tuple[Mapping[str, Any], MetricTrait]] = {}  # id(definition) -> (it, kept alive; its trait)
    normal = Normalised()  # each distinct excerpt normalised once
    for record in records:
        for t in record.traits:
            buckets = record.buckets.get(t["name"])
            if buckets is None:
                continue
            got = built.get(id(t))
            if got is None:
                got = built[id(t)] = (t, MetricTrait.from_dict(t, strict=False))
            trait = got[1]
            tally = counts.get(trait.name)
            if tally is None:
                tally = counts[trait.name] = TraitCounts()
            llm = bucket_keys(trait, buckets, normal)
            tally.add(trait, llm)
            human = (labels.get((record.id, trait.name)) or {}).get("buckets")
            if human is not None:
                tally.check(trait, llm, bucket_keys(trait, human, normal))
    data: dict[str, Any] = {}
    for name, tally in counts.items():
        data[name] = {"samples": len(tally.llm), "llm_metrics": tally.llm_means(),
                      "agreement": tally.agreement() if tally.checked else None}
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
