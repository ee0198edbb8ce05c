"""The matcher's view of one (sample, checker) unit, for display: every candidate pair with its components,
weighted score, which thresholds it passes, and the proposed one-to-one matching.

Computed by the violations engine (calibration.schemes.violations.pairs/matching). The embedding model is
slow to load, so the view first shows a *provisional* result that needs no model (vectors already in the
project cache, else token Jaccard for the text components) and a worker replaces it with the real one.
No Qt here: the same functions run on the UI thread and in workers. Part of the violations view's adapter (the
generic window never imports it): the texts a violations pair table compares are listed here for the scheme-agnostic
embedding helper (app.gui.embedproc).
"""
from __future__ import annotations

import math
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from calibration.schemes.violations.config import COMPONENTS, MatchConfig
from calibration.schemes.violations.records import ViolationSample
from calibration.similarity.embeddings import CachedEmbedder, Embedder, VectorCache, make_embedder, parse_spec
from calibration.similarity.pairwise import EmbeddingSimilarity, JaccardSimilarity, TextSimilarity

Pair = tuple[int, int]


@dataclass(frozen=True)
class PairScore:
    gt: int
    pred: int
    components: dict[str, float | None]  # None = absent on either side
    score: float | None
    passes: dict[str, bool]  # overlap / rule / match, each strict ">" its threshold
    proposed: bool
    reason: str = ""  # why the matcher did or did not link this pair, in words


@dataclass(frozen=True)
class UnitScores:
    sample_id: str
    checker: str
    config_ref: str
    basis: str  # what the text components came from, e.g. "sentence-transformers:all-MiniLM-L6-v2" or "jaccard"
    final: bool  # False: provisional (a worker will replace it)
    pairs: tuple[PairScore, ...] = ()
    thresholds: dict[str, float] = field(default_factory=dict)

    @property
    def proposed(self) -> list[Pair]:
        return sorted((p.gt, p.pred) for p in self.pairs if p.proposed)

    def pair(self, gt: int, pred: int) -> PairScore | None:
        for p in self.pairs:
            if p.gt == gt and p.pred == pred:
                return p
        return None


class MissingVectors(Exception):
    """A cache-only embedder was asked for a text it has no vector for."""


class CacheOnlyEmbedder:
    """Answers from the vector cache or raises: lets the UI thread score a unit without loading a model."""

    def __init__(self, cache_key: str) -> None:
        self.cache_key = cache_key

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        raise MissingVectors(f"{len(texts)} text(s) not embedded yet")


_EMBEDDERS: dict[str, Embedder] = {}
_LOCK = threading.Lock()  # one model, several worker threads: encode one batch at a time


class _Locked:
    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.cache_key = inner.cache_key

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        with _LOCK:
            return self.inner.encode(texts)


def shared_embedder(spec: str) -> Embedder:
    """One embedder per spec for the whole app (the model loads once, on first encode)."""
    if parse_spec(spec)[0] == "openai":
        import app.llm.openai_embedder  # noqa: F401 - registers the backend; imported only when a config needs it
    with _LOCK:
        if spec not in _EMBEDDERS:
            _EMBEDDERS[spec] = make_embedder(spec)
        return _Locked(_EMBEDDERS[spec])


def sample_texts(samples: Iterable[ViolationSample]) -> list[str]:
    """The distinct texts the pair table compares (rule, explanation, correction; stripped, non-empty)."""
    seen: dict[str, None] = {}
    for s in samples:
        for vs in (s.ground_truth, *s.predictions.values()):
            for v in vs:
                for f in (v.rule, v.explanation, v.correction):
                    t = (f or "").strip()
                    if t:
                        seen[t] = None
    return list(seen)


def ensure_sample_vectors(project_path: str, cache: VectorCache, spec: str, samples: Iterable[ViolationSample],
                          progress: Any = None) -> int:
    """Embed the texts of `samples` missing from the project's cache in the helper process (the model stays out of
    the app); returns how many were encoded."""
    from app.gui.embedproc import ensure_vectors

    return ensure_vectors(project_path, cache, spec, sample_texts(samples), progress)


def similarity_for(config: MatchConfig, cache: VectorCache | None, *, allow_model: bool) -> TextSimilarity:
    """The config's similarity over `cache`; without `allow_model`, misses raise MissingVectors."""
    backend, _ = parse_spec(config.embedding)
    if backend == "jaccard":
        return JaccardSimilarity()
    raw = shared_embedder(config.embedding)
    inner: Embedder = raw if allow_model else CacheOnlyEmbedder(raw.cache_key)
    return EmbeddingSimilarity(CachedEmbedder(inner, cache) if cache is not None else inner)


