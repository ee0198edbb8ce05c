"""`make bench-quick`: every benchmark in benchmarks/ at a small size, one after another, and one table of results.

Each `bench_*.py` runs in a child process with the small arguments in QUICK (its defaults are untouched) and
prints its figures as usual, ending with `BENCH-RESULT {json}` lines (benchmarks/benchresult.py); this script
reads those lines and prints one row per timed thing: what was timed, the median wall, the in-run reference's wall,
the ratios (wall and CPU) to it, the load average, the CPU share (CPU / wall) and whether the output matched the
reference's. A benchmark whose data is absent says "skipped: no data"; one that fails says so with its exit
status. The run holds the benchmark lock (bench_evaluate_schemes.bench_lock) for its whole length, so no other
benchmark on the machine runs beside it; the children are told the lock is held.

Small sizes measure that the harness works and roughly where the ratios sit, not the issue's figures: those come
from the full runs (`make bench`), medians of several runs, on a quiet machine.

    python benchmarks/quick.py [--only bench_rgb,bench_trace] [--timeout 240] [--log DIR]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from bench_evaluate_schemes import LOCK_HELD, bench_lock  # noqa: E402
from benchresult import PREFIX  # noqa: E402

# script name -> its small arguments (every bench_*.py needs an entry: tests/test_bench_quick.py checks it)
QUICK: dict[str, list[str]] = {
    "bench_adaptive_overlap": ["--orders", "2", "--bootstrap", "100"],
    "bench_addm": ["--businesses", "2000", "--grid-businesses", "300", "--runs", "1", "--boot", "20",
                   "--slice", "500"],
    "bench_agreement": ["--units", "2000", "--repeats", "1", "--n-boot", "50"],
    "bench_agreement_cli": ["--units", "1000", "--repeats", "1", "--n-boot", "50"],
    "bench_calibration": ["--samples", "300", "--runs", "1", "--grids", "fixed", "--n-boot", "50"],
    "bench_calibration_engines": ["--samples", "300", "--runs", "1", "--skip-million"],
    "bench_cold_calibrate": ["--runs", "1"],
    "bench_embeddings": ["--texts", "200", "--runs", "1", "--phases", "quiet"],
    "bench_evaluate": ["--samples", "1000", "--runs", "1"],
    "bench_evaluate_schemes": ["--samples", "100", "--runs", "1", "--schemes", "violations,rgb,trace,rubric,addm,judge"],
    "bench_faithbench": ["--bootstrap", "100"],
    "bench_gain_verdict": ["--runs", "3", "--boot", "50"],
    "bench_guarantee": ["--quick"],
    "bench_gui": ["--samples", "1000", "--runs", "2"],
    "bench_import": ["--samples", "2000", "--reimport", "1000"],
    "bench_matching": ["--samples", "300", "--runs", "1", "--slice", "2000"],
    "bench_planner": ["--starts", "100", "--targets", "0.08", "--repeats", "1", "--bootstrap", "100"],
    "bench_queue": ["--seeds", "1", "--pool", "300", "--max-labels", "200"],
    "bench_rgb": ["--n", "2000", "--runs", "1", "--reference-runs", "1", "--configs", "16"],
    "bench_trace": ["--rows", "1000", "--runs", "1", "--sentencize", "20"],
    "bench_trace_view": ["--runs", "3"],
}
COLUMNS = ("benchmark", "timed", "wall s", "ref wall s", "ratio wall", "ratio CPU", "load", "CPU share", "matched")


@dataclass
class Outcome:
    """One benchmark's run: its result lines, or why there are none."""
    name: str
    results: list[dict[str, Any]]
    returncode: int
    seconds: float
    error: str = ""


def benchmarks() -> list[str]:
    return sorted(p.stem for p in HERE.glob("bench_*.py"))


def parse_results(stdout: str) -> list[dict[str, Any]]:
    """The `BENCH-RESULT {json}` lines of a benchmark's output, in order."""
    return [json.loads(line[len(PREFIX):]) for line in stdout.splitlines() if line.startswith(PREFIX)]


