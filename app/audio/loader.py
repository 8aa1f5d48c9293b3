"""The audio the next run sends: opened from a file, dropped, recorded, or taken from the run on display,
loaded off the UI thread; the audio panel always shows the audio of the run that is shown."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal

from app.audio.panel import AudioPanel
from app.background import TaskRunner
from app.errors import Failure
from app.runs.clip import AudioClip, clip_from_samples, load_clip
from app.runs.record import RunRecord
from app.runs.run_audio import load_run_audio, missing_reason
from app.settings import AppSettings


class AudioLoader(QObject):
    loaded = Signal(object)          # AudioClip, or None when a load failed
    opened = Signal(object)          # AudioClip of a file opened or a recording made (not a run's audio shown)
    failed = Signal(object)          # Failure
    note = Signal(str)               # the shown run's audio cannot be shown, and why

    def __init__(self, panel: AudioPanel, settings: AppSettings, tasks: TaskRunner, parent=None):
        super().__init__(parent)
        self.panel, self.settings, self.tasks = panel, settings, tasks
        self.clip: AudioClip | None = None
        self.recordings = 0
        panel.start_dir = settings.open_dir
        panel.openRequested.connect(self.open)
        panel.recorded.connect(self.use_recording)

    def open(self, path: str) -> None:
        """Load a file (from the dialog, Recent or a drop); the next open dialog starts in its folder."""
        self.settings.open_dir = self.panel.start_dir = str(Path(path).resolve().parent)
        self.panel.show_loading(Path(path).name)
        self.tasks.start(load_clip, path, on_done=lambda clip: self.use(clip, path, fresh=True),
                         on_failed=self._on_failed)

    def _on_failed(self, failure: Failure) -> None:
        self.panel.set_clip(self.clip)
        self.failed.emit(failure)
        self.loaded.emit(None)

    def use_recording(self, samples) -> None:
        self.recordings += 1
        self.tasks.start(clip_from_samples, f"recording {self.recordings}", samples, on_done=self._recorded,
                         on_failed=self.failed.emit)

    def _recorded(self, clip: AudioClip) -> None:
        self.use(clip, fresh=True)

    def use(self, clip: AudioClip, path: str = "", fresh: bool = False) -> None:
        """`clip` is the audio the next run sends; `fresh`: new audio (opened or recorded), so the window shows
        no run of other audio against its time axis (the runs stay in the picker)."""
        self.clip = clip
        if fresh:
            self.opened.emit(clip)
        self.panel.set_clip(clip)
        if path:
            self.settings.add_recent(str(Path(path).resolve()))
            self.panel.set_recent(self.settings.recent)
        self.loaded.emit(clip)

    def follow(self, run: RunRecord | None) -> None:
        """Show the audio `run` was decoded from (a live stream shows its own)."""
        if run is None or run.live is not None or (run.clip is not None and run.clip is self.clip):
            return
        reason = missing_reason(run)
        if reason:
            self.clip = None
            self.panel.set_missing(reason)
            self.note.emit(reason[0].upper() + reason[1:])
            self.loaded.emit(None)
            return
        if run.clip is not None:
            self.use(run.clip)
            return
        self.panel.show_loading(run.audio_name)
        self.tasks.start(load_run_audio, run, on_done=self.use, on_failed=self._on_failed)

    def drag_enter(self, event) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def drop(self, event) -> None:
        """A file dropped anywhere on the window is opened."""
        paths = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        if paths:
            self.open(paths[0])
            event.acceptProposedAction()
