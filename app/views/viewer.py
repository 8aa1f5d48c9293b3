"""A written report (qa.html, doctor.html) opened in the desktop's viewer, or where it is said when none starts."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QLabel


def open_in_viewer(path: Path, where: QLabel, what: str) -> bool:
    """Start the viewer for `path`; when none starts, `where` says where `what` is."""
    opened = QDesktopServices.openUrl(QUrl.fromLocalFile(str(path)))
    if not opened:
        where.setText(f"No viewer could be started for {what}: open it yourself, it is at {path}")
    return opened
