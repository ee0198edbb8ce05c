"""Issue #27 item 5 in every scheme's view: with machine labels hidden (blind mode without anchoring), the human's
labels start empty and the machine's labels and scores are not shown; A commits the human's own (real key presses),
recorded as made with the machine's hidden, and reveals them."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from app.schemes.trace.views import SCORE_COLUMNS
from app.store import Project
from tests.gui_data import open_window, project_path, settings  # noqa: F401 - fixtures
from tests.test_gui_addm import AMOS, addm_path  # noqa: F401 - fixture
from tests.test_gui_rgb import rgb_path  # noqa: F401 - fixture
from tests.test_gui_scheme_seam import NAME, toy_project, toy_scheme  # noqa: F401 - fixtures
from tests.test_gui_trace import trace_path  # noqa: F401 - fixture


def _hiding(path: Path) -> None:
    with Project.open(path) as p:
        p.reveals.set_hide_machine(True)


def _open(open_window, path: Path, scheme: str, key: tuple[str, str] | None = None):  # type: ignore[no-untyped-def]
    _hiding(path)
    w = open_window(path)
    w.actions_by_id["auto_advance"].setChecked(True)  # a commit stays on the unit anyway
    w.filters.scheme.setCurrentIndex(w.filters.scheme.findData(scheme))
    if key is not None:
        w.show_unit_by_key(*key)
    view = w.current_view
    assert view.scheme in (scheme, "") and view.row["scheme"] == scheme and view.machine_hidden()  # "": the generic view
    return w, view


def _commit(qtbot, w, view, writes: bool = True) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    """Press A; the unit stays shown, the machine's labels are revealed; every event of it was made with them hidden
    (`writes`: False when the human's labels were already stored as they are: the commit then only reveals)."""
    unit = view.current()
    n = len(w.project.decisions.events())
    w.list.setFocus()
    qtbot.keyClick(w.list, Qt.Key.Key_A)
    assert view.current() == unit and not view.machine_hidden() and w.project.reveals.revealed("tester", *unit)
    made = w.project.decisions.events()[n:]
    assert bool(made) == writes and all(e["machine_visible"] == 0 for e in made)
    return unit


def test_rubric_buckets_start_empty_and_the_llm_metrics_wait(qtbot, open_window, project_path):  # type: ignore[no-untyped-def]
    w, view = _open(open_window, project_path, "rubric")
    assert any(view.llm.values())  # the LLM has buckets for this unit: they are what is hidden
    assert all(m.rowCount() == 0 for m in view.bucket_models.values())
    assert view.metric_table.isColumnHidden(1) and view.metric_table.isColumnHidden(3)
    assert all(r["llm"] is None and r.get("_bg") is None for r in view.metric_model.records())  # no hint either
    assert "LLM" not in view.status.text() and "hidden" in view.status.text()
    sid, trait = _commit(qtbot, w, view)
    assert not view.metric_table.isColumnHidden(1)
    assert w.project.decisions.current(sid, trait, "buckets", "tester") == {"tp": [], "fn": [], "fp": [], "tn": []}
    assert w.project.decisions.current(sid, trait, "status", "tester") == "corrected"  # not the LLM's buckets


def test_trace_labels_start_empty_and_the_annotators_scores_wait(qtbot, open_window, trace_path):  # type: ignore[no-untyped-def]
    w, view = _open(open_window, trace_path, "trace")
    assert view.annotator_labels()["relevant"]  # the dataset's (machine) labels exist and are hidden
    assert view.work["relevant"] == [] and view.work["unsupported"] == []
    ann = [i for i, c in enumerate(SCORE_COLUMNS) if c.key.startswith("ann_")]
    assert ann and all(view.score_table.isColumnHidden(i) for i in ann) and view.judge_info.isHidden()
    assert all(r.get("_bg") is None for r in view.score_model.records())  # no tint where they differ either
    w.list.setFocus()
    qtbot.keyClick(w.list, Qt.Key.Key_D)  # the first document sentence
    qtbot.keyClick(w.list, Qt.Key.Key_R)  # relevant: one event, made with the machine's labels hidden
    assert w.project.decisions.current("t1", "", "relevant", "tester") == ["0a"]
    assert {e["machine_visible"] for e in w.project.decisions.events()} == {0}
    _commit(qtbot, w, view, writes=False)
    assert not any(view.score_table.isColumnHidden(i) for i in ann)
    assert w.project.decisions.current("t1", "", "relevant", "tester") == ["0a"]


def test_rgb_checkers_rows_wait_and_flips_start_from_no(qtbot, open_window, rgb_path):  # type: ignore[no-untyped-def]
    w, view = _open(open_window, rgb_path, "rgb", ("c1", "m1"))
    assert [r["source"] for r in view.decision_model.records()] == ["human"]
    w.list.setFocus()
    qtbot.keyClick(w.list, Qt.Key.Key_5)  # correct: from "no" (not from the hidden checker's call) to yes
    assert w.project.decisions.current("c1", "m1", "correct", "tester") is True
    _commit(qtbot, w, view)  # writes the other decisions as "no" and the status
    sources = [r["source"].removesuffix(" ✓") for r in view.decision_model.records()]
    assert "rgb_original" in sources and sources[-1] == "human"


def test_addm_method_verdict_and_scores_wait(qtbot, open_window, addm_path):  # type: ignore[no-untyped-def]
    w, view = _open(open_window, addm_path, "addm", ("tr-005", AMOS))
    assert "hidden until you commit" in view.verdicts.text() and view.score_table.isHidden()
    _commit(qtbot, w, view)
    assert "hidden" not in view.verdicts.text() and not view.score_table.isHidden()
    assert w.project.decisions.current("tr-005", AMOS, "status", "tester") in ("accepted", "corrected")


def test_generic_view_first_reveals_then_accepts(qtbot, open_window, toy_project):  # type: ignore[no-untyped-def]
    w, view = _open(open_window, toy_project, NAME)
    assert view.current()[0] == "t1" and "yes" not in view.machine_box.toPlainText()
    assert "hidden until you commit" in view.machine_box.toPlainText()
    _commit(qtbot, w, view, writes=False)  # nothing of the human's own to commit here: A only reveals
    assert '"yes"' in view.machine_box.toPlainText()
    qtbot.keyClick(w.list, Qt.Key.Key_A)  # now accept what is shown: recorded as made with it visible
    made = w.project.decisions.events()
    assert made and all(e["machine_visible"] == 1 for e in made)
