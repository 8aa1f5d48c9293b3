"""Build the STAND-IN Neuron runtime library (neuron_runtime.c) with this machine's C compiler."""
from __future__ import annotations

import subprocess
import sysconfig
from pathlib import Path

HERE = Path(__file__).resolve().parent


def build_standin(out_dir: Path, *defines: str, source: Path = HERE / "neuron_runtime.c",
                  compute_dir: Path = HERE) -> Path:
    """libneuron_runtime.so built into `out_dir` (defines such as "FAIL_CREATE" or "FAIL_RUN_AT=3")."""
    name = "libneuron_runtime" + "".join("-" + d.lower().replace("=", "") for d in defines) + ".so"
    lib = Path(out_dir) / name
    cmd = ["cc", "-shared", "-fPIC", "-O1", f"-I{sysconfig.get_paths()['include']}",
           f'-DSTANDIN_DIR="{compute_dir}"', *[f"-D{d}" for d in defines], str(source), "-o", str(lib)]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return lib


def build_empty(out_dir: Path) -> Path:
    """A shared library with none of the runtime's symbols."""
    src = Path(out_dir) / "empty.c"
    src.write_text("int not_the_neuron_runtime(void) { return 0; }\n")
    lib = Path(out_dir) / "libempty.so"
    subprocess.run(["cc", "-shared", "-fPIC", str(src), "-o", str(lib)], check=True)
    return lib
