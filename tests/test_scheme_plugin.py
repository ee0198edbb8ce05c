"""Issue #11 acceptance (non-GUI half): a toy scheme defined in this module alone -- `binary`: a text, a machine
yes/no with a confidence score, one threshold to calibrate -- goes through import, the unit list model, a human
decision with undo, evaluate, calibrate (the planted threshold is recovered) and export, with no change to any
file outside this test."""
from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pytest

from app.cli import main
from app.corrections import SetLabels
from app.io.imports import import_file
from app.schemes import loader
from app.schemes.manifest import Contribution, Manifest
from app.store import Change, Project
from calibration.schemes import base
from calibration.schemes.base import Column, FieldProblem, LabelKind, Parsed, Report, Table
from calibration.search.space import Grid, Space

NAME = "binary"
UNIT = "model"
PLANTED = 0.6  # human answers are "yes" exactly when the confidence is >= this
THRESHOLDS = tuple(round(x, 2) for x in np.arange(0.05, 1.0, 0.05))


@dataclass(frozen=True)
class BinaryRecord:
    id: str
    text: str
    confidence: float
    split: str | None = None


def _validate_answer(value: Any) -> list[FieldProblem]:
    return [] if value is None or isinstance(value, bool) else [FieldProblem("", f"expected true/false, got {value!r}")]


ANSWER = LabelKind("answer", _validate_answer, description="yes or no")


class BinaryProblem:
    scheme = NAME
    group_noun = "sample"
    n_classes = 2
    objective = "kappa"

    def __init__(self, confidence: np.ndarray, human: np.ndarray, ids: Sequence[str]) -> None:
        self.space = Space((Grid("threshold", THRESHOLDS),))
        self.units = pd.DataFrame({"group": list(ids)})
        self.item_unit = np.arange(len(ids))
        self.human = human.astype(np.int64)
        self.confidence = confidence

    def decide(self, configs: Mapping[str, np.ndarray]) -> np.ndarray:
        t = np.asarray(configs["threshold"], dtype=float)[:, None]
        return (self.confidence[None, :] >= t).astype(np.int64)

    def baselines(self) -> dict[str, dict[str, Any]]:
        return {"default": {"threshold": 0.5}}

    def to_params(self, config: Mapping[str, Any]) -> dict[str, Any]:
        return {"threshold": float(config["threshold"])}


