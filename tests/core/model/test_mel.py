"""log_mel() against an independent computation written here (scipy STFT, explicit loops)."""
import numpy as np
import scipy.signal

from core.model.audio import SAMPLE_RATE
from core.model.mel import N_FRAMES, log_mel, mel_filters, mel_windows, pad_or_trim


def reference_log_mel(audio: np.ndarray) -> np.ndarray:
    audio = audio.astype(np.float64)
    padded = np.pad(audio, 200, mode="reflect")
    window = scipy.signal.get_window("hann", 400, fftbins=True)  # periodic Hann
    n_frames = len(audio) // 160
    power = np.empty((201, n_frames))
    for t in range(n_frames):  # the last centred frame is dropped, as Whisper does
        frame = padded[t * 160:t * 160 + 400] * window
        power[:, t] = np.abs(np.fft.rfft(frame)) ** 2
    import librosa
    mel = librosa.filters.mel(sr=16000, n_fft=400, n_mels=80) @ power
    logs = np.log10(np.clip(mel, 1e-10, None))
    logs = np.maximum(logs, logs.max() - 8.0)
    return (logs + 4.0) / 4.0


def test_log_mel_matches_independent_computation():
    rng = np.random.default_rng(1)
    t = np.arange(int(2.3 * SAMPLE_RATE)) / SAMPLE_RATE
    audio = (0.3 * np.sin(2 * np.pi * 440 * t) + 0.05 * rng.standard_normal(t.size)).astype(np.float32)
    ours = log_mel(audio)
    ref = reference_log_mel(audio)
    assert ours.shape == ref.shape == (80, len(audio) // 160)
    assert np.max(np.abs(ours - ref)) < 2e-3


def test_filters_are_slaney_librosa():
    assert mel_filters().shape == (80, 201)


def test_padding_is_zero_in_normalised_space():
    audio = np.random.default_rng(0).standard_normal(16000).astype(np.float32)
    mel = mel_windows(audio)
    assert mel.shape == (1, 80, N_FRAMES)
    assert np.all(mel[0, :, 100:] == 0.0)
    assert not np.all(mel[0, :, :100] == 0.0)


def test_long_audio_is_cut_into_windows():
    audio = np.zeros(int(61 * SAMPLE_RATE), np.float32)
    audio[::7] = 0.1
    assert mel_windows(audio).shape == (3, 80, N_FRAMES)


def test_pad_or_trim_trims():
    assert pad_or_trim(np.ones((80, 3500), np.float32)).shape == (80, 3000)


def test_the_stored_filterbank_is_librosas():
    import librosa

    from core.model.mel import mel_filters

    for n in (80, 128):
        want = librosa.filters.mel(sr=16000, n_fft=400, n_mels=n).astype(np.float32)
        np.testing.assert_array_equal(mel_filters(n), want)


def one_shot_log_mel(audio: np.ndarray) -> np.ndarray:
    """log_mel as it was before it went window by window: all frames in one STFT, each frame's mel product
    as log10_mel computes it (test_a_frames_mel_does_not_depend_on_the_frames_computed_with_it)."""
    from core.model.mel import _hann_periodic

    padded = np.pad(audio, 200, mode="reflect") if len(audio) > 200 else np.pad(audio, 200)
    frames = np.lib.stride_tricks.sliding_window_view(padded, 400)[::160][:1 + (len(padded) - 400) // 160]
    power = (np.abs(np.fft.rfft(frames * _hann_periodic(400), axis=-1)) ** 2)[:-1].astype(np.float32)
    mel = np.stack([mel_filters() @ frame for frame in power], axis=-1)
    logs = np.log10(np.maximum(mel, 1e-10))
    return ((np.maximum(logs, logs.max() - 8.0) + 4.0) / 4.0).astype(np.float32)


def test_a_frames_mel_does_not_depend_on_the_frames_computed_with_it():
    """One product of all frames rounds a frame's sums by where it falls in the matrix (it did on a Zen 5 with
    NumPy's OpenBLAS: a window computed alone differed in the last bit from the same frames in a longer file)."""
    from core.model.mel import log10_mel

    rng = np.random.default_rng(3)
    padded = (0.2 * rng.standard_normal(3001 * 160 + 400)).astype(np.float32)
    whole = log10_mel(padded, 3001)
    for first, n in ((0, 1), (1, 1), (3000, 1), (2937, 64), (2995, 6), (7, 2994), (1, 3000)):
        part = log10_mel(padded[first * 160:], n)
        np.testing.assert_array_equal(part, whole[:, first:first + n], err_msg=f"frames {first}..{first + n}")


def test_windowed_log_mel_is_bit_identical_to_the_one_shot_computation():
    """Clips, window edges, and long audio whose last window holds 1 frame or a few."""
    rng = np.random.default_rng(7)
    audio = (0.2 * rng.standard_normal(3 * 480000 + 9000)).astype(np.float32)
    for n in (160, 200, 201, 1000, 36800, 479999, 480000, 480040, 480041, 480200, 480401, 960000 + 31 * 160,
              1440000 + 160, len(audio)):
        np.testing.assert_array_equal(log_mel(audio[:n]), one_shot_log_mel(audio[:n]), err_msg=f"{n} samples")


def test_a_clip_shorter_than_one_mel_frame_is_padded_like_any_short_clip():
    from core.model.mel import content_frames

    audio = np.full(10, 0.1, np.float32)
    assert log_mel(audio).shape == (80, 1) and content_frames(audio) == 1
    mel = mel_windows(audio)
    assert mel.shape == (1, 80, N_FRAMES) and np.isfinite(mel).all() and np.all(mel[0, :, 1:] == 0.0)


def test_raw_windows_do_not_depend_on_how_the_audio_is_cut_into_blocks():
    from core.model.mel import raw_windows

    audio = (0.2 * np.random.default_rng(8).standard_normal(2 * 480000 + 5000)).astype(np.float32)
    want = list(raw_windows([audio]))
    assert [w.shape[-1] for w in want] == [3000, 3000, 31]
    for size in (999, 160, 480000, 700001):
        got = list(raw_windows(audio[i:i + size] for i in range(0, len(audio), size)))
        assert len(got) == len(want) and all(np.array_equal(a, b) for a, b in zip(got, want)), size
