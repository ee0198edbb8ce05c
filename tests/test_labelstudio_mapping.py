"""Label Studio's result types reach a scheme through its declared mapping (issue #25): the io contribution's
`LABELSTUDIO`; the generic reader and export name no scheme. Without a scheme declaring a mapping for a file's
result type the file is refused with one clear message and the project is unchanged."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from app.cli import main
from app.io import labelstudio
from app.schemes import loader
from app.store import Project
from tests.test_labelstudio import _judge_export, _new, _write


def test_the_builtin_mappings_are_declared_by_their_schemes() -> None:
    found = labelstudio.mappings()
    assert {s: m.result_type for s, m in found.items()} == {"violations": labelstudio.SPANS,
                                                            "judge": labelstudio.CHOICES}
    assert found["judge"] is loader.io("judge").labelstudio


def test_without_a_mapping_for_choices_the_file_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    project = _new(tmp_path / "p.concord")
    src = _write(tmp_path / "verdicts.json", _judge_export())
    io = loader.io
    monkeypatch.setattr(loader, "io", lambda name: dataclasses.replace(io(name), labelstudio=None)
                        if name == "judge" else io(name))
    assert main(["import", str(project), str(src), "--levels", "Faithful,Hallucinated"]) == 2
    assert "no registered scheme reads Label Studio 'choices' results" in capsys.readouterr().err
    with Project.open(project) as p:
        assert p.counts.sample_counts() == {}
    assert main(["export", str(project), "--format", "labelstudio", "--out", str(tmp_path / "t.json")]) == 2
    assert "holds no violations samples to export" in capsys.readouterr().err  # only the declared schemes are named