@dataclass(frozen=True)
class BinaryScheme:
    name: str = NAME
    title: str = "Binary"
    record_keys: frozenset[str] = frozenset(("scheme", "id", "text", "confidence", "split"))
    required_keys: frozenset[str] = frozenset(("text", "confidence"))
    unit_noun: str = "model"
    columns: tuple[Column, ...] = (Column("confidence", "Conf."), Column("answer", "Answer", numeric=False))
    record_schema: str | None = None
    label_schema: str | None = None

    @property
    def label_kinds(self) -> Mapping[str, LabelKind]:
        return base.label_kinds(ANSWER)

    def detect(self, raw: Mapping[str, Any]) -> bool:
        return False  # plug-in records name their scheme

    def parse(self, raw: Mapping[str, Any]) -> Parsed:
        problems = [FieldProblem(k, f"unknown field {k!r}", code="unknown_field") for k in raw.keys() - self.record_keys]
        c = raw.get("confidence")
        if isinstance(c, bool) or not isinstance(c, (int, float)) or not 0 <= c <= 1:
            problems.append(FieldProblem("confidence", f"expected a number in [0, 1], got {c!r}"))
        if not isinstance(raw.get("text"), str):
            problems.append(FieldProblem("text", "expected a string"))
        if any(p.severity == "error" for p in problems):
            return Parsed(None, tuple(problems))
        return Parsed(BinaryRecord(str(raw["id"]), raw["text"], float(c), raw.get("split")), tuple(problems))

    def to_json(self, r: BinaryRecord) -> dict[str, Any]:
        out: dict[str, Any] = {"scheme": NAME, "id": r.id, "text": r.text, "confidence": r.confidence}
        if r.split is not None:
            out["split"] = r.split
        return out

    def record_id(self, r: BinaryRecord) -> str:
        return r.id

    def record_text(self, r: BinaryRecord) -> str:
        return r.text

    def units(self, r: BinaryRecord) -> list[str]:
        return [UNIT]

    def unit_summary(self, r: BinaryRecord, unit: str) -> dict[str, Any]:
        return {"confidence": r.confidence, "answer": "yes" if r.confidence >= 0.5 else "no"}

    def machine_label(self, r: BinaryRecord, unit: str) -> Any:
        return {"answer": r.confidence >= 0.5}

    def accept(self, machine_label: Any) -> dict[str, Any]:
        return {"answer": bool((machine_label or {}).get("answer")), "status": "accepted"}

    def metrics(self, r: BinaryRecord, unit: str, labels: Mapping[str, Any], params: Mapping[str, Any] | None = None) -> dict[str, float]:
        t = float((params or {}).get("threshold", 0.5))
        h = labels.get("answer")
        return {} if h is None else {"correct": float((r.confidence >= t) == h)}

    def label_items(self, r: BinaryRecord, unit: str, labels: Mapping[str, Any]) -> dict[str, Any]:
        return {} if labels.get("answer") is None else {"answer": labels["answer"]}

    def presets(self) -> dict[str, dict[str, Any]]:
        return {"default": {"threshold": 0.5}}

    def _labeled(self, records: Sequence[BinaryRecord], labels: Mapping[tuple[str, str], Mapping[str, Any]]) -> list[tuple[BinaryRecord, bool]]:
        return [(r, bool(labels[(r.id, UNIT)]["answer"])) for r in records
                if labels.get((r.id, UNIT), {}).get("answer") is not None]

    def search_problem(self, records: Sequence[Any], labels: Mapping[tuple[str, str], Mapping[str, Any]],
                       options: Mapping[str, Any]) -> BinaryProblem | None:
        done = self._labeled(records, labels)
        if not done:
            return None
        return BinaryProblem(np.array([r.confidence for r, _ in done]), np.array([h for _, h in done]),
                             [r.id for r, _ in done])

    def evaluate(self, records: Sequence[Any], labels: Mapping[tuple[str, str], Mapping[str, Any]],
                 options: Mapping[str, Any]) -> Report:
        params = (options.get("params") or [self.presets()["default"]])[0]
        done = self._labeled(records, labels)
        correct = sum(self.metrics(r, UNIT, {"answer": h}, params)["correct"] for r, h in done)
        acc = correct / len(done) if done else float("nan")
        return Report(NAME, (Table("Binary: machine vs human", ("threshold", "labeled", "accuracy"),
                                   ((params["threshold"], len(done), acc),)),),
                      {"threshold": params["threshold"], "labeled": len(done), "accuracy": acc})


SCHEME = BinaryScheme()


@pytest.fixture
def binary() -> Iterator[BinaryScheme]:
    base.register(SCHEME, replace=True)
    yield SCHEME
    base.registry().unregister(NAME)


def _records(n: int = 60, seed: int = 3) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    conf = rng.uniform(0.0, 1.0, n).round(3)
    return [{"scheme": NAME, "id": f"b{i:03d}", "text": f"text number {i}", "confidence": float(c),
             "split": "test" if i % 3 == 0 else "train"} for i, c in enumerate(conf)]


