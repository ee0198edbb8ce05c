"""The human ceiling drawn a window of samples at a time (issue #28 item 5: its memory bounded at 1M samples) gives
every figure and interval end of the ceiling drawn from whole-project arrays (the previous path, kept below as the
reference: one item table for every shared unit, `item_agreement`'s whole-table counts), on projects of every scheme
generated from the demo data, with windows of a few units so that every project is cut many times."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import calibration.item_chunks as chunks
from app.services import ceiling as C
from app.services import ceiling_worker
from app.store import Project
from calibration.annotators import item_agreement
from calibration.schemes.base import registry
from tests.test_ceiling_columns import SCHEMES, _project


def _figures(project: Any, scheme: str, machine: Any, per_unit: Any, *, ahead: bool, taken: bool = True) -> Any:
    """The ceiling as `concord evaluate` draws it: sequentially, or the worker's way: the humans' figures drawn
    ahead, then the metric's decisions taken a few at a time as codes (`keep_decisions`)."""
    ready = C.human_side(project, scheme, n_boot=150 if ahead else None, seed=3)
    if ahead and taken and machine:
        items = list(machine.items())
        for i in range(0, len(items), 7):
            C.keep_decisions(ready, dict(items[i:i + 7]))
        machine = None
    return C.metric_side(project, ready, n_boot=150, seed=3, machine=machine, per_unit=per_unit)


def _whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """The previous path: one window for every unit, `item_agreement` of each whole table (a draw of its own)."""
    monkeypatch.setattr(C, "WINDOW_UNITS", 1 << 40)
    monkeypatch.setattr(C, "_figures", lambda tables, n_boot, seed: [item_agreement(t, n_boot=n_boot, seed=seed)
                                                                     for t in tables])


@pytest.mark.parametrize("scheme", SCHEMES)
def test_the_windowed_ceiling_equals_the_whole_table_ceiling(tmp_path: Path, scheme: str,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    path = _project(tmp_path, scheme, 40, seed=10 + SCHEMES.index(scheme))
    with Project.open(path) as p:
        machine, data = C._run_evaluate(p, scheme)
        per_unit = C.own_ceiling(registry().get(scheme), data)
        cases = [(machine or None, per_unit, ahead) for ahead in (False, True)] + [(None, None, False)]
        with monkeypatch.context() as m:
            _whole(m)
            want = [_figures(p, scheme, *case[:2], ahead=case[2], taken=False) for case in cases]
        windows: list[int] = []
        real = C._window_items
        monkeypatch.setattr(C, "_window_items", lambda *a: windows.append(1) or real(*a))
        monkeypatch.setattr(C, "WINDOW_UNITS", 3)  # a window: the units of a sample or two
        monkeypatch.setattr(chunks, "WINDOW_LABELS", 17)
        got = [_figures(p, scheme, *case[:2], ahead=case[2]) for case in cases]
    assert len(windows) > 5 * len(cases)  # every case cut in several windows
    assert want[0] is not None and want[0]["units"] > 10
    assert repr(got) == repr(want)


def test_the_worker_takes_the_decisions_in_batches_and_draws_the_same_ceiling(tmp_path: Path,
                                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The forked worker (forced, as tests/test_ceiling_worker.py does) given the metric's decisions a few at a time
    and windows of a few units: the figures of the ceiling drawn in the process itself."""
    from tests.test_ceiling_worker import _evaluate

    path = _project(tmp_path, "violations", 40, seed=21)
    want = _evaluate(path, "violations", concurrent=False)
    sent: list[int] = []
    send = ceiling_worker.Worker.ceilings

    def counted(self: Any, schemes: Any, machine: Any, per_unit: Any) -> Any:
        sent.append(len(machine or {}))
        return send(self, schemes, machine, per_unit)

    monkeypatch.setattr(ceiling_worker, "usable", lambda project, schemes: True)
    monkeypatch.setattr(ceiling_worker.Worker, "ceilings", counted)
    monkeypatch.setattr(ceiling_worker, "BATCH", 5)
    monkeypatch.setattr(C, "WINDOW_UNITS", 4)
    got = _evaluate(path, "violations", concurrent=True)
    assert sent and sent[0] > 10 * 5  # many batches
    assert want[1].get("violations") and got == want
