"""GUI speed on a generated 100,000-sample project (2 checkers -> 200,000 review units).

Prints: window shown with the list populated (goal < 1.5 s), next sample with the detail pane rendered
(goal < 50 ms median), a labeling action committed (goal < 10 ms median), resident memory (goal < 500 MB).
Reference: the same list loaded eagerly into a QStandardItemModel (what a non-lazy list would cost).
Each timed figure also gives the GUI thread's own CPU time (median): on a shared machine the wall time follows the
load (printed at the start and end) and the background workers, the CPU time much less.

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/bench_gui.py [--samples 100000] [--keep PATH]
"""
from __future__ import annotations

import argparse
import os
import random
import subprocess
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psutil  # noqa: E402
from PySide6.QtCore import QSettings  # noqa: E402
from PySide6.QtGui import QStandardItem, QStandardItemModel  # noqa: E402

from benchresult import emit  # noqa: E402
from app.schemes.violations.corrections import accept_matches  # noqa: E402
from app.gui.main import application  # noqa: E402
from app.store import Project, UnitFilter  # noqa: E402
from calibration.schemes.violations.config import STD_MATCH  # noqa: E402
from calibration.schemes.violations.records import Violation, ViolationSample  # noqa: E402

CHECKERS = ("prompt-baseline@1.1.0|gpt-3.5-turbo-0613", "prompt-cot@2.0.0|gpt-4o")
RULES = [f"rule {i}: do not {w}" for i, w in enumerate(
    "promise cures|give dosage|mention minors|use superlatives|share emails|claim guarantees|shame users|"
    "invent statistics|use slurs|mock competitors|ask for passwords|encourage drinking".split("|"))]
WORDS = "the a herbal liqueur tastes bold smooth best ever guaranteed doctor cure party friends tonight 😀 🚀 ok".split()


def _sample(i: int, rng: random.Random) -> ViolationSample:
    text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(40, 120)))
    n = len(text)

    def viol() -> Violation:
        a = rng.randrange(0, max(1, n - 20))
        return Violation(rng.choice(RULES), a, min(n, a + rng.randint(5, 30)), category=rng.choice(["health", "tone", "legal"]))

    gt = tuple(viol() for _ in range(rng.randint(0, 3)))
    preds = {c: tuple(viol() for _ in range(rng.randint(0, 3))) for c in CHECKERS}
    return ViolationSample(f"s{i:06d}", text, gt, preds)


def generate(path: Path, n: int) -> None:
    """Fast generation through the store API: chunks of 10,000 samples, then machine scores and some labels."""
    rng = random.Random(7)
    t = time.perf_counter()
    with Project.create(path) as p:
        for start in range(0, n, 10_000):
            p.store("violations").write_violation_samples([_sample(i, rng) for i in range(start, min(n, start + 10_000))])
        rows = [(f"s{i:06d}", c, 1, 1, 1, rng.random()) for i in range(n) for c in CHECKERS]
        p.set_machine_scores(STD_MATCH.ref, rows)
        from calibration.schemes.violations.pairs import build_pair_table

        build_pair_table(p.store("violations").violation_samples([f"s{i:06d}" for i in range(200)]), STD_MATCH.embedding, cache=p)
        p.record("bench", [])
    print(f"generated {n:,} samples x {len(CHECKERS)} checkers in {time.perf_counter() - t:.1f} s -> {path}")


COLD = """
import os, sys, time
sys.path.insert(0, {root!r})
from PySide6.QtCore import QSettings
from app.gui.main import application
from app.gui.window import MainWindow
from app.store import Project
app = application()
w = MainWindow(Project.open({path!r}), "bench", settings=QSettings({ini!r}, QSettings.Format.IniFormat))
w.resize(1500, 940)
w.show()
app.processEvents()
assert w.model.rowCount() > 0 and w.current_view.row is not None
print(time.time(), flush=True)
os._exit(0)
"""


def cold_start(path: Path, runs: int = 3) -> list[float]:
    """Seconds from spawning a new Python process to the window shown with the list populated (imports included)."""
    code = COLD.format(root=str(Path(__file__).resolve().parents[1]), path=str(path), ini=str(path.with_suffix(".cold.ini")))
    out = []
    for _ in range(runs):
        t = time.time()
        res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        out.append(float(res.stdout.strip().splitlines()[-1]) - t)
    return out


def median_ms(xs: list[float]) -> float:
    return statistics.median(xs) * 1000


def clock() -> tuple[float, float]:
    """(wall, this thread's CPU) now: the GUI thread's own work, apart from workers and other processes."""
    return time.perf_counter(), time.thread_time()


