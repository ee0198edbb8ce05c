"""Property tests: the vectorised engine gives exactly the plain-loop reference's components and matches."""
from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calibration.schemes.violations import (
    COMPONENTS,
    MatchConfig,
    PairTable,
    Thresholds,
    Violation,
    ViolationSample,
    build_pair_table,
    match,
    score_pairs,
)
from calibration.schemes.violations import matching
from calibration.schemes.violations import reference as ref
from calibration.similarity import JaccardSimilarity, token_jaccard

PROPS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
GRID = [0.0, 0.01, 0.1, 0.25, 0.5, 0.75, 1.0]  # a coarse grid makes exact score ties common


@contextmanager
def engine(small_remainder: int, max_rounds: int) -> Iterator[None]:
    """Force the greedy's vectorised rounds (and the hand-over to the loop) even on tiny inputs."""
    old = matching._SMALL_REMAINDER, matching._MAX_ROUNDS
    matching._SMALL_REMAINDER, matching._MAX_ROUNDS = small_remainder, max_rounds
    try:
        yield
    finally:
        matching._SMALL_REMAINDER, matching._MAX_ROUNDS = old


ENGINES = [(4096, 24), (0, 1000), (0, 1), (0, 2)]

weights_st = st.fixed_dictionaries({c: st.sampled_from([0.0, 0.1, 0.2, 0.3, 0.5, 1.0]) for c in COMPONENTS}).filter(
    lambda w: sum(w.values()) > 0)
thresholds_st = st.builds(
    Thresholds,
    overlap=st.sampled_from([0.0, 0.1, 0.5, -math.inf]),
    rule=st.sampled_from([0.01, 0.0, 0.5, -math.inf]),
    match=st.sampled_from([0.5, 0.0, 0.25, 0.3, -0.1, -math.inf]),
)
config_st = st.builds(lambda w, t: MatchConfig("prop", w, t), weights_st, thresholds_st)
comp_st = st.one_of(st.sampled_from(GRID), st.floats(0, 1))
maybe_comp = st.one_of(st.just(math.nan), comp_st)


@st.composite
def pair_tables(draw: st.DrawFn) -> PairTable:
    sizes = draw(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=1, max_size=8))
    rows = []
    for g, (ng, npred) in enumerate(sizes):
        for gi in range(ng):
            for pi in range(npred):
                rows.append((g, gi, pi, draw(comp_st), draw(maybe_comp), draw(st.sampled_from([math.nan, 0.0, 1.0])),
                             draw(maybe_comp), draw(maybe_comp)))
    pairs = pd.DataFrame(rows, columns=["group", "gt", "pred", *COMPONENTS])
    groups = pd.DataFrame({"sample_id": [f"s{g}" for g in range(len(sizes))], "checker": "c",
                           "n_gt": [s[0] for s in sizes], "n_pred": [s[1] for s in sizes]})
    return PairTable.from_frames(groups, pairs.astype({c: np.float64 for c in COMPONENTS}))


def fast_set(table: PairTable, config: MatchConfig, method: str) -> set[tuple[int, int, int]]:
    m = match(table, config, method=method)  # type: ignore[arg-type]
    p = table.pairs
    return set(zip(p["group"].to_numpy()[m].tolist(), p["gt"].to_numpy()[m].tolist(), p["pred"].to_numpy()[m].tolist()))


@PROPS
@given(pair_tables(), config_st, st.sampled_from(ENGINES))
def test_greedy_matches_reference_on_random_pair_tables(table: PairTable, config: MatchConfig, eng: tuple[int, int]) -> None:
    with engine(*eng):
        assert fast_set(table, config, "greedy") == ref.match_pair_table(table, config, "greedy")


@PROPS
@given(pair_tables(), config_st)
def test_optimal_matches_reference_on_random_pair_tables(table: PairTable, config: MatchConfig) -> None:
    assert fast_set(table, config, "optimal") == ref.match_pair_table(table, config, "optimal")


@PROPS
@given(pair_tables(), config_st)
def test_scores_are_bit_identical_to_reference(table: PairTable, config: MatchConfig) -> None:
    fast = score_pairs(table, config).tolist()
    for row, got in zip(table.pairs[list(COMPONENTS)].itertuples(index=False, name=None), fast):
        want = ref.score({c: (None if v != v else v) for c, v in zip(COMPONENTS, row)}, dict(config.weights))
        assert (want is None and math.isnan(got)) or want == got


def _best_total(cands: dict[tuple[int, int], int], rows: list[int]) -> int:
    """Brute force: the best total quantised score of any one-to-one matching (plain recursion)."""
    if not rows:
        return 0
    r, rest = rows[0], rows[1:]
    best = _best_total(cands, rest)
    for (gi, pi), q in cands.items():
        if gi == r:
            sub = {k: v for k, v in cands.items() if k[0] != r and k[1] != pi}
            best = max(best, q + _best_total(sub, rest))
    return best


