"""Issue #29 item 4: the sample-size planner. Its arithmetic on hand-worked cases (calibration/planner.py), then
`concord plan` end to end on a project the test makes."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from app.cli import main
from app.store import Change, Project
from calibration.planner import (fit_exponent, scaled_halfwidth, subsample_halfwidths, units_for_gain,
                                 units_for_halfwidth)
from calibration.schemes.violations import Violation, ViolationSample

TEXT = "The cat sat on the mat. It was red and tall."


# -- the arithmetic ------------------------------------------------------------------------------------------------
def test_halfwidth_scaling_by_hand() -> None:
    assert scaled_halfwidth(0.1, 100, 400) == pytest.approx(0.05)  # 0.1 * sqrt(100 / 400)
    assert units_for_halfwidth(0.1, 100, 0.05) == 400  # 100 * (0.1 / 0.05)^2
    assert units_for_halfwidth(0.08, 50, 0.05) == 128  # 50 * 1.6^2 = 128 exactly
    assert units_for_halfwidth(0.081, 50, 0.05) == 132  # 50 * 1.62^2 = 131.22 -> 132
    assert units_for_halfwidth(0.04, 50, 0.05) == 50  # reached already
    assert units_for_halfwidth(0.1, 100, 0.05, exponent=0.25) == 1600  # a slower shrinking needs more
    assert units_for_halfwidth(math.nan, 100, 0.05) is None
    with pytest.raises(ValueError, match="target"):
        units_for_halfwidth(0.1, 100, 0)


def test_gain_units_by_hand() -> None:
    # gain 0.04, lower bound -0.02 over 100 units: the distance 0.06 must shrink below 0.04, a factor 2/3:
    # sqrt(100 / m) < 2/3 <=> m > 225; at 225 the bound is exactly 0, not above it
    assert units_for_gain(0.04, -0.02, 100) == 226
    assert 0.04 - 0.06 * math.sqrt(100 / 226) > 0 >= 0.04 - 0.06 * math.sqrt(100 / 225) - 1e-12
    assert units_for_gain(0.04, 0.01, 100) == 100  # excludes 0 already
    assert units_for_gain(-0.01, -0.05, 100) is None  # no gain to show
    assert units_for_gain(0.0, -0.05, 100) is None
    assert units_for_gain(math.nan, -0.05, 100) is None


def test_fitted_exponent_and_the_subsampling_check() -> None:
    sizes = [10, 20, 40, 80]
    assert fit_exponent(sizes, [1 / math.sqrt(n) for n in sizes]) == pytest.approx(0.5)
    assert fit_exponent(sizes, [n ** -0.3 for n in sizes]) == pytest.approx(0.3)
    assert math.isnan(fit_exponent([10, 10], [0.1, 0.2]))
    seen: list[int] = []

    def halfwidth(index: np.ndarray) -> float:
        assert len(set(index.tolist())) == len(index)  # drawn without replacement
        seen.append(len(index))
        return 1 / math.sqrt(len(index))

    points = subsample_halfwidths(100, halfwidth, repeats=3, seed=1)
    assert [m for m, _ in points] == [25, 50, 100] and seen == [25, 25, 25, 50, 50, 50, 100]
    assert fit_exponent(*zip(*points)) == pytest.approx(0.5)
    assert [m for m, _ in subsample_halfwidths(30, halfwidth)] == [15, 30]  # 7.5 -> 8 units: below the minimum


# -- the command -------------------------------------------------------------------------------------------------------
def _project(path: Path, n: int = 60) -> None:
    """n samples of one ground-truth violation and two predictions (two items per sample); ana and ben decide both
    pairs, disagreeing on one item in five samples of six."""
    gt = (Violation("r", 4, 7),)
    preds = (Violation("r", 4, 7), Violation("q", 24, 26))
    with Project.create(path) as p:
        p.store("violations").write_violation_samples([ViolationSample(f"s{i:03}", TEXT, gt, {"c1@1|m": preds}) for i in range(n)])
        for i in range(n):
            p.decisions.record("ana", [Change(f"s{i:03}", "c1@1|m", "matches", [[0, 0]] if i % 2 else [])])
            p.decisions.record("ben", [Change(f"s{i:03}", "c1@1|m", "matches", [[0, 0]] if i % 2 or i % 6 == 0 else [[0, 1]])])
        p.artifacts.save_calibration_run("kappa", {"scheme": "violations"}, {
            "scheme": "violations", "objective": "kappa", "n_units": 100,
            "gain": {"estimate": 0.04, "ci": [-0.02, 0.1], "baseline": "std_match"}})


def _json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict:
    capsys.readouterr()
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_plan_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "p.concord"
    _project(path)
    before = path.stat().st_mtime_ns  # stat, not a read: the rule for project files (DESIGN.md)
    out = _json(["plan", str(path), "--target-halfwidth", "0.05", "--bootstrap", "300", "--seed", "4", "--json"], capsys)
    agree = _json(["agreement", str(path), "--bootstrap", "300", "--seed", "4", "--json"], capsys)
    a = out["agreement"]
    kappa = agree["overall"]["kappa"]
    # the present interval is `concord agreement`'s (same items, replicates and seed)
    assert (a["estimate"], a["low"], a["high"]) == pytest.approx((kappa["estimate"], kappa["low"], kappa["high"]))
    assert a["samples"] == 60 and a["items"] == 120 and a["annotators_per_item"] == 2
    h = (kappa["high"] - kappa["low"]) / 2
    assert a["halfwidth"] == pytest.approx(h) and h > 0.05
    assert a["samples_needed"] == math.ceil(60 * (h / 0.05) ** 2 - 1e-9) and not a["reached"]
    assert a["more_samples"] == a["samples_needed"] - 60
    assert a["more_labels"] == a["more_samples"] * 2 * 2  # two items per sample, two annotators per item
    assert a["scaling"]["sizes"] == [15, 30, 60] and a["scaling"]["halfwidths"][-1] == pytest.approx(h)
    assert 0.2 < a["scaling"]["exponent"] < 1.5
    assert out["gain"] == [{"scheme": "violations", "objective": "kappa", "estimate": 0.04, "low": -0.02,
                            "high": 0.1, "units": 100, "units_needed": 226, "more_units": 126, "note": None}]
    loose = _json(["plan", str(path), "--target-halfwidth", "0.9", "--bootstrap", "100", "--json"], capsys)
    assert loose["agreement"]["reached"] and loose["agreement"]["more_samples"] == 0
    capsys.readouterr()
    assert main(["plan", str(path), "--bootstrap", "100"]) == 0
    text = capsys.readouterr().out
    assert "more samples" in text and "226 units (126 more)" in text and "fitted exponent" in text
    assert path.stat().st_mtime_ns == before  # read only


def test_plan_without_two_annotators_and_bad_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "p.concord"
    with Project.create(path) as p:
        p.store("violations").write_violation_samples([ViolationSample("s0", TEXT, (Violation("r", 4, 7),), {"c@1|m": ()})])
    out = _json(["plan", str(path), "--json", "--bootstrap", "20"], capsys)
    assert out["agreement"] is None and out["gain"] == []
    for bad in (["--target-halfwidth", "0"], ["--target-halfwidth", "x"], ["--statistic", "f1"]):
        with pytest.raises(SystemExit) as exc:
            main(["plan", str(path), *bad])
        assert exc.value.code == 2


def test_two_or_three_annotators_per_item_compared_on_the_same_samples(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """Three annotators on every item of 30 samples: the plan compares keeping 2 or 3 of them per item."""
    path = tmp_path / "p.concord"
    gt = (Violation("r", 4, 7),)
    preds = (Violation("r", 4, 7), Violation("q", 24, 26))
    with Project.create(path) as p:
        p.store("violations").write_violation_samples([ViolationSample(f"s{i:03}", TEXT, gt, {"c1@1|m": preds}) for i in range(30)])
        for i in range(30):
            for a, flip in (("ana", False), ("ben", i % 4 == 0), ("cy", i % 5 == 1)):
                same = [[0, 0]] if i % 2 else []
                p.decisions.record(a, [Change(f"s{i:03}", "c1@1|m", "matches", ([[0, 1]] if flip else same))])
    out = _json(["plan", str(path), "--target-halfwidth", "0.05", "--bootstrap", "200", "--json"], capsys)
    a = out["agreement"]
    assert a["annotators_per_item"] == 3 and a["samples"] == 30
    two, three = a["by_annotators"]
    assert (two["annotators_per_item"], three["annotators_per_item"]) == (2, 3)
    assert two["samples"] == three["samples"] == 30
    assert three["halfwidth"] == pytest.approx(a["halfwidth"])  # keeping 3 of 3 is the data as they are
    for b in (two, three):
        assert b["samples_needed"] == units_for_halfwidth(b["halfwidth"], 30, 0.05)
        assert b["labels_needed"] == math.ceil(b["samples_needed"] * 2 * b["annotators_per_item"])  # 2 items each
    capsys.readouterr()
    assert main(["plan", str(path), "--bootstrap", "50"]) == 0
    assert "with 2 annotators per item (compared on the 30 samples" in capsys.readouterr().out


def test_no_comparison_of_annotators_per_item_without_a_third_annotator(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "p.concord"
    _project(path, n=30)
    assert _json(["plan", str(path), "--bootstrap", "50", "--json"], capsys)["agreement"]["by_annotators"] == []
