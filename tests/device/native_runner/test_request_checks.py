"""The native runner's checks of a transcribe or probe request (device/native_runner/request.c, issue 53) against
the Python runner's (device/runner/serve/agent.py `submit`: the mel, then the decode options, then n_frames and
sample_s): each bad request is sent to both runners, each serving the same dla bundle on the STAND-IN Neuron
runtime, and both must answer it with the same error code and the same message, byte for byte. The messages show
Python's repr of what the host sent, so the odd values (floats, escapes, nesting, repeated keys) are cases too.

The bundle has the step's attention variant taken out of its model.json: the native runner has no
step_with_attention, so the Python runner must refuse attention as it refuses it on such a backend."""
from __future__ import annotations

import json
import math
import struct
import subprocess

import pytest

from device import ROOT
from device import protocol as P
from tests.device.bundle_helpers import compiled_dla_bundle, standin_library
from tests.device.native_runner.conftest import runner_argv
from tests.device.runner.neuron.test_dla_backend import with_model_json_edited

N_MEL = P.N_MELS * P.N_FRAMES
MEL = {"shape": [1, P.N_MELS, P.N_FRAMES], "dtype": "float32"}
ZEROS = bytes(4 * N_MEL)


def f32(*head: float) -> bytes:
    return struct.pack(f"<{len(head)}f", *head) + bytes(4 * (N_MEL - len(head)))


def f16(*head: int) -> bytes:
    return struct.pack(f"<{len(head)}H", *head) + bytes(2 * (N_MEL - len(head)))


def mel(**fields) -> tuple[dict, bytes]:
    """A transcribe with a good mel and these fields."""
    return {"op": "transcribe", "mel": MEL, **fields}, ZEROS


def raw(fields_json: str) -> tuple[str, bytes]:
    """The same with fields written as JSON text: what a dict cannot say (a repeated key, 1e5)."""
    return '{"op": "transcribe", "mel": ' + json.dumps(MEL) + ", " + fields_json + "}", ZEROS


# Each case: the header (a dict, or its JSON text where JSON says what a dict cannot) and the payload. Every one
# is refused: none may reach a decode.
CASES = {
    # the mel (device/protocol.py mel_from_payload)
    "no_mel": ({"op": "transcribe"}, b""),
    "mel_not_an_object": ({"op": "transcribe", "mel": [1, 80, 3000]}, ZEROS),
    "probe_without_a_mel": ({"op": "probe"}, b""),
    "dtype_float64": ({"op": "transcribe", "mel": {**MEL, "dtype": "float64"}}, ZEROS),
    "dtype_missing": ({"op": "transcribe", "mel": {"shape": MEL["shape"]}}, ZEROS),
    "dtype_a_number": ({"op": "probe", "mel": {**MEL, "dtype": 16}}, ZEROS),
    "shape_a_string": ({"op": "transcribe", "mel": {**MEL, "shape": "1x80x3000 'q'"}}, ZEROS),
    "shape_missing": ({"op": "transcribe", "mel": {"dtype": "float32"}}, ZEROS),
    "shape_two_dims": ({"op": "transcribe", "mel": {**MEL, "shape": [80, 3000]}}, ZEROS),
    "shape_a_float_dim": ({"op": "transcribe", "mel": {**MEL, "shape": [1, 80.0, 3000]}}, ZEROS),
    "shape_a_bool_batch": ({"op": "transcribe", "mel": {**MEL, "shape": [True, 80, 3000]}}, ZEROS),
    "shape_two_windows": ({"op": "transcribe", "mel": {**MEL, "shape": [2, 80, 3000]}}, ZEROS),
    "shape_a_negative_batch": ({"op": "probe", "mel": {**MEL, "shape": [-1, 80, 3000]}}, ZEROS),
    "shape_a_huge_batch": ({"op": "transcribe", "mel": {**MEL, "shape": [2**70, 80, 3000]}}, ZEROS),
    "payload_short": ({"op": "transcribe", "mel": MEL}, bytes(100)),
    "float16_sent_as_float32": ({"op": "transcribe", "mel": {**MEL, "dtype": "float16"}}, ZEROS),
    "float32_nan": ({"op": "transcribe", "mel": MEL}, f32(0.0, math.nan)),
    "float32_inf_last": ({"op": "probe", "mel": MEL}, ZEROS[:-4] + struct.pack("<f", -math.inf)),
    "float16_inf": ({"op": "transcribe", "mel": {**MEL, "dtype": "float16"}}, f16(0x3C00, 0x7C00)),
    "float16_nan": ({"op": "probe", "mel": {**MEL, "dtype": "float16"}}, f16(0x0001, 0xFE01)),
    # the options, in core/decode/options.py's order
    "cache_true": mel(cache=True),
    "cache_null": mel(cache=None),
    "cache_before_language": mel(cache="yes", language="xx"),
    "language_unknown": mel(language="klingon", task="nope"),
    "language_a_list": mel(language=["en"]),
    "language_false": mel(language=False),
    "language_with_a_quote": mel(language="it's"),
    "language_with_both_quotes": mel(language="it's \"x\" \\"),
    "language_escapes": mel(language="e\u0301\n\r\t\x01\x7f\x85\xa0\xad\u200b\u2028\ue000\ufeff\U0001f600 é"),
    "language_lone_surrogates": raw('"language": "a\\ud800b\\udfff\\ud83d\\ude00"'),
    "task_null": mel(task=None),
    "task_a_number": mel(task=1),
    "max_tokens_null": mel(max_tokens=None),
    "max_tokens_zero": mel(max_tokens=0),
    "max_tokens_past_the_context": mel(max_tokens=449),
    "max_tokens_a_float": mel(max_tokens=1.0),
    "max_tokens_true": mel(max_tokens=True),
    "max_tokens_huge": mel(max_tokens=10**30),
    "top_k_101": mel(top_k=101),
    "top_k_a_string": mel(top_k="5"),
    "timestamps_1": mel(timestamps=1, attention="x"),
    "suppress_eot_null": mel(suppress_eot=None),
    "seek_timestamps_a_string": mel(seek_timestamps="yes"),
    "temperature_fallback_0.0": mel(temperature_fallback=0.0),
    "seed_negative": mel(seed=-1),
    "seed_2**63": mel(seed=2**63),
    "seed_1e5": raw('"seed": 1e5'),
    "prompt_not_a_list": mel(prompt=5),
    "prompt_past_the_vocabulary": mel(prompt=[1, 51865]),
    "prompt_a_bool": mel(prompt=[True]),
    "prompt_a_negative_id_in_a_long_list": mel(prompt=[1] * 300 + [-1]),
    "prompt_too_long": mel(prompt=list(range(224))),
    "draft_an_object": mel(prompt=[1, 2], draft={"a": 1}),
    "draft_too_long": mel(draft=[7] * 500),
    "attention_without_the_cache": mel(attention=True, cache="off"),
    "word_timestamps_without_the_cache": mel(attention=True, word_timestamps=True, cache="off"),
    "attention_on_this_backend": mel(attention=True, prompt=[1, 2, 3]),
    "word_timestamps_on_this_backend": mel(word_timestamps=True),
    # the window's fields
    "n_frames_zero": mel(n_frames=0),
    "n_frames_past_a_window": mel(n_frames=3001, sample_s=0),
    "n_frames_a_float": mel(n_frames=100.0),
    "n_frames_a_string": mel(n_frames="100"),
    "sample_s_too_small": mel(sample_s=0.05),
    "sample_s_true": mel(sample_s=True),
    "sample_s_1e16": raw('"sample_s": 1e16'),
    "sample_s_1e-05": raw('"sample_s": 1E-5'),
    "sample_s_overflows": raw('"sample_s": -1e400'),
    "sample_s_negative_zero": raw('"sample_s": -0.0'),
    "sample_s_a_huge_int": mel(sample_s=10**40),
    # Python's repr of odd values, through the fields that show them
    "repr_floats": raw('"language": [0.1, 0.30000000000000004, 1e15, 1e16, 1.5e-7, 0.0001, 123456789.125, -0, '
                       '5e-324, 1.7976931348623157e308, 2.5E+300, 100, 1e22]'),
    "repr_repeated_keys": raw('"task": {"a": 1, "b": [1.5, null], "\\u0061": 2, "": {}}'),
    "repr_nesting": raw('"top_k": [[], {}, "", [null, true, false], {"k\\"": "v\'"}]'),
    "repr_repeated_field": raw('"max_tokens": 5, "max_tokens": "last"'),
}


