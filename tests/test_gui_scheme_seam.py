"""The GUI reads the scheme registry (issue #11 item 5): a scheme registered from this test module only, with no
view of its own, is listed with its own columns, opened in the generic view, accepted with A and undone with
Ctrl+Z, and the store follows. Also: the list's columns follow the scheme filter (no violations header on rubric
rows), the scheme combo offers the schemes present, and views come from the registry."""
from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from app.gui.views import VIEWS, view_class, view_classes
from app.gui.views.generic import GenericView
from app.store import Project
from calibration.schemes import base
from calibration.schemes.base import Column, FieldProblem, LabelKind, Parsed, Report
from tests.gui_data import open_window, project_path, settings  # noqa: F401 - fixtures

NAME = "toy_yesno"


def _validate_verdict(value: Any) -> list[FieldProblem]:
    return [] if value in (None, "yes", "no") else [FieldProblem("", f"expected 'yes' or 'no', got {value!r}")]


VERDICT = LabelKind("toy_verdict", _validate_verdict, description="is the text on topic (yes/no)")


@dataclass(frozen=True)
class ToyRecord:
    id: str
    text: str
    verdict: str | None
    confidence: float | None


@dataclass(frozen=True)
class ToyScheme:
    """A text, and a judge's yes/no with a confidence: the smallest scheme the protocol allows."""

    name: str = NAME
    title: str = "Toy yes/no"
    record_keys: frozenset[str] = frozenset(("scheme", "id", "text", "verdict", "confidence"))
    required_keys: frozenset[str] = frozenset(("verdict",))
    unit_noun: str = "judge"
    columns: tuple[Column, ...] = (Column("confidence", "Confidence"), Column("verdict", "Verdict", numeric=False))
    record_schema: str | None = None
    label_schema: str | None = None

    @property
    def label_kinds(self) -> Mapping[str, LabelKind]:
        return base.label_kinds(VERDICT)

    def detect(self, raw: Mapping[str, Any]) -> bool:
        return False

    def parse(self, raw: Mapping[str, Any]) -> Parsed:
        return Parsed(ToyRecord(str(raw["id"]), str(raw["text"]), raw.get("verdict"), raw.get("confidence")))

    def to_json(self, record: ToyRecord) -> dict[str, Any]:
        return {"scheme": NAME, "id": record.id, "text": record.text, "verdict": record.verdict,
                "confidence": record.confidence}

    def record_id(self, record: ToyRecord) -> str:
        return record.id

    def record_text(self, record: ToyRecord) -> str:
        return record.text

    def units(self, record: ToyRecord) -> list[str]:
        return ["judge-1"]

    def unit_summary(self, record: ToyRecord, unit: str) -> dict[str, Any]:
        return {"confidence": record.confidence, "verdict": record.verdict}

    def machine_label(self, record: ToyRecord, unit: str) -> Any:
        return None if record.verdict is None else {"verdict": record.verdict, "confidence": record.confidence}

    def accept(self, machine_label: Any) -> dict[str, Any]:
        return {"toy_verdict": (machine_label or {}).get("verdict"), "status": "accepted"}

    def metrics(self, record: Any, unit: str, labels: Mapping[str, Any], params: Mapping[str, Any] | None = None) -> dict[str, float]:
        return {}

    def label_items(self, record: Any, unit: str, labels: Mapping[str, Any]) -> dict[str, Any]:
        return {}

    def presets(self) -> dict[str, dict[str, Any]]:
        return {}

    def search_problem(self, records: Sequence[Any], labels: Any, options: Mapping[str, Any]) -> None:
        return None

    def evaluate(self, records: Sequence[Any], labels: Any, options: Mapping[str, Any]) -> Report:
        return Report(NAME)


RECORDS = [ToyRecord("t1", "Aspirin <b>thins</b> the blood.", "yes", 0.91),
           ToyRecord("t2", "The weather is nice.", "no", 0.35),
           ToyRecord("t3", "Nothing judged yet.", None, None)]


@pytest.fixture
def toy_scheme() -> Iterator[ToyScheme]:
    scheme = ToyScheme()
    base.register(scheme)
    yield scheme
    base.registry().unregister(NAME)


@pytest.fixture
def toy_project(tmp_path: Path, toy_scheme: ToyScheme) -> Path:
    path = tmp_path / "toy.concord"
    with Project.create(path) as p:
        p.samples.write_samples(NAME, RECORDS)
    return path


