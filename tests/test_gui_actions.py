"""The action registry: unique ids and keys, handlers that exist, shortcuts shown in menus and tooltips.

Checked over all_actions(): the common actions and every scheme view's own. Keys are unique across all of them,
scheme actions included (see app/gui/actions.py)."""
from __future__ import annotations

from PySide6.QtGui import QKeySequence

from app.gui.actions import shortcut_text
from app.gui.cheatsheet import cheat_records
from app.gui.views import all_actions, menus, view_classes
from tests.gui_data import open_window, project_path, settings  # noqa: F401 - fixtures


ACTIONS = all_actions()
MENUS = menus()


def test_no_two_actions_share_a_shortcut() -> None:
    assert {v.scheme for v in view_classes()} >= {"violations", "rubric"}  # scheme views' actions are in the union
    seen: dict[str, str] = {}
    for a in ACTIONS:
        for s in a.shortcuts:
            key = QKeySequence(s).toString(QKeySequence.SequenceFormat.PortableText)
            assert key, f"{a.id}: unparsable shortcut {s!r}"
            assert key not in seen, f"{a.id} and {seen.get(key)} both use {key}"
            seen[key] = a.id
    assert len({a.id for a in ACTIONS}) == len(ACTIONS)


def test_required_keys_are_bound() -> None:
    by_id = {a.id: {QKeySequence(s).toString() for s in a.shortcuts} for a in ACTIONS}
    expected = {"next": "J", "prev": "K", "next_unlabeled": "N", "skip": "S", "flag": "F", "link": "L",
                "bucket_tp": "1", "bucket_fn": "2", "bucket_fp": "3", "bucket_tn": "4", "undo": "Ctrl+Z",
                "redo": "Ctrl+Shift+Z", "cheatsheet": "?"}
    for aid, k in expected.items():
        assert k in by_id[aid], aid
    assert {"A", "Return", "Enter"} <= by_id["accept"]


def test_handlers_exist_and_menus_show_shortcuts(qtbot, open_window, project_path) -> None:  # type: ignore[no-untyped-def]
    w = open_window(project_path)
    handlers = w.handlers()  # the parts' slots the window maps the registry's handler names to
    for a in ACTIONS:
        assert a.menu in MENUS
        assert callable(getattr(handlers, "view_action" if a.handler == "view" else a.handler, None)), a.id
    menu_actions = {act.objectName(): act for m in w.menuBar().actions() for act in m.menu().actions()}
    for a in ACTIONS:
        act = menu_actions[f"action_{a.id}"]
        if a.shortcuts:
            assert act.shortcut().toString() == QKeySequence(a.shortcuts[0]).toString()
            assert shortcut_text(a) in act.toolTip()
    assert len(cheat_records()) == sum(1 for a in ACTIONS if a.shortcuts)
