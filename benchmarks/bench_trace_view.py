"""Next sample in the TRACe review view: 30 documents of 20 sentences each, 8 response sentences, labels on a
third of the sentences. Times `show_unit` of another sample (what J does) and one toggle (R), medians of runs.

    QT_QPA_PLATFORM=offscreen python benchmarks/bench_trace_view.py [--runs 15]

A reference run in the same process: the same number of show_unit calls on a 1-document sample.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from PySide6.QtWidgets import QApplication  # noqa: E402

from app.gui.undo import Session  # noqa: E402
from benchresult import emit  # noqa: E402
from app.gui.views.base import ViewContext  # noqa: E402
from app.schemes.trace.views import TraceView  # noqa: E402
from app.store import Project  # noqa: E402
from calibration.schemes.trace import sentence_key  # noqa: E402
from calibration.schemes.trace.scheme import SCHEME  # noqa: E402


def record(rid: str, n_docs: int, n_sent: int) -> object:
    docs = [[[f"{i}{sentence_key(j)}", f"Sentence {j} of document {i} says something about topic {i * j % 7}."]
             for j in range(n_sent)] for i in range(n_docs)]
    resp = [[sentence_key(j), f"Response sentence {j} draws on the documents."] for j in range(8)]
    keys = [k for d in docs for k, _ in d]
    raw = {"scheme": "trace", "id": rid, "question": "What do the documents say?",
           "documents": [" ".join(s for _, s in d) for d in docs], "response": " ".join(s for _, s in resp),
           "documents_sentences": docs, "response_sentences": resp, "all_relevant_sentence_keys": keys[::3],
           "all_utilized_sentence_keys": keys[::5], "unsupported_response_sentence_keys": ["c"],
           "sentence_support_information": [{"response_sentence_key": k, "fully_supported": k != "c",
                                             "supporting_sentence_keys": keys[i::40][:3]} for i, (k, _) in enumerate(resp)],
           "judges": {"j": {"adherence": 0.5}}}
    return SCHEME.parse(raw).record


def median_ms(fn, runs: int) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    wall, cpu = [], []
    for _ in range(runs):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return 1000 * statistics.median(wall), sum(cpu) / max(sum(wall), 1e-9)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    app = QApplication.instance() or QApplication([])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "b.concord"
        with Project.create(path) as p:
            p.samples.write_samples("trace", [record(f"big{i}", 30, 20) for i in range(args.runs + 1)]
                            + [record(f"small{i}", 1, 3) for i in range(args.runs + 1)])
        project = Project.open(path)
        session = Session(project, "bench")
        view = TraceView(ViewContext(session, None, None, lambda: None))  # type: ignore[arg-type]
        view.resize(1400, 900)
        view.show()
        app.processEvents()
        timings = {}
        for kind in ("small", "big"):
            it = iter(range(1, args.runs + 1))
            view.show_unit({"sample_id": f"{kind}0", "unit": "annotator", "scheme": "trace"})

            def step() -> None:
                view.show_unit({"sample_id": f"{kind}{next(it)}", "unit": "annotator", "scheme": "trace"})
                app.processEvents()  # paint, as the window would

            ms, share = median_ms(step, args.runs)
            timings[kind] = (ms / 1000, ms / 1000 * share)  # seconds; CPU from the runs' share
            print(f"next sample, {kind} ({'30 docs x 20 sentences' if kind == 'big' else '1 doc x 3 sentences'}): "
                  f"median {ms:.1f} ms, CPU share {share:.0%}")
        view.doc_sel = 5

        def toggle() -> None:
            view.handle("trace_relevant")
            view.refresh()  # what the window does on the session's `changed`
            app.processEvents()

        ms, share = median_ms(toggle, args.runs)
        print(f"toggle relevant (one SetLabels, re-render): median {ms:.1f} ms, CPU share {share:.0%}")
        print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}; {os.cpu_count()} CPUs")
        project.close()
    emit("next sample, 30 docs x 20 sentences (ref: 1 doc x 3 sentences)", *timings["big"], *timings["small"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
