"""Issue #29 item 3: adaptive overlap. The decision rule and the post-stratified kappa on hand-worked cases
(calibration/overlap.py), then `concord assign-work --overlap adaptive` on projects the tests make: a second
annotator only where the unit is uncertain, and never past the budget."""
from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import pytest

from app.cli import main
from app.io.demo import create_demo
from app.store import Change, Project
from calibration.overlap import Evidence, confidence, next_round, reasons, stratified_kappa, stratum
from calibration.schemes.base import registry
from calibration.schemes.violations import Violation, ViolationSample

TEXT = "The cat sat on the mat. It was red and tall."


# -- the rule -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("e", "want"), [
    (Evidence(("a",)), 2 / 3),  # (1 + 1) / (2 + 1)
    (Evidence(("a",), machine="a"), 3 / 4),  # the machine agrees far from its boundary: one more vote
    (Evidence(("a",), machine="b"), 1 / 2),
    (Evidence(("a",), machine="a", near_boundary=True), 2 / 3),  # on the boundary the machine says nothing
    (Evidence(("a", "a")), 3 / 4),
    (Evidence(("a", "a"), machine="a"), 4 / 5),
    (Evidence(("a", "a"), machine="b"), 3 / 5),
    (Evidence(("a", "b")), 1 / 2),
    (Evidence(("a", "b", "b")), 3 / 5),
])
def test_confidence_by_hand(e: Evidence, want: float) -> None:
    assert confidence(e) == pytest.approx(want)


def test_no_label_has_no_confidence_and_reasons_name_the_signals() -> None:
    assert math.isnan(confidence(Evidence()))
    assert reasons(Evidence(("a", "b"), machine="a", near_boundary=True)) == [
        "annotators disagree", "near the decision boundary"]  # the machine agrees with the majority (a, first given)
    assert reasons(Evidence(("a",), machine="b")) == ["the machine disagrees"]
    assert reasons(Evidence(("a",), machine="a")) == []


def test_next_round_takes_only_uncertain_ready_units_least_confident_first() -> None:
    units = [
        Evidence(("x",), machine="x"),  # 0: confident (3/4)
        Evidence(("x",), machine="y"),  # 1: machine disagrees (1/2)
        Evidence(("x", "y")),  # 2: annotators disagree (1/2)
        Evidence(("x",), machine="x", near_boundary=True),  # 3: on the boundary (2/3)
        Evidence(("x",), pending=1, machine="y"),  # 4: uncertain but waiting for a label
        Evidence(("x", "y", "y")),  # 5: uncertain (3/5) but at the maximum overlap
        Evidence(("x", "x"), machine="x"),  # 6: confident
        Evidence(),  # 7: no label: needs a first annotator, not this rule
    ]
    chosen = next_round(units, seed=1)
    assert sorted(chosen[:2]) == [1, 2] and chosen[2:] == [3]
    assert next_round(units, budget=2, seed=1) == chosen[:2]  # the budget cuts the least confident last
    assert next_round(units, budget=0) == []
    assert next_round(units, max_overlap=4, seed=1)[2:] == [5, 3]  # 3/5 comes between 1/2 and 2/3
    assert sorted(next_round(units, target=0.6, seed=1)) == [1, 2]  # 2/3 and 3/5 are sure enough for 0.6


def test_the_audit_takes_confident_single_label_units_first_and_counts_against_the_budget() -> None:
    units = [Evidence(("x",), machine="x") for _ in range(200)] + [Evidence(("x",), machine="y")]
    audited = next_round(units, audit=0.25, seed=3)
    assert audited[-1] == 200 and 20 < len(audited) - 1 < 80  # about a quarter of the 200 confident ones
    assert set(audited[:-1]) <= set(range(200))
    assert next_round(units, audit=0.25, seed=3, budget=5) == audited[:5]
    assert next_round(units, audit=0.0, seed=3) == [200]
    with pytest.raises(ValueError, match="target"):
        next_round(units, target=0.5)
    with pytest.raises(ValueError, match="budget"):
        next_round(units, budget=-1)


