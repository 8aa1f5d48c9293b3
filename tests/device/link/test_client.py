"""BoardClient over the local runner, and its failure handling over scripted streams."""
import threading

import numpy as np
import pytest

from core.decode.events import DoneEvent, EncodedEvent, TokenEvent
from core.decode.options import DecodeOptions
from core.errors import FeatureError
from device import protocol as P
from device.link.client import BoardClient, LinkTimeout, RunnerError
from device.link.local import LocalTransport
from device.link.transport import LinkLost, Stream, Transport
from device.runner.backends import REGISTRY
from tests.device.link_helpers import assert_streamed

EN = "ask not what your country can do for you"


def test_local_transcript_streams_token_by_token(local_run):
    assert_streamed(local_run)
    assert EN in local_run[-1].event.text.lower()
    assert all(a.host_ms >= 0 for a in local_run)


@pytest.fixture(scope="module")
def client():
    c = BoardClient(LocalTransport())
    c.connect()
    yield c
    c.close()


def test_cancel_from_another_thread_then_the_link_is_reused(client, en_mel):
    got = []
    for a in client.transcribe(en_mel, DecodeOptions(language="en")):
        got.append(a)
        if isinstance(a.event, TokenEvent) and a.event.step == 1:
            threading.Thread(target=client.cancel).start()
    assert got[-1].event.reason == "cancelled" and got[-1].final
    assert len(got) < 20
    # The encoder output is cached by the runner, so a short rerun is cheap.
    again = list(client.transcribe(en_mel, DecodeOptions(language="en", max_tokens=3)))
    assert again[0].event.cache_hit and again[-1].event.reason == "max_tokens"
    assert client.received == again


def test_two_windows_are_two_requests_each_ending_with_its_final_done(client, en_mel):
    """The host seeks (core/decode/window_feed.py): a window per request, placed in the audio by the host."""
    from core.decode.window_feed import HeldMels, decode_source
    from device.link.decoder import RunnerDecoder

    two = HeldMels(np.concatenate([en_mel, en_mel]))     # the second window hits the runner's encoder cache
    decoder = RunnerDecoder(client)
    events = list(decode_source(two, DecodeOptions(language="en", max_tokens=2), decoder))
    dones = [ev for ev in events if isinstance(ev, DoneEvent)]
    assert [d.window for d in dones] == [0, 1] and [d.offset_s for d in dones] == [0.0, 30.0]
    assert client.received[-1].final and client.received[-1].event.window == 0    # the runner saw window 0 only
    assert events[-1] is dones[-1]
    assert decoder.windows == 2 and len(decoder.arrivals) == len(events) and decoder.t_start is not None
    decoder.new_run()      # a decoder kept for a session forgets the last run's figures
    assert (decoder.windows, decoder.arrivals, decoder.samples, decoder.t_start) == (0, [], [], None)


def test_abandoned_iteration_cancels_and_keeps_the_link(client, en_mel):
    for a in client.transcribe(en_mel, DecodeOptions(language="en")):
        if isinstance(a.event, TokenEvent):
            break
    assert client.connect().backend in REGISTRY
    again = list(client.transcribe(en_mel, {"language": "en", "max_tokens": 2}))
    assert again[-1].event.reason == "max_tokens"


def test_runner_killed_mid_stream_raises_link_lost_and_keeps_events(en_mel):
    transport = LocalTransport()
    c = BoardClient(transport)
    try:
        with pytest.raises(LinkLost) as err:
            for a in c.transcribe(en_mel, DecodeOptions(language="en")):
                if isinstance(a.event, TokenEvent):
                    c._stream.proc.kill()
        assert isinstance(err.value.received[0].event, EncodedEvent)
        assert any(isinstance(a.event, TokenEvent) for a in err.value.received)
        assert c.received == err.value.received
        assert "closed" in str(err.value) and err.value.fix
    finally:
        c.close()


def test_missing_model_is_a_clear_runner_error(tmp_path):
    c = BoardClient(LocalTransport(), runner_args=["--model", str(tmp_path / "nowhere")])
    try:
        with pytest.raises(RunnerError) as err:
            c.connect()
        assert err.value.code == P.MODEL_MISSING and "nowhere" in str(err.value)
    finally:
        c.close()


def test_a_wrong_mel_is_refused_on_the_host():
    with pytest.raises(FeatureError, match="expected \\[W, 80, 3000\\]"):
        next(BoardClient(ScriptedTransport([])).transcribe(np.zeros((80, 100), np.float32)))


