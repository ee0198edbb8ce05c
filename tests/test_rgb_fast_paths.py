"""The rgb evaluate fast paths (issue #28) against the plain computations they replace, on generated data."""
from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from calibration.schemes.rgb.records import parse_record, record_to_json, stored_record


def _raw(rng: random.Random, i: int) -> dict[str, Any]:
    """A record as `record_to_json` writes it, with the optional fields present or not."""
    raw: dict[str, Any] = {"scheme": "rgb", "id": f"q{i}", "task": rng.choice(["noise", "rejection", "integration",
                                                                                "counterfactual"]),
                           "language": rng.choice(["en", "zh"]), "query": f"question {i}?",
                           "answer": rng.choice(["1964", ["a", ["b", "B"]], [], [["x", "y"]]]),
                           "docs": rng.choice([[], ["d1", "d2"]])}
    if rng.random() < 0.7:
        raw["response"] = f"answer {i}"
        if rng.random() < 0.5:
            raw["model"] = rng.choice(["m1", "m2"])
    if rng.random() < 0.6 or "response" not in raw:
        raw["responses"] = {m: f"{m} says {i}" for m in rng.sample(["m2", "m3", "m4"], rng.randrange(1, 4))}
    if rng.random() < 0.7:
        raw["noise_rate"] = rng.choice([0, 0.2, 1, 1.0, 0.4])
    if rng.random() < 0.3:
        raw["fakeanswer"] = rng.choice(["1958", ["f", ["g", "h"]]])
    for key in ("positive", "negative", "positive_wrong"):
        if rng.random() < 0.4:
            raw[key] = rng.choice([["p1"], [["p1", "p2"], "p3"]] if key == "positive" else [["n1", "n2"]])
    return raw


# ways a payload can differ from what record_to_json writes: the parser then decides (a record or problems)
BREAKS = [
    lambda r: r.update(id=7), lambda r: r.update(id=" "), lambda r: r.update(id=True), lambda r: r.pop("id"),
    lambda r: r.update(scheme="trace"), lambda r: r.update(scheme=None), lambda r: r.update(extra=1),
    lambda r: r.update(task="other"), lambda r: r.update(task=None), lambda r: r.update(language=3),
    lambda r: r.pop("query"), lambda r: r.update(query=None), lambda r: r.update(answer=3),
    lambda r: r.update(answer=["a", ["b", 2]]), lambda r: r.update(answer=[None]), lambda r: r.pop("answer"),
    lambda r: r.update(docs="d"), lambda r: r.update(docs=["d", ["e"]]), lambda r: r.pop("docs"),
    lambda r: r.update(response=5), lambda r: r.update(response=None), lambda r: r.update(model=2),
    lambda r: r.update(responses={}), lambda r: r.update(responses=["x"]), lambda r: r.update(responses={" ": "t"}),
    lambda r: r.update(responses={"m": 1}), lambda r: r.update(responses=None),
    lambda r: r.update(response="x", model=None, responses={"response": "y"}),
    lambda r: r.update(noise_rate=True), lambda r: r.update(noise_rate=1.5), lambda r: r.update(noise_rate=float("nan")),
    lambda r: r.update(noise_rate="0.2"), lambda r: r.update(noise_rate=None), lambda r: r.update(fakeanswer=[1]),
    lambda r: r.update(fakeanswer=None), lambda r: r.update(positive=[["a", 1]]), lambda r: r.update(positive=[["a"]]),
    lambda r: r.update(negative=[["a"]]), lambda r: r.update(positive_wrong="x"), lambda r: r.update(negative=None),
    lambda r: (r.pop("response", None), r.pop("responses", None)),
    lambda r: (r.pop("response", None), r.pop("responses", None), r.update(docs=[], positive=["p"])),
]