# -- agreement from an adaptive design ----------------------------------------------------------------------------------
def _kappa(p_o: float, shares: list[float]) -> float:
    p_e = sum(s * s for s in shares)
    return (p_o - p_e) / (1 - p_e)


def test_stratified_kappa_with_every_unit_paired_is_cohens_kappa_by_hand() -> None:
    first = ["a", "a", "b", "b", "a"]
    second = ["a", "b", "b", "a", "a"]
    out = stratified_kappa(first, second, [0] * 5, n_boot=0)
    assert out["estimate"] == pytest.approx(_kappa(3 / 5, [3 / 5, 2 / 5]))
    assert out["pairs"] == 5 and out["strata_unobserved"] == 0 and math.isnan(out["low"])


def test_post_stratification_undoes_the_selection_of_uncertain_units() -> None:
    """60 confident units whose two annotators agree, 40 uncertain ones that agree half the time. Every uncertain
    unit and 6 confident ones get a second label: the plain agreement over the pairs would be (6 + 20) / 46; the
    post-stratified one is 0.6 * 1 + 0.4 * 0.5 = 0.8, the agreement of all 100 pairs."""
    first = ["a"] * 30 + ["b"] * 30 + ["a"] * 20 + ["b"] * 20
    full_second = first[:60] + ["a"] * 10 + ["b"] * 10 + ["b"] * 10 + ["a"] * 10
    strata = ["sure"] * 60 + ["unsure"] * 40
    second = [s if (i >= 60 or i % 10 == 0) else None for i, s in enumerate(full_second)]
    out = stratified_kappa(first, second, strata, n_boot=200, seed=1)
    assert out["estimate"] == pytest.approx(_kappa(0.8, [0.5, 0.5]))
    assert out["estimate"] == pytest.approx(stratified_kappa(first, full_second, [0] * 100, n_boot=0)["estimate"])
    assert out["pairs"] == 46 and out["low"] < out["estimate"] < out["high"]
    plain = stratified_kappa([f for f, s in zip(first, second) if s is not None], [s for s in second if s is not None],
                             [0] * 46, n_boot=0)
    assert plain["estimate"] < out["estimate"] - 0.3  # the bias the weighting removes
    assert stratum(Evidence(("a",), machine="b", near_boundary=True)) == ("a", False, True)


# -- the command -------------------------------------------------------------------------------------------------------
def _violations(path: Path, n: int) -> None:
    v = (Violation("r", 4, 7),)
    with Project.create(path) as p:
        p.store("violations").write_violation_samples([ViolationSample(f"s{i}", TEXT, v, {"c1@1|m": v}) for i in range(n)])


