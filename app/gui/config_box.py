"""The toolbar's config box: the versioned configs a scheme's machine scores follow (a view's `config_choice`, e.g.
the violations view's match configs), with the chosen one remembered per project.

The window holds the chosen config as an opaque object (it only reads its `ref`) and hands it to the views through
ViewContext.config; what a config holds is the business of the view that declared the choice. One box per window:
the first view (in the registry's order) that declares a choice provides it.
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, QSettings, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QComboBox, QLabel, QToolBar

from app.errors import UsageError
from app.gui.views import view_classes
from app.gui.views.base import ConfigChoice


def window_config_choice() -> ConfigChoice | None:
    """The config choice the window's box offers: the first view's that declares one (None: no box)."""
    return next((v.config_choice for v in view_classes() if v.config_choice is not None), None)


class ConfigBox(QObject):
    """The label and combo in the toolbar, and the chosen config (`current`)."""

    def __init__(self, settings: QSettings, choice: ConfigChoice | None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.settings = settings
        self.choice = choice
        self.current: Any = None if choice is None else choice.fallback()
        self.actions: list[QAction] = []  # the toolbar's label and combo (shown when a listed scheme follows configs)
        self.box = QComboBox()
        self.box.setObjectName("config_box")
        self.box.setToolTip("" if choice is None else choice.tip)
        self.box.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        self.box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)

    @property
    def ref(self) -> str:
        return "" if self.current is None else str(self.current.ref)

    def add_to(self, toolbar: QToolBar) -> None:
        if self.choice is not None:
            self.actions = [toolbar.addWidget(QLabel(f" {self.choice.title}: ")), toolbar.addWidget(self.box)]

    def set_visible(self, on: bool) -> None:
        for act in self.actions:
            act.setVisible(on)

    def _key(self, project: Any) -> str:
        assert self.choice is not None
        return f"projects/{project.project_id}/{self.choice.settings_key}"

    def load(self, project: Any) -> None:
        """List the project's configs and choose the remembered one (else the choice's default, else its fallback)."""
        self.box.clear()
        if project is None or self.choice is None:
            return
        wanted = self.settings.value(self._key(project), self.choice.default_ref(project), type=str)
        for r in self.choice.refs(project):
            self.box.addItem(r, r)
        try:
            self.current = self.choice.load(project, wanted)
        except UsageError:
            self.current = self.choice.fallback()
        self.box.setCurrentIndex(max(0, self.box.findData(self.ref)))

    def choose(self, project: Any, ref: str) -> None:
        """Make `ref` the chosen config of `project` (remembered for the next session)."""
        if self.choice is None:
            return
        self.current = self.choice.load(project, ref)
        self.settings.setValue(self._key(project), self.ref)
        self.box.setCurrentIndex(max(0, self.box.findData(self.ref)))
