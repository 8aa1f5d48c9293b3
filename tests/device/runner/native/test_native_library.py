"""The C step's library is checked at load: its ABI version and the struct sizes it reports must be those the ctypes
mirror (device/runner/native/step.py) was written for, else a clear error, never a call into a mismatched layout.
Real libraries, compiled here with the system's C compiler."""
import ctypes as C
import subprocess

import pytest

from core.errors import ModelError
from device.runner.native import library
from device.runner.native.library import ABI_VERSION, build_library, compiler, open_library, supported
from device.runner.native.step import _Model, _QMat

SIZES = {"qmat": C.sizeof(_QMat), "model": C.sizeof(_Model)}


def _compile(tmp_path, source: str):
    (tmp_path / "lib.c").write_text(source)
    subprocess.run([compiler(), "-shared", "-fPIC", str(tmp_path / "lib.c"), "-o", str(tmp_path / "lib.so")],
                   check=True)
    return tmp_path / "lib.so"


@pytest.mark.skipif(not supported(), reason="this CPU has no AVX-512, or no C compiler is installed")
def test_the_built_library_reports_this_abi_and_the_mirrors_sizes(tmp_path):
    lib = open_library(build_library(tmp_path), SIZES)
    assert lib.wkv_abi_version() == ABI_VERSION
    with pytest.raises(ModelError, match="does not match this runner") as err:
        open_library(build_library(tmp_path), {**SIZES, "model": SIZES["model"] + 8})
    assert "delete" in err.value.fix


@pytest.mark.skipif(compiler() is None, reason="no C compiler is installed")
@pytest.mark.parametrize("source", [
    "int wkv_set_threads(int n) { return n; }",      # a library from before the check: no version at all
    "#include <stddef.h>\nint wkv_abi_version(void) { return 999; }\n"
    "size_t wkv_sizeof_qmat(void) { return %d; }\nsize_t wkv_sizeof_model(void) { return %d; }\n"
    % (SIZES["qmat"], SIZES["model"]),
])
def test_a_library_of_another_abi_is_refused_with_the_fix(tmp_path, source):
    with pytest.raises(ModelError, match="does not match this runner") as err:
        open_library(_compile(tmp_path, source), SIZES)
    assert str(tmp_path) in err.value.fix


def test_the_header_and_the_python_side_agree_on_the_version():
    assert f"#define WKV_ABI_VERSION {ABI_VERSION}\n" in library.HEADER.read_text()
