"""The real Whisper base weights and the NumPy reference, loaded once for the graph tests."""
from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def weights():
    from core.model.weights import load_model

    return load_model()


@pytest.fixture(scope="session")
def reference(weights):
    from core.model.whisper import NumpyBackend

    return NumpyBackend(weights)
