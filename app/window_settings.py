"""The main window's part of the settings: run options, recent files, device profiles, geometry and the
splitter, applied at start-up and saved on close."""
from __future__ import annotations

from app import settings as app_settings
from app.views.window_size import keep_on_screen


def apply_settings(window) -> None:
    s = window.settings
    window.controls.set_options(s.options)
    window.audio.set_recent(s.recent)
    window.device.set_profiles(s.profiles, s.profile)
    if s.geometry is not None:
        window.restoreGeometry(s.geometry)
        keep_on_screen(window)
    if s.splitter is not None:
        window.splitter.restoreState(s.splitter)


def save_settings(window) -> None:
    s = window.settings
    s.options = window.controls.options()
    s.profiles = window.device.profiles
    s.profile = window.device.current_name()
    s.geometry = window.saveGeometry()
    s.splitter = window.splitter.saveState()
    app_settings.save(window.store, s)
