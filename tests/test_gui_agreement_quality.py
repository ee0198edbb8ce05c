"""Issue #29 in the app: the agreement panel's annotator-quality table and its agreement-over-time chart, with a
planted drop flagged and a planted pattern (accepts every proposal) in the table, the same figures as the service's."""
from __future__ import annotations

import random
from pathlib import Path

from app.figures import fmt_estimate as fmt
from app.services.agreement import agreement_over_time, annotator_quality
from app.store import Change
from tests.gui_data import open_window, settings  # noqa: F401 - fixtures
from tests.test_annotator_quality import C1, C2, Clock, _days, clock, make  # noqa: F401 - clock is a fixture


def test_agreement_panel_shows_quality_and_the_flagged_drop(qtbot, open_window, tmp_path: Path,  # noqa: F811
                                                            clock: Clock) -> None:  # noqa: F811
    path = tmp_path / "p.concord"
    p = make(path, n=24)
    _days(p, clock, [0.0, 0.0, 0.8])
    rng = random.Random(1)
    for i in range(12):  # ben then accepts the machine's proposal on 12 units in a row
        clock.tick(rng.uniform(3, 6))
        p.decisions.record("ben", [Change(f"s{i}", C1 if i % 2 else C2, "status", "accepted")])
    want_quality = annotator_quality(p, n_boot=50)
    want_time = agreement_over_time(p, window="day", n_boot=50)
    p.close()
    w = open_window(path, "cy")
    w.actions_by_id["agreement"].trigger()
    panel = w.panels.opened["agreement"]
    qtbot.waitUntil(lambda: panel.task is None, timeout=20000)
    panel.boot.setValue(50)
    panel.run()
    qtbot.waitUntil(lambda: panel.task is None and panel.result is not None and panel.result["n_boot"] == 50,
                    timeout=20000)
    assert "annotator_quality" not in panel.result  # the Agreement tab's figures stay `agreement`'s

    model = panel.quality.model
    assert [model.record(i)["annotator"] for i in range(model.rowCount())] == ["ana", "ben"]
    assert [{k: v for k, v in r.items() if not k.startswith("_")} for r in model.records()] == want_quality
    assert [r["_bg"] for r in model.records()] == [None, "#fff3e0"]  # the flagged annotator's row is tinted
    shown = {model.data(model.index(i, 0)): [model.data(model.index(i, c)) for c in range(model.columnCount())]
             for i in range(model.rowCount())}
    assert shown["ana"][2] == fmt(want_quality[0]["agreement"]) and shown["ana"][-1] == ""
    assert shown["ben"][-1].startswith("accepted 100% of 12")

    page = panel.over_time
    panel.tabs.setCurrentWidget(page)
    assert page.model.rowCount() == 3 and page.data == want_time
    assert page.model.data(page.model.index(2, 5)) == "kappa, alpha"
    assert page.chart.flagged_xs() == [3.0]  # the third day's point is drawn as a drop
    assert [round(y, 6) for _, y, *_ in page.chart.points()] == [
        round(x["kappa"]["estimate"], 6) for x in want_time["windows"]]
    assert "2026-03-04" in page.note.text()
    panel.grab().save(str(tmp_path / "agreement_over_time.png"))
    page.statistic.setCurrentIndex(2)  # span F1: the same in every window, no drop
    assert page.chart.flagged_xs() == [] and len(page.chart.points()) == 3
    panel.tabs.setCurrentWidget(panel.quality)
    panel.grab().save(str(tmp_path / "annotator_quality.png"))
