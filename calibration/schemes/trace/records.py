"""Record types of the `trace` scheme: a question, retrieved documents, a response, sentence-level labels, judges.

Labels are kept exactly as given (duplicates, keys that point nowhere, nulls): the `ragbench` variant counts them
as the released dataset does, so cleaning them here would change its scores. Such oddities are reported by the
parser as warnings instead (see parse.py).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from calibration.schemes.trace.sentences import Sentence

JUDGE_METRICS: tuple[str, ...] = ("adherence", "relevance", "utilization")
ANNOTATOR = "annotator"  # the unit of a record's own sentence labels (RAGBench: the GPT-4 annotator)
LABEL_FIELDS: tuple[str, ...] = (
    "all_relevant_sentence_keys", "all_utilized_sentence_keys", "sentence_support_information",
    "unsupported_response_sentence_keys", "adherence_score",
)
# RAGBench's annotation prompt lets a response sentence be supported by these instead of document sentences.
SUPPORT_MARKERS: frozenset[str] = frozenset({"general", "supported_without_sentence", "well_known_fact", "numerical_reasoning"})


@dataclass(frozen=True, slots=True)
class SupportInfo:
    """One entry of `sentence_support_information`; `fully_supported` is None where the annotator left it null."""

    response_sentence_key: str
    fully_supported: bool | None
    supporting_sentence_keys: tuple[str, ...] | None = None
    explanation: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"response_sentence_key": self.response_sentence_key, "fully_supported": self.fully_supported}
        if self.supporting_sentence_keys is not None:
            out["supporting_sentence_keys"] = list(self.supporting_sentence_keys)
        if self.explanation is not None:
            out["explanation"] = self.explanation
        return out


@dataclass(frozen=True, slots=True)
class TraceLabels:
    """One annotator's sentence-level labels of a record. None = that field was not labeled."""

    relevant: tuple[str, ...] | None = None  # all_relevant_sentence_keys, in order, duplicates kept
    utilized: tuple[str, ...] | None = None  # all_utilized_sentence_keys
    support: tuple[SupportInfo, ...] | None = None  # sentence_support_information
    unsupported: tuple[str, ...] | None = None  # unsupported_response_sentence_keys
    adherence: bool | None = None  # adherence_score as given

    @property
    def empty(self) -> bool:
        return (self.relevant is None and self.utilized is None and self.support is None
                and self.unsupported is None and self.adherence is None)

    def sentence_support(self, response_keys: Sequence[str]) -> dict[str, bool | None]:
        """Response sentence key -> supported? An entry's boolean `fully_supported` wins; a null or missing entry
        falls back to the unsupported list (not listed = supported) when there is one; else None (unknown)."""
        flags: dict[str, bool | None] = {}
        for s in self.support or ():
            if s.fully_supported is not None or s.response_sentence_key not in flags:
                flags[s.response_sentence_key] = s.fully_supported
        unsup = None if self.unsupported is None else set(self.unsupported)
        out: dict[str, bool | None] = {}
        for k in response_keys:
            v = flags.get(k)
            out[k] = v if v is not None else (None if unsup is None else k not in unsup)
        return out

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.relevant is not None:
            out["all_relevant_sentence_keys"] = list(self.relevant)
        if self.utilized is not None:
            out["all_utilized_sentence_keys"] = list(self.utilized)
        if self.support is not None:
            out["sentence_support_information"] = [s.to_json() for s in self.support]
        if self.unsupported is not None:
            out["unsupported_response_sentence_keys"] = list(self.unsupported)
        if self.adherence is not None:
            out["adherence_score"] = self.adherence
        return out


@dataclass(frozen=True, slots=True)
class TraceRecord:
    """A RAG sample: question, documents and response with keyed sentences, the annotator's labels, judge scores.

    `judges` maps a judge name to the scores it gave (a subset of JUDGE_METRICS; a missing score is absent).
    """

    id: str
    question: str
    documents: tuple[str, ...]
    response: str
    documents_sentences: tuple[tuple[Sentence, ...], ...]
    response_sentences: tuple[Sentence, ...]
    labels: TraceLabels = field(default_factory=TraceLabels)
    judges: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    split: str | None = None
    meta: Mapping[str, Any] | None = None

    @property
    def document_keys(self) -> list[str]:
        return [k for doc in self.documents_sentences for k, _ in doc]

    @property
    def response_keys(self) -> list[str]:
        return [k for k, _ in self.response_sentences]

    @property
    def n_document_sentences(self) -> int:
        return sum(len(doc) for doc in self.documents_sentences)

    def to_json(self) -> dict[str, Any]:
        """The record as `parse_record` reads it, with the sentences always keyed (so keys survive a new splitter)."""
        out: dict[str, Any] = {
            "scheme": "trace", "id": self.id, "question": self.question, "documents": list(self.documents),
            "response": self.response,
            "documents_sentences": [[[k, s] for k, s in doc] for doc in self.documents_sentences],
            "response_sentences": [[k, s] for k, s in self.response_sentences],
        }
        out.update(self.labels.to_json())
        if self.judges:
            out["judges"] = {name: dict(scores) for name, scores in self.judges.items()}
        if self.split is not None:
            out["split"] = self.split
        if self.meta is not None:
            out["meta"] = dict(self.meta)
        return out


def human_adherent(labels: Mapping[str, Any]) -> bool | None:
    """A human's adherence verdict (scheme label kinds): `adherent` when given, else "no unsupported sentence"
    from `unsupported`; None when neither is labeled."""
    if labels.get("adherent") is not None:
        return bool(labels["adherent"])
    if labels.get("unsupported") is not None:
        return not labels["unsupported"]
    return None


def truth_labels(record: TraceRecord, labels: Mapping[str, Any]) -> TraceLabels:
    """The record's labels with the human's replacing them field by field."""
    return corrected_labels(record.labels, labels)


def corrected_labels(t: TraceLabels, labels: Mapping[str, Any]) -> TraceLabels:
    """`truth_labels` of a record whose labels are `t`: built at once (a replace() per field cost more, for every
    human-labeled sample of `concord evaluate`)."""
    relevant, utilized, support, unsupported, adherence = t.relevant, t.utilized, t.support, t.unsupported, t.adherence
    if labels.get("relevant") is not None:
        relevant = tuple(labels["relevant"])
    if labels.get("utilized") is not None:
        utilized = tuple(labels["utilized"])
    if labels.get("unsupported") is not None:
        support, unsupported = None, tuple(labels["unsupported"])
    verdict = human_adherent(labels)
    if verdict is not None:
        adherence = verdict
        if labels.get("unsupported") is None:  # a bare verdict overrides the sentence labels' adherence
            support = unsupported = None
    return TraceLabels(relevant, utilized, support, unsupported, adherence)
