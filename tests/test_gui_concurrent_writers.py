"""The app's real arrangement under concurrent writers (issue #10): a MainWindow open on a project, its worker
threads opening and closing their own connections, the embedding helper process writing vectors, an hourly
backup taken through the backup API, while `concord labels import` and `concord evaluate` run as separate
processes. Afterwards SQLite's integrity check passes and every event of every writer is in the file.

Before the header fix, opening a second connection in the app read the file with open()/close(), which dropped
the process's SQLite locks; a CLI process closing its connection could then delete the WAL under the window.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.gui import embedproc
from app.store import Change, Project
from tests.concurrency_helper import NAMESPACE, helper_writes
from tests.gui_data import C1, C2, open_window, project_path, settings  # noqa: F401 - fixtures

ROOT = Path(__file__).resolve().parents[1]
ROUNDS = int(os.environ.get("CONCORD_STRESS_ROUNDS", "1"))
CLI_LABEL_FILES = 2
HELPER_VECTORS = 200


def labels_file(folder: Path, annotator: str) -> Path:
    lines = [{"sample": "v1", "checker": C1, "annotator": annotator, "matches": [[0, 0]]},
             {"sample": "v2", "checker": C1, "annotator": annotator, "matches": [[0, 0], [1, 1]]},
             {"sample": "v3", "checker": C1, "annotator": annotator, "matches": []},
             {"sample": "v1", "checker": C2, "annotator": annotator, "matches": [[1, 0]]}]
    path = folder / f"{annotator}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def cli(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    return subprocess.Popen([sys.executable, "-m", "app.cli", *args], cwd=ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_window_workers_helper_and_cli_writers_lose_nothing(qtbot, open_window, project_path, tmp_path,  # type: ignore[no-untyped-def]
                                                           round_: int) -> None:
    w = open_window(project_path)
    path = str(project_path)
    files = [labels_file(tmp_path, f"cli-{round_}-{i}") for i in range(CLI_LABEL_FILES)]
    helper = embedproc._pool().submit(helper_writes, path, f"r{round_}", HELPER_VECTORS)
    procs = [cli("labels", "import", path, str(f)) for f in files]
    procs.append(cli("evaluate", path, "--embedding", "jaccard", "--bootstrap", "0", "--json"))
    window_events: list[int] = []
    deadline = time.monotonic() + 120
    i = 0
    backups = 0
    while any(p.poll() is None for p in procs) or not helper.done() or i < 40:
        assert time.monotonic() < deadline, "writers did not finish in time"
        # the window's own connection writes, as labeling does
        window_events += w.project.decisions.record("tester", [Change("v1", "", "note", f"note {round_}-{i}")])
        if i % 10 == 0:
            w.compute_machine_scores()  # worker threads: their own connections, opened and closed
        if i % 15 == 0:
            Project.open(project_path).close()  # a second connection in this process, as every worker makes
        if i % 20 == 0 and w.project.backup_if_due(every=0) is not None:
            backups += 1
        qtbot.wait(15)
        i += 1
    for p in procs:
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0, (p.args, err)
    assert helper.result(timeout=60) == HELPER_VECTORS
    w.runner.wait_all(60000)
    qtbot.wait(200)  # deliver the workers' queued "finished" signals while the window is still open
    w.close()
    embedproc.shutdown()

    with Project.open(project_path) as p:
        assert p.scalar("PRAGMA integrity_check") == "ok"
        assert p.scalar("PRAGMA foreign_key_check") is None
        ids = {r["id"] for r in p.query("SELECT id FROM events")}
        assert set(window_events) <= ids, f"lost window events: {sorted(set(window_events) - ids)[:5]}"
        for f in files:
            annotator = f.stem
            n = p.scalar("SELECT count(*) FROM events WHERE annotator = ?", (annotator,))
            assert n == 8, f"{annotator}: {n} events, expected 8 (matches + status for 4 lines)"
        assert p.caches.count_vectors(NAMESPACE) == HELPER_VECTORS
        assert p.decisions.current("v1", "", "note") == f"note {round_}-{i - 1}"
    assert backups >= 2
