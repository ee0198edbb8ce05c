"""Issue #25 conformance: every registered scheme, and the toy schemes of tests/test_scheme_plugin.py (`binary`, and
`binary_tabled` with its own SQL table, registered through the loader), report the same labeled/unlabeled counts on
every surface -- `status --json`, the labels import summary, `export --dry-run --json`, the export manifest,
`splits --json`, `calibrate --json` and the app's status bar -- and those counts
are the ones a plain reading of the labels gives (a unit is labeled when a label other than a status or a note
exists for it, or for its whole sample through a per-sample kind).

Each scheme's project is built from data the test makes: some of the scheme's demo records (resources/demo, as
`concord demo` imports them) and their decided labels (read from a demo project built by app/io/demo.py), split
between two annotators who overlap on some units; the toy schemes' records come from their own generator.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from app.io.demo import create_demo
from app.services.ceiling import ceiling_with_machine
from app.store import Project
from calibration.schemes import base
from tests.gui_data import open_window, settings  # noqa: F401 - fixtures
from tests.test_scheme_plugin import NAME as TOY, SCHEME as TOY_SCHEME, UNIT as TOY_UNIT, _records as toy_records
from tests.test_scheme_plugin import TABLED
from tests.test_scheme_plugin import tabled  # noqa: F401 - fixture: the toy scheme with its own SQL table

SCHEMES = [*base.registry().names(), TOY, TABLED]
TOYS = {TOY: "toy", TABLED: "tabled"}  # the test schemes and the fixtures that register them
NOT_LABELS = ("status", "note")
N_DECIDED, N_UNDECIDED = 6, 3  # samples per project: with labels (two annotators, overlapping), without


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo project the schemes' data is read from, built once."""
    path = tmp_path_factory.mktemp("demo") / "demo.concord"
    create_demo(path).close()
    return path


@pytest.fixture
def toy() -> Iterator[None]:
    base.register(TOY_SCHEME, replace=True)
    yield
    base.registry().unregister(TOY)


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


UNIT_KEYS = ("sample", "unit", "checker", "trait")  # what a label line's unit is named by, in any line format


