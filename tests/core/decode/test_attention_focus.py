"""Where a step looked and what was there: crafted attention and energy, then the real EOT of the JFK clip
(the real attention from ONNX Runtime fp32, the reference's tokens: what is checked is where it is read)."""
import numpy as np
import pytest

from core.decode.attention_focus import (
    Focus,
    audio_positions,
    classify_focus,
    focus_position,
    focus_seconds,
    frame_energy,
    smoothed,
    speech_mask,
    step_profile,
    step_rows,
)
from core.decode.decoding import decode_windows
from core.decode.events import DoneEvent, TokenEvent
from core.decode.options import DecodeOptions
from tests.conftest import AUDIO
from tests.core.decode.crafted_attention import attention_at

QUIET, LOUD = -0.4, 0.9   # normalised log-mel: 1.3 apart is 52 dB



def energy_of(*runs: tuple[float, float]) -> np.ndarray:
    """Per 10 ms frame: (seconds, level) runs one after another."""
    return np.concatenate([np.full(round(s * 100), level, np.float32) for s, level in runs])


def test_focus_is_the_peak_of_the_heads_mean_placed_in_the_window():
    assert focus_seconds(attention_at(205)) == pytest.approx(4.1)
    assert focus_seconds(attention_at(205), offset_s=30.0) == pytest.approx(34.1)
    # One head elsewhere is outvoted by the other seven.
    a = attention_at(100).astype(np.float32)
    a[0] = attention_at(900)[0]
    assert focus_seconds(a) == pytest.approx(2.0)
    assert focus_seconds(a[:, None, :]) == pytest.approx(2.0)   # the graph's [heads, 1, 1500] too


def test_a_lone_hot_position_loses_to_a_broad_peak():
    a = np.zeros((8, 1500), np.float32)
    a[:, 700] = 0.3                       # one position, higher than any single one of the broad peak
    a[:, 300:310] = 0.07
    assert focus_seconds(a) == pytest.approx(6.1, abs=0.1)
    assert focus_seconds(a, smooth=1) == pytest.approx(14.0)


def sunk(position: int, sink_share: float = 0.8) -> np.ndarray:
    """A step near the end of a short clip: most weight in the padding's sinks, a little on the audio."""
    a = attention_at(position).astype(np.float32) * (1 - sink_share)
    a[:, 1499] += sink_share * 0.6
    a[:, 1372] += sink_share * 0.4
    return a.astype(np.float16)


def test_the_sinks_past_the_audio_do_not_count():
    a = sunk(150)
    assert focus_seconds(a) > 29.9                                        # the whole window: the sink
    assert focus_seconds(a, duration_s=3.2) == pytest.approx(3.0)         # the audio (and 0.5 s past it)
    assert focus_seconds(a, offset_s=30.0, duration_s=33.2) == pytest.approx(33.0)
    assert audio_positions(3.2) == 185 and audio_positions(None) is None and audio_positions(40.0) == 1500
    row = step_profile(a, audio_positions(3.2))
    assert row[150] == pytest.approx(1.0) and row[1499] == 1.0 and row[:185].argmax() in range(148, 153)


def test_smoothing_is_a_centred_moving_average_and_batches_agree():
    rng = np.random.default_rng(0)
    rows = rng.random((6, 1500)).astype(np.float32)
    expected = np.stack([np.convolve(r, np.ones(5) / 5, mode="same") for r in rows])
    assert np.allclose(smoothed(rows), expected, atol=1e-6)
    attentions = [attention_at(p) for p in (3, 400, 1497)]
    profiles, positions = step_rows(attentions)
    assert list(positions) == [focus_position(a) for a in attentions] == [3, 400, 1497]
    assert np.allclose(profiles, [step_profile(a) for a in attentions])


def test_profile_rows_are_scaled_to_their_own_peak():
    row = step_profile(attention_at(50) * np.float16(0.5))
    assert row.shape == (1500,) and row.max() == pytest.approx(1.0) and row.argmax() in range(48, 53)
    assert not step_profile(np.zeros((8, 1500))).any()


def test_frame_energy_joins_windows_and_drops_the_padding():
    mels = np.zeros((2, 80, 3000), np.float32)
    mels[1, :, :10] = 2.0
    e = frame_energy(mels, n_frames=3005)
    assert e.shape == (3005,) and e[3000] == pytest.approx(2.0) and e[2999] == 0.0


