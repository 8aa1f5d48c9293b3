"""Where a decode step looked: the peak of the alignment heads' cross-attention, and whether that moment of
the audio is the end of the speech, a pause, speech, or silence, judged from the log-mel energy the host
computed anyway. Pure NumPy: the studio's banner and heatmap and the QA report share it.

A step's attention is [heads, 1500] over the 30 s window (20 ms per position); the mel has 100 frames a
second, normalised as Whisper does, so 1.0 of it is 40 dB.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

POSITIONS_PER_S = 50      # audio positions of the encoder output, a second
FRAMES_PER_S = 100        # mel frames (10 ms hop), a second
SMOOTH_POSITIONS = 5      # 100 ms moving average before the peak: one hot position among 1500 is noise
LOUD_PERCENTILE = 95      # "loud" is the energy most speech frames stay under
SPEECH_DROP = 0.5         # a frame within 20 dB (0.5 of the normalised log-mel) of loud is speech ...
MIN_CONTRAST = 0.25       # ... and 10 dB above the quietest frames: audio of one level has no speech to find
MIN_PAUSE_S = 0.2         # a quieter run shorter than this is a gap between syllables, not a pause
END_BEFORE_S = 0.25       # attention on the last syllable still counts as the end of the speech
END_AFTER_S = 0.5         # ... and so does the half second after it

KINDS = ("end of speech", "pause", "speech", "silence before the speech", "silence after the speech", "no speech")
PHRASES = {"end of speech": "the end of the speech", "pause": "a pause", "speech": "mid-speech",
           "silence before the speech": "silence before the speech",
           "silence after the speech": "silence after the speech", "no speech": "no speech in the audio"}


def head_mean(attention: np.ndarray) -> np.ndarray:
    """The mean over the alignment heads of one step's attention ([heads, A], [heads, 1, A] or already [A])."""
    a = np.asarray(attention, np.float32)
    return a if a.ndim == 1 else a.reshape(a.shape[0], -1).mean(axis=0)


def audio_positions(duration_s: float | None, offset_s: float = 0.0, margin_s: float = END_AFTER_S) -> int | None:
    """Positions of a window starting at `offset_s` that hold audio, plus `margin_s`; None: all of them.

    Past the audio, the padding holds attention sinks (the last positions, a few fixed ones) that take much
    of the weight of steps near the end, EOT's above all; like whisper's word timings, where a step looked
    is sought in the audio only."""
    if not duration_s:
        return None
    return int(min(1500, max(1, np.ceil((duration_s - offset_s + margin_s) * POSITIONS_PER_S))))


def step_profile(attention: np.ndarray, n_positions: int | None = None) -> np.ndarray:
    """One heatmap row: the heads' mean scaled to its peak within the first `n_positions` (1.0; sinks past
    them may exceed it and are clipped), float32 [A]; all zero for no weight."""
    profiles, _ = step_rows([attention], n_positions=n_positions)
    return profiles[0]


def smoothed(rows: np.ndarray, smooth: int = SMOOTH_POSITIONS) -> np.ndarray:
    """Centred moving average of `smooth` (odd) positions along the last axis, zeros beyond the ends."""
    if smooth <= 1 or rows.shape[-1] < smooth:
        return rows
    lo = (smooth - 1) // 2
    padded = np.pad(rows, [(0, 0)] * (rows.ndim - 1) + [(lo + 1, smooth - 1 - lo)])
    sums = np.cumsum(padded, axis=-1, dtype=np.float64)
    return ((sums[..., smooth:] - sums[..., :-smooth]) / smooth).astype(np.float32)