def run_benchmark(script: Path, args: list[str], timeout: float, log: Path | None = None,
                  tmpdir: Path | None = None) -> Outcome:
    """Run one benchmark script in a child process (this checkout first on its path) and collect its result lines;
    its output is echoed when it ends, and kept in `log/<name>.log` when given. With `tmpdir`, the child's temporary
    files go there (some benchmarks keep their generated projects)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
               HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false",
               QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"))
    env[LOCK_HELD] = "1"
    if tmpdir is not None:
        env["TMPDIR"] = str(tmpdir)
    t0 = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, str(script), *args], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=timeout)
        out, err, rc = proc.stdout, proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        err, rc = f"timed out after {timeout:.0f} s", -1
    seconds = time.perf_counter() - t0
    if log is not None:
        log.mkdir(parents=True, exist_ok=True)
        (log / f"{script.stem}.log").write_text(out + ("\n--- stderr ---\n" + err if err else ""), encoding="utf-8")
    print(out, end="", flush=True)
    results = parse_results(out)
    error = ""
    if rc != 0:
        lines = [x for x in err.strip().splitlines() if x.strip()]
        error = f"failed (exit {rc}): {lines[-1][:120] if lines else 'no message'}"
    elif not results:
        error = f"no {PREFIX.strip()} line"
    return Outcome(script.stem, results, rc, seconds, error)


def _num(x: float | None, fmt: str) -> str:
    return "-" if x is None else format(x, fmt)


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def rows(outcome: Outcome) -> list[list[str]]:
    """The table rows of one benchmark: one per result line, or one saying it was skipped or failed."""
    if outcome.error:
        return [[outcome.name, outcome.error, *["-"] * (len(COLUMNS) - 2)]]
    out = []
    for r in outcome.results:
        if "skipped" in r:
            out.append([outcome.name, f"skipped: {r['skipped']}", *["-"] * (len(COLUMNS) - 2)])
            continue
        wall, cpu = r.get("wall"), r.get("cpu")
        matched = {True: "yes", False: "NO", None: "-"}[r.get("matched")]
        out.append([outcome.name, str(r.get("timed", "")), _num(wall, ".3f"), _num(r.get("ref_wall"), ".3f"),
                    _num(_ratio(wall, r.get("ref_wall")), ".2f"), _num(_ratio(cpu, r.get("ref_cpu")), ".2f"),
                    _num(r.get("load"), ".2f"), _num(_ratio(cpu, wall), ".2f"), matched])
    return out


def table(outcomes: list[Outcome]) -> str:
    """One plain-text table, columns padded to their widest cell (numbers right-aligned)."""
    body = [row for o in outcomes for row in rows(o)]
    widths = [max(len(c), *(len(row[i]) for row in body)) if body else len(c) for i, c in enumerate(COLUMNS)]
    left = {0, 1}

    def fmt(row: list[str] | tuple[str, ...]) -> str:
        return "  ".join(c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths)))

    return "\n".join([fmt(COLUMNS), "  ".join("-" * w for w in widths), *map(fmt, body)])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma list of benchmarks to run (default: every bench_*.py)")
    ap.add_argument("--timeout", type=float, default=240.0, help="seconds one benchmark may take")
    ap.add_argument("--log", type=Path, default=None, help="keep each benchmark's output in DIR/<name>.log")
    args = ap.parse_args(argv)
    names = [n for n in args.only.split(",") if n] or benchmarks()
    unknown = sorted(n for n in names if not (HERE / f"{n}.py").is_file())
    if unknown:
        print(f"no such benchmark in {HERE}: {', '.join(unknown)}", file=sys.stderr)
        return 2
    # a benchmark without small arguments is not run at its full size: its row says what to add
    outcomes = [Outcome(n, [], 0, 0.0, f"not run: no quick arguments (QUICK in {Path(__file__).name})")
                for n in names if n not in QUICK]
    names = [n for n in names if n in QUICK]
    t0 = time.perf_counter()
    with bench_lock(), tempfile.TemporaryDirectory(prefix="concord-bench-quick-") as tmp:
        print(f"bench-quick: {len(names)} benchmarks, load average {os.getloadavg()}, {os.cpu_count()} CPUs",
              flush=True)
        for name in names:
            print(f"\n=== {name} {' '.join(QUICK[name])}", flush=True)
            outcomes.append(run_benchmark(HERE / f"{name}.py", QUICK[name], args.timeout, args.log, Path(tmp)))
            print(f"=== {name}: {outcomes[-1].seconds:.0f} s{'; ' + outcomes[-1].error if outcomes[-1].error else ''}",
                  flush=True)
    print(f"\nbench-quick results (small sizes: the harness and rough ratios, not the README's figures); "
          f"{time.perf_counter() - t0:.0f} s in all, load average after {os.getloadavg()}\n")
    print(table(outcomes))
    return 1 if any(o.error for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
