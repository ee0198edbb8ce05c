"""Ground-truth curation in the violations view (issue #15): add a missing ground-truth violation from a text
selection, move a span's boundaries (keys, or a mouse selection), edit rule, category, explanation and correction.

Each edit is one undoable event: the annotator's whole curated list (label kind `ground_truth`, unit '') as
calibration.schemes.violations.curation reads it, validated against the text exactly as import does. The list starts
from what the view shows (the annotator's own in blind mode, else the resolved curated one, else the file's), and new
violations are appended, so ground-truth indices used by matches and `gt_wrong` stay valid.
Offsets are code points here; the text widget converts from Qt's UTF-16 positions (app/gui/textmap.py).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtWidgets import QComboBox, QDialog, QDialogButtonBox, QFormLayout, QLineEdit, QWidget

from app.corrections import SetLabels
from app.schemes.violations.store import store_of
from app.store import Change
from calibration.schemes.violations.curation import KIND, parse_ground_truth
from calibration.schemes.violations.parse import violation_json
from calibration.schemes.violations.records import ViolationSample

FIELDS = ("rule", "category", "explanation", "correction")
# the keyboard moves of a span boundary: action -> (start delta, end delta)
MOVES = {"gt_start_left": (-1, 0), "gt_start_right": (1, 0), "gt_end_left": (0, -1), "gt_end_right": (0, 1)}


def ask_violation(parent: QWidget | None, rules: Sequence[str], categories: Sequence[str],
                  initial: dict[str, Any] | None = None, title: str = "Ground-truth violation") -> dict[str, Any] | None:
    """Rule and category picked from those in the project or typed; explanation and correction typed.
    None when cancelled (tests replace this function)."""
    dlg = QDialog(parent)
    dlg.setWindowTitle(title)
    form = QFormLayout(dlg)
    initial = initial or {}
    boxes: dict[str, Any] = {}
    for name, choices in (("rule", rules), ("category", categories)):
        box = QComboBox()
        box.setEditable(True)
        box.addItems(list(choices))
        box.setCurrentText(str(initial.get(name) or ""))
        form.addRow(name.capitalize(), box)
        boxes[name] = box
    for name in ("explanation", "correction"):
        edit = QLineEdit(str(initial.get(name) or ""))
        form.addRow(name.capitalize(), edit)
        boxes[name] = edit
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
    buttons.accepted.connect(dlg.accept)
    buttons.rejected.connect(dlg.reject)
    form.addRow(buttons)
    if dlg.exec() != QDialog.DialogCode.Accepted:
        return None
    return {k: (b.currentText() if isinstance(b, QComboBox) else b.text()).strip() for k, b in boxes.items()}


def current_list(sample: ViolationSample) -> list[dict[str, Any]]:
    """The shown ground truth as label values."""
    return [violation_json(v) for v in sample.ground_truth]


def with_fields(v: dict[str, Any], fields: dict[str, Any]) -> dict[str, Any]:
    out = dict(v)
    for k in FIELDS:
        if k in fields:
            if fields[k]:
                out[k] = fields[k]
            else:
                out.pop(k, None)
    return out


def with_span(text: str, v: dict[str, Any], start: int, end: int) -> dict[str, Any]:
    return {**v, "start": start, "end": end, "quote": text[start:end]}


def command(sample: ViolationSample, value: list[dict[str, Any]], what: str) -> tuple[SetLabels | None, str]:
    """The command that sets the annotator's curated ground truth to `value`, or None and the reason it is refused."""
    parsed, problems = parse_ground_truth(sample.id, sample.text, value)
    errors = [p for p in problems if p.severity == "error"]
    if parsed is None or errors:
        return None, "; ".join(f"{p.field}: {p.message}" for p in errors) or "invalid ground truth"
    return SetLabels((Change(sample.id, "", KIND, parsed),), what), ""


def add(sample: ViolationSample, start: int, end: int, fields: dict[str, Any]) -> tuple[SetLabels | None, str]:
    if not fields.get("rule"):
        return None, "a rule is required"
    v = with_fields(with_span(sample.text, {}, start, end), fields)
    return command(sample, [*current_list(sample), v], f"add GT {len(sample.ground_truth) + 1}")


def edit(sample: ViolationSample, index: int, fields: dict[str, Any]) -> tuple[SetLabels | None, str]:
    if not fields.get("rule"):
        return None, "a rule is required"
    value = current_list(sample)
    value[index] = with_fields(value[index], fields)
    return command(sample, value, f"edit GT {index + 1}")


def move(sample: ViolationSample, index: int, start: int, end: int) -> tuple[SetLabels | None, str]:
    """GT `index` with new boundaries (clamped to the text; never empty)."""
    n = len(sample.text)
    start, end = max(0, min(start, n)), max(0, min(end, n))
    if end <= start:
        return None, "a span needs at least one character"
    value = current_list(sample)
    value[index] = with_span(sample.text, value[index], start, end)
    return command(sample, value, f"GT {index + 1}: span {start}–{end}")


def _choices(view: Any) -> tuple[list[str], list[str]]:
    """The project's rules and categories: what a human may pick for a violation."""
    store = store_of(view.project)
    return store.rules(), store.categories()


def curate(view: Any, action_id: str) -> None:
    """One curation action on the violations view's sample (`view`: its text selection, the selected ground truth,
    the project's rules and categories); an edit that changes nothing says why in the status line."""
    s = view.sample
    assert s is not None
    if action_id == "gt_add":
        span = view.text.selection()
        if span is None or span[1] <= span[0]:
            view.message.emit("Select the text of the missing violation first (drag with the mouse, or Shift+arrows)")
            return
        fields = ask_violation(view, *_choices(view), title=f"Add ground truth: {s.text[span[0]:span[1]][:60]}")
        if fields is None:
            return
        cmd, why = add(s, span[0], span[1], fields)
        new_index: int | None = len(s.ground_truth)
    else:
        i = view.sel_gt
        if i is None or i >= len(s.ground_truth):
            view.message.emit("Select a ground-truth violation first (G)")
            return
        v, new_index = s.ground_truth[i], i
        if action_id == "gt_edit":
            initial = {k: getattr(v, k) for k in FIELDS}
            fields = ask_violation(view, *_choices(view), initial, title=f"Edit GT {i + 1}")
            if fields is None:
                return
            cmd, why = edit(s, i, fields)
        elif not v.grounded:
            view.message.emit(f"GT {i + 1} has no span in the text (ungrounded): select its text and press B")
            if action_id != "gt_bounds":
                return
            span = view.text.selection()
            cmd, why = (None, "select the text first") if span is None else move(s, i, *span)
        elif action_id == "gt_bounds":
            span = view.text.selection()
            if span is None:
                view.message.emit("Select the new extent of the span with the mouse first, then press B")
                return
            cmd, why = move(s, i, *span)
        else:
            ds, de = MOVES[action_id]
            assert v.start is not None and v.end is not None
            cmd, why = move(s, i, v.start + ds, v.end + de)
    if cmd is None:
        view.message.emit(f"Ground truth not changed: {why}")
        return
    view.sel_gt = new_index
    view.ctx.session.do(cmd)
