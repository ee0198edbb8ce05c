"""Checking 100,000 RGB responses under both checkers: the engine (features once + decide) vs the plain reference.

    .venv/bin/python benchmarks/bench_rgb.py [--n 100000] [--runs 5] [--configs 256] [--rgb-data DIR]

Prints, per variant: the median wall time of the engine (features + one config), of `decide` alone for many
configs on precomputed features, and of the plain one-at-a-time reference (reference.py) in the same process;
plus the load average and the CPU share (process CPU time / wall) of each measurement. Responses are synthetic
(English and Chinese, answers with alternatives, rejection and error phrases mixed in). With --rgb-data DIR it also
parses RGB's released data files found there and assembles passages for them (counts only; the data stays there).
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchresult import emit  # noqa: E402
from calibration.schemes.rgb import CATALOGUE, RGB_EXTENDED, RGB_ORIGINAL, CheckerConfig, decide, features_from_records  # noqa: E402
from calibration.schemes.rgb.records import RGBRecord  # noqa: E402
from calibration.schemes.rgb.reference import reference_decision  # noqa: E402

EN = ("The answer is {a}. ", "According to the documents, {a} is correct. ", "I can not answer the question because "
      "of the insufficient information in documents. ", "There are factual errors in the provided documents. ",
      "However, the documents say {f}. ", "It is not {f}. ", "I don't know. ", "Some filler text about the topic "
      "that goes on for a while, as model answers do. ")
ZH = ("答案是{a}。", "文档信息不足，因此我无法基于提供的文档回答该问题。", "提供文档的文档存在事实性错误。", "根据文档，{f}是错误的。",
      "这是一段关于这个话题的补充说明，模型的回答常常如此。")
ANSWERS_EN = ("Paris", "Tampa, Florida", "New York", "2023", "Joe Biden", "the Golden State Warriors")
ANSWERS_ZH = ("北京", "上海", "12人", "1月3日", "梅西")


def synthetic(n: int, seed: int = 0) -> list[RGBRecord]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        zh = rng.random() < 0.4
        pool, parts = (ANSWERS_ZH, ZH) if zh else (ANSWERS_EN, EN)
        a, f = (str(x) for x in rng.choice(pool, size=2, replace=False))
        k = int(rng.integers(1, 5))
        text = "".join(str(p).format(a=a if rng.random() < 0.7 else a.upper(), f=f) for p in rng.choice(parts, size=k))
        if zh and rng.random() < 0.3:
            text = " ".join(text)  # spaced-out Chinese, which RGB despaces
        answer: Any = a if rng.random() < 0.5 else (a, (f, a.lower()))
        task = ("noise", "rejection", "integration", "counterfactual")[i % 4]
        out.append(RGBRecord(str(i), task, "zh" if zh else "en", "q", answer, (), text,  # type: ignore[arg-type]
                             noise_rate=float(rng.choice([0.0, 0.2, 0.4, 0.6, 0.8, 1.0])), model=f"m{i % 3}",
                             fakeanswer=f if task == "counterfactual" else None))
    return out


def measure(fn: Callable[[], Any], runs: int) -> tuple[float, float]:
    """(median wall seconds, CPU share = process CPU time / wall over all runs)."""
    walls = []
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        walls.append(time.perf_counter() - t)
    return statistics.median(walls), (time.process_time() - cpu0) / (time.perf_counter() - wall0)


def random_configs(n: int, seed: int = 1) -> list[CheckerConfig]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        variant = ("rgb_original", "rgb_extended")[i % 2]
        cat = CATALOGUE[variant]
        out.append(CheckerConfig(variant, float(rng.choice([0.5, 0.6, 0.7, 0.8, 0.9, 1.0])),  # type: ignore[arg-type]
                                 tuple(p for p in cat["rejection"] if rng.random() < 0.6),
                                 tuple(p for p in cat["error"] if rng.random() < 0.6),
                                 bool(rng.random() < 0.5), bool(rng.random() < 0.5)))
    return out


def real_data(directory: Path) -> None:
    from calibration.schemes.rgb import assemble_docs, build_messages, dataset_name, parse_data_file

    print(f"\nRGB release files in {directory}:")
    for path in sorted(directory.glob("*.json")):
        try:
            name = dataset_name(path.name)
        except ValueError:
            continue
        t = time.perf_counter()
        instances, problems = parse_data_file(path.read_text(encoding="utf-8"), name.dataset)
        parse_ms = 1000 * (time.perf_counter() - t)
        t = time.perf_counter()
        docs = n_prompts = 0
        for rate in (0.0, 0.2, 0.4, 0.6, 0.8, 1.0):
            for inst in instances:
                d = assemble_docs(inst, rate, 5, name.dataset)
                build_messages(inst.query, d, name.language)
                docs += len(d)
                n_prompts += 1
        print(f"  {path.name}: {len(instances)} instances, {len(problems)} problems ({parse_ms:.0f} ms); "
              f"{n_prompts} prompts at noise 0..1 x 5 passages, {docs} docs, {1000 * (time.perf_counter() - t):.0f} ms")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--reference-runs", type=int, default=3)
    ap.add_argument("--configs", type=int, default=256)
    ap.add_argument("--rgb-data", type=Path, default=None)
    args = ap.parse_args()

    records = synthetic(args.n)
    print(f"{args.n:,} synthetic responses; load average before: {os.getloadavg()}; cpus: {os.cpu_count()}")
    feats = features_from_records(records)
    med, share = measure(lambda: features_from_records(records), args.runs)
    print(f"features (both variants, once): median {med:.3f} s over {args.runs} runs, CPU share {share:.2f}")
    results = []
    for cfg in (RGB_ORIGINAL, RGB_EXTENDED):
        med_e, share_e = measure(lambda: decide(features_from_records(records, (cfg.variant,)), [cfg]), args.runs)
        med_d, share_d = measure(lambda: decide(feats, [cfg]), args.runs)
        ref: list[list[dict[str, bool]]] = []
        med_r, share_r = measure(lambda: ref.append([reference_decision(r, cfg) for r in records]), args.reference_runs)
        d = decide(feats, [cfg])
        differ = sum(any(bool(d.label(k)[0][i]) != ref[-1][i][k] for k in ("correct", "rejected", "error_detected",
                                                                               "error_corrected"))
                     for i in range(len(records)))
        print(f"{cfg.variant}: engine (features + decide) {med_e:.3f} s (CPU share {share_e:.2f}); decide alone "
              f"{1000 * med_d:.1f} ms ({share_d:.2f}); plain reference {med_r:.3f} s ({share_r:.2f}, "
              f"{args.reference_runs} runs) -> {med_r / med_e:.1f}x; "
              f"correct {d.correct.mean():.3f}, rejected {d.rejected.mean():.3f}, "
              f"detected {d.error_detected.mean():.3f}, corrected {d.error_corrected.mean():.3f}; "
              f"responses where engine and reference differ: {differ}")
        results.append((f"{cfg.variant}: features + decide, {args.n:,} responses (ref: plain per response)", med_e,
                        med_e * share_e, med_r, med_r * share_r, differ == 0))
    cfgs = random_configs(args.configs)
    med_m, share_m = measure(lambda: decide(feats, cfgs), args.runs)
    per = med_m / len(cfgs)
    print(f"decide for {len(cfgs)} configs x {args.n:,} responses: median {med_m:.3f} s ({1000 * per:.2f} ms per "
          f"config), CPU share {share_m:.2f}")
    print(f"load average after: {os.getloadavg()}")
    if args.rgb_data:
        real_data(args.rgb_data)
    for r in results:
        emit(*r)


if __name__ == "__main__":
    main()
