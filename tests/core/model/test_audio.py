import numpy as np
import pytest
import soundfile as sf

from core.errors import AudioError
from core.model.audio import load_audio


def test_any_rate_and_channels_become_16k_mono(tmp_path):
    t = np.arange(44100) / 44100
    stereo = np.stack([np.sin(2 * np.pi * 300 * t), np.sin(2 * np.pi * 500 * t)], axis=1) * 0.2
    for ext in ("wav", "flac", "ogg"):
        path = tmp_path / f"tone.{ext}"
        sf.write(path, stereo, 44100)
        audio = load_audio(path)
        assert audio.dtype == np.float32 and audio.ndim == 1
        assert abs(len(audio) - 16000) <= 16


def test_missing_file(tmp_path):
    with pytest.raises(AudioError, match="not found"):
        load_audio(tmp_path / "nope.wav")


def test_empty_and_corrupt_files(tmp_path):
    (tmp_path / "empty.wav").write_bytes(b"")
    with pytest.raises(AudioError, match="empty"):
        load_audio(tmp_path / "empty.wav")
    (tmp_path / "bad.wav").write_bytes(b"RIFF\x00\x00junk" * 50)
    with pytest.raises(AudioError, match="unreadable, neither libsndfile nor FFmpeg recognises it"):
        load_audio(tmp_path / "bad.wav")
    (tmp_path / "notes.xyz").write_bytes(b"hello world" * 100)
    with pytest.raises(AudioError, match="unsupported format"):
        load_audio(tmp_path / "notes.xyz")


def test_zero_length_audio(tmp_path):
    sf.write(tmp_path / "zero.wav", np.zeros(0, np.float32), 16000)
    with pytest.raises(AudioError, match="no samples|empty|corrupt"):
        load_audio(tmp_path / "zero.wav")


def test_the_soundfile_path_equals_librosa_load_on_stereo_44k(tmp_path):
    """The fast path (libsndfile + soxr, no librosa import) must give librosa.load's samples exactly."""
    import warnings

    import librosa
    import soundfile as sf

    from core.model.audio import load_audio
    from tests.conftest import AUDIO

    mono, sr = sf.read(str(AUDIO / "en_asterisk_hello-world.wav"), dtype="float32")
    stereo = librosa.resample(mono, orig_sr=sr, target_sr=44100)
    path = tmp_path / "stereo44k.wav"
    sf.write(str(path), np.stack([stereo, 0.5 * stereo], axis=1), 44100, subtype="FLOAT")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want, _ = librosa.load(str(path), sr=16000, mono=True, dtype=np.float32)
    np.testing.assert_array_equal(load_audio(path), want)


def test_a_directory_is_named_as_one(tmp_path):
    with pytest.raises(AudioError, match="is a directory, not an audio file"):
        load_audio(tmp_path)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nan_and_inf_samples_are_named(tmp_path, bad):
    audio = np.zeros(44100, np.float32)
    audio[12345] = bad
    sf.write(tmp_path / "bad.wav", audio, 44100, subtype="FLOAT")
    with pytest.raises(AudioError, match="contains NaN/Inf samples"):
        load_audio(tmp_path / "bad.wav")


def test_nan_samples_are_named_when_ffmpeg_reads_the_file(tmp_path, monkeypatch):
    """Formats libsndfile cannot open go to FFmpeg, whose samples are checked as libsndfile's are."""
    import core.model.audio as audio_mod

    audio = np.zeros(16000, np.float32)
    audio[5] = np.nan
    sf.write(tmp_path / "bad.wav", audio, 16000, subtype="FLOAT")
    monkeypatch.setattr(audio_mod, "_open_soundfile", lambda path: None)
    with pytest.raises(AudioError, match="contains NaN/Inf samples"):
        load_audio(tmp_path / "bad.wav")


def test_blocks_are_the_whole_file_sample_for_sample(tmp_path):
    """Read and resampled as a stream in small blocks: exactly what one read and one resample give."""
    from core.model.audio import audio_blocks

    rng = np.random.default_rng(2)
    stereo = (0.2 * rng.standard_normal((44100 * 7 + 11, 2))).astype(np.float32)
    path = tmp_path / "s.wav"
    sf.write(path, stereo, 44100, subtype="FLOAT")
    whole = load_audio(path)
    assert len(whole) == int(np.ceil(len(stereo) * 16000 / 44100))
    for block in (4096, 44100 * 3):
        np.testing.assert_array_equal(np.concatenate(list(audio_blocks(path, block))), whole)
