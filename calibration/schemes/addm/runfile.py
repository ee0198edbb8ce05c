"""Parse ADDM's `results.json` run files (a run header plus a per-sample `results` array) into method results.

ADDM writes evidences as field/judgement items (`INCIDENT_SEVERITY: moderate`, `ASSURANCE_CLAIM: true`,
`STAFF_RESPONSE: dismissive`), one or more per review; they are folded into one evidence per review in the
scheme's incident shape. Items already in that shape (`severity`, `modifiers`) are taken as they are.
Snippets are located later, by `attach_run`, since a run file has no review texts.
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from calibration.grounding import DEFAULT_FUZZY_THRESHOLD, locate
from calibration.schemes.addm.policy import MODIFIERS, SEVERITIES, VERDICTS, canonical_modifier, verdict_ordinal
from calibration.schemes.addm.records import AddmSample, Incident, MethodResult, Problem, type_name, key
from calibration.schemes.fields import clip

_TRUE = {"true", "yes", "detected"}
_DISMISSIVE = {"dismissive", "negative", "bad"}


@dataclass(frozen=True)
class RunFile:
    run_id: str | None
    method: str  # `method|model` when the file names a model
    policy_id: str | None
    results: dict[str, MethodResult]  # by business id


def _severity(judgement: str) -> str | None:
    j = judgement.strip().casefold()
    return j if j in SEVERITIES else next((s for s in SEVERITIES if s in j), None)


def _evidences(raw: Any, path: str, problems: list[Problem]) -> tuple[Incident, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        problems.append(Problem(path, f"expected an array, got {type_name(raw)}"))
        return ()
    by_review: dict[str, dict[str, Any]] = {}
    for i, e in enumerate(raw):
        p = f"{path}[{i}]"
        if not isinstance(e, dict):
            problems.append(Problem(p, f"expected an evidence object, got {type_name(e)}"))
            continue
        rid = e.get("review_id")
        if not isinstance(rid, (str, int)) or isinstance(rid, bool) or not str(rid).strip():
            problems.append(Problem(f"{p}.review_id", "is required" if rid is None else f"expected a string, got {type_name(rid)}"))
            continue
        slot = by_review.setdefault(str(rid), {"severity": None, "modifiers": [], "snippet": None, "path": p})
        if isinstance(e.get("snippet"), str) and e["snippet"].strip() and slot["snippet"] is None:
            slot["snippet"] = e["snippet"]
        field = str(e.get("field", "")).upper()
        judgement = str(e.get("judgement", "")).strip().casefold()
        if "severity" in e:  # already in the scheme's shape
            sev = _severity(str(e["severity"]))
            if sev is None:
                problems.append(Problem(f"{p}.severity", f"expected one of {list(SEVERITIES)}, got {e['severity']!r}"))
            slot["severity"] = sev or slot["severity"]
            mods = e.get("modifiers") or []
            if not isinstance(mods, list):
                problems.append(Problem(f"{p}.modifiers", f"expected an array of strings, got {type_name(mods)}"))
                mods = []
            slot["modifiers"] += [canonical_modifier(m) for m in mods if isinstance(m, str)]
        elif field == "INCIDENT_SEVERITY":
            if judgement in ("none", "n/a", ""):
                continue
            sev = _severity(judgement)
            if sev is None:
                problems.append(Problem(f"{p}.judgement", f"unknown severity {e.get('judgement')!r}; item ignored", "warning"))
            slot["severity"] = sev or slot["severity"]
        elif field == "ASSURANCE_CLAIM":
            if judgement in _TRUE:
                slot["modifiers"].append(MODIFIERS[0])
        elif field == "STAFF_RESPONSE":
            if judgement in _DISMISSIVE:
                slot["modifiers"].append(MODIFIERS[1])
        else:
            problems.append(Problem(f"{p}.field", f"unknown evidence field {e.get('field')!r}; item ignored", "warning"))
    out = []
    for rid, slot in by_review.items():
        if slot["severity"] is None:
            if slot["modifiers"]:
                problems.append(Problem(slot["path"], f"review {rid!r} has modifiers but no severity; ignored", "warning"))
            continue
        out.append(Incident(rid, slot["severity"], tuple(dict.fromkeys(slot["modifiers"])), slot["snippet"]))
    return tuple(out)


def parse_run(raw: Any, method: str | None = None) -> tuple[RunFile | None, list[Problem]]:
    """A parsed run file (None on errors) and its problems; `method` overrides the file's method name."""
    problems: list[Problem] = []
    if not isinstance(raw, Mapping):
        return None, [Problem("", f"expected a results.json object, got {type_name(raw)}")]
    if method is None:
        m, model = raw.get("method"), raw.get("model")
        if not isinstance(m, str) or not m.strip():
            problems.append(Problem("method", "is required (or give the method name)"))
        else:
            method = f"{m}|{model}" if isinstance(model, str) and model.strip() else m
    results_raw = raw.get("results")
    if not isinstance(results_raw, list):
        problems.append(Problem("results", "is required" if results_raw is None else f"expected an array, got {type_name(results_raw)}"))
        results_raw = []
    results: dict[str, MethodResult] = {}
    for i, r in enumerate(results_raw):
        p = f"results[{i}]"
        if not isinstance(r, Mapping):
            problems.append(Problem(p, f"expected an object, got {type_name(r)}"))
            continue
        bid = r.get("business_id")
        if not isinstance(bid, (str, int)) or isinstance(bid, bool) or not str(bid).strip():
            problems.append(Problem(f"{p}.business_id", "is required" if bid is None else f"expected a string, got {type_name(bid)}"))
            continue
        bid = str(bid)
        if bid in results:
            problems.append(Problem(f"{p}.business_id", f"duplicate business id {bid!r}"))
            continue
        error = r.get("error")
        v = r.get("verdict")
        verdict = verdict_ordinal(v) if v is not None else None
        if v is not None and not isinstance(v, str):  # a wrong type is a broken file; an odd name, a model's slip
            problems.append(Problem(f"{p}.verdict", f"expected a verdict name (one of {list(VERDICTS)}), "
                                                    f"got {type_name(v)}"))
        elif v is not None and verdict is None:
            problems.append(Problem(f"{p}.verdict", f"unknown verdict {clip(v)} (expected one of {list(VERDICTS)}); "
                                                    "treated as missing", "warning"))
        score = r.get("risk_score")
        if score is not None and not (isinstance(score, (int, float)) and not isinstance(score, bool) and math.isfinite(score)):
            problems.append(Problem(f"{p}.risk_score", f"expected a number, got {type_name(score)}"))
            score = None
        parsed = r.get("parsed")
        if parsed is not None and not isinstance(parsed, Mapping):
            problems.append(Problem(f"{p}.parsed", f"expected an object, got {type_name(parsed)}"))
        evid = _evidences(parsed.get("evidences") if isinstance(parsed, Mapping) else None, f"{p}.parsed.evidences", problems)
        results[bid] = MethodResult(verdict, None if score is None else float(score), evid,
                                    None if error is None else str(error))
    if any(x.level == "error" for x in problems) or method is None:
        return None, problems
    rid = raw.get("run_id")
    pid = raw.get("policy_id")
    return RunFile(rid if isinstance(rid, str) else None, method, pid if isinstance(pid, str) else None, results), problems


