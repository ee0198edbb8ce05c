"""`concord export` agrees with the app (issue #19 item 3): default config, identical re-export, checker prefixes,
and tables that survive a pipe."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main
from app.cli_tables import table_tsv
from app.services.configs import default_config_ref
from app.store import Project
from calibration.schemes.violations.config import STD_MATCH, MatchConfig
from tests.test_export_split import CAREFUL, NAIVE, build_project


@pytest.fixture
def project_path(tmp_path: Path) -> Path:
    path = tmp_path / "src.concord"
    build_project(path).close()
    return path


def _calibrated(version: str, overlap: float) -> MatchConfig:
    return MatchConfig.from_dict({"name": "calibrated", "version": version, "matching": "greedy",
                                  "embedding": STD_MATCH.embedding, "weights": {"overlap": overlap, "rule": 1 - overlap},
                                  "thresholds": {"overlap": 0.0, "rule": 0.01, "match": 0.5}})


def test_default_config_is_the_latest_applied(project_path: Path, tmp_path: Path) -> None:
    with Project.open(project_path) as p:
        assert default_config_ref(p) == STD_MATCH.ref
        p.store("violations").save_match_config(_calibrated("1.0.0", 0.4), origin="calibration")
        p.store("violations").save_match_config(_calibrated("1.1.0", 0.3), origin="calibration")
        assert default_config_ref(p) == "calibrated@1.1.0"
    assert main(["export", str(project_path), "--name", "s", "--version", "1.0.0", "--out", str(tmp_path / "o")]) == 0
    m = json.loads((tmp_path / "o" / "s@1.0.0" / "manifest.json").read_text())
    assert m["match_config"]["ref"] == "calibrated@1.1.0" == m["filters"]["config_ref"]
    assert m["match_config"]["settings"]["weights"]["overlap"] == 0.3


def test_identical_reexport_is_a_noop(project_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["export", str(project_path), "--name", "s", "--version", "1.0.0", "--out", str(tmp_path / "o")]
    assert main(args) == 0
    target = tmp_path / "o" / "s@1.0.0"
    before = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in target.iterdir()}
    capsys.readouterr()
    assert main(args) == 0
    out = capsys.readouterr()
    assert "already holds this exact data" in out.out and "nothing written" in out.out
    assert "--force" not in out.out + out.err
    assert {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in target.iterdir()} == before
    with Project.open(project_path) as p:  # a newer applied config: same data, still a no-op, and it says so
        p.store("violations").save_match_config(_calibrated("1.0.0", 0.4), origin="calibration")
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "nothing written" in out and "documents match config std_match@1.0.0, not calibrated@1.0.0" in out
    assert {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in target.iterdir()} == before


def test_checker_prefix(project_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["export", str(project_path), "--name", "s", "--version", "1.0.0", "--out", str(tmp_path / "o"),
               "--checker", "naive"])
    assert rc == 0
    m = json.loads((tmp_path / "o" / "s@1.0.0" / "manifest.json").read_text())
    assert m["filters"]["checkers"] == [NAIVE]
    capsys.readouterr()
    rc = main(["export", str(project_path), "--name", "t", "--version", "1.0.0", "--dry-run", "--checker", "c"])
    assert rc == 2  # "c" starts the checker careful@2.0|gpt-y and the trait coverage
    err = capsys.readouterr().err
    assert "--checker: 'c' is ambiguous" in err and CAREFUL in err and "coverage" in err


def test_ambiguous_checker_prefix_lists_matches(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from app.errors import UsageError
    from app.io.export_select import resolve_prefix

    known = {"prompt-baseline@1.1.0|gpt-3.5", "prompt-baseline@1.2.0|gpt-4o", "careful@2.0|gpt-y"}
    assert resolve_prefix("careful", known) == "careful@2.0|gpt-y"
    assert resolve_prefix("prompt-baseline@1.2", known) == "prompt-baseline@1.2.0|gpt-4o"
    with pytest.raises(UsageError) as exc:
        resolve_prefix("prompt-baseline", known)
    assert "ambiguous" in str(exc.value)
    assert "prompt-baseline@1.1.0|gpt-3.5" in str(exc.value) and "prompt-baseline@1.2.0|gpt-4o" in str(exc.value)


def test_ambiguous_prefix_exits_2(project_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["export", str(project_path), "--name", "s", "--version", "1.0.0", "--dry-run", "--checker", "ca,n"])
    assert rc == 0
    capsys.readouterr()
    rc = main(["export", str(project_path), "--name", "s", "--version", "1.0.0", "--dry-run", "--checker", "gh"])
    assert rc == 2 and "no checker or trait named 'gh'" in capsys.readouterr().err


def test_piped_tables_keep_full_names(project_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", str(project_path), "--name", "a_rather_long_split_name_for_the_table",
                 "--version", "10.20.30", "--out", str(tmp_path / "o")]) == 0
    capsys.readouterr()
    assert main(["status", str(project_path)]) == 0
    out = capsys.readouterr().out
    assert "…" not in out
    assert any(line.split("\t")[:2] == ["violations", NAIVE] for line in out.splitlines())
    assert main(["splits", str(project_path)]) == 0
    out = capsys.readouterr().out
    assert "…" not in out and "a_rather_long_split_name_for_the_table@10.20.30\t" in out


def test_table_tsv_plain_text() -> None:
    from rich.table import Table

    t = Table(title="per checker")
    t.add_column("checker")
    t.add_column("F1")
    t.add_row("[bold]prompt-baseline@1.1.0|gpt-3.5-turbo-0613[/]", "0.5\t1")
    assert table_tsv(t) == "# per checker\nchecker\tF1\nprompt-baseline@1.1.0|gpt-3.5-turbo-0613\t0.5 1\n"
