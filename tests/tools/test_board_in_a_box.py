"""The board in a box as a replica of the recorded Genio 520 image (tools/board-in-a-box, its `genio-520`
profile): what device-info reads on it, what its system Python has and lacks, root's empty password, the switch
that cuts it off from every package index. The transcripts on it are in test_dla_on_the_box.py.

The box is a STAND-IN for a Genio 520 board, named as one here: qemu emulates a Neoverse N1 (so nothing here
is timed), its SoC, cores, memory, thermal zones and /dev/apusys are files tools/board_box writes, and its
Neuron runtime is the tests' STAND-IN library. The `board` fixture (tests/tools/conftest.py) brings it up once a
session; run under `flock /tmp/board-box.lock`.
"""
from __future__ import annotations

import json
from pathlib import Path

from tests.tools.conftest import box, on_box, whisperkv

# All device-info may call absent on the box, because the image lacks it or the replica leaves it out: a
# runner and model before deploy, ONNX Runtime, neuronrt and the Neuron delegate (MediaTek's, not here), a
# TFLite interpreter in the system Python (deploy brings one), a C compiler.
ABSENT_ON_THE_BOX = {"onnxruntime", "compiler", "runner_version", "model", "model_sha256", "neuronrt",
                     "ncc_tflite", "neuron_delegates", "tflite_used"}


def test_device_info_reads_a_genio_520_logged_in_as_root_with_no_key(board):
    assert board["url"] == f"ssh://root@127.83.71.1:{board['state']['port']}?python=/usr/bin/python3"
    assert box("status").stdout.startswith("up ")
    info = whisperkv("device-info", "--device", board["url"], "--json")
    assert info.returncode == 0, info.stderr
    d = json.loads(info.stdout)
    assert d["arch"] == "aarch64" and d["python"].startswith("3.11") and d["numpy"]
    assert d["os"].startswith("Debian GNU/Linux 12")
    assert d["soc"]["name"] == "MT8371" and d["soc"]["npu"] == "MDLA 5.3"
    assert d["soc"]["read_from"] == "/sys/firmware/devicetree/base/compatible"
    # the EVK's cores as the kernel would list them, eight of them, and its 3.7 GiB
    assert d["cpu"] == "6x Cortex-A55 + 2x Cortex-A78" and d["cpu_count"] == 8
    assert d["mem_total_mb"] == 3788
    # /dev/apusys is the box's own (a file in its private /dev); the PC's /dev has none
    assert d["npu"] == ["/dev/apusys"] and not Path("/dev/apusys").exists()
    assert d["tflite"] == {"ai_edge_litert": None, "tflite_runtime": None} and d["tflite_used"] is None
    assert d["compiler"] is None
    # the STAND-IN runtime where a Genio IoT Yocto image keeps MediaTek's, a build exporting Runtime V1 only
    runtime = d["neuron_runtime"]
    assert runtime["path"] == "/usr/lib/libneuronusdk_runtime.mtk.so.8"
    assert runtime["apis"] == ["V1"] and runtime["api"] == "V1"
    text = whisperkv("device-info", "--device", board["url_key"])     # the generated key logs in too
    assert text.returncode == 0, text.stderr
    absent = {line.split()[0] for line in text.stdout.splitlines() if line.split()[1:] == ["absent"]}
    assert "cpu" not in absent and "compiler" in absent and absent <= ABSENT_ON_THE_BOX


def test_the_system_python_has_numpy_from_debian_and_nothing_pip_installed_and_no_compiler(board):
    r = on_box(board, "python3 -c 'import numpy; print(numpy.__file__)'; pip3 --version; "
                      "python3 -c 'import tokenizers' 2>/dev/null || echo no tokenizers; "
                      "ls /usr/local/lib/python3*/dist-packages 2>/dev/null | wc -l; "
                      "for c in cc gcc cpp c99 as ld; do command -v $c; done; true")
    assert r.returncode == 0, r.stderr
    numpy_at, pip, tokenizers, pip_installed, *compilers = r.stdout.split("\n")
    assert numpy_at.startswith("/usr/lib/python3/dist-packages/numpy/")
    assert pip.startswith("pip ") and tokenizers == "no tokenizers" and pip_installed == "0"
    assert [c for c in compilers if c] == []


def test_the_standin_runtime_is_at_its_yocto_path_built_for_arm64_and_its_apu_listens_beside_it(board):
    r = on_box(board, "readlink /usr/lib/libneuronusdk_runtime.mtk.so /usr/lib/libneuronusdk_runtime.mtk.so.8; "
                      "test -f /usr/lib/libneuronusdk_runtime.mtk.so.8.2.16 && echo lib; "
                      "test -f /opt/standin/v1v2/libneuronusdk_runtime.mtk.so.8 && echo v1v2; "
                      "test -S /run/standin-apu.sock && echo apu; "
                      "python3 -c 'import ai_edge_litert' 2>&1 | tail -n 1")
    assert r.stdout.split("\n")[:5] == ["libneuronusdk_runtime.mtk.so.8.2.16"] * 2 + ["lib", "v1v2", "apu"]
    assert "No module named 'ai_edge_litert'" in r.stdout       # the arithmetic is the APU's, out of reach
    elf = (board["root"] / "usr/lib/libneuronusdk_runtime.mtk.so.8.2.16").read_bytes()[:20]
    assert elf[:4] == b"\x7fELF" and int.from_bytes(elf[18:20], "little") == 183       # e_machine: EM_AARCH64


def test_root_logs_in_with_an_empty_password_by_the_none_method(board):
    """The image's debug-tweaks: no key, no password; `none` is what an SSH client tries first."""
    import paramiko

    state = board["state"]
    t = paramiko.Transport((state["addr"], state["port"]))
    try:
        t.start_client(timeout=30)
        assert t.auth_none("root") == []        # accepted: no further method needed
        chan = t.open_session()
        chan.exec_command("id -u")
        assert chan.makefile().read().strip() == b"0"
    finally:
        t.close()


def test_cut_off_the_box_reaches_no_index_and_fails_at_once(offline_board):
    assert box("status").stdout.split()[-1] == "offline"
    r = on_box(offline_board, "getent hosts pypi.org; echo rc=$?; "
                              "python3 -m pip download --no-deps -d /tmp/w numpy 2>&1; echo rc=$?", timeout=120)
    lines = r.stdout.strip().splitlines()
    assert lines[0] == "rc=2" and lines[-1] == "rc=1"     # getent: no such name; pip: nothing fetched
    # pip asked only the closed port its configuration names, once (no retries), and found nothing
    assert "Looking in indexes: http://127.83.71.1:9/simple/" in r.stdout and "(from versions: none)" in r.stdout
