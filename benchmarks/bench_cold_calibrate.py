"""A first `concord calibrate` on the demo project (issue #18 item 4): cold process, cold embedding cache.

Target: < 3 s wall (issue #28; issue #18 asked < 6 s); the ONNX file is made at install (`concord models prepare`, run by `make`), so a first run on a new machine pays no export. Every run copies a freshly built demo project (`concord demo`, whose embedding cache is empty:
vectors live in the project file) and runs `concord calibrate COPY --json` in a new interpreter, so imports, the
numba kernel's load from its disk cache, the ONNX session and every embedding are paid as a user pays them.
The child reports its phases: imports (the modules the command loads, imported first), embedding (time inside
OnnxEmbedder.encode, session creation included, and the threads it chose), the rest (pair table, grid, bootstrap,
human ceiling, storing the run). Reference in the same run: `concord --help` (interpreter + CLI start, no command
module), and with `--baseline TREE` the same command from another checkout (e.g. `git worktree add /tmp/base
<commit>`), interleaved run by run so both see the same load. Load average and CPU share (CPU / wall) are printed
with every figure: the machine is shared.

    python benchmarks/bench_cold_calibrate.py [--runs 3] [--baseline TREE]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchresult import emit

ROOT = Path(__file__).resolve().parents[1]
TARGET = 3.0  # seconds wall, issue #28 (issue #18: 6 s)

CHILD = r"""
import contextlib, io, json, sys, time
t0, c0 = time.perf_counter(), time.process_time()
tree, project = sys.argv[1:3]
sys.path.insert(0, tree)
import importlib
for m in ("app.cli", "app.commands.calibrate", "app.services.schemes", "app.services.evaluation", "app.store",
          "calibration.search.engine", "calibration.schemes.violations.search",
          "calibration.schemes.violations.calibrator", "calibration.schemes.violations.evaluation",
          "calibration.similarity.onnx_backend"):
    importlib.import_module(m)
t_imp = time.perf_counter() - t0
from calibration.similarity import onnx_backend
embed = {"s": 0.0, "threads": []}
_encode = onnx_backend.OnnxEmbedder.encode
def encode(self, texts):
    t = time.perf_counter()
    try:
        return _encode(self, texts)
    finally:
        embed["s"] += time.perf_counter() - t
        embed["threads"].append(getattr(self, "threads_used", None))
onnx_backend.OnnxEmbedder.encode = encode
from app.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    rc = main(["calibrate", project, "--json"])
print(json.dumps({"rc": rc, "imports": t_imp, "embed": embed["s"], "threads": sorted(set(embed["threads"]), key=str),
                  "in_process": time.perf_counter() - t0, "cpu": time.process_time() - c0}), file=sys.stderr)
"""


def timed_child(cmd: list[str]) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    """Wall seconds, child CPU seconds (user + system of the finished child), the process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), proc


def help_run() -> dict[str, float]:
    wall, cpu, proc = timed_child([sys.executable, "-m", "app.cli", "--help"])
    if proc.returncode:
        raise SystemExit(f"concord --help failed: {proc.stderr[-2000:]}")
    return {"wall": wall, "cpu": cpu}


def calibrate_run(tree: Path, template: Path, where: Path) -> dict[str, float]:
    project = where / f"cold-{time.monotonic_ns()}.concord"
    shutil.copyfile(template, project)  # a new demo: nothing embedded yet
    load = os.getloadavg()[0]
    wall, cpu, proc = timed_child([sys.executable, "-c", CHILD, str(tree), str(project)])
    if proc.returncode:
        raise SystemExit(f"calibrate failed ({tree}): {proc.stderr[-3000:]}")
    info = json.loads(proc.stderr.strip().splitlines()[-1])
    project.unlink()
    return info | {"wall": wall, "cpu": cpu, "load": load}


def show(label: str, r: dict) -> None:
    rest = r["in_process"] - r["imports"] - r["embed"]
    print(f"  {label}: total {r['wall']:.2f} s wall ({r['cpu']:.2f} s CPU, share {r['cpu'] / r['wall']:.2f}), imports "
          f"{r['imports']:.2f} s, embedding {r['embed']:.2f} s (ONNX threads {r['threads']}), rest {rest:.2f} s, "
          f"load {r['load']:.2f}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--baseline", type=Path, default=None, help="another checkout to run the same command from")
    args = ap.parse_args()
    trees = {"this tree": ROOT} | ({"baseline": args.baseline.resolve()} if args.baseline else {})
    with tempfile.TemporaryDirectory(prefix="bench-cold-calibrate-") as tmp:
        template = Path(tmp) / "demo.concord"
        subprocess.run([sys.executable, "-m", "app.cli", "demo", str(template)], cwd=ROOT, check=True,
                       capture_output=True, timeout=600)
        print(f"demo project built ({template.stat().st_size / 1e6:.1f} MB, no embeddings); {os.cpu_count()} CPUs; "
              f"load {os.getloadavg()[0]:.2f}", flush=True)
        results: dict[str, list[dict]] = {name: [] for name in trees}
        refs = []
        for i in range(args.runs):  # interleaved: every tree and the reference see the same load
            print(f"run {i + 1}:", flush=True)
            refs.append(help_run() | {"load": os.getloadavg()[0]})
            print(f"  reference `concord --help`: {refs[-1]['wall']:.2f} s wall, load {refs[-1]['load']:.2f}", flush=True)
            for name, tree in trees.items():
                results[name].append(calibrate_run(tree, template, Path(tmp)))
                show(name, results[name][-1])
    ref = statistics.median(r["wall"] for r in refs)
    print(f"\nmedians of {args.runs} (reference `concord --help` {ref:.2f} s):")
    for name, runs in results.items():
        for r in runs:
            r["rest"] = r["in_process"] - r["imports"] - r["embed"]
        med = {k: statistics.median(r[k] for r in runs) for k in ("wall", "cpu", "imports", "embed", "rest", "load")}
        verdict = f"target < {TARGET:.0f} s: {'MET' if med['wall'] < TARGET else 'NOT MET'}" if name == "this tree" else ""
        print(f"  {name}: total {med['wall']:.2f} s (x{med['wall'] / ref:.1f} the reference), CPU {med['cpu']:.2f} s "
              f"(share {med['cpu'] / med['wall']:.2f}), imports {med['imports']:.2f} s, embedding {med['embed']:.2f} s, "
              f"rest {med['rest']:.2f} s, load {med['load']:.2f}  {verdict}")
    med = {k: statistics.median(r[k] for r in results["this tree"]) for k in ("wall", "cpu", "load")}
    emit("cold calibrate on the demo (ref: concord --help)", med["wall"], med["cpu"], ref,
         statistics.median(r["cpu"] for r in refs), load=med["load"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