def _source(name: str, demo: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A scheme's records and label lines (without annotator) as the demo files hold them (resources/demo, each in
    its scheme's own format), or the toy scheme's generated ones."""
    if name in TOYS:
        records = [{**r, "scheme": name} for r in toy_records(N_DECIDED + N_UNDECIDED, seed=5)]
        return records, [{"scheme": name, "sample": r["id"], "unit": TOY_UNIT, "answer": r["confidence"] >= 0.6,
                          "status": "accepted"} for r in records[:N_DECIDED]]
    from app.io.demo import DEMO_FILES, LABELS_FILE, SCHEME_DEMOS, demo_dir

    def read(f: str) -> list[dict[str, Any]]:
        return [json.loads(line) for line in (demo_dir() / f).read_text(encoding="utf-8").splitlines() if line.strip()]

    records = [r for f in (*DEMO_FILES, *(rec for rec, _, _ in SCHEME_DEMOS)) for r in read(f)]
    lines = [r for f in (LABELS_FILE, *(lab for _, lab, _ in SCHEME_DEMOS)) for r in read(f)]
    with Project.open(demo) as p:  # which of them are this scheme's: as the demo project filed them
        ids = set(p.samples.sample_rows(name))
    return ([r for r in records if str(r["id"]) in ids],
            [{k: v for k, v in r.items() if k != "annotator"} for r in lines if str(r["sample"]) in ids])


def _make(tmp_path: Path, demo: Path, name: str, capsys: pytest.CaptureFixture[str]) -> tuple[Path, str]:
    """The scheme's project (imported through the CLI) and the labels import's printed summary."""
    records, labels = _source(name, demo)
    decided = sorted({str(r["sample"]) for r in labels})[:N_DECIDED]
    undecided = sorted({str(r["id"]) for r in records} - {str(r["sample"]) for r in labels})[:N_UNDECIDED]
    keep = set(decided) | set(undecided)
    path = tmp_path / f"{name}.concord"
    Project.create(path).close()
    assert main(["import", str(path), str(_write(tmp_path / f"{name}.jsonl",
                                                 [r for r in records if str(r["id"]) in keep]))]) == 0
    # two annotators: ana the first two thirds of the decided samples, bo the last two thirds (the middle third
    # labeled by both, with the same values, so a resolved label exists whoever wins)
    third = max(1, len(decided) // 3)
    mine = {"ana": set(decided[: 2 * third]), "bo": set(decided[third:])}
    lines, seen = [], set()
    for who, sids in mine.items():
        for r in labels:
            key = (who, *(r.get(k) for k in UNIT_KEYS))
            if str(r["sample"]) in sids and key not in seen:  # one line per annotator and unit
                seen.add(key)
                lines.append({**r, "annotator": who})
    capsys.readouterr()
    assert main(["labels", "import", str(path), str(_write(tmp_path / f"{name}_labels.jsonl", lines))]) == 0
    return path, capsys.readouterr().out


def _expected(path: Path, name: str) -> tuple[int, int]:
    """(labeled, units) read plainly from every annotator's labels (`_plain`)."""
    with Project.open(path) as p:
        units = sum(len(p.units.units_for_sample(sid)) for sid in p.samples.sample_rows(name))
    return len(_plain(path, name)), units


def _summary_counts(text: str, name: str) -> tuple[int, int]:
    """(labeled, unlabeled) from an import summary's "project now" line of the scheme."""
    m = re.search(rf"^  {re.escape(name)}: .*?(\d+) labeled, (\d+) unlabeled", text, re.M)
    assert m is not None, text
    return int(m.group(1)), int(m.group(2))


def _json(capsys: pytest.CaptureFixture[str], *args: str, code: int = 0) -> Any:
    capsys.readouterr()
    assert main(list(args)) == code
    return json.loads(capsys.readouterr().out)


def _splits(data: Any) -> list[dict[str, Any]]:
    """The splits listed by `splits --json`: a list, or (versioned outputs, issue #25 item 5) under "splits"."""
    return data["splits"] if isinstance(data, dict) else data


def _surfaces(path: Path, name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, tuple[int, int]]:
    """(labeled, unlabeled) of `name` as each CLI surface reports it (export's units are the decided ones, so its
    unlabeled figure is the project's units less its labeled ones, from status)."""
    status = _json(capsys, "status", str(path), "--json")
    mine = status["schemes"][name]
    assert mine["units"] == sum(u["total"] for u in status["units"] if u["scheme"] == name)
    assert mine["labeled"] == sum(u["labeled"] for u in status["units"] if u["scheme"] == name)
    out = {"status": (mine["labeled"], mine["unlabeled"])}
    preview = _json(capsys, "export", str(path), "--name", "c", "--version", "0.1.0", "--status", "any",
                    "--dry-run", "--json")
    out["export --dry-run"] = (preview["counts"]["schemes"][name]["labeled"],
                               mine["units"] - preview["counts"]["schemes"][name]["labeled"])
    capsys.readouterr()
    assert main(["export", str(path), "--name", "c", "--version", "0.1.0", "--status", "any",
                 "--out", str(tmp_path / "out")]) == 0
    manifest = json.loads((tmp_path / "out" / "c@0.1.0" / "manifest.json").read_text())
    out["manifest"] = (manifest["counts"]["schemes"][name]["labeled"],
                       mine["units"] - manifest["counts"]["schemes"][name]["labeled"])
    assert manifest["counts"]["samples"][name] == preview["counts"]["samples"][name]
    splits = _splits(_json(capsys, "splits", str(path), "--json"))
    out["splits"] = (splits[0]["schemes"][name]["labeled"], mine["units"] - splits[0]["schemes"][name]["labeled"])
    assert splits[0]["schemes"][name]["samples"] == manifest["counts"]["schemes"][name]["samples"]
    assert splits[0]["schemes"][name]["labels"] == manifest["counts"]["schemes"][name]["labels"]
    return out


@pytest.mark.parametrize("name", SCHEMES)
def test_every_surface_counts_alike(name: str, demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                    request: pytest.FixtureRequest, qtbot: Any, open_window: Any) -> None:  # noqa: F811
    if name in TOYS:
        request.getfixturevalue(TOYS[name])
    path, summary = _make(tmp_path, demo, name, capsys)
    labeled, units = _expected(path, name)
    assert 0 < labeled < units  # some units labeled, some not: both figures are tested
    want = (labeled, units - labeled)
    got = _surfaces(path, name, tmp_path, capsys)
    got["import summary"] = _summary_counts(summary, name)
    capsys.readouterr()
    code = main(["calibrate", str(path), "--scheme", name, "--folds", "2", "--bootstrap", "10", "--embedding", "jaccard",
                 "--step", "0.5", "--json"])
    out, err = capsys.readouterr()
    if code == 0:
        n = json.loads(out)["labeled_units"]
    else:  # a scheme with nothing to calibrate says so, with the labeled units it has
        m = re.search(r"nothing to calibrate \(.* of the (\d+) labeled", err)
        assert code == 2 and m is not None, err
        n = int(m.group(1))
    got["calibrate"] = (n, units - n)
    with Project.open(path) as p:  # the human ceiling compares the metric's decisions with the shared labels
        ceiling = ceiling_with_machine(p, name, n_boot=0)
    assert ceiling is not None and ceiling["units"] > 0
    assert ceiling["metric_human"] is not None and ceiling["metric_human"]["items"] > 0, ceiling["note"]
    w = open_window(path)
    qtbot.waitUntil(lambda: w.session_progress.counts is not None, timeout=10000)
    done, total = w.session_progress.counts
    got["status bar"] = (done, total - done)
    assert f"Labeled {done:,} / {total:,}" in w.session_progress.label.text()
    assert got == {k: want for k in got}


def test_the_demo_counts_alike_on_every_surface(tmp_path: Path, capsys: pytest.CaptureFixture[str], qtbot: Any,
                                                open_window: Any) -> None:  # noqa: F811
    from app.io.demo import LABELS_FILE, demo_dir

    path = tmp_path / "demo.concord"
    create_demo(path).close()
    capsys.readouterr()
    assert main(["labels", "import", str(path), str(demo_dir() / LABELS_FILE)]) == 0  # changes nothing, prints counts
    summary = capsys.readouterr().out
    status = _json(capsys, "status", str(path), "--json")["schemes"]
    assert set(status) == set(base.registry().names())
    # one export holds every scheme: each scheme's figures from the same dry run, manifest and splits listing
    preview = _json(capsys, "export", str(path), "--name", "c", "--version", "0.1.0", "--status", "any",
                    "--dry-run", "--json")["counts"]["schemes"]
    assert main(["export", str(path), "--name", "c", "--version", "0.1.0", "--status", "any",
                 "--out", str(tmp_path / "out")]) == 0
    manifest = json.loads((tmp_path / "out" / "c@0.1.0" / "manifest.json").read_text())["counts"]["schemes"]
    splits = _splits(_json(capsys, "splits", str(path), "--json"))[0]["schemes"]
    for name in status:
        labeled, units = _expected(path, name)
        want = (labeled, units - labeled)
        got = {"status": (status[name]["labeled"], status[name]["unlabeled"]),
               "import summary": _summary_counts(summary, name),
               **{where: (c[name]["labeled"], units - c[name]["labeled"])
                  for where, c in (("export --dry-run", preview), ("manifest", manifest), ("splits", splits))}}
        assert got == {k: want for k in got}, name
        assert 0 < labeled < units, name
    w = open_window(path)
    qtbot.waitUntil(lambda: w.session_progress.counts is not None, timeout=10000)
    assert w.session_progress.counts == (sum(c["labeled"] for c in status.values()),
                                         sum(c["units"] for c in status.values()))


def _plain(path: Path, name: str, annotator: str | None = None) -> set[tuple[str, str]]:
    """The labeled units read plainly from the labels (one annotator's own, or anyone's)."""
    with Project.open(path) as p:
        units = {(sid, x["unit"]) for sid in p.samples.sample_rows(name) for x in p.units.units_for_sample(sid)}
        per_sample = {k for k, kind in base.get(name).label_kinds.items() if kind.per_sample}
        content = {(sid, unit, kind) for sch, sid, unit, kind, who, _ in p.decisions.annotator_label_rows()
                   if sch == name and kind not in NOT_LABELS and annotator in (None, who)}
    return {(sid, u) for sid, u in units
            if any(k[:2] == (sid, u) for k in content) or any(k[:2] == (sid, "") and k[2] in per_sample for k in content)}


@pytest.mark.parametrize("name", SCHEMES)
def test_blind_mode_counts_an_annotators_own_queue(name: str, demo: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str],
                                                   request: pytest.FixtureRequest) -> None:
    """The status bar in blind mode: the annotator's own labels over the units assigned to them."""
    if name in TOYS:
        request.getfixturevalue(TOYS[name])
    path, _ = _make(tmp_path, demo, name, capsys)
    with Project.open(path) as p:
        p.assignments.assign_work(["ana", "bo"], 1, seed=1)
        queue = set(p.assignments.assigned_units("ana"))
        counts = p.counts.unit_counts(annotator="ana", assigned_to="ana")["schemes"][name]
    mine = _plain(path, name, "ana") & queue
    assert counts["units"] == len(queue) and counts["labeled"] == len(mine)
    assert counts["unlabeled"] == len(queue) - len(mine)
    assert 0 < len(mine) < len(_plain(path, name))  # ana's own labels are fewer than everyone's
