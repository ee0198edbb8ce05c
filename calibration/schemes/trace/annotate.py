"""The LLM annotator's task: RAGBench's sentence-level labeling, asked of a chat model and checked strictly.

The prompt follows the structure of RAGBench's GPT-4 annotation prompt (Friel et al. 2024, appendix): the
documents as keyed sentence lines (`0a. ...`), the question, the response as keyed sentence lines (`a. ...`), and
a JSON object with the dataset's own fields (relevance_explanation, all_relevant_sentence_keys,
overall_supported_explanation, overall_supported, sentence_support_information, all_utilized_sentence_keys), so
an answer is labels in exactly the shape the dataset's annotator produced. Wording is ours.

`parse_annotation` is stricter than the importer (which keeps a file's labels as given and only warns): an
answer naming a key the sample does not have, or leaving a response sentence without an entry, is malformed and
asked again (engine.run_chat's malformed retries). Keys the model repeats are kept once (first occurrence), so
the ragbench variant's "duplicates count" rule never sees an artefact of generation.

Pure: no network, no store (app/schemes/trace/llm.py runs it on the chat engine).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from calibration.schemes.answers import answer_json
from calibration.schemes.trace.records import SUPPORT_MARKERS, SupportInfo, TraceLabels, TraceRecord

LLM_SOURCE_PREFIX = "llm:"  # machine labels (and units) of an LLM annotator: llm:<model>
PROMPT_VERSION = "1"  # part of the machine label; the prompt text itself is part of the cache key

SYSTEM_PROMPT = ("You are a careful annotator of retrieval-augmented answers. You label which document sentences "
                 "matter for a question, which ones a response used, and whether each response sentence is "
                 "supported by the documents. You answer with one JSON object and nothing else.")

_SCHEMA = """{
  "relevance_explanation": string,
  "all_relevant_sentence_keys": [string],
  "overall_supported_explanation": string,
  "overall_supported": boolean,
  "sentence_support_information": [
    {"response_sentence_key": string, "explanation": string, "supporting_sentence_keys": [string],
     "fully_supported": boolean}
  ],
  "all_utilized_sentence_keys": [string]
}"""

_RULES = f"""Fields:
- relevance_explanation: step by step, which documents hold information useful for answering the question.
- all_relevant_sentence_keys: the keys (such as "0a") of every document sentence relevant to the question, judged \
from the question and documents alone (ignore the response). Include a sentence even if only part of it is useful \
or the response did not use it; leave out sentences whose removal would not affect answering the question.
- overall_supported_explanation: assess the response's claims one by one against the documents, then conclude.
- overall_supported: true when the response as a whole is supported by the documents.
- sentence_support_information: exactly one object per response sentence, keyed by its response key (such as \
"a"). supporting_sentence_keys lists the document keys that support it, empty when it is not supported. When a \
sentence is supported but by no particular sentence use one of: "supported_without_sentence" (including saying \
the documents do not answer the question), "general" (a transition, a summary of earlier sentences, the steps to \
an answer), "well_known_fact", "numerical_reasoning". fully_supported is false whenever supporting_sentence_keys \
is empty.
- all_utilized_sentence_keys: the keys of the document sentences the response actually used.
Use only keys shown above. Allowed special support values: {", ".join(sorted(SUPPORT_MARKERS))}."""


class AnnotationError(ValueError):
    """The model answered, but not with usable labels for this sample (the message says what is wrong)."""


def keyed_documents(record: TraceRecord) -> str:
    parts = []
    for i, doc in enumerate(record.documents_sentences):
        parts.append(f"Document {i}:\n" + "\n".join(f"{k}. {text}" for k, text in doc))
    return "\n\n".join(parts)


def keyed_response(record: TraceRecord) -> str:
    return "\n".join(f"{k}. {text}" for k, text in record.response_sentences)


def user_prompt(record: TraceRecord) -> str:
    return "\n\n".join([
        "Someone answered a question from one or more documents. Review their response: for each response sentence, "
        "say whether the documents support it and which document sentences do; also say which document sentences "
        "are relevant to the question and which ones the response used.",
        "The documents, split into sentences, each with a key such as '0a.' or '0b.' to refer to it:\n```\n"
        f"{keyed_documents(record)}\n```",
        f"The question:\n```\n{record.question}\n```",
        "The response, split into sentences, each with a key such as 'a.' or 'b.' (these keys belong to the "
        f"response and are unrelated to the document keys):\n```\n{keyed_response(record)}\n```",
        f"Answer with one JSON object of this shape:\n```\n{_SCHEMA}\n```",
        _RULES,
    ])


def annotation_messages(record: TraceRecord) -> list[dict[str, str]]:
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user_prompt(record)}]


def _keys(obj: Mapping[str, Any], name: str, allowed: set[str], what: str, markers: frozenset[str] = frozenset(),
          required: bool = True) -> tuple[str, ...]:
    v = obj.get(name)
    if v is None and not required:
        return ()
    if not isinstance(v, list):
        raise AnnotationError(f"{name}: expected an array of sentence keys, got {type(v).__name__ if v is not None else 'nothing'}")
    out: list[str] = []
    for i, k in enumerate(v):
        if not isinstance(k, str):
            raise AnnotationError(f"{name}[{i}]: expected a sentence key (string), got {type(k).__name__}")
        k = k.strip().rstrip(".")  # RAGBench's own labels carry the prompt's "0b." now and then
        if k not in allowed and k not in markers:
            raise AnnotationError(f"{name}[{i}]: {k!r} is not a {what} sentence key of this sample")
        if k not in out:
            out.append(k)
    return tuple(out)


def parse_annotation(content: str | None, record: TraceRecord) -> tuple[TraceLabels, dict[str, str]]:
    """(labels, explanations) from a model answer, or AnnotationError. Every key must be one of the sample's; every
    response sentence needs exactly one support entry. `explanations` holds relevance_explanation and
    overall_supported_explanation (empty strings when missing)."""
    obj = answer_json(content, AnnotationError)
    if not isinstance(obj, dict):
        raise AnnotationError(f"expected a JSON object, got {type(obj).__name__}")
    doc_keys, resp_keys = set(record.document_keys), record.response_keys
    relevant = _keys(obj, "all_relevant_sentence_keys", doc_keys, "document")
    utilized = _keys(obj, "all_utilized_sentence_keys", doc_keys, "document")
    entries = obj.get("sentence_support_information")
    if not isinstance(entries, list):
        raise AnnotationError("sentence_support_information: expected an array with one object per response sentence")
    support: dict[str, SupportInfo] = {}
    for i, e in enumerate(entries):
        p = f"sentence_support_information[{i}]"
        if not isinstance(e, dict):
            raise AnnotationError(f"{p}: expected an object, got {type(e).__name__}")
        key = e.get("response_sentence_key")
        key = key.strip().rstrip(".") if isinstance(key, str) else key
        if not isinstance(key, str) or key not in resp_keys:
            raise AnnotationError(f"{p}.response_sentence_key: {key!r} is not a response sentence key of this sample")
        if key in support:
            raise AnnotationError(f"{p}.response_sentence_key: {key!r} has a second entry")
        fs = e.get("fully_supported")
        if not isinstance(fs, bool):
            raise AnnotationError(f"{p}.fully_supported: expected true or false, got {fs!r}")
        keys = _keys(e, "supporting_sentence_keys", doc_keys, "document", SUPPORT_MARKERS, required=False)
        if fs and not keys:
            raise AnnotationError(f"{p}: fully supported but supporting_sentence_keys is empty")
        ex = e.get("explanation")
        support[key] = SupportInfo(key, fs, keys, ex if isinstance(ex, str) else "")
    missing = [k for k in resp_keys if k not in support]
    if missing:
        raise AnnotationError(f"sentence_support_information: no entry for response sentence(s) {', '.join(missing)}")
    overall = obj.get("overall_supported")
    if overall is not None and not isinstance(overall, bool):
        raise AnnotationError(f"overall_supported: expected true or false, got {overall!r}")
    entries_ordered = tuple(support[k] for k in resp_keys)
    unsupported = tuple(k for k in resp_keys if not support[k].fully_supported)
    labels = TraceLabels(relevant, utilized, entries_ordered, unsupported,
                         overall if overall is not None else not unsupported)
    explanations = {name: obj[name] if isinstance(obj.get(name), str) else ""
                    for name in ("relevance_explanation", "overall_supported_explanation")}
    return labels, explanations


# -- the machine label: the scheme's annotator shape (what accept and the view read) plus the full labels --------
def label_value(labels: TraceLabels, explanations: Mapping[str, str], model: str) -> dict[str, Any]:
    """The stored machine label: `relevant`, `utilized`, `unsupported`, `adherent`, `support` as the dataset
    annotator's (scheme.machine_label), `labels` in the record field names (explanations included), the model."""
    return {"relevant": list(labels.relevant or ()), "utilized": list(labels.utilized or ()),
            "unsupported": list(labels.unsupported or ()), "adherent": bool(labels.adherence),
            "support": {s.response_sentence_key: list(s.supporting_sentence_keys or ()) for s in labels.support or ()},
            "labels": labels.to_json(), "explanations": dict(explanations), "model": model,
            "prompt_version": PROMPT_VERSION}


def labels_from_value(value: Mapping[str, Any]) -> TraceLabels:
    """The TraceLabels of a stored machine label (label_value's `labels`)."""
    raw = value.get("labels") or {}

    def keys(name: str) -> tuple[str, ...] | None:
        v = raw.get(name)
        return None if v is None else tuple(v)

    support = raw.get("sentence_support_information")
    return TraceLabels(
        keys("all_relevant_sentence_keys"), keys("all_utilized_sentence_keys"),
        None if support is None else tuple(
            SupportInfo(s["response_sentence_key"], s.get("fully_supported"),
                        None if s.get("supporting_sentence_keys") is None else tuple(s["supporting_sentence_keys"]),
                        s.get("explanation")) for s in support),
        keys("unsupported_response_sentence_keys"), raw.get("adherence_score"))


def is_llm_value(value: Any) -> bool:
    return isinstance(value, Mapping) and isinstance(value.get("labels"), Mapping)


__all__: Sequence[str] = ("AnnotationError", "annotation_messages", "label_value", "labels_from_value",
                          "parse_annotation", "is_llm_value")
