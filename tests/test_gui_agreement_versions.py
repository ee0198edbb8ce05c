"""Issue #29 item 2 in the app: the agreement panel's over-time chart marks where a guideline version came into force,
and its "By guideline version" tab shows kappa per version with interval bars and the planted drop flagged, the same
figures as `concord agreement --over version`."""
from __future__ import annotations

import random
from pathlib import Path

import pytest

from app.gui.agreement_quality import version_markers
from app.services.agreement import agreement_over_time, collect_labels
from app.store import Change, Project
from app.store import guidelines as guideline_store
from tests.gui_data import open_window, settings  # noqa: F401 - fixtures
from tests.test_annotator_quality import Clock, clock  # noqa: F401 - clock is a fixture
from tests.test_several_annotators import make as make_pairs

GOOD, SWAPPED = [[0, 0], [1, 1]], [[0, 1], [1, 0]]


def _two_versions(path: Path, clock: Clock) -> None:  # noqa: F811 - the fixture passed on
    """v1 on day 0, ana and ben agree on s0-s11 on days 0 and 1; v2 on day 2, ben swaps most units on days 2 and 3."""
    rng = random.Random(4)
    p = make_pairs(path, n=24)
    clock.at(0, 8)
    p.guidelines.add_guideline_version("violations", {"preamble": "Match what means the same.\n"})
    for day in range(4):
        clock.at(day)
        if day == 2:
            p.guidelines.add_guideline_version("violations", {"preamble": "Match what states the same claim.\n"})
            clock.tick(60)
        for i in range(6 * day, 6 * day + 6):
            for c in ("c1@1|m", "c2@1|m"):
                clock.tick(20)
                p.decisions.record("ana", [Change(f"s{i}", c, "matches", GOOD)])
                clock.tick(20)
                bad = day >= 2 and rng.random() < 0.8
                p.decisions.record("ben", [Change(f"s{i}", c, "matches", SWAPPED if bad else GOOD)])
    p.close()


def test_version_markers_and_the_by_version_tab(qtbot, open_window, tmp_path: Path, clock: Clock,  # noqa: F811
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(guideline_store, "now", clock)
    path = tmp_path / "p.concord"
    _two_versions(path, clock)
    with Project.open(path) as p:
        want_time = agreement_over_time(p, window="day", n_boot=50)
        with p.guidelines.every_label():
            want_version = agreement_over_time(p, over="version", n_boot=50, scope=collect_labels(p))
    assert [w["window"] for w in want_version["windows"]] == ["violations v1", "violations v2"]
    assert [w["drops"] for w in want_version["windows"]] == [[], ["kappa", "alpha"]]  # the planted drop
    w = open_window(path, "cy")
    w.actions_by_id["agreement"].trigger()
    panel = w._agreement_panel
    qtbot.waitUntil(lambda: panel.task is None, timeout=20000)
    panel.boot.setValue(50)
    panel.run()
    qtbot.waitUntil(lambda: panel.task is None and panel.result is not None and panel.result["n_boot"] == 50,
                    timeout=20000)
    assert "over_version" not in panel.result and "guideline_history" not in panel.result

    page = panel.over_time  # 4 days; v2 came into force between day 2 (x = 2) and day 3 (x = 3)
    panel.tabs.setCurrentWidget(page)
    assert page.data == want_time and len(want_time["windows"]) == 4
    assert page.chart.drawn_markers() == [(2.5, "v2")]
    assert page.chart.flagged_xs() == [3.0]
    panel.grab().save(str(tmp_path / "agreement_over_time_versions.png"))

    by_version = panel.by_version
    panel.tabs.setCurrentWidget(by_version)
    assert by_version.data == want_version
    assert by_version.model.rowCount() == 2
    assert by_version.model.data(by_version.model.index(1, 5)) == "kappa, alpha"
    assert by_version.chart.flagged_xs() == [2.0] and by_version.chart.drawn_markers() == []
    assert [round(y, 6) for _, y, *_ in by_version.chart.points()] == [
        round(x["kappa"]["estimate"], 6) for x in want_version["windows"]]
    assert [(round(lo, 6), round(hi, 6)) for _, _, lo, hi in by_version.chart.points()] == [
        (round(x["kappa"]["low"], 6), round(x["kappa"]["high"], 6)) for x in want_version["windows"]]
    assert "violations v2" in by_version.note.text()
    panel.grab().save(str(tmp_path / "agreement_by_version.png"))
    print(tmp_path)


def test_version_markers_sit_between_the_windows_around_each_change() -> None:
    windows = [{"last": f"2026-03-0{d}T18:00:00+00:00"} for d in (2, 3, 5)]
    one = {"rubric": [{"version": 1, "created_at": "2026-03-01T09:00:00.000+00:00"},  # before every window: no line
                      {"version": 2, "created_at": "2026-03-04T09:00:00.000+00:00"},
                      {"version": 3, "created_at": "2026-03-06T09:00:00.000+00:00"}]}  # after the last window
    assert version_markers(windows, one) == [(2.5, "v2"), (3.5, "v3")]
    two = {**one, "judge": [{"version": 1, "created_at": "2026-03-01T09:00:00+00:00"},
                            {"version": 2, "created_at": "2026-03-02T20:00:00+00:00"}]}
    assert version_markers(windows, two) == [(1.5, "judge v2"), (2.5, "rubric v2"), (3.5, "rubric v3")]
    assert version_markers(windows, {}) == [] and version_markers([], one) == []
