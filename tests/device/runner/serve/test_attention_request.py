"""The "attention" request field over the local runner: each token event carries the alignment heads'
cross-attention when asked, nothing when not; a request the runner cannot serve is refused up front."""
from types import SimpleNamespace

import numpy as np
import pytest

from core.decode.events import TokenEvent
from core.decode.options import UNCACHED_HAS_NO_ATTENTION, DecodeOptions, OptionsError
from core.model.dims import ModelDims
from device import protocol as P
from device.link.client import BoardClient, RunnerError
from device.link.local import LocalTransport
from device.runner.serve.served_model import ServedModel, features_of

MAX_TOKENS = 6


@pytest.fixture(scope="module")
def client():
    with BoardClient(LocalTransport()) as c:
        yield c


def tokens(client, mel, **fields) -> list[TokenEvent]:
    options = DecodeOptions(language="en", max_tokens=MAX_TOKENS, **fields)
    return [a.event for a in client.transcribe(mel, options) if isinstance(a.event, TokenEvent)]


def test_hello_lists_attention_as_a_feature(client):
    assert {"attention", "word_timestamps"} <= set(client.info.raw["features"])


@pytest.mark.parametrize("field", ["attention", "word_timestamps"])
def test_attention_per_token_when_asked(client, en_mel, field):
    toks = tokens(client, en_mel, **{field: True})
    assert len(toks) == MAX_TOKENS
    for t in toks:
        assert t.attention.shape == (8, 1500) and t.attention.dtype == np.float16
        assert np.allclose(t.attention.astype(np.float32).sum(-1), 1.0, atol=1e-2)   # softmax rows


def test_no_attention_when_not_asked(client, en_mel):
    toks = tokens(client, en_mel)
    assert len(toks) == MAX_TOKENS and all(t.attention is None for t in toks)


def test_same_tokens_with_and_without_attention(client, en_mel):
    assert [t.token for t in tokens(client, en_mel, attention=True)] == [t.token for t in tokens(client, en_mel)]


def test_attention_with_cache_off_is_a_bad_request(client, en_mel):
    # DecodeOptions would refuse it here: the header goes as a foreign client's might.
    header = DecodeOptions(language="en", max_tokens=MAX_TOKENS, attention=True).to_wire() | {"cache": "off"}
    with pytest.raises(RunnerError) as exc:
        list(client.transcribe(en_mel, header))
    assert exc.value.code == P.BAD_REQUEST and "attention needs cache on" in str(exc.value)
    assert UNCACHED_HAS_NO_ATTENTION in str(exc.value) and "\n" not in str(exc.value)
    assert len(tokens(client, en_mel)) == MAX_TOKENS       # and the runner serves on


@pytest.mark.parametrize("asked", ["attention", "word_timestamps"])
def test_every_door_refuses_attention_without_the_cache_by_one_rule(asked):
    """The options themselves, the runner's wire reader and its reply, and the CLI (in its flags' names) refuse
    it in the same rule's words."""
    from argparse import Namespace

    from cli.transcribe import options_from_args
    from core.errors import WhisperKVError

    with pytest.raises(OptionsError) as built:
        DecodeOptions(language="en", cache=False, **{asked: True})
    with pytest.raises(OptionsError) as read:
        DecodeOptions.from_wire({"language": "en", "cache": "off", asked: True})
    served = ServedModel.__new__(ServedModel)
    served.model = SimpleNamespace(backend=PlainBackend(ModelDims()), tokenizer=SimpleNamespace(languages={"en": 0}))
    with pytest.raises(P.ProtocolError) as replied:
        served.options({"language": "en", "cache": "off", asked: True}, "r3")
    assert replied.value.code == P.BAD_REQUEST and replied.value.id == "r3"
    assert str(built.value) == str(read.value) == replied.value.message
    assert replied.value.message.startswith(f"{asked} needs cache on: {UNCACHED_HAS_NO_ATTENTION}")
    if asked == "word_timestamps":        # the CLI has no --attention
        args = Namespace(language="en", task="transcribe", cache="off", max_tokens=8, top_k=5, timestamps=False,
                         word_timestamps=True, temperature_fallback=False, seed=0)
        with pytest.raises(WhisperKVError) as said:
            options_from_args(args)
        assert said.value.problem == f"--word-timestamps needs --cache on: {UNCACHED_HAS_NO_ATTENTION}"
        assert said.value.fix == "drop --cache off"


class PlainBackend:
    """Stand-in for a backend without the attention graph variant (say, a Neuron runner's compiled DLA step
    graph): everything a Backend has, no step_with_attention."""
    name = "plain"

    def __init__(self, dims):
        self.dims = dims


def test_a_backend_without_step_with_attention_refuses_with_bad_request():
    served = ServedModel.__new__(ServedModel)
    served.model = SimpleNamespace(backend=PlainBackend(ModelDims()), tokenizer=SimpleNamespace(languages={"en": 0}))
    assert served.options({"language": "en"}, "r1").attention is False
    assert "attention" not in features_of(served.model)
    with pytest.raises(P.ProtocolError) as exc:
        served.options({"language": "en", "word_timestamps": True}, "r2")
    assert exc.value.code == P.BAD_REQUEST and exc.value.id == "r2"
    assert "'plain'" in exc.value.message and "step_with_attention" in exc.value.message


def test_words_over_ssh_equal_the_local_runner_s(sshd, tmp_path, client, en_mel):
    from core.decode.events import DoneEvent
    from device.link.connect import open_client, open_transport
    from device.link.target import parse_target
    from tests.device.link_helpers import NO_CONFIG, ssh_url

    options = DecodeOptions(language="en", max_tokens=MAX_TOKENS, word_timestamps=True)
    local = [a.event for a in client.transcribe(en_mel, options)]
    kh = [str(sshd.write_known_hosts(tmp_path / "known_hosts"))]
    t = open_transport(ssh_url(sshd), known_hosts=kh, allow_agent=False, config_path=NO_CONFIG)
    try:
        with open_client(parse_target(ssh_url(sshd)), transport=t) as remote:
            over_ssh = [a.event for a in remote.transcribe(en_mel, options)]
    finally:
        t.close()
    words = [[e.words for e in evs if isinstance(e, DoneEvent)] for evs in (local, over_ssh)]
    assert words[0] == words[1] and len(words[0][0]) >= 3
    assert all(isinstance(e.attention, np.ndarray) for e in over_ssh if isinstance(e, TokenEvent))
