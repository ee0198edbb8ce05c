"""The suite never touches the user's own settings, caches or last-opened project (issue #24 item 8): tests and the
processes they start see a temporary HOME, XDG directories and ONNX cache set up by tests/conftest.py."""
from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _mentions(directory: Path, text: str) -> list[Path]:
    """Files under `directory` whose bytes contain `text`."""
    if not directory.is_dir():
        return []
    return [p for p in directory.rglob("*") if p.is_file() and text.encode() in p.read_bytes()]


def test_a_child_gui_remembers_its_annotator_in_the_test_home_only(tmp_path: Path,
                                                                   real_user_locations: dict[str, Path]) -> None:
    name = f"zed{uuid.uuid4().hex[:12]}"  # unique: other processes on the machine may write the real file meanwhile
    out = subprocess.run([sys.executable, "-m", "app.cli", "gui", "--annotator", name, "--screenshot",
                          str(tmp_path / "x.png")], cwd=ROOT, env=os.environ.copy(), capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert _mentions(real_user_locations["settings"], name) == []  # the user's app does not open as `name`
    test_settings = Path(os.environ["XDG_CONFIG_HOME"]) / "Concord"
    assert len(_mentions(test_settings, name)) == 1


def test_this_process_and_its_children_see_only_test_locations(real_user_locations: dict[str, Path]) -> None:
    from PySide6.QtCore import QSettings

    test_home = Path(os.environ["CONCORD_TEST_HOME"])
    for settings in (QSettings("Concord", "Concord"), QSettings()):
        assert Path(settings.fileName()).is_relative_to(test_home), settings.fileName()
    code = ("import pathlib, sys\nfrom calibration.similarity.onnx_export import cache_root\n"
            "from PySide6.QtCore import QSettings\n"
            "print(pathlib.Path.home()); print(cache_root()); print(QSettings('Concord', 'Concord').fileName())")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=os.environ.copy(), capture_output=True, text=True,
                         timeout=120, check=True)
    home, cache, settings_file = (Path(line) for line in out.stdout.split("\n")[:3])
    assert home.is_relative_to(test_home) and Path(settings_file).is_relative_to(test_home)
    assert cache == Path(os.environ["CONCORD_CACHE"]) and cache != real_user_locations["cache"]
    assert not Path(settings_file).is_relative_to(real_user_locations["settings"])


@pytest.mark.parametrize("workers", [[], ["-n", "1"]], ids=["one-process", "xdist-worker"])
def test_a_run_that_writes_the_users_settings_fails(tmp_path: Path, workers: list[str]) -> None:
    """The session-end check in tests/conftest.py, in a nested run whose "user" lives in tmp_path; with xdist the
    write happens in a worker and the controller, which alone checks, fails the run."""
    home = tmp_path / "user"
    (home / ".config" / "Concord").mkdir(parents=True)
    (home / ".config" / "Concord" / "Concord.conf").write_text("[General]\nannotator=me\n")
    env = {k: v for k, v in os.environ.items()
           if k not in ("CONCORD_TEST_HOME", "CONCORD_CACHE", "CONCORD_TEST_CACHE", "XDG_CONFIG_HOME",
                        "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME")} | {"HOME": str(home)}
    env["CONCORD_TEST_CACHE"] = os.environ["CONCORD_CACHE"]  # this run's ONNX export: xdist workers need it first
    test = tmp_path / "test_escape.py"
    for body, status in (("pass", 0), (f"open({str(home / '.config' / 'Concord' / 'Concord.conf')!r}, 'a').write('x')", 1)):
        test.write_text(f"def test_x():\n    {body}\n")
        out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.conftest",
                              *workers, "--rootdir", str(tmp_path), str(test)], cwd=ROOT, env=env, capture_output=True,
                             text=True, timeout=300)
        assert out.returncode == status, out.stdout + out.stderr
        assert ("the test run changed the user's own files" in out.stdout) == bool(status), out.stdout
    assert (home / ".config" / "Concord" / "Concord.conf").read_text().endswith("me\nx")
