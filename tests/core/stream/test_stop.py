"""Stopping a live stream on real audio through the local runner: no pass starts once stop is asked, the pass
that was running ends, and what it heard is committed (the text on screen is kept)."""
import threading

import pytest

from core.model.audio import load_audio
from core.model.tokenizer import WhisperTokenizer
from core.model.weights import find_tokenizer
from core.stream.events import Committed, PassRecord, Tentative
from core.stream.feed import realtime_blocks, stream_live
from core.stream.one_pass import warm_up
from core.stream.policy import StreamConfig, StreamPolicy
from core.stream.vad import SileroVad, VoiceGate
from device.link.decoder import RunnerDecoder
from tests.conftest import AUDIO
from tests.core.stream.counting import counting_decoder

SR = 16000


@pytest.fixture(scope="module")
def tokenizer():
    return WhisperTokenizer.from_file(find_tokenizer())


def test_stop_during_a_pass_starts_no_other_and_commits_what_it_heard(local_client, tokenizer):
    decode = RunnerDecoder(local_client).window
    warm_up(decode, "en")
    stop, started, events = threading.Event(), [], []

    def stop_in_the_second_pass(mel, options, n_frames):
        started.append(n_frames)
        if len(started) == 2:
            stop.set()          # as a click lands while the decode thread is inside a pass
        yield from decode(mel, options, n_frames)

    audio = load_audio(AUDIO / "en_asterisk_demo-congrats.wav")   # 30 s: two passes end well before it does
    policy = stream_live(realtime_blocks(audio),
                         lambda clock: StreamPolicy(stop_in_the_second_pass, tokenizer, StreamConfig(language="en"),
                                                    VoiceGate(SileroVad()), clock), events.append, stop.is_set)
    passes = [e for e in events if isinstance(e, PassRecord)]
    assert len(started) == len(passes) == 2            # the running pass ended; none started after the stop
    assert policy.fed < len(audio)                     # it stopped part-way through the file
    assert policy.text and policy.agreement.tentative == []
    assert isinstance(events[-1], Tentative) and events[-1].text == ""
    committed = "".join(e.text for e in events if isinstance(e, Committed)).strip()
    assert committed == policy.text


def test_stop_with_new_audio_since_the_last_pass_runs_no_pass(local_client, tokenizer):
    counting, calls = counting_decoder(local_client)

    policy = StreamPolicy(counting, tokenizer, StreamConfig(language="en", params={"min_chunk_s": 1.0}))   # no VAD gate
    audio = load_audio(AUDIO / "en_arctic_slt_a0009.wav")
    policy.feed(audio[:2 * SR])
    while policy.due():
        policy.run_pass()
    policy.feed(audio[2 * SR:int(2.8 * SR)])      # heard after the last pass: finish() would run a pass for it
    n = len(calls)
    events = policy.stop()
    assert len(calls) == n and not policy.segments
    assert policy.text and policy.agreement.tentative == [] and isinstance(events[-1], Tentative)
