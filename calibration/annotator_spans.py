"""Agreement of several annotators' marked spans (issue #15), split from calibration/annotators.py (which
re-exports `span_agreement` and `unitizing_alpha`).

`span_agreement` takes each annotator's character spans per sample and gives pairwise precision/recall/F1 under
greedy one-to-one matching on character IoU, the micro F1 over pairs, and Krippendorff's unitizing alpha, each with a
percentile bootstrap over samples (calibration.agreement.resample_counts, the project's one resampling draw).
Unitizing alpha: no maintained Python package computes it, so it is written here after Krippendorff (1995, 2004)
and tested on Krippendorff's (2004) worked example and against a plain loop transcription of the formulas.
"""
from __future__ import annotations

import itertools
from collections.abc import Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

if TYPE_CHECKING:  # scipy.sparse costs about 0.5 s to import: only span agreement draws its histograms with it
    from scipy import sparse

from calibration.agreement import (
    draw_chunk,
    estimate_interval,
    nan_ratio,
    resample_counts,
)
from calibration.blas import one_blas_thread


def count_of(keys: np.ndarray, query: np.ndarray) -> np.ndarray:
    """How often each `query` value occurs in `keys` (integer codes of any size)."""
    uniq, cnt = np.unique(keys, return_counts=True)
    if not len(uniq):
        return np.zeros(len(query), dtype=np.int64)
    pos = np.minimum(np.searchsorted(uniq, query), len(uniq) - 1)
    return np.where(uniq[pos] == query, cnt[pos], 0)


