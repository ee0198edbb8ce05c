"""Issue #29 items 5 and 2: annotator quality (agreement with the others' reference, drift, seconds per decision,
flags) and agreement over time windows (drops flagged), in the library, the service and `concord agreement`."""
from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from app.cli import main
from app.services.agreement import agreement, agreement_over_time, annotator_quality
from app.store import Change, Project, decisions
from calibration.agreement_windows import drops, parse_window, window_of
from calibration.annotator_quality import COLUMNS, decision_gaps
from calibration.annotator_quality import annotator_quality as quality
from tests.test_several_annotators import make

C1, C2 = "c1@1|m", "c2@1|m"
GOOD, NONE, SWAPPED = [[0, 0], [1, 1]], [], [[0, 1], [1, 0]]


class Clock:
    """The store's clock, set by the test: events and labels get the times a planted scenario needs."""

    def __init__(self) -> None:
        self.t = datetime(2026, 3, 2, 9, tzinfo=UTC)

    def __call__(self) -> str:
        return self.t.isoformat(timespec="milliseconds")

    def at(self, day: int, hour: int = 9) -> None:
        self.t = datetime(2026, 3, 2 + day, hour, tzinfo=UTC)

    def tick(self, seconds: float) -> None:
        self.t += timedelta(seconds=seconds)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[Clock]:
    c = Clock()
    monkeypatch.setattr(decisions, "now", c)
    yield c


# -- the library against a plain computation ---------------------------------------------------------------------------
def _plain(df: pd.DataFrame) -> dict[str, dict[str, float]]:
    """Per annotator, by loops: the reference of each item they labelled (newest adjudicated label of someone else,
    else the strict plurality of the others), share and Cohen's kappa (scikit-learn) against it, and the halves."""
    out = {}
    for name in sorted(set(df["annotator"])):
        mine = df[df["annotator"] == name]
        got, ref, ts = [], [], []
        for _, r in mine.iterrows():
            others = df[(df["sample"] == r["sample"]) & (df["item"] == r["item"]) & (df["annotator"] != name)]
            adj = others[others["adjudicated"]]
            if len(adj):
                reference = adj.sort_values("ts")["category"].iloc[-1]
            elif len(others):
                top = Counter(others["category"]).most_common()
                if len(top) > 1 and top[0][1] == top[1][1]:
                    continue
                reference = top[0][0]
            else:
                continue
            got.append(f"{r['kind']}={r['category']}")
            ref.append(f"{r['kind']}={reference}")
            ts.append(r["ts"])
        order = np.argsort(ts, kind="stable")
        eq = np.array(got) == np.array(ref)
        half = len(eq) // 2
        out[name] = {"n": len(got), "share": float(eq.mean()), "kappa": float(cohen_kappa_score(got, ref)),
                     "early": float(eq[order[:len(eq) - half]].mean()), "late": float(eq[order[len(eq) - half:]].mean())}
    return out


def test_library_figures_equal_a_plain_computation() -> None:
    rng = random.Random(7)
    rows = []
    for s in range(25):
        for i in range(3):
            kind = "k1" if i < 2 else "k2"
            truth = rng.choice("abc")
            for a, noise in (("ana", 0.1), ("ben", 0.3), ("cy", 0.2), ("dee", 0.5)):
                if rng.random() < 0.2:
                    continue  # not everybody labels every item
                cat = truth if rng.random() > noise else rng.choice("abc")
                adjudicated = a == "dee" and rng.random() < 0.2
                rows.append((f"s{s}", f"i{i}", a, cat, kind, float(rng.randrange(10_000)), adjudicated))
    df = pd.DataFrame(rows, columns=list(COLUMNS))
    got = {r["annotator"]: r for r in quality(df, n_boot=200, seed=3)}
    for name, want in _plain(df).items():
        r = got[name]
        assert r["n_compared"] == want["n"] > 20
        assert r["agreement"]["estimate"] == pytest.approx(want["share"])
        assert r["kappa"]["estimate"] == pytest.approx(want["kappa"])
        assert r["agreement"]["low"] <= want["share"] <= r["agreement"]["high"]
        assert (r["drift"]["early"], r["drift"]["late"]) == pytest.approx((want["early"], want["late"]))
        assert r["drift"]["change"]["estimate"] == pytest.approx(want["late"] - want["early"])
        assert r["drift"]["change"]["low"] < r["drift"]["change"]["high"]
    assert quality(df, n_boot=200, seed=3) == quality(df, n_boot=200, seed=3)  # seeded


