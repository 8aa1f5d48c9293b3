"""One conformance suite for both runners (issue 53, item 6): each case is sent to the Python runner
(`python -m device.runner --backend dla`) and to the native runner in C (device/native_runner/), both serving one
compiled bundle through the same Neuron library, and their answers are held to the protocol and to each other:
codes and messages, tokens, text, log-probabilities (to float32's digits), segments, seek_frames.

No Neuron runtime and no APU exist here: the library both runners load is the STAND-IN of
tests/device/runner/standin/, which computes each graph in LiteRT by calling back into Python; the native runner
gets the preloaded host library of conftest.py (`host_env`) for that. The bundle has the step's attention variant
taken out of its model.json (conftest.py `bundle`). One process of each kind serves every request; faults start theirs.
"""
from __future__ import annotations

import base64
import math
import struct

import numpy as np
import pytest

from device import protocol as P
from tests.device.native_runner.conftest import KINDS, Pair, differences, flat
from tests.device.runner.neuron.test_dla_backend import with_model_json_edited
from tests.device.runner.standin.build import build_empty, build_standin

each_runner = pytest.mark.parametrize("kind", KINDS)
EN, ZH, HW = "test_en.wav", "test_zh.wav", "en_asterisk_hello-world.wav"     # HW: "Hello world.", then EOT


def decode_events(events: list[dict]) -> list[dict]:
    return [ev for ev in events if ev["type"] != "sample"]


def done(events: list[dict]) -> dict:
    assert events[-1]["type"] == "done" and events[-1]["final"], events[-1]
    return events[-1]


# Decodes: (clip, the request's fields). Each is sent once to both runners; the tests read the answers.
DECODES = {
    "en": (EN, {"language": "en"}),
    "zh detected, top_k 10": (ZH, {"language": None, "top_k": 10}),
    "hello, fallback on": (HW, {"language": "en", "temperature_fallback": True}),
    "hello, suppress_eot, top_k 1": (HW, {"language": "en", "suppress_eot": True, "max_tokens": 8, "top_k": 1}),
    "timestamps, detected, samples": (EN, {"language": None, "timestamps": True, "max_tokens": 18, "sample_s": 0.2}),
    "seek_timestamps": (EN, {"language": "en", "seek_timestamps": True, "max_tokens": 18}),
    "prompt, an unknown field": (EN, {"language": "en", "prompt": [1029, 406, 437], "max_tokens": 4, "frob": 1}),
    "cache off": (EN, {"language": "en", "cache": "off", "max_tokens": 3}),
}


@pytest.fixture(scope="module")
def decoded(pair, mel):
    def get(case: str) -> dict:
        if case not in pair.cases:
            clip, fields = DECODES[case]
            desc, payload = mel(clip)
            header = {"op": "transcribe", "id": f"d{len(pair.cases)}", "mel": desc, **fields}
            pair.cases[case] = pair.ask(header, payload)
        return pair.cases[case]
    return get


def test_hello_says_the_same_but_the_runner(pair):
    python, native = pair.hello["python"], pair.hello["native"]
    assert (python["runner"], native["runner"]) == ("python", "native")
    assert "attention" not in python["features"] and {"prompt", "temperature_fallback"} <= set(python["features"])
    assert native["os"] == "Linux"   # "Android <release>" in its bionic build
    python, native = ({k: v for k, v in h.items() if k not in ("runner", "backend_detail")} for h in (python, native))
    assert differences(python, native) == []


def test_backend_detail_is_the_python_runners(pair):
    python, native = pair.hello["python"]["backend_detail"], pair.hello["native"]["backend_detail"]
    assert all(g["sha256"] and g["flags"] for g in python["graphs"])
    assert differences(python, native) == []


def raw(header: bytes) -> bytes:
    return struct.pack(P.LENGTH_FORMAT, len(header)) + header


ZEROS, MEL32 = bytes(4 * P.N_MELS * P.N_FRAMES), {"shape": [1, P.N_MELS, P.N_FRAMES], "dtype": "float32"}


def mel32(rid: str, payload: bytes = ZEROS, **fields) -> bytes:
    return P.encode_frame({"op": "transcribe", "id": rid, "mel": {**MEL32, **fields.pop("desc", {})}, **fields},
                          payload)


