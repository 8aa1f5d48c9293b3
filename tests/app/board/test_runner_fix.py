"""A runner's error whose fix names device settings reaches the host as a Fix (docs/protocol.md, `error`'s `fix`):
the CLI's line is the runner's message as before, and the studio names its form's fields from the settings."""
from __future__ import annotations

import json

import numpy as np
import pytest

from app.board.form_terms import in_form_terms
from app.errors import failure_of
from core.errors import Fix, Setting
from device import protocol as P
from device.link.client import BoardClient, RunnerError, refusal
from device.link.local import LocalTransport
from device.runner.bundle import FORMAT, TABLES
from device.spec.slot_contract import CONTRACT

NEURON_LIB = Setting("neuron_lib", "PATH")
MISSING = "deploy the model with `whisperkv deploy --device URL`, or pass ?model=DIR"    # the host's own fix


def test_an_error_events_fix_parts_become_the_errors_fix_and_the_line_stays():
    fix = Fix("name it with ", NEURON_LIB, " (e.g. /x.so)")
    event = P.error_event(P.MODEL_MISSING, f"no library — {fix}", None, fix.to_wire())
    err = refusal(json.loads(json.dumps(event)))
    assert str(err) == f"the runner refused the request (model_missing): no library — {fix} — {MISSING}"
    assert err.problem == "the runner refused the request (model_missing): no library"
    assert isinstance(err.fix, Fix) and err.fix.settings == (NEURON_LIB, Setting("model", "DIR", "pass"))
    # an older runner's event (no fix), or parts that are not its message's fix: the message as it came
    for other in (P.error_event(P.BAD_MEL, f"no library — {fix}"), {**event, "fix": ["another"]},
                  {**event, "fix": [{"value": "PATH"}]}):
        err = refusal(other)
        assert err.problem.endswith(other["message"]) and NEURON_LIB not in getattr(err.fix, "settings", ())


@pytest.fixture
def bundle_without_a_runtime(tmp_path):
    """A compiled bundle's model.json and tables, enough to reach the Neuron runtime library (never any graph)."""
    doc = {"format": FORMAT, "dims": {}, "dtype": "float16", "model_sha256": "ab", "files": {},
           "dla": {"contract": CONTRACT, "graphs": {"encoder": {}, "decoder_step": {}}}}
    (tmp_path / "model.json").write_text(json.dumps(doc))
    for file in TABLES.values():
        np.save(tmp_path / file, np.zeros((2, 2), np.float32))
    return tmp_path


def test_a_runner_without_its_neuron_library_names_the_setting_as_a_field(bundle_without_a_runtime):
    c = BoardClient(LocalTransport(), runner_args=["--backend", "dla", "--model", str(bundle_without_a_runtime),
                                                   "--neuron-lib", "/nonexistent"])
    try:
        with pytest.raises(RunnerError) as raised:
            c.connect()
    finally:
        c.close()
    err = raised.value
    runner = ("the Neuron runtime library /nonexistent does not exist — install MediaTek's Neuron runtime on the "
              "board, or name it with ?neuron_lib=PATH (e.g. /usr/lib/libneuronusdk_runtime.mtk.so.8)")
    assert str(err) == f"the runner refused the request (model_missing): {runner} — {MISSING}"    # the CLI's line
    assert err.code == P.MODEL_MISSING and isinstance(err.fix, Fix) and NEURON_LIB in err.fix.settings
    said = in_form_terms(failure_of(err))
    assert said.fix.startswith("install MediaTek's Neuron runtime on the board, or name it with Neuron library (e.g.")
    assert said.fix.endswith("— deploy the model with `whisperkv deploy --device URL`, or deploy the model (Deploy)")