def test_decision_gaps_leave_out_pauses_and_windows_number_in_time_order() -> None:
    assert decision_gaps([10.0, 0.0, 12.5, 5000.0], break_after=1800) == [10.0, 2.5]
    day = 86_400.0
    t = [3 * day + 5, 0.0, day + 1, 3 * day + 1]
    assert window_of(t, "day") == [(2, "1970-01-04"), (0, "1970-01-01"), (1, "1970-01-02"), (2, "1970-01-04")]
    assert [w for w, _ in window_of(t, 2)] == [1, 0, 0, 1]
    assert {label for _, label in window_of(t, "week")} == {"1970-W01"}
    assert parse_window("week") == "week" and parse_window("30") == 30
    for bad in ("1", "month", "-3"):
        with pytest.raises(ValueError):
            parse_window(bad)
    ci = lambda lo, hi: {"estimate": (lo + hi) / 2, "low": lo, "high": hi, "n_valid": 10}
    assert drops([ci(0.8, 0.9), ci(0.5, 0.7), ci(0.6, 0.85), None, ci(0.1, 0.2)]) == [False, True, False, False, False]


# -- a project with planted patterns -------------------------------------------------------------------------------
def _session(p: Project, clock: Clock, who: str, decisions_: list[tuple[str, str, list, str]], seconds: float,
             rng: random.Random) -> list[float]:
    """One annotator's sitting: each decision (sample, checker, matches, status) `seconds` (+-20%) after the last;
    returns the gaps."""
    gaps = []
    for sid, checker, matches, status in decisions_:
        gap = seconds * rng.uniform(0.8, 1.2)
        clock.tick(gap)
        gaps.append(gap)
        p.decisions.record(who, [Change(sid, checker, "matches", matches), Change(sid, checker, "status", status)])
    return gaps[1:]  # the first decision of a sitting has no gap


def test_flags_fire_on_planted_patterns_and_not_on_normal_annotators(tmp_path: Path, clock: Clock) -> None:
    p = make(tmp_path / "p.concord", n=12)
    rng = random.Random(2)
    units = [(f"s{i}", c) for i in range(12) for c in (C1, C2)]
    normal = lambda: [(s, c, GOOD, rng.choice(["accepted", "accepted", "corrected"])) for s, c in units]
    gaps = {"ana": _session(p, clock, "ana", normal(), 20.0, rng)}
    clock.tick(3600)
    _session(p, clock, "cy", normal(), 30.0, rng)
    clock.tick(3600)
    gaps["ben"] = _session(p, clock, "ben", [(s, c, GOOD, "accepted") for s, c in units], 0.4, rng)  # accepts all, fast
    clock.tick(3600)
    _session(p, clock, "dan", [(s, c, NONE, "corrected") for s, c in units], 15.0, rng)  # never sees a match
    logged = [12.0, 40.0, 25.0]
    for (sid, checker), secs in zip(units, logged):
        p.decisions.log_time("cy", sid, checker, secs)  # the work log wins over event times where it exists
    p.close()
    imported = tmp_path / "eve.jsonl"  # an import marks every unit 'accepted' at one instant: no habit of eve's
    imported.write_text("".join(json.dumps({"sample": s, "checker": c, "annotator": "eve", "matches": GOOD}) + "\n"
                                for s, c in units), encoding="utf-8")
    assert main(["labels", "import", str(tmp_path / "p.concord"), str(imported)]) == 0
    p = Project.open(tmp_path / "p.concord")
    rows = {r["annotator"]: r for r in annotator_quality(p, n_boot=100)}
    codes = {a: {f["flag"] for f in r["flags"]} for a, r in rows.items()}
    assert codes == {"ana": set(), "cy": set(), "ben": {"accepts_all", "fast"}, "dan": {"disagrees"}, "eve": set()}
    assert rows["eve"]["n_status"] == 0 and rows["eve"]["drift"] is None and rows["eve"]["seconds"]["n"] == 0
    assert rows["eve"]["agreement"]["estimate"] == 1.0
    (flag,) = rows["dan"]["flags"]
    assert flag["kind"] == "violations:matches" and flag["category"] == 1  # dan says 'no match' where all others match
    assert rows["ben"]["accept_share"] == 1.0 and rows["ben"]["n_status"] == len(units)
    assert rows["ana"]["seconds"]["source"] == "events"
    assert rows["ana"]["seconds"]["median"] == pytest.approx(float(np.median(gaps["ana"])), abs=1e-3)
    assert rows["ben"]["seconds"]["median"] == pytest.approx(float(np.median(gaps["ben"])), abs=1e-3) and \
        rows["ben"]["seconds"]["median"] < 1
    assert rows["cy"]["seconds"] == {"source": "work_log", "n": 3, "median": 25.0,
                                     "p10": pytest.approx(float(np.percentile(logged, 10))),
                                     "p90": pytest.approx(float(np.percentile(logged, 90)))}
    # ana against the others' majority (ben, cy, dan: two of three say GOOD) agrees on every item
    assert rows["ana"]["agreement"]["estimate"] == 1.0 and rows["ana"]["n_compared"] == 4 * len(units)
    assert rows["dan"]["agreement"]["estimate"] == pytest.approx(0.5)  # right on the (gt, pred) pairs that differ
    p.close()


