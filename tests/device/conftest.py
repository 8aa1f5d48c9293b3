"""Shared fixtures for the device tests: the test_en mel, a local runner, a real sshd, a stand-in adb.

Loading the model costs seconds and a full decode a few more, so runners are shared per module
and full decodes are few.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from device.runner.serve.agent import ROOT
from tests.device.link_helpers import STAND_IN_ADB, install_stand_in, sshd  # noqa: F401  (sshd: the real OpenSSH server fixture)

AUDIO = ROOT / "resources" / "audio"


@pytest.fixture(scope="session")
def en_mel() -> np.ndarray:
    from core.model.audio import load_audio
    from core.model.mel import mel_windows

    return mel_windows(load_audio(AUDIO / "test_en.wav"))


@pytest.fixture(scope="session")
def local_run(en_mel) -> list:
    """test_en.wav decoded through the local runner (the arrivals): the reference for the other links."""
    from core.decode.options import DecodeOptions
    from device.link.client import BoardClient
    from device.link.local import LocalTransport

    with BoardClient(LocalTransport()) as client:
        return list(client.transcribe(en_mel, DecodeOptions(language="en")))


@pytest.fixture
def stand_in_adb(tmp_path, monkeypatch) -> Path:
    """Puts the stand-in `adb` first on PATH; returns the log of the argv it was called with."""
    return install_stand_in(tmp_path, monkeypatch, "adb", STAND_IN_ADB, "ADB_STANDIN_LOG")