def sent_header(mel, options) -> dict:
    """The transcribe header the client writes for `options` (a scripted runner answers done at once)."""
    done = P.encode_frame({"type": "done", "id": "w1", "window": 0, "reason": "eot", "tokens": [], "text": "",
                           "ms_total": 0.0, "final": True})
    t = ScriptedTransport([HELLO, done])
    list(BoardClient(t).transcribe(mel, options, id="w1"))
    (frame,) = [f for f in P.FrameParser().feed(t.stream.written) if f.header.get("op") == "transcribe"]
    return frame.header


def test_options_travel_in_their_wire_encoding(en_mel):
    h = sent_header(en_mel, DecodeOptions(language="zh", cache=False, max_tokens=9))
    fields = {k: v for k, v in h.items() if k not in ("op", "id", "mel", "payload_bytes")}
    assert fields == {"language": "zh", "task": "transcribe", "max_tokens": 9, "top_k": 5, "timestamps": False,
                      "suppress_eot": False, "cache": "off"}
    assert fields == DecodeOptions(language="zh", cache=False, max_tokens=9).to_wire()
    h = sent_header(en_mel, {"language": "en", "max_tokens": 2})     # header fields as given
    assert (h["language"], h["max_tokens"]) == ("en", 2) and "cache" not in h


# --- scripted streams: failures no real runner produces on demand --------------------------------
class ScriptedStream(Stream):
    def __init__(self, chunks):
        self.chunks = list(chunks)
        self.written = b""

    def write(self, data):
        self.written += data

    def read(self, timeout):
        if not self.chunks:
            return b""
        chunk = self.chunks.pop(0)
        if chunk is TimeoutError:
            raise TimeoutError
        return chunk

    def close(self):
        pass

    def stderr_tail(self):
        return "agent ERROR something broke"


class ScriptedTransport(Transport):
    label = "scripted"

    def __init__(self, chunks):
        self.stream = ScriptedStream(chunks)

    def start_runner(self, args):
        return self.stream

    def run(self, argv, timeout=60.0, cwd=None):
        raise NotImplementedError

    def put(self, sources, remote, progress=None):
        raise NotImplementedError


HELLO = P.encode_frame({"type": "hello", "protocol": P.PROTOCOL, "runner_version": "x", "backend": "numpy",
                        "model": {"sha256": "ab", "dims": {}}, "cache": {"max_len": 448, "bytes_per_token": 1}})


def test_a_runner_of_another_protocol_is_one_line_naming_what_to_update():
    """Protocol 2: a runner that answers with another version's hello is refused before any request (a protocol-1
    runner itself refuses this host's hello: tests/device/runner/serve/test_agent.py)."""
    old = P.encode_frame({"type": "hello", "protocol": 1, "runner_version": "0.1.0", "backend": "numpy"})
    with pytest.raises(RunnerError) as err:
        BoardClient(ScriptedTransport([old])).connect()
    assert err.value.code == P.BAD_PROTOCOL and "speaks protocol 1, this host 2" in str(err.value)
    assert "whisperkv deploy" in err.value.fix
    refused = P.encode_frame(P.error_event(P.BAD_PROTOCOL, "this runner speaks protocol 1, not 2"))
    with pytest.raises(RunnerError, match="deploy this version of the runner"):
        BoardClient(ScriptedTransport([refused])).connect()


def test_silent_runner_times_out_with_partial_events(en_mel):
    enc = P.encode_frame({"type": "encoded", "id": "t1", "window": 0, "ms": 1.0})
    c = BoardClient(ScriptedTransport([HELLO, enc, TimeoutError]), read_timeout=0.01)
    with pytest.raises(LinkTimeout) as err:
        list(c.transcribe(en_mel, id="t1"))
    assert len(err.value.received) == 1 and "no word" in str(err.value)


def test_eof_reports_the_runner_log(en_mel):
    c = BoardClient(ScriptedTransport([HELLO]))
    with pytest.raises(LinkLost, match="something broke"):
        list(c.transcribe(en_mel))


def test_runner_error_event_becomes_runner_error(en_mel):
    err = P.encode_frame(P.error_event(P.BAD_MEL, "mel contains NaN", "t2"))
    c = BoardClient(ScriptedTransport([HELLO, err]))
    with pytest.raises(RunnerError) as exc:
        list(c.transcribe(en_mel, id="t2"))
    assert exc.value.code == P.BAD_MEL and exc.value.fix


def test_garbage_from_the_runner_is_link_lost(en_mel):
    c = BoardClient(ScriptedTransport([HELLO, b"\x00\x00\x00\x03abc"]))
    with pytest.raises(LinkLost, match="bad frame"):
        list(c.transcribe(en_mel))
