"""`concord evaluate` at scale (issue #18): N violations samples (3 ground-truth + 3 predicted violations each,
bench_import's generator), `--embedding jaccard` so no model is loaded, the two default configs, 1000 bootstrap
replicates. Target: < 4 s and < 600 MB warm (the project file in the page cache, after one untimed run).

Every evaluate runs in a child process of its own, so its peak resident memory (ru_maxrss) is that run's alone;
medians of `--runs` runs. References, measured in the same run and interleaved with it, so under the same load:
every round first times a fixed floor (a plain sqlite3 read of every violation row of the project, no concord code:
the data evaluate must read at least), and each figure is also given as a ratio to it; `--baseline TREE` runs the
same command with another checkout (e.g. `git worktree add /tmp/base <commit before the change>`). Load average and
CPU share (CPU seconds / wall seconds, above 1 when BLAS uses threads) are printed with every figure: the machine is
shared and its load inflates wall times. Outputs are compared across trees and runs; when they differ, the reports
without their bootstrap intervals are compared too (a tree may draw its replicates another way) and each tree's
first F1 interval is printed.

    python benchmarks/bench_evaluate.py [--samples 100000] [--runs 3] [--baseline TREE] [--project P.concord]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from benchresult import emit  # noqa: E402

CHILD = r"""
import contextlib, hashlib, io, json, os, resource, sys, time
tree, project = sys.argv[1:3]
sys.path.insert(0, tree)
t0, c0 = time.perf_counter(), time.process_time()
from app.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    rc = main(["evaluate", project, "--embedding", "jaccard", "--json"])
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
def estimates(x):  # the report without its bootstrap intervals (keys ending in _ci)
    if isinstance(x, dict):
        return {k: estimates(v) for k, v in x.items() if not k.endswith("_ci")}
    return [estimates(v) for v in x] if isinstance(x, list) else x
report = json.loads(out.getvalue())
intervals = {f"{name} {checker}": m["f1_ci"] for name, c in report["violations"]["configs"].items()
             for checker, m in sorted(c["checkers"].items())[:1]}
print(json.dumps({"rc": rc, "wall": wall, "cpu": cpu, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "digest": hashlib.sha256(out.getvalue().encode()).hexdigest()[:16],
                  "estimates": hashlib.sha256(json.dumps(estimates(report), sort_keys=True).encode()).hexdigest()[:16],
                  "intervals": intervals}), file=sys.stderr)
"""


REFERENCE = r"""
import json, resource, sqlite3, sys, time
t0, c0 = time.perf_counter(), time.process_time()
conn = sqlite3.connect(sys.argv[1])
rows = conn.execute('SELECT sample_id, checker, idx, start, "end", rule, category, explanation, correction '
                    'FROM violations').fetchall()
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
print(json.dumps({"rc": 0, "wall": wall, "cpu": cpu, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "digest": f"{len(rows)} rows"}), file=sys.stderr)
"""


def reference(project: Path) -> dict:
    """The floor: every violation row read by plain sqlite3 in a fresh interpreter (no concord import)."""
    load = os.getloadavg()[0]
    proc = subprocess.run([sys.executable, "-c", REFERENCE, str(project)], capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(f"reference failed:\n{proc.stderr[-2000:]}")
    info = json.loads(proc.stderr.strip().splitlines()[-1])
    info["load"] = load
    return info


def child(tree: Path, project: Path) -> dict:
    load = os.getloadavg()[0]
    proc = subprocess.run([sys.executable, "-c", CHILD, str(tree), str(project)], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(tree)))
    if proc.returncode:
        raise SystemExit(f"{tree}: evaluate failed:\n{proc.stderr[-2000:]}")
    info = json.loads(proc.stderr.strip().splitlines()[-1])
    info["load"] = load
    return info


def show(label: str, info: dict) -> None:
    ratio = f" = {info['ratio']:.1f} x reference" if "ratio" in info else ""
    print(f"  {label}: {info['wall']:.2f} s{ratio}, peak RSS {info['rss_mb']:.0f} MB, CPU {info['cpu']:.1f} s = "
          f"{info['cpu'] / info['wall']:.2f} cores, load {info['load']:.2f}, output {info['digest']}", flush=True)


def make_project(samples: int, where: Path) -> Path:
    import bench_import

    data, project = where / "data.jsonl", where / "bench.concord"
    bench_import.generate(data, samples)
    for argv in (["init", str(project)], ["import", str(project), str(data)]):
        subprocess.run([str(Path(sys.executable).parent / "concord"), *argv], check=True, capture_output=True)
    return project


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--baseline", type=Path, default=None, help="another checkout to run beside this one (the before figure)")
    ap.add_argument("--project", type=Path, default=None, help="an existing project to evaluate (skips generation)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        project = args.project or make_project(args.samples, Path(tmp))
        trees = [("this checkout", ROOT)] + ([("baseline " + str(args.baseline), args.baseline)] if args.baseline else [])
        print(f"concord evaluate {project} --embedding jaccard ({args.samples if not args.project else '?'} samples), "
              f"medians of {args.runs} warm runs; CPU {os.cpu_count()} cores")
        results: dict[str, list[dict]] = {label: [] for label, _ in trees}
        for label, tree in trees:  # one untimed run each: page cache warm, stored machine scores in place
            child(tree, project)
        floors: list[dict] = []
        for i in range(args.runs):  # interleaved, so the reference and both trees see the same load
            floors.append(reference(project))
            show(f"reference run {i + 1}", floors[-1])
            for label, tree in trees:
                info = child(tree, project)
                info["ratio"] = info["wall"] / floors[-1]["wall"]
                show(f"{label} run {i + 1}", info)
                results[label].append(info)
        floor = statistics.median(r["wall"] for r in floors)
        print(f"reference (plain sqlite3 read of every violation row): median {floor:.2f} s "
              f"(CPU {statistics.median(r['cpu'] for r in floors):.2f} s), load {statistics.median(r['load'] for r in floors):.2f}")
        for label, runs in results.items():
            wall = statistics.median(r["wall"] for r in runs)
            rss = statistics.median(r["rss_mb"] for r in runs)
            share = statistics.median(r["cpu"] / r["wall"] for r in runs)
            load = statistics.median(r["load"] for r in runs)
            cpu = statistics.median(r["cpu"] for r in runs)
            ratio = statistics.median(r["ratio"] for r in runs)
            print(f"{label}: median {wall:.2f} s = {ratio:.1f} x reference (CPU {cpu:.1f} s), peak RSS {rss:.0f} MB, "
                  f"CPU share {share:.2f}, load {load:.2f} [target < 4 s, < 600 MB]")
        digests = {r["digest"] for runs in results.values() for r in runs}
        if len(digests) == 1:
            print("outputs identical across trees and runs")
        else:  # a tree may draw its bootstrap replicates differently: the estimates must still agree
            same = len({r["estimates"] for runs in results.values() for r in runs}) == 1
            print(f"outputs differ ({len(digests)} kinds); without the bootstrap intervals they are "
                  f"{'IDENTICAL' if same else 'DIFFERENT TOO'}. The first checker's F1 interval per config:")
            for label, runs in results.items():
                print(f"  {label}: {runs[0]['intervals']}")
        runs = results["this checkout"]
        emit(f"concord evaluate, {args.samples if not args.project else '?'} samples (ref: sqlite3 read floor)",
             statistics.median(r["wall"] for r in runs), statistics.median(r["cpu"] for r in runs), floor,
             statistics.median(r["cpu"] for r in floors), load=statistics.median(r["load"] for r in runs))


if __name__ == "__main__":
    main()
