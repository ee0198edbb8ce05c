"""FaithBench's released batch format -> judge records and per-annotator label lines, on small files the test
writes in that format (the real data is never read here)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sklearn.metrics import roc_auc_score

from calibration.schemes.judge import faithbench as fb
from calibration.schemes.judge.scheme import SCHEME

SUMMARY = "The cat sat on the red mat in Paris."


def annotation(name: str, start: int, end: int, labels: list[str], note: str | None = None) -> dict[str, Any]:
    return {"annot_id": 1, "annotator_id": f"id-{name}", "annotator_name": name, "label": labels, "note": note,
            "summary_span": SUMMARY[start:end], "summary_start": start, "summary_end": end,
            "source_span": None, "source_start": None, "source_end": None}


def sample(i: int, annotations: list[dict[str, Any]], hhem: float, gpt: int, nli: int | None = 1) -> dict[str, Any]:
    meta = {"summarizer": "m/x", "hhemv1": hhem, "hhem-2.1": hhem, "hhem-2.1-english": hhem, "trueteacher": gpt,
            "true_nli": nli, "gpt-3.5-turbo": gpt, "gpt-4-turbo": gpt, "gpt_4o": gpt, "raw_sample_id": 100 + i}
    return {"sample_id": i, "source": f"source {i}", "summary": SUMMARY, "annotations": annotations, "metadata": meta}


def write_batches(tmp_path: Path) -> Path:
    b1 = [sample(0, [annotation("ann", 19, 22, ["Unwanted", "Unwanted.Intrinsic"], "red?"),
                     annotation("bob", 30, 35, ["Questionable"])], hhem=0.1, gpt=0),
          sample(1, [annotation("bob", 4, 7, ["Benign"])], hhem=0.9, gpt=1, nli=None),
          sample(2, [], hhem=0.7, gpt=1)]
    b2 = [sample(0, [annotation("cy", 0, 3, ["Unwanted.Extrinsic", "Questionable"])], hhem=0.2, gpt=1),
          sample(1, [], hhem=0.3, gpt=0)]
    for n, samples in ((1, b1), (2, b2)):
        (tmp_path / f"batch_{n}.json").write_text(json.dumps({"samples": samples}), encoding="utf-8")
    return tmp_path


def test_records_units_and_orientation(tmp_path: Path) -> None:
    records, lines = fb.load(write_batches(tmp_path))
    assert [r["id"] for r in records] == ["faithbench-b1-0", "faithbench-b1-1", "faithbench-b1-2", "faithbench-b2-0",
                                          "faithbench-b2-1"]
    parsed = [SCHEME.parse(r) for r in records]
    assert all(p.ok for p in parsed), [p.problems for p in parsed]
    r0 = parsed[0].record
    assert r0.text == SUMMARY and r0.context == "source 0" and r0.positive == "hallucinated"
    assert SCHEME.units(r0) == list(fb.DETECTORS)
    assert all(not j.high_means_positive and j.probability for j in r0.judges.values())  # consistency scores
    assert parsed[1].record.judges["true_nli"].score is None
    assert r0.meta == {"batch": "1", "sample_id": 0, "raw_sample_id": 100, "summarizer": "m/x",
                       "spans_sample": "faithbench-b1-0/spans"}  # its violations sample (the spans)


def test_label_lines_who_read_what_and_counted_categories(tmp_path: Path) -> None:
    _, lines = fb.load(write_batches(tmp_path))
    assert sorted(lines) == ["ann", "bob", "cy"]
    by = {a: {ln["sample"]: ln for ln in ls} for a, ls in lines.items()}
    # ann and bob marked something in batch 1: they read all of it; cy read batch 2 only
    assert sorted(by["ann"]) == sorted(by["bob"]) == ["faithbench-b1-0", "faithbench-b1-1", "faithbench-b1-2"]
    assert sorted(by["cy"]) == ["faithbench-b2-0", "faithbench-b2-1"]
    assert [by["ann"][s]["label"] for s in sorted(by["ann"])] == [True, False, False]
    assert [by["bob"][s]["label"] for s in sorted(by["bob"])] == [False, False, False]  # Questionable, Benign
    assert by["cy"]["faithbench-b2-0"]["label"] is True  # "Unwanted.Extrinsic" starts with Unwanted
    assert by["ann"]["faithbench-b1-0"]["marks"] == [{"start": 19, "end": 22, "label": ["Unwanted",
                                                      "Unwanted.Intrinsic"], "note": "red?"}]
    assert by["ann"]["faithbench-b1-2"]["marks"] == []
    line = by["ann"]["faithbench-b1-0"]
    assert set(line) == {"scheme", "sample", "annotator", "label", "marks"} and line["scheme"] == "judge"
    assert all(SCHEME.label_kinds[k].validate(line[k]) == [] for k in ("label", "marks"))
    _, wide = fb.load(tmp_path, counted=fb.ALL_COUNTED)
    bob = {ln["sample"]: ln["label"] for ln in wide["bob"]}
    assert bob == {"faithbench-b1-0": True, "faithbench-b1-1": True, "faithbench-b1-2": False}


def test_auroc_through_the_scheme_equals_the_direct_computation(tmp_path: Path) -> None:
    records, lines = fb.load(write_batches(tmp_path))
    parsed = [SCHEME.parse(r).record for r in records]
    ann = {a: {(ln["sample"], ""): {"label": ln["label"]} for ln in ls} for a, ls in lines.items()}
    rep = SCHEME.evaluate(parsed, {}, {"annotator_labels": ann, "n_boot": 20})
    # any annotator: b1-0 (ann), b2-0 (cy) are hallucinated
    y = [1, 0, 0, 1, 0]
    hhem = [0.1, 0.9, 0.7, 0.2, 0.3]
    assert rep.data["judges"]["hhem-2.1"]["auroc"]["estimate"] == pytest.approx(roc_auc_score(y, [1 - s for s in hhem]))
    assert rep.data["judges"]["true_nli"]["n"] == 4


def test_bad_batches_name_the_place(tmp_path: Path) -> None:
    with pytest.raises(fb.FaithBenchError, match="batch 3: expected an object with a 'samples' array"):
        fb.convert({"3": [1, 2]})
    bad = sample(0, [annotation("ann", 5, 99, ["Unwanted"])], hhem=0.1, gpt=0)
    with pytest.raises(fb.FaithBenchError, match=r"batch 1: samples\[0\].annotations\[0\]"):
        fb.convert({"1": {"samples": [bad]}})
    with pytest.raises(fb.FaithBenchError, match="no batch_"):
        fb.load(tmp_path)
