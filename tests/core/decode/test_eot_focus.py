"""The verdict says where the attention sat at EOT: real attention on the JFK clip (the end of the speech), and
crafted rows over a crafted loudness track (a pause, mid-speech, the end, the silence after it)."""
from dataclasses import replace

import numpy as np
import pytest

from core.decode.attention_focus import frame_energy, window_focus
from core.decode.diagnostics import diagnose_transcript
from core.decode.options import DecodeOptions
from core.decode.transcript import Transcript
from core.model.audio import load_audio
from core.model.mel import log_mel
from tests.conftest import AUDIO

LOUD, QUIET = 1.0, 0.2


def levels(*spans) -> np.ndarray:
    """Loudness per 10 ms frame from (seconds, loud?) spans."""
    return np.concatenate([np.full(int(s * 100), LOUD if loud else QUIET, np.float32) for s, loud in spans])


def row_at(seconds: float) -> np.ndarray:
    a = np.full((8, 1500), 1e-4, np.float32)
    a[:, int(seconds * 50)] = 1.0
    return a


# 1 s quiet, 2 s speech, 1 s pause, 2 s speech, 2 s quiet tail: 8 s of audio
TRACK = levels((1, False), (2, True), (1, False), (2, True), (2, False))


@pytest.mark.parametrize("at, kind", [(3.5, "pause"), (2.0, "speech"), (5.8, "end of speech"),
                                      (7.5, "silence after the speech"), (0.5, "silence before the speech")])
def test_crafted_focus(at, kind):
    f = window_focus(row_at(at), 30.0, TRACK)
    assert f.kind == kind and f.at_s == pytest.approx(30.0 + at, abs=0.05)   # the 100 ms smoothing: a lone peak is a plateau
    assert f.duration_s == 38.0 and f.speech_end_s == pytest.approx(36.0, abs=0.1)


def test_phrase():
    f = window_focus(row_at(3.5), 0.0, TRACK)
    assert f.describe() == "EOT while attention was at 3.5 s of 8.0 s (a pause)"


@pytest.fixture(scope="module")
def jfk(model, clip_mels, encoder_cache):
    audio = load_audio(AUDIO / "test_en.wav")
    n_frames = len(audio) // 160
    t = Transcript()
    for ev in model.transcribe(clip_mels("test_en.wav"), DecodeOptions(language="en", attention=True),
                               encoder_cache=encoder_cache, n_frames=n_frames):
        t.add(ev)
    return t, frame_energy(log_mel(audio), n_frames)


def test_jfk_eot_is_at_the_end_of_the_speech(jfk):
    t, lv = jfk
    d = diagnose_transcript(t, levels={0: lv})
    focus = d.windows[0].eot_focus
    assert focus.kind == "end of speech", focus
    assert focus.duration_s == pytest.approx(len(lv) / 100, abs=0.01)
    assert focus.at_s > 0.8 * focus.speech_end_s
    assert d.verdict.startswith("EOT at step") and focus.clause() in d.verdict


def test_no_attention_or_no_levels_no_focus(jfk):
    t, lv = jfk
    blind = Transcript(t.windows, [replace(s, attention=None) for s in t.steps])
    assert diagnose_transcript(blind, levels={0: lv}).windows[0].eot_focus is None
    assert diagnose_transcript(t).windows[0].eot_focus is None
