"""Every custom Qt model passes qtmodeltester; the unit list pages lazily and sorts/filters in the store."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from app.gui.models import Column, RecordTableModel, UnitListModel
from app.store import Project, UnitFilter
from calibration.schemes.violations.records import Violation, ViolationSample
from tests.gui_data import C1, open_window, project_path, settings, shown_tooltip  # noqa: F401 - fixtures


def _bulk(path: Path, n: int) -> Project:
    p = Project.create(path)
    p.store("violations").write_violation_samples([
        ViolationSample(f"s{i:04d}", f"text {i}", (Violation("r", 0, 4),), {C1: (Violation("r", 0, 4),) * (i % 3)})
        for i in range(n)
    ])
    return p


def test_unit_list_model_passes_modeltester_while_fetching(qtmodeltester, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    p = _bulk(tmp_path / "m.concord", 45)
    model = UnitListModel(p, page=10)
    assert model.rowCount() == 10 and model.total == 45 and model.canFetchMore()
    qtmodeltester.check(model, force_py=True)  # keeps checking on every signal from here on
    while model.canFetchMore():
        model.fetchMore()
    assert model.rowCount() == 45
    model.sort(4, Qt.SortOrder.DescendingOrder)  # #Pred
    assert model.rowCount() == 10
    assert [model.row(i)["n_pred"] for i in range(10)] == [2] * 10
    model.set_filter(UnitFilter(search="text 1"))  # "text 1", "text 10".."text 19"
    assert model.total == 11
    model.set_status("s0010", C1, "accepted")
    p.close()


def test_display_texts_are_the_cells_data_shows(tmp_path: Path) -> None:
    """The column sizer reads the first rows' texts without an index per cell: the same texts `data` gives."""
    p = _bulk(tmp_path / "m.concord", 25)
    model = UnitListModel(p, page=10)
    model.fetchMore()
    for col in range(model.columnCount()):
        texts = model.display_texts(col, 15)
        assert texts == [model.data(model.index(r, col)) for r in range(15)], col
    assert model.display_texts(0, 100) == [model.row(r)["sample_id"] for r in range(20)]  # only the loaded rows
    assert model.display_texts(model.columnCount(), 5) == []
    p.close()


def test_unit_list_status_updates_in_place(tmp_path: Path) -> None:
    p = _bulk(tmp_path / "m.concord", 5)
    model = UnitListModel(p)
    seen = []
    model.dataChanged.connect(lambda a, b: seen.append((a.row(), a.column())))
    model.set_status("s0003", C1, "flagged")
    assert model.row(3)["status"] == "flagged"
    assert seen == [(3, 6)]
    assert model.data(model.index(3, 6)) == "flagged"
    p.close()


def test_record_table_model_passes_modeltester(qtmodeltester) -> None:  # type: ignore[no-untyped-def]
    model = RecordTableModel([Column("a", "A"), Column("b", "B", lambda v: f"{v:.1f}", True, "tip")])
    qtmodeltester.check(model, force_py=True)
    model.set_records([{"a": "x", "b": 1.0, "_bg": "#ffffff", "_tip": "hello"}, {"a": None, "b": 2.5}])
    assert model.data(model.index(1, 1)) == "2.5"
    assert shown_tooltip(model.data(model.index(0, 0), Qt.ItemDataRole.ToolTipRole)) == "hello"


def test_record_table_model_updates_only_the_changed_rows(qtmodeltester) -> None:  # type: ignore[no-untyped-def]
    """A refresh after a decision redraws the rows that changed (no reset: a ResizeToContents table would re-measure
    every cell); a different row count resets."""
    model = RecordTableModel([Column("a", "A"), Column("b", "B")])
    qtmodeltester.check(model, force_py=True)
    model.set_records([{"a": "x", "b": 1}, {"a": "y", "b": 2}, {"a": "z", "b": 3}])
    changed, resets = [], []
    model.dataChanged.connect(lambda tl, br, *_r: changed.append((tl.row(), tl.column(), br.row(), br.column())))
    model.modelReset.connect(lambda: resets.append(1))
    model.update_records([{"a": "x", "b": 1}, {"a": "y", "b": 2}, {"a": "z", "b": 3}])
    assert changed == [] and resets == []
    model.update_records([{"a": "x", "b": 1}, {"a": "y", "b": 5, "_bg": "#e3f2fd"}, {"a": "z", "b": 3}])
    assert changed == [(1, 0, 1, 1)] and resets == []
    assert model.data(model.index(1, 1)) == "5" and model.data(model.index(1, 0), Qt.ItemDataRole.BackgroundRole) is not None
    model.update_records([{"a": "only", "b": 0}])
    assert resets == [1] and model.rowCount() == 1 and model.data(model.index(0, 0)) == "only"


def test_view_models_pass_modeltester(qtbot, request, open_window, project_path) -> None:  # type: ignore[no-untyped-def]
    """The models as the window fills them (one tester per model: a tester watches one model)."""
    from pytestqt.modeltest import ModelTester

    w = open_window(project_path)
    v = w.current_view
    models = [w.model, v.gt_model, v.pred_model, v.pair_model]
    for m in models[1:]:
        assert m.rowCount() > 0
    w.filters.scheme.setCurrentIndex(w.filters.scheme.findData("rubric"))
    r = w.current_view
    models += [r.metric_model, *r.bucket_models.values()]
    testers = []
    for m in models:
        t = ModelTester(request.config)
        t.check(m, force_py=True)
        testers.append(t)
    qtbot.keyClick(w.list, Qt.Key.Key_X)
    qtbot.keyClick(w.list, Qt.Key.Key_2)  # bucket and metric models reset under the testers
    w.filters.scheme.setCurrentIndex(0)  # list model reset under its tester
    for t in testers:
        t._cleanup()


def test_scheme_figures_in_the_list_are_rounded(tmp_path: Path) -> None:
    """TRACe's relevance 1/3 showed as "0.3333333333333333" (cut to "0.33333..." in the column and the summary)."""
    import re

    from app.cli import main

    path = tmp_path / "t.concord"
    assert main(["init", str(path)]) == 0
    assert main(["import", str(path), str(Path(__file__).resolve().parents[1] / "resources/demo/trace.jsonl")]) == 0
    with Project.open(path) as p:
        model = UnitListModel(p)
        while model.canFetchMore():
            model.fetchMore()
        cells = [model.data(model.index(r, c)) for r in range(model.rowCount()) for c in range(model.columnCount())]
        figures = [float(x) for cell in cells if isinstance(cell, str) for x in re.findall(r"\d+\.\d+", cell)]
    assert any(abs(f - 0.333) < 1e-9 for f in figures)  # a third, shown as 0.333
    assert all(round(f, 3) == f for f in figures)
