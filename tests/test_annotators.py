"""Agreement of several annotators (calibration.annotators), checked against hand-computed and published values."""
from __future__ import annotations

import itertools
import math
import random

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from calibration.annotators import (
    alpha_from_coincidence,
    kappa_from_confusion,
    item_agreement,
    span_agreement,
    unitizing_alpha,
)

A = ["tp", "tp", "fp", "fn"]
B = ["tp", "fp", "fp", "fn"]
C = ["tp", "tp", "fp", None]  # C did not label item 3


def _rows(**by_annot: list) -> list[tuple]:
    return [(f"s{i // 2}", f"i{i}", name, v) for name, vs in by_annot.items() for i, v in enumerate(vs) if v is not None]


def test_item_agreement_hand_computed() -> None:
    out = item_agreement(_rows(A=A, B=B, C=C), n_boot=300)
    kappas = {(p["a"], p["b"]): p["kappa"]["estimate"] for p in out["pairs"]}
    # A-B: po 3/4, pe 5/16 -> 7/11. A-C on items 0-2: identical -> 1. B-C: po 2/3, pe 4/9 -> 2/5
    assert kappas == pytest.approx({("A", "B"): 7 / 11, ("A", "C"): 1.0, ("B", "C"): 2 / 5})
    assert [p["n_items"] for p in out["pairs"]] == [4, 3, 3]
    # Fleiss over 4 items (3, 3, 3, 2 raters): P = 1, 1/3, 1, 1 -> 5/6; p = (5/12, 1/3, 1/4) -> Pe = 25/72 -> 35/47
    assert out["overall"]["kappa"]["estimate"] == pytest.approx(35 / 47)
    ref = krippendorff.alpha(reliability_data=[[0, 0, 1, 2], [0, 1, 1, 2], [0, 0, 1, np.nan]],
                             level_of_measurement="nominal")
    assert out["overall"]["alpha"]["estimate"] == pytest.approx(ref)
    people = {p["annotator"]: p for p in out["annotators"]}
    assert people["C"]["n_labels"] == 3 and people["A"]["n_samples"] == 2
    assert people["C"]["mean_kappa"] == pytest.approx(0.7)
    assert people["A"]["mean_kappa"] == pytest.approx((7 / 11 + 1) / 2)
    for stat in (out["overall"]["kappa"], out["overall"]["alpha"], out["pairs"][0]["kappa"]):
        assert stat["low"] <= stat["estimate"] + 1e-12 and stat["estimate"] <= stat["high"] + 1e-12
    assert item_agreement(_rows(A=A, B=B, C=C), n_boot=300) == out  # seeded
    assert math.isnan(item_agreement(_rows(A=A, B=B), n_boot=0)["overall"]["kappa"]["low"])


def test_fleiss_kappa_fleiss_1971_example() -> None:
    # the worked example of Fleiss' kappa (10 subjects, 14 raters, 5 categories): kappa = 0.210
    table = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
             [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]
    rows = []
    for subject, counts in enumerate(table):
        labels = [c for c, n in enumerate(counts) for _ in range(n)]
        rows += [(f"s{subject}", "x", f"r{r}", c) for r, c in enumerate(labels)]
    out = item_agreement(rows, n_boot=0)
    assert out["overall"]["kappa"]["estimate"] == pytest.approx(0.20993, abs=5e-5)