def attach_run(samples: Sequence[AddmSample], run: RunFile, fuzzy_threshold: float = DEFAULT_FUZZY_THRESHOLD,
               ) -> tuple[list[AddmSample], list[Problem]]:
    """Samples with the run's results added as method `run.method` (snippets located in their reviews)."""
    problems: list[Problem] = []
    by_id = {s.id: s for s in samples}
    for bid in run.results:
        if bid not in by_id:
            problems.append(Problem(f"results{key(bid)}", f"business {bid!r} is not among the samples; ignored", "warning"))
    out = []
    for s in samples:
        r = run.results.get(s.id)
        if r is None:
            out.append(s)
            continue
        evid = []
        for j, e in enumerate(r.evidences):
            text = s.review_text(e.review_id)
            if text is None:
                problems.append(Problem(f"results{key(s.id)}.evidences[{j}].review_id", f"review {e.review_id!r} is not among the business's reviews", "warning"))
            if e.snippet is None:
                evid.append(e)
                continue
            loc = locate(e.snippet, text or "", fuzzy_threshold=fuzzy_threshold)
            evid.append(dataclasses.replace(e, start=loc.start, end=loc.end, how=loc.how))
        methods = dict(s.methods)
        methods[run.method] = dataclasses.replace(r, evidences=tuple(evid))
        out.append(dataclasses.replace(s, methods=methods))
    return out, problems
