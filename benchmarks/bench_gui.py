"""GUI speed on a generated project of N samples x 2 checkers (100,000 -> 200,000 review units; 500,000 -> the
1M-unit case of issue #28).

Prints p50 and p95 of: window shown with the list populated and the first unit rendered (goal < 1 s p95), the list
filtered by scheme, by status (unlabeled, accepted) and by text (goal < 1 s p95), the next unit and the next
unlabeled unit with the detail pane rendered (goal < 16 ms), a labeling action committed and undo + accept through
the window with its refresh (goal < 10 ms), resident memory (goal < 500 MB).
Reference: the same list loaded eagerly into a QStandardItemModel (what a non-lazy list would cost; built up to
300,000 units, above that it would take gigabytes). Each timed figure also gives the GUI thread's own CPU time
(median): on a shared machine the wall time follows the load (printed at the start and end) and the background
workers, the CPU time much less. The project is generated once (not timed; `--dir` keeps it for later runs) and
every run measures on a fresh copy. Holds the benchmark lock (bench_evaluate_schemes.bench_lock).

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/bench_gui.py [--samples 100000] [--dir D | --keep PATH]
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
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psutil  # noqa: E402
from PySide6.QtCore import QSettings  # noqa: E402
from PySide6.QtGui import QStandardItem, QStandardItemModel  # noqa: E402

from bench_evaluate_schemes import bench_lock  # noqa: E402
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
        p.units.set_machine_scores(STD_MATCH.ref, rows)
        from calibration.schemes.violations.pairs import build_pair_table

        build_pair_table(p.store("violations").violation_samples([f"s{i:06d}" for i in range(200)]), STD_MATCH.embedding, cache=p.caches)
        p.decisions.record("bench", [])
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


def p95_ms(xs: list[float]) -> float:
    """The 95th percentile, nearest rank (with 5 runs: the slowest)."""
    return sorted(xs)[max(0, -(-95 * len(xs) // 100) - 1)] * 1000


def spread(xs: list[float], digits: int = 1) -> str:
    return f"p50 {median_ms(xs):.{digits}f} ms, p95 {p95_ms(xs):.{digits}f} ms"


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
    total = Project.open(path).units.count_units(UnitFilter())

    # 2. next sample with the detail pane rendered (embeddings cached: the steady state after one evaluation)
    w = MainWindow(Project.open(path), "bench", settings=settings)
    w.resize(1500, 940)
    w.show()
    app.processEvents()
    filtered = filters(w, app, runs)
    nexts, nexts_cpu, full, full_cpu = [], [], [], []
    beside: list[bool] = []  # per next sample: a background task (the next units' scoring) ran at its start or end
    for i in range(120):
        worker = bool(w.runner.running())
        t = clock()
        w.go_next()
        if i % 2:
            w.current_view.repaint()  # what changes: the detail pane and the list
            w.list.viewport().repaint()
        else:
            w.repaint()  # the whole window, toolbar and status bar included
        app.processEvents()
        since(t, *((nexts, nexts_cpu) if i % 2 else (full, full_cpu)))
        if i % 2:
            beside.append(worker or bool(w.runner.running()))
    final = w.current_view.scores.final
    unlabeled, unlabeled_cpu = [], []  # N: down the list to the next unit without a status, the pane rendered
    for _ in range(60):
        t = clock()
        w.navigation.go_next_unlabeled()
        app.processEvents()
        since(t, unlabeled, unlabeled_cpu)

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
        app.processEvents()  # the next unit painted here, untimed: it was counted in the next accept's figure
    rss = proc.memory_info().rss / 2**20
    from app.gui import embedproc
    from app.schemes.violations.views_scoring import ensure_sample_vectors

    miss = ViolationSample("new", "t", (Violation(f"a rule the cache has never seen {time.time()}"),), {})
    t = time.perf_counter()
    ensure_sample_vectors(str(path), w.project.caches, STD_MATCH.embedding, [miss])  # a cache miss: helper process
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
    eager = reference(path, total) if total <= EAGER_MAX else None
    print(f"end: {load()}")
    print(f"units in list: {total:,}")
    ref_text = (f"eager QStandardItemModel reference: {eager * 1000:.0f} ms -> {eager / statistics.median(opens):.1f}x "
                "faster" if eager else f"eager reference not built above {EAGER_MAX:,} units")
    print(f"open window + list + first detail: {spread(opens, 0)} over {runs} runs (goal < 1000 ms p95), "
          f"first (cold) {first * 1000:.0f} ms; {ref_text}")
    print(f"cold start (new process: Python + imports + window + list + first detail): {spread(colds, 0)} over "
          f"{len(colds)} runs")
    refs = {name: search_reference(path, found[name]) for name in found}
    for name, (xs, cpu) in filtered.items():
        ref = refs.get(name)
        vs = "" if ref is None else (f"; its count through the store {ref[3] * 1000:.1f} ms (CPU {ref[4] * 1000:.1f}), "
                                     f"plain sqlite3 LIKE scan reference {ref[0] * 1000:.1f} ms (CPU "
                                     f"{ref[1] * 1000:.1f}) -> {ref[0] / ref[3]:.1f}x wall, {ref[1] / ref[4]:.1f}x "
                                     f"CPU; same units: {ref[2]}")
        print(f"filter {name}: {spread(xs, 0)} over {len(xs)} (goal < 1000 ms p95; GUI thread CPU p50 "
              f"{median_ms(cpu):.0f} ms){vs}")
    print(f"next sample (detail pane + list painted): {spread(nexts)} over {len(nexts)} (goal < 16 ms); "
          f"whole window repainted: {spread(full)}; scores final from cache: {bool(final)}")
    with_task = [x for x, b in zip(nexts, beside) if b]
    without = [x for x, b in zip(nexts, beside) if not b]
    print(f"  of which beside a background task (a scoring batch shares the GIL): {len(with_task)}, "
          + (f"{spread(with_task)}; the others {spread(without)}" if with_task and without else "no split"))
    print(f"next unlabeled (N, detail pane rendered): {spread(unlabeled)} over {len(unlabeled)} (goal < 16 ms)")
    print(f"labeling action committed (session.do): {spread(commits, 2)} (goal < 10 ms); "
          f"undo + accept through the window incl. refresh: {spread(accepts)}")
    print(f"GUI thread CPU, medians: open {median_ms(opens_cpu):.1f} ms, next sample {median_ms(nexts_cpu):.1f} ms "
          f"(whole window {median_ms(full_cpu):.1f} ms), next unlabeled {median_ms(unlabeled_cpu):.1f} ms, "
          f"commit {median_ms(commits_cpu):.2f} ms, undo + accept {median_ms(accepts_cpu):.1f} ms; p95: open "
          f"{p95_ms(opens_cpu):.1f} ms, next sample {p95_ms(nexts_cpu):.1f} ms, next unlabeled "
          f"{p95_ms(unlabeled_cpu):.1f} ms (on a quiet machine the wall times follow these)")
    print(f"fetch one more list page of 200: {spread(scroll)}")
    print(f"resident memory: {rss:.0f} MB (goal < 500 MB); after a vector-cache miss {rss_model:.0f} MB in the app "
          f"+ {rss_child:.0f} MB in the embedding helper process (first miss {miss_s:.1f} s incl. model load; "
          f"the helper exits after {embedproc.IDLE_SECONDS:.0f} s idle)")
    med = statistics.median  # seconds; CPU: the GUI thread's own
    emit(f"open window, {total:,} units (ref: eager QStandardItemModel)", med(opens), med(opens_cpu), eager)
    for name, (xs, cpu) in filtered.items():
        ref = refs.get(name)
        if ref is None:
            emit(f"filter {name}, {total:,} units (no ref)", med(xs), med(cpu))
        else:
            emit(f"filter {name}, {total:,} units (no ref)", med(xs), med(cpu))
            emit(f"text search count {name[6:]}, {total:,} units (ref: plain sqlite3 LIKE scan)", ref[3], ref[4],
                 ref[0], ref[1], ref[2])
    emit("next sample, detail pane + list painted (no ref)", med(nexts), med(nexts_cpu))
    emit("next unlabeled unit (no ref)", med(unlabeled), med(unlabeled_cpu))
    emit("labeling action committed (no ref)", med(commits), med(commits_cpu))
    emit("undo + accept through the window (no ref)", med(accepts), med(accepts_cpu))


EAGER_MAX = 300_000
found: dict[str, list[tuple[str, int]]] = {"text, two common words": [], "text, one sample id": []}  # (text, units listed)


def filters(w: Any, app: Any, runs: int) -> dict[str, tuple[list[float], list[float]]]:
    """Each filter chosen in the filter bar until the list shows it and its first unit (wall, CPU), then cleared
    (untimed). The search skips the bar's typing pause: `_emit` is what the pause ends in."""
    bar = w.filters

    def pick(combo: Any, data: str | None) -> None:
        combo.ensure_loaded() if hasattr(combo, "ensure_loaded") else None
        combo.setCurrentIndex(max(0, combo.findData(data)))

    def search(text: str) -> None:
        bar.search.setText(text)
        bar._timer.stop()
        bar._emit()

    # a new text every run (the store keeps the last search's matches until the project changes): two words in a
    # row that many samples hold, or one sample's id
    pairs = [f"{a} {b}" for a, b in zip(WORDS, WORDS[1:])]
    total = w.model.total
    for listed in found.values():
        listed.clear()
    cases = {"scheme = violations": (lambda i: pick(bar.scheme, "violations"), lambda: pick(bar.scheme, None)),
             "status = unlabeled": (lambda i: pick(bar.status, "unlabeled"), lambda: pick(bar.status, None)),
             "status = accepted": (lambda i: pick(bar.status, "accepted"), lambda: pick(bar.status, None)),
             "text, two common words": (lambda i: search(pairs[i % len(pairs)]), lambda: search("")),
             "text, one sample id": (lambda i: search(f"s{(i * 7919 + 123) % (total // 2):06d}"), lambda: search(""))}
    out: dict[str, tuple[list[float], list[float]]] = {}
    for name, (apply, clear) in cases.items():
        wall: list[float] = []
        cpu: list[float] = []
        for i in range(runs):
            t = clock()
            apply(i)
            app.processEvents()
            assert w.model.unit_filter != UnitFilter(config_ref=w.model.unit_filter.config_ref), name
            since(t, wall, cpu)
            if name.startswith("text"):
                found[name].append((w.model.unit_filter.search, w.model.total))
            clear()
            app.processEvents()
        out[name] = (wall, cpu)
    return out


