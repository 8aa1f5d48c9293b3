"""Process-wide settings made before a library reads them: OpenBLAS's idle threads sleep at once in the runner's
and the CLI's processes (its timeout is read when NumPy loads), unless the environment says otherwise."""
import os
import subprocess
import sys

import pytest

from device.spec.runtime_config import SLEEPY_BLAS_TIMEOUT
from tests.conftest import ROOT

# What the OpenBLAS timeout is when NumPy is first imported, by an import hook, with the entry point's --help.
WHEN_NUMPY_LOADS = """
import os, runpy, sys
seen = []
class Watch:
    def find_spec(self, name, path=None, target=None):
        if name == "numpy" and not seen:
            seen.append(os.environ.get("OPENBLAS_THREAD_TIMEOUT"))
sys.meta_path.insert(0, Watch())
module, sys.argv = sys.argv[1], sys.argv[1:]
try:
    runpy.run_module(module, run_name="__main__", alter_sys=True)
except SystemExit:
    pass
print(seen)
"""


def timeout_when_numpy_loads(*argv: str, **env: str) -> str:
    base = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    r = subprocess.run([sys.executable, "-c", WHEN_NUMPY_LOADS, *argv], cwd=ROOT, env={**base, **env},
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize("argv", [("device.runner", "--help"), ("cli", "transcribe", "--help")],
                         ids=["runner", "cli"])
def test_openblas_threads_sleep_from_the_start_unless_the_environment_says(argv):
    assert timeout_when_numpy_loads(*argv) == repr([SLEEPY_BLAS_TIMEOUT])
    assert timeout_when_numpy_loads(*argv, OPENBLAS_THREAD_TIMEOUT="28") == "['28']"
