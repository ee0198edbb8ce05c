"""Import speed: 100,000 violations samples (3 ground-truth + 3 predicted violations each) from JSONL.

Goals (issue 2): import < 10 s, opening the project < 1 s, `concord status` < 1 s, on a 2-core machine.
Prints the median of several runs (each import into a fresh project) and the ratio to a plain reference in the
same process (json.loads of every line plus one executemany of the violation rows into a bare SQLite table:
the floor any importer that parses and stores the data pays).

    python benchmarks/bench_import.py [--samples 100000] [--runs 3] [--quote-only 0.0]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.io.imports import import_file  # noqa: E402
from app.store import Project  # noqa: E402

WORDS = ("our new serum guarantees results in seven days and is clinically proven to erase wrinkles forever "
         "buy now while stocks last free shipping on every order best price in town doctors recommend it "
         "100% natural ingredients with no side effects at all limited offer exclusive deal").split()
RULES = ["No absolute claims", "No unverified medical claims", "No pressure tactics", "Avoid superlatives",
         "Disclose conditions of offers", "No fake scarcity"]
CATEGORIES = ["compliance", "brand voice", "legal"]
CHECKERS = ["baseline@1.0.0|gpt-4o-mini"]


def make_text(rng: random.Random) -> str:
    n = rng.randint(40, 70)
    return " ".join(rng.choice(WORDS) for _ in range(n)) + " 🙂"


def make_violation(rng: random.Random, text: str, quote_only: float) -> dict:
    start = rng.randrange(0, len(text) - 30)
    end = start + rng.randint(8, 30)
    v = {"start": start, "end": end, "quote": text[start:end], "rule": rng.choice(RULES),
         "category": rng.choice(CATEGORIES), "explanation": "The phrase makes a claim the brand cannot support.",
         "correction": "Rephrase without the claim."}
    if rng.random() < quote_only:
        del v["start"], v["end"]
    return v


def generate(path: Path, n: int, seed: int = 7, quote_only: float = 0.0) -> None:
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(n):
            text = make_text(rng)
            rec = {
                "id": f"s{i:06d}",
                "text": text,
                "ground_truth": [make_violation(rng, text, 0.0) for _ in range(3)],
                "predictions": {CHECKERS[0]: [make_violation(rng, text, quote_only) for _ in range(3)]},
                "split": "train" if i % 5 else "test",
            }
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")


def reference(path: Path, db: Path) -> float:
    """Plain parse + bulk insert of the same rows, no validation: a floor for comparison."""
    t0 = time.perf_counter()
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE v (sample_id, checker, idx, start, e, quote, rule, category, explanation, correction)")
    conn.execute("CREATE TABLE s (id PRIMARY KEY, text)")
    srows, vrows = [], []
    with open(path, "rb") as fh:
        for line in fh:
            r = json.loads(line)
            srows.append((r["id"], r["text"]))
            for checker, vs in [("", r["ground_truth"]), *r["predictions"].items()]:
                for i, v in enumerate(vs):
                    vrows.append((r["id"], checker, i, v.get("start"), v.get("end"), v["quote"], v["rule"],
                                  v.get("category"), v.get("explanation"), v.get("correction")))
    with conn:
        conn.executemany("INSERT INTO s VALUES (?, ?)", srows)
        conn.executemany("INSERT INTO v VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", vrows)
    conn.close()
    return time.perf_counter() - t0


def timed(fn, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--quote-only", type=float, default=0.0, help="share of predictions given by quote only")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmpd = Path(tmp)
        data = tmpd / "bench.jsonl"
        generate(data, args.samples, quote_only=args.quote_only)
        size_mb = data.stat().st_size / 1e6
        print(f"input: {args.samples} samples, {args.samples * 6} violations, {size_mb:.0f} MB JSONL")

        print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start "
              "(other work on the machine inflates wall times; CPU seconds are this process's own)")

        def run_imports(workers: int | None, label: str) -> Path:
            times, cpus, last = [], [], None
            for run in range(args.runs):
                proj = tmpd / f"{label}{run}.concord"
                with Project.create(proj) as p:
                    t0, c0 = time.perf_counter(), time.process_time()
                    report = import_file(p, data, workers=workers)
                    times.append(time.perf_counter() - t0)
                    cpus.append(time.process_time() - c0)
                assert report.violation_samples.added == args.samples, report.summary()
                last = proj
            med = statistics.median(times)
            print(f"import_file [{label}]: median {med:.2f} s of {args.runs} ({', '.join(f'{t:.2f}' for t in times)}; "
                  f"CPU of the calling process {statistics.median(cpus):.2f} s), {args.samples / med:,.0f} samples/s  "
                  f"[goal < 10 s: {'ok' if med < 10 else 'MISSED'}]")
            assert last is not None
            return last

        last = run_imports(None, "default: all cores")
        run_imports(1, "one process")
        ref = [reference(data, tmpd / f"ref{i}.db") for i in range(args.runs)]
        print(f"reference (json.loads + executemany into bare tables, no validation, one process): median "
              f"{statistics.median(ref):.2f} s")

        with Project.open(last) as p:  # re-import: everything unchanged
            t0 = time.perf_counter()
            report = import_file(p, data)
            print(f"re-import of the same file (no changes): {time.perf_counter() - t0:.2f} s, changed={report.changed}")

        def open_close() -> None:
            Project.open(last).close()

        def status_in_process() -> None:
            with Project.open(last) as p:
                p.status_counts()

        opens = timed(open_close, 5)
        stats = timed(status_in_process, 5)
        print(f"open project (in-process): median {statistics.median(opens) * 1000:.0f} ms  "
              f"[goal < 1 s: {'ok' if statistics.median(opens) < 1 else 'MISSED'}]")
        print(f"open + status_counts (in-process): median {statistics.median(stats) * 1000:.0f} ms")

        env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))

        def cli(*argv: str) -> None:
            subprocess.run([sys.executable, "-m", "app.cli", *argv], check=True, env=env, stdout=subprocess.DEVNULL)

        baseline = timed(lambda: subprocess.run([sys.executable, "-c", "pass"], check=True), 3)
        st = timed(lambda: cli("status", str(last)), 3)
        sj = timed(lambda: cli("status", str(last), "--json"), 3)
        print(f"`concord status` (subprocess, incl. interpreter start {statistics.median(baseline) * 1000:.0f} ms): "
              f"median {statistics.median(st) * 1000:.0f} ms, --json {statistics.median(sj) * 1000:.0f} ms  "
              f"[goal < 1 s: {'ok' if statistics.median(st) < 1 else 'MISSED'}]")


if __name__ == "__main__":
    main()