def step_rows(attentions: list[np.ndarray], smooth: int = SMOOTH_POSITIONS,
              n_positions: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Many steps of one window at once (a live batch of the heatmap): their rows as step_profile gives
    them [k, A], and the position each looked at most [k]: the smoothed peak of the heads' mean within the
    first `n_positions` (audio_positions)."""
    means = np.stack([head_mean(a) for a in attentions])
    audio = means[:, :n_positions]
    peaks = audio.max(axis=-1, keepdims=True)
    profiles = np.minimum(np.divide(means, peaks, out=np.zeros_like(means), where=peaks > 0), 1.0)
    return profiles, np.argmax(smoothed(audio, smooth), axis=-1)


def focus_position(attention: np.ndarray, smooth: int = SMOOTH_POSITIONS, n_positions: int | None = None) -> int:
    """Index of the audio position the step looked at most: the peak of the heads' mean, smoothed, within
    the first `n_positions`."""
    return int(np.argmax(smoothed(head_mean(attention)[:n_positions], smooth)))


def focus_seconds(attention: np.ndarray, offset_s: float = 0.0, smooth: int = SMOOTH_POSITIONS,
                  duration_s: float | None = None) -> float:
    """Where in the audio (seconds) the step looked: `offset_s` is where its window starts; with the audio's
    `duration_s`, only the positions that hold audio count (audio_positions)."""
    return offset_s + focus_position(attention, smooth, audio_positions(duration_s, offset_s)) / POSITIONS_PER_S


def frame_energy(mels: np.ndarray, n_frames: int | None = None) -> np.ndarray:
    """Mean normalised log-mel of each 10 ms frame of the audio: [W, 80, 3000] windows (consecutive 30 s, as
    sent) or one [80, T] mel, cut to the `n_frames` that hold audio."""
    m = np.asarray(mels, np.float32)
    energy = m.mean(axis=-2).reshape(-1) if m.ndim == 3 else m.mean(axis=0)
    return energy[:n_frames] if n_frames is not None else energy


def speech_mask(energy: np.ndarray, drop: float = SPEECH_DROP, min_pause_s: float = MIN_PAUSE_S) -> np.ndarray:
    """Per frame: speech or not. Quieter runs shorter than `min_pause_s` between speech count as speech."""
    energy = np.asarray(energy, np.float32)
    if not energy.size:
        return np.zeros(0, bool)
    quiet, loud = np.percentile(energy, [100 - LOUD_PERCENTILE, LOUD_PERCENTILE])
    speech = (energy > loud - drop) & (energy > quiet + MIN_CONTRAST)
    idx = np.flatnonzero(speech)
    if idx.size:
        gaps = np.flatnonzero(np.diff(idx) > 1)
        for g in gaps:
            a, b = idx[g] + 1, idx[g + 1]           # quiet frames a..b-1 between two speech frames
            if (b - a) / FRAMES_PER_S < min_pause_s:
                speech[a:b] = True
    return speech


@dataclass
class Focus:
    at_s: float                     # where the step looked, seconds in the audio
    duration_s: float               # the audio's length
    kind: str = ""                  # one of KINDS; "" when the audio's energy was not at hand
    speech_end_s: float | None = None

    @property
    def phrase(self) -> str:
        return PHRASES.get(self.kind, "")

    def clause(self) -> str:
        """e.g. `while attention was at 4.1 s of 11.0 s (a pause)`."""
        where = f"while attention was at {self.at_s:.1f} s of {self.duration_s:.1f} s"
        return f"{where} ({self.phrase})" if self.phrase else where

    def describe(self, what: str = "EOT") -> str:
        """e.g. `EOT while attention was at 4.1 s of 11.0 s (a pause)`."""
        return f"{what} {self.clause()}"


def classify_focus(at_s: float, energy: np.ndarray | None, duration_s: float | None = None) -> Focus:
    """Classify the moment `at_s` of the audio whose per-frame `energy` (frame_energy) is given: the end of the
    speech (from END_BEFORE_S before the last speech frame to END_AFTER_S after it), a pause (a quiet run of
    at least MIN_PAUSE_S with speech on both sides), speech, or silence before or after all the speech."""
    if energy is None:
        return Focus(at_s, duration_s or 0.0)
    energy = np.asarray(energy, np.float32)
    duration = duration_s if duration_s is not None else len(energy) / FRAMES_PER_S
    speech = speech_mask(energy)
    idx = np.flatnonzero(speech)
    if not idx.size:
        return Focus(at_s, duration, "no speech")
    start_s, end_s = idx[0] / FRAMES_PER_S, (idx[-1] + 1) / FRAMES_PER_S
    if end_s - END_BEFORE_S <= at_s <= end_s + END_AFTER_S:
        kind = "end of speech"
    elif at_s > end_s:
        kind = "silence after the speech"
    elif at_s < start_s:
        kind = "silence before the speech"
    else:
        kind = "speech" if speech[min(int(at_s * FRAMES_PER_S), len(speech) - 1)] else "pause"
    return Focus(at_s, duration, kind, end_s)


def window_focus(attention: np.ndarray, offset_s: float, energy: np.ndarray) -> Focus:
    """Where a step of the window starting at `offset_s` looked, judged against that window's own audio:
    `energy` is frame_energy of its frames that hold audio (their count is its length). Times in the audio."""
    length_s = len(energy) / FRAMES_PER_S
    f = classify_focus(focus_seconds(attention, 0.0, duration_s=length_s), energy, length_s)
    end = None if f.speech_end_s is None else round(offset_s + f.speech_end_s, 2)
    return Focus(round(offset_s + f.at_s, 2), round(offset_s + f.duration_s, 2), f.kind, end)


def eot_focus(windows: list, steps: list, energy: np.ndarray | None, duration_s: float) -> Focus | None:
    """Where the EOT step looked in the last window with speech that stopped at EOT. `windows`: a transcript's
    WindowResults (window, reason, silent, offset_s), `steps`: its TokenEvents in order (a window's last step
    is its EOT); None without such a window or without attention."""
    window = next((w for w in reversed(windows) if w.reason == "eot" and not w.silent), None)
    if window is None:
        return None
    eot = next((s for s in reversed(steps) if s.window == window.window), None)
    if eot is None or eot.attention is None:
        return None
    return classify_focus(focus_seconds(eot.attention, window.offset_s, duration_s=duration_s), energy, duration_s)
