"""What deploy ships to a board parses and runs on Python 3.10-3.12 (Ubuntu 22.04 on Genio ships 3.10, a Genio 520
IoT Yocto image 3.12): `vermin` finds no syntax, module or member newer than 3.10 in any of those files."""
import subprocess
import sys

from device import ROOT
from device.deploy.deploy import runner_modules

VERMIN = "import sys, vermin; sys.exit(vermin.main())"


def _vermin(files: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", VERMIN, "-t=3.10-", "--violations", "--no-tips", *files],
                          cwd=ROOT, capture_output=True, text=True)


def test_every_shipped_python_file_needs_nothing_newer_than_3_10():
    files = [f for f in runner_modules() if f.endswith(".py")]
    assert "core/model/bpe.py" in files and "device/runner/serve/agent.py" in files
    res = _vermin(files)
    assert res.returncode == 0, res.stdout + res.stderr


def test_a_file_needing_3_11_fails_the_check(tmp_path):
    newer = tmp_path / "newer.py"
    newer.write_text("import tomllib\n")
    res = _vermin([str(newer)])
    assert res.returncode != 0 and "tomllib" in res.stdout
