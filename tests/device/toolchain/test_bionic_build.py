"""The native runner built for Android arm64 without the NDK (device/toolchain/bionic_build.py, issue 54): it passes
the readelf lint of what a current Android refuses, a glibc symbol slipped in fails the build and the lint, and, where
../shared/android-bionic holds Android's linker and libraries, it runs under qemu and speaks only frames on stdout."""
import json
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from device import ROOT
from device import protocol as P
from device.toolchain import bionic_build, bionic_lint
from device.toolchain import native_runner_build as nrb
from device.toolchain.native_runner_build import BuildError

BIONIC = ROOT.parent / "shared" / "android-bionic"     # Android 6.0's linker64 and libraries (its README)
QEMU = "qemu-aarch64-static"
HERE = Path(__file__).resolve().parent

needs_cross = pytest.mark.skipif(shutil.which(bionic_build.TARGET.compiler) is None,
                                 reason="aarch64-linux-gnu-gcc not installed (Debian: gcc-aarch64-linux-gnu)")


def android_root_or_skip():
    if not (BIONIC / "system" / "bin" / "linker64").is_file():
        pytest.skip(f"{BIONIC} (Android's linker and libraries, see issue 54) is absent here")
    if shutil.which(QEMU) is None:
        pytest.skip(f"{QEMU} not installed (Debian: qemu-user-static)")
    return BIONIC


@pytest.fixture(scope="module")
def android_runner():
    if shutil.which(bionic_build.TARGET.compiler) is None:
        pytest.skip("aarch64-linux-gnu-gcc not installed (Debian: gcc-aarch64-linux-gnu)")
    return nrb.build("aarch64-android")


def test_every_listed_symbol_is_exported_by_its_library():
    root = android_root_or_skip()
    readelf = bionic_lint.readelf()
    for lib in ("libc", "libdl", "libm"):
        text = subprocess.run([readelf, "--dyn-syms", "-W", str(root / "system" / "lib64" / f"{lib}.so")],
                              capture_output=True, text=True).stdout
        exported = {cols[7].split("@")[0]: cols[3] for cols in (ln.split() for ln in text.splitlines())
                    if len(cols) >= 8 and cols[6] != "UND"}
        kinds = {"function": "FUNC", "data": "OBJECT"}
        wrong = [s.name for s in bionic_build.symbols() if s.library == lib and exported.get(s.name) != kinds[s.kind]]
        assert wrong == [], f"not exported by Android's {lib}.so as listed: {wrong}"


def test_the_header_declares_what_the_symbol_list_holds():
    """libc.h and symbols.txt name the same functions and data (__libc_init is the start-up file's)."""
    text = re.sub(r"/\*.*?\*/", "", bionic_build.HEADER.read_text(), flags=re.S)
    declared = set(re.findall(r"^(?!typedef)[A-Za-z_][\w \*]*?\b(\w+)\(", text, flags=re.M))
    declared |= set(re.findall(r"^extern [\w \*]*?\b(\w+);", text, flags=re.M))
    assert declared == {s.name for s in bionic_build.symbols()} - {"__libc_init"}


def test_the_android_runner_passes_the_lint(android_runner):
    assert android_runner.parent.parent.name == "aarch64-android"
    assert bionic_lint.problems(android_runner) == []
    out = bionic_lint.read(android_runner)
    assert re.findall(r"\[(lib[a-z]+\.so)\]", out["dynamic"]) == ["libc.so", "libdl.so", "libm.so"]


def test_the_lint_names_what_a_glibc_build_gets_wrong(android_runner):
    found = "\n".join(bionic_lint.problems(nrb.build("aarch64")))
    assert "interpreter /lib/ld-linux-aarch64.so.1, not Android's /system/bin/linker64" in found
    assert "glibc's symbol versions (GLIBC_2.17" in found
    assert "__errno_location" in found and "NEEDED libc.so.6" in found


