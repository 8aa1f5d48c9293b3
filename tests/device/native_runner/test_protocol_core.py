"""The native runner's protocol core (device/native_runner/, issue 53): built for x86_64, and for aarch64 under
qemu, it answers each bad input with the error codes the Python runner gives the same bytes, keeps serving after each,
and writes nothing but frames to stdout."""
import functools
import json
import random
import re
import shutil
import struct
import subprocess
import sys

import pytest

from device import ROOT
from device import protocol as P

BYE = P.encode_frame({"op": "bye"})
HELLO = P.encode_frame({"op": "hello", "protocol": P.PROTOCOL})
AARCH64_LIBS = "/usr/aarch64-linux-gnu"


def raw(header: bytes) -> bytes:
    return struct.pack(P.LENGTH_FORMAT, len(header)) + header


# Each case: the bytes sent (bye follows them), and the (code, id) of each error event that must answer them.
CASES = {
    "hello_without_a_bundle": (HELLO, [(P.MODEL_MISSING, None)]),
    "bad_json": (raw(b"{oops!}") + HELLO, [(P.BAD_FRAME, None), (P.MODEL_MISSING, None)]),
    "not_an_object": (P.encode_frame([1, 2]), [(P.BAD_FRAME, None)]),
    "not_utf8": (raw(b'{"op": "\xff"}'), [(P.BAD_FRAME, None)]),
    "trailing_comma": (raw(b'{"op": "hello",}'), [(P.BAD_FRAME, None)]),
    "no_op": (P.encode_frame({"id": "x"}), [(P.BAD_FRAME, "x")]),
    "unknown_op": (P.encode_frame({"op": "reboot", "id": "u1"}) + HELLO,
                   [(P.UNKNOWN_OP, "u1"), (P.MODEL_MISSING, None)]),
    "an_id_to_escape": (P.encode_frame({"op": "reboot", "id": 'é"\\\n\x01 \U0001f600'}),
                        [(P.UNKNOWN_OP, 'é"\\\n\x01 \U0001f600')]),
    "oversize_header": (raw(b" " * (P.MAX_HEADER + 1)) + HELLO, [(P.FRAME_TOO_LARGE, None), (P.MODEL_MISSING, None)]),
    "oversize_payload": (P.encode_frame({"op": "transcribe", "id": "big"}, b"\0" * (P.MAX_PAYLOAD + 1)) + HELLO,
                         [(P.FRAME_TOO_LARGE, "big"), (P.MODEL_MISSING, None)]),
    "bad_payload_bytes": (P.encode_frame({"op": "hello", "id": "p", "payload_bytes": 1.5}), [(P.BAD_FRAME, "p")]),
    "negative_payload_bytes": (P.encode_frame({"op": "hello", "id": "n", "payload_bytes": -1}), [(P.BAD_FRAME, "n")]),
    "a_payload_is_read_past": (P.encode_frame({"op": "hello", "id": "h"}, b"\0\0\0\7{oops!}") + HELLO,
                               [(P.MODEL_MISSING, "h"), (P.MODEL_MISSING, None)]),
    "older_protocol": (P.encode_frame({"op": "hello", "protocol": 1}), [(P.BAD_PROTOCOL, None)]),
    "other_protocol": (P.encode_frame({"op": "hello", "protocol": "3"}), [(P.BAD_PROTOCOL, None)]),
    "id_not_a_string": (P.encode_frame({"op": "hello", "id": 5}), [(P.BAD_REQUEST, None)]),
    "id_too_long": (P.encode_frame({"op": "hello", "id": "x" * 129}), [(P.BAD_REQUEST, None)]),
    "cancel_of_an_unknown_id": (P.encode_frame({"op": "cancel", "id": "zz"}) + HELLO, [(P.MODEL_MISSING, None)]),
    "cancel_without_an_id": (P.encode_frame({"op": "cancel"}), [(P.BAD_REQUEST, None)]),
    "transcribe_without_a_model": (P.encode_frame({"op": "transcribe", "id": "t1"}), [(P.MODEL_MISSING, "t1")]),
    "bye_ends_it": (BYE + HELLO, []),
}


