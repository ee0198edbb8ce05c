"""Generate the judge part of the demo: judge.jsonl (24 synthetic one-sentence summaries of Tannried press notes,
each scored by three judges) and judge_labels.jsonl (two annotators' labels on the first 18).

Deterministic: `python resources/demo/demo_judge.py` reproduces the committed files byte for byte.

Everything is invented. A third of the summaries change a fact of their source (a year, a number, a place): those
are "hallucinated". Three judges score each summary:
- `lumen-consistency`: a probability that the summary is consistent with its source (high means NOT hallucinated,
  like FaithBench's HHEM scores), mostly right;
- `quill-risk`: a risk score from 0 to 10 (high means hallucinated), noisy, no declared threshold (its default is
  the median score);
- `demo-llm`: a yes/no LLM judge giving 1 (consistent) or 0, right about four times in five.
The annotators `alice` and `bob` label the first 18 summaries (true = hallucinated; the last 6 wait in the queue) and mark the changed words; `alice`
misses one changed fact and `bob` flags two faithful summaries as hallucinated, so they disagree on three.
"""
from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # the shared writer beside this file
from demo_files import write_demo  # noqa: E402

RECORDS_FILE = "judge.jsonl"
LABELS_FILE = "judge_labels.jsonl"
N = 24
LABELED = 18

FACTS = [  # (subject, true detail, changed detail)
    ("The Tannried brewery opened its visitor centre in", "2019", "2015"),
    ("The HIRSCHKRAUT liqueur is macerated from", "33 alpine herbs", "45 alpine herbs"),
    ("The herb festival draws about", "9,000 visitors", "90,000 visitors"),
    ("The Kessel spring rises at", "1,240 metres", "2,400 metres"),
    ("The herb garden is open from", "May to September", "March to December"),
    ("The brewery employs", "140 people", "410 people"),
    ("The liqueur is aged in oak casks for", "six months", "six years"),
    ("The torch procession ends the festival in", "the market square", "the abbey courtyard"),
]


def build() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rng = random.Random(26)
    records, labels = [], []
    for i in range(N):
        subject, true, changed = FACTS[i % len(FACTS)]
        hallucinated = i % 3 == 1
        source = f"Press note {i + 1} from Tannried. {subject} {true}, the organisers said on Monday."
        detail = changed if hallucinated else true
        text = f"{subject} {detail}."
        start = len(subject) + 1
        mark = {"start": start, "end": start + len(detail), "label": ["Unwanted.Intrinsic"], "note": "changed fact"}
        p_consistent = min(0.99, max(0.01, (0.25 if hallucinated else 0.8) + rng.uniform(-0.3, 0.2)))
        risk = round(min(10.0, max(0.0, (6.0 if hallucinated else 3.5) + rng.gauss(0, 2.2))), 1)
        llm_right = rng.random() < 0.8
        llm = int((not hallucinated) == llm_right)
        records.append({
            "scheme": "judge", "id": f"tannried-judge-{i + 1:02d}", "text": text, "context": source,
            "judges": {
                "lumen-consistency": {"score": round(p_consistent, 3), "high_means_positive": False,
                                      "probability": True},
                "quill-risk": {"score": risk, "high_means_positive": True, "probability": False},
                "demo-llm": {"score": llm, "high_means_positive": False, "probability": True},
            },
            "positive": "hallucinated", "split": "test" if i % 4 == 3 else "train", "meta": {"note": i + 1}})
        for annotator in ("alice", "bob") if i < LABELED else ():
            says = hallucinated
            if annotator == "alice" and i == 7:
                says = False  # a changed fact she missed
            if annotator == "bob" and i in (3, 12):
                says = True  # a faithful summary he doubted
            marks = [mark] if says and hallucinated else (
                [{**mark, "label": ["Questionable"], "note": "sounds off"}] if says else [])
            labels.append({"scheme": "judge", "sample": f"tannried-judge-{i + 1:02d}", "annotator": annotator,
                           "label": says, "marks": marks})
    return records, labels


if __name__ == "__main__":
    write_demo(HERE, RECORDS_FILE, LABELS_FILE, build)