def within_group_pairs(sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every ordered (i, j) of positions in the same group (i == j included), positions grouped contiguously."""
    sizes = np.asarray(sizes, dtype=np.int64)
    starts = np.cumsum(sizes) - sizes
    per_elem = np.repeat(sizes, sizes)  # size of each element's group
    left = np.repeat(np.arange(int(sizes.sum())), per_elem)
    offset = np.arange(left.size) - np.repeat(np.cumsum(per_elem) - per_elem, per_elem)
    right = np.repeat(np.repeat(starts, sizes), per_elem) + offset
    return left, right


def _span(s: Any) -> tuple[int, int]:
    start, end = (s["start"], s["end"]) if isinstance(s, Mapping) else s
    if type(start) is not int or type(end) is not int or not 0 <= start < end:
        raise ValueError(f"a span needs integer offsets 0 <= start < end, got {s!r}")
    return start, end


def _span_table(spans: Mapping[tuple[Hashable, Hashable], Sequence[Any]]) -> tuple[
        pd.Index, pd.Index, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Codes of (sample, annotator) keys, and every span as (sample, annotator, start, end) sorted by sample."""
    keys = list(spans)
    s_code, samples = pd.factorize(pd.Series([k[0] for k in keys], dtype=object), sort=False)
    a_code, annotators = pd.factorize(pd.Series([k[1] for k in keys], dtype=object), sort=True)
    sizes = np.fromiter((len(spans[k]) for k in keys), dtype=np.int64, count=len(keys))
    flat = list(itertools.chain.from_iterable(spans[k] for k in keys))
    if flat and isinstance(flat[0], Mapping):
        flat = [_span(s) for s in flat]
    se = np.array(flat).reshape(-1, 2) if flat else np.zeros((0, 2), dtype=np.int64)
    if se.dtype.kind not in "iu" or (se[:, 0] < 0).any() or (se[:, 0] >= se[:, 1]).any():
        bad = next(s for s in flat if _span(s) is None)  # _span raises on the first faulty span
        raise ValueError(f"a span needs integer offsets 0 <= start < end, got {bad!r}")
    se = se.astype(np.int64)
    sp_sample, sp_annot = np.repeat(s_code, sizes), np.repeat(a_code, sizes)
    order = np.lexsort((se[:, 1], se[:, 0], sp_annot, sp_sample))
    return samples, annotators, np.column_stack([s_code, a_code]), sp_sample[order], sp_annot[order], \
        se[order, 0], se[order, 1]


def greedy_span_matches(group: np.ndarray, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Greedy one-to-one matching per group over candidate pairs already sorted best first: kept mask."""
    keep = np.zeros(len(group), dtype=bool)
    used_l: set[tuple[int, int]] = set()
    used_r: set[tuple[int, int]] = set()
    for i, (g, lft, rgt) in enumerate(zip(group.tolist(), left.tolist(), right.tolist())):
        if (g, lft) in used_l or (g, rgt) in used_r:
            continue
        used_l.add((g, lft))
        used_r.add((g, rgt))
        keep[i] = True
    return keep


def u_alpha_parts(m: int, sample: np.ndarray, annot: np.ndarray, start: np.ndarray, end: np.ndarray,
                   n_samples: int, lengths: np.ndarray) -> tuple[np.ndarray, sparse.csr_matrix, sparse.csr_matrix]:
    """Per-sample pieces of Krippendorff's unitizing alpha for one category (the binary continuum).

    Each annotator's spans are first merged where they overlap (a character is marked or not; adjacent spans stay
    two units, as in Krippendorff's examples). Returns ([observed numerator, length] per sample, unit-length
    histogram, gap-length histogram), from which `u_alpha_from_parts` computes alpha for any weighting of the samples.
    """
    # merge overlapping spans of one annotator in one sample (rows sorted by sample, annotator, start)
    same = np.r_[False, (sample[1:] == sample[:-1]) & (annot[1:] == annot[:-1])]
    run_end = end.copy()
    new = np.ones(len(start), dtype=bool)
    if len(start):
        # a span continues the previous run when it starts before the run's furthest end so far
        grp = np.cumsum(~same)
        furthest = pd.Series(end).groupby(grp).cummax().to_numpy()
        new[1:] = ~same[1:] | (start[1:] >= furthest[:-1])
        run = np.cumsum(new) - 1
        run_end = pd.Series(end).groupby(run).max().to_numpy()
    u_sample, u_annot, u_start = sample[new], annot[new], start[new]
    u_end = run_end if len(start) else end
    u_len = u_end - u_start
    if (u_end > lengths[u_sample]).any():
        raise ValueError("a span ends past its sample's text")
    # observed disagreement: both-marked overlapping pairs, and a unit inside a gap of another annotator
    n_units = np.bincount(u_sample, minlength=n_samples)
    left, right = within_group_pairs(n_units)
    other = u_annot[left] != u_annot[right]
    left, right = left[other], right[other]
    overlap = np.maximum(u_start[left], u_start[right]) < np.minimum(u_end[left], u_end[right])
    left, right = left[overlap], right[overlap]
    vv = (u_start[left] - u_start[right]) ** 2 + (u_end[left] - u_end[right]) ** 2
    covering = pd.DataFrame({"u": left, "a": u_annot[right]}).drop_duplicates()
    n_cover = np.bincount(covering["u"].to_numpy(), minlength=len(u_start))
    in_gap = (m - 1 - n_cover) * u_len ** 2
    d_o = np.bincount(u_sample[left], weights=vv, minlength=n_samples) \
        + 2 * np.bincount(u_sample, weights=in_gap.astype(float), minlength=n_samples)
    # gaps: the complement of each annotator's units within each sample (annotators without units: one gap)
    first = np.r_[True, (u_sample[1:] != u_sample[:-1]) | (u_annot[1:] != u_annot[:-1])]
    last = np.r_[first[1:], True]
    prev_end = np.where(first, 0, np.r_[0, u_end[:-1]])
    gaps = [u_start - prev_end, np.where(last, lengths[u_sample] - u_end, 0)]
    gap_sample = [u_sample, u_sample]
    annot_with_units = pd.DataFrame({"s": u_sample, "a": u_annot}).drop_duplicates()["s"].to_numpy()
    empty_annots = m - np.bincount(annot_with_units, minlength=n_samples)
    gaps.append(np.repeat(lengths, empty_annots))
    gap_sample.append(np.repeat(np.arange(n_samples), empty_annots))
    g_len, g_sample = np.concatenate(gaps), np.concatenate(gap_sample)
    g_sample, g_len = g_sample[g_len > 0], g_len[g_len > 0]
    width = int(lengths.max()) + 1 if len(lengths) else 1
    from scipy import sparse

    hist = lambda s, x: sparse.csr_matrix((np.ones(len(x)), (s, x)), shape=(n_samples, width))  # noqa: E731
    return np.column_stack([d_o, lengths.astype(float)]), hist(u_sample, u_len), hist(g_sample, g_len)


def u_alpha_from_parts(m: int, parts: np.ndarray, units: np.ndarray, gaps: np.ndarray) -> np.ndarray:
    """Unitizing alpha from summed parts (..., 2), unit (..., W) and gap (..., W) length histograms.

    Krippendorff (2004, ch. 12.4; 1995): Do = sum of squared boundary distances / (m (m-1) L^2);
    De = 2/L [(N-1) sum_u (2l^3 - 3l^2 + l)/3 + sum_u l^2 sum_{gaps g >= l} (g - l + 1)] / (mL(mL-1) - sum_u l(l-1)).
    The continua of all samples lie end to end; a gap never spans two samples.
    """
    big_l = parts[..., 1]
    d_o = nan_ratio(parts[..., 0], m * (m - 1) * big_l ** 2)
    ell = np.arange(units.shape[-1], dtype=float)
    n_units = units.sum(-1)
    cubic = (units * (2 * ell ** 3 - 3 * ell ** 2 + ell) / 3).sum(-1)
    square = (units * ell * (ell - 1)).sum(-1)
    at_least = np.cumsum(gaps[..., ::-1], -1)[..., ::-1]  # gaps of length >= l
    len_at_least = np.cumsum((gaps * ell)[..., ::-1], -1)[..., ::-1]
    room = len_at_least - (ell - 1) * at_least  # sum over gaps g >= l of (g - l + 1)
    in_gaps = (units * ell ** 2 * room).sum(-1)
    d_e = nan_ratio(2 * ((n_units - 1) * cubic + in_gaps), big_l * (m * big_l * (m * big_l - 1) - square))
    return 1.0 - nan_ratio(d_o, d_e)


def unitizing_alpha(continua: Sequence[tuple[int, Sequence[Sequence[Any]]]]) -> float:
    """Krippendorff's unitizing alpha for one category: `continua` = [(text length, [spans of annotator 1, ...]),
    ...], every continuum with the same number of annotators (an annotator with no span gives []). Overlapping
    spans of one annotator are merged first. NaN when undefined (no span at all, or no room for chance)."""
    ms = {len(by_annot) for _, by_annot in continua}
    if len(ms) != 1 or min(ms) < 2:
        raise ValueError(f"every continuum needs the same number (>= 2) of annotators, got {sorted(ms)}")
    spans = {(i, a): list(ss) for i, (_, by_annot) in enumerate(continua) for a, ss in enumerate(by_annot)}
    samples, _, _, sp_s, sp_a, start, end = _span_table(spans)
    lengths = np.array([continua[i][0] for i in samples], dtype=np.int64)
    parts, units, gaps = u_alpha_parts(ms.pop(), sp_s, sp_a, start, end, len(samples), lengths)
    m = len(continua[0][1])
    return float(u_alpha_from_parts(m, parts.sum(0), np.asarray(units.sum(0)).ravel(), np.asarray(gaps.sum(0)).ravel()))


def _span_u_alpha(keys: np.ndarray, samples: pd.Index, sp_s: np.ndarray, sp_a: np.ndarray, start: np.ndarray,
                  end: np.ndarray, lengths: Mapping[Hashable, int]) -> tuple[Any, ...] | None:
    """(m, samples used, per-sample parts, unit and gap histograms) for the samples with the modal annotator count."""
    n_s = len(samples)
    per = np.bincount(keys[:, 0], minlength=n_s)
    counts = np.bincount(per)
    if len(counts) <= 2 or not counts[2:].max():
        return None
    m = int(np.flatnonzero(counts[2:] == counts[2:].max())[-1]) + 2
    use = per == m
    new_id = np.cumsum(use) - 1
    sel = use[sp_s]
    try:
        text_len = np.array([lengths[s] for s in samples[use]], dtype=np.int64)
    except KeyError as exc:
        raise ValueError(f"no text length for sample {exc.args[0]!r}") from None
    parts, units, gaps = u_alpha_parts(m, new_id[sp_s[sel]], sp_a[sel], start[sel], end[sel], int(use.sum()), text_len)
    return m, use, parts, units, gaps


def pair_match_counts(ks: np.ndarray, ka: np.ndarray, sp_s: np.ndarray, sp_a: np.ndarray, start: np.ndarray,
                      end: np.ndarray, n_s: int, n_a: int, iou: float) -> tuple[np.ndarray, ...]:
    """The spans' one-to-one matching and, per (sample, annotators a < b) that both read: (spans per (sample,
    annotator), sample, a, b, matches, spans of a, spans of b). Keys (ks, ka) are the (sample, annotator) codes
    read; spans (sp_s, sp_a, start, end) sorted by (sample, annotator, start, end). Shared by `span_agreement` and
    its windowed form (calibration/span_chunks.py)."""
    # candidate pairs: spans of different annotators a < b in one sample with IoU > threshold
    left, right = within_group_pairs(np.bincount(sp_s, minlength=n_s))
    left, right = left[sp_a[left] < sp_a[right]], right[sp_a[left] < sp_a[right]]
    inter = np.minimum(end[left], end[right]) - np.maximum(start[left], start[right])
    union = (end[left] - start[left]) + (end[right] - start[right]) - inter
    score = inter / union
    ok = (inter > 0) & (score > iou)
    left, right, score = left[ok], right[ok], score[ok]
    group = (sp_s[left] * n_a + sp_a[left]) * n_a + sp_a[right]  # (sample, a, b)
    # rows are sorted by (sample, annotator, start, end), so the row index encodes position for tie-breaking
    order = np.lexsort((right, left, -score, group))
    group, left, right = group[order], left[order], right[order]
    matched = np.zeros(len(group), dtype=bool)
    # fast path: a candidate whose two spans have no other candidate in the group is matched; the rest go greedy
    per_left = count_of(left * n_a + sp_a[right], left * n_a + sp_a[right])
    per_right = count_of(right * n_a + sp_a[left], right * n_a + sp_a[left])
    lone = (per_left == 1) & (per_right == 1)
    contested_groups = np.unique(group[~lone])
    contested = np.isin(group, contested_groups)
    matched[lone & ~contested] = True
    matched[contested] = greedy_span_matches(group[contested], left[contested], right[contested])
    # per (sample, pair): spans of each side, and matches
    n_spans = np.bincount(sp_s * n_a + sp_a, minlength=n_s * n_a)
    ko = np.lexsort((ka, ks))
    key_sample, key_annot = ks[ko], ka[ko]
    pl, pr = within_group_pairs(np.bincount(key_sample, minlength=n_s))
    keep = key_annot[pl] < key_annot[pr]
    pl, pr = pl[keep], pr[keep]
    p_sample, p_a, p_b = key_sample[pl], key_annot[pl], key_annot[pr]
    p_group = (p_sample * n_a + p_a) * n_a + p_b
    m_count = count_of(group[matched], p_group)
    na, nb = n_spans[p_sample * n_a + p_a], n_spans[p_sample * n_a + p_b]
    return n_spans, p_sample, p_a, p_b, m_count, na, nb


def span_pair_row(a: Any, b: Any, n_samples: int, t: np.ndarray, r: np.ndarray | None, ci: float) -> dict[str, Any]:
    """One annotator pair's row: `t` its summed (matched, spans_a, spans_b), `r` those per bootstrap replicate (or
    None). Shared by `span_agreement` and its windowed form (calibration/span_chunks.py)."""
    return {"a": a, "b": b, "n_samples": n_samples, "matched": int(t[0]), "spans_a": int(t[1]),
            "spans_b": int(t[2]), "precision": float(nan_ratio(t[0], t[2])), "recall": float(nan_ratio(t[0], t[1])),
            "f1": estimate_interval(float(nan_ratio(2 * t[0], t[1] + t[2])),
                                    None if r is None else nan_ratio(2 * r[:, 0], r[:, 1] + r[:, 2]), ci)}


def span_agreement(
    spans: Mapping[tuple[Hashable, Hashable], Sequence[Any]], iou: float = 0.0, *,
    lengths: Mapping[Hashable, int] | None = None, n_boot: int = 1000, seed: int = 0, ci: float = 0.95,
) -> dict[str, Any]:
    """Agreement of annotators' character spans: {(sample, annotator): [(start, end) or {"start", "end"}, ...]}.

    A key with an empty list means the annotator read the sample and marked nothing; a missing key means they did not
    read it. Spans are [start, end) code-point offsets; one annotator's spans may nest or overlap.
    - matching, per sample and annotator pair: candidate pairs have character IoU > `iou`; greedy one-to-one by
      descending IoU, ties broken by position (the first annotator's span start, end, then the second's), so the order
      in which spans are listed never changes the result (a tie on list index would);
    - pairs (annotators a < b in sorted order): matched, spans_a, spans_b, precision = matched / spans_b,
      recall = matched / spans_a (a taken as reference), f1 = 2 matched / (spans_a + spans_b), with an interval;
    - overall.span_f1: micro over annotator pairs and samples, 2 x sum matched / sum (spans_a + spans_b);
    - overall.u_alpha: Krippendorff's unitizing alpha for "marked" (needs `lengths`, each sample's text length);
      it assumes the same number of annotators on every continuum, so it uses the samples with the most common
      number of annotators (`u_alpha_samples`, `u_alpha_annotators` say which);
    - annotators: samples read, spans, micro F1 with the others.
    Intervals: percentile bootstrap over samples (`n_boot=0`: none).
    """
    if not 0 <= iou < 1:
        raise ValueError(f"iou must be in [0, 1), got {iou}")
    samples, annotators, keys, sp_s, sp_a, start, end = _span_table(spans)
    n_s, n_a = len(samples), len(annotators)
    n_spans, p_sample, p_a, p_b, m_count, na, nb = pair_match_counts(keys[:, 0], keys[:, 1], sp_s, sp_a, start, end,
                                                                      n_s, n_a, iou)
    pair_code, pair_index = np.unique(p_a * n_a + p_b, return_inverse=True)
    n_p = len(pair_code)
    # per-sample sums: [matched, spans_a + spans_b] for the micro F1, then per pair [matched, spans_a, spans_b]
    cols = np.column_stack([m_count, na + nb, m_count, na, nb]).astype(float)
    per_sample = np.zeros((n_s, 2 + 3 * n_p))
    np.add.at(per_sample, (p_sample, 0), cols[:, 0])
    np.add.at(per_sample, (p_sample, 1), cols[:, 1])
    for j in range(3):
        np.add.at(per_sample, (p_sample, 2 + 3 * pair_index + j), cols[:, 2 + j])
    overall: dict[str, Any] = {"u_alpha": None, "u_alpha_samples": 0, "u_alpha_annotators": 0}
    u_alpha = _span_u_alpha(keys, samples, sp_s, sp_a, start, end, lengths) if lengths is not None and n_s else None
    reps = u_reps = None
    if n_boot > 0:  # one draw of samples for every statistic
        reps, u_list = np.empty((n_boot, per_sample.shape[1])), []
        lo = 0
        with one_blas_thread(n_boot * per_sample.size):  # sums of counts and lengths: exact on any thread count
            for w in resample_counts(n_s, n_boot, seed, draw_chunk(n_s)):
                reps[lo:lo + len(w)] = w @ per_sample
                lo += len(w)
                if u_alpha is not None:
                    m, use, parts, units, gaps = u_alpha
                    wu = w[:, use]
                    u_list.append(u_alpha_from_parts(m, wu @ parts, np.asarray((units.T @ wu.T).T),
                                           np.asarray((gaps.T @ wu.T).T)))
        u_reps = np.concatenate(u_list) if u_list else None
    if u_alpha is not None:
        m, use, parts, units, gaps = u_alpha
        est = u_alpha_from_parts(m, parts.sum(0), np.asarray(units.sum(0)).ravel(), np.asarray(gaps.sum(0)).ravel())
        overall.update(u_alpha=estimate_interval(float(est), u_reps, ci), u_alpha_samples=int(use.sum()), u_alpha_annotators=m)
    totals = per_sample.sum(0)
    f1 = lambda s: nan_ratio(2 * s[..., 0], s[..., 1])  # noqa: E731
    pairs = []
    for j, code in enumerate(pair_code.tolist()):
        t = totals[2 + 3 * j: 5 + 3 * j]
        r = None if reps is None else reps[:, 2 + 3 * j: 5 + 3 * j]
        pairs.append(span_pair_row(annotators[code // n_a], annotators[code % n_a], int((pair_index == j).sum()),
                                   t, r, ci))
    people = []
    for a, name in enumerate(annotators):
        mine = (p_a == a) | (p_b == a)
        people.append({"annotator": name, "n_samples": int((keys[:, 1] == a).sum()),
                       "n_spans": int(n_spans.reshape(n_s, n_a)[:, a].sum()),
                       "f1_with_others": float(nan_ratio(2 * m_count[mine].sum(), (na + nb)[mine].sum()))})
    overall.update(span_f1=estimate_interval(float(f1(totals[:2])), None if reps is None else f1(reps[:, :2]), ci),
                   matched=int(totals[0]), spans_compared=int(totals[1]))
    overall = {k: overall[k] for k in ("span_f1", "matched", "spans_compared", "u_alpha", "u_alpha_samples",
                                       "u_alpha_annotators")}
    return {"iou": iou, "n_samples": n_s, "n_spans": len(start), "n_boot": n_boot, "overall": overall,
            "pairs": pairs, "annotators": people}