def frames_of(stdout: bytes) -> list[dict]:
    """The error events on stdout; fails unless it holds whole frames and nothing else."""
    parser = P.FrameParser(max_payload=0)
    items = parser.feed(stdout)
    assert parser.at_boundary, f"stdout ends inside a frame: {stdout[-80:]!r}"
    assert all(isinstance(f, P.Frame) and not f.payload for f in items), items
    assert all(f.header["type"] == "error" and f.header["message"] and "sent_t" in f.header for f in items), items
    return [f.header for f in items]


def converse(cmd: list[str], data: bytes) -> list[tuple[str, str | None]]:
    done = subprocess.run(cmd, input=data + BYE, capture_output=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    return [(ev["code"], ev.get("id")) for ev in frames_of(done.stdout)]


@functools.lru_cache(maxsize=None)
def python_answers(case: str, empty: str) -> list:
    return converse([sys.executable, "-m", "device.runner", "--model", empty], CASES[case][0])


@pytest.fixture(scope="module")
def empty(tmp_path_factory) -> str:
    return str(tmp_path_factory.mktemp("no-model"))


def runner_command(arch: str) -> list[str]:
    from device.toolchain.native_runner_build import TARGETS, build

    if arch == "aarch64":
        missing = [t for t in ("qemu-aarch64-static", TARGETS["aarch64"].compiler) if shutil.which(t) is None]
        if missing:
            pytest.skip(f"{' and '.join(missing)} not installed (Debian: qemu-user-static, gcc-aarch64-linux-gnu)")
        return ["qemu-aarch64-static", "-L", AARCH64_LIBS, str(build(arch))]
    return [str(build(arch))]


@pytest.fixture(scope="module", params=["x86_64", "aarch64"])
def native(request) -> list[str]:
    return runner_command(request.param)


@pytest.mark.parametrize("case", CASES)
def test_the_native_runner_answers_as_the_python_runner(native, empty, case):
    data, expected = CASES[case]
    got = converse([*native, "--model", empty], data)
    assert got == expected
    assert python_answers(case, empty) == expected


def random_headers(n: int = 200) -> bytes:
    """Frames of valid JSON objects with an unknown op, nested values, escapes, raw UTF-8 and whitespace, some
    with a lone surrogate written raw (not UTF-8): unknown_op for each, or bad_frame for those."""
    rng = random.Random(53)

    def value(depth=0):
        r = rng.random()
        if depth > 4 or r < 0.3:
            return rng.choice([0, -1, 1.5e-7, 2**70, True, False, None, "", 'a\u00e9\n"\\\ud83d', "\U0001f600",
                               3e300])
        if r < 0.65:
            return [value(depth + 1) for _ in range(rng.randint(0, 4))]
        return {rng.choice(["k", "é", '"q', ""]) + str(i): value(depth + 1) for i in range(rng.randint(0, 4))}

    texts = (json.dumps({"op": "nope", "id": f"i{i}", "x": value()}, ensure_ascii=rng.random() < 0.5,
                        indent=rng.choice([None, 1, "\t"])) for i in range(n))
    return b"".join(raw(t.encode("utf-8", "surrogatepass")) for t in texts)


def test_random_headers_get_the_python_runners_codes(native, empty):
    data = random_headers()
    python = converse([sys.executable, "-m", "device.runner", "--model", empty], data)
    assert converse([*native, "--model", empty], data) == python
    assert {code for code, _ in python} == {P.UNKNOWN_OP, P.BAD_FRAME} and len(python) == 200


def test_the_stdout_check_sees_bytes_that_are_not_frames():
    good = P.encode_frame({"type": "error", "code": P.BAD_FRAME, "message": "m", "sent_t": 1.0})
    frames_of(good)
    for bad in (good + b"hello\n", good[:-1], P.encode_frame({"type": "hello", "sent_t": 1.0})):
        with pytest.raises(AssertionError):
            frames_of(bad)


def test_model_missing_says_where_it_looked_and_what_to_do(native, empty):
    done = subprocess.run([*native, "--model", empty], input=HELLO + BYE, capture_output=True, timeout=120)
    (ev,) = frames_of(done.stdout)
    assert ev["code"] == P.MODEL_MISSING and empty in ev["message"] and "model.json" in ev["message"]
    assert " — " in ev["message"] and "\n" not in ev["message"]



def spec_flags() -> dict[str, list[str]]:
    """Each runner flag of the spec's C header, with a value it takes ([] for an on/off flag)."""
    text = (ROOT / "device" / "spec" / "whisperkv_spec.h").read_text()
    flags = {}
    for name, flag in re.findall(r'#define WKV_FLAG_(\w+)_FLAG "(\S+)"', text):
        kind = re.search(rf'#define WKV_FLAG_{name}_KIND "(\w+)"', text).group(1)
        choices = re.search(rf'#define WKV_FLAG_{name}_CHOICES \{{"([^"]+)"', text)
        flags[flag] = [] if kind == "flag" else [choices.group(1) if choices else "x"]
    return flags


def test_the_runner_takes_every_runner_flag_of_the_spec(empty):
    binary = runner_command("x86_64")
    flags = spec_flags()
    assert {"--model", "--neuron-api", "--npu-profile", "--workload"} <= set(flags)
    for flag, value in flags.items():
        args = [flag, *value] if flag != "--model" else [flag, empty]
        assert converse([*binary, *args], HELLO) == [(P.MODEL_MISSING, None)], flag
    assert converse([*binary, "--neuron-api=v2", "--model", empty], HELLO) == [(P.MODEL_MISSING, None)]


@pytest.mark.parametrize("args", [["--no-such-flag"], ["--neuron-api", "v9"], ["--workload"], ["--npu-profile=on"]])
def test_a_flag_it_does_not_take_is_one_line_and_exit_2(args):
    done = subprocess.run([*runner_command("x86_64"), *args], input=HELLO + BYE, capture_output=True, timeout=60)
    assert done.returncode == 2 and done.stdout == b""
    assert len(done.stderr.decode().strip().splitlines()) == 1, done.stderr


def test_without_model_it_looks_in_model_beside_its_folder(tmp_path):
    binary = tmp_path / "bin" / "whisperkv-runner"
    binary.parent.mkdir()
    shutil.copy(runner_command("x86_64")[0], binary)
    (ev,) = frames_of(subprocess.run([binary], input=HELLO + BYE, capture_output=True, timeout=60).stdout)
    assert ev["code"] == P.MODEL_MISSING and str(tmp_path / "model") in ev["message"]
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "model.json").write_text("{}")
    (ev,) = frames_of(subprocess.run([binary], input=HELLO + BYE, capture_output=True, timeout=60).stdout)
    assert ev["code"] == P.MODEL_MISSING
    assert ev["message"] == (f"{tmp_path / 'model' / 'model.json'} is not a whisperkv-mtk-bundle manifest — re-create "
                             "it with `whisperkv export --out DIR`")


