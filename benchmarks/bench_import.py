"""Import at scale (issue #18): N violations samples (3 ground-truth + 3 predicted violations each) from JSONL.

Targets (issues #18, #28): import 1M samples < 70 s, within 1.2x the reference and < 1 GB peak memory; first import
of 100k < 8 s; re-import of an unchanged 100k file < 1.0 s; `concord status` on the 1M project < 0.5 s. The stored
samples and violations are checked against the reference's (`stored_digest`). Every import runs in a child process of its own, so its peak resident
memory (ru_maxrss of the child, and of the child's own worker processes) is that import's alone. The reference,
in the same run: json.loads of every line plus executemany of the sample and violation rows into bare SQLite
tables (the floor any importer that parses and stores the data pays; it holds every row in memory, as importers
did before streaming), with SQLite's default durability (rollback journal, synchronous FULL): the import's first load
into an empty project writes with the same (the journal mode and synchronous level of both are printed). Load average and CPU share (CPU seconds / wall seconds) are printed with every figure, and the writer's idle time (its main thread neither on a CPU nor waiting for one: waiting for a worker or the disk; Linux, /proc):
the machine is shared and its load inflates wall times. `--baseline TREE` runs the same imports and status with
another checkout (e.g. a `git worktree` of the commit before the streaming import) for a before/after in one run.

    python benchmarks/bench_import.py [--samples 1000000] [--reimport 100000] [--runs 1] [--dir /tmp/x]
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

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


def reference(path: Path, db: Path) -> str:
    """Plain parse + bulk insert of the same rows, no validation: a floor for comparison. Its durability is SQLite's
    default, a rollback journal with synchronous FULL, as the import's first load into an empty project has it
    (`durability` reads both back); the mode it ran in is returned."""
    conn = sqlite3.connect(db)
    mode = durability(conn)
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
    return mode


def durability(conn: sqlite3.Connection) -> str:
    """The journal mode and synchronous level a connection writes with (e.g. "delete/FULL")."""
    sync = {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}[conn.execute("PRAGMA synchronous").fetchone()[0]]
    return f"{conn.execute('PRAGMA journal_mode').fetchone()[0]}/{sync}"


def stored_digest(db: Path, samples: str, violations: str, end: str) -> str:
    """SHA-256 of the samples (id, text) and violations (every field but the ids) a database holds, in key order: the
    import and the reference must store the same (read with sqlite3 once the child that wrote the file has exited)."""
    h = hashlib.sha256()
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        for row in conn.execute(f"SELECT id, text FROM {samples} ORDER BY id"):
            h.update(repr(row).encode())
        for row in conn.execute(f'SELECT sample_id, checker, idx, start, "{end}", quote, rule, category, explanation, '
                                f"correction FROM {violations} ORDER BY sample_id, checker, idx"):
            h.update(repr(row).encode())
    finally:
        conn.close()
    return h.hexdigest()


CHILD = r"""
import gc, json, os, resource, sys, time
tree, what, project, data, workers = sys.argv[1:6]
sys.path.insert(0, tree)
def sched():  # this thread's (the writer's) seconds on a CPU and waiting for one (Linux), else None
    try:
        with open("/proc/thread-self/schedstat") as f:
            return [int(x) / 1e9 for x in f.read().split()[:2]]
    except OSError:
        return None
s0 = sched()
t0, c0 = time.perf_counter(), time.process_time()
if what == "import":
    from app.io.imports import import_file
    from app.store import Project
    p = Project.open(project) if os.path.exists(project) else Project.create(project)
    t1 = time.perf_counter()
    modes = []  # the journal mode and synchronous level the import's violation rows were written with
    from app.io import imports
    write = imports._write_prepared
    def spy(project, *a):
        modes.append("%s/%s" % (project.scalar("PRAGMA journal_mode"), {2: "FULL"}.get(project.scalar("PRAGMA synchronous"), "not FULL")))
        return write(project, *a)
    imports._write_prepared = spy
    report = import_file(p, data, workers=None if workers == "auto" else int(workers))
    call = time.perf_counter() - t1
    p.close()
    info = {"added": report.counts["violations"].added, "unchanged": report.counts["violations"].unchanged,
            "changed": report.changed, "call": call, "durability": ", ".join(sorted(set(modes)))}
else:
    import importlib.util
    spec = importlib.util.spec_from_file_location("bench", os.path.join(os.environ["BENCH_ROOT"], "benchmarks", "bench_import.py"))
    bench = importlib.util.module_from_spec(spec); spec.loader.exec_module(bench)
    info = {"durability": bench.reference(__import__("pathlib").Path(data), __import__("pathlib").Path(project))}
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
s1 = sched()
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
if s0 and s1:  # neither on a CPU nor waiting for one: waiting for a worker or the disk
    info["idle"] = max(0.0, wall - (s1[0] - s0[0]) - (s1[1] - s0[1]))
info.update(wall=wall, cpu=cpu, cpu_children=kids.ru_utime + kids.ru_stime,
            rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, rss_children_mb=kids.ru_maxrss / 1024)