def test_each_rule_of_the_lint(android_runner):
    """Each refusal, made by editing the clean runner's readelf texts (problems_in is pure)."""
    clean = bionic_lint.read(android_runner)
    allowed = {s.name for s in bionic_build.symbols()}

    def found(view, old, new):
        assert old in clean[view] or old == "", (view, old)
        edited = {**clean, view: clean[view].replace(old, new) if old else clean[view] + new}
        return bionic_lint.problems_in(edited, allowed)

    assert found("program", "/system/bin/linker64", "/lib/ld-linux-aarch64.so.1")[0].startswith("interpreter")
    assert found("dynamic", "[libdl.so]", "[libstdc++.so.6]") == [
        "NEEDED libstdc++.so.6 is not one of the NDK-stable libraries"]
    assert found("dynamic", "", " 0x16 (TEXTREL) 0x0\n") == ["has text relocations (TEXTREL)"]
    copy = "000000020000 000100000400 R_AARCH64_COPY 0000000000020000 stdout + 0\n"
    assert found("relocations", "", copy) == ["has 1 R_AARCH64_COPY relocation(s)"]
    assert found("program", "0x4000", "0x1000") == ["LOAD segment aligned to 4096 bytes, less than 16384"]
    no_hash = {**clean, "dynamic": re.sub(r"\((GNU_)?HASH\)", "(NOHASH)", clean["dynamic"])}
    assert bionic_lint.problems_in(no_hash, allowed) == ["has neither DT_HASH nor DT_GNU_HASH"]
    assert found("versions", "", " 0x0010: Name: GLIBC_2.34  Flags: none\n") == [
        "references glibc's symbol versions (GLIBC_2.34)"]
    assert bionic_lint.problems_in(clean, allowed - {"__errno"}) == [
        "undefined symbols not on bionic's list (device/toolchain/bionic/symbols.txt): __errno"]


@needs_cross
@pytest.mark.parametrize("call", ["*__errno_location()", "__isoc99_sscanf(\"1\", \"%d\", &x)", "__ctype_b_loc() != 0"])
def test_a_glibc_only_symbol_is_a_link_error(tmp_path, call):
    name = call.split("(")[0].lstrip("*")
    source = tmp_path / "slipped.c"
    source.write_text(f"int *__errno_location(void); int __isoc99_sscanf(const char *, const char *, ...);\n"
                      f"const unsigned short **__ctype_b_loc(void);\n"
                      f"int main(void) {{ int x = 0; return {call} + x; }}\n")
    with pytest.raises(BuildError, match=f"undefined reference to `{name}'"):
        bionic_build.compile_bionic([source], tmp_path / "slipped")


@needs_cross
def test_a_shared_library_builds_for_android_and_passes_the_lint(tmp_path):
    source = tmp_path / "lib.c"
    source.write_text("#include <errno.h>\n#include <stdio.h>\n"
                      "int standin_answer(void) { fprintf(stderr, \"x\"); return errno; }\n")
    lib = bionic_build.compile_bionic([source], tmp_path / "libstandin.so", shared=True, defines=("STANDIN=1",),
                                      libs=("c",))
    assert bionic_lint.problems(lib) == []
    assert "Library soname: [libstandin.so]" in bionic_lint.read(lib)["dynamic"]


