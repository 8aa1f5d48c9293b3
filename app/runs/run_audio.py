"""The audio a run was decoded from, for the audio panel when the run is shown: the clip it kept, else its
file found again by path and sha256; otherwise a sentence saying why it cannot be shown (never another file)."""
from __future__ import annotations

from pathlib import Path

from app.runs.clip import AudioClip, load_clip
from app.runs.record import RunRecord
from core.model.file_hash import sha256_files


def missing_reason(run: RunRecord) -> str:
    """Why the run's audio cannot be loaded, or "" when `load_run_audio` will find it."""
    if run.clip is not None:
        return ""
    if not run.audio_path:
        return f"the audio of run #{run.id} ({run.audio_name}) was not kept: it was recorded, not read from a file"
    path = Path(run.audio_path)
    if not path.is_file():
        return f"the audio of run #{run.id} is gone: {path} no longer exists"
    if run.audio_sha256 and sha256_files([path]) != run.audio_sha256:
        return f"the audio of run #{run.id} changed: {path} is not the file that was transcribed"
    return ""


def load_run_audio(run: RunRecord) -> AudioClip:
    """The run's clip (loaded from its file when it was not kept); kept on the run for click-to-play."""
    if run.clip is None:
        run.clip = load_clip(run.audio_path)
    return run.clip
