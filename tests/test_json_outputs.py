"""Every `concord ... --json` output is versioned, documented and validated (issue #25 item 5).

Each command runs with --json on the demo project and its output must validate against
resources/schema/output/<kind>.schema.json, whose `schema_version` is pinned to app/json_outputs.VERSIONS: a shape
change without a schema (and so a version) change fails here, and a version bump without its schema, reference page
(docs/json.md) and changelog entry fails too.
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from app.cli import build_parser, main
from app.io.demo import create_demo
from app.json_outputs import VERSIONS, schema_path, versioned

ROOT = Path(__file__).resolve().parents[1]
DOCS = (ROOT / "docs" / "json.md").read_text(encoding="utf-8")
CHANGELOG = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")


def validator(kind: str) -> Draft202012Validator:
    schema = json.loads(schema_path(kind).read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def errors(kind: str, data: Any) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}" for e in validator(kind).iter_errors(data)]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The demo project, plus two annotators' ground truth on one sample (so agreement has span figures)."""
    base = tmp_path_factory.mktemp("json")
    path = base / "demo.concord"
    create_demo(path).close()
    spans = base / "spans.jsonl"
    spans.write_text("".join(json.dumps({"sample": "hk-001", "annotator": a, "ground_truth": gt}) + "\n" for a, gt in (
        ("ana", [{"start": 0, "end": 12, "rule": "claim"}]),
        ("ben", [{"start": 2, "end": 12, "rule": "claim"}, {"start": 20, "end": 30, "rule": "tone"}]))),
        encoding="utf-8")
    assert main(["labels", "import", str(path), str(spans)]) == 0
    yield path


@pytest.fixture
def copy(demo: Path, tmp_path: Path) -> Path:
    """A copy of the demo for commands that write (the demo's copy is closed: no connection is open on it)."""
    dest = tmp_path / "copy.concord"
    shutil.copyfile(demo, dest)
    return dest


def run_json(argv: list[str], capsys: pytest.CaptureFixture[str], rc: int = 0) -> Any:
    capsys.readouterr()
    assert main(argv) == rc
    return json.loads(capsys.readouterr().out)


def check(kind: str, data: Any) -> None:
    assert data["schema_version"] == VERSIONS[kind]
    assert errors(kind, data) == []


def jq_values(command: str, data: Any) -> list[Any]:
    """What each `jq .a.b` example of the command's --help reads from `data` (KeyError: the help is out of date)."""
    parser = build_parser(command)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    paths = re.findall(r"\bjq (\.[\w.]+)", sub.choices[command].format_help())
    assert paths, f"{command} --help shows no jq example"
    values = []
    for path in paths:
        value = data
        for key in path.strip(".").split("."):
            value = value[key]
        values.append(value)
    return values


