"""`concord --help` and `concord --version` answer without importing the heavy libraries (issue #19)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli import command_index, light_parser, main, register_module

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("pandas", "numpy", "scipy", "sklearn", "openai", "torch", "PySide6", "pyarrow", "sqlite_utils", "rich")


def _modules_after(argv: list[str]) -> tuple[int, list[str], str]:
    code = (
        "import json, sys\n"
        "from app.cli import main\n"
        "try:\n    rc = main(json.loads(sys.argv[1]))\nexcept SystemExit as e:\n    rc = e.code\n"
        f"heavy = sorted(m for m in {HEAVY!r} if m in sys.modules)\n"
        "print(json.dumps([rc, heavy]), file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, json.dumps(argv)], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    rc, heavy = json.loads(proc.stderr.strip().splitlines()[-1])
    return rc, heavy, proc.stdout


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["no-such-command"], []])
def test_top_level_help_imports_nothing_heavy(argv: list[str]) -> None:
    rc, heavy, out = _modules_after(argv)
    assert heavy == []
    assert rc == (2 if argv in ([], ["no-such-command"]) else 0)
    if argv == ["--help"]:
        for command in ("import", "evaluate", "calibrate", "export", "gui", "demo", "labels", "status"):
            assert f"\n    {command}" in out


def test_version_is_the_installed_distribution(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"concord {version('concord')}"


def test_static_command_list_matches_the_modules() -> None:
    """The help read from source with ast is what each module registers, so the light list never drifts."""
    import argparse

    index = command_index()
    for name, (module, help_text) in index.items():
        sub = argparse.ArgumentParser().add_subparsers()
        register_module(module, sub)
        assert name in sub.choices
        assert help_text and sub._choices_actions[[a.dest for a in sub._choices_actions].index(name)].help == help_text
    assert set(light_parser()._subparsers._group_actions[0].choices) == set(index)  # type: ignore[union-attr]
