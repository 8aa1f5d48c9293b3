"""openai-whisper's temperature fallback, off by default: it fires on a decode driven into a repetition
loop and names itself in the events and the verdict; on a clean clip it does not fire and the tokens are
the greedy ones."""
import pytest

from core.decode.decoding import decode_windows
from core.decode.diagnostics import diagnose_transcript
from core.decode.events import DoneEvent, TokenEvent
from core.decode.options import DecodeOptions
from core.decode.transcript import Transcript

LOOP_TOKENS = 120


def decode(model, mels, encoder_cache, **opts) -> tuple[Transcript, list]:
    events = list(decode_windows(model.backend, model.tokenizer, mels, DecodeOptions(language="en", **opts),
                                  encoder_cache=encoder_cache))
    t = Transcript()
    for ev in events:
        t.add(ev)
    return t, events


@pytest.fixture(scope="module")
def model(onnx_model):
    """ONNX Runtime: the same tokens as the NumPy reference (tests/device/runner), and the fallback decodes
    up to six times LOOP_TOKENS steps."""
    return onnx_model


@pytest.fixture(scope="module")
def greedy(model, clip_mels, encoder_cache):
    return decode(model, clip_mels("test_en.wav"), encoder_cache)


def test_clean_clip_no_fallback_and_the_greedy_tokens(model, clip_mels, encoder_cache, greedy):
    t, events = decode(model, clip_mels("test_en.wav"), encoder_cache, temperature_fallback=True)
    done = next(e for e in events if isinstance(e, DoneEvent))
    assert done.quality.fallbacks == [] and done.quality.temperature == 0.0 and done.quality.failures() == []
    assert t.tokens == greedy[0].tokens
    assert all(e.temperature == 0.0 for e in events if isinstance(e, TokenEvent))
    assert "re-decoded" not in diagnose_transcript(t).verdict


def test_greedy_quality_signals(greedy):
    t, events = greedy
    q = t.windows[0].quality
    assert 0.5 < q.compression_ratio < 2.4 and -1.0 < q.avg_logprob < 0 and q.no_speech_prob < 0.6
    steps = [e for e in events if isinstance(e, TokenEvent)]
    assert q.mean_entropy == pytest.approx(sum(s.entropy for s in steps) / len(steps), abs=1e-3)
    assert all(s.entropy >= 0 for s in steps)


@pytest.fixture(scope="module")
def looped(model, clip_mels, encoder_cache):
    """EOT forbidden: after the sentence, the greedy decoder can only go round it again (a loop whose text
    compresses far better than speech does), so whisper's compression-ratio rule fails it."""
    opts = {"suppress_eot": True, "max_tokens": LOOP_TOKENS}
    return decode(model, clip_mels("test_en.wav"), encoder_cache, **opts), \
        decode(model, clip_mels("test_en.wav"), encoder_cache, temperature_fallback=True, seed=3, **opts)


def test_fallback_fires_on_a_repetition_loop(looped):
    (plain, _), (t, events) = looped
    assert plain.windows[0].quality.compression_ratio > 2.4 and plain.windows[0].quality.fallbacks == []
    q = t.windows[0].quality
    assert q.temperature > 0 and q.fallbacks
    assert q.fallbacks[0].startswith("compression ratio") and q.fallbacks[0].endswith("at T=0.0")
    assert len(q.fallbacks) == round(q.temperature / 0.2)           # one per temperature tried before the last
    temps = [e.temperature for e in events if isinstance(e, TokenEvent)]
    assert temps[0] == 0.0 and temps[-1] == q.temperature and temps == sorted(temps)
    assert sum(isinstance(e, DoneEvent) for e in events) == 1        # one window, one done
    # the transcript keeps the last decode's steps; the attempts it replaced are set aside
    assert {s.temperature for s in t.steps} == {q.temperature} and len(t.superseded) >= LOOP_TOKENS
    assert len(t.steps) == LOOP_TOKENS
    verdict = diagnose_transcript(t).verdict
    assert f"re-decoded at T={q.temperature:.1f} after compression ratio" in verdict, verdict

