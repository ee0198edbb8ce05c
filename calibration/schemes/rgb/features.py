"""What the checkers need from each response, computed once, so any number of configs is cheap numpy work.

Everything a config can change acts on per-response facts that do not depend on the config:
- which catalogue phrase occurs in the response (a responses x phrases hit matrix per variant and list), in the
  variant's own view of the text (original: as given, zh spaces removed, case-sensitive; extended: lower-cased);
- original: whether every answer element was found (RGB's "no 0 and a 1") and whether none was missed ("no 0");
- extended: `need`, the largest overlap threshold at which the answer still counts as found
  (min over elements of max over alternatives of: +inf for a substring or normalised hit, else token overlap),
  so "correct at threshold t" is `need >= t`; and the two counterfactual facts (explicit rejection of the fake
  answer; the fake answer present without the correct one, which vetoes a correction).
`decide` then turns features and configs into configs x responses decision matrices, one per label type.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import ahocorasick
import numpy as np

from calibration.schemes.rgb.config import CATALOGUE, CheckerConfig
from calibration.schemes.rgb.records import Element, RGBRecord
from calibration.schemes.rgb.text import normalize_answer, token_overlap, tokens, truth_normal, truth_tokens

LABELS: tuple[str, ...] = ("correct", "rejected", "error_detected", "error_corrected")


def phrase_hits(texts: Sequence[str], phrases: Sequence[str]) -> np.ndarray:
    """(len(texts), len(phrases)) bool: phrase j is a substring of text i.

    One Aho-Corasick pass per text (pyahocorasick) finds every phrase, overlapping and nested ones included; on 100k
    responses and ~50 phrases that is ~10x faster than a loop of `phrase in text` per pair."""
    out = np.zeros((len(texts), len(phrases)), dtype=bool)
    index: dict[str, int] = {}
    for j, p in enumerate(phrases):
        index.setdefault(p, j)
    if not index:
        return out
    automaton = ahocorasick.Automaton()
    for p, j in index.items():
        if p:
            automaton.add_word(p, j)
    rows: list[int] = []
    cols: list[int] = []
    if len(automaton):
        automaton.make_automaton()
        for i, t in enumerate(texts):
            for _, j in automaton.iter(t):
                rows.append(i)
                cols.append(j)
    out[rows, cols] = True
    if "" in index:  # the empty phrase is in every text
        out[:, index[""]] = True
    for col, phrase in enumerate(phrases):  # a repeated phrase gets its first copy's column
        if index[phrase] != col:
            out[:, col] = out[:, index[phrase]]
    return out


def _hits_of_distinct(texts: Sequence[str], *phrase_lists: Sequence[str]) -> list[np.ndarray]:
    """`phrase_hits(texts, phrases)` for each list, each distinct text searched once (its row then copied to its
    repeats: RGB's responses repeat, e.g. the rejection sentence its prompt asks for)."""
    row_of: dict[str, int] = {}
    rows = [row_of.setdefault(t, len(row_of)) for t in texts]
    if len(row_of) == len(texts):
        return [phrase_hits(texts, phrases) for phrases in phrase_lists]
    distinct = list(row_of)
    return [phrase_hits(distinct, phrases)[rows].reshape(len(texts), len(phrases)) for phrases in phrase_lists]


def original_view(response: str, language: str) -> str:
    """RGB's predict(): for zh datasets every space is removed before any check."""
    return response.replace(" ", "") if language == "zh" else response


def original_labels(view: str, elements: Sequence[Element]) -> list[int]:
    """RGB's checkanswer on the (zh: despaced) response: 1 = element found (any alternative), 0 = not."""
    low = view.lower()
    out = []
    for el in elements:
        if isinstance(el, str):
            out.append(int(el.lower() in low))
        else:
            out.append(int(any(a.lower() in low for a in el)))
    return out


class _Response:
    """One response's lower-cased, normalised and tokenised forms, each made on first use (most answers are found
    by the plain substring test, which needs no normalisation)."""

    __slots__ = ("text", "low", "_norm", "_toks")

    def __init__(self, text: str, low: str | None = None) -> None:
        self.text = text
        self.low = text.lower() if low is None else low
        self._norm: str | None = None
        self._toks: frozenset[str] | None = None

    @property
    def norm(self) -> str:
        if self._norm is None:
            self._norm = normalize_answer(self.text)
        return self._norm

    @property
    def toks(self) -> frozenset[str]:
        if self._toks is None:
            self._toks = tokens(self.norm)
        return self._toks


def extended_need(response: str | _Response, elements: Sequence[Element]) -> float:
    """Largest threshold at which every element counts as found (see the module docstring); -inf for no elements."""
    if not elements:
        return -math.inf
    r = response if isinstance(response, _Response) else _Response(response)
    need = math.inf
    for el in elements:
        best = -math.inf
        for alt in ((el,) if isinstance(el, str) else el):
            if alt.lower() in r.low:
                best = math.inf
                break
            n = truth_normal(alt)
            if n and n in r.norm:
                best = math.inf
                break
            best = max(best, token_overlap(truth_tokens(alt), r.toks))
        if best < need:
            need = best
            if need == -math.inf:
                break
    return need


def extended_counterfactual(response: str | _Response, elements: Sequence[Element],
                            fakes: Sequence[str]) -> tuple[bool, bool]:
    """(explicit rejection of the fake answer, correction vetoed): the seed's detects_error pattern rule and the
    "repeats the counterfactual without the correct answer" clause of corrects_error. `fakes` are the fake
    answer's strings; each non-empty one is tried (the seed has one string; a list fake answer counts when any of
    its strings does)."""
    fakes = [f for f in fakes if f]
    if not fakes:
        return False, False
    r = response if isinstance(response, _Response) else _Response(response)
    low = r.low
    rejects = any(f"not {f.lower()}" in low or f"{f.lower()} is wrong" in low for f in fakes)
    norm = r.norm
    if not any(truth_normal(f) in norm for f in fakes):
        return rejects, False
    correct_present = all(any(truth_normal(a) in norm for a in ((el,) if isinstance(el, str) else el))
                          for el in elements)
    return rejects, not correct_present


@dataclass(frozen=True)
class Features:
    """Per-response facts (rows = responses, in input order). A variant not asked for has (n, 0) / empty arrays
    and `variants` says which were computed."""

    full_noise: np.ndarray  # bool: noise rate 1, where RGB counts a rejection as correct
    orig_rejection: np.ndarray  # (n, P) bool over CATALOGUE["rgb_original"]["rejection"]
    orig_error: np.ndarray
    orig_found: np.ndarray  # bool: no 0 label and at least one 1
    orig_nozero: np.ndarray  # bool: no 0 label
    ext_rejection: np.ndarray  # (n, P) bool over CATALOGUE["rgb_extended"]["rejection"]
    ext_error: np.ndarray
    ext_need: np.ndarray  # float64
    ext_cf_rejects: np.ndarray  # bool
    ext_cf_vetoed: np.ndarray  # bool
    variants: tuple[str, ...] = ("rgb_original", "rgb_extended")

    @property
    def n(self) -> int:
        return int(self.full_noise.shape[0])

    @cached_property
    def patterns(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Per hit matrix: its distinct rows and each response's row index (computed once, reused by every decide)."""
        names = {"rgb_original": ("orig_rejection", "orig_error"), "rgb_extended": ("ext_rejection", "ext_error")}
        return {name: _patterns(getattr(self, name)) for v in self.variants for name in names[v]}


def compute_features(responses: Sequence[str], answers: Sequence[Sequence[Element]], languages: Sequence[str],
                     full_noise: Sequence[bool], fakeanswers: Sequence[Sequence[str]] | None = None,
                     variants: Sequence[str] = ("rgb_original", "rgb_extended")) -> Features:
    """Features of many responses. `answers[i]` is the answer's elements (a bare string answer is one element);
    `fakeanswers[i]` the fake answer's strings (empty when there is none). Only `variants` are computed."""
    n = len(responses)
    if not (len(answers) == len(languages) == len(full_noise) == n) or (fakeanswers is not None and len(fakeanswers) != n):
        raise ValueError("responses, answers, languages, full_noise (and fakeanswers) must have the same length")
    unknown = set(variants) - set(CATALOGUE)
    if unknown:
        raise ValueError(f"unknown variant(s) {sorted(unknown)}")
    fakes = fakeanswers if fakeanswers is not None else [()] * n
    none = np.zeros((n, 0), dtype=bool)
    empty = np.zeros(0, dtype=bool)
    orig = {"orig_rejection": none, "orig_error": none, "orig_found": empty, "orig_nozero": empty}
    ext = {"ext_rejection": none, "ext_error": none, "ext_need": np.zeros(0), "ext_cf_rejects": empty,
           "ext_cf_vetoed": empty}
    if "rgb_original" in variants:
        views = [original_view(r, lang) for r, lang in zip(responses, languages)]
        found = np.zeros(n, dtype=bool)
        nozero = np.zeros(n, dtype=bool)
        # a response and answer seen before (RGB's responses repeat, e.g. the rejection sentence its prompt asks for)
        done: dict[tuple[object, ...], tuple[bool, bool]] = {}
        for i, (view, els) in enumerate(zip(views, answers)):
            key: tuple[object, ...] | None = (view, els)
            try:
                got = done.get(key)  # type: ignore[arg-type]
            except TypeError:  # an answer given as a list: not kept
                got = key = None
            if got is None:
                labels = original_labels(view, els)
                got = (0 not in labels, 0 not in labels and 1 in labels)
                if key is not None:
                    done[key] = got
            nozero[i], found[i] = got
        oc = CATALOGUE["rgb_original"]
        rejection, error = _hits_of_distinct(views, oc["rejection"], oc["error"])
        orig = {"orig_rejection": rejection, "orig_error": error, "orig_found": found, "orig_nozero": nozero}
    if "rgb_extended" in variants:
        lowered = [r.lower() for r in responses]
        need = np.empty(n, dtype=np.float64)
        cf_rej = np.zeros(n, dtype=bool)
        cf_veto = np.zeros(n, dtype=bool)
        made: dict[tuple[object, ...], tuple[float, bool, bool]] = {}  # a response, answer and fake seen before
        texts: dict[str, _Response] = {}  # a response text seen before: normalised and tokenised once
        for i, (resp, low, els, fake) in enumerate(zip(responses, lowered, answers, fakes)):
            key = (resp, els, fake)
            try:
                got = made.get(key)
            except TypeError:  # an answer or fake answer given as a list: not kept
                got = key = None
            if got is None:
                r = texts.get(resp)
                if r is None:
                    r = texts[resp] = _Response(resp, low)
                got = (extended_need(r, els), *(extended_counterfactual(r, els, fake) if fake else (False, False)))
                if key is not None:
                    made[key] = got
            need[i], cf_rej[i], cf_veto[i] = got
        ec = CATALOGUE["rgb_extended"]
        rejection, error = _hits_of_distinct(lowered, ec["rejection"], ec["error"])
        ext = {"ext_rejection": rejection, "ext_error": error, "ext_need": need, "ext_cf_rejects": cf_rej,
               "ext_cf_vetoed": cf_veto}
    return Features(full_noise=np.asarray(full_noise, dtype=bool).reshape(n), **orig, **ext,
                    variants=tuple(v for v in CATALOGUE if v in variants))


def features_from_records(records: Sequence[RGBRecord],
                          variants: Sequence[str] = ("rgb_original", "rgb_extended")) -> Features:
    return compute_features([r.response for r in records], [r.elements for r in records],
                            [r.language for r in records], [r.full_noise for r in records],
                            [r.fake_strings for r in records], variants)


def _patterns(hits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct rows, row index of each response). Rows are packed into bytes and then 64-bit words first, so the
    sort is over integers, not over a void dtype (np.unique(axis=0) on bools is ~50x slower)."""
    n, p = hits.shape
    if p == 0:
        return np.zeros((1, 0), dtype=bool), np.zeros(n, dtype=np.int64)
    packed = np.packbits(hits, axis=1, bitorder="little")
    width = -(-packed.shape[1] // 8) * 8
    words = np.zeros((n, width), dtype=np.uint8)
    words[:, :packed.shape[1]] = packed
    codes = words.view(np.uint64)
    if codes.shape[1] == 1:
        _, first, inverse = np.unique(codes[:, 0], return_index=True, return_inverse=True)
    else:
        _, first, inverse = np.unique(codes, axis=0, return_index=True, return_inverse=True)
    return hits[first], inverse.reshape(-1)


def _any_on(patterns: tuple[np.ndarray, np.ndarray], masks: np.ndarray) -> np.ndarray:
    """(configs, n) bool: some switched-on phrase hits. Works on the distinct hit patterns (few: most responses hit
    no phrase or one), then spreads them back, so the cost is ~configs x patterns, not configs x n x phrases."""
    distinct, inverse = patterns
    on = (masks.astype(np.int32) @ distinct.T.astype(np.int32)) > 0  # (configs, patterns)
    return on[:, inverse]


def _masks(configs: Sequence[CheckerConfig], variant: str, field: str, kind: str) -> np.ndarray:
    catalogue = CATALOGUE[variant][kind]
    index = {p: j for j, p in enumerate(catalogue)}
    m = np.zeros((len(configs), len(catalogue)), dtype=bool)
    for i, c in enumerate(configs):
        for p in getattr(c, field):
            m[i, index[p]] = True
    return m


@dataclass(frozen=True)
class Decisions:
    """configs x responses decision matrices, one per label type (see LABELS)."""

    configs: tuple[CheckerConfig, ...]
    correct: np.ndarray
    rejected: np.ndarray
    error_detected: np.ndarray
    error_corrected: np.ndarray

    def label(self, name: str) -> np.ndarray:
        if name not in LABELS:
            raise KeyError(f"unknown label type {name!r}; expected one of {', '.join(LABELS)}")
        return getattr(self, name)


def decide(features: Features, configs: Sequence[CheckerConfig]) -> Decisions:
    """Decisions of every config on every response (rows in `configs` order)."""
    configs = tuple(configs)
    n, c = features.n, len(configs)
    out = {k: np.zeros((c, n), dtype=bool) for k in LABELS}
    for variant in ("rgb_original", "rgb_extended"):
        rows = np.array([i for i, cfg in enumerate(configs) if cfg.variant == variant], dtype=np.int64)
        if rows.size == 0:
            continue
        if variant not in features.variants:
            raise ValueError(f"features were computed without {variant}; pass it in `variants`")
        group = [configs[i] for i in rows]
        if variant == "rgb_original":
            rej = _any_on(features.patterns["orig_rejection"], _masks(group, variant, "rejection_phrases", "rejection"))
            det = _any_on(features.patterns["orig_error"], _masks(group, variant, "error_keywords", "error"))
            correct = (rej & features.full_noise) | (~rej & features.orig_found)
            corrected = det & (rej | features.orig_nozero)
        else:
            rej = _any_on(features.patterns["ext_rejection"], _masks(group, variant, "rejection_phrases", "rejection"))
            det = _any_on(features.patterns["ext_error"], _masks(group, variant, "error_keywords", "error"))
            rule = np.array([cfg.counterfactual_rule for cfg in group], dtype=bool)[:, None]
            det = det | (rule & features.ext_cf_rejects)
            thresholds = np.array([cfg.overlap_threshold for cfg in group], dtype=np.float64)[:, None]
            found = features.ext_need >= thresholds
            wins = np.array([cfg.rejection_wins for cfg in group], dtype=bool)[:, None]
            correct = found & ~(wins & rej)
            corrected = found & ~features.ext_cf_vetoed
        out["correct"][rows] = correct
        out["rejected"][rows] = rej
        out["error_detected"][rows] = det
        out["error_corrected"][rows] = corrected
    return Decisions(configs, **out)
