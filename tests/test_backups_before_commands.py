"""Issue #24, item 6: a backup before every command that rewrites much of a project (merge into an existing file,
labels import, calibrate --apply, check --repair), skipped while the file is unchanged, pruned to the newest KEEP;
a file inside a `.backups` folder is read as it is, never migrated, written or backed up."""
from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from app.cli import main
from app.store import SCHEMA_VERSION, Change, Project
from app.store.backup import KEEP, backup_dir, list_backups
from tests.test_services_evaluate_calibrate import _project
from tests.test_several_annotators import make
from tests.test_store_migration import v1_project


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _labels_file(path: Path, who: str, matches: list) -> Path:
    path.write_text(json.dumps({"sample": "s0", "checker": "c1@1|m", "annotator": who, "matches": matches}) + "\n")
    return path


def _events(path: Path) -> int:
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return int(conn.execute("SELECT count(*) FROM events").fetchone()[0])
    finally:
        conn.close()


def test_labels_import_and_merge_back_up_first_skip_when_unchanged_and_prune(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "p.concord"
    make(path).close()
    decisions = _labels_file(tmp_path / "d.jsonl", "ana", [[0, 0]])
    assert main(["labels", "import", str(path), str(decisions)]) == 0
    first = list_backups(path)
    assert len(first) == 1 and first[0].name.endswith("-before-labels-import.concord") and _events(first[0]) == 0
    assert main(["labels", "import", str(path), str(decisions)]) == 0  # the file changed since: a new backup
    assert len(list_backups(path)) == 2 and _events(list_backups(path)[-1]) == 2
    assert main(["labels", "import", str(path), str(decisions)]) == 0  # nothing changed since (the last import
    assert len(list_backups(path)) == 2                                # recorded nothing): no second copy of it
    for i in range(KEEP + 1):  # each import changes the file: a backup each time, the oldest pruned
        assert main(["labels", "import", str(path), str(_labels_file(tmp_path / f"d{i}.jsonl", f"a{i}", []))]) == 0
    kept = list_backups(path)
    assert len(kept) == KEEP and first[0] not in kept and _events(kept[-1]) == 2 + 2 * KEEP
    capsys.readouterr()

    copy = tmp_path / "ben.concord"
    with Project.open(path) as p:
        p.backup_to(copy)
    with Project.open(copy) as p:
        p.decisions.record("ben", [Change("s1", "c1@1|m", "matches", [])])
    assert main(["merge", str(path), str(copy)]) == 0
    newest = list_backups(path)[-1]
    assert newest.name.endswith("-before-merge.concord") and _events(newest) == 2 + 2 * (KEEP + 1)
    assert len(list_backups(path)) == KEEP


def test_calibrate_apply_backs_up_first(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "cal.concord"
    _project(path, n=12).close()
    assert main(["calibrate", str(path), "--components", "std", "--embedding", "jaccard", "--folds", "2",
                 "--step", "0.5", "--bootstrap", "0", "--json"]) == 0
    assert list_backups(path) == []  # no --apply: nothing rewritten, no backup
    capsys.readouterr()
    assert main(["calibrate", str(path), "--components", "std", "--embedding", "jaccard", "--folds", "2",
                 "--step", "0.5", "--bootstrap", "0", "--json", "--apply", "tuned", "--force"]) == 0
    assert json.loads(capsys.readouterr().out)["applied"] == "tuned@1.0.0"
    (backup,) = list_backups(path)
    assert backup.name.endswith("-before-calibrate-apply.concord")


def test_check_repair_backs_up_first(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "p.concord"
    with make(path) as p:
        p.decisions.record("ana", [Change("s0", "c1@1|m", "matches", [[0, 0]])])
    conn = sqlite3.connect(path)
    conn.execute("DELETE FROM labels")  # a labels table that disagrees with the events
    conn.commit()
    conn.close()
    before = sha(path)
    assert main(["check", str(path)]) == 2
    assert list_backups(path) == []  # only checked
    assert main(["check", str(path), "--repair"]) == 2
    (backup,) = list_backups(path)
    assert backup.name.endswith("-before-repair.concord") and _events(backup) == 1
    assert sha(path) == before
    capsys.readouterr()


def test_a_backup_is_read_as_it_is_never_migrated_written_or_backed_up(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "old.concord"
    v1_project(path)
    Project.open(path).close()  # migrated, after a backup of the schema-1 file
    (old,) = list_backups(path)
    was = sha(old)
    assert main(["status", str(old)]) == 2
    err = capsys.readouterr().err
    assert "backup made by an older Concord" in err and "copy it out" in err and "Traceback" not in err
    assert sha(old) == was and not backup_dir(old).exists()

    current = tmp_path / "cur.concord"
    make(current).close()
    with Project.open(current) as p:
        made = p.backup("by-hand")
    was = sha(made)
    assert main(["status", str(made), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["project_schema_version"] == SCHEMA_VERSION
    decisions = _labels_file(tmp_path / "d.jsonl", "ana", [])
    assert main(["labels", "import", str(made), str(decisions)]) == 2
    err = capsys.readouterr().err
    assert "is a backup" in err and "copy it out" in err and "Traceback" not in err
    with Project.open(made) as p:
        assert p.readonly and p.backup_if_due(every=0) is None and p.backup_before("x") is None
    assert sha(made) == was and not backup_dir(made).exists()
    assert [p.name for p in backup_dir(current).iterdir() if p.suffix == ".concord"] == [made.name]

    restored = tmp_path / "restored.concord"
    shutil.copyfile(old, restored)  # copied out: an ordinary project again, upgraded on open
    with Project.open(restored) as p:
        assert p.schema_version == SCHEMA_VERSION and not p.readonly
