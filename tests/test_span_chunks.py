"""calibration.span_chunks.span_agreement_columns (issue #28 item 5): `span_agreement`'s figures, every estimate and
interval end the same bits, from span sets given as columns and taken a few samples at a time: overlapping and
nested spans, ties, empty sets, samples read by two to four annotators, unitizing alpha, IoU thresholds."""
from __future__ import annotations

import numpy as np
import pytest

import calibration.span_chunks as chunks
from calibration.annotators import span_agreement
from calibration.span_chunks import span_agreement_columns


def _sets(seed: int, n_samples: int, n_annotators: int) -> tuple[dict, np.ndarray]:
    rng = np.random.default_rng(seed)
    lengths = rng.integers(20, 200, size=n_samples)
    sets = {}
    for s in range(n_samples):
        readers = rng.permutation(n_annotators)[:int(rng.integers(1, n_annotators + 1))]
        base = [(int(a), int(a + rng.integers(1, 15))) for a in rng.integers(0, lengths[s] - 16, size=3)]
        for a in readers:
            spans = [] if rng.random() < 0.25 else [
                (max(0, min(st + int(rng.integers(-2, 3)), en - 1)), en) for st, en in base if rng.random() < 0.7]
            spans += [(int(st), int(st + rng.integers(1, 8))) for st in rng.integers(0, lengths[s] - 9, size=int(rng.integers(0, 2)))]
            sets[(f"s{s:03d}", f"ann{a}")] = spans
    return sets, lengths


def _columns(sets: dict, lengths: np.ndarray) -> tuple:
    names = sorted({a for _s, a in sets}, reverse=True)  # codes not in name order
    values, seen = [], {}
    value = []
    for spans in sets.values():
        key = tuple(spans)
        if key not in seen:
            seen[key] = len(values)
            values.append(np.array(spans, dtype=np.int64).reshape(-1, 2))
        value.append(seen[key])
    sample = np.array([int(s[1:]) for s, _a in sets])
    annotator = np.array([names.index(a) for _s, a in sets])
    return sample, annotator, np.array(value), values, names


@pytest.mark.parametrize("window", [1 << 18, 5])
@pytest.mark.parametrize("iou", [0.0, 0.4])
@pytest.mark.parametrize("n_annotators", [2, 4])
def test_columns_give_span_agreement_figures(monkeypatch: pytest.MonkeyPatch, window: int, iou: float,
                                             n_annotators: int) -> None:
    monkeypatch.setattr(chunks, "WINDOW_KEYS", window)
    sets, lengths = _sets(n_annotators, 70, n_annotators)
    want = span_agreement(sets, iou, lengths={f"s{i:03d}": int(x) for i, x in enumerate(lengths)}, n_boot=120, seed=3)
    sample, annotator, value, values, names = _columns(sets, lengths)
    got = span_agreement_columns(sample, annotator, value, values, names, iou, lengths=lengths, n_boot=120, seed=3)
    assert repr(got) == repr(want)
    assert want["overall"]["u_alpha"] is not None and want["overall"]["matched"] > 0
    plain = span_agreement(sets, iou, n_boot=0)
    assert repr(span_agreement_columns(sample, annotator, value, values, names, iou, n_boot=0)) == repr(plain)


def test_a_faulty_span_is_refused_with_its_message() -> None:
    sets, lengths = _sets(1, 10, 3)
    key = list(sets)[4]
    sets[key] = [(3, 9), (7, 7)]
    with pytest.raises(ValueError) as want:
        span_agreement(sets, 0.0)
    with pytest.raises(ValueError) as got:
        span_agreement_columns(*_columns(sets, lengths), 0.0)
    assert str(got.value) == str(want.value)


class _Decisions:
    def __init__(self, lengths: dict) -> None:
        self.lengths = lengths

    def text_lengths(self) -> dict:
        return dict(self.lengths)

    def text_length_chunks(self) -> object:
        items = list(self.lengths.items())
        for lo in range(0, len(items), 7):
            yield tuple(zip(*items[lo:lo + 7]))


class _Project:
    def __init__(self, lengths: dict) -> None:
        self.decisions = _Decisions(lengths)


