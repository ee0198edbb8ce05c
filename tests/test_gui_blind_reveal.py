"""Issue #27 item 5: blind mode without anchoring. The machine's labels stay hidden until the annotator commits their
own decision (real key presses), then are revealed for comparison; every event records whether they were visible."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from app.store import Project
from tests.gui_data import C1, open_window, project_path, settings  # noqa: F401 - fixtures


def _assigned(path: Path, hide: bool | None = None) -> None:
    with Project.open(path) as p:
        p.assignments.assign_work(["ana", "ben"], overlap=2, schemes=["violations"])
        if hide is not None:
            p.reveals.set_hide_machine(hide)


def _key(qtbot, w, key, mod=Qt.KeyboardModifier.NoModifier) -> None:  # type: ignore[no-untyped-def]
    w.list.setFocus()
    qtbot.keyClick(w.list, key, mod)


def _events(path: Path, annotator: str) -> list[dict]:
    with Project.open(path) as p:
        return [e for e in p.decisions.events() if e["annotator"] == annotator]


def _show_unit_with_proposal(qtbot, w):  # type: ignore[no-untyped-def]
    """Select sample v1 under checker C1, whose matcher proposes at least one link; wait for the final scores."""
    w.show_unit_by_key("v1", C1)
    view = w.shown_view()
    assert view is not None and view.current() == ("v1", C1)
    qtbot.waitUntil(lambda: view.scores is not None and view.scores.final, timeout=30000)
    assert view.scores.proposed, "the fixture's unit must have a proposal for this test to mean anything"
    return view


def test_machine_links_hidden_until_the_commit_then_revealed(qtbot, open_window, project_path):  # type: ignore[no-untyped-def]
    _assigned(project_path)
    with Project.open(project_path) as p:
        assert p.assignments.blind() and p.reveals.hide_machine()  # on by default in blind mode
    w = open_window(project_path, "ana")
    w.actions_by_id["auto_advance"].setChecked(False)
    assert "machine labels after your decision" in w.windowTitle()
    view = _show_unit_with_proposal(qtbot, w)
    proposed = sorted(view.scores.proposed)
    # before: no proposed link in the human column, no candidate pairs, no machine score in the list
    assert view.links() == [] and view.pair_table.isHidden() and view.basis.isHidden()
    assert "hidden until you commit" in view.pairs_title.text()
    assert all(r["linked"] == "" for r in view.gt_model.records())
    assert "hidden until you commit" in view.status.text() and "proposed" not in view.status.text()
    shown = [c.key for i, c in enumerate(w.model.columns) if not w.list.isColumnHidden(i)]
    assert shown == ["sample_id", "scheme", "unit", "status"]  # no machine score, no scheme figures in the list
    assert len(w.model.columns) > len(shown)

    # the annotator links GT 1 to prediction 2 (not what the matcher proposed) with keys, machine still hidden
    _key(qtbot, w, Qt.Key.Key_G)
    _key(qtbot, w, Qt.Key.Key_P)
    _key(qtbot, w, Qt.Key.Key_P)
    assert view.selected_pair() == (0, 1)
    _key(qtbot, w, Qt.Key.Key_L)
    assert view.links() == [(0, 1)] and view.pair_table.isHidden()
    linked = _events(project_path, "ana")
    assert linked and all(e["machine_visible"] == 0 for e in linked)

    _key(qtbot, w, Qt.Key.Key_A)  # commit: her own links, then the machine's are shown
    qtbot.waitUntil(lambda: not view.pair_table.isHidden())
    assert not view.basis.isHidden() and "hidden" not in view.status.text()
    assert any(r["proposed"] == "●" for r in view.pair_model.records())  # the proposal is there to compare
    events = _events(project_path, "ana")
    assert all(e["machine_visible"] == 0 for e in events[len(linked):])  # (her links were already committed)
    with Project.open(project_path) as p:
        assert p.decisions.current("v1", C1, "matches", "ana") == [[0, 1]]  # hers, not the proposal
        assert p.decisions.current("v1", C1, "status", "ana") == ("accepted" if proposed == [(0, 1)] else "corrected")
        assert p.reveals.revealed("ana", "v1", C1)

    _key(qtbot, w, Qt.Key.Key_L)  # unlink after seeing the machine's: recorded as made with machine labels visible
    after = _events(project_path, "ana")[len(events):]
    assert after and all(e["machine_visible"] == 1 for e in after)

    _key(qtbot, w, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)  # undo does not hide them again
    assert not view.pair_table.isHidden()
    w.close()

    ben = open_window(project_path, "ben")  # ana's reveal is hers: ben still sees nothing of the machine's
    ben.actions_by_id["auto_advance"].setChecked(True)  # a commit stays on the unit all the same, to compare
    view = _show_unit_with_proposal(qtbot, ben)
    assert view.pair_table.isHidden() and view.links() == []
    _key(qtbot, ben, Qt.Key.Key_A)  # ben commits "no links" without ever seeing the proposal
    qtbot.waitUntil(lambda: not view.pair_table.isHidden())
    assert ben.shown_view() is view and view.current() == ("v1", C1)
    events = _events(project_path, "ben")
    assert {e["kind"] for e in events} == {"matches", "status"} and all(e["machine_visible"] == 0 for e in events)
    with Project.open(project_path) as p:
        assert p.decisions.current("v1", C1, "matches", "ben") == [] and p.decisions.current("v1", C1, "status", "ben") == "corrected"
    ben.close()


def test_the_setting_off_shows_machine_labels_at_once(qtbot, open_window, project_path):  # type: ignore[no-untyped-def]
    _assigned(project_path, hide=False)
    w = open_window(project_path, "ana")
    w.actions_by_id["auto_advance"].setChecked(False)
    assert "machine labels after" not in w.windowTitle()
    assert not any(w.list.isColumnHidden(i) for i in range(len(w.model.columns)))
    view = _show_unit_with_proposal(qtbot, w)
    assert not view.pair_table.isHidden() and sorted(view.links()) == sorted(view.scores.proposed)
    assert "proposed" in view.status.text()
    _key(qtbot, w, Qt.Key.Key_A)  # accept: the proposal, recorded as made with the machine's labels visible
    events = _events(project_path, "ana")
    assert events and all(e["machine_visible"] == 1 for e in events)
    with Project.open(project_path) as p:
        assert p.decisions.current("v1", C1, "status", "ana") == "accepted"
        assert p.decisions.current("v1", C1, "matches", "ana") == [list(x) for x in sorted(view.scores.proposed)]
    w.close()


def test_the_decide_menu_toggles_the_project_setting(qtbot, open_window, project_path):  # type: ignore[no-untyped-def]
    w = open_window(project_path, "ana")  # not blind: machine labels shown
    action = w.actions_by_id["hide_machine"]
    assert action.isCheckable() and not action.isChecked()
    view = _show_unit_with_proposal(qtbot, w)
    assert not view.pair_table.isHidden()
    action.trigger()  # Decide ▸ Hide machine labels until my decision
    assert action.isChecked() and view.pair_table.isHidden() and view.links() == []
    assert "machine labels after your decision" in w.windowTitle()
    with Project.open(project_path) as p:
        assert p.reveals.hide_machine() and not p.assignments.blind()  # stored in the project, as `concord config --hide-machine on`
    action.trigger()
    assert not action.isChecked() and not view.pair_table.isHidden()
    assert "machine labels after" not in w.windowTitle()
