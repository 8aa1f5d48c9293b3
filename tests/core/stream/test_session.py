"""One live session (core/stream/session.py) on real audio through the local runner: the stop flag, the events and
the summary, the warm-up outside the passes' decoder, a runner without prompts; and a policy parameter added as one
row of the table, reaching the commit rule and the summary."""
import pytest

from core.errors import WhisperKVError
from core.model.audio import load_audio
from core.model.tokenizer import WhisperTokenizer
from core.model.weights import find_tokenizer
from core.stream import policies
from core.stream.agreement import LocalAgreement
from core.stream.events import Committed, PassRecord, Tentative
from core.stream.feed import blocks_of, realtime_blocks
from core.stream.policies import PolicyKind, PolicyParam, policy_summary
from core.stream.policy import StreamConfig
from core.stream.session import StreamSession
from tests.conftest import AUDIO
from tests.core.stream.counting import counting_decoder


@pytest.fixture(scope="module")
def tokenizer():
    return WhisperTokenizer.from_file(find_tokenizer())


def test_a_live_session_stopped_in_its_second_pass_keeps_what_it_heard(local_client, tokenizer):
    counting, calls = counting_decoder(local_client)
    session = None

    def stop_in_the_second_pass(decode_one):
        def decode(mel, options, n_frames):
            if len(calls) == 2:     # the warm-up is not watched: this is the second pass
                session.stop()      # as a click lands while the decode thread is inside a pass
            yield from decode_one(mel, options, n_frames)
        return decode

    seen = []
    session = StreamSession(counting, tokenizer, StreamConfig(language="en", policy="alignatt"), on_event=seen.append,
                            watch=stop_in_the_second_pass)
    audio = load_audio(AUDIO / "en_asterisk_demo-congrats.wav")   # 30 s: two passes end well before it does
    doc = session.run(realtime_blocks(audio), live=True)
    passes = [e for e in session.events if isinstance(e, PassRecord)]
    assert len(calls) == 3 and len(passes) == 2        # the warm-up, then two passes; none after the stop
    assert seen == session.events and isinstance(seen[-1], Tentative) and seen[-1].text == ""
    assert doc["text"] == "".join(e.text for e in seen if isinstance(e, Committed)).strip() == session.policy.text
    assert doc["text"]
    assert doc["policy"] == "alignatt" and doc["margin_frames"] == 10 and doc["min_chunk_s"] == 1.0
    assert doc["language"] == "en" and len(doc["passes"]) == 2


def test_a_runner_without_prompts_streams_without_one(local_client, tokenizer):
    counting, calls = counting_decoder(local_client)
    prompts = []

    def watch(decode_one):
        def decode(mel, options, n_frames):
            prompts.append(options.prompt)
            return decode_one(mel, options, n_frames)
        return decode

    # 12 s, trimmed past 4 s: the buffer soon starts after committed text, which would be the prompt
    audio = load_audio(AUDIO / "en_asterisk_demo-congrats.wav")[:12 * 16000]
    config = StreamConfig(language="en", params={"min_chunk_s": 2.0}, trim_s=4.0)
    session = StreamSession(counting, tokenizer, config, vad=False, takes_prompt=False, watch=watch)
    assert session.prompt_refused
    doc = session.run(blocks_of(audio), live=False)
    assert len(prompts) == len(calls) == len(doc["passes"]) > 3     # fast: no warm-up
    assert prompts == [[]] * len(prompts) and doc["text"]
    after_trim = [e for e in session.events if isinstance(e, PassRecord) and e.buffer_start_s > 0]
    assert after_trim and session.policy.history[0].end <= after_trim[0].buffer_start_s   # text it could have had


def test_a_toy_parameter_is_one_row_and_reaches_the_rule_and_the_summary(monkeypatch):
    heard = []

    def toy_rule(config):
        heard.append(config.params["patience"])
        return LocalAgreement()

    monkeypatch.setitem(policies.POLICIES, "toy", PolicyKind("toy", "a toy rule", toy_rule, 0.5))
    monkeypatch.setitem(policies.PARAMS, "patience", PolicyParam(
        "patience", "--patience", int, 2, 1, True, "passes", "toy: passes to wait", ("toy",)))
    config = StreamConfig(policy="toy", params={"patience": 4})
    policies.policy_kind("toy").rule(config)
    assert heard == [4] and config.min_chunk_s == 0.5
    assert policy_summary(config) == {"policy": "toy", "min_chunk_s": 0.5, "patience": 4, "window_floor_s": 20.0,
                                      "window_margin_s": 2.0}
    assert StreamConfig(policy="toy").params["patience"] == 2
    assert "patience" not in policy_summary(StreamConfig(policy="alignatt"))
    with pytest.raises(WhisperKVError, match="--patience must be at least 1 passes"):
        StreamConfig(policy="toy", params={"patience": 0})