def test_span_kinds_pooled_from_columns_as_from_dicts() -> None:
    """app.services.agreement_codes.span_figures: two span kinds (and their pool, samples kept apart per kind) from
    SpanColumns give what the dicts give through `span_agreement`."""
    from app.services.agreement_codes import ColumnTables, SpanColumns, span_figures

    kinds = {("judge", "marks"): _sets(11, 40, 3), ("violations", "spans"): _sets(12, 35, 3)}
    lengths = {f"s{i:03d}": int(x) for i in range(40) for x in [kinds[("judge", "marks")][1][i]]}
    names = [f"s{i:03d}" for i in range(40)]
    people = ["ann2", "ann1", "ann0"]
    as_dicts, as_columns = {}, {}
    for key, (sets, _len) in kinds.items():
        # the second kind's samples share names with the first's (one text, one length): kept apart in the pool
        for (s, _a), spans in sets.items():
            sets[(s, _a)] = [(a, min(b, lengths[s])) for a, b in spans if a < min(b, lengths[s])]
        as_dicts[key] = sets
        sample, _annotator, value, values, _names = _columns(sets, np.zeros(0))
        as_columns[key] = SpanColumns(sample, np.array([people.index(a) for _s, a in sets], dtype=np.int8),
                                      value.astype(np.int16), values)  # narrow codes, as the reader keeps them
    project = _Project(lengths)
    want = span_figures(project, ColumnTables({}, as_dicts, {}, {}, set()), 0.2, 90, 5)
    got = span_figures(project, ColumnTables({}, as_columns, {}, {}, set(), names, people), 0.2, 90, 5)
    assert want[1] is not None and want[1]["overall"]["u_alpha"] is not None
    assert repr(got) == repr(want)


def test_a_sample_labelled_twice_by_one_annotator_keeps_the_dicts_rule() -> None:
    """Per-sample list labels as columns (app.services.agreement_codes._ColumnCoder): split into span columns and
    the rest as `split_spans` splits the (sample, annotator) -> value dicts, and when one annotator has two values for
    one sample in a kind (a dict keeps the last at the first's place) through those very dicts."""
    from app.services.agreement_codes import SpanColumns, _ColumnCoder
    from app.services.agreement_items import split_spans

    coder = _ColumnCoder.__new__(_ColumnCoder)
    coder.annotators = {"bo": 0, "al": 1}
    coder.sample_names = ["s0", "s1", "s2"]
    spans_a = [{"start": 0, "end": 4}, {"start": 6, "end": 9}]
    coder.listed_values = {("judge", "marks"): [spans_a, [], [{"start": 2, "end": 5}]],
                           ("judge", "tags"): [["x"], ["y", "z"]]}
    coder.listed = {("judge", "marks"): [(np.array([0, 0, 1]), np.array([0, 1, 0]), np.array([0, 1, 2])),
                                         (np.array([2, 2], dtype=np.int8), np.array([1, 0]), np.array([1, 0]))],
                    ("judge", "tags"): [(np.array([0, 1]), np.array([1, 1]), np.array([0, 1]))]}
    spans, rest = coder._split_listed()
    assert isinstance(spans[("judge", "marks")], SpanColumns) and set(rest) == {("judge", "tags")}
    marks = spans[("judge", "marks")]
    assert [m.tolist() for m in marks.values] == [[[0, 4], [6, 9]], [], [[2, 5]]]
    people = list(coder.annotators)

    def as_dict(listed):  # type: ignore[no-untyped-def]  # the _Listed columns as the dict they stand for, with codes
        return {(coder.sample_names[s], people[a]): (listed.values[v], (s, a))
                for s, a, v in zip(listed.sample.tolist(), listed.annotator.tolist(), listed.value.tolist())}

    tags = {("s0", "al"): (["x"], (0, 1)), ("s1", "al"): (["y", "z"], (1, 1))}
    assert as_dict(rest[("judge", "tags")]) == tags and len(rest[("judge", "tags")]) == 2
    # bo labels s1 twice: the dicts, the last value at the first one's place
    coder.listed[("judge", "marks")].append((np.array([1]), np.array([0]), np.array([1])))
    spans, rest = coder._split_listed()
    want = {("s0", "bo"): spans_a, ("s0", "al"): [], ("s1", "bo"): [], ("s2", "al"): [], ("s2", "bo"): spans_a}
    expected, _ = split_spans({("judge", "marks"): want})
    assert spans[("judge", "marks")] == expected[("judge", "marks")]
    assert list(spans[("judge", "marks")]) == list(want)
    assert as_dict(rest[("judge", "tags")]) == tags
