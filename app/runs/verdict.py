"""A run record seen through core: its Transcript, its 'why it stopped' diagnosis and timed segments."""
from __future__ import annotations

from app.runs.record import RunRecord
from core.decode.diagnostics import Diagnosis, diagnose_transcript
from core.decode.transcript import Transcript


def transcript_of(run: RunRecord) -> Transcript:
    t = Transcript()
    for ev in run.events:
        t.add(ev)
    return t


def diagnosis_of(run: RunRecord) -> Diagnosis:
    return diagnose_transcript(transcript_of(run))


def verdict_of(run: RunRecord) -> str:
    """One line, the same the CLI and the QA report print, e.g. `EOT at step 23 (p=0.97)`."""
    return diagnosis_of(run).verdict


def segments_of(run: RunRecord) -> list[dict]:
    """Timestamps mode: [{start, end, text}] in seconds of the audio, silent windows left out."""
    return transcript_of(run).segments
