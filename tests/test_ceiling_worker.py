"""`concord evaluate`'s human ceiling drawn in a forked worker (app/services/ceiling_worker.py, issue #28): the same
figures as drawn after the hooks in the process itself, for a scheme whose metric side comes from the hook's
decisions (violations), from stored machine labels (rubric) and from its own report (judge); a failure in the
worker is the error the ceiling raises without it, and leaves the project as that does; a worker that dies is
replaced by the ceiling in the parent; no worker process outlives the call. The projects are small: the worker is
forced (`usable`), as it would start on its own from MIN_SAMPLES samples."""
from __future__ import annotations

import multiprocessing
import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from app.services import ceiling, ceiling_worker
from app.store import Project
from calibration.schemes.base import registry
from tests.test_ceiling_columns import _project


def _evaluate(path: Path, scheme: str, concurrent: bool, wrote: bool = False) -> tuple[list[Any], dict[str, Any]]:
    """(each report's data, the ceilings); `wrote`: the connection wrote before (a new annotator without labels)."""
    with Project.open(path) as project:
        if wrote:
            project.decisions.ensure_annotator("zed")
        results, ceilings = ceiling.evaluate_with_ceilings(project, [registry().get(scheme)], {"n_boot": 200, "seed": 3},
                                                           concurrent=concurrent)
    return [r.report.data for r in results if r.report is not None], ceilings


