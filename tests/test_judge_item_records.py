"""Issue #28: the judge's store hook `item_records` (sample id -> itself) lets the human ceiling of `concord evaluate`
parse no judge record (the parent read them all before forking its ceiling worker): what the ceiling reads of a
record is only whether it exists, so its figures are those drawn with the records."""
from __future__ import annotations

from pathlib import Path

import pytest

from app.services import ceiling
from app.store import Project
from tests.test_ceiling_columns import _project


def test_item_records_name_the_records_and_the_ceiling_is_the_records_one(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from app.schemes.judge.store import item_records, load_records

    path = _project(tmp_path, "judge", 60, 3)
    with Project.open(path) as project:
        ids = item_records(project)
        records = load_records(project)
        assert list(ids) == [r.id for r in records] and all(ids[k] == k for k in ids)
        got = ceiling.ceiling_with_machine(project, "judge", n_boot=50, seed=2)
        assert got is not None and got["metric_human"]["items"] > 0
        whole = {r.id: r for r in records}
        monkeypatch.setattr(type(project.scheme_data), "scheme_item_records", lambda self, name: whole)
        want = ceiling.ceiling_with_machine(project, "judge", n_boot=50, seed=2)
    assert repr(got) == repr(want)