def test_alpha_reference_example_and_levels() -> None:
    # Krippendorff (2011), 4 observers x 12 units with missing values: nominal 0.743, interval 0.849
    data = [[1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None], [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
            [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None], [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None]]
    rows = [(f"s{u}", "x", f"o{o}", v) for o, r in enumerate(data) for u, v in enumerate(r) if v is not None]
    assert item_agreement(rows, n_boot=0)["overall"]["alpha"]["estimate"] == pytest.approx(0.743, abs=5e-4)
    assert item_agreement(rows, level="interval", n_boot=0)["overall"]["alpha"]["estimate"] == pytest.approx(0.849, abs=5e-4)
    ordinal = item_agreement(rows, level="ordinal", n_boot=50)
    matrix = np.array([[np.nan if v is None else v for v in r] for r in data], dtype=float)
    assert ordinal["overall"]["alpha"]["estimate"] == pytest.approx(
        krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal"))
    with pytest.raises(ValueError, match="twice"):
        item_agreement([("s", "i", "a", 1), ("s", "i", "a", 2)])
    with pytest.raises(ValueError, match="numeric"):
        item_agreement([("s", "i", "a", "x"), ("s", "i", "b", "y")], level="interval")


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_bootstrap_closed_forms_equal_the_libraries(level: str) -> None:
    """The replicate statistics (sums -> kappa/alpha) are the libraries' statistics on the full data."""
    rng = np.random.default_rng(7)
    k = 4
    data = rng.integers(0, k, size=(3, 300)).astype(float)
    data[rng.random(data.shape) < 0.2] = np.nan
    counts = np.stack([(data == c).sum(0) for c in range(k)], 1).astype(float)
    m = counts.sum(1)
    keep = m >= 2
    o = sum((np.outer(c, c) - np.diag(c)) / (mu - 1) for c, mu in zip(counts[keep], m[keep]))
    values = np.arange(k, dtype=float)
    assert alpha_from_coincidence(o, level, values) == pytest.approx(  # type: ignore[arg-type]
        krippendorff.alpha(reliability_data=data, level_of_measurement=level))
    both = ~np.isnan(data[0]) & ~np.isnan(data[1])
    a, b = data[0][both].astype(int), data[1][both].astype(int)
    conf = np.zeros((k, k))
    np.add.at(conf, (a, b), 1)
    weights = {"nominal": None, "ordinal": "linear", "interval": "quadratic"}[level]
    idx = np.arange(k)
    w = {None: 1 - np.eye(k), "linear": abs(idx[:, None] - idx), "quadratic": (idx[:, None] - idx) ** 2}[weights]
    assert kappa_from_confusion(conf, w) == pytest.approx(cohen_kappa_score(a, b, weights=weights))
    rows = [(f"s{u // 3}", u, f"r{r}", int(v)) for r in range(3) for u, v in enumerate(data[r]) if not np.isnan(v)]
    rows = [(s, i, r, v, 2.0 if r == "r0" else 4.0) for s, i, r, v in rows]
    out = item_agreement(rows, level=level, n_boot=200)  # type: ignore[arg-type]
    assert out["pairs"][0]["kappa"]["estimate"] == pytest.approx(cohen_kappa_score(a, b, weights=weights))
    assert out["overall"]["alpha"]["n_valid"] == 200
    assert [p["seconds_per_unit"] for p in out["annotators"]] == [2.0, 4.0, 4.0]


# -- spans ----------------------------------------------------------------------------------------------------------
def _f1(spans: dict, **kw) -> float:
    return span_agreement(spans, n_boot=0, **kw)["overall"]["span_f1"]["estimate"]


def test_span_matching_hand_cases() -> None:
    # nested: B's [2,4) lies inside both; A's one span matches B's identical span (IoU 1) -> 2*1/(1+2)
    nested = {("s", "A"): [(0, 10)], ("s", "B"): [(2, 4), (0, 10)]}
    assert _f1(nested) == pytest.approx(2 / 3)
    assert _f1({("s", "A"): [(0, 10)], ("s", "B"): [(0, 10), (2, 4)]}) == pytest.approx(2 / 3)
    # overlapping: B's [5,8) has IoU 1/8 with [0,6) and 3/6 with [4,10): one match; none when IoU must exceed 0.5
    overlapping = {("s", "A"): [(0, 6), (4, 10)], ("s", "B"): [(5, 8)]}
    assert _f1(overlapping) == pytest.approx(2 / 3)
    assert _f1(overlapping, iou=0.5) == 0.0
    assert _f1(overlapping, iou=0.49) == pytest.approx(2 / 3)
    # touching spans do not overlap
    assert _f1({("s", "A"): [(0, 5)], ("s", "B"): [(5, 9)]}) == 0.0
    # ties (all IoU 1/3): broken by position, so both listing orders match twice
    a, b = [(2, 6), (6, 10)], [(4, 8), (0, 4)]
    for bs in (b, b[::-1]):
        for as_ in (a, a[::-1]):
            out = span_agreement({("s", "A"): as_, ("s", "B"): bs}, n_boot=0)
            assert out["overall"]["matched"] == 2
    # empty sets: both empty says nothing (0/0); an empty side against spans is all disagreement
    assert math.isnan(_f1({("s", "A"): [], ("s", "B"): []}))
    assert _f1({("s", "A"): [], ("s", "B"): [(1, 2)], ("t", "A"): [], ("t", "B"): []}) == 0.0
    # a missing key means "did not read": sample t only has A, so it contributes nothing
    assert _f1({("s", "A"): [(0, 3)], ("s", "B"): [(0, 3)], ("t", "A"): [(0, 1)]}) == 1.0
    with pytest.raises(ValueError):
        span_agreement({("s", "A"): [(3, 3)]})


def test_span_agreement_three_annotators_micro_and_tables() -> None:
    spans = {("s1", "A"): [(0, 4)], ("s1", "B"): [(1, 4), (6, 8)], ("s1", "C"): [],
             ("s2", "A"): [(0, 2)], ("s2", "B"): [(0, 2)], ("s2", "C"): [(0, 2)]}
    out = span_agreement(spans, n_boot=100)
    # s1: AB 1 match / 3 spans, AC 0/1, BC 0/2; s2: every pair 1/2 -> 2*(1+3) / (3+1+2+6) = 8/12
    assert out["overall"]["span_f1"]["estimate"] == pytest.approx(8 / 12)
    ab = out["pairs"][0]
    assert (ab["a"], ab["b"], ab["matched"], ab["spans_a"], ab["spans_b"]) == ("A", "B", 2, 2, 3)
    assert (ab["precision"], ab["recall"]) == pytest.approx((2 / 3, 1.0))
    assert ab["f1"]["estimate"] == pytest.approx(4 / 5)
    c = out["annotators"][2]
    assert (c["n_samples"], c["n_spans"]) == (2, 1)
    assert c["f1_with_others"] == pytest.approx(2 * 2 / (1 + 2 + 2 + 2))  # AC: 1/(1+2) spans, BC: 1/(2+2)


def _plain_matched(a: list, b: list, t: float) -> int:
    cand = []
    for i, (s1, e1) in enumerate(sorted(a)):
        for j, (s2, e2) in enumerate(sorted(b)):
            inter = min(e1, e2) - max(s1, s2)
            if inter > 0 and inter / ((e1 - s1) + (e2 - s2) - inter) > t:
                cand.append((-inter / ((e1 - s1) + (e2 - s2) - inter), i, j))
    used_a, used_b, n = set(), set(), 0
    for _, i, j in sorted(cand):
        if i not in used_a and j not in used_b:
            used_a.add(i), used_b.add(j)
            n += 1
    return n


@pytest.mark.parametrize("t", [0.0, 0.3])
def test_span_agreement_equals_a_plain_loop(t: float) -> None:
    rnd = random.Random(5)
    spans = {}
    for s in range(60):
        for a in rnd.sample(["A", "B", "C", "D"], rnd.randint(1, 4)):
            spans[(s, a)] = [(x, x + rnd.randint(1, 8)) for x in (rnd.randint(0, 30) for _ in range(rnd.randint(0, 5)))]
    matched = total = 0
    for s in range(60):
        names = sorted(a for (s2, a) in spans if s2 == s)
        for x, y in itertools.combinations(names, 2):
            matched += _plain_matched(spans[(s, x)], spans[(s, y)], t)
            total += len(spans[(s, x)]) + len(spans[(s, y)])
    out = span_agreement(spans, t, n_boot=0)
    assert (out["overall"]["matched"], out["overall"]["spans_compared"]) == (matched, total)


# -- unitizing alpha ------------------------------------------------------------------------------------------------
def test_unitizing_alpha_krippendorff_2004_example() -> None:
    # Krippendorff (2004, Content Analysis 2nd ed., p. 254): continuum [150, 450), category c; alpha_c = 0.7286
    shift = lambda units: [(b - 150, b - 150 + n) for b, n in units]  # noqa: E731
    i, j = shift([(225, 70), (370, 30)]), shift([(220, 80), (355, 20), (400, 20)])
    assert unitizing_alpha([(300, [i, j])]) == pytest.approx(0.7286, abs=5e-5)
    assert unitizing_alpha([(300, [j, i])]) == pytest.approx(0.7286, abs=5e-5)


def test_unitizing_alpha_hand_computed() -> None:
    # L=10, [2,6) vs [4,8): Do = 2*(2^2+2^2) / (2*1*10^2) = 0.08. De: N=2, each unit (128-48+4)/3 = 28 -> 56;
    # gaps (2, 4) and (4, 2): each unit l=4 has 16*(1+1) -> 64; denominator 20*19 - 2*12 = 356;
    # De = 2/10 * 120 / 356 = 24/356 -> alpha = 1 - 0.08*356/24 = -14/75
    assert unitizing_alpha([(10, [[(2, 6)], [(4, 8)]])]) == pytest.approx(-14 / 75)
    assert unitizing_alpha([(10, [[(2, 6)], [(2, 6)]])]) == 1.0
    # one annotator's nested/overlapping spans are the union; the order of spans is irrelevant
    assert unitizing_alpha([(10, [[(4, 6), (2, 5)], [(4, 8)]])]) == pytest.approx(-14 / 75)
    assert unitizing_alpha([(10, [[(2, 6)], [(5, 7), (4, 8)]])]) == pytest.approx(-14 / 75)
    assert math.isnan(unitizing_alpha([(10, [[], []])]))
    with pytest.raises(ValueError):
        unitizing_alpha([(10, [[(2, 6)], [(4, 8)]]), (5, [[], [], []])])
    with pytest.raises(ValueError, match="past"):
        unitizing_alpha([(5, [[(2, 6)], [(4, 5)]])])


def _plain_u_alpha(continua: list) -> float:
    """Krippendorff's formulas with plain loops over every pair of segments (no sweep, no vectorisation)."""
    m = len(continua[0][1])
    big_l = sum(length for length, _ in continua)
    units, gaps, d_o = [], [], 0.0
    for length, coders in continua:
        segs = []
        for spans in coders:
            merged: list[list[int]] = []
            for s, e in sorted(spans):
                if merged and s < merged[-1][1]:
                    merged[-1][1] = max(merged[-1][1], e)
                else:
                    merged.append([s, e])
            cuts = sorted({0, length, *[x for u in merged for x in u]})
            own = [(s, e, [s, e] in merged) for s, e in zip(cuts, cuts[1:])]
            # gaps are maximal: join consecutive unmarked pieces
            joined: list[tuple[int, int, bool]] = []
            for s, e, v in own:
                if joined and not v and not joined[-1][2]:
                    joined[-1] = (joined[-1][0], e, False)
                else:
                    joined.append((s, e, v))
            segs.append(joined)
            units += [e - s for s, e, v in joined if v]
            gaps += [e - s for s, e, v in joined if not v]
        for i in range(m):
            for j in range(m):
                if i == j:
                    continue
                for bg, eg, vg in segs[i]:
                    for bh, eh, vh in segs[j]:
                        if vg and vh and max(bg, bh) < min(eg, eh):
                            d_o += (bg - bh) ** 2 + (eg - eh) ** 2
                        elif vg and not vh and bh <= bg and eg <= eh:
                            d_o += (eg - bg) ** 2
                        elif not vg and vh and bg <= bh and eh <= eg:
                            d_o += (eh - bh) ** 2
    d_o /= m * (m - 1) * big_l ** 2
    n = len(units)
    total = sum((n - 1) * (2 * x ** 3 - 3 * x ** 2 + x) / 3 + x ** 2 * sum(g - x + 1 for g in gaps if g >= x) for x in units)
    d_e = 2 / big_l * total / (m * big_l * (m * big_l - 1) - sum(x * (x - 1) for x in units))
    return 1 - d_o / d_e


def test_unitizing_alpha_equals_plain_formulas_on_random_continua() -> None:
    rnd = random.Random(11)
    for m in (2, 3):
        continua = []
        for _ in range(25):
            length = rnd.randint(5, 40)
            coders = []
            for _ in range(m):
                spans = []
                for _ in range(rnd.randint(0, 3)):
                    s = rnd.randint(0, length - 1)
                    spans.append((s, rnd.randint(s + 1, length)))
                coders.append(spans)
            continua.append((length, coders))
        assert unitizing_alpha(continua) == pytest.approx(_plain_u_alpha(continua), rel=1e-9)


def test_span_agreement_u_alpha_uses_the_modal_annotator_count() -> None:
    spans = {("s1", "A"): [(2, 6)], ("s1", "B"): [(4, 8)], ("s2", "A"): [(0, 3)], ("s2", "B"): [(0, 3)],
             ("s3", "A"): [(0, 1)], ("s3", "B"): [], ("s3", "C"): [(0, 1)]}
    out = span_agreement(spans, lengths={"s1": 10, "s2": 5, "s3": 4}, n_boot=100)
    ov = out["overall"]
    assert (ov["u_alpha_samples"], ov["u_alpha_annotators"]) == (2, 2)
    assert ov["u_alpha"]["estimate"] == pytest.approx(unitizing_alpha([(10, [[(2, 6)], [(4, 8)]]), (5, [[(0, 3)], [(0, 3)]])]))
    assert ov["u_alpha"]["n_valid"] > 0
    assert span_agreement(spans, n_boot=0)["overall"]["u_alpha"] is None
