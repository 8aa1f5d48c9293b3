"""Silero VAD through ONNX Runtime: streamed in pieces as at once; speech found in the bundled clips, with
noise added too; silence and noise alone never open the gate."""
import numpy as np
import pytest

from core.model.audio import load_audio
from core.stream.vad import FRAME, SileroVad, VoiceGate
from tests.conftest import AUDIO

SR = 16000


@pytest.fixture(scope="module")
def vad():
    return SileroVad()


def noise(seconds: float, rms: float, seed: int = 0) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(int(seconds * SR)) * rms).astype(np.float32)


def test_state_carries_over_between_calls(vad):
    audio = load_audio(AUDIO / "test_en.wav")[:FRAME * 200]
    vad.reset()
    whole = vad.probs(audio)
    vad.reset()
    pieces = np.concatenate([vad.probs(audio[i:i + FRAME * 7]) for i in range(0, len(audio), FRAME * 7)])
    assert len(whole) == 200
    np.testing.assert_allclose(pieces, whole, atol=1e-5)


def edges(audio: np.ndarray, block: int = 1600) -> list[tuple[str, int]]:
    gate = VoiceGate(SileroVad())
    return [e for i in range(0, len(audio), block) for e in gate.push(audio[i:i + block])]


@pytest.mark.parametrize("name", ["test_en.wav", "en_arctic_slt_a0009.wav", "en_asterisk_hello-world.wav"])
@pytest.mark.parametrize("snr_db", [None, 10])
def test_speech_opens_the_gate_clean_or_noisy(name, snr_db):
    speech = load_audio(AUDIO / name)
    if snr_db is not None:
        rms = np.sqrt(np.mean(speech ** 2)) / 10 ** (snr_db / 20)
        speech = speech + noise(len(speech) / SR, rms)
    audio = np.concatenate([np.zeros(SR, np.float32), speech, np.zeros(SR, np.float32)])
    found = edges(audio)
    assert found and found[0][0] == "start" and found[-1][0] == "end"
    assert SR * 0.5 <= found[0][1] <= SR + len(speech)          # not before the leading second of silence
    assert found[-1][1] <= SR + len(speech) + SR // 2


@pytest.mark.parametrize("kind", ["silence", "white -30 dBFS", "white -15 dBFS", "hum 50 Hz"])
def test_silence_and_noise_alone_never_open_it(kind):
    t = np.arange(20 * SR) / SR
    audio = {"silence": np.zeros(20 * SR, np.float32),
             "white -30 dBFS": noise(20, 10 ** (-30 / 20)),
             "white -15 dBFS": noise(20, 10 ** (-15 / 20), seed=1),
             "hum 50 Hz": (0.1 * np.sin(2 * np.pi * 50 * t)).astype(np.float32)}[kind]
    assert edges(audio) == []
