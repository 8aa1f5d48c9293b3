"""Where the decoder looked when it chose EOT: the peak of the alignment heads' mean cross-attention at
the EOT step, in seconds, against the window's audio and its loudness. "EOT while attention was at 4.1 s
of 11.0 s (a pause)" tells an early stop at a pause from a clean stop at the end of the speech.

Loudness comes from the host's own log-mel (the runner sends no audio back): a frame is speech when its
mean over the mel bins is within SPEECH_DROP of the loudest frame's.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MEL_FRAMES_PER_S = 100           # mel frames: 10 ms
ATTENTION_FRAMES_PER_S = 50      # the encoder's output positions: 20 ms
SPEECH_DROP = 0.5                # whisper's normalised log-mel: 1.0 is 40 dB, so 0.5 is 20 dB under the peak
SMOOTH_FRAMES = 15               # 150 ms: a stop consonant inside a word is not a pause
END_TOLERANCE_S = 0.6            # within this of the last speech frame (or after it) is its end
PAUSE_S = 0.1                    # the focus sits in a pause when speech is this far away on both sides

END, PAUSE, ELSEWHERE = "the end of the speech", "a pause", "elsewhere"


@dataclass
class EotFocus:
    at_s: float            # seconds in the audio where the attention peaked
    window_end_s: float    # end of the window's audio, seconds
    speech_end_s: float    # end of the window's last speech, seconds
    kind: str              # END, PAUSE or ELSEWHERE

    def clause(self) -> str:
        return f"while attention was at {self.at_s:.1f} s of {self.window_end_s:.1f} s ({self.kind})"

    def phrase(self) -> str:
        """For a banner: "EOT while attention was at 4.1 s of 11.0 s (a pause)"."""
        return f"EOT {self.clause()}"


def frame_levels(mel: np.ndarray, n_frames: int | None = None) -> np.ndarray:
    """Per-frame loudness of a normalised log-mel window [80, T]: the mean over bins of its first n_frames."""
    mel = np.asarray(mel, np.float32)
    return mel[:, :n_frames or mel.shape[-1]].mean(axis=0)


def speech_frames(levels: np.ndarray) -> np.ndarray:
    """True where a (smoothed) frame is within SPEECH_DROP of the loudest one."""
    levels = np.asarray(levels, np.float32)
    if not len(levels):
        return np.zeros(0, bool)
    k = min(SMOOTH_FRAMES, len(levels))
    smooth = np.convolve(levels, np.ones(k, np.float32) / k, mode="same")
    return smooth > smooth.max() - SPEECH_DROP


def attention_peak(attention: np.ndarray, n_frames: int) -> int:
    """The attention position (20 ms) where the heads' mean weight over the window's audio peaks."""
    a = np.asarray(attention, np.float32).reshape(-1, np.shape(attention)[-1])[:, :max(1, n_frames // 2)]
    a = a / np.maximum(a.sum(-1, keepdims=True), 1e-30)      # each head over the audio only, as for word timings
    return int(a.mean(axis=0).argmax())


def eot_focus(attention: np.ndarray, offset_s: float, levels: np.ndarray) -> EotFocus:
    """`attention`: the EOT step's alignment-head weights [heads, 1500]; `offset_s`: where the window starts;
    `levels`: frame_levels of the window's audio frames (their count is the window's length)."""
    n_frames = len(levels)
    speech = speech_frames(levels)
    frame = min(2 * attention_peak(attention, n_frames), max(0, n_frames - 1))
    at_s = offset_s + frame / MEL_FRAMES_PER_S
    voiced = np.flatnonzero(speech)
    speech_end = (voiced[-1] + 1) if len(voiced) else 0
    if frame >= speech_end - END_TOLERANCE_S * MEL_FRAMES_PER_S:
        kind = END
    else:
        near = int(PAUSE_S * MEL_FRAMES_PER_S)
        kind = PAUSE if not speech[max(0, frame - near):frame + near + 1].any() else ELSEWHERE
    return EotFocus(round(at_s, 2), round(offset_s + n_frames / MEL_FRAMES_PER_S, 2),
                    round(offset_s + speech_end / MEL_FRAMES_PER_S, 2), kind)
