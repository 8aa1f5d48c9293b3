"""The backend registry is the one list: every place that names backends names the registry's, no more, no fewer,
and a backend added as one file plus one row shows up in `--help`, the runner's and `auto`'s choices."""
import re
import sys

import pytest

from cli.main import build_parser
from device.runner import backends
from device.runner.backends import FACTORIES, REGISTRY, BackendError, Factories, resolve
from device.runner.serve import agent
from device.runner.serve.agent import ROOT
from device.spec import backend_rows
from device.spec.backend_rows import ROWS, BackendRow

COMMANDS = ("transcribe", "qa", "stream")


def _backend_help(parser) -> str:
    action = next(a for a in parser._actions if "--backend" in a.option_strings)
    return " ".join(action.help.split())


def _subcommand(command: str):
    parser = build_parser(command)
    subs = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    return subs.choices[command]


def named_in(text: str) -> set[str]:
    """The backends a generated help text lists: "one of: NAME: summary; NAME: summary; ..."."""
    return {part.split(":", 1)[0].strip() for part in text.split("one of: ", 1)[1].split("; ")}


def named_in_protocol_doc() -> set[str]:
    line = next(l for l in (ROOT / "docs" / "protocol.md").read_text().splitlines() if l.startswith("- `backend`:"))
    return set(re.findall(r"`([a-z0-9-]+)`", line.split("(", 1)[1].split(";", 1)[0]))


@pytest.mark.parametrize("command", COMMANDS)
def test_every_help_names_exactly_the_registry(command):
    assert named_in(_backend_help(_subcommand(command))) == set(REGISTRY)


def test_the_runner_names_exactly_the_registry():
    parser = agent.parser()
    assert named_in(_backend_help(parser)) == set(REGISTRY)
    assert set(re.findall(r"[a-z0-9-]+", parser.description.split("NAME: auto,", 1)[1])) == set(REGISTRY)


def test_the_protocol_doc_names_exactly_the_registry():
    assert named_in_protocol_doc() == set(REGISTRY)


def test_auto_prefers_exact_backends_and_the_deploy_modes_come_from_the_rows():
    ranked = sorted((s for s in ROWS.values() if s.auto), key=lambda s: s.auto)
    assert all(s.exact for s in ranked) and ranked[-1].name == "numpy"
    assert backend_rows.deploy_modes() == ("auto", "dla", "tflite")
    assert "dla: only what the dla backend reads" in backend_rows.deploy_help()


ECHO = '''"""A trivial backend for the registry test: the NumPy reference under another name."""
from core.model.whisper import NumpyBackend


def build(source, *, cross="kv", **_):
    backend = NumpyBackend(source, cross)
    backend.name = "echo"
    return backend
'''


@pytest.fixture
def echo_backend(tmp_path, monkeypatch):
    """One file, its row in the spec and its factory in the runner."""
    (tmp_path / "echo_backend.py").write_text(ECHO)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(ROWS, "echo", BackendRow("echo", "the reference, echoed"))
    monkeypatch.setitem(FACTORIES, "echo", Factories("echo_backend:build"))
    yield "echo"
    sys.modules.pop("echo_backend", None)


@pytest.mark.parametrize("command", COMMANDS)
def test_a_new_backend_is_one_file_and_one_row_and_shows_in_help(echo_backend, command):
    text = _backend_help(_subcommand(command))
    assert "echo: the reference, echoed" in text and named_in(text) == set(REGISTRY)
    assert resolve("echo") == "echo"


def test_a_new_backend_runs_by_name(echo_backend, model):
    built = backends.make_backend("echo", model.weights)
    assert built.name == "echo" and built.dims == model.weights.dims


def test_a_backend_that_cannot_run_here_says_why_and_what_to_do(monkeypatch):
    monkeypatch.setitem(ROWS, "far", BackendRow("far", "nowhere", needs=("no_such_module_here",),
                                                needs_fix="pip install it"))
    monkeypatch.setitem(FACTORIES, "far", Factories("far:build"))
    with pytest.raises(BackendError) as err:
        resolve("far")
    assert "no_such_module_here" in str(err.value) and err.value.fix == "pip install it"
    monkeypatch.setitem(ROWS, "arm", BackendRow("arm", "an Arm step", arches=("riscv128",)))
    monkeypatch.setitem(FACTORIES, "arm", Factories("arm:build"))
    with pytest.raises(BackendError, match="runs on riscv128"):
        resolve("arm")
