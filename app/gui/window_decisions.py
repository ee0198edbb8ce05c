"""The main window's decisions: accept, skip, flag, note, clear, undo/redo and the views' own actions, each a command
handed to the Session (which persists it as an event), and keeping the list and the pane in step after one. It
reaches the list and the pane through their interfaces (window_context.py); `go_next`, `recount` (the status bar's
progress) and `auto_advance` (the Decide menu's toggle) are handed to it."""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QWidget

from app.corrections import SetLabels, set_note, set_status
from app.gui.plaintext import ask_text
from app.gui.window_context import DetailPane, ListPane, WindowContext
from app.gui.window_parts import Part, guarded


class DecisionsPart(Part):
    def __init__(self, ctx: WindowContext, units: ListPane, detail: DetailPane, *, go_next: Callable[[], None],
                 recount: Callable[[], None], auto_advance: Callable[[], bool], dialog_parent: QWidget,
                 parent: QObject | None = None) -> None:
        super().__init__(ctx, parent)
        self.units = units
        self.detail = detail
        self._go_next = go_next
        self._recount = recount
        self._auto_advance = auto_advance
        self._dialog_parent = dialog_parent

    @guarded("Could not update the window after a decision (the decision itself was saved)", "changed")
    def after_change(self, sample_id: str, unit: str, replay: bool) -> None:
        p = self.project
        if p is None:
            return
        self._recount()  # the counts are read from the store after every commit
        if unit:
            self.units.model.set_status(sample_id, unit, p.decisions.current(sample_id, unit, "status", self.ctx.blind_as))
        view = self.detail.current_view
        cur = None if view is None else view.current()
        if replay and cur is not None:  # undo/redo: show the unit the decision belongs to
            target = unit or (cur[1] if cur[0] == sample_id else self._any_unit(sample_id))
            if (sample_id, target) != cur:
                self.detail.show_unit_by_key(sample_id, target)
                return
        if view is not None and cur is not None and cur[0] == sample_id and self.detail.shown_view() is view:
            try:
                view.refresh()
            except Exception as exc:  # noqa: BLE001 - the pane would show stale decisions: treat as not shown
                assert view.row is not None
                self.detail.show_failed(dict(view.row), exc)

    def _any_unit(self, sample_id: str) -> str:
        units = self.project.units.units_for_sample(sample_id) if self.project is not None else []
        return units[0]["unit"] if units else ""

    def _decide(self, cmd: SetLabels | None, advance: bool) -> None:
        if cmd is None or self.session is None:
            return
        if not self.session.do(cmd) and self.session.last_error is not None:
            return  # the write failed (the message bar says so): stay on the unit
        # a commit in blind mode without anchoring stays on the unit: it reveals the machine's labels to compare
        if advance and getattr(cmd, "advances", True) and self._auto_advance():
            self._go_next()

    def _current_key(self) -> tuple[str, str] | None:
        view = self.detail.shown_view()
        if view is None:
            self.status_message("No unit is shown: nothing to decide on", 4000)
            return None
        return view.current()

    @guarded("Could not accept the unit", "decide")
    def accept(self) -> None:
        view = self.detail.shown_view()
        if view is None:
            self.status_message("No unit is shown: nothing to accept", 4000)
            return
        self._decide(view.accept_command(), advance=True)

    @guarded("Could not set the unit's status", "decide")
    def _status(self, status: str | None, advance: bool) -> None:
        key = self._current_key()
        if key is not None:
            self._decide(set_status(key[0], key[1], status), advance)

    def skip(self) -> None:
        self._status("skipped", True)

    def flag(self) -> None:
        self._status("flagged", True)

    def clear_status(self) -> None:
        self._status(None, False)

    @guarded("Could not save the note", "decide")
    def edit_note(self) -> None:
        key = self._current_key()
        if key is None or self.project is None:
            return
        old = self.project.decisions.current(key[0], key[1], "note") or ""
        text, ok = ask_text(self._dialog_parent, "Note", f"Note on {key[0]} / {key[1] or 'ground truth'}:", old, multiline=True)
        if ok and self.detail.shown_view() is not None and self._current_key() == key:
            self._decide(set_note(key[0], key[1], text.strip()), advance=False)

    @guarded("Could not undo", "undo")
    def undo(self) -> None:
        if self.session is not None:
            self.session.stack.undo()

    @guarded("Could not redo", "undo")
    def redo(self) -> None:
        if self.session is not None:
            self.session.stack.redo()

    @guarded("The action failed", "decide")
    def view_action(self, action_id: str) -> None:
        view = self.detail.shown_view()
        if view is None:
            self.status_message("No unit is shown: nothing to act on", 4000)
        elif not view.handle(action_id):
            self.status_message("Not available for this unit", 3000)

    def cancel_tasks(self) -> None:
        running = self.ctx.runner.running()
        for t in running:
            t.cancel()
        if running:
            self.status_message(f"Cancelling {len(running)} background task(s)…", 3000)

    def set_auto_advance(self, on: bool) -> None:
        self.ctx.settings.setValue("auto_advance", bool(on))
