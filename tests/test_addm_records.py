"""Parsing ADDM records (problems with field paths, snippet grounding) and ADDM results.json run files."""
from __future__ import annotations

import copy

from calibration.schemes.addm import attach_run, parse_record, parse_records, parse_run

RECORD = {
    "scheme": "addm", "id": "biz-1",
    "reviews": [{"review_id": "r1", "text": "The waiter said the dish was nut-free. It was not! I had a reaction."},
                {"review_id": "r2", "text": "Lovely pasta, friendly staff."}],
    "ground_truth": {"verdict": "Critical Risk", "incidents": [
        {"review_id": "r1", "severity": "moderate", "modifiers": ["False assurance"], "snippet": "said the dish was nut-free"}]},
    "methods": {"amos": {"verdict": "Critical Risk", "risk_score": 10, "evidences": [
        {"review_id": "r1", "severity": "Moderate", "modifiers": ["false  ASSURANCE"], "snippet": "IT WAS NOT!"}]},
        "direct": {"verdict": "high", "evidences": [
            {"review_id": "r1", "severity": "mild", "modifiers": [], "snippet": "the waitor said the dish was nut free"},
            {"review_id": "r2", "severity": "mild", "snippet": "terrible food"},
            {"review_id": "r9", "severity": "mild"}]},
        "rag": {"error": "rate limited"}},
}


def paths(problems):
    return {(p.path, p.level) for p in problems}


def test_valid_record_with_grounding() -> None:
    s, probs = parse_record(RECORD)
    assert s is not None and s.id == "biz-1" and s.verdict == 2
    g = s.incidents[0]
    assert (g.how, s.review_text("r1")[g.start:g.end]) == ("exact", "said the dish was nut-free")
    amos = s.methods["amos"]
    assert amos.verdict == 2 and amos.risk_score == 10.0
    e = amos.evidences[0]
    assert e.severity == "moderate" and e.modifiers == ("False assurance",) and e.how == "casefold"
    direct = s.methods["direct"].evidences
    assert direct[0].how == "fuzzy" and direct[0].grounded
    assert direct[1].how == "ungrounded" and not direct[1].grounded
    assert s.methods["direct"].risk_score is None and s.methods["rag"].error == "rate limited"
    assert paths(probs) == {('methods["direct"].evidences[1].snippet', "warning"),
                            ('methods["direct"].evidences[2].review_id', "warning")}


def test_every_problem_has_a_field_path() -> None:
    bad = copy.deepcopy(RECORD)
    bad["reviews"].append({"review_id": "r2", "text": "dup"})
    bad["reviews"].append({"text": "no id"})
    bad["ground_truth"]["verdict"] = "Medium"
    bad["ground_truth"]["incidents"] += [{"review_id": "r7", "severity": "mild"}, {"review_id": "r1", "severity": "awful"},
                                         {"review_id": "r1", "severity": "mild", "modifiers": "x"}]
    bad["methods"]["amos"]["risk_score"] = "high"
    bad["methods"]["amos"]["verdict"] = "soon"
    bad["methods"]["amos"]["evidences"][0]["modifiers"] = ["Rude chef", 3]
    bad["methods"]["x"] = []
    s, probs = parse_record(bad)
    assert s is None
    assert paths(probs) >= {
        ("reviews[2].review_id", "error"), ("reviews[3].review_id", "error"), ("ground_truth.verdict", "error"),
        ("ground_truth.incidents[1].review_id", "error"), ("ground_truth.incidents[2].severity", "error"),
        ("ground_truth.incidents[3].modifiers", "error"), ('methods["amos"].risk_score', "error"),
        ('methods["amos"].verdict', "error"), ('methods["amos"].evidences[0].modifiers[0]', "warning"),
        ('methods["amos"].evidences[0].modifiers[1]', "error"), ('methods["x"]', "error")}
    assert all(str(p).startswith(p.path) for p in probs)


def test_required_fields_and_batches() -> None:
    s, probs = parse_record({"scheme": "addm"})
    assert s is None and {p.path for p in probs} >= {"id", "reviews", "ground_truth"}
    assert parse_record([1])[1][0].path == ""
    assert parse_record(dict(RECORD, scheme="violations"))[1][0].path == "scheme"
    ok = dict(RECORD, id=7)  # integer ids are read as strings
    samples, problems = parse_records([RECORD, ok, RECORD])
    assert [x.id for x in samples] == ["biz-1", "7"]
    assert (2, "id") in {(i, p.path) for i, p in problems if p.level == "error"}


RUN = {"run_id": "G1_allergy_V2", "policy_id": "G1_allergy_V2", "method": "amos", "model": "gpt-5-nano",
       "unified_scores": {"auprc": 0.8}, "results": [
           {"business_id": "biz-1", "verdict": "Critical Risk", "risk_score": 10, "parsed": {"evidences": [
               {"evidence_id": "E1", "review_id": "r1", "field": "INCIDENT_SEVERITY", "judgement": "Moderate incident",
                "snippet": "the dish was nut-free"},
               {"evidence_id": "E1_AC", "review_id": "r1", "field": "ASSURANCE_CLAIM", "judgement": "true"},
               {"evidence_id": "E2", "review_id": "r2", "field": "STAFF_RESPONSE", "judgement": "dismissive"},
               {"evidence_id": "E3", "review_id": "r2", "field": "INCIDENT_SEVERITY", "judgement": "none"}]}},
           {"business_id": "biz-2", "verdict": "Low Risk", "error": "timeout"},
           {"business_id": "biz-3", "verdict": "whatever"}]}


def test_parse_run_file_folds_field_judgement_items() -> None:
    run, probs = parse_run(RUN)
    assert run is not None and run.method == "amos|gpt-5-nano" and run.run_id == "G1_allergy_V2"
    r = run.results["biz-1"]
    assert r.verdict == 2 and r.risk_score == 10.0 and len(r.evidences) == 1
    e = r.evidences[0]
    assert (e.review_id, e.severity, e.modifiers, e.snippet) == ("r1", "moderate", ("False assurance",), "the dish was nut-free")
    assert run.results["biz-2"].error == "timeout"
    assert run.results["biz-3"].verdict is None and run.results["biz-3"].risk_score is None
    assert paths(probs) == {("results[0].parsed.evidences[2]", "warning"), ("results[2].verdict", "warning")}


def test_parse_run_refuses_wrong_types() -> None:
    """A value of the wrong type is a broken file, not a model's slip: an error with its path (issue #24)."""
    bad = {"method": "m", "results": [{"business_id": "b", "risk_score": "NaN", "verdict": ["High Risk"],
                                       "parsed": "oops"}]}
    run, probs = parse_run(bad)
    assert run is None
    assert paths(probs) == {("results[0].risk_score", "error"), ("results[0].verdict", "error"),
                            ("results[0].parsed", "error")}


def test_parse_run_errors_and_attach() -> None:
    assert parse_run({"results": []})[0] is None
    assert parse_run({"method": "m", "results": [{"verdict": "Low"}]})[1][0].path == "results[0].business_id"
    run, _ = parse_run(RUN, method="amos-v1")
    s, _ = parse_record(RECORD)
    merged, probs = attach_run([s], run)
    e = merged[0].methods["amos-v1"].evidences[0]
    assert e.grounded and merged[0].review_text("r1")[e.start:e.end] == "the dish was nut-free"
    assert set(merged[0].methods) == {"amos", "direct", "rag", "amos-v1"}
    assert {p.path for p in probs} == {'results["biz-2"]', 'results["biz-3"]'}
