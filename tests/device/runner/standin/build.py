"""Build the STAND-IN Neuron runtime library (neuron_runtime.c) with a C compiler: this machine's, or a board's
(the emulated arm64 board builds its own, against its own Python's headers)."""
from __future__ import annotations

import re
import subprocess
import sys
import sysconfig
from pathlib import Path

HERE = Path(__file__).resolve().parent
# what a board needs to build and run it
SOURCES = ("neuron_runtime.c", "python_call.c", "own_python.c", "neuron_compute.py", "apu.py")


def library_name(*defines: str, name: str | None = None) -> str:
    """`name` when given (e.g. the Yocto image's libneuronusdk_runtime.mtk.so.8), else one naming the defines."""
    if name:
        return name
    return "libneuron_runtime" + "".join("-" + re.sub(r"[^a-z0-9_]", "", d.lower()) for d in defines) + ".so"


def compile_command(lib: str, include: str, compute_dir: str, source: str, *defines: str, cc: str = "cc") -> list[str]:
    """The compiler's command line: `include` is the Python headers of the interpreter that will load it, and
    `compute_dir` the folder holding neuron_compute.py there."""
    return [cc, "-shared", "-fPIC", "-O1", f"-I{include}", f'-DSTANDIN_DIR="{compute_dir}"',
            *[f"-D{d}" for d in defines], source, "-o", lib]


def own_python_defines(home: str, paths: list[str], soname: str) -> list[str]:
    """OWN_PYTHON's defines: the interpreter's home, its module paths and its shared library's soname."""
    return [f'STANDIN_HOME="{home}"', f'STANDIN_PATH="{":".join(paths)}"', f'STANDIN_LIBPYTHON="{soname}"']


def own_python() -> tuple[list[str], list[str]]:
    """OWN_PYTHON's defines and link flags for this machine: this interpreter's, and its shared library."""
    libdir, version = sysconfig.get_config_var("LIBDIR"), sysconfig.get_config_var("LDVERSION")
    return (own_python_defines(sys.base_prefix, [p for p in sys.path if p], sysconfig.get_config_var("INSTSONAME")),
            [f"-L{libdir}", f"-lpython{version}", f"-Wl,-rpath,{libdir}", "-ldl"])


def build_standin(out_dir: Path, *defines: str, source: Path = HERE / "neuron_runtime.c",
                  compute_dir: Path = HERE, name: str | None = None) -> Path:
    """The library built into `out_dir` (defines such as "WITH_V1", "PADDED", "FAIL_CREATE" or "FAIL_RUN_AT=3",
    neuron_runtime.c lists them), named `name` or after its defines."""
    lib = Path(out_dir) / library_name(*defines, name=name)
    more, link = own_python() if "OWN_PYTHON" in defines else ([], [])
    cmd = compile_command(str(lib), sysconfig.get_paths()["include"], str(compute_dir), str(source), *defines,
                          *more) + link
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return lib


def build_empty(out_dir: Path) -> Path:
    """A shared library with none of the runtime's symbols."""
    src = Path(out_dir) / "empty.c"
    src.write_text("int not_the_neuron_runtime(void) { return 0; }\n")
    lib = Path(out_dir) / "libempty.so"
    subprocess.run(["cc", "-shared", "-fPIC", str(src), "-o", str(lib)], check=True)
    return lib


def build_wire(out_dir: Path, *defines: str, apu: str, log: str, name: str) -> Path:
    """The WIRE build for an Android board (bionic arm64, device/toolchain/bionic_build.py): no Python in it, each
    call sent to the STAND-IN APU at the board's path `apu` (apu_wire.py), its log lines appended to `log`."""
    from device.toolchain.bionic_build import compile_bionic

    wire = ("WIRE", f'STANDIN_APU="{apu}"', f'STANDIN_LOG="{log}"', *defines)
    return compile_bionic([HERE / "neuron_runtime.c"], Path(out_dir) / name, shared=True, defines=wire, libs=("c",))
