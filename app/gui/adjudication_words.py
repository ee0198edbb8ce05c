"""The adjudication panel's words (no Qt): which annotators' values differ from the resolved one, and the rule
that resolved the target, said as a sentence. The rule mirrors app.store.resolution.pick: an adjudicated label
wins; else (policy 'majority') the value most annotators gave, if a strict plurality; else the newest label."""
from __future__ import annotations

import json
from collections import Counter
from typing import Any


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def differing(values: dict[str, Any], resolved_by: str | None) -> list[str]:
    """Annotators whose (non-cleared) value is not the resolved value; none when every value agrees."""
    given = {a: _key(v) for a, v in values.items() if v is not None}
    if len(set(given.values())) < 2:
        return []
    won = given.get(resolved_by or "")
    return sorted(a for a, v in given.items() if v != won)


def resolution_reason(values: dict[str, Any], resolved_by: str | None, adjudicated: bool, policy: str) -> str:
    """Why `resolved_by`'s value is the resolved label. `values`: annotator -> value in the order they labeled
    (the last is the newest), None for a cleared label."""
    if resolved_by is None:
        return "not resolved"
    if adjudicated:
        return f"adjudicated: {resolved_by}'s value was chosen by an adjudicator (that always wins)"
    given = {a: _key(v) for a, v in values.items() if v is not None}
    if len(values) == 1:
        return f"only {resolved_by} labeled it"
    if not given:
        return "every label was cleared"
    if len(given) == 1:
        return f"only {resolved_by} gave a value (the others cleared theirs)"
    counts = Counter(given.values()).most_common()
    if len(counts) == 1:
        return f"all {len(given)} annotators agree"
    tally = "–".join(str(n) for _v, n in counts)
    if policy == "majority" and counts[0][1] > counts[1][1]:
        holders = [a for a, v in given.items() if v == counts[0][0]]
        newest = "" if len(holders) == 1 else f" ({resolved_by}'s, the newest of them)"
        return f"majority: {counts[0][1]} of {len(given)} annotators gave this value{newest}"
    if policy == "majority":
        return f"no majority ({tally}): the newest label wins, {resolved_by}'s"
    return f"the project resolves by the newest label: {resolved_by}'s"
