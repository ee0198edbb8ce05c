"""The main window's decisions: accept, skip, flag, note, clear, undo/redo and the views' own actions, each a command
handed to the Session (which persists it as an event), and keeping the list and the pane in step after one."""
from __future__ import annotations

from app.corrections import SetLabels, set_note, set_status
from app.gui.plaintext import ask_text
from app.gui.window_parts import WindowPart, guarded


class DecisionsPart(WindowPart):
    @guarded("Could not update the window after a decision (the decision itself was saved)", "changed")
    def _changed(self, sample_id: str, unit: str, replay: bool) -> None:
        p = self.project
        if p is None:
            return
        self.session_progress.schedule()  # the counts are read from the store after every commit
        if unit:
            self.model.set_status(sample_id, unit, p.current(sample_id, unit, "status", self.blind_as))
        view = self.current_view
        cur = None if view is None else view.current()
        if replay and cur is not None:  # undo/redo: show the unit the decision belongs to
            target = unit or (cur[1] if cur[0] == sample_id else self._any_unit(sample_id))
            if (sample_id, target) != cur:
                self.show_unit_by_key(sample_id, target)
                return
        if view is not None and cur is not None and cur[0] == sample_id and self.shown_view() is view:
            try:
                view.refresh()
            except Exception as exc:  # noqa: BLE001 - the pane would show stale decisions: treat as not shown
                assert view.row is not None
                self._show_failed(dict(view.row), exc)

    def _any_unit(self, sample_id: str) -> str:
        units = self.project.units_for_sample(sample_id) if self.project is not None else []
        return units[0]["unit"] if units else ""

    def _decide(self, cmd: SetLabels | None, advance: bool) -> None:
        if cmd is None or self.session is None:
            return
        if not self.session.do(cmd) and self.session.last_error is not None:
            return  # the write failed (the message bar says so): stay on the unit
        # a commit in blind mode without anchoring stays on the unit: it reveals the machine's labels to compare
        if advance and getattr(cmd, "advances", True) and self.actions_by_id["auto_advance"].isChecked():
            self.go_next()

    def _current_key(self) -> tuple[str, str] | None:
        view = self.shown_view()
        if view is None:
            self.status_message("No unit is shown: nothing to decide on", 4000)
            return None
        return view.current()

    @guarded("Could not accept the unit", "decide")
    def accept(self) -> None:
        view = self.shown_view()
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
        old = self.project.current(key[0], key[1], "note") or ""
        text, ok = ask_text(self, "Note", f"Note on {key[0]} / {key[1] or 'ground truth'}:", old, multiline=True)
        if ok and self.shown_view() is not None and self._current_key() == key:
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
        view = self.shown_view()
        if view is None:
            self.status_message("No unit is shown: nothing to act on", 4000)
        elif not view.handle(action_id):
            self.status_message("Not available for this unit", 3000)

    def cancel_tasks(self) -> None:
        running = self.runner.running()
        for t in running:
            t.cancel()
        if running:
            self.status_message(f"Cancelling {len(running)} background task(s)…", 3000)

    def set_auto_advance(self, on: bool) -> None:
        self.settings.setValue("auto_advance", bool(on))