def search_reference(path: Path, searches: list[tuple[str, int]]) -> tuple[float, float, bool, float, float]:
    """The text searches done the plain way, in plain sqlite3: every sample's text, id and payload read with LIKE
    (what the list did before its search index, issue #28), the matching units counted; and the same counts through
    the store (`count_units`, the index). (plain median wall, CPU, every count equal to the list's and the store's,
    store median wall, CPU)."""
    import sqlite3

    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    wall: list[float] = []
    cpu: list[float] = []
    store_wall: list[float] = []
    store_cpu: list[float] = []
    same = True
    try:
        with Project.open(path) as p:
            for text, listed in searches:
                like = f"%{text}%"
                t = clock()
                n = conn.execute("SELECT COUNT(*) FROM units WHERE sample_id IN (SELECT id FROM samples WHERE text "
                                 "LIKE ? OR id LIKE ? OR payload LIKE ?)", (like, like, like)).fetchone()[0]
                since(t, wall, cpu)
                t = clock()
                counted = p.units.count_units(UnitFilter(search=text))
                since(t, store_wall, store_cpu)
                same = same and n == listed == counted
    finally:
        conn.close()
    med = statistics.median
    return med(wall), med(cpu), same, med(store_wall), med(store_cpu)


def reference(path: Path, total: int) -> float:
    """Seconds to load every unit row into a QStandardItemModel (what a list that is not lazy would cost)."""
    t = time.perf_counter()
    with Project.open(path) as p:
        ref = QStandardItemModel(total, 7)
        keys = ("sample_id", "scheme", "unit", "n_gt", "n_pred", "machine_f1", "status")
        i = 0
        for off in range(0, total, 20_000):
            for r in p.units.unit_page(UnitFilter(), off, 20_000):
                for j, k in enumerate(keys):
                    ref.setItem(i, j, QStandardItem(str(r[k])))
                i += 1
    eager = time.perf_counter() - t
    assert ref.rowCount() == total
    del ref
    return eager