print(json.dumps(info))
"""


def child(tree: Path, what: str, project: Path, data: Path, workers: str = "auto") -> dict:
    load = os.getloadavg()[0]
    # cwd: the project's directory, so no checkout's `app` package is first on the path of a tree's import workers
    # (before they started with `python -P`, a baseline's workers run from this checkout ran this checkout's code)
    out = subprocess.run([sys.executable, "-c", CHILD, str(tree), what, str(project), str(data), workers],
                         check=True, capture_output=True, text=True, env=dict(os.environ, BENCH_ROOT=str(ROOT)),
                         cwd=str(project.parent))
    info = json.loads(out.stdout.strip().splitlines()[-1])
    info["load"] = load
    return info


def show(label: str, info: dict, target: str = "") -> None:
    share = (info["cpu"] + info.get("cpu_children", 0)) / info["wall"]
    call = f" (import_file itself {info['call']:.2f} s; the rest is the interpreter and imports)" if "call" in info else ""
    print(f"{label}: {info['wall']:.2f} s{call}, peak RSS {info['rss_mb']:.0f} MB (workers' peak {info['rss_children_mb']:.0f} MB); "
          f"CPU {info['cpu']:.1f} s + workers {info.get('cpu_children', 0):.1f} s = {share:.2f} cores; "
          + (f"writer's main thread idle {info['idle']:.1f} s (waiting for a worker or the disk); " if "idle" in info else "")
          + f"load {info['load']:.2f}" + (f"; written in journal mode/synchronous {info['durability']}"
                                        if info.get("durability") else "") + (f"  [{target}]" if target else ""), flush=True)


def status_times(tree: Path, project: Path, runs: int = 5) -> list[float]:
    env = dict(os.environ, PYTHONPATH=str(tree))
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "app.cli", "status", str(project)], check=True, env=env,
                       stdout=subprocess.DEVNULL, cwd=str(tree))
        out.append(time.perf_counter() - t0)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=int, default=1_000_000)
    ap.add_argument("--reimport", type=int, default=100_000, help="samples of the re-import file")
    ap.add_argument("--runs", type=int, default=1, help="imports of the big file (each into a fresh project)")
    ap.add_argument("--quote-only", type=float, default=0.0, help="share of predictions given by quote only")
    ap.add_argument("--dir", help="where to write the data and projects (default: a temporary directory)")
    ap.add_argument("--baseline", help="another checkout to measure the same way (before/after in one run)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        tmpd = Path(tmp)
        big, small = tmpd / "big.jsonl", tmpd / "small.jsonl"
        generate(big, args.samples, quote_only=args.quote_only)
        generate(small, args.reimport, seed=11, quote_only=args.quote_only)
        print(f"input: {args.samples} samples ({big.stat().st_size / 1e6:.0f} MB JSONL), re-import file {args.reimport} "
              f"samples; machine: {os.cpu_count()} cores, load {os.getloadavg()}", flush=True)
        trees = [("this tree", ROOT)] + ([("baseline " + args.baseline, Path(args.baseline))] if args.baseline else [])
        ref = [child(ROOT, "reference", tmpd / f"ref{i}.db", big) for i in range(args.runs)]
        ref_digest = stored_digest(tmpd / "ref0.db", "s", "v", "e")
        for i, r in enumerate(ref):
            show(f"reference json.loads + executemany, {args.samples} samples (run {i + 1})", r)
        for label, tree in trees:
            walls, cpus, same = [], [], []
            for i in range(args.runs):
                proj = tmpd / f"{label[:4]}{i}.concord"
                info = child(tree, "import", proj, big)
                assert info["added"] == args.samples, info
                same.append(stored_digest(proj, "samples", "violations", "end") == ref_digest)
                walls.append(info["wall"])
                cpus.append(info["cpu"] + info.get("cpu_children", 0))
                show(f"{label}: import {args.samples} samples (run {i + 1})", info, "target < 70 s and 1.2x the reference, < 1 GB at 1M")
            print(f"{label}: import median {statistics.median(walls):.2f} s = {statistics.median(walls) / statistics.median(r['wall'] for r in ref):.2f}x the reference; "
                  f"CPU {statistics.median(cpus):.1f} s = {statistics.median(cpus) / statistics.median(r['cpu'] + r.get('cpu_children', 0) for r in ref):.2f}x; "
                  f"stored samples and violations {'the same as' if all(same) else 'DIFFERENT FROM'} the reference's")
            st = status_times(tree, proj)
            print(f"{label}: `concord status` on the {args.samples}-sample project (subprocess, 5 runs): median "
                  f"{statistics.median(st):.2f} s ({', '.join(f'{t:.2f}' for t in st)}); load {os.getloadavg()[0]:.2f}  "
                  "[target < 0.5 s at 1M]", flush=True)
            sproj = tmpd / f"{label[:4]}-small.concord"
            show(f"{label}: first import of {args.reimport}", child(tree, "import", sproj, small), "target < 8 s at 100k")
            again = [child(tree, "import", sproj, small) for _ in range(3)]
            assert all(not a["changed"] and a["unchanged"] == args.reimport for a in again), again
            for k, a in enumerate(again):
                show(f"{label}: re-import unchanged {args.reimport} (run {k + 1})", a, "target < 1.0 s at 100k")
            print(f"{label}: re-import median {statistics.median(a['wall'] for a in again):.2f} s, import_file itself "
                  f"{statistics.median(a['call'] for a in again):.2f} s", flush=True)
            if tree == ROOT:
                med = statistics.median
                results = [(f"import {args.samples:,} samples (ref: json.loads + executemany)", med(walls), med(cpus),
                            med(r["wall"] for r in ref), med(r["cpu"] + r.get("cpu_children", 0) for r in ref), all(same)),
                           (f"re-import unchanged {args.reimport:,} (no ref)", med(a["wall"] for a in again),
                            med(a["cpu"] + a.get("cpu_children", 0) for a in again))]
    from benchresult import emit  # here: the reference child loads this file by path, without benchmarks/ on sys.path

    for r in results:
        emit(*r)


if __name__ == "__main__":
    main()
