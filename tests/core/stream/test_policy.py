"""The streaming policy on real audio through the local runner: the right text is committed, silence and
noise commit nothing, a slow runner makes it skip ahead (and say so), long speech is trimmed and prompted,
and an identical buffer does not run the encoder again."""
import time

import numpy as np
import pytest

from core.decode.options import DecodeOptions
from core.model.audio import load_audio
from core.model.tokenizer import WhisperTokenizer
from core.model.weights import find_tokenizer
from core.qa.scoring import error_rate, normalize
from core.stream.events import Committed, PassRecord, Skipped, Trimmed
from core.stream.feed import blocks_of, realtime_blocks, stream_fast, stream_live
from core.stream.one_pass import buffer_mel, run_pass, warm_up
from core.stream.policies import POLICIES
from core.stream.policy import StreamConfig, StreamPolicy
from core.stream.vad import SileroVad, VoiceGate
from device.link.decoder import RunnerDecoder
from tests.conftest import AUDIO
from tests.core.stream.counting import counting_decoder

SR = 16000


@pytest.fixture(scope="module")
def client():
    """One local runner for the module, with room for every pass's cross K/V: the two policies streaming the same
    file hear the same buffers, and the second one's passes take the encoder's output from the cache (the
    encoder is most of a pass's cost; the tokens are the same either way)."""
    from device.link.client import BoardClient
    from device.link.local import LocalTransport

    with BoardClient(LocalTransport(), runner_args=["--encoder-cache-mb", "768"]) as client:
        yield client


@pytest.fixture(scope="module")
def tokenizer():
    return WhisperTokenizer.from_file(find_tokenizer())


def padded(name: str, seconds: float = 1.0) -> np.ndarray:
    gap = np.zeros(int(seconds * SR), np.float32)
    return np.concatenate([gap, load_audio(AUDIO / name), gap])


def stream(client, tokenizer, audio, gate=True, **config):
    events = []
    policy = StreamPolicy(RunnerDecoder(client).window, tokenizer, StreamConfig(language="en", **config),
                          VoiceGate(SileroVad()) if gate else None)
    stream_fast(blocks_of(audio), policy, events.append)
    return policy, events


def of(events, kind):
    return [e for e in events if isinstance(e, kind)]


@pytest.mark.parametrize("rule", list(POLICIES))
def test_a_file_streamed_commits_its_text_piece_by_piece(client, tokenizer, references, rule):
    policy, events = stream(client, tokenizer, padded("test_en.wav"), policy=rule)
    commits = of(events, Committed)
    assert error_rate(references["test_en.wav"]["reference"], policy.text) <= 0.1, policy.text
    assert len(commits) >= 3                                # confirmed as it went, not all at the end
    assert len(of(events, PassRecord)) >= 8                 # about one pass per second of speech
    for c in commits:
        assert 0.5 <= c.start_s <= c.end_s <= c.emitted_s + 0.05     # no text before the speech; none from the future
    assert [c.end_s for c in commits] == sorted(c.end_s for c in commits)
    assert "".join(c.text for c in commits).strip() == policy.text


@pytest.mark.parametrize("policy", list(POLICIES))
def test_silence_commits_nothing_and_runs_no_pass(client, tokenizer, policy):
    _, events = stream(client, tokenizer, np.zeros(8 * SR, np.float32), policy=policy)
    assert of(events, Committed) == [] and of(events, PassRecord) == []


@pytest.mark.parametrize("policy", list(POLICIES))
def test_noise_alone_commits_nothing(client, tokenizer, policy):
    rng = np.random.default_rng(3)
    hiss = (rng.standard_normal(8 * SR) * 0.03).astype(np.float32)
    _, events = stream(client, tokenizer, hiss, policy=policy)
    assert of(events, Committed) == []


@pytest.fixture(scope="module")
def long_speech(client, tokenizer):
    """30 s of speech without a gate, streamed once for the tests below: every pass's options and decoded tokens,
    the policy and its events."""
    asked, decoded = [], []
    real = RunnerDecoder(client).window

    def recording(mel, options, n_frames):
        asked.append(options)
        for ev in real(mel, options, n_frames):
            if ev.type == "done":
                decoded.append(ev.tokens)
            yield ev

    policy = StreamPolicy(recording, tokenizer, StreamConfig(language="en", params={"min_chunk_s": 2.0}, trim_s=8.0,
                                                             word_cut_s=12.0, forced_s=20.0))
    events = []
    stream_fast(blocks_of(load_audio(AUDIO / "en_asterisk_demo-congrats.wav")), policy, events.append)
    return asked, decoded, policy, events


def test_long_speech_is_trimmed_at_commits_and_later_passes_are_prompted(long_speech, references):
    _, _, policy, events = long_speech
    passes, trims = of(events, PassRecord), of(events, Trimmed)
    assert trims and all(t.reason in ("sentence", "word") for t in trims)
    assert max(p.audio_s for p in passes) <= 20.0 + 2.0 + 0.5
    prompted = [p for p in passes if p.buffer_start_s > 0]
    assert prompted and all(p.prompt_tokens > 0 for p in prompted)
    assert all(p.cache_len >= p.prompt_tokens + 5 for p in prompted)   # <|startofprev|> + prompt + SOT sequence
    assert error_rate(references["en_asterisk_demo-congrats.wav"]["reference"], policy.text) <= 0.15, policy.text