def test_binary_plugin_end_to_end(binary: BinaryScheme, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from app.gui.models import UnitListModel

    records = _records()
    src = tmp_path / "binary.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in records))
    path = tmp_path / "p.concord"
    project = Project.create(path)

    # import: stored generically from the Scheme object
    report = import_file(project, src)
    assert report.counts[NAME].added == len(records)
    assert [r.id for r in project.scheme_data.scheme_records(NAME)] == [r["id"] for r in records]

    # the unit list model shows the scheme's units with its summary columns (read-only use of app/gui/models.py)
    model = UnitListModel(project)
    assert model.total == len(records)
    first = model.row(0)
    assert first["scheme"] == NAME and first["unit"] == UNIT
    assert first["confidence"] == pytest.approx(records[0]["confidence"])

    # a human decision, then its undo: the label comes and goes, the events stay
    sid = records[0]["id"]
    decision = SetLabels((Change(sid, UNIT, "answer", True), Change(sid, UNIT, "status", "corrected")), "answer yes")
    undo = decision.apply(project, "ana")
    assert project.decisions.current(sid, UNIT, "answer") is True
    assert project.scheme_data.scheme_labels(NAME)[(sid, UNIT)] == {"answer": True, "status": "corrected"}
    undo.apply(project, "ana")
    assert project.decisions.current(sid, UNIT, "answer") is None and (sid, UNIT) not in project.scheme_data.scheme_labels(NAME)
    assert len(project.decisions.events(sid)) == 4
    with pytest.raises(ValueError):  # the scheme's kinds are known to the store; others are not
        project.decisions.record("ana", [Change(sid, UNIT, "no_such_kind", 1)])

    # planted human answers: "yes" exactly when confidence >= PLANTED, decided by two annotators
    for i, r in enumerate(records):
        who = "ana" if i % 2 else "bo"
        project.decisions.record(who, [Change(r["id"], UNIT, "answer", r["confidence"] >= PLANTED),
                             Change(r["id"], UNIT, "status", "accepted")])
    project.close()

    # evaluate: the scheme's own report, as tables and as JSON
    assert main(["evaluate", str(path), "--scheme", NAME, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    expected = np.mean([(r["confidence"] >= 0.5) == (r["confidence"] >= PLANTED) for r in records])
    assert set(out) == {NAME, "schema_version"}
    assert out[NAME]["labeled"] == len(records) and out[NAME]["accuracy"] == pytest.approx(expected)
    assert expected < 1.0  # the default threshold is wrong on some planted units, so calibration has work to do
    assert main(["evaluate", str(path)]) == 0
    assert "Binary: machine vs human" in capsys.readouterr().out

    # calibrate: the planted threshold is recovered and applied (--force: few units, the gain's interval may touch 0)
    assert main(["calibrate", str(path), "--scheme", NAME, "--folds", "3", "--bootstrap", "50", "--json",
                 "--apply", "tuned", "--force"]) == 0
    cal = json.loads(capsys.readouterr().out)
    assert cal["gain"]["baseline"] == "default" and cal["forced"] is (not cal["gain"]["promoted"])
    assert cal["scheme"] == NAME and cal["objective"] == "kappa"  # the problem's suggested objective
    assert cal["best"]["params"] == {"threshold": PLANTED}
    assert cal["heldout"]["score"] > cal["baselines"]["default"]
    assert cal["applied"] == "tuned@1.0.0"
    with Project.open(path) as p:
        assert p.scheme_data.load_params(NAME, "tuned") == {"threshold": PLANTED}
        assert p.artifacts.calibration_runs()[-1]["params"]["scheme"] == NAME
    assert main(["evaluate", str(path), "--scheme", NAME, "--use", "tuned", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[NAME]["accuracy"] == pytest.approx(1.0)

    # export: the records as import reads them, every annotator's labels, counts in the manifest
    assert main(["export", str(path), "--name", "toy", "--version", "0.1.0", "--out", str(tmp_path / "out"),
                 "--status", "accepted"]) == 0
    capsys.readouterr()
    split = tmp_path / "out" / "toy@0.1.0"
    exported = [json.loads(line) for line in (split / f"{NAME}.jsonl").read_text().splitlines()]
    assert exported == sorted(records, key=lambda r: r["id"])
    labels = [json.loads(line) for line in (split / f"{NAME}_labels.jsonl").read_text().splitlines()]
    assert {(r["sample"], r["kind"]) for r in labels} == {(r["id"], k) for r in records for k in ("answer", "status")}
    assert {r["annotator"] for r in labels} == {"ana", "bo"}
    manifest = json.loads((split / "manifest.json").read_text())
    assert manifest["counts"]["schemes"][NAME]["samples"] == len(records)
    assert manifest["counts"]["schemes"][NAME]["by_split"] == {"test": 20, "train": 40}
    assert f"{NAME}.jsonl" in (split / "README.md").read_text()

    # the exported records import again unchanged
    again = Project.create(tmp_path / "again.concord")
    import_file(again, split / f"{NAME}.jsonl")
    assert [SCHEME.to_json(r) for r in again.scheme_data.scheme_records(NAME)] == exported
    again.close()


# -- a variant with a SQL table of its own (issue #25 item 4): the same scheme, its confidences kept in a table its
# store contribution creates, registered through the loader with a manifest; still no edit outside this module -------
TABLED = "binary_tabled"


@dataclass(frozen=True)
class TabledScheme(BinaryScheme):
    name: str = TABLED
    title: str = "Binary (own table)"

    def to_json(self, r: BinaryRecord) -> dict[str, Any]:
        return {**super().to_json(r), "scheme": TABLED}


class ScoresTable:
    """The store part (composition: `project.store(TABLED)`): one row per record with its confidence."""

    def __init__(self, project: Project) -> None:
        self.project = project

    def create_tables(self) -> None:
        self.project.conn.execute(
            "CREATE TABLE IF NOT EXISTS binary_tabled_scores (sample_id TEXT PRIMARY KEY REFERENCES samples(id) "
            "ON DELETE CASCADE, confidence REAL NOT NULL)")

    def write(self, records: Sequence[BinaryRecord]) -> None:
        self.project.conn.executemany("INSERT OR REPLACE INTO binary_tabled_scores VALUES (?, ?)",
                                      [(r.id, r.confidence) for r in records])

    def records(self) -> list[BinaryRecord]:
        """The records with their confidence read from this table (so evaluate and calibrate see the table)."""
        return [BinaryRecord(sid, text, conf, split) for sid, text, split, conf in self.project.conn.execute(
            "SELECT s.id, s.text, s.split, t.confidence FROM samples s JOIN binary_tabled_scores t ON t.sample_id = s.id "
            "WHERE s.scheme = ? ORDER BY s.rowid", (TABLED,))]


TABLED_SCHEME = TabledScheme()
TABLED_STORE = SimpleNamespace(  # the store contribution's members ("module:attr" in the manifest)
    PART=ScoresTable,
    write_records=lambda project, records: project.store(TABLED).write(records),
    load_records=lambda project: project.store(TABLED).records(),
)
TABLED_MANIFEST = Manifest(
    name=TABLED, scheme=f"{__name__}:TABLED_SCHEME",
    contributions={"store": Contribution(f"{__name__}:TABLED_STORE", {"part", "write_records", "load_records"})},
    accepts="binary records with a confidence")


@pytest.fixture
def tabled() -> Iterator[TabledScheme]:
    loader.register(TABLED_MANIFEST)
    yield TABLED_SCHEME
    loader.unregister(TABLED)


def test_a_scheme_with_its_own_table_end_to_end(tabled: TabledScheme, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    records = [{**r, "scheme": TABLED} for r in _records()]
    src = tmp_path / "tabled.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in records))
    path = tmp_path / "p.concord"
    assert main(["init", str(path)]) == 0

    # import: the generic samples and the scheme's own rows, in one transaction
    assert main(["import", str(path), str(src)]) == 0
    with Project.open(path) as project:
        rows = dict(project.conn.execute("SELECT sample_id, confidence FROM binary_tabled_scores"))
        assert rows == {r["id"]: r["confidence"] for r in records}
        assert [r.id for r in project.scheme_data.scheme_records(TABLED)] == [r["id"] for r in records]

    # a decision and its undo
    with Project.open(path) as project:
        sid = records[0]["id"]
        undo = SetLabels((Change(sid, UNIT, "answer", True),), "answer yes").apply(project, "ana")
        assert project.decisions.current(sid, UNIT, "answer") is True
        undo.apply(project, "ana")
        assert project.decisions.current(sid, UNIT, "answer") is None
        for i, r in enumerate(records):
            project.decisions.record("ana" if i % 2 else "bo", [Change(r["id"], UNIT, "answer", r["confidence"] >= PLANTED),
                                                       Change(r["id"], UNIT, "status", "accepted")])

    capsys.readouterr()
    assert main(["status", str(path), "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["samples"] == {TABLED: len(records)}
    assert [(u["unit"], u["total"], u["labeled"]) for u in status["units"] if u["scheme"] == TABLED] == [
        (UNIT, len(records), len(records))]

    # evaluate and calibrate read the records through the store part: the planted threshold is recovered
    assert main(["evaluate", str(path), "--scheme", TABLED, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[TABLED]["labeled"] == len(records)
    assert main(["calibrate", str(path), "--scheme", TABLED, "--folds", "3", "--bootstrap", "50", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["best"]["params"] == {"threshold": PLANTED}

    # the table is the records' source: change a confidence there and the scheme's records follow
    with Project.open(path) as project:
        with project.transaction() as c:
            c.execute("UPDATE binary_tabled_scores SET confidence = 0.999 WHERE sample_id = ?", (records[0]["id"],))
        assert project.scheme_data.scheme_records(TABLED)[0].confidence == 0.999

    # export, then re-import into a new project: the own table is filled again
    assert main(["export", str(path), "--name", "tabled", "--version", "0.1.0", "--out", str(tmp_path / "out"),
                 "--status", "accepted"]) == 0
    split = tmp_path / "out" / "tabled@0.1.0"
    exported = [json.loads(line) for line in (split / f"{TABLED}.jsonl").read_text().splitlines()]
    assert [r["id"] for r in exported] == sorted(r["id"] for r in records)
    again = tmp_path / "again.concord"
    assert main(["init", str(again)]) == 0 and main(["import", str(again), str(split / f"{TABLED}.jsonl")]) == 0
    with Project.open(again) as project:
        assert project.conn.execute("SELECT COUNT(*) FROM binary_tabled_scores").fetchone() == (len(records),)
