"""The one registry of user actions: id, title, shortcuts, handler name, menu.

This module holds the actions every scheme shares (file, edit, navigation, decisions, tools); each scheme's
detail view declares its own (`DetailView.action_specs`, in its own menu), and app.gui.views.all_actions() is the
union the window, the menus and the cheat sheet are built from. Keys are unique across that union, scheme actions
included (even though two views are never active at once): a key then means one thing everywhere, the cheat sheet
needs no per-scheme sections, and a test can check it (tests/test_gui_actions.py).
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QKeySequence


@dataclass(frozen=True)
class ActionSpec:
    id: str
    title: str
    shortcuts: tuple[str, ...]
    handler: str  # method name on the controller (the main window); "view": passed to the current detail view
    menu: str
    tip: str = ""
    checkable: bool = False


ACTIONS: tuple[ActionSpec, ...] = (
    # file
    ActionSpec("new_project", "&New project…", ("Ctrl+N",), "new_project_dialog", "File",
               "Create an empty project file (as `concord init`), then import records into it"),
    ActionSpec("open", "&Open project…", ("Ctrl+O",), "open_project_dialog", "File", "Open a Concord project file"),
    ActionSpec("import", "&Import…", ("Ctrl+I",), "import_dialog", "File",
               "Import records into this project (as `concord import`): JSONL, CSV, Parquet or a scheme's own files"),
    ActionSpec("export", "&Export split…", ("Ctrl+Shift+E",), "open_export_dialog", "File", "Export a curated, versioned split"),
    ActionSpec("quit", "&Quit", ("Ctrl+Q",), "close", "File", "Close the window (all work is already saved)"),
    # edit
    ActionSpec("undo", "&Undo", ("Ctrl+Z",), "undo", "Edit", "Undo the last decision"),
    ActionSpec("redo", "&Redo", ("Ctrl+Shift+Z", "Ctrl+Y"), "redo", "Edit", "Redo the last undone decision"),
    ActionSpec("find", "&Search samples", ("Ctrl+F",), "focus_search", "Edit", "Search sample text and ids"),
    # navigate
    ActionSpec("next", "&Next sample", ("J",), "go_next", "Navigate", "Show the next unit in the list"),
    ActionSpec("prev", "&Previous sample", ("K",), "go_prev", "Navigate", "Show the previous unit in the list"),
    ActionSpec("next_unlabeled", "Next &unlabeled", ("N",), "go_next_unlabeled", "Navigate",
               "Jump to the next unit without a human status"),
    ActionSpec("next_checker", "Next &unit of this sample", ("C",), "view", "Navigate",
               "Review the same sample under its next checker, trait, judge or model"),
    ActionSpec("focus_list", "Focus sample &list", ("Ctrl+L",), "focus_list", "Navigate", "Move keyboard focus to the list"),
    # decide
    ActionSpec("accept", "&Accept", ("A", "Return", "Enter"), "accept", "Decide",
               "Accept the machine's label (matches, buckets, verdict, ...) as the human decision"),
    ActionSpec("skip", "&Skip", ("S",), "skip", "Decide", "Mark the unit skipped and move on"),
    ActionSpec("flag", "&Flag", ("F",), "flag", "Decide", "Flag the unit for a second look"),
    ActionSpec("note", "Add &note…", ("E",), "edit_note", "Decide", "Write a note on this unit"),
    ActionSpec("clear_status", "Clear status", ("Backspace",), "clear_status", "Decide", "Remove the human status"),
    ActionSpec("auto_advance", "Advance after a decision", (), "set_auto_advance", "Decide",
               "After accept, skip or flag, show the next unit", checkable=True),
    ActionSpec("hide_machine", "Hide machine labels until my decision", (), "set_hide_machine", "Decide",
               "Blind mode without anchoring: the machine's labels of a unit show only after A commits your own "
               "(a project setting: concord config --hide-machine)", checkable=True),
    # tools
    ActionSpec("calibrate", "&Calibration…", ("Ctrl+K",), "open_calibration", "Tools", "Calibrate the match metric against human labels"),
    ActionSpec("evaluate", "Compute &machine scores", ("Ctrl+Shift+M",), "compute_machine_scores", "Tools",
               "Match every unit under the chosen config and fill the list's Machine F1 column"),
    ActionSpec("cancel_tasks", "Cancel background work", ("Esc",), "cancel_tasks", "Tools",
               "Cancel running scoring, evaluation or calibration"),
    ActionSpec("rescore", "Re&score sample", ("Ctrl+R",), "view", "Tools", "Recompute the machine's scores for this sample"),
    ActionSpec("adjudicate", "A&djudicate unit…", ("Ctrl+J",), "open_adjudication", "Tools",
               "Every annotator's label of the shown unit side by side; pick one or edit it as the resolved label"),
    ActionSpec("agreement", "Annotator a&greement…", ("Ctrl+Shift+A",), "open_agreement", "Tools",
               "Kappa, alpha and span F1 between the annotators, with intervals, per scheme and label kind"),
    # help
    ActionSpec("cheatsheet", "&Keyboard shortcuts", ("?", "F1"), "show_cheatsheet", "Help", "Show every shortcut"),
)

# The common menus; each scheme's view adds its own menu (views.ViewSpec.menu), placed before "Tools".
MENUS: tuple[str, ...] = ("File", "Edit", "Navigate", "Decide", "Tools", "Help")


def spec(action_id: str, specs: Iterable[ActionSpec] = ACTIONS) -> ActionSpec:
    for a in specs:
        if a.id == action_id:
            return a
    raise KeyError(action_id)


def shortcut_text(a: ActionSpec) -> str:
    return _native_text(tuple(a.shortcuts))


@functools.lru_cache(maxsize=None)  # the same few dozen specs at every window open (a QKeySequence per key)
def _native_text(shortcuts: tuple[str, ...]) -> str:
    return ", ".join(QKeySequence(s).toString(QKeySequence.SequenceFormat.NativeText) for s in shortcuts)


def build_actions(parent: QObject, controller: object, specs: Iterable[ActionSpec] = ACTIONS) -> dict[str, QAction]:
    """QActions for `specs`, each triggering `controller.<handler>()` (with the checked state if checkable)."""
    out: dict[str, QAction] = {}
    for a in specs:
        act = QAction(a.title, parent)
        act.setObjectName(f"action_{a.id}")
        act.setShortcuts([QKeySequence(s) for s in a.shortcuts])
        keys = shortcut_text(a)
        act.setToolTip(f"{a.tip or a.title.replace('&', '')}" + (f" ({keys})" if keys else ""))
        act.setStatusTip(a.tip)
        act.setCheckable(a.checkable)
        if a.handler == "view":
            view_action: Callable[[str], object] = getattr(controller, "view_action")
            act.triggered.connect(lambda _checked=False, i=a.id: view_action(i))
        elif a.checkable:
            handler: Callable[..., object] = getattr(controller, a.handler)
            act.toggled.connect(handler)
        else:
            handler = getattr(controller, a.handler)
            act.triggered.connect(lambda _checked=False, h=handler: h())
        out[a.id] = act
    return out
