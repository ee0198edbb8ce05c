"""Import options belong to the scheme whose file reader takes them (issue #25): each io contribution declares its
own (`Contribution.options`), the CLI offers what is declared, and a file whose reader does not take an option
refuses it with the declaring scheme's words -- generic code names none of them."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from app.errors import UsageError
from app.io.demo import demo_dir
from app.io.imports import import_file
from app.schemes import loader
from app.schemes.contracts import problems_of
from app.schemes.manifest import Contribution, ImportOption, Manifest
from app.store import Project
from tests.test_rgb_files import make_instance

GENERIC = demo_dir() / "addm.jsonl"  # records, read by no scheme's own file reader


@pytest.mark.parametrize(("options", "message"), [
    ({"model": "m"}, "--model: only an RGB prediction file takes a model (this is not one)"),
    ({"method": "m"}, "--method: only a run file (ADDM results.json) takes a method name (this is not one)"),
    ({"count_all": True}, "--count-all: only a FaithBench batch file takes it (this is not one)"),
    ({"text_field": "t"}, "--text-field: only a Label Studio export takes it (this is not one)"),
])
def test_a_file_whose_reader_does_not_take_an_option_refuses_it(tmp_path: Path, options: dict, message: str) -> None:
    with Project.create(tmp_path / "p.concord") as p:
        with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
            import_file(p, GENERIC, options=options)
        assert p.samples.records("addm") == []


def test_a_scheme_file_refuses_another_schemes_option(tmp_path: Path) -> None:
    """An RGB data file is read by RGB's reader, which declares --model only: FaithBench's --count-all is refused."""
    data = tmp_path / "en.json"
    data.write_text("".join(json.dumps(make_instance(i, "noise")) + "\n" for i in range(3)), encoding="utf-8")
    with Project.create(tmp_path / "p.concord") as p:
        with pytest.raises(UsageError, match="--count-all: only a FaithBench batch file takes it"):
            import_file(p, data, options={"count_all": True})
        assert p.samples.records("rgb") == []
        import_file(p, data, options={"model": "unused-for-a-data-file"})  # its reader takes it
        assert len(p.samples.records("rgb")) == 3


def test_the_declared_options_are_the_ones_offered_and_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    judge = loader.builtin()["judge"]
    sparkle = ImportOption("sparkle", "for a sparkly file", refused="only a sparkly file takes it", metavar=None)
    io = dataclasses.replace(judge.contributions["io"], options=(*judge.contributions["io"].options, sparkle))
    monkeypatch.setitem(loader.builtin(), "judge", dataclasses.replace(judge, contributions={**judge.contributions,
                                                                                              "io": io}))
    assert loader.import_options(["judge"])["sparkle"] is sparkle and "sparkle" not in loader.import_options(["rgb"])
    with Project.create(tmp_path / "p.concord") as p, pytest.raises(UsageError, match="--sparkle: only a sparkly"):
        import_file(p, GENERIC, options={"sparkle": True})

    from app.commands.importing import options_of, register
    import argparse

    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(["import", "P", "F", "--sparkle", "--count-all"])
    assert options_of(args) == {"sparkle": True, "count_all": True}


def test_options_are_declared_only_by_a_file_reader() -> None:
    opt = ImportOption("depth", "how deep", refused="only a deep file takes it")
    m = Manifest("toy", "toy:SCHEME", {"io": Contribution("no.such.module", options=(opt,)),
                                       "views": Contribution("no.such.views", options=(opt,))})
    found = problems_of(m)
    assert sum("declares import options without reading files" in x for x in found) == 2, found
    ok = Manifest("toy", "toy:SCHEME", {"io": Contribution("no.such.module", {"read_file"}, options=(opt,))})
    assert problems_of(ok) == []
