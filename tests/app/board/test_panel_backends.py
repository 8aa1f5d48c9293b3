"""The device panel's backend combo and its tooltip are the registry's (device/runner/backends.py): a backend added
as one file plus one row is offered there too."""
from __future__ import annotations

from app.board.panel import DevicePanel
from device.spec.backend_rows import ROWS as REGISTRY
from tests.device.runner.test_backends import echo_backend, named_in  # noqa: F401  (a fixture)


def _items(combo) -> list[str]:
    return [combo.itemText(i) for i in range(combo.count())]


def test_the_combo_lists_auto_and_every_registered_backend(qtbot):
    panel = DevicePanel()
    qtbot.addWidget(panel)
    assert _items(panel.fields["backend"]) == ["auto", *REGISTRY]
    assert named_in(panel.fields["backend"].toolTip()) == set(REGISTRY)


def test_a_new_backend_shows_in_the_combo(qtbot, echo_backend):  # noqa: F811
    panel = DevicePanel()
    qtbot.addWidget(panel)
    combo = panel.fields["backend"]
    assert "echo" in _items(combo) and "echo: the reference, echoed" in combo.toolTip()


def test_the_delegate_field_sends_genio_to_the_dla_backend_and_says_why(qtbot):
    panel = DevicePanel()
    qtbot.addWidget(panel)
    delegate = panel.fields["delegate"]
    tip = delegate.toolTip()
    assert f"through the dla backend ({REGISTRY['dla'].summary})" in tip
    assert "TFL_TheStableDelegate" in tip and "tflite_plugin_create_delegate" in tip and "#79111" in tip
    assert "libneuron_stable_delegate" not in delegate.placeholderText()   # not offered as the thing to type
