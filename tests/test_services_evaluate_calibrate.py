"""`concord evaluate` and `concord calibrate` end to end on small generated projects (Jaccard similarity, fast)."""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from app.cli import main
from app.store import Change, Project, UnitFilter
from calibration.schemes.violations import Violation, ViolationSample

RULES = ["Do not target minors", "Always add the registered mark", "No health claims", "Include a drinking message"]
CHECKER = "tight@1.0.0|m"
LOOSE = "loose@1.0.0|m"


def _project(path: Path, n: int = 40, seed: int = 1) -> Project:
    """Humans call a pair a match iff it has the same rule and IoU > 0.5; the 'loose' checker shifts spans a lot."""
    rng = random.Random(seed)
    project = Project.create(path)
    samples = []
    for i in range(n):
        text = " ".join(f"w{i}x{j}" for j in range(60))
        gts = []
        for k in range(3):
            s = 40 * k + rng.randint(0, 5)
            gts.append(Violation(RULES[(i + k) % 4], s, s + 20))
        tight = tuple(Violation(g.rule, g.start + rng.randint(0, 3), g.end) for g in gts[:2])
        loose = tuple(Violation(g.rule if rng.random() < 0.6 else RULES[(i + 2) % 4], g.start + rng.randint(8, 15), g.end + 10)
                      for g in gts)
        samples.append(ViolationSample(f"s{i:03d}", text, tuple(gts), {CHECKER: tight, LOOSE: loose}))
    project.store("violations").write_violation_samples(samples)
    for s in samples:
        for checker, preds in s.predictions.items():
            pairs = []
            for gi, g in enumerate(s.ground_truth):
                for pi, p in enumerate(preds):
                    inter = max(0, min(g.end, p.end) - max(g.start, p.start))
                    union = (g.end - g.start) + (p.end - p.start) - inter
                    if g.rule == p.rule and inter / union > 0.5:
                        pairs.append([gi, pi])
            project.decisions.record("alice", [Change(s.id, checker, "matches", pairs), Change(s.id, checker, "status", "accepted")])
    return project


@pytest.fixture
def project_path(tmp_path: Path) -> Path:
    path = tmp_path / "p.concord"
    _project(path).close()
    return path


def test_evaluate_json_counts_match_by_hand(project_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluate", str(project_path), "--preset", "std_match", "--embedding", "jaccard", "--json",
                 "--bootstrap", "50"]) == 0
    out = json.loads(capsys.readouterr().out)
    tight = out["violations"]["checkers"][CHECKER]
    # every tight prediction has the GT's rule and overlaps it by >= 85%: all 80 match, the third GTs are missed
    assert (tight["tp"], tight["fp"], tight["fn"]) == (80, 0, 40)
    assert tight["f1"] == pytest.approx(160 / 200)
    assert out["violations"]["human"][CHECKER]["tp"] == 80
    lo, hi = tight["f1_ci"]
    assert lo <= tight["f1"] <= hi
    # the review list now shows machine F1 per unit under this config
    with Project.open(project_path) as p:
        rows = p.units.unit_page(UnitFilter(config_ref="std_match@1.0.0"), limit=5)
        assert all(r["machine_f1"] is None for r in p.units.unit_page(limit=5))  # no config named: no figures
        assert all(r["machine_f1"] is not None for r in rows)


