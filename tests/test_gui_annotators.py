"""Issue #15 in the app: blind mode (two annotators label the same units through real key presses and never see each
other's labels), adjudication of a disagreement, ground-truth curation by text selection (undo removes it), and the
agreement panel and the calibration panel's human ceiling."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor

from app.store import Project
from tests.gui_data import C1, open_window, project_path, settings  # noqa: F401 - fixtures


def _assigned(path: Path) -> None:
    with Project.open(path) as p:
        p.assignments.assign_work(["ana", "ben"], overlap=2, schemes=["violations"])
        assert p.assignments.blind()
        p.reveals.set_hide_machine(False)  # these tests accept the machine's proposal (hiding it: test_gui_blind_reveal.py)


def _statuses(w) -> dict[tuple[str, str], str]:  # type: ignore[no-untyped-def]
    m = w.model
    while m.canFetchMore():
        m.fetchMore()
    return {(r["sample_id"], r["unit"]): r["status"] for r in (m.row(i) for i in range(m.rowCount())) if r}


def _key(qtbot, w, key) -> None:  # type: ignore[no-untyped-def]
    w.list.setFocus()
    qtbot.keyClick(w.list, key)


def test_blind_annotators_see_only_their_own_labels(qtbot, open_window, project_path):  # type: ignore[no-untyped-def]
    _assigned(project_path)
    ana = open_window(project_path, "ana")
    assert "blind" in ana.windowTitle()
    units = list(_statuses(ana))
    with Project.open(project_path) as p:
        assert units == p.assignments.assigned_units("ana")  # her queue: the assigned violations units only, no rubric unit
    first, second = units[0], units[1]
    assert ana.shown_view().current() == first
    _key(qtbot, ana, Qt.Key.Key_A)  # accept (auto-advances)
    qtbot.waitUntil(lambda: ana.shown_view() is not None and ana.shown_view().current() == second)
    _key(qtbot, ana, Qt.Key.Key_F)  # flag
    assert _statuses(ana)[first] == "accepted" and _statuses(ana)[second] == "flagged"
    ana.close()

    ben = open_window(project_path, "ben")
    st = _statuses(ben)
    assert set(st.values()) == {"unlabeled"}  # ana's decisions are not ben's
    ben.select_row(0)  # the window resumes where the file was left (by ana): start at the top
    view = ben.shown_view()
    assert view.current() == first
    assert view.human_matches() is None and "Status: unlabeled" in view.status.text()
    assert "accepted" not in view.checker_box.currentText()
    _key(qtbot, ben, Qt.Key.Key_S)  # ben skips what ana accepted
    ben.list.setFocus()
    ben.select_row(0)
    qtbot.waitUntil(lambda: ben.shown_view() is not None and ben.shown_view().current() == first)
    assert "Status: skipped" in ben.shown_view().status.text()
    assert _statuses(ben)[first] == "skipped" and _statuses(ben)[second] == "unlabeled"
    ben.close()

    with Project.open(project_path) as p:
        assert p.decisions.current(*first, "status", "ana") == "accepted" and p.decisions.current(*first, "status", "ben") == "skipped"
        assert p.decisions.current(*first, "status") == "skipped"  # resolved: the newest (ben), which ana must not see
    ana2 = open_window(project_path, "ana")
    assert _statuses(ana2)[first] == "accepted"
    ana2.select_row(0)
    assert "Status: accepted" in ana2.shown_view().status.text()


def test_not_blind_shows_the_resolved_labels(qtbot, open_window, project_path):  # type: ignore[no-untyped-def]
    with Project.open(project_path) as p:
        p.decisions.record("ana", [__import__("app.store", fromlist=["Change"]).Change("v1", C1, "status", "flagged")])
        assert not p.assignments.blind()
    w = open_window(project_path, "ben")
    assert "blind" not in w.windowTitle()
    assert _statuses(w)[("v1", C1)] == "flagged"


def _disagree(path: Path) -> tuple[str, str]:
    from app.store import Change

    with Project.open(path) as p:
        p.decisions.record("ana", [Change("v1", C1, "matches", [[0, 0]]), Change("v1", C1, "status", "accepted")])
        p.decisions.record("ben", [Change("v1", C1, "matches", []), Change("v1", C1, "status", "corrected")])
        assert p.decisions.current("v1", C1, "matches") == []  # no majority: the newest (ben) resolves
    return "v1", C1


def test_adjudication_resolves_a_disagreement(qtbot, open_window, project_path):  # type: ignore[no-untyped-def]
    key = _disagree(project_path)
    w = open_window(project_path, "cy")
    assert w.reveal_unit(*key)
    w.actions_by_id["adjudicate"].trigger()  # Tools ▸ Adjudicate unit
    panel = w.panels.opened["adjudication"]
    qtbot.waitExposed(panel)
    assert panel.annotators == ["ana", "ben"]
    by_kind = {t["kind"]: t for t in panel.targets}
    assert by_kind["matches"]["differs"] and by_kind["status"]["differs"]  # the differences are marked
    row = next(i for i in range(panel.model.rowCount()) if panel.model.record(i)["kind"] == "matches")
    assert panel.model.record(row)["_bg"] == "#ffebee"
    panel.table.setCurrentIndex(panel.model.index(row, 2))  # ana's matches
    panel.activateWindow()  # the panel is a window of its own: its keys are its own, not the review window's
    qtbot.waitUntil(panel.isActiveWindow, timeout=3000)
    panel.table.setFocus()
    qtbot.keyClick(panel.table, Qt.Key.Key_Return)  # take it
    with Project.open(project_path) as p:
        assert p.decisions.current(*key, "matches") == [[0, 0]]  # the adjudicated label resolves
        ev = [e for e in p.decisions.events("v1") if e["annotator"] == "cy"]
        assert [(e["kind"], e["origin"]) for e in ev] == [("matches", "adjudication")]
    assert "cy (adjudicated)" in {panel.model.record(i)["resolved"] for i in range(panel.model.rowCount())}
    assert panel.set_value(C1, "status", '"accepted"')  # edit: a value typed by the adjudicator
    assert not panel.set_value(C1, "status", '"maybe"')  # the label kind's validation refuses it
    with Project.open(project_path) as p:
        assert p.decisions.current(*key, "status") == "accepted"
    w.undo()  # undo like any decision: ben's status resolves again
    with Project.open(project_path) as p:
        assert p.decisions.current(*key, "status") == "corrected" and p.decisions.current(*key, "matches") == [[0, 0]]
    panel.grab().save("/tmp/concord_adjudication.png")


def test_annotators_queue_opens_the_next_disagreement(qtbot, open_window, project_path):  # type: ignore[no-untyped-def]
    key = _disagree(project_path)
    w = open_window(project_path, "cy")
    w.select_row(w.model.rowCount() - 1)
    w.queue.set_order("annotators")
    w.list.setFocus()
    qtbot.keyClick(w.list, Qt.Key.Key_N)
    panel = w.panels.opened["adjudication"]
    qtbot.waitUntil(lambda: panel.key == key, timeout=10000)
    assert w.shown_view().current() == key


def test_agreement_panel_shows_the_cli_figures(qtbot, open_window, project_path):  # type: ignore[no-untyped-def]
    from app.services.agreement import agreement

    with Project.open(project_path) as p:
        from app.store import Change

        for who, statuses in (("ana", ["accepted", "flagged", "accepted"]), ("ben", ["accepted", "flagged", "skipped"])):
            p.decisions.record(who, [Change(s, C1, "matches", [[0, 0]] if st == "accepted" else [])
                           for s, st in zip(("v1", "v2", "v3"), statuses)])
        want = agreement(p, n_boot=50)
    w = open_window(project_path, "cy")
    w.actions_by_id["agreement"].trigger()
    panel = w.panels.opened["agreement"]
    panel.boot.setValue(50)
    qtbot.waitUntil(lambda: panel.task is None, timeout=20000)
    panel.run()  # again with 50 draws, as computed above
    qtbot.waitUntil(lambda: panel.task is None and panel.result is not None and panel.result["n_boot"] == 50,
                    timeout=20000)
    assert panel.result == want
    model = panel.tables["pairs"][0]
    assert model.rowCount() == 1 and model.record(0)["a"] == "ana" and model.record(0)["b"] == "ben"
    shown = model.data(model.index(0, 3))
    assert shown.startswith(f"{want['pairs'][0]['kappa']['estimate']:.3f}")
    panel.grab().save("/tmp/concord_agreement.png")


def test_curation_adds_a_ground_truth_violation_from_a_text_selection(qtbot, open_window, project_path, monkeypatch):  # type: ignore[no-untyped-def]
    from app.schemes.violations import views_curation as violations_curation

    w = open_window(project_path, "ana")
    assert w.reveal_unit("v2", C1)
    view = w.shown_view()
    text = view.sample.text
    assert len(view.sample.ground_truth) == 2
    start = text.index("🚀")  # after two astral characters: the Qt position differs from the code point
    qt_a, qt_b = view.text.text_map.span_to_qt(start, start + 1)
    assert qt_a != start
    cur = QTextCursor(view.text.document())
    cur.setPosition(qt_a)
    cur.setPosition(qt_b, QTextCursor.MoveMode.KeepAnchor)
    view.text.setTextCursor(cur)
    asked = []
    monkeypatch.setattr(violations_curation, "ask_violation", lambda _p, rules, cats, initial=None, title="": (
        asked.append((rules, cats)) or {"rule": "no emoji", "category": "style", "explanation": "rocket", "correction": ""}))
    w.list.setFocus()
    qtbot.keyClick(w.list, Qt.Key.Key_G, Qt.KeyboardModifier.ShiftModifier)  # add the selection as ground truth
    assert "no emoji" in asked[0][0] and "style" in asked[0][1]  # the project's rules and categories are offered
    with Project.open(project_path) as p:
        mine = p.decisions.current("v2", "", "ground_truth", "ana")
        assert mine[-1] == {"start": start, "end": start + 1, "quote": "🚀", "rule": "no emoji", "category": "style",
                            "explanation": "rocket"}
        assert len(mine) == 3 and p.store("violations").violation_samples(["v2"], curated=True)[0].ground_truth[2].rule == "no emoji"
    view = w.shown_view()
    assert view.gt_model.rowCount() == 3 and view.sel_gt == 2
    assert any(s.key == ("gt", 2) and (s.start, s.end) == (start, start + 1) for s in view.text.spans)

    # boundaries by keys: GT 1 ("😀😀") loses its last character
    qtbot.keyClick(w.list, Qt.Key.Key_G)  # next ground truth: wraps to GT 1
    assert view.sel_gt == 0
    qtbot.keyClick(w.list, Qt.Key.Key_Left, Qt.KeyboardModifier.AltModifier | Qt.KeyboardModifier.ShiftModifier)
    with Project.open(project_path) as p:
        first = p.decisions.current("v2", "", "ground_truth", "ana")[0]
        assert (first["start"], first["end"], first["quote"]) == (text.index("😀"), text.index("😀") + 1, "😀")

    qtbot.keyClick(w.list, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)  # undo the move
    qtbot.keyClick(w.list, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)  # undo the addition
    with Project.open(project_path) as p:
        assert p.decisions.current("v2", "", "ground_truth", "ana") is None
        assert len(p.store("violations").violation_samples(["v2"], curated=True)[0].ground_truth) == 2
    assert w.shown_view().gt_model.rowCount() == 2
    assert not any(s.key == ("gt", 2) for s in w.shown_view().text.spans)


def test_calibration_panel_draws_the_human_ceiling(qtbot, open_window, project_path):  # type: ignore[no-untyped-def]
    from app.services.ceiling import ceiling
    from app.store import Change

    with Project.open(project_path) as p:
        for who, vals in (("ana", [[[0, 0]], [], []]), ("ben", [[[0, 0]], [], [[0, 0]]])):
            p.decisions.record(who, [Change(s, C1, "matches", v) for s, v in zip(("v1", "v2", "v3"), vals)])
        want = ceiling(p, "violations", n_boot=500)
    w = open_window(project_path, "cy")
    w.actions_by_id["calibrate"].trigger()
    chart = w.panels.opened["calibration"].ceiling
    qtbot.waitUntil(lambda: bool(chart.results), timeout=30000)
    assert chart.results["violations"]["human_human"] == want["human_human"]
    assert chart.results.get("rubric") is None  # nobody labeled rubric units twice
    w.panels.opened["calibration"].grab().save("/tmp/concord_ceiling.png")