def _headers(w: Any) -> list[str]:
    return [w.model.headerData(c, Qt.Orientation.Horizontal) for c in range(w.model.columnCount())]


def _cells(w: Any, row: int) -> list[str]:
    return [w.model.data(w.model.index(row, c)) for c in range(w.model.columnCount())]


def test_toy_scheme_listed_opened_accepted_and_undone(qtbot, open_window, toy_project) -> None:  # type: ignore[no-untyped-def]
    w = open_window(toy_project)
    assert [w.filters.scheme.itemData(i) for i in range(w.filters.scheme.count())] == [None, NAME]
    assert _headers(w) == ["Sample", "Scheme", "Judge", "Confidence", "Verdict", "Score", "Status"]
    assert _cells(w, 0)[:5] == ["t1", NAME, "judge-1", "0.91", "yes"]
    assert _cells(w, 2)[3:5] == ["", ""]  # nothing judged: no figures
    assert "#GT" not in _headers(w)
    assert not any(a.isVisible() for a in w.configs.actions)  # no scheme of this project follows a match config
    w.select_row(0)
    view = w.current_view
    assert isinstance(view, GenericView) and view.current() == ("t1", "judge-1")
    assert '"text": "Aspirin <b>thins</b> the blood."' in view.record_box.toPlainText()  # the record, as plain text
    assert '"verdict": "yes"' in view.machine_box.toPlainText()
    assert view.status.text() == "status: unlabeled"

    w.list.setFocus()
    qtbot.keyClick(w.list, Qt.Key.Key_A)  # accept: scheme.accept(machine label), then the next unit
    p = w.project
    assert p.decisions.current("t1", "judge-1", "toy_verdict") == "yes"
    assert p.decisions.current("t1", "judge-1", "status") == "accepted"
    assert w.model.row(0)["status"] == "accepted"
    assert view.current() == ("t2", "judge-1")  # auto-advance

    qtbot.keyClick(w.list, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert p.decisions.current("t1", "judge-1", "toy_verdict") is None
    assert p.decisions.current("t1", "judge-1", "status") is None
    assert w.model.row(0)["status"] == "unlabeled"
    assert view.current() == ("t1", "judge-1")  # undo shows the unit it undid
    assert view.status.text() == "status: unlabeled"
    kinds = [view.label_model.record(i)["kind"] for i in range(view.label_model.rowCount())]
    assert kinds == ["toy_verdict", "status", "note"]

    w.select_row(2)  # no machine label: accept records nothing
    qtbot.keyClick(w.list, Qt.Key.Key_A)
    assert p.decisions.current("t3", "judge-1", "status") is None and view.current() == ("t3", "judge-1")


def test_list_columns_follow_the_scheme_filter(qtbot, open_window, project_path) -> None:  # type: ignore[no-untyped-def]
    w = open_window(project_path)
    combo = w.filters.scheme
    assert [combo.itemData(i) for i in range(combo.count())] == [None, "violations", "rubric"]  # present only
    combo.setCurrentIndex(combo.findData("rubric"))
    headers = _headers(w)
    assert "#GT" not in headers and "#Pred" not in headers
    assert headers[2:6] == ["Trait", "#TP instr.", "#Excerpts", "Mode"]
    assert not w.filters.category.isVisible()  # the violations view's filter: only while violations can be listed
    combo.setCurrentIndex(combo.findData("violations"))
    assert _headers(w)[2:5] == ["Checker", "#GT", "#Pred"] and w.filters.category.isVisible()
    combo.setCurrentIndex(0)  # several schemes: one summary, each row with its own scheme's headers
    assert "#GT" not in _headers(w) and "Summary" in _headers(w)
    col = _headers(w).index("Summary")
    texts = {w.model.row(r)["scheme"]: w.model.data(w.model.index(r, col)) for r in range(w.model.rowCount())}
    assert texts["violations"].startswith("#GT ") and "#TP instr." in texts["rubric"] and "#GT" not in texts["rubric"]


def test_views_come_from_the_registry(toy_scheme) -> None:  # type: ignore[no-untyped-def]
    assert [v.scheme for v in view_classes()][:2] == ["violations", "rubric"]
    assert view_class(NAME) is GenericView and NAME not in VIEWS