def slow(decode_one, delay_s):
    """A stand-in for a runner slower than the audio: the real decode, after a sleep."""
    def one(mel, options, n_frames):
        time.sleep(delay_s)
        yield from decode_one(mel, options, n_frames)
    return one


def test_a_slow_runner_makes_the_stream_skip_ahead_and_report_it(client, tokenizer, references):
    events = []
    audio = padded("test_en.wav")
    warm_up(RunnerDecoder(client).window, "en")
    speed = 4.0      # 4x real time: each pass (sleep + decode) spans several seconds of stream time
    policy = stream_live(realtime_blocks(audio, speed=speed),
                         lambda clock: StreamPolicy(slow(RunnerDecoder(client).window, 0.5), tokenizer,
                                                    StreamConfig(language="en"), VoiceGate(SileroVad()), clock),
                         events.append)
    skips, passes = of(events, Skipped), of(events, PassRecord)
    assert skips and all(s.behind_s > 0 for s in skips)
    assert len(passes) < 11 / 2          # not one per second of speech: the missed ones were never queued
    # every pass takes the audio up to when it started: it never works through a backlog. A final pass ends
    # where the speech ended: at a pause the VAD heard (JFK pauses after "Americans,"), or at 11.3 s before the
    # trailing silence, however late the silence let it start.
    for p in passes:
        assert p.buffer_start_s + p.audio_s >= (min(p.at_s - 1.0, 11.3) if p.final else p.at_s - 1.0)
    assert error_rate(references["test_en.wav"]["reference"], policy.text) <= 0.15, policy.text


def test_an_identical_buffer_does_not_run_the_encoder_again(client, tokenizer):
    audio = load_audio(AUDIO / "en_arctic_slt_a0009.wav")
    audio = audio + np.float32(1e-4) * np.random.default_rng(7).standard_normal(len(audio)).astype(np.float32)
    one = RunnerDecoder(client).window
    first = run_pass(one, tokenizer, audio, 0.0, DecodeOptions(language="en", word_timestamps=True))
    prompt = tokenizer.encode(" Sherlock Holmes.")
    again = run_pass(one, tokenizer, audio, 0.0, DecodeOptions(language="en", word_timestamps=True, prompt=prompt))
    assert not first.record.cache_hit and again.record.cache_hit
    assert again.record.prompt_tokens == len(prompt) and again.record.cache_len > first.record.cache_len
    assert "turned sharply" in "".join(w.word for w in again.words).lower()


def test_finish_without_new_audio_commits_the_tentative_text_without_a_pass(client, tokenizer):
    counting, calls = counting_decoder(client)

    policy = StreamPolicy(counting, tokenizer, StreamConfig(language="en", params={"min_chunk_s": 1.0}))   # no VAD gate
    events = []
    audio = load_audio(AUDIO / "en_arctic_slt_a0009.wav")
    for block in blocks_of(audio[:2 * SR]):
        policy.feed(block)
    while policy.due():
        events += policy.run_pass()
    n = len(calls)
    events += policy.finish()
    assert len(calls) == n            # the buffer was the last pass's: nothing to run again
    assert policy.text and policy.agreement.tentative == []


def test_a_pass_drafts_the_last_ones_tokens_when_it_hears_the_same_buffer_start_and_prompt(long_speech):
    asked, decoded, policy, events = long_speech
    passes = of(events, PassRecord)
    assert len(passes) == len(asked) == len(decoded) >= 10 and of(events, Trimmed)
    assert asked[0].draft == []
    same = [(passes[i].buffer_start_s, asked[i].prompt) == (passes[i - 1].buffer_start_s, asked[i - 1].prompt)
            for i in range(1, len(asked))]
    for i in range(1, len(asked)):
        assert asked[i].draft == (decoded[i - 1] if same[i - 1] else [])
    assert not all(same)                # a trim moved the buffer start: those passes had no draft
    assert sum(bool(a.draft) for a in asked) >= len(asked) // 2
    assert "congratulations" in policy.text.lower() and "asterisk" in policy.text.lower()


def test_a_pass_that_copies_its_prompt_is_heard_again_without_it(client, tokenizer, references):
    """A stand-in for a failure of Whisper's: a prompted pass writes its prompt again instead of its buffer (seen on
    synthesised speech: pass after pass wrote only the sentence cut off before the buffer, and the stream stalled).
    Here a request prompted with the first clip's sentence ("...across the table.") is answered by the real runner
    hearing that clip's audio again."""
    first, then = load_audio(AUDIO / "en_arctic_slt_a0009.wav"), load_audio(AUDIO / "test_en.wav")
    first_mel, first_frames = buffer_mel(first)
    real, asked = RunnerDecoder(client).window, []

    def copying(mel, options, n_frames):
        asked.append(normalize(tokenizer.decode(options.prompt)).endswith("the table"))
        return real(first_mel, options, first_frames) if asked[-1] else real(mel, options, n_frames)

    audio = np.concatenate([first, np.zeros(SR // 2, np.float32), then])
    policy = StreamPolicy(copying, tokenizer, StreamConfig(language="en", trim_s=3.0))      # no VAD gate
    events = []
    stream_fast(blocks_of(audio), policy, events.append)
    assert len(of(events, PassRecord)) == len(asked)           # the copied pass is reported too
    assert any(asked) and all(not again for copied, again in zip(asked, asked[1:]) if copied)
    said = " ".join(references[name]["reference"] for name in ("en_arctic_slt_a0009.wav", "test_en.wav"))
    assert error_rate(said, policy.text) <= 0.15, policy.text
    assert policy.text.lower().count("gregson") == 1
