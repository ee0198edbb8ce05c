"""Issue #24, item 1: `concord merge` is all or nothing. A merge killed at any point leaves OUT as it was (or absent
when it was new) or complete; a refused merge writes nothing; the inputs are only read."""
from __future__ import annotations

import hashlib
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.cli import main
from app.store import Change, Project
from app.store.merge import PAUSE_ENV
from tests.test_several_annotators import make
from tests.test_store_migration import v1_project

ROOT = Path(__file__).resolve().parent.parent
CHECKERS = ("c1@1|m", "c2@1|m")
N = 100  # samples: ~800 events per file, enough work that a kill lands mid-merge


def _label_all(path: Path, who: str, value: list) -> None:
    with Project.open(path) as p:
        p.decisions.record(who, [Change(f"s{i}", c, kind, value if kind == "matches" else "accepted")
                       for i in range(N) for c in CHECKERS for kind in ("matches", "status")])
        p.decisions.record("cy", [Change(f"s{i}", CHECKERS[0], "matches", value) for i in range(8)])  # conflicts with a, b
        p.decisions.log_time(who, "s0", CHECKERS[0], 4.0)


@pytest.fixture(scope="module")
def copies(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """base, a (ana), b (ben) and out (dan): copies of one project, each labeled by someone else."""
    d = tmp_path_factory.mktemp("copies")
    with make(d / "base.concord", n=N) as base:
        for name in ("a", "b", "out"):
            base.backup_to(d / f"{name}.concord")
    for name, who, value in (("a", "ana", [[0, 0]]), ("b", "ben", []), ("out", "dan", [[1, 1]])):
        _label_all(d / f"{name}.concord", who, value)
    return d


def _ro(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)


def digest(path: Path) -> str:
    """A digest of every row of every table (SQLite's view of the file, WAL included)."""
    conn = _ro(path)
    try:
        h = hashlib.sha256()
        for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"):
            h.update(table.encode())
            for row in sorted(repr(r) for r in conn.execute(f'SELECT * FROM "{table}"')):
                h.update(row.encode())
        return h.hexdigest()
    finally:
        conn.close()


def healthy(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    conn = _ro(path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    finally:
        conn.close()
    code = main(["check", str(path)])
    assert code == 0, capsys.readouterr()
    capsys.readouterr()


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def no_wal(path: Path) -> bool:
    """Nothing waits in a `-wal` (a read-only SQLite connection may leave an empty one behind)."""
    wal = Path(f"{path}-wal")
    return not wal.exists() or wal.stat().st_size == 0


def run_merge(out: Path, inputs: list[Path], pause: float = 0.0) -> subprocess.Popen[str]:
    # A killed merge cannot remove its work directory: keep those in the test's own directory, not in /tmp.
    work = out.parent / "merge-tmp"
    work.mkdir(exist_ok=True)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", PAUSE_ENV: str(pause), "TMPDIR": str(work)}
    return subprocess.Popen([sys.executable, "-m", "app.cli", "merge", str(out), *map(str, inputs)], cwd=ROOT,
                            env=env, text=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def timed_merge(out: Path, inputs: list[Path], pause: float) -> float:
    t0 = time.perf_counter()
    proc = run_merge(out, inputs, pause)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    return time.perf_counter() - t0


@pytest.mark.parametrize("existing", [True, False], ids=["existing-out", "new-out"])
def test_a_killed_merge_leaves_out_as_it_was_or_complete(copies: Path, tmp_path: Path, existing: bool,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    trials, pause = 12, 0.03  # 24 kills in all; the pause widens the windows inside the merge's transaction
    inputs = [copies / "a.concord", copies / "b.concord"]
    before = digest(copies / "out.concord")
    ref = tmp_path / "ref" / "out.concord"
    ref.parent.mkdir()
    if existing:
        shutil.copyfile(copies / "out.concord", ref)
    proc = subprocess.run([sys.executable, "-m", "app.cli", "--version"], cwd=ROOT, capture_output=True, timeout=60)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "app.cli", "--version"], cwd=ROOT, capture_output=True, timeout=60)
    startup = time.perf_counter() - t0
    full = timed_merge(ref, inputs, pause)
    complete = digest(ref)
    assert complete != before and proc.returncode == 0
    shas = {p: sha(p) for p in inputs}
    rng = random.Random(24)
    outcomes = {"old": 0, "complete": 0}
    for i in range(trials):
        out = tmp_path / f"t{i}" / "out.concord"
        out.parent.mkdir()
        if existing:
            shutil.copyfile(copies / "out.concord", out)  # a closed file: a byte copy is safe here
        proc = run_merge(out, inputs, pause)
        # stratified over the merge's run time (after the interpreter's start-up), so every stage gets kills
        time.sleep(startup * 0.8 + (full * 1.1 - startup * 0.8) * (i + rng.random()) / trials)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        if not out.exists():
            assert not existing
            assert not Path(f"{out}-wal").exists()
            outcomes["old"] += 1
        else:
            healthy(out, capsys)
            state = digest(out)
            assert state in (before if existing else None, complete), f"trial {i}: OUT is neither old nor complete"
            outcomes["old" if state == before else "complete"] += 1
        assert {p: sha(p) for p in inputs} == shas  # the inputs are only read
        # and merging again completes it
        assert main(["merge", str(out), *map(str, inputs)]) == 0
        capsys.readouterr()
        healthy(out, capsys)
        assert digest(out) == complete
    assert sum(outcomes.values()) == trials


def _future(path: Path, src: Path) -> Path:
    shutil.copyfile(src, path)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    return path


def _other_samples(path: Path) -> Path:
    with make(path, n=3) as p:
        p.decisions.record("eve", [Change("s0", CHECKERS[0], "matches", [])])
    with Project.open(path) as p:  # s0..s2 as in the copies, then one they lack
        from calibration.schemes.violations import ViolationSample
        p.store("violations").write_violation_samples([ViolationSample("zz", "another text", (), {CHECKERS[0]: ()})])
    return path


def _not_concord(path: Path) -> Path:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (x)")
    conn.close()
    return path


def _text(path: Path) -> Path:
    path.write_text("hello")
    return path


REFUSALS = {
    "different samples": (lambda d, c: [c / "a.concord", _other_samples(d / "other.concord")], "is not in the output"),
    "not a Concord file": (lambda d, c: [c / "a.concord", _not_concord(d / "plain.db")], "not a Concord project"),
    "a text file": (lambda d, c: [c / "a.concord", _text(d / "notes.concord")], "not a Concord project"),
    "future schema": (lambda d, c: [c / "a.concord", _future(d / "future.concord", c / "b.concord")], "newer Concord"),
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
@pytest.mark.parametrize("existing", [True, False], ids=["existing-out", "new-out"])
def test_a_refused_merge_writes_nothing(copies: Path, tmp_path: Path, case: str, existing: bool,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    build, message = REFUSALS[case]
    inputs = build(tmp_path, copies)
    out = tmp_path / "out.concord"
    if existing:
        shutil.copyfile(copies / "out.concord", out)
        old = sha(out)
    shas = {p: sha(p) for p in inputs}
    assert main(["merge", str(out), *map(str, inputs)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    if existing:
        assert sha(out) == old
        assert no_wal(out) and not Path(f"{out}.backups").exists()
    else:
        assert not out.exists() and not Path(f"{out}-wal").exists()
        assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".out.concord")] == []
    assert {p: sha(p) for p in inputs} == shas


@pytest.mark.parametrize("alias", ["same path", "other spelling", "hard link", "symlink"])
def test_out_given_again_as_an_input_under_any_name_is_refused(copies: Path, tmp_path: Path, alias: str,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out.concord"
    shutil.copyfile(copies / "out.concord", out)
    (tmp_path / "sub").mkdir()
    again = {"same path": out, "other spelling": tmp_path / "sub" / ".." / "out.concord",
             "hard link": tmp_path / "link.concord", "symlink": tmp_path / "sym.concord"}[alias]
    if alias == "hard link":
        os.link(out, again)
    elif alias == "symlink":
        again.symlink_to(out)
    old = sha(out)
    assert main(["merge", str(out), str(copies / "a.concord"), str(again)]) == 2
    err = capsys.readouterr().err
    assert "is the output itself" in err and "Traceback" not in err
    assert sha(out) == old and no_wal(out)


def test_an_output_inside_a_backups_folder_is_refused(copies: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "team.concord.backups"
    folder.mkdir()
    assert main(["merge", str(folder / "team.concord"), str(copies / "a.concord")]) == 2
    assert "never writes" in capsys.readouterr().err
    assert list(folder.iterdir()) == []


def test_an_input_given_twice_under_two_names_is_refused(copies: Path, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    link = tmp_path / "a-again.concord"
    os.link(copies / "a.concord", link)
    out = tmp_path / "out.concord"
    assert main(["merge", str(out), str(copies / "a.concord"), str(link)]) == 2
    assert "the same file under another name" in capsys.readouterr().err
    assert not out.exists()


def test_merge_only_reads_its_inputs_even_an_older_schema(copies: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    old = tmp_path / "old.concord"
    v1_project(old)
    a = tmp_path / "a.concord"
    shutil.copyfile(copies / "a.concord", a)
    shas = {old: sha(old), a: sha(a)}
    out = tmp_path / "out.concord"
    assert main(["merge", str(out), str(old)]) == 0  # a schema-1 file: upgraded in a temporary copy
    capsys.readouterr()
    assert sha(old) == shas[old] and not Path(f"{old}.backups").exists()
    with Project.open(out) as p:
        assert len(p.decisions.events()) == 4
    out2 = tmp_path / "out2.concord"
    assert main(["merge", str(out2), str(a)]) == 0
    assert sha(a) == shas[a] and not Path(f"{a}.backups").exists()
    assert digest(out2) == digest(a)
