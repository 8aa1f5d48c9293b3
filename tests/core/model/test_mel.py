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
