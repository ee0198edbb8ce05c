"""`concord export` and `concord splits`: options, dry run, exit statuses and messages."""
from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from app.cli import main
from app.store import Project
from tests.test_export_split import CAREFUL, NAIVE, build_project


@pytest.fixture
def project_path(tmp_path: Path) -> Path:
    path = tmp_path / "src.concord"
    build_project(path).close()
    return path


def test_export_then_list(project_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    rc = main(["export", str(project_path), "--name", "brand_split", "--version", "0.3.2", "--out", str(out),
               "--format", "csv", "--status", "accepted", "--checker", NAIVE, "--stratify", "split",
               "--sample", "5", "--seed", "7"])
    assert rc == 0
    printed = capsys.readouterr().out
    assert "brand_split@0.3.2" in printed
    d = out / "brand_split@0.3.2"
    assert sorted(p.name for p in d.iterdir()) == ["README.md", "labels.csv", "manifest.json", "violations.csv"]
    m = json.loads((d / "manifest.json").read_text())
    assert m["filters"] == {"statuses": ["accepted"], "checkers": [NAIVE], "stratify": "split", "sample": 5,
                            "seed": 7, "config_ref": "std_match@1.0.0"}
    assert m["counts"]["samples"]["total"] == 5
    assert stat.S_IMODE(d.stat().st_mode) == 0o777 & ~_umask()  # a normal directory, not a private temp dir
    assert main(["splits", str(project_path)]) == 0
    listing = capsys.readouterr().out
    assert "brand_split@0.3.2" in listing and m["content_sha256"][:12] in listing
    assert main(["splits", str(project_path), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["splits"]
    assert rows[0]["name"] == "brand_split" and rows[0]["samples"]["total"] == 5


def _umask() -> int:
    old = os.umask(0)
    os.umask(old)
    return old


def test_dry_run_writes_nothing(project_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["export", str(project_path), "--name", "x", "--version", "1.0.0", "--dry-run", "--checker",
               f"{NAIVE},{CAREFUL}", "--status", "any"])
    assert rc == 0
    printed = capsys.readouterr().out
    assert "dry run: nothing written" in printed and "careful@2.0|gpt-y" in printed
    assert [p.name for p in tmp_path.iterdir() if not p.name.startswith("src.concord")] == []
    with Project.open(project_path) as p:
        assert p.artifacts.splits() == []


def test_immutable_version_and_force(project_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["export", str(project_path), "--name", "s", "--version", "1.0.0", "--out", str(tmp_path / "o")]
    assert main(args) == 0
    capsys.readouterr()
    assert main(args) == 0  # identical content under an existing version: a no-op that says so
    assert "already holds this exact data" in capsys.readouterr().out
    assert main([*args, "--format", "csv"]) == 2  # same version, other files: refused
    assert "already exists with other content" in capsys.readouterr().err
    assert main([*args, "--force"]) == 0  # same content: fine
    assert main([*args[:-2], "--out", str(tmp_path / "p"), "--status", "any"]) == 2
    err = capsys.readouterr().err
    assert "s@1.0.0 was already exported" in err and "bump the version (e.g. --version 1.0.1)" in err
    assert not (tmp_path / "p" / "s@1.0.0").exists()
    # the dry run reports the same problem, with exit status 2
    assert main([*args[:-2], "--status", "any", "--dry-run"]) == 2
    assert "bump the version" in capsys.readouterr().out


@pytest.mark.parametrize("extra, message", [
    (["--version", "1.2"], "--version: '1.2' is not a semantic version"),
    (["--name", "../evil"], "--name: '../evil' is not a valid split name"),
    (["--status", "accepted,maybe"], "--status: unknown status maybe"),
    (["--checker", "ghost@1|m"], "--checker: no checker or trait named 'ghost@1|m'"),
    (["--sample", "-3"], "--sample: must be a positive number"),
    (["--config", "ha_match@9.0.0"], "no match config 'ha_match@9.0.0'"),
])
def test_bad_input_exits_2(project_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                           extra: list[str], message: str) -> None:
    base = {"--name": "ok", "--version": "1.0.0", "--out": str(tmp_path / "o")}
    for flag, value in zip(extra[::2], extra[1::2]):
        base[flag] = value
    argv = ["export", str(project_path)] + [x for kv in base.items() for x in kv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("concord export: ") and message in err
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").iterdir())


def test_not_a_project_and_missing_out(tmp_path: Path, project_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bogus = tmp_path / "notes.txt"
    bogus.write_text("hello")
    assert main(["export", str(bogus), "--name", "a", "--version", "1.0.0", "--out", str(tmp_path)]) == 2
    assert "not a Concord project" in capsys.readouterr().err
    assert main(["splits", str(bogus)]) == 2
    assert main(["export", str(project_path), "--name", "a", "--version", "1.0.0"]) == 2
    assert "--out" in capsys.readouterr().err
