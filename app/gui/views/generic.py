"""The generic detail view: any registered scheme without a view of its own is reviewable here.

It shows what the scheme protocol alone gives: the record as import reads it (`scheme.to_json`, pretty-printed,
as plain text), the machine's label of the unit, and the human labels of every kind the scheme accepts (per-sample
kinds read at unit ''). Accept records `scheme.accept(machine label)`; skip, flag and notes are the window's
common actions. Nothing here names a scheme.
"""
from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from app.corrections import Commit, SetLabels
from app.gui.blind import HIDDEN_NOTE
from app.gui.models import Column, RecordTableModel
from app.gui.plaintext import plain_label
from app.gui.views.base import DetailView, ViewContext, column, make_table, side_by_side, status_label, title_label, view_layout
from app.store import Change
from calibration.schemes.base import Scheme, get


def pretty(value: Any) -> str:
    """JSON for people: indented, non-ASCII kept, keys in the record's own order."""
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def _short(value: Any, limit: int = 200) -> str:
    text = "" if value is None else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


LABEL_COLUMNS = (Column("kind", "Kind"), Column("value", "Human label (resolved)"), Column("about", "About"))


def _text_box(name: str) -> QPlainTextEdit:
    box = QPlainTextEdit()  # plain text by construction: markup in the data is shown as typed
    box.setObjectName(name)
    box.setReadOnly(True)
    box.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
    box.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
    return box


class GenericView(DetailView):
    """Not registered under a scheme name: app.gui.views.view_class() falls back to it."""

    scheme = ""
    actions = frozenset({"next_checker"})

    def __init__(self, ctx: ViewContext, parent: QWidget | None = None) -> None:
        super().__init__(ctx, parent)
        self.record: Any = None
        self.scheme_obj: Scheme | None = None
        self.machine: Any = None
        self.machine_source = ""
        self.labels: dict[str, Any] = {}
        self._build()

    def _build(self) -> None:
        lay, head = view_layout(self)
        self.title = title_label()
        self.status = status_label()
        self.status.setObjectName("generic_status")
        head.addWidget(self.title, 1)
        head.addWidget(self.status)

        self.record_box = _text_box("generic_record")
        self.machine_box = _text_box("generic_machine")
        self.machine_title = plain_label("Machine label")
        self.label_model = RecordTableModel(LABEL_COLUMNS, self)
        self.label_table = make_table(self.label_model, 1)
        self.label_table.setObjectName("generic_labels")
        self.note = plain_label(wrap=True, selectable=True)
        self.note.setObjectName("generic_note")

        left = column("Record (as imported)", (self.record_box, 1))
        right = column(self.machine_title, (self.machine_box, 1),
                       "Human labels (A accepts the machine's label; S skip, F flag, E note)", (self.label_table, 1),
                       self.note)
        lay.addWidget(side_by_side(left, right, (3, 2)), 1)

    # -- showing ---------------------------------------------------------------------------------------------------
    def show_unit(self, row: dict[str, Any]) -> None:
        scheme = get(row["scheme"])  # an unknown scheme raises: the window shows the failure
        sid, unit = row["sample_id"], row["unit"]
        records = self.project.samples.records(scheme.name, [sid])
        if not records:
            raise LookupError(f"sample {sid!r} could not be read back as a {scheme.name} record")
        self.row, self.scheme_obj, self.record = row, scheme, records[0]
        found = self.project.samples.machine_label(sid, unit)
        self.machine = None if found is None else found.get("value")
        self.machine_source = "" if found is None else str(found.get("source") or "")
        self.title.setText(f"{sid} · {scheme.unit_noun} {unit or self.empty_unit} · {scheme.title}")
        self.record_box.setPlainText(pretty(scheme.to_json(self.record)))
        self._load_labels()

    def refresh(self) -> None:
        if self.row is not None:
            self._load_labels()

    def _render_machine(self) -> None:
        """The machine's label, or while it is hidden (blind mode without anchoring) a line saying so: here the
        human's only decision is to accept it, so A first reveals it and a second A accepts it."""
        if self.machine_hidden():
            self.machine_title.setText("Machine label")
            self.machine_box.setPlainText(f"({HIDDEN_NOTE}: here A shows it, then A accepts it)")
            return
        self.machine_title.setText(f"Machine label ({self.machine_source})" if self.machine_source else "Machine label")
        self.machine_box.setPlainText("(none yet)" if self.machine is None else pretty(self.machine))

    def _target_unit(self, kind: str) -> str:
        assert self.row is not None and self.scheme_obj is not None
        k = self.scheme_obj.label_kinds.get(kind)
        return "" if k is not None and k.per_sample else self.row["unit"]

    def _load_labels(self) -> None:
        assert self.row is not None and self.scheme_obj is not None
        sid = self.row["sample_id"]
        every = self.sample_labels(sid)
        self.labels = {k: every.get((self._target_unit(k), k)) for k in self.scheme_obj.label_kinds}
        self.label_model.set_records([
            {"kind": k, "value": _short(self.labels[k]), "about": kind.description,
             "_tip": "" if self.labels[k] is None else pretty(self.labels[k])}
            for k, kind in self.scheme_obj.label_kinds.items()])
        status = self.labels.get("status") or "unlabeled"
        self.status.setText(f"status: {status}")
        self._render_machine()
        note = self.labels.get("note")
        self.note.setText(f"Note: {note}" if note else "")

    # -- decisions -------------------------------------------------------------------------------------------------
    def accept_command(self) -> SetLabels | None:
        if self.row is None or self.scheme_obj is None:
            return None
        if self.machine_hidden():  # reveal only: no label of the human's own to commit in this view
            return Commit((), "show the machine's label", (self.row["sample_id"], self.row["unit"]))
        if self.machine is None:
            self.message.emit("No machine label for this unit yet: nothing to accept (S skip, F flag)")
            return None
        values = self.scheme_obj.accept(self.machine)
        sid = self.row["sample_id"]
        changes = tuple(Change(sid, self._target_unit(kind), kind, value) for kind, value in values.items())
        return SetLabels(changes, "accept")

    def units_of_sample(self) -> list[str]:
        if self.row is None:
            return []
        return [u["unit"] for u in self.project.units.units_for_sample(self.row["sample_id"])]

    def handle(self, action_id: str) -> bool:
        if self.row is None or action_id != "next_checker":
            return False
        units, unit = self.units_of_sample(), self.row["unit"]
        if len(units) > 1 and unit in units:
            self.request_unit.emit(self.row["sample_id"], units[(units.index(unit) + 1) % len(units)])
        return True