def since(t: tuple[float, float], wall: list[float], cpu: list[float]) -> None:
    now_wall, now_cpu = clock()
    wall.append(now_wall - t[0])
    cpu.append(now_cpu - t[1])


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def bench(path: Path, runs: int) -> None:
    from app.gui.window import MainWindow

    app = application()
    settings = QSettings(str(path.with_suffix(".ini")), QSettings.Format.IniFormat)
    settings.setValue("auto_advance", False)
    proc = psutil.Process()

    # 1. window shown, list populated, first unit rendered
    print(f"start: {load()}")
    opens, opens_cpu = [], []
    for _ in range(runs + 1):  # the first run imports the views: reported separately
        t = clock()
        w = MainWindow(Project.open(path), "bench", settings=settings)
        w.resize(1500, 940)
        w.show()
        app.processEvents()
        assert w.model.rowCount() > 0 and w.current_view is not None and w.current_view.row is not None
        since(t, opens, opens_cpu)
        w.close()
        app.processEvents()
    first, opens, opens_cpu = opens[0], opens[1:], opens_cpu[1:]
    colds = cold_start(path)
    total = Project.open(path).count_units(UnitFilter())

    # 2. next sample with the detail pane rendered (embeddings cached: the steady state after one evaluation)
    w = MainWindow(Project.open(path), "bench", settings=settings)
    w.resize(1500, 940)
    w.show()
    app.processEvents()
    nexts, nexts_cpu, full, full_cpu = [], [], [], []
    for i in range(120):
        t = clock()
        w.go_next()
        if i % 2:
            w.current_view.repaint()  # what changes: the detail pane and the list
            w.list.viewport().repaint()
        else:
            w.repaint()  # the whole window, toolbar and status bar included
        app.processEvents()
        since(t, *((nexts, nexts_cpu) if i % 2 else (full, full_cpu)))
    final = w.current_view.scores.final

    # 3. a labeling action committed (event + label written, list row and detail pane updated)
    commits, commits_cpu, accepts, accepts_cpu = [], [], [], []
    view = w.current_view
    for _ in range(60):
        sid, checker = view.current()
        cmd = accept_matches(sid, checker, view.scores.proposed)
        t = clock()
        w.session.do(cmd)
        since(t, commits, commits_cpu)
        t = clock()
        w.undo()
        w.accept()  # the full handler (accept through the window, view refresh)
        app.processEvents()
        since(t, accepts, accepts_cpu)
        w.go_next()
    rss = proc.memory_info().rss / 2**20
    from app.gui import embedproc
    from app.schemes.violations.views_scoring import ensure_sample_vectors

    miss = ViolationSample("new", "t", (Violation(f"a rule the cache has never seen {time.time()}"),), {})
    t = time.perf_counter()
    ensure_sample_vectors(str(path), w.project, STD_MATCH.embedding, [miss])  # a cache miss: helper process
    miss_s = time.perf_counter() - t
    rss_model = proc.memory_info().rss / 2**20
    rss_child = sum(psutil.Process(pid).memory_info().rss for pid in embedproc.child_pids()) / 2**20
    scroll = []
    for _ in range(20):
        t = time.perf_counter()
        w.model.fetchMore()
        scroll.append(time.perf_counter() - t)
    w.close()
    app.processEvents()
    t = time.perf_counter()
    with Project.open(path) as p:
        ref = QStandardItemModel(total, 7)
        keys = ("sample_id", "scheme", "unit", "n_gt", "n_pred", "machine_f1", "status")
        i = 0
        for off in range(0, total, 20_000):
            for r in p.unit_page(UnitFilter(), off, 20_000):
                for j, k in enumerate(keys):
                    ref.setItem(i, j, QStandardItem(str(r[k])))
                i += 1
    eager = time.perf_counter() - t
    assert ref.rowCount() == total
    del ref


    print(f"end: {load()}")
    print(f"units in list: {total:,}")
    print(f"open window + list + first detail: median {median_ms(opens):.0f} ms over {runs} runs "
          f"(goal < 1500 ms), first (cold) {first * 1000:.0f} ms; eager QStandardItemModel reference: {eager * 1000:.0f} ms "
          f"-> {eager / statistics.median(opens):.1f}x faster")
    print(f"cold start (new process: Python + imports + window + list + first detail): median "
          f"{median_ms(colds):.0f} ms over {len(colds)} runs")
    print(f"next sample (detail pane + list painted): median {median_ms(nexts):.1f} ms, p90 "
          f"{sorted(nexts)[int(0.9 * len(nexts))] * 1000:.1f} ms over {len(nexts)} (goal < 50 ms); "
          f"whole window repainted: median {median_ms(full):.1f} ms; scores final from cache: {bool(final)}")
    print(f"labeling action committed (session.do): median {median_ms(commits):.2f} ms (goal < 10 ms); "
          f"undo + accept through the window incl. refresh: median {median_ms(accepts):.1f} ms")
    print(f"GUI thread CPU, medians: open {median_ms(opens_cpu):.1f} ms, next sample {median_ms(nexts_cpu):.1f} ms "
          f"(whole window {median_ms(full_cpu):.1f} ms), commit {median_ms(commits_cpu):.2f} ms, "
          f"undo + accept {median_ms(accepts_cpu):.1f} ms")
    print(f"fetch one more list page of 200: median {median_ms(scroll):.1f} ms")
    print(f"resident memory: {rss:.0f} MB (goal < 500 MB); after a vector-cache miss {rss_model:.0f} MB in the app "
          f"+ {rss_child:.0f} MB in the embedding helper process (first miss {miss_s:.1f} s incl. model load; "
          f"the helper exits after {embedproc.IDLE_SECONDS:.0f} s idle)")
    med = statistics.median  # seconds; CPU: the GUI thread's own
    emit(f"open window, {total:,} units (ref: eager QStandardItemModel)", med(opens), med(opens_cpu), eager)
    emit("next sample, detail pane + list painted (no ref)", med(nexts), med(nexts_cpu))
    emit("labeling action committed (no ref)", med(commits), med(commits_cpu))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--keep", type=Path, help="project path to reuse (generated if missing)")
    ap.add_argument("--generate-only", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.generate_only:
        generate(args.generate_only, args.samples)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        path = args.keep or Path(tmp) / "bench.concord"
        if not path.exists():  # in a child process, so its memory does not count against the GUI's
            subprocess.run([sys.executable, __file__, "--samples", str(args.samples), "--generate-only", str(path)],
                           check=True)
        work = Path(tmp) / "work.concord"  # the benchmark labels units: measure on a fresh copy every time
        with Project.open(path) as source:  # SQLite's backup API, never a file copy (see DESIGN.md)
            source.backup_to(work)
        bench(work, args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
