"""`concord agreement`'s labels read ahead in a forked worker (app/services/agreement_reader.py, issue #28 item 5):
the same figures as the read in the process; a worker that dies is replaced by the read in the process, a failure
in it is raised in the parent, a label of no sample found by it is read again with the samples listed."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import app.services.agreement_codes as codes
import app.services.agreement_reader as reader
import app.services.ceiling_worker as ceiling_worker
from app.services.agreement import agreement
from app.store import Project
from tests.test_agreement_codes import _project
from tests.test_agreement_columns import _reference


def _figures(p: Any, monkeypatch: pytest.MonkeyPatch, *, concurrent: bool) -> dict[str, Any]:
    monkeypatch.setattr(codes, "CHUNK", 9)  # many chunks through the pipe
    monkeypatch.setattr(ceiling_worker, "usable", lambda project, schemes: True)
    return agreement(p, n_boot=60, seed=2, concurrent=concurrent)


def _in_worker(parent: int, then: Any) -> Any:
    """A `label_code_chunks` that, in the worker only, sends two chunks and then does `then`."""
    real = reader.label_code_chunks

    def chunks(*args: Any, **kw: Any) -> Any:
        if os.getpid() == parent:
            yield from real(*args, **kw)
            return
        for i, chunk in enumerate(real(*args, **kw)):
            if i == 2:
                then()
            yield chunk
    return chunks


@pytest.mark.parametrize("schemes", [("violations",), ("rubric", "trace")])
def test_the_worker_gives_the_figures_of_the_read_in_the_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 schemes: tuple[str, ...]) -> None:
    with Project.open(_project(tmp_path, schemes, 3)) as p:
        sent: list[int] = []
        real = reader._Ahead.__iter__

        def counted(self: Any) -> Any:
            for chunk in real(self):
                sent.append(len(chunk))
                yield chunk
        monkeypatch.setattr(reader._Ahead, "__iter__", counted)
        got = _figures(p, monkeypatch, concurrent=True)
        want = _figures(p, monkeypatch, concurrent=False)
    assert len(sent) > 5 and got["schemes"] and repr(got) == repr(want)


def test_a_worker_that_dies_is_replaced_by_the_read_in_the_process(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    with Project.open(_project(tmp_path, ("violations",), 4)) as p:
        want = _figures(p, monkeypatch, concurrent=False)
        monkeypatch.setattr(reader, "label_code_chunks", _in_worker(os.getpid(), lambda: os._exit(9)))
        gone = []
        real = reader._Ahead.close
        monkeypatch.setattr(reader._Ahead, "close", lambda self: (real(self), gone.append(self._proc.exitcode)))
        got = _figures(p, monkeypatch, concurrent=True)
    assert gone == [9] and repr(got) == repr(want)


def test_a_failure_in_the_worker_is_raised_in_the_parent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def fail() -> None:
        raise ValueError("labels: line 3: no such thing")

    with Project.open(_project(tmp_path, ("violations",), 5)) as p:
        monkeypatch.setattr(reader, "label_code_chunks", _in_worker(os.getpid(), fail))
        with pytest.raises(ValueError, match="line 3"):
            _figures(p, monkeypatch, concurrent=True)


def test_a_label_of_no_sample_found_by_the_worker_is_read_again(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    with Project.open(_project(tmp_path, ("violations",), 6)) as p:
        unit, kind, annotator, value = p.conn.execute(
            "SELECT unit, kind, annotator, value FROM labels WHERE kind = 'matches' LIMIT 1").fetchone()
        with p.conn:  # a file edited by hand: the label of a sample the project does not hold
            p.conn.execute("INSERT INTO labels (sample_id, unit, kind, annotator, value, event_id, ts) "
                           "VALUES (?, ?, ?, ?, ?, 0, '2026-01-01T00:00:00')", ("zz-gone", unit, kind, annotator, value))
        got = _figures(p, monkeypatch, concurrent=True)
        monkeypatch.setattr(codes, "column_tables", _reference)
        want = agreement(p, n_boot=60, seed=2)
    assert repr(got) == repr(want)