def test_it_is_built_again_only_when_a_source_changes(tmp_path):
    from device.toolchain import native_runner_build as B

    first = B.build("x86_64")
    assert B.build("x86_64") == first and first.stat().st_mtime_ns == B.build("x86_64").stat().st_mtime_ns
    copies = []
    for f in B.sources():
        copies.append(tmp_path / f.name)
        shutil.copy(f, copies[-1])
    key = B.build_key(B.TARGETS["x86_64"], copies, B.JSMN)
    assert key == first.parent.name
    copies[0].write_text(copies[0].read_text() + "\n")
    assert B.build_key(B.TARGETS["x86_64"], copies, B.JSMN) != key


def test_a_missing_compiler_or_jsmn_names_the_package(tmp_path):
    from device.toolchain import native_runner_build as B

    with pytest.raises(B.BuildError) as err:
        B.compiler_path(B.Target("aarch64", "no-such-gcc-here", "gcc-aarch64-linux-gnu"))
    assert str(err.value).count("\n") == 0 and "apt-get install gcc-aarch64-linux-gnu" in str(err.value)
    with pytest.raises(B.BuildError, match="apt-get install libjsmn-dev"):
        B.jsmn_header(tmp_path / "jsmn.h")


def test_the_cross_build_keeps_the_host_headers_off_its_path(tmp_path):
    from device.toolchain import native_runner_build as B

    cmd = B.command("aarch64-linux-gnu-gcc", B.sources(), tmp_path, tmp_path / "out")
    includes = [cmd[i + 1] for i, part in enumerate(cmd) if part == "-I"]
    assert includes == [str(B.SPEC_HEADER.parent), str(tmp_path)] and "/usr/include" not in cmd
    assert {"-std=c99", "-Werror", "-Wall", "-Wextra", "-O2"} <= set(cmd)