@pytest.fixture
def forced(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The worker used whatever the project's size; the ids of the workers started."""
    started: list[int] = []
    init = ceiling_worker.Worker.__init__

    def counted(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        started.append(self._proc.pid)

    monkeypatch.setattr(ceiling_worker, "usable", lambda project, schemes: True)
    monkeypatch.setattr(ceiling_worker.Worker, "__init__", counted)
    return started


@pytest.mark.parametrize("scheme", ["violations", "rubric", "judge"])
def test_the_worker_draws_the_same_ceiling_as_the_process_itself(tmp_path: Path, forced: list[int], scheme: str,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """... and reads neither the records nor the resolved labels again: the parent read them before the fork."""
    from app.store.samples import SchemeDataPart

    path = _project(tmp_path, scheme, 40, seed=5)
    want = _evaluate(path, scheme, concurrent=False)
    assert not forced
    parent = os.getpid()
    for name in ("_scheme_records", "_scheme_labels"):
        read = getattr(SchemeDataPart, name)

        def not_in_the_worker(self: Any, *args: Any, _read: Any = read, _name: str = name) -> Any:
            assert os.getpid() == parent, f"the worker read again: {_name}"
            return _read(self, *args)

        monkeypatch.setattr(SchemeDataPart, name, not_in_the_worker)
    got = _evaluate(path, scheme, concurrent=True, wrote=True)  # what the parent's connection read is kept all the same
    assert len(forced) == 1 and not multiprocessing.active_children()
    assert want[1].get(scheme) and got == want  # every figure and interval end, the reports too


def _dump(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


def test_a_failure_in_the_worker_is_the_sequential_error_and_leaves_the_same_project(
        tmp_path: Path, forced: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    path = _project(tmp_path, "violations", 30, seed=2)
    other = tmp_path / "copy.concord"
    shutil.copyfile(path, other)  # no connection is open on it
    before = _dump(path)

    def broken(*args: Any, **kwargs: Any) -> None:
        raise ValueError("metric side: broken on purpose")

    monkeypatch.setattr(ceiling, "metric_side", broken)  # the worker, forked after this, has it too
    with pytest.raises(ValueError, match="broken on purpose"):
        _evaluate(path, "violations", concurrent=False)
    with pytest.raises(ValueError, match="broken on purpose"):
        _evaluate(other, "violations", concurrent=True)
    assert len(forced) == 1 and not multiprocessing.active_children()
    after, after_worker = _dump(path), _dump(other)
    assert after_worker == after  # what evaluate wrote before the ceiling (machine scores), nothing else
    labels = [x for x in before if x.startswith(('INSERT INTO "labels"', 'INSERT INTO "events"'))]
    assert labels and labels == [x for x in after_worker if x.startswith(('INSERT INTO "labels"', 'INSERT INTO "events"'))]


def test_the_cli_exit_status_and_message_of_a_worker_failure_are_the_sequential_ones(
        tmp_path: Path, forced: list[int], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    from app.errors import UsageError

    path = _project(tmp_path, "rubric", 30, seed=4)
    capsys.readouterr()  # the project's making

    def refused(*args: Any, **kwargs: Any) -> None:
        raise UsageError("rubric: a ceiling refused on purpose")

    monkeypatch.setattr(ceiling, "metric_side", refused)
    monkeypatch.setattr(ceiling_worker, "usable", lambda project, schemes: False)
    assert main(["evaluate", str(path), "--scheme", "rubric", "--json"]) == 2
    sequential = capsys.readouterr()
    monkeypatch.setattr(ceiling_worker, "usable", lambda project, schemes: True)
    assert main(["evaluate", str(path), "--scheme", "rubric", "--json"]) == 2
    concurrent = capsys.readouterr()
    assert len(forced) == 1 and not multiprocessing.active_children()
    assert "refused on purpose" in concurrent.err and (concurrent.out, concurrent.err) == (sequential.out, sequential.err)


def test_a_worker_that_dies_is_replaced_by_the_ceiling_in_the_process(tmp_path: Path, forced: list[int],
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    path = _project(tmp_path, "violations", 30, seed=7)
    want = _evaluate(path, "violations", concurrent=False)
    parent, human_side = os.getpid(), ceiling.human_side

    def dies_in_the_worker(*args: Any, **kwargs: Any) -> Any:
        if os.getpid() != parent:
            os._exit(9)  # as if killed: no answer
        return human_side(*args, **kwargs)

    monkeypatch.setattr(ceiling, "human_side", dies_in_the_worker)
    assert _evaluate(path, "violations", concurrent=True) == want
    assert len(forced) == 1 and not multiprocessing.active_children()


def test_the_worker_is_only_for_large_projects_on_two_cores_with_one_to_spare(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    path = _project(tmp_path, "rubric", 20, seed=1)
    with Project.open(path) as project:
        monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
        monkeypatch.setattr(os, "getloadavg", lambda: (1.2, 1.0, 1.0))
        assert not ceiling_worker.usable(project, ["rubric"])  # 20 samples
        monkeypatch.setattr(ceiling_worker, "MIN_SAMPLES", 20)
        assert ceiling_worker.usable(project, ["rubric"])
        assert not ceiling_worker.usable(project, ["violations"])  # none of its samples here
        monkeypatch.setattr(os, "getloadavg", lambda: (2.5, 1.0, 1.0))
        assert not ceiling_worker.usable(project, ["rubric"])  # both cores busy already
        monkeypatch.setattr(os, "getloadavg", lambda: (0.1, 1.0, 1.0))
        monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
        assert not ceiling_worker.usable(project, ["rubric"])  # one core


@pytest.mark.parametrize("scheme", ["judge", "trace"])
def test_every_annotators_labels_from_one_read_equal_one_read_per_annotator(tmp_path: Path, scheme: str) -> None:
    """`annotator_labels` (what evaluate hands the judge and trace hooks) from `labels_by_annotator`: the dicts one
    query per annotator gives, in the same order (keys, kinds, values), a label of another guideline left out."""
    from app.services.schemes import annotator_labels

    path = _project(tmp_path, scheme, 30, seed=6)
    with Project.open(path) as project:
        want = {a: project.scheme_data.scheme_labels(scheme, annotator=a) for a in project.decisions.annotators()}
        want = {a: v for a, v in want.items() if v}
        got = annotator_labels(project, scheme)
        assert len(got) >= 2 and got == want
        assert [(a, list(v), [list(k) for k in v.values()]) for a, v in got.items()] == \
            [(a, list(v), [list(k) for k in v.values()]) for a, v in want.items()]
        a = next(iter(want))
        sid, unit = next(iter(want[a]))
        with project.guidelines.excluding_labels([(sid, unit, a)]):
            fewer = annotator_labels(project, scheme)
            assert fewer == {b: project.scheme_data.scheme_labels(scheme, annotator=b) for b in want} != got
