"""A process killed mid-session (SIGKILL: no cleanup, no atexit) loses no decision it had committed."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from app.store import Change, Project
from calibration.schemes.violations.records import Violation, ViolationSample

ROOT = Path(__file__).resolve().parents[1]
CHECKER = "careful@2.0|gpt-4o"

CHILD = textwrap.dedent("""
    import sys, time
    from app.store import Change, Project
    project = Project.open(sys.argv[1])
    i = 0
    while True:  # decide sample after sample, like an annotator clicking through the list
        sid = f"s{i % 50}"
        ids = project.decisions.record("ana", [Change(sid, "careful@2.0|gpt-4o", "matches", [[0, i % 2]]),
                                     Change(sid, "careful@2.0|gpt-4o", "status", "corrected" if i % 2 else "accepted")])
        print(" ".join(map(str, ids)), flush=True)  # only after the commit returned
        if i == 40:
            with project.transaction():  # an edit that never commits
                project.decisions.record("ana", [Change("s0", "", "note", "uncommitted")])
                print("open", flush=True)
                time.sleep(600)
        i += 1
        time.sleep(0.002)
""")


@pytest.fixture
def project_path(tmp_path: Path) -> Path:
    path = tmp_path / "crash.concord"
    with Project.create(path) as p:
        p.store("violations").write_violation_samples([ViolationSample(f"s{i}", "Buy now!", (Violation("r", 0, 3),),
                                                   {CHECKER: (Violation("r", 0, 3), Violation("r", 4, 7))})
                                   for i in range(50)])
    return path


def test_killed_process_keeps_every_committed_decision(project_path: Path) -> None:
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(project_path)], cwd=ROOT, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    committed: list[int] = []
    try:
        assert child.stdout is not None
        for line in child.stdout:
            if line.strip() == "open":
                break
            committed.extend(int(x) for x in line.split())
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=60)
    assert child.returncode == -signal.SIGKILL, child.stderr.read() if child.stderr else ""
    assert len(committed) >= 41  # 41 decisions reported before the uncommitted edit

    with Project.open(project_path) as p:  # opens cleanly, recovering from the WAL
        events = p.decisions.events()
        ids = [e["id"] for e in events]
        assert ids == committed  # every committed event, in order, and nothing else (not the uncommitted note)
        assert p.decisions.current("s0", "", "note") is None
        last = {}
        for e in events:
            last[(e["sample_id"], e["unit"], e["kind"])] = e["after"]
        labels = {(sid, unit, kind): p.decisions.current(sid, unit, kind) for sid, unit, kind in last}
        p.decisions.rebuild_labels()
        assert {(s, u, k): p.decisions.current(s, u, k) for s, u, k in last} == labels  # labels agree with the events
        assert p.scalar("PRAGMA integrity_check") == "ok"
        assert p.decisions.record("ana", [Change("s1", CHECKER, "note", "after the crash")])  # and it keeps working
