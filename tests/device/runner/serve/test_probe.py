"""The runner's `probe` request (device/runner/serve/probe.py, docs/protocol.md): the encoder's outputs sampled at the
positions the shape picks and the first step's logits whole, as the PC computes them for the same window."""
from __future__ import annotations

import numpy as np
import pytest

from device import protocol as P
from device.doctor.reference import first_window
from device.link.client import RunnerError
from device.runner.serve.probe import sample_positions, unpack


@pytest.fixture(scope="module")
def numpy_client():
    from device.link.client import BoardClient
    from device.link.local import LocalTransport

    with BoardClient(LocalTransport(), runner_args=["--backend", "numpy"]) as client:
        yield client


def test_a_probe_answers_what_the_reference_computes_and_the_runner_serves_on(numpy_client, model):
    from device.runner.serve.probe import probe

    local_client = numpy_client
    assert "probe" in local_client.info.features
    got = local_client.probe(first_window())
    want = probe(model.backend, model.tokenizer.special.sot, first_window())
    assert [o["name"] for o in got["outputs"]] == ["cross_k", "cross_v"] and got["final"]
    for g, w in zip(got["outputs"], want["outputs"]):
        assert g["shape"] == w["shape"] == [6, 1, 1500, 512]
        assert unpack(g["values"]).size == sample_positions(g["shape"]).size
        assert np.allclose(unpack(g["values"]), unpack(w["values"]), atol=1e-4)
    assert got["n_logits"] == 51865 and unpack(got["logits"]).argmax() == unpack(want["logits"]).argmax()
    with pytest.raises(RunnerError, match="bad_mel"):
        local_client.probe(np.full((1, 80, 3000), np.nan, np.float32))
    assert local_client.probe(first_window())["n_logits"] == 51865     # still serving


def test_probe_is_a_request_op_and_an_event_type():
    assert "probe" in P.REQUEST_OPS and "probe" in P.EVENT_TYPES and "probe" in P.FEATURES


def test_a_head_major_backend_is_probed_in_the_boards_packed_form(local_client):
    """This PC's default backend keeps the cross K/V head-major; the probe sends them as a board's graphs give them."""
    got = local_client.probe(first_window())
    assert [o["shape"] for o in got["outputs"]] == [[6, 1, 1500, 512]] * 2
