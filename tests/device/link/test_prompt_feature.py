"""The `prompt` request field end to end: advertised in hello, checked by the runner, and never sent to a
runner that does not list it."""
import pytest

from core.decode.events import TokenEvent
from core.decode.options import DecodeOptions
from core.errors import WhisperKVError
from device import protocol as P
from device.link.client import RunnerError


@pytest.fixture(scope="module")
def client(local_client):
    return local_client


def test_hello_lists_the_prompt_feature(client):
    assert "prompt" in client.info.features and set(P.FEATURES) <= set(client.info.raw["features"])


def test_the_runner_feeds_the_prompt_and_refuses_one_over_budget(client, en_mel):
    prompt = list(range(1000, 1010))
    got = [a.event for a in client.transcribe(en_mel, DecodeOptions(language="en", max_tokens=2, prompt=prompt))]
    first = next(e for e in got if isinstance(e, TokenEvent))
    assert first.cache_len == 1 + len(prompt) + 4
    with pytest.raises(RunnerError, match="at most 223") as err:
        list(client.transcribe(en_mel, {"language": "en", "prompt": [1000] * 224}))
    assert err.value.code == P.BAD_REQUEST
    with pytest.raises(RunnerError, match="token ids"):
        list(client.transcribe(en_mel, {"language": "en", "prompt": [60000]}))
    # the link is still usable after the refusals
    assert list(client.transcribe(en_mel, DecodeOptions(language="en", max_tokens=1)))[-1].final


def test_no_prompt_goes_to_a_runner_without_the_feature(client, en_mel):
    features = client.info.features
    client.info.features = ()          # as an older runner's hello says
    try:
        with pytest.raises(WhisperKVError, match="does not take a prompt"):
            list(client.transcribe(en_mel, DecodeOptions(language="en", prompt=[1000])))
        assert list(client.transcribe(en_mel, DecodeOptions(language="en", max_tokens=1)))[-1].final
    finally:
        client.info.features = features
