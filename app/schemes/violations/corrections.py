"""The violations scheme's corrections: match links between ground-truth and predicted violations, and the
index sets of wrong / missing ground truth, as app.corrections.SetLabels commands (undoable like any decision)."""
from __future__ import annotations

from collections.abc import Iterable, Sequence

from app.corrections import SetLabels
from app.store import Change

Pair = tuple[int, int]


def _pairs(pairs: Iterable[Pair]) -> list[list[int]]:
    return [list(p) for p in sorted({(int(g), int(p)) for g, p in pairs})]


def set_matches(sample_id: str, checker: str, pairs: Iterable[Pair], status: str, text: str) -> SetLabels:
    return SetLabels((Change(sample_id, checker, "matches", _pairs(pairs)), Change(sample_id, checker, "status", status)), text)


def accept_matches(sample_id: str, checker: str, proposed: Iterable[Pair]) -> SetLabels:
    """The human agrees with the matcher's proposal."""
    return set_matches(sample_id, checker, proposed, "accepted", "accept")


def link(sample_id: str, checker: str, current: Sequence[Pair], pair: Pair) -> SetLabels:
    """Link gt and pred; a one-to-one matching, so any other link of either side is dropped."""
    kept = [(g, p) for g, p in current if g != pair[0] and p != pair[1]]
    return set_matches(sample_id, checker, [*kept, pair], "corrected", f"link GT {pair[0] + 1} to prediction {pair[1] + 1}")


def unlink(sample_id: str, checker: str, current: Sequence[Pair], pair: Pair) -> SetLabels:
    kept = [(g, p) for g, p in current if (g, p) != tuple(pair)]
    return set_matches(sample_id, checker, kept, "corrected", f"unlink GT {pair[0] + 1} from prediction {pair[1] + 1}")


def toggle_index(sample_id: str, unit: str, kind: str, current: Iterable[int], index: int, text: str) -> SetLabels:
    """Flip one index in a set-valued target: 'gt_wrong' (unit '') or 'missing_gt' (unit = checker)."""
    s = set(current)
    s ^= {index}
    return SetLabels((Change(sample_id, unit, kind, sorted(s)),), text)