def frame(i: int, header, payload: bytes) -> bytes:
    """Case i's frame, with id c{i}; a header of JSON text is sent as written, payload_bytes added."""
    if isinstance(header, dict):
        return P.encode_frame({**header, "id": f"c{i}"}, payload)
    text = f'{{"id": "c{i}", "payload_bytes": {len(payload)}, ' + header[1:]
    return struct.pack(P.LENGTH_FORMAT, len(text.encode())) + text.encode() + payload


def answers(cmd: list[str], env: dict | None = None) -> dict[str, tuple[str, str]]:
    """Every case sent to one runner, then bye: each case's id and the (code, message) of its error event."""
    data = b"".join(frame(i, h, p) for i, (h, p) in enumerate(CASES.values())) + P.encode_frame({"op": "bye"})
    done = subprocess.run(cmd, input=data, capture_output=True, timeout=600, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    parser = P.FrameParser(max_payload=0)
    events = [f.header for f in parser.feed(done.stdout) if isinstance(f, P.Frame)]
    assert parser.at_boundary and all(ev["type"] == "error" for ev in events), events[-3:]
    return {ev.get("id"): (ev["code"], ev["message"]) for ev in events}


@pytest.fixture(scope="module")
def both(host_env, tmp_path_factory) -> tuple[dict, dict]:
    """Each runner's answers, the Python runner's and the native one's (conftest.py starts both alike)."""
    bundle = with_model_json_edited(compiled_dla_bundle(), tmp_path_factory.mktemp("no-attention"),
                                    lambda doc: doc["dla"]["graphs"].pop("decoder_step_attention", None))
    lib = str(standin_library("v1+v2"))
    return answers(runner_argv("python", bundle, lib)), answers(runner_argv("native", bundle, lib), host_env)


@pytest.mark.parametrize("case", CASES)
def test_the_native_runner_refuses_each_bad_request_as_the_python_runner(both, case):
    rid = f"c{list(CASES).index(case)}"
    python, native = both
    assert python.get(rid), f"the Python runner did not refuse {case}"
    assert native.get(rid) == python[rid]