def _days(p: Project, clock: Clock, per_day: list[float], seed: int = 0) -> dict[int, set[str]]:
    """Ana and ben label 8 samples a day (both checkers); on day d ben swaps the matches of a unit with probability
    per_day[d]. Returns each day's samples."""
    rng = random.Random(seed)
    out: dict[int, set[str]] = {}
    for day, swap in enumerate(per_day):
        clock.at(day)
        out[day] = set()
        for i in range(8 * day, 8 * day + 8):
            out[day].add(f"s{i}")
            for checker in (C1, C2):
                for who in ("ana", "ben"):
                    clock.tick(20)
                    swapped = who == "ben" and rng.random() < swap
                    p.decisions.record(who, [Change(f"s{i}", checker, "matches", SWAPPED if swapped else GOOD)])
        sid = f"s{8 * day}"  # and one sample's ground truth spans a day: [4, 7) by both, [24, 26) by ana only
        for who, spans in (("ana", [(4, 7), (24, 26)]), ("ben", [(4, 7)])):
            clock.tick(20)
            p.decisions.record(who, [Change(sid, "", "ground_truth", [{"start": a, "end": b, "rule": "r"} for a, b in spans])])
    return out


def test_a_planted_drop_is_flagged_and_windows_agree_with_the_plain_figures(tmp_path: Path, clock: Clock) -> None:
    p = make(tmp_path / "p.concord", n=24)
    days = _days(p, clock, [0.0, 0.05, 0.8])
    out = agreement_over_time(p, window="day", n_boot=300)
    assert [w["window"] for w in out["windows"]] == ["2026-03-02", "2026-03-03", "2026-03-04"]
    assert [w["drops"] for w in out["windows"]] == [[], [], ["kappa", "alpha"]]
    for w, day in zip(out["windows"], sorted(days)):
        plain = agreement(p, samples=days[day], n_boot=300)  # the day's samples are the window's
        assert w["kappa"] == plain["overall"]["kappa"] and w["alpha"] == plain["overall"]["alpha"]
        assert w["span_f1"] == plain["overall"]["span_f1"] and w["span_f1"]["estimate"] == pytest.approx(2 / 3)
        assert w["n_items"] == plain["schemes"]["violations"]["matches"]["n_items"] and w["n_span_samples"] == 1
    weekly = agreement_over_time(p, window="week", n_boot=0)
    assert len(weekly["windows"]) == 1 and weekly["windows"][0]["drops"] == []
    by_count = agreement_over_time(p, window=17, n_boot=300)  # a day: 16 units' matches and 1 sample's spans
    assert [w["window"] for w in by_count["windows"]] == ["units 1-17", "units 18-34", "units 35-51"]
    assert [(w["kappa"], w["drops"]) for w in by_count["windows"]] == [(w["kappa"], w["drops"]) for w in out["windows"]]
    p.close()


def test_a_stable_series_is_not_flagged(tmp_path: Path, clock: Clock) -> None:
    p = make(tmp_path / "p.concord", n=32)
    _days(p, clock, [0.15, 0.15, 0.15, 0.15], seed=5)
    out = agreement_over_time(p, window="day", n_boot=300)
    assert len(out["windows"]) == 4 and all(w["drops"] == [] for w in out["windows"])
    assert all(w["kappa"]["estimate"] < 1 for w in out["windows"])  # not trivially stable: each day disagrees some
    p.close()


def test_cli_prints_and_validates_the_new_figures(tmp_path: Path, clock: Clock,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from tests.test_json_outputs import errors

    p = make(tmp_path / "p.concord", n=24)
    _days(p, clock, [0.0, 0.0, 0.8])
    p.close()
    path = str(tmp_path / "p.concord")
    assert main(["agreement", path, "--annotators", "--over", "time", "--bootstrap", "200", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["schema_version"] == 5 and errors("agreement", data) == []
    assert [w["drops"] for w in data["over_time"]["windows"]] == [[], [], ["kappa", "alpha"]]
    assert {r["annotator"] for r in data["annotator_quality"]} == {"ana", "ben"}
    assert main(["agreement", path, "--annotators", "--over", "time", "--window", "week", "--bootstrap", "50"]) == 0
    text = capsys.readouterr().out  # piped: TSV
    assert "# annotator quality" in text and "# agreement per week window" in text
    assert main(["agreement", path, "--over", "time", "--bootstrap", "200"]) == 0
    assert "DROP: kappa, alpha" in capsys.readouterr().out
    plain = agreement(Project.open(path), n_boot=0)
    assert main(["agreement", path, "--bootstrap", "0", "--json"]) == 0
    assert {k: v for k, v in json.loads(capsys.readouterr().out).items() if k != "schema_version"} == {
        **plain, "guideline": {}, "adaptive_overlap": None}  # no guideline stored: nothing set aside; no adaptive round
    for bad in (["--over", "someday"], ["--over", "time", "--window", "1"], ["--over", "time", "--window", "month"]):
        with pytest.raises(SystemExit) as exc:
            main(["agreement", path, *bad])
        assert exc.value.code == 2
    assert main(["agreement", path, "--window", "day", "--bootstrap", "200", "--json"]) == 0  # implies --over time
    assert [w["drops"] for w in json.loads(capsys.readouterr().out)["over_time"]["windows"]] == [[], [], ["kappa", "alpha"]]
