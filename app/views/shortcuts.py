"""Help ▸ Keyboard shortcuts: every key the window binds, read from the window itself (its menus' actions, a
view's action, the presenter's keys), so the list is never out of step with what the keys do."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import QDialog, QHeaderView, QLabel, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

TITLE = "Keyboard shortcuts"


def key_text(key: QKeySequence) -> str:
    return key.toString(QKeySequence.SequenceFormat.NativeText)


def _where(obj, window: QWidget) -> str:
    """Where a binding works when not in the studio's window: the presenter's keys only in the presenter."""
    widget = obj.parent()
    while widget is not None and not isinstance(widget, QWidget):
        widget = widget.parent()
    top = widget.window() if widget is not None else window
    return "" if top is window else f"in the {top.windowTitle().split(' — ')[-1]} window"


def bound_shortcuts(window: QWidget) -> list[tuple[str, str]]:
    """(keys, what they do) for every action and shortcut under `window` that has a key, in the order they were
    made, each key once per window it works in."""
    rows: list[tuple[str, str]] = []
    seen: set[tuple[str, str]] = set()
    bindings = [(a, a.shortcuts(), a.text().replace("&", "").rstrip("…")) for a in window.findChildren(QAction)]
    bindings += [(s, [s.key()], s.whatsThis()) for s in window.findChildren(QShortcut)]
    for obj, keys, what in bindings:
        where = _where(obj, window)
        for key in keys:
            text = key_text(key)
            if text and (text, where) not in seen:
                seen.add((text, where))
                rows.append((text, f"{what} ({where})" if where else what))
    return rows


class ShortcutsDialog(QDialog):
    def __init__(self, window: QWidget):
        super().__init__(window)
        self.setWindowTitle(TITLE)
        self.table = QTableWidget(0, 2)
        self.table.setHorizontalHeaderLabels(["keys", "what they do"])
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        note = QLabel("Over a plot the wheel scrolls the panel; Ctrl+wheel zooms the plot.")
        note.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table, 1)
        layout.addWidget(note)
        self.resize(460, 420)

    def fill(self, rows: list[tuple[str, str]]) -> None:
        self.table.setRowCount(len(rows))
        for i, row in enumerate(rows):
            for col, text in enumerate(row):
                item = QTableWidgetItem(text)
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
                self.table.setItem(i, col, item)

    def rows(self) -> list[tuple[str, str]]:
        return [(self.table.item(i, 0).text(), self.table.item(i, 1).text()) for i in range(self.table.rowCount())]


def show_shortcuts(window: QWidget) -> ShortcutsDialog:
    """The list, read from the window as it binds its keys now; one dialog, shown again."""
    dialog = window.findChild(ShortcutsDialog) or ShortcutsDialog(window)
    dialog.fill(bound_shortcuts(window))
    dialog.show()
    dialog.raise_()
    return dialog
