"""`whisperkv`'s entry point: only the asked-for command's code is loaded, and every command is still listed."""
import subprocess
import sys

import pytest

from cli.main import COMMANDS, build_parser
from tests.conftest import AUDIO, ROOT

# What the runner, not the CLI beside it, needs; or what other commands need.
NOT_FOR_TRANSCRIBE = ("tokenizers", "onnxruntime", "core.qa", "core.decode.decoding", "device.runner.load",
                      "device.runner.serve.agent", "device.toolchain", "app")

PROBE = """
import sys
from cli.main import main
code = main(sys.argv[1:])
print("LOADED", *sorted(m for m in {names!r} if m in sys.modules))
sys.exit(code)
"""


def test_transcribe_on_the_local_runner_loads_neither_the_decoder_nor_other_commands():
    # Everything this process imports stays resident beside the runner while it encodes.
    probe = PROBE.format(names=NOT_FOR_TRANSCRIBE)
    r = subprocess.run([sys.executable, "-c", probe, "transcribe", str(AUDIO / "test_en.wav")], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "ask not what your country can do for you" in r.stdout
    assert r.stdout.splitlines()[-1] == "LOADED"


def test_help_lists_every_command_and_a_misspelt_one_names_the_choices():
    r = subprocess.run([sys.executable, "-m", "cli", "--help"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0
    assert all(name in r.stdout for name in COMMANDS)
    r = subprocess.run([sys.executable, "-m", "cli", "transcibe", "x.wav"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 2
    assert "invalid choice: 'transcibe'" in r.stderr and "check-dla" in r.stderr


def test_each_command_is_registered_by_the_module_it_names(capsys):
    for name in COMMANDS:
        with pytest.raises(SystemExit) as exc:
            build_parser(name).parse_args([name, "--help"])
        assert exc.value.code == 0
        assert capsys.readouterr().out.startswith(f"usage: whisperkv {name} ")