def test_stored_record_is_the_parsed_record_or_refuses() -> None:
    rng = random.Random(2)
    taken = refused = 0
    for i in range(600):
        raw = _raw(rng, i)
        if i % 2:
            for brk in rng.sample(BREAKS, rng.randrange(1, 3)):
                brk(raw)
        want = parse_record(copy.deepcopy(raw)).record
        try:
            got = stored_record(copy.deepcopy(raw))
        except (ValueError, KeyError):
            refused += 1
            continue  # the caller asks the parser
        taken += 1
        assert want is not None and got == want
        assert type(got.noise_rate) is type(want.noise_rate)  # 1 read back as 1.0, as the parser gives it
    assert taken > 250 and refused > 100


@pytest.mark.parametrize("seed", [0, 1])
def test_stored_record_reads_back_what_record_to_json_wrote(seed: int) -> None:
    rng = random.Random(seed)
    checked = 0
    for i in range(200):
        record = parse_record(_raw(rng, i)).record
        if record is None:  # the single response's model named again in `responses`
            continue
        assert stored_record(record_to_json(record)) == record
        checked += 1
    assert checked > 150


def test_compute_features_equal_the_per_response_functions() -> None:
    """compute_features' memos (each distinct response, answer and fake answer once; each response text normalised
    once; phrases searched per distinct text) give what original_labels, extended_need, extended_counterfactual and
    phrase_hits give per response; answers given as lists (not hashable) too."""
    import math

    import numpy as np

    from calibration.schemes.rgb.config import CATALOGUE
    from calibration.schemes.rgb.features import (
        compute_features,
        extended_counterfactual,
        extended_need,
        original_labels,
        original_view,
    )

    rng = random.Random(4)
    words = ["1964", "Paris", "the Louvre", "U.S.", "gold", "北京", "not 1958", "1958 is wrong", "insufficient information",
             "factual errors", "cable car", "  ", ""]
    shared = [("1964",), ("Paris", ("louvre", "the Louvre")), (), (("U.S.", "usa"),), ("北京",), ("gold", "cable")]
    responses, answers, languages, fakes = [], [], [], []
    for _ in range(3000):
        responses.append(" ".join(rng.choice(words) for _ in range(rng.randrange(0, 4))))
        answers.append(rng.choice(shared) if rng.random() < 0.6 else
                       [rng.choice(words) for _ in range(rng.randrange(0, 3))] if rng.random() < 0.3 else
                       tuple(rng.choice(words) for _ in range(rng.randrange(0, 3))))
        languages.append(rng.choice(["en", "zh"]))
        fakes.append(rng.choice([(), (), ("1958",), ("gold", "silver")]))
    f = compute_features(responses, answers, languages, [False] * len(responses), fakes)
    for i, (resp, els, lang, fake) in enumerate(zip(responses, answers, languages, fakes)):
        labels = original_labels(original_view(resp, lang), els)
        assert f.orig_nozero[i] == (0 not in labels) and f.orig_found[i] == (0 not in labels and 1 in labels)
        need = extended_need(resp, els)
        assert f.ext_need[i] == need or (math.isnan(need) and np.isnan(f.ext_need[i]))
        assert (f.ext_cf_rejects[i], f.ext_cf_vetoed[i]) == extended_counterfactual(resp, els, fake)
        low, view = resp.lower(), original_view(resp, lang)
        for hits, phrases, text in ((f.orig_rejection, CATALOGUE["rgb_original"]["rejection"], view),
                                    (f.orig_error, CATALOGUE["rgb_original"]["error"], view),
                                    (f.ext_rejection, CATALOGUE["rgb_extended"]["rejection"], low),
                                    (f.ext_error, CATALOGUE["rgb_extended"]["error"], low)):
            assert hits[i].tolist() == [p in text for p in phrases]
    assert len(set(responses)) < len(responses) / 2  # repeats: the memos were used
    assert f.orig_rejection.any() and f.ext_error.any()  # phrases found, and not everywhere
    assert not f.orig_rejection.all() and not f.ext_error.all()
    assert np.isinf(f.ext_need).any() and (np.isfinite(f.ext_need) & (f.ext_need > 0)).any()
    assert f.orig_found.any() and not f.orig_found.all() and (f.ext_need == -math.inf).any()
