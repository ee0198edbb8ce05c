"""Issue #27 item 3: the adjudication panel speaks the review view's language. Violations pairs read as the main
view numbers them ("GT 1 “quote” ↔ P 1 “quote”", never the stored 0-based `[[0, 0]]`), ≠ marks the values other
than the resolved one (with two annotators and no majority that is not the newest's), and a Why column says which
rule resolved each label."""
from __future__ import annotations

from app.gui.adjudication_words import differing, resolution_reason
from app.store import Change, Project
from tests.gui_data import C1, open_window, project_path, settings, shown_tooltip  # noqa: F401 - fixtures


def _texts(panel) -> dict[str, dict[str, str]]:  # type: ignore[no-untyped-def]
    """kind -> column title -> the cell's text, as the panel shows it."""
    m = panel.model
    titles = [m.headerData(c, __import__("PySide6.QtCore", fromlist=["Qt"]).Qt.Orientation.Horizontal)
              for c in range(m.columnCount())]
    return {m.record(r)["kind"]: {t: m.data(m.index(r, c)) for c, t in enumerate(titles)} for r in range(m.rowCount())}


def test_pairs_in_words_and_the_rule_that_resolved(qtbot, open_window, project_path):  # type: ignore[no-untyped-def]
    with Project.open(project_path) as p:
        p.decisions.record("ana", [Change("v1", C1, "matches", [[0, 0], [1, 1]]), Change("v1", C1, "missing_gt", [1])])
        p.decisions.record("ben", [Change("v1", C1, "matches", [[0, 0]])])
        assert p.decisions.current("v1", C1, "matches") == [[0, 0]]  # 1–1, no majority: the newest (ben) resolves
    w = open_window(project_path, "cy")
    assert w.reveal_unit("v1", C1)
    w.actions_by_id["adjudicate"].trigger()
    panel = w.panels.opened["adjudication"]
    qtbot.waitExposed(panel)
    cells = _texts(panel)
    matches = cells["matches"]
    assert matches["ana"] == ("≠ GT 1 “take 500mg twice a day” ↔ P 1 “500mg twice a day”; "
                              "GT 2 “support@example.com” ↔ P 2 “for refunds”")
    assert matches["ben"] == "GT 1 “take 500mg twice a day” ↔ P 1 “500mg twice a day”"  # resolved: no ≠
    assert matches["Resolved"] == "ben"
    assert matches["Why"] == "no majority (1–1): the newest label wins, ben's"
    assert cells["missing_gt"]["ana"] == "P 2 “for refunds”" and cells["missing_gt"]["Why"] == "only ana labeled it"
    assert not any("[[" in (text or "") for row in cells.values() for text in row.values())
    row = next(i for i in range(panel.model.rowCount()) if panel.model.record(i)["kind"] == "matches")
    tip = panel.model.data(panel.model.index(row, 2), __import__("PySide6.QtCore", fromlist=["Qt"]).Qt.ItemDataRole.ToolTipRole)
    assert shown_tooltip(tip).splitlines() == ["GT 1 “take 500mg twice a day” ↔ P 1 “500mg twice a day”",
                                "GT 2 “support@example.com” ↔ P 2 “for refunds”"]  # one pair a line
    assert "resolved one" in panel.legend.text() and "majority's" not in panel.legend.text()


def test_resolution_reasons_follow_the_store_rule() -> None:
    three = {"ana": [[0, 0]], "ben": [], "cy": [[0, 0]]}
    assert resolution_reason(three, "cy", False, "majority") == (
        "majority: 2 of 3 annotators gave this value (cy's, the newest of them)")
    assert differing(three, "cy") == ["ben"]
    assert resolution_reason(three, "cy", False, "newest") == "the project resolves by the newest label: cy's"
    assert resolution_reason(three, "ben", True, "majority").startswith("adjudicated: ben's value")
    assert differing(three, "ben") == ["ana", "cy"]
    assert resolution_reason({"ana": "x", "ben": "x"}, "ben", False, "majority") == "all 2 annotators agree"
    assert differing({"ana": "x", "ben": "x"}, "ben") == []
    assert resolution_reason({"ana": "x", "ben": None}, "ana", False, "majority").startswith("only ana gave a value")
