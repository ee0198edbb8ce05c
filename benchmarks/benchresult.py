"""The machine-readable result lines a benchmark prints last, which `benchmarks/quick.py` (`make bench-quick`) reads.

One line per timed thing: `BENCH-RESULT ` and a JSON object with what was timed, the median wall and CPU seconds,
the in-run reference's (null when the benchmark has none), the 1-minute load average, and whether the output
matched the reference's (null when nothing was compared). A benchmark that cannot run (its data is absent) prints
one line with `skipped` and the reason instead.
"""
from __future__ import annotations

import json
import os

PREFIX = "BENCH-RESULT "


def emit(timed: str, wall: float, cpu: float | None = None, ref_wall: float | None = None,
         ref_cpu: float | None = None, matched: bool | None = None, load: float | None = None) -> None:
    """Print one result line (wall and CPU in seconds, medians over the benchmark's runs)."""
    record = {"timed": timed, "wall": wall, "cpu": cpu, "ref_wall": ref_wall, "ref_cpu": ref_cpu,
              "matched": None if matched is None else bool(matched),
              "load": os.getloadavg()[0] if load is None else load}
    print(PREFIX + json.dumps(record), flush=True)


def skip(reason: str) -> None:
    """Print the line that says the benchmark did not run, and why."""
    print(PREFIX + json.dumps({"skipped": reason}), flush=True)


def machine_state(wall0: float, cpu0: float) -> tuple[float, float]:
    """Print a run's wall time, CPU share and the machine's load since `wall0` / `cpu0` (time.perf_counter() /
    time.process_time() at its start); the wall and CPU seconds, for its result line."""
    import time

    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    load1, load5, _ = os.getloadavg()
    print(f"\n{wall:.1f} s wall, CPU share {cpu / max(wall, 1e-9):.2f} of one core; load average {load1:.2f} (1 min), "
          f"{load5:.2f} (5 min) on {os.cpu_count()} cores")
    return wall, cpu
