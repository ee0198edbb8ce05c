"""Bad options and bad config files are refused before any work: exit 2, a message naming the option or the file
and field, no traceback, and nothing written to the project (not even cached embeddings)."""
from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from app.cli import main
from app.store import Change, Project
from tests.gui_data import C1, make_project


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "v.concord")


def _state(path: Path) -> tuple[int, int]:
    with Project.open(path) as p:
        return p.scalar("SELECT count(*) FROM embeddings"), p.scalar("SELECT count(*) FROM calibration_runs")


def _exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


@pytest.mark.parametrize("argv,message", [
    (["evaluate", "{p}", "--bootstrap", "-5"], "argument --bootstrap: must be 0 or more, got -5"),
    (["calibrate", "{p}", "--bootstrap", "-5"], "argument --bootstrap: must be 0 or more, got -5"),
    (["calibrate", "{p}", "--folds", "1"], "argument --folds: must be 2 or more"),
    (["calibrate", "{p}", "--step", "0"], "argument --step: must be in (0, 1], got 0"),
    (["calibrate", "{p}", "--top", "0"], "argument --top: must be 1 or more"),
    (["evaluate", "{p}", "--embedding", "bogus:x"], "argument --embedding: unknown backend 'bogus'"),
    (["calibrate", "{p}", "--embedding", "bogus:x"], "argument --embedding: unknown backend 'bogus'"),
    (["evaluate", "{p}", "--embedding", "nocolon"], "argument --embedding: 'nocolon' is not 'jaccard' or"),
])
def test_bad_options_are_refused_before_any_work(project: Path, capsys: pytest.CaptureFixture[str],
                                                 argv: list[str], message: str) -> None:
    err = _exit_2([a.format(p=project) for a in argv], capsys)
    assert message in err
    assert _state(project) == (0, 0)


def test_calibrate_checks_the_labels_before_embedding(project: Path, capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    def no_embedding(*args: object, **kwargs: object) -> None:
        raise AssertionError("the pair table (embedding) was built before the labels were checked")

    monkeypatch.setattr("calibration.schemes.violations.evaluation.pair_table", no_embedding)
    assert main(["calibrate", str(project)]) == 2  # the default sentence-transformers embedding is never loaded
    assert "no human decisions yet" in capsys.readouterr().err
    with Project.open(project) as p:
        p.decisions.record("ana", [Change("v1", C1, "matches", [[0, 0]])])
    assert main(["calibrate", str(project)]) == 2
    assert "--folds 5: only 1 labeled sample; use fewer folds or label more" in capsys.readouterr().err
    assert main(["calibrate", str(project), "--group-by", "checker"]) == 2
    assert "only 1 labeled checker" in capsys.readouterr().err
    assert _state(project) == (0, 0)


def test_bad_config_files(project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = hashlib.sha256(project.read_bytes()).hexdigest()
    cases = {
        "latin1.toml": ("name = 'caf\xe9'\n[weights]\noverlap = 1\n".encode("latin-1"),
                        "latin1.toml: not valid UTF-8 (byte 0xe9 at offset 11, line 1)"),
        "section.toml": (b"[weights]\noverlap = 1\n[threshold]\nmatch = 0.4\n",
                         "section.toml: threshold: unknown key; expected some of"),
        "typed.toml": (b"[weights]\noverlap = 1\n[thresholds]\nmatch = \"high\"\n",
                       "typed.toml: thresholds.match: expected a number, got 'high'"),
        "weights.toml": (b"weights = 3\n", "weights.toml: weights: expected a table of component = weight"),
    }
    for name, (data, message) in cases.items():
        (tmp_path / name).write_bytes(data)
        assert main(["evaluate", str(project), "--config", str(tmp_path / name)]) == 2, name
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, (name, err)
    assert main(["evaluate", str(project), "--config", str(tmp_path)]) == 2
    assert "Traceback" not in capsys.readouterr().err
    assert hashlib.sha256(project.read_bytes()).hexdigest() == before


@pytest.mark.parametrize("argv,message", [
    (["--fix", "bogus=0.3"], "--fix bogus: not an active component ['overlap', 'rule']"),
    (["--components", "bogus"], "--components: unknown ['bogus']; expected some of"),
    (["--components", "overlap,bogus", "--fix", "rule=2"], "--components: unknown ['bogus']"),
    (["--fix", "overlap=0.35"], "--fix overlap: 0.35 is not a multiple of step 0.1"),
    (["--components", "ha", "--fix", "overlap=0.5,rule=0.6"], "--fix: sum 1.1 exceeds 1"),
    (["--overlap", "0.1,0.1"], "--overlap: duplicate values"),
])
def test_calibrate_names_a_bad_search_option_before_checking_the_labels(
        project: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    """Issue #24: with too few labels for --folds, a bad --fix/--components was reported as a --folds problem."""
    with Project.open(project) as p:
        p.decisions.record("ana", [Change("v1", C1, "matches", [[0, 0]])])  # 1 labeled sample: --folds 5 alone would refuse
    assert main(["calibrate", str(project), *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "--folds" not in err and "Traceback" not in err
    assert _state(project) == (0, 0)
    assert main(["calibrate", str(project)]) == 2  # the good options: now the labels are what is short
    assert "--folds 5: only 1 labeled sample" in capsys.readouterr().err


def test_calibrate_fix_values_are_checked_by_the_parser(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "argument --fix: overlap: the weight 'x' is not a number" in _exit_2(["calibrate", str(project), "--fix",
                                                                                 "overlap=x"], capsys)
    assert "argument --fix: expected COMPONENT=WEIGHT[,...], got '=3'" in _exit_2(["calibrate", str(project), "--fix",
                                                                                   "=3"], capsys)
