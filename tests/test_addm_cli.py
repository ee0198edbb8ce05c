"""addm through the CLI's generic loops: `concord calibrate --scheme addm` recovers a planted policy from human
verdicts (held-out weighted kappa >= 0.95, above addm_v2), `--apply` stores it, `concord evaluate --use` scores
under it, and `concord evaluate --scheme addm --json` returns the hook's data."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main
from app.store import Change, Project
from calibration.schemes.addm.metrics import policy_verdict
from calibration.schemes.addm.policy import VERDICTS, Policy
from tests.test_addm_search import HIDDEN, businesses


def _project(path: Path, policy: Policy, n: int = 400) -> Path:
    recs = businesses(n, seed=3)
    with Project.create(path) as p:
        p.samples.write_samples("addm", recs)
        p.decisions.record("alice", [Change(r.id, "", "verdict", VERDICTS[policy_verdict(r.incidents, policy)]) for r in recs])
    return path


@pytest.fixture
def planted(tmp_path: Path) -> Path:
    return _project(tmp_path / "planted.concord", HIDDEN)


def test_calibrate_recovers_a_planted_policy(planted: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calibrate", str(planted), "--scheme", "addm", "--folds", "5", "--bootstrap", "100", "--json",
                 "--apply", "tuned"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["scheme"] == "addm" and out["objective"] == "weighted_kappa" and out["n_configs"] >= 10_000
    assert out["heldout"]["score"] >= 0.95 > out["baselines"]["addm_v2"]
    with Project.open(planted) as p:
        tuned = Policy.from_dict(p.scheme_data.load_params("addm", "tuned"))
    recs = businesses(400, seed=3)
    agree = sum(policy_verdict(r.incidents, tuned) == policy_verdict(r.incidents, HIDDEN) for r in recs) / len(recs)
    assert agree >= 0.97
    # evaluate under the stored parameters: the report names them and its agreement table uses them
    assert main(["evaluate", str(planted), "--scheme", "addm", "--use", "tuned", "--bootstrap", "50", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)["addm"]
    (name, agree_tab), = data["agreement"].items()
    assert name == tuned.name and agree_tab["policy(human incidents)"]["weighted_kappa"] >= 0.95


def test_evaluate_json_and_accuracy_objective(planted: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluate", str(planted), "--scheme", "addm", "--bootstrap", "50", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)["addm"]
    assert data["n_businesses"] == 400 and data["n_human"] == 400
    assert set(data["policies"]) == {"addm_v2"}
    v2 = data["agreement"]["addm_v2"]["policy(human incidents)"]
    assert v2["n"] == 400 and v2["accuracy"] < 0.95
    assert main(["calibrate", str(planted), "--scheme", "addm", "--objective", "accuracy", "--folds", "5",
                 "--bootstrap", "50", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["objective"] == "accuracy" and out["heldout"]["score"] >= 0.95 > out["baselines"]["addm_v2"]


def test_process_weights_target_on_the_demo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from app.io.demo import create_demo

    create_demo(tmp_path / "demo.concord").close()
    assert main(["calibrate", str(tmp_path / "demo.concord"), "--scheme", "addm", "--target", "process_weights",
                 "--folds", "4", "--bootstrap", "50", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["objective"] == "item_spearman" and out["n_items"] == 16  # quality ratings on 8 businesses x 2 methods
    assert abs(sum(out["best"]["params"]["process_weights"].values()) - 1.0) < 1e-9
    assert main(["calibrate", str(tmp_path / "demo.concord"), "--scheme", "addm", "--target", "nope"]) == 2
    assert "target: expected one of verdict, process_weights" in capsys.readouterr().err
