"""`concord evaluate` / `concord calibrate` start without importing the heavy libraries they do not need (issue #18
item 4): openai only when an openai: embedding backend is used, scikit-learn / scipy.stats / scipy.optimize not on
evaluate's path. Checked in a fresh interpreter (sys.modules), since this process has imported everything."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

EVALUATE = ["app.cli", "app.commands.evaluate", "app.services.evaluation", "app.services.schemes", "app.store",
            "app.llm.openai_embedder", "app.services.ceiling", "calibration.schemes.violations.evaluation", "calibration.schemes.violations.metrics",
            "calibration.schemes.violations.matching", "calibration.agreement"]
CALIBRATE = ["app.cli", "app.commands.calibrate", "app.schemes.violations.services", "app.services.schemes",
             "app.llm.openai_embedder"]


def _loaded_after(modules: list[str], code: str = "") -> list[str]:
    prog = (
        "import importlib, json, sys\n"
        f"for m in {modules!r}:\n    importlib.import_module(m)\n"
        "from calibration.schemes.base import registry\nregistry()\n"
        f"{code}\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", prog], cwd=ROOT, capture_output=True, text=True, timeout=120, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_evaluate_start_up_skips_openai_sklearn_and_scipy_stats() -> None:
    loaded = set(_loaded_after(EVALUATE))
    assert "calibration.schemes.violations.evaluation" in loaded  # the modules really were imported
    for heavy in ("openai", "sklearn", "scipy.stats", "scipy.optimize", "torch", "sentence_transformers"):
        assert heavy not in loaded, heavy


def test_calibrate_start_up_skips_openai() -> None:
    loaded = set(_loaded_after(CALIBRATE))
    assert "app.schemes.violations.services" in loaded
    assert "openai" not in loaded


def test_calibration_fit_and_human_ceiling_skip_sklearn_and_scipy_stats() -> None:
    """What a first `concord calibrate` runs -- a grid fit (folds, kappa, bootstrap) and the human ceiling's pairwise
    kappa -- needs neither scikit-learn (1.2-1.7 s to import) nor scipy.stats."""
    code = ("from calibration.schemes.violations.synthetic import human_labels, synthetic_table\n"
            "from calibration.schemes.violations.calibrator import MatchCalibrator\n"
            "from calibration.schemes.violations.space import SearchSpace\n"
            "from calibration.annotators import item_agreement\n"
            "t = synthetic_table(40, seed=1)\n"
            "cal = MatchCalibrator(space=SearchSpace.preset('std'), n_boot=20).fit(t, human_labels(t), range(len(t.groups)))\n"
            "assert cal.best_config_ is not None\n"
            "rows = [(f's{i // 4}', i, r, (i * (r + 1)) % 3) for i in range(40) for r in range(3)]\n"
            "assert item_agreement(rows, n_boot=20)['pairs'][0]['kappa'] is not None\n")
    loaded = set(_loaded_after(CALIBRATE + ["calibration.search.engine", "calibration.annotators"], code))
    for heavy in ("sklearn", "scipy.stats", "openai", "torch"):
        assert heavy not in loaded, heavy
    assert "numba" not in loaded  # so little work runs the numpy passes (grid.FUSED_MIN_WORK): numba costs ~0.6 s


def test_openai_backend_still_loads_openai_when_used() -> None:
    # building the embedder (the "openai:" backend) is what imports openai; a key is needed, no request is made
    code = ("import os\nos.environ['OPENAI_API_KEY'] = 'sk-test'\n"
            "from calibration.similarity.embeddings import make_embedder\n"
            "make_embedder('openai:text-embedding-3-small')\n")
    assert "openai" in _loaded_after(["app.llm.openai_embedder"], code)



def test_a_violations_import_loads_no_pandas(tmp_path: Path) -> None:
    """Every import loads every scheme's summary code (the registry): pandas' ~0.4 s is paid only by code using it."""
    demo = ROOT / "resources" / "demo" / "violations.jsonl"
    code = (f"from app.cli import main\nassert main(['init', {str(tmp_path / 'p.concord')!r}]) == 0\n"
            f"assert main(['import', {str(tmp_path / 'p.concord')!r}, {str(demo)!r}]) == 0")
    loaded = set(_loaded_after(["app.cli"], code))
    assert "calibration.schemes.trace.metrics" in loaded  # the trace scheme's code was loaded ...
    for heavy in ("pandas", "sklearn", "scipy.stats", "openai", "torch"):  # ... without these
        assert heavy not in loaded, heavy