# -- the outputs, run for real -------------------------------------------------------------------------------------
def test_read_only_outputs_validate(demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = run_json(["status", str(demo), "--json"], capsys)
    check("status", status)
    assert "project_schema_version" in status and status["samples"]["violations"] == 60
    assert jq_values("status", status) == [status["units"]]
    check("queue", run_json(["queue", str(demo), "--json", "--limit", "5"], capsys))
    check("config", run_json(["config", str(demo), "--json"], capsys))
    health = run_json(["check", str(demo), "--json"], capsys)
    check("check", health)
    assert health["project_schema_version"] == status["project_schema_version"]
    check("splits", run_json(["splits", str(demo), "--json"], capsys))


def test_evaluate_validates(demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(["evaluate", str(demo), "--bootstrap", "20", "--embedding", "jaccard", "--json"], capsys)
    check("evaluate", data)
    assert set(data) - {"schema_version"} == {"violations", "rubric", "trace", "rgb", "addm", "judge"}
    assert "human_ceiling" in data["violations"]


def test_agreement_validates_with_span_figures(demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(["agreement", str(demo), "--bootstrap", "20", "--json"], capsys)
    check("agreement", data)
    assert isinstance(data["overall"]["span_f1"], dict) and data["overall"]["kappa"]["estimate"] is not None
    (span_f1,) = jq_values("agreement", data)  # the help's example reads a number, as it says
    assert isinstance(span_f1, float)


def test_plan_validates(copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_json(["calibrate", str(copy), "--scheme", "trace", "--bootstrap", "20", "--folds", "3", "--json"], capsys)
    data = run_json(["plan", str(copy), "--bootstrap", "50", "--json"], capsys)
    check("plan", data)
    assert data["agreement"]["samples"] > 0 and [g["scheme"] for g in data["gain"]] == ["trace"]
    (more,) = jq_values("plan", data)
    assert isinstance(more, int)


def test_calibrate_validates(copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ceiling = run_json(["calibrate", str(copy), "--scheme", "addm", "--bootstrap", "20", "--folds", "3", "--json"], capsys)
    check("calibrate", ceiling)
    assert "human_ceiling" in ceiling  # two annotators labeled the demo's ADDM units
    curve = run_json(["calibrate", str(copy), "--scheme", "trace", "--bootstrap", "20", "--folds", "3", "--curve",
                      "--apply", "tuned", "--force", "--json"], capsys)
    check("calibrate", curve)
    assert curve["applied"].startswith("tuned@") and curve["curve"]["points"]
    assert curve["forced"] is (not curve["gain"]["promoted"]) and curve["gain"]["baseline"] == "ragbench"
    band = run_json(["calibrate", str(copy), "--scheme", "trace", "--bootstrap", "0", "--folds", "3", "--guarantee",
                     "0.9", "--reference", "annotator", "--json"], capsys)
    check("calibrate", band)
    assert band["reference"] == "annotator" and band["guarantee"]["target"] == 0.9


def test_writing_commands_validate(copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dry = run_json(["export", str(copy), "--name", "demo_split", "--version", "1.0.0", "--dry-run", "--json"], capsys)
    check("export", dry)
    assert dry["dry_run"] is True and {"manifest.json", "README.md", "violations.jsonl"} <= set(dry["files"])
    assert not (tmp_path / "out").exists()
    done = run_json(["export", str(copy), "--name", "demo_split", "--version", "1.0.0", "--out", str(tmp_path / "out"),
                     "--json"], capsys)
    check("export", done)
    assert sorted(p.name for p in (tmp_path / "out" / "demo_split@1.0.0").iterdir()) == sorted(done["files"])
    assert (done["content_sha256"], done["files"], done["counts"]) == (dry["content_sha256"], dry["files"], dry["counts"])
    refused = run_json(["export", str(copy), "--name", "bad name", "--version", "1.0.0", "--dry-run", "--json"], capsys, 2)
    check("export", refused)
    assert refused["problems"]
    splits = run_json(["splits", str(copy), "--json"], capsys)
    check("splits", splits)
    assert [s["name"] for s in splits["splits"]] == ["demo_split"]
    check("assign-work", run_json(["assign-work", str(copy), "--annotators", "ana,ben", "--overlap", "1", "--json"], capsys))
    adaptive = run_json(["assign-work", str(copy), "--annotators", "ana,ben,cy", "--overlap", "adaptive", "--json"],
                        capsys)
    check("assign-work", adaptive)
    assert adaptive["adaptive"]["target"] == 0.75
    check("config", run_json(["config", str(copy), "--blind", "off", "--json"], capsys))
    other = tmp_path / "other.concord"
    shutil.copyfile(copy, other)
    check("merge", run_json(["merge", str(tmp_path / "merged.concord"), str(copy), str(other), "--json"], capsys))


def test_check_with_problems_and_a_repair_validates(copy: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    conn = sqlite3.connect(copy)  # a label the events do not give: a problem `check` finds, `--repair` rebuilds
    conn.execute("UPDATE labels SET value = '\"skipped\"' WHERE rowid = (SELECT MIN(rowid) FROM labels WHERE kind = 'status')")
    conn.commit()
    conn.close()
    data = run_json(["check", str(copy), "--repair", "--out", str(tmp_path / "fixed.concord"), "--json"], capsys, 2)
    check("check", data)
    assert not data["ok"] and data["labels"] and data["recovered"]["path"] == str(tmp_path / "fixed.concord")


# -- the schemas really pin the shapes -----------------------------------------------------------------------------
def test_schemas_reject_the_old_shapes(demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The unannounced changes of earlier releases (CHANGELOG.md) would each fail validation now."""
    status = run_json(["status", str(demo), "--json"], capsys)
    old = {k: v for k, v in status.items() if k != "project_schema_version"} | {"schema_version": 5}
    assert errors("status", old)
    assert errors("status", status | {"new_key": 1})  # an added key is a shape change too
    agreement = run_json(["agreement", str(demo), "--bootstrap", "0", "--json"], capsys)
    agreement["overall"]["span_f1"] = 0.5  # a number, as before version 2
    assert errors("agreement", agreement)
    calibrate = {"schema_version": VERSIONS["calibrate"], "defaults": {}}
    assert any("baselines" in e for e in errors("calibrate", calibrate))
    splits = run_json(["splits", str(demo), "--json"], capsys)
    assert errors("splits", splits["splits"])  # the bare list of version 1
    for kind in VERSIONS:
        assert errors(kind, {"schema_version": VERSIONS[kind] + 1}), kind  # another version never validates


# -- one place, one page, one changelog ----------------------------------------------------------------------------
@pytest.mark.parametrize("kind", sorted(VERSIONS))
def test_each_kind_is_documented(kind: str) -> None:
    schema = json.loads(schema_path(kind).read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    assert schema["properties"]["schema_version"] == {**schema["properties"]["schema_version"], "const": VERSIONS[kind]}
    section = re.search(rf"^## `{re.escape(kind)}`.*?(?=^## |\Z)", DOCS, re.M | re.S)
    assert section is not None, f"docs/json.md has no section ## `{kind}`"
    assert f"schema_version {VERSIONS[kind]}" in section.group(0)
    assert re.search(rf"`{re.escape(kind)}` *{VERSIONS[kind]}\b", CHANGELOG), f"CHANGELOG.md does not list {kind} {VERSIONS[kind]}"


def test_every_json_option_has_a_versioned_kind() -> None:
    """A command that grows --json must get a kind (and so a schema, docs and a test) before it ships."""
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    with_json = {name for name, p in sub.choices.items() if any("--json" in a.option_strings for a in p._actions)}
    assert with_json == set(VERSIONS)


def test_versioned_puts_the_version_first_and_refuses_a_clash() -> None:
    assert list(versioned("config", {"blind": True})) == ["schema_version", "blind"]
    with pytest.raises(ValueError):
        versioned("status", {"schema_version": 5})