# Each case: the bytes sent, and the code of the one error event that answers them. Its message is compared too,
# but for a header that is not JSON: the Python runner's quotes its JSON parser's words.
REFUSED = {
    "malformed frame": (raw(b"{oops!}"), P.BAD_FRAME),
    "oversize header": (raw(b" " * (P.MAX_HEADER + 1)), P.FRAME_TOO_LARGE),
    "unknown op": (P.encode_frame({"op": "reboot", "id": "u1"}), P.UNKNOWN_OP),
    "no op": (P.encode_frame({"id": "x"}), P.BAD_FRAME),
    "bad id": (P.encode_frame({"op": "hello", "id": 5}), P.BAD_REQUEST),
    "mel dtype": (mel32("m1", desc={"dtype": "float64"}), P.BAD_MEL),
    "mel shape": (mel32("m2", ZEROS[:len(ZEROS) // 2], desc={"shape": [1, 80, 1500]}), P.BAD_MEL),
    "mel size": (mel32("m3", ZEROS[:-4]), P.BAD_MEL),
    "mel NaN": (mel32("m4", ZEROS[:-8] + struct.pack("<ff", 0.5, math.nan)), P.BAD_MEL),
    **{f"option {k}={v!r}": (mel32(f"o{i}", **{k: v}), P.BAD_REQUEST)
       for i, (k, v) in enumerate([("language", "klingon"), ("max_tokens", 0), ("cache", "maybe"), ("top_k", "5"),
                                   ("task", "summarise"), ("sample_s", 0), ("prompt", [51865]),
                                   ("attention", True), ("word_timestamps", True)])},   # unlisted: refused
}


@pytest.mark.parametrize("case", REFUSED)
def test_a_refused_request_gets_the_python_runners_error_and_both_serve_on(pair, case):
    data, code = REFUSED[case]
    answers = pair.send(data)
    pair.serves_on()
    assert [ev["type"] for ev in answers["python"]] == ["error"] and answers["python"][0]["code"] == code
    assert "\n" not in answers["python"][0]["message"]
    leave_out = {"sent_t", "message"} if case == "malformed frame" else {"sent_t"}
    assert differences(answers["python"], answers["native"], leave_out) == []


@pytest.mark.parametrize("case", DECODES)
def test_each_decode_is_the_python_runners(decoded, case):
    python, native = (decode_events(decoded(case)[kind]) for kind in KINDS)
    assert done(python)["tokens"] and [ev["type"] for ev in python[:1]] == ["encoded"]
    assert differences(python, native) == []


@each_runner
def test_test_en_and_test_zh_give_their_transcripts(decoded, kind):
    en, zh = done(decoded("en")[kind]), done(decoded("zh detected, top_k 10")[kind])
    assert en["text"] == (" And so my fellow Americans, ask not what your country can do for you, ask what you can "
                          "do for your country.") and en["reason"] == "eot"
    assert zh["language"] == "zh" and zh["text"].startswith("甚至出现交易")


@each_runner
def test_test_zh_tokens_split_characters_and_their_bytes_make_the_text(decoded, kind):
    events = decoded("zh detected, top_k 10")[kind]
    tokens = [ev for ev in events if ev["type"] == "token" and not ev["is_special"]]
    assert any(ev["text"] == "" and ev["text_bytes"] for ev in tokens)       # a character cut between two tokens
    assert bytes.fromhex("".join(ev["text_bytes"] for ev in tokens)).decode() == done(events)["text"]
    assert "".join(ev["text"] for ev in tokens) == done(events)["text"]


@each_runner
def test_suppress_eot_runs_to_max_tokens_and_top_k_bounds_the_alternatives(decoded, kind):
    free, forced = decoded("hello, fallback on")[kind], decoded("hello, suppress_eot, top_k 1")[kind]
    assert done(free)["reason"] == "eot" and len(done(free)["tokens"]) < 8
    assert done(free)["quality"]["fallbacks"] == []
    steps = [ev for ev in forced if ev["type"] == "token"]
    assert done(forced)["reason"] == "max_tokens" and len(steps) == 8 and not any(ev["is_special"] for ev in steps)
    assert done(forced)["tokens"][:3] == done(free)["tokens"]
    assert all(len(ev["top"]) == 1 for ev in steps)
    tens = [len(ev["top"]) for ev in decoded("zh detected, top_k 10")[kind] if ev["type"] == "token"]
    assert tens[:-1] == [10] * (len(tens) - 1)


@each_runner
def test_timestamps_give_segments_and_seek_timestamps_the_same_seek(decoded, kind):
    stamped, seeking = done(decoded("timestamps, detected, samples")[kind]), done(decoded("seek_timestamps")[kind])
    assert stamped["reason"] == "max_tokens" and len(stamped["segments"]) == 1
    assert stamped["seek_frames"] == round(stamped["segments"][-1]["end"] * 100) < P.N_FRAMES
    assert stamped["text"] == stamped["segments"][0]["text"]
    assert seeking["segments"] == [] and seeking["seek_frames"] == stamped["seek_frames"]
    assert seeking["tokens"] == stamped["tokens"] and seeking["text"] == stamped["text"]


@each_runner
def test_the_language_given_is_kept_and_one_not_given_is_detected(decoded, kind):
    given = decode_events(decoded("en")[kind])[0]
    assert given["type"] == "encoded" and given["language"] == "en"
    for case, language in (("timestamps, detected, samples", "en"), ("zh detected, top_k 10", "zh")):
        encoded = decode_events(decoded(case)[kind])[0]
        probs = encoded["language_probs"]
        assert encoded["language"] == language == max(probs, key=probs.get) == done(decoded(case)[kind])["language"]


@each_runner
def test_a_prompt_conditions_the_window_and_cache_off_gives_cache_ons_tokens(decoded, kind):
    plain, prompted = decoded("en")[kind], decoded("prompt, an unknown field")[kind]
    first = [ev for ev in prompted if ev["type"] == "token"][0]
    assert first["cache_len"] == [ev for ev in plain if ev["type"] == "token"][0]["cache_len"] + 1 + 3
    assert done(prompted)["tokens"] != done(plain)["tokens"][:4]
    off = decoded("cache off")[kind]
    assert done(off)["tokens"] == done(plain)["tokens"][:3]
    assert {ev["cache_bytes"] for ev in off if ev["type"] == "token"} == {0}


@each_runner
def test_samples_come_only_when_asked(decoded, kind):
    samples = [ev for ev in decoded("timestamps, detected, samples")[kind] if ev["type"] == "sample"]
    assert samples and all(ev["id"] == decoded("timestamps, detected, samples")[kind][-1]["id"] for ev in samples)
    assert set(samples[0]) == {"type", "id", "t_s", "cpu_s", "rss_mb", "mem_available_mb", "zones", "throttling",
                               "sent_t"}
    assert not [ev for ev in decoded("seek_timestamps")[kind] if ev["type"] == "sample"]


def test_a_probe_is_the_python_runners_exactly(pair, mel):
    desc, payload = mel(EN, "float32")
    answers = pair.ask({"op": "probe", "id": "p1", "mel": desc}, payload)
    (python,), (native,) = answers["python"], answers["native"]
    assert python["type"] == "probe" and python["n_logits"] == 51865
    assert [o["name"] for o in python["outputs"]] == ["cross_k", "cross_v"]
    arrays = {kind: [np.frombuffer(base64.b64decode(v), "<f4") for p, v in flat(ev).items()
                     if p.endswith(("/logits", "/values"))] for kind, ev in (("python", python), ("native", native))}
    assert len(arrays["python"]) == len(arrays["native"]) == 3
    assert all(np.array_equal(a, b) for a, b in zip(arrays["python"], arrays["native"]))      # bit for bit
    assert differences(python, native, {"sent_t", "logits", "values"}) == []


@each_runner
def test_a_reused_id_is_busy_while_its_request_runs(pair, mel, kind):
    if "busy" not in pair.cases:
        desc, payload = mel(HW)
        again = P.encode_frame({"op": "transcribe", "id": "b1", "mel": desc, "language": "en", "max_tokens": 3,
                                "draft": [2425, 1002]}, payload)
        pair.cases["busy"] = pair.send(again + again, until=lambda ev: ev.get("final"))
    events = pair.cases["busy"][kind]
    (busy,) = [ev for ev in events if ev["type"] == "error"]
    assert busy["code"] == P.BUSY and busy["id"] == "b1" and done(events)["tokens"] == [2425, 1002, 13]
    assert differences(busy, [ev for ev in pair.cases["busy"]["python"] if ev["type"] == "error"][0]) == []


@each_runner
def test_a_cancel_right_after_the_transcribe_keeps_the_partial_tokens(pair, mel, decoded, kind):
    if "cancel" not in pair.cases:
        desc, payload = mel(EN)
        pair.cases["cancel"] = pair.send(P.encode_frame({"op": "transcribe", "id": "c1", "mel": desc,
                                                         "language": "en"}, payload)
                                         + P.encode_frame({"op": "cancel", "id": "c1"}))
        pair.serves_on()
    events = pair.cases["cancel"][kind]
    kept = [ev["token"] for ev in events if ev["type"] == "token" and not ev["is_special"]]
    assert done(events)["reason"] == "cancelled" and done(events)["tokens"] == kept
    assert kept == done(decoded("en")[kind])["tokens"][:len(kept)] and len(kept) < 20


@pytest.fixture(scope="module")
def faults(start_runner, bundle, lib, mel, tmp_path_factory):
    """Each fault's pair of runners, started when first asked for, and what each answered."""
    out = tmp_path_factory.mktemp("faults")
    corrupt = with_model_json_edited(bundle, out, lambda doc: None)      # a copy: its files linked, then one replaced
    (corrupt / "decoder_step.dla").unlink()
    (corrupt / "decoder_step.dla").write_bytes(b"not a compiled graph\n" * 64)
    starts = {"a missing library": lambda: (bundle, "/nowhere/libneuron_runtime.so"),
              "a library with neither API": lambda: (bundle, str(build_empty(out))),
              "a create that fails": lambda: (bundle, str(build_standin(out, "PADDED", "FAIL_CREATE"))),
              "a .dla that is not one": lambda: (corrupt, lib),
              "a run that fails mid-decode": lambda: (bundle, str(build_standin(out, "PADDED", "FAIL_RUN_AT=8")))}
    seen: dict = {}

    def get(fault: str) -> tuple[Pair, list[dict]]:
        if fault not in seen:
            p = Pair(start_runner, *starts[fault]())
            desc, payload = mel(EN)
            seen[fault] = p, p.ask({"op": "transcribe", "id": "f1", "mel": desc, "language": "en", "max_tokens": 6},
                                   payload)
        return seen[fault]
    return get


LOAD_FAULTS = ["a missing library", "a library with neither API", "a create that fails", "a .dla that is not one"]


@pytest.mark.parametrize("fault", LOAD_FAULTS)
def test_a_load_fault_is_the_python_runners_line_to_every_request(faults, fault):
    p, answers = faults(fault)
    python = [p.hello["python"], *answers["python"]]
    assert [(ev["code"], ev.get("id")) for ev in python] == [(P.MODEL_MISSING, None), (P.MODEL_MISSING, "f1")]
    assert all(" — " in ev["message"] and "\n" not in ev["message"] for ev in python)
    if fault in LOAD_FAULTS[:2]:     # the fix names a setting: the Python runner splits it into `fix`
        assert python[0]["fix"][1] == {"setting": "neuron_lib", "value": "PATH"}
    native = [p.hello["native"], *answers["native"]]
    assert differences([{k: ev[k] for k in ("code", "message")} for ev in python],
                       [{k: ev[k] for k in ("code", "message")} for ev in native]) == []


@pytest.mark.parametrize("fault", LOAD_FAULTS[:2])
def test_an_errors_fix_naming_a_setting_is_the_python_runners(faults, fault):
    p, answers = faults(fault)
    assert [ev.get("fix") for ev in (p.hello["native"], *answers["native"])] == \
        [ev["fix"] for ev in (p.hello["python"], *answers["python"])]


@each_runner
def test_a_run_that_fails_mid_decode_keeps_its_tokens_and_the_runner_serves_on(faults, mel, kind):
    p, answers = faults("a run that fails mid-decode")
    events = answers[kind]
    assert [ev["type"] for ev in events] == ["encoded", "token", "token", "token", "error"]
    error = events[-1]
    assert error["code"] == P.INTERNAL and error["id"] == "f1" and "\n" not in error["message"]
    assert "NeuronRuntime_inference failed for decoder_step.dla with error code 5" in error["message"]
    assert differences(decode_events(answers["python"]), decode_events(events)) == []
    if "after" not in p.cases:
        p.serves_on()
        desc, payload = mel(EN)
        p.cases["after"] = p.ask({"op": "transcribe", "id": "f2", "mel": desc, "language": "en", "max_tokens": 3},
                                 payload)
    assert done(p.cases["after"][kind])["tokens"] == [ev["token"] for ev in events if ev["type"] == "token"]