def _opt(v: float) -> float | None:
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


def explain(pairs: list[PairScore], method: str = "greedy") -> list[PairScore]:
    """Attach the reason for each decision (calibration.schemes.violations.explain: replays the greedy order)."""
    from calibration.schemes.violations.explain import PairFacts, explain_pairs

    reasons = explain_pairs([PairFacts(p.gt, p.pred, p.score, p.passes, p.proposed) for p in pairs], method)
    return [PairScore(p.gt, p.pred, p.components, p.score, p.passes, p.proposed, r) for p, r in zip(pairs, reasons)]


def _above(value: float | None, threshold: float) -> bool:
    """The engine's strict test; a -inf threshold disables the check (even for an absent component)."""
    return threshold == -math.inf or (value is not None and value > threshold)


def score_samples(samples: Sequence[ViolationSample], checkers: Sequence[str] | None, config: MatchConfig,
                  similarity: TextSimilarity, *, basis: str, final: bool) -> dict[tuple[str, str], UnitScores]:
    """Scores of every (sample, checker) unit of `samples` in one batched engine call."""
    from calibration.schemes.violations.matching import match, score_pairs
    from calibration.schemes.violations.pairs import build_pair_table

    table = build_pair_table(samples, similarity, checkers=checkers)
    scores = score_pairs(table, config)
    matched = match(table, config, scores)
    t = config.thresholds
    th = {"overlap": t.overlap, "rule": t.rule, "match": t.match}
    p = table.pairs
    comps = p.loc[:, list(COMPONENTS)].to_numpy(dtype=np.float64)
    rows_by_group: dict[int, list[PairScore]] = {}
    for k, (g, gi, pi) in enumerate(zip(p["group"].tolist(), p["gt"].tolist(), p["pred"].tolist())):
        c = {name: _opt(comps[k, j]) for j, name in enumerate(COMPONENTS)}
        s = _opt(scores[k])
        passes = {"overlap": _above(c["overlap"], t.overlap), "rule": _above(c["rule"], t.rule),
                  "match": _above(s, t.match)}
        rows_by_group.setdefault(g, []).append(PairScore(gi, pi, c, s, passes, bool(matched[k])))
    out: dict[tuple[str, str], UnitScores] = {}
    for g, (sid, checker) in enumerate(zip(table.groups["sample_id"].tolist(), table.groups["checker"].tolist())):
        pairs = explain(rows_by_group.get(g, []), config.matching)
        out[(sid, checker)] = UnitScores(sid, checker, config.ref, basis, final, tuple(pairs), th)
    return out


def quick_scores(sample: ViolationSample, checker: str, config: MatchConfig, cache: VectorCache | None) -> UnitScores:
    """Scores without loading a model: final if the cache holds every vector, else provisional (Jaccard)."""
    if checker not in sample.predictions:
        return UnitScores(sample.id, checker, config.ref, "none", True)
    backend, _ = parse_spec(config.embedding)
    if backend != "jaccard" and cache is not None:
        try:
            sim = similarity_for(config, cache, allow_model=False)
            return score_samples([sample], [checker], config, sim, basis=sim.cache_key, final=True)[(sample.id, checker)]
        except MissingVectors:
            pass
    final = backend == "jaccard"
    return score_samples([sample], [checker], config, JaccardSimilarity(), basis="jaccard", final=final)[(sample.id, checker)]


def full_scores(samples: Sequence[ViolationSample], config: MatchConfig, cache: VectorCache | None,
                progress: Any = None, project_path: str | None = None) -> dict[tuple[str, str], UnitScores]:
    """Final scores for every unit of `samples`; for workers.

    With `project_path`, texts missing from the project's cache are embedded by the helper process first
    (app.gui.embedproc), so this process never loads the model."""
    if progress is not None:
        progress.update(0, 1, f"Scoring {len(samples)} sample(s) with {config.embedding}…")
    if project_path is not None and cache is not None:
        ensure_sample_vectors(project_path, cache, config.embedding, samples, progress)
    try:
        sim = similarity_for(config, cache, allow_model=False)
        out = score_samples(samples, None, config, sim, basis=sim.cache_key, final=True)
    except MissingVectors:
        sim = similarity_for(config, cache, allow_model=True)
        out = score_samples(samples, None, config, sim, basis=sim.cache_key, final=True)
    if progress is not None:
        progress.update(1, 1, "Scored")
    return out
