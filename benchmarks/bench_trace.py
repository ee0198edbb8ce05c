"""Trace scheme speed: parse + score 100,000 RAGBench-shaped synthetic rows (no real data).

Rows have the release's columns and shapes (3-4 documents of 3-14 keyed sentences, 1-4 response sentences, support
entries with some null flags, a few dangling/duplicate keys, seven judge columns with some NaN). They are timed in
the two shapes a reader hands over: lists (pyarrow `to_pylist`, JSONL) and numpy arrays of arrays (pandas
`read_parquet`). Prints the median of several runs for parsing, for scoring both variants (vectorised), for the
plain-Python reference scorer in the same process (bit-identical results are asserted), for the judge report, and for a 101 x N adherence decision grid;
Scoring is a Python pass that counts each record's labels (done once per label set) and the variant's formulas on
the count arrays (what repeated evaluation, e.g. calibration over variants, re-runs); the reference does both per
record, so end to end the two are close and the formulas alone are far faster. pySBD sentencization of a sample is
timed separately (rows without keyed sentences). Each line gives the load
average and the CPU share (process CPU time / wall time) of its runs.

    python benchmarks/bench_trace.py [--rows 100000] [--runs 3]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchresult import emit  # noqa: E402
from calibration.schemes.trace import (  # noqa: E402
    adherence_decisions,
    judge_report,
    label_counts,
    parse_ragbench_row,
    scores_from_counts,
    sentence_key,
    split_sentences,
)
from calibration.schemes.trace import reference as ref  # noqa: E402

WORDS = "the model retrieves passages about vaccines engines rivers and taxes then answers with care".split()


def synthetic_rows(n: int, seed: int = 0) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    sentences = [" ".join(rng.choice(WORDS, 10)).capitalize() + "." for _ in range(500)]
    rows = []
    for i in range(n):
        sizes = rng.integers(3, 15, int(rng.integers(3, 5)))
        docs_s = [[[f"{d}{sentence_key(j)}", sentences[int(rng.integers(500))]] for j in range(int(k))] for d, k in enumerate(sizes)]
        keys = [k for d in docs_s for k, _ in d]
        n_resp = int(rng.integers(1, 5))
        resp_s = [[sentence_key(j), sentences[int(rng.integers(500))]] for j in range(n_resp)]
        rel = [keys[j] for j in rng.choice(len(keys), int(rng.integers(0, min(12, len(keys)))), replace=False)]
        utl = [k for k in rel if rng.random() < 0.6] + ([keys[0]] if rng.random() < 0.2 else [])
        if rng.random() < 0.05:
            rel.append(rel[0] + "." if rel else "0z.")  # RAGBench's dangling "0b." keys
        unsup = [k for k, _ in resp_s if rng.random() < 0.15]
        support = [{"explanation": "because", "fully_supported": None if rng.random() < 0.5 else (k not in unsup),
                    "response_sentence_key": k, "supporting_sentence_keys": utl[:2]} for k, _ in resp_s]
        judge = rng.random(7)
        judge[rng.random(7) < 0.02] = np.nan
        rows.append({
            "id": f"row{i}", "question": "What does the passage say?", "documents": [" ".join(s for _, s in d) for d in docs_s],
            "response": " ".join(s for _, s in resp_s), "generation_model_name": "gpt-3.5-turbo-0125",
            "annotating_model_name": "gpt-4o", "dataset_name": "synthetic_test",
            "documents_sentences": docs_s, "response_sentences": resp_s, "sentence_support_information": support,
            "unsupported_response_sentence_keys": unsup, "adherence_score": not unsup,
            "overall_supported_explanation": "...", "relevance_explanation": "...",
            "all_relevant_sentence_keys": rel, "all_utilized_sentence_keys": utl,
            "trulens_groundedness": judge[0], "trulens_context_relevance": judge[1], "ragas_faithfulness": judge[2],
            "ragas_context_relevance": judge[3], "gpt3_adherence": judge[4], "gpt3_context_relevance": judge[5],
            "gpt35_utilization": judge[6], "relevance_score": len(rel) / len(keys), "utilization_score": len(utl) / len(keys),
            "completeness_score": len(set(rel) & set(utl)) / len(rel) if rel else 1.0,
        })
    return rows


def timed(fn: Callable[[], Any], runs: int) -> tuple[float, float, float, Any]:
    """(median wall s, CPU share over all runs, 1-min load average after, last result)."""
    times, out = [], None
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for _ in range(runs):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    return statistics.median(times), cpu / wall, os.getloadavg()[0], out


def line(label: str, n: int, med: float, share: float, load: float, extra: str = "") -> None:
    print(f"  {label:50s} {med:7.3f} s  {n / med:>11,.0f} rows/s  CPU share {share:4.0%}  load {load:4.2f}{extra}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--sentencize", type=int, default=300, help="documents split with pySBD")
    args = ap.parse_args()
    n = args.rows
    print(f"bench_trace: {n:,} RAGBench-shaped rows, median of {args.runs} runs, {os.cpu_count()} CPUs, "
          f"load average at start {os.getloadavg()[0]:.2f}")
    t0 = time.perf_counter()
    rows = synthetic_rows(n)
    table = pa.Table.from_pylist(rows)
    del rows
    print(f"  (made the rows in {time.perf_counter() - t0:.1f} s; "
          f"{sum(len(d) for d in table.column('documents_sentences').to_pylist()[:1000]) / 1000:.1f} documents/row)")

    parsed = None
    for shape in ("lists", "numpy"):
        batch = table.to_pylist() if shape == "lists" else table.to_pandas().to_dict("records")
        med, share, load, parsed = timed(lambda: [parse_ragbench_row(r) for r in batch], args.runs)
        assert all(p.ok for p in parsed)
        line(f"parse_ragbench_row ({shape})", n, med, share, load)
        del batch
    records = [p.record for p in parsed]
    del parsed

    med, share, load, counts = timed(lambda: label_counts(records), args.runs)
    line("label_counts (one pass, once per label set)", n, med, share, load)
    results = []
    for variant in ("trace_guide", "ragbench"):
        fmed, share, load, s = timed(lambda: scores_from_counts(counts, variant), max(args.runs, 5))  # noqa: B023
        line(f"  {variant} formulas on the counts", n, fmed, share, load)
        emed, share, load, s = timed(lambda: scores_from_counts(label_counts(records), variant), args.runs)  # noqa: B023
        line(f"  {variant} end to end (counts + formulas)", n, emed, share, load)
        rmed, rshare, rload, slow = timed(lambda: ref.score_all(records, variant), args.runs)  # noqa: B023
        want = np.array([[d[c] for c in s.columns] for d in slow])
        assert np.array_equal(s.to_numpy(), want, equal_nan=True), "vectorised scores disagree with the reference"
        results.append((f"{variant} scores end to end, {n:,} rows (ref: plain Python per record)", emed, emed * share,
                        rmed, rmed * rshare, True))  # True: the assert above stops the run when they differ
        line(f"  {variant} plain-Python reference (per record)", n, rmed, rshare, rload,
             f"  end to end x{rmed / emed:.1f}, formulas x{rmed / fmed:,.0f}")
    med, share, load, rep = timed(lambda: judge_report(records), args.runs)
    line("judge_report (4 judges, AUROC + RMSE)", n, med, share, load)
    adh = np.array([r.judges["trulens"].get("adherence", np.nan) for r in records])
    thresholds = np.linspace(0, 1, 101)
    med, share, load, d = timed(lambda: adherence_decisions(adh, thresholds), max(args.runs, 5))
    line(f"adherence_decisions {d.shape[0]} x {d.shape[1]:,}", n, med, share, load)

    docs = [d for r in records[: args.sentencize] for d in r.documents][: args.sentencize]
    chars = sum(map(len, docs))
    med, share, load, _ = timed(lambda: [split_sentences(d) for d in docs], 1)
    print(f"  pySBD sentencization: {len(docs)} documents ({chars:,} chars) in {med:.2f} s = {chars / med:,.0f} chars/s, "
          f"{med / len(docs) * 1e3:.1f} ms/document; CPU share {share:.0%}, load {load:.2f}")
    for r in results:
        emit(*r)


if __name__ == "__main__":
    main()