def _run(path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> dict:
    capsys.readouterr()
    assert main(["assign-work", str(path), "--annotators", "ana,ben,cy", "--overlap", "adaptive", "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def _label_queues(path: Path, value: object) -> None:
    """Every annotator decides every unit of their queue they have not labeled: `value(sample, labels before)` as
    its matches."""
    with Project.open(path) as p:
        before = Counter(s for s, *_ in _labels(p))
        for a in ("ana", "ben", "cy"):
            done = {(s, u) for s, u, _, who, _ in _labels(p) if who == a}
            todo = [(s, u) for s, u in p.assignments.assigned_units(a) if (s, u) not in done]
            if todo:
                p.decisions.record(a, [Change(s, u, "matches", value(s, before[s])) for s, u in todo])


def _labels(p: Project) -> list[tuple]:
    return [(s, u, k, a, v) for _, s, u, k, a, v in p.decisions.annotator_label_rows(["matches"])]


def test_adaptive_assignment_gives_more_annotators_only_to_disagreements_within_the_budget(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "p.concord"
    _violations(path, 10)
    first = _run(path, capsys, "--budget", "12", "--seed", "2")
    assert first["units"] == 10 and first["adaptive"]["more"] == 0  # one annotator each, nothing labeled yet
    with Project.open(path) as p:
        assert Counter(Counter((s, u) for s, u, _, _ in p.assignments.assignment_rows()).values()) == {1: 10}
    assert _run(path, capsys)["adaptive"]["waiting"] == 10  # nobody labeled: every unit waits
    # every first annotator marks the match; one label and no machine decision: every unit is uncertain (2/3)
    _label_queues(path, lambda s, n: [[0, 0]])
    second = _run(path, capsys, "--budget", "6", "--seed", "2")
    assert second["adaptive"]["uncertain"] == 10 and second["adaptive"]["more"] == 6  # the budget stops at 6
    assert second["adaptive"]["budget_left"] == 0 and second["units"] == 0
    with Project.open(path) as p:
        two = sorted(s for (s, _), n in Counter((s, u) for s, u, _, _ in p.assignments.assignment_rows()).items() if n == 2)
    assert len(two) == 6
    disagree = set(two[3:])  # the second annotators agree on three units and disagree on the other three
    _label_queues(path, lambda s, n: [] if s in disagree and n == 1 else [[0, 0]])
    third = _run(path, capsys, "--budget", "9", "--seed", "2")
    # budget 9, 6 spent: the 3 left go to the least confident: the 4 single-label units (2/3) lose to the
    # disagreements (1/2) among the two-label ones
    with Project.open(path) as p:
        per_unit = Counter((s, u) for s, u, _, _ in p.assignments.assignment_rows())
    assert third["adaptive"]["more"] == 3 and third["adaptive"]["reasons"]["annotators disagree"] == 3
    assert {s for (s, _), n in per_unit.items() if n == 3} == disagree  # a third annotator only where they disagree
    assert sum(max(0, n - 1) for n in per_unit.values()) == 9  # never past the budget
    assert _run(path, capsys, "--budget", "9")["adaptive"]["more"] == 0


def test_a_machine_that_agrees_spares_the_second_annotator(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """On the demo project's rubric units (whose LLM buckets are the machine's label): a human who gives the
    machine's buckets leaves the unit confident (3/4), one who changes a bucket makes it uncertain (1/2)."""
    path = tmp_path / "demo.concord"
    create_demo(path).close()
    rubric = registry().get("rubric")
    with Project.open(path) as p:
        labeled = {(s, u) for _, s, u, *_ in p.decisions.annotator_label_rows()}
        records = {rubric.record_id(r): r for r in p.scheme_data.scheme_records("rubric")}
        free = []
        for sid, rec in sorted(records.items()):
            for unit in rubric.units(rec):
                ml = rubric.machine_label(rec, unit)
                if ml is not None and (sid, unit) not in labeled and rubric.accept(ml) != rubric.accept(None):
                    free.append((sid, unit, rubric.accept(ml)))
        assert len(free) >= 2
        (s1, u1, same), (s2, u2, other) = free[:2]
        changed = json.loads(json.dumps(other["buckets"]))
        key = next(iter(changed))
        changed[key] = "fp" if changed[key] != "fp" else "tp"
        p.decisions.record("dan", [Change(s1, u1, "buckets", same["buckets"]), Change(s2, u2, "buckets", changed)])
    out = _run(path, capsys, "--scheme", "rubric", "--audit", "0")
    assert out["adaptive"]["reasons"].get("the machine disagrees", 0) >= 1
    with Project.open(path) as p:
        given = {(s, u) for s, u, _, _ in p.assignments.assignment_rows()}
    assert (s2, u2) in given and (s1, u1) not in given


def test_bad_options_are_refused_and_nothing_is_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "p.concord"
    _violations(path, 3)
    base = ["assign-work", str(path), "--annotators", "ana,ben"]
    assert main([*base, "--overlap", "2", "--budget", "3"]) == 2
    assert "--budget applies to --overlap adaptive only" in capsys.readouterr().err
    assert main([*base, "--overlap", "adaptive", "--replace"]) == 2
    with pytest.raises(SystemExit):
        main([*base, "--overlap", "adaptive", "--target", "0.5"])
    with pytest.raises(SystemExit):
        main([*base, "--overlap", "sometimes"])
    with Project.open(path) as p:
        assert p.assignments.assignment_rows() == []