def test_a_missing_cross_compiler_is_one_line_naming_the_package(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(BuildError) as err:
        bionic_build.compile_bionic([tmp_path / "a.c"], tmp_path / "a")
    assert "apt-get install gcc-aarch64-linux-gnu" in str(err.value) and "\n" not in str(err.value)


def android_root(tmp_path, program) -> tuple:
    """A folder laid out as an Android root (system/ from ../shared/android-bionic), with `program` at
    /data/local/tmp/whisperkv-runner; its path and the runner's."""
    root = tmp_path / "android"
    shutil.copytree(android_root_or_skip() / "system", root / "system")
    runner = root / "data" / "local" / "tmp" / "whisperkv-runner"
    runner.parent.mkdir(parents=True)
    shutil.copy2(program, runner)
    return root, runner


def test_bionic_answers_through_the_header(tmp_path):
    """The header's layouts and values against Android's real libc: stat, errno, sysconf, uname, scandir."""
    android_root_or_skip()
    program = bionic_build.compile_bionic([HERE / "bionic_layouts.c"], tmp_path / "layouts")
    root, runner = android_root(tmp_path, program)
    (tmp_path / "probe").write_bytes(b"x" * 1234)
    done = subprocess.run([QEMU, "-L", str(root), str(runner), str(tmp_path / "probe"), str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["stat_size 1234", "stat_is_reg 1", "open_missing_errno 1", "page_size 4096",
                                        "cores_positive 1", "machine aarch64", "monotonic 1", "scandir 1 probe"]
    assert "stderr works" in done.stderr


def test_the_android_runner_speaks_frames_under_androids_linker(tmp_path, android_runner):
    root, runner = android_root(tmp_path, android_runner)
    empty = tmp_path / "cwd"
    empty.mkdir()
    not_json = struct.pack(P.LENGTH_FORMAT, 7) + b"{oops!}"
    asked = [not_json, P.encode_frame({"op": "reboot", "id": "u1"}),
             P.encode_frame({"op": "hello", "protocol": P.PROTOCOL}), P.encode_frame({"op": "bye"})]
    done = subprocess.run([QEMU, "-L", str(root), str(runner)], input=b"".join(asked), capture_output=True,
                          timeout=60, cwd=empty)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    parser = P.FrameParser(max_payload=0)
    frames = parser.feed(done.stdout)
    assert parser.at_boundary and all(isinstance(f, P.Frame) for f in frames), done.stdout[:200]
    assert [(f.header["type"], f.header["code"]) for f in frames] == [
        ("error", P.BAD_FRAME), ("error", P.UNKNOWN_OP), ("error", P.MODEL_MISSING)]
    assert b"runner ERROR model not loaded" in done.stderr


@pytest.mark.parametrize("library_there", [True, False])
def test_a_namespace_refusal_is_one_line_naming_what_to_try(tmp_path, library_there):
    """The runner's Neuron search, built for Android with a stand-in dlopen that a linker namespace refuses."""
    android_root_or_skip()
    sources = [HERE / "neuron_namespace.c", *(nrb.SOURCES / f for f in ("neuron_lib.c", "say.c", "json_out.c"))]
    program = bionic_build.compile_bionic(sources, tmp_path / "namespace", flags=nrb.FLAGS,
                                          include_dirs=(nrb.SPEC_HEADER.parent, nrb.SOURCES))
    root, runner = android_root(tmp_path, program)
    vendor = root / "vendor" / "lib64" / "mt8189" / "libneuron_runtime.8.so"
    vendor.parent.mkdir(parents=True)
    if library_there:
        vendor.write_bytes(b"")
    ask = [QEMU, "-L", str(root), str(runner)]
    done = subprocess.run(ask, capture_output=True, text=True, timeout=60, env={"STANDIN_NAMESPACE": "1"})
    rc, line, parts = done.stdout.splitlines()
    tried = "/vendor/lib64/mt8189/libneuron_runtime.8.so" if library_there else "libneuronusdk_runtime.mtk.so.8"
    assert rc == "-1" and line.startswith(f"Android's linker namespace keeps this runner from the Neuron runtime "
                                          f"library {tried} (dlopen failed: ")
    assert line.endswith(" — run the runner from /data/local/tmp with LD_LIBRARY_PATH=/vendor/lib64/mt8189:"
                         "/vendor/lib64, or name the library by its absolute /vendor path: "
                         "?neuron_lib=/vendor/lib64/mt8189/libneuron_runtime.8.so")
    assert json.loads(parts)[1] == {"setting": "neuron_lib", "value": "/vendor/lib64/mt8189/libneuron_runtime.8.so"}
    # not refused by a namespace: the search names only Android's places, /vendor's, then the sonames
    line = subprocess.run(ask, capture_output=True, text=True, timeout=60, env={}).stdout.splitlines()[1]
    if not library_there:
        assert line.startswith("no Neuron runtime library here (tried /vendor/lib64/mt8189/libneuron_runtime.8.so, "
                               "/vendor/lib64/libneuron_runtime.8.so,") and "/usr/" not in line.split(" — ")[0]