@PROPS
@given(pair_tables(), config_st)
def test_optimal_total_is_the_brute_force_maximum_and_never_below_greedy(table: PairTable, config: MatchConfig) -> None:
    scores = score_pairs(table, config)
    q = matching.quantise(np.nan_to_num(scores, nan=0.0))
    ok = matching.passing_mask(table, config, scores)
    opt = match(table, config, method="optimal")
    greedy = match(table, config, method="greedy")
    grp = table.pairs["group"].to_numpy()
    for g in range(table.n_groups):
        sel = grp == g
        cands = {(int(a), int(b)): int(v) for a, b, v, o in zip(table.pairs["gt"][sel], table.pairs["pred"][sel], q[sel], ok[sel])
                 if o and v > 0}
        best = _best_total(cands, sorted({k[0] for k in cands}))
        assert int(q[sel & opt].sum()) == best
        assert best >= int(np.where(q > 0, q, 0)[sel & greedy].sum())


RULES = ["Do not target minors", "Never target minors", "Do not mention alcohol to minors",
         "Use the trademark symbol", "trademark symbol", "  Do not target minors  ", ""]
CATS = [None, "", "Audience", "audience ", "Brand", "BRAND"]
TEXTS = [None, "", "minor", "targets minors", "missing symbol", "symbol missing here"]


@st.composite
def violations(draw: st.DrawFn) -> Violation:
    grounded = draw(st.booleans())
    start = draw(st.integers(0, 30))
    length = draw(st.integers(0, 12))
    return Violation(
        rule=draw(st.sampled_from(RULES)),
        start=start if grounded else None,
        end=start + length if grounded else None,
        category=draw(st.sampled_from(CATS)),
        explanation=draw(st.sampled_from(TEXTS)),
        correction=draw(st.sampled_from(TEXTS)),
    )


@st.composite
def samples_st(draw: st.DrawFn) -> list[ViolationSample]:
    out = []
    for i in range(draw(st.integers(1, 4))):
        gt = tuple(draw(st.lists(violations(), max_size=4)))
        preds = {}
        for c in ("a", "b", "c"):
            if draw(st.integers(0, 4)):  # sometimes a checker was not run on the sample
                preds[c] = tuple(draw(st.lists(violations(), max_size=4)))
        out.append(ViolationSample(f"s{i}", "x" * 50, gt, preds))
    return out


@PROPS
@given(samples_st(), config_st, st.sampled_from(["greedy", "optimal"]))
def test_records_to_matches_agree_with_reference(samples: list[ViolationSample], config: MatchConfig, method: str) -> None:
    table = build_pair_table(samples, JaccardSimilarity())
    # components, bit for bit
    by_id = {s.id: s for s in samples}
    p, grp = table.pairs, table.groups
    for row in p.itertuples(index=False):
        s = by_id[grp.sample_id[row.group]]
        comps = ref.components(s.ground_truth[row.gt], s.predictions[grp.checker[row.group]][row.pred], token_jaccard)
        for c in COMPONENTS:
            got = getattr(row, c)
            assert (comps[c] is None and math.isnan(got)) or comps[c] == got, (c, comps[c], got)
    want = ref.match_samples(samples, config, token_jaccard, method=method)
    assert set(zip(grp.sample_id, grp.checker)) == set(want)
    m = match(table, config, method=method)  # type: ignore[arg-type]
    got: dict[tuple[str, str], list[tuple[int, int]]] = {k: [] for k in want}
    for g, gi, pi in zip(p["group"][m], p["gt"][m], p["pred"][m]):
        got[(grp.sample_id[g], grp.checker[g])].append((int(gi), int(pi)))
    assert {k: sorted(v) for k, v in got.items()} == want


def test_large_random_table_with_ties_agrees_with_reference_under_default_engine() -> None:
    """Big enough that the default greedy runs several vectorised rounds before the loop takes over."""
    rng = np.random.default_rng(7)
    n_gt = rng.integers(0, 7, 3000)
    n_pred = rng.integers(0, 7, 3000)
    from calibration.schemes.violations.pairs import unit_pair_indices

    g, gi, pi = unit_pair_indices(n_gt, n_pred)
    n = g.size
    comp = {c: rng.choice(np.array(GRID), n) for c in COMPONENTS}
    for c in ("rule", "explanation", "correction"):
        comp[c][rng.random(n) < 0.2] = np.nan
    pairs = pd.DataFrame({"group": g, "gt": gi, "pred": pi, **comp})
    groups = pd.DataFrame({"sample_id": [f"s{i}" for i in range(3000)], "checker": "c", "n_gt": n_gt, "n_pred": n_pred})
    table = PairTable.from_frames(groups, pairs)
    config = MatchConfig("t", {"overlap": 0.3, "rule": 0.3, "category": 0.1, "explanation": 0.2, "correction": 0.1},
                         Thresholds(0.0, 0.01, 0.3))
    assert n > 20000
    for method in ("greedy", "optimal"):
        want = ref.match_pair_table(table, config, method)
        assert len(want) > 3000
        assert fast_set(table, config, method) == want


def test_brute_force_helper_is_itself_right() -> None:
    cands = {(0, 0): 9, (0, 1): 8, (1, 0): 7}
    assert _best_total(cands, [0, 1]) == 15
    assert max(sum(cands.get((r, c), 0) for r, c in zip(range(2), perm)) for perm in itertools.permutations(range(2))) == 15
