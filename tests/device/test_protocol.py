import json
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from device import protocol as P


def frames(*headers):
    return b"".join(P.encode_frame(h) for h in headers)


def test_round_trip_with_payload_fed_byte_by_byte():
    data = P.encode_frame({"op": "transcribe", "id": "a"}, b"\x00\x01\x02") + frames({"op": "bye"})
    parser, out = P.FrameParser(), []
    for i in range(len(data)):
        out += parser.feed(data[i:i + 1])
    assert [f.header["op"] for f in out] == ["transcribe", "bye"]
    assert out[0].payload == b"\x00\x01\x02" and out[0].header["payload_bytes"] == 3
    assert parser.at_boundary


def test_bad_json_is_reported_and_the_stream_stays_in_sync():
    raw = b"{not json"
    data = struct.pack(">I", len(raw)) + raw + frames({"op": "hello"})
    out = P.FrameParser().feed(data)
    assert isinstance(out[0], P.BadFrame) and out[0].code == P.BAD_FRAME
    assert out[1].header == {"op": "hello"}


@pytest.mark.parametrize("raw", [b"[1, 2]", b"\xff\xfe", b"", b'{"payload_bytes": -1}', b'{"payload_bytes": 1.5}'])
def test_unusable_headers_are_bad_frames(raw):
    out = P.FrameParser().feed(struct.pack(">I", len(raw)) + raw)
    assert len(out) == 1 and out[0].code == P.BAD_FRAME


def test_oversize_header_is_skipped_without_buffering():
    parser = P.FrameParser(max_header=100)
    out = parser.feed(struct.pack(">I", 1000) + b"x" * 600)
    assert out[0].code == P.FRAME_TOO_LARGE and len(parser._buf) == 0
    out = parser.feed(b"x" * 400 + frames({"op": "hello"}))
    assert out == [P.Frame({"op": "hello"})]


def test_oversize_payload_is_skipped_and_names_the_request():
    parser = P.FrameParser(max_payload=10)
    out = parser.feed(P.encode_frame({"op": "transcribe", "id": "big"}, b"y" * 50) + frames({"op": "bye"}))
    assert out[0].code == P.FRAME_TOO_LARGE and out[0].id == "big"
    assert out[1].header == {"op": "bye"}


def test_mel_payload_round_trip_float16_and_float32():
    mel = np.random.default_rng(0).standard_normal((1, 80, 3000)).astype(np.float32)
    for dtype in P.MEL_DTYPES:
        desc, payload = P.mel_to_payload(mel, dtype)
        assert desc == {"shape": [1, 80, 3000], "dtype": dtype}
        back = P.mel_from_payload(desc, payload)
        assert back.dtype == np.float32 and np.allclose(back, mel, atol=1e-2)


@pytest.mark.parametrize("desc, size, code", [
    ({"shape": [1, 80, 2999], "dtype": "float32"}, 80 * 2999 * 4, P.BAD_MEL),
    ({"shape": [1, 80, 3000], "dtype": "int8"}, 240000, P.BAD_MEL),
    ({"shape": [0, 80, 3000], "dtype": "float32"}, 0, P.BAD_MEL),
    ({"shape": [2, 80, 3000], "dtype": "float16"}, 2 * 80 * 3000 * 2, P.BAD_MEL),     # protocol 2: one window
    ({"shape": [1, 80, 3000], "dtype": "float32"}, 10, P.BAD_MEL),
    ("nope", 0, P.BAD_REQUEST),
])
def test_mel_descriptions_are_checked(desc, size, code):
    with pytest.raises(P.ProtocolError) as err:
        P.mel_from_payload(desc, b"\x00" * size, "r1")
    assert err.value.code == code and err.value.id == "r1"


def test_nan_mel_is_refused():
    mel = np.zeros((1, 80, 3000), np.float32)
    mel[0, 3, 7] = np.nan
    desc, payload = P.mel_to_payload(mel, "float32")
    with pytest.raises(P.ProtocolError, match="NaN"):
        P.mel_from_payload(desc, payload)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=64), max_size=20))
def test_fuzz_parser_never_crashes_on_arbitrary_bytes(chunks):
    parser = P.FrameParser(max_header=64, max_payload=64)
    for chunk in chunks:
        for item in parser.feed(chunk):
            assert isinstance(item, (P.Frame, P.BadFrame))
            if isinstance(item, P.Frame):
                assert isinstance(item.header, dict)
    # Memory stays bounded by the limits whatever arrives.
    assert len(parser._buf) <= 4 + 64 + 64


@settings(max_examples=100, deadline=None)
@given(st.lists(st.dictionaries(st.text(max_size=8), st.one_of(st.integers(), st.text(max_size=8)), max_size=4),
                max_size=5),
       st.binary(max_size=40), st.integers(min_value=1, max_value=7))
def test_fuzz_valid_frames_survive_any_split_after_garbage_frames(headers, payload, step):
    headers = [{**h, "op": "x"} for h in headers]
    for h in headers:
        h.pop("payload_bytes", None)
    garbage = struct.pack(">I", 5) + b"\xff" * 5   # a whole but unusable frame
    data = garbage + b"".join(P.encode_frame(h, payload) for h in headers)
    parser, out = P.FrameParser(), []
    for i in range(0, len(data), step):
        out += parser.feed(data[i:i + step])
    assert isinstance(out[0], P.BadFrame)
    assert [f.header for f in out[1:]] == [({**h, "payload_bytes": len(payload)} if payload else h) for h in headers]
    assert all(f.payload == payload for f in out[1:])


def test_encoded_frames_are_plain_json():
    data = P.encode_frame({"op": "hello", "protocol": 1})
    (n,) = struct.unpack(">I", data[:4])
    assert json.loads(data[4:4 + n]) == {"op": "hello", "protocol": 1}


def test_an_unexpected_exception_is_one_line_naming_it_and_the_fix():
    """What a backend raised unexpectedly (a ctypes ArgumentError once, at hello) reaches the user as one line."""
    try:
        raise TypeError("argument 1: <class 'TypeError'>: expected LP_NeuronVersion instance\ninstead of c_ubyte_Array_3")
    except TypeError as exc:
        ev = P.internal_error(exc, "r1")
    assert (ev["type"], ev["code"], ev["id"]) == ("error", P.INTERNAL, "r1")
    assert "\n" not in ev["message"] and "TypeError: argument 1" in ev["message"]
    assert " — a bug in the runner: run `whisperkv doctor" in ev["message"]