def test_evaluate_rejects_bad_config_file(project_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\n[weights]\noverlap = -1\n')
    assert main(["evaluate", str(project_path), "--config", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.toml" in err and "weights.overlap" in err


def test_calibrate_beats_defaults_and_applies(project_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["calibrate", str(project_path), "--components", "std", "--embedding", "jaccard", "--folds", "4",
            "--bootstrap", "100", "--json", "--apply", "calibrated"]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["heldout"]["score"] > out["baselines"]["std_match"]
    assert out["heldout"]["score"] > 0.9
    lo, hi = out["heldout"]["ci"]
    assert lo <= out["heldout"]["score"] <= hi
    assert set(out["best"]["params"]["weights"]) >= {"overlap", "rule"}
    assert out["applied"] == "calibrated@1.0.0"
    assert out["gain"]["promoted"] and out["gain"]["ci"][0] > 0 and out["forced"] is False  # applied without --force
    with Project.open(project_path) as p:
        runs = p.artifacts.calibration_runs()
        assert len(runs) == 1 and runs[0]["objective"] == "kappa"
        assert p.artifacts.calibration_cv_results(runs[0]["id"]) is not None
        cfg = p.store("violations").match_config("calibrated")
        assert cfg.thresholds.match == out["best"]["params"]["thresholds"]["match"]
    # a second --apply makes a new version rather than overwriting
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["applied"] == "calibrated@1.1.0"
    assert main(["evaluate", str(project_path), "--use", "calibrated@1.0.0", "--json", "--bootstrap", "20"]) == 0
    assert json.loads(capsys.readouterr().out)["violations"]["checkers"][LOOSE]["tp"] >= 0


def test_calibrate_without_labels_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "empty.concord"
    p = Project.create(path)
    p.store("violations").write_violation_samples([ViolationSample("a", "some text here", (Violation("r", 0, 4),), {CHECKER: (Violation("r", 0, 4),)})])
    p.close()
    assert main(["calibrate", str(path), "--embedding", "jaccard"]) == 2
    assert "no human decisions" in capsys.readouterr().err


def test_checker_that_found_nothing_still_owes_false_negatives(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "silent.concord"
    p = Project.create(path)
    gt = (Violation("No health claims", 0, 4), Violation("Do not target minors", 5, 9))
    p.store("violations").write_violation_samples([
        ViolationSample("a", "aaaa bbbb cccc", gt, {CHECKER: (Violation("No health claims", 0, 4),), LOOSE: ()}),
        ViolationSample("b", "dddd eeee ffff", gt, {CHECKER: (), LOOSE: ()}),
    ])
    loaded = {s.id: s for s in p.store("violations").violation_samples()}
    assert loaded["b"].predictions == {CHECKER: (), LOOSE: ()}
    assert p.store("violations").checkers() == sorted([CHECKER, LOOSE])
    p.close()
    assert main(["evaluate", str(path), "--preset", "std_match", "--embedding", "jaccard", "--json", "--bootstrap", "10"]) == 0
    out = json.loads(capsys.readouterr().out)["violations"]["checkers"]
    assert (out[CHECKER]["tp"], out[CHECKER]["fp"], out[CHECKER]["fn"]) == (1, 0, 3)
    assert (out[LOOSE]["tp"], out[LOOSE]["fn"]) == (0, 4)


def test_machine_scores_are_stored_as_the_json_encoder_writes_them(tmp_path: Path) -> None:
    """evaluate stores per-unit (tp, fp, fn, f1) rows in bulk, the figures text by a format string: the same text
    as json (sorted keys, compact) for every kind of value, non-finite and numpy ones included."""
    import numpy as np

    from app.store.project import dumps

    with _project(tmp_path / "p.concord", n=6) as p:
        values = [(1, 2, 0, 2 / 3), (0, 0, 0, 1.0), (3, 1, 1, 0.1 + 0.2), (1, 0, 0, float("nan")),
                  (2, 1, 1, np.float64(0.5)), (2, 0, 1, 1e-17)]
        rows = [(f"s{i:03d}", CHECKER, *v) for i, v in enumerate(values)]
        p.units.set_machine_scores("cfg@1", rows + [("s000", "no such unit", 1, 1, 1, 0.5)])
        stored = {sid: text for sid, text in p.conn.execute(
            "SELECT u.sample_id, ms.figures FROM machine_scores ms JOIN units u ON u.id = ms.unit_id "
            "WHERE ms.config_ref = 'cfg@1'")}
        assert stored == {sid: dumps({"tp": tp, "fp": fp, "fn": fn, "f1": f1}) for sid, _, tp, fp, fn, f1 in rows}
        assert p.units.machine_scores("cfg@1")[("s002", CHECKER)]["f1"] == 0.1 + 0.2
        p.units.set_machine_scores("cfg@1", rows[:2])  # replaces the config's rows
        assert len(p.units.machine_scores("cfg@1")) == 2


def test_machine_scores_written_again_touch_only_what_changed(tmp_path: Path) -> None:
    """Evaluating again writes only changed figures: unchanged rows keep their row (same rowid, nothing rewritten),
    a changed one is updated in place, a unit no longer scored loses its row, other configs are left alone."""
    with _project(tmp_path / "p.concord", n=6) as p:
        rows = [(f"s{i:03d}", CHECKER, 1, 1, 1, 0.5) for i in range(6)]
        p.units.set_machine_scores("cfg@1", rows)
        p.units.set_machine_scores("other@1", rows)

        def stored(ref: str) -> dict[str, tuple[int, str]]:
            return {sid: (rowid, fig) for sid, rowid, fig in p.conn.execute(
                "SELECT u.sample_id, ms.rowid, ms.figures FROM machine_scores ms JOIN units u ON u.id = ms.unit_id "
                "WHERE ms.config_ref = ?", (ref,))}

        before, other = stored("cfg@1"), stored("other@1")
        changed = rows[:4] + [("s004", CHECKER, 2, 0, 0, 1.0)]  # s004 changes, s005 is gone
        p.units.set_machine_scores("cfg@1", changed)
        after = stored("cfg@1")
        assert set(after) == {f"s{i:03d}" for i in range(5)}
        assert all(after[s] == before[s] for s in ("s000", "s001", "s002", "s003"))
        assert after["s004"] == (before["s004"][0], '{"f1":1.0,"fn":0,"fp":0,"tp":2}')
        assert p.units.machine_scores("cfg@1")[("s004", CHECKER)]["f1"] == 1.0
        assert stored("other@1") == other


def test_machine_scores_written_again_unchanged_skip_the_write_but_not_after_a_unit_is_lost(tmp_path: Path) -> None:
    """The same rows again write nothing (total_changes stays); once a scored unit's row is gone (the unit deleted
    and made again, with a new id), the same rows are written again and the row is back."""
    with _project(tmp_path / "p.concord", n=6) as p:
        rows = [(f"s{i:03d}", CHECKER, 1, 1, 1, 0.5) for i in range(6)]
        p.units.set_machine_scores("cfg@1", rows)
        changes = p.conn.total_changes
        p.units.set_machine_scores("cfg@1", rows)
        assert p.conn.total_changes == changes
        p.conn.execute("DELETE FROM units WHERE sample_id = 's002' AND unit = ?", (CHECKER,))  # the cascade
        assert len(p.units.machine_scores("cfg@1")) == 5
        p.units.set_machine_scores("cfg@1", rows)  # the unit is gone: its row cannot come back, the rest is kept
        assert len(p.units.machine_scores("cfg@1")) == 5
        p.conn.execute("INSERT INTO units (sample_id, scheme, unit) VALUES ('s002', 'violations', ?)", (CHECKER,))
        p.units.set_machine_scores("cfg@1", rows)
        assert set(p.units.machine_scores("cfg@1")) == {(f"s{i:03d}", CHECKER) for i in range(6)}
