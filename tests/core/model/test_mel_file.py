"""MelSource: a file's mel window by window equals the mel of the whole audio, in bounded memory."""
import tracemalloc

import numpy as np
import soundfile as sf

from core.model.audio import load_audio
from core.model.mel import N_FRAMES, log_mel, pad_or_trim
from core.model.mel_file import KEEP_WINDOWS, MelSource


def write_tone(path, seconds: float, rate: int = 16000, channels: int = 1, seed: int = 0):
    """A tone in noise, written a few seconds at a time so the test itself never holds the whole file."""
    rng = np.random.default_rng(seed)
    with sf.SoundFile(str(path), "w", rate, channels, subtype="PCM_16") as f:
        for start in range(0, int(seconds * rate), 10 * rate):
            t = np.arange(start, min(start + 10 * rate, int(seconds * rate))) / rate
            x = 0.3 * np.sin(2 * np.pi * 220 * t) * (1 + np.sin(t / 3)) / 2 + 0.02 * rng.standard_normal(t.size)
            f.write(np.repeat(x[:, None], channels, axis=1).astype(np.float32))
    return path


def test_windows_of_a_file_are_the_mel_of_its_whole_audio(tmp_path):
    path = write_tone(tmp_path / "long.wav", 200.3, rate=22050, channels=2)     # resampled, not kept
    source = MelSource.of_file(path)
    assert source.kept is None
    full = log_mel(load_audio(path))
    assert source.n_frames == full.shape[-1]
    np.testing.assert_array_equal(np.concatenate(list(source.windows()), axis=-1), full)


def test_the_cursor_cuts_windows_at_any_forward_start_as_the_whole_mel_would(tmp_path):
    audio = load_audio(write_tone(tmp_path / "a.wav", 95.5))
    source = MelSource.of_audio(audio)
    full = log_mel(audio)
    cursor = source.cursor()
    for start in (0, 2890, 5800, 6000, 8999, 9540):      # timestamps mode: each start after the last
        np.testing.assert_array_equal(cursor.at(start), pad_or_trim(full[:, start:start + N_FRAMES]))


def test_a_short_file_is_read_once(tmp_path):
    audio = load_audio(write_tone(tmp_path / "a.wav", 40))
    reads = []
    source = MelSource.scan(lambda: reads.append(1) or [audio])
    assert len(list(source.windows())) == 2 and len(reads) == 1 and len(source.kept) <= KEEP_WINDOWS


def feature_peak_bytes(path) -> int:
    """Peak bytes allocated while scanning a file and producing every window."""
    tracemalloc.start()
    try:
        source = MelSource.of_file(path)
        n = sum(w.shape[-1] for w in source.windows())
        assert n == source.n_frames
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_feature_memory_does_not_grow_with_duration(tmp_path):
    """3 vs 20 minutes at 44.1 kHz: the 20 minutes' mel alone would be 38 MB, its samples 77 MB."""
    short = feature_peak_bytes(write_tone(tmp_path / "short.wav", 180, rate=44100))
    long = feature_peak_bytes(write_tone(tmp_path / "long.wav", 1200, rate=44100))
    assert long < 1.2 * short, (short, long)
    assert long < 64 << 20, long