def label_some(path: Path) -> None:
    """A list partly labeled, as in use (not timed): of the first 3,000 units two in three accepted and units 200-1,199
    all accepted (so N skips rows, once a run of five pages), and every 100th unit (the accepted filter's matches)."""
    from app.store import Change

    with Project.open(path) as p:
        total = p.units.count_units(UnitFilter())
        first = p.units.unit_page(UnitFilter(), 0, 3000)
        rows = [r for i, r in enumerate(first) if i % 3 or 200 <= i < 1200]
        for start in range(3000, total, 100_000):
            rows += p.units.unit_page(UnitFilter(), start, 100_000)[::100]
        p.decisions.record("someone", [Change(r["sample_id"], r["unit"], "status", "accepted") for r in rows])
    print(f"labeled {len(rows):,} of {total:,} units accepted (setup, not timed)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--keep", type=Path, help="project path to reuse (generated if missing)")
    ap.add_argument("--dir", type=Path, help="keep the generated project here as bench-<samples>.concord (reused)")
    ap.add_argument("--generate-only", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--label-only", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.label_only:
        label_some(args.label_only)
        return 0
    if args.generate_only:
        generate(args.generate_only, args.samples)
        return 0
    with bench_lock(), tempfile.TemporaryDirectory() as tmp:
        path = args.keep or (args.dir / f"bench-{args.samples}.concord" if args.dir else Path(tmp) / "bench.concord")
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():  # in a child process, so its memory does not count against the GUI's
            subprocess.run([sys.executable, __file__, "--samples", str(args.samples), "--generate-only", str(path)],
                           check=True)
        work = Path(tmp) / "work.concord"  # the benchmark labels units: measure on a fresh copy every time
        with Project.open(path) as source:  # SQLite's backup API, never a file copy (see DESIGN.md)
            source.backup_to(work)
        subprocess.run([sys.executable, __file__, "--label-only", str(work)], check=True)  # memory not the GUI's
        bench(work, args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