def test_short_gaps_are_speech_and_long_ones_pauses():
    energy = energy_of((1, QUIET), (2, LOUD), (0.1, QUIET), (2, LOUD), (1.0, QUIET), (2, LOUD), (2, QUIET))
    speech = speech_mask(energy)
    assert not speech[50] and speech[150] and speech[305]          # 100 ms gap at 3.0-3.1 s: still speech
    assert not speech[560] and speech[700] and not speech[850]     # 1 s gap at 5.1-6.1 s: a pause


@pytest.mark.parametrize("at_s, kind", [
    (8.0, "end of speech"), (7.9, "end of speech"), (8.45, "end of speech"),   # speech ends at 8.1 s
    (5.6, "pause"), (4.0, "speech"), (0.5, "silence before the speech"), (9.5, "silence after the speech")])
def test_classify_where_attention_sat(at_s, kind):
    energy = energy_of((1, QUIET), (2, LOUD), (0.1, QUIET), (2, LOUD), (1.0, QUIET), (2, LOUD), (2, QUIET))
    focus = classify_focus(at_s, energy)
    assert focus.kind == kind and focus.duration_s == pytest.approx(10.1)
    assert focus.speech_end_s == pytest.approx(8.1)


def test_the_banner_phrase():
    energy = energy_of((1, QUIET), (3, LOUD), (1, QUIET), (6, LOUD))
    assert classify_focus(4.1, energy, 11.0).describe() == "EOT while attention was at 4.1 s of 11.0 s (a pause)"
    assert Focus(4.1, 11.0).describe() == "EOT while attention was at 4.1 s of 11.0 s"   # no energy: no kind
    assert classify_focus(1.0, energy_of((3, QUIET))).kind == "no speech"
    assert classify_focus(1.0, None, 3.0).kind == ""


def test_jfk_eot_looks_at_the_end_of_the_speech(onnx_model):
    """The real thing: the EOT step of test_en.wav attends to where the speech ends, not to a pause."""
    from core.model.audio import load_audio
    from core.model.mel import content_frames, mel_windows

    audio = load_audio(AUDIO / "test_en.wav")
    mels, n_frames = mel_windows(audio), content_frames(audio)
    events = list(decode_windows(onnx_model.backend, onnx_model.tokenizer, mels,
                                 DecodeOptions(language="en", attention=True), n_frames=n_frames))
    done = next(e for e in events if isinstance(e, DoneEvent))
    eot = [e for e in events if isinstance(e, TokenEvent)][-1]
    assert done.reason == "eot" and eot.token == onnx_model.tokenizer.eot
    focus = classify_focus(focus_seconds(eot.attention, done.offset_s, duration_s=len(audio) / 16000),
                           frame_energy(mels, n_frames), len(audio) / 16000)
    assert focus.kind == "end of speech", focus
    assert focus.at_s > 0.8 * focus.duration_s
    # An early word's step looks at the speech, well before the end.
    first_word = next(e for e in events if isinstance(e, TokenEvent) and not e.is_special)
    early = classify_focus(focus_seconds(first_word.attention), frame_energy(mels, n_frames))
    assert early.at_s < 2.0 and early.kind in ("speech", "silence before the speech")


def test_a_short_clip_eot_looks_at_the_end_not_at_the_sinks(onnx_model):
    """hello-world is 1.4 s: its EOT step puts most weight on the padding's sinks, yet in the audio it looks
    at the end of the speech."""
    from core.decode.attention_focus import eot_focus
    from core.decode.transcript import Transcript
    from core.model.audio import load_audio
    from core.model.mel import content_frames, mel_windows

    audio = load_audio(AUDIO / "en_asterisk_hello-world.wav")
    mels, n_frames = mel_windows(audio), content_frames(audio)
    t = Transcript()
    for ev in decode_windows(onnx_model.backend, onnx_model.tokenizer, mels,
                             DecodeOptions(language="en", attention=True), n_frames=n_frames):
        t.add(ev)
    assert t.stop_reason == "eot" and focus_seconds(t.steps[-1].attention) > 20   # the sinks win the window
    focus = eot_focus(t.windows, t.steps, frame_energy(mels, n_frames), len(audio) / 16000)
    assert focus.kind == "end of speech" and focus.at_s <= focus.duration_s + 0.5, focus
