"""Recordings libsndfile cannot read (AAC in M4A, Opus in WebM, a video's sound) decoded through PyAV,
written by the test itself from test_en.wav."""
import numpy as np
import pytest
import soundfile as sf

from core.errors import AudioError
from core.model.audio import SAMPLE_RATE, audio_blocks, load_audio
from tests.audio_files import write_as
from tests.conftest import AUDIO


def original() -> np.ndarray:
    samples, rate = sf.read(str(AUDIO / "test_en.wav"), dtype="float32")
    assert rate == SAMPLE_RATE
    return samples


@pytest.mark.parametrize("kind", ["m4a", "webm", "mp4"])
def test_each_format_becomes_the_same_16k_mono_float32(tmp_path, kind):
    path = write_as(AUDIO / "test_en.wav", tmp_path / f"jfk.{kind}")
    ref = original()
    audio = load_audio(path)
    assert audio.dtype == np.float32 and audio.ndim == 1
    assert abs(len(audio) - len(ref)) < 0.1 * SAMPLE_RATE
    # Lossy codecs delay the start by a frame or so: compare at the best lag.
    lag = int(np.argmax(np.correlate(audio[:SAMPLE_RATE + 4096], ref[:SAMPLE_RATE], "valid")))
    n = min(len(ref), len(audio) - lag)
    assert np.corrcoef(audio[lag:lag + n], ref[:n])[0, 1] > 0.99


@pytest.mark.parametrize("kind", ["m4a", "mp4"])
def test_blocks_stay_small_and_add_up_to_the_whole(tmp_path, kind):
    path = write_as(AUDIO / "test_en.wav", tmp_path / f"jfk.{kind}")
    blocks = list(audio_blocks(path, block=8192))
    assert len(blocks) > 10 and max(len(b) for b in blocks) <= 8192 + 2048
    np.testing.assert_array_equal(np.concatenate(blocks), load_audio(path))


def test_a_video_without_sound_names_its_container_and_tracks(tmp_path):
    import av

    path = tmp_path / "silent.mp4"
    with av.open(str(path), "w") as out:
        video = out.add_stream("mpeg4", rate=5)
        video.width, video.height, video.pix_fmt = 64, 48, "yuv420p"
        for _ in range(5):
            out.mux(video.encode(av.VideoFrame.from_ndarray(np.zeros((48, 64, 3), np.uint8), format="rgb24")))
        out.mux(video.encode(None))
    with pytest.raises(AudioError, match=r"silent.mp4 has no audio track \(QuickTime / MOV container with video"):
        load_audio(path)


def test_damaged_audio_names_container_codec_and_where_never_corrupt(tmp_path):
    data = bytearray(write_as(AUDIO / "test_en.wav", tmp_path / "jfk.m4a").read_bytes())
    for i in range(len(data) // 2, len(data) * 3 // 4, 7):
        data[i] = (data[i] * 31 + 7) & 255
    (tmp_path / "hurt.m4a").write_bytes(bytes(data))
    with pytest.raises(AudioError) as err:
        load_audio(tmp_path / "hurt.m4a")
    msg = str(err.value)
    assert "aac" in msg and "QuickTime / MOV" in msg and " s:" in msg and "corrupt" not in msg


def test_what_no_decoder_recognises_is_unreadable_not_corrupt(tmp_path):
    (tmp_path / "cut.m4a").write_bytes(write_as(AUDIO / "test_en.wav", tmp_path / "x.m4a").read_bytes()[:5000])
    with pytest.raises(AudioError, match="unreadable, neither libsndfile nor FFmpeg") as err:
        load_audio(tmp_path / "cut.m4a")
    assert "corrupt" not in str(err.value) and "cut short" in str(err.value)
